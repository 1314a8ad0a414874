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
 *   await startBroker({ topics: ['orders:6', { name: 'audit', config: { 'cleanup.policy': 'compact' } }] });
 *                                                      // startup topics, created before it returns
 *   broker.control.intercept({ api: 'Produce', topic: 'orders' }, { error: 'NOT_LEADER_OR_FOLLOWER' }, { times: 2 });
 *   broker.control.failStorage({ op: 'fsync', file: 'log', topic: 'orders' });
 *   await broker.control.stop(); await broker.control.start();   // fault injection (docs/operations.md)
 *
 * It goes through the same startup code as the `krill` command. Also exported: startCluster
 * (cluster.ts, N brokers and a controller in this process), KafkaServer and ControllerServer, and
 * createTestCertificates (testing/certificates.ts, made with the system openssl).
 *
 * `listeners` in `config`, `overrides` or the `configFile` are used as given unless host or port is;
 * otherwise the broker listens on PLAINTEXT://host:port (127.0.0.1 and a free port by default).
 *
 * Every embedded broker's partition logs run on a FaultyFs (over `storageFs` when one is given,
 * node:fs otherwise), which is what `control.failStorage` arms; with no fault armed it only passes
 * calls through. `control.start()` after `control.stop()` reuses the ports the broker had (port 0
 * in `config.listeners` included); listeners from `overrides` or a config file are taken as given.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launch, type LaunchOptions } from './launch';
import { loadPropertiesFile } from '../config/properties';
import type { KafkaServer } from './server';
import { nodeFs } from '../storage/fs';
import { FaultyFs } from '../storage/testing/faulty-fs';
import { BrokerControl } from './fault-injection/node-control';
import { pinPorts } from './listener-ports';

export interface StartBrokerOptions extends Omit<LaunchOptions, 'host' | 'port' | 'dataDir'> {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port chosen by the OS. Ignored, like host, when `config` sets `listeners` and neither is given. */
  port?: number;
  /** Default: a fresh temp directory, removed by close() unless keepDataDir is set. */
  dataDir?: string;
  keepDataDir?: boolean;
  /**
   * An existing control to attach this broker to (its rules, recordings and storage faults carry
   * over): how startCluster keeps one control per node across restarts. Default: a new one.
   */
  control?: BrokerControl;
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
  /** The server itself, for tests that look inside (partitions, logs, metadata); a new one after control.start(). */
  readonly server: KafkaServer;
  /** Fault injection and lifecycle: requests, storage, stop/start, pause, latency (docs/operations.md). */
  readonly control: BrokerControl;
  /** Clean shutdown (checkpoints and clean-shutdown marker written). */
  close(): Promise<void>;
}

export async function startBroker(opts: StartBrokerOptions = {}): Promise<RunningBroker> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-'));
  const storageFs = opts.control?.storageFs ?? new FaultyFs(opts.storageFs ?? nodeFs);
  let ownListeners = false;
  const { control: _given, ...launchable } = opts;
  // Metrics endpoints bind where the broker does (127.0.0.1 by default), unless told otherwise.
  const metricsHost = opts.metricsHost ?? (opts.metricsPort !== undefined ? (opts.host ?? '127.0.0.1') : undefined);
  const launchOpts = (bound?: ReadonlyMap<string, number>): LaunchOptions => {
    if (!ownListeners) return { ...launchable, metricsHost, host: opts.host ?? '127.0.0.1', port: bound?.values().next().value ?? opts.port ?? 0, dataDir, storageFs };
    const listeners = opts.config?.listeners;
    const config = listeners === undefined || listeners === null ? opts.config : { ...opts.config, listeners: pinPorts(String(listeners), bound) };
    return { ...launchable, metricsHost, config, dataDir, storageFs };
  };
  let server: KafkaServer;
  try {
    ownListeners =
      opts.host === undefined &&
      opts.port === undefined &&
      (opts.config?.listeners !== undefined ||
        (opts.overrides ?? []).some((o) => o.startsWith('listeners=')) ||
        (opts.configFile !== undefined && loadPropertiesFile(opts.configFile).has('listeners')));
    server = await launch(launchOpts());
  } catch (err) {
    if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const control = opts.control ?? new BrokerControl(server.nodeId, server.logger, storageFs);
  const attach = (s: KafkaServer) =>
    control.attach({ logger: s.logger, dispatcherInterceptors: s.dispatcherInterceptors, topicName: (id) => s.metadata.topicById(id)?.name });
  attach(server);
  const ep = server.advertisedEndpoints[0];
  let stopped = false;
  let closed = false;
  if (!opts.control) {
    control.bindLifecycle({
      get running() {
        return !stopped && !closed;
      },
      async stop() {
        if (stopped || closed) return;
        stopped = true;
        control.resume(); // a stop releases a pause: held requests are answered or fail, the shutdown never waits on them
        await server.shutdown();
      },
      async start() {
        if (closed) throw new Error(`broker ${server.nodeId} is closed`);
        if (!stopped) return;
        const bound = new Map(server.advertisedEndpoints.map((e) => [e.listenerName, e.port]));
        server = await launch(launchOpts(bound));
        attach(server);
        stopped = false;
      },
    });
  }
  return {
    bootstrapServers: server.advertisedEndpoints.map((e) => `${e.host}:${e.port}`),
    listeners: Object.fromEntries(server.advertisedEndpoints.map((e) => [e.listenerName, `${e.host}:${e.port}`])),
    host: ep.host,
    port: ep.port,
    nodeId: server.nodeId,
    clusterId: server.clusterId,
    dataDir,
    get server() {
      return server;
    },
    control,
    get metricsAddress() {
      return server.metricsAddress;
    },
    async close() {
      if (closed) return;
      closed = true;
      control.resume(); // held requests are answered (or fail) rather than hang the shutdown
      await server.shutdown();
      if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { KafkaServer } from './server';
export { startCluster, type StartClusterOptions, type RunningCluster } from './cluster';
export { ControllerServer } from './controller/controller-server';
export type { LaunchOptions } from './launch';
export { BrokerControl, RequestControl } from './fault-injection/node-control';
export { ClusterControl } from './fault-injection/cluster-control';
export type { RequestMatch, RequestFault, FaultOptions, InterceptRule, RequestRecording, RecordOptions, ObservedRequest } from './fault-injection/request-faults';
export type { StorageFault, StorageFileKind } from './fault-injection/storage-faults';
export type { RequestTopicPartition } from './fault-injection/request-topics';
export { parseStartupTopic, type StartupTopic } from './startup-topics';
export { createTestCertificates, type TestCertificates, type TestIdentity } from './testing/certificates';
