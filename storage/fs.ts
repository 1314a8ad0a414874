/**
 * The file-system surface storage uses, as one small interface so tests and fault injection can
 * stand in for it (testing/faulty-fs.ts). Production uses `nodeFs`, a pass-through to node:fs.
 *
 * Almost everything is synchronous on purpose: an fs.writeSync append costs ~2.3 GB/s against
 * ~535 MB/s for an awaited FileHandle.write on this kind of machine (DESIGN 7), and a synchronous
 * call cannot interleave with other work, so a log's in-memory state and its files change together.
 * Two calls are asynchronous, both on the libuv pool: `fsync`, because a background flush of a
 * rolled segment must not stall the event loop for the seconds a 1 GiB fsync can take, and `read`,
 * recovery's read-ahead (log-loader.ts), which keeps reads in flight while the loader checks bytes.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';

export interface FileStat {
  size: number;
  mtimeMs: number;
  isFile(): boolean;
  isDirectory(): boolean;
}

/** Flags spelled as node:fs accepts them ('r', 'r+', 'w', ...) or as a number of O_* bits. */
export type OpenFlags = string | number;

export interface StorageFs {
  openSync(file: string, flags: OpenFlags, mode?: number): number;
  closeSync(fd: number): void;
  /** Positional read; returns the bytes read (less than `length` only at end of file). */
  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  /** Positional read on the thread pool (recovery's read-ahead); `n` as for readSync. */
  read(fd: number, buf: Buffer, offset: number, length: number, position: number, cb: (err: NodeJS.ErrnoException | null, n: number) => void): void;
  /** Positional write; may write fewer bytes than asked (callers loop, see writeFully). */
  writeSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
  fdatasyncSync(fd: number): void;
  /** Background fsync on the thread pool (used only where a blocking fsync would stall the loop). */
  fsync(fd: number, cb: (err: NodeJS.ErrnoException | null) => void): void;
  ftruncateSync(fd: number, len: number): void;
  fstatSync(fd: number): FileStat;
  /** undefined when the path does not exist. */
  statSync(file: string): FileStat | undefined;
  existsSync(file: string): boolean;
  readdirSync(dir: string): string[];
  mkdirSync(dir: string, opts?: { recursive?: boolean }): void;
  renameSync(from: string, to: string): void;
  unlinkSync(file: string): void;
  rmSync(file: string, opts?: { recursive?: boolean; force?: boolean }): void;
  readFileSync(file: string): Buffer;
  /** Sets a file's access and modification times (the log cleaner keeps a cleaned segment's mtime, as Kafka does). */
  utimesSync(file: string, atimeMs: number, mtimeMs: number): void;
  /** fsync a directory so that a create/rename/unlink inside it is durable. */
  fsyncDirSync(dir: string): void;
}

/** O_RDWR | O_CREAT without O_TRUNC or O_APPEND: on Linux pwrite ignores the position under O_APPEND. */
export const OPEN_RW_CREATE = nodefs.constants.O_RDWR | nodefs.constants.O_CREAT;
export const OPEN_RW = nodefs.constants.O_RDWR;

export const nodeFs: StorageFs = {
  openSync: (f, flags, mode) => nodefs.openSync(f, flags, mode),
  closeSync: (fd) => nodefs.closeSync(fd),
  readSync: (fd, buf, offset, length, position) => nodefs.readSync(fd, buf, offset, length, position),
  read: (fd, buf, offset, length, position, cb) => nodefs.read(fd, buf, offset, length, position, (err, n) => cb(err, n)),
  writeSync: (fd, buf, offset, length, position) => nodefs.writeSync(fd, buf, offset, length, position),
  fsyncSync: (fd) => nodefs.fsyncSync(fd),
  fdatasyncSync: (fd) => nodefs.fdatasyncSync(fd),
  fsync: (fd, cb) => nodefs.fsync(fd, cb),
  ftruncateSync: (fd, len) => nodefs.ftruncateSync(fd, len),
  fstatSync: (fd) => nodefs.fstatSync(fd),
  statSync: (f) => nodefs.statSync(f, { throwIfNoEntry: false }),
  existsSync: (f) => nodefs.existsSync(f),
  readdirSync: (d) => nodefs.readdirSync(d),
  mkdirSync: (d, opts) => {
    nodefs.mkdirSync(d, opts);
  },
  renameSync: (a, b) => nodefs.renameSync(a, b),
  unlinkSync: (f) => nodefs.unlinkSync(f),
  rmSync: (f, opts) => nodefs.rmSync(f, opts),
  readFileSync: (f) => nodefs.readFileSync(f),
  utimesSync: (f, a, m) => nodefs.utimesSync(f, a / 1000, m / 1000),
  fsyncDirSync: (d) => {
    const fd = nodefs.openSync(d, 'r');
    try {
      nodefs.fsyncSync(fd);
    } finally {
      nodefs.closeSync(fd);
    }
  },
};

/** Writes all of buf[offset, offset+length) at `position`, looping over short writes. */
export function writeFully(fs: StorageFs, fd: number, buf: Buffer, position: number, offset = 0, length = buf.length - offset): void {
  let done = 0;
  while (done < length) {
    const n = fs.writeSync(fd, buf, offset + done, length - done, position + done);
    if (n <= 0) throw ioError('EIO', 'write', `short write (${n}) at position ${position + done}`);
    done += n;
  }
}

/** Reads exactly `length` bytes at `position` into buf[offset..]; throws on a short read. */
export function readFully(fs: StorageFs, fd: number, buf: Buffer, position: number, offset = 0, length = buf.length - offset): void {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, offset + done, length - done, position + done);
    if (n <= 0) throw ioError('EIO', 'read', `unexpected end of file at position ${position + done}`);
    done += n;
  }
}

/** Reads exactly `length` bytes at `position` on the thread pool; rejects on a short read. */
export function readFullyAsync(fs: StorageFs, fd: number, buf: Buffer, position: number, offset: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = 0;
    const step = (): void => {
      fs.read(fd, buf, offset + done, length - done, position + done, (err, n) => {
        if (err) return reject(err);
        if (n <= 0) return reject(ioError('EIO', 'read', `unexpected end of file at position ${position + done}`));
        done += n;
        if (done < length) step();
        else resolve(done);
      });
    };
    if (length === 0) resolve(0);
    else step();
  });
}

/**
 * Replaces `file` atomically: write `file.tmp`, fsync it, rename over `file`, fsync the directory.
 * A crash leaves either the old or the new content, never a mix (checkpoints, partition.metadata,
 * meta.properties, the clean-shutdown marker).
 */
export function writeFileAtomic(fs: StorageFs, file: string, data: Buffer | string): void {
  const tmp = `${file}.tmp`;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const fd = fs.openSync(tmp, 'w');
  try {
    writeFully(fs, fd, bytes, 0);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fs.fsyncDirSync(path.dirname(file));
}

/** An Error shaped like node's fs errors (code, syscall), for conditions we detect ourselves. */
export function ioError(code: string, syscall: string, message: string, file?: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: ${message}${file ? `, ${syscall} '${file}'` : ''}`) as NodeJS.ErrnoException;
  e.code = code;
  e.syscall = syscall;
  if (file) e.path = file;
  return e;
}

/** True for errors raised by the file system (they carry `syscall`), as opposed to logic errors. */
export function isIoError(err: unknown): err is NodeJS.ErrnoException {
  return typeof err === 'object' && err !== null && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}
