/**
 * The log levels of one logger tree (one broker), by log4j logger name, with log4j's inheritance:
 * a logger without a level of its own takes the nearest ancestor's ("kafka.server.ReplicaManager"
 * -> "kafka.server" -> "kafka" -> "root"). This is what Kafka's BROKER_LOGGER config resource
 * (KIP-412: DescribeConfigs and IncrementalAlterConfigs) reads and changes at run time.
 *
 * Owns: the explicit levels, the set of logger names that exist (root, every name a Logger was
 * created with, KAFKA_LOGGER_NAMES and the parents Kafka's shipped log4j2.yaml declares) and a version bumped on every change, so that loggers cache
 * their effective level and `enabled()` stays one comparison.
 *
 * Invariants: root always has a level; a name exists once registered (Kafka's loggerExists);
 * levels are krill's five (error, warn, info, debug, trace).
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

export const ROOT_LOGGER = 'root';

export const LEVEL_ORDER: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

/**
 * krill's component loggers (the name given to Logger.child) and the log4j logger of the Kafka
 * class doing that job, so Kafka's logger names select them (kafka-configs --entity-type
 * broker-loggers). A child name containing a dot is taken as a log4j name itself.
 */
export const KAFKA_LOGGER_NAMES: Readonly<Record<string, string>> = {
  request: 'kafka.server.KafkaApis',
  network: 'kafka.network.SocketServer',
  storage: 'kafka.log.LogManager',
  cleaner: 'kafka.log.LogCleaner',
  'log-cleaner': 'kafka.log.LogCleaner',
  'replica-manager': 'kafka.server.ReplicaManager',
  'replica-fetcher': 'kafka.server.ReplicaFetcherThread',
  'alter-partition': 'kafka.server.DefaultAlterPartitionManager',
  'group-coordinator': 'org.apache.kafka.coordinator.group.GroupCoordinatorService',
  'transaction-coordinator': 'kafka.coordinator.transaction.TransactionCoordinator',
  markers: 'kafka.coordinator.transaction.TransactionMarkerChannelManager',
  'txn-verification': 'kafka.server.AddPartitionsToTxnManager',
  controller: 'org.apache.kafka.controller.QuorumController',
  'metadata-log': 'kafka.raft.KafkaMetadataLog',
  'metadata-fetcher': 'org.apache.kafka.image.loader.MetadataLoader',
  lifecycle: 'kafka.server.BrokerLifecycleManager',
  'controller-client': 'kafka.server.NodeToControllerChannelManagerImpl',
  authorizer: 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  sasl: 'org.apache.kafka.common.security.authenticator.SaslServerAuthenticator',
  ssl: 'org.apache.kafka.common.network.SslTransportLayer',
  metrics: 'krill.metrics.MetricsServer',
};

/** Loggers Kafka's shipped log4j2.yaml declares above the class loggers, so they exist to be set. */
export const KAFKA_PARENT_LOGGERS: readonly string[] = ['kafka', 'org.apache.kafka'];

/** Kafka's LogLevelConfig.VALID_LOG_LEVELS, and the krill level each one selects (FATAL: only errors). */
export const LOG4J_LEVELS: Readonly<Record<string, LogLevel>> = {
  FATAL: 'error',
  ERROR: 'error',
  WARN: 'warn',
  INFO: 'info',
  DEBUG: 'debug',
  TRACE: 'trace',
};

export class LogLevels {
  private readonly explicit = new Map<string, LogLevel>();
  private readonly names = new Set<string>([ROOT_LOGGER, ...KAFKA_PARENT_LOGGERS, ...Object.values(KAFKA_LOGGER_NAMES)]);
  private _version = 0;

  constructor(rootLevel: LogLevel) {
    this.explicit.set(ROOT_LOGGER, rootLevel);
  }

  /** Bumped by every change: loggers re-resolve their level when it moved. */
  get version(): number {
    return this._version;
  }

  register(name: string): void {
    this.names.add(name);
  }

  exists(name: string): boolean {
    return this.names.has(name);
  }

  /** The level `name` logs at: its own, else its nearest ancestor's, else root's. */
  effective(name: string): LogLevel {
    let n = name;
    while (true) {
      const l = this.explicit.get(n);
      if (l !== undefined) return l;
      const dot = n.lastIndexOf('.');
      if (dot < 0) return this.explicit.get(ROOT_LOGGER)!;
      n = n.slice(0, dot);
    }
  }

  set(name: string, level: LogLevel): void {
    this.names.add(name);
    this.explicit.set(name, level);
    this._version++;
  }

  /** Removes a logger's own level (it inherits again); root keeps its level. */
  unset(name: string): void {
    if (name === ROOT_LOGGER) return;
    if (this.explicit.delete(name)) this._version++;
  }

  /** Every existing logger with its effective level, root first, then by name (Log4jController.loggers). */
  all(): { name: string; level: LogLevel }[] {
    const rest = [...this.names].filter((n) => n !== ROOT_LOGGER).sort();
    return [ROOT_LOGGER, ...rest].map((name) => ({ name, level: this.effective(name) }));
  }
}
