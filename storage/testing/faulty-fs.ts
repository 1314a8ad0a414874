/**
 * A StorageFs that fails chosen calls: "fail the next N opens/writes/fsyncs/renames of paths
 * matching P with errno E". Used by the storage tests, and by compat tests that start a broker on
 * one (its `storageFs` option, DESIGN 4.8); production runs on `nodeFs` and never pays for this.
 *
 * Calls that take an fd are matched against the path the fd was opened with. A write fault can be
 * `partial`: half the bytes reach the file before the error, the way a full disk tears a write.
 * Faults are consumed in the order they were added; each matching call uses up one.
 *
 * Crash points (`freezeAfter`): after N more calls that change the disk (a file created, a write,
 * a truncate, a rename, an unlink or rm, a utimes, an fsync of a file or directory), every later
 * such call fails with EIO and changes nothing, so the files stay exactly as a SIGKILL at that
 * moment would leave them, whatever cleanup code runs afterwards. Reads keep working. Tests walk N
 * over every step of an operation (the log cleaner's swap) and reload the directory each time.
 */
import { constants as nodeConstants } from 'node:fs';
import { FileStat, OpenFlags, StorageFs, nodeFs } from '../fs';

export type FsOp =
  | 'open'
  | 'close'
  | 'read'
  | 'write'
  | 'fsync'
  | 'truncate'
  | 'stat'
  | 'readdir'
  | 'mkdir'
  | 'rename'
  | 'unlink'
  | 'rm'
  | 'readFile'
  | 'utimes';

export interface FaultSpec {
  op: FsOp;
  /** Substring or regular expression matched against the file path; omitted = any path. */
  path?: string | RegExp;
  /** errno code to raise; default EIO. */
  errno?: string;
  /** How many matching calls fail; default 1. */
  count?: number;
  /** For writes: write the first half of the bytes, then fail. */
  partial?: boolean;
  /**
   * Throw a plain error with no errno (a bug or an unexpected runtime failure rather than the
   * disk): KAFKA-7866's rule is that the log treats it like an I/O error anyway.
   */
  nonIo?: boolean;
}

interface ActiveFault extends Required<Omit<FaultSpec, 'path' | 'partial' | 'nonIo'>> {
  path?: string | RegExp;
  partial: boolean;
  nonIo: boolean;
}

const ERRNO: Record<string, number> = { EIO: -5, ENOSPC: -28, EMFILE: -24, ENFILE: -23, EACCES: -13, EROFS: -30, ENOENT: -2 };

export class FaultyFs implements StorageFs {
  private faults: ActiveFault[] = [];
  private fdPaths = new Map<number, string>();
  /** Every injected failure, for assertions. */
  readonly injected: { op: FsOp; path: string; errno: string }[] = [];
  /** Calls that change the disk, counted since the fs was created (see `freezeAfter`). */
  mutations = 0;
  /** Every mutating call made (op and path), in order, while `recordMutations` is set. */
  readonly mutationLog: { op: FsOp; path: string }[] = [];
  recordMutations = false;
  private freezeAt: number | null = null;

  constructor(private readonly inner: StorageFs = nodeFs) {}

  /** Arms a fault; returns this for chaining. */
  failNext(spec: FaultSpec): this {
    this.faults.push({
      op: spec.op,
      path: spec.path,
      errno: spec.errno ?? 'EIO',
      count: spec.count ?? 1,
      partial: spec.partial ?? false,
      nonIo: spec.nonIo ?? false,
    });
    return this;
  }

  /**
   * The KAFKA-7866 fault: the next `count` creations (op 'open', the default: the index is created
   * on demand at the first ABORT marker of a segment, as when the process hits its open-file limit)
   * or appends (op 'write') of a .txnindex file fail, with `errno` (default EMFILE for opens, EIO
   * for writes) or a non-I/O error. `under` limits it to files below that path (a partition or a
   * log directory).
   */
  failTransactionIndex(opts: { op?: 'open' | 'write'; count?: number; errno?: string; under?: string; nonIo?: boolean } = {}): this {
    const op = opts.op ?? 'open';
    const escaped = (opts.under ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return this.failNext({
      op,
      path: new RegExp(`^${escaped}.*\\.txnindex$`),
      errno: opts.errno ?? (op === 'open' ? 'EMFILE' : 'EIO'),
      count: opts.count ?? 1,
      nonIo: opts.nonIo,
    });
  }

  clearFaults(): void {
    this.faults = [];
    this.freezeAt = null;
  }

  /** After `n` more disk-changing calls, the disk is frozen (see the file header). */
  freezeAfter(n: number): this {
    this.freezeAt = this.mutations + n;
    return this;
  }

  get frozen(): boolean {
    return this.freezeAt !== null && this.mutations >= this.freezeAt;
  }

  /** Counts a disk-changing call, or fails it once the disk is frozen. */
  private mutate(op: FsOp, file: string): void {
    if (this.frozen) this.raise(op, file, 'EIO');
    this.mutations++;
    if (this.recordMutations) this.mutationLog.push({ op, path: file });
  }

  get pendingFaults(): number {
    return this.faults.reduce((n, f) => n + f.count, 0);
  }

  /** Number of fds this fs has handed out and not closed (leak checks in tests). */
  get openFdCount(): number {
    return this.fdPaths.size;
  }

  private match(op: FsOp, file: string): ActiveFault | undefined {
    for (const f of this.faults) {
      if (f.op !== op || f.count <= 0) continue;
      if (f.path !== undefined) {
        const hit = typeof f.path === 'string' ? file.includes(f.path) : f.path.test(file);
        if (!hit) continue;
      }
      f.count--;
      if (f.count === 0) this.faults.splice(this.faults.indexOf(f), 1);
      return f;
    }
    return undefined;
  }

  private check(op: FsOp, file: string): ActiveFault | undefined {
    const f = this.match(op, file);
    if (f?.nonIo) {
      this.injected.push({ op, path: file, errno: 'non-io' });
      throw new TypeError(`injected non-I/O fault, ${op} '${file}'`);
    }
    if (f && !f.partial) this.raise(op, file, f.errno);
    return f;
  }

  private raise(op: FsOp, file: string, errno: string): never {
    this.injected.push({ op, path: file, errno });
    const e = new Error(`${errno}: injected fault, ${op} '${file}'`) as NodeJS.ErrnoException;
    e.code = errno;
    e.errno = ERRNO[errno] ?? -5;
    e.syscall = op;
    e.path = file;
    throw e;
  }

  private pathOf(fd: number): string {
    return this.fdPaths.get(fd) ?? `<fd ${fd}>`;
  }

  openSync(file: string, flags: OpenFlags, mode?: number): number {
    if (!this.inner.existsSync(file) && createsFile(flags)) this.mutate('open', file);
    else if (truncates(flags)) this.mutate('open', file);
    this.check('open', file);
    const fd = this.inner.openSync(file, flags, mode);
    this.fdPaths.set(fd, file);
    return fd;
  }
  closeSync(fd: number): void {
    const file = this.pathOf(fd);
    this.fdPaths.delete(fd);
    this.inner.closeSync(fd);
    // A close fault still closes the fd (as the kernel does) and then reports the error.
    this.check('close', file);
  }
  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    this.check('read', this.pathOf(fd));
    return this.inner.readSync(fd, buf, offset, length, position);
  }
  read(fd: number, buf: Buffer, offset: number, length: number, position: number, cb: (err: NodeJS.ErrnoException | null, n: number) => void): void {
    try {
      this.check('read', this.pathOf(fd));
    } catch (e) {
      setImmediate(() => cb(e as NodeJS.ErrnoException, 0));
      return;
    }
    this.inner.read(fd, buf, offset, length, position, cb);
  }
  writeSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const file = this.pathOf(fd);
    this.mutate('write', file);
    const f = this.check('write', file);
    if (f?.partial) {
      const half = Math.floor(length / 2);
      if (half > 0) this.inner.writeSync(fd, buf, offset, half, position);
      this.raise('write', file, f.errno);
    }
    return this.inner.writeSync(fd, buf, offset, length, position);
  }
  fsyncSync(fd: number): void {
    this.mutate('fsync', this.pathOf(fd));
    this.check('fsync', this.pathOf(fd));
    this.inner.fsyncSync(fd);
  }
  fdatasyncSync(fd: number): void {
    this.mutate('fsync', this.pathOf(fd));
    this.check('fsync', this.pathOf(fd));
    this.inner.fdatasyncSync(fd);
  }
  fsync(fd: number, cb: (err: NodeJS.ErrnoException | null) => void): void {
    try {
      this.mutate('fsync', this.pathOf(fd));
      this.check('fsync', this.pathOf(fd));
    } catch (e) {
      setImmediate(() => cb(e as NodeJS.ErrnoException));
      return;
    }
    this.inner.fsync(fd, cb);
  }
  ftruncateSync(fd: number, len: number): void {
    this.mutate('truncate', this.pathOf(fd));
    this.check('truncate', this.pathOf(fd));
    this.inner.ftruncateSync(fd, len);
  }
  fstatSync(fd: number): FileStat {
    this.check('stat', this.pathOf(fd));
    return this.inner.fstatSync(fd);
  }
  statSync(file: string): FileStat | undefined {
    this.check('stat', file);
    return this.inner.statSync(file);
  }
  existsSync(file: string): boolean {
    return this.inner.existsSync(file);
  }
  readdirSync(dir: string): string[] {
    this.check('readdir', dir);
    return this.inner.readdirSync(dir);
  }
  mkdirSync(dir: string, opts?: { recursive?: boolean }): void {
    this.mutate('mkdir', dir);
    this.check('mkdir', dir);
    this.inner.mkdirSync(dir, opts);
  }
  renameSync(from: string, to: string): void {
    this.mutate('rename', from);
    this.check('rename', from);
    this.inner.renameSync(from, to);
  }
  unlinkSync(file: string): void {
    this.mutate('unlink', file);
    this.check('unlink', file);
    this.inner.unlinkSync(file);
  }
  rmSync(file: string, opts?: { recursive?: boolean; force?: boolean }): void {
    this.mutate('rm', file);
    this.check('rm', file);
    this.inner.rmSync(file, opts);
  }
  readFileSync(file: string): Buffer {
    this.check('readFile', file);
    return this.inner.readFileSync(file);
  }
  utimesSync(file: string, atimeMs: number, mtimeMs: number): void {
    this.mutate('utimes', file);
    this.check('utimes', file);
    this.inner.utimesSync(file, atimeMs, mtimeMs);
  }
  fsyncDirSync(dir: string): void {
    this.mutate('fsync', dir);
    this.check('fsync', dir);
    this.inner.fsyncDirSync(dir);
  }
}

const CREATE_FLAGS = ['w', 'wx', 'w+', 'wx+', 'a', 'ax', 'a+', 'ax+'];

function createsFile(flags: OpenFlags): boolean {
  return typeof flags === 'number' ? (flags & nodeConstants.O_CREAT) !== 0 : CREATE_FLAGS.includes(flags);
}

function truncates(flags: OpenFlags): boolean {
  return typeof flags === 'number' ? (flags & nodeConstants.O_TRUNC) !== 0 : flags.startsWith('w');
}
