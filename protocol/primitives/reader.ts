/**
 * Bounds-checked cursor over a Buffer: every Kafka wire primitive, fixed-width big-endian, compact
 * (flexible) and classic lengths, varints. Reads never run past `end`; a short or malformed input
 * throws DecodeError, which the server turns into "close this connection" rather than a crash.
 * Byte fields are returned as subarrays of the input (zero copy): callers that keep them beyond the
 * life of the request buffer must copy.
 */
import { uuidFromBuffer } from './uuid';

export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

export class Reader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;

  constructor(buf: Buffer, offset = 0, end = buf.length) {
    this.buf = buf;
    this.pos = offset;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) {
      throw new DecodeError(`need ${n} bytes at position ${this.pos}, only ${this.end - this.pos} left`);
    }
  }

  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }

  uint8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  bool(): boolean {
    return this.int8() !== 0;
  }

  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  uuid(): string {
    this.need(16);
    const v = uuidFromBuffer(this.buf, this.pos);
    this.pos += 16;
    return v;
  }

  /** Unsigned LEB128, at most 5 bytes (32 bits). */
  unsignedVarint(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      this.need(1);
      const b = this.buf[this.pos++];
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
    }
    throw new DecodeError('unsigned varint longer than 5 bytes');
  }

  /** Zigzag-encoded signed 32-bit varint (record fields). */
  varint(): number {
    const u = this.unsignedVarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zigzag-encoded signed 64-bit varint, returned as a number (record timestamps/offsets fit 53 bits). */
  varlong(): number {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      this.need(1);
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        const signed = (result >> 1n) ^ -(result & 1n);
        return Number(signed);
      }
      shift += 7n;
    }
    throw new DecodeError('varlong longer than 10 bytes');
  }

  private utf8(len: number): string {
    this.need(len);
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  private slice(len: number): Buffer {
    this.need(len);
    const b = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }

  /** int16 length prefix; -1 means null. */
  nullableString(): string | null {
    const len = this.int16();
    if (len < 0) {
      if (len !== -1) throw new DecodeError(`invalid string length ${len}`);
      return null;
    }
    return this.utf8(len);
  }

  string(): string {
    const s = this.nullableString();
    if (s === null) throw new DecodeError('non-nullable string was null');
    return s;
  }

  /** unsigned varint (length + 1); 0 means null. */
  compactNullableString(): string | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    return this.utf8(n - 1);
  }

  compactString(): string {
    const s = this.compactNullableString();
    if (s === null) throw new DecodeError('non-nullable compact string was null');
    return s;
  }

  /** int32 length prefix; -1 means null. */
  nullableBytes(): Buffer | null {
    const len = this.int32();
    if (len < 0) {
      if (len !== -1) throw new DecodeError(`invalid bytes length ${len}`);
      return null;
    }
    return this.slice(len);
  }

  bytes(): Buffer {
    const b = this.nullableBytes();
    if (b === null) throw new DecodeError('non-nullable bytes were null');
    return b;
  }

  compactNullableBytes(): Buffer | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    return this.slice(n - 1);
  }

  compactBytes(): Buffer {
    const b = this.compactNullableBytes();
    if (b === null) throw new DecodeError('non-nullable compact bytes were null');
    return b;
  }

  /** Raw bytes of a known length (no prefix). */
  raw(len: number): Buffer {
    return this.slice(len);
  }

  /**
   * int32 element count; -1 means null (returned as -1). The count is sanity-checked against the
   * bytes left so a hostile count cannot make the decoder allocate a huge array.
   */
  arrayLength(minElementSize = 1): number {
    const n = this.int32();
    if (n < -1) throw new DecodeError(`invalid array length ${n}`);
    if (n > 0 && n * minElementSize > this.remaining) {
      throw new DecodeError(`array length ${n} exceeds the ${this.remaining} bytes left`);
    }
    return n;
  }

  /** unsigned varint (count + 1); 0 means null (returned as -1). */
  compactArrayLength(minElementSize = 1): number {
    const n = this.unsignedVarint() - 1;
    if (n > 0 && n * minElementSize > this.remaining) {
      throw new DecodeError(`array length ${n} exceeds the ${this.remaining} bytes left`);
    }
    return n;
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
}
