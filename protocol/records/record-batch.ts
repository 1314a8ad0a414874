/**
 * The fixed 61-byte header of a v2 record batch (magic 2), read and patched in place on a Buffer.
 * Batches travel from socket to disk as Buffer slices; only this header is parsed on the hot path.
 * baseOffset and partitionLeaderEpoch lie outside the CRC, so the broker patches them without
 * recomputing it; anything under the CRC (attributes..end) must never be modified in place.
 *
 *   0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 | 16 magic int8
 *  17 crc uint32 | 21 attributes int16 | 23 lastOffsetDelta int32 | 27 baseTimestamp int64
 *  35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16 | 53 baseSequence int32
 *  57 recordsCount int32 | 61 records...
 */
import { ErrorCode, KafkaError } from '../errors';
import { crc32c } from './crc32c';

export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength: the bytes before the length counts. */
export const LOG_OVERHEAD = 12;
/** Smallest valid batch: the header with zero records. */
export const MIN_BATCH_SIZE = RECORD_BATCH_OVERHEAD;

export const CURRENT_MAGIC = 2;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;
export const NO_TIMESTAMP = -1n;

export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;

export enum CompressionType {
  NONE = 0,
  GZIP = 1,
  SNAPPY = 2,
  LZ4 = 3,
  ZSTD = 4,
}

export enum TimestampType {
  CREATE_TIME = 0,
  LOG_APPEND_TIME = 1,
}

/** A view over one batch at `offset` in `buf`; the batch occupies [offset, offset + sizeInBytes). */
export class RecordBatch {
  constructor(
    readonly buf: Buffer,
    readonly offset = 0,
  ) {}

  get baseOffset(): bigint {
    return this.buf.readBigInt64BE(this.offset + BASE_OFFSET_OFFSET);
  }
  set baseOffset(v: bigint) {
    this.buf.writeBigInt64BE(v, this.offset + BASE_OFFSET_OFFSET);
  }
  get batchLength(): number {
    return this.buf.readInt32BE(this.offset + BATCH_LENGTH_OFFSET);
  }
  /** Whole batch size including the 12-byte log overhead. */
  get sizeInBytes(): number {
    return this.batchLength + LOG_OVERHEAD;
  }
  get partitionLeaderEpoch(): number {
    return this.buf.readInt32BE(this.offset + PARTITION_LEADER_EPOCH_OFFSET);
  }
  set partitionLeaderEpoch(v: number) {
    this.buf.writeInt32BE(v, this.offset + PARTITION_LEADER_EPOCH_OFFSET);
  }
  get magic(): number {
    return this.buf.readInt8(this.offset + MAGIC_OFFSET);
  }
  get crc(): number {
    return this.buf.readUInt32BE(this.offset + CRC_OFFSET);
  }
  get attributes(): number {
    return this.buf.readInt16BE(this.offset + ATTRIBUTES_OFFSET);
  }
  get compressionType(): CompressionType {
    return this.attributes & COMPRESSION_CODEC_MASK;
  }
  get timestampType(): TimestampType {
    return this.attributes & TIMESTAMP_TYPE_MASK ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
  }
  get isTransactional(): boolean {
    return (this.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  }
  get isControlBatch(): boolean {
    return (this.attributes & CONTROL_FLAG_MASK) !== 0;
  }
  get hasDeleteHorizon(): boolean {
    return (this.attributes & DELETE_HORIZON_FLAG_MASK) !== 0;
  }
  get lastOffsetDelta(): number {
    return this.buf.readInt32BE(this.offset + LAST_OFFSET_DELTA_OFFSET);
  }
  get lastOffset(): bigint {
    return this.baseOffset + BigInt(this.lastOffsetDelta);
  }
  get nextOffset(): bigint {
    return this.lastOffset + 1n;
  }
  get baseTimestamp(): bigint {
    return this.buf.readBigInt64BE(this.offset + BASE_TIMESTAMP_OFFSET);
  }
  get maxTimestamp(): bigint {
    return this.buf.readBigInt64BE(this.offset + MAX_TIMESTAMP_OFFSET);
  }
  get producerId(): bigint {
    return this.buf.readBigInt64BE(this.offset + PRODUCER_ID_OFFSET);
  }
  get producerEpoch(): number {
    return this.buf.readInt16BE(this.offset + PRODUCER_EPOCH_OFFSET);
  }
  get baseSequence(): number {
    return this.buf.readInt32BE(this.offset + BASE_SEQUENCE_OFFSET);
  }
  /** Sequence of the last record, wrapping at Int32 max as Kafka does. */
  get lastSequence(): number {
    const base = this.baseSequence;
    if (base === NO_SEQUENCE) return NO_SEQUENCE;
    return (base + this.lastOffsetDelta) % 0x80000000;
  }
  get recordsCount(): number {
    return this.buf.readInt32BE(this.offset + RECORDS_COUNT_OFFSET);
  }
  /** The batch bytes (a view, no copy). */
  get bytes(): Buffer {
    return this.buf.subarray(this.offset, this.offset + this.sizeInBytes);
  }
  /** The records section (possibly compressed). */
  get recordsBytes(): Buffer {
    return this.buf.subarray(this.offset + RECORD_BATCH_OVERHEAD, this.offset + this.sizeInBytes);
  }

  computeCrc(): number {
    return crc32c(this.buf.subarray(this.offset + ATTRIBUTES_OFFSET, this.offset + this.sizeInBytes));
  }

  isValidCrc(): boolean {
    return this.computeCrc() === this.crc;
  }

  /** Rewrites the stored CRC (after the broker changed attributes or max timestamp, as for LogAppendTime). */
  updateCrc(): void {
    this.buf.writeUInt32BE(this.computeCrc(), this.offset + CRC_OFFSET);
  }

  /** Sets LogAppendTime: timestamp type bit and max timestamp, then the CRC (Kafka does the same). */
  setLogAppendTime(timestampMs: bigint): void {
    const attrs = this.attributes | TIMESTAMP_TYPE_MASK;
    this.buf.writeInt16BE(attrs, this.offset + ATTRIBUTES_OFFSET);
    this.buf.writeBigInt64BE(timestampMs, this.offset + MAX_TIMESTAMP_OFFSET);
    this.updateCrc();
  }

  /**
   * Sets the timestamp type bit and max timestamp, recomputing the CRC only when either changes
   * (the produce path stamps the max timestamp it computed from the records; usually equal).
   */
  setMaxTimestamp(timestampType: TimestampType, maxTimestamp: bigint): void {
    if (this.timestampType === timestampType && this.maxTimestamp === maxTimestamp) return;
    const attrs =
      timestampType === TimestampType.LOG_APPEND_TIME
        ? this.attributes | TIMESTAMP_TYPE_MASK
        : this.attributes & ~TIMESTAMP_TYPE_MASK;
    this.buf.writeInt16BE(attrs, this.offset + ATTRIBUTES_OFFSET);
    this.buf.writeBigInt64BE(maxTimestamp, this.offset + MAX_TIMESTAMP_OFFSET);
    this.updateCrc();
  }

  /** Sets baseOffset so that the batch's last offset is `lastOffset` (offset assignment). */
  setLastOffset(lastOffset: bigint): void {
    this.baseOffset = lastOffset - BigInt(this.lastOffsetDelta);
  }
}

export interface BatchCheckOptions {
  /** Verify the CRC32C (off only where the caller already did). */
  checkCrc?: boolean;
}

/**
 * Checks that a complete, well-formed v2 batch starts at `offset` and returns it. Throws
 * KafkaError(CORRUPT_MESSAGE) for a short/overlong length, a wrong magic, a bad CRC, or a
 * lastOffsetDelta that disagrees with the record count; INVALID_RECORD for a negative count.
 */
export function checkBatch(buf: Buffer, offset: number, opts: BatchCheckOptions = {}): RecordBatch {
  const left = buf.length - offset;
  if (left < LOG_OVERHEAD) {
    throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `${left} bytes left, not enough for a batch header`);
  }
  const batchLength = buf.readInt32BE(offset + BATCH_LENGTH_OFFSET);
  if (batchLength + LOG_OVERHEAD < MIN_BATCH_SIZE) {
    throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `batch length ${batchLength} is smaller than the v2 header`);
  }
  if (batchLength + LOG_OVERHEAD > left) {
    throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `batch length ${batchLength} runs past the ${left} bytes available`);
  }
  const batch = new RecordBatch(buf, offset);
  const magic = batch.magic;
  if (magic !== CURRENT_MAGIC) {
    throw new KafkaError(
      magic < CURRENT_MAGIC ? ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT : ErrorCode.CORRUPT_MESSAGE,
      `record batch magic ${magic} is not supported (only v2)`,
    );
  }
  if (opts.checkCrc !== false && !batch.isValidCrc()) {
    throw new KafkaError(
      ErrorCode.CORRUPT_MESSAGE,
      `record batch CRC mismatch: stored ${batch.crc}, computed ${batch.computeCrc()}`,
    );
  }
  const count = batch.recordsCount;
  if (count < 0) throw new KafkaError(ErrorCode.INVALID_RECORD, `negative record count ${count}`);
  const delta = batch.lastOffsetDelta;
  if (delta < 0 || (count > 0 && delta < count - 1)) {
    throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `lastOffsetDelta ${delta} does not fit record count ${count}`);
  }
  return batch;
}

/** Splits a record set into batches, checking each; throws on the first bad one. */
export function splitBatches(records: Buffer, opts: BatchCheckOptions = {}): RecordBatch[] {
  const out: RecordBatch[] = [];
  let pos = 0;
  while (pos < records.length) {
    const b = checkBatch(records, pos, opts);
    out.push(b);
    pos += b.sizeInBytes;
  }
  return out;
}
