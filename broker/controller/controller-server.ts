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
 * There is one controller, not a Raft quorum: if it stops, brokers keep serving with the metadata
 * they have, and nothing changes (no elections, no new topics) until it is back
 * (docs/replication.md). Its state is the metadata log, so a restart loses nothing committed.
 *
 * Startup: config -> metadata dir and cluster id (meta.properties) -> metadata log replay ->
 * (with krill.metrics.port: the metrics endpoints, /ready 200 once running) -> listener bound ->
 * session and rebalance timers. Shutdown reverses it.
 */
import * as fs from 'node:fs';
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
import { CONTROLLER_HANDLERS } from './handlers';
import type { ControllerNodeMetrics } from '../metrics/controller-node-metrics';
import { MetricsServer } from '../metrics/metrics-server';
import { Controller } from '../../metadata/controller/controller';
import type { KafkaRaftClient } from '../../metadata/raft/kafka-raft-client';
import { MetadataLogStore } from '../../metadata/metadata-log-store';
import type { MetadataLog } from '../../metadata/metadata-log';
import { ensureMetaProperties, readMetaProperties } from '../../storage/meta-properties';
import { nodeFs } from '../../storage/fs';
import { SaslGate } from '../security/sasl/authenticator';
import { scramMechanismDeps } from '../security/sasl/scram';
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
  /** Use this cluster id for a fresh metadata directory (default: a random one). */
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

  private constructor(
    readonly config: KafkaConfig,
    readonly clusterId: string,
    readonly metadataLog: MetadataLogStore,
    opts: ControllerServerOptions,
    logger: Logger,
    socketOptions: SocketServerOptions,
  ) {
    this.nodeId = config.nodeId;
    this.logger = logger;
    this.versionCaps = opts.versionCaps ?? new Map();
    const imbalanceMs = Number(config.getLong('leader.imbalance.check.interval.seconds')) * 1000;
    const scram = opts.scramCredentials ?? [];
    if (scram.length > 0 && metadataLog.logEndOffset > 0n) {
      logger.info(`the metadata log already has records: ${scram.length} --add-scram credential(s) not added (they are written on the first start only)`);
    }
    this.controller = new Controller({
      nodeId: this.nodeId,
      clusterId,
      log: metadataLog,
      logger: logger.child('controller'),
      bootstrapRecords: scram.length > 0 && metadataLog.logEndOffset === 0n ? scramCredentialRecords(scram) : undefined,
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
    });
    this.controller.subscribe(() => this.wakeWaiters(), false);
    // authorizer.class.name: the StandardAuthorizer follows the controller's image, which has
    // replayed the whole metadata log already, so its initial load is complete before the listener binds.
    const standard = opts.authorizer ? null : authorizerFromConfig(config, logger);
    standard?.follow(this.controller.image);
    standard?.completeInitialLoad();
    this.authorizer = opts.authorizer ?? standard ?? ALLOW_ALL;
    // SASL on the controller listener (broker/security/sasl/): SCRAM reads the controller's image.
    const sasl = SaslGate.forListeners(config, controllerListeners(config), { ...scramMechanismDeps(this.controller.image), logger: logger.child('sasl') });
    this.dispatcher = new RequestDispatcher<ControllerNode>(this, CONTROLLER_HANDLERS, logger.child('request'), undefined, sasl);
    this.socketServer = new SocketServer(this.dispatcher, socketOptions, logger.child('network'));
    // prom-client (~40 ms to load) is loaded only by a node that serves metrics.
    this.metrics = config.getIntOrNull('krill.metrics.port') === null ? null : new (loadControllerNodeMetrics())({
      image: this.controller.image,
      isActive: () => this.state === 'running',
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
    fs.mkdirSync(metadataDir, { recursive: true });
    const clusterId = readMetaProperties(nodeFs, metadataDir)?.clusterId ?? opts.clusterId ?? randomUuid();
    ensureMetaProperties(nodeFs, metadataDir, config.nodeId, clusterId);
    const logger = opts.logger ?? Logger.root(`krill-controller[${config.nodeId}]`, { level: opts.logLevel, format: opts.logFormat });
    const log = new MetadataLogStore(metadataDir, logger.child('metadata-log'));
    const socketOptions = await socketServerOptions(config, controllerListeners(config).map((l) => l.listenerName), null);
    const server = new ControllerServer(config, clusterId, log, opts, logger, socketOptions);
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

  async shutdown(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    for (const w of [...this.waiters]) w.wake();
    await this.socketServer.close();
    await this.controller.close();
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
