/**
 * The record-batch codecs (attributes bits 0-2): gzip, snappy, lz4, zstd. All calls are synchronous:
 * a batch is decompressed whole, once, and its records are then read from the plain buffer.
 *
 * Inputs come from clients and from disk, so every decoder treats its input as hostile. Invariants:
 * - the output never exceeds `maxOutputLength` (default DEFAULT_MAX_DECOMPRESSED_SIZE; the produce
 *   path passes decompressedSizeLimit(), below), and no decoder allocates more than that limit
 *   (+1 byte where zlib and zstd need it to see the output go past): gzip refuses a trailer
 *   saying more and otherwise stops inflating at it (zlib's maxOutputLength), snappy checks each
 *   block's length preamble before the native call, lz4 and zstd walk their block headers first
 *   and size the output from what the blocks can physically hold, never from a size field alone;
 * - each decoder makes one output allocation, or two small ones (gzip's exact attempt; snappy's
 *   blocks), not a pile of chunks: dead chunks are what let RSS run past the bound under a bomb
 *   loop, since V8 frees external buffers on its own schedule;
 * - a size the compressed data declares (snappy's preamble, lz4's and zstd's frame content size)
 *   is checked against what the data can hold and against the limit before any allocation: a
 *   tiny batch claiming gigabytes costs nothing;
 * - any decoder failure becomes a KafkaError, never a raw Error.
 *
 * The bound for produced batches (decompressedSizeLimit): DECOMPRESSED_SIZE_MULTIPLE (32) times
 * max(max.message.bytes, Kafka's default 1048588), capped at DEFAULT_MAX_DECOMPRESSED_SIZE. That
 * is 32 MiB at default settings, and scales with a topic that raises max.message.bytes. Why:
 * - Kafka streams: it inflates records one at a time while validating, so it never holds more
 *   than one record, and stops at the first record that does not parse. krill holds the whole
 *   records section, so it needs a bound on the whole, and the bound is also the most memory a
 *   hostile batch can make the broker touch (decompression is synchronous: one batch at a time).
 * - The compressed batch is already at most max.message.bytes, so the bound is a ratio: 32:1
 *   over a whole batch. Real record data compresses 2-10:1; producers cap what they put in one
 *   batch well below that (librdkafka batch.size 1 MB uncompressed; the Java producer fills
 *   batch.size = 16 KiB of *estimated compressed* bytes, which for all-zero values approaches
 *   16 MiB uncompressed). 1 MiB of zeros in one record, or many, is far inside it.
 * - The record count is not used: the attacker writes it, so it bounds nothing. (Each record is
 *   at least 7 bytes, so a count that cannot fit the bound is refused before decompressing, by
 *   record-set-validator.ts.) A lowered topic max.message.bytes does not lower the bound below
 *   the default's: Java producers size records by their own max.request.size, not the topic's.
 *
 * Error codes, and where they differ from Apache Kafka:
 * - codec id 5-7: UNSUPPORTED_COMPRESSION_TYPE. Kafka: IllegalArgumentException from
 *   CompressionType.forId -> UNKNOWN_SERVER_ERROR. The client's fault, so we name it precisely.
 * - undecodable compressed bytes, including a declared size the data cannot hold: INVALID_RECORD.
 *   Kafka: the codec stream's IOException becomes KafkaException("Failed to decompress record
 *   stream") -> UNKNOWN_SERVER_ERROR, except a stream that ends early, which Kafka reports as
 *   INVALID_RECORD ("premature EOF"). (Kafka's lz4 reader skips the content size unread; zstd
 *   itself rejects a frame whose content differs from its declared size; snappy-java allocates
 *   whatever a block's preamble says.) Not CORRUPT_MESSAGE: that one is retriable (Java's
 *   CorruptRecordException, KafkaJS), so a producer would resend the same undecodable bytes
 *   until its delivery timeout. The batch CRC already passed, so the bytes arrived as written.
 * - output above the limit: INVALID_RECORD, the code Kafka gives a batch whose decompressed
 *   bytes do not match the records it declares ("Incorrect declared batch size, records still
 *   remaining"), and what a decompressed bomb of garbage gets from Kafka at its first record.
 *   Kafka would accept a bomb made of valid records; krill does not (see the bound above).
 * All are non-retriable for Java clients and KafkaJS, as Kafka's UNKNOWN_SERVER_ERROR is.
 *
 * Formats written (what Java clients write, so Kafka's own tools read our logs):
 * - gzip: one gzip member (zlib), level 6 by default.
 * - snappy: xerial framing (magic `\x82SNAPPY\0`, int32 version 1, int32 compatible version 1, then
 *   blocks of int32 length + raw snappy, 32 KiB of input per block). Read: xerial (also
 *   concatenated xerial streams) or a raw snappy block, as KafkaJS codecs write.
 * - lz4: the standard LZ4 frame format with independent blocks (Kafka's reader decodes each block
 *   on its own and cannot follow linked blocks). Written by lz4-napi, read by lz4-frame.ts.
 * - zstd: one zstd frame, level 3 by default (Kafka's default). Read: any sequence of zstd and
 *   skippable frames, with or without a content size (Java's zstd-jni streams write none).
 */
import type * as Zlib from 'zlib';
import { ErrorCode, KafkaError } from '../errors';
import { decodeLz4Frame, Lz4FrameError } from './lz4-frame';
import { CompressionType } from './record-batch';

let zlibModule: typeof Zlib | undefined;
/** zlib, loaded on first use: only gzip batches need it. */
const zlib = (): typeof Zlib => (zlibModule ??= require('zlib') as typeof Zlib);

/**
 * The native codecs are loaded on first use: together they cost ~15 MB of RSS and ~40 ms of
 * startup, which a broker that never sees a compressed batch should not pay.
 */
type SnappyModule = {
  compressSync(input: Uint8Array, opts: { copyOutputData: true }): Buffer;
  uncompressSync(input: Uint8Array, opts: { asBuffer: true; copyOutputData: true }): Buffer;
};
let snappyModule: SnappyModule | undefined;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const snappy = (): SnappyModule => (snappyModule ??= require('snappy'));
/**
 * snappy's default output is an externally allocated buffer; V8's accounting for those made
 * 32 KiB-block round trips ~8x slower in a steady loop (decompress 241 vs 2007 MB/s, compress
 * 140 vs 1137 MB/s measured). copyOutputData hands back ordinary buffers instead.
 */
const SNAPPY_OUT = { copyOutputData: true } as const;
const SNAPPY_IN = { asBuffer: true, copyOutputData: true } as const;
type Lz4Module = { compressFrameSync(input: Buffer): Buffer };
let lz4Module: Lz4Module | undefined;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const lz4 = (): Lz4Module => (lz4Module ??= require('lz4-napi'));
type ZstdModule = {
  CCtx: new () => { compress(dst: Uint8Array, src: Uint8Array, level: number): number };
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number };
  compressBound(n: number): number;
};
let zstdModule: ZstdModule | undefined;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const zstd = (): ZstdModule => (zstdModule ??= require('zstd-napi/binding'));

/**
 * Largest decompressed batch any reader accepts (batches read back from disk were bounded more
 * tightly when produced). Kafka has no explicit cap (it streams), but a broker that decompresses
 * whole buffers needs one: 1 MiB of gzip can inflate to ~1 GiB.
 */
export const DEFAULT_MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024;
/** Kafka's default message.max.bytes / max.message.bytes. */
export const KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12;
/** A produced batch may decompress to this many times max.message.bytes (see the header). */
export const DECOMPRESSED_SIZE_MULTIPLE = 32;

/**
 * The most a produced batch's records section may decompress to, given the topic's
 * max.message.bytes (undefined: Kafka's default): see the header for why.
 */
export function decompressedSizeLimit(maxMessageBytes?: number, cap = DEFAULT_MAX_DECOMPRESSED_SIZE): number {
  const perBatch = Math.max(maxMessageBytes ?? 0, KAFKA_DEFAULT_MAX_MESSAGE_BYTES);
  return Math.min(DECOMPRESSED_SIZE_MULTIPLE * perBatch, cap);
}

export interface DecompressOptions {
  /** Output larger than this throws KafkaError(INVALID_RECORD), before allocating it. */
  maxOutputLength?: number;
}

/** Default levels, as Kafka's producer and broker use them. */
export const DEFAULT_GZIP_LEVEL = 6;
export const DEFAULT_ZSTD_LEVEL = 3;

export const COMPRESSION_NAMES: Readonly<Record<CompressionType, string>> = {
  [CompressionType.NONE]: 'none',
  [CompressionType.GZIP]: 'gzip',
  [CompressionType.SNAPPY]: 'snappy',
  [CompressionType.LZ4]: 'lz4',
  [CompressionType.ZSTD]: 'zstd',
};

/** Parses a `compression.type` value (topic config or producer setting); null if unknown. */
export function compressionTypeForName(name: string): CompressionType | null {
  switch (name) {
    case 'none':
      return CompressionType.NONE;
    case 'gzip':
      return CompressionType.GZIP;
    case 'snappy':
      return CompressionType.SNAPPY;
    case 'lz4':
      return CompressionType.LZ4;
    case 'zstd':
      return CompressionType.ZSTD;
    default:
      return null;
  }
}

/** Narrows a codec id from batch attributes; throws UNSUPPORTED_COMPRESSION_TYPE for 5-7. */
export function checkCompressionType(id: number): CompressionType {
  if (Number.isInteger(id) && id >= CompressionType.NONE && id <= CompressionType.ZSTD) return id as CompressionType;
  throw new KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `unknown compression type id ${id}`);
}

function corrupt(codec: string, detail: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, `${codec}: cannot decompress record batch: ${detail}`);
}

/** `size`: what the data declares, or a lower bound on what it would produce. */
function tooLarge(codec: string, size: number, max: number): KafkaError {
  return new KafkaError(
    ErrorCode.INVALID_RECORD,
    `${codec}: decompressed record batch would be at least ${size} bytes, above the ${max} byte limit`,
  );
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Decompresses a batch's records section. NONE returns `buf` itself. */
export function decompress(type: CompressionType | number, buf: Buffer, opts: DecompressOptions = {}): Buffer {
  const codec = checkCompressionType(type);
  const max = opts.maxOutputLength ?? DEFAULT_MAX_DECOMPRESSED_SIZE;
  switch (codec) {
    case CompressionType.NONE:
      return buf;
    case CompressionType.GZIP:
      return gunzip(buf, max);
    case CompressionType.SNAPPY:
      return snappyDecompress(buf, max);
    case CompressionType.LZ4:
      return lz4Decompress(buf, max);
    case CompressionType.ZSTD:
      return zstdDecompress(buf, max);
  }
}

/**
 * Compresses a records section. `level` applies to gzip (1-9) and zstd (1-22); snappy and lz4 have
 * no level here. NONE returns `buf` itself.
 */
export function compress(type: CompressionType | number, buf: Buffer, level?: number): Buffer {
  const codec = checkCompressionType(type);
  switch (codec) {
    case CompressionType.NONE:
      return buf;
    case CompressionType.GZIP:
      return zlib().gzipSync(buf, { level: level ?? DEFAULT_GZIP_LEVEL });
    case CompressionType.SNAPPY:
      return xerialCompress(buf);
    case CompressionType.LZ4:
      return lz4().compressFrameSync(buf);
    case CompressionType.ZSTD:
      return zstdCompress(buf, level ?? DEFAULT_ZSTD_LEVEL);
  }
}

// ---------------------------------------------------------------------------------------------
// gzip

/**
 * A trailer up to this size gets an exact first attempt, which fails after at most that much
 * output when earlier members make the whole larger; a larger trailer sizes the chunks itself.
 */
const GZIP_EXACT_ATTEMPT_MAX = 4 * 1024 * 1024;
/** zlib's smallest output chunk (Z_MIN_CHUNK). */
const ZLIB_MIN_CHUNK = 64;

/**
 * The last gzip member's ISIZE (its uncompressed length mod 2^32, the stream's final 4 bytes), or
 * -1 if the input is too short to hold a member. zlib rejects any input that is not a sequence
 * of whole members (trailing bytes other than zero padding fail), so for input that decodes at
 * all this is the size of the last member (or 0 after padding), and the total is at least that.
 */
function gzipTrailerSize(buf: Buffer): number {
  return buf.length >= 18 ? buf.readUInt32LE(buf.length - 4) : -1;
}

/** zlib inflation stopping as soon as the output passes `limit` (null then, if `soft`). */
function inflate(buf: Buffer, limit: number, chunkSize: number, soft: boolean): Buffer | null {
  try {
    return zlib().gunzipSync(buf, { maxOutputLength: Math.max(1, limit), chunkSize: Math.max(ZLIB_MIN_CHUNK, chunkSize) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      if (soft) return null;
      throw tooLarge('gzip', limit + 1, limit);
    }
    throw corrupt('gzip', message(err));
  }
}

/**
 * The output buffer is sized from the trailer: exactly, for the single member every client
 * writes (one allocation, no chunks to concatenate); a trailer above the limit is refused
 * before inflating anything. When the trailer undersells the output (several members, zero
 * padding, or a lie), the rest inflates into one buffer of limit + 1 rather than a pile of small
 * chunks: many small dead chunks made V8 and malloc hold twice as much RSS under a bomb loop.
 */
function gunzip(buf: Buffer, max: number): Buffer {
  const trailer = gzipTrailerSize(buf);
  if (trailer > max) throw tooLarge('gzip', trailer, max);
  let out: Buffer | null = null;
  if (trailer >= 0 && trailer <= GZIP_EXACT_ATTEMPT_MAX) out = inflate(buf, trailer, trailer + 1, true);
  out ??= inflate(buf, max, trailer > GZIP_EXACT_ATTEMPT_MAX ? trailer + 1 : max + 1, false)!;
  if (out.length > max) throw tooLarge('gzip', out.length, max);
  // A buffer much larger than its content would pin the slack for as long as records live.
  if (out.buffer.byteLength - out.length > 64 * 1024 && out.length < out.buffer.byteLength / 2) return Buffer.from(out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// snappy

/** `\x82SNAPPY\0`: the xerial stream magic. */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
/** snappy-java's default block: each block holds at most this much uncompressed input. */
const XERIAL_BLOCK_SIZE = 32 * 1024;

function isXerial(buf: Buffer, pos: number): boolean {
  return buf.length - pos >= XERIAL_HEADER_SIZE && buf.compare(XERIAL_MAGIC, 0, 8, pos, pos + 8) === 0;
}

/** Writes snappy the way Java clients do (snappy-java's SnappyOutputStream framing). */
export function xerialCompress(buf: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  let total = XERIAL_HEADER_SIZE;
  for (let pos = 0; pos < buf.length; pos += XERIAL_BLOCK_SIZE) {
    const block = snappy().compressSync(buf.subarray(pos, Math.min(buf.length, pos + XERIAL_BLOCK_SIZE)), SNAPPY_OUT);
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
    total += 4 + block.length;
  }
  return Buffer.concat(parts, total);
}

/** A raw snappy block as KafkaJS codecs write it (no framing). */
export function snappyRawCompress(buf: Buffer): Buffer {
  return snappy().compressSync(buf, SNAPPY_OUT);
}

/**
 * The uncompressed length a raw snappy block declares in its preamble (a little-endian base-128
 * varint of at most 32 bits), or -1 if the preamble is malformed.
 */
function snappyDeclaredLength(buf: Buffer): number {
  let result = 0;
  for (let i = 0; i < 5 && i < buf.length; i++) {
    const b = buf[i];
    result += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return result <= 0xffffffff ? result : -1;
  }
  return -1;
}

/**
 * One raw snappy block, with its declared length checked first: the native decoder allocates
 * the declared length before looking at the data (so does snappy-java, under Kafka). A snappy
 * copy element encodes at most 64 bytes in 3, so a declared length far beyond ~21x the input is
 * a lie, not data. `produced`: output of earlier blocks, counted against `max`.
 */
function snappyRawBlock(block: Buffer, max: number, produced = 0): Buffer {
  const declared = snappyDeclaredLength(block);
  if (declared < 0) throw corrupt('snappy', 'malformed length preamble');
  if (declared > block.length * 22 + 64) {
    throw corrupt('snappy', `declared length ${declared} impossible for ${block.length} compressed bytes`);
  }
  if (produced + declared > max) throw tooLarge('snappy', produced + declared, max);
  try {
    return snappy().uncompressSync(block, SNAPPY_IN);
  } catch (err) {
    throw corrupt('snappy', message(err));
  }
}

function snappyDecompress(buf: Buffer, max: number): Buffer {
  if (!isXerial(buf, 0)) return snappyRawBlock(buf, max);
  const parts: Buffer[] = [];
  let total = 0;
  let pos = 0;
  while (pos < buf.length) {
    // snappy-java reads concatenated streams, each with its own header: so do we.
    if (isXerial(buf, pos)) {
      pos += XERIAL_HEADER_SIZE;
      continue;
    }
    if (buf.length - pos < 4) throw corrupt('snappy', `truncated xerial block length at ${pos}`);
    const len = buf.readInt32BE(pos);
    pos += 4;
    if (len <= 0 || len > buf.length - pos) {
      throw corrupt('snappy', `xerial block length ${len} at ${pos - 4} does not fit ${buf.length - pos} bytes`);
    }
    const out = snappyRawBlock(buf.subarray(pos, pos + len), max, total);
    pos += len;
    total += out.length;
    parts.push(out);
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts, total);
}

// ---------------------------------------------------------------------------------------------
// lz4 (decoding in lz4-frame.ts; see there for why it is not native)

function lz4Decompress(buf: Buffer, max: number): Buffer {
  try {
    return decodeLz4Frame(buf, max);
  } catch (err) {
    if (err instanceof Lz4FrameError && err.tooLarge !== undefined) throw tooLarge('lz4', err.tooLarge, max);
    throw corrupt('lz4', message(err));
  }
}

// ---------------------------------------------------------------------------------------------
// zstd

let cctx: InstanceType<ZstdModule['CCtx']> | undefined;
let dctx: InstanceType<ZstdModule['DCtx']> | undefined;
/**
 * Scratch buffer for compression, reused across calls (all of this runs synchronously, so one
 * suffices). Results are copied out of it; one above SCRATCH_RETAIN_LIMIT is not kept, so one
 * huge batch does not pin its memory forever.
 */
let compressScratch: Buffer | undefined;
const SCRATCH_RETAIN_LIMIT = 4 * 1024 * 1024;
const MIN_STREAM_CHUNK = 64 * 1024;

function zstdCompress(buf: Buffer, level: number): Buffer {
  cctx ??= new (zstd().CCtx)();
  const bound = zstd().compressBound(buf.length);
  let dst = compressScratch;
  if (!dst || dst.length < bound) {
    dst = Buffer.allocUnsafe(Math.max(bound, MIN_STREAM_CHUNK));
    if (dst.length <= SCRATCH_RETAIN_LIMIT) compressScratch = dst;
  }
  const n = cctx.compress(dst, buf, level);
  return Buffer.from(dst.subarray(0, n));
}

const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames: magic 0x184D2A50-0x184D2A5F, int32 LE size, that many bytes. */
const ZSTD_SKIPPABLE_MASK = 0xfffffff0;
const ZSTD_SKIPPABLE_MAGIC = 0x184d2a50;
/** ZSTD_BLOCKSIZE_MAX: no block regenerates more than 128 KiB. */
const ZSTD_BLOCK_MAX = 128 * 1024;
const ZSTD_FCS_SIZES = [0, 2, 4, 8];
const ZSTD_DID_SIZES = [0, 1, 2, 4];

/**
 * What a sequence of zstd frames can hold, from its frame and block headers alone (RFC 8878):
 * raw and RLE blocks regenerate exactly their Block_Size, a compressed block at most 128 KiB.
 * `declared` sums the frames' content sizes, or is null when a frame does not declare one.
 * Throws INVALID_RECORD on anything the decoder would refuse structurally.
 */
export function zstdCapacity(buf: Buffer): { capacity: number; declared: number | null } {
  let pos = 0;
  let capacity = 0;
  let declared: number | null = 0;
  let frames = 0;
  while (pos < buf.length) {
    if (buf.length - pos < 4) throw corrupt('zstd', `truncated frame magic at ${pos}`);
    const magic = buf.readUInt32LE(pos);
    if ((magic & ZSTD_SKIPPABLE_MASK) >>> 0 === ZSTD_SKIPPABLE_MAGIC) {
      if (buf.length - pos < 8) throw corrupt('zstd', `truncated skippable frame at ${pos}`);
      pos += 8 + buf.readUInt32LE(pos + 4);
      if (pos > buf.length) throw corrupt('zstd', 'skippable frame runs past the end of the input');
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw corrupt('zstd', `unknown frame magic 0x${magic.toString(16)} at ${pos}`);
    frames++;
    if (buf.length - pos < 5) throw corrupt('zstd', 'truncated frame header');
    const fhd = buf[pos + 4];
    if ((fhd & 0x08) !== 0) throw corrupt('zstd', 'reserved frame header bit is set');
    const singleSegment = (fhd & 0x20) !== 0;
    const fcsFlag = fhd >> 6;
    const fcsSize = fcsFlag === 0 ? (singleSegment ? 1 : 0) : ZSTD_FCS_SIZES[fcsFlag];
    const headerSize = 5 + (singleSegment ? 0 : 1) + ZSTD_DID_SIZES[fhd & 0x03] + fcsSize;
    if (buf.length - pos < headerSize) throw corrupt('zstd', 'truncated frame header');
    const fcsAt = pos + headerSize - fcsSize;
    if (fcsSize === 0) declared = null;
    else if (declared !== null) {
      if (fcsSize === 1) declared += buf[fcsAt];
      else if (fcsSize === 2) declared += buf.readUInt16LE(fcsAt) + 256;
      else if (fcsSize === 4) declared += buf.readUInt32LE(fcsAt);
      // Compared only: a float approximation of a huge claim is good enough.
      else declared += Number(buf.readBigUInt64LE(fcsAt));
    }
    pos += headerSize;
    for (;;) {
      if (buf.length - pos < 3) throw corrupt('zstd', 'frame is truncated (block header)');
      const bh = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16);
      pos += 3;
      const type = (bh >> 1) & 0x03;
      const size = bh >>> 3;
      if (type === 3) throw corrupt('zstd', 'reserved block type');
      const stored = type === 1 ? 1 : size;
      if (buf.length - pos < stored) throw corrupt('zstd', 'frame is truncated (block data)');
      pos += stored;
      capacity += type === 2 ? ZSTD_BLOCK_MAX : size;
      if ((bh & 1) !== 0) break;
    }
    if ((fhd & 0x04) !== 0) {
      if (buf.length - pos < 4) throw corrupt('zstd', 'frame is truncated (checksum)');
      pos += 4;
    }
  }
  if (frames === 0) throw corrupt('zstd', 'no zstd frame');
  return { capacity, declared };
}

/**
 * One-shot decompression (ZSTD_decompressDCtx) straight into a buffer sized from the headers:
 * the declared content size when every frame has one (and it is within what the blocks can
 * hold and the limit), else min(capacity, limit + 1). One-shot decoding needs no window buffer,
 * so a frame header asking for a 128 MiB window (or lying about its size) allocates nothing
 * inside zstd either. The decoder checks each frame's content against its declared size.
 */
function zstdDecompress(buf: Buffer, max: number): Buffer {
  const { capacity, declared } = zstdCapacity(buf);
  if (declared !== null && declared > capacity) {
    throw corrupt('zstd', `frames declare ${declared} bytes of content but their blocks can hold at most ${capacity}`);
  }
  if (declared !== null && declared > max) throw tooLarge('zstd', declared, max);
  const size = declared ?? Math.min(capacity, max + 1);
  const out = Buffer.allocUnsafe(size);
  dctx ??= new (zstd().DCtx)();
  let n: number;
  try {
    n = dctx.decompress(out, buf);
  } catch (err) {
    // Without a declared size, a buffer cut at the limit is too small for a frame that goes on;
    // zstd cannot say whether that, or corrupt data, stopped it.
    if (declared === null && capacity > max) {
      throw corrupt('zstd', `${message(err)} (output limited to ${max} bytes: too large, or corrupt)`);
    }
    throw corrupt('zstd', message(err));
  }
  if (n > max) throw tooLarge('zstd', n, max);
  if (declared !== null && n !== declared) throw corrupt('zstd', `frames declare ${declared} bytes but hold ${n}`);
  // A buffer much larger than its content would pin the slack for as long as records live.
  if (n < out.length / 2) return Buffer.from(out.subarray(0, n));
  return out.subarray(0, n);
}
