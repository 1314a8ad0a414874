/**
 * Builds v2 record batches (Kafka's MemoryRecordsBuilder): for tests, the benchmark, internal
 * topics (__consumer_offsets, __transaction_state), the metadata log, control markers, krill's
 * client's Produce, and re-encoding a batch whose records must change (recompression to a topic's
 * compression.type, or offset deltas that have to be made contiguous).
 */
import { compress } from './compression';
import { RecordIterator } from './record';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  CURRENT_MAGIC,
  CompressionType,
  CRC_OFFSET,
  DELETE_HORIZON_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RecordBatch,
  TIMESTAMP_TYPE_MASK,
  TimestampType,
  TRANSACTIONAL_FLAG_MASK,
} from './record-batch';
import { crc32c } from './crc32c';
import { sizeOfUnsignedVarint, sizeOfVarint, sizeOfVarlong, writeUnsignedVarint, writeVarint, writeVarlong, zigzag32 } from './varint-bytes';

export type BytesInput = Buffer | Uint8Array | string | null | undefined;

export interface HeaderInput {
  key: string;
  value: BytesInput;
}

/** A record to append. Strings are UTF-8 encoded; `undefined` key/value mean null. */
export interface SimpleRecord {
  key?: BytesInput;
  value?: BytesInput;
  headers?: readonly HeaderInput[];
  /** Epoch ms; defaults to the builder's `now`. -1 (NO_TIMESTAMP) is allowed. */
  timestamp?: bigint | number;
}

export interface BatchOptions {
  baseOffset?: bigint;
  compression?: CompressionType;
  /** gzip 1-9 / zstd level; ignored by the other codecs. */
  compressionLevel?: number;
  timestampType?: TimestampType;
  /** maxTimestamp of a LogAppendTime batch; defaults to `now`. */
  logAppendTime?: bigint | number;
  /** Default timestamp for records that carry none; defaults to Date.now(). */
  now?: bigint | number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  isControlBatch?: boolean;
  partitionLeaderEpoch?: number;
  /**
   * Set by Kafka's log cleaner on batches holding tombstones/markers it may delete later: the flag
   * is set and baseTimestamp carries the horizon instead of the first record's timestamp.
   */
  deleteHorizonMs?: bigint;
}

interface PendingRecord {
  offsetDelta: number;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: Buffer; value: Buffer | null }[];
}

const INT32_MAX = 0x7fffffff;
const SAFE_DELTA = 2 ** 52;

function toBuffer(b: BytesInput): Buffer | null {
  if (b === null || b === undefined) return null;
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, b.length);
  b.copy(buf, pos);
  return pos + b.length;
}

/** Scratch for the uncompressed records of a compressed batch; reused, since building is synchronous. */
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024);
const SCRATCH_RETAIN_LIMIT = 4 * 1024 * 1024;

function scratchOf(size: number): Buffer {
  if (scratch.length >= size) return scratch;
  const b = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
  if (b.length <= SCRATCH_RETAIN_LIMIT) scratch = b;
  return b;
}

/**
 * Accumulates records for one v2 batch and encodes it on `build()`.
 *
 * Owns: the pending records (referencing, not copying, the caller's key/value buffers until
 * `build()`) and the batch-level settings. Invariants: offsets appended are strictly increasing
 * and at or above baseOffset, with offset deltas inside int32; timestamps are kept exactly as
 * given (bigint); the built batch has magic 2, lastOffsetDelta = last offset - baseOffset,
 * baseTimestamp = first record's timestamp (or the delete horizon), maxTimestamp = the largest
 * record timestamp (or logAppendTime for LogAppendTime), and a CRC over attributes..end.
 */
export class MemoryRecordsBuilder {
  private readonly records: PendingRecord[] = [];
  private readonly opts: BatchOptions;
  readonly baseOffset: bigint;
  private readonly now: bigint;
  private lastOffsetDelta = -1;

  constructor(opts: BatchOptions = {}) {
    this.opts = opts;
    this.baseOffset = opts.baseOffset ?? 0n;
    this.now = BigInt(opts.now ?? Date.now());
    const seq = opts.baseSequence ?? NO_SEQUENCE;
    if (opts.isTransactional && (opts.producerId ?? NO_PRODUCER_ID) === NO_PRODUCER_ID) {
      throw new Error('a transactional batch needs a producer id');
    }
    if (seq !== NO_SEQUENCE && (seq < 0 || seq > INT32_MAX)) throw new Error(`invalid base sequence ${seq}`);
  }

  get numRecords(): number {
    return this.records.length;
  }

  /** Appends at the next offset (baseOffset for the first record). */
  append(record: SimpleRecord): this {
    return this.appendAtDelta(this.lastOffsetDelta + 1, record);
  }

  /** Appends at an absolute offset, which must exceed every offset appended so far. */
  appendWithOffset(offset: bigint, record: SimpleRecord): this {
    const delta = offset - this.baseOffset;
    if (delta < 0n || delta > BigInt(INT32_MAX)) {
      throw new Error(`offset ${offset} is outside the batch range starting at ${this.baseOffset}`);
    }
    return this.appendAtDelta(Number(delta), record);
  }

  private appendAtDelta(delta: number, record: SimpleRecord): this {
    if (delta <= this.lastOffsetDelta) {
      throw new Error(`offsets must increase: delta ${delta} after ${this.lastOffsetDelta}`);
    }
    if (delta > INT32_MAX) throw new Error('offset delta overflows int32');
    const ts = record.timestamp === undefined ? this.now : BigInt(record.timestamp);
    if (ts < NO_TIMESTAMP) throw new Error(`invalid record timestamp ${ts}`);
    this.records.push({
      offsetDelta: delta,
      timestamp: ts,
      key: toBuffer(record.key),
      value: toBuffer(record.value),
      headers: (record.headers ?? []).map((h) => ({ key: Buffer.from(h.key, 'utf8'), value: toBuffer(h.value) })),
    });
    this.lastOffsetDelta = delta;
    return this;
  }

  /** Encodes the batch. The builder may be built again (e.g. after more appends). */
  build(): Buffer {
    const n = this.records.length;
    if (n === 0) throw new Error('a record batch needs at least one record');
    const o = this.opts;
    const compression = o.compression ?? CompressionType.NONE;
    const timestampType = o.timestampType ?? TimestampType.CREATE_TIME;

    const firstTimestamp = this.records[0].timestamp;
    const baseTimestamp = o.deleteHorizonMs ?? firstTimestamp;
    let maxTimestamp = NO_TIMESTAMP;
    // Per-record timestamp deltas and body sizes, computed once for sizing and writing.
    const deltas: (number | bigint)[] = new Array(n);
    const bodySizes: number[] = new Array(n);
    let recordsSize = 0;
    for (let i = 0; i < n; i++) {
      const r = this.records[i];
      if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp;
      const d = r.timestamp - baseTimestamp;
      const delta = d >= -BigInt(SAFE_DELTA) && d <= BigInt(SAFE_DELTA) ? Number(d) : d;
      deltas[i] = delta;
      let body = 1 + sizeOfVarlong(delta) + sizeOfVarint(r.offsetDelta);
      body += r.key === null ? 1 : sizeOfVarint(r.key.length) + r.key.length;
      body += r.value === null ? 1 : sizeOfVarint(r.value.length) + r.value.length;
      body += sizeOfVarint(r.headers.length);
      for (const h of r.headers) {
        body += sizeOfVarint(h.key.length) + h.key.length;
        body += h.value === null ? 1 : sizeOfVarint(h.value.length) + h.value.length;
      }
      bodySizes[i] = body;
      recordsSize += sizeOfVarint(body) + body;
    }
    if (timestampType === TimestampType.LOG_APPEND_TIME) maxTimestamp = BigInt(o.logAppendTime ?? this.now);

    let out: Buffer;
    if (compression === CompressionType.NONE) {
      out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + recordsSize);
      this.writeRecords(out, RECORD_BATCH_OVERHEAD, deltas, bodySizes);
    } else {
      const plain = scratchOf(recordsSize);
      this.writeRecords(plain, 0, deltas, bodySizes);
      const packed = compress(compression, plain.subarray(0, recordsSize), o.compressionLevel);
      out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + packed.length);
      packed.copy(out, RECORD_BATCH_OVERHEAD);
    }

    let attributes = compression & COMPRESSION_CODEC_MASK;
    if (timestampType === TimestampType.LOG_APPEND_TIME) attributes |= TIMESTAMP_TYPE_MASK;
    if (o.isTransactional) attributes |= TRANSACTIONAL_FLAG_MASK;
    if (o.isControlBatch) attributes |= CONTROL_FLAG_MASK;
    if (o.deleteHorizonMs !== undefined) attributes |= DELETE_HORIZON_FLAG_MASK;

    out.writeBigInt64BE(this.baseOffset, BASE_OFFSET_OFFSET);
    out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH_OFFSET);
    out.writeInt32BE(o.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH_OFFSET);
    out.writeInt8(CURRENT_MAGIC, MAGIC_OFFSET);
    out.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
    out.writeInt32BE(this.lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET);
    out.writeBigInt64BE(baseTimestamp, BASE_TIMESTAMP_OFFSET);
    out.writeBigInt64BE(maxTimestamp, MAX_TIMESTAMP_OFFSET);
    out.writeBigInt64BE(o.producerId ?? NO_PRODUCER_ID, PRODUCER_ID_OFFSET);
    out.writeInt16BE(o.producerEpoch ?? NO_PRODUCER_EPOCH, PRODUCER_EPOCH_OFFSET);
    out.writeInt32BE(o.baseSequence ?? NO_SEQUENCE, BASE_SEQUENCE_OFFSET);
    out.writeInt32BE(n, RECORDS_COUNT_OFFSET);
    out.writeUInt32BE(crc32c(out.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
    return out;
  }

  private writeRecords(buf: Buffer, pos: number, deltas: (number | bigint)[], bodySizes: number[]): number {
    for (let i = 0; i < this.records.length; i++) {
      const r = this.records[i];
      pos = writeVarint(buf, pos, bodySizes[i]);
      buf[pos++] = 0; // record attributes: none defined
      pos = writeVarlong(buf, pos, deltas[i]);
      pos = writeVarint(buf, pos, r.offsetDelta);
      pos = writeBytes(buf, pos, r.key);
      pos = writeBytes(buf, pos, r.value);
      pos = writeVarint(buf, pos, r.headers.length);
      for (const h of r.headers) {
        pos = writeBytes(buf, pos, h.key);
        pos = writeBytes(buf, pos, h.value);
      }
    }
    return pos;
  }
}

/** One batch from a list of records (offsets baseOffset, baseOffset + 1, ...). */
export function buildRecordBatch(records: readonly SimpleRecord[], opts: BatchOptions = {}): Buffer {
  const b = new MemoryRecordsBuilder(opts);
  for (const r of records) b.append(r);
  return b.build();
}

export interface RebuildOptions {
  /** Target codec; defaults to the batch's own. */
  compression?: CompressionType;
  compressionLevel?: number;
  /** Renumber records 0..n-1 (what Kafka does whenever it rebuilds a produced batch). Default true. */
  reassignOffsetDeltas?: boolean;
  maxOutputLength?: number;
}

/**
 * Re-encodes a batch: same header fields (base offset, leader epoch, producer id/epoch/sequence,
 * transactional/control flags, timestamp type, LogAppendTime, delete horizon), records decoded
 * and written again with the target codec. Used when a topic's compression.type differs from the
 * producer's, and when a produced batch's offset deltas are not 0..n-1.
 */
export function rebuildBatch(batch: RecordBatch, opts: RebuildOptions = {}): Buffer {
  const lat = batch.timestampType === TimestampType.LOG_APPEND_TIME;
  const builder = new MemoryRecordsBuilder({
    baseOffset: batch.baseOffset,
    compression: opts.compression ?? batch.compressionType,
    compressionLevel: opts.compressionLevel,
    timestampType: batch.timestampType,
    logAppendTime: lat ? batch.maxTimestamp : undefined,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    isTransactional: batch.isTransactional,
    isControlBatch: batch.isControlBatch,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    deleteHorizonMs: batch.hasDeleteHorizon ? batch.baseTimestamp : undefined,
  });
  const it = new RecordIterator(batch, { maxOutputLength: opts.maxOutputLength });
  const renumber = opts.reassignOffsetDeltas !== false;
  // Deltas are relative to baseTimestamp (the delete horizon when set). A LogAppendTime batch's
  // records keep their original create times this way, not the maxTimestamp readers report.
  const base = batch.baseTimestamp;
  while (it.next()) {
    const rec: SimpleRecord = {
      key: it.key,
      value: it.value,
      headers: it.headers(),
      timestamp: BigInt.asIntN(64, base + BigInt(it.timestampDelta)),
    };
    if (renumber) builder.append(rec);
    else builder.appendWithOffset(batch.baseOffset + BigInt(it.offsetDelta), rec);
  }
  return builder.build();
}
