/**
 * A broker's tiered storage (KIP-405), assembled from its configs as Kafka's BrokerServer does:
 * the RemoteStorageManager named by `remote.log.storage.manager.class.name` (with its
 * `rsm.config.*` properties), the RemoteLogMetadataManager named by
 * `remote.log.metadata.manager.class.name` (Kafka's TopicBasedRemoteLogMetadataManager by default,
 * over `__remote_log_metadata`; or a JS module), the RemoteIndexCache in the first log dir, and
 * the RemoteLogManager that drives them.
 *
 * Owns: those four objects' lifecycle. The replica manager and its fetchers hold this object
 * from the broker's construction on, before the plugins exist (creating them is asynchronous: a
 * module may be imported, a store contacted); `start()` creates and configures them, and
 * leadership changes that arrive before (none do in krill's start-up order: partitions are
 * created after start) are kept and replayed.
 *
 * The topic-based metadata manager is configured (which creates `__remote_log_metadata` if needed)
 * at the first leadership change of a tiered partition, not at startup: in a cluster that is just
 * forming, the first broker up would otherwise create the topic with the replication factor of the
 * brokers alive at that moment (one), and a later loss of that broker would leave partitions of
 * the topic without a leader.
 *
 * Invariants: the broker starts only if every plugin loaded and configured (a misconfiguration
 * stops startup with the plugin's message, naming the key); nothing reaches a plugin after
 * close(); close() stops the manager's tasks first, then the metadata manager, the index cache
 * and the storage manager, each closed even if an earlier one fails.
 */
import * as path from 'node:path';
import type { Logger } from '../common/logger';
import type { Scheduler } from '../common/scheduler';
import type { Time } from '../common/time';
import type { KafkaConfig } from '../config/kafka-config';
import type { MetadataCache } from '../metadata/metadata-cache';
import type { ClientSecurity } from '../client/network-client';
import type { ControllerApi } from '../metadata/controller/controller';
import { KafkaError, ErrorCode } from '../protocol/errors';
import type { FetchDataInfo } from '../storage/log-segment';
import type { UnifiedLog } from '../storage/unified-log';
import { RemoteIndexCache } from '../storage/remote/remote-index-cache';
import type { RemoteLogMetadataManager } from '../storage/remote/remote-log-metadata-manager';
import { DEFAULT_REMOTE_LOG_MANAGER_CONFIG, RemoteFetchInfo, RemoteLogManager } from '../storage/remote/remote-log-manager';
import type { RemoteLogSegmentMetadata, TopicIdPartition } from '../storage/remote/remote-log-segment-metadata';
import type { IndexType, RemoteStorageManager } from '../storage/remote/remote-storage-manager';
import { createRemoteStorageManager } from '../storage/remote/remote-storage-manager-loader';
import { InvalidConfigurationError } from '../storage/remote/remote-storage-config';
import { parseTopicBasedRlmmConfig, rlmmConfigsOf, TopicBasedRemoteLogMetadataManager } from '../coordinator/remote-log-metadata/topic-based-remote-log-metadata-manager';

export const TOPIC_BASED_RLMM_CLASS_NAME = 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager';


export interface BrokerTieredStorageDeps {
  nodeId: number;
  clusterId: string;
  config: KafkaConfig;
  metadata: MetadataCache;
  controller: Pick<ControllerApi, 'createTopics'>;
  security: ClientSecurity;
  fetchLog: (tp: TopicIdPartition) => UnifiedLog | undefined;
  time: Time;
  scheduler: Scheduler;
  logger: Logger;
}

export class BrokerTieredStorage {
  private rlm: RemoteLogManager | null = null;
  private rsm: RemoteStorageManager | null = null;
  private rlmm: RemoteLogMetadataManager | null = null;
  private indexes: RemoteIndexCache | null = null;
  private pending: { leaders: TopicIdPartition[]; followers: TopicIdPartition[] }[] = [];
  private rlmmConfigs: Record<string, string> | null = null;
  private rlmmConfigured = false;

  /** Configures the metadata manager once, at the first tiered partition (see the header). */
  private configureRlmm(): void {
    if (this.rlmmConfigured || !this.rlmm || !this.rlmmConfigs) return;
    this.rlmmConfigured = true;
    this.rlmm.configure(this.rlmmConfigs);
  }
  private closed = false;

  constructor(private readonly deps: BrokerTieredStorageDeps) {}

  /** Loads and configures the plugins and starts the remote log manager; throws (stopping startup) on a misconfiguration. */
  async start(): Promise<void> {
    const { config, nodeId, logger } = this.deps;
    const originals = config.originals();
    const created = await createRemoteStorageManager(originals, { brokerId: nodeId, logger: logger.child('remote-storage-manager') });
    this.rsm = created.manager;
    await this.rsm.configure(created.configs);
    const rlmmClass = config.getString('remote.log.metadata.manager.class.name') ?? TOPIC_BASED_RLMM_CLASS_NAME;
    if (rlmmClass !== TOPIC_BASED_RLMM_CLASS_NAME) {
      throw InvalidConfigurationError.invalid('remote.log.metadata.manager.class.name', rlmmClass, `krill provides ${TOPIC_BASED_RLMM_CLASS_NAME} only`);
    }
    const rlmm = new TopicBasedRemoteLogMetadataManager({
      nodeId,
      metadata: this.deps.metadata,
      controller: this.deps.controller,
      listenerName: config.interBrokerListenerName(),
      security: this.deps.security,
      logger: logger.child('remote-log-metadata'),
    });
    // Parsed now, so a bad rlmm.config.* stops startup; applied at the first tiered partition.
    this.rlmmConfigs = rlmmConfigsOf(originals, nodeId, this.deps.clusterId);
    parseTopicBasedRlmmConfig(this.rlmmConfigs);
    this.rlmm = rlmm;
    const firstLogDir = path.resolve(config.logDirs()[0]);
    this.indexes = new RemoteIndexCache({
      logDir: firstLogDir,
      rsm: this.rsm,
      maxSizeBytes: config.getLong('remote.log.index.file.cache.total.size.bytes'),
      fileDeleteDelayMs: config.getLong('log.segment.delete.delay.ms'),
      time: this.deps.time,
      scheduler: this.deps.scheduler,
      logger: logger.child('remote-index-cache'),
    });
    this.rlm = new RemoteLogManager({
      config: {
        ...DEFAULT_REMOTE_LOG_MANAGER_CONFIG,
        brokerId: nodeId,
        taskIntervalMs: config.getLong('remote.log.manager.task.interval.ms'),
        copyMaxBytesPerSecond: config.getLongBound('remote.log.manager.copy.max.bytes.per.second'),
        fetchMaxBytesPerSecond: config.getLongBound('remote.log.manager.fetch.max.bytes.per.second'),
      },
      rsm: this.rsm,
      rlmm,
      indexes: this.indexes,
      fetchLog: this.deps.fetchLog,
      time: this.deps.time,
      scheduler: this.deps.scheduler,
      logger: logger.child('remote-log-manager'),
    });
    logger.info(`tiered storage is on: ${created.className}, ${rlmmClass}, index cache in ${path.join(firstLogDir, 'remote-log-index-cache')}`);
    if (this.pending.length > 0) this.configureRlmm();
    for (const p of this.pending) this.rlm.onLeadershipChange(p.leaders, p.followers);
    this.pending = [];
  }

  private manager(): RemoteLogManager {
    if (!this.rlm || this.closed) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, 'tiered storage is not running on this broker');
    return this.rlm;
  }

  // ---- what the replica manager and its fetchers use (replication/replica-manager.ts RemoteLogAccess) ----

  read(f: RemoteFetchInfo): Promise<FetchDataInfo> {
    return this.manager().read(f);
  }

  fetchThrottleTimeMs(): number {
    return this.rlm && !this.closed ? this.rlm.fetchThrottleTimeMs() : 0;
  }

  onLeadershipChange(leaders: readonly TopicIdPartition[], followers: readonly TopicIdPartition[]): void {
    if (this.closed) return;
    if (!this.rlm) this.pending.push({ leaders: [...leaders], followers: [...followers] });
    else {
      if (leaders.length > 0 || followers.length > 0) this.configureRlmm();
      this.rlm.onLeadershipChange(leaders, followers);
    }
  }

  stopPartitions(partitions: readonly TopicIdPartition[], o: { deleteRemoteLog: boolean }): Promise<void> {
    if (!this.rlm || this.closed) return Promise.resolve();
    return this.rlm.stopPartitions(partitions, o);
  }

  remoteLogSegmentMetadataFor(tp: TopicIdPartition, epoch: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null> {
    return this.manager().remoteLogSegmentMetadataFor(tp, epoch, offset);
  }

  fetchIndex(m: RemoteLogSegmentMetadata, type: IndexType): Promise<Buffer> {
    return this.manager().fetchIndex(m, type);
  }

  findOffsetByTimestamp(tp: TopicIdPartition, timestamp: bigint, startingOffset: bigint): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | null> {
    return this.manager().findOffsetByTimestamp(tp, timestamp, startingOffset);
  }

  /** The running manager (tests and the fault-injection tools); null before start or after close. */
  get remoteLogManager(): RemoteLogManager | null {
    return this.closed ? null : this.rlm;
  }

  /** The remote index cache (its hit / miss counters for the bench and tests); null before start or after close. */
  get remoteIndexCache(): RemoteIndexCache | null {
    return this.closed ? null : this.indexes;
  }

  /** Dynamic broker configs this subsystem follows (Kafka's RemoteLogManager reconfigure). */
  reconfigure(config: KafkaConfig): void {
    if (!this.rlm) return;
    this.rlm.updateCopyQuota(config.getLongBound('remote.log.manager.copy.max.bytes.per.second'));
    this.rlm.updateFetchQuota(config.getLongBound('remote.log.manager.fetch.max.bytes.per.second'));
    this.indexes?.resizeCacheSize(config.getLong('remote.log.index.file.cache.total.size.bytes'));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const step = async (what: string, fn: (() => Promise<void>) | undefined): Promise<void> => {
      if (!fn) return;
      try {
        await fn();
      } catch (err) {
        this.deps.logger.error(`closing the ${what} failed: ${(err as Error).message}`);
      }
    };
    await step('remote log manager', this.rlm ? () => this.rlm!.close() : undefined);
    await step('remote log metadata manager', this.rlmm ? () => this.rlmm!.close() : undefined);
    await step('remote index cache', this.indexes ? () => this.indexes!.close() : undefined);
    await step('remote storage manager', this.rsm ? () => this.rsm!.close() : undefined);
  }
}
