/**
 * Varint sizes and writes straight into a Buffer at a position, for the record writers that lay
 * out batches in place (memory-records-builder.ts, memory-records-filter.ts). Kafka's ByteUtils
 * encoding: unsigned LEB128, and zigzag for signed values (32-bit for varints, 64-bit for varlongs).
 *
 * Invariant: each write returns the position after the bytes written; numbers are exact up to
 * 2^53 (the callers' offsets, deltas and lengths), bigints cover the whole 64-bit range.
 */

export function sizeOfUnsignedVarint(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

export function zigzag32(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** 64-bit zigzag of a number (exact while |v| < 2^52). */
export function zigzag64(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

export function sizeOfVarint(v: number): number {
  return sizeOfUnsignedVarint(zigzag32(v));
}

export function sizeOfVarlong(v: number | bigint): number {
  if (typeof v === 'number') return sizeOfUnsignedVarint(zigzag64(v));
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  let n = 1;
  while (z >= 0x80n) {
    z >>= 7n;
    n++;
  }
  return n;
}

export function writeUnsignedVarint(buf: Buffer, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

export function writeVarint(buf: Buffer, pos: number, v: number): number {
  return writeUnsignedVarint(buf, pos, zigzag32(v));
}

export function writeVarlong(buf: Buffer, pos: number, v: number | bigint): number {
  if (typeof v === 'number') return writeUnsignedVarint(buf, pos, zigzag64(v));
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  while (z >= 0x80n) {
    buf[pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  buf[pos++] = Number(z);
  return pos;
}
