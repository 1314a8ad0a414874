/**
 * Growable output for the Kafka wire primitives. Small values are copied into a scratch buffer;
 * large byte fields (record sets from the log) are appended by reference, so a fetch response is a
 * list of chunks handed to socket.writev-style output without copying the records. `finish()`
 * returns the chunks; `toBuffer()` concatenates them (tests, small messages).
 *
 * Length prefixes that are only known at the end (the frame size) are reserved with `reserveInt32`
 * and patched with `patchInt32`.
 */
import { uuidToBuffer } from './uuid';

/** Byte fields at least this long are referenced, not copied. */
const ZERO_COPY_THRESHOLD = 4096;
const INITIAL_SIZE = 1024;

export class EncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncodeError';
  }
}

export interface Reservation {
  buf: Buffer;
  offset: number;
}

export class Writer {
  private chunks: Buffer[] = [];
  private buf: Buffer;
  private start = 0; // start of the not-yet-flushed region of buf
  private pos = 0;
  private flushedLength = 0;

  constructor(initialSize = INITIAL_SIZE) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.flushedLength + (this.pos - this.start);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    // Flush what we have into the chunk list and start a new scratch buffer; earlier chunks keep
    // pointing at the old buffer, so reservations made in it stay valid.
    this.flushScratch();
    const size = Math.max(n, this.buf.length * 2, INITIAL_SIZE);
    this.buf = Buffer.allocUnsafe(size);
    this.start = 0;
    this.pos = 0;
  }

  private flushScratch(): void {
    if (this.pos > this.start) {
      this.chunks.push(this.buf.subarray(this.start, this.pos));
      this.flushedLength += this.pos - this.start;
    }
    this.start = this.pos;
  }

  int8(v: number): this {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
    return this;
  }

  uint8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v & 0xff;
    return this;
  }

  bool(v: boolean): this {
    return this.uint8(v ? 1 : 0);
  }

  int16(v: number): this {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  uint16(v: number): this {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  uint32(v: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  int64(v: bigint): this {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
    return this;
  }

  float64(v: number): this {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
    return this;
  }

  uuid(v: string): this {
    this.ensure(16);
    uuidToBuffer(v, this.buf, this.pos);
    this.pos += 16;
    return this;
  }

  unsignedVarint(v: number): this {
    if (v < 0 || v > 0xffffffff || !Number.isInteger(v)) throw new EncodeError(`invalid unsigned varint ${v}`);
    this.ensure(5);
    let n = v;
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
    return this;
  }

  varint(v: number): this {
    return this.unsignedVarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  varlong(v: number | bigint): this {
    let z = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
    this.ensure(10);
    while (z >= 0x80n) {
      this.buf[this.pos++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    this.buf[this.pos++] = Number(z);
    return this;
  }

  /** Bytes with no length prefix; large buffers are referenced rather than copied. */
  raw(b: Buffer): this {
    if (b.length >= ZERO_COPY_THRESHOLD) {
      this.flushScratch();
      this.chunks.push(b);
      this.flushedLength += b.length;
      return this;
    }
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
    return this;
  }

  /** Several buffers (a record set made of log slices) without a prefix. */
  rawChunks(bs: readonly Buffer[]): this {
    for (const b of bs) this.raw(b);
    return this;
  }

  private utf8(s: string, len: number): void {
    this.ensure(len);
    this.buf.write(s, this.pos, len, 'utf8');
    this.pos += len;
  }

  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1);
    const len = Buffer.byteLength(s, 'utf8');
    if (len > 0x7fff) throw new EncodeError(`string of ${len} bytes is longer than 32767`);
    this.int16(len);
    this.utf8(s, len);
    return this;
  }

  string(s: string): this {
    return this.nullableString(s);
  }

  compactNullableString(s: string | null): this {
    if (s === null) return this.unsignedVarint(0);
    const len = Buffer.byteLength(s, 'utf8');
    this.unsignedVarint(len + 1);
    this.utf8(s, len);
    return this;
  }

  compactString(s: string): this {
    return this.compactNullableString(s);
  }

  nullableBytes(b: Buffer | null): this {
    if (b === null) return this.int32(-1);
    this.int32(b.length);
    return this.raw(b);
  }

  bytes(b: Buffer): this {
    return this.nullableBytes(b);
  }

  compactNullableBytes(b: Buffer | null): this {
    if (b === null) return this.unsignedVarint(0);
    this.unsignedVarint(b.length + 1);
    return this.raw(b);
  }

  compactBytes(b: Buffer): this {
    return this.compactNullableBytes(b);
  }

  arrayLength(n: number): this {
    return this.int32(n);
  }

  /** n = -1 for null. */
  compactArrayLength(n: number): this {
    return this.unsignedVarint(n + 1);
  }

  reserveInt32(): Reservation {
    this.ensure(4);
    const r = { buf: this.buf, offset: this.pos };
    this.pos += 4;
    return r;
  }

  patchInt32(r: Reservation, v: number): void {
    r.buf.writeInt32BE(v, r.offset);
  }

  /** The written bytes as chunks (no copy). The writer must not be used afterwards. */
  finish(): Buffer[] {
    this.flushScratch();
    return this.chunks;
  }

  /** The written bytes as one buffer. */
  toBuffer(): Buffer {
    const chunks = this.finish();
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }
}
