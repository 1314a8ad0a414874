/**
 * krill's embedding API: start a real broker inside a test suite (or any Node program).
 *
 *   const broker = await startBroker();              // 127.0.0.1, a free port, a temp data dir
 *   broker.bootstrapServers                            // ['127.0.0.1:41233']
 *   await broker.close();                              // clean shutdown; the temp dir is removed
 *
 *   await startBroker({ scramCredentials: ['SCRAM-SHA-512=[name=alice,password=alice-secret]'] });
 *                                                      // --add-scram: SCRAM users on a fresh node
 *
 *   const b = await startBroker({ metricsPort: 0 });  // Prometheus /metrics, /ready, /live on a free port
 *   b.metricsAddress                                   // { host: '127.0.0.1', port: 39127 }
 *
 *   const certs = createTestCertificates();          // a throwaway CA, broker and client certificate
 *   await startBroker({ config: { listeners: 'SSL://127.0.0.1:0', ...certs.brokerSsl() } });
 *                                                      // TLS: any Kafka listeners and ssl.* keys
 *
 * It goes through the same startup code as the `krill` command. Also exported: startCluster
 * (cluster.ts, N brokers and a controller in this process), KafkaServer and ControllerServer, and
 * createTestCertificates (testing/certificates.ts, made with the system openssl).
 *
 * `listeners` in `config`, `overrides` or the `configFile` are used as given unless host or port is;
 * otherwise the broker listens on PLAINTEXT://host:port (127.0.0.1 and a free port by default).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launch, type LaunchOptions } from './launch';
import { loadPropertiesFile } from '../config/properties';
import type { KafkaServer } from './server';

export interface StartBrokerOptions extends Omit<LaunchOptions, 'host' | 'port' | 'dataDir'> {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port chosen by the OS. Ignored, like host, when `config` sets `listeners` and neither is given. */
  port?: number;
  /** Default: a fresh temp directory, removed by close() unless keepDataDir is set. */
  dataDir?: string;
  keepDataDir?: boolean;
}

export interface RunningBroker {
  /** host:port of every advertised listener. */
  readonly bootstrapServers: string[];
  /** host:port by advertised listener name ({ SSL: '127.0.0.1:40123', PLAINTEXT: ... }). */
  readonly listeners: Readonly<Record<string, string>>;
  readonly host: string;
  readonly port: number;
  readonly nodeId: number;
  readonly clusterId: string;
  readonly dataDir: string;
  /** Where /metrics, /ready and /live are served; null unless metricsPort (krill.metrics.port) was set. */
  readonly metricsAddress: { host: string; port: number } | null;
  /** The server itself, for tests that look inside (partitions, logs, metadata). */
  readonly server: KafkaServer;
  /** Clean shutdown (checkpoints and clean-shutdown marker written). */
  close(): Promise<void>;
}

export async function startBroker(opts: StartBrokerOptions = {}): Promise<RunningBroker> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-'));
  let server: KafkaServer;
  try {
    const ownListeners =
      opts.host === undefined &&
      opts.port === undefined &&
      (opts.config?.listeners !== undefined ||
        (opts.overrides ?? []).some((o) => o.startsWith('listeners=')) ||
        (opts.configFile !== undefined && loadPropertiesFile(opts.configFile).has('listeners')));
    // Metrics endpoints bind where the broker does (127.0.0.1 by default), unless told otherwise.
    const metricsHost = opts.metricsHost ?? (opts.metricsPort !== undefined ? (opts.host ?? '127.0.0.1') : undefined);
    server = await launch(ownListeners ? { ...opts, metricsHost, dataDir } : { ...opts, metricsHost, host: opts.host ?? '127.0.0.1', port: opts.port ?? 0, dataDir });
  } catch (err) {
    if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const ep = server.advertisedEndpoints[0];
  let closed = false;
  return {
    bootstrapServers: server.advertisedEndpoints.map((e) => `${e.host}:${e.port}`),
    listeners: Object.fromEntries(server.advertisedEndpoints.map((e) => [e.listenerName, `${e.host}:${e.port}`])),
    host: ep.host,
    port: ep.port,
    nodeId: server.nodeId,
    clusterId: server.clusterId,
    dataDir,
    server,
    metricsAddress: server.metricsAddress,
    async close() {
      if (closed) return;
      closed = true;
      await server.shutdown();
      if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { KafkaServer } from './server';
export { startCluster, type StartClusterOptions, type RunningCluster } from './cluster';
export { ControllerServer } from './controller/controller-server';
export type { LaunchOptions } from './launch';
export { createTestCertificates, type TestCertificates, type TestIdentity } from './testing/certificates';
