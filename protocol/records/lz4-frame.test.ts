import * as crypto from 'crypto';
import { decodeLz4Frame, Lz4FrameError } from './lz4-frame';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const lz4 = require('lz4-napi');

const MAX = 64 * 1024 * 1024;

function kinds(size: number): Record<string, Buffer> {
  const text = Buffer.from('the quick brown fox jumps over the lazy dog; '.repeat(Math.ceil(size / 45)).slice(0, size));
  const mixed = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1024) {
    if ((i / 1024) % 2 === 0) crypto.randomFillSync(mixed, i, Math.min(1024, size - i));
    else mixed.fill(i % 251, i, Math.min(i + 1024, size));
  }
  const period3 = Buffer.alloc(size);
  for (let i = 0; i < size; i++) period3[i] = i % 3;
  return { random: crypto.randomBytes(size), zeros: Buffer.alloc(size), text, mixed, period3 };
}

/** A frame assembled by hand from raw blocks: [bytes, compressed?]. */
function frame(blocks: Array<[Buffer, boolean]>, opts: { flg?: number; bd?: number; contentSize?: number } = {}): Buffer {
  let flg = opts.flg ?? 0x60;
  if (opts.contentSize !== undefined) flg |= 0x08;
  const head = [0x04, 0x22, 0x4d, 0x18, flg, opts.bd ?? 0x40];
  const parts: Buffer[] = [Buffer.from(head)];
  if (opts.contentSize !== undefined) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(BigInt(opts.contentSize));
    parts.push(cs);
  }
  parts.push(Buffer.from([0x00])); // header checksum: not verified (the batch CRC covers it)
  for (const [b, compressed] of blocks) {
    const w = Buffer.alloc(4);
    w.writeUInt32LE((b.length | (compressed ? 0 : 0x80000000)) >>> 0);
    parts.push(w, b);
  }
  parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

/** A raw LZ4 block (lz4-napi's block API prefixes the size; strip it). */
function rawBlock(data: Buffer): Buffer {
  return (lz4.compressSync(data) as Buffer).subarray(4);
}

/** Runs `fn`, reporting its largest Buffer.allocUnsafe and what it threw. */
function allocations(fn: () => unknown): { largest: number; error: unknown } {
  let largest = 0;
  const allocUnsafe = Buffer.allocUnsafe;
  const spy = jest.spyOn(Buffer, 'allocUnsafe').mockImplementation((n: number) => {
    largest = Math.max(largest, n);
    return allocUnsafe.call(Buffer, n);
  });
  let error: unknown;
  try {
    fn();
  } catch (err) {
    error = err;
  } finally {
    spy.mockRestore();
  }
  return { largest, error };
}

function expectFrameError(fn: () => unknown): Lz4FrameError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(Lz4FrameError);
    return err as Lz4FrameError;
  }
  throw new Error('expected Lz4FrameError');
}

describe('decodes what lz4-napi writes', () => {
  for (const size of [0, 1, 15, 16, 100, 65_535, 65_536, 300_000, 3_000_000]) {
    for (const [name, data] of Object.entries(kinds(size))) {
      it(`${name} ${size}`, () => {
        const f: Buffer = lz4.compressFrameSync(data);
        expect(decodeLz4Frame(f, MAX).equals(data)).toBe(true);
      });
    }
  }

  it('with block and content checksums', () => {
    const data = kinds(500_000).mixed;
    const f: Buffer = lz4.compressFrameSync(data, { blockChecksums: true, contentChecksum: true });
    expect(decodeLz4Frame(f, MAX).equals(data)).toBe(true);
  });

  it('ignores bytes after the end mark, as Kafka does', () => {
    const data = Buffer.from('hello hello hello hello');
    expect(decodeLz4Frame(Buffer.concat([lz4.compressFrameSync(data), Buffer.from('trailing')]), MAX).equals(data)).toBe(true);
  });
});

describe('hand-built frames', () => {
  const a = kinds(40_000).text;
  const b = crypto.randomBytes(30_000);

  it('64 KiB blocks (Java and librdkafka), compressed and stored blocks mixed', () => {
    const f = frame([
      [rawBlock(a), true],
      [b, false],
      [rawBlock(a.subarray(0, 10)), true],
    ]);
    expect(decodeLz4Frame(f, MAX).equals(Buffer.concat([a, b, a.subarray(0, 10)]))).toBe(true);
  });

  it('declared content size is used and checked', () => {
    expect(decodeLz4Frame(frame([[rawBlock(a), true]], { contentSize: a.length }), MAX).equals(a)).toBe(true);
    expectFrameError(() => decodeLz4Frame(frame([[rawBlock(a), true]], { contentSize: a.length + 1 }), MAX));
    expectFrameError(() => decodeLz4Frame(frame([[rawBlock(a), true]], { contentSize: a.length - 1 }), MAX));
    // Honest but above the limit: tooLarge, before decoding.
    const over = expectFrameError(() => decodeLz4Frame(frame([[rawBlock(a), true]], { contentSize: a.length }), a.length - 1));
    expect(over.tooLarge).toBe(a.length);
  });

  it('a content size the blocks cannot hold is a lie, refused before allocating', () => {
    const block = rawBlock(a); // ~1 KB of compressed text: at most 255x that
    for (const claim of [2 ** 40, 2 ** 63, block.length * 255 + 1, 30 * 1024 * 1024]) {
      const f = frame([[block, true]], { contentSize: claim });
      const { error, largest } = allocations(() => decodeLz4Frame(f, 2 ** 50));
      expect(error).toBeInstanceOf(Lz4FrameError);
      expect((error as Lz4FrameError).tooLarge).toBeUndefined();
      expect(largest).toBe(0);
    }
    // Stored blocks hold exactly their size.
    const stored = frame([[Buffer.from('abc'), false]], { contentSize: 4 });
    expect(allocations(() => decodeLz4Frame(stored, MAX)).error).toBeInstanceOf(Lz4FrameError);
  });

  it('no block decodes to more than 255x its size, so the output is sized from the blocks', () => {
    const zeros = Buffer.alloc(4 << 20);
    const block = rawBlock(zeros);
    expect(block.length * 255).toBeGreaterThanOrEqual(zeros.length); // the bound holds for lz4's best case
    const f = frame([[block, true], [block, true]], { bd: 0x70 });
    const { error, largest } = allocations(() => decodeLz4Frame(f, MAX));
    expect(error).toBeUndefined();
    expect(largest).toBeLessThanOrEqual(2 * block.length * 255);
    expect(decodeLz4Frame(f, MAX).equals(Buffer.concat([zeros, zeros]))).toBe(true);
  });

  it('refuses linked blocks, dictionary ids, other versions and reserved bits', () => {
    const blocks: Array<[Buffer, boolean]> = [[rawBlock(a), true]];
    expectFrameError(() => decodeLz4Frame(frame(blocks, { flg: 0x40 }), MAX)); // linked
    expectFrameError(() => decodeLz4Frame(frame(blocks, { flg: 0x61 }), MAX)); // dict id
    expectFrameError(() => decodeLz4Frame(frame(blocks, { flg: 0xa0 }), MAX)); // version 2
    expectFrameError(() => decodeLz4Frame(frame(blocks, { flg: 0x62 }), MAX)); // reserved bit
    expectFrameError(() => decodeLz4Frame(frame(blocks, { bd: 0x30 }), MAX)); // block size id 3
    expectFrameError(() => decodeLz4Frame(frame(blocks, { bd: 0x41 }), MAX)); // reserved bd bits
  });

  it('a block larger than the declared block maximum is refused', () => {
    expectFrameError(() => decodeLz4Frame(frame([[crypto.randomBytes(70_000), false]], { bd: 0x40 }), MAX));
  });

  it('matches may not reach before the block (blocks are independent)', () => {
    // token: 4 literals then a match at offset 5 (one byte before the block start)
    const bad = Buffer.from([0x40, 0x61, 0x62, 0x63, 0x64, 0x05, 0x00, 0x10, 0x65]);
    expectFrameError(() => decodeLz4Frame(frame([[Buffer.from('xxxx'), false], [bad, true]]), MAX));
    const zeroOffset = Buffer.from([0x40, 0x61, 0x62, 0x63, 0x64, 0x00, 0x00, 0x10, 0x65]);
    expectFrameError(() => decodeLz4Frame(frame([[zeroOffset, true]]), MAX));
  });

  it('overlapping matches repeat the pattern (offset 1, 3, long runs)', () => {
    // "abc" then a match of length 4+15+200 at offset 3, then literal "z"
    const block = Buffer.from([0x3f, 0x61, 0x62, 0x63, 0x03, 0x00, 200, 0x10, 0x7a]);
    const out = decodeLz4Frame(frame([[block, true]]), MAX);
    expect(out.toString()).toBe('abc'.repeat(74) + 'z');
    const ones = Buffer.from([0x1f, 0x61, 0x01, 0x00, 0xff, 0xff, 0x10, 0x10, 0x7a]);
    expect(decodeLz4Frame(frame([[ones, true]]), MAX).toString()).toBe('a'.repeat(1 + 4 + 15 + 255 + 255 + 16) + 'z');
  });

  it('output limits: stops at the limit, never allocating past it', () => {
    const zeros: Buffer = lz4.compressFrameSync(Buffer.alloc(3_000_000));
    const e = expectFrameError(() => decodeLz4Frame(zeros, 1_000_000));
    expect(e.tooLarge).toBeGreaterThan(1_000_000);
    expect(decodeLz4Frame(zeros, 3_000_000).length).toBe(3_000_000);
    expect(expectFrameError(() => decodeLz4Frame(zeros, 2_999_999)).tooLarge).toBeGreaterThan(2_999_999);
    // 8 blocks of 4 MiB zeros (~130 KB): the output buffer is the limit, not the 32 MiB they hold.
    const block = rawBlock(Buffer.alloc(4 << 20));
    const bomb = frame(Array(8).fill([block, true]), { bd: 0x70 });
    const { error, largest } = allocations(() => decodeLz4Frame(bomb, 5 << 20));
    expect((error as Lz4FrameError).tooLarge).toBeGreaterThan(5 << 20);
    expect(largest).toBeLessThanOrEqual(5 << 20);
    // Stored blocks past the limit, too.
    const stored = frame(Array(3).fill([crypto.randomBytes(60_000), false]));
    expect(expectFrameError(() => decodeLz4Frame(stored, 100_000)).tooLarge).toBe(120_000); // at least
  });
});

describe('malformed input never escapes as another error', () => {
  const data = kinds(200_000).mixed;
  const good: Buffer = lz4.compressFrameSync(data);

  it('every truncation', () => {
    for (let cut = 0; cut < good.length; cut += Math.max(1, Math.floor(good.length / 300))) {
      expectFrameError(() => decodeLz4Frame(good.subarray(0, cut), MAX));
    }
  });

  it('random byte flips decode to an error or to some output, never a crash', () => {
    for (let i = 0; i < 2000; i++) {
      const bad = Buffer.from(good);
      const n = 1 + crypto.randomInt(3);
      for (let j = 0; j < n; j++) bad[crypto.randomInt(bad.length)] ^= 1 + crypto.randomInt(255);
      try {
        const out = decodeLz4Frame(bad, MAX);
        expect(out.length).toBeLessThanOrEqual(MAX);
      } catch (err) {
        expect(err).toBeInstanceOf(Lz4FrameError);
      }
    }
  });

  it('random garbage after a valid header', () => {
    for (let i = 0; i < 500; i++) {
      const g = Buffer.concat([good.subarray(0, 7), crypto.randomBytes(crypto.randomInt(200))]);
      try {
        decodeLz4Frame(g, MAX);
      } catch (err) {
        expect(err).toBeInstanceOf(Lz4FrameError);
      }
    }
  });
});
