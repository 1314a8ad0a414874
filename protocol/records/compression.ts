/**
 * The record-batch codecs (attributes bits 0-2): gzip, snappy, lz4, zstd. All calls are synchronous:
 * a batch is decompressed whole, once, and its records are then read from the plain buffer.
 *
 * Inputs come from clients and from disk, so every decoder treats its input as hostile:
 * - the output size is capped (`maxOutputLength`, default DEFAULT_MAX_DECOMPRESSED_SIZE) and the cap
 *   is checked before any native allocation wherever the format declares a size up front (snappy's
 *   preamble, zstd's frame header, lz4's block sizes), because the native decoders preallocate
 *   whatever the header claims and a failed multi-GB allocation aborts the process;
 * - any decoder failure becomes a KafkaError, never a raw Error.
 *
 * Error codes, and where they differ from Apache Kafka (which reaches both cases through Java
 * exceptions that are not ApiExceptions, so its produce response says UNKNOWN_SERVER_ERROR and the
 * broker logs a server-side stack trace):
 * - codec id 5-7: UNSUPPORTED_COMPRESSION_TYPE. Kafka: IllegalArgumentException from
 *   CompressionType.forId -> UNKNOWN_SERVER_ERROR. The client's fault, so we name it precisely.
 * - undecodable compressed bytes: INVALID_RECORD. Kafka: KafkaException("Failed to decompress
 *   record stream") -> UNKNOWN_SERVER_ERROR, except a stream that ends early, which Kafka reports
 *   as INVALID_RECORD ("premature EOF"); we cannot tell the two apart, decoding whole buffers.
 *   Not CORRUPT_MESSAGE: that one is retriable (Java's CorruptRecordException, KafkaJS), so a
 *   producer would resend the same undecodable bytes until its delivery timeout. The batch CRC
 *   already passed, so the bytes arrived as the client wrote them.
 * - output above the cap: MESSAGE_TOO_LARGE.
 * All three are non-retriable for Java clients and KafkaJS, as Kafka's UNKNOWN_SERVER_ERROR is.
 *
 * Formats written (what Java clients write, so Kafka's own tools read our logs):
 * - gzip: one gzip member (zlib), level 6 by default.
 * - snappy: xerial framing (magic `\x82SNAPPY\0`, int32 version 1, int32 compatible version 1, then
 *   blocks of int32 length + raw snappy, 32 KiB of input per block). Read: xerial (also
 *   concatenated xerial streams) or a raw snappy block, as KafkaJS codecs write.
 * - lz4: the standard LZ4 frame format with independent blocks (Kafka's reader decodes each block
 *   on its own and cannot follow linked blocks). Written by lz4-napi, read by lz4-frame.ts.
 * - zstd: one zstd frame, level 3 by default (Kafka's default).
 */
import * as zlib from 'zlib';
import { ErrorCode, KafkaError } from '../errors';
import { decodeLz4Frame, Lz4FrameError } from './lz4-frame';
import { CompressionType } from './record-batch';

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
  DCtx: new () => { decompressStream(dst: Uint8Array, src: Uint8Array): [number, number, number] };
  getFrameContentSize(frame: Uint8Array): number | null;
  compressBound(n: number): number;
  dStreamOutSize(): number;
};
let zstdModule: ZstdModule | undefined;
// eslint-disable-next-line @typescript-eslint/no-var-requires
const zstd = (): ZstdModule => (zstdModule ??= require('zstd-napi/binding'));

/**
 * Largest decompressed batch we accept. Kafka has no explicit cap (it streams), but a broker that
 * decompresses whole buffers needs one: 1 MiB of gzip can inflate to ~1 GiB.
 */
export const DEFAULT_MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024;

export interface DecompressOptions {
  /** Output larger than this throws KafkaError(MESSAGE_TOO_LARGE). */
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

function tooLarge(codec: string, size: number, max: number): KafkaError {
  return new KafkaError(
    ErrorCode.MESSAGE_TOO_LARGE,
    `${codec}: decompressed record batch would be ${size} bytes, above the ${max} byte limit`,
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
      return zlib.gzipSync(buf, { level: level ?? DEFAULT_GZIP_LEVEL });
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

function gunzip(buf: Buffer, max: number): Buffer {
  try {
    return zlib.gunzipSync(buf, { maxOutputLength: max });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge('gzip', max + 1, max);
    throw corrupt('gzip', message(err));
  }
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
 * the declared length before looking at the data. A snappy copy element encodes at most 64 bytes
 * in 3, so a declared length far beyond ~21x the input is a lie, not data.
 */
function snappyRawBlock(block: Buffer, max: number): Buffer {
  const declared = snappyDeclaredLength(block);
  if (declared < 0) throw corrupt('snappy', 'malformed length preamble');
  if (declared > max) throw tooLarge('snappy', declared, max);
  if (declared > block.length * 22 + 64) {
    throw corrupt('snappy', `declared length ${declared} impossible for ${block.length} compressed bytes`);
  }
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
    const out = snappyRawBlock(buf.subarray(pos, pos + len), max - total);
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
 * Scratch buffers reused across calls (all of this runs synchronously, so one of each suffices).
 * Results are copied out of them; buffers above SCRATCH_RETAIN_LIMIT are not kept, so one huge
 * batch does not pin its memory forever.
 */
let compressScratch: Buffer | undefined;
let decompressScratch: Buffer | undefined;
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

/**
 * Streams into one output buffer. A frame that declares its content size (zstd-napi and
 * librdkafka write it) decodes straight into an exact buffer; one that does not (Java's
 * zstd-jni streams) decodes into the scratch and is copied out. A decoder that stops with
 * input exhausted and the frame unfinished means truncated data.
 */
function zstdDecompress(buf: Buffer, max: number): Buffer {
  dctx ??= new (zstd().DCtx)();
  const d = dctx;
  let declared: number | null;
  try {
    declared = buf.length >= 4 ? zstd().getFrameContentSize(buf) : null;
  } catch (err) {
    throw corrupt('zstd', message(err));
  }
  if (declared !== null && declared > max) throw tooLarge('zstd', declared, max);
  let out: Buffer;
  let inScratch = false;
  if (declared !== null) {
    // One spare byte lets the decoder report the frame's end without a grow-and-copy.
    out = Buffer.allocUnsafe(declared + 1);
  } else {
    const want = Math.min(max + 1, Math.max(MIN_STREAM_CHUNK, buf.length * 4));
    if (decompressScratch && decompressScratch.length >= want) out = decompressScratch;
    else {
      out = Buffer.allocUnsafe(want);
      if (want <= SCRATCH_RETAIN_LIMIT) decompressScratch = out;
    }
    inScratch = out === decompressScratch;
  }
  let pos = 0;
  let input = buf;
  try {
    for (;;) {
      if (pos === out.length) {
        if (pos > max) throw tooLarge('zstd', pos, max);
        const bigger = Buffer.allocUnsafe(Math.min(Math.max(out.length * 2, MIN_STREAM_CHUNK), max + 1));
        out.copy(bigger, 0, 0, pos);
        out = bigger;
        inScratch = false;
      }
      const [hint, produced, consumed] = d.decompressStream(out.subarray(pos), input);
      pos += produced;
      input = input.subarray(consumed);
      if (hint === 0 && input.length === 0) break;
      if (produced === 0 && consumed === 0) {
        throw corrupt('zstd', input.length === 0 ? 'frame is truncated' : 'decoder made no progress');
      }
    }
  } catch (err) {
    // A context left mid-frame would misread the next input.
    dctx = undefined;
    if (err instanceof KafkaError) throw err;
    throw corrupt('zstd', message(err));
  }
  if (pos > max) throw tooLarge('zstd', pos, max);
  if (inScratch) return Buffer.from(out.subarray(0, pos));
  return out.subarray(0, pos);
}
