/**
 * krill's RemoteIndexCache (Kafka's `org.apache.kafka.storage.internals.log.RemoteIndexCache`):
 * the offset, time and transaction indexes of remote segments, fetched once through the
 * RemoteStorageManager and kept in `<first log dir>/remote-log-index-cache/` as
 * `<startOffset>_<segment uuid>.index|.timeindex|.txnindex` (Kafka's names; a segment without a
 * transaction index gets an empty `.txnindex`, as in Kafka). The remote log manager asks it for the
 * file position of an offset or a timestamp in a remote segment and for the aborted transactions
 * of a range; the deleter (retention) calls remove / removeAll; the broker resizes it when
 * `remote.log.index.file.cache.total.size.bytes` changes (resizeCacheSize).
 *
 * Owns: the cache directory, the map of cached entries (LRU order, bounded by the total bytes of
 * their files), the single in-flight fetch per segment, the pins (leases) readers hold, the
 * renaming of unlinked entries' files to `.deleted` and their deletion, and the counters the
 * metrics read. Uses krill's OffsetIndex / TimeIndex / TransactionIndex for every lookup.
 *
 * The reader/deleter race of apache/kafka#19462 (KAFKA-17184) is impossible by construction:
 * - A reader works only through a lease: acquire() pins the entry (pins += 1) in the same
 *   synchronous step that finds or creates it, and the lease's release() (called in a finally by
 *   every method here) unpins it. A pinned entry never loses its files and its reads are never
 *   refused; nothing here checks a "marked for cleanup" flag on the read path.
 * - remove, removeAll, LRU eviction and resizeCacheSize only unlink an entry from the map and
 *   rename its files to `.deleted` names chosen to be unused (`X.index.deleted`, else
 *   `X.index.<n>.deleted`); the entry keeps working on the renamed files. Its files are unlinked
 *   only when it has no pin AND `file.delete.delay.ms` has passed since it was unlinked (or the
 *   cache closed), whichever is later: so a reader that got an entry completes on intact files.
 * - Canonical names have one owner: the three canonical files of a segment belong to its cached
 *   entry, or to the one fetch in flight for it, or to nobody; every path an entry holds is in
 *   `owned` until its files are deleted, and a fetch refuses to write a path that is owned. A new
 *   fetch of a removed segment therefore writes fresh canonical files that can never be the
 *   `.deleted` files a pinned reader still uses.
 *
 * Invariants: sizeBytes (sum over cached entries of their three files' sizes) <= maxSizeBytes
 * after every public call; the canonical files on disk are exactly the triples of the cached
 * entries (a fetch writes its files in one synchronous section, a failed fetch leaves none; a
 * rename to `.deleted` that fails with an I/O error leaves that file under its canonical name,
 * owned by its unlinked entry, and fetches of the segment fail until it is deleted); a `.deleted`
 * file belongs to an unlinked entry not yet deleted; at most one flight per segment uuid (the
 * straggling RSM calls of a failed flight are ignored); every loaded index passed its sanity check against the segment's metadata
 * (positions inside the segment, offsets within [startOffset, endOffset]); leftover `.tmp` and
 * `.deleted` files are removed at start-up and complete triples reloaded (incomplete or
 * malformed ones deleted). Node has no mmap, so a loaded index is its file's bytes in memory:
 * loaded indexes are kept for the most recently used entries up to `maxResidentBytes` and
 * reloaded (and re-checked) from their files on the next use.
 *
 * Await points (krill is single-threaded; everything else here is synchronous, fs calls included):
 * 1. pin(): `await flight.promise` while a fetch for the segment is in flight (started or joined).
 *    Meanwhile anything may run: remove() of that segment only flags the flight (`removed`), so
 *    the finished entry goes straight to `.deleted` instead of into the map; the waiters were
 *    counted before they awaited and are pinned in the fetch's final synchronous section, so the
 *    entry they receive cannot be deleted before they release it. Eviction, resize, remove of
 *    other segments and close() touch only other entries or flags. A caller arriving at a
 *    flagged flight waits for `settled` and starts over, so it never joins an entry that is
 *    already unlinked and never starts a second fetch of the segment beside the first.
 * 2. acquire(): `await this.pin(md)`, and withEntry(): `await this.acquire(md)`: the entry is
 *    already pinned across these hops; if it is unlinked or unloaded meanwhile, ensureLoaded()
 *    reads its files back from wherever they were renamed, and they exist because of the pin.
 * 3. runFlight(): `await Promise.all(fetchIndex...)`. Nothing is written to the cache directory
 *    during this await: a valid leftover under a canonical name was read before it (synchronously;
 *    AbstractIndex.load may trim a zero tail then) and nobody else can claim that name, since no
 *    entry owns it and this is the segment's only flight. All writes, the renames into place, the
 *    pins and the insertion come after it in one synchronous section, which checks `removed`
 *    first; a failure there deletes everything it wrote and every canonical file of the segment.
 * 4. withEntry(): `await fn(lease)`: the caller's own work while it holds its pin. Any removal,
 *    eviction or resize meanwhile only renames the files (the lease follows the new paths) or
 *    drops the in-memory copy (the lease reloads it from the intact, pinned files).
 * 5. close(): `await` of the flights still running, then of the last lease's release. The flights
 *    finish normally (their entries stay cached and on disk for the next start-up), readers
 *    finish on intact files, later acquire() calls are refused; only then are the `.deleted`
 *    files deleted, so a cache opened on the directory after close() resolved (whose start-up
 *    deletes every `.deleted` file) never takes files from under a reader of this one.
 * Timers (the delete delay) run maybeDelete(), which does nothing while the entry is pinned; the
 * last release() runs it again.
 */
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { Scheduler, ScheduledTask, TimerScheduler } from '../../common/scheduler';
import { SystemTime, Time } from '../../common/time';
import { CorruptIndexError } from '../errors';
import { StorageFs, isIoError, nodeFs, writeFully } from '../fs';
import { INT32_MAX } from '../index/abstract-index';
import { OffsetIndex, OffsetPosition } from '../index/offset-index';
import { TimeIndex } from '../index/time-index';
import { AbortedTxn, TXN_INDEX_ENTRY_SIZE, TransactionIndex, TxnIndexSearchResult } from '../index/transaction-index';
import { DELETED_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX } from '../log-file-utils';
import type { RemoteLogSegmentMetadata } from './remote-log-segment-metadata';
import { IndexType, RemoteResourceNotFoundError, RemoteStorageManager } from './remote-storage-manager';

/** Kafka's RemoteIndexCache.DIR_NAME. */
export const REMOTE_INDEX_CACHE_DIR_NAME = 'remote-log-index-cache';
/** Kafka's RemoteIndexCache.TMP_FILE_SUFFIX. */
export const REMOTE_INDEX_TMP_FILE_SUFFIX = '.tmp';
/** remote.log.index.file.cache.total.size.bytes default (1 GiB). */
export const DEFAULT_REMOTE_INDEX_CACHE_SIZE_BYTES = 1024 * 1024 * 1024;
/** file.delete.delay.ms default. */
export const DEFAULT_FILE_DELETE_DELAY_MS = 60_000;
/** How many bytes of loaded indexes stay in memory (krill has no mmap; see the header). */
export const DEFAULT_MAX_RESIDENT_BYTES = 64 * 1024 * 1024;

const OFFSET_ENTRY_SIZE = 8;
const TIME_ENTRY_SIZE = 12;

type Kind = 'offset' | 'time' | 'txn';
const KINDS: readonly Kind[] = ['offset', 'time', 'txn'];
const SUFFIX: Record<Kind, string> = { offset: INDEX_FILE_SUFFIX, time: TIME_INDEX_FILE_SUFFIX, txn: TXN_INDEX_FILE_SUFFIX };
const ENTRY_SIZE: Record<Kind, number> = { offset: OFFSET_ENTRY_SIZE, time: TIME_ENTRY_SIZE, txn: TXN_INDEX_ENTRY_SIZE };
const INDEX_TYPE: Record<Kind, IndexType> = { offset: IndexType.OFFSET, time: IndexType.TIMESTAMP, txn: IndexType.TRANSACTION };
/** `<startOffset>_<uuid>.<index|timeindex|txnindex>`; uuids are base64url (Kafka's Uuid.toString), which has no '.'. */
const CANONICAL_NAME = /^(\d+)_([A-Za-z0-9_-]+)\.(index|timeindex|txnindex)$/;

/** Kafka's file name prefix of a remote segment's indexes: `<startOffset>_<uuid>`. */
export function remoteIndexFilePrefix(md: RemoteLogSegmentMetadata): string {
  return `${md.startOffset}_${md.remoteLogSegmentId.id}`;
}
export function remoteOffsetIndexFileName(md: RemoteLogSegmentMetadata): string {
  return remoteIndexFilePrefix(md) + INDEX_FILE_SUFFIX;
}
export function remoteTimeIndexFileName(md: RemoteLogSegmentMetadata): string {
  return remoteIndexFilePrefix(md) + TIME_INDEX_FILE_SUFFIX;
}
export function remoteTransactionIndexFileName(md: RemoteLogSegmentMetadata): string {
  return remoteIndexFilePrefix(md) + TXN_INDEX_FILE_SUFFIX;
}

export interface RemoteIndexCacheOptions {
  /** The broker's first log dir; the cache lives in `<logDir>/remote-log-index-cache`. */
  logDir: string;
  rsm: RemoteStorageManager;
  /** remote.log.index.file.cache.total.size.bytes. */
  maxSizeBytes?: number;
  /** file.delete.delay.ms: the least time between unlinking an entry and deleting its files. */
  fileDeleteDelayMs?: number;
  /** Bytes of loaded indexes kept in memory across reads (0: every read loads from the files). */
  maxResidentBytes?: number;
  fs?: StorageFs;
  time?: Time;
  scheduler?: Scheduler;
  logger?: Logger;
}

/**
 * The counters of Kafka's cache stats (Caffeine's hit / miss / load success / load failure /
 * eviction counts and weight) plus the discarded corrupt files; plain numbers for the metrics
 * layer to read.
 */
export interface RemoteIndexCacheStats {
  hitCount: number;
  missCount: number;
  loadSuccessCount: number;
  loadFailureCount: number;
  evictionCount: number;
  evictionBytes: number;
  corruptIndexCount: number;
}

interface Loaded {
  offset: OffsetIndex;
  time: TimeIndex;
  txn: TransactionIndex;
}

type EntryState = 'cached' | 'unlinked' | 'deleted';

/** One segment's three index files and their loaded copy. Internal: readers see it through a lease. */
class Entry {
  pins = 0;
  state: EntryState = 'cached';
  loaded: Loaded | null = null;
  delayElapsed = false;
  deleteTask: ScheduledTask | null = null;

  constructor(
    readonly segmentId: string,
    readonly startOffset: bigint,
    /** Current path of each file: canonical while cached, `.deleted` once unlinked. */
    readonly paths: Record<Kind, string>,
    /** Size of each file in bytes. */
    readonly bytes: Record<Kind, number>,
  ) {}

  get sizeBytes(): number {
    return this.bytes.offset + this.bytes.time + this.bytes.txn;
  }
}

/**
 * A reader's pin on one segment's indexes. Valid until release(); the lookups work on the files
 * the entry had when it was acquired, wherever they have been renamed since.
 */
export interface RemoteIndexLease {
  readonly segmentId: string;
  /** The current paths of the three files (for diagnostics and tests). */
  readonly files: { readonly offsetIndex: string; readonly timeIndex: string; readonly txnIndex: string };
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly txnIndex: TransactionIndex;
  /** The largest offset-index entry at or below `offset` (Kafka's Entry.lookupOffset). */
  lookupOffset(offset: bigint): OffsetPosition;
  /** Kafka's Entry.lookupTimestamp: the time index's entry for `timestamp`, then the offset index at max(startingOffset, its offset). */
  lookupTimestamp(timestamp: number, startingOffset: bigint): OffsetPosition;
  /** The transaction index's aborted transactions overlapping [fetchOffset, upperBoundOffset). */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult;
  /** Unpins; idempotent. */
  release(): void;
}

/** The one fetch in flight for a segment; in `flights` from its start to its final synchronous section. */
class Flight {
  /** Callers awaiting this fetch (its starter included); each gets one pin when it completes. */
  waiters = 1;
  /** remove() arrived while the fetch ran: the entry is not cached, its files go to `.deleted`. */
  removed = false;
  readonly promise: Promise<Entry>;
  /** Resolves (never rejects) once the fetch has succeeded or failed. */
  readonly settled: Promise<void>;

  constructor(run: (flight: Flight) => Promise<Entry>) {
    this.promise = run(this);
    this.settled = this.promise.then(
      () => undefined,
      () => undefined,
    );
  }
}

export class RemoteIndexCache {
  readonly cacheDir: string;
  readonly stats: RemoteIndexCacheStats = {
    hitCount: 0,
    missCount: 0,
    loadSuccessCount: 0,
    loadFailureCount: 0,
    evictionCount: 0,
    evictionBytes: 0,
    corruptIndexCount: 0,
  };

  private readonly fs: StorageFs;
  private readonly rsm: RemoteStorageManager;
  private readonly time: Time;
  private readonly scheduler: Scheduler;
  private readonly ownScheduler: TimerScheduler | null;
  private readonly logger: Logger;
  private readonly fileDeleteDelayMs: number;
  private readonly maxResidentBytes: number;
  private maxSize: number;

  /** Cached entries by segment uuid, least recently used first. */
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  private readonly flights = new Map<string, Flight>();
  /** Unlinked entries whose files are not deleted yet. */
  private readonly unlinked = new Set<Entry>();
  /** Every path held by a cached or unlinked entry. */
  private readonly owned = new Set<string>();
  /** Entries with loaded indexes, least recently used first. */
  private readonly resident = new Set<Entry>();
  private residentBytes = 0;
  private closed = false;
  /** Pins held over all entries, and close()'s wait for them to reach 0. */
  private totalPins = 0;
  private allReleased: (() => void) | null = null;

  constructor(opts: RemoteIndexCacheOptions) {
    this.fs = opts.fs ?? nodeFs;
    this.rsm = opts.rsm;
    this.time = opts.time ?? SystemTime;
    this.logger = opts.logger ?? new Logger('storage').child('remote-index-cache');
    this.maxSize = opts.maxSizeBytes ?? DEFAULT_REMOTE_INDEX_CACHE_SIZE_BYTES;
    this.fileDeleteDelayMs = opts.fileDeleteDelayMs ?? DEFAULT_FILE_DELETE_DELAY_MS;
    this.maxResidentBytes = opts.maxResidentBytes ?? DEFAULT_MAX_RESIDENT_BYTES;
    if (opts.scheduler) {
      this.scheduler = opts.scheduler;
      this.ownScheduler = null;
    } else {
      this.ownScheduler = new TimerScheduler((name, err) => this.logger.error(`task ${name} failed`, { err }));
      this.scheduler = this.ownScheduler;
    }
    this.cacheDir = path.join(opts.logDir, REMOTE_INDEX_CACHE_DIR_NAME);
    this.init();
  }

  /** Total bytes of the cached entries' files. */
  get sizeBytes(): number {
    return this.totalBytes;
  }

  get entryCount(): number {
    return this.entries.size;
  }

  get maxSizeBytes(): number {
    return this.maxSize;
  }

  /** Unlinked entries whose `.deleted` files still exist (pinned or within the delete delay). */
  get pendingDeletionCount(): number {
    return this.unlinked.size;
  }

  /** Cached segment uuids, least recently used first. */
  cachedSegmentIds(): string[] {
    return [...this.entries.keys()];
  }

  isCached(segmentId: string): boolean {
    return this.entries.has(segmentId);
  }

  /** Kafka's resizeCacheSize: a new bound, applied at once by evicting least recently used entries. */
  resizeCacheSize(maxSizeBytes: number): void {
    if (!Number.isFinite(maxSizeBytes) || maxSizeBytes < 0) throw new RangeError(`invalid remote index cache size ${maxSizeBytes}`);
    this.maxSize = maxSizeBytes;
    this.evictOverLimit();
  }

  /** The file position in the remote segment to start reading at for `offset` (Kafka's lookupOffset). */
  async lookupOffset(md: RemoteLogSegmentMetadata, offset: bigint): Promise<number> {
    return this.withEntry(md, (e) => e.lookupOffset(offset).position);
  }

  /** The file position for the first record with a timestamp >= `timestamp` at or after `startingOffset` (Kafka's lookupTimestamp). */
  async lookupTimestamp(md: RemoteLogSegmentMetadata, timestamp: number, startingOffset: bigint): Promise<number> {
    return this.withEntry(md, (e) => e.lookupTimestamp(timestamp, startingOffset).position);
  }

  /** The aborted transactions of the segment overlapping [fetchOffset, upperBoundOffset) (the remote half of Kafka's collectAbortedTransactions). */
  async collectAbortedTransactions(md: RemoteLogSegmentMetadata, fetchOffset: bigint, upperBoundOffset: bigint): Promise<TxnIndexSearchResult> {
    return this.withEntry(md, (e) => e.collectAbortedTxns(fetchOffset, upperBoundOffset));
  }

  /**
   * Runs `fn` with the segment's indexes pinned for its whole duration (awaits included) and
   * releases the pin afterwards. A cached copy found corrupt is discarded and fetched again once.
   */
  async withEntry<T>(md: RemoteLogSegmentMetadata, fn: (lease: RemoteIndexLease) => T | Promise<T>): Promise<T> {
    const lease = await this.acquire(md);
    try {
      return await fn(lease);
    } finally {
      lease.release();
    }
  }

  /**
   * Kafka's getIndexEntry, as a lease the caller must release: the segment's cached entry, or the
   * one fetched (once, however many callers ask meanwhile) from the remote storage manager. Its
   * indexes are loaded and checked against `md` before it is returned.
   */
  async acquire(md: RemoteLogSegmentMetadata): Promise<RemoteIndexLease> {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.pin(md);
      try {
        this.ensureLoaded(entry, md);
        return this.lease(entry, md);
      } catch (e) {
        this.unpin(entry);
        if (!(e instanceof CorruptIndexError) || attempt > 0) throw e;
        this.stats.corruptIndexCount++;
        this.logger.warn(`discarding corrupt cached indexes of remote segment ${md.remoteLogSegmentId.id}: ${e.message}`);
        if (this.entries.get(entry.segmentId) === entry) this.unlink(entry);
      }
    }
  }

  /** Kafka's remove: the segment's entry leaves the cache; its files are deleted once unpinned and the delay has passed. */
  remove(segmentId: string): void {
    const entry = this.entries.get(segmentId);
    if (entry) {
      this.unlink(entry);
      return;
    }
    const flight = this.flights.get(segmentId);
    if (flight) flight.removed = true;
  }

  /** Kafka's removeAll (the deleter's batch of deleted remote segments). */
  removeAll(segmentIds: Iterable<string>): void {
    for (const id of segmentIds) this.remove(id);
  }

  /**
   * Refuses new reads, waits for fetches in flight and for every lease to be released (Kafka's
   * close waits for the reads in progress), then deletes the files of unlinked entries at once.
   * Cached files stay for the next start-up, as in Kafka. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.flights.values()].map((f) => f.settled));
    if (this.totalPins > 0) await new Promise<void>((r) => (this.allReleased = r));
    this.allReleased = null;
    for (const e of [...this.unlinked]) {
      e.deleteTask?.cancel();
      e.deleteTask = null;
      e.delayElapsed = true;
      this.maybeDelete(e);
    }
    for (const e of [...this.resident]) if (e.pins === 0) this.unload(e);
    this.ownScheduler?.shutdown();
    this.logger.info(
      `closed remote index cache ${this.cacheDir}: ${this.entries.size} entries, ${this.totalBytes} bytes, ` +
        `${this.unlinked.size} pending deletion, stats ${JSON.stringify(this.stats)}`,
    );
  }

  // ---- start-up ----------------------------------------------------------------------------

  private init(): void {
    const started = this.time.milliseconds();
    this.fs.mkdirSync(this.cacheDir, { recursive: true });
    const triples = new Map<string, { startOffset: bigint; segmentId: string; names: Partial<Record<Kind, string>> }>();
    for (const name of this.fs.readdirSync(this.cacheDir)) {
      const file = path.join(this.cacheDir, name);
      if (name.endsWith(REMOTE_INDEX_TMP_FILE_SUFFIX) || name.endsWith(DELETED_FILE_SUFFIX)) {
        this.unlinkQuietly(file);
        continue;
      }
      const m = CANONICAL_NAME.exec(name);
      if (!m) {
        this.logger.warn(`ignoring unexpected file ${file} in the remote index cache directory`);
        continue;
      }
      const prefix = `${m[1]}_${m[2]}`;
      const kind: Kind = m[3] === 'index' ? 'offset' : m[3] === 'timeindex' ? 'time' : 'txn';
      let t = triples.get(prefix);
      if (!t) triples.set(prefix, (t = { startOffset: BigInt(m[1]), segmentId: m[2], names: {} }));
      t.names[kind] = file;
    }
    const reloaded: { entry: Entry; mtime: number }[] = [];
    const seen = new Set<string>();
    for (const t of triples.values()) {
      const complete = KINDS.every((k) => t.names[k] !== undefined);
      const stats = complete ? KINDS.map((k) => this.fs.statSync(t.names[k] as string)) : [];
      const wellSized = complete && stats.every((s, i) => s !== undefined && s.isFile() && s.size % ENTRY_SIZE[KINDS[i]] === 0);
      if (!wellSized || seen.has(t.segmentId)) {
        // Kafka deletes incomplete triples; a malformed file or a second triple of the same segment goes too.
        if (complete && !wellSized) this.stats.corruptIndexCount++;
        for (const k of KINDS) if (t.names[k]) this.unlinkQuietly(t.names[k] as string);
        continue;
      }
      seen.add(t.segmentId);
      const paths = { offset: t.names.offset as string, time: t.names.time as string, txn: t.names.txn as string };
      const bytes = { offset: stats[0]!.size, time: stats[1]!.size, txn: stats[2]!.size };
      reloaded.push({ entry: new Entry(t.segmentId, t.startOffset, paths, bytes), mtime: Math.max(...stats.map((s) => s!.mtimeMs)) });
    }
    reloaded.sort((a, b) => a.mtime - b.mtime);
    for (const { entry } of reloaded) this.insert(entry);
    this.evictOverLimit();
    this.logger.info(
      `remote index cache ${this.cacheDir} started in ${this.time.milliseconds() - started} ms with ${this.entries.size} entries (${this.totalBytes} bytes)`,
    );
  }

  // ---- pins and fetches --------------------------------------------------------------------

  /** Finds or fetches the entry and pins it, in the same synchronous step as it is found or created. */
  private async pin(md: RemoteLogSegmentMetadata): Promise<Entry> {
    const id = md.remoteLogSegmentId.id;
    for (;;) {
      if (this.closed) throw new Error(`unable to fetch the indexes of remote segment ${id}: the remote index cache is closed`);
      const cached = this.entries.get(id);
      if (cached) {
        this.stats.hitCount++;
        this.touch(cached);
        cached.pins++;
        this.totalPins++;
        return cached;
      }
      const running = this.flights.get(id);
      if (running && running.removed) {
        await running.settled; // await point 1: see the header
        continue;
      }
      this.stats.missCount++;
      let flight: Flight;
      if (running) {
        flight = running;
        flight.waiters++;
      } else {
        // The flight is in `flights` before runFlight's first statement runs (it may fail synchronously).
        flight = new Flight((f) => {
          this.flights.set(id, f);
          return this.runFlight(md, f);
        });
      }
      return await flight.promise; // await point 1: already pinned for this caller when it resolves
    }
  }

  private async runFlight(md: RemoteLogSegmentMetadata, flight: Flight): Promise<Entry> {
    const id = md.remoteLogSegmentId.id;
    const canonical: Record<Kind, string> = {
      offset: path.join(this.cacheDir, remoteOffsetIndexFileName(md)),
      time: path.join(this.cacheDir, remoteTimeIndexFileName(md)),
      txn: path.join(this.cacheDir, remoteTransactionIndexFileName(md)),
    };
    const tmp: Partial<Record<Kind, string>> = {};
    const loaded: Partial<Loaded> = {};
    try {
      for (const k of KINDS) {
        if (this.owned.has(canonical[k])) throw new Error(`${canonical[k]} is still held by a removed entry of remote segment ${id}`);
      }
      // A valid file already under the canonical name (no entry owns it) is used as it is, as Kafka's loadIndexFile does.
      for (const k of KINDS) {
        if (!this.fs.existsSync(canonical[k])) continue;
        try {
          (loaded as Record<Kind, unknown>)[k] = this.loadIndex(k, canonical[k], md);
        } catch (e) {
          if (!(e instanceof CorruptIndexError)) throw e;
          this.stats.corruptIndexCount++;
          this.logger.info(`refetching corrupt cached index ${canonical[k]}: ${e.message}`);
        }
      }
      const missing = KINDS.filter((k) => loaded[k] === undefined);
      if (this.flights.get(id) !== flight) throw new Error(`internal: fetch of remote segment ${id} is not the segment's flight`);
      const fetched = await Promise.all(missing.map((k) => this.fetchIndex(md, k))); // await point 2

      // ---- synchronous from here to the end: write, check, rename, pin, insert ----
      for (let i = 0; i < missing.length; i++) {
        const k = missing[i];
        const t = canonical[k] + REMOTE_INDEX_TMP_FILE_SUFFIX;
        tmp[k] = t;
        this.writeFileDurably(t, fetched[i]);
        (loaded as Record<Kind, unknown>)[k] = this.loadIndex(k, t, md);
      }
      for (const k of missing) {
        this.closeIndex(loaded[k]!);
        loaded[k]!.renameTo(canonical[k]);
        delete tmp[k];
      }
      const full = loaded as Loaded;
      const entry = new Entry(id, md.startOffset, { ...canonical }, indexBytes(full));
      entry.loaded = full;
      entry.pins = flight.waiters;
      this.totalPins += flight.waiters;
      this.flights.delete(id);
      this.stats.loadSuccessCount++;
      this.insert(entry);
      this.markResident(entry);
      if (flight.removed) this.unlink(entry);
      else this.evictOverLimit();
      this.trimResident(entry);
      return entry;
    } catch (e) {
      if (this.flights.get(id) === flight) this.flights.delete(id);
      this.stats.loadFailureCount++;
      for (const k of KINDS) {
        if (loaded[k]) this.closeIndex(loaded[k]!);
        if (tmp[k]) this.unlinkQuietly(tmp[k] as string);
        if (!this.owned.has(canonical[k]) && this.fs.existsSync(canonical[k])) this.unlinkQuietly(canonical[k]);
      }
      this.logger.warn(`fetching the indexes of remote segment ${id} failed: ${(e as Error).message}`);
      throw e;
    }
  }

  private async fetchIndex(md: RemoteLogSegmentMetadata, kind: Kind): Promise<Buffer> {
    try {
      return await this.rsm.fetchIndex(md, INDEX_TYPE[kind]);
    } catch (e) {
      // A segment without transactions has no transaction index: Kafka caches an empty one.
      if (kind === 'txn' && e instanceof RemoteResourceNotFoundError) return Buffer.alloc(0);
      throw e;
    }
  }

  private writeFileDurably(file: string, data: Buffer): void {
    const fd = this.fs.openSync(file, 'w', 0o644);
    try {
      if (data.length > 0) writeFully(this.fs, fd, data, 0);
      this.fs.fsyncSync(fd);
    } finally {
      this.fs.closeSync(fd);
    }
  }

  /** Loads one index and checks it against the segment; throws CorruptIndexError. */
  private loadIndex(kind: Kind, file: string, md: RemoteLogSegmentMetadata): OffsetIndex | TimeIndex | TransactionIndex {
    const size = this.fs.statSync(file)?.size ?? 0;
    if (size % ENTRY_SIZE[kind] !== 0) throw new CorruptIndexError(`${file} has size ${size}, not a multiple of ${ENTRY_SIZE[kind]}`);
    const next = md.endOffset + 1n;
    if (kind === 'offset') {
      const idx = new OffsetIndex(this.fs, file, md.startOffset, INT32_MAX);
      idx.sanityCheck(md.segmentSizeInBytes, next);
      return idx;
    }
    if (kind === 'time') {
      const idx = new TimeIndex(this.fs, file, md.startOffset, INT32_MAX);
      idx.sanityCheck(md.segmentSizeInBytes, next);
      return idx;
    }
    const idx = new TransactionIndex(this.fs, file, md.startOffset);
    checkTxnEntries(file, idx.entries(), md);
    return idx;
  }

  /** Makes the entry's indexes loaded (from its current files, wherever they are), checked against `md`. */
  private ensureLoaded(entry: Entry, md: RemoteLogSegmentMetadata): Loaded {
    if (entry.loaded) {
      this.markResident(entry);
      return entry.loaded;
    }
    if (entry.startOffset !== md.startOffset) {
      throw new CorruptIndexError(`cached indexes of remote segment ${entry.segmentId} start at ${entry.startOffset}, the segment at ${md.startOffset}`);
    }
    const parts: Partial<Loaded> = {};
    try {
      for (const k of KINDS) (parts as Record<Kind, unknown>)[k] = this.loadIndex(k, entry.paths[k], md);
    } catch (e) {
      for (const k of KINDS) if (parts[k]) this.closeIndex(parts[k]!);
      throw e;
    }
    const loaded = parts as Loaded;
    for (const k of KINDS) this.closeIndex(loaded[k]);
    this.setBytes(entry, indexBytes(loaded));
    entry.loaded = loaded;
    this.markResident(entry);
    this.trimResident(entry);
    return loaded;
  }

  private lease(entry: Entry, md: RemoteLogSegmentMetadata): RemoteIndexLease {
    let released = false;
    const indexes = (): Loaded => {
      if (released) throw new Error(`lease on the indexes of remote segment ${entry.segmentId} used after release`);
      return this.ensureLoaded(entry, md);
    };
    return {
      segmentId: entry.segmentId,
      get files() {
        return { offsetIndex: entry.paths.offset, timeIndex: entry.paths.time, txnIndex: entry.paths.txn };
      },
      get offsetIndex() {
        return indexes().offset;
      },
      get timeIndex() {
        return indexes().time;
      },
      get txnIndex() {
        return indexes().txn;
      },
      lookupOffset: (offset) => indexes().offset.lookup(offset),
      lookupTimestamp: (timestamp, startingOffset) => {
        const l = indexes();
        const t = l.time.lookup(timestamp);
        return l.offset.lookup(t.offset > startingOffset ? t.offset : startingOffset);
      },
      collectAbortedTxns: (fetchOffset, upperBoundOffset) => indexes().txn.collectAbortedTxns(fetchOffset, upperBoundOffset),
      release: () => {
        if (released) return;
        released = true;
        this.unpin(entry);
      },
    };
  }

  private unpin(entry: Entry): void {
    entry.pins--;
    this.totalPins--;
    if (entry.pins < 0) throw new Error(`remote index entry ${entry.segmentId} unpinned more often than pinned`);
    if (entry.pins === 0) {
      if (entry.state === 'unlinked') this.maybeDelete(entry);
      else this.trimResident();
    }
    if (this.totalPins === 0 && this.allReleased) this.allReleased();
  }

  // ---- the map, eviction, deletion ---------------------------------------------------------

  private insert(entry: Entry): void {
    this.entries.set(entry.segmentId, entry);
    this.totalBytes += entry.sizeBytes;
    for (const k of KINDS) this.owned.add(entry.paths[k]);
  }

  private touch(entry: Entry): void {
    this.entries.delete(entry.segmentId);
    this.entries.set(entry.segmentId, entry);
  }

  private evictOverLimit(): void {
    while (this.totalBytes > this.maxSize && this.entries.size > 0) {
      const oldest = this.entries.values().next().value as Entry;
      this.stats.evictionCount++;
      this.stats.evictionBytes += oldest.sizeBytes;
      this.unlink(oldest);
    }
  }

  /**
   * Takes the entry out of the map and renames its files to unused `.deleted` names; deletion
   * follows when it is unpinned and the delay has passed. Never throws: a failed rename leaves
   * that file under its old name, still owned by the entry until it is deleted.
   */
  private unlink(entry: Entry): void {
    if (entry.state !== 'cached') return;
    this.entries.delete(entry.segmentId);
    this.totalBytes -= entry.sizeBytes;
    entry.state = 'unlinked';
    this.unlinked.add(entry);
    for (const k of KINDS) {
      const from = entry.paths[k];
      const to = this.unusedDeletedName(from);
      try {
        if (entry.loaded) entry.loaded[k].renameTo(to);
        else this.fs.renameSync(from, to);
      } catch (e) {
        if (!(isIoError(e) && e.code === 'ENOENT')) {
          this.logger.error(`renaming ${from} to ${to} failed; it is deleted with its entry`, { err: e });
          continue;
        }
        // Already gone (removed by hand): nothing to rename, and the canonical name is free.
      }
      this.owned.delete(from);
      this.owned.add(to);
      entry.paths[k] = to;
    }
    if (this.fileDeleteDelayMs > 0 && !this.closed) {
      entry.deleteTask = this.scheduler.scheduleOnce(`remote-index-delete-${entry.segmentId}`, this.fileDeleteDelayMs, () => {
        entry.deleteTask = null;
        entry.delayElapsed = true;
        this.maybeDelete(entry);
      });
    } else {
      entry.delayElapsed = true;
      this.maybeDelete(entry);
    }
  }

  /** `<file>.deleted` unless another entry holds it or it exists, else `<file>.<n>.deleted`. */
  private unusedDeletedName(file: string): string {
    for (let n = 0; ; n++) {
      const candidate = n === 0 ? file + DELETED_FILE_SUFFIX : `${file}.${n}${DELETED_FILE_SUFFIX}`;
      if (!this.owned.has(candidate) && !this.fs.existsSync(candidate)) return candidate;
    }
  }

  private maybeDelete(entry: Entry): void {
    if (entry.state !== 'unlinked' || entry.pins > 0 || !entry.delayElapsed) return;
    entry.state = 'deleted';
    this.unlinked.delete(entry);
    if (entry.loaded) this.unload(entry);
    for (const k of KINDS) {
      this.unlinkQuietly(entry.paths[k]);
      this.owned.delete(entry.paths[k]);
    }
  }

  // ---- in-memory copies --------------------------------------------------------------------

  private markResident(entry: Entry): void {
    if (this.resident.has(entry)) this.resident.delete(entry);
    else this.residentBytes += entry.sizeBytes;
    this.resident.add(entry);
  }

  /** Drops the least recently used loaded indexes beyond maxResidentBytes (never `keep`'s). */
  private trimResident(keep?: Entry): void {
    for (const e of this.resident) {
      if (this.residentBytes <= this.maxResidentBytes) return;
      if (e !== keep) this.unload(e);
    }
  }

  private unload(entry: Entry): void {
    if (entry.loaded) for (const k of KINDS) this.closeIndex(entry.loaded[k]);
    entry.loaded = null;
    if (this.resident.delete(entry)) this.residentBytes -= entry.sizeBytes;
  }

  /** A load may trim a zero tail off a file (AbstractIndex.load): keep the byte counts true to the disk. */
  private setBytes(entry: Entry, bytes: Record<Kind, number>): void {
    const delta = bytes.offset + bytes.time + bytes.txn - entry.sizeBytes;
    if (delta === 0) return;
    if (entry.state === 'cached') this.totalBytes += delta;
    if (this.resident.has(entry)) this.residentBytes += delta;
    Object.assign(entry.bytes, bytes);
  }

  private closeIndex(idx: OffsetIndex | TimeIndex | TransactionIndex): void {
    try {
      idx.close();
    } catch (e) {
      this.logger.warn(`closing ${idx.file} failed`, { err: e });
    }
  }

  private unlinkQuietly(file: string): void {
    try {
      this.fs.unlinkSync(file);
    } catch (e) {
      if (isIoError(e) && e.code === 'ENOENT') return;
      this.logger.error(`deleting ${file} failed`, { err: e });
    }
  }
}

function indexBytes(l: Loaded): Record<Kind, number> {
  return { offset: l.offset.sizeInBytes, time: l.time.sizeInBytes, txn: l.txn.entries().length * TXN_INDEX_ENTRY_SIZE };
}

/** Kafka's TransactionIndex.sanityCheck, plus the bounds of the segment: markers inside it, in increasing order. */
function checkTxnEntries(file: string, entries: readonly AbortedTxn[], md: RemoteLogSegmentMetadata): void {
  let prev = -1n;
  for (const [i, t] of entries.entries()) {
    if (t.lastOffset < md.startOffset || t.lastOffset > md.endOffset || t.lastOffset <= prev || t.firstOffset > t.lastOffset) {
      throw new CorruptIndexError(
        `transaction index ${file}: entry ${i} (first ${t.firstOffset}, last ${t.lastOffset}) outside segment [${md.startOffset}, ${md.endOffset}] or out of order`,
      );
    }
    prev = t.lastOffset;
  }
}
