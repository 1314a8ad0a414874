/**
 * The listeners: one node:net server per configured listener, each handing accepted sockets to a
 * Connection. Owns the set of live connections so shutdown can close them all.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../common/logger';
import { Connection, type FrameProcessor } from './connection';

export interface ListenerSpec {
  name: string;
  host: string;
  port: number;
}

export interface BoundListener extends ListenerSpec {
  /** The port actually bound (differs from `port` when it was 0). */
  boundPort: number;
}

export interface SocketServerOptions {
  maxRequestBytes: number;
  idleTimeoutMs: number;
}

export class SocketServer {
  private servers: Server[] = [];
  private connections = new Set<Connection>();
  private nextId = 1;
  readonly bound: BoundListener[] = [];

  constructor(
    private readonly processor: FrameProcessor,
    private readonly opts: SocketServerOptions,
    private readonly log: Logger,
  ) {}

  async listen(listeners: ListenerSpec[]): Promise<BoundListener[]> {
    for (const l of listeners) {
      const server = createServer((socket) => this.accept(socket, l.name));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: l.host || undefined, port: l.port, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => this.log.error('listener error', { listener: l.name, err }));
      const addr = server.address();
      const boundPort = typeof addr === 'object' && addr ? addr.port : l.port;
      this.servers.push(server);
      this.bound.push({ ...l, boundPort });
    }
    return this.bound;
  }

  private accept(socket: Socket, listenerName: string): void {
    const conn = new Connection(this.nextId++, socket, listenerName, this.processor, this.opts, this.log);
    this.connections.add(conn);
    conn.onClose(() => this.connections.delete(conn));
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    const closing = this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const c of this.connections) c.close('broker shutting down');
    this.connections.clear();
    await Promise.all(closing);
    this.servers = [];
  }
}
