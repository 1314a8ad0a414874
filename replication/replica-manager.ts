/**
 * The broker's partitions and the two data paths through them: appendRecords (Produce, and the
 * group and transaction coordinators' writes to their internal topics, which only they may write)
 * and fetchMessages (consumer and follower Fetch). Owns the produce and fetch purgatories: an
 * acks=-1 produce waits until the high watermark passes its last offset, a fetch waits until
 * min_bytes are available, each with its own timeout, and each is woken by the append or HWM
 * change that can complete it (no polling). DeleteRecords moves the leader's log start offset at
 * once and waits in its own purgatory until every alive replica's log start offset reached it
 * (Kafka's DelayedDeleteRecords), woken by the follower fetches that report it. A client's
 * transactional batch that would start a
 * transaction in a partition is first verified with the producer's transaction coordinator
 * (KIP-890, the TransactionVerifier) when transaction.partition.verification.enable is on; from
 * Produce v12 (KIP-890 part 2) the coordinator is asked to add the partition to the transaction
 * instead (the producer sends no AddPartitionsToTxn), whatever that setting says.
 *
 * Partitions are created and dropped only by applying controller metadata (`applyDelta`), so the
 * set of local logs always matches the committed metadata; a hosted partition whose log cannot be
 * opened is kept offline (KAFKA_STORAGE_ERROR) without failing the others. The same deltas make a
 * partition the leader (follower state reset, leader epoch start offset recorded) or a follower
 * (handed to the replica fetchers, which truncate first). On the leader, follower Fetch requests
 * update follower state (ISR expansion, HWM), and a periodic task (replica.lag.time.max.ms / 2)
 * shrinks ISRs; ISR changes go to the controller through the AlterPartitionManager. Replication
 * throttles (`replicationQuotas`, replication-quota-manager.ts): a follower fetch gets no records
 * for a leader-throttled partition whose follower is outside the ISR while the leader quota is
 * exceeded (its state is still updated, the partition answered without error), such partitions do
 * not count towards a parked follower fetch's min_bytes, and the throttled bytes of every follower
 * fetch answer are recorded; the follower quota goes to the fetchers. Fetchers, ISR
 * task and AlterPartitionManager exist only on a cluster broker (`replication` options); a
 * combined single node has no followers. AlterReplicaLogDirs moves a hosted replica to another log
 * directory through the ReplicaAlterLogDirsManager (started here, and again at startup for moves
 * a stop or crash interrupted); a finished move replaces the partition's log in place.
 */
import { ErrorCode, KafkaError, errorName, toErrorCode } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { LogManager } from '../storage/log-manager';
import { ReadBufferPool } from '../storage/read-buffer-pool';
import type { LogConfig } from '../storage/log-config';
import type { VerificationGuard } from '../storage/producer-state-manager';
import { RECORD_BATCH_OVERHEAD, RecordBatch } from '../protocol/records/record-batch';
import type { MetadataCache, MetadataDelta } from '../metadata/metadata-cache';
import * as path from 'node:path';
import { ReplicaAlterLogDirsManager } from './replica-alter-log-dirs-manager';
import { Partition, type AlterPartitionItem, type AlterPartitionOutcome, type FetchIsolation, type PartitionContext } from './partition';
import { AlterPartitionManager, type AlterPartitionTransport } from './alter-partition-manager';
import { ReplicaFetcherManager, type FetcherConfig } from './replica-fetcher';
import type { ReplicaQuota } from './replication-quota-manager';
import { DelayedOperation, DelayedOperationPurgatory } from './delayed/purgatory';
import { DelayedDeleteRecords, type DeleteRecordsPartitionStatus } from './delayed/delayed-delete-records';
import { isInternalTopic } from '../metadata/topic-name';
import { topicPartitionKey } from '../common/topic-partition';
import type { RemoteLogManager } from '../storage/remote/remote-log-manager';
import type { TopicIdPartition } from '../storage/remote/remote-log-segment-metadata';

/**
 * What replication uses of tiered storage: remote reads and their quota, the tasks that follow
 * leadership, and what a follower needs to rebuild from remote storage. The remote log manager has
 * this shape; a broker hands in its BrokerTieredStorage, which exists before the plugins are loaded.
 */
export type RemoteLogAccess = Pick<RemoteLogManager, 'read' | 'fetchThrottleTimeMs' | 'onLeadershipChange' | 'stopPartitions' | 'remoteLogSegmentMetadataFor' | 'fetchIndex'>;

export interface ProducePartitionRequest {
  topic: string;
  partition: number;
  records: Buffer;
}

export interface ProducePartitionResult {
  topic: string;
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

export interface AppendOptions {
  timeoutMs: number;
  requiredAcks: number;
  entries: ProducePartitionRequest[];
  /** Coordinators may write internal topics; clients may not. */
  internalTopicsAllowed: boolean;
  /** Produce request version, when the append comes from a client. */
  requestVersion?: number;
  /** Produce v3+: the producer's transactional id (verification of transactional batches). */
  transactionalId?: string | null;
}

/**
 * How a partition leader asks a transactional id's coordinator whether partitions are part of the
 * producer's ongoing transaction (AddPartitionsToTxn v4+ with verify_only, KIP-890), or, with
 * `addPartitions` (Produce v12, TxnOffsetCommit v5: KIP-890 part 2), to add them to it
 * (AddPartitionsToTxn v5 without verify_only). Resolves the coordinator's answer per partition
 * (keyed by topicPartitionKey), NETWORK_EXCEPTION when the coordinator could not be asked; never
 * rejects.
 */
export interface TransactionVerifier {
  verify(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: { topic: string; partition: number }[],
    addPartitions?: boolean,
  ): Promise<Map<string, number>>;
}

/** Produce v12 (KIP-890 part 2): the partition leader adds the partition to the transaction. */
export const PRODUCE_ADDS_PARTITIONS_VERSION = 12;

/**
 * A failed verification as the producer should see it (Kafka's ReplicaManager and
 * AddPartitionsToTxnManager): a fenced producer gets INVALID_PRODUCER_EPOCH; a partition that is not
 * in the transaction INVALID_TXN_STATE (TRANSACTION_ABORTABLE from Produce v11, the version that
 * knows it); coordinator trouble NOT_ENOUGH_REPLICAS, which every client retries without a
 * metadata refresh.
 */
export function verificationErrorToProduceError(code: number, produceVersion: number): number {
  switch (code) {
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH;
    case ErrorCode.TRANSACTION_ABORTABLE:
      return produceVersion >= 11 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE;
    case ErrorCode.CONCURRENT_TRANSACTIONS:
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_ENOUGH_REPLICAS;
    default:
      return code;
  }
}

export interface FetchPartitionRequest {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  /** Follower fetches (v12+): the epoch of the follower's last record; -1 when not sent. */
  lastFetchedEpoch?: number;
  /** Follower fetches: the follower's log start offset. */
  logStartOffset?: bigint;
}

export interface FetchParams {
  replicaId: number;
  /** The follower's broker epoch (replica_state, v15+); -1 when not sent. */
  replicaEpoch?: bigint;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolation: FetchIsolation;
  partitions: FetchPartitionRequest[];
}

export interface FetchPartitionResult {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  records: Buffer[];
  recordsSize: number;
  /** Gives the read buffer back to the pool: call once the records have been written out. */
  release?: () => void;
  /** Follower fetch whose last fetched epoch diverges from the leader's log (v12+). */
  divergingEpoch?: { epoch: number; endOffset: bigint };
  /** read_committed: aborted transactions overlapping the returned records, by first offset. */
  abortedTransactions?: { producerId: bigint; firstOffset: bigint }[];
  /** A consumer fetch below a tiered log's local start: what to read from remote storage (filled by fetchMessages). */
  remoteFetch?: { fetchOffset: bigint; maxBytes: number; minOneMessage: boolean };
}

/** What replication needs beyond a single broker (absent: a combined single node). */
export interface ReplicationOptions {
  /** This broker's epoch (BrokerRegistration), sent with ISR changes and follower fetches. */
  brokerEpoch: () => bigint;
  replicaLagTimeMaxMs: () => number;
  fetcher: FetcherConfig;
  /** How AlterPartition reaches the controller. */
  alterPartition: AlterPartitionTransport;
  /** The inter-broker endpoint of a broker (follower fetches connect there). */
  endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  /** Told about every ISR change a leader here proposes (tests and metrics). */
  onIsrChangeProposed?: (topic: string, partition: number, kind: 'expand' | 'shrink', isr: number[]) => void;
  /** Every ISR change of a partition led here that the controller committed (metrics). */
  onIsrChangeCommitted?: (kind: 'expand' | 'shrink') => void;
  /** The bytes of every batch set a follower here appended (metrics). */
  onFollowerAppend?: (bytes: number) => void;
}

export interface ReplicaManagerOptions {
  brokerId: number;
  logManager: LogManager;
  metadata: MetadataCache;
  logger: Logger;
  /** The effective config of a topic (broker defaults + topic overrides). */
  logConfig: (topic: string) => LogConfig;
  minInsyncReplicas: (topic: string) => number;
  replication?: ReplicationOptions;
  /** transaction.partition.verification.enable, read at each produce. */
  transactionVerificationEnabled?: () => boolean;
  /** Asks transaction coordinators (absent: no verification). */
  transactionVerifier?: TransactionVerifier;
  /**
   * Replication throttles (replication-quota-manager.ts): `leader` holds back data for throttled
   * replicas outside the ISR in follower fetches served here, `follower` holds back this broker's
   * fetches of throttled partitions that are not caught up. Absent: nothing is throttled.
   */
  replicationQuotas?: { leader: ReplicaQuota; follower: ReplicaQuota };
  /** Clock (tests). */
  now?: () => number;
  /** num.replica.alter.log.dirs.threads (default: the number of log directories). */
  alterLogDirsThreads?: number;
  /** replica.fetch.max.bytes: the most a replica move copies per step (default 1 MiB). */
  replicaFetchMaxBytes?: number;
  /** Tiered storage (remote.log.storage.system.enable): remote reads, and the tasks that follow leadership. */
  remoteLogManager?: RemoteLogAccess;
  /** remote.fetch.max.wait.ms: the longest a fetch waits for its remote reads. */
  remoteFetchMaxWaitMs?: () => number;
}

/** The remote log manager's key for a hosted partition. */
function topicIdPartition(p: { topic: string; partition: number; topicId: string }): TopicIdPartition {
  return { topicId: p.topicId, topic: p.topic, partition: p.partition };
}

/** What verifyTransactionalEntries found: whether verification applies, the guards handed out, the indexes refused. */
interface Verification {
  required: boolean;
  guards: Map<number, VerificationGuard>;
  failed: Set<number>;
}

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  /** Hosted partitions whose log could not be opened (offline directory, unloadable files): key -> why. */
  private readonly offlinePartitions = new Map<string, string>();
  private readonly producePurgatory = new DelayedOperationPurgatory<DelayedProduce>('Produce');
  /** Consumer fetch reads go into reused buffers (see storage/read-buffer-pool.ts). */
  private readonly readPool = new ReadBufferPool();
  private readonly fetchPurgatory = new DelayedOperationPurgatory<DelayedFetch>('Fetch');
  private readonly deleteRecordsPurgatory = new DelayedOperationPurgatory<DelayedDeleteRecords>('DeleteRecords');
  private readonly log: Logger;
  private closed = false;
  /** Follower replication (null on a combined single node, which has no followers). */
  readonly fetcherManager: ReplicaFetcherManager | null;
  readonly alterPartitionManager: AlterPartitionManager | null;
  private readonly partitionContext: PartitionContext;
  private isrTimer: NodeJS.Timeout | null = null;
  /** Replica moves between this broker's log directories (AlterReplicaLogDirs). */
  readonly alterLogDirsManager: ReplicaAlterLogDirsManager;

  constructor(private readonly opts: ReplicaManagerOptions) {
    this.log = opts.logger;
    const r = opts.replication;
    const now = opts.now ?? Date.now;
    this.alterPartitionManager = r ? new AlterPartitionManager(opts.brokerId, r.brokerEpoch, r.alterPartition, this.log.child('alter-partition')) : null;
    this.fetcherManager = r
      ? new ReplicaFetcherManager(
          {
            nodeId: opts.brokerId,
            brokerEpoch: r.brokerEpoch,
            partition: (topic, partition) => this.partitions.get(topicPartitionKey(topic, partition)),
            endpointOf: r.endpointOf,
            logger: this.log.child('replica-fetcher'),
            tiered: opts.remoteLogManager,
            quota: opts.replicationQuotas?.follower,
          },
          r.fetcher,
        )
      : null;
    this.partitionContext = {
      now,
      replicaLagTimeMaxMs: () => r?.replicaLagTimeMaxMs() ?? 30_000,
      minInsyncReplicas: (topic) => opts.minInsyncReplicas(topic),
      isReplicaIsrEligible: (brokerId, fetchedEpoch) => {
        const b = opts.metadata.broker(brokerId);
        return b !== undefined && !b.fenced && !b.inControlledShutdown && (fetchedEpoch === null || fetchedEpoch === -1n || fetchedEpoch === b.epoch);
      },
      cachedBrokerEpoch: (brokerId) => opts.metadata.broker(brokerId)?.epoch,
      localBrokerEpoch: () => r?.brokerEpoch() ?? -1n,
      submitAlterPartition: (item: AlterPartitionItem): Promise<AlterPartitionOutcome> =>
        this.alterPartitionManager ? this.alterPartitionManager.submit(item) : Promise.resolve({ ok: false, errorCode: ErrorCode.OPERATION_NOT_ATTEMPTED }),
      onHighWatermarkChanged: (p) => this.onHighWatermarkChanged(p),
      isBrokerAlive: (brokerId) => {
        const b = opts.metadata.broker(brokerId);
        return b !== undefined && !b.fenced;
      },
      onLowWatermarkChanged: (p) => this.deleteRecordsPurgatory.checkAndComplete(p.key),
      onIsrChangeProposed: (p, kind, isr) => r?.onIsrChangeProposed?.(p.topic, p.partition, kind, isr),
      onIsrChangeCommitted: (_p, kind) => r?.onIsrChangeCommitted?.(kind),
      onFollowerAppend: (bytes) => r?.onFollowerAppend?.(bytes),
      onLogAppend: (p) => this.alterLogDirsManager.wake(p.topic, p.partition),
      info: (msg) => this.log.info(msg),
    };
    this.alterLogDirsManager = new ReplicaAlterLogDirsManager({
      logManager: opts.logManager,
      partition: (topic, partition) => this.partitions.get(topicPartitionKey(topic, partition)),
      logger: this.log.child('alter-log-dirs'),
      threads: opts.alterLogDirsThreads ?? Math.max(1, opts.logManager.logDirs.length),
      maxBytes: opts.replicaFetchMaxBytes ?? 1_048_576,
      onMoved: (p) => {
        // Parked fetches and produces read the partition's log again (the new one).
        this.fetchPurgatory.checkAndComplete(p.key);
        this.producePurgatory.checkAndComplete(p.key);
      },
    });
  }

  /**
   * AlterReplicaLogDirs (Kafka's ReplicaManager.alterReplicaLogDirs): per partition, NONE once its
   * move to `dir` has started (or there is nothing to move); INVALID_TOPIC_EXCEPTION when the future
   * directory name would exceed 255 characters; LOG_DIR_NOT_FOUND when `dir` is not one of log.dirs;
   * KAFKA_STORAGE_ERROR when it (or the partition's log) is offline, or any directory is (no future
   * log is created then); REPLICA_NOT_AVAILABLE when the metadata has the partition but this broker
   * hosts no replica of it, UNKNOWN_TOPIC_OR_PARTITION when the metadata has no such partition. A
   * partition not hosted here gets `dir` recorded as where its log will be created. A move already
   * running to another directory is cancelled first (its future replica removed); one to the same
   * directory continues.
   */
  alterReplicaLogDirs(entries: readonly { topic: string; partition: number; dir: string }[]): { topic: string; partition: number; errorCode: number }[] {
    const lm = this.opts.logManager;
    return entries.map(({ topic, partition, dir }) => {
      const result = (errorCode: number) => ({ topic, partition, errorCode });
      try {
        if (`${topic}-${partition}.${'0'.repeat(32)}-future`.length > 255) {
          throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, 'The topic name is too long.');
        }
        if (!lm.isLogDirOnline(dir)) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `Log directory ${dir} is offline`);
        const hosted = this.partitions.get(topicPartitionKey(topic, partition));
        const future = lm.getFutureLog(topic, partition);
        if (hosted && future && path.resolve(future.parentDir) !== path.resolve(dir)) {
          this.alterLogDirsManager.removePartition(topic, partition);
          lm.removeFutureLog(topic, partition);
        }
        if (!hosted && this.offlinePartitions.has(topicPartitionKey(topic, partition))) {
          throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `Partition ${topic}-${partition} is offline`);
        }
        lm.maybeUpdatePreferredLogDir(topic, partition, dir);
        this.hostedPartitionOrThrow(topic, partition);
        if (lm.getOrCreateFutureLog(topic, partition, dir)) this.alterLogDirsManager.addPartition(topic, partition);
        return result(ErrorCode.NONE);
      } catch (err) {
        if (!(err instanceof KafkaError)) {
          this.log.error(`Error while changing replica dir for partition ${topic}-${partition}`, { err });
          return result(ErrorCode.UNKNOWN_SERVER_ERROR);
        }
        this.log.warn(`Unable to alter log dirs for ${topic}-${partition}: ${err.message}`);
        // Kafka keeps REPLICA_NOT_AVAILABLE here for compatibility (NOT_LEADER_OR_FOLLOWER elsewhere).
        return result(err.code === ErrorCode.NOT_LEADER_OR_FOLLOWER ? ErrorCode.REPLICA_NOT_AVAILABLE : err.code);
      }
    });
  }

  /** Starts the ISR expiration task (replica.lag.time.max.ms / 2), unref'd, stopped by shutdown(). */
  startup(): void {
    const r = this.opts.replication;
    if (!r || this.isrTimer || this.closed) return;
    const every = Math.max(10, Math.floor(r.replicaLagTimeMaxMs() / 2));
    this.isrTimer = setInterval(() => this.maybeShrinkIsrs(), every);
    this.isrTimer.unref();
  }

  private maybeShrinkIsrs(): void {
    for (const p of this.partitions.values()) {
      if (!p.isLeader) continue;
      try {
        p.maybeShrinkIsr();
      } catch (err) {
        this.log.error('ISR check failed', { topic: p.topic, partition: p.partition, err });
      }
    }
  }

  /** The fault hook behind "slow a broker": every follower fetch of this broker waits `ms` first. */
  setFollowerFetchDelay(ms: number): void {
    if (this.fetcherManager) this.fetcherManager.fetchDelayMs = Math.max(0, ms);
  }

  getPartition(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(topicPartitionKey(topic, partition));
  }

  /**
   * The partition if this broker hosts a replica of it (leader or follower) and its log is online;
   * otherwise KAFKA_STORAGE_ERROR (its log or log directory is offline), NOT_LEADER_OR_FOLLOWER (the metadata has it, this
   * broker does not host it) or UNKNOWN_TOPIC_OR_PARTITION.
   */
  hostedPartitionOrThrow(topic: string, partition: number): Partition {
    const p = this.partitions.get(topicPartitionKey(topic, partition));
    if (p) {
      // A log whose directory failed serves nothing, not even offsets kept in memory (Kafka's offline partition).
      if (p.log.isOffline) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `the log of ${p.name} is offline`);
      return p;
    }
    const offline = this.offlinePartitions.get(topicPartitionKey(topic, partition));
    if (offline !== undefined) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, offline);
    if (this.opts.metadata.partition(topic, partition)) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.opts.brokerId} does not host ${topic}-${partition}`);
    }
    throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${topic}-${partition}`);
  }

  /**
   * The partition if this broker leads it; otherwise the error a client gets:
   * UNKNOWN_TOPIC_OR_PARTITION if the metadata has no such partition, NOT_LEADER_OR_FOLLOWER if
   * another broker (or none) leads it.
   */
  leaderPartitionOrThrow(topic: string, partition: number): Partition {
    const p = this.hostedPartitionOrThrow(topic, partition);
    if (!p.isLeader) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `broker ${this.opts.brokerId} is not the leader of ${p.name}`);
    }
    return p;
  }

  /**
   * Creates, updates and removes local partitions to match committed metadata. `existingPartitions`
   * (the replay at startup) means the partitions were hosted before: a missing log is then not
   * created while a log directory is offline. A partition whose log cannot be opened is offline
   * (KAFKA_STORAGE_ERROR to clients); it never fails the others or the broker.
   */
  applyDelta(delta: MetadataDelta, opts: { existingPartitions?: boolean } = {}): void {
    const rlm = this.opts.remoteLogManager;
    const remoteLeaders: TopicIdPartition[] = [];
    const remoteFollowers: TopicIdPartition[] = [];
    for (const removed of delta.removedTopics) {
      for (const partition of removed.partitions) {
        const key = topicPartitionKey(removed.name, partition);
        this.offlinePartitions.delete(key);
        const p = this.partitions.get(key);
        if (!p) continue;
        // A deleted topic's remote data goes with it (Kafka's stopPartitions with deleteRemoteLog).
        if (rlm && p.log.remoteLogEnabled()) rlm.stopPartitions([topicIdPartition(p)], { deleteRemoteLog: true });
        this.partitions.delete(key);
        this.fetcherManager?.removePartition(removed.name, partition);
        this.alterLogDirsManager.removePartition(removed.name, partition);
        try {
          this.opts.logManager.deleteLog(removed.name, partition);
        } catch (err) {
          this.log.error('failed to delete the log of a removed topic', { topic: removed.name, partition, err });
        }
        this.fetchPurgatory.checkAndComplete(key);
        this.producePurgatory.checkAndComplete(key);
        this.deleteRecordsPurgatory.checkAndComplete(key);
      }
    }
    for (const state of delta.changedPartitions) {
      const key = topicPartitionKey(state.topic, state.partition);
      if (!state.replicas.includes(this.opts.brokerId)) {
        // No longer (or never) a replica here.
        const gone = this.partitions.get(key);
        if (gone) {
          if (rlm && gone.log.remoteLogEnabled()) rlm.stopPartitions([topicIdPartition(gone)], { deleteRemoteLog: false });
          this.partitions.delete(key);
          this.fetcherManager?.removePartition(state.topic, state.partition);
          this.alterLogDirsManager.removePartition(state.topic, state.partition);
          this.opts.logManager.deleteLog(state.topic, state.partition);
        }
        continue;
      }
      let p = this.partitions.get(key);
      if (!p) {
        let log;
        try {
          log = this.opts.logManager.getOrCreateLog(state.topic, state.partition, state.topicId, this.opts.logConfig(state.topic), {
            isNew: !opts.existingPartitions,
          });
        } catch (err) {
          const reason = `partition ${key} is offline: ${err instanceof Error ? err.message : String(err)}`;
          this.offlinePartitions.set(key, reason);
          this.log.error('partition is offline: its log cannot be opened', { topic: state.topic, partition: state.partition, err: reason });
          continue;
        }
        this.offlinePartitions.delete(key);
        p = new Partition(state.topic, state.partition, state.topicId, this.opts.brokerId, log, this.partitionContext);
        this.partitions.set(key, p);
        // A move interrupted by a stop or crash resumes from its future replica's log end offset.
        if (this.opts.logManager.getFutureLog(state.topic, state.partition)) this.alterLogDirsManager.addPartition(state.topic, state.partition);
      }
      const change = p.applyState(state);
      if (this.fetcherManager) {
        if (p.isLeader || p.leaderId < 0) this.fetcherManager.removePartition(p.topic, p.partition);
        else if (change.isNewLeaderEpoch || !this.fetcherManager.isFetching(p.topic, p.partition)) this.fetcherManager.addPartition(p);
      }
      if (rlm && p.log.remoteLogEnabled() && change.isNewLeaderEpoch) {
        if (p.isLeader) remoteLeaders.push(topicIdPartition(p));
        else if (p.leaderId >= 0) remoteFollowers.push(topicIdPartition(p));
      }
      this.producePurgatory.checkAndComplete(key);
      this.fetchPurgatory.checkAndComplete(key);
      this.deleteRecordsPurgatory.checkAndComplete(key);
    }
    if (this.fetcherManager) for (const id of delta.changedBrokers) this.fetcherManager.onBrokerChanged(id);
    for (const topic of delta.changedTopicConfigs) {
      const t = this.opts.metadata.topic(topic);
      if (!t) continue;
      const cfg = this.opts.logConfig(topic);
      for (const partition of t.partitions.keys()) {
        const p = this.partitions.get(topicPartitionKey(topic, partition));
        if (!p) continue;
        const wasTiered = p.log.remoteLogEnabled();
        const localStart = p.log.localLogStartOffset;
        p.log.updateConfig(cfg);
        const tiered = p.log.remoteLogEnabled();
        // remote.storage.enable turned on for an existing topic: its tasks start now
        if (rlm && !wasTiered && tiered) {
          if (p.isLeader) remoteLeaders.push(topicIdPartition(p));
          else if (p.leaderId >= 0) remoteFollowers.push(topicIdPartition(p));
        }
        // Turned off (which requires remote.log.delete.on.disable=true, config/log-config-from.ts):
        // the tasks stop, the leader deletes the remote data, and the log now starts where its
        // local segments do.
        if (wasTiered && !tiered) {
          void rlm?.stopPartitions([topicIdPartition(p)], { deleteRemoteLog: p.isLeader && cfg.remoteLogDeleteOnDisable });
          if (localStart > p.log.logStartOffset && localStart <= p.log.highWatermark) p.log.maybeIncrementLogStartOffset(localStart, 'SegmentDeletion');
        }
      }
    }
    if (rlm && (remoteLeaders.length > 0 || remoteFollowers.length > 0)) rlm.onLeadershipChange(remoteLeaders, remoteFollowers);
  }

  async appendRecords(opts: AppendOptions): Promise<ProducePartitionResult[]> {
    const results: ProducePartitionResult[] = opts.entries.map((e) => ({
      topic: e.topic,
      partition: e.partition,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      baseOffset: -1n,
      logAppendTimeMs: -1n,
      logStartOffset: -1n,
      recordErrors: [],
    }));
    if (opts.requiredAcks !== -1 && opts.requiredAcks !== 0 && opts.requiredAcks !== 1) {
      for (const r of results) r.errorCode = ErrorCode.INVALID_REQUIRED_ACKS;
      return results;
    }
    // Most produce requests need no verification: then the append runs now, without a microtask hop.
    const pendingVerification = this.verifyTransactionalEntries(opts, results);
    const verification = pendingVerification instanceof Promise ? await pendingVerification : pendingVerification;
    const waiting: { result: ProducePartitionResult; partition: Partition; requiredOffset: bigint }[] = [];
    opts.entries.forEach((entry, i) => {
      const result = results[i];
      if (verification.failed.has(i)) return;
      try {
        if (isInternalTopic(entry.topic) && !opts.internalTopicsAllowed) {
          throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${entry.topic}`);
        }
        const p = this.leaderPartitionOrThrow(entry.topic, entry.partition);
        const hwBefore = p.log.highWatermark;
        const info = p.appendRecordsToLeader(entry.records, opts.requiredAcks, this.opts.minInsyncReplicas(entry.topic), {
          origin: opts.internalTopicsAllowed ? 'coordinator' : 'client',
          requestVersion: opts.requestVersion,
          verificationRequired: verification.required,
          verificationGuard: verification.guards.get(i),
        });
        result.baseOffset = info.firstOffset;
        result.logAppendTimeMs = info.logAppendTime;
        result.logStartOffset = info.logStartOffset;
        if (opts.requiredAcks === -1) waiting.push({ result, partition: p, requiredOffset: info.lastOffset + 1n });
        // Waiting fetches are checked once per append (Kafka's addCompletePurgatoryAction): a
        // moved high watermark already checked them (onHighWatermarkChanged, after the append).
        if (p.log.highWatermark === hwBefore) this.fetchPurgatory.checkAndComplete(p.key);
      } catch (err) {
        result.errorCode = toErrorCode(err);
        result.errorMessage = err instanceof KafkaError ? err.message : null;
        if (err instanceof KafkaError && err.recordErrors) result.recordErrors = err.recordErrors;
        if (!(err instanceof KafkaError)) {
          this.log.error('append failed', { topic: entry.topic, partition: entry.partition, err });
        } else if (err.code === ErrorCode.KAFKA_STORAGE_ERROR) {
          this.log.error('append failed with a storage error', { topic: entry.topic, partition: entry.partition, err: err.message });
        }
      }
    });
    if (waiting.length === 0 || this.closed) return results;
    await new Promise<void>((resolve) => {
      const op = new DelayedProduce(opts.timeoutMs, waiting, (topic) => this.opts.minInsyncReplicas(topic), resolve);
      this.producePurgatory.tryCompleteElseWatch(op, waiting.map((w) => w.partition.key));
    });
    return results;
  }

  /**
   * KIP-890 part 1: before a transactional batch may start a transaction in a partition, the
   * producer's coordinator confirms the partition is in its transaction; part 2 (Produce v12): the
   * coordinator adds it. The guard each partition hands out goes with the append, which re-checks
   * it (a marker in between voids it). Partitions whose verification failed get their error in
   * `results` and are not appended.
   */
  private verifyTransactionalEntries(
    opts: AppendOptions,
    results: ProducePartitionResult[],
  ): Verification | Promise<Verification> {
    const guards = new Map<number, VerificationGuard>();
    const failed = new Set<number>();
    const addPartitions = !opts.internalTopicsAllowed && (opts.requestVersion ?? 0) >= PRODUCE_ADDS_PARTITIONS_VERSION;
    const required = addPartitions || (!opts.internalTopicsAllowed && (this.opts.transactionVerificationEnabled?.() ?? false));
    const verifier = this.opts.transactionVerifier;
    if (!required || !verifier || !opts.transactionalId) return { required, guards, failed };
    const pending = new Map<string, { producerId: bigint; producerEpoch: number; items: { index: number; topic: string; partition: number }[] }>();
    opts.entries.forEach((entry, i) => {
      if (entry.records.length < RECORD_BATCH_OVERHEAD) return;
      const rb = new RecordBatch(entry.records, 0);
      if (!rb.isTransactional || rb.isControlBatch || rb.producerId < 0n) return;
      const p = this.partitions.get(topicPartitionKey(entry.topic, entry.partition));
      if (!p || !p.isLeader || p.log.isOffline) return; // the append reports why
      const guard = p.log.maybeStartTransactionVerification(rb.producerId, rb.baseSequence, rb.producerEpoch);
      if (!guard) return; // its transaction is already open here
      guards.set(i, guard);
      const key = `${rb.producerId}/${rb.producerEpoch}`;
      let group = pending.get(key);
      if (!group) pending.set(key, (group = { producerId: rb.producerId, producerEpoch: rb.producerEpoch, items: [] }));
      group.items.push({ index: i, topic: entry.topic, partition: entry.partition });
    });
    if (pending.size === 0) return { required, guards, failed };
    return this.awaitVerifications(opts, results, addPartitions, pending, { required, guards, failed });
  }

  /** The asynchronous half of verifyTransactionalEntries: asks the coordinators, records the refusals. */
  private async awaitVerifications(
    opts: AppendOptions,
    results: ProducePartitionResult[],
    addPartitions: boolean,
    pending: Map<string, { producerId: bigint; producerEpoch: number; items: { index: number; topic: string; partition: number }[] }>,
    out: Verification,
  ): Promise<Verification> {
    const verifier = this.opts.transactionVerifier!;
    const { guards, failed } = out;
    await Promise.all(
      [...pending.values()].map(async (g) => {
        const answers = await verifier.verify(opts.transactionalId!, g.producerId, g.producerEpoch, g.items, addPartitions);
        for (const it of g.items) {
          const code = answers.get(topicPartitionKey(it.topic, it.partition)) ?? ErrorCode.NETWORK_EXCEPTION;
          if (code === ErrorCode.NONE) continue;
          failed.add(it.index);
          guards.delete(it.index);
          const r = results[it.index];
          r.errorCode = verificationErrorToProduceError(code, opts.requestVersion ?? 0);
          r.errorMessage = addPartitions
            ? `unable to add ${it.topic}-${it.partition} to the transaction of ${opts.transactionalId}: ${errorName(code)}`
            : `unable to verify that ${it.topic}-${it.partition} is part of the transaction of ${opts.transactionalId}: ${errorName(code)}`;
          this.log.debug('transaction verification failed', { topic: it.topic, partition: it.partition, transactionalId: opts.transactionalId, error: errorName(code) });
        }
      }),
    );
    return out;
  }

  /**
   * DeleteRecords (Kafka's ReplicaManager.deleteRecords): each partition's log start offset moves
   * on this leader at once (an internal topic: INVALID_TOPIC_EXCEPTION; not led here, offline,
   * policy, offset out of range: their errors); the answer waits, up to `timeoutMs`, until the low
   * watermark of every accepted partition reached the requested offset (REQUEST_TIMED_OUT with the
   * low watermark of the moment it was accepted, if it does not). One entry per partition, in
   * the order given; the caller passes each partition once.
   */
  async deleteRecords(timeoutMs: number, entries: { topic: string; partition: number; offset: bigint }[]): Promise<{ topic: string; partition: number; errorCode: number; lowWatermark: bigint }[]> {
    const status: DeleteRecordsPartitionStatus[] = entries.map((e) => {
      const s: DeleteRecordsPartitionStatus = { topic: e.topic, partition: e.partition, requiredOffset: -1n, errorCode: ErrorCode.NONE, lowWatermark: -1n };
      try {
        if (isInternalTopic(e.topic)) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot delete records of internal topic ${e.topic}`);
        const r = this.hostedPartitionOrThrow(e.topic, e.partition).deleteRecordsOnLeader(e.offset);
        s.requiredOffset = r.requestedOffset;
        s.lowWatermark = r.lowWatermark;
      } catch (err) {
        s.errorCode = toErrorCode(err);
        if (!(err instanceof KafkaError)) this.log.error('DeleteRecords failed', { topic: e.topic, partition: e.partition, err });
      }
      return s;
    });
    const answer = () => status.map((s) => ({ topic: s.topic, partition: s.partition, errorCode: s.errorCode, lowWatermark: s.lowWatermark }));
    if (this.closed || !status.some((s) => s.errorCode === ErrorCode.NONE && s.lowWatermark < s.requiredOffset)) return answer();
    await new Promise<void>((resolve) => {
      const op = new DelayedDeleteRecords(timeoutMs, status, (topic, partition) => this.lowWatermarkOf(topic, partition), () => resolve());
      this.deleteRecordsPurgatory.tryCompleteElseWatch(op, status.map((s) => topicPartitionKey(s.topic, s.partition)));
    });
    return answer();
  }

  /** The low watermark of a partition led here, or why a waiting DeleteRecords stops waiting for it. */
  private lowWatermarkOf(topic: string, partition: number): { lowWatermark: bigint } | { errorCode: number } {
    const p = this.partitions.get(topicPartitionKey(topic, partition));
    if (!p) return { errorCode: this.offlinePartitions.has(topicPartitionKey(topic, partition)) ? ErrorCode.KAFKA_STORAGE_ERROR : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
    if (p.log.isOffline) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
    if (!p.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    return { lowWatermark: p.lowWatermarkIfLeader };
  }

  /** Called when a partition's HWM may have moved (follower fetch, ISR change). */
  onHighWatermarkChanged(p: Partition): void {
    this.producePurgatory.checkAndComplete(p.key);
    this.fetchPurgatory.checkAndComplete(p.key);
  }

  async fetchMessages(params: FetchParams): Promise<FetchPartitionResult[]> {
    // Only the first read of a follower fetch updates its state (Kafka: not the purgatory's re-read).
    const first = this.readFromLocalLog(params, true);
    // Partitions to read from remote storage: the fetch answers once every remote read is done,
    // or at remote.fetch.max.wait.ms with what has arrived (Kafka's DelayedRemoteFetch), for
    // every such partition of the request, not only the first.
    if (first.some((r) => r.remoteFetch)) return this.completeRemoteFetches(params, first);
    const bytes = first.reduce((n, r) => n + r.recordsSize, 0);
    const anyError = first.some((r) => r.errorCode !== ErrorCode.NONE || r.divergingEpoch !== undefined);
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || anyError || params.partitions.length === 0 || this.closed) {
      return this.recordLeaderReplication(params, first);
    }
    // The parked fetch reads again when it completes: this first read's buffers go back now.
    for (const r of first) r.release?.();
    const done = await new Promise<FetchPartitionResult[]>((resolve) => {
      const op = new DelayedFetch(params, this, resolve);
      this.fetchPurgatory.tryCompleteElseWatch(
        op,
        params.partitions.map((p) => topicPartitionKey(p.topic, p.partition)),
      );
    });
    return this.recordLeaderReplication(params, done);
  }

  /**
   * Kafka's shouldLeaderThrottle: a follower fetch gets no data for a partition that is throttled
   * on this (leader) side, while the leader quota is exceeded, unless the follower is in the ISR.
   */
  private shouldLeaderThrottle(p: Partition, replicaId: number): boolean {
    const quota = this.opts.replicationQuotas?.leader;
    return quota !== undefined && !p.isr.includes(replicaId) && quota.isThrottled(p.topic, p.partition) && quota.isQuotaExceeded();
  }

  /** The bytes of the throttled partitions in a follower fetch's answer go into the leader quota (Kafka: when the response is sent). */
  private recordLeaderReplication(params: FetchParams, results: FetchPartitionResult[]): FetchPartitionResult[] {
    const quota = this.opts.replicationQuotas?.leader;
    if (quota && params.replicaId >= 0) {
      let bytes = 0;
      for (const r of results) if (r.recordsSize > 0 && quota.isThrottled(r.topic, r.partition)) bytes += r.recordsSize;
      quota.record(bytes);
    }
    return results;
  }

  private async completeRemoteFetches(params: FetchParams, results: FetchPartitionResult[]): Promise<FetchPartitionResult[]> {
    const rlm = this.opts.remoteLogManager as RemoteLogAccess;
    const maxWaitMs = this.opts.remoteFetchMaxWaitMs?.() ?? 500;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, maxWaitMs);
      timer.unref?.();
    });
    const reads = results.map(async (r) => {
      const f = r.remoteFetch;
      if (!f) return;
      const p = this.partitions.get(topicPartitionKey(r.topic, r.partition));
      if (!p) return;
      try {
        const info = await rlm.read({ tp: topicIdPartition(p), fetchOffset: f.fetchOffset, maxBytes: f.maxBytes, minOneMessage: f.minOneMessage, readCommitted: params.isolation === 'TXN_COMMITTED' });
        if (!r.remoteFetch) return; // expired meanwhile: the response has gone
        r.records = info.records;
        r.recordsSize = info.sizeInBytes;
        if (info.abortedTransactions) r.abortedTransactions = info.abortedTransactions;
      } catch (err) {
        if (!r.remoteFetch) return;
        // Kafka answers the partition with the read's error (OFFSET_OUT_OF_RANGE, or UNKNOWN_SERVER_ERROR for a remote store failure)
        r.errorCode = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
        this.log.warn(`remote read of ${r.topic}-${r.partition} at ${f.fetchOffset} failed: ${(err as Error).message}`);
      } finally {
        delete r.remoteFetch;
      }
    });
    await Promise.race([Promise.all(reads), expired]);
    clearTimeout(timer);
    // Reads still running are answered empty (Kafka's DelayedRemoteFetch on expiry).
    for (const r of results) delete r.remoteFetch;
    return results;
  }

  /**
   * Reads every requested partition once. The response budget (max_bytes) is shared in request
   * order; the first partition that returns data may exceed it by one batch (KIP-74), so a
   * consumer always makes progress past a batch larger than its limits.
   */
  readFromLocalLog(params: FetchParams, updateFetchState = false): FetchPartitionResult[] {
    let budget = params.maxBytes;
    const fromFollower = params.replicaId >= 0;
    let gotData = false;
    return params.partitions.map((req) => {
      const res: FetchPartitionResult = {
        topic: req.topic,
        partition: req.partition,
        errorCode: ErrorCode.NONE,
        highWatermark: -1n,
        lastStableOffset: -1n,
        logStartOffset: -1n,
        records: [],
        recordsSize: 0,
      };
      try {
        const p = this.leaderPartitionOrThrow(req.topic, req.partition);
        // Decided before the read, which may bring the follower into the ISR.
        const throttled = fromFollower && this.shouldLeaderThrottle(p, params.replicaId);
        const maxBytes = Math.max(0, Math.min(req.partitionMaxBytes, budget));
        const r =
          fromFollower && updateFetchState
            ? p.fetchForFollower({
                replicaId: params.replicaId,
                replicaEpoch: params.replicaEpoch ?? -1n,
                fetchOffset: req.fetchOffset,
                lastFetchedEpoch: req.lastFetchedEpoch ?? -1,
                currentLeaderEpoch: req.currentLeaderEpoch,
                followerLogStartOffset: req.logStartOffset ?? -1n,
                maxBytes,
                minOneMessage: !gotData,
              })
            : p.read(req.fetchOffset, maxBytes, params.isolation, !gotData, req.currentLeaderEpoch, this.readPool);
        if (throttled && r.read.sizeInBytes > 0) {
          // Throttled: the follower's state was updated, it gets no records this round (not an error).
          r.read.release?.();
          r.read = { ...r.read, records: [], sizeInBytes: 0, release: undefined };
        }
        if (r.divergingEpoch) res.divergingEpoch = r.divergingEpoch;
        res.highWatermark = r.highWatermark;
        res.lastStableOffset = r.lastStableOffset;
        res.logStartOffset = r.logStartOffset;
        res.records = r.read.records;
        res.recordsSize = r.read.sizeInBytes;
        res.release = r.read.release;
        if (r.read.abortedTransactions) res.abortedTransactions = r.read.abortedTransactions;
        if (res.recordsSize > 0) gotData = true;
        budget = Math.max(0, budget - res.recordsSize);
      } catch (err) {
        res.errorCode = toErrorCode(err);
        if (!(err instanceof KafkaError)) {
          this.log.error('fetch read failed', { topic: req.topic, partition: req.partition, err });
        } else if (err.code === ErrorCode.OFFSET_OUT_OF_RANGE || err.code === ErrorCode.KAFKA_STORAGE_ERROR) {
          const p = this.partitions.get(topicPartitionKey(req.topic, req.partition));
          if (p) {
            res.highWatermark = p.log.highWatermark;
            res.lastStableOffset = p.log.lastStableOffset;
            res.logStartOffset = p.log.logStartOffset;
            // Below a tiered log's local start but not below its log start: the data is in remote
            // storage. A follower rebuilds from there (OFFSET_MOVED_TO_TIERED_STORAGE); a consumer
            // is served from it, unless the remote fetch quota is spent (then nothing this time).
            const tiered = err.code === ErrorCode.OFFSET_OUT_OF_RANGE && p.log.remoteLogEnabled() && req.fetchOffset >= p.log.logStartOffset && req.fetchOffset < p.log.localLogStartOffset;
            if (tiered && fromFollower) {
              res.errorCode = ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE;
            } else if (tiered && this.opts.remoteLogManager && p.isLeader) {
              res.errorCode = ErrorCode.NONE;
              if (this.opts.remoteLogManager.fetchThrottleTimeMs() <= 0) {
                res.remoteFetch = { fetchOffset: req.fetchOffset, maxBytes: Math.max(0, Math.min(req.partitionMaxBytes, budget)), minOneMessage: !gotData };
              }
            }
          }
          this.log.debug(`fetch ${errorName(err.code)}`, { topic: req.topic, partition: req.partition, offset: req.fetchOffset });
        }
      }
      return res;
    });
  }

  /**
   * Bytes a delayed fetch could now return, without reading them; for a follower, none of a
   * partition the leader quota holds back (Kafka's DelayedFetch), so a throttled follower's fetch
   * waits its max_wait_ms instead of returning empty at once.
   */
  availableBytes(params: FetchParams): { bytes: number; error: boolean } {
    let bytes = 0;
    for (const req of params.partitions) {
      const p = this.partitions.get(topicPartitionKey(req.topic, req.partition));
      if (!p || !p.isLeader) return { bytes, error: true };
      const end =
        params.isolation === 'LOG_END'
          ? p.log.logEndOffset
          : params.isolation === 'HIGH_WATERMARK'
            ? p.log.highWatermark
            : p.log.lastStableOffset;
      if (req.fetchOffset > end || req.fetchOffset < p.log.logStartOffset) return { bytes, error: true };
      if (req.fetchOffset < end && !(params.replicaId >= 0 && this.shouldLeaderThrottle(p, params.replicaId))) bytes += p.log.bytesBetween(req.fetchOffset, end);
    }
    return { bytes, error: false };
  }

  allPartitions(): IterableIterator<Partition> {
    return this.partitions.values();
  }

  /**
   * OffsetForLeaderEpoch on the leader: the end offset of `leaderEpoch` in this log (and the largest
   * epoch <= it), or -1/-1 when unknown; NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
   * UNKNOWN_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION as KafkaErrors.
   */
  lastOffsetForLeaderEpoch(topic: string, partition: number, currentLeaderEpoch: number, leaderEpoch: number): { leaderEpoch: number; endOffset: bigint } {
    return this.leaderPartitionOrThrow(topic, partition).lastOffsetForLeaderEpoch(currentLeaderEpoch, leaderEpoch);
  }

  /** Stops following leaders (before the broker stops serving). */
  async stopReplication(): Promise<void> {
    if (this.isrTimer) clearInterval(this.isrTimer);
    this.isrTimer = null;
    await this.fetcherManager?.shutdown();
    // A move stops between two copy steps; its future replica stays on disk and resumes at the next start.
    await this.alterLogDirsManager.shutdown();
  }

  /** Answers every waiting request with what it has (broker shutdown). */
  shutdown(): void {
    this.closed = true;
    if (this.isrTimer) clearInterval(this.isrTimer);
    this.isrTimer = null;
    void this.fetcherManager?.shutdown();
    void this.alterLogDirsManager.shutdown();
    this.producePurgatory.completeAll();
    this.fetchPurgatory.completeAll();
    this.deleteRecordsPurgatory.completeAll();
  }
}

/** One partition of a parked acks=-1 produce; `settled` once its replicas have answered (or failed). */
interface WaitingPartition {
  result: ProducePartitionResult;
  partition: Partition;
  requiredOffset: bigint;
  settled?: boolean;
}

class DelayedProduce extends DelayedOperation {
  constructor(
    timeoutMs: number,
    private readonly waiting: WaitingPartition[],
    private readonly minIsr: (topic: string) => number,
    private readonly done: () => void,
  ) {
    super(timeoutMs);
  }

  private pending(): boolean {
    for (const w of this.waiting) {
      if (w.result.errorCode !== ErrorCode.NONE || w.settled) continue;
      const state = w.partition.checkEnoughReplicasReachOffset(w.requiredOffset, this.minIsr(w.partition.topic));
      if (!state.done) return true;
      w.settled = true;
      w.result.errorCode = state.errorCode;
    }
    return false;
  }

  tryComplete(): boolean {
    return this.pending() ? false : this.forceComplete();
  }

  protected onComplete(): void {
    for (const w of this.waiting) {
      if (w.result.errorCode === ErrorCode.NONE && !w.settled) {
        w.result.errorCode = ErrorCode.REQUEST_TIMED_OUT;
      }
    }
    this.done();
  }
}

class DelayedFetch extends DelayedOperation {
  constructor(
    private readonly params: FetchParams,
    private readonly rm: ReplicaManager,
    private readonly done: (r: FetchPartitionResult[]) => void,
  ) {
    super(params.maxWaitMs);
  }

  tryComplete(): boolean {
    const { bytes, error } = this.rm.availableBytes(this.params);
    if (error || bytes >= this.params.minBytes) return this.forceComplete();
    return false;
  }

  protected onComplete(): void {
    this.done(this.rm.readFromLocalLog(this.params, false));
  }
}
