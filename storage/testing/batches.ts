/**
 * Test support: record batches for storage tests, built with protocol's MemoryRecordsBuilder
 * (protocol/records/memory-records-builder.ts), plus a few byte-level helpers for the damaged
 * files recovery tests need.
 */
import { buildRecordBatch, SimpleRecord } from '../../protocol/records/memory-records-builder';
import { CompressionType, RecordBatch, TimestampType } from '../../protocol/records/record-batch';

export interface TestBatchOptions {
  /** Records in the batch (default 1). */
  count?: number;
  /** Bytes per record value (default 16). */
  valueSize?: number;
  /** Timestamp of every record, or a function of the record index. */
  timestamp?: number | bigint | ((i: number) => number | bigint);
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  compression?: CompressionType;
  timestampType?: TimestampType;
  /** Value text prefix (records are `${prefix}${i}` padded to valueSize). */
  prefix?: string;
  keys?: boolean;
}

const DEFAULT_TS = 1_700_000_000_000;

/** One v2 batch of `count` records; baseOffset 0 unless given (client produce sends 0). */
export function testBatch(o: TestBatchOptions = {}): Buffer {
  const count = o.count ?? 1;
  const size = o.valueSize ?? 16;
  const prefix = o.prefix ?? 'v';
  const records: SimpleRecord[] = [];
  for (let i = 0; i < count; i++) {
    const ts = typeof o.timestamp === 'function' ? o.timestamp(i) : (o.timestamp ?? DEFAULT_TS);
    const text = `${prefix}${i}`;
    const value = Buffer.alloc(Math.max(size, text.length), 0x2e);
    value.write(text, 0, 'utf8');
    records.push({ key: o.keys ? `k${i}` : null, value, timestamp: BigInt(ts) });
  }
  return buildRecordBatch(records, {
    baseOffset: o.baseOffset ?? 0n,
    compression: o.compression,
    timestampType: o.timestampType,
    partitionLeaderEpoch: o.partitionLeaderEpoch,
    now: DEFAULT_TS,
  });
}

/** Batches already carrying offsets (follower appends, hand-made segment files). */
export function batchAt(baseOffset: bigint, count: number, o: Omit<TestBatchOptions, 'baseOffset' | 'count'> = {}): Buffer {
  return testBatch({ ...o, baseOffset, count });
}

export interface DecodedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  count: number;
  maxTimestamp: bigint;
  partitionLeaderEpoch: number;
  position: number;
}

/** Headers of the batches in `buf` (asserts the framing is exact). */
export function decodeBatches(buf: Buffer): DecodedBatch[] {
  const out: DecodedBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const b = new RecordBatch(buf, pos);
    if (!b.isValidCrc()) throw new Error(`bad CRC at ${pos}`);
    out.push({
      baseOffset: b.baseOffset,
      lastOffset: b.lastOffset,
      count: b.recordsCount,
      maxTimestamp: b.maxTimestamp,
      partitionLeaderEpoch: b.partitionLeaderEpoch,
      position: pos,
    });
    pos += b.sizeInBytes;
  }
  if (pos !== buf.length) throw new Error(`framing overran: ${pos} vs ${buf.length}`);
  return out;
}

/** Every offset in a record set, expanded from batch headers. */
export function offsetsIn(buf: Buffer): bigint[] {
  const out: bigint[] = [];
  for (const b of decodeBatches(buf)) for (let o = b.baseOffset; o <= b.lastOffset; o++) out.push(o);
  return out;
}
