/**
 * One cleaning pass over one log (Kafka's Cleaner): build the offset map of the dirty section,
 * then recopy every segment from the log start up to the end of what the map covers, group by
 * group, into `.cleaned` segments swapped in for the originals. The rules are Kafka's
 * (LogCleaner.scala, MemoryRecords.filterTo):
 * - the map holds, per key of the dirty section [firstDirtyOffset, firstUncleanableOffset), its
 *   latest offset, up to slots x log.cleaner.io.buffer.load.factor keys (the pass then ends at the
 *   last offset mapped, and the next pass goes on from there); aborted transactions' records are
 *   not mapped;
 * - a record is kept when its offset is above the map's latest offset, or it is its key's latest
 *   (offset >= the map's) and has a value, or it is a tombstone whose batch has no delete horizon
 *   yet or one still in the future (a tombstone's first pass sets the horizon to now +
 *   delete.retention.ms in the batch's base timestamp, KIP-534, and a pass after it removes it);
 *   keyless records are removed (counted as invalid: a topic switched to compact may hold them);
 * - records of aborted transactions (the .txnindex) are removed at once, keys or not;
 * - a COMMIT marker goes once the cleaner saw none of its transaction's batches in the pass and
 *   its delete horizon (set the first time it qualifies) has passed; an ABORT marker likewise,
 *   once its transaction has no data left; an ABORT marker whose data remains keeps its
 *   transaction's entry in the cleaned segment's .txnindex;
 * - the batch holding an active producer's last data offset (or its last marker, when the state
 *   has no data offset) is kept, emptied if need be, so its sequence and epoch survive a reload,
 *   and so is the batch ending exactly at the pass's upper bound;
 * - batches keep their base offset, last offset, producer id, epoch, base sequence, leader epoch,
 *   codec (rebuilt batches are recompressed) and headers (protocol/records/memory-records-filter.ts).
 *
 * Event loop (this is what lets the cleaner run inside the broker process): all work happens in
 * chunks of one read buffer (log.cleaner.io.buffer.size / threads / 2, 256 KiB by default): a
 * synchronous read, filter and append, then an await. Every await is followed by `checkDone`,
 * which throws when the pass was aborted (LogCleanerManager), the log is closed or offline, or the
 * cleaner is shutting down; so nothing below ever acts on a log that changed under it in a way
 * that matters. What each await may interleave with, and why it is safe:
 * - appends to the active segment, and rolls: the pass never reads past firstUncleanableOffset,
 *   which is at or below the active segment's base offset when the pass was chosen, and the
 *   segment list it works on was taken then; segments do not change once inactive;
 * - retention: for compacted logs it runs on the cleaner's own thread between passes (Kafka's
 *   deletableLogs), never during one; a log whose policy was switched to delete meanwhile is
 *   skipped by the log manager's retention while it is in progress (pauseCleaningForNonCompactedPartitions);
 *   DeleteRecords only moves the log start offset (segments go at the next retention run), and
 *   replaceSegments skips old segments that are no longer in the log;
 * - truncation by a follower (truncateTo below the active segment, truncateFullyAndStartAt):
 *   UnifiedLog calls abortAndPauseCleaning first, so the next checkDone throws and the pass only
 *   deletes its own `.cleaned` files; the checkpoint is cut to the new active segment;
 * - deletion of the partition: abortCleaning first, and the log is closed (checkDone throws);
 * - the directory going offline: the log is offline (checkDone throws, nothing is written);
 * - reads (fetches, coordinator loads): synchronous, so they see the old segments or the new
 *   ones, never a mix; replaceSegments itself is synchronous.
 * The `.cleaned` segment is private to the pass until the swap; its flush (fsync) runs on the
 * thread pool, then checkDone, then the synchronous swap.
 *
 * Offsets inside a pass are numbers (exact below 2^53, ~9 * 10^15: a log with more offsets is
 * refused as uncleanable).
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control-record';
import { BatchRetention, GrowableBuffer, filterTo, type BatchRetentionResult, type RecordFilter } from '../../protocol/records/memory-records-filter';
import { RecordIterator } from '../../protocol/records/record';
import {
  BASE_OFFSET_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
} from '../../protocol/records/record-batch';
import { DEFAULT_MAX_DECOMPRESSED_SIZE } from '../../protocol/records/compression';
import type { AbortedTxn } from '../index/transaction-index';
import type { LogSegment } from '../log-segment';
import type { LastRecord, UnifiedLog } from '../unified-log';
import type { OffsetMap } from './offset-map';
import type { Throttler } from './throttler';
import type { Logger } from '../../common/logger';
import type { Time } from '../../common/time';
import { tpString, type TopicPartition } from '../../common/topic-partition';

/** The pass was aborted (truncation, deletion, shutdown of the partition's cleaning): Kafka's LogCleaningAbortedException. */
export class LogCleaningAbortedException extends Error {
  constructor(message = 'log cleaning aborted') {
    super(message);
    this.name = 'LogCleaningAbortedException';
  }
}

/** The cleaner is shutting down (Kafka's ThreadShutdownException). */
export class ThreadShutdownException extends Error {
  constructor() {
    super('log cleaner shutting down');
    this.name = 'ThreadShutdownException';
  }
}

/** What a pass needs to know about its log (Kafka's LogToClean, see log-cleaner-manager.ts). */
export interface CleanableLog {
  topicPartition: TopicPartition;
  log: UnifiedLog;
  firstDirtyOffset: bigint;
  firstUncleanableOffset: bigint;
}

/**
 * Kafka's CleanerStats. Times are ms from a monotonic process clock (performance.now), not the
 * cleaner's Time: they measure the work of a pass, which a test's mock clock would not see.
 */
export class CleanerStats {
  readonly startTime: number;
  mapCompleteTime = -1;
  endTime = -1;
  bytesRead = 0;
  bytesWritten = 0;
  mapBytesRead = 0;
  mapMessagesRead = 0;
  messagesRead = 0;
  invalidMessagesRead = 0;
  messagesWritten = 0;
  bufferUtilization = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.startTime = now();
  }
  readMessages(messages: number, bytes: number): void {
    this.messagesRead += messages;
    this.bytesRead += bytes;
  }
  invalidMessage(): void {
    this.invalidMessagesRead++;
  }
  recopyMessages(messages: number, bytes: number): void {
    this.messagesWritten += messages;
    this.bytesWritten += bytes;
  }
  indexMessagesRead(n: number): void {
    this.mapMessagesRead += n;
  }
  indexBytesRead(n: number): void {
    this.mapBytesRead += n;
  }
  indexDone(): void {
    this.mapCompleteTime = this.now();
  }
  allDone(): void {
    this.endTime = this.now();
  }
  get elapsedSecs(): number {
    return (this.endTime - this.startTime) / 1000;
  }
  get elapsedIndexSecs(): number {
    return (this.mapCompleteTime - this.startTime) / 1000;
  }
}

interface AbortedTransactionMetadata {
  abortedTxn: AbortedTxn;
  lastObservedBatchOffset: bigint | undefined;
}

/** A min-heap of aborted transactions by first offset. */
class TxnHeap {
  private readonly items: AbortedTxn[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): AbortedTxn | undefined {
    return this.items[0];
  }
  push(t: AbortedTxn): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].firstOffset <= a[i].firstOffset) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): AbortedTxn | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as AbortedTxn;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l].firstOffset < a[m].firstOffset) m = l;
        if (r < a.length && a[r].firstOffset < a[m].firstOffset) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Kafka's CleanedTransactionMetadata: the aborted and committed transactions the pass is inside as
 * it walks the log, deciding which batches and markers can go and writing the retained aborted
 * transactions into the cleaned segment's .txnindex.
 */
export class CleanedTransactionMetadata {
  private readonly ongoingCommittedTxns = new Set<bigint>();
  private readonly ongoingAbortedTxns = new Map<bigint, AbortedTransactionMetadata>();
  private readonly abortedTransactions = new TxnHeap();
  /** The segment whose .txnindex gets the retained aborted transactions. */
  cleanedSegment: LogSegment | null = null;

  addAbortedTransactions(list: readonly AbortedTxn[]): void {
    for (const t of list) this.abortedTransactions.push(t);
  }

  /** A control batch was read; true when it can be discarded. */
  onControlBatchRead(batch: RecordBatch): boolean {
    this.consumeAbortedTxnsUpTo(batch.lastOffset);
    const it = new RecordIterator(batch);
    if (!it.next()) return true; // an empty control batch was already cleaned: safe to discard
    const type = parseControlRecordType(it.key);
    const producerId = batch.producerId;
    if (type === ControlRecordType.ABORT) {
      const m = this.ongoingAbortedTxns.get(producerId);
      this.ongoingAbortedTxns.delete(producerId);
      // Keep the marker until every batch of its transaction has been removed.
      if (m && m.lastObservedBatchOffset !== undefined) {
        this.cleanedSegment?.appendAbortedTxn(m.abortedTxn);
        return false;
      }
      return true;
    }
    if (type === ControlRecordType.COMMIT) {
      // Discardable when none of the transaction's batches was traversed.
      return !this.ongoingCommittedTxns.delete(producerId);
    }
    return false;
  }

  /** A data batch was read; true when it belongs to an aborted transaction (safe to discard). */
  onBatchRead(batch: RecordBatch): boolean {
    this.consumeAbortedTxnsUpTo(batch.lastOffset);
    if (!batch.isTransactional) return false;
    const m = this.ongoingAbortedTxns.get(batch.producerId);
    if (m) {
      m.lastObservedBatchOffset = batch.lastOffset;
      return true;
    }
    this.ongoingCommittedTxns.add(batch.producerId);
    return false;
  }

  private consumeAbortedTxnsUpTo(offset: bigint): void {
    for (let t = this.abortedTransactions.peek(); t !== undefined && t.firstOffset <= offset; t = this.abortedTransactions.peek()) {
      this.abortedTransactions.pop();
      if (!this.ongoingAbortedTxns.has(t.producerId)) this.ongoingAbortedTxns.set(t.producerId, { abortedTxn: t, lastObservedBatchOffset: undefined });
    }
  }
}

export interface CleanerParams {
  id: number;
  offsetMap: OffsetMap;
  /** Size of each of the read and write buffers. */
  ioBufferSize: number;
  /** The largest the buffers grow to for a large batch (message.max.bytes). */
  maxIoBufferSize: number;
  dupBufferLoadFactor: number;
  throttler: Throttler;
  time: Time;
  /** Throws when the partition's cleaning was aborted, its log closed or offline, or the cleaner stopped. */
  checkDone: (tp: TopicPartition) => void;
  logger: Logger;
  /** Waits `ms` (0: lets the event loop run once, setImmediate). Tests may replace it. */
  pause?: (ms: number) => Promise<void>;
}

const MAX_SAFE_OFFSET = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_32 = 4294967296;

function readInt64(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * TWO_32 + buf.readUInt32BE(at + 4);
}

export function defaultPause(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

/** The last offset of the last batch in `buf` (whole batches), or -1n. */
function lastOffsetOf(buf: Buffer): bigint {
  let pos = 0;
  let last = -1n;
  while (pos + RECORD_BATCH_OVERHEAD <= buf.length) {
    last = buf.readBigInt64BE(pos + BASE_OFFSET_OFFSET) + BigInt(buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
    pos += buf.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
  }
  return last;
}

/**
 * The cleaner's filter for one segment (Kafka's anonymous RecordFilter in cleanInto). Numbers are
 * computed once per batch in checkBatchRetention and used for its records.
 */
class CleanerRecordFilter implements RecordFilter {
  private discardBatchRecords = false;
  private batchBase = 0;
  private batchHasHorizon = false;
  private batchHorizon = 0;

  constructor(
    readonly currentTime: number,
    readonly deleteRetentionMs: number,
    private readonly map: OffsetMap,
    private readonly txn: CleanedTransactionMetadata,
    private readonly lastRecordsOfActiveProducers: ReadonlyMap<bigint, LastRecord>,
    private readonly upperBoundOffsetOfCleaningRound: bigint,
    private readonly stats: CleanerStats,
  ) {}

  checkBatchRetention(batch: RecordBatch): BatchRetentionResult {
    const isControl = batch.isControlBatch;
    this.batchBase = readInt64(batch.buf, batch.offset + BASE_OFFSET_OFFSET);
    this.batchHasHorizon = batch.hasDeleteHorizon;
    this.batchHorizon = this.batchHasHorizon ? readInt64(batch.buf, batch.offset + BASE_TIMESTAMP_OFFSET) : 0;
    // Markers piggy-back on the tombstone retention: one is never deleted before every record of
    // its transaction is.
    const canDiscardBatch = isControl ? this.txn.onControlBatchRead(batch) : this.txn.onBatchRead(batch);
    this.discardBatchRecords = isControl ? canDiscardBatch && this.batchHasHorizon && this.batchHorizon <= this.currentTime : canDiscardBatch;
    const producerId = batch.producerId;
    let batchRetention: BatchRetention;
    if (producerId >= 0n && this.isBatchLastRecordOfProducer(batch, producerId, isControl)) batchRetention = BatchRetention.RETAIN_EMPTY;
    // The batch ending at the pass's upper bound stays, even empty, so its last offset is not lost.
    else if (batch.nextOffset === this.upperBoundOffsetOfCleaningRound) batchRetention = BatchRetention.RETAIN_EMPTY;
    else if (this.discardBatchRecords) batchRetention = BatchRetention.DELETE;
    else batchRetention = BatchRetention.DELETE_EMPTY;
    return { batchRetention, containsMarkerForEmptyTxn: canDiscardBatch && isControl };
  }

  /**
   * The batch is kept to preserve an active producer's state: the one holding its last data
   * offset (its last sequence), or, when the state has no data offset, a marker of its current
   * epoch (fencing). A producer that is no longer active keeps nothing.
   */
  private isBatchLastRecordOfProducer(batch: RecordBatch, producerId: bigint, isControl: boolean): boolean {
    const last = this.lastRecordsOfActiveProducers.get(producerId);
    if (!last) return false;
    if (last.lastDataOffset !== undefined) return batch.lastOffset === last.lastDataOffset;
    return isControl && batch.producerEpoch === last.producerEpoch;
  }

  shouldRetainRecord(batch: RecordBatch, it: RecordIterator): boolean {
    if (this.discardBatchRecords) return false; // only kept for the producer's sequence
    if (batch.isControlBatch) return true;
    const offset = this.batchBase + it.offsetDelta;
    if (offset > this.map.latestOffset) return true;
    if (it.keyLength < 0) {
      this.stats.invalidMessage();
      return false;
    }
    const foundOffset = this.map.get(it.buf, it.keyStart, it.keyLength);
    const latestOffsetForKey = offset >= foundOffset;
    const shouldRetainDeletes = !this.batchHasHorizon || this.currentTime < this.batchHorizon;
    return latestOffsetForKey && (it.valueLength >= 0 || shouldRetainDeletes);
  }
}

export class Cleaner {
  readonly id: number;
  readonly offsetMap: OffsetMap;
  private readonly ioBufferSize: number;
  private readonly maxIoBufferSize: number;
  private readonly dupBufferLoadFactor: number;
  private readonly throttler: Throttler;
  private readonly time: Time;
  private readonly checkDone: (tp: TopicPartition) => void;
  private readonly logger: Logger;
  private readonly pause: (ms: number) => Promise<void>;
  private readBuffer: Buffer;
  private readonly writeBuffer: GrowableBuffer;

  constructor(p: CleanerParams) {
    this.id = p.id;
    this.offsetMap = p.offsetMap;
    this.ioBufferSize = Math.max(RECORD_BATCH_OVERHEAD, p.ioBufferSize);
    this.maxIoBufferSize = p.maxIoBufferSize;
    this.dupBufferLoadFactor = p.dupBufferLoadFactor;
    this.throttler = p.throttler;
    this.time = p.time;
    this.checkDone = p.checkDone;
    this.logger = p.logger.withPrefix(`Cleaner ${p.id}: `);
    this.pause = p.pause ?? defaultPause;
    this.readBuffer = Buffer.allocUnsafe(this.ioBufferSize);
    this.writeBuffer = new GrowableBuffer(this.ioBufferSize);
    if (this.offsetMap.slots * this.dupBufferLoadFactor <= 1) {
      throw new Error(
        'offset map is too small to fit in even a single message, so log cleaning will never make progress. You can increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads',
      );
    }
  }

  /** Cleans the log; returns the first offset not cleaned (the next pass's first dirty offset) and the stats. */
  clean(cleanable: CleanableLog): Promise<[bigint, CleanerStats]> {
    return this.doClean(cleanable, this.time.milliseconds());
  }

  /** Kafka's doClean with an explicit clock (tests clean "later" this way). */
  async doClean(cleanable: CleanableLog, currentTime: number): Promise<[bigint, CleanerStats]> {
    const log = cleanable.log;
    const name = tpString(log.topicPartition);
    if (log.logEndOffset > MAX_SAFE_OFFSET) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `log ${name} has offsets beyond 2^53, which the cleaner does not handle`);
    this.logger.info(`Beginning cleaning of log ${name}`);
    // The legacy (magic < 2) horizon: only logged, krill stores v2 batches only.
    const cleanSegs = log.logSegmentsIn(0n, cleanable.firstDirtyOffset);
    const lastClean = cleanSegs[cleanSegs.length - 1];
    const legacyDeleteHorizonMs = lastClean ? lastClean.lastModified() - log.config.deleteRetentionMs : 0;
    const stats = new CleanerStats();
    this.logger.info(`Building offset map for ${name}...`);
    const upperBoundOffset = cleanable.firstUncleanableOffset;
    await this.buildOffsetMap(log, cleanable.firstDirtyOffset, upperBoundOffset, this.offsetMap, stats);
    const endOffset = BigInt(this.offsetMap.latestOffset + 1);
    stats.indexDone();
    const upTo = log.logSegmentsIn(0n, cleanable.firstUncleanableOffset);
    const cleanableHorizonMs = upTo.length > 0 ? upTo[upTo.length - 1].lastModified() : 0;
    this.logger.info(
      `Cleaning log ${name} (cleaning prior to ${new Date(cleanableHorizonMs).toString()}, discarding tombstones prior to upper bound deletion horizon ${new Date(legacyDeleteHorizonMs).toString()})...`,
    );
    const txn = new CleanedTransactionMetadata();
    const groups = this.groupSegmentsBySize(log.logSegmentsIn(0n, endOffset), log.config.segmentBytes, log.config.segmentIndexBytes, cleanable.firstUncleanableOffset);
    for (const group of groups) await this.cleanSegments(log, group, this.offsetMap, currentTime, stats, txn, legacyDeleteHorizonMs, upperBoundOffset);
    stats.bufferUtilization = this.offsetMap.utilization;
    stats.allDone();
    return [endOffset, stats];
  }

  /** Waits out the throttle (or lets the event loop run once), then checks the pass may go on. */
  private async yieldAndCheck(tp: TopicPartition, observedBytes: number): Promise<void> {
    await this.pause(this.throttler.maybeThrottle(observedBytes));
    this.checkDone(tp);
  }

  /**
   * Cleans a group of segments into one replacement segment (Kafka's cleanSegments): a `.cleaned`
   * segment at the group's first base offset, filled segment by segment, flushed, given the last
   * segment's modification time, then swapped in (UnifiedLog.replaceSegments). Aborted or failed
   * before the swap: the `.cleaned` files are deleted and the log is untouched.
   */
  async cleanSegments(
    log: UnifiedLog,
    segments: readonly LogSegment[],
    map: OffsetMap,
    currentTime: number,
    stats: CleanerStats,
    txn: CleanedTransactionMetadata,
    legacyDeleteHorizonMs: number,
    upperBoundOffsetOfCleaningRound: bigint,
  ): Promise<void> {
    const tp = log.topicPartition;
    const name = tpString(tp);
    const cleaned = log.createNewCleanedSegment(segments[0].baseOffset);
    txn.cleanedSegment = cleaned;
    let swapping = false;
    try {
      const lastRecords = log.lastRecordsOfActiveProducers();
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i];
        const next = segments[i + 1];
        // Aborted transactions of the whole segment range: the cleaned .txnindex is rebuilt in full.
        const upperBound = next ? next.baseOffset : seg.readNextOffset();
        txn.addAbortedTransactions(log.collectAbortedTransactions(seg.baseOffset, upperBound));
        const retainLegacyDeletesAndTxnMarkers = seg.lastModified() > legacyDeleteHorizonMs;
        this.logger.info(
          `Cleaning ${seg} in log ${name} into ${cleaned.baseOffset} with an upper bound deletion horizon ${legacyDeleteHorizonMs} computed from ` +
            `the segment last modified time of ${seg.lastModified()},${retainLegacyDeletesAndTxnMarkers ? 'retaining' : 'discarding'} deletes.`,
        );
        await this.cleanInto(tp, seg, cleaned, map, log.config.deleteRetentionMs, log.config.maxMessageBytes, txn, lastRecords, upperBoundOffsetOfCleaningRound, stats, currentTime);
      }
      cleaned.onBecomeInactiveSegment();
      cleaned.txnIndex?.flush();
      // The fsync runs on the thread pool; the log may change meanwhile, so check again after it.
      await cleaned.log.flushAsync();
      this.checkDone(tp);
      // Keep the original's modification time (retention and the legacy horizon read it).
      cleaned.setLastModified(segments[segments.length - 1].lastModified());
      this.logger.info(`Swapping in cleaned segment ${cleaned} for segment(s) ${segments.map((s) => s.toString()).join(', ')} in log ${log}`);
      swapping = true;
      log.replaceSegments([cleaned], [...segments]);
      cleaned.unloadIndexes();
    } catch (e) {
      if (!swapping) {
        // Nothing of the pass is in the log: its files go (Kafka deletes them on an abort; after
        // any other failure the loader would at the next start).
        try {
          cleaned.closeHandlers();
          cleaned.deleteIfExists();
        } catch (deleteError) {
          this.logger.warn(`could not delete ${cleaned.log.file}: ${(deleteError as Error).message}`);
        }
      }
      throw e;
    } finally {
      txn.cleanedSegment = null;
    }
  }

  /**
   * Kafka's cleanInto: one segment through the filter, a read buffer at a time, the kept batches
   * appended to `dest` (indexes built as the append path builds them).
   */
  private async cleanInto(
    tp: TopicPartition,
    source: LogSegment,
    dest: LogSegment,
    map: OffsetMap,
    deleteRetentionMs: number,
    maxLogMessageSize: number,
    txn: CleanedTransactionMetadata,
    lastRecords: ReadonlyMap<bigint, LastRecord>,
    upperBoundOffsetOfCleaningRound: bigint,
    stats: CleanerStats,
    currentTime: number,
  ): Promise<void> {
    const filter = new CleanerRecordFilter(currentTime, deleteRetentionMs, map, txn, lastRecords, upperBoundOffsetOfCleaningRound, stats);
    const maxDecompressedSize = DEFAULT_MAX_DECOMPRESSED_SIZE;
    let position = 0;
    while (position < source.log.sizeInBytes) {
      this.checkDone(tp);
      const len = Math.min(this.readBuffer.length, source.log.sizeInBytes - position);
      source.log.readInto(this.readBuffer, 0, position, len);
      const records = this.readBuffer.subarray(0, len);
      this.writeBuffer.reset();
      const result = filterTo(records, filter, this.writeBuffer, { maxDecompressedSize });
      stats.readMessages(result.messagesRead, result.bytesRead);
      stats.recopyMessages(result.messagesRetained, result.bytesRetained);
      position += result.bytesRead;
      const out = result.output;
      if (out.length > 0) {
        // The .cleaned segment is seen by nobody until the swap: no other call can interleave here.
        const at = dest.appendToLog(out, lastOffsetOf(out), result.maxTimestamp);
        dest.updateIndexes({ position: at, records: out });
      }
      // A batch larger than the buffer: grow it and read again.
      if (len > 0 && result.bytesRead === 0) this.growBuffersOrFail(source, position, maxLogMessageSize, records);
      await this.yieldAndCheck(tp, len + out.length);
    }
    this.restoreBuffers();
  }

  /** Kafka's growBuffersOrFail: double the read buffer up to max(message.max.bytes, the topic's), or to the batch in hand. */
  private growBuffersOrFail(source: LogSegment, position: number, maxLogMessageSize: number, records: Buffer): void {
    let maxSize: number;
    if (this.readBuffer.length >= maxLogMessageSize) {
      const where = `log segment ${source.log.file} at position ${position}`;
      if (records.length < LOG_OVERHEAD) throw new Error(`Could not determine next batch size for ${where}`);
      const nextBatchSize = records.readInt32BE(BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      if (nextBatchSize <= LOG_OVERHEAD) throw new Error(`Invalid batch size ${nextBatchSize} for ${where}`);
      if (nextBatchSize <= this.readBuffer.length) throw new Error(`Batch size ${nextBatchSize} < buffer size ${this.readBuffer.length}, but not processed for ${where}`);
      const bytesLeft = source.log.sizeInBytes - position;
      if (nextBatchSize > bytesLeft) {
        throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `Log segment may be corrupt, batch size ${nextBatchSize} > ${bytesLeft} bytes left in segment for ${where}`);
      }
      maxSize = nextBatchSize;
    } else {
      maxSize = maxLogMessageSize;
    }
    this.growBuffers(maxSize);
  }

  private growBuffers(maxLogMessageSize: number): void {
    const maxBufferSize = Math.max(maxLogMessageSize, this.maxIoBufferSize);
    if (this.readBuffer.length >= maxBufferSize) throw new Error(`This log contains a message larger than maximum allowable size of ${maxBufferSize}.`);
    const newSize = Math.min(this.readBuffer.length * 2, maxBufferSize);
    this.logger.info(`Growing cleaner I/O buffers from ${this.readBuffer.length} bytes to ${newSize} bytes.`);
    this.readBuffer = Buffer.allocUnsafe(newSize);
  }

  private restoreBuffers(): void {
    if (this.readBuffer.length > this.ioBufferSize) this.readBuffer = Buffer.allocUnsafe(this.ioBufferSize);
  }

  /**
   * Kafka's groupSegmentsBySize: consecutive segments whose .log bytes stay within segment.bytes
   * and whose offset and time index bytes each stay within segment.index.bytes, and whose offsets
   * fit one segment's int32 relative range (an empty segment never limits that), form a group.
   */
  groupSegmentsBySize(segments: readonly LogSegment[], maxSize: number, maxIndexSize: number, firstUncleanableOffset: bigint): LogSegment[][] {
    const grouped: LogSegment[][] = [];
    let segs = [...segments];
    while (segs.length > 0) {
      const group = [segs[0]];
      let logSize = segs[0].size;
      let indexSize = segs[0].offsetIndex.sizeInBytes;
      let timeIndexSize = segs[0].timeIndex.sizeInBytes;
      segs = segs.slice(1);
      while (
        segs.length > 0 &&
        logSize + segs[0].size <= maxSize &&
        indexSize + segs[0].offsetIndex.sizeInBytes <= maxIndexSize &&
        timeIndexSize + segs[0].timeIndex.sizeInBytes <= maxIndexSize &&
        (segs[0].size === 0 || lastOffsetForFirstSegment(segs, firstUncleanableOffset) - group[group.length - 1].baseOffset <= 0x7fffffffn)
      ) {
        group.push(segs[0]);
        logSize += segs[0].size;
        indexSize += segs[0].offsetIndex.sizeInBytes;
        timeIndexSize += segs[0].timeIndex.sizeInBytes;
        segs = segs.slice(1);
      }
      grouped.push(group);
    }
    return grouped;
  }

  /**
   * Kafka's buildOffsetMap: the latest offset of every key in [start, end) of the log, segment by
   * segment, until the map reaches its load factor (the pass then ends where it stopped).
   */
  async buildOffsetMap(log: UnifiedLog, start: bigint, end: bigint, map: OffsetMap, stats: CleanerStats): Promise<void> {
    map.clear();
    const dirty = log.logSegmentsIn(start, end);
    const name = tpString(log.topicPartition);
    this.logger.info(`Building offset map for log ${name} for ${dirty.length} segments in offset range [${start}, ${end}).`);
    const txn = new CleanedTransactionMetadata();
    txn.addAbortedTransactions(log.collectAbortedTransactions(start, end));
    let full = false;
    for (let i = 0; i < dirty.length && !full; i++) {
      this.checkDone(log.topicPartition);
      const nextSegmentStartOffset = i + 1 < dirty.length ? dirty[i + 1].baseOffset : end;
      full = await this.buildOffsetMapForSegment(log.topicPartition, dirty[i], map, start, nextSegmentStartOffset, log.config.maxMessageBytes, txn, stats);
      if (full) this.logger.debug(`Offset map is full, ${i} segments fully mapped, segment with base offset ${dirty[i].baseOffset} is partially mapped`);
    }
    this.logger.info(`Offset map for log ${name} complete.`);
  }

  /** One segment into the map; true when the map filled up in it. */
  private async buildOffsetMapForSegment(
    tp: TopicPartition,
    segment: LogSegment,
    map: OffsetMap,
    startOffset: bigint,
    nextSegmentStartOffset: bigint,
    maxLogMessageSize: number,
    txn: CleanedTransactionMetadata,
    stats: CleanerStats,
  ): Promise<boolean> {
    let position = segment.offsetIndex.lookup(startOffset).position;
    const maxDesiredMapSize = Math.floor(map.slots * this.dupBufferLoadFactor);
    const start = Number(startOffset);
    while (position < segment.log.sizeInBytes) {
      this.checkDone(tp);
      const len = Math.min(this.readBuffer.length, segment.log.sizeInBytes - position);
      segment.log.readInto(this.readBuffer, 0, position, len);
      const buf = this.readBuffer.subarray(0, len);
      const startPosition = position;
      let pos = 0;
      while (pos + LOG_OVERHEAD <= len) {
        const size = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
        if (size < RECORD_BATCH_OVERHEAD || pos + size > len) break;
        const batch = new RecordBatch(buf, pos);
        if (batch.isControlBatch) {
          txn.onControlBatchRead(batch);
          stats.indexMessagesRead(1);
        } else if (txn.onBatchRead(batch)) {
          // An aborted transaction's batch: nothing to map.
          stats.indexMessagesRead(batch.recordsCount);
        } else {
          const base = readInt64(buf, pos + BASE_OFFSET_OFFSET);
          const it = new RecordIterator(batch, { maxOutputLength: DEFAULT_MAX_DECOMPRESSED_SIZE });
          while (it.next()) {
            const offset = base + it.offsetDelta;
            if (it.keyLength >= 0 && offset >= start) {
              if (map.size < maxDesiredMapSize) map.put(it.buf, it.keyStart, it.keyLength, offset);
              else return true;
            }
            stats.indexMessagesRead(1);
          }
        }
        const lastOffset = readInt64(buf, pos + BASE_OFFSET_OFFSET) + buf.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET);
        if (lastOffset >= start) map.updateLatestOffset(lastOffset);
        pos += size;
      }
      position += pos;
      stats.indexBytesRead(pos);
      // Not even one complete batch: the read buffer is too small for it.
      if (position === startPosition) this.growBuffersOrFail(segment, position, maxLogMessageSize, buf);
      await this.yieldAndCheck(tp, len);
    }
    // Offsets past the segment's last batch (a gap) are covered too.
    map.updateLatestOffset(Number(nextSegmentStartOffset) - 1);
    this.restoreBuffers();
    return false;
  }
}

/**
 * Kafka's lastOffsetForFirstSegment: the last offset the first of `segs` can hold, estimated from
 * the next segment's base offset (or the first uncleanable offset for the last one).
 */
function lastOffsetForFirstSegment(segs: readonly LogSegment[], firstUncleanableOffset: bigint): bigint {
  return segs.length > 1 ? segs[1].baseOffset - 1n : firstUncleanableOffset - 1n;
}
