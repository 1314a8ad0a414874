/**
 * Records inside a v2 batch (Kafka's DefaultRecord):
 *
 *   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
 *   key (varint length, -1 = null, bytes) | value (same)
 *   headerCount varint | headers: key (varint length, utf8) value (varint length, -1 = null, bytes)
 *
 * varint/varlong are zigzag-encoded LEB128. Deltas are relative to the batch's baseOffset and
 * baseTimestamp. In a LogAppendTime batch every record's timestamp is the batch's maxTimestamp.
 *
 * Malformed records throw KafkaError(INVALID_RECORD), as Kafka does (its DefaultRecord and batch
 * iterator raise InvalidRecordException, which maps to INVALID_RECORD): a length that runs past the
 * data or disagrees with the fields, an over-long varint, a negative key/value length other than -1,
 * a negative or impossible header count, fewer records than the batch header counts, or bytes left
 * over after them. Codec problems come from compression.ts (INVALID_RECORD, also for output past
 * the decompression limit; UNSUPPORTED_COMPRESSION_TYPE).
 *
 * One deliberate difference: a timestampDelta beyond +-2^52 ms (about 140,000 years) is rejected
 * rather than carried as a 64-bit value, so that deltas stay plain numbers on the hot path.
 */
import { ErrorCode, KafkaError } from '../errors';
import { decompress, DecompressOptions } from './compression';
import {
  CompressionType,
  LOG_OVERHEAD,
  NO_SEQUENCE,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
  TimestampType,
} from './record-batch';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** One decoded record. `key`, `value` and header values are views into the batch (or its decompressed copy). */
export interface Record {
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  offsetDelta: number;
  timestampDelta: number;
  /** baseSequence + offsetDelta (wrapping at int32 max), or -1 when the batch has no sequence. */
  sequence: number;
  /** Record attributes byte (unused by Kafka so far; kept for fidelity). */
  attributes: number;
  /** Bytes the record occupies, length prefix included. */
  sizeInBytes: number;
}

/** Smallest possible record: 1-byte length + 6 one-byte fields. */
export const MIN_RECORD_SIZE = 7;

const INT32_MAX = 0x7fffffff;

/** Kafka's sequence arithmetic: sequences wrap from int32 max to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT32_MAX - increment) return increment - (INT32_MAX - sequence) - 1;
  return sequence + increment;
}

function invalid(msg: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, msg);
}

// 2^(7i) for varlong decoding in plain numbers.
const POW7 = Array.from({ length: 10 }, (_, i) => 2 ** (7 * i));
const MAX_SAFE_ZIGZAG = 2 ** 53;

export interface RecordIteratorOptions extends DecompressOptions {
  /**
   * A records section that is already plain (e.g. the caller decompressed it once for several
   * passes). Must be the batch's records, uncompressed, without the 61-byte header.
   */
  plainRecords?: Buffer;
}

/**
 * A forward-only cursor over the records of one batch that allocates nothing per record: after
 * `next()` returns true its fields describe the current record, and `key`, `value`, `headers()`,
 * `offset`, `timestamp` build objects only when asked. For validation and for timestamp search
 * (ListOffsets); `readRecords` materialises everything.
 *
 * Owns: the plain records buffer (the batch's own bytes, or its decompressed copy) and a position
 * in it. Invariants: `pos` stays within [start, end]; after `next()` returns true, the record
 * [recordStart, recordStart + sizeInBytes) lies inside [start, end] and its fields were fully
 * parsed; `next()` returns false exactly after `count` records, and only if no bytes are left.
 */
export class RecordIterator {
  readonly batch: RecordBatch;
  /** Record count from the batch header. */
  readonly count: number;
  /** The plain records bytes (decompressed when the batch is compressed). */
  readonly buf: Buffer;
  private readonly start: number;
  private readonly end: number;
  private pos: number;

  /** Index of the current record (0-based); -1 before the first `next()`. */
  index = -1;
  attributes = 0;
  timestampDelta = 0;
  offsetDelta = 0;
  /** Start of the current record's length prefix in `buf`. */
  recordStart = 0;
  sizeInBytes = 0;
  /** Start of the key length varint: the record's key, value and headers are [keyLengthStart, record end). */
  keyLengthStart = 0;
  keyStart = 0;
  /** -1 for a null key. */
  keyLength = -1;
  valueStart = 0;
  /** -1 for a null value. */
  valueLength = -1;
  headerCount = 0;
  /** Position of the first header in `buf`. */
  headersStart = 0;

  private readonly baseOffset: bigint;
  private readonly baseTimestamp: bigint;
  private readonly logAppendTime: bigint | null;
  private readonly baseSequence: number;

  constructor(batch: RecordBatch, opts: RecordIteratorOptions = {}) {
    const b = batch.buf;
    const at = batch.offset;
    if (at < 0 || b.length - at < RECORD_BATCH_OVERHEAD) {
      throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, 'record batch header is truncated');
    }
    const size = batch.batchLength + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD || size > b.length - at) {
      throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `record batch length ${batch.batchLength} does not fit the buffer`);
    }
    this.batch = batch;
    this.count = batch.recordsCount;
    if (this.count < 0) throw invalid(`invalid record count ${this.count}`);
    if (opts.plainRecords) {
      this.buf = opts.plainRecords;
      this.start = 0;
      this.end = opts.plainRecords.length;
    } else if (batch.compressionType === CompressionType.NONE || this.count === 0) {
      // Kafka never opens the codec for an empty batch; neither do we.
      this.buf = b;
      this.start = at + RECORD_BATCH_OVERHEAD;
      this.end = at + size;
    } else {
      this.buf = decompress(batch.attributes & 0x07, batch.recordsBytes, opts);
      this.start = 0;
      this.end = this.buf.length;
    }
    this.pos = this.start;
    this.baseOffset = batch.baseOffset;
    this.baseTimestamp = batch.baseTimestamp;
    this.logAppendTime = batch.timestampType === TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp : null;
    this.baseSequence = batch.baseSequence;
  }

  /** Plain records bytes of the batch: [start, end) of `buf`. */
  get plainRecords(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }

  /** Advances to the next record; false after the last. Throws INVALID_RECORD on malformed data. */
  next(): boolean {
    if (this.index + 1 >= this.count) {
      // An empty batch is empty whatever bytes follow its header (Kafka does not look either).
      if (this.index + 1 === this.count && this.count > 0 && this.pos !== this.end) {
        this.index = this.count; // report once, then stay finished
        throw invalid(`${this.end - this.pos} bytes left after the ${this.count} records the batch declares`);
      }
      this.index = this.count;
      return false;
    }
    this.index++;
    if (this.pos >= this.end) {
      throw invalid(`batch declares ${this.count} records but its data ends after ${this.index}`);
    }
    // One-byte varints (the common case for every field but the record length) are decoded
    // inline; anything longer, or at a limit, goes through readVarint/readVarlong, which raise
    // the errors. Same checks, same order, same messages as decoding every field the long way.
    const buf = this.buf;
    const end = this.end;
    const recordStart = this.pos;
    const bodySize = this.readVarint(end);
    if (bodySize < 0) throw invalid(`negative record size ${bodySize} (record ${this.index})`);
    const bodyStart = this.pos;
    const recordEnd = bodyStart + bodySize;
    if (recordEnd > end) {
      throw invalid(`record ${this.index} claims ${bodySize} bytes but only ${end - bodyStart} remain`);
    }
    if (bodyStart >= recordEnd) throw invalid(`record ${this.index} is empty`);
    let pos = bodyStart;
    this.attributes = (buf[pos++] << 24) >> 24;
    let b = pos < recordEnd ? buf[pos] : 0x80;
    if (b < 0x80) {
      this.timestampDelta = (b >>> 1) ^ -(b & 1);
      pos++;
    } else {
      this.pos = pos;
      this.timestampDelta = this.readVarlong(recordEnd);
      pos = this.pos;
    }
    b = pos < recordEnd ? buf[pos] : 0x80;
    if (b < 0x80) {
      this.offsetDelta = (b >>> 1) ^ -(b & 1);
      pos++;
    } else {
      this.pos = pos;
      this.offsetDelta = this.readVarint(recordEnd);
      pos = this.pos;
    }

    this.keyLengthStart = pos;
    let keyLength: number;
    b = pos < recordEnd ? buf[pos] : 0x80;
    if (b < 0x80) {
      keyLength = (b >>> 1) ^ -(b & 1);
      pos++;
    } else {
      this.pos = pos;
      keyLength = this.readVarint(recordEnd);
      pos = this.pos;
    }
    if (keyLength < -1) throw invalid(`invalid key length ${keyLength} (record ${this.index})`);
    this.keyStart = pos;
    this.keyLength = keyLength;
    if (keyLength > 0) {
      if (keyLength > recordEnd - pos) throw invalid(`key of ${keyLength} bytes runs past the end of record ${this.index}`);
      pos += keyLength;
    }

    let valueLength: number;
    b = pos < recordEnd ? buf[pos] : 0x80;
    if (b < 0x80) {
      valueLength = (b >>> 1) ^ -(b & 1);
      pos++;
    } else {
      this.pos = pos;
      valueLength = this.readVarint(recordEnd);
      pos = this.pos;
    }
    if (valueLength < -1) throw invalid(`invalid value length ${valueLength} (record ${this.index})`);
    this.valueStart = pos;
    this.valueLength = valueLength;
    if (valueLength > 0) {
      if (valueLength > recordEnd - pos) throw invalid(`value of ${valueLength} bytes runs past the end of record ${this.index}`);
      pos += valueLength;
    }

    let headerCount: number;
    b = pos < recordEnd ? buf[pos] : 0x80;
    if (b < 0x80) {
      headerCount = (b >>> 1) ^ -(b & 1);
      pos++;
    } else {
      this.pos = pos;
      headerCount = this.readVarint(recordEnd);
      pos = this.pos;
    }
    if (headerCount < 0) throw invalid(`invalid header count ${headerCount} (record ${this.index})`);
    if (headerCount > recordEnd - pos) {
      throw invalid(`header count ${headerCount} exceeds the ${recordEnd - pos} bytes left in record ${this.index}`);
    }
    this.headerCount = headerCount;
    this.headersStart = pos;
    this.pos = pos;
    for (let i = 0; i < headerCount; i++) {
      const hk = this.readVarint(recordEnd);
      if (hk < 0) throw invalid(`invalid header key length ${hk} (record ${this.index})`);
      this.skip(hk, recordEnd, 'header key');
      const hv = this.readVarint(recordEnd);
      if (hv < -1) throw invalid(`invalid header value length ${hv} (record ${this.index})`);
      if (hv > 0) this.skip(hv, recordEnd, 'header value');
    }
    if (this.pos !== recordEnd) {
      throw invalid(`record ${this.index} declares ${bodySize} bytes but its fields take ${this.pos - bodyStart}`);
    }
    this.recordStart = recordStart;
    this.sizeInBytes = recordEnd - recordStart;
    return true;
  }

  get key(): Buffer | null {
    return this.keyLength < 0 ? null : this.buf.subarray(this.keyStart, this.keyStart + this.keyLength);
  }

  get value(): Buffer | null {
    return this.valueLength < 0 ? null : this.buf.subarray(this.valueStart, this.valueStart + this.valueLength);
  }

  /** Absolute offset of the current record. */
  get offset(): bigint {
    return this.baseOffset + BigInt(this.offsetDelta);
  }

  /** Timestamp of the current record (the batch's maxTimestamp for LogAppendTime). */
  get timestamp(): bigint {
    if (this.logAppendTime !== null) return this.logAppendTime;
    return BigInt.asIntN(64, this.baseTimestamp + BigInt(this.timestampDelta));
  }

  get sequence(): number {
    return this.baseSequence >= 0 ? incrementSequence(this.baseSequence, this.offsetDelta) : NO_SEQUENCE;
  }

  /** Headers of the current record (already bounds-checked by `next()`). */
  headers(): RecordHeader[] {
    const n = this.headerCount;
    if (n === 0) return [];
    const out: RecordHeader[] = new Array(n);
    const saved = this.pos;
    this.pos = this.headersStart;
    const end = this.recordStart + this.sizeInBytes;
    for (let i = 0; i < n; i++) {
      const kl = this.readVarint(end);
      const key = this.buf.toString('utf8', this.pos, this.pos + kl);
      this.pos += kl;
      const vl = this.readVarint(end);
      let value: Buffer | null = null;
      if (vl >= 0) {
        value = this.buf.subarray(this.pos, this.pos + vl);
        this.pos += vl;
      }
      out[i] = { key, value };
    }
    this.pos = saved;
    return out;
  }

  /** The current record as an object. */
  toRecord(): Record {
    return {
      offset: this.offset,
      timestamp: this.timestamp,
      key: this.key,
      value: this.value,
      headers: this.headers(),
      offsetDelta: this.offsetDelta,
      timestampDelta: this.timestampDelta,
      sequence: this.sequence,
      attributes: this.attributes,
      sizeInBytes: this.sizeInBytes,
    };
  }

  private skip(n: number, limit: number, what: string): void {
    if (n > limit - this.pos) {
      throw invalid(`${what} of ${n} bytes runs past the end of record ${this.index}`);
    }
    this.pos += n;
  }

  /** Zigzag varint (32-bit). Like Kafka, a fifth byte with its high bit set is an error. */
  private readVarint(limit: number): number {
    const buf = this.buf;
    let raw = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= limit) throw invalid(`varint runs past the end of record ${this.index}`);
      const b = buf[this.pos++];
      raw |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return (raw >>> 1) ^ -(raw & 1);
    }
    throw invalid(`varint longer than 5 bytes in record ${this.index}`);
  }

  /** Zigzag varlong, as a number; magnitudes beyond 2^52 are rejected (see the file header). */
  private readVarlong(limit: number): number {
    const buf = this.buf;
    let raw = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= limit) throw invalid(`varlong runs past the end of record ${this.index}`);
      const b = buf[this.pos++];
      raw += (b & 0x7f) * POW7[i];
      if ((b & 0x80) === 0) {
        if (raw > MAX_SAFE_ZIGZAG) throw invalid(`timestamp delta out of range in record ${this.index}`);
        return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
      }
    }
    throw invalid(`varlong longer than 10 bytes in record ${this.index}`);
  }
}

/** Every record of a batch, decoded (decompressing once if needed). */
export function readRecords(batch: RecordBatch, opts: RecordIteratorOptions = {}): Record[] {
  const it = new RecordIterator(batch, opts);
  const out: Record[] = [];
  while (it.next()) out.push(it.toRecord());
  return out;
}

/** Records one at a time (one object per record, none retained by the generator). */
export function* iterateRecords(batch: RecordBatch, opts: RecordIteratorOptions = {}): Generator<Record, void, void> {
  const it = new RecordIterator(batch, opts);
  while (it.next()) yield it.toRecord();
}

/**
 * The first record whose timestamp is >= `target` (ListOffsets by timestamp is record-granular),
 * or null when the batch has none. Stops reading at the match, but a match in a compressed batch
 * still costs decompressing the whole batch.
 */
export function findFirstRecordAtOrAfter(
  batch: RecordBatch,
  target: bigint,
  opts: RecordIteratorOptions = {},
): { offset: bigint; timestamp: bigint } | null {
  if (batch.maxTimestamp < target) return null;
  const it = new RecordIterator(batch, opts);
  if (batch.timestampType === TimestampType.LOG_APPEND_TIME) {
    return it.next() ? { offset: it.offset, timestamp: it.timestamp } : null;
  }
  // Compare deltas as numbers: target - baseTimestamp converted once, not a BigInt per record.
  const threshold = target - batch.baseTimestamp;
  const limit = BigInt(Number.MAX_SAFE_INTEGER);
  if (threshold > limit) return null;
  const min = threshold < -limit ? -Number.MAX_SAFE_INTEGER : Number(threshold);
  while (it.next()) {
    if (it.timestampDelta >= min) return { offset: it.offset, timestamp: it.timestamp };
  }
  return null;
}
