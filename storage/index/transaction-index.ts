/**
 * The transaction index `.txnindex` of one segment (Kafka's TransactionIndex): one 34-byte entry
 * per ABORTED transaction whose marker lies in the segment, in marker (lastOffset) order:
 *
 *   version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64
 *
 * `firstOffset` is the transaction's first data offset (possibly in an earlier segment),
 * `lastOffset` the offset of its ABORT marker, `lastStableOffset` the LSO right after the marker
 * was appended (lets a read_committed search stop early, see `collectAbortedTxns`).
 *
 * Created ON DEMAND: the file does not exist until the segment's first aborted transaction, and it
 * is opened (O_RDWR|O_CREAT) at that first `append`. That open is exactly where KAFKA-7866 failed
 * (the process hit its open-file limit): `append` throws the fs error and leaves the in-memory
 * entries unchanged, so the caller can keep the LSO before the marker and take the log offline.
 *
 * Like the other indexes here there is no mmap and no preallocation: the file is exactly
 * `entries * 34` bytes; the entries are also held in memory (loaded on first use).
 */
import * as path from 'node:path';
import { OPEN_RW_CREATE, StorageFs, writeFully } from '../fs';
import { CorruptIndexError } from '../errors';

export const TXN_INDEX_ENTRY_SIZE = 34;
export const TXN_INDEX_VERSION = 0;

export interface AbortedTxn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  lastStableOffset: bigint;
}

export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[];
  /** True when an entry's LSO reached the upper bound: no later segment can add to the answer. */
  isComplete: boolean;
}

export function encodeAbortedTxn(t: AbortedTxn): Buffer {
  const b = Buffer.alloc(TXN_INDEX_ENTRY_SIZE);
  b.writeInt16BE(TXN_INDEX_VERSION, 0);
  b.writeBigInt64BE(t.producerId, 2);
  b.writeBigInt64BE(t.firstOffset, 10);
  b.writeBigInt64BE(t.lastOffset, 18);
  b.writeBigInt64BE(t.lastStableOffset, 26);
  return b;
}

export function decodeAbortedTxn(b: Buffer, at = 0): AbortedTxn {
  const version = b.readInt16BE(at);
  if (version !== TXN_INDEX_VERSION) throw new CorruptIndexError(`unexpected transaction index entry version ${version}`);
  return {
    producerId: b.readBigInt64BE(at + 2),
    firstOffset: b.readBigInt64BE(at + 10),
    lastOffset: b.readBigInt64BE(at + 18),
    lastStableOffset: b.readBigInt64BE(at + 26),
  };
}

export class TransactionIndex {
  private fd: number | null = null;
  private entriesList: AbortedTxn[] | null = null;
  private dirty = false;

  constructor(
    private readonly fs: StorageFs,
    private _file: string,
    readonly baseOffset: bigint,
  ) {}

  get file(): string {
    return this._file;
  }

  /** Entries in file order (loads the file on first use; a missing file is an empty index). */
  entries(): readonly AbortedTxn[] {
    return this.load();
  }

  get isEmpty(): boolean {
    return this.load().length === 0;
  }

  /** lastOffset of the last entry, or -1. */
  get lastOffset(): bigint {
    const l = this.load();
    return l.length === 0 ? -1n : l[l.length - 1].lastOffset;
  }

  private load(): AbortedTxn[] {
    if (this.entriesList) return this.entriesList;
    const out: AbortedTxn[] = [];
    if (this.fs.existsSync(this._file)) {
      const buf = this.fs.readFileSync(this._file);
      // A torn tail (crash in the middle of an entry) is ignored; recovery re-adds what is missing.
      const n = Math.floor(buf.length / TXN_INDEX_ENTRY_SIZE);
      for (let i = 0; i < n; i++) out.push(decodeAbortedTxn(buf, i * TXN_INDEX_ENTRY_SIZE));
    }
    this.entriesList = out;
    return out;
  }

  private openFd(): number {
    if (this.fd === null) this.fd = this.fs.openSync(this._file, OPEN_RW_CREATE, 0o644);
    return this.fd;
  }

  /**
   * Appends one aborted transaction: opens (creating) the file if needed, writes the entry, and only
   * then adds it in memory. Throws on any failure with nothing changed in memory.
   */
  append(t: AbortedTxn): void {
    const l = this.load();
    const last = l[l.length - 1];
    if (last && t.lastOffset <= last.lastOffset) {
      throw new Error(
        `the last offset of appended transactions must increase sequentially, but ${t.lastOffset} is not greater than current last offset ${last.lastOffset} of index ${this._file}`,
      );
    }
    const fd = this.openFd();
    writeFully(this.fs, fd, encodeAbortedTxn(t), l.length * TXN_INDEX_ENTRY_SIZE);
    this.dirty = true;
    l.push({ producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset });
  }

  /**
   * Kafka's collectAbortedTxns: the aborted transactions overlapping [fetchOffset, upperBoundOffset),
   * complete once an entry's LSO reaches the upper bound.
   */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
    const abortedTransactions: AbortedTxn[] = [];
    for (const t of this.load()) {
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) abortedTransactions.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return { abortedTransactions, isComplete: true };
    }
    return { abortedTransactions, isComplete: false };
  }

  /** Drops entries whose marker is at or after `offset` (the segment is cut there). */
  truncateTo(offset: bigint): void {
    const l = this.load();
    let keep = l.length;
    while (keep > 0 && l[keep - 1].lastOffset >= offset) keep--;
    if (keep === l.length) return;
    l.length = keep;
    this.resizeFile(keep * TXN_INDEX_ENTRY_SIZE);
  }

  /** Empties the index (recovery rebuilds it); works on a file that does not decode. */
  reset(): void {
    this.entriesList = [];
    this.resizeFile(0);
  }

  private resizeFile(len: number): void {
    if (this.fd === null && !this.fs.existsSync(this._file)) return;
    this.fs.ftruncateSync(this.openFd(), len);
    this.dirty = true;
  }

  flush(): void {
    if (this.fd !== null && this.dirty) {
      this.fs.fsyncSync(this.fd);
      this.dirty = false;
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      this.flush();
    } finally {
      const fd = this.fd;
      this.fd = null;
      this.fs.closeSync(fd);
    }
  }

  renameTo(file: string): void {
    if (this.fs.existsSync(this._file)) this.fs.renameSync(this._file, file);
    this._file = file;
  }

  /** The directory holding the file was renamed: only the path changes. */
  updateParentDir(dir: string): void {
    this._file = path.join(dir, path.basename(this._file));
  }

  deleteIfExists(): boolean {
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      try {
        this.fs.closeSync(fd);
      } catch {
        /* deleting anyway */
      }
    }
    this.entriesList = [];
    if (!this.fs.existsSync(this._file)) return false;
    this.fs.unlinkSync(this._file);
    return true;
  }
}
