/**
 * The opt-in HTTP endpoint of a broker (krill.metrics.port, --metrics-port, startBroker's
 * metricsPort): GET /metrics (Prometheus text format, from the broker's own registry), GET /ready
 * (200 once the broker has loaded its logs and serves Metadata, 503 before and once it is shutting
 * down), GET /live (200 while the process serves HTTP at all). For container probes, Kubernetes
 * and Testcontainers-style wait strategies. Anything else: 404; a method other than GET or HEAD:
 * 405. Nothing listens unless a port is configured; port 0 takes a free port (`address`).
 *
 * Bad input: request bodies are not read (the endpoints take none), header size is Node's limit,
 * idle connections time out; a failing scrape is a 500 with the failure logged.
 */
import type * as Http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../common/logger';

let httpModule: typeof Http | undefined;
/** node:http, loaded on first use: a broker without a metrics port never loads it. */
const http = (): typeof Http => (httpModule ??= require('node:http') as typeof Http);

export interface MetricsEndpoints {
  scrape(): Promise<{ contentType: string; body: string }>;
  isReady(): boolean;
}

export class MetricsServer {
  private server: Http.Server | null = null;
  private bound: { host: string; port: number } | null = null;

  constructor(
    private readonly endpoints: MetricsEndpoints,
    private readonly log: Logger,
  ) {}

  /** Binds host:port (host '' = every interface); resolves with the address bound. */
  async listen(host: string, port: number): Promise<{ host: string; port: number }> {
    const server = http().createServer((req, res) => this.serve(req, res));
    server.keepAliveTimeout = 5000;
    server.requestTimeout = 10000;
    server.headersTimeout = 10000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: host === '' ? undefined : host, port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => this.log.error('metrics HTTP server failed', { err }));
    this.server = server;
    const a = server.address() as AddressInfo;
    this.bound = { host: host === '' ? '0.0.0.0' : a.address, port: a.port };
    this.log.info(`metrics and health endpoints on http://${this.bound.host}:${this.bound.port} (/metrics, /ready, /live)`);
    return this.bound;
  }

  /** The bound address, or null before listen / after close. */
  get address(): { host: string; port: number } | null {
    return this.bound;
  }

  private serve(req: Http.IncomingMessage, res: Http.ServerResponse): void {
    req.resume(); // no endpoint takes a body: drain and ignore it
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.reply(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    switch (path) {
      case '/live':
        this.reply(res, 200, 'text/plain; charset=utf-8', 'live\n');
        return;
      case '/ready':
        if (this.endpoints.isReady()) this.reply(res, 200, 'text/plain; charset=utf-8', 'ready\n');
        else this.reply(res, 503, 'text/plain; charset=utf-8', 'not ready\n');
        return;
      case '/metrics':
        this.endpoints.scrape().then(
          (m) => this.reply(res, 200, m.contentType, m.body),
          (err) => {
            this.log.error('metrics scrape failed', { err });
            this.reply(res, 500, 'text/plain; charset=utf-8', 'scrape failed\n');
          },
        );
        return;
      default:
        this.reply(res, 404, 'text/plain; charset=utf-8', 'not found: try /metrics, /ready or /live\n');
    }
  }

  private reply(res: Http.ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), ...headers });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = null;
    this.bound = null;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }
}
