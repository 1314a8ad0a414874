/**
 * Validation of a record set before the log assigns offsets (Kafka's LogValidator and
 * UnifiedLog.analyzeAndValidateRecords), kept out of UnifiedLog so the append path reads as the
 * KAFKA-7866 sequence it is.
 *
 * Nothing here writes: every check for the whole set happens before any offset is assigned, so a
 * rejected request leaves the log untouched.
 *
 * - Client produce: validateProduceRecordSet (protocol/records) does Kafka's checks in Kafka's
 *   order with Kafka's codes (one v2 batch, baseOffset 0, MESSAGE_TOO_LARGE over max.message.bytes,
 *   CRC, count/offset-delta consistency, no control batches, per-record timestamp window and
 *   LogAppendTime misuse -> INVALID_TIMESTAMP with record_errors, keys on compacted topics), with
 *   decompression bounded by decompressedSizeLimit(max.message.bytes) (INVALID_RECORD past it;
 *   see compression.ts). Then, if the topic's compression.type differs from the producer's codec,
 *   the batch is re-encoded under the same bound (the only time the produce path recompresses)
 *   and its size checked again.
 * - Coordinator writes (group/transaction coordinators, control markers): header checks only
 *   (framing, magic, CRC, max.message.bytes), any number of batches.
 * - Follower appends: framing, CRC and strictly increasing offsets; offsets are kept.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import { compressionTypeForName, decompressedSizeLimit } from '../protocol/records/compression';
import { rebuildBatch } from '../protocol/records/memory-records-builder';
import { CompressionType, RecordBatch, TimestampType, checkBatch } from '../protocol/records/record-batch';
import { validateProduceRecordSet } from '../protocol/records/record-set-validator';
import { LogConfig, compactEnabled } from './log-config';
import { offsetOfMaxTimestamp } from './record-access';
import { OffsetsOutOfOrderError } from './errors';

export type AppendOrigin = 'client' | 'coordinator' | 'replication';

export interface ValidatedBatch {
  /** Position of the batch in `records`. */
  position: number;
  sizeInBytes: number;
  lastOffsetDelta: number;
  recordCount: number;
  /** Largest record timestamp in the batch (-1 when none). */
  maxTimestamp: bigint;
  /** Offset delta of the first record carrying maxTimestamp. */
  offsetDeltaOfMaxTimestamp: number;
}

export interface ValidatedRecords {
  /** The bytes to append (trimmed of a trailing partial batch, or re-encoded). */
  records: Buffer;
  batches: ValidatedBatch[];
  recordCount: number;
  sourceCompression: CompressionType;
}

export interface LeaderValidationOptions {
  origin: AppendOrigin;
  now: number;
  /** Produce request version (zstd needs v7+); omitted = latest. */
  requestVersion?: number;
}

function targetCompression(config: LogConfig): CompressionType | null {
  const name = config.compressionType.toLowerCase();
  if (name === 'producer') return null;
  return compressionTypeForName(name === 'uncompressed' ? 'none' : name);
}

export function validateForLeader(records: Buffer, config: LogConfig, opts: LeaderValidationOptions): ValidatedRecords {
  if (opts.origin === 'client') return validateClientRecords(records, config, opts);
  return validateInternalRecords(records, config);
}

function validateClientRecords(records: Buffer, config: LogConfig, opts: LeaderValidationOptions): ValidatedRecords {
  const v = validateProduceRecordSet(records, {
    apiVersion: opts.requestVersion,
    maxMessageBytes: config.maxMessageBytes,
    compacted: compactEnabled(config),
    timestampType: config.messageTimestampType === 'LogAppendTime' ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME,
    timestampBeforeMaxMs: config.messageTimestampBeforeMaxMs,
    timestampAfterMaxMs: config.messageTimestampAfterMaxMs,
    now: opts.now,
  });
  let out = v.validBytes === records.length ? records : records.subarray(0, v.validBytes);
  const batches: ValidatedBatch[] = v.batches.map((b) => ({
    position: b.position,
    sizeInBytes: b.sizeInBytes,
    lastOffsetDelta: b.batch.lastOffsetDelta,
    recordCount: b.recordCount,
    maxTimestamp: b.maxTimestamp,
    offsetDeltaOfMaxTimestamp: b.offsetDeltaOfMaxTimestamp,
  }));
  const target = targetCompression(config);
  if (target !== null && batches.length === 1 && v.batches[0].compression !== target) {
    // compression.type pins a codec different from the producer's: re-encode (Kafka does the same).
    out = rebuildBatch(new RecordBatch(out, 0), {
      compression: target,
      maxOutputLength: decompressedSizeLimit(config.maxMessageBytes),
    });
    if (out.length > config.maxMessageBytes) {
      throw new KafkaError(
        ErrorCode.MESSAGE_TOO_LARGE,
        `record batch of ${out.length} bytes after recompression exceeds max.message.bytes ${config.maxMessageBytes}`,
      );
    }
    batches[0] = { ...batches[0], position: 0, sizeInBytes: out.length };
  }
  return { records: out, batches, recordCount: v.recordCount, sourceCompression: v.sourceCompression };
}

function validateInternalRecords(records: Buffer, config: LogConfig): ValidatedRecords {
  const batches: ValidatedBatch[] = [];
  let pos = 0;
  let count = 0;
  let source = CompressionType.NONE;
  while (pos < records.length) {
    const b = checkBatch(records, pos);
    if (b.sizeInBytes > config.maxMessageBytes) {
      throw new KafkaError(
        ErrorCode.MESSAGE_TOO_LARGE,
        `record batch of ${b.sizeInBytes} bytes exceeds max.message.bytes ${config.maxMessageBytes}`,
      );
    }
    const bytes = b.bytes;
    batches.push({
      position: pos,
      sizeInBytes: b.sizeInBytes,
      lastOffsetDelta: b.lastOffsetDelta,
      recordCount: b.recordsCount,
      maxTimestamp: b.maxTimestamp,
      offsetDeltaOfMaxTimestamp: Number(offsetOfMaxTimestamp(bytes) - b.baseOffset),
    });
    count += b.recordsCount;
    if (b.compressionType !== CompressionType.NONE) source = b.compressionType;
    pos += b.sizeInBytes;
  }
  if (batches.length === 0) throw new KafkaError(ErrorCode.INVALID_RECORD, 'append carries no record batch');
  return { records, batches, recordCount: count, sourceCompression: source };
}

export interface FollowerBatch {
  position: number;
  sizeInBytes: number;
  baseOffset: bigint;
  lastOffset: bigint;
  maxTimestamp: bigint;
  partitionLeaderEpoch: number;
  recordCount: number;
}

/** Framing, CRC and strictly increasing offsets of a replicated record set. */
export function validateForFollower(records: Buffer): FollowerBatch[] {
  const out: FollowerBatch[] = [];
  let pos = 0;
  let prevLast: bigint | null = null;
  while (pos < records.length) {
    const b = checkBatch(records, pos);
    const base = b.baseOffset;
    const last = b.lastOffset;
    if (prevLast !== null && base <= prevLast) {
      throw new OffsetsOutOfOrderError(`out of order offsets in replicated records: batch at ${base} follows last offset ${prevLast}`);
    }
    out.push({
      position: pos,
      sizeInBytes: b.sizeInBytes,
      baseOffset: base,
      lastOffset: last,
      maxTimestamp: b.maxTimestamp,
      partitionLeaderEpoch: b.partitionLeaderEpoch,
      recordCount: b.recordsCount,
    });
    prevLast = last;
    pos += b.sizeInBytes;
  }
  return out;
}
