import { Reader, DecodeError } from './reader';
import { Writer } from './writer';
import { randomUuid, ZERO_UUID, uuidToBuffer, uuidFromBuffer } from './uuid';

describe('wire primitives', () => {
  test('fixed-width values round trip big-endian', () => {
    const w = new Writer(4);
    w.int8(-5).int16(-300).int32(-70000).int64(-(2n ** 62n)).uint16(65535).uint32(0xffffffff).float64(1.5).bool(true);
    const buf = w.toBuffer();
    expect(buf.subarray(0, 3)).toEqual(Buffer.from([0xfb, 0xfe, 0xd4]));
    const r = new Reader(buf);
    expect([r.int8(), r.int16(), r.int32(), r.int64(), r.uint16(), r.uint32(), r.float64(), r.bool()]).toEqual([
      -5, -300, -70000, -(2n ** 62n), 65535, 0xffffffff, 1.5, true,
    ]);
    expect(r.remaining).toBe(0);
  });

  test('unsigned varints use 7-bit groups, least significant first', () => {
    const cases: [number, number[]][] = [
      [0, [0]],
      [127, [0x7f]],
      [128, [0x80, 0x01]],
      [300, [0xac, 0x02]],
      [0xffffffff, [0xff, 0xff, 0xff, 0xff, 0x0f]],
    ];
    for (const [v, bytes] of cases) {
      const buf = new Writer().unsignedVarint(v).toBuffer();
      expect([...buf]).toEqual(bytes);
      expect(new Reader(buf).unsignedVarint()).toBe(v);
    }
  });

  test('zigzag varint and varlong', () => {
    for (const v of [0, -1, 1, -64, 63, 2147483647, -2147483648]) {
      expect(new Reader(new Writer().varint(v).toBuffer()).varint()).toBe(v);
    }
    expect([...new Writer().varint(-1).toBuffer()]).toEqual([1]);
    expect([...new Writer().varint(1).toBuffer()]).toEqual([2]);
    for (const v of [0, -1, 1700000000000, -1700000000000, Number.MAX_SAFE_INTEGER]) {
      expect(new Reader(new Writer().varlong(v).toBuffer()).varlong()).toBe(v);
    }
  });

  test('classic and compact strings, bytes and arrays, with nulls', () => {
    const w = new Writer();
    w.string('héllo').nullableString(null).compactString('abc').compactNullableString(null);
    w.bytes(Buffer.from([1, 2])).nullableBytes(null).compactBytes(Buffer.alloc(0)).compactNullableBytes(null);
    w.arrayLength(-1).compactArrayLength(-1).compactArrayLength(2);
    const r = new Reader(w.toBuffer());
    expect(r.string()).toBe('héllo');
    expect(r.nullableString()).toBeNull();
    expect(r.compactString()).toBe('abc');
    expect(r.compactNullableString()).toBeNull();
    expect([...r.bytes()]).toEqual([1, 2]);
    expect(r.nullableBytes()).toBeNull();
    expect(r.compactBytes().length).toBe(0);
    expect(r.compactNullableBytes()).toBeNull();
    expect(r.arrayLength()).toBe(-1);
    expect(r.compactArrayLength()).toBe(-1);
    expect(r.compactArrayLength(0)).toBe(2);
  });

  test('short or hostile input throws DecodeError, never reads past the end', () => {
    expect(() => new Reader(Buffer.from([0, 5, 0x61])).string()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0xff, 0xff, 0xff])).int32()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])).unsignedVarint()).toThrow(DecodeError);
    // An array count far larger than the bytes that follow cannot make the decoder allocate.
    expect(() => new Reader(Buffer.from([0x7f, 0xff, 0xff, 0xff, 0])).arrayLength()).toThrow(DecodeError);
    expect(() => new Reader(Buffer.from([0xff, 0xfe])).nullableString()).toThrow(DecodeError);
    // The reader respects an explicit end inside a larger buffer.
    expect(() => new Reader(Buffer.from([0, 0, 0, 1, 9]), 0, 4).skip(5)).toThrow(DecodeError);
  });

  test('large byte fields are referenced, not copied, and reservations patch across growth', () => {
    const big = Buffer.alloc(10000, 7);
    const w = new Writer(8);
    const size = w.reserveInt32();
    w.int16(1).bytes(big).int16(2);
    w.patchInt32(size, w.length - 4);
    const chunks = w.finish();
    expect(chunks).toContain(big);
    const all = Buffer.concat(chunks);
    expect(all.readInt32BE(0)).toBe(all.length - 4);
    const r = new Reader(all, 4);
    expect(r.int16()).toBe(1);
    expect(r.bytes().equals(big)).toBe(true);
    expect(r.int16()).toBe(2);
  });

  test('uuids are 22-char base64url strings of 16 bytes', () => {
    const u = randomUuid();
    expect(u).toHaveLength(22);
    expect(uuidFromBuffer(uuidToBuffer(u))).toBe(u);
    expect(uuidToBuffer(ZERO_UUID).equals(Buffer.alloc(16))).toBe(true);
    const w = new Writer().uuid(u);
    expect(new Reader(w.toBuffer()).uuid()).toBe(u);
  });
});
