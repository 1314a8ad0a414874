/**
 * The batch-by-batch validation of one segment's `.log` bytes, shared by recovery (log-loader.ts,
 * which truncates at the first batch that fails) and `krill dump-log` (which reports it).
 *
 * Pure: the caller feeds the file's bytes in order, in chunks of any size (sync reads, async
 * read-ahead, a test's Buffer); nothing here touches the file system. A batch that straddles two
 * chunks is not copied: its 61-byte header is collected, then its CRC is computed incrementally
 * over the pieces as they arrive, so memory stays bounded whatever a (possibly corrupt) length says.
 *
 * The rules, in the order they are checked (the reason of the first failure is kept):
 * - framing: at least a header left, batch length >= the v2 header, the batch inside the file
 *   (a zero length with a zero base offset is reported as a zero-filled tail);
 * - magic 2; CRC32C over attributes..end;
 * - record count >= 0, lastOffsetDelta >= 0 and >= count - 1;
 * - offsets: base offset >= the segment base, last offset - segment base fits an int32, base offset
 *   strictly above the previous batch's last offset (across segments too: KAFKA-3955's
 *   non-monotonic batches and KAFKA-7866's duplicates), and with `contiguous` (cleanup.policy
 *   without compact, where no Kafka writer leaves gaps) exactly the previous last offset + 1 and the
 *   segment's first batch at exactly the segment base offset. The base offset lies outside the CRC:
 *   contiguity is what catches a bit flip in it;
 * - partition leader epoch (also outside the CRC): >= -1, and never below an earlier batch's
 *   non-negative epoch (leaders only ever stamp higher epochs);
 * - timestamps: a CreateTime batch with records and no delete horizon has maxTimestamp >=
 *   baseTimestamp (the builder sets base = first record, max = max over records; Kafka's own
 *   LogSegment.recover checks no timestamps at all, and records' own timestamps are only read by
 *   dump-log --deep-iteration, since decompressing every batch would cost recovery most of its speed).
 *
 * Accepted batches produce the rebuilt index entries exactly as the append path writes them: an
 * offset-index entry (batch last offset, batch position) whenever more than index.interval.bytes
 * were appended since the last one, with a time-index entry (max timestamp so far, last offset of
 * the batch that reached it) when the max grew; `complete()` adds the segment's final max timestamp.
 */
import { crc32c } from '../protocol/records/crc32c';
import {
  ATTRIBUTES_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  CRC_OFFSET,
  CURRENT_MAGIC,
  DELETE_HORIZON_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORDS_COUNT_OFFSET,
  RECORD_BATCH_OVERHEAD,
  TIMESTAMP_TYPE_MASK,
} from '../protocol/records/record-batch';

const TWO_32 = 4294967296;
const INT32_MAX = 0x7fffffff;
const MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

/** What a segment's batches must satisfy beyond their own framing and CRC. */
export interface SegmentRules {
  baseOffset: bigint;
  /** Offsets must follow each other without gaps (cleanup.policy without compact). */
  contiguous: boolean;
  /** index.interval.bytes, for the rebuilt offset/time index entries. */
  indexIntervalBytes: number;
}

/** Where the previous segment ended (null: this is the first segment, or nothing came before). */
export interface PreviousBatch {
  lastOffset: bigint;
  /** Highest non-negative leader epoch seen so far, or -1. */
  leaderEpoch: number;
}

// Unchecked big-endian reads for the hot loop (Buffer's read methods validate their arguments on
// every call: a third of the per-batch cost with ~1 KiB batches). Callers only read inside a
// header they know is complete.
function i32(b: Buffer, at: number): number {
  return (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
}

function u32(b: Buffer, at: number): number {
  return i32(b, at) >>> 0;
}

/** Reads an int64 at `at` as a number (exact below 2^53; timestamps and offsets in practice). */
export function readInt64Number(buf: Buffer, at: number): number {
  return i32(buf, at) * TWO_32 + u32(buf, at + 4);
}

/** Index entries in their on-disk format, growing as a segment is scanned. */
export class IndexBuilder {
  protected buf: Buffer;
  entries = 0;
  constructor(readonly entrySize: number) {
    this.buf = Buffer.allocUnsafe(entrySize * 64);
  }
  /** Where the next entry goes (room made for it); the caller writes it and counts it. */
  protected next(): number {
    const pos = this.entries * this.entrySize;
    if (pos + this.entrySize > this.buf.length) {
      const grown = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(grown, 0, 0, pos);
      this.buf = grown;
    }
    this.entries++;
    return pos;
  }
  get bytes(): Buffer {
    return this.buf.subarray(0, this.entries * this.entrySize);
  }
}

export class OffsetIndexBuilder extends IndexBuilder {
  constructor() {
    super(8);
  }
  append(relativeOffset: number, position: number): void {
    const at = this.next();
    this.buf.writeInt32BE(relativeOffset, at);
    this.buf.writeInt32BE(position, at + 4);
  }
}

export class TimeIndexBuilder extends IndexBuilder {
  lastTimestamp = -1;
  constructor() {
    super(12);
  }
  /** Kafka's TimeIndex.maybeAppend: only a timestamp above the last entry's (or above -1) is added. */
  maybeAppend(timestamp: number, relativeOffset: number): void {
    if (timestamp <= this.lastTimestamp) return;
    const at = this.next();
    this.buf.writeBigInt64BE(BigInt(timestamp), at);
    this.buf.writeInt32BE(relativeOffset, at + 8);
    this.lastTimestamp = timestamp;
  }
}

/** One accepted batch, as `SegmentScanner.onBatch` sees it. */
export interface ScannedBatch {
  /** The header bytes: `header[headerAt .. headerAt + 61)`; the records are not included. */
  header: Buffer;
  headerAt: number;
  position: number;
  sizeInBytes: number;
}

/**
 * The header-level rules of a segment's batches (offsets, leader epochs, timestamps: everything but
 * framing and CRC), with the state they carry from batch to batch. `check` looks at one batch and
 * leaves its decoded fields in `relBase`, `relLast`, `epoch`, `maxTimestamp`; `advance` then
 * records it as the previous batch.
 */
export class BatchRules {
  relBase = 0;
  relLast = 0;
  epoch = -1;
  maxTimestamp = -1;
  /** Highest non-negative leader epoch so far (or inherited), -1 if none. */
  leaderEpoch: number;
  /** Why the segment cannot follow the previous one at all (overlap or gap), if so. */
  readonly segmentProblem: string | undefined;
  /** Last offset of the previous batch relative to the segment base; null when there was none. */
  prevRel: number | null;
  private readonly segHi: number;
  private readonly segLo: number;

  constructor(
    readonly rules: SegmentRules,
    prev: PreviousBatch | null,
    nonEmpty: boolean,
  ) {
    this.segHi = Number(rules.baseOffset >> 32n);
    this.segLo = Number(rules.baseOffset & 0xffffffffn);
    this.leaderEpoch = prev?.leaderEpoch ?? -1;
    if (prev === null) {
      this.prevRel = null;
    } else {
      const rel = prev.lastOffset - rules.baseOffset;
      this.prevRel = rel < -1n ? -2 : Number(rel);
      if (rel >= 0n && nonEmpty) {
        this.segmentProblem = `segment base offset ${rules.baseOffset} is not above the previous segment's last offset ${prev.lastOffset}`;
      } else if (rules.contiguous && rel !== -1n && nonEmpty) {
        this.segmentProblem = `segment base offset ${rules.baseOffset} does not follow the previous segment's last offset ${prev.lastOffset} (gap in a non-compacted log)`;
      }
    }
  }

  /** Absolute offset of a relative one. */
  offset(rel: number): bigint {
    return this.rules.baseOffset + BigInt(rel);
  }

  check(buf: Buffer, at: number): string | undefined {
    this.relBase = NaN;
    this.relLast = NaN;
    const count = i32(buf, at + RECORDS_COUNT_OFFSET);
    const delta = i32(buf, at + LAST_OFFSET_DELTA_OFFSET);
    if (count < 0) return `negative record count ${count}`;
    if (delta < 0 || (count > 0 && delta < count - 1)) return `lastOffsetDelta ${delta} does not fit record count ${count}`;
    // Offsets relative to the segment base, as exact numbers (a segment spans < 2^31 offsets).
    const dHi = i32(buf, at) - this.segHi;
    const lo = u32(buf, at + 4);
    const rel = dHi < -1 || dHi > 1 ? dHi * TWO_32 : dHi * TWO_32 + (lo - this.segLo);
    this.relBase = rel;
    this.relLast = rel + delta;
    if (rel < 0) return `batch base offset ${buf.readBigInt64BE(at)} is below the segment base offset ${this.rules.baseOffset}`;
    if (this.relLast > INT32_MAX) return `batch last offset ${buf.readBigInt64BE(at) + BigInt(delta)} overflows the segment's int32 relative offsets`;
    const prevRel = this.prevRel;
    if (prevRel !== null && rel <= prevRel) {
      return `non-monotonic or duplicate offsets: batch base offset ${buf.readBigInt64BE(at)} is not above the previous batch's last offset ${this.offset(prevRel)}`;
    }
    if (this.rules.contiguous) {
      const expected = prevRel === null ? 0 : prevRel + 1;
      if (rel !== expected) {
        return `offset gap: batch base offset ${buf.readBigInt64BE(at)} where ${this.offset(expected)} was expected (a non-compacted log has no gaps)`;
      }
    }
    const epoch = i32(buf, at + PARTITION_LEADER_EPOCH_OFFSET);
    this.epoch = epoch;
    if (epoch < -1) return `invalid partition leader epoch ${epoch}`;
    if (epoch >= 0 && epoch < this.leaderEpoch) return `partition leader epoch ${epoch} is below the epoch ${this.leaderEpoch} of an earlier batch`;
    const attributes = (buf[at + ATTRIBUTES_OFFSET] << 8) | buf[at + ATTRIBUTES_OFFSET + 1];
    const maxTs = readInt64Number(buf, at + MAX_TIMESTAMP_OFFSET);
    this.maxTimestamp = maxTs;
    if ((attributes & (TIMESTAMP_TYPE_MASK | DELETE_HORIZON_FLAG_MASK)) === 0 && count > 0) {
      const baseTs = readInt64Number(buf, at + BASE_TIMESTAMP_OFFSET);
      if (maxTs < baseTs) return `CreateTime batch has maxTimestamp ${maxTs} below its baseTimestamp ${baseTs}`;
    }
    return undefined;
  }

  /** The batch last `check`ed becomes the previous one. Returns true if it started a new epoch. */
  advance(): boolean {
    this.prevRel = this.relLast;
    if (this.epoch > this.leaderEpoch) {
      this.leaderEpoch = this.epoch;
      return true;
    }
    return false;
  }
}

/**
 * Validates one segment's batches as its bytes are fed in file order. Once `wantsMore` is false
 * and `complete()` was called the results are final: `validBytes` (where the last accepted batch
 * ends), `lastOffset`, the rebuilt index entries and the max timestamp.
 *
 * Invariants: `validBytes` only advances over whole accepted batches; nothing is accepted after an
 * invalid batch; `fed` counts the file bytes seen so far.
 */
export class SegmentScanner {
  readonly offsetIndex = new OffsetIndexBuilder();
  readonly timeIndex = new TimeIndexBuilder();
  validBytes = 0;
  batches = 0;
  invalidReason: string | undefined;
  /** Max batch timestamp so far and the relative last offset of the batch that reached it. */
  maxTimestamp = -1;
  relOfMaxTimestamp = 0;
  /** Where each epoch above the inherited one starts, in offset order (the leader epoch cache). */
  readonly epochStarts: { epoch: number; startOffset: bigint }[] = [];
  /** Called for every accepted batch when set. Nothing sets it: producer state is replayed after loading (UnifiedLog). */
  onBatch: ((b: ScannedBatch) => void) | undefined;

  private readonly checks: BatchRules;
  /** Last offset of the last accepted batch, relative to the segment base. */
  private lastRel = -1;
  private lastIndexEntry = 0;
  private fed = 0;
  private finished = false;
  // A batch straddling chunks: its header is gathered here, then its CRC computed piece by piece.
  private readonly header = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD);
  private headerLen = 0;
  private pendingTotal = 0;
  private pendingLeft = 0;
  private pendingCrc = 0;

  constructor(
    readonly rules: SegmentRules,
    /** The file's size: a batch claiming to run past it is a torn write, known at once. */
    readonly fileSize: number,
    prev: PreviousBatch | null,
  ) {
    this.checks = new BatchRules(rules, prev, fileSize > 0);
    this.invalidReason = this.checks.segmentProblem;
  }

  /** Highest non-negative leader epoch accepted so far (or inherited), -1 if none. */
  get leaderEpoch(): number {
    return this.checks.leaderEpoch;
  }

  /** Last offset of the last accepted batch, or null if none was accepted. */
  get lastOffset(): bigint | null {
    return this.batches === 0 ? null : this.rules.baseOffset + BigInt(this.lastRel);
  }

  /** The offset after the last accepted batch (the base offset when none). */
  get nextOffset(): bigint {
    return this.batches === 0 ? this.rules.baseOffset : this.rules.baseOffset + BigInt(this.lastRel + 1);
  }

  /** File bytes seen so far. */
  get bytesFed(): number {
    return this.fed;
  }

  /** False once the scan is over (invalid batch found or the whole file fed). */
  get wantsMore(): boolean {
    return this.invalidReason === undefined && this.fed < this.fileSize;
  }

  /**
   * Feeds `chunk[0, len)`, the file bytes from position `bytesFed`. Returns `wantsMore`.
   * Bytes past the file size are ignored.
   */
  feed(chunk: Buffer, len = chunk.length): boolean {
    if (this.invalidReason !== undefined || this.finished) return false;
    const end = Math.min(len, this.fileSize - this.fed);
    let p = 0;
    if (this.headerLen > 0 || this.pendingLeft > 0) p = this.continuePending(chunk, end);
    while (this.invalidReason === undefined && p < end) {
      const filePos = this.fed + p;
      const avail = end - p;
      if (avail < RECORD_BATCH_OVERHEAD) {
        // Fewer bytes than a header in this chunk: gather them (the file may hold more).
        if (this.fileSize - filePos < RECORD_BATCH_OVERHEAD) {
          this.fail(this.shortTail(chunk, p, avail, this.fileSize - filePos));
          break;
        }
        chunk.copy(this.header, 0, p, end);
        this.headerLen = avail;
        p = end;
        break;
      }
      const batchLength = i32(chunk, p + BATCH_LENGTH_OFFSET);
      const total = batchLength + LOG_OVERHEAD;
      const problem = this.framingProblem(chunk, p, batchLength, this.fileSize - filePos);
      if (problem !== undefined) {
        this.fail(problem);
        break;
      }
      if (total <= avail) {
        const crc = crc32c(chunk.subarray(p + ATTRIBUTES_OFFSET, p + total));
        this.accept(chunk, p, filePos, total, crc);
        p += total;
      } else {
        // Straddles the chunk end: keep the header, start the CRC, take the rest from later chunks.
        chunk.copy(this.header, 0, p, p + RECORD_BATCH_OVERHEAD);
        this.headerLen = RECORD_BATCH_OVERHEAD;
        this.pendingTotal = total;
        this.pendingCrc = crc32c(chunk.subarray(p + ATTRIBUTES_OFFSET, end));
        this.pendingLeft = total - avail;
        p = end;
      }
    }
    this.fed += end;
    if (this.fed >= this.fileSize && (this.headerLen > 0 || this.pendingLeft > 0)) {
      this.fail(`the file ends inside a batch at position ${this.validBytes} (torn write)`);
    }
    return this.wantsMore;
  }

  /** Completes a batch (or header) begun in an earlier chunk; returns where the chunk's next batch starts. */
  private continuePending(chunk: Buffer, end: number): number {
    let p = 0;
    if (this.pendingLeft === 0) {
      // Still gathering a header.
      const need = RECORD_BATCH_OVERHEAD - this.headerLen;
      const take = Math.min(need, end);
      chunk.copy(this.header, this.headerLen, 0, take);
      this.headerLen += take;
      p = take;
      if (this.headerLen < RECORD_BATCH_OVERHEAD) return p;
      const filePos = this.validBytes;
      const batchLength = this.header.readInt32BE(BATCH_LENGTH_OFFSET);
      const problem = this.framingProblem(this.header, 0, batchLength, this.fileSize - filePos);
      if (problem !== undefined) {
        this.fail(problem);
        return end;
      }
      this.pendingTotal = batchLength + LOG_OVERHEAD;
      this.pendingCrc = crc32c(this.header.subarray(ATTRIBUTES_OFFSET, RECORD_BATCH_OVERHEAD));
      this.pendingLeft = this.pendingTotal - RECORD_BATCH_OVERHEAD;
      if (this.pendingLeft === 0) {
        this.completePending();
        return p;
      }
    }
    const take = Math.min(this.pendingLeft, end - p);
    if (take > 0) this.pendingCrc = crc32c(chunk.subarray(p, p + take), this.pendingCrc);
    this.pendingLeft -= take;
    p += take;
    if (this.pendingLeft === 0) this.completePending();
    return p;
  }

  private completePending(): void {
    const filePos = this.validBytes;
    this.headerLen = 0;
    this.accept(this.header, 0, filePos, this.pendingTotal, this.pendingCrc);
  }

  private shortTail(chunk: Buffer, p: number, avail: number, left: number): string {
    let zero = true;
    for (let i = p; i < p + avail; i++) if (chunk[i] !== 0) zero = false;
    return zero ? `zero-filled tail of ${left} bytes (preallocated or never written)` : `${left} trailing bytes are too few for a batch header (torn write)`;
  }

  private framingProblem(buf: Buffer, at: number, batchLength: number, leftInFile: number): string | undefined {
    if (batchLength < MIN_BATCH_LENGTH) {
      if (batchLength === 0 && buf.readInt32BE(at) === 0 && buf.readInt32BE(at + 4) === 0) {
        return `zero-filled tail of ${leftInFile} bytes (preallocated or never written)`;
      }
      return `invalid batch length ${batchLength}`;
    }
    if (batchLength + LOG_OVERHEAD > leftInFile) {
      return `batch of ${batchLength + LOG_OVERHEAD} bytes runs past the end of the file (${leftInFile} bytes left: torn write)`;
    }
    const magic = (buf[at + MAGIC_OFFSET] << 24) >> 24;
    if (magic !== CURRENT_MAGIC) return `record batch magic ${magic} is not supported (only v2)`;
    return undefined;
  }

  /** The CRC, then the header-level rules; on success the batch is accepted and indexed. */
  private accept(buf: Buffer, at: number, position: number, total: number, crc: number): void {
    const stored = u32(buf, at + CRC_OFFSET);
    if (crc !== stored) return this.fail(`record batch CRC mismatch: stored ${stored}, computed ${crc}`);
    const c = this.checks;
    const problem = c.check(buf, at);
    if (problem !== undefined) return this.fail(problem);
    if (c.advance()) this.epochStarts.push({ epoch: c.epoch, startOffset: c.offset(c.relBase) });
    if (c.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = c.maxTimestamp;
      this.relOfMaxTimestamp = c.relLast;
    }
    if (position - this.lastIndexEntry > this.rules.indexIntervalBytes) {
      this.offsetIndex.append(c.relLast, position);
      this.timeIndex.maybeAppend(this.maxTimestamp, this.relOfMaxTimestamp);
      this.lastIndexEntry = position;
    }
    this.lastRel = c.relLast;
    this.batches++;
    this.validBytes = position + total;
    if (this.onBatch) this.onBatch({ header: buf, headerAt: at, position, sizeInBytes: total });
  }

  private fail(reason: string): void {
    if (this.invalidReason === undefined) this.invalidReason = reason;
  }

  /**
   * Ends the scan (the whole file was fed, or the caller stopped at `invalidReason`): adds the
   * final time-index entry, the segment's max timestamp, as a segment that becomes inactive does.
   * Idempotent.
   */
  complete(): this {
    if (!this.finished) {
      this.finished = true;
      if (this.maxTimestamp >= 0) this.timeIndex.maybeAppend(this.maxTimestamp, this.relOfMaxTimestamp);
    }
    return this;
  }
}
