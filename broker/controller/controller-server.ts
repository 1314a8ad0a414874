/**
 * ControllerServer: a krill controller node (`process.roles=controller`), the one controller of a
 * multi-broker cluster. It owns the metadata log (`<metadata.log.dir>/__cluster_metadata-0`), the
 * Controller that writes it, and a listener speaking the Kafka protocol with the controller's own
 * API set (broker/controller/handlers): brokers register (BrokerRegistration) and heartbeat
 * (BrokerHeartbeat), fetch the metadata log (Fetch on `__cluster_metadata`, long polling), send ISR
 * changes (AlterPartition) and forward admin requests (CreateTopics, DeleteTopics,
 * CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders, AllocateProducerIds,
 * AlterClientQuotas, CreateAcls, DeleteAcls). With `authorizer.class.name` its StandardAuthorizer
 * decides from the controller image's ACLs (DescribeAcls is served here too).
 *
 * Two modes, chosen by `controller.quorum.voters` (and `controller.quorum.bootstrap.servers`):
 * - single controller (no voter or one): the metadata log is a MetadataLogStore this controller
 *   alone writes; if it stops, brokers keep serving with the metadata they have, and nothing changes
 *   (no elections, no new topics) until it is back (docs/replication.md);
 * - KRaft controller quorum (more than one voter, process.roles=controller): the same directory is
 *   a UnifiedRaftLog with its `quorum-state`, run by a KafkaRaftClient against the other voters; the
 *   Controller runs in quorum mode over a RaftQuorumLog (active only on the quorum leader, the
 *   others answer NOT_CONTROLLER), and the listener serves controllerHandlers(true) (the quorum RPCs,
 *   Fetch from the raft log). Every voter must be formatted with the same cluster id first
 *   (meta.properties, `krill storage format -t ID -c FILE`) or be given one (`clusterId`): a quorum
 *   controller never invents a cluster id. Each controller snapshots its image
 *   (metadata.log.max.record.bytes.between.snapshots / metadata.log.max.snapshot.interval.ms) and the
 *   raft client trims the log below snapshots (metadata.max.retention.bytes / .ms); a restart loads
 *   the latest snapshot, then the log after it.
 *   Brokers (and the broker half of combined voters) follow
 *   whichever controller is active (metadata/cluster-link.ts, docs/raft.md). A controller with no voters and bootstrap servers is one of a dynamic
 *   quorum (KIP-853): the same, its voter set from the log (the bootstrap checkpoint `krill storage
 *   format --standalone / --initial-controllers` wrote, or learned as an observer that joins with
 *   AddRaftVoter), its replica key from meta.properties' directory.id.
 * Either way the state is the metadata log, so a restart loses nothing committed.
 *
 * Startup: config -> metadata dir and cluster id (meta.properties) -> metadata log replay (quorum:
 * the raft client built, listened to, not yet started) -> (with krill.metrics.port: the metrics
 * endpoints, /ready 200 once running) -> listener bound -> (quorum: raft client started) -> session
 * and rebalance timers. Shutdown: (quorum: the raft client closed, gracefully unless asked not to, so
 * a leader resigns while the listener still answers) -> listener -> controller -> logs -> metrics.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUuid } from '../../protocol/primitives/uuid';
import { KafkaConfig, type KafkaConfigInit } from '../../config/kafka-config';
import { ConfigException } from '../../config/config-types';
import { checkQuorumSupport } from '../quorum-support';
import { logConfigFrom } from '../../config/log-config-from';
import { topicConfigDef } from '../../config/topic-config-def';
import { brokerListDefault } from '../../config/dynamic-broker-config';
import { groupConfigBounds } from '../../config/group-configs';
import { Logger, type LogFormat, type LogLevel } from '../../common/logger';
import { RequestDispatcher } from '../request-dispatcher';
import { SocketServer, type SocketServerOptions } from '../network/socket-server';
import { socketServerOptions } from '../network/socket-server-config';
import { controllerHandlers } from './handlers';
import type { ControllerNodeMetrics } from '../metrics/controller-node-metrics';
import { MetricsServer } from '../metrics/metrics-server';
import { Controller } from '../../metadata/controller/controller';
import { KafkaRaftClient } from '../../metadata/raft/kafka-raft-client';
import { METADATA_PARTITION_DIR, MetadataLogStore } from '../../metadata/metadata-log-store';
import { QUORUM_BOOTSTRAP_SERVERS_CONFIG, QUORUM_VOTERS_CONFIG, clusterIdFromVoters, parseVoterConnections, quorumConfigFrom } from '../../metadata/raft/quorum-config';
import { UnifiedRaftLog } from '../../metadata/raft/unified-raft-log';
import { FileQuorumStateStore } from '../../metadata/raft/quorum-state-store';
import { RaftQuorumLog } from '../../metadata/controller/raft-quorum-log';
import type { MetadataLog } from '../../metadata/metadata-log';
import { ensureMetaProperties, readMetaProperties } from '../../storage/meta-properties';
import { nodeFs } from '../../storage/fs';
import { SaslGate } from '../security/sasl/authenticator';
import { scramMechanismDeps } from '../security/sasl/scram';
import { controllerClientSasl } from '../security/sasl/registry';
import { controllerClientTls } from '../security/ssl/ssl-settings';
import type { ClientSecurity } from '../../client/network-client';
import { ALLOW_ALL, type Authorizer } from '../../metadata/authorizer/authorizer';
import { authorizerFromConfig } from '../../metadata/authorizer/standard-authorizer';
import { parseScramArgument, scramCredentialRecords } from '../security/sasl/scram-parser';

export interface ControllerServerOptions extends KafkaConfigInit {
  versionCaps?: ReadonlyMap<number, number>;
  logLevel?: LogLevel;
  /** text (default) or json lines; ignored when `logger` is given. */
  logFormat?: LogFormat;
  logger?: Logger;
  /** Called once the metrics endpoints (krill.metrics.port) are bound. */
  metricsListening?: (address: { host: string; port: number }) => void;
  /**
   * Use this cluster id for a fresh metadata directory (default: a random one; in a controller
   * quorum there is no default: the directory must be formatted or this given).
   */
  clusterId?: string;
  /** Decides what each principal may do; overrides `authorizer.class.name` (tests inject scripted ones). */
  authorizer?: Authorizer;
  /**
   * SCRAM credentials to write to a fresh metadata log (`--add-scram`, Kafka's `kafka-storage format
   * --add-scram` syntax); ignored, with a log line, when the log already has records.
   */
  scramCredentials?: readonly string[];
}

/** What the controller listener's handlers may use. */
export interface ControllerNode {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly config: KafkaConfig;
  readonly logger: Logger;
  readonly controller: Controller;
  readonly metadataLog: MetadataLog;
  readonly versionCaps: ReadonlyMap<number, number>;
  /** Decides what each principal may do on the controller listener (ALLOW_ALL unless one is configured). */
  readonly authorizer: Authorizer;
  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[];
  /** The controller's own listener, for DescribeCluster(endpoint type controller). */
  readonly endpoint: { host: string; port: number };
  /** Resolves when the metadata log's end passes `endOffset`, or after `maxWaitMs`. */
  waitForAppend(endOffset: bigint, maxWaitMs: number): Promise<void>;
  /** The node's KRaft quorum client, when it runs one (its listener then serves controllerHandlers(true)). */
  readonly raftClient?: KafkaRaftClient;
}

/** broker/metrics/controller-node-metrics.ts, loaded on first use (it loads prom-client). */
function loadControllerNodeMetrics(): typeof ControllerNodeMetrics {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../metrics/controller-node-metrics') as typeof import('../metrics/controller-node-metrics')).ControllerNodeMetrics;
}

/** The metadata log a ControllerServer runs on: its own store, or a KRaft quorum's raft log and client. */
type ControllerStorage =
  | { kind: 'single'; log: MetadataLogStore }
  | { kind: 'quorum'; raftLog: UnifiedRaftLog; raftClient: KafkaRaftClient; quorumLog: RaftQuorumLog };

/**
 * TLS and SASL of a voter's connections to the other voters: their controller listener is this
 * node's (the first of `controller.listener.names`), so its security protocol, its ssl.* stores
 * and `sasl.mechanism.controller.protocol` with the listener's JAAS login apply, exactly as for a
 * broker's connections to the controllers. Stores are loaded here, so a bad one stops start-up.
 */
function voterConnectionSecurity(config: KafkaConfig, logger: Logger): ClientSecurity {
  const deps = { ...scramMechanismDeps({ scramCredential: () => undefined }), logger: logger.child('sasl') };
  return { tls: controllerClientTls(config), sasl: controllerClientSasl(config, deps) };
}

export class ControllerServer implements ControllerNode {
  readonly nodeId: number;
  readonly logger: Logger;
  readonly controller: Controller;
  readonly versionCaps: ReadonlyMap<number, number>;
  readonly authorizer: Authorizer;
  readonly dispatcher: RequestDispatcher<ControllerNode>;
  private readonly socketServer: SocketServer;
  /** Metrics and their HTTP endpoints; null unless krill.metrics.port is set. */
  readonly metrics: ControllerNodeMetrics | null;
  private readonly metricsServer: MetricsServer | null;
  private readonly metricsListening?: (address: { host: string; port: number }) => void;
  private waiters = new Set<{ end: bigint; wake: () => void }>();
  private bound: { host: string; port: number } = { host: '', port: 0 };
  private state: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';
  readonly metadataLog: MetadataLog;
  readonly raftClient?: KafkaRaftClient;

  private constructor(
    readonly config: KafkaConfig,
    readonly clusterId: string,
    private readonly storage: ControllerStorage,
    opts: ControllerServerOptions,
    logger: Logger,
    socketOptions: SocketServerOptions,
  ) {
    this.nodeId = config.nodeId;
    this.logger = logger;
    this.versionCaps = opts.versionCaps ?? new Map();
    const imbalanceMs = Number(config.getLong('leader.imbalance.check.interval.seconds')) * 1000;
    const scram = opts.scramCredentials ?? [];
    const single = storage.kind === 'single' ? storage.log : null;
    if (single && scram.length > 0 && single.logEndOffset > 0n) {
      logger.info(`the metadata log already has records: ${scram.length} --add-scram credential(s) not added (they are written on the first start only)`);
    }
    this.controller = new Controller({
      nodeId: this.nodeId,
      clusterId,
      ...(storage.kind === 'single' ? { log: storage.log } : { quorum: storage.quorumLog }),
      logger: logger.child('controller'),
      // Quorum: the active controller writes them only if the committed log has no data yet.
      bootstrapRecords: scram.length > 0 && (!single || single.logEndOffset === 0n) ? scramCredentialRecords(scram) : undefined,
      defaultNumPartitions: () => config.getInt('num.partitions'),
      defaultReplicationFactor: () => config.getInt('default.replication.factor'),
      validateTopicConfig: (name, value) => {
        logConfigFrom(config, { [name]: value });
      },
      topicConfigDefault: (name) => {
        const d = topicConfigDef(name)?.default;
        return typeof d === 'string' ? d : null;
      },
      brokerConfigDefault: brokerListDefault,
      groupConfigBounds: () => groupConfigBounds(config),
      sessions: { sessionTimeoutMs: config.getInt('broker.session.timeout.ms') },
      // The last fallback after the topic's, this node's dynamic and the cluster default's values (Controller.uncleanLeaderElectionEnabled).
      staticUncleanLeaderElection: () => config.getBoolean('unclean.leader.election.enable'),
      autoLeaderRebalanceIntervalMs: config.getBoolean('auto.leader.rebalance.enable') ? imbalanceMs : null,
      // Quorum: every controller snapshots its image (the single-writer log takes no snapshots yet).
      snapshots: {
        maxRecordBytesBetween: Number(config.getLong('metadata.log.max.record.bytes.between.snapshots')),
        maxIntervalMs: Number(config.getLong('metadata.log.max.snapshot.interval.ms')),
      },
    });
    this.metadataLog = this.controller.metadataLog;
    if (storage.kind === 'quorum') this.raftClient = storage.raftClient;
    this.controller.subscribe(() => this.wakeWaiters(), false);
    // authorizer.class.name: the StandardAuthorizer follows the controller's image. Single writer:
    // the image has replayed the whole metadata log already, so its initial load is complete before
    // the listener binds. Quorum: once a committed batch of the current leader's epoch has been
    // applied (everything committed before it is then in the image), as Kafka waits for the
    // controller to catch up.
    const standard = opts.authorizer ? null : authorizerFromConfig(config, logger);
    standard?.follow(this.controller.image);
    if (storage.kind === 'single') standard?.completeInitialLoad();
    else if (standard) {
      const client = storage.raftClient;
      const stop = client.addListener({
        onCommit: (batches) => {
          const l = client.leader;
          if (l.id >= 0 && batches.some((b) => b.epoch >= l.epoch)) {
            standard.completeInitialLoad();
            stop();
          }
        },
      });
    }
    this.authorizer = opts.authorizer ?? standard ?? ALLOW_ALL;
    // SASL on the controller listener (broker/security/sasl/): SCRAM reads the controller's image.
    const sasl = SaslGate.forListeners(config, controllerListeners(config), { ...scramMechanismDeps(this.controller.image), logger: logger.child('sasl') });
    this.dispatcher = new RequestDispatcher<ControllerNode>(this, controllerHandlers(storage.kind === 'quorum'), logger.child('request'), undefined, sasl);
    this.socketServer = new SocketServer(this.dispatcher, socketOptions, logger.child('network'));
    // prom-client (~40 ms to load) is loaded only by a node that serves metrics.
    this.metrics = config.getIntOrNull('krill.metrics.port') === null ? null : new (loadControllerNodeMetrics())({
      image: this.controller.image,
      isActive: () => this.state === 'running' && this.controller.isActiveController,
      requestQueueSize: () => this.socketServer.slots.used,
      listenerNames: () => controllerListeners(config).map((l) => l.listenerName),
      connectionCounts: () => this.socketServer.connectionCountByListener(),
    });
    const requests = this.metrics?.requests;
    if (requests) this.dispatcher.requestObserver = (name, version, ms, fromFollower) => requests.record(name, version, ms, fromFollower);
    this.metricsServer = this.metrics ? new MetricsServer({ scrape: () => this.metrics!.scrape(), isReady: () => this.state === 'running' }, logger.child('metrics')) : null;
    this.metricsListening = opts.metricsListening;
  }

  /** Where /metrics, /ready and /live are served (null without krill.metrics.port). */
  get metricsAddress(): { host: string; port: number } | null {
    return this.metricsServer?.address ?? null;
  }

  static async start(opts: ControllerServerOptions = {}): Promise<ControllerServer> {
    for (const a of opts.scramCredentials ?? []) parseScramArgument(a); // a bad argument fails before anything is touched
    const config = KafkaConfig.load(opts);
    if (checkQuorumSupport(config) !== 'controller') {
      throw new ConfigException(`process.roles=${config.processRoles().join(',')}: a controller node runs with process.roles=controller`, 'process.roles');
    }
    const metadataDir = config.metadataLogDir();
    const voters = parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false);
    // KIP-853: no voters and controller.quorum.bootstrap.servers is a controller of a dynamic quorum
    // (its voter set from the bootstrap checkpoint `krill storage format` wrote, or learned as it joins).
    const dynamic = voters.size === 0 && (config.getList(QUORUM_BOOTSTRAP_SERVERS_CONFIG) ?? []).some((s) => s.trim() !== '');
    const quorum = voters.size > 1 || dynamic;
    const meta = readMetaProperties(nodeFs, metadataDir);
    const formatted = meta?.clusterId;
    if (dynamic && formatted === undefined && opts.clusterId === undefined) {
      // A dynamic quorum's voters come from the bootstrap checkpoint the format step writes.
      throw new ConfigException(
        `No meta.properties with a cluster.id in ${metadataDir}: controller ${config.nodeId} is a controller of a dynamic KRaft quorum (${QUORUM_BOOTSTRAP_SERVERS_CONFIG}, KIP-853), ` +
          `which must be formatted first: krill storage format -t CLUSTER_ID -c FILE with --standalone, --initial-controllers or --no-initial-controllers.`,
        QUORUM_BOOTSTRAP_SERVERS_CONFIG,
      );
    }
    fs.mkdirSync(metadataDir, { recursive: true });
    // Every voter of a static quorum must hold the same cluster id (the raft RPCs carry it and refuse
    // another). Unformatted, each derives it from controller.quorum.voters, so nodes started on empty
    // directories with the same voters line form one cluster (Kafka 4 requires kafka-storage.sh
    // format first; krill's format step does the same and wins when it was run).
    const derived = quorum && !dynamic && formatted === undefined && opts.clusterId === undefined ? clusterIdFromVoters(voters) : undefined;
    const clusterId = formatted ?? opts.clusterId ?? derived ?? randomUuid();
    ensureMetaProperties(nodeFs, metadataDir, config.nodeId, clusterId);
    const logger = opts.logger ?? Logger.root(`krill-controller[${config.nodeId}]`, { level: opts.logLevel, format: opts.logFormat });
    if (derived !== undefined) {
      logger.info(`${metadataDir} was not formatted: cluster id ${derived} derived from ${QUORUM_VOTERS_CONFIG} (every voter given the same line computes it; krill storage format -t ID -c FILE chooses one instead)`);
    }
    let storage: ControllerStorage;
    if (quorum) {
      const dir = path.join(metadataDir, METADATA_PARTITION_DIR);
      // metadata.log.segment.bytes when given; else krill's 16 MiB (Kafka's 1 GiB default would keep
      // the whole log in its active segment, which retention never deletes).
      const segmentBytes = config.isSet('metadata.log.segment.bytes') ? config.getInt('metadata.log.segment.bytes') : undefined;
      const raftLog = new UnifiedRaftLog({ dir, logger: logger.child('raft-log'), segmentBytes });
      let raftClient: KafkaRaftClient;
      try {
        raftClient = new KafkaRaftClient({
          nodeId: config.nodeId,
          clusterId,
          config: quorumConfigFrom(config),
          log: raftLog,
          store: FileQuorumStateStore.inDir(dir, dynamic ? { version: 1 } : { voterIds: [...voters.keys()] }),
          logger: logger.child('raft'),
          snapshotRetention: { maxBytes: Number(config.getLong('metadata.max.retention.bytes')), maxMs: Number(config.getLong('metadata.max.retention.ms')) },
          // The other voters are reached on their controller listener, secured as this node's says
          // (ssl.* / listener.name.<controller listener>.* and sasl.mechanism.controller.protocol),
          // as brokers reach it.
          connectOptions: voterConnectionSecurity(config, logger),
          // KIP-853: the replica key (meta.properties directory.id) and this controller's own endpoints.
          directoryId: meta?.directoryId || undefined,
          listeners: controllerListeners(config).map((l) => ({ name: l.listenerName, host: l.host || 'localhost', port: l.port })),
        });
      } catch (err) {
        raftLog.close();
        throw err;
      }
      // Listening before the client starts: the backlog it replays reaches the controller.
      storage = { kind: 'quorum', raftLog, raftClient, quorumLog: new RaftQuorumLog(raftClient) };
    } else {
      storage = { kind: 'single', log: new MetadataLogStore(metadataDir, logger.child('metadata-log')) };
    }
    let server: ControllerServer;
    try {
      const socketOptions = await socketServerOptions(config, controllerListeners(config).map((l) => l.listenerName), null);
      server = new ControllerServer(config, clusterId, storage, opts, logger, socketOptions);
    } catch (err) {
      if (storage.kind === 'quorum') storage.raftLog.close();
      throw err;
    }
    try {
      await server.startup();
    } catch (err) {
      await server.shutdown().catch(() => undefined);
      throw err;
    }
    return server;
  }

  private async startup(): Promise<void> {
    if (this.metricsServer) {
      const address = await this.metricsServer.listen(this.config.getString('krill.metrics.host') ?? '', this.config.getInt('krill.metrics.port'));
      this.metricsListening?.(address);
    }
    const listeners = controllerListeners(this.config);
    if (listeners.length === 0) throw new Error('the controller has no listener (listeners / controller.listener.names)');
    const bound = await this.socketServer.listen(listeners.map((l) => ({ name: l.listenerName, host: l.host ?? '', port: l.port, securityProtocol: l.securityProtocol })));
    const first = bound[0];
    this.bound = { host: first.host || '127.0.0.1', port: first.boundPort };
    if (this.storage.kind === 'quorum') this.storage.raftClient.start();
    this.controller.start();
    this.state = 'running';
    this.logger.info(`controller ${this.nodeId} of cluster ${this.clusterId} listening on ${this.bound.host}:${this.bound.port}`, {
      metadataOffset: String(this.controller.lastCommittedOffset),
    });
  }

  get endpoint(): { host: string; port: number } {
    return this.bound;
  }

  get isRunning(): boolean {
    return this.state === 'running';
  }

  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return this.dispatcher.advertisedVersions();
  }

  get dispatcherInterceptors() {
    return this.dispatcher.interceptors;
  }

  waitForAppend(endOffset: bigint, maxWaitMs: number): Promise<void> {
    if (this.metadataLog.logEndOffset > endOffset || maxWaitMs <= 0 || this.state !== 'running') return Promise.resolve();
    return new Promise((resolve) => {
      const w = {
        end: endOffset,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(w);
          resolve();
        },
      };
      const timer = setTimeout(w.wake, maxWaitMs);
      this.waiters.add(w);
    });
  }

  private wakeWaiters(): void {
    const end = this.metadataLog.logEndOffset;
    for (const w of [...this.waiters]) if (end > w.end) w.wake();
  }

  /**
   * Stops the node. In a quorum the raft client goes first, while the listener still answers:
   * graceful (the default) resigns the leadership so another voter takes over at once;
   * `graceful: false` stops it as a crash would (tests).
   */
  async shutdown(opts: { graceful?: boolean } = {}): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    for (const w of [...this.waiters]) w.wake();
    if (this.storage.kind === 'quorum') await this.storage.raftClient.close({ graceful: opts.graceful !== false });
    await this.socketServer.close();
    if (this.storage.kind === 'quorum') this.storage.quorumLog.close();
    await this.controller.close();
    if (this.storage.kind === 'quorum') this.storage.raftLog.close();
    this.state = 'stopped';
    await this.metricsServer?.close();
    this.logger.info('controller shut down');
  }
}

/** The listeners a controller node serves: those in controller.listener.names (all when it is empty). */
function controllerListeners(config: KafkaConfig) {
  const names = new Set(config.controllerListenerNames());
  return config.listeners().filter((l) => names.size === 0 || names.has(l.listenerName));
}
