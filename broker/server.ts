/**
 * KafkaServer: one krill broker, either a combined node (`process.roles=broker,controller`: the
 * Controller and its metadata log run in this process) or a cluster broker (`process.roles=broker`
 * with `controller.quorum.voters` or `controller.quorum.bootstrap.servers`: a ClusterLink to one
 * remote controller or to a KRaft controller quorum's active controller, follower replication on). Owns startup and shutdown order and the wiring between the layers; everything
 * else lives in the components it creates. The CLI, the embedding API and startCluster all go
 * through `KafkaServer.start`.
 *
 * Startup: config -> log dirs and cluster id (meta.properties; a cluster broker takes the
 * controller's, learnt with DescribeCluster, and refuses directories of another cluster) -> the
 * metrics endpoints when krill.metrics.port is set (broker/metrics/: /live at once, /ready 200
 * only once running) -> metadata replay (the local metadata log, or a catch-up Fetch from the controller) -> partition
 * logs loaded and recovered (LogManager) -> coordinators started, partitions created from the
 * replayed metadata, stray logs removed -> listeners bound -> broker registered with its advertised
 * endpoints (a cluster broker also follows the metadata log, heartbeats and waits to be unfenced,
 * then starts the ISR checks) -> marker delivery -> ready. Shutdown reverses it: controlled
 * shutdown (cluster broker), stop replication and the controller link, stop accepting, answer
 * parked requests, close the local metadata log, then flush every log, write the checkpoints and
 * the clean-shutdown marker, and last close the metrics endpoints (/ready is 503 from the start of
 * the shutdown).
 *
 * Invariant: after the startup replay, every metadata batch is applied to the MetadataCache first
 * and its delta then goes to the replica manager and both coordinators, in log order. The
 * replication quotas (replicationQuotas) follow the same image: their bounds from every dynamic
 * config change of this broker or the cluster default, their throttled partitions from every topic
 * config change (and, after the replay, from every topic).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomUuid } from '../protocol/primitives/uuid';
import { ErrorCode } from '../protocol/errors';
import { crc32cImplementation } from '../protocol/records/crc32c';
import { checkQuorumSupport, isCombinedQuorumVoter } from './quorum-support';
import { ConfigException } from '../config/config-types';
import { KafkaConfig, LISTENER_RELOADABLE_SSL_CONFIGS, OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, type KafkaConfigInit } from '../config/kafka-config';
import { logConfigFrom, type EffectiveTopicConfig } from '../config/log-config-from';
import { topicConfigDef } from '../config/topic-config-def';
import { groupConfigBounds } from '../config/group-configs';
import { brokerListDefault, effectiveBrokerConfig } from '../config/dynamic-broker-config';
import { resolveAdvertisedEndpoints, type Endpoint } from '../config/listeners';
import { Logger, type LogFormat, type LogLevel } from '../common/logger';
import type { BrokerMetrics } from './metrics/broker-metrics';
import type { BrokerTopicStats } from './metrics/broker-topic-stats';
import { MetricsServer } from './metrics/metrics-server';
import { FetchSessionCache } from './fetch-session';
import { GroupCoordinator } from '../coordinator/group/group-coordinator';
import { groupCoordinatorConfig } from '../coordinator/group/group-coordinator-config';
import { internalTopicCreator } from '../coordinator/internal-topic';
import { ProducerIdManager } from '../coordinator/producer/producer-id-manager';
import { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator';
import { transactionCoordinatorConfig } from '../coordinator/transaction/transaction-coordinator-config';
import { NetworkMarkerTransport } from '../coordinator/transaction/network-marker-transport';
import { AddPartitionsToTxnManager } from '../coordinator/transaction/add-partitions-to-txn-manager';
import { RequestDispatcher } from './request-dispatcher';
import { KAFKA_VERSION_CONFIG, emulatedVersionRanges, type VersionRangeLimit } from './kafka-version';
import { HANDLERS, QUORUM_FORWARDING_HANDLERS } from './handlers';
import type { ControllerRequestChannel } from '../metadata/controller-channel';
import { SocketServer, type SocketServerOptions } from './network/socket-server';
import { socketServerOptions } from './network/socket-server-config';
import { controllerClientTls, interBrokerClientTls, serverSslSettings } from './security/ssl/ssl-settings';
import { SslTransport } from './security/ssl/ssl-transport';
import type { ClientSecurity } from '../client/network-client';
import { BrokerQuotas } from './quota/broker-quotas';
import { ClientMetricsManager } from './telemetry/client-metrics-manager';
import { ALLOW_ALL, type Authorizer } from '../metadata/authorizer/authorizer';
import { authorizerFromConfig, type StandardAuthorizer } from '../metadata/authorizer/standard-authorizer';
import { SystemTime } from '../common/time';
import type { AdvertisedEndpoint, Broker } from './broker';
import { MetadataCache, type MetadataDelta } from '../metadata/metadata-cache';
import type { MetadataRecord } from '../metadata/metadata-records';
import { Controller, type ControllerApi } from '../metadata/controller/controller';
import { ClusterLink, controllerEndpointsOf, discoverClusterId } from '../metadata/cluster-link';
import { MetadataLogStore } from '../metadata/metadata-log-store';
import { ReplicaManager, type ReplicationOptions } from '../replication/replica-manager';
import { ReplicationQuotaManager, parseThrottledPartitions } from '../replication/replication-quota-manager';
import { remoteAlterPartition } from '../replication/alter-partition-manager';
import { interBrokerEndpoint } from '../client/broker-channels';
import { LogManager } from '../storage/log-manager';
// Loaded only by a broker with remote.log.storage.system.enable (its plugins and engine are ~14 modules).
import type { BrokerTieredStorage } from './tiered-storage';
import { TimerScheduler } from '../common/scheduler';
import { cleanerConfig, type CleanerConfig } from '../storage/cleaner/cleaner-config';
import { readMetaProperties } from '../storage/meta-properties';
import { nodeFs } from '../storage/fs';
import type { StorageFs } from '../storage/fs';
import { topicPartitionKey } from '../common/topic-partition';
import { parseScramArgument, scramCredentialRecords } from './security/sasl/scram-parser';
import { SaslGate } from './security/sasl/authenticator';
import { controllerClientSasl, interBrokerClientSasl, type SaslMechanismDeps } from './security/sasl/registry';
import { scramMechanismDeps } from './security/sasl/scram';
import type { ScramCredentialStore } from './security/sasl/scram-server';

/**
 * What the SASL mechanisms need (registry.ts): SCRAM reads its credentials from the broker's metadata
 * image. Without `credentials` only the client side (krill's own connections) may be used.
 */
function brokerSaslDeps(logger: Logger, credentials?: ScramCredentialStore): SaslMechanismDeps {
  const scram = scramMechanismDeps(credentials ?? { scramCredential: () => undefined });
  return { ...scram, logger: logger.child('sasl') };
}

const SECURITY_PROTOCOL_IDS: Record<string, number> = { PLAINTEXT: 0, SSL: 1, SASL_PLAINTEXT: 2, SASL_SSL: 3 };

export interface KafkaServerOptions extends KafkaConfigInit {
  /** apiKey -> highest version to advertise. */
  versionCaps?: ReadonlyMap<number, number>;
  logLevel?: LogLevel;
  /** text (default) or json (pino-style lines); ignored when `logger` is given. */
  logFormat?: LogFormat;
  logger?: Logger;
  /** Called once the metrics endpoints (krill.metrics.port) are bound, before the logs load. */
  metricsListening?: (address: { host: string; port: number }) => void;
  /** The file system the partition logs use (fault injection: storage/testing/faulty-fs.ts). */
  storageFs?: StorageFs;
  /** Decides what each principal may do; overrides `authorizer.class.name` (tests inject scripted ones). */
  authorizer?: Authorizer;
  /**
   * SCRAM credentials in `kafka-storage format --add-scram` syntax ('SCRAM-SHA-256=[name=alice,password=s]'),
   * written to the metadata log when a combined node starts with an empty one (scram-parser.ts).
   */
  scramCredentials?: readonly string[];
}

/** broker/metrics/broker-metrics.ts, loaded on first use (it loads prom-client). */
function loadBrokerMetrics(): typeof BrokerMetrics {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./metrics/broker-metrics') as typeof import('./metrics/broker-metrics')).BrokerMetrics;
}

/** The cleaner settings a dynamic config change restarts the cleaner's loops for (LogCleaner.ReconfigurableConfigs). */
const CLEANER_RECONFIGURABLE = ['numThreads', 'dedupeBufferSize', 'dedupeBufferLoadFactor', 'ioBufferSize', 'maxMessageSize', 'maxIoBytesPerSecond', 'backoffMs'] as const;

/** Kafka's LogCleaner.cleanerConfig(KafkaConfig): the cleaner's settings in a broker config. */
function cleanerConfigOf(config: KafkaConfig): CleanerConfig {
  return cleanerConfig({
    numThreads: config.getInt('log.cleaner.threads'),
    dedupeBufferSize: config.getLong('log.cleaner.dedupe.buffer.size'),
    dedupeBufferLoadFactor: config.getDouble('log.cleaner.io.buffer.load.factor'),
    ioBufferSize: config.getInt('log.cleaner.io.buffer.size'),
    maxMessageSize: config.getInt('message.max.bytes'),
    maxIoBytesPerSecond: config.getDouble('log.cleaner.io.max.bytes.per.second'),
    backoffMs: config.getLong('log.cleaner.backoff.ms'),
    enableCleaner: config.getBoolean('log.cleaner.enable') && config.getInt('log.cleaner.threads') > 0,
  });
}

export class KafkaServer implements Broker {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly logger: Logger;
  readonly metadata: MetadataCache;
  readonly quotas: BrokerQuotas;
  /**
   * Replication throttles (Kafka's QuotaManagers.leader / .follower): bounds from the dynamic
   * leader/follower.replication.throttled.rate, throttled partitions from the topics'
   * leader/follower.replication.throttled.replicas, both kept current from the metadata image.
   */
  readonly replicationQuotas: { leader: ReplicationQuotaManager; follower: ReplicationQuotaManager };
  /**
   * Client telemetry (KIP-714). For the metrics work: `clientMetrics.lastPushes()` /
   * `lastPush(clientInstanceId)` give the last metrics each client instance pushed (decompressed
   * OTLP bytes and who sent them), `instanceCount` how many instances the broker knows.
   */
  readonly clientMetrics: ClientMetricsManager;
  readonly authorizer: Authorizer;
  /** The configured StandardAuthorizer (null without authorizer.class.name, or when one was injected). */
  private readonly standardAuthorizer: StandardAuthorizer | null;
  /** The controller: in this process (combined node) or remote (cluster broker). */
  readonly controller: ControllerApi;
  /** The in-process controller of a combined node; null for a cluster broker. */
  readonly localController: Controller | null;
  /** The link to a remote controller; null for a combined node. */
  readonly clusterLink: ClusterLink | null;

  /** The cluster link's controller channel when it follows a controller quorum (an observer), else null. */
  get controllerQuorumChannel(): ControllerRequestChannel | null {
    return this.clusterLink?.observer ? this.clusterLink.controlChannel : null;
  }
  /** A combined quorum voter's own controller (a ControllerServer in this process); null otherwise. */
  private embeddedController: EmbeddedController | null = null;
  readonly replicaManager: ReplicaManager;
  readonly logManager: LogManager;
  /** Tiered storage, when remote.log.storage.system.enable is on (its plugins load in startup()). */
  readonly tieredStorage: BrokerTieredStorage | null;
  readonly fetchSessions: FetchSessionCache;
  readonly groupCoordinator: GroupCoordinator;
  readonly transactionCoordinator: TransactionCoordinator;
  readonly producerIdManager: ProducerIdManager;
  /** Asks transaction coordinators whether a transactional batch's partition is in its transaction (KIP-890). */
  private readonly transactionVerifier: AddPartitionsToTxnManager;
  readonly versionCaps: ReadonlyMap<number, number>;
  /** krill.kafka.version: the emulated release's ranges that krill implements (null: krill's own). */
  readonly emulatedVersions: ReadonlyMap<number, VersionRangeLimit> | null;
  readonly dispatcher: RequestDispatcher;
  private readonly socketServer: SocketServer;
  /** Metrics and their HTTP endpoints (docs/operations.md); null unless krill.metrics.port is set. */
  readonly metrics: BrokerMetrics | null;
  private readonly metricsServer: MetricsServer | null;
  private readonly metricsListening?: (address: { host: string; port: number }) => void;
  private advertised: AdvertisedEndpoint[] = [];
  private readonly topicConfigs = new Map<string, EffectiveTopicConfig>();
  private defaultTopicConfig: EffectiveTopicConfig;
  private state: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';

  /** The config in force: `staticConfig` under the dynamic broker configs of the metadata image. */
  private currentConfig: KafkaConfig;

  private constructor(
    readonly staticConfig: KafkaConfig,
    opts: KafkaServerOptions,
    clusterId: string,
    metadataLog: MetadataLogStore | null,
    socketOptions: SocketServerOptions,
    /** How this broker's own connections are secured: to other brokers (inter-broker listener) and to the controller. */
    private readonly clientSecurity: { interBroker: ClientSecurity; controller: ClientSecurity },
  ) {
    const config = staticConfig;
    this.currentConfig = staticConfig;
    this.nodeId = config.nodeId;
    this.clusterId = clusterId;
    this.logger = opts.logger ?? new Logger(`krill[${this.nodeId}]`, opts.logLevel);
    this.versionCaps = opts.versionCaps ?? new Map();
    this.metadata = new MetadataCache(clusterId);
    // authorizer.class.name: the StandardAuthorizer follows this broker's metadata image from the start.
    this.standardAuthorizer = opts.authorizer ? null : authorizerFromConfig(config, this.logger);
    this.standardAuthorizer?.follow(this.metadata);
    this.authorizer = opts.authorizer ?? this.standardAuthorizer ?? ALLOW_ALL;
    this.quotas = new BrokerQuotas(this.metadata, config, SystemTime);
    const replicationWindow = { windowMs: config.getInt('replication.quota.window.size.seconds') * 1000, samples: config.getInt('replication.quota.window.num') };
    this.replicationQuotas = {
      leader: new ReplicationQuotaManager('LeaderReplication', replicationWindow),
      follower: new ReplicationQuotaManager('FollowerReplication', replicationWindow),
    };
    this.updateReplicationQuotaBounds(config);
    this.clientMetrics = new ClientMetricsManager({
      source: this.metadata,
      telemetryMaxBytes: config.getInt('telemetry.max.bytes'),
      time: SystemTime,
      logger: this.logger.child('client-metrics'),
    });
    this.defaultTopicConfig = logConfigFrom(config);
    const controllerEndpoints = controllerEndpointsOf(config);
    this.clusterLink = controllerEndpoints
      ? new ClusterLink({
          endpoints: controllerEndpoints,
          nodeId: this.nodeId,
          clusterId,
          config,
          logger: this.logger,
          lastAppliedOffset: () => this.metadata.lastAppliedOffset,
          applyMetadata: (batches) => this.applyMetadataBatches(batches),
          metadataImage: () => this.metadata,
          listeners: () => this.registrationListeners(),
          security: clientSecurity.controller,
        })
      : null;
    const scram = opts.scramCredentials ?? [];
    if (metadataLog !== null && scram.length > 0 && metadataLog.logEndOffset > 0n) {
      this.logger.info(`the metadata log already has records: ${scram.length} --add-scram credential(s) not added (they are written on the first start only)`);
    }
    this.localController = metadataLog === null ? null : new Controller({
      nodeId: this.nodeId,
      clusterId,
      log: metadataLog,
      logger: this.logger.child('controller'),
      // Salted (PBKDF2) only for a fresh log, where they are written.
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
      // A combined node's own static value: the fallback after the topic's, this node's dynamic and
      // the cluster default's values (Controller.uncleanLeaderElectionEnabled).
      staticUncleanLeaderElection: () => this.staticConfig.getBoolean('unclean.leader.election.enable'),
    });
    this.controller = this.clusterLink?.remoteController ?? this.localController!;
    this.logManager = new LogManager({
      fs: opts.storageFs,
      logDirs: config.logDirs(),
      nodeId: this.nodeId,
      clusterId,
      defaultConfig: this.defaultTopicConfig.logConfig,
      topicConfig: (topic) => (this.metadata.topic(topic) ? this.topicConfig(topic).logConfig : undefined),
      logger: this.logger.child('storage'),
      retentionCheckIntervalMs: config.getLong('log.retention.check.interval.ms'),
      flushCheckIntervalMs: config.getLong('log.flush.scheduler.interval.ms'),
      flushRecoveryOffsetCheckpointIntervalMs: config.getInt('log.flush.offset.checkpoint.interval.ms'),
      flushStartOffsetCheckpointIntervalMs: config.getInt('log.flush.start.offset.checkpoint.interval.ms'),
      highWatermarkCheckpointIntervalMs: config.getLong('replica.high.watermark.checkpoint.interval.ms'),
      producerIdExpirationMs: config.getInt('producer.id.expiration.ms'),
      producerIdExpirationCheckIntervalMs: config.getInt('producer.id.expiration.check.interval.ms'),
      recoveryThreadsPerDataDir: config.getInt('num.recovery.threads.per.data.dir'),
      cleaner: cleanerConfigOf(config),
      remoteStorageSystemEnable: config.getBoolean('remote.log.storage.system.enable'),
    });
    this.tieredStorage = config.getBoolean('remote.log.storage.system.enable')
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports
        new (require('./tiered-storage') as typeof import('./tiered-storage')).BrokerTieredStorage({
          nodeId: this.nodeId,
          clusterId,
          config,
          metadata: this.metadata,
          controller: this.controller,
          security: clientSecurity.interBroker,
          fetchLog: (tp) => this.replicaManager.getPartition(tp.topic, tp.partition)?.log,
          time: SystemTime,
          scheduler: new TimerScheduler((name, err) => this.logger.error(`tiered storage task ${name} failed`, { err })),
          logger: this.logger.child('tiered-storage'),
        })
      : null;
    const txnConfig = transactionCoordinatorConfig(config);
    this.transactionVerifier = new AddPartitionsToTxnManager({
      nodeId: this.nodeId,
      metadata: this.metadata,
      listenerName: config.interBrokerListenerName(),
      requestTimeoutMs: txnConfig.requestTimeoutMs,
      transactionLogNumPartitions: txnConfig.transactionLogNumPartitions,
      logger: this.logger.child('txn-verification'),
      security: clientSecurity.interBroker,
    });
    this.replicaManager = new ReplicaManager({
      brokerId: this.nodeId,
      transactionVerificationEnabled: () => this.config.getBoolean('transaction.partition.verification.enable'),
      transactionVerifier: this.transactionVerifier,
      logManager: this.logManager,
      metadata: this.metadata,
      logger: this.logger.child('replica-manager'),
      logConfig: (topic) => this.topicConfig(topic).logConfig,
      minInsyncReplicas: (topic) => this.topicConfig(topic).logConfig.minInSyncReplicas,
      replication: this.clusterLink ? this.replicationOptions(this.clusterLink) : undefined,
      replicationQuotas: this.replicationQuotas,
      alterLogDirsThreads: config.getIntOrNull('num.replica.alter.log.dirs.threads') ?? undefined,
      replicaFetchMaxBytes: config.getInt('replica.fetch.max.bytes'),
      remoteLogManager: this.tieredStorage ?? undefined,
      remoteFetchMaxWaitMs: () => this.config.getInt('remote.fetch.max.wait.ms'),
    });
    this.fetchSessions = new FetchSessionCache(config.getInt('max.incremental.fetch.session.cache.slots'));
    this.groupCoordinator = new GroupCoordinator({
      nodeId: this.nodeId,
      config: groupCoordinatorConfig(config),
      logger: this.logger.child('group-coordinator'),
      replicaManager: this.replicaManager,
      metadata: this.metadata,
      createOffsetsTopic: internalTopicCreator(this.controller, config, this.metadata, OFFSETS_TOPIC),
      transactionVerifier: this.transactionVerifier,
      // Dynamic GROUP configs, as every broker applies them from the metadata log.
      groupConfig: (groupId) => this.metadata.groupConfig(groupId),
    });
    this.producerIdManager = new ProducerIdManager(this.controller, this.nodeId, () => this.metadata.broker(this.nodeId)?.epoch ?? -1n);
    this.transactionCoordinator = new TransactionCoordinator({
      nodeId: this.nodeId,
      config: txnConfig,
      logger: this.logger.child('transaction-coordinator'),
      replicaManager: this.replicaManager,
      metadata: this.metadata,
      producerIds: this.producerIdManager,
      markerTransport: new NetworkMarkerTransport({
        nodeId: this.nodeId,
        metadata: this.metadata,
        listenerName: config.interBrokerListenerName(),
        requestTimeoutMs: txnConfig.requestTimeoutMs,
        security: clientSecurity.interBroker,
      }),
      createTransactionTopic: internalTopicCreator(this.controller, config, this.metadata, TRANSACTION_STATE_TOPIC),
    });
    // SASL listeners (broker/security/sasl/): validated here, so one krill cannot serve stops startup.
    const sasl = SaslGate.forListeners(config, config.dataPlaneListeners(), brokerSaslDeps(this.logger, this.metadata));
    // DescribeQuorum / AddRaftVoter / RemoveRaftVoter work end to end only through a controller quorum's active controller.
    const handlers = this.controllerQuorumChannel ? [...HANDLERS, ...QUORUM_FORWARDING_HANDLERS] : HANDLERS;
    this.dispatcher = new RequestDispatcher<Broker>(this, handlers, this.logger.child('request'), this.quotas.request, sasl);
    const kafkaVersion = config.getString(KAFKA_VERSION_CONFIG);
    this.emulatedVersions = kafkaVersion === null ? null : emulatedVersionRanges(kafkaVersion, this.dispatcher.implementedVersions());
    if (kafkaVersion !== null) this.logger.info(`advertising the API versions of Apache Kafka ${kafkaVersion} that krill implements (${this.emulatedVersions!.size} APIs)`);
    this.socketServer = new SocketServer(
      this.dispatcher,
      { ...socketOptions, quotas: { ...socketOptions.quotas, ipConnectionRate: (address) => this.quotas.ipConnectionRate(address) } },
      this.logger.child('network'),
    );
    const metricsPort = config.getIntOrNull('krill.metrics.port');
    // prom-client (~40 ms to load) is loaded only by a broker that serves metrics.
    this.metrics = metricsPort === null ? null : new (loadBrokerMetrics())({
      replicaManager: this.replicaManager,
      logManager: this.logManager,
      metadata: this.metadata,
      groupCoordinator: this.groupCoordinator,
      transactionCoordinator: this.transactionCoordinator,
      quotas: this.quotas,
      replicationQuotas: this.replicationQuotas,
      minInsyncReplicas: (topic) => this.topicConfig(topic).logConfig.minInSyncReplicas,
      controllerActive: this.localController ? () => this.state === 'running' : null,
      requestQueueSize: () => this.socketServer.slots.used,
      listenerNames: () => config.dataPlaneListeners().map((l) => l.listenerName),
      connectionCounts: () => this.socketServer.connectionCountByListener(),
      brokerState: () => this.brokerState,
      clientMetricsInstances: () => this.clientMetrics.instanceCount,
      remoteLogManager: () => this.tieredStorage?.remoteLogManager ?? null,
    });
    const requests = this.metrics?.requests;
    if (requests) this.dispatcher.requestObserver = (name, version, ms, fromFollower) => requests.record(name, version, ms, fromFollower);
    this.metricsServer = this.metrics ? new MetricsServer({ scrape: () => this.metrics!.scrape(), isReady: () => this.state === 'running' }, this.logger.child('metrics')) : null;
    this.metricsListening = opts.metricsListening;
  }

  /** BrokerTopicMetrics counts, kept only while metrics are on. */
  get topicStats(): BrokerTopicStats | null {
    return this.metrics?.topicStats ?? null;
  }

  /** Where /metrics, /ready and /live are served (null without krill.metrics.port). */
  get metricsAddress(): { host: string; port: number } | null {
    return this.metricsServer?.address ?? null;
  }

  static async start(opts: KafkaServerOptions = {}): Promise<KafkaServer> {
    const config = KafkaConfig.load(opts);
    if (checkQuorumSupport(config) === 'controller') {
      throw new ConfigException(
        'process.roles=controller describes a controller node, not a broker: start it with `krill --config FILE` (which runs a controller for such a file) or `krill --process-roles controller`',
        'process.roles',
      );
    }
    for (const a of opts.scramCredentials ?? []) parseScramArgument(a); // a bad argument fails before anything is touched
    const logDirs = config.logDirs();
    for (const d of logDirs) {
      try {
        fs.mkdirSync(d, { recursive: true });
      } catch {
        // An unusable log dir goes offline in the log manager; the others still serve.
      }
    }
    const metadataDir = config.metadataLogDir();
    fs.mkdirSync(metadataDir, { recursive: true });
    let clusterId: string | undefined;
    for (const d of [metadataDir, ...logDirs]) {
      try {
        clusterId ??= readMetaProperties(nodeFs, d)?.clusterId;
      } catch {
        // An unreadable meta.properties is reported by the log manager for that directory.
      }
    }
    // Each broker has its own log levels (BROKER_LOGGER), also when several share one logger.
    const logger = opts.logger ? opts.logger.withOwnLevels() : Logger.root(`krill[${config.nodeId}]`, { level: opts.logLevel, format: opts.logFormat });
    // TLS of this broker's own connections, from the ssl.* settings of the listeners they reach
    // (stores loaded now: a bad one stops startup before anything connects).
    // SASL credentials of the same connections, from the JAAS entries of the listeners they reach
    // (sasl.mechanism.inter.broker.protocol / sasl.mechanism.controller.protocol).
    const saslDeps = brokerSaslDeps(logger);
    const clientSecurity = {
      interBroker: { tls: interBrokerClientTls(config), sasl: interBrokerClientSasl(config, saslDeps) },
      controller: { tls: controllerClientTls(config), sasl: controllerClientSasl(config, saslDeps) },
    };
    // A combined node among several voters: its controller (one voter of the KRaft quorum, on the
    // controller listener) runs in this process as a ControllerServer, and the broker follows the
    // quorum's active controller like any cluster broker.
    const embeddedController = isCombinedQuorumVoter(config) ? await startEmbeddedController(config, opts, logger, clusterId) : null;
    const controllerEndpoints = controllerEndpointsOf(config);
    try {
      if (controllerEndpoints) {
        // A cluster broker belongs to its controllers' cluster; a directory of another one is refused.
        const theirs = await discoverClusterId(
          controllerEndpoints,
          config.nodeId,
          config,
          config.getInt('initial.broker.registration.timeout.ms'),
          logger,
          clientSecurity.controller,
        );
        if (clusterId !== undefined && clusterId !== theirs) {
          throw new Error(`INCONSISTENT_CLUSTER_ID: the log directories belong to cluster ${clusterId}, the controller to ${theirs}`);
        }
        clusterId = theirs;
      }
      clusterId ??= randomUuid();
      for (const k of config.unknownKeys()) logger.warn(`unknown configuration '${k}' was supplied; it is kept but not used`);
      const metadataLog = controllerEndpoints ? null : new MetadataLogStore(metadataDir, logger.child('metadata-log'));
      if (controllerEndpoints && !embeddedController && (opts.scramCredentials?.length ?? 0) > 0) {
        logger.warn('--add-scram credentials are ignored on a broker of a cluster: they are bootstrapped on its controller');
      }
      const socketOptions = await socketServerOptions(
        config,
        config.dataPlaneListeners().map((l) => l.listenerName),
        config.interBrokerListenerName(),
      );
      const server = new KafkaServer(config, { ...opts, logger }, clusterId, metadataLog, socketOptions, clientSecurity);
      server.embeddedController = embeddedController;
      try {
        await server.startup();
      } catch (err) {
        await server.shutdown().catch(() => undefined);
        throw err;
      }
      return server;
    } catch (err) {
      await embeddedController?.shutdown().catch(() => undefined);
      throw err;
    }
  }

  private async startup(): Promise<void> {
    const t0 = Date.now();
    if (this.metricsServer) {
      // First, so that probes see /live and a 503 from /ready while the logs load.
      const address = await this.metricsServer.listen(this.config.getString('krill.metrics.host') ?? '', this.config.getInt('krill.metrics.port'));
      this.metricsListening?.(address);
    }
    this.logger.info(`starting krill node ${this.nodeId} (cluster ${this.clusterId}); CRC32C: ${crc32cImplementation}`);
    if (crc32cImplementation !== 'native') {
      this.logger.warn('fast-crc32c is using its JavaScript fallback: record batch checks will be ~20x slower');
    }
    // Replay the metadata log into this broker's view; partitions are created after the logs load.
    this.replayingMetadata = true;
    if (this.localController) {
      this.localController.subscribe((records, lastOffset) => this.applyMetadataBatches([{ records, lastOffset }]));
    } else {
      await this.clusterLink!.startMetadata();
    }
    // The ACLs of the whole replayed log are in: every principal can be authorized now (Kafka's
    // AclPublisher completes the initial load once the metadata has caught up).
    this.standardAuthorizer?.completeInitialLoad();
    this.loadingLogs = true;
    // Dynamic broker configs from the replayed log apply before the logs load with their configs.
    if (this.metadata.brokerConfig('').size > 0 || this.metadata.brokerConfig(String(this.nodeId)).size > 0) this.applyDynamicConfig();
    await this.logManager.startup();
    // Tiered storage's plugins load before any partition exists, so leadership reaches a running manager.
    await this.tieredStorage?.start();
    this.loadingLogs = false;
    this.replayingMetadata = false;
    for (const t of this.metadata.topics()) this.updateThrottledReplicas(t.name);
    this.groupCoordinator.startup();
    this.transactionCoordinator.startup();
    this.createPartitionsFromMetadata();

    const listeners = this.config.dataPlaneListeners();
    const bound = await this.socketServer.listen(
      listeners.map((l) => ({ name: l.listenerName, host: l.host ?? '', port: l.port, securityProtocol: l.securityProtocol })),
    );
    const boundPort = (name: string): number | undefined => bound.find((b) => b.name === name)?.boundPort;
    const advertised: Endpoint[] = resolveAdvertisedEndpoints(this.config.advertisedListeners(), boundPort, os.hostname());
    this.advertised = advertised.map((e) => ({
      listenerName: e.listenerName,
      host: e.host ?? os.hostname(),
      port: e.port,
      securityProtocol: e.securityProtocol,
    }));
    if (this.localController) {
      await this.localController.registerBroker({
        brokerId: this.nodeId,
        incarnationId: randomUuid(),
        endpoints: this.registrationListeners(),
        rack: this.config.getString('broker.rack'),
        logDirs: [],
      });
    } else {
      this.clusterLink!.followMetadata();
      await this.clusterLink!.join();
      this.replicaManager.startup();
    }
    // Markers (also those this broker sends itself) can be delivered now that it listens.
    this.transactionCoordinator.startMarkerDelivery();
    this.state = 'running';
    this.logger.info(`started in ${Date.now() - t0} ms`, {
      listeners: this.advertised.map((e) => `${e.listenerName}://${e.host}:${e.port}`),
      logDirs: this.config.logDirs(),
    });
  }

  private replayingMetadata = false;
  private loadingLogs = false;
  private inControlledShutdown = false;

  /**
   * Kafka's BrokerState byte (kafka.server:type=KafkaServer,name=BrokerState): STARTING 1, RECOVERY 2
   * while the logs load, RUNNING 3, PENDING_CONTROLLED_SHUTDOWN 6, SHUTTING_DOWN 7, NOT_RUNNING 0.
   */
  get brokerState(): number {
    switch (this.state) {
      case 'starting':
        return this.loadingLogs ? 2 : 1;
      case 'running':
        return 3;
      case 'stopping':
        return this.inControlledShutdown ? 6 : 7;
      default:
        return 0;
    }
  }

  /** Follower fetching and ISR management of a cluster broker (Kafka's replica.* settings). */
  private replicationOptions(link: ClusterLink): ReplicationOptions {
    const c = this.config;
    const interBroker = c.interBrokerListenerName();
    return {
      brokerEpoch: () => link.brokerEpoch,
      replicaLagTimeMaxMs: () => c.getLong('replica.lag.time.max.ms'),
      fetcher: {
        maxWaitMs: c.getInt('replica.fetch.wait.max.ms'),
        minBytes: c.getInt('replica.fetch.min.bytes'),
        responseMaxBytes: c.getInt('replica.fetch.response.max.bytes'),
        partitionMaxBytes: c.getInt('replica.fetch.max.bytes'),
        backoffMs: c.getInt('replica.fetch.backoff.ms'),
        socketTimeoutMs: c.getInt('replica.socket.timeout.ms'),
        security: this.clientSecurity.interBroker,
      },
      alterPartition: remoteAlterPartition(link.controlChannel),
      endpointOf: (brokerId) => interBrokerEndpoint(this.metadata, brokerId, interBroker),
      onIsrChangeProposed: (topic, partition, kind, isr) => this.isrChangeListeners.forEach((l) => l(topic, partition, kind, isr)),
      onIsrChangeCommitted: (kind) => this.metrics?.isrChanges.record(kind),
      onFollowerAppend: (bytes) => {
        if (this.metrics) this.metrics.topicStats.replicationBytesIn += bytes;
      },
    };
  }

  /** Test and metrics hook: every ISR change a leader on this broker proposes. */
  readonly isrChangeListeners: ((topic: string, partition: number, kind: 'expand' | 'shrink', isr: number[]) => void)[] = [];

  /** Applies metadata batches in log order; after the startup replay each delta goes to the components. */
  private applyMetadataBatches(batches: { records: MetadataRecord[]; lastOffset: bigint }[]): void {
    for (const b of batches) {
      const delta = this.metadata.apply(b.records, b.lastOffset);
      if (!this.replayingMetadata && this.state !== 'stopped') this.onMetadataDelta(delta);
    }
  }

  /** This broker's endpoints as BrokerRegistration / RegisterBrokerRecord carry them. */
  private registrationListeners(): { name: string; host: string; port: number; securityProtocol: number }[] {
    return this.advertised.map((e) => ({
      name: e.listenerName,
      host: e.host,
      port: e.port,
      securityProtocol: SECURITY_PROTOCOL_IDS[e.securityProtocol] ?? 0,
    }));
  }

  /** After the metadata replay: a partition for every replica this node hosts, and stray logs removed. */
  private createPartitionsFromMetadata(): void {
    const changedPartitions = [];
    for (const t of this.metadata.topics()) changedPartitions.push(...t.partitions.values());
    const known = new Set(changedPartitions.map((p) => topicPartitionKey(p.topic, p.partition)));
    for (const log of this.logManager.allLogs()) {
      const { topic, partition } = log.topicPartition;
      const state = this.metadata.partition(topic, partition);
      if (!known.has(topicPartitionKey(topic, partition)) || (log.topicId && state && log.topicId !== state.topicId)) {
        this.logger.warn(`removing stray log ${topic}-${partition}: not in the cluster metadata`);
        this.logManager.deleteLog(topic, partition);
      }
    }
    const delta = { changedPartitions, removedTopics: [], changedTopicConfigs: new Set<string>(), changedBrokers: new Set<number>() };
    this.replicaManager.applyDelta(delta, { existingPartitions: true });
    this.groupCoordinator.onMetadataDelta(delta); // loads the __consumer_offsets partitions led here
    this.transactionCoordinator.onMetadataDelta(delta); // and the __transaction_state ones
  }

  /** The config in force (KIP-226: static config under the dynamic broker configs). */
  get config(): KafkaConfig {
    return this.currentConfig;
  }

  /**
   * Rebuilds the config in force from the image's dynamic broker configs (this broker's id and the
   * cluster default) and hands the settings read at run time to their components: topic defaults
   * (every topic's effective LogConfig, as Kafka's DynamicLogConfig.updateLogsConfig), the
   * connection limits (max.connections, max.connections.per.ip) and the SSL listeners' key and
   * trust stores (listener.name.<l>.ssl.*: new TLS contexts for new connections). Called after the startup replay
   * and for every delta that changes a BROKER config resource.
   */
  private applyDynamicConfig(): void {
    const next = effectiveBrokerConfig(
      this.staticConfig,
      this.metadata.brokerConfig(String(this.nodeId)),
      this.metadata.brokerConfig(''),
      this.logger.child('dynamic-config'),
    );
    if (next === this.currentConfig) return;
    const previous = this.currentConfig;
    this.currentConfig = next;
    this.topicConfigs.clear();
    this.defaultTopicConfig = logConfigFrom(next);
    this.logManager.updateDefaultConfig(this.defaultTopicConfig.logConfig);
    for (const t of this.metadata.topics()) this.logManager.updateTopicConfig(t.name, this.topicConfig(t.name).logConfig);
    this.socketServer.updateConnectionLimits({ maxConnections: next.getInt('max.connections'), maxConnectionsPerIp: next.getInt('max.connections.per.ip') });
    const cleaner = cleanerConfigOf(next);
    const before = cleanerConfigOf(previous);
    if (CLEANER_RECONFIGURABLE.some((k) => cleaner[k] !== before[k])) {
      // log.cleaner.enable is read-only: whether a cleaner runs stays what startup decided.
      this.logManager.reconfigureCleaner({ ...cleaner, enableCleaner: before.enableCleaner }).catch((err) => this.logger.error('reconfiguring the log cleaner failed', { err }));
    }
    this.reloadListenerStores(previous, next);
    this.updateReplicationQuotaBounds(next);
    this.tieredStorage?.reconfigure(next);
    this.logger.info('applied dynamic broker configs', {
      perBroker: [...this.metadata.brokerConfig(String(this.nodeId)).keys()],
      clusterDefault: [...this.metadata.brokerConfig('').keys()],
    });
  }

  /** SSL / SASL_SSL listeners whose listener.name.<l>.ssl.* stores changed get new TLS contexts (new connections). */
  private reloadListenerStores(previous: KafkaConfig, next: KafkaConfig): void {
    for (const l of next.dataPlaneListeners()) {
      if (l.securityProtocol !== 'SSL' && l.securityProtocol !== 'SASL_SSL') continue;
      const changed = [...LISTENER_RELOADABLE_SSL_CONFIGS].some((k) => previous.listenerOverride(l.listenerName, k) !== next.listenerOverride(l.listenerName, k));
      const transport = this.socketServer.transportOf(l.listenerName);
      if (!changed || !(transport instanceof SslTransport)) continue;
      try {
        transport.reload(serverSslSettings(next, l.listenerName, l.securityProtocol));
      } catch (err) {
        this.logger.error(`cannot reload the TLS stores of listener ${l.listenerName}; it keeps the previous ones`, { err });
      }
    }
  }

  /** leader/follower.replication.throttled.rate (dynamic only; Long.MAX_VALUE: no bound) into the quota managers. */
  private updateReplicationQuotaBounds(config: KafkaConfig): void {
    this.replicationQuotas.leader.updateQuota(config.getLongBound('leader.replication.throttled.rate'));
    this.replicationQuotas.follower.updateQuota(config.getLongBound('follower.replication.throttled.rate'));
  }

  /** A topic's throttled-replicas configs into the quota managers (Kafka's TopicConfigHandler): the entries naming this broker, or `*`. */
  private updateThrottledReplicas(topic: string): void {
    if (!this.metadata.topic(topic)) {
      this.replicationQuotas.leader.removeThrottle(topic);
      this.replicationQuotas.follower.removeThrottle(topic);
      return;
    }
    const c = this.topicConfig(topic).logConfig;
    for (const [quota, entries] of [
      [this.replicationQuotas.leader, c.leaderReplicationThrottledReplicas],
      [this.replicationQuotas.follower, c.followerReplicationThrottledReplicas],
    ] as const) {
      const partitions = parseThrottledPartitions(entries, this.nodeId);
      if (partitions === null) quota.removeThrottle(topic);
      else quota.markThrottled(topic, partitions);
    }
  }

  private onMetadataDelta(delta: MetadataDelta): void {
    if (delta.changedBrokerConfigs?.has('') || delta.changedBrokerConfigs?.has(String(this.nodeId))) this.applyDynamicConfig();
    for (const t of delta.changedTopicConfigs) {
      this.topicConfigs.delete(t);
      this.updateThrottledReplicas(t);
    }
    for (const t of delta.removedTopics) {
      this.replicationQuotas.leader.removeThrottle(t.name);
      this.replicationQuotas.follower.removeThrottle(t.name);
      this.topicConfigs.delete(t.name);
      this.fetchSessions.forgetTopic(t.name);
      this.metrics?.onTopicDeleted(t.name);
    }
    this.replicaManager.applyDelta(delta);
    this.groupCoordinator.onMetadataDelta(delta);
    this.transactionCoordinator.onMetadataDelta(delta);
  }

  topicConfig(topic: string): EffectiveTopicConfig {
    let c = this.topicConfigs.get(topic);
    if (!c) {
      c = logConfigFrom(this.config, this.metadata.topicConfig(topic));
      this.topicConfigs.set(topic, c);
    }
    return c;
  }

  topicConfigWith(overrides: ReadonlyMap<string, string>): EffectiveTopicConfig {
    return logConfigFrom(this.config, overrides);
  }

  advertisedEndpoint(listenerName: string): AdvertisedEndpoint | undefined {
    return this.advertised.find((e) => e.listenerName === listenerName);
  }

  get advertisedEndpoints(): readonly AdvertisedEndpoint[] {
    return this.advertised;
  }

  apiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return this.dispatcher.advertisedVersions();
  }

  get dispatcherInterceptors() {
    return this.dispatcher.interceptors;
  }

  async autoCreateTopics(names: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (names.length === 0) return out;
    const results = await this.controller.createTopics(
      names.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })),
      false,
    );
    for (const r of results) {
      // Another request may have created it in the meantime: that is success for the caller.
      out.set(r.name, r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? ErrorCode.NONE : r.errorCode);
      if (r.errorCode === ErrorCode.NONE) this.logger.info(`auto-created topic ${r.name}`, { partitions: r.numPartitions });
    }
    return out;
  }

  /** The controller of a combined node among several voters (its voter of the KRaft quorum); null otherwise. */
  get quorumController(): EmbeddedController | null {
    return this.embeddedController;
  }

  get isRunning(): boolean {
    return this.state === 'running';
  }

  /**
   * Clean shutdown. `controlled: false` skips the controlled shutdown of a cluster broker (the
   * controller notices only when the session expires: an in-process stand-in for a crash).
   */
  async shutdown(opts: { controlled?: boolean } = {}): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.logger.info('shutting down');
    if (this.clusterLink && wasRunning && opts.controlled !== false && this.config.getBoolean('controlled.shutdown.enable')) {
      // Leaderships move to other replicas while this broker still serves (followers, clients).
      this.inControlledShutdown = true;
      const done = await this.clusterLink.controlledShutdown();
      this.inControlledShutdown = false;
      if (!done) this.logger.warn('controlled shutdown did not complete in time; shutting down anyway');
    }
    await this.replicaManager.stopReplication();
    await this.clusterLink?.stop();
    await this.socketServer.close();
    this.clientMetrics.close();
    this.transactionVerifier.close();
    await this.transactionCoordinator.shutdown();
    await this.groupCoordinator.shutdown();
    await this.tieredStorage?.close();
    this.replicaManager.shutdown();
    await this.localController?.close();
    await this.logManager.close();
    // A combined quorum voter's controller last (gracefully: a leader resigns; as a crash with controlled: false).
    await this.embeddedController?.shutdown({ graceful: opts.controlled !== false });
    this.state = 'stopped';
    await this.metricsServer?.close();
    this.logger.info('shut down cleanly');
  }
}

type EmbeddedController = import('./controller/controller-server').ControllerServer;

/**
 * The controller half of a combined node among several voters: a ControllerServer over the same
 * config as a controller (process.roles=controller; its controller listener, metadata directory
 * and cluster id; the broker's metrics endpoints are the broker's alone), loaded only for such a
 * node. Its directory must be formatted like any quorum controller's.
 */
async function startEmbeddedController(config: KafkaConfig, opts: KafkaServerOptions, logger: Logger, clusterId: string | undefined): Promise<EmbeddedController> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ControllerServer } = require('./controller/controller-server') as typeof import('./controller/controller-server');
  const props: Record<string, string> = Object.fromEntries(config.originals());
  delete props['krill.metrics.port'];
  delete props['krill.metrics.host'];
  props['process.roles'] = 'controller';
  return ControllerServer.start({ props, clusterId, versionCaps: opts.versionCaps, logger: logger.child('controller'), scramCredentials: opts.scramCredentials });
}
