import * as crypto from 'crypto';
import * as zlib from 'zlib';
import {
  compress,
  compressionTypeForName,
  decompress,
  snappyRawCompress,
  XERIAL_MAGIC,
  xerialCompress,
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

describe('decompression bombs', () => {
  it('gzip output over the cap is MESSAGE_TOO_LARGE', () => {
    const bomb = zlib.gzipSync(Buffer.alloc(10_000_000));
    expectKafkaError(() => decompress(1, bomb, { maxOutputLength: 1_000_000 }), ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('snappy: a huge declared length is refused before allocation', () => {
    // preamble says 4 GiB - 1, followed by almost nothing
    const lie = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x61]);
    expectKafkaError(() => decompress(2, lie), ErrorCode.MESSAGE_TOO_LARGE);
    const smallLie = Buffer.from([0xff, 0xff, 0x03, 0x00, 0x61]); // 65535 from 5 bytes
    expectKafkaError(() => decompress(2, smallLie), ErrorCode.INVALID_RECORD);
  });

  it('zstd: a declared content size over the cap is refused', () => {
    const packed = compress(4, Buffer.alloc(5_000_000));
    expectKafkaError(() => decompress(4, packed, { maxOutputLength: 1_000_000 }), ErrorCode.MESSAGE_TOO_LARGE);
    const streamed = zstdStreamed(Buffer.alloc(5_000_000));
    expectKafkaError(() => decompress(4, streamed, { maxOutputLength: 1_000_000 }), ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('lz4: output over the cap is refused', () => {
    const packed = compress(3, Buffer.alloc(5_000_000));
    expectKafkaError(() => decompress(3, packed, { maxOutputLength: 1_000_000 }), ErrorCode.MESSAGE_TOO_LARGE);
  });

  it('the zstd decoder recovers after an error', () => {
    const data = sample(10_000);
    const good = zstdStreamed(data);
    expectKafkaError(() => decompress(4, good.subarray(0, good.length - 3)), ErrorCode.INVALID_RECORD);
    expect(decompress(4, good).equals(data)).toBe(true);
  });
});
