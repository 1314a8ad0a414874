/**
 * startCluster: an N-broker krill cluster in this process, for tests and development.
 *
 *   const cluster = await startCluster({ brokers: 3, config: { 'min.insync.replicas': '2' } });
 *   cluster.bootstrapServers;            // ['127.0.0.1:40001', '127.0.0.1:40002', '127.0.0.1:40003']
 *   await cluster.stopBroker(1);         // controlled shutdown (leaderships move first)
 *   await cluster.killBroker(2);         // no goodbye: the controller fences it when its session expires
 *   await cluster.startBroker(1);        // back, same node id, port and data directory
 *   cluster.slowReplication(2, 500);     // fault: broker 2's follower fetches wait 500 ms each
 *   cluster.control.cut(0, 1);           // fault injection (fault-injection/cluster-control.ts)
 *   await startCluster({ brokers: 3, topics: ['orders:6:3'] });   // startup topics, on every broker before it returns
 *   await cluster.close();
 *
 * Shape: one controller (a ControllerServer, node id 3000 unless `controllerNodeId` is given, on
 * its own listener) and brokers with node ids 0..N-1, each a KafkaServer in cluster mode
 * (`process.roles=broker`, `controller.quorum.bootstrap.servers` = the controller). Brokers talk
 * to the controller and to each other only over the Kafka protocol, exactly as separate processes
 * do (`krill --node-id N --controller HOST:PORT`), so the in-process cluster exercises the same
 * code. The controller is separate from every broker so that any broker can be stopped or killed.
 *
 * Ports: 0 (free ports) unless `port` is given, then brokers use port, port+1, ... and the
 * controller port+N. Brokers listen on PLAINTEXT://host:port unless `config` (or `brokerConfig`)
 * sets `listeners` (e.g. SSL with `inter.broker.listener.name`): then those are used, and a port 0
 * in them is the port the broker got on its first start when it restarts. Data: one temp directory (controller/ and broker-<id>/ inside), removed by
 * close() unless keepDataDir, or `dataDir` if given; a broker whose `brokerConfig` sets `log.dirs` uses those
 * instead of broker-<id>/ (put them inside `dataDir` to have close() remove them).
 *
 * Each node has one control for the cluster's lifetime (broker controls are created at a broker's
 * first start and reattached on every restart; the controller's likewise), so rules, recordings
 * and cuts survive restarts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ConfigInput } from '../config/kafka-config';
import { ControllerServer } from './controller/controller-server';
import type { LogFormat, LogLevel, Logger } from '../common/logger';
import { parseVersionCaps } from './launch';
import { pinPorts } from './listener-ports';
import { startBroker, type RunningBroker } from './';
import { createStartupTopics, type StartupTopic } from './startup-topics';
import { BrokerControl, RequestControl } from './fault-injection/node-control';
import { ClusterControl } from './fault-injection/cluster-control';

export interface StartClusterOptions {
  brokers: number;
  /** Kafka config for every node (brokers and controller). */
  config?: Readonly<Record<string, ConfigInput>>;
  /** A server.properties file and `key=value` overrides for every node (the CLI's --config / --override). */
  configFile?: string;
  overrides?: readonly string[];
  /** Extra config for one broker, by node id. */
  brokerConfig?: (nodeId: number) => Readonly<Record<string, ConfigInput>>;
  host?: string;
  /** First broker port (default 0: free ports). */
  port?: number;
  dataDir?: string;
  keepDataDir?: boolean;
  controllerNodeId?: number;
  maxApiVersions?: Readonly<Record<string, number>>;
  /** Every broker advertises the API ranges of this Kafka release line (krill.kafka.version). */
  kafkaVersion?: string;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
  logger?: Logger;
  /**
   * Metrics endpoints (krill.metrics.port) of every broker: 0 gives each a free port, N gives
   * broker i port N+i (RunningBroker.metricsAddress says which). Unset: none.
   */
  metricsPort?: number;
  /** SCRAM credentials for the controller to write to a fresh metadata log (`--add-scram`). */
  scramCredentials?: readonly string[];
  /** Topics created once every broker is up, before startCluster returns (broker/startup-topics.ts). */
  topics?: readonly (string | StartupTopic)[];
}

export interface RunningCluster {
  readonly bootstrapServers: string[];
  /** Running brokers by node id (undefined while stopped). */
  readonly brokers: ReadonlyMap<number, RunningBroker>;
  /** The controller now running (replaced by restartController). */
  readonly controller: ControllerServer;
  readonly controllerAddress: string;
  readonly clusterId: string;
  readonly dataDir: string;
  broker(nodeId: number): RunningBroker;
  /** Controlled shutdown of one broker (its data stays). */
  stopBroker(nodeId: number): Promise<void>;
  /** Stops one broker without controlled shutdown: the controller finds out when its session expires. */
  killBroker(nodeId: number): Promise<void>;
  /** (Re)starts a broker with its node id, port and data directory. */
  startBroker(nodeId: number): Promise<RunningBroker>;
  /** Fault injection: every follower fetch of this broker waits `delayMs` first (0 = normal). */
  slowReplication(nodeId: number, delayMs: number): void;
  /**
   * Stops the controller and starts it again on the same port and metadata log. Brokers keep
   * serving meanwhile (nothing in the metadata can change) and reconnect by themselves.
   */
  restartController(downMs?: number): Promise<void>;
  /** Fault injection: every node's control and network cuts between nodes (docs/operations.md). */
  readonly control: ClusterControl;
  close(): Promise<void>;
}

export async function startCluster(opts: StartClusterOptions): Promise<RunningCluster> {
  if (!Number.isInteger(opts.brokers) || opts.brokers < 1) throw new Error(`invalid broker count ${opts.brokers}`);
  const host = opts.host ?? '127.0.0.1';
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cluster-'));
  const controllerNodeId = opts.controllerNodeId ?? 3000;
  const n = opts.brokers;
  const common = { ...(opts.config ?? {}) };
  const brokerDir = (id: number) => path.join(dataDir, `broker-${id}`);
  const ports = new Map<number, number>();
  for (let id = 0; id < n; id++) ports.set(id, opts.port !== undefined && opts.port !== 0 ? opts.port + id : 0);

  let controller: ControllerServer | undefined;
  let controllerControl: RequestControl | undefined;
  const brokers = new Map<number, RunningBroker>();
  const controls = new Map<number, BrokerControl>();
  const cleanup = async () => {
    for (const c of controls.values()) c.resume();
    controllerControl?.resume();
    await Promise.all([...brokers.values()].map((b) => b.close().catch(() => undefined)));
    brokers.clear();
    await controller?.shutdown().catch(() => undefined);
    if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const controllerPort = opts.port !== undefined && opts.port !== 0 ? opts.port + n : 0;
    const startController = (port: number) =>
      ControllerServer.start({
        file: opts.configFile,
        overrides: opts.overrides,
        props: {
          ...common,
          'process.roles': 'controller',
          'node.id': String(controllerNodeId),
          listeners: `CONTROLLER://${host}:${port}`,
          'controller.listener.names': 'CONTROLLER',
          'log.dirs': path.join(dataDir, 'controller'),
        },
        versionCaps: parseVersionCaps(opts.maxApiVersions),
        logLevel: opts.logLevel,
        logFormat: opts.logFormat,
        logger: opts.logger?.child(`controller-${controllerNodeId}`),
        scramCredentials: opts.scramCredentials,
      });
    const attachController = (c: ControllerServer) => {
      controllerControl ??= new RequestControl(c.nodeId, c.logger);
      controllerControl.attach({ logger: c.logger, dispatcherInterceptors: c.dispatcherInterceptors, topicName: (id) => c.controller.image.topicById(id)?.name });
    };
    controller = await startController(controllerPort);
    attachController(controller);
    const controllerAddress = `${controller.endpoint.host}:${controller.endpoint.port}`;

    const boundPorts = new Map<number, Map<string, number>>();
    const start = async (id: number): Promise<RunningBroker> => {
      const own = opts.brokerConfig?.(id) ?? {};
      const listeners = own.listeners ?? common.listeners;
      const b = await startBroker({
        configFile: opts.configFile,
        // A broker's own log.dirs (several directories, say) replaces its broker-<id>/ directory.
        overrides: own['log.dirs'] === undefined || own['log.dirs'] === null ? opts.overrides : [...(opts.overrides ?? []), `log.dirs=${String(own['log.dirs'])}`],
        ...(listeners === undefined || listeners === null ? { host, port: ports.get(id)! } : {}),
        dataDir: brokerDir(id),
        keepDataDir: true,
        config: {
          ...common,
          ...own,
          ...(listeners === undefined || listeners === null ? {} : { listeners: pinPorts(String(listeners), boundPorts.get(id)) }),
          'process.roles': 'broker',
          'node.id': String(id),
          'controller.quorum.bootstrap.servers': controllerAddress,
        },
        maxApiVersions: opts.maxApiVersions,
        kafkaVersion: opts.kafkaVersion,
        logLevel: opts.logLevel,
        logFormat: opts.logFormat,
        logger: opts.logger?.child(`broker-${id}`),
        control: controls.get(id),
        ...(opts.metricsPort === undefined ? {} : { metricsPort: opts.metricsPort === 0 ? 0 : opts.metricsPort + id }),
      });
      if (!controls.has(id)) {
        controls.set(id, b.control);
        b.control.bindLifecycle({
          get running() {
            return brokers.has(id);
          },
          stop: () => running.stopBroker(id),
          start: async () => void (await running.startBroker(id)),
        });
      }
      ports.set(id, b.port);
      boundPorts.set(id, new Map(b.server.advertisedEndpoints.map((e) => [e.listenerName, e.port])));
      brokers.set(id, b);
      return b;
    };
    await Promise.all([...ports.keys()].map((id) => start(id)));
    const clusterId = controller.clusterId;
    if (opts.topics && opts.topics.length > 0) {
      const servers = [...brokers.values()].map((b) => b.server);
      await createStartupTopics(servers[0], opts.topics, { waitOn: servers });
    }
    const control = new ClusterControl(controls, () => controllerControl!, controllerNodeId);
    const running: RunningCluster = {
      get bootstrapServers() {
        return [...ports.entries()].sort((a, b) => a[0] - b[0]).map(([, port]) => `${host}:${port}`);
      },
      brokers,
      get controller() {
        return controller!;
      },
      controllerAddress,
      clusterId,
      dataDir,
      broker(nodeId: number) {
        const b = brokers.get(nodeId);
        if (!b) throw new Error(`broker ${nodeId} is not running`);
        return b;
      },
      async stopBroker(nodeId: number) {
        const b = brokers.get(nodeId);
        if (!b) return;
        brokers.delete(nodeId);
        await b.close();
      },
      async killBroker(nodeId: number) {
        const b = brokers.get(nodeId);
        if (!b) return;
        brokers.delete(nodeId);
        b.control.resume();
        await b.server.shutdown({ controlled: false });
      },
      async restartController(downMs = 0) {
        const port = controller!.endpoint.port;
        controllerControl?.resume();
        await controller!.shutdown();
        if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
        controller = await startController(port);
        attachController(controller);
      },
      slowReplication(nodeId: number, delayMs: number) {
        brokers.get(nodeId)?.server.replicaManager.setFollowerFetchDelay(delayMs);
      },
      async startBroker(nodeId: number) {
        if (!ports.has(nodeId)) throw new Error(`no broker ${nodeId} in this cluster`);
        const running = brokers.get(nodeId);
        if (running) return running;
        return start(nodeId);
      },
      control,
      close: cleanup,
    };
    return running;
  } catch (err) {
    await cleanup();
    throw err;
  }
}
