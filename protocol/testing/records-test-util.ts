/**
 * Hand-assembly of record batches for tests that need bytes no well-behaved builder writes
 * (corrupt records, wrong counts, odd codec ids), plus an error-assertion helper.
 */
import { ErrorCode, KafkaError, errorName } from '../errors';
import {
  ATTRIBUTES_OFFSET,
  BATCH_LENGTH_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  RECORDS_COUNT_OFFSET,
  RecordBatch,
} from '../records/record-batch';

export interface RawBatchFields {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  magic?: number;
  attributes?: number;
  lastOffsetDelta?: number;
  baseTimestamp?: bigint;
  maxTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  count: number;
}

/** A batch around `records` (already encoded, compressed or not) with a correct CRC. */
export function rawBatch(records: Buffer, f: RawBatchFields): Buffer {
  const b = Buffer.alloc(61 + records.length);
  b.writeBigInt64BE(f.baseOffset ?? 0n, 0);
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(f.partitionLeaderEpoch ?? -1, 12);
  b.writeInt8(f.magic ?? CURRENT_MAGIC, 16);
  b.writeInt16BE(f.attributes ?? 0, 21);
  b.writeInt32BE(f.lastOffsetDelta ?? f.count - 1, 23);
  b.writeBigInt64BE(f.baseTimestamp ?? 1_700_000_000_000n, 27);
  b.writeBigInt64BE(f.maxTimestamp ?? f.baseTimestamp ?? 1_700_000_000_000n, 35);
  b.writeBigInt64BE(f.producerId ?? -1n, 43);
  b.writeInt16BE(f.producerEpoch ?? -1, 51);
  b.writeInt32BE(f.baseSequence ?? -1, 53);
  b.writeInt32BE(f.count, 57);
  records.copy(b, 61);
  new RecordBatch(b).updateCrc();
  return b;
}

function zigzag(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Unsigned LEB128 bytes. */
export function uvarint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

export function varint(v: number): number[] {
  return uvarint(zigzag(v));
}

/** One record, written field by field; `bodySize` overrides the length prefix. */
export function rawRecord(f: {
  attributes?: number;
  timestampDelta?: number;
  offsetDelta: number;
  key?: Buffer | null;
  value?: Buffer | null;
  headers?: { key: Buffer; value: Buffer | null }[];
  bodySize?: number;
}): Buffer {
  const body: number[] = [f.attributes ?? 0, ...varint(f.timestampDelta ?? 0), ...varint(f.offsetDelta)];
  const bytes = (b: Buffer | null | undefined): void => {
    if (b === null || b === undefined) body.push(...varint(-1));
    else body.push(...varint(b.length), ...b);
  };
  bytes(f.key ?? null);
  bytes(f.value ?? null);
  const headers = f.headers ?? [];
  body.push(...varint(headers.length));
  for (const h of headers) {
    bytes(h.key);
    bytes(h.value);
  }
  return Buffer.from([...varint(f.bodySize ?? body.length), ...body]);
}

/** Patches header fields under the CRC and recomputes it. */
export function patchBatch(
  buf: Buffer,
  p: { attributes?: number; lastOffsetDelta?: number; count?: number; batchLength?: number },
): Buffer {
  const b = Buffer.from(buf);
  if (p.attributes !== undefined) b.writeInt16BE(p.attributes, ATTRIBUTES_OFFSET);
  if (p.lastOffsetDelta !== undefined) b.writeInt32BE(p.lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET);
  if (p.count !== undefined) b.writeInt32BE(p.count, RECORDS_COUNT_OFFSET);
  if (p.batchLength !== undefined) b.writeInt32BE(p.batchLength, BATCH_LENGTH_OFFSET);
  else new RecordBatch(b).updateCrc();
  return b;
}

/** Runs `fn` and checks it throws a KafkaError with `code` (and nothing else). */
export function expectKafkaError(fn: () => unknown, code: number): KafkaError {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  if (!(thrown instanceof KafkaError)) {
    throw new Error(`expected KafkaError ${errorName(code)}, got ${thrown === undefined ? 'no error' : String(thrown)}`);
  }
  if (thrown.code !== code) {
    throw new Error(`expected ${errorName(code)}, got ${thrown.codeName}: ${thrown.message}`);
  }
  return thrown;
}

export { ErrorCode };
