/**
 * The record-level questions storage asks of a stored batch, in one place:
 *  - ListOffsets by timestamp: the first RECORD with timestamp >= target (not the batch's first offset);
 *  - ListOffsets MAX_TIMESTAMP: the offset of the first record carrying the batch's max timestamp;
 *  - after a read: the offset following the last batch of its chunks (headers only; -1 for none).
 *
 * LogAppendTime batches answer from the header (every record's timestamp is the batch's max);
 * CreateTime batches are iterated with protocol/records/record.ts (decompressing once if needed).
 * A batch whose records cannot be decoded falls back to the header (first offset at or after
 * `minOffset`): a lookup must not fail because one stored batch is odd.
 */
import { KafkaError } from '../protocol/errors';
import { RecordIterator, findFirstRecordAtOrAfter } from '../protocol/records/record';
import { RECORD_BATCH_OVERHEAD, RecordBatch, TimestampType } from '../protocol/records/record-batch';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export interface RecordTimestampAndOffset {
  timestamp: bigint;
  offset: bigint;
}

/**
 * The first record in `batch` (one whole batch) with timestamp >= target and offset >= minOffset,
 * or null if none.
 */
export function firstRecordAtOrAfter(batch: Buffer, targetTimestamp: bigint, minOffset: bigint): RecordTimestampAndOffset | null {
  const b = new RecordBatch(batch, 0);
  if (b.maxTimestamp < targetTimestamp || b.lastOffset < minOffset) return null;
  if (b.timestampType === TimestampType.LOG_APPEND_TIME) {
    return { timestamp: b.maxTimestamp, offset: b.baseOffset > minOffset ? b.baseOffset : minOffset };
  }
  try {
    if (b.baseOffset >= minOffset) return findFirstRecordAtOrAfter(b, targetTimestamp);
    const it = new RecordIterator(b);
    while (it.next()) {
      if (it.timestamp >= targetTimestamp && it.offset >= minOffset) return { timestamp: it.timestamp, offset: it.offset };
    }
    return null;
  } catch (e) {
    if (!(e instanceof KafkaError)) throw e;
    return { timestamp: b.maxTimestamp, offset: b.baseOffset > minOffset ? b.baseOffset : minOffset };
  }
}

/** The offset of the first record whose timestamp equals the batch's max timestamp. */
export function offsetOfMaxTimestamp(batch: Buffer): bigint {
  const b = new RecordBatch(batch, 0);
  if (b.timestampType === TimestampType.LOG_APPEND_TIME) return b.baseOffset;
  try {
    // Compare plain-number deltas; a BigInt per record would dominate the cost.
    const delta = b.maxTimestamp - b.baseTimestamp;
    if (delta < -MAX_SAFE || delta > MAX_SAFE) return b.baseOffset;
    const target = Number(delta);
    const it = new RecordIterator(b);
    while (it.next()) if (it.timestampDelta === target) return it.offset;
  } catch (e) {
    if (!(e instanceof KafkaError)) throw e;
  }
  return b.baseOffset;
}

/** The offset after the last batch of a read's record chunks (batch headers only); -1 when they hold none. */
export function nextOffsetAfter(chunks: readonly Buffer[]): bigint {
  let next = -1n;
  for (const c of chunks) {
    let pos = 0;
    while (pos + RECORD_BATCH_OVERHEAD <= c.length) {
      const rb = new RecordBatch(c, pos);
      next = rb.lastOffset + 1n;
      pos += 12 + c.readInt32BE(pos + 8);
    }
  }
  return next;
}
