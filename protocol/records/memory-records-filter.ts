/**
 * Kafka's MemoryRecords.filterTo and its RecordFilter: copies the batches of a buffer that a filter
 * keeps into an output buffer, batch by batch, the way the log cleaner rewrites a segment.
 *
 * Owns the record-level rewrite rules, which are Kafka's:
 * - the filter first decides per batch (`checkBatchRetention`): DELETE drops the batch unread;
 *   DELETE_EMPTY and RETAIN_EMPTY read its records through `shouldRetainRecord`. When no record
 *   is kept, a DELETE_EMPTY batch goes and a RETAIN_EMPTY batch leaves a 61-byte header with zero
 *   records (same base and last offset, producer id, epoch, base sequence, leader epoch, timestamp
 *   type, max timestamp, transactional and control flags; no codec, no delete horizon);
 * - a batch whose records are all kept is copied byte for byte, unless it holds a tombstone (a
 *   record with a null value) or is a marker of an emptied transaction and has no delete horizon
 *   yet: then it is rebuilt with the delete horizon `currentTime + deleteRetentionMs` in its base
 *   timestamp (attribute bit 0x40, KIP-534), record timestamps re-expressed as deltas from it;
 * - a batch that lost records is rebuilt: the same base offset, last offset (lastOffsetDelta kept,
 *   so the producer's last sequence survives), producer id, epoch, base sequence, leader epoch,
 *   timestamp type, transactional and control flags and codec (recompressed at the codec's
 *   default level); base timestamp the first kept record's timestamp (or the delete horizon, kept
 *   or newly set); each kept record with its own offset delta, timestamp, key, value and headers
 *   (the bytes after the offset delta are copied as they are); max timestamp the largest kept one
 *   (the batch's own for LogAppendTime).
 *
 * Invariants: only complete batches are consumed (`bytesRead` stops before a batch that does not
 * fit the buffer, as Kafka's batch iterator does); offsets are never changed; the output holds
 * whole, CRC-valid v2 batches in input order. Everything is synchronous and allocation per record
 * is avoided: records are walked with RecordIterator and copied from its buffer.
 */
import { compress } from './compression';
import { crc32c } from './crc32c';
import { RecordIterator } from './record';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  CURRENT_MAGIC,
  CompressionType,
  DELETE_HORIZON_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  RecordBatch,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  TimestampType,
} from './record-batch';
import { sizeOfUnsignedVarint, writeUnsignedVarint, zigzag64 } from './varint-bytes';

export enum BatchRetention {
  /** Drop the batch without reading its records. */
  DELETE,
  /** Keep at least the batch header, even when no record is kept. */
  RETAIN_EMPTY,
  /** Drop the batch when none of its records is kept. */
  DELETE_EMPTY,
}

export interface BatchRetentionResult {
  batchRetention: BatchRetention;
  /** A transaction marker whose transaction has no data left: gets a delete horizon like a tombstone. */
  containsMarkerForEmptyTxn: boolean;
}

/** Kafka's MemoryRecords.RecordFilter. */
export interface RecordFilter {
  /** Epoch ms the filter runs at (the delete horizon is computed from it). */
  readonly currentTime: number;
  /** delete.retention.ms of the log. */
  readonly deleteRetentionMs: number;
  checkBatchRetention(batch: RecordBatch): BatchRetentionResult;
  /** `it` is positioned on the record (its fields are valid until the next `next()`). */
  shouldRetainRecord(batch: RecordBatch, it: RecordIterator): boolean;
}

export interface FilterResult {
  /** The kept batches, back to back (a view of the output buffer). */
  output: Buffer;
  /** Bytes of complete input batches consumed, kept or not. */
  bytesRead: number;
  messagesRead: number;
  messagesRetained: number;
  bytesRetained: number;
  /** Largest kept offset (the last offset of a kept empty batch); -1 when nothing was kept. */
  maxOffset: number;
  maxTimestamp: number;
  shallowOffsetOfMaxTimestamp: number;
  /** Batches rebuilt (records dropped or a delete horizon set), as opposed to copied or emptied. */
  batchesRebuilt: number;
}

/**
 * The largest delete horizon written. Kafka adds delete.retention.ms to the clock in a long
 * (Long.MAX_VALUE wraps negative there and the horizon is then not set at all); krill keeps record
 * timestamp deltas within +-2^52 (record.ts), so a horizon is capped at 2^51 ms, about 70,000 years:
 * such tombstones are never removed, which is what an unbounded retention asks for.
 */
export const MAX_DELETE_HORIZON_MS = 2 ** 51;

const INT32_MAX = 0x7fffffff;
const TWO_32 = 4294967296;

function readInt64(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * TWO_32 + buf.readUInt32BE(at + 4);
}

/** An output buffer that grows (Kafka's ByteBufferOutputStream). */
export class GrowableBuffer {
  buf: Buffer;
  length = 0;
  constructor(initial = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(256, initial));
  }
  ensure(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + extra));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }
  append(b: Buffer, start = 0, end = b.length): void {
    this.ensure(end - start);
    b.copy(this.buf, this.length, start, end);
    this.length += end - start;
  }
  reset(): void {
    this.length = 0;
  }
  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** One kept record: its timestamp, offset delta and where its key..headers bytes lie in `src`. */
interface Kept {
  src: Buffer;
  timestamp: number;
  offsetDelta: number;
  tailStart: number;
  tailEnd: number;
}

/**
 * Writes a batch of the kept records (Kafka's buildRetainedRecordsInto + MemoryRecordsBuilder with
 * overrideLastOffset). `deleteHorizonMs` < 0: none.
 */
function writeRetainedBatch(batch: RecordBatch, kept: readonly Kept[], deleteHorizonMs: number, out: GrowableBuffer): number {
  const codec = batch.compressionType;
  const lat = batch.timestampType === TimestampType.LOG_APPEND_TIME;
  const hasHorizon = deleteHorizonMs >= 0;
  const baseTimestamp = hasHorizon ? deleteHorizonMs : kept[0].timestamp;
  let maxTimestamp = -1;
  let recordsSize = 0;
  const bodies: number[] = new Array(kept.length);
  for (let i = 0; i < kept.length; i++) {
    const k = kept[i];
    if (k.timestamp > maxTimestamp) maxTimestamp = k.timestamp;
    const body = 1 + sizeOfUnsignedVarint(zigzag64(k.timestamp - baseTimestamp)) + sizeOfUnsignedVarint(((k.offsetDelta << 1) ^ (k.offsetDelta >> 31)) >>> 0) + (k.tailEnd - k.tailStart);
    bodies[i] = body;
    recordsSize += sizeOfUnsignedVarint(((body << 1) ^ (body >> 31)) >>> 0) + body;
  }
  if (lat) maxTimestamp = readInt64(batch.buf, batch.offset + MAX_TIMESTAMP_OFFSET);
  const plain = Buffer.allocUnsafe(recordsSize);
  let pos = 0;
  for (let i = 0; i < kept.length; i++) {
    const k = kept[i];
    pos = writeUnsignedVarint(plain, pos, ((bodies[i] << 1) ^ (bodies[i] >> 31)) >>> 0);
    plain[pos++] = 0; // record attributes: none defined
    pos = writeUnsignedVarint(plain, pos, zigzag64(k.timestamp - baseTimestamp));
    pos = writeUnsignedVarint(plain, pos, ((k.offsetDelta << 1) ^ (k.offsetDelta >> 31)) >>> 0);
    k.src.copy(plain, pos, k.tailStart, k.tailEnd);
    pos += k.tailEnd - k.tailStart;
  }
  const records = codec === CompressionType.NONE ? plain : compress(codec, plain);
  const size = RECORD_BATCH_OVERHEAD + records.length;
  out.ensure(size);
  const o = out.buf;
  const at = out.length;
  const src = batch.buf;
  const b = batch.offset;
  let attributes = codec & COMPRESSION_CODEC_MASK;
  if (lat) attributes |= TIMESTAMP_TYPE_MASK;
  if (batch.isTransactional) attributes |= TRANSACTIONAL_FLAG_MASK;
  if (batch.isControlBatch) attributes |= CONTROL_FLAG_MASK;
  if (hasHorizon) attributes |= DELETE_HORIZON_FLAG_MASK;
  src.copy(o, at + BASE_OFFSET_OFFSET, b + BASE_OFFSET_OFFSET, b + BASE_OFFSET_OFFSET + 8);
  o.writeInt32BE(size - LOG_OVERHEAD, at + BATCH_LENGTH_OFFSET);
  src.copy(o, at + PARTITION_LEADER_EPOCH_OFFSET, b + PARTITION_LEADER_EPOCH_OFFSET, b + PARTITION_LEADER_EPOCH_OFFSET + 4);
  o.writeInt8(CURRENT_MAGIC, at + MAGIC_OFFSET);
  o.writeInt16BE(attributes, at + ATTRIBUTES_OFFSET);
  src.copy(o, at + LAST_OFFSET_DELTA_OFFSET, b + LAST_OFFSET_DELTA_OFFSET, b + LAST_OFFSET_DELTA_OFFSET + 4);
  o.writeBigInt64BE(BigInt(baseTimestamp), at + BASE_TIMESTAMP_OFFSET);
  o.writeBigInt64BE(BigInt(maxTimestamp), at + MAX_TIMESTAMP_OFFSET);
  // producer id (8), epoch (2), base sequence (4): copied as they are.
  src.copy(o, at + PRODUCER_ID_OFFSET, b + PRODUCER_ID_OFFSET, b + BASE_SEQUENCE_OFFSET + 4);
  o.writeInt32BE(kept.length, at + RECORDS_COUNT_OFFSET);
  records.copy(o, at + RECORD_BATCH_OVERHEAD);
  o.writeUInt32BE(crc32c(o.subarray(at + ATTRIBUTES_OFFSET, at + size)), at + CRC_OFFSET);
  out.length += size;
  return size;
}

/** Kafka's DefaultRecordBatch.writeEmptyHeader: the batch's header with zero records. */
export function writeEmptyHeader(batch: RecordBatch, out: GrowableBuffer): number {
  out.ensure(RECORD_BATCH_OVERHEAD);
  const o = out.buf;
  const at = out.length;
  const src = batch.buf;
  const b = batch.offset;
  let attributes = 0;
  if (batch.timestampType === TimestampType.LOG_APPEND_TIME) attributes |= TIMESTAMP_TYPE_MASK;
  if (batch.isTransactional) attributes |= TRANSACTIONAL_FLAG_MASK;
  if (batch.isControlBatch) attributes |= CONTROL_FLAG_MASK;
  src.copy(o, at + BASE_OFFSET_OFFSET, b + BASE_OFFSET_OFFSET, b + BASE_OFFSET_OFFSET + 8);
  o.writeInt32BE(RECORD_BATCH_OVERHEAD - LOG_OVERHEAD, at + BATCH_LENGTH_OFFSET);
  src.copy(o, at + PARTITION_LEADER_EPOCH_OFFSET, b + PARTITION_LEADER_EPOCH_OFFSET, b + PARTITION_LEADER_EPOCH_OFFSET + 4);
  o.writeInt8(CURRENT_MAGIC, at + MAGIC_OFFSET);
  o.writeInt16BE(attributes, at + ATTRIBUTES_OFFSET);
  src.copy(o, at + LAST_OFFSET_DELTA_OFFSET, b + LAST_OFFSET_DELTA_OFFSET, b + LAST_OFFSET_DELTA_OFFSET + 4);
  // base timestamp = max timestamp = the batch's max timestamp
  src.copy(o, at + BASE_TIMESTAMP_OFFSET, b + MAX_TIMESTAMP_OFFSET, b + MAX_TIMESTAMP_OFFSET + 8);
  src.copy(o, at + MAX_TIMESTAMP_OFFSET, b + MAX_TIMESTAMP_OFFSET, b + MAX_TIMESTAMP_OFFSET + 8);
  src.copy(o, at + PRODUCER_ID_OFFSET, b + PRODUCER_ID_OFFSET, b + PRODUCER_EPOCH_OFFSET + 2);
  src.copy(o, at + BASE_SEQUENCE_OFFSET, b + BASE_SEQUENCE_OFFSET, b + BASE_SEQUENCE_OFFSET + 4);
  o.writeInt32BE(0, at + RECORDS_COUNT_OFFSET);
  o.writeUInt32BE(crc32c(o.subarray(at + ATTRIBUTES_OFFSET, at + RECORD_BATCH_OVERHEAD)), at + CRC_OFFSET);
  out.length += RECORD_BATCH_OVERHEAD;
  return RECORD_BATCH_OVERHEAD;
}

export interface FilterOptions {
  /** Bound on a decompressed records section (see compression.ts). */
  maxDecompressedSize?: number;
}

/**
 * Filters the complete batches at the start of `buf` into `out` (appended to; not reset). A
 * trailing partial batch is left unread: the caller reads further and calls again.
 */
export function filterTo(buf: Buffer, filter: RecordFilter, out: GrowableBuffer, opts: FilterOptions = {}): FilterResult {
  const startLength = out.length;
  const r: FilterResult = {
    output: Buffer.alloc(0),
    bytesRead: 0,
    messagesRead: 0,
    messagesRetained: 0,
    bytesRetained: 0,
    maxOffset: -1,
    maxTimestamp: -1,
    shallowOffsetOfMaxTimestamp: -1,
    batchesRebuilt: 0,
  };
  const kept: Kept[] = [];
  let pos = 0;
  while (pos + LOG_OVERHEAD <= buf.length) {
    const size = buf.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (size < RECORD_BATCH_OVERHEAD || pos + size > buf.length) break;
    const batch = new RecordBatch(buf, pos);
    const retention = filter.checkBatchRetention(batch);
    r.bytesRead += size;
    pos += size;
    if (retention.batchRetention === BatchRetention.DELETE) continue;

    kept.length = 0;
    let writeOriginal = true;
    let containsTombstones = false;
    let maxKeptOffset = -1;
    const base = readInt64(buf, batch.offset + BASE_OFFSET_OFFSET);
    // Record timestamps as the reader sees them (Kafka's Record.timestamp(): a LogAppendTime
    // batch's records all carry its max timestamp), as numbers (exact below 2^53).
    const lat = batch.timestampType === TimestampType.LOG_APPEND_TIME;
    const baseTs = lat ? readInt64(buf, batch.offset + MAX_TIMESTAMP_OFFSET) : readInt64(buf, batch.offset + BASE_TIMESTAMP_OFFSET);
    const it = new RecordIterator(batch, { maxOutputLength: opts.maxDecompressedSize });
    while (it.next()) {
      r.messagesRead++;
      if (filter.shouldRetainRecord(batch, it)) {
        const off = base + it.offsetDelta;
        if (off > maxKeptOffset) maxKeptOffset = off;
        if (it.valueLength < 0) containsTombstones = true;
        // The bytes after the record's offset delta (key, value, headers) are copied unchanged.
        kept.push({
          src: it.buf,
          timestamp: lat ? baseTs : baseTs + it.timestampDelta,
          offsetDelta: it.offsetDelta,
          tailStart: it.keyLengthStart,
          tailEnd: it.recordStart + it.sizeInBytes,
        });
      } else {
        writeOriginal = false;
      }
    }
    const lastOffset = base + batch.lastOffsetDelta;
    const maxTs = readInt64(buf, batch.offset + MAX_TIMESTAMP_OFFSET);
    if (kept.length > 0) {
      const needToSetDeleteHorizon = (containsTombstones || retention.containsMarkerForEmptyTxn) && !batch.hasDeleteHorizon;
      if (writeOriginal && !needToSetDeleteHorizon) {
        out.append(buf, batch.offset, batch.offset + size);
        updateRetained(r, maxTs, lastOffset, lastOffset, kept.length, size);
      } else {
        const horizon = needToSetDeleteHorizon
          ? Math.min(filter.currentTime + filter.deleteRetentionMs, MAX_DELETE_HORIZON_MS)
          : batch.hasDeleteHorizon
            ? readInt64(buf, batch.offset + BASE_TIMESTAMP_OFFSET)
            : -1;
        const at = out.length;
        const written = writeRetainedBatch(batch, kept, horizon, out);
        r.batchesRebuilt++;
        const rebuiltMax = readInt64(out.buf, at + MAX_TIMESTAMP_OFFSET);
        // Kafka's RecordsInfo: the shallow offset of the max timestamp is the batch's last offset.
        updateRetained(r, rebuiltMax, lastOffset, maxKeptOffset, kept.length, written);
      }
    } else if (retention.batchRetention === BatchRetention.RETAIN_EMPTY) {
      writeEmptyHeader(batch, out);
      updateRetained(r, maxTs, lastOffset, lastOffset, 0, RECORD_BATCH_OVERHEAD);
    }
  }
  r.output = out.buf.subarray(startLength, out.length);
  return r;
}

function updateRetained(r: FilterResult, maxTimestamp: number, shallowOffsetOfMaxTimestamp: number, maxOffset: number, messages: number, bytes: number): void {
  if (maxTimestamp > r.maxTimestamp) {
    r.maxTimestamp = maxTimestamp;
    r.shallowOffsetOfMaxTimestamp = shallowOffsetOfMaxTimestamp;
  }
  if (maxOffset > r.maxOffset) r.maxOffset = maxOffset;
  r.messagesRetained += messages;
  r.bytesRetained += bytes;
}

/** For tests and tools: the size of the first batch of `buf`, or null when the header is not there. */
export function firstBatchSize(buf: Buffer): number | null {
  if (buf.length < LOG_OVERHEAD) return null;
  const n = buf.readInt32BE(BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
  return n > INT32_MAX ? null : n;
}
