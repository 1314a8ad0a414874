/**
 * Shared machinery of the sparse segment indexes (offset index, time index): fixed-size entries
 * whose offsets are stored relative to the segment's base offset as int32.
 *
 * Kafka memory-maps index files and preallocates them to segment.index.bytes. Node has no mmap, so
 * an index here is its entries held in a Buffer (exactly the file's bytes) plus the file, to which
 * each new entry is written with one positional write: no preallocation, the file is always exactly
 * `entries * entrySize` long. The index of an inactive segment is loaded on first use and can be
 * dropped again (`unload`), so cold segments cost no memory.
 *
 * Invariants: entries are in file order and (checked by sanityCheck) increase strictly in offset;
 * the in-memory copy only ever contains entries that were written to the file first; the index is
 * derived data: whenever it is in doubt the loader throws it away and rebuilds it from the .log.
 */
import * as path from 'node:path';
import { OPEN_RW_CREATE, StorageFs, isIoError, writeFully } from '../fs';
import { CorruptIndexError } from '../errors';

export const INT32_MAX = 0x7fffffff;

export class InvalidOffsetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidOffsetError';
  }
}

export abstract class AbstractIndex {
  /** Entry bytes; capacity may exceed entries * entrySize. null while unloaded. */
  protected data: Buffer | null = null;
  protected _entries = 0;
  private fd: number | null = null;
  private dirty = false;
  /** Length of the file when it was loaded (before a zero tail was trimmed). */
  protected loadedFileLength = 0;
  /** Entries dropped at load because they were a preallocated zero tail. */
  protected zeroTailEntries = 0;
  private closed = false;

  readonly maxEntries: number;

  protected constructor(
    protected readonly fs: StorageFs,
    private _file: string,
    readonly baseOffset: bigint,
    maxIndexSize: number,
    readonly entrySize: number,
  ) {
    this.maxEntries = Math.floor(maxIndexSize / entrySize);
  }

  get file(): string {
    return this._file;
  }

  get entries(): number {
    this.ensureLoaded();
    return this._entries;
  }

  get isFull(): boolean {
    return this.entries >= this.maxEntries;
  }

  get sizeInBytes(): number {
    return this.entries * this.entrySize;
  }

  get isLoaded(): boolean {
    return this.data !== null;
  }

  /** True if `offset` can be stored relative to the base offset as a non-negative int32. */
  canAppendOffset(offset: bigint): boolean {
    const rel = offset - this.baseOffset;
    return rel >= 0n && rel <= BigInt(INT32_MAX);
  }

  protected relativeOffset(offset: bigint): number {
    const rel = offset - this.baseOffset;
    if (rel < 0n || rel > BigInt(INT32_MAX)) {
      throw new InvalidOffsetError(`offset ${offset} is out of range for an index with base offset ${this.baseOffset}`);
    }
    return Number(rel);
  }

  /**
   * Reads the file into memory. A missing file is an empty index. Trailing all-zero entries (what a
   * Kafka broker leaves behind when it crashes with a preallocated, memory-mapped index) are dropped
   * and the file is trimmed; anything else odd is left for sanityCheck to report.
   */
  load(): void {
    const st = this.fs.statSync(this._file);
    let raw: Buffer;
    if (!st) raw = Buffer.alloc(0);
    else raw = this.fs.readFileSync(this._file);
    this.loadedFileLength = raw.length;
    let n = Math.floor(raw.length / this.entrySize);
    let zeros = 0;
    while (n > 0 && isZero(raw, (n - 1) * this.entrySize, this.entrySize)) {
      n--;
      zeros++;
    }
    this.zeroTailEntries = zeros;
    const cap = Math.max(n * this.entrySize, 16 * this.entrySize);
    const data = Buffer.allocUnsafe(cap);
    raw.copy(data, 0, 0, n * this.entrySize);
    this.data = data;
    this._entries = n;
    if (zeros > 0 && raw.length % this.entrySize === 0) this.truncateFile(n * this.entrySize);
  }

  /** Drops the in-memory copy (inactive segments); the next access reloads from the file. */
  unload(): void {
    if (this.fd !== null) return; // an index open for appends stays resident
    this.data = null;
  }

  protected ensureLoaded(): Buffer {
    if (this.data === null) this.load();
    return this.data as Buffer;
  }

  /** Throws CorruptIndexError if the file cannot be trusted (see subclasses). */
  sanityCheck(logSize: number, nextOffsetUpperBound?: bigint): void {
    this.ensureLoaded();
    if (this.loadedFileLength % this.entrySize !== 0) {
      throw new CorruptIndexError(
        `index file ${this._file} has size ${this.loadedFileLength}, not a multiple of the entry size ${this.entrySize}`,
      );
    }
    this.checkEntries(logSize, nextOffsetUpperBound);
  }

  protected abstract checkEntries(logSize: number, nextOffsetUpperBound?: bigint): void;

  protected entryBytes(i: number): number {
    return i * this.entrySize;
  }

  /** Appends one entry: the file first, then memory, so memory never claims an unwritten entry. */
  protected appendRaw(entry: Buffer): void {
    const data = this.ensureLoaded();
    const pos = this._entries * this.entrySize;
    writeFully(this.fs, this.openFd(), entry, pos, 0, this.entrySize);
    this.dirty = true;
    if (pos + this.entrySize > data.length) {
      const grown = Buffer.allocUnsafe(Math.max(data.length * 2, pos + this.entrySize));
      data.copy(grown, 0, 0, pos);
      this.data = grown;
    }
    entry.copy(this.data as Buffer, pos, 0, this.entrySize);
    this._entries++;
  }

  /** In-memory append used while rebuilding; `persist()` writes the result in one go. */
  protected appendInMemory(entry: Buffer): void {
    const data = this.ensureLoaded();
    const pos = this._entries * this.entrySize;
    if (pos + this.entrySize > data.length) {
      const grown = Buffer.allocUnsafe(Math.max(data.length * 2, pos + this.entrySize));
      data.copy(grown, 0, 0, pos);
      this.data = grown;
    }
    entry.copy(this.data as Buffer, pos, 0, this.entrySize);
    this._entries++;
  }

  /** Forgets every entry in memory without touching the file (recovery rebuild, then persist()). */
  resetInMemory(): void {
    this.data = Buffer.allocUnsafe(16 * this.entrySize);
    this._entries = 0;
    this.loadedFileLength = 0;
    this.zeroTailEntries = 0;
  }

  /** Replaces every entry with `bytes` (entries in the file format, from a rebuild) and rewrites the file. */
  replaceEntries(bytes: Buffer): void {
    if (bytes.length % this.entrySize !== 0) throw new Error(`${bytes.length} bytes are not whole ${this.entrySize}-byte entries`);
    const data = Buffer.allocUnsafe(Math.max(bytes.length, 16 * this.entrySize));
    bytes.copy(data);
    this.data = data;
    this._entries = bytes.length / this.entrySize;
    this.zeroTailEntries = 0;
    this.persist();
  }

  /** Rewrites the whole file from memory (after a rebuild). */
  persist(): void {
    const data = this.ensureLoaded();
    const len = this._entries * this.entrySize;
    const fd = this.openFd();
    if (len > 0) writeFully(this.fs, fd, data, 0, 0, len);
    this.fs.ftruncateSync(fd, len);
    this.dirty = true;
    this.loadedFileLength = len;
  }

  /** Keeps the first `n` entries, in memory and on disk. */
  protected truncateToEntries(n: number): void {
    this.ensureLoaded();
    if (n >= this._entries) return;
    this.truncateFile(n * this.entrySize);
    this._entries = n;
  }

  private truncateFile(len: number): void {
    this.fs.ftruncateSync(this.openFd(), len);
    this.dirty = true;
  }

  /** Removes every entry. */
  reset(): void {
    this.ensureLoaded();
    this.truncateFile(0);
    this._entries = 0;
  }

  private openFd(): number {
    if (this.closed) throw new Error(`index ${this._file} is closed`);
    if (this.fd === null) this.fd = this.fs.openSync(this._file, OPEN_RW_CREATE, 0o644);
    return this.fd;
  }

  /** Creates the (empty) file now, so a new segment has all its files from the start. */
  createIfMissing(): void {
    this.openFd();
  }

  flush(): void {
    if (this.fd !== null && this.dirty) {
      this.fs.fsyncSync(this.fd);
      this.dirty = false;
    }
  }

  /** fd to include in a background flush, or null if nothing is pending. */
  takeDirtyFd(): number | null {
    if (this.fd !== null && this.dirty) {
      this.dirty = false;
      return this.fd;
    }
    return null;
  }

  /** Closes the write handle (the segment became inactive); entries stay readable. */
  closeHandler(): void {
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      this.fs.closeSync(fd);
    }
  }

  close(): void {
    try {
      this.closeHandler();
    } finally {
      this.closed = true;
    }
  }

  /** Best effort close for a failed directory: never throws. */
  closeQuietly(): void {
    try {
      this.close();
    } catch {
      /* the directory is already failed */
    }
  }

  renameTo(newFile: string): void {
    if (this.fs.existsSync(this._file)) this.fs.renameSync(this._file, newFile);
    this._file = newFile;
  }

  /** The directory holding the file was renamed: only the path changes. */
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

  /** Index of the last entry whose key is <= target (binary search), or -1. */
  protected largestLowerBound(target: number, keyOf: (i: number) => number): number {
    let lo = 0;
    let hi = this._entries - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (keyOf(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Index of the first entry whose key is >= target, or entries. */
  protected smallestUpperBound(target: number, keyOf: (i: number) => number): number {
    let lo = 0;
    let hi = this._entries;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keyOf(mid) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function isZero(buf: Buffer, start: number, len: number): boolean {
  for (let i = start; i < start + len; i++) if (buf[i] !== 0) return false;
  return true;
}
