/**
 * One segment of a partition log: the `.log` file (FileRecords) from `baseOffset` up to the next
 * segment's base, with its sparse offset and time indexes, and a transaction index once the
 * segment holds an ABORT marker (created on demand, see `txnIndex`).
 *
 * Owns: those files, the running max timestamp (and the offset that first reached it), the
 * byte count since the last index entry, and the timestamp segment.ms rolling measures from.
 *
 * Invariants: every batch in the file has baseOffset >= baseOffset and lastOffset - baseOffset fits
 * an int32 (shouldRoll rolls before that could break); index entries only point at bytes already in
 * the file. Appends happen in two steps so the log can advance its end offset between them
 * (KAFKA-7866): `appendToLog` writes the bytes, `updateIndexes` records them in the indexes. If the
 * second step fails the data is still correct and the indexes are merely behind: the caller takes
 * the log offline and recovery rebuilds them.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import type { ReadBufferPool } from './read-buffer-pool';
import {
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_OFFSET,
  RECORD_BATCH_OVERHEAD,
} from '../protocol/records/record-batch';
import { BatchHeader, FileRecords, TimestampAndOffset } from './file-records';
import { StorageFs } from './fs';
import { OffsetIndex } from './index/offset-index';
import { TimeIndex, TimestampOffset } from './index/time-index';
import { AbortedTxn, TransactionIndex, TxnIndexSearchResult } from './index/transaction-index';
import { LogConfig, randomSegmentJitter } from './log-config';
import { TXN_INDEX_FILE_SUFFIX, logFile, offsetIndexFile, replaceSuffix, timeIndexFile, transactionIndexFile } from './log-file-utils';
import { Time } from '../common/time';

/** Where an offset lives: Kafka's LogOffsetMetadata. */
export interface LogOffsetMetadata {
  messageOffset: bigint;
  /** -1n when only the offset is known. */
  segmentBaseOffset: bigint;
  /** -1 when only the offset is known. */
  relativePositionInSegment: number;
}

export function offsetOnlyMetadata(offset: bigint): LogOffsetMetadata {
  return { messageOffset: offset, segmentBaseOffset: -1n, relativePositionInSegment: -1 };
}

/**
 * Result of a read: whole batches only. `records` is a list of chunks to write to the socket in
 * order (today at most one; a file-streaming read can produce several without copying), empty
 * when there is nothing to return (the Fetch response then carries a zero-length record set,
 * never null: librdkafka rejects a null one).
 */
export interface FetchDataInfo {
  fetchOffsetMetadata: LogOffsetMetadata;
  records: Buffer[];
  /** Total bytes in `records`. */
  sizeInBytes: number;
  /** True when the first batch alone exceeds maxBytes and minOneMessage was false. */
  firstEntryIncomplete: boolean;
  /** Set when `records` lie in a pooled buffer: call once the bytes are no longer needed. */
  release?: () => void;
  /** read_committed reads (isolation TXN_COMMITTED): the aborted transactions overlapping the range. */
  abortedTransactions?: AbortedTxn[];
}

export function emptyFetchDataInfo(md: LogOffsetMetadata, firstEntryIncomplete = false): FetchDataInfo {
  return { fetchOffsetMetadata: md, records: [], sizeInBytes: 0, firstEntryIncomplete };
}

/** The records of a read as one Buffer (tests, small consumers). */
export function recordsBuffer(info: FetchDataInfo): Buffer {
  if (info.records.length === 1) return info.records[0];
  return info.records.length === 0 ? Buffer.alloc(0) : Buffer.concat(info.records);
}

export interface RollParams {
  maxSegmentMs: number;
  maxSegmentBytes: number;
  maxTimestampInMessages: number;
  maxOffsetInMessages: bigint;
  messagesSize: number;
  now: number;
}

export interface IndexUpdate {
  /** Where the append started in the file. */
  position: number;
  /** The bytes appended: whole batches, offsets assigned. */
  records: Buffer;
}

export type SegmentTxnIndex = TransactionIndex;

const UNKNOWN: TimestampOffset = Object.freeze({ timestamp: -1, offset: -1n }) as TimestampOffset;

export class LogSegment {
  /**
   * The `.txnindex`, null until the segment has one: created in memory at the first aborted
   * transaction (the file itself at its first append, see TransactionIndex), or found at load.
   */
  txnIndex: SegmentTxnIndex | null = null;
  private created: number;
  private rollingBasedTimestamp: number | undefined;
  private maxTimestampAndOffsetSoFar: TimestampOffset = UNKNOWN;
  private bytesSinceLastIndexEntry = 0;
  /** Set by `open`; needed to create the transaction index on demand. */
  fs: StorageFs | null = null;

  constructor(
    readonly log: FileRecords,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly baseOffset: bigint,
    readonly indexIntervalBytes: number,
    readonly rollJitterMs: number,
    private readonly time: Time,
  ) {
    this.created = time.milliseconds();
  }

  static open(p: {
    fs: StorageFs;
    dir: string;
    baseOffset: bigint;
    config: LogConfig;
    time: Time;
    fileAlreadyExists: boolean;
    suffix?: string;
  }): LogSegment {
    const suffix = p.suffix ?? '';
    const log = FileRecords.open(p.fs, logFile(p.dir, p.baseOffset, suffix), { create: !p.fileAlreadyExists });
    const oi = new OffsetIndex(p.fs, offsetIndexFile(p.dir, p.baseOffset, suffix), p.baseOffset, p.config.segmentIndexBytes);
    const ti = new TimeIndex(p.fs, timeIndexFile(p.dir, p.baseOffset, suffix), p.baseOffset, p.config.segmentIndexBytes);
    const seg = new LogSegment(log, oi, ti, p.baseOffset, p.config.indexIntervalBytes, randomSegmentJitter(p.config), p.time);
    seg.fs = p.fs;
    const txnFile = transactionIndexFile(p.dir, p.baseOffset, suffix);
    if (p.fileAlreadyExists && p.fs.existsSync(txnFile)) seg.txnIndex = new TransactionIndex(p.fs, txnFile, p.baseOffset);
    if (!p.fileAlreadyExists) {
      try {
        oi.createIfMissing();
        ti.createIfMissing();
      } catch (e) {
        seg.closeHandlers();
        throw e;
      }
    }
    return seg;
  }

  get size(): number {
    return this.log.sizeInBytes;
  }

  /** The max timestamp so far and the offset that reached it (from the time index when not yet known). */
  readMaxTimestampAndOffsetSoFar(): TimestampOffset {
    if (this.maxTimestampAndOffsetSoFar === UNKNOWN) this.maxTimestampAndOffsetSoFar = this.timeIndex.lastEntry();
    return this.maxTimestampAndOffsetSoFar;
  }

  get maxTimestampSoFar(): number {
    return this.readMaxTimestampAndOffsetSoFar().timestamp;
  }

  /** Used by recovery, which recomputes the max timestamp while rebuilding. */
  setMaxTimestampAndOffsetSoFar(v: TimestampOffset): void {
    this.maxTimestampAndOffsetSoFar = v;
  }

  canConvertToRelativeOffset(offset: bigint): boolean {
    return this.offsetIndex.canAppendOffset(offset);
  }

  /** Kafka's LogSegment.shouldRoll: size, age (segment.ms minus jitter), full index, offset overflow. */
  shouldRoll(p: RollParams): boolean {
    const reachedRollMs = this.timeWaitedForRoll(p.now, p.maxTimestampInMessages) > p.maxSegmentMs - this.rollJitterMs;
    const size = this.size;
    return (
      size > p.maxSegmentBytes - p.messagesSize ||
      (size > 0 && reachedRollMs) ||
      this.offsetIndex.isFull ||
      this.timeIndex.isFull ||
      !this.canConvertToRelativeOffset(p.maxOffsetInMessages)
    );
  }

  /**
   * Step 1 of an append: write the bytes. Returns the position they start at. Throws before any
   * in-memory state changes if the largest offset does not fit this segment or the write fails.
   */
  appendToLog(records: Buffer, largestOffset: bigint, largestTimestamp: number): number {
    if (!this.canConvertToRelativeOffset(largestOffset)) {
      throw new KafkaError(
        ErrorCode.UNKNOWN_SERVER_ERROR,
        `offset ${largestOffset} overflows segment ${this.baseOffset} (relative offsets are int32)`,
      );
    }
    const position = this.log.sizeInBytes;
    this.log.append(records);
    if (position === 0) this.rollingBasedTimestamp = largestTimestamp;
    return position;
  }

  /**
   * Step 2 of an append (after the log end offset moved): max timestamp, then maybe index entries,
   * batch by batch as Kafka 3.x does. Every offset-index entry names one batch's own position and
   * last offset, and every time-index entry the last offset of the batch that first reached its
   * timestamp: exactly what recovery rebuilds and what loading checks an index against.
   */
  updateIndexes(u: IndexUpdate): void {
    const recs = u.records;
    let pos = 0;
    while (pos + RECORD_BATCH_OVERHEAD <= recs.length) {
      const size = recs.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      const last = recs.readBigInt64BE(pos) + BigInt(recs.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
      const ts = Number(recs.readBigInt64BE(pos + MAX_TIMESTAMP_OFFSET));
      if (ts > this.maxTimestampSoFar) this.maxTimestampAndOffsetSoFar = { timestamp: ts, offset: last };
      if (this.bytesSinceLastIndexEntry > this.indexIntervalBytes) {
        this.offsetIndex.append(last, u.position + pos);
        const m = this.maxTimestampAndOffsetSoFar;
        this.timeIndex.maybeAppend(m.timestamp, m.offset);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += size;
      pos += size;
    }
  }

  /** Where this segment's `.txnindex` lives (same suffix as its `.log`). */
  get txnIndexFile(): string {
    const f = this.log.file;
    const i = f.lastIndexOf('.log');
    return f.slice(0, i) + TXN_INDEX_FILE_SUFFIX + f.slice(i + 4);
  }

  /**
   * Kafka's updateTxnIndex: records an aborted transaction whose marker is in this segment,
   * creating the index on demand. Throws (nothing recorded) when the file cannot be created or
   * written: the caller keeps the transaction open (LSO stays before the marker, KAFKA-7866).
   */
  appendAbortedTxn(t: AbortedTxn): void {
    if (!this.txnIndex) {
      if (!this.fs) throw new Error(`segment ${this.baseOffset} has no file system to create its transaction index`);
      this.txnIndex = new TransactionIndex(this.fs, this.txnIndexFile, this.baseOffset);
    }
    this.txnIndex.append(t);
  }

  /** Aborted transactions of this segment overlapping [fetchOffset, upperBoundOffset). */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
    return this.txnIndex ? this.txnIndex.collectAbortedTxns(fetchOffset, upperBoundOffset) : { abortedTransactions: [], isComplete: false };
  }

  /** The first batch holding an offset >= `offset`, or null when the segment has none. */
  translateOffset(offset: bigint, startingFilePosition = 0): BatchHeader | null {
    const mapping = this.offsetIndex.lookup(offset);
    return this.log.searchForOffsetWithSize(offset, Math.max(mapping.position, startingFilePosition));
  }

  /**
   * Whole batches starting with the one that holds `startOffset`, at most `maxSize` bytes (the
   * first batch in full regardless when minOneMessage), never reaching `maxPosition` (the file
   * position of the exclusive upper bound: high watermark, LSO or log end). One read syscall: the
   * byte range is read once and cut after the last batch that fits.
   */
  read(startOffset: bigint, maxSize: number, maxPosition = this.size, minOneMessage = false, pool?: ReadBufferPool): FetchDataInfo | null {
    if (maxSize < 0) throw new RangeError(`invalid max size ${maxSize} for a read of segment ${this.baseOffset}`);
    const start = this.translateOffset(startOffset);
    if (!start) return null;
    const fetchOffsetMetadata: LogOffsetMetadata = {
      messageOffset: startOffset,
      segmentBaseOffset: this.baseOffset,
      relativePositionInSegment: start.position,
    };
    const limit = minOneMessage ? Math.max(maxSize, start.sizeInBytes) : maxSize;
    if (limit === 0 || start.position >= maxPosition) return emptyFetchDataInfo(fetchOffsetMetadata);
    if (start.sizeInBytes > limit) return emptyFetchDataInfo(fetchOffsetMetadata, true);
    const end = Math.min(maxPosition, start.position + limit);
    const length = end - start.position;
    const pooled = pool?.acquire(length) ?? null;
    let buf: Buffer;
    if (pooled) {
      try {
        this.log.readInto(pooled, 0, start.position, length);
      } catch (err) {
        pool!.release(pooled);
        throw err;
      }
      buf = pooled.subarray(0, length);
    } else {
      buf = this.log.read(start.position, length);
    }
    const release = pooled ? () => pool!.release(pooled) : undefined;
    let pos = 0;
    while (pos + RECORD_BATCH_OVERHEAD <= buf.length) {
      const len = buf.readInt32BE(pos + 8);
      if (len < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
        release?.();
        throw new KafkaError(
          ErrorCode.CORRUPT_MESSAGE,
          `batch length ${len} at position ${start.position + pos} of ${this.log.file} is invalid`,
        );
      }
      if (pos + len + LOG_OVERHEAD > buf.length) break;
      pos += len + LOG_OVERHEAD;
    }
    if (pos === 0) {
      release?.();
      return emptyFetchDataInfo(fetchOffsetMetadata);
    }
    return {
      fetchOffsetMetadata,
      records: [pos === buf.length ? buf : buf.subarray(0, pos)],
      sizeInBytes: pos,
      firstEntryIncomplete: false,
      release,
    };
  }

  /** The offset after the last batch (the base offset when empty): a header walk from the last index entry. */
  readNextOffset(): bigint {
    let next = this.baseOffset;
    this.log.scanBatches(this.offsetIndex.lastEntry().position, (h) => {
      next = h.lastOffset + 1n;
      return true;
    });
    return next;
  }

  /** Header of the last batch, or null if empty. */
  lastBatch(): BatchHeader | null {
    let last: BatchHeader | null = null;
    this.log.scanBatches(this.offsetIndex.lastEntry().position, (h) => {
      last = h;
      return true;
    });
    return last;
  }

  /** First record with timestamp >= target and offset >= startingOffset in this segment, or null. */
  findOffsetByTimestamp(timestamp: bigint, startingOffset: bigint): TimestampAndOffset | null {
    const t = this.timeIndex.lookup(Number(timestamp));
    const from = t.offset > startingOffset ? t.offset : startingOffset;
    const position = this.offsetIndex.lookup(from).position;
    return this.log.searchForTimestamp(timestamp, position, startingOffset);
  }

  /**
   * Removes every batch holding offsets >= `offset` (a batch straddling it goes whole) and the
   * index entries for them. Returns the bytes removed.
   */
  truncateTo(offset: bigint): number {
    const mapping = this.translateOffset(offset);
    this.offsetIndex.truncateTo(offset);
    this.timeIndex.truncateTo(offset);
    this.txnIndex?.truncateTo(offset);
    const bytesTruncated = mapping ? this.log.truncateTo(mapping.position) : 0;
    if (this.log.sizeInBytes === 0) {
      this.created = this.time.milliseconds();
      this.rollingBasedTimestamp = undefined;
    }
    this.bytesSinceLastIndexEntry = 0;
    if (this.maxTimestampSoFar >= 0) this.maxTimestampAndOffsetSoFar = this.readLargestTimestamp();
    return bytesTruncated;
  }

  private readLargestTimestamp(): TimestampOffset {
    const last = this.timeIndex.lastEntry();
    const position = this.offsetIndex.lookup(last.offset).position;
    const after = this.log.largestTimestampAfter(position);
    if (after.timestamp > last.timestamp) return { timestamp: after.timestamp, offset: after.offset };
    return last;
  }

  /**
   * The segment stops being the active one: record the final max timestamp in the time index (so
   * retention and MAX_TIMESTAMP can read it back after a restart), make the indexes durable and
   * release their write handles. The .log is flushed separately, in the background.
   */
  onBecomeInactiveSegment(): void {
    const m = this.readMaxTimestampAndOffsetSoFar();
    if (m.timestamp >= 0 && m.offset >= this.baseOffset) this.timeIndex.maybeAppend(m.timestamp, m.offset, true);
    this.offsetIndex.flush();
    this.timeIndex.flush();
    this.offsetIndex.closeHandler();
    this.timeIndex.closeHandler();
  }

  /** Time since the segment's first batch (by record timestamp when known, else wall clock since creation). */
  timeWaitedForRoll(now: number, messageTimestamp: number): number {
    this.loadFirstBatchTimestamp();
    const ts = this.rollingBasedTimestamp ?? -1;
    if (ts >= 0) return messageTimestamp - ts;
    return now - this.created;
  }

  /**
   * Kafka's getFirstBatchTimestamp: the max timestamp of the segment's first batch, or LONG_MAX
   * (2^63) when it has none or no timestamp (max.compaction.lag.ms measures from it).
   */
  getFirstBatchTimestamp(): number {
    this.loadFirstBatchTimestamp();
    const ts = this.rollingBasedTimestamp;
    return ts !== undefined && ts >= 0 ? ts : 2 ** 63;
  }

  private loadFirstBatchTimestamp(): void {
    if (this.rollingBasedTimestamp === undefined && this.log.sizeInBytes > 0) {
      this.log.scanBatches(0, (h) => {
        this.rollingBasedTimestamp = Number(h.maxTimestamp);
        return false;
      });
    }
  }

  /** Largest record timestamp, or the file's mtime when no batch carries one (retention.ms input). */
  largestTimestamp(): number {
    const m = this.maxTimestampSoFar;
    return m >= 0 ? m : this.log.lastModified();
  }

  largestRecordTimestamp(): number | undefined {
    const m = this.maxTimestampSoFar;
    return m >= 0 ? m : undefined;
  }

  lastModified(): number {
    return this.log.lastModified();
  }

  /** Sets the modification time of the .log and both indexes (Kafka's setLastModified; the cleaner keeps the original's). */
  setLastModified(ms: number): void {
    if (!this.fs) throw new Error(`segment ${this.baseOffset} has no file system`);
    for (const f of [this.log.file, this.offsetIndex.file, this.timeIndex.file]) {
      if (this.fs.existsSync(f)) this.fs.utimesSync(f, ms, ms);
    }
  }

  /** Deletes a segment's files with `suffix` if they exist (Kafka's LogSegment.deleteIfExists(dir, baseOffset, suffix)). */
  static deleteIfExists(fs: StorageFs, dir: string, baseOffset: bigint, suffix: string): void {
    for (const f of [logFile(dir, baseOffset, suffix), offsetIndexFile(dir, baseOffset, suffix), timeIndexFile(dir, baseOffset, suffix), transactionIndexFile(dir, baseOffset, suffix)]) {
      if (fs.existsSync(f)) fs.unlinkSync(f);
    }
  }

  flush(): void {
    this.log.flush();
    this.offsetIndex.flush();
    this.timeIndex.flush();
    this.txnIndex?.flush();
  }

  /** Background flush of the .log (indexes of an inactive segment were flushed when it rolled). */
  async flushAsync(): Promise<void> {
    this.offsetIndex.flush();
    this.timeIndex.flush();
    await this.log.flushAsync();
  }

  changeFileSuffixes(oldSuffix: string, newSuffix: string): void {
    this.log.renameTo(replaceSuffix(this.log.file, oldSuffix, newSuffix));
    this.offsetIndex.renameTo(replaceSuffix(this.offsetIndex.file, oldSuffix, newSuffix));
    this.timeIndex.renameTo(replaceSuffix(this.timeIndex.file, oldSuffix, newSuffix));
    if (this.txnIndex) this.txnIndex.renameTo(replaceSuffix(this.txnIndex.file, oldSuffix, newSuffix));
  }

  /** The partition directory was renamed (open descriptors stay valid): the files' paths follow it. */
  updateParentDir(dir: string): void {
    this.log.updateParentDir(dir);
    this.offsetIndex.updateParentDir(dir);
    this.timeIndex.updateParentDir(dir);
    this.txnIndex?.updateParentDir(dir);
  }

  hasSuffix(suffix: string): boolean {
    return this.log.file.endsWith(suffix) && this.offsetIndex.file.endsWith(suffix) && this.timeIndex.file.endsWith(suffix);
  }

  /** Drops in-memory index data of a cold segment (reloaded on demand). */
  unloadIndexes(): void {
    this.offsetIndex.unload();
    this.timeIndex.unload();
  }

  close(): void {
    try {
      if (this.maxTimestampAndOffsetSoFar !== UNKNOWN && this.maxTimestampAndOffsetSoFar.timestamp >= 0) {
        const m = this.maxTimestampAndOffsetSoFar;
        if (m.offset >= this.baseOffset) this.timeIndex.maybeAppend(m.timestamp, m.offset, true);
      }
    } finally {
      this.offsetIndex.close();
      this.timeIndex.close();
      this.txnIndex?.close();
      this.log.close();
    }
  }

  /** Releases every handle without writing (the directory failed). Never throws. */
  closeHandlers(): void {
    this.offsetIndex.closeQuietly();
    this.timeIndex.closeQuietly();
    try {
      this.txnIndex?.close();
    } catch {
      /* failed directory */
    }
    this.log.closeQuietly();
  }

  deleteIfExists(): void {
    this.log.deleteIfExists();
    this.offsetIndex.deleteIfExists();
    this.timeIndex.deleteIfExists();
    this.txnIndex?.deleteIfExists();
  }

  toString(): string {
    return `LogSegment(baseOffset=${this.baseOffset}, size=${this.size})`;
  }
}
