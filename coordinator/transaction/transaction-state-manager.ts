/**
 * The transaction coordinator's state (Kafka's TransactionStateManager): which __transaction_state
 * partitions this broker leads, the metadata of every transactional id in them, and the writes
 * that change it.
 *
 * Ownership follows __transaction_state leadership: a transactional id belongs to partition
 * `abs(hash(transactionalId)) % partitions`, and its coordinator epoch is that partition's leader
 * epoch. On election the partition's log is replayed (last record per transactional id wins, a
 * tombstone removes it) while requests for its ids get COORDINATOR_LOAD_IN_PROGRESS; on
 * resignation its ids are dropped and get NOT_COORDINATOR.
 *
 * Invariant: an id's in-memory metadata changes only after the record describing the change is
 * committed to the log (acks=-1), and only if the partition is still led at the same coordinator
 * epoch; otherwise the caller gets NOT_COORDINATOR and the memory state is untouched. What a client
 * was told is therefore always what a new coordinator loads back.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ErrorCode, errorName } from '../../protocol/errors';
import { coordinatorAppendError } from '../coordinator-append-error';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { CompressionType, RECORD_BATCH_OVERHEAD, splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { TRANSACTION_STATE_TOPIC } from '../../config/kafka-config';
import type { Logger } from '../../common/logger';
import type { CoordinatorReplicaManager } from '../group/group-coordinator';
import { partitionForGroup } from '../group/group-partition';
import type { TransactionCoordinatorConfig } from './transaction-coordinator-config';
import { readTransactionLogKeyId, readTransactionLogMetadata, transactionLogKey, transactionLogValue, transactionLogValueVersion } from './transaction-log';
import { FeatureName } from '../../metadata/features';
import { IllegalTransactionStateError, TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata';
import {
  TransactionState,
  isExpirationAllowed,
  transactionStateFromName,
  transactionStateName,
} from './transaction-state';

interface PartitionCache {
  state: 'loading' | 'loaded';
  coordinatorEpoch: number;
  readonly txns: Map<string, TransactionMetadata>;
}

/** An id's metadata with the coordinator epoch it is valid under; `metadata` undefined when unknown. */
export type TxnStateLookup =
  | { errorCode: typeof ErrorCode.NONE; coordinatorEpoch: number; metadata: TransactionMetadata | undefined }
  | { errorCode: number; coordinatorEpoch?: undefined; metadata?: undefined };

export interface TimedOutTransaction {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

export interface ListedTransaction {
  transactionalId: string;
  producerId: bigint;
  transactionState: string;
}

interface ExpiredId {
  md: TransactionMetadata;
  key: Buffer;
  transit: TxnTransitMetadata;
}

/**
 * The most a tombstone record can take in a v2 batch: length, attributes, timestamp delta,
 * offset delta, key length (varints of at most 5 bytes, the deltas well under), the key, a null
 * value and no headers.
 */
function tombstoneSizeUpperBound(key: Buffer): number {
  return 5 + 1 + 5 + 5 + 5 + key.length + 1 + 1;
}

/** A transaction found in PrepareCommit/PrepareAbort by a load: its markers must be (re)sent. */
export interface PendingCompletion {
  transactionalId: string;
  coordinatorEpoch: number;
  commit: boolean;
  metadata: TransactionMetadata;
  completeTransit: TxnTransitMetadata;
}

export interface TransactionStateManagerOptions {
  config: TransactionCoordinatorConfig;
  logger: Logger;
  replicaManager: CoordinatorReplicaManager;
  metadata: MetadataCache;
  now?: () => number;
}

/**
 * Errors of a failed __transaction_state append, as the coordinator's callers should see them
 * (Kafka's appendTransactionToLog mapping).
 */
export function txnAppendErrorToCoordinatorError(code: number): number {
  return coordinatorAppendError(code, ErrorCode.UNKNOWN_SERVER_ERROR);
}

export class TransactionStateManager {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly partitions = new Map<number, PartitionCache>();
  private readonly loads = new Set<Promise<unknown>>();
  private active = false;

  constructor(private readonly opts: TransactionStateManagerOptions) {
    this.log = opts.logger;
    this.now = opts.now ?? Date.now;
  }

  /** How many __transaction_state partitions this broker coordinates, by state, and their transactional ids (metrics). */
  partitionStates(): { loading: number; active: number; transactionalIds: number } {
    let loading = 0;
    let transactionalIds = 0;
    for (const c of this.partitions.values()) {
      if (c.state === 'loading') loading++;
      else transactionalIds += c.txns.size;
    }
    return { loading, active: this.partitions.size - loading, transactionalIds };
  }

  startup(): void {
    this.active = true;
  }

  async shutdown(): Promise<void> {
    this.active = false;
    this.partitions.clear();
    await Promise.all([...this.loads]);
  }

  get isActive(): boolean {
    return this.active;
  }

  /** __transaction_state's partition count: the topic's real count once it exists. */
  numPartitions(): number {
    return this.opts.metadata.topic(TRANSACTION_STATE_TOPIC)?.partitions.size || this.opts.config.transactionLogNumPartitions;
  }

  /** Kafka's `Utils.abs(transactionalId.hashCode) % partitions` (the same function as for groups). */
  partitionFor(transactionalId: string): number {
    return partitionForGroup(transactionalId, this.numPartitions());
  }

  /** Partition ids this broker leads, and whether each is loaded. */
  ownedPartitions(): { partition: number; coordinatorEpoch: number; loaded: boolean }[] {
    return [...this.partitions].map(([partition, c]) => ({ partition, coordinatorEpoch: c.coordinatorEpoch, loaded: c.state === 'loaded' }));
  }

  isLoading(partition: number): boolean {
    return this.partitions.get(partition)?.state === 'loading';
  }

  coordinatorEpochOf(partition: number): number | undefined {
    return this.partitions.get(partition)?.coordinatorEpoch;
  }

  getTransactionState(transactionalId: string): TxnStateLookup {
    return this.lookup(transactionalId, undefined);
  }

  /** The id's metadata, `created` put in place if the id has none yet. */
  putTransactionStateIfNotExists(created: TransactionMetadata): TxnStateLookup {
    return this.lookup(created.transactionalId, created);
  }

  private lookup(transactionalId: string, created: TransactionMetadata | undefined): TxnStateLookup {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
    const cache = this.partitions.get(this.partitionFor(transactionalId));
    if (!cache) return { errorCode: ErrorCode.NOT_COORDINATOR };
    if (cache.state === 'loading') return { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    let md = cache.txns.get(transactionalId);
    if (!md && created) {
      cache.txns.set(transactionalId, created);
      md = created;
    }
    return { errorCode: ErrorCode.NONE, coordinatorEpoch: cache.coordinatorEpoch, metadata: md };
  }

  validateTransactionTimeoutMs(txnTimeoutMs: number): boolean {
    return txnTimeoutMs > 0 && txnTimeoutMs <= this.opts.config.transactionMaxTimeoutMs;
  }

  // ---- the log --------------------------------------------------------------------------------

  /** The finalized transaction.version (Kafka's transactionVersionLevel): the log value version and the coordinator's own aborts follow it. */
  transactionVersionLevel(): number {
    return this.opts.metadata.featureLevel(FeatureName.TRANSACTION_VERSION);
  }

  /**
   * Writes `transit` (the target of a prepared transition) to the id's partition with acks=-1 and,
   * once committed, completes the transition in memory. Resolves NONE or the error the caller
   * answers with. A failed write clears the pending state (the transition never happened) unless
   * `retryOnError` says the caller will try the same write again.
   */
  async appendTransactionToLog(
    transactionalId: string,
    coordinatorEpoch: number,
    transit: TxnTransitMetadata,
    retryOnError: (errorCode: number) => boolean = () => false,
  ): Promise<number> {
    const before = this.getTransactionState(transactionalId);
    if (before.errorCode !== ErrorCode.NONE) return before.errorCode;
    if (!before.metadata || before.coordinatorEpoch !== coordinatorEpoch) return ErrorCode.NOT_COORDINATOR;
    const partition = this.partitionFor(transactionalId);
    const now = this.now();
    const valueVersion = transactionLogValueVersion(this.transactionVersionLevel());
    const records = buildRecordBatch([{ key: transactionLogKey(transactionalId), value: transactionLogValue(transit, valueVersion), timestamp: now }], {
      compression: CompressionType.NONE,
      now,
    });
    let appendError: number;
    try {
      const [res] = await this.opts.replicaManager.appendRecords({
        timeoutMs: transit.txnTimeoutMs,
        requiredAcks: -1,
        entries: [{ topic: TRANSACTION_STATE_TOPIC, partition, records }],
        internalTopicsAllowed: true,
      });
      appendError = res.errorCode;
      if (appendError !== ErrorCode.NONE) {
        this.log.warn(`appending ${transactionalId}'s transition to ${transactionStateName(transit.txnState)} to ${TRANSACTION_STATE_TOPIC}-${partition} failed`, {
          error: errorName(appendError),
          message: res.errorMessage,
        });
      }
    } catch (err) {
      this.log.error(`appending ${transactionalId}'s transition to ${TRANSACTION_STATE_TOPIC}-${partition} failed`, { err });
      appendError = ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    let responseError = appendError === ErrorCode.NONE ? ErrorCode.NONE : txnAppendErrorToCoordinatorError(appendError);
    const after = this.getTransactionState(transactionalId);
    if (responseError === ErrorCode.NONE) {
      if (after.errorCode !== ErrorCode.NONE) return after.errorCode;
      if (!after.metadata || after.coordinatorEpoch !== coordinatorEpoch) {
        this.log.info(`${transactionalId}: the coordinator moved while its transition to ${transactionStateName(transit.txnState)} was written; answering NOT_COORDINATOR`);
        return ErrorCode.NOT_COORDINATOR;
      }
      try {
        after.metadata.completeTransitionTo(transit);
      } catch (err) {
        if (!(err instanceof IllegalTransactionStateError)) throw err;
        this.log.error(`${transactionalId}: ${err.message}`);
        after.metadata.pendingState = null;
        responseError = ErrorCode.UNKNOWN_SERVER_ERROR;
      }
      return responseError;
    }
    if (after.errorCode === ErrorCode.NONE && after.metadata && after.coordinatorEpoch === coordinatorEpoch && !retryOnError(responseError)) {
      after.metadata.pendingState = null;
    }
    return responseError;
  }

  // ---- leadership -----------------------------------------------------------------------------

  /**
   * Becomes the coordinator of `partition` at `coordinatorEpoch`: replays its log, then resolves
   * the transactions found half-way through PrepareCommit/PrepareAbort (their markers must be sent
   * again). Resolves an empty list if the partition was lost or re-elected meanwhile.
   */
  loadPartition(partition: number, coordinatorEpoch: number): Promise<PendingCompletion[]> {
    const cache: PartitionCache = { state: 'loading', coordinatorEpoch, txns: new Map() };
    this.partitions.set(partition, cache);
    const load = this.replay(partition, cache).finally(() => this.loads.delete(load));
    this.loads.add(load);
    return load;
  }

  /** Drops everything of `partition` (another broker leads it now, or the broker is stopping). */
  removePartition(partition: number): boolean {
    return this.partitions.delete(partition);
  }

  private async replay(partition: number, cache: PartitionCache): Promise<PendingCompletion[]> {
    const t0 = this.now();
    const current = () => this.partitions.get(partition) === cache && this.active;
    let records = 0;
    try {
      const p = this.opts.replicaManager.getPartition(TRANSACTION_STATE_TOPIC, partition);
      if (!p) throw new Error(`no local replica of ${TRANSACTION_STATE_TOPIC}-${partition}`);
      // p.log is read at each step: a replica move (AlterReplicaLogDirs) may swap the log between reads.
      let offset = p.log.logStartOffset;
      const end = p.log.logEndOffset;
      while (offset < end) {
        if (!current()) return [];
        const info = p.log.read(offset, this.opts.config.loadBufferSize, { isolation: 'LOG_END', minOneMessage: true });
        if (info.sizeInBytes === 0) break;
        let next = offset;
        for (const chunk of info.records) {
          for (const batch of splitBatches(chunk)) {
            next = batch.nextOffset;
            if (batch.isControlBatch) continue;
            for (const rec of readRecords(batch)) {
              records++;
              if (rec.key === null) {
                this.log.warn(`skipping a record without a key at ${TRANSACTION_STATE_TOPIC}-${partition}@${rec.offset}`);
                continue;
              }
              let id: string | undefined;
              let md: TransactionMetadata | null;
              try {
                id = readTransactionLogKeyId(rec.key);
                if (id === undefined) {
                  this.log.warn(`skipping a record with an unknown key version at ${TRANSACTION_STATE_TOPIC}-${partition}@${rec.offset}`);
                  continue;
                }
                md = readTransactionLogMetadata(id, rec.value);
              } catch (err) {
                this.log.warn(`skipping an unreadable record at ${TRANSACTION_STATE_TOPIC}-${partition}@${rec.offset}`, { err: (err as Error).message });
                continue;
              }
              if (md === null) cache.txns.delete(id);
              else cache.txns.set(id, md);
            }
          }
        }
        info.release?.();
        if (next <= offset) break;
        offset = next;
        await yieldToEventLoop();
      }
      if (!current()) return [];
      cache.state = 'loaded';
      const now = this.now();
      const pending: PendingCompletion[] = [];
      for (const md of cache.txns.values()) {
        if (md.state !== TransactionState.PrepareCommit && md.state !== TransactionState.PrepareAbort) continue;
        pending.push({
          transactionalId: md.transactionalId,
          coordinatorEpoch: cache.coordinatorEpoch,
          commit: md.state === TransactionState.PrepareCommit,
          metadata: md,
          completeTransit: md.prepareComplete(now),
        });
      }
      this.log.info(`loaded ${TRANSACTION_STATE_TOPIC}-${partition} at coordinator epoch ${cache.coordinatorEpoch} in ${this.now() - t0} ms`, {
        records,
        transactionalIds: cache.txns.size,
        completing: pending.length,
      });
      return pending;
    } catch (err) {
      this.log.error(`failed to load ${TRANSACTION_STATE_TOPIC}-${partition}; its transactional ids stay unavailable here`, { err });
      if (this.partitions.get(partition) === cache) this.partitions.delete(partition);
      return [];
    }
  }

  // ---- housekeeping ---------------------------------------------------------------------------

  /** Ongoing transactions older than their timeout, with no transition in progress. */
  timedOutTransactions(now = this.now()): TimedOutTransaction[] {
    const out: TimedOutTransaction[] = [];
    for (const cache of this.partitions.values()) {
      if (cache.state !== 'loaded') continue;
      for (const md of cache.txns.values()) {
        if (md.pendingTransitionInProgress || md.state !== TransactionState.Ongoing) continue;
        if (md.txnStartTimestamp + md.txnTimeoutMs < now) {
          out.push({ transactionalId: md.transactionalId, producerId: md.producerId, producerEpoch: md.producerEpoch });
        }
      }
    }
    return out;
  }

  /**
   * transactional.id.expiration.ms: ids idle that long in Empty/CompleteCommit/CompleteAbort get a
   * tombstone and are removed once it is committed. Returns how many were removed.
   *
   * As in Kafka, a partition's tombstones go out in batches no larger than its log's
   * max.message.bytes: one batch for every expired id of a busy partition would be refused
   * (MESSAGE_TOO_LARGE) on every run, and those ids would never expire.
   */
  async removeExpiredTransactionalIds(now = this.now()): Promise<number> {
    let removed = 0;
    const work: Promise<void>[] = [];
    for (const [partition, cache] of this.partitions) {
      if (cache.state !== 'loaded') continue;
      const log = this.opts.replicaManager.getPartition(TRANSACTION_STATE_TOPIC, partition)?.log;
      if (!log) {
        this.log.warn(`not expiring transactional ids of ${TRANSACTION_STATE_TOPIC}-${partition}: no local log`);
        continue;
      }
      const maxBatchBytes = log.config.maxMessageBytes;
      let batch: ExpiredId[] = [];
      let batchBytes = RECORD_BATCH_OVERHEAD;
      const flush = () => {
        if (batch.length === 0) return;
        const expired = batch;
        batch = [];
        batchBytes = RECORD_BATCH_OVERHEAD;
        work.push(this.writeTombstones(partition, cache, expired, now).then((n) => void (removed += n)));
      };
      for (const md of cache.txns.values()) {
        if (md.pendingState !== null || !isExpirationAllowed(md.state)) continue;
        if (md.txnLastUpdateTimestamp > now - this.opts.config.transactionalIdExpirationMs) continue;
        const key = transactionLogKey(md.transactionalId);
        const size = tombstoneSizeUpperBound(key);
        if (batch.length > 0 && batchBytes + size > maxBatchBytes) flush();
        batch.push({ md, key, transit: md.prepareDead() });
        batchBytes += size;
      }
      flush();
    }
    await Promise.all(work);
    if (removed > 0) this.log.info(`removed ${removed} expired transactional ids`);
    return removed;
  }

  /** Appends one batch of tombstones; the ids are removed once it is committed (still owned, still Dead-pending). */
  private async writeTombstones(partition: number, cache: PartitionCache, expired: ExpiredId[], now: number): Promise<number> {
    const records = buildRecordBatch(
      expired.map((e) => ({ key: e.key, value: null, timestamp: now })),
      { compression: CompressionType.NONE, now },
    );
    let error: number;
    try {
      const [res] = await this.opts.replicaManager.appendRecords({
        timeoutMs: this.opts.config.requestTimeoutMs,
        requiredAcks: -1,
        entries: [{ topic: TRANSACTION_STATE_TOPIC, partition, records }],
        internalTopicsAllowed: true,
      });
      error = res.errorCode;
    } catch (err) {
      this.log.error(`writing tombstones for expired transactional ids to ${TRANSACTION_STATE_TOPIC}-${partition} failed`, { err });
      error = ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    const stillOwned = this.partitions.get(partition) === cache;
    let removed = 0;
    for (const { md, transit } of expired) {
      if (stillOwned && error === ErrorCode.NONE && md.pendingState === TransactionState.Dead && md.producerEpoch === transit.producerEpoch) {
        cache.txns.delete(md.transactionalId);
        removed++;
      } else {
        if (error !== ErrorCode.NONE) this.log.warn(`failed to remove expired transactional id ${md.transactionalId}`, { error: errorName(error) });
        md.pendingState = null;
      }
    }
    return removed;
  }

  /**
   * ListTransactions: every id this broker coordinates (none while a partition loads: the caller
   * gets COORDINATOR_LOAD_IN_PROGRESS), filtered by producer id, state name and (v1) how long the
   * transaction has been running. Dead ids are being removed and are left out.
   */
  listTransactionStates(
    producerIds: readonly bigint[],
    stateNames: readonly string[],
    durationFilterMs: bigint,
  ): { errorCode: number; unknownStateFilters: string[]; transactionStates: ListedTransaction[] } {
    if ([...this.partitions.values()].some((c) => c.state === 'loading')) {
      return { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, unknownStateFilters: [], transactionStates: [] };
    }
    const unknownStateFilters: string[] = [];
    const states = new Set<TransactionState>();
    for (const name of stateNames) {
      const s = transactionStateFromName(name);
      if (s === undefined) unknownStateFilters.push(name);
      else states.add(s);
    }
    const pids = new Set(producerIds);
    const now = BigInt(this.now());
    const out: ListedTransaction[] = [];
    for (const cache of this.partitions.values()) {
      for (const md of cache.txns.values()) {
        if (md.state === TransactionState.Dead) continue;
        if (pids.size > 0 && !pids.has(md.producerId)) continue;
        if (stateNames.length > 0 && !states.has(md.state)) continue;
        if (durationFilterMs >= 0n && now - BigInt(md.txnStartTimestamp) <= durationFilterMs) continue;
        out.push({ transactionalId: md.transactionalId, producerId: md.producerId, transactionState: transactionStateName(md.state) });
      }
    }
    return { errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates: out };
  }
}
