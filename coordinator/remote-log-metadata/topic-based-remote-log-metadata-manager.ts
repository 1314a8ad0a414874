/**
 * The default RemoteLogMetadataManager (Kafka's TopicBasedRemoteLogMetadataManager with its
 * ProducerManager, ConsumerManager / ConsumerTask and config): every remote log metadata event is
 * a record of the internal topic `__remote_log_metadata`, in the partition
 * RemoteLogMetadataTopicPartitioner picks for its user partition, and every broker rebuilds the
 * state of the user partitions it leads or follows by reading their metadata partitions from the
 * beginning into a RemotePartitionMetadataStore.
 *
 * Mechanism: the Kafka protocol, over the inter-broker listener, to whichever broker leads each
 * metadata partition (Produce with acks=-1; sessionless Fetch long polls as a consumer, replica id
 * -1, up to the high watermark), leaders looked up in this broker's MetadataCache. Kafka uses a
 * KafkaProducer and a KafkaConsumer for the same reason: with 50 metadata partitions spread over
 * the cluster, the broker that needs a user partition's events is generally not a replica of its
 * metadata partition, so the coordinators' way (appending to and reading the local replica, which
 * works because a group or transaction coordinator is by definition the leader of its partition)
 * does not apply. Produce and consume get separate channels so a long poll never delays a publish,
 * and each leader has its own fetch pipeline so a long poll to one broker never delays another's records.
 *
 * Owns: the `remote.log.metadata.*` configs (after the broker stripped `rlmm.config.`), creating
 * the topic through the controller with Kafka's settings (partitions 50, replication factor 3
 * capped by the live brokers unless set, as krill caps its internal topics, retention.ms -1,
 * cleanup.policy delete, remote.storage.enable false) and checking its partition count, the
 * assignment of user partitions, the consume loop, and publishing.
 *
 * Invariants:
 * - add/update/putPartitionDelete resolve only once the record is appended (acks=-1) and this
 *   manager's consumer has read and applied it (Kafka waits for the consumer to catch up to the
 *   produced offset), within remote.log.metadata.consume.wait.ms; an event the local state refuses
 *   is rejected before it is produced, one refused when read back rejects the publish.
 * - A user partition is ready (isReady) once its metadata partition has been read from the start up
 *   to the high watermark seen when its loading began; until then, and when it is not assigned,
 *   lookups throw (RemoteLogMetadataNotReadyError / RemoteResourceNotFoundError).
 * - Assigning a user partition rewinds its metadata partition to the beginning; records are applied
 *   to each user partition at most once (a per-user-partition read offset), and only for assigned
 *   user partitions. A fetch answered after a rewind or an unassignment is discarded (generation).
 * - close() stops the loop, fails pending publishes and closes every channel; later calls throw.
 */
import type { Logger } from '../../common/logger';
import { BrokerChannels } from '../../client/broker-channels';
import { ClientError, decodeRecordSet, type ClientSecurity } from '../../client/network-client';
import type { ControllerApi, CreateTopicSpec } from '../../metadata/controller/controller';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { ErrorCode, errorName } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { readRecords } from '../../protocol/records/record';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { RemoteLogMetadataManager } from '../../storage/remote/remote-log-metadata-manager';
import {
  InvalidRemoteLogMetadataError,
  RemoteLogMetadataNotReadyError,
  RemotePartitionMetadataStore,
} from '../../storage/remote/remote-log-metadata-cache';
import {
  deserializeRemoteLogMetadata,
  remoteLogMetadataTopicIdPartition,
  serializeRemoteLogMetadata,
  type RemoteLogMetadata,
} from '../../storage/remote/remote-log-metadata-serde';
import { RemoteLogMetadataTopicPartitioner } from '../../storage/remote/remote-log-metadata-topic-partitioner';
import {
  isValidPartitionDeleteTransition,
  isValidSegmentTransition,
  RemoteLogSegmentState,
  RemotePartitionDeleteState,
  topicIdPartitionString,
  type RemoteLogSegmentMetadata,
  type RemoteLogSegmentMetadataUpdate,
  type RemotePartitionDeleteMetadata,
  type TopicIdPartition,
} from '../../storage/remote/remote-log-segment-metadata';
import { RemoteStorageError } from '../../storage/remote/remote-storage-manager';

export const REMOTE_LOG_METADATA_TOPIC = '__remote_log_metadata';
/** Kafka's remote.log.metadata.manager.impl.prefix default: broker configs under it go to the RLMM, stripped. */
export const DEFAULT_RLMM_CONFIG_PREFIX = 'rlmm.config.';
export const RLMM_CONFIG_PREFIX_CONFIG = 'remote.log.metadata.manager.impl.prefix';

export const RLMM_TOPIC_REPLICATION_FACTOR = 'remote.log.metadata.topic.replication.factor';
export const RLMM_TOPIC_PARTITIONS = 'remote.log.metadata.topic.num.partitions';
export const RLMM_TOPIC_RETENTION_MS = 'remote.log.metadata.topic.retention.ms';
export const RLMM_CONSUME_WAIT_MS = 'remote.log.metadata.consume.wait.ms';
export const RLMM_INIT_RETRY_MAX_TIMEOUT_MS = 'remote.log.metadata.initialization.retry.max.timeout.ms';
export const RLMM_INIT_RETRY_INTERVAL_MS = 'remote.log.metadata.initialization.retry.interval.ms';

/** Kafka's TopicBasedRemoteLogMetadataManagerConfig, parsed. */
export interface TopicBasedRlmmConfig {
  readonly numPartitions: number;
  /** Set explicitly, or null: Kafka's 3, capped by the live brokers. */
  readonly replicationFactor: number | null;
  readonly retentionMs: bigint;
  readonly consumeWaitMs: number;
  readonly initializationRetryMaxTimeoutMs: number;
  readonly initializationRetryIntervalMs: number;
}

const DEFAULT_REPLICATION_FACTOR = 3;

function intConfig(configs: Readonly<Record<string, string>>, key: string, dflt: number, min: number, max = 2 ** 31 - 1): number {
  const raw = configs[key];
  if (raw === undefined) return dflt;
  const v = Number(raw.trim());
  if (!Number.isInteger(v) || v < min || v > max) throw new RemoteStorageError(`invalid value ${JSON.stringify(raw)} for ${key}: an integer in [${min}, ${max}] is required`);
  return v;
}

/** The RLMM's own configs (keys without the `rlmm.config.` prefix), with Kafka's defaults and checks. */
export function parseTopicBasedRlmmConfig(configs: Readonly<Record<string, string>>): TopicBasedRlmmConfig {
  const retentionRaw = configs[RLMM_TOPIC_RETENTION_MS] ?? '-1';
  let retentionMs: bigint;
  try {
    retentionMs = BigInt(retentionRaw.trim());
  } catch {
    throw new RemoteStorageError(`invalid value ${JSON.stringify(retentionRaw)} for ${RLMM_TOPIC_RETENTION_MS}`);
  }
  if (retentionMs !== -1n && retentionMs <= 0n) throw new RemoteStorageError(`Invalid metadata topic retention in millis: ${retentionMs}`);
  return {
    numPartitions: intConfig(configs, RLMM_TOPIC_PARTITIONS, 50, 1),
    replicationFactor: configs[RLMM_TOPIC_REPLICATION_FACTOR] === undefined ? null : intConfig(configs, RLMM_TOPIC_REPLICATION_FACTOR, DEFAULT_REPLICATION_FACTOR, 1, 32767),
    retentionMs,
    consumeWaitMs: intConfig(configs, RLMM_CONSUME_WAIT_MS, 120_000, 0, Number.MAX_SAFE_INTEGER),
    initializationRetryMaxTimeoutMs: intConfig(configs, RLMM_INIT_RETRY_MAX_TIMEOUT_MS, 120_000, 0, Number.MAX_SAFE_INTEGER),
    initializationRetryIntervalMs: intConfig(configs, RLMM_INIT_RETRY_INTERVAL_MS, 100, 0, Number.MAX_SAFE_INTEGER),
  };
}

/**
 * What the broker hands RemoteLogMetadataManager.configure (Kafka's RemoteLogManager.configureRLMM):
 * every broker config under the prefix (`remote.log.metadata.manager.impl.prefix`, default
 * `rlmm.config.`) with the prefix removed, plus broker.id and cluster.id.
 */
export function rlmmConfigsOf(brokerOriginals: ReadonlyMap<string, string>, brokerId: number, clusterId: string): Record<string, string> {
  const prefix = brokerOriginals.get(RLMM_CONFIG_PREFIX_CONFIG) ?? DEFAULT_RLMM_CONFIG_PREFIX;
  const out: Record<string, string> = {};
  for (const [k, v] of brokerOriginals) if (prefix !== '' && k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  out['broker.id'] = String(brokerId);
  out['cluster.id'] = clusterId;
  return out;
}

/** The CreateTopics spec of `__remote_log_metadata` (Kafka's createRemoteLogMetadataTopicRequest). */
export function remoteLogMetadataTopicSpec(config: TopicBasedRlmmConfig, liveBrokers: number): CreateTopicSpec {
  const rf = config.replicationFactor ?? Math.max(1, Math.min(DEFAULT_REPLICATION_FACTOR, liveBrokers));
  return {
    name: REMOTE_LOG_METADATA_TOPIC,
    numPartitions: config.numPartitions,
    replicationFactor: rf,
    assignments: [],
    configs: [
      { name: 'retention.ms', value: String(config.retentionMs) },
      { name: 'cleanup.policy', value: 'delete' },
      { name: 'remote.storage.enable', value: 'false' },
    ],
  };
}

export interface TopicBasedRlmmOptions {
  nodeId: number;
  /** This broker's metadata: the topic, the leaders of its partitions, the brokers' endpoints. */
  metadata: MetadataCache;
  /** Creates the topic (through the controller, like every internal topic). */
  controller: Pick<ControllerApi, 'createTopics'>;
  /** inter.broker.listener.name. */
  listenerName: string;
  /** Per request; also bounds a publish's produce retries. Default 30 s. */
  requestTimeoutMs?: number;
  security?: ClientSecurity;
  logger: Logger;
  /** Longest wait of the consumer's fetches (Kafka's consumer poll). Default 500 ms. */
  fetchMaxWaitMs?: number;
  /** Pause after a failed produce or fetch (retry.backoff.ms). Default 100 ms. */
  retryBackoffMs?: number;
}

interface UserPartition {
  readonly tp: TopicIdPartition;
  readonly key: string;
  readonly metadataPartition: number;
  initialized: boolean;
}

interface Waiter {
  readonly offset: bigint;
  resolve(): void;
  reject(err: Error): void;
}

interface MetadataPartitionState {
  readonly partition: number;
  /** Bumped by every rewind; a fetch answered for an older generation is discarded. */
  generation: number;
  nextOffset: bigint;
  /** Offset of the last record read, -1 before the first. */
  readOffset: bigint;
  /** High watermark to reach before the pending user partitions are initialized; null until a fetch tells it. */
  target: bigint | null;
  waiters: Waiter[];
  /** Offsets of records whose event the store refused, with the reason (the last few). */
  readonly refused: Map<bigint, Error>;
}

const MAX_REFUSED_KEPT = 1000;

const RETRIABLE = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.NETWORK_EXCEPTION,
]);

export class TopicBasedRemoteLogMetadataManager implements RemoteLogMetadataManager {
  private config: TopicBasedRlmmConfig | null = null;
  private partitioner: RemoteLogMetadataTopicPartitioner | null = null;
  private readonly store = new RemotePartitionMetadataStore();
  private readonly produceChannels: BrokerChannels;
  private readonly fetchChannels: BrokerChannels;
  private readonly logger: Logger;
  private readonly requestTimeoutMs: number;
  private readonly fetchMaxWaitMs: number;
  private readonly retryBackoffMs: number;

  private initialized = false;
  private initializationError: Error | null = null;
  private initialization: Promise<void> | null = null;
  private closed = false;
  private loop: Promise<void> | null = null;

  private readonly pendingAssignments = new Map<string, TopicIdPartition>();
  private readonly assigned = new Map<string, UserPartition>();
  private readonly metadataPartitions = new Map<number, MetadataPartitionState>();
  /** Offset of the last record applied per user partition (Kafka's readOffsetsByUserTopicPartition). */
  private readonly appliedOffsets = new Map<string, bigint>();
  private readonly readyWaiters = new Map<string, { resolve(): void; reject(err: Error): void }[]>();

  private signalled = false;
  private signalResolve: (() => void) | null = null;
  private readonly timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  constructor(private readonly opts: TopicBasedRlmmOptions) {
    this.logger = opts.logger;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.fetchMaxWaitMs = opts.fetchMaxWaitMs ?? 500;
    this.retryBackoffMs = opts.retryBackoffMs ?? 100;
    const connect = (role: string) => ({
      clientId: `__remote_log_metadata_client_${opts.nodeId}_${role}`,
      timeoutMs: Math.min(10_000, this.requestTimeoutMs),
      requestTimeoutMs: this.requestTimeoutMs + this.fetchMaxWaitMs,
      ...opts.security,
    });
    this.produceChannels = new BrokerChannels(opts.metadata, opts.listenerName, connect('producer'));
    this.fetchChannels = new BrokerChannels(opts.metadata, opts.listenerName, connect('consumer'));
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /** Parses the configs and starts initializing (topic creation, then the consumer) in the background. */
  configure(configs: Readonly<Record<string, string>>): void {
    if (this.closed) throw new RemoteStorageError('the remote log metadata manager is closed');
    if (this.config) {
      this.logger.info('the topic-based remote log metadata manager is already configured');
      return;
    }
    this.config = parseTopicBasedRlmmConfig(configs);
    this.partitioner = new RemoteLogMetadataTopicPartitioner(this.config.numPartitions);
    this.initialization = this.initialize(this.config);
  }

  /** Resolves once the topic exists and the consumer runs; rejects when initialization failed. */
  async whenInitialized(): Promise<void> {
    if (!this.initialization) throw new RemoteStorageError('the remote log metadata manager is not configured');
    await this.initialization;
    if (this.initializationError) throw this.initializationError;
    if (!this.initialized) throw new RemoteStorageError('the remote log metadata manager was closed before it was initialized');
  }

  get isInitialized(): boolean {
    return this.initialized;
  }

  private async initialize(config: TopicBasedRlmmConfig): Promise<void> {
    const started = Date.now();
    let created = false;
    while (!this.closed) {
      if (Date.now() - started > config.initializationRetryMaxTimeoutMs) {
        this.initializationError = new RemoteStorageError(`timed out initializing the remote log metadata manager after ${config.initializationRetryMaxTimeoutMs} ms`);
        this.logger.error(this.initializationError.message);
        return;
      }
      try {
        if (!created) created = await this.createTopic(config);
        const topic = this.opts.metadata.topic(REMOTE_LOG_METADATA_TOPIC);
        if (created && topic) {
          if (topic.partitions.size !== config.numPartitions) {
            this.initializationError = new RemoteStorageError(
              `${REMOTE_LOG_METADATA_TOPIC} has ${topic.partitions.size} partitions, not the configured ${config.numPartitions}`,
            );
            this.logger.error(this.initializationError.message);
            return;
          }
          this.initialized = true;
          this.logger.info(`initialized on ${REMOTE_LOG_METADATA_TOPIC} (${config.numPartitions} partitions)`);
          const pending = [...this.pendingAssignments.values()];
          this.pendingAssignments.clear();
          this.assign(pending);
          this.loop = this.consumeLoop();
          return;
        }
      } catch (err) {
        this.logger.info(`cannot create ${REMOTE_LOG_METADATA_TOPIC} yet, retrying`, { err });
      }
      await this.delay(config.initializationRetryIntervalMs);
    }
  }

  /** True when the topic exists or was created now. */
  private async createTopic(config: TopicBasedRlmmConfig): Promise<boolean> {
    if (this.opts.metadata.topic(REMOTE_LOG_METADATA_TOPIC)) return true;
    const spec = remoteLogMetadataTopicSpec(config, this.opts.metadata.aliveBrokers().length);
    const [r] = await this.opts.controller.createTopics([spec], false);
    if (r.errorCode === ErrorCode.NONE || r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) {
      if (r.errorCode === ErrorCode.NONE) this.logger.info(`created ${REMOTE_LOG_METADATA_TOPIC}: ${spec.numPartitions} partitions, replication factor ${spec.replicationFactor}`);
      return true;
    }
    throw new RemoteStorageError(`cannot create ${REMOTE_LOG_METADATA_TOPIC}: ${errorName(r.errorCode)}${r.errorMessage ? `: ${r.errorMessage}` : ''}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.signal();
    for (const t of this.timers) {
      clearTimeout(t.timer);
      t.resolve();
    }
    this.timers.clear();
    this.produceChannels.close();
    this.fetchChannels.close();
    const err = new RemoteStorageError('the remote log metadata manager is closed');
    for (const s of this.metadataPartitions.values()) for (const w of s.waiters.splice(0)) w.reject(err);
    for (const list of this.readyWaiters.values()) for (const w of list.splice(0)) w.reject(err);
    this.readyWaiters.clear();
    await this.initialization;
    await this.loop;
    this.store.clear();
    this.metadataPartitions.clear();
    this.assigned.clear();
  }

  private delay(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { timer: setTimeout(() => {
        this.timers.delete(entry);
        resolve();
      }, ms), resolve };
      this.timers.add(entry);
    });
  }

  private ensureUsable(): { config: TopicBasedRlmmConfig; partitioner: RemoteLogMetadataTopicPartitioner } {
    if (this.closed) throw new RemoteStorageError('the remote log metadata manager is closed');
    if (this.initializationError) throw this.initializationError;
    if (!this.initialized || !this.config || !this.partitioner) throw new RemoteLogMetadataNotReadyError('the remote log metadata manager is not initialized yet');
    return { config: this.config, partitioner: this.partitioner };
  }

  // ---------------------------------------------------------------------------------------------
  // Assignments

  onPartitionLeadershipChanges(leaders: readonly TopicIdPartition[], followers: readonly TopicIdPartition[]): void {
    if (this.closed) throw new RemoteStorageError('the remote log metadata manager is closed');
    const all = [...leaders, ...followers];
    if (!this.initialized) {
      for (const tp of all) this.pendingAssignments.set(topicIdPartitionString(tp), tp);
      return;
    }
    this.assign(all);
  }

  onStopPartitions(partitions: readonly TopicIdPartition[]): void {
    if (this.closed) throw new RemoteStorageError('the remote log metadata manager is closed');
    for (const tp of partitions) {
      const key = topicIdPartitionString(tp);
      this.pendingAssignments.delete(key);
      const up = this.assigned.get(key);
      if (!up) continue;
      this.assigned.delete(key);
      this.appliedOffsets.delete(key);
      this.store.clearTopicPartition(tp);
      const still = [...this.assigned.values()].some((u) => u.metadataPartition === up.metadataPartition);
      if (!still) {
        const s = this.metadataPartitions.get(up.metadataPartition);
        this.metadataPartitions.delete(up.metadataPartition);
        const err = new RemoteStorageError(`${REMOTE_LOG_METADATA_TOPIC}-${up.metadataPartition} is no longer read by this broker`);
        for (const w of s?.waiters.splice(0) ?? []) w.reject(err);
      }
    }
  }

  private assign(partitions: readonly TopicIdPartition[]): void {
    const rewind = new Set<number>();
    for (const tp of partitions) {
      const key = topicIdPartitionString(tp);
      if (this.assigned.has(key)) continue;
      const metadataPartition = this.partitioner!.metadataPartition(tp);
      this.assigned.set(key, { tp, key, metadataPartition, initialized: false });
      this.store.maybeLoadPartition(tp);
      rewind.add(metadataPartition);
    }
    for (const p of rewind) {
      const s = this.metadataPartitions.get(p);
      if (s) {
        // Another user partition already reads it: read it again from the start for the new one.
        s.generation++;
        s.nextOffset = 0n;
        s.readOffset = -1n;
        s.target = null;
      } else {
        this.metadataPartitions.set(p, { partition: p, generation: 0, nextOffset: 0n, readOffset: -1n, target: null, waiters: [], refused: new Map() });
      }
    }
    if (rewind.size > 0) this.signal();
  }

  isReady(tp: TopicIdPartition): boolean {
    return this.store.isInitialized(tp);
  }

  /** Resolves when the partition is ready (isReady), rejects after `timeoutMs`. */
  awaitReady(tp: TopicIdPartition, timeoutMs: number): Promise<void> {
    if (this.isReady(tp)) return Promise.resolve();
    const key = topicIdPartitionString(tp);
    if (this.closed) return Promise.reject(new RemoteStorageError('the remote log metadata manager is closed'));
    return new Promise((resolve, reject) => {
      const w = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        const list = this.readyWaiters.get(key);
        const i = list ? list.indexOf(w) : -1;
        if (i >= 0) list!.splice(i, 1);
        reject(new RemoteLogMetadataNotReadyError(`the remote log metadata of ${key} was not ready within ${timeoutMs} ms`));
      }, timeoutMs);
      const list = this.readyWaiters.get(key) ?? [];
      list.push(w);
      this.readyWaiters.set(key, list);
    });
  }

  private markInitialized(up: UserPartition): void {
    up.initialized = true;
    this.store.markInitialized(up.tp);
    const list = this.readyWaiters.get(up.key);
    this.readyWaiters.delete(up.key);
    for (const w of list ?? []) w.resolve();
  }

  // ---------------------------------------------------------------------------------------------
  // Consuming

  /** Wakes the consume loop (an assignment, a finished fetch, a retry due, close). */
  private signal(): void {
    this.signalled = true;
    const r = this.signalResolve;
    this.signalResolve = null;
    r?.();
  }

  private async nextSignal(): Promise<void> {
    if (!this.signalled) await new Promise<void>((resolve) => (this.signalResolve = resolve));
    this.signalled = false;
  }

  /**
   * One fetch pipeline per leader, as a consumer fetches from each node independently: a long poll
   * to one broker never holds back the records another broker has. A metadata partition is in at
   * most one fetch at a time; a failed fetch backs off before its leader is fetched from again.
   */
  private async consumeLoop(): Promise<void> {
    const busyLeaders = new Set<number>();
    const fetching = new Set<MetadataPartitionState>();
    const inFlight = new Set<Promise<void>>();
    let retryScheduled = false;
    while (!this.closed) {
      const byLeader = new Map<number, MetadataPartitionState[]>();
      let leaderless = false;
      for (const s of this.metadataPartitions.values()) {
        if (fetching.has(s)) continue;
        const leader = this.opts.metadata.partition(REMOTE_LOG_METADATA_TOPIC, s.partition)?.leader ?? -1;
        if (leader < 0) {
          leaderless = true;
          continue;
        }
        if (busyLeaders.has(leader)) continue;
        const list = byLeader.get(leader) ?? [];
        list.push(s);
        byLeader.set(leader, list);
      }
      for (const [leader, parts] of byLeader) {
        busyLeaders.add(leader);
        for (const s of parts) fetching.add(s);
        const run: Promise<void> = (async () => {
          let ok = false;
          try {
            ok = await this.fetchFrom(leader, parts);
          } catch (err) {
            this.logger.error(`the ${REMOTE_LOG_METADATA_TOPIC} consumer failed on broker ${leader}, retrying`, { err });
          }
          if (!ok) await this.delay(this.retryBackoffMs);
          busyLeaders.delete(leader);
          for (const s of parts) fetching.delete(s);
          this.signal();
        })();
        inFlight.add(run);
        void run.then(() => inFlight.delete(run));
      }
      if (leaderless && !retryScheduled) {
        // No leader known yet (an election, the topic just created): look again after the backoff.
        retryScheduled = true;
        void this.delay(this.retryBackoffMs).then(() => {
          retryScheduled = false;
          this.signal();
        });
      }
      await this.nextSignal();
    }
    await Promise.all([...inFlight]);
  }

  /** One fetch from one leader; false when it failed (the loop backs off). */
  private async fetchFrom(leader: number, parts: MetadataPartitionState[]): Promise<boolean> {
    const ch = this.fetchChannels.channel(leader);
    if (!ch) return false;
    const topicId = this.opts.metadata.topic(REMOTE_LOG_METADATA_TOPIC)?.topicId ?? ZERO_UUID;
    const sent = parts.map((s) => ({ s, generation: s.generation, offset: s.nextOffset }));
    // Partitions still loading want the high watermark now, not after a long poll.
    const loading = parts.some((s) => s.target === null);
    let res;
    try {
      res = await ch.send('Fetch', {
        clusterId: null,
        replicaId: -1,
        replicaState: { replicaId: -1, replicaEpoch: -1n },
        maxWaitMs: loading ? 0 : this.fetchMaxWaitMs,
        minBytes: 1,
        maxBytes: 16 * 1024 * 1024,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic: REMOTE_LOG_METADATA_TOPIC,
            topicId,
            partitions: sent.map(({ s, offset }) => ({ partition: s.partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 4 * 1024 * 1024 })),
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      });
    } catch (err) {
      if (!this.closed) this.logger.debug(`fetch of ${REMOTE_LOG_METADATA_TOPIC} from broker ${leader} failed`, { err });
      return false;
    }
    if (res.errorCode !== ErrorCode.NONE) {
      this.logger.warn(`fetch of ${REMOTE_LOG_METADATA_TOPIC} from broker ${leader}: ${errorName(res.errorCode)}`);
      return false;
    }
    let ok = true;
    for (const { s, generation, offset } of sent) {
      if (this.metadataPartitions.get(s.partition) !== s || s.generation !== generation || s.nextOffset !== offset) continue;
      const p = res.responses.find((t) => t.topic === REMOTE_LOG_METADATA_TOPIC || t.topicId === topicId)?.partitions.find((x) => x.partitionIndex === s.partition);
      if (!p) {
        ok = false;
        continue;
      }
      if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
        // Retention removed the start: read from the log start offset (auto.offset.reset=earliest).
        if (p.logStartOffset > s.nextOffset) s.nextOffset = p.logStartOffset;
        else ok = (await this.resetToEarliest(leader, s, generation)) && ok;
        continue;
      }
      if (p.errorCode !== ErrorCode.NONE) {
        if (!RETRIABLE.has(p.errorCode)) this.logger.warn(`fetch of ${REMOTE_LOG_METADATA_TOPIC}-${s.partition}: ${errorName(p.errorCode)}`);
        ok = false;
        continue;
      }
      try {
        this.applyFetched(s, p.records, p.highWatermark);
      } catch (err) {
        // A corrupt batch: nothing after it can be applied in order, so the partition is retried.
        this.logger.error(`cannot read ${REMOTE_LOG_METADATA_TOPIC}-${s.partition} at offset ${s.nextOffset}`, { err });
        ok = false;
      }
    }
    return ok;
  }

  private async resetToEarliest(leader: number, s: MetadataPartitionState, generation: number): Promise<boolean> {
    const ch = this.fetchChannels.channel(leader);
    if (!ch) return false;
    try {
      const res = await ch.send('ListOffsets', {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: REMOTE_LOG_METADATA_TOPIC, partitions: [{ partitionIndex: s.partition, currentLeaderEpoch: -1, timestamp: -2n, maxNumOffsets: 1 }] }],
      });
      const p = res.topics[0]?.partitions[0];
      if (!p || p.errorCode !== ErrorCode.NONE) return false;
      if (s.generation === generation && p.offset > s.nextOffset) s.nextOffset = p.offset;
      return true;
    } catch {
      return false;
    }
  }

  private applyFetched(s: MetadataPartitionState, records: Buffer | null, highWatermark: bigint): void {
    for (const b of decodeRecordSet(records).batches) {
      if (b.nextOffset <= s.nextOffset) continue;
      if (!b.isControlBatch) {
        for (const r of readRecords(b)) {
          if (r.offset < s.nextOffset) continue;
          this.process(s, r.offset, r.value);
          s.readOffset = r.offset;
        }
      }
      s.nextOffset = b.nextOffset;
    }
    if (s.target === null) s.target = highWatermark;
    if (s.nextOffset >= s.target) {
      for (const up of this.assigned.values()) if (up.metadataPartition === s.partition && !up.initialized) this.markInitialized(up);
    }
    this.resolveWaiters(s);
  }

  private process(s: MetadataPartitionState, offset: bigint, value: Buffer | null): void {
    if (value === null) return;
    let e: RemoteLogMetadata;
    try {
      e = deserializeRemoteLogMetadata(value);
    } catch (err) {
      this.logger.error(`skipping undecodable ${REMOTE_LOG_METADATA_TOPIC}-${s.partition} record at offset ${offset}`, { err });
      this.refuse(s, offset, err as Error);
      return;
    }
    if (e.kind === 'snapshot') {
      this.logger.warn(`skipping a segment snapshot record in ${REMOTE_LOG_METADATA_TOPIC}-${s.partition} at offset ${offset}: snapshots belong in snapshot files`);
      return;
    }
    const key = topicIdPartitionString(remoteLogMetadataTopicIdPartition(e));
    if (!this.assigned.has(key)) return;
    const applied = this.appliedOffsets.get(key);
    if (applied !== undefined && applied >= offset) return;
    try {
      this.apply(e);
    } catch (err) {
      this.logger.error(`refused the remote log metadata event at ${REMOTE_LOG_METADATA_TOPIC}-${s.partition} offset ${offset}`, { err });
      this.refuse(s, offset, err as Error);
    }
    this.appliedOffsets.set(key, offset);
  }

  private apply(e: RemoteLogMetadata): void {
    switch (e.kind) {
      case 'segment':
        this.store.handleRemoteLogSegmentMetadata(e.metadata);
        break;
      case 'segmentUpdate':
        this.store.handleRemoteLogSegmentMetadataUpdate(e.update);
        break;
      case 'partitionDelete':
        this.store.handleRemotePartitionDeleteMetadata(e.metadata);
        break;
      case 'snapshot':
        break;
    }
  }

  private refuse(s: MetadataPartitionState, offset: bigint, err: Error): void {
    s.refused.set(offset, err);
    if (s.refused.size > MAX_REFUSED_KEPT) s.refused.delete(s.refused.keys().next().value!);
  }

  private resolveWaiters(s: MetadataPartitionState): void {
    if (s.waiters.length === 0) return;
    const keep: Waiter[] = [];
    for (const w of s.waiters) {
      if (w.offset > s.readOffset) keep.push(w);
      else {
        const err = s.refused.get(w.offset);
        if (err) w.reject(err);
        else w.resolve();
      }
    }
    s.waiters = keep;
  }

  /** Kafka's waitTillConsumptionCatchesUp: until the record at `offset` has been read and applied. */
  private waitConsumed(partition: number, offset: bigint, timeoutMs: number): Promise<void> {
    const s = this.metadataPartitions.get(partition);
    if (!s) return Promise.reject(new RemoteStorageError(`${REMOTE_LOG_METADATA_TOPIC}-${partition} is not read by this broker`));
    if (s.readOffset >= offset) {
      const err = s.refused.get(offset);
      return err ? Promise.reject(err) : Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = s.waiters.indexOf(w);
        if (i >= 0) s.waiters.splice(i, 1);
        reject(new RemoteStorageError(`timed out after ${timeoutMs} ms waiting to read back ${REMOTE_LOG_METADATA_TOPIC}-${partition} offset ${offset} (read up to ${s.readOffset})`));
      }, timeoutMs);
      const w: Waiter = {
        offset,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      s.waiters.push(w);
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Publishing

  async addRemoteLogSegmentMetadata(metadata: RemoteLogSegmentMetadata): Promise<void> {
    if (metadata.state !== RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
      throw new InvalidRemoteLogMetadataError(`a remote segment is added in COPY_SEGMENT_STARTED, not ${RemoteLogSegmentState[metadata.state]}`);
    }
    const cache = this.store.cache(metadata.remoteLogSegmentId.topicIdPartition);
    const existing = cache?.isInitialized() ? cache.segment(metadata.remoteLogSegmentId.id) : undefined;
    if (existing && !isValidSegmentTransition(existing.state, metadata.state)) {
      throw new InvalidRemoteLogMetadataError(`remote segment ${metadata.remoteLogSegmentId.id}: invalid state transition ${RemoteLogSegmentState[existing.state]} -> COPY_SEGMENT_STARTED`);
    }
    if (metadata.segmentLeaderEpochs.length === 0) throw new InvalidRemoteLogMetadataError(`remote segment ${metadata.remoteLogSegmentId.id} has no leader epochs`);
    await this.publish({ kind: 'segment', metadata });
  }

  async updateRemoteLogSegmentMetadata(update: RemoteLogSegmentMetadataUpdate): Promise<void> {
    if (update.state === RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
      throw new InvalidRemoteLogMetadataError('COPY_SEGMENT_STARTED is added with addRemoteLogSegmentMetadata, not as an update');
    }
    const cache = this.store.cache(update.remoteLogSegmentId.topicIdPartition);
    if (cache?.isInitialized()) {
      const existing = cache.segment(update.remoteLogSegmentId.id);
      if (!existing) throw new InvalidRemoteLogMetadataError(`no remote log segment metadata found for ${update.remoteLogSegmentId.id}`);
      if (!isValidSegmentTransition(existing.state, update.state)) {
        throw new InvalidRemoteLogMetadataError(
          `remote segment ${update.remoteLogSegmentId.id}: invalid state transition ${RemoteLogSegmentState[existing.state]} -> ${RemoteLogSegmentState[update.state]}`,
        );
      }
    }
    await this.publish({ kind: 'segmentUpdate', update });
  }

  async putRemotePartitionDeleteMetadata(metadata: RemotePartitionDeleteMetadata): Promise<void> {
    if (this.store.isInitialized(metadata.topicIdPartition)) {
      const existing = this.store.remotePartitionDeleteMetadata(metadata.topicIdPartition);
      if (!isValidPartitionDeleteTransition(existing?.state, metadata.state)) {
        throw new InvalidRemoteLogMetadataError(
          `${topicIdPartitionString(metadata.topicIdPartition)}: invalid partition delete transition ${existing ? RemotePartitionDeleteState[existing.state] : 'none'} -> ${RemotePartitionDeleteState[metadata.state]}`,
        );
      }
    }
    await this.publish({ kind: 'partitionDelete', metadata });
  }

  private async publish(e: RemoteLogMetadata): Promise<void> {
    const { config, partitioner } = this.ensureUsable();
    const tp = remoteLogMetadataTopicIdPartition(e);
    const key = topicIdPartitionString(tp);
    if (!this.assigned.has(key)) {
      throw new RemoteStorageError(`${key} is not led or followed by this broker: its remote log metadata would not be read back`);
    }
    const partition = partitioner.metadataPartition(tp);
    const offset = await this.produce(partition, serializeRemoteLogMetadata(e));
    await this.waitConsumed(partition, offset, config.consumeWaitMs);
  }

  /** Appends one record (null key) to the metadata partition's leader with acks=-1; its offset. */
  private async produce(partition: number, value: Buffer): Promise<bigint> {
    const deadline = Date.now() + this.requestTimeoutMs;
    let last = 'no leader';
    for (;;) {
      if (this.closed) throw new RemoteStorageError('the remote log metadata manager is closed');
      const leader = this.opts.metadata.partition(REMOTE_LOG_METADATA_TOPIC, partition)?.leader ?? -1;
      const ch = leader >= 0 ? this.produceChannels.channel(leader) : undefined;
      if (ch) {
        try {
          const res = await ch.send('Produce', {
            transactionalId: null,
            acks: -1,
            timeoutMs: this.requestTimeoutMs,
            topicData: [{ name: REMOTE_LOG_METADATA_TOPIC, partitionData: [{ index: partition, records: buildRecordBatch([{ value }]) }] }],
          });
          const p = res.responses.find((t) => t.name === REMOTE_LOG_METADATA_TOPIC)?.partitionResponses.find((x) => x.index === partition);
          if (!p) throw new RemoteStorageError(`the Produce response of broker ${leader} does not mention ${REMOTE_LOG_METADATA_TOPIC}-${partition}`);
          if (p.errorCode === ErrorCode.NONE) return p.baseOffset;
          last = `${errorName(p.errorCode)} from broker ${leader}`;
          if (!RETRIABLE.has(p.errorCode)) throw new RemoteStorageError(`cannot publish to ${REMOTE_LOG_METADATA_TOPIC}-${partition}: ${last}${p.errorMessage ? `: ${p.errorMessage}` : ''}`);
        } catch (err) {
          // Connection failures and timeouts are retried; a timed-out append may have landed, and
          // a duplicate event is harmless (a repeated state is a valid transition).
          if (!(err instanceof ClientError)) throw err;
          last = err.message;
        }
      } else if (leader >= 0) last = `broker ${leader} has no endpoint for listener ${this.opts.listenerName}`;
      if (Date.now() >= deadline) throw new RemoteStorageError(`cannot publish to ${REMOTE_LOG_METADATA_TOPIC}-${partition} within ${this.requestTimeoutMs} ms: ${last}`);
      await this.delay(this.retryBackoffMs);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lookups

  private readyStore(): RemotePartitionMetadataStore {
    this.ensureUsable();
    return this.store;
  }

  async remoteLogSegmentMetadata(tp: TopicIdPartition, epochForOffset: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null> {
    return this.readyStore().remoteLogSegmentMetadata(tp, epochForOffset, offset);
  }

  async highestOffsetForEpoch(tp: TopicIdPartition, leaderEpoch: number): Promise<bigint | null> {
    return this.readyStore().highestOffsetForEpoch(tp, leaderEpoch);
  }

  async listRemoteLogSegments(tp: TopicIdPartition): Promise<RemoteLogSegmentMetadata[]> {
    return this.readyStore().listRemoteLogSegments(tp);
  }

  async listRemoteLogSegmentsForEpoch(tp: TopicIdPartition, leaderEpoch: number): Promise<RemoteLogSegmentMetadata[]> {
    return this.readyStore().listRemoteLogSegmentsForEpoch(tp, leaderEpoch);
  }

  async remoteLogSize(tp: TopicIdPartition, leaderEpoch: number): Promise<bigint> {
    return this.readyStore().remoteLogSize(tp, leaderEpoch);
  }

  /** The metadata partition that holds the partition's events (Kafka's metadataPartition). */
  metadataPartition(tp: TopicIdPartition): number {
    return this.ensureUsable().partitioner.metadataPartition(tp);
  }

  /** Offset of the last record read from a metadata partition, or null (Kafka's readOffsetForPartition). */
  readOffsetForPartition(partition: number): bigint | null {
    const s = this.metadataPartitions.get(partition);
    return s && s.readOffset >= 0n ? s.readOffset : null;
  }
}
