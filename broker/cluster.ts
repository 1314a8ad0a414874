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
 *   const q = await startCluster({ brokers: 3, controllers: 3 });  // a KRaft controller quorum
 *   await q.killController(q.activeController()!.nodeId);          // a crash: another is elected, brokers follow it
 *   await q.startController(3000);                                  // back on its directory, catches up
 *
 * Shape: one controller (a ControllerServer, node id 3000 unless `controllerNodeId` is given, on
 * its own listener) and brokers with node ids 0..N-1, each a KafkaServer in cluster mode
 * (`process.roles=broker`, `controller.quorum.bootstrap.servers` = the controller). Brokers talk
 * to the controller and to each other only over the Kafka protocol, exactly as separate processes
 * do (`krill --node-id N --controller HOST:PORT`), so the in-process cluster exercises the same
 * code. The controller is separate from every broker so that any broker can be stopped or killed.
 * With `controllers: K` (K > 1) there are K ControllerServers (node ids 3000..3000+K-1) on one KRaft
 * quorum (`controller.quorum.voters` naming all of them; every metadata directory formatted with one
 * cluster id, the one a directory already has or a new random one) and the brokers name the same
 * voters, so they follow whichever controller is active (metadata/cluster-link.ts);
 * `killController` / `stopController` / `startController` crash, stop and restart one of them.
 *
 * Ports: 0 (free ports) unless `port` is given, then brokers use port, port+1, ... and the
 * controllers port+N, port+N+1, ... (a quorum's ports are chosen before anything starts, since the
 * voters name each other: with port 0, free ports the OS has just handed out). Brokers listen on PLAINTEXT://host:port unless `config` (or `brokerConfig`)
 * sets `listeners` (e.g. SSL with `inter.broker.listener.name`): then those are used, and a port 0
 * in them is the port the broker got on its first start when it restarts. Data: one temp directory (controller/, or controller-<id>/ for a quorum, and broker-<id>/ inside), removed by
 * close() unless keepDataDir, or `dataDir` if given; a broker whose `brokerConfig` sets `log.dirs` uses those
 * instead of broker-<id>/ (put them inside `dataDir` to have close() remove them).
 *
 * Each node has one control for the cluster's lifetime (broker controls are created at a broker's
 * first start and reattached on every restart; the controller's likewise), so rules, recordings
 * and cuts survive restarts. Under a quorum, `control.controller` is the first controller's.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as net from 'node:net';
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
import { randomUuid } from '../protocol/primitives/uuid';
import { readMetaProperties } from '../storage/meta-properties';
import { nodeFs } from '../storage/fs';

export interface StartClusterOptions {
  brokers: number;
  /** Controllers: 1 (default) runs one; more run a KRaft controller quorum of that many (node ids controllerNodeId..+K-1). */
  controllers?: number;
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
  /**
   * The controller now running (replaced by restartController); under a quorum the active one, or
   * the first running one while there is none.
   */
  readonly controller: ControllerServer;
  /** host:port of the controller; under a quorum every voter's, comma-separated. */
  readonly controllerAddress: string;
  /** Running controllers by node id (one unless `controllers` > 1). */
  readonly controllers: ReadonlyMap<number, ControllerServer>;
  /** The active controller (null while none is, or the running ones disagree on the quorum leader). */
  activeController(): ControllerServer | null;
  /** A controller crash (`shutdown({ graceful: false })`: a quorum leader does not resign). */
  killController(nodeId: number): Promise<void>;
  /** A clean stop of one controller (a quorum leader resigns first). */
  stopController(nodeId: number): Promise<void>;
  /** (Re)starts a controller on its port and metadata directory. */
  startController(nodeId: number): Promise<ControllerServer>;
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
   * Stops the controller (under a quorum: the active one) and starts it again on the same port and
   * metadata log. Brokers keep serving meanwhile (nothing in the metadata can change) and reconnect
   * by themselves.
   */
  restartController(downMs?: number): Promise<void>;
  /** Fault injection: every node's control and network cuts between nodes (docs/operations.md). */
  readonly control: ClusterControl;
  close(): Promise<void>;
}

/** A port nobody listens on right now (a quorum's voters must name each other's ports before they start). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startCluster(opts: StartClusterOptions): Promise<RunningCluster> {
  if (!Number.isInteger(opts.brokers) || opts.brokers < 1) throw new Error(`invalid broker count ${opts.brokers}`);
  const k = opts.controllers ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new Error(`invalid controller count ${opts.controllers}`);
  const quorum = k > 1;
  const host = opts.host ?? '127.0.0.1';
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cluster-'));
  const firstControllerId = opts.controllerNodeId ?? 3000;
  const controllerIds = Array.from({ length: k }, (_, i) => firstControllerId + i);
  const n = opts.brokers;
  const common = { ...(opts.config ?? {}) };
  const brokerDir = (id: number) => path.join(dataDir, `broker-${id}`);
  const controllerDir = (id: number) => path.join(dataDir, quorum ? `controller-${id}` : 'controller');
  const ports = new Map<number, number>();
  for (let id = 0; id < n; id++) ports.set(id, opts.port !== undefined && opts.port !== 0 ? opts.port + id : 0);

  const controllers = new Map<number, ControllerServer>();
  const controllerPorts = new Map<number, number>();
  const controllerControls = new Map<number, RequestControl>();
  const brokers = new Map<number, RunningBroker>();
  const controls = new Map<number, BrokerControl>();
  const cleanup = async () => {
    for (const c of controls.values()) c.resume();
    for (const c of controllerControls.values()) c.resume();
    await Promise.all([...brokers.values()].map((b) => b.close().catch(() => undefined)));
    brokers.clear();
    // A whole quorum going away: no leader hands over to a successor that is stopping too (a
    // resignation would wait for acknowledgements that never come); the raft log and quorum-state
    // are durable at every step, so nothing is lost.
    await Promise.all([...controllers.values()].map((c) => c.shutdown({ graceful: !quorum }).catch(() => undefined)));
    controllers.clear();
    if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (const [i, id] of controllerIds.entries()) {
      controllerPorts.set(id, opts.port !== undefined && opts.port !== 0 ? opts.port + n + i : quorum ? await freePort(host) : 0);
    }
    const voters = controllerIds.map((id) => `${id}@${host}:${controllerPorts.get(id)}`).join(',');
    // A quorum's voters must share one cluster id: the one a directory already has, else a new one.
    const clusterIdForQuorum = quorum
      ? (controllerIds.map((id) => readMetaProperties(nodeFs, controllerDir(id))?.clusterId).find((c) => c !== undefined) ?? randomUuid())
      : undefined;
    const startOneController = async (id: number): Promise<ControllerServer> => {
      const c = await ControllerServer.start({
        file: opts.configFile,
        overrides: opts.overrides,
        props: {
          ...common,
          'process.roles': 'controller',
          'node.id': String(id),
          listeners: `CONTROLLER://${host}:${controllerPorts.get(id)}`,
          'controller.listener.names': 'CONTROLLER',
          'log.dirs': controllerDir(id),
          ...(quorum ? { 'controller.quorum.voters': voters } : {}),
        },
        clusterId: clusterIdForQuorum,
        versionCaps: parseVersionCaps(opts.maxApiVersions),
        logLevel: opts.logLevel,
        logFormat: opts.logFormat,
        logger: opts.logger?.child(`controller-${id}`),
        scramCredentials: opts.scramCredentials,
      });
      // A free port (port 0, one controller) is kept across restarts.
      controllerPorts.set(id, c.endpoint.port);
      let control = controllerControls.get(id);
      if (!control) controllerControls.set(id, (control = new RequestControl(c.nodeId, c.logger)));
      control.attach({ logger: c.logger, dispatcherInterceptors: c.dispatcherInterceptors, topicName: (tid) => c.controller.image.topicById(tid)?.name });
      controllers.set(id, c);
      return c;
    };
    await Promise.all(controllerIds.map((id) => startOneController(id)));
    const controllerAddress = controllerIds.map((id) => `${host}:${controllerPorts.get(id)}`).join(',');
    const controllerSetting: Record<string, string> = quorum ? { 'controller.quorum.voters': voters } : { 'controller.quorum.bootstrap.servers': controllerAddress };
    const activeController = (): ControllerServer | null => {
      const running = [...controllers.values()];
      if (!quorum) return running[0] ?? null;
      const active = running.filter((c) => c.controller.isActiveController);
      if (active.length !== 1) return null;
      const leader = active[0].raftClient!.leader;
      return running.every((c) => c.raftClient!.leader.id === leader.id && c.raftClient!.leader.epoch === leader.epoch) ? active[0] : null;
    };

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
          ...controllerSetting,
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
    const clusterId = controllers.get(firstControllerId)!.clusterId;
    if (opts.topics && opts.topics.length > 0) {
      const servers = [...brokers.values()].map((b) => b.server);
      await createStartupTopics(servers[0], opts.topics, { waitOn: servers });
    }
    const control = new ClusterControl(controls, () => controllerControls.get(firstControllerId)!, firstControllerId);
    const running: RunningCluster = {
      get bootstrapServers() {
        return [...ports.entries()].sort((a, b) => a[0] - b[0]).map(([, port]) => `${host}:${port}`);
      },
      brokers,
      get controller() {
        const c = activeController() ?? controllers.get(firstControllerId) ?? [...controllers.values()][0];
        if (!c) throw new Error('no controller is running');
        return c;
      },
      controllerAddress,
      controllers,
      activeController,
      async killController(nodeId: number) {
        const c = controllers.get(nodeId);
        if (!c) return;
        controllers.delete(nodeId);
        controllerControls.get(nodeId)?.resume();
        await c.shutdown({ graceful: false });
      },
      async stopController(nodeId: number) {
        const c = controllers.get(nodeId);
        if (!c) return;
        controllers.delete(nodeId);
        controllerControls.get(nodeId)?.resume();
        await c.shutdown();
      },
      async startController(nodeId: number) {
        if (!controllerPorts.has(nodeId)) throw new Error(`no controller ${nodeId} in this cluster`);
        return controllers.get(nodeId) ?? startOneController(nodeId);
      },
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
        const c = running.controller;
        await running.stopController(c.nodeId);
        if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
        await startOneController(c.nodeId);
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
