import * as crypto from 'crypto';
import * as zlib from 'zlib';
import {
  compress,
  compressionTypeForName,
  decompress,
  decompressedSizeLimit,
  snappyRawCompress,
  XERIAL_MAGIC,
  xerialCompress,
  zstdCapacity,
} from './compression';
import { CompressionType } from './record-batch';
import { ErrorCode, expectKafkaError } from '../testing/records-test-util';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const snappy = require('snappy');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const lz4 = require('lz4-napi');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const zstdBinding = require('zstd-napi/binding');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const kafkajsGzip = require('kafkajs/src/protocol/message/compression/gzip');

const CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];
const NAMES: Record<number, string> = { 1: 'gzip', 2: 'snappy', 3: 'lz4', 4: 'zstd' };

function sample(size: number): Buffer {
  // Half random, half repetitive: compressible but not trivially.
  const b = Buffer.alloc(size);
  crypto.randomFillSync(b, 0, Math.floor(size / 2));
  b.fill('kafka-record-', Math.floor(size / 2));
  return b;
}

/** A xerial stream assembled by hand, as snappy-java's SnappyOutputStream writes it. */
function handXerial(data: Buffer, blockSize: number): Buffer {
  const header = Buffer.alloc(16);
  XERIAL_MAGIC.copy(header);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  const parts: Buffer[] = [header];
  for (let i = 0; i < data.length; i += blockSize) {
    const block: Buffer = snappy.compressSync(data.subarray(i, i + blockSize));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

/** zstd frame without a content size in its header (as Java's streaming zstd-jni writes). */
function zstdStreamed(data: Buffer): Buffer {
  const cctx = new zstdBinding.CCtx();
  const out = Buffer.alloc(zstdBinding.compressBound(data.length) + 64);
  let pos = 0;
  let [, produced, consumed] = cctx.compressStream2(out, data, zstdBinding.EndDirective.continue);
  pos += produced;
  expect(consumed).toBe(data.length);
  let remaining: number;
  do {
    [remaining, produced] = cctx.compressStream2(out.subarray(pos), Buffer.alloc(0), zstdBinding.EndDirective.end);
    pos += produced;
  } while (remaining !== 0);
  return out.subarray(0, pos);
}

describe('compression round trips', () => {
  for (const type of CODECS) {
    for (const size of [0, 1, 100, 70_000, 1_000_000]) {
      it(`${NAMES[type]} ${size} bytes`, () => {
        const data = sample(size);
        const packed = compress(type, data);
        expect(decompress(type, packed).equals(data)).toBe(true);
      });
    }
  }

  it('NONE passes the buffer through', () => {
    const b = Buffer.from('abc');
    expect(compress(CompressionType.NONE, b)).toBe(b);
    expect(decompress(CompressionType.NONE, b)).toBe(b);
  });

  it('honours gzip and zstd levels', () => {
    const data = sample(200_000);
    for (const level of [1, 9]) expect(decompress(1, compress(1, data, level)).equals(data)).toBe(true);
    for (const level of [1, 19]) expect(decompress(4, compress(4, data, level)).equals(data)).toBe(true);
  });

  it('maps compression.type names', () => {
    expect(compressionTypeForName('zstd')).toBe(CompressionType.ZSTD);
    expect(compressionTypeForName('producer')).toBeNull();
  });
});

describe('snappy framings', () => {
  const data = sample(100_000);

  it('writes xerial: magic, version 1, compatible 1, 32 KiB blocks', () => {
    const x = xerialCompress(data);
    expect(x.subarray(0, 8).equals(XERIAL_MAGIC)).toBe(true);
    expect(x.readInt32BE(8)).toBe(1);
    expect(x.readInt32BE(12)).toBe(1);
    expect(x.equals(handXerial(data, 32 * 1024))).toBe(true);
    expect(compress(CompressionType.SNAPPY, data).equals(x)).toBe(true);
  });

  it('reads a hand-built xerial stream with other block sizes', () => {
    for (const bs of [1000, 65536, 200_000]) {
      expect(decompress(CompressionType.SNAPPY, handXerial(data, bs)).equals(data)).toBe(true);
    }
  });

  it('reads raw snappy (KafkaJS codecs)', () => {
    expect(decompress(CompressionType.SNAPPY, snappyRawCompress(data)).equals(data)).toBe(true);
  });

  it('reads concatenated xerial streams', () => {
    const a = data.subarray(0, 40_000);
    const b = data.subarray(40_000);
    const joined = Buffer.concat([handXerial(a, 32 * 1024), handXerial(b, 32 * 1024)]);
    expect(decompress(CompressionType.SNAPPY, joined).equals(data)).toBe(true);
  });

  it('xerial header only is an empty payload', () => {
    expect(decompress(CompressionType.SNAPPY, handXerial(Buffer.alloc(0), 10)).length).toBe(0);
  });
});

describe('other producers', () => {
  it('reads and writes KafkaJS gzip', async () => {
    const data = sample(50_000);
    const fromKafkaJS: Buffer = await kafkajsGzip.compress({ buffer: data });
    expect(decompress(CompressionType.GZIP, fromKafkaJS).equals(data)).toBe(true);
    const ours = compress(CompressionType.GZIP, data);
    expect((await kafkajsGzip.decompress(ours)).equals(data)).toBe(true);
  });

  it('reads concatenated gzip members', () => {
    const joined = Buffer.concat([zlib.gzipSync(Buffer.from('ab')), zlib.gzipSync(Buffer.from('cd'))]);
    expect(decompress(CompressionType.GZIP, joined).toString()).toBe('abcd');
  });

  it('reads zstd frames without a content size, and concatenated frames', () => {
    const data = sample(300_000);
    expect(decompress(CompressionType.ZSTD, zstdStreamed(data)).equals(data)).toBe(true);
    const joined = Buffer.concat([zstdStreamed(data.subarray(0, 1000)), compress(4, data.subarray(1000))]);
    expect(decompress(CompressionType.ZSTD, joined).equals(data)).toBe(true);
  });

  it('reads lz4 frames with block and content checksums', () => {
    const data = sample(300_000);
    const f: Buffer = lz4.compressFrameSync(data, { blockChecksums: true, contentChecksum: true });
    expect(decompress(CompressionType.LZ4, f).equals(data)).toBe(true);
  });

  it('writes lz4 frames with independent blocks (Kafka cannot read linked ones)', () => {
    const f = compress(CompressionType.LZ4, sample(10_000));
    expect(f.readUInt32LE(0)).toBe(0x184d2204);
    expect(f[4] & 0x20).toBe(0x20);
  });
});

describe('undecodable input', () => {
  it('codec ids 5-7 are UNSUPPORTED_COMPRESSION_TYPE', () => {
    for (const id of [5, 6, 7]) {
      expectKafkaError(() => decompress(id, Buffer.from('x')), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
      expectKafkaError(() => compress(id, Buffer.from('x')), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    }
  });

  const garbage = [
    Buffer.alloc(0),
    Buffer.from([0]),
    Buffer.from('this is not compressed data at all, just text'),
    crypto.randomBytes(4096),
  ];
  for (const type of CODECS) {
    it(`${NAMES[type]}: garbage is INVALID_RECORD`, () => {
      for (const g of garbage) {
        // An empty raw snappy or empty payload may legitimately decode to nothing for some codecs.
        let out: Buffer | undefined;
        try {
          out = decompress(type, g);
        } catch (err) {
          expectKafkaError(() => {
            throw err;
          }, ErrorCode.INVALID_RECORD);
          continue;
        }
        // Only snappy's single 0x00 byte (a valid empty block) may decode.
        expect(type === CompressionType.SNAPPY && g.length === 1 && out.length === 0).toBe(true);
      }
    });

    it(`${NAMES[type]}: every truncation of a valid payload is INVALID_RECORD`, () => {
      const data = sample(5000);
      const packed = compress(type, data);
      const cuts = new Set([1, 2, 5, 10, 17, Math.floor(packed.length / 2), packed.length - 1]);
      for (const cut of cuts) {
        if (cut <= 0 || cut >= packed.length) continue;
        expectKafkaError(() => decompress(type, packed.subarray(0, cut)), ErrorCode.INVALID_RECORD);
      }
    });

    it(`${NAMES[type]}: flipped bytes never escape as another error type`, () => {
      const data = sample(20_000);
      const packed = compress(type, data);
      for (let i = 0; i < 200; i++) {
        const bad = Buffer.from(packed);
        const at = crypto.randomInt(bad.length);
        bad[at] ^= 1 + crypto.randomInt(255);
        try {
          decompress(type, bad);
        } catch (err) {
          expect(err).toHaveProperty('name', 'KafkaError');
        }
      }
    });
  }

  it('xerial: a block length past the end is INVALID_RECORD', () => {
    const x = Buffer.from(xerialCompress(sample(1000)));
    x.writeInt32BE(1 << 30, 16);
    expectKafkaError(() => decompress(CompressionType.SNAPPY, x), ErrorCode.INVALID_RECORD);
  });
});

/**
 * Runs `fn` and reports the JS-side allocations made meanwhile (Buffer.alloc/allocUnsafe: what
 * zlib's chunks, the lz4 decoder and the zstd output come from) and the native decoder calls.
 */
function watch(fn: () => unknown): { largest: number; total: number; snappyCalls: number; zstdCalls: number; error: unknown } {
  let largest = 0;
  let total = 0;
  const note = (n: number): void => {
    largest = Math.max(largest, n);
    total += n;
  };
  const alloc = Buffer.alloc;
  const allocUnsafe = Buffer.allocUnsafe;
  const allocUnsafeSlow = Buffer.allocUnsafeSlow;
  const spies = [
    jest.spyOn(Buffer, 'alloc').mockImplementation((n: number, fill?: string | Uint8Array | number, encoding?: BufferEncoding) => {
      note(n);
      return alloc.call(Buffer, n, fill, encoding);
    }),
    jest.spyOn(Buffer, 'allocUnsafe').mockImplementation((n: number) => {
      note(n);
      return allocUnsafe.call(Buffer, n);
    }),
    jest.spyOn(Buffer, 'allocUnsafeSlow').mockImplementation((n: number) => {
      note(n);
      return allocUnsafeSlow.call(Buffer, n);
    }),
  ];
  const snappySpy = jest.spyOn(snappy, 'uncompressSync');
  const zstdSpy = jest.spyOn(zstdBinding.DCtx.prototype, 'decompress');
  let error: unknown;
  try {
    fn();
  } catch (err) {
    error = err;
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  const out = { largest, total, snappyCalls: snappySpy.mock.calls.length, zstdCalls: zstdSpy.mock.calls.length, error };
  snappySpy.mockRestore();
  zstdSpy.mockRestore();
  return out;
}

function expectInvalidRecord(error: unknown): void {
  expectKafkaError(() => {
    throw error;
  }, ErrorCode.INVALID_RECORD);
}

const MiB = 1024 * 1024;
/** What the produce path allows at default settings (32 x 1048588). */
const PRODUCE_LIMIT = decompressedSizeLimit(undefined);

/** A raw LZ4 block of `n` zero bytes: one literal, one long match at offset 1, five literals. */
function lz4ZeroBlock(n: number): Buffer {
  const bytes = [0x1f, 0x00, 0x01, 0x00];
  for (let k = n - 6 - 19; ; k -= 255) {
    bytes.push(Math.min(k, 255));
    if (k < 255) break;
  }
  bytes.push(0x50, 0, 0, 0, 0, 0);
  return Buffer.from(bytes);
}

/** An LZ4 frame (independent 4 MiB blocks) of compressed `blocks`, with an optional content size. */
function lz4Frame(blocks: Buffer[], contentSize?: bigint): Buffer {
  const head = Buffer.from([0x04, 0x22, 0x4d, 0x18, contentSize === undefined ? 0x60 : 0x68, 0x70]);
  const parts: Buffer[] = [head];
  if (contentSize !== undefined) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(contentSize);
    parts.push(cs);
  }
  parts.push(Buffer.from([0])); // header checksum (not verified: the batch CRC covers it)
  for (const b of blocks) {
    const w = Buffer.alloc(4);
    w.writeUInt32LE(b.length);
    parts.push(w, b);
  }
  parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

/**
 * A zstd frame of `rle` RLE blocks of 128 KiB zeros (4 bytes each), then `raw` as one raw block;
 * the frame content size is written when given (8 bytes).
 */
function zstdFrame(opts: { rle?: number; raw?: Buffer; contentSize?: bigint }): Buffer {
  const fcs = opts.contentSize !== undefined;
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, fcs ? 0xc0 : 0x00, 0x38])]; // window 128 KiB
  if (fcs) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(opts.contentSize!);
    parts.push(cs);
  }
  const blocks: Array<{ type: number; size: number; data: Buffer }> = [];
  for (let i = 0; i < (opts.rle ?? 0); i++) blocks.push({ type: 1, size: 128 * 1024, data: Buffer.from([0]) });
  if (opts.raw) blocks.push({ type: 0, size: opts.raw.length, data: opts.raw });
  blocks.forEach((b, i) => {
    const h = (b.size << 3) | (b.type << 1) | (i === blocks.length - 1 ? 1 : 0);
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), b.data);
  });
  return Buffer.concat(parts);
}

/** A xerial stream around raw snappy blocks given as they are. */
function xerialOf(blocks: Buffer[]): Buffer {
  const header = Buffer.alloc(16);
  XERIAL_MAGIC.copy(header);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  const parts: Buffer[] = [header];
  for (const b of blocks) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(b.length);
    parts.push(len, b);
  }
  return Buffer.concat(parts);
}

describe('the produce-path bound', () => {
  it('is 32 x max.message.bytes, never below the default, capped at 256 MiB', () => {
    expect(PRODUCE_LIMIT).toBe(32 * (MiB + 12));
    expect(decompressedSizeLimit(1_048_588)).toBe(PRODUCE_LIMIT);
    expect(decompressedSizeLimit(1000)).toBe(PRODUCE_LIMIT); // a lowered topic limit does not lower it
    expect(decompressedSizeLimit(4 * MiB)).toBe(128 * MiB);
    expect(decompressedSizeLimit(100 * MiB)).toBe(256 * MiB);
    expect(decompressedSizeLimit(4 * MiB, 10 * MiB)).toBe(10 * MiB);
  });

  for (const type of CODECS) {
    it(`${NAMES[type]}: 1 MiB of zeros, and a batch right at the bound, still decode`, () => {
      const zeros = Buffer.alloc(MiB);
      expect(decompress(type, compress(type, zeros), { maxOutputLength: PRODUCE_LIMIT }).equals(zeros)).toBe(true);
      const data = sample(200_000);
      const packed = compress(type, data);
      expect(decompress(type, packed, { maxOutputLength: data.length }).equals(data)).toBe(true);
      expectInvalidRecord(watch(() => decompress(type, packed, { maxOutputLength: data.length - 1 })).error);
    });
  }
});

describe('decompression bombs and lying sizes: INVALID_RECORD without the allocation', () => {
  it('gzip: a single-member bomb whose trailer says 40 MiB is refused before inflating', () => {
    const bomb = zlib.gzipSync(Buffer.alloc(40 * MiB), { level: 9 });
    expect(bomb.length).toBeLessThan(50_000);
    const w = watch(() => decompress(CompressionType.GZIP, bomb, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.total).toBe(0);
  });

  it('gzip: a 1 GiB multi-member bomb in 1 MB stops at the bound, in one buffer of the bound', () => {
    // Each member's trailer says 1 MiB: inflating "exactly 1 MiB" fails, then one bound-sized buffer.
    const bomb = Buffer.concat(Array(1024).fill(zlib.gzipSync(Buffer.alloc(MiB))));
    expect(bomb.length).toBeLessThan(1.1 * MiB);
    const w = watch(() => decompress(CompressionType.GZIP, bomb, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.largest).toBe(PRODUCE_LIMIT + 1);
    expect(w.total).toBeLessThanOrEqual(PRODUCE_LIMIT + 1 + 2 * (MiB + 1));
    const small = watch(() => decompress(CompressionType.GZIP, bomb, { maxOutputLength: MiB / 2 }));
    expectInvalidRecord(small.error);
    expect(small.total).toBe(0); // the trailer alone says more than the limit
  });

  it('gzip: one member inflates into one exact buffer; several, and zero padding, still decode', () => {
    const data = sample(300_000);
    const one = decompress(CompressionType.GZIP, compress(CompressionType.GZIP, data));
    expect(one.equals(data)).toBe(true);
    expect(one.buffer.byteLength).toBe(data.length + 1);
    const members = Buffer.concat([zlib.gzipSync(data.subarray(0, 250_000)), zlib.gzipSync(data.subarray(250_000))]);
    expect(decompress(CompressionType.GZIP, members).equals(data)).toBe(true);
    const padded = Buffer.concat([zlib.gzipSync(data), Buffer.alloc(8)]);
    expect(decompress(CompressionType.GZIP, padded).equals(data)).toBe(true);
  });

  it('gzip: a trailer whose length does not match the data is INVALID_RECORD', () => {
    const g = Buffer.from(zlib.gzipSync(Buffer.alloc(1000)));
    g.writeUInt32LE(0x7fffffff, g.length - 4);
    expectInvalidRecord(watch(() => decompress(CompressionType.GZIP, g)).error);
  });

  it('snappy: a preamble claiming 4 GiB, raw or inside xerial, never reaches the decoder', () => {
    const lie = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x61]);
    for (const input of [lie, xerialOf([lie]), xerialOf([snappyRawCompress(Buffer.alloc(100)), lie])]) {
      const w = watch(() => decompress(CompressionType.SNAPPY, input));
      expectInvalidRecord(w.error);
      expect(w.snappyCalls).toBeLessThanOrEqual(1); // only the honest first block
    }
    // 65535 claimed by 5 bytes: within the limit, but no snappy data inflates that much.
    const w = watch(() => decompress(CompressionType.SNAPPY, Buffer.from([0xff, 0xff, 0x03, 0x00, 0x61])));
    expectInvalidRecord(w.error);
    expect(w.snappyCalls).toBe(0);
  });

  it('snappy: honest blocks past the bound stop before the block that would cross it', () => {
    const block = snappyRawCompress(Buffer.alloc(32 * 1024));
    const bomb = xerialOf(Array(100).fill(block)); // 3.2 MB from ~160 KB
    const w = watch(() => decompress(CompressionType.SNAPPY, bomb, { maxOutputLength: 10 * 32 * 1024 }));
    expectInvalidRecord(w.error);
    expect(w.snappyCalls).toBe(10);
    const raw = snappyRawCompress(Buffer.alloc(3 * MiB));
    const r = watch(() => decompress(CompressionType.SNAPPY, raw, { maxOutputLength: MiB }));
    expectInvalidRecord(r.error);
    expect(r.snappyCalls).toBe(0);
  });

  it('lz4: a content size the blocks cannot hold (1 TiB, or 30 MiB from 100 bytes) allocates nothing', () => {
    const block = rawBlockOfText();
    for (const claim of [2n ** 40n, 30n * BigInt(MiB), 2n ** 64n - 1n]) {
      const w = watch(() => decompress(CompressionType.LZ4, lz4Frame([block], claim), { maxOutputLength: PRODUCE_LIMIT }));
      expectInvalidRecord(w.error);
      expect(w.largest).toBeLessThan(64 * 1024);
    }
  });

  it('lz4: an honest content size above the bound allocates nothing', () => {
    const frame = lz4Frame(Array(16).fill(lz4ZeroBlock(4 * MiB)), BigInt(64 * MiB));
    expect(frame.length).toBeLessThan(300_000);
    const w = watch(() => decompress(CompressionType.LZ4, frame, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.largest).toBeLessThan(64 * 1024);
  });

  it('lz4: a 64 MiB bomb in 260 KB stops at the bound, allocating no more than it', () => {
    const frame = lz4Frame(Array(16).fill(lz4ZeroBlock(4 * MiB)));
    expect(decompress(CompressionType.LZ4, lz4Frame([lz4ZeroBlock(4 * MiB)])).equals(Buffer.alloc(4 * MiB))).toBe(true);
    const w = watch(() => decompress(CompressionType.LZ4, frame, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.total).toBeLessThanOrEqual(PRODUCE_LIMIT);
    const small = watch(() => decompress(CompressionType.LZ4, frame, { maxOutputLength: MiB }));
    expectInvalidRecord(small.error);
    expect(small.total).toBeLessThanOrEqual(MiB);
  });

  it('zstd: a content size the blocks cannot hold allocates nothing and never reaches the decoder', () => {
    for (const claim of [2n ** 40n, 30n * BigInt(MiB), 1000n]) {
      const frame = zstdFrame({ raw: Buffer.from('ten bytes!'), contentSize: claim });
      const w = watch(() => decompress(CompressionType.ZSTD, frame, { maxOutputLength: PRODUCE_LIMIT }));
      expectInvalidRecord(w.error);
      expect(w.zstdCalls).toBe(0);
      expect(w.largest).toBeLessThan(64 * 1024);
    }
    // A claim the blocks could hold but do not: the decoder checks it, within the claim's size.
    const short = zstdFrame({ rle: 2, raw: Buffer.from('x'), contentSize: 200_000n });
    const w = watch(() => decompress(CompressionType.ZSTD, short));
    expectInvalidRecord(w.error);
    expect(w.largest).toBeLessThanOrEqual(200_000);
  });

  it('zstd: an honest content size above the bound allocates nothing', () => {
    const frame = zstdFrame({ rle: 512, contentSize: BigInt(64 * MiB) });
    expect(frame.length).toBeLessThan(3000);
    const w = watch(() => decompress(CompressionType.ZSTD, frame, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.zstdCalls).toBe(0);
    expect(w.largest).toBeLessThan(64 * 1024);
  });

  it('zstd: a 64 MiB bomb in 2 KB without a content size allocates at most the bound', () => {
    const ok = zstdFrame({ rle: 4, raw: Buffer.from('end') });
    expect(decompress(CompressionType.ZSTD, ok).equals(Buffer.concat([Buffer.alloc(512 * 1024), Buffer.from('end')]))).toBe(true);
    const frame = zstdFrame({ rle: 512 });
    const w = watch(() => decompress(CompressionType.ZSTD, frame, { maxOutputLength: PRODUCE_LIMIT }));
    expectInvalidRecord(w.error);
    expect(w.total).toBeLessThanOrEqual(PRODUCE_LIMIT + 1);
    const small = watch(() => decompress(CompressionType.ZSTD, frame, { maxOutputLength: MiB }));
    expectInvalidRecord(small.error);
    expect(small.total).toBeLessThanOrEqual(MiB + 1);
  });

  it('zstd: frame sizes add up over concatenated and skippable frames', () => {
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    const two = Buffer.concat([zstdFrame({ rle: 1, contentSize: 131072n }), skippable, zstdFrame({ raw: Buffer.from('ab') })]);
    expect(zstdCapacity(two)).toEqual({ capacity: 131074, declared: null });
    expect(decompress(CompressionType.ZSTD, two).equals(Buffer.concat([Buffer.alloc(131072), Buffer.from('ab')]))).toBe(true);
    const declared = Buffer.concat([compress(CompressionType.ZSTD, Buffer.from('abc')), compress(CompressionType.ZSTD, Buffer.from('de'))]);
    expect(zstdCapacity(declared).declared).toBe(5);
    expect(decompress(CompressionType.ZSTD, declared).toString()).toBe('abcde');
  });

  it('the zstd decoder recovers after an error', () => {
    const data = sample(10_000);
    const good = zstdStreamed(data);
    expectKafkaError(() => decompress(4, good.subarray(0, good.length - 3)), ErrorCode.INVALID_RECORD);
    expect(decompress(4, good).equals(data)).toBe(true);
  });
});

/** 100-odd bytes of a compressed LZ4 block of text. */
function rawBlockOfText(): Buffer {
  return (lz4.compressSync(Buffer.from('some text, some more text, some text again. '.repeat(4))) as Buffer).subarray(4);
}
