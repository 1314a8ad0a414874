/**
 * One partition's log as the rest of the broker sees it (Kafka's UnifiedLog): the local segments
 * (LocalLog) plus the offsets that describe them, LEO, high watermark, last stable offset and log
 * start offset, and the rules for moving each.
 *
 * Owns: logStartOffset, highWatermark (set by the replication layer), the offline state, the
 * leader epoch cache (leader-epoch-checkpoint: assigned on appends whose batches carry a new
 * epoch, truncated with the log from either end, rebuilt from batch headers when the file is
 * missing), and the producer state (ProducerStateManager: idempotence, open transactions and
 * KIP-890 verification guards; loaded from the newest `<offset>.snapshot` plus a replay of the
 * batch headers after it, which also rewrites missing or invalid .txnindex entries; snapshots
 * written at roll and close, rebuilt on truncation). Reads: up to the LEO, HWM or LSO, with the
 * aborted transactions of the range for read_committed.
 *
 * Tiered logs (KIP-405; remoteLogEnabled: the broker's remote.log.storage.system.enable, the
 * topic's remote.storage.enable, not an internal topic) also own the local log start offset (where
 * the local segments start; the data from logStartOffset up to it is only in remote storage) and
 * the highest offset in remote storage (raised by the remote log manager after each finished
 * copy). While copying is on, retention uses local.retention.* and deletes a local segment only
 * once remote storage holds all of it (or the log start offset has passed it), moving the local
 * log start offset, not the log start offset; remote retention is the remote log manager's.
 *
 * Invariants: logStartOffset <= localLogStartOffset (equal unless tiered);
 * logStartOffset <= highWatermark <= LEO; lastStableOffset <= highWatermark; offsets
 * are handed out once: the append order is validate everything (records, then the producer
 * state's checks: duplicates, transaction verification, epoch and sequence; a duplicate of a
 * retained batch returns its original offsets and writes nothing) -> assign offsets -> write the
 * .log -> advance the LEO -> update the offset and time indexes -> producer state (an ABORT
 * marker's .txnindex entry is written before its transaction is completed, so a failed entry
 * keeps the LSO before the marker, KAFKA-7866).
 * If anything fails once bytes may have reached the file, the log (and its log directory, via
 * onIoError) goes offline and every later call throws KAFKA_STORAGE_ERROR; recovery at the next
 * start rebuilds what is behind.
 *
 * Concurrency: every method (loadAsync and whenBackgroundFlushesDone aside) is synchronous and
 * runs to completion (file I/O uses the *Sync calls, measured ~4x faster for appends, DESIGN 7), so
 * no other call can observe or change this log between the steps of an append, a read or a
 * truncation; there is no await inside any mutation.
 * Background work (deferred file deletion, fsync after a roll, periodic flush) only ever touches
 * state in a single synchronous callback.
 */
import type { LogFlushStats } from './log-flush-stats';
import * as path from 'node:path';
import type { ReadBufferPool } from './read-buffer-pool';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { CompressionType, RECORD_BATCH_OVERHEAD, RecordBatch, TimestampType } from '../protocol/records/record-batch';
import { TimestampAndOffset } from './file-records';
import { StorageFs, isIoError, nodeFs, writeFileAtomic } from './fs';
import { LeaderEpochFileCache, type EpochEntry } from './leader-epoch-file-cache';
import { LocalLog } from './local-log';
import { LogConfig, deleteEnabled, localRetentionBytesOf, localRetentionMsOf } from './log-config';
import { LoadParams, LoadedLog, RecoveryReport, loadLog, loadLogAsync } from './log-loader';
import { FetchDataInfo, LogOffsetMetadata, LogSegment } from './log-segment';
import { AppendOrigin, validateForFollower, validateForLeader } from './log-validator';
import { offsetOfMaxTimestamp } from './record-access';
import { nextOffsetAfter } from './record-access';
import { ProducerAppendUpdate, ProducerStateManager, snapshotFileName, type ProducerBatch, type VerificationGuard } from './producer-state-manager';
import { ControlRecordType, readEndTxnMarker } from '../protocol/records/control-record';
import { TXN_INDEX_ENTRY_SIZE, type AbortedTxn } from './index/transaction-index';
import { KafkaStorageError, UnexpectedAppendOffsetError } from './errors';
import { Scheduler, TimerScheduler } from '../common/scheduler';
import { Logger } from '../common/logger';
import { SystemTime, Time } from '../common/time';
import { TopicPartition, tpString } from '../common/topic-partition';
import { bigMax, bigMin } from '../common/bigint';

/** ListOffsets special timestamps (ListOffsetsRequest in Kafka). */
export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;
export const MAX_TIMESTAMP = -3n;
export const EARLIEST_LOCAL_TIMESTAMP = -4n;
export const LATEST_TIERED_TIMESTAMP = -5n;
export const EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6n;

export type FetchIsolation = 'LOG_END' | 'HIGH_WATERMARK' | 'TXN_COMMITTED';

export interface LogAppendInfo {
  firstOffset: bigint;
  lastOffset: bigint;
  /** Largest record timestamp appended (the append time for LogAppendTime topics). */
  maxTimestamp: bigint;
  offsetOfMaxTimestamp: bigint;
  /** The broker time stamped on the batches for LogAppendTime topics, else -1. */
  logAppendTime: bigint;
  logStartOffset: bigint;
  recordCount: number;
  validBytes: number;
  /** Partition leader epoch of the last batch (-1 when unset). */
  lastLeaderEpoch: number;
  sourceCompression: CompressionType;
  /** True when the batch duplicated one of its producer's last 5: nothing was appended, the offsets are the original ones. */
  duplicate?: boolean;
}

function producerBatchOf(rb: RecordBatch, firstOffset: bigint, lastOffset: bigint, maxTimestamp: bigint): ProducerBatch {
  return {
    producerId: rb.producerId,
    producerEpoch: rb.producerEpoch,
    baseSequence: rb.baseSequence,
    lastSequence: rb.baseSequence < 0 ? -1 : rb.lastSequence,
    firstOffset,
    lastOffset,
    maxTimestamp,
    isTransactional: rb.isTransactional,
  };
}

/**
 * The producer-state view of a batch: data batches of a producer, and transactional control
 * batches carrying a COMMIT/ABORT marker (`rb` must hold the whole batch to read the marker).
 * Undefined for batches without a producer, other control batches and empty (cleaned) markers.
 */
function producerViewOf(rb: RecordBatch, firstOffset: bigint, lastOffset: bigint, maxTimestamp: bigint): ProducerBatch | undefined {
  if (rb.producerId < 0n) return undefined;
  if (!rb.isControlBatch) return producerBatchOf(rb, firstOffset, lastOffset, maxTimestamp);
  if (!rb.isTransactional) return undefined;
  let m: ReturnType<typeof readEndTxnMarker>;
  try {
    m = readEndTxnMarker(rb);
  } catch (e) {
    if (e instanceof KafkaError) return undefined; // not an end-transaction marker
    throw e;
  }
  if (!m) return undefined;
  return {
    ...producerBatchOf(rb, firstOffset, lastOffset, maxTimestamp),
    marker: { isAbort: m.type === ControlRecordType.ABORT, coordinatorEpoch: m.coordinatorEpoch },
  };
}


export interface AppendAsLeaderOptions {
  leaderEpoch: number;
  /** Who is writing: clients get the full produce validation; coordinators header checks. Default client. */
  origin?: Exclude<AppendOrigin, 'replication'>;
  /** Produce request version (zstd needs v7+). */
  requestVersion?: number;
  /**
   * transaction.partition.verification.enable (client appends): a transactional batch may start a
   * transaction only with the guard its verification was started with (`maybeStartTransactionVerification`).
   */
  verificationRequired?: boolean;
  verificationGuard?: VerificationGuard;
}

export interface ReadOptions {
  /** Which offset bounds the read (exclusive); default HIGH_WATERMARK (consumers). */
  isolation?: FetchIsolation;
  /** An explicit exclusive upper bound; when given it replaces `isolation`. */
  maxOffset?: bigint;
  /** Read into a pooled buffer (the result's `release()` gives it back); the fetch path's choice. */
  pool?: ReadBufferPool;
  /** Return the first batch whole even if it exceeds maxBytes (Kafka: true unless a previous partition already filled the response). */
  minOneMessage?: boolean;
}

/** What `read` returns (the name the replication layer imports). */
export type LogReadResult = FetchDataInfo;

/**
 * What truncation tells the log cleaner (Kafka's LogManager.truncateTo / truncateFullyAndStartAt):
 * cleaning of the partition is aborted and paused around a truncation below the active segment,
 * and the cleaner checkpoint is cut to the active segment's base offset afterwards. Installed by
 * the log manager when a cleaner runs.
 */
export interface CleanerHooks {
  abortAndPauseCleaning(tp: TopicPartition): void;
  resumeCleaning(tps: TopicPartition[]): void;
  maybeTruncateCheckpoint(dataDir: string, tp: TopicPartition, offset: bigint): void;
}

/** The last batch of an active producer, which the cleaner always keeps (Kafka's LastRecord). */
export interface LastRecord {
  /** Last offset of the producer's last data batch, undefined when the state holds none (a marker came last). */
  lastDataOffset: bigint | undefined;
  producerEpoch: number;
}

export interface UnifiedLogParams {
  dir: string;
  tp: TopicPartition;
  config: LogConfig;
  topicId?: string;
  fs?: StorageFs;
  time?: Time;
  scheduler?: Scheduler;
  logger?: Logger;
  recoveryPoint?: bigint;
  logStartOffset?: bigint;
  hadCleanShutdown?: boolean;
  /** Offset gaps are legal whatever the policy (the cleaner has cleaned this log: see LoadParams). */
  allowOffsetGaps?: boolean;
  /** Recovery logs its progress at most this often (default 10 s). */
  recoveryProgressIntervalMs?: number;
  /** producer.id.expiration.ms (default 1 day). */
  producerIdExpirationMs?: number;
  /** Called on an I/O failure; the log manager takes the whole log directory offline. */
  onIoError?: (log: UnifiedLog, message: string, err: unknown) => void;
  /** The log manager's flush counts (LogFlushRateAndTimeMs). */
  flushStats?: LogFlushStats;
  /** The broker's remote.log.storage.system.enable: with the topic's remote.storage.enable, the log is tiered (remoteLogEnabled). */
  remoteStorageSystemEnable?: boolean;
}

/** Kafka's Topic.isInternal: these topics are never tiered, whatever their config says. */
const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);

export class UnifiedLog {
  readonly topicPartition: TopicPartition;
  topicId: string | undefined;
  readonly localLog: LocalLog;
  private _logStartOffset: bigint;
  /** Tiered logs: where the local segments start; below it (down to logStartOffset) the data is only in remote storage. Equals logStartOffset otherwise. */
  private _localLogStartOffset: bigint;
  /** Tiered logs: the last offset copied to remote storage (COPY_SEGMENT_FINISHED), -1 before any; set by the remote log manager. */
  private _highestOffsetInRemoteStorage = -1n;
  private readonly remoteStorageSystemEnable: boolean;
  private _highWatermark: bigint;
  /** Epoch -> start offset, kept in step with the log (leader-epoch-checkpoint). */
  readonly leaderEpochCache: LeaderEpochFileCache;
  /** Producers' epochs, last batches and open transactions (Kafka's ProducerStateManager). */
  readonly producerState: ProducerStateManager;
  private offlineError: KafkaStorageError | null = null;
  /** .txnindex entries the producer-state replay had to write (load and truncation); for tests and logs. */
  rebuiltTxnIndexEntries = 0;
  private closed = false;
  private readonly time: Time;
  private readonly logger: Logger;
  private readonly onIoError: (log: UnifiedLog, message: string, err: unknown) => void;
  /** What recovery did when the log was loaded. */
  readonly loadReport: RecoveryReport;
  /** Set by the log manager when a log cleaner runs (see CleanerHooks). */
  cleanerHooks: CleanerHooks | null = null;

  private constructor(p: UnifiedLogParams, loaded: LoadedLog, scheduler: Scheduler, logger: Logger) {
    this.topicPartition = p.tp;
    this.topicId = p.topicId;
    this.time = p.time ?? SystemTime;
    this.logger = logger;
    this.onIoError = p.onIoError ?? ((log) => log.markOffline('I/O error'));
    this.loadReport = loaded.report;
    this.localLog = new LocalLog({
      fs: p.fs ?? nodeFs,
      dir: p.dir,
      tp: p.tp,
      config: p.config,
      segments: loaded.segments,
      recoveryPoint: loaded.recoveryPoint,
      logEndOffset: loaded.logEndOffset,
      time: this.time,
      scheduler,
      logger,
      onBackgroundError: (what, err) => this.handleIoFailure(`background ${what} failed`, err),
      flushStats: p.flushStats,
    });
    this.remoteStorageSystemEnable = p.remoteStorageSystemEnable ?? false;
    this._logStartOffset = loaded.logStartOffset;
    const firstLocal = loaded.segments.firstSegment?.baseOffset ?? loaded.logStartOffset;
    this._localLogStartOffset = firstLocal > loaded.logStartOffset ? firstLocal : loaded.logStartOffset;
    this._highWatermark = this._localLogStartOffset;
    this.leaderEpochCache = this.loadLeaderEpochCache(p.fs ?? nodeFs);
    this.producerState = new ProducerStateManager(p.fs ?? nodeFs, () => this.localLog.dir, p.producerIdExpirationMs ?? 86_400_000, tpString(p.tp));
    this.loadProducerState(this.verifyTxnIndexes());
  }

  /**
   * `.txnindex` files are derived data like the other indexes: one in doubt (an entry that does
   * not decode, markers out of order, a marker outside its segment, a torn tail) is emptied, and
   * its entries are written again by the producer-state replay, which then starts from a snapshot
   * at or below that segment. Returns the offset the replay must start at or before (undefined
   * when every index is sound).
   */
  private verifyTxnIndexes(): bigint | undefined {
    let rebuildFrom: bigint | undefined;
    const segs = this.localLog.segments.values();
    segs.forEach((seg, i) => {
      const idx = seg.txnIndex;
      if (!idx) return;
      const end = segs[i + 1]?.baseOffset ?? this.logEndOffset;
      let problem: string | null = null;
      try {
        const size = this.localLog.fs.statSync(idx.file)?.size ?? 0;
        if (size % TXN_INDEX_ENTRY_SIZE !== 0) problem = `its size ${size} is not a multiple of ${TXN_INDEX_ENTRY_SIZE}`;
        let prev = -1n;
        for (const t of idx.entries()) {
          if (problem) break;
          if (t.lastOffset < seg.baseOffset || t.lastOffset >= end) problem = `the marker offset ${t.lastOffset} is outside the segment [${seg.baseOffset}, ${end})`;
          else if (t.lastOffset <= prev) problem = `marker offsets go back (${t.lastOffset} after ${prev})`;
          else if (t.firstOffset > t.lastOffset) problem = `an entry starts (${t.firstOffset}) after its marker (${t.lastOffset})`;
          else if (!this.isAbortMarkerAt(seg, t.lastOffset, t.producerId)) problem = `offset ${t.lastOffset} is not an ABORT marker of producer ${t.producerId}`;
          prev = t.lastOffset;
        }
      } catch (e) {
        if (isIoError(e)) throw e;
        problem = e instanceof Error ? e.message : String(e);
      }
      if (!problem) return;
      this.logger.warn(`transaction index ${idx.file} is invalid (${problem}); rebuilding it from the log`);
      idx.reset();
      if (rebuildFrom === undefined || seg.baseOffset < rebuildFrom) rebuildFrom = seg.baseOffset;
    });
    return rebuildFrom;
  }

  /** Whether the batch at `offset` in `seg` is a transactional ABORT marker of `producerId`. */
  private isAbortMarkerAt(seg: LogSegment, offset: bigint, producerId: bigint): boolean {
    let found = false;
    seg.log.scanBatches(seg.offsetIndex.lookup(offset).position, (h) => {
      if (h.lastOffset < offset) return true;
      if (h.baseOffset === offset && h.magic >= 2) {
        const rb = new RecordBatch(seg.log.read(h.position, h.sizeInBytes), 0);
        const pb = rb.producerId === producerId ? producerViewOf(rb, h.baseOffset, h.lastOffset, h.maxTimestamp) : undefined;
        found = pb?.marker?.isAbort === true;
      }
      return false;
    });
    return found;
  }

  /**
   * Producer state from the newest snapshot at or below the LEO (newer ones are deleted), or at or
   * below `rebuildTxnIndexFrom` when a transaction index must be rebuilt, then the producer batches
   * after it replayed from the batch headers (Kafka's rebuildProducerState).
   */
  private loadProducerState(rebuildTxnIndexFrom?: bigint): void {
    const psm = this.producerState;
    const upTo = rebuildTxnIndexFrom !== undefined && rebuildTxnIndexFrom < this.logEndOffset ? rebuildTxnIndexFrom : this.logEndOffset;
    const from = psm.loadFromSnapshot(this._logStartOffset, upTo, this.time.milliseconds());
    for (const seg of this.localLog.segments.values()) {
      const next = this.localLog.segments.higherSegment(seg.baseOffset);
      if (next && next.baseOffset <= from) continue;
      const start = from > seg.baseOffset ? seg.offsetIndex.lookup(from).position : 0;
      seg.log.scanBatches(start, (h) => {
        if (h.lastOffset < from || h.magic < 2) return true;
        let rb = new RecordBatch(seg.log.read(h.position, RECORD_BATCH_OVERHEAD), 0);
        if (rb.producerId < 0n) return true;
        if (!rb.isControlBatch) {
          psm.replay(producerBatchOf(rb, h.baseOffset, h.lastOffset, h.maxTimestamp));
          return true;
        }
        if (!rb.isTransactional) return true;
        rb = new RecordBatch(seg.log.read(h.position, h.sizeInBytes), 0);
        const pb = producerViewOf(rb, h.baseOffset, h.lastOffset, h.maxTimestamp);
        if (!pb) return true;
        const u = psm.prepareUpdate([pb], 'recovery');
        psm.apply(u);
        for (const c of u.completedTxns) {
          // Rebuild a missing .txnindex entry (an index append that failed before a crash or an
          // offline directory, KAFKA-7866): the state never moved past such a marker, so the
          // replay always reaches it. Entries already there are recognised by their marker offset.
          if (c.isAborted && (seg.txnIndex?.lastOffset ?? -1n) < c.lastOffset) {
            seg.appendAbortedTxn({ ...c, lastStableOffset: psm.lastStableOffsetAfter(c) });
            this.rebuiltTxnIndexEntries++;
          }
          psm.completeTxn(c);
        }
        return true;
      });
    }
    psm.updateMapEndOffset(this.logEndOffset);
  }

  /**
   * The cache from leader-epoch-checkpoint, cut to what the (recovered) log holds; rebuilt from
   * the batch headers when the file is missing or unreadable.
   */
  private loadLeaderEpochCache(fs: StorageFs): LeaderEpochFileCache {
    const { cache, existed, corrupt } = LeaderEpochFileCache.forDir(fs, () => this.localLog.dir);
    if (corrupt) this.logger.warn(`${corrupt.message}; rebuilding the leader epoch cache from the log`);
    if (!existed) {
      const entries: EpochEntry[] = [];
      for (const seg of this.localLog.segments.values()) {
        seg.log.scanBatches(0, (h) => {
          const last = entries[entries.length - 1];
          if (h.magic >= 2 && h.partitionLeaderEpoch >= 0 && (!last || h.partitionLeaderEpoch > last.epoch)) {
            entries.push({ epoch: h.partitionLeaderEpoch, startOffset: h.baseOffset });
          }
          return true;
        });
      }
      if (entries.length > 0 || corrupt) cache.replaceAll(entries);
    }
    cache.truncateFromEnd(this.logEndOffset);
    // Batches recovery re-read may carry epochs the checkpoint never recorded (a crash between the
    // .log write and the checkpoint write); Kafka's LogSegment.recover assigns those too.
    for (const e of this.loadReport.epochStarts) if (e.epoch > cache.latestEpoch()) cache.assign(e.epoch, e.startOffset);
    cache.truncateFromStart(this._logStartOffset);
    return cache;
  }

  /**
   * Opens (creating if needed) and recovers the log in `dir`. Recovery never throws on bad data
   * (it truncates); I/O errors propagate.
   */
  static load(p: UnifiedLogParams): UnifiedLog {
    const { params, logger } = UnifiedLog.loadParams(p);
    return new UnifiedLog(p, loadLog(params), p.scheduler ?? new TimerScheduler(), logger);
  }

  /**
   * `load` whose recovery reads run on the thread pool (read-ahead), so that the log manager can
   * recover several logs at once (num.recovery.threads.per.data.dir).
   */
  static async loadAsync(p: UnifiedLogParams): Promise<UnifiedLog> {
    const { params, logger } = UnifiedLog.loadParams(p);
    return new UnifiedLog(p, await loadLogAsync(params), p.scheduler ?? new TimerScheduler(), logger);
  }

  private static loadParams(p: UnifiedLogParams): { params: LoadParams; logger: Logger } {
    const fs = p.fs ?? nodeFs;
    const time = p.time ?? SystemTime;
    const logger = (p.logger ?? Logger.silent()).withPrefix(`[UnifiedLog partition=${tpString(p.tp)}, dir=${path.dirname(p.dir)}] `);
    if (!fs.existsSync(p.dir)) fs.mkdirSync(p.dir, { recursive: true });
    const params: LoadParams = {
      fs,
      dir: p.dir,
      tp: p.tp,
      config: p.config,
      time,
      logger,
      recoveryPointCheckpoint: p.recoveryPoint ?? 0n,
      logStartOffsetCheckpoint: p.logStartOffset ?? 0n,
      hadCleanShutdown: p.hadCleanShutdown ?? false,
      allowOffsetGaps: p.allowOffsetGaps,
      progressIntervalMs: p.recoveryProgressIntervalMs,
      remoteLogEnabled: isRemoteLogEnabled(p.remoteStorageSystemEnable ?? false, p.config, p.tp.topic),
    };
    return { params, logger };
  }

  // ---- offsets --------------------------------------------------------------------------------

  get dir(): string {
    return this.localLog.dir;
  }

  /** The log directory (data dir) this log lives in. */
  get parentDir(): string {
    return this.localLog.parentDir;
  }

  get config(): LogConfig {
    return this.localLog.config;
  }

  get logStartOffset(): bigint {
    return this._logStartOffset;
  }

  /** Where the local segments start (tiered logs); the log start offset otherwise. */
  get localLogStartOffset(): bigint {
    return this._localLogStartOffset;
  }

  /** The last offset in remote storage, -1 before any copy (tiered logs). */
  get highestOffsetInRemoteStorage(): bigint {
    return this._highestOffsetInRemoteStorage;
  }

  /** Kafka's remoteLogEnabled: the broker's remote.log.storage.system.enable, the topic's remote.storage.enable, and not an internal topic. */
  remoteLogEnabled(): boolean {
    return isRemoteLogEnabled(this.remoteStorageSystemEnable, this.config, this.topicPartition.topic);
  }

  /** Tiered and still copying (remote.log.copy.disable off): local segments then go only once they are in remote storage. */
  private remoteLogEnabledAndRemoteCopyEnabled(): boolean {
    return this.remoteLogEnabled() && !this.config.remoteLogCopyDisable;
  }

  /**
   * The remote log manager reports the last offset of a finished copy. It only moves up; local
   * segments at or below it become eligible for local retention.
   */
  updateHighestOffsetInRemoteStorage(offset: bigint): void {
    if (!this.remoteLogEnabled()) {
      this.logger.warn(`unable to update the highest offset in remote storage to ${offset}: remote storage is not enabled (it stays ${this._highestOffsetInRemoteStorage})`);
      return;
    }
    if (offset > this._highestOffsetInRemoteStorage) this._highestOffsetInRemoteStorage = offset;
  }

  /** The producer snapshot file at `offset` (`<offset>.snapshot`, written at each roll), if it exists: what a remote copy ships with its segment. */
  producerSnapshotPath(offset: bigint): string | undefined {
    const file = path.join(this.localLog.dir, snapshotFileName(offset));
    return this.localLog.fs.existsSync(file) ? file : undefined;
  }

  /** Bytes of the local segments not yet in remote storage (Kafka's onlyLocalLogSegmentsSize). */
  get onlyLocalLogSegmentsSize(): number {
    let n = 0;
    for (const seg of this.localLog.segments.values()) if (seg.baseOffset >= this._highestOffsetInRemoteStorage) n += seg.size;
    return n;
  }

  /** Local segments not yet in remote storage (Kafka's onlyLocalLogSegmentsCount). */
  get onlyLocalLogSegmentsCount(): number {
    let n = 0;
    for (const seg of this.localLog.segments.values()) if (seg.baseOffset >= this._highestOffsetInRemoteStorage) n++;
    return n;
  }

  get logEndOffset(): bigint {
    return this.localLog.logEndOffset;
  }

  get logEndOffsetMetadata(): LogOffsetMetadata {
    return this.localLog.logEndOffsetMetadata;
  }

  get highWatermark(): bigint {
    return this._highWatermark;
  }

  /**
   * LSO = min(first unstable offset, HWM): the first offset of an open transaction, or of a
   * completed one whose marker is not yet below the HWM (or whose ABORT marker's .txnindex
   * entry could not be written: it stays open, KAFKA-7866).
   */
  get lastStableOffset(): bigint {
    const fuo = this.producerState.firstUnstableOffset(this._highWatermark);
    return fuo !== undefined && fuo < this._highWatermark ? fuo : this._highWatermark;
  }

  get recoveryPoint(): bigint {
    return this.localLog.recoveryPoint;
  }

  /** The latest leader epoch in the log (leader epoch cache), -1 when none. */
  get latestEpoch(): number {
    return this.leaderEpochCache.latestEpoch();
  }

  /**
   * Records that `epoch` starts at `startOffset` (a new leader does this at its LEO when it takes
   * over, before any record of the epoch exists: OffsetForLeaderEpoch must already answer for it).
   */
  maybeAssignEpochStartOffset(epoch: number, startOffset: bigint): void {
    this.checkOnline();
    this.guard('assigning a leader epoch', () => this.leaderEpochCache.assign(epoch, startOffset));
  }

  /**
   * OffsetForLeaderEpoch: the end offset of `epoch` on this log (the LEO for the latest epoch)
   * and the largest epoch <= it; undefined when the cache cannot answer.
   */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | undefined {
    this.checkOnline();
    const r = this.leaderEpochCache.endOffsetFor(epoch, this.logEndOffset);
    return r.endOffset < 0n ? undefined : r;
  }

  /** Bytes in all segments. */
  get size(): number {
    return this.localLog.segments.sizeInBytes();
  }

  get numberOfSegments(): number {
    return this.localLog.segments.size;
  }

  logSegments(): LogSegment[] {
    return this.localLog.segments.values();
  }

  get activeSegment(): LogSegment {
    return this.localLog.activeSegment;
  }

  /**
   * Kafka's logSegments(from, to): the segment holding `from` (the floor segment; all from the
   * first when there is none) up to, excluding, the first based at or after `to`.
   */
  logSegmentsIn(from: bigint, to: bigint): LogSegment[] {
    if (from === to) return [];
    if (to < from) throw new RangeError(`invalid log segment range: requested segments from offset ${from} to ${to}`);
    const all = this.localLog.segments.values();
    const i = this.localLog.segments.indexOfFloor(from);
    const out: LogSegment[] = [];
    for (let k = Math.max(0, i); k < all.length && all[k].baseOffset < to; k++) out.push(all[k]);
    return out;
  }

  /** Kafka's nonActiveLogSegmentsFrom: the segments from the one holding `from` up to the active one (excluded). */
  nonActiveLogSegmentsFrom(from: bigint): LogSegment[] {
    const active = this.localLog.activeSegment;
    if (from > active.baseOffset) return [];
    return this.logSegmentsIn(from, active.baseOffset);
  }

  /** Kafka's lastRecordsOfActiveProducers: per producer id, its last data offset and epoch. */
  lastRecordsOfActiveProducers(): Map<bigint, LastRecord> {
    const out = new Map<bigint, LastRecord>();
    for (const e of this.producerState.activeProducers()) {
      const last = e.batches[e.batches.length - 1];
      out.set(e.producerId, { lastDataOffset: last ? last.lastOffset : undefined, producerEpoch: e.producerEpoch });
    }
    return out;
  }

  /** A segment with `.cleaned` files at `baseOffset`, outside the log (Kafka's createNewCleanedSegment). */
  createNewCleanedSegment(baseOffset: bigint): LogSegment {
    this.checkOnline();
    return this.guard('creating a cleaned segment', () => this.localLog.createNewCleanedSegment(baseOffset));
  }

  /**
   * Kafka's replaceSegments: swaps the cleaner's output in (LocalLog.replaceSegments has the crash
   * order); the producer snapshots of old segments whose base offset no new segment took are
   * deleted, as Kafka's deleteProducerSnapshots does. An I/O error takes the directory offline.
   */
  replaceSegments(newSegments: LogSegment[], oldSegments: LogSegment[]): void {
    this.checkOnline();
    this.guard('replacing segments', () => {
      const deleted = this.localLog.replaceSegments(newSegments, oldSegments);
      for (const s of deleted) this.producerState.deleteSnapshot(s.baseOffset);
    });
  }

  get isOffline(): boolean {
    return this.offlineError !== null;
  }

  /** Sets the high watermark (the replication layer decides it), clamped to [logStartOffset, LEO]. Returns the value set. */
  updateHighWatermark(hw: bigint): bigint {
    const v = bigMin(bigMax(hw, this._logStartOffset), this.logEndOffset);
    this._highWatermark = v;
    this.producerState.onHighWatermarkUpdated(v);
    return v;
  }

  // ---- append ---------------------------------------------------------------------------------

  /**
   * Appends a record set as the leader: validate the whole set, assign offsets from the LEO, stamp
   * the partition leader epoch (and LogAppendTime if the topic says so), roll if needed, write,
   * advance the LEO, update indexes. Throws KafkaError with Kafka's code on invalid input (log
   * untouched), KAFKA_STORAGE_ERROR on I/O failure (log offline).
   */
  appendAsLeader(records: Buffer, opts: AppendAsLeaderOptions): LogAppendInfo {
    this.checkOnline();
    const config = this.config;
    const now = this.time.milliseconds();
    const v = validateForLeader(records, config, { origin: opts.origin ?? 'client', now, requestVersion: opts.requestVersion });
    const buf = v.records;
    if (buf.length > config.segmentBytes) {
      throw new KafkaError(
        ErrorCode.RECORD_LIST_TOO_LARGE,
        `message batch size is ${buf.length} bytes in append to partition ${tpString(this.topicPartition)}, which exceeds the maximum configured segment size of ${config.segmentBytes}`,
      );
    }
    // Producer state: duplicates and epoch/sequence checks, on the offsets the batches will get,
    // before anything is assigned or written.
    const logAppendTime = config.messageTimestampType === 'LogAppendTime' ? BigInt(now) : -1n;
    const firstOffset = this.logEndOffset;
    const producerBatches: ProducerBatch[] = [];
    {
      let at = firstOffset;
      for (const b of v.batches) {
        const rb = new RecordBatch(buf, b.position);
        const last = at + BigInt(b.lastOffsetDelta);
        const pb = producerViewOf(rb, at, last, logAppendTime >= 0n ? logAppendTime : b.maxTimestamp);
        if (pb) producerBatches.push(pb);
        at = last + 1n;
      }
    }
    if ((opts.origin ?? 'client') === 'client') {
      for (const pb of producerBatches) {
        if (pb.marker) continue;
        const dup = this.producerState.findDuplicate(pb);
        if (dup) {
          return {
            firstOffset: dup.firstOffset,
            lastOffset: dup.lastOffset,
            maxTimestamp: dup.timestamp,
            offsetOfMaxTimestamp: dup.lastOffset,
            logAppendTime: -1n,
            logStartOffset: this._logStartOffset,
            recordCount: 0,
            validBytes: 0,
            lastLeaderEpoch: opts.leaderEpoch,
            sourceCompression: v.sourceCompression,
            duplicate: true,
          };
        }
      }
    }
    if ((opts.origin ?? 'client') === 'client') {
      for (const pb of producerBatches) {
        if (!pb.isTransactional || pb.marker || this.producerState.hasOngoingTransaction(pb.producerId, pb.producerEpoch)) continue;
        const entry = this.producerState.verificationStateEntry(pb.producerId);
        if (opts.verificationRequired && (!entry || entry.guard !== opts.verificationGuard)) {
          // Verified against a transaction that has since ended (or never verified): starting one
          // now would leave it hanging, with no coordinator ever writing its marker.
          throw new KafkaError(
            ErrorCode.INVALID_TXN_STATE,
            `the record of producer ${pb.producerId} at offset ${pb.firstOffset} in ${tpString(this.topicPartition)} was not part of an ongoing transaction`,
          );
        }
        if (entry && pb.baseSequence > entry.lowestSequence) {
          // An earlier batch of this producer is still being verified (it failed with a retriable
          // error and will be retried): a later one must not go first, or the retry could never
          // be written (Kafka's out-of-order-sequence loop fix).
          throw new KafkaError(
            ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            `out of order sequence number for producer ${pb.producerId} at offset ${pb.firstOffset} in ${tpString(this.topicPartition)}: ${pb.baseSequence} (incoming seq. number), ${entry.lowestSequence} (earliest seen sequence)`,
          );
        }
      }
    }
    const producerUpdate = this.producerState.prepareUpdate(producerBatches, opts.origin ?? 'client');
    // Offsets, leader epoch and timestamps are patched in place: baseOffset and the epoch lie
    // outside the CRC; a changed max timestamp (LogAppendTime, or a client's wrong header) updates it.
    let next = firstOffset;
    let maxTimestamp = -1n;
    let offsetOfMax = -1n;
    let shallowOfMax = -1n;
    for (const b of v.batches) {
      const rb = new RecordBatch(buf, b.position);
      rb.baseOffset = next;
      rb.partitionLeaderEpoch = opts.leaderEpoch;
      const last = next + BigInt(b.lastOffsetDelta);
      if (logAppendTime >= 0n) {
        rb.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, logAppendTime);
      } else if (rb.timestampType === TimestampType.CREATE_TIME && rb.maxTimestamp !== b.maxTimestamp) {
        rb.setMaxTimestamp(TimestampType.CREATE_TIME, b.maxTimestamp);
      }
      const batchMax = logAppendTime >= 0n ? logAppendTime : b.maxTimestamp;
      if (batchMax > maxTimestamp) {
        maxTimestamp = batchMax;
        offsetOfMax = logAppendTime >= 0n ? last : next + BigInt(Math.max(0, b.offsetDeltaOfMaxTimestamp));
        shallowOfMax = last;
      }
      next = last + 1n;
    }
    const lastOffset = next - 1n;
    const lastEpoch = opts.leaderEpoch;
    this.appendValidated(buf, firstOffset, lastOffset, maxTimestamp, shallowOfMax, now);
    if (lastEpoch >= 0) this.guard('assigning a leader epoch', () => this.leaderEpochCache.assign(lastEpoch, firstOffset));
    this.updateProducerStateAfterAppend(producerUpdate, lastOffset + 1n);
    return {
      firstOffset,
      lastOffset,
      maxTimestamp,
      offsetOfMaxTimestamp: offsetOfMax,
      logAppendTime,
      logStartOffset: this._logStartOffset,
      recordCount: v.recordCount,
      validBytes: buf.length,
      lastLeaderEpoch: lastEpoch,
      sourceCompression: v.sourceCompression,
    };
  }

  /**
   * Appends replicated batches with the offsets they carry. The first offset must be at or above
   * the LEO (UnexpectedAppendOffsetError otherwise: the fetcher truncates and retries); offsets
   * must strictly increase (OffsetsOutOfOrderError).
   */
  appendAsFollower(records: Buffer): LogAppendInfo {
    this.checkOnline();
    const batches = validateForFollower(records);
    if (batches.length === 0) {
      return {
        firstOffset: -1n,
        lastOffset: -1n,
        maxTimestamp: -1n,
        offsetOfMaxTimestamp: -1n,
        logAppendTime: -1n,
        logStartOffset: this._logStartOffset,
        recordCount: 0,
        validBytes: 0,
        lastLeaderEpoch: -1,
        sourceCompression: CompressionType.NONE,
      };
    }
    const first = batches[0];
    const last = batches[batches.length - 1];
    if (first.baseOffset < this.logEndOffset) {
      throw new UnexpectedAppendOffsetError(
        `unexpected offset in append to ${tpString(this.topicPartition)}: first offset ${first.baseOffset} is less than the next offset ${this.logEndOffset}`,
        first.baseOffset,
        last.lastOffset,
      );
    }
    if (records.length > this.config.segmentBytes) {
      throw new KafkaError(
        ErrorCode.RECORD_LIST_TOO_LARGE,
        `replicated batch size ${records.length} exceeds the segment size ${this.config.segmentBytes} of ${tpString(this.topicPartition)}`,
      );
    }
    let maxTimestamp = -1n;
    let shallowOfMax = -1n;
    let count = 0;
    for (const b of batches) {
      if (b.maxTimestamp > maxTimestamp) {
        maxTimestamp = b.maxTimestamp;
        shallowOfMax = b.lastOffset;
      }
      count += b.recordCount;
    }
    const producerBatches: ProducerBatch[] = [];
    for (const b of batches) {
      const pb = producerViewOf(new RecordBatch(records, b.position), b.baseOffset, b.lastOffset, b.maxTimestamp);
      if (pb) producerBatches.push(pb);
    }
    const producerUpdate = this.producerState.prepareUpdate(producerBatches, 'replication');
    this.appendValidated(records, first.baseOffset, last.lastOffset, maxTimestamp, shallowOfMax, this.time.milliseconds());
    this.updateProducerStateAfterAppend(producerUpdate, last.lastOffset + 1n);
    this.guard('assigning a leader epoch', () => {
      for (const b of batches) if (b.partitionLeaderEpoch >= 0) this.leaderEpochCache.assign(b.partitionLeaderEpoch, b.baseOffset);
    });
    return {
      firstOffset: first.baseOffset,
      lastOffset: last.lastOffset,
      maxTimestamp,
      offsetOfMaxTimestamp: shallowOfMax,
      logAppendTime: -1n,
      logStartOffset: this._logStartOffset,
      recordCount: count,
      validBytes: records.length,
      lastLeaderEpoch: last.partitionLeaderEpoch,
      sourceCompression: CompressionType.NONE,
    };
  }

  /** Roll if needed, then write -> LEO -> indexes. Any failure from here on takes the log offline. */
  private appendValidated(buf: Buffer, firstOffset: bigint, lastOffset: bigint, maxTimestamp: bigint, shallowOfMax: bigint, now: number): void {
    try {
      this.maybeRoll(buf.length, Number(maxTimestamp), firstOffset, lastOffset, now);
      this.localLog.append({
        records: buf,
        firstOffset,
        lastOffset,
        largestTimestamp: Number(maxTimestamp),
        shallowOffsetOfMaxTimestamp: shallowOfMax,
      });
    } catch (e) {
      const leoMoved = this.logEndOffset > lastOffset;
      throw this.handleIoFailure(
        leoMoved
          ? `index update failed after offsets up to ${lastOffset} were written; the log end offset stays at ${this.logEndOffset}`
          : `append of offsets ${firstOffset}..${lastOffset} failed`,
        e,
      );
    }
    if (this.localLog.unflushedMessages >= BigInt(Math.min(this.config.flushMessages, Number.MAX_SAFE_INTEGER))) {
      this.flush();
    }
  }

  /**
   * Append steps 6b/7 (after the LEO moved): the producer state takes the append (transactions
   * opened); for each transaction a marker ended, an ABORT first gets its .txnindex entry (the
   * index created on demand), then the transaction is completed; only when every entry is written
   * does the producer state's end offset move. If an index append fails (any error, I/O or not)
   * the transaction stays open, so the LSO cannot pass its first offset, the end offset stays
   * behind so the next load replays the marker and writes the entry, and the log directory goes
   * offline: later appends get KAFKA_STORAGE_ERROR, so no offset is ever handed out twice.
   */
  private updateProducerStateAfterAppend(update: ProducerAppendUpdate, endOffset: bigint): void {
    const psm = this.producerState;
    psm.apply(update);
    for (const c of update.completedTxns) {
      if (c.isAborted) {
        const entry: AbortedTxn = { ...c, lastStableOffset: psm.lastStableOffsetAfter(c) };
        try {
          const seg = this.localLog.segments.floorSegment(c.lastOffset) ?? this.localLog.activeSegment;
          seg.appendAbortedTxn(entry);
        } catch (e) {
          throw this.handleIoFailure(
            `transaction index append for the ABORT marker of producer ${c.producerId} at offset ${c.lastOffset} failed; ` +
              `the log end offset stays at ${this.logEndOffset}, the last stable offset at or below ${c.firstOffset}`,
            e,
          );
        }
      }
      psm.completeTxn(c);
    }
    if (endOffset > psm.mapEndOffset) psm.updateMapEndOffset(endOffset);
  }

  private maybeRoll(messagesSize: number, maxTimestamp: number, firstOffset: bigint, lastOffset: bigint, now: number): LogSegment {
    const seg = this.localLog.activeSegment;
    const config = this.config;
    if (
      seg.shouldRoll({
        maxSegmentMs: config.segmentMs,
        maxSegmentBytes: config.segmentBytes,
        maxTimestampInMessages: maxTimestamp,
        maxOffsetInMessages: lastOffset,
        messagesSize,
        now,
      })
    ) {
      this.logger.debug(
        `rolling new log segment (log_size = ${seg.size}/${config.segmentBytes}, offset_index_size = ${seg.offsetIndex.entries}/${seg.offsetIndex.maxEntries}, ` +
          `time_index_size = ${seg.timeIndex.entries}/${seg.timeIndex.maxEntries})`,
      );
      return this.rollAt(firstOffset);
    }
    return seg;
  }

  /** Starts a new active segment at the LEO (or `expectedNextOffset` if higher); flushes the old one in the background. */
  roll(expectedNextOffset?: bigint): LogSegment {
    this.checkOnline();
    return this.guard('roll', () => this.rollAt(expectedNextOffset));
  }

  private rollAt(expectedNextOffset?: bigint): LogSegment {
    const seg = this.localLog.roll(expectedNextOffset);
    // Producer state snapshot at the new segment's base offset (Kafka's roll).
    this.producerState.updateMapEndOffset(seg.baseOffset);
    this.producerState.takeSnapshot();
    void this.localLog.flushInBackground(seg.baseOffset);
    return seg;
  }

  // ---- read -----------------------------------------------------------------------------------

  /**
   * Whole batches starting with the one that holds `startOffset` (a fetch from inside a batch gets
   * the whole batch; the client skips the earlier records), at most `maxBytes` (the first batch in
   * full when minOneMessage), never reaching the upper bound. OFFSET_OUT_OF_RANGE below the log
   * start offset or above the LEO.
   */
  read(startOffset: bigint, maxBytes: number, opts: ReadOptions = {}): FetchDataInfo {
    this.checkOnline();
    if (startOffset < this._logStartOffset) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `received request for offset ${startOffset} for partition ${tpString(this.topicPartition)}, but we only have log segments starting from offset ${this._logStartOffset}`,
      );
    }
    if (startOffset < this._localLogStartOffset && this.remoteLogEnabled()) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `received request for offset ${startOffset} for partition ${tpString(this.topicPartition)}, but the local log starts at ${this._localLogStartOffset} (earlier offsets are in remote storage from ${this._logStartOffset})`,
      );
    }
    let bound: bigint;
    if (opts.maxOffset !== undefined) bound = opts.maxOffset;
    else if (opts.isolation === 'LOG_END') bound = this.logEndOffset;
    else if (opts.isolation === 'TXN_COMMITTED') bound = this.lastStableOffset;
    else bound = this._highWatermark;
    return this.guard('read', () => {
      const info = this.localLog.read(startOffset, maxBytes, opts.minOneMessage ?? false, bound, opts.pool);
      if (opts.isolation === 'TXN_COMMITTED' && opts.maxOffset === undefined) info.abortedTransactions = this.abortedTransactionsOf(startOffset, info);
      return info;
    });
  }

  /**
   * read_committed: the aborted transactions overlapping the data a read returned, from the fetch
   * offset to the end of its last batch (Kafka bounds it the same way, by the fetched bytes), in
   * order of first offset. KafkaJS walks the list in that order, so it is sorted here (Kafka
   * returns index order, which differs when transactions interleave). No .txnindex from the fetch
   * offset on means no aborted transaction, without looking at the batches.
   */
  private abortedTransactionsOf(startOffset: bigint, info: FetchDataInfo): AbortedTxn[] {
    if (info.sizeInBytes === 0) return [];
    const floor = this.localLog.segments.floorSegment(startOffset);
    if (!this.localLog.segments.values().some((seg) => seg.txnIndex !== null && (!floor || seg.baseOffset >= floor.baseOffset))) return [];
    const list = this.collectAbortedTransactionsInternal(startOffset, nextOffsetAfter(info.records));
    return list.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /**
   * Aborted transactions overlapping [startOffset, upperBoundOffset) from the segments' .txnindex,
   * starting at the segment holding startOffset and stopping once an entry's LSO reaches the bound
   * (Kafka's collectAbortedTransactions).
   */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTxn[] {
    this.checkOnline();
    return this.guard('collectAbortedTransactions', () => this.collectAbortedTransactionsInternal(startOffset, upperBoundOffset));
  }

  private collectAbortedTransactionsInternal(startOffset: bigint, upperBoundOffset: bigint): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    const segs = this.localLog.segments.values();
    const floor = this.localLog.segments.floorSegment(startOffset);
    for (const seg of segs) {
      if (floor && seg.baseOffset < floor.baseOffset) continue;
      // No stop at segments past the bound: an entry lives in the segment of its ABORT marker, which
      // may be several segments after the transaction's data. The search ends once an entry's LSO
      // reaches the bound (no later marker can belong to a transaction that started before it).
      const r = seg.collectAbortedTxns(startOffset, upperBoundOffset);
      out.push(...r.abortedTransactions);
      if (r.isComplete) break;
    }
    return out;
  }

  /** Bytes between two offsets without reading them (delayed fetch min.bytes checks). */
  bytesBetween(from: bigint, to: bigint): number {
    this.checkOnline();
    return this.guard('bytesBetween', () => this.localLog.bytesBetween(from, to));
  }

  // ---- offsets by timestamp -------------------------------------------------------------------

  /**
   * ListOffsets: EARLIEST (-2) -> log start offset; EARLIEST_LOCAL (-4) -> the local log start
   * offset (the log start offset unless tiered); LATEST_TIERED (-5) -> the highest offset in remote
   * storage (-1 unless tiered); LATEST (-1) -> LEO;
   * MAX_TIMESTAMP (-3) -> the record with the largest timestamp; a timestamp >= 0 -> the first
   * RECORD whose timestamp is >= it (record-granular). Null when nothing matches. Callers bound
   * the result by the high watermark / LSO for consumers, as Kafka's Partition does.
   */
  fetchOffsetByTimestamp(targetTimestamp: bigint): TimestampAndOffset | null {
    this.checkOnline();
    return this.guard('fetchOffsetByTimestamp', () => {
      const tiered = this.remoteLogEnabled();
      if (targetTimestamp === EARLIEST_TIMESTAMP || (targetTimestamp === EARLIEST_LOCAL_TIMESTAMP && !tiered)) {
        return { timestamp: -1n, offset: this._logStartOffset, leaderEpoch: this.epochForOffset(this._logStartOffset) };
      }
      if (targetTimestamp === EARLIEST_LOCAL_TIMESTAMP) {
        return { timestamp: -1n, offset: this._localLogStartOffset, leaderEpoch: this.epochForOffset(this._localLogStartOffset) };
      }
      if (targetTimestamp === LATEST_TIMESTAMP) {
        return { timestamp: -1n, offset: this.logEndOffset, leaderEpoch: this.latestEpoch };
      }
      if (targetTimestamp === LATEST_TIERED_TIMESTAMP && tiered) {
        const highest = this._highestOffsetInRemoteStorage;
        return { timestamp: -1n, offset: highest, leaderEpoch: highest < 0n ? -1 : this.epochForOffset(highest) };
      }
      if (targetTimestamp === LATEST_TIERED_TIMESTAMP || targetTimestamp === EARLIEST_PENDING_UPLOAD_TIMESTAMP) {
        return { timestamp: -1n, offset: -1n, leaderEpoch: -1 };
      }
      if (targetTimestamp === MAX_TIMESTAMP) return this.maxTimestampOffset();
      if (targetTimestamp < 0n) return null;
      // Tiered logs: only the local segments here; the remote log manager searches remote storage first.
      const target = Number(targetTimestamp);
      const from = tiered ? this._localLogStartOffset : this._logStartOffset;
      for (const seg of this.localLog.segments.values()) {
        if (seg.largestTimestamp() >= target) {
          const r = seg.findOffsetByTimestamp(targetTimestamp, from);
          if (r) return r;
        }
      }
      return null;
    });
  }

  private maxTimestampOffset(): TimestampAndOffset | null {
    let best: LogSegment | undefined;
    for (const seg of this.localLog.segments.values()) {
      if (!best || seg.maxTimestampSoFar > best.maxTimestampSoFar) best = seg;
    }
    if (!best) return null;
    const m = best.readMaxTimestampAndOffsetSoFar();
    if (m.timestamp < 0) return null;
    const position = best.offsetIndex.lookup(m.offset).position;
    let result: TimestampAndOffset | null = null;
    const seg = best;
    seg.log.scanBatches(position, (h) => {
      if (Number(h.maxTimestamp) !== m.timestamp) return true;
      const bytes = seg.log.read(h.position, h.sizeInBytes);
      result = { timestamp: h.maxTimestamp, offset: offsetOfMaxTimestamp(bytes), leaderEpoch: h.partitionLeaderEpoch >= 0 ? h.partitionLeaderEpoch : -1 };
      return false;
    });
    return result;
  }

  /** Epoch of the record at `offset` (from the leader epoch cache). */
  private epochForOffset(offset: bigint): number {
    return this.leaderEpochCache.epochForOffset(offset);
  }

  // ---- log start offset, retention, truncation ------------------------------------------------

  /**
   * DeleteRecords: moves the log start offset to `offset` (-1 = the high watermark). Beyond the
   * high watermark -> OFFSET_OUT_OF_RANGE; a topic without cleanup.policy=delete -> POLICY_VIOLATION.
   * Returns the new low watermark (log start offset). The segments below it go at the next
   * retention check.
   */
  deleteRecordsBefore(offset: bigint): bigint {
    this.checkOnline();
    if (!deleteEnabled(this.config)) {
      throw new KafkaError(
        ErrorCode.POLICY_VIOLATION,
        `records of partition ${tpString(this.topicPartition)} can not be deleted due to the configured policy`,
      );
    }
    const target = offset === -1n ? this._highWatermark : offset;
    if (target < 0n) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `the offset ${offset} for partition ${tpString(this.topicPartition)} is not valid`);
    }
    this.maybeIncrementLogStartOffset(target, 'ClientRecordDeletion');
    return this._logStartOffset;
  }

  /** Raises the log start offset (never lowers it); OFFSET_OUT_OF_RANGE above the high watermark. */
  maybeIncrementLogStartOffset(newLogStartOffset: bigint, reason: string): boolean {
    this.checkOnline();
    if (newLogStartOffset > this._highWatermark) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `cannot increment the log start offset to ${newLogStartOffset} of partition ${tpString(this.topicPartition)} since it is larger than the high watermark ${this._highWatermark}`,
      );
    }
    if (newLogStartOffset <= this._logStartOffset) return false;
    this.updateLogStartOffset(newLogStartOffset);
    if (this.remoteLogEnabled() && newLogStartOffset > this._localLogStartOffset) this._localLogStartOffset = newLogStartOffset;
    this.logger.info(`incremented log start offset to ${newLogStartOffset} due to ${reason}`);
    this.guard('truncating the leader epoch cache', () => this.leaderEpochCache.truncateFromStart(newLogStartOffset));
    this.guard('truncating producer state', () => this.producerState.onLogStartOffsetIncremented(newLogStartOffset));
    return true;
  }

  /** Tiered logs: local segments went after their copy; the log start offset stays (the data is in remote storage). */
  private maybeIncrementLocalLogStartOffset(newLocalLogStartOffset: bigint, reason: string): void {
    if (newLocalLogStartOffset <= this._localLogStartOffset) return;
    this._localLogStartOffset = newLocalLogStartOffset;
    this.logger.info(`incremented local log start offset to ${newLocalLogStartOffset} due to ${reason}`);
  }

  private updateLogStartOffset(offset: bigint): void {
    this._logStartOffset = offset;
    if (this._highWatermark < offset) this._highWatermark = offset;
    if (this.localLog.recoveryPoint < offset) this.localLog.updateRecoveryPoint(offset);
  }

  /**
   * Retention: segments wholly below the log start offset, then (with cleanup.policy=delete) the
   * oldest segments while the log exceeds retention.bytes, then segments whose largest timestamp
   * is older than retention.ms. Only segments entirely below the high watermark are eligible; if
   * every segment goes, the log rolls first so an empty active segment remains. Returns the number
   * of segments deleted.
   */
  deleteOldSegments(): number {
    this.checkOnline();
    return this.guard('deleteOldSegments', () => {
      const tiered = this.remoteLogEnabled();
      let n = this.deleteSegmentsWhile(
        (_seg, next) => next !== undefined && next.baseOffset <= (tiered ? this._localLogStartOffset : this._logStartOffset),
        tiered ? `local log start offset ${this._localLogStartOffset} breach` : 'log start offset breach',
      );
      if (deleteEnabled(this.config)) {
        n += this.deleteRetentionSizeBreached();
        n += this.deleteRetentionMsBreached();
        if (this.remoteLogEnabledAndRemoteCopyEnabled()) n += this.deleteUncopiedTotalRetentionBreached();
      }
      return n;
    });
  }

  private deleteRetentionSizeBreached(): number {
    const local = this.remoteLogEnabledAndRemoteCopyEnabled();
    const retentionSize = local ? localRetentionBytesOf(this.config) : this.config.retentionBytes;
    const size = this.size;
    if (retentionSize < 0 || size < retentionSize) return 0;
    let diff = size - retentionSize;
    return this.deleteSegmentsWhile((seg) => {
      if (diff - seg.size >= 0) {
        diff -= seg.size;
        return true;
      }
      return false;
    }, `${local ? 'local ' : ''}retention size ${retentionSize} breach (log size ${size})`);
  }

  private deleteRetentionMsBreached(): number {
    const local = this.remoteLogEnabledAndRemoteCopyEnabled();
    const retentionMs = local ? localRetentionMsOf(this.config) : this.config.retentionMs;
    if (retentionMs < 0) return 0;
    const startMs = this.time.milliseconds();
    return this.deleteSegmentsWhile((seg) => startMs - seg.largestTimestamp() > retentionMs, `${local ? 'local ' : ''}retention time ${retentionMs}ms breach`);
  }

  /**
   * A tiered log whose copies do not progress (the remote store is down) would keep every local
   * segment: local retention only deletes what remote storage holds. The topic's total retention
   * still bounds it: segments whose data breaches retention.ms, or beyond retention.bytes counting
   * the local log alone, are expired whatever remote storage holds, so they are deleted locally
   * without a copy (with a warning) and the log start offset moves past them. Kafka keeps them
   * until the copy succeeds; krill bounds the disk instead (docs/tiered-storage.md).
   */
  private deleteUncopiedTotalRetentionBreached(): number {
    let n = 0;
    const retentionBytes = this.config.retentionBytes;
    const size = this.size;
    if (retentionBytes >= 0 && size > retentionBytes) {
      let diff = size - retentionBytes;
      n += this.deleteSegmentsWhile((seg) => {
        if (diff - seg.size >= 0) {
          diff -= seg.size;
          return true;
        }
        return false;
      }, `retention size ${retentionBytes} breach by the local log alone (log size ${size}); the segments were not copied to remote storage`, true);
    }
    const retentionMs = this.config.retentionMs;
    if (retentionMs >= 0) {
      const startMs = this.time.milliseconds();
      n += this.deleteSegmentsWhile((seg) => startMs - seg.largestTimestamp() > retentionMs, `retention time ${retentionMs}ms breach; the segments were not copied to remote storage`, true);
    }
    return n;
  }

  private deleteSegmentsWhile(predicate: (seg: LogSegment, next: LogSegment | undefined) => boolean, reason: string, withoutCopy = false): number {
    const segs = this.localLog.segments.values();
    const deletable: LogSegment[] = [];
    const tiered = this.remoteLogEnabled();
    const copying = this.remoteLogEnabledAndRemoteCopyEnabled() && !withoutCopy;
    let rollActive = false;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i];
      const next = segs[i + 1];
      const isLastAndEmpty = next === undefined && seg.size === 0;
      const upperBound = next ? next.baseOffset : this.logEndOffset;
      // Never at or past the high watermark, so the log start offset cannot pass it.
      const breached = this._highWatermark >= upperBound && predicate(seg, next);
      // A tiered log's active segment that breaches retention is rolled, so that it can be
      // copied and then deleted (Kafka's rule); it goes at a later pass.
      if (breached && tiered && !withoutCopy && next === undefined && seg.size > 0) rollActive = true;
      // While copying, a segment goes only once remote storage holds all of it, or when the log
      // start offset has passed it (DeleteRecords).
      const eligible = !copying || (upperBound > 0n && upperBound - 1n <= this._highestOffsetInRemoteStorage) || (next !== undefined && this._logStartOffset >= next.baseOffset);
      if (breached && !isLastAndEmpty && eligible) deletable.push(seg);
      else break;
    }
    if (rollActive) {
      this.logger.info('rolling the active segment to make it eligible for deletion');
      this.rollAt();
    }
    if (deletable.length === 0) return 0;
    let toDelete = deletable;
    if (deletable.length === this.localLog.segments.size) {
      // Never leave a log without segments: roll, then everything up to the old active segment goes.
      const fresh = this.rollAt();
      if (deletable[deletable.length - 1].baseOffset === fresh.baseOffset) toDelete = deletable.slice(0, -1);
    }
    if (toDelete.length > 0) {
      const after = this.localLog.segments.higherSegment(toDelete[toDelete.length - 1].baseOffset);
      if (after) {
        if (copying) this.maybeIncrementLocalLogStartOffset(after.baseOffset, 'SegmentDeletion');
        else this.maybeIncrementLogStartOffset(after.baseOffset, 'SegmentDeletion');
      }
      const line = `deleting ${toDelete.length} segment(s) [${toDelete.map((s) => s.baseOffset).join(',')}] due to ${reason}`;
      if (withoutCopy) this.logger.warn(line);
      else this.logger.info(line);
      this.localLog.removeAndDeleteSegments(toDelete, true);
      // Tiered logs keep their log start offset, so the producer snapshots of the deleted
      // segments go here (Kafka's deleteProducerSnapshots).
      if (copying) for (const s of toDelete) this.producerState.deleteSnapshot(s.baseOffset);
    }
    return deletable.length;
  }

  /**
   * Follower truncation: removes everything at or after `targetOffset`. Returns false if the log
   * already ends at or before it.
   */
  truncateTo(targetOffset: bigint): boolean {
    this.checkOnline();
    if (targetOffset < 0n) throw new KafkaError(ErrorCode.INVALID_REQUEST, `cannot truncate to a negative offset (${targetOffset})`);
    // Kafka's LogManager.truncateTo: cleaning is aborted and paused while the log is cut below its
    // active segment, and the cleaner checkpoint follows the cut.
    const hooks = this.cleanerHooks;
    const needToStopCleaner = hooks !== null && targetOffset < this.localLog.activeSegment.baseOffset;
    if (needToStopCleaner) hooks.abortAndPauseCleaning(this.topicPartition);
    try {
      const truncated = this.truncateToInternal(targetOffset);
      if (needToStopCleaner) hooks.maybeTruncateCheckpoint(this.parentDir, this.topicPartition, this.localLog.activeSegment.baseOffset);
      return truncated;
    } finally {
      if (needToStopCleaner) hooks.resumeCleaning([this.topicPartition]);
    }
  }

  private truncateToInternal(targetOffset: bigint): boolean {
    if (targetOffset >= this.logEndOffset) return false;
    return this.guard('truncateTo', () => {
      const first = this.localLog.segments.firstSegment as LogSegment;
      if (first.baseOffset > targetOffset) {
        this.truncateFullyAndStartAtInternal(targetOffset);
        return true;
      }
      this.logger.info(`truncating to offset ${targetOffset}`);
      this.localLog.truncateTo(targetOffset);
      this.leaderEpochCache.truncateFromEnd(this.logEndOffset);
      // Producer state: snapshots past the new end go, the state is rebuilt from what remains.
      this.loadProducerState();
      if (this._logStartOffset > this.logEndOffset) this._logStartOffset = this.logEndOffset;
      if (this._highWatermark > this.logEndOffset) this._highWatermark = this.logEndOffset;
      return true;
    });
  }

  /**
   * Deletes the whole log and starts it again, empty, at `newOffset`. A tiered follower that
   * rebuilds from the leader's remote data passes the leader's `logStartOffset`, below newOffset
   * (the data in between is in remote storage); otherwise the log starts at newOffset.
   */
  truncateFullyAndStartAt(newOffset: bigint, logStartOffset?: bigint): void {
    this.checkOnline();
    const hooks = this.cleanerHooks;
    hooks?.abortAndPauseCleaning(this.topicPartition);
    try {
      this.guard('truncateFullyAndStartAt', () => this.truncateFullyAndStartAtInternal(newOffset, logStartOffset));
      hooks?.maybeTruncateCheckpoint(this.parentDir, this.topicPartition, this.localLog.activeSegment.baseOffset);
    } finally {
      hooks?.resumeCleaning([this.topicPartition]);
    }
  }

  private truncateFullyAndStartAtInternal(newOffset: bigint, logStartOffset?: bigint): void {
    this.logger.info(`truncating fully and starting at offset ${newOffset}`);
    this.localLog.truncateFullyAndStartAt(newOffset);
    const tiered = this.remoteLogEnabled();
    this._logStartOffset = tiered && logStartOffset !== undefined && logStartOffset < newOffset ? logStartOffset : newOffset;
    this._localLogStartOffset = newOffset;
    this._highWatermark = newOffset;
    this.leaderEpochCache.clearAndFlush();
    this.producerState.deleteSnapshotsAfter(-1n);
    this.producerState.clear(newOffset);
  }

  /**
   * A tiered follower whose fetch offset is below the leader's local log start offset
   * (OFFSET_MOVED_TO_TIERED_STORAGE) rebuilds its state from remote storage, as Kafka's
   * TierStateMachine does: the log starts over, empty, at the leader's local log start offset with
   * the leader's log start offset below it; the leader-epoch lineage and the producer state are
   * those of the remote segment that ends just before it (its leader-epoch checkpoint and producer
   * snapshot, fetched by the caller). Fetching then continues from `localLogStartOffset`.
   */
  rebuildFromRemote(p: { localLogStartOffset: bigint; logStartOffset: bigint; epochs: readonly EpochEntry[]; producerSnapshot: Buffer }): void {
    this.checkOnline();
    if (!this.remoteLogEnabled()) throw new Error(`${tpString(this.topicPartition)} is not a tiered log: it cannot be rebuilt from remote storage`);
    // Decode first: a bad snapshot changes nothing.
    ProducerStateManager.decodeSnapshot(p.producerSnapshot);
    this.truncateFullyAndStartAt(p.localLogStartOffset, p.logStartOffset);
    this.guard('rebuildFromRemote', () => {
      this.leaderEpochCache.replaceAll(p.epochs.filter((e) => e.startOffset < p.localLogStartOffset));
      writeFileAtomic(this.localLog.fs, path.join(this.localLog.dir, snapshotFileName(p.localLogStartOffset)), p.producerSnapshot);
      this.producerState.loadFromSnapshot(this._logStartOffset, p.localLogStartOffset, this.time.milliseconds());
      this._highestOffsetInRemoteStorage = p.localLogStartOffset - 1n;
    });
    this.logger.info(`rebuilt from remote storage: log start offset ${this._logStartOffset}, local log start offset ${p.localLogStartOffset}, ${p.epochs.length} leader epoch(s), ${this.producerState.activeProducers().length} producer(s)`);
  }

  /**
   * KIP-890: a guard if the producer's transactional batch would start a transaction here (it must
   * be verified with the coordinator first, or added to the transaction by it), undefined if its
   * transaction is already open here at the batch's epoch.
   */
  maybeStartTransactionVerification(producerId: bigint, sequence: number, epoch: number): VerificationGuard | undefined {
    this.checkOnline();
    if (this.producerState.hasOngoingTransaction(producerId, epoch)) return undefined;
    return this.producerState.maybeCreateVerificationStateEntry(producerId, sequence, epoch, this.time.milliseconds()).guard;
  }

  /** Drops producers idle for producer.id.expiration.ms (the log manager's periodic check). */
  removeExpiredProducers(now: number): number {
    if (this.isOffline || this.closed) return 0;
    return this.producerState.removeExpiredProducers(now);
  }

  // ---- flush, config, lifecycle ---------------------------------------------------------------

  /** fsync everything up to the LEO; the recovery point becomes the LEO. */
  flush(): void {
    this.checkOnline();
    const leo = this.logEndOffset;
    this.guard('flush', () => this.localLog.flush(leo));
  }

  /** The log manager's flusher: flush in the background when the last flush is older than flush.ms. */
  flushIfDue(now: number): void {
    if (this.isOffline || this.closed) return;
    if (now - this.localLog.lastFlushedTime >= this.config.flushMs && this.localLog.unflushedMessages > 0n) {
      void this.localLog.flushInBackground(this.logEndOffset);
    }
  }

  /** Resolves once background fsyncs started so far (after rolls, by the flusher) are done. */
  whenBackgroundFlushesDone(): Promise<void> {
    return this.localLog.whenBackgroundFlushesDone();
  }

  updateConfig(config: LogConfig): void {
    this.localLog.config = config;
  }

  /** Takes the log offline: every later call throws KAFKA_STORAGE_ERROR; handles are dropped. */
  markOffline(reason: string): void {
    if (this.offlineError) return;
    this.offlineError = new KafkaStorageError(`log ${tpString(this.topicPartition)} in ${this.parentDir} is offline: ${reason}`);
    this.localLog.closeHandlers();
  }

  private checkOnline(): void {
    if (this.offlineError) throw this.offlineError;
    // A closed log (deleted, or the broker shutting down) refuses work without failing its
    // directory: nothing went wrong with the disk (Kafka's checkIfMemoryMappedBufferClosed).
    if (this.closed) throw new KafkaStorageError(`log ${tpString(this.topicPartition)} is closed`);
  }

  /** Reports an I/O failure (the log directory goes offline) and returns the error to throw. */
  private handleIoFailure(message: string, err: unknown): KafkaStorageError {
    const detail = err instanceof Error ? err.message : String(err);
    this.logger.error(`${message}: ${detail}`, { err });
    const full = `${message}: ${detail}`;
    try {
      this.onIoError(this, full, err);
    } finally {
      this.markOffline(full);
    }
    return this.offlineError ?? new KafkaStorageError(full, err);
  }

  /** Runs `fn`; I/O errors take the log offline and become KAFKA_STORAGE_ERROR, KafkaErrors pass. */
  private guard<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof KafkaError || !isIoError(e)) throw e;
      throw this.handleIoFailure(`error while ${what} for ${tpString(this.topicPartition)}`, e);
    }
  }

  /** Closes files (after a flush by the caller for a clean shutdown). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.isOffline) {
      this.localLog.closeHandlers();
      return;
    }
    this.guard('close', () => {
      // Clean shutdown: a producer state snapshot at the LEO, so the next start replays nothing.
      // A failed snapshot only costs a longer replay at the next start; it does not fail the directory.
      if (this.logEndOffset > 0n) {
        try {
          this.producerState.updateMapEndOffset(this.logEndOffset);
          this.producerState.takeSnapshot();
        } catch (e) {
          this.logger.warn(`producer state snapshot at ${this.logEndOffset} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      this.localLog.close();
    });
  }

  /** Drops handles without writing (offline directory). */
  closeHandlers(): void {
    this.closed = true;
    this.localLog.closeHandlers();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  toString(): string {
    return `UnifiedLog(${tpString(this.topicPartition)}, start=${this._logStartOffset}, hw=${this._highWatermark}, leo=${this.logEndOffset})`;
  }
}

/** Kafka's UnifiedLog.isRemoteLogEnabled: the broker has tiered storage on, the topic asks for it, and it is not an internal topic. */
export function isRemoteLogEnabled(remoteStorageSystemEnable: boolean, config: LogConfig, topic: string): boolean {
  return remoteStorageSystemEnable && config.remoteStorageEnable && !INTERNAL_TOPICS.has(topic);
}
