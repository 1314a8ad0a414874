/**
 * One segment's `.log` file: record batches exactly as on the wire, offsets assigned, back to back.
 *
 * Owns the file descriptor (opened lazily, so cold segments hold none) and the logical size. Appends
 * are positional writes at `size`: a failed or torn write leaves `size` where it was, and nothing
 * after `size` is ever read, so garbage past it is harmless until recovery truncates it. All calls
 * are synchronous except flushAsync, whose fsync runs on the thread pool, and readAsync (recovery's
 * read-ahead); close() waits for an in-flight fsync before releasing the fd, so the fd number
 * cannot be reused under it.
 *
 * Reads never trust framing blindly: every header walk checks the length against the file bounds
 * and throws CORRUPT_MESSAGE instead of reading past them.
 */
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
  ATTRIBUTES_OFFSET,
  RECORDS_COUNT_OFFSET,
  TIMESTAMP_TYPE_MASK,
} from '../protocol/records/record-batch';
import { OPEN_RW_CREATE, StorageFs, isIoError, readFully, readFullyAsync, writeFully } from './fs';
import { firstRecordAtOrAfter } from './record-access';

/** What storage needs from a batch header, read without touching the records. */
export interface BatchHeader {
  position: number;
  baseOffset: bigint;
  lastOffset: bigint;
  sizeInBytes: number;
  partitionLeaderEpoch: number;
  magic: number;
  attributes: number;
  maxTimestamp: bigint;
  recordsCount: number;
}

export interface TimestampAndOffset {
  timestamp: bigint;
  offset: bigint;
  /** Partition leader epoch of the batch holding the offset; -1 if unknown. */
  leaderEpoch: number;
}

const MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;
const HEADER_WINDOW = 16 * 1024;
export const EMPTY_RECORDS: Buffer = Buffer.alloc(0);

let sharedWindow: Buffer | null = Buffer.allocUnsafe(HEADER_WINDOW);

export function parseHeader(buf: Buffer, o: number, position: number): BatchHeader {
  const batchLength = buf.readInt32BE(o + BATCH_LENGTH_OFFSET);
  const baseOffset = buf.readBigInt64BE(o + BASE_OFFSET_OFFSET);
  return {
    position,
    baseOffset,
    lastOffset: baseOffset + BigInt(buf.readInt32BE(o + LAST_OFFSET_DELTA_OFFSET)),
    sizeInBytes: batchLength + LOG_OVERHEAD,
    partitionLeaderEpoch: buf.readInt32BE(o + PARTITION_LEADER_EPOCH_OFFSET),
    magic: buf.readInt8(o + MAGIC_OFFSET),
    attributes: buf.readInt16BE(o + ATTRIBUTES_OFFSET),
    maxTimestamp: buf.readBigInt64BE(o + MAX_TIMESTAMP_OFFSET),
    recordsCount: buf.readInt32BE(o + RECORDS_COUNT_OFFSET),
  };
}

export function isLogAppendTime(h: BatchHeader): boolean {
  return (h.attributes & TIMESTAMP_TYPE_MASK) !== 0;
}

export class FileRecords {
  private fd: number | null = null;
  private pendingFlushes = 0;
  private closeWhenIdle = false;
  private closed = false;
  private dirty = false;
  private inflight: Promise<void> | null = null;

  private constructor(
    private readonly fs: StorageFs,
    private _file: string,
    private _size: number,
  ) {}

  /** Opens an existing file (size from stat) or creates an empty one. */
  static open(fs: StorageFs, file: string, opts: { create: boolean }): FileRecords {
    if (opts.create) {
      const fr = new FileRecords(fs, file, 0);
      fr.openFd();
      return fr;
    }
    const st = fs.statSync(file);
    if (!st) {
      const e = new Error(`ENOENT: no such file, open '${file}'`) as NodeJS.ErrnoException;
      e.code = 'ENOENT';
      e.syscall = 'open';
      e.path = file;
      throw e;
    }
    return new FileRecords(fs, file, st.size);
  }

  get file(): string {
    return this._file;
  }

  get sizeInBytes(): number {
    return this._size;
  }

  private openFd(): number {
    if (this.closed || this.closeWhenIdle) throw new Error(`log file ${this._file} is closed`);
    if (this.fd === null) this.fd = this.fs.openSync(this._file, OPEN_RW_CREATE, 0o644);
    return this.fd;
  }

  /** Appends `buf` at the end; the size moves only once every byte is written. Returns bytes written. */
  append(buf: Buffer): number {
    if (buf.length === 0) return 0;
    writeFully(this.fs, this.openFd(), buf, this._size);
    this._size += buf.length;
    this.dirty = true;
    return buf.length;
  }

  /** Exactly `length` bytes at `position` (which must lie within the file). */
  read(position: number, length: number): Buffer {
    if (position < 0 || length < 0 || position + length > this._size) {
      throw new RangeError(`read [${position}, ${position + length}) outside ${this._file} of size ${this._size}`);
    }
    const buf = Buffer.allocUnsafe(length);
    if (length > 0) readFully(this.fs, this.openFd(), buf, position, 0, length);
    return buf;
  }

  readInto(buf: Buffer, bufOffset: number, position: number, length: number): void {
    if (position < 0 || length < 0 || position + length > this._size) {
      throw new RangeError(`read [${position}, ${position + length}) outside ${this._file} of size ${this._size}`);
    }
    if (length > 0) readFully(this.fs, this.openFd(), buf, position, bufOffset, length);
  }

  /** `readInto` on the thread pool (recovery's read-ahead); resolves with `length`. */
  readAsync(buf: Buffer, bufOffset: number, position: number, length: number): Promise<number> {
    if (position < 0 || length < 0 || position + length > this._size) {
      return Promise.reject(new RangeError(`read [${position}, ${position + length}) outside ${this._file} of size ${this._size}`));
    }
    return readFullyAsync(this.fs, this.openFd(), buf, position, bufOffset, length);
  }

  /**
   * Walks batch headers from `start` to `end` (default: the file size), calling `visit` for each
   * until it returns false. Throws CORRUPT_MESSAGE on framing that does not fit the bounds.
   */
  scanBatches(start: number, visit: (h: BatchHeader) => boolean, end = this._size): void {
    // One shared read-ahead window serves every scan; a nested scan (never expected) gets its own.
    const win = sharedWindow ?? Buffer.allocUnsafe(HEADER_WINDOW);
    sharedWindow = null;
    try {
      let winStart = 0;
      let winLen = 0;
      let pos = start;
      while (pos < end) {
        if (end - pos < RECORD_BATCH_OVERHEAD) {
          throw new KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            `${end - pos} bytes at position ${pos} of ${this._file} are too few for a batch header`,
          );
        }
        if (pos < winStart || pos + RECORD_BATCH_OVERHEAD > winStart + winLen) {
          winStart = pos;
          winLen = Math.min(win.length, end - pos);
          readFully(this.fs, this.openFd(), win, winStart, 0, winLen);
        }
        const o = pos - winStart;
        const len = win.readInt32BE(o + BATCH_LENGTH_OFFSET);
        if (len < MIN_BATCH_LENGTH || pos + len + LOG_OVERHEAD > end) {
          throw new KafkaError(
            ErrorCode.CORRUPT_MESSAGE,
            `batch length ${len} at position ${pos} of ${this._file} does not fit (file end ${end})`,
          );
        }
        const h = parseHeader(win, o, pos);
        if (!visit(h)) return;
        pos += h.sizeInBytes;
      }
    } finally {
      if (win.length === HEADER_WINDOW) sharedWindow = win;
    }
  }

  /** The first batch from `startingPosition` whose last offset is >= target, or null. */
  searchForOffsetWithSize(targetOffset: bigint, startingPosition: number): BatchHeader | null {
    let found: BatchHeader | null = null;
    this.scanBatches(startingPosition, (h) => {
      if (h.lastOffset >= targetOffset) {
        found = h;
        return false;
      }
      return true;
    });
    return found;
  }

  /**
   * The first record at or after `startingPosition` with timestamp >= target and offset >=
   * startingOffset (record-granular: ListOffsets by timestamp names a record, not a batch).
   */
  searchForTimestamp(targetTimestamp: bigint, startingPosition: number, startingOffset: bigint): TimestampAndOffset | null {
    let result: TimestampAndOffset | null = null;
    this.scanBatches(startingPosition, (h) => {
      if (h.lastOffset < startingOffset || h.maxTimestamp < targetTimestamp) return true;
      const bytes = this.read(h.position, h.sizeInBytes);
      const hit = firstRecordAtOrAfter(bytes, targetTimestamp, startingOffset);
      if (hit) {
        result = { timestamp: hit.timestamp, offset: hit.offset, leaderEpoch: h.partitionLeaderEpoch >= 0 ? h.partitionLeaderEpoch : -1 };
        return false;
      }
      return true;
    });
    return result;
  }

  /** The largest batch max timestamp at or after `startingPosition`, with its batch's last offset. */
  largestTimestampAfter(startingPosition: number): { timestamp: number; offset: bigint } {
    let ts = -1;
    let off = -1n;
    this.scanBatches(startingPosition, (h) => {
      const t = Number(h.maxTimestamp);
      if (t > ts) {
        ts = t;
        off = h.lastOffset;
      }
      return true;
    });
    return { timestamp: ts, offset: off };
  }

  /** Cuts the file to `targetSize` bytes; returns how many were removed. */
  truncateTo(targetSize: number): number {
    if (targetSize < 0 || targetSize > this._size) {
      throw new RangeError(`cannot truncate ${this._file} of size ${this._size} to ${targetSize}`);
    }
    const fd = this.openFd();
    // The file may hold garbage beyond the logical size (a torn write); cut it too.
    const onDisk = this.fs.fstatSync(fd).size;
    if (targetSize < onDisk) {
      this.fs.ftruncateSync(fd, targetSize);
      this.dirty = true;
    }
    const removed = this._size - targetSize;
    this._size = targetSize;
    return removed;
  }

  /** Physical file length (may exceed sizeInBytes after a torn write). */
  fileLength(): number {
    const st = this.fd !== null ? this.fs.fstatSync(this.fd) : this.fs.statSync(this._file);
    return st ? st.size : 0;
  }

  /**
   * fdatasync now. Also when a background flush is still in flight: its completion says nothing
   * about when it started, so a caller that needs durability now must not piggyback on it.
   */
  flush(): void {
    if (this.fd !== null && (this.dirty || this.pendingFlushes > 0)) {
      this.dirty = false;
      this.fs.fdatasyncSync(this.fd);
    }
  }

  /** fsync on the thread pool; resolves once the data written before the call is durable. */
  flushAsync(): Promise<void> {
    if (this.fd === null) return Promise.resolve();
    if (!this.dirty) return this.inflight ?? Promise.resolve();
    this.dirty = false;
    const fd = this.fd;
    this.pendingFlushes++;
    const p = new Promise<void>((resolve, reject) => {
      this.fs.fsync(fd, (err) => {
        this.pendingFlushes--;
        if (this.inflight === p) this.inflight = null;
        if (err) this.dirty = true;
        this.maybeCloseIdle();
        if (err) reject(err);
        else resolve();
      });
    });
    this.inflight = p;
    return p;
  }

  private maybeCloseIdle(): void {
    if (this.closeWhenIdle && this.pendingFlushes === 0 && this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      try {
        this.fs.closeSync(fd);
      } catch {
        /* closing after a background flush: nothing left to protect */
      }
    }
  }

  /** Releases the fd (deferred while a background flush still uses it). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pendingFlushes > 0) {
      this.closeWhenIdle = true;
      return;
    }
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      this.fs.closeSync(fd);
    }
  }

  closeQuietly(): void {
    try {
      this.close();
    } catch {
      /* directory already failed */
    }
  }

  renameTo(newFile: string): void {
    this.fs.renameSync(this._file, newFile);
    this._file = newFile;
  }

  /** The directory holding the file was renamed (an open descriptor stays valid): only the path changes. */
  updateParentDir(dir: string): void {
    this._file = path.join(dir, path.basename(this._file));
  }

  deleteIfExists(): boolean {
    this.closeQuietly();
    try {
      this.fs.unlinkSync(this._file);
      return true;
    } catch (e) {
      if (isIoError(e) && e.code === 'ENOENT') return false;
      throw e;
    }
  }

  lastModified(): number {
    const st = this.fs.statSync(this._file);
    return st ? st.mtimeMs : 0;
  }
}
