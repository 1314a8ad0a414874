/**
 * The on-disk part of one partition log (Kafka's LocalLog): the directory, its segments, the log
 * end offset (LEO) and the recovery point (everything below it is known to be fsynced).
 *
 * Owns: segment creation (roll), deletion (rename to *.deleted, physical removal after
 * file.delete.delay.ms), truncation, flushing, reads across segments, and the directory's name
 * (renamed `-delete` once closed, or renamed while open when a future replica is promoted: its
 * segments then name their files in the new directory, their descriptors untouched).
 *
 * Invariants: the active (last) segment's base offset <= LEO; LEO is the offset after the last
 * batch written; recoveryPoint <= LEO. `append` writes the batches, moves the LEO, and only then
 * touches the indexes (KAFKA-7866): if the index step throws, the offsets handed out are already
 * behind the LEO and can never be handed out again; UnifiedLog takes the log offline.
 *
 * Every method runs synchronously to completion, so the state cannot interleave across an await.
 * The only asynchronous work is background fsync (after a roll, or the flush.ms flusher); its
 * completion only ever raises the recovery point, and a truncation in the meantime (tracked by
 * `generation`) voids it.
 */
import type { LogFlushStats } from './log-flush-stats';
import * as path from 'node:path';
import type { ReadBufferPool } from './read-buffer-pool';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { StorageFs } from './fs';
import { LogConfig } from './log-config';
import { CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX, logFile, offsetIndexFile, timeIndexFile, transactionIndexFile } from './log-file-utils';
import { FetchDataInfo, LogOffsetMetadata, LogSegment, emptyFetchDataInfo } from './log-segment';
import { LogSegments } from './log-segments';
import { ScheduledTask, Scheduler } from '../common/scheduler';
import { Logger } from '../common/logger';
import { Time } from '../common/time';
import { TopicPartition } from '../common/topic-partition';
import { bigMax, bigMin } from '../common/bigint';

export interface LocalLogParams {
  fs: StorageFs;
  dir: string;
  tp: TopicPartition;
  config: LogConfig;
  segments: LogSegments;
  recoveryPoint: bigint;
  logEndOffset: bigint;
  time: Time;
  scheduler: Scheduler;
  logger: Logger;
  /** Background failures (async flush, delayed file deletion) are reported here. */
  onBackgroundError: (what: string, err: unknown) => void;
  /** Counts every flush that fsynced something (LogFlushRateAndTimeMs). */
  flushStats?: LogFlushStats;
}

export interface AppendParams {
  records: Buffer;
  firstOffset: bigint;
  lastOffset: bigint;
  largestTimestamp: number;
  shallowOffsetOfMaxTimestamp: bigint;
}

export class LocalLog {
  private _dir: string;
  config: LogConfig;
  readonly segments: LogSegments;
  private _recoveryPoint: bigint;
  private nextOffsetMetadata: LogOffsetMetadata;
  private _lastFlushedTime: number;
  /** Bumped by truncation: background flushes that started before it must not move the recovery point. */
  private generation = 0;
  private dirNeedsFsync = false;
  private readonly pendingDeletes = new Map<LogSegment, ScheduledTask>();
  private readonly backgroundFlushes = new Set<Promise<void>>();
  private closed = false;
  /** Cached file position of an upper-bound offset (the high watermark, usually) for reads. */
  private boundCache: { offset: bigint; generation: number; segments: number; md: LogOffsetMetadata } | null = null;
  private layoutVersion = 0;

  readonly fs: StorageFs;
  readonly tp: TopicPartition;
  private readonly time: Time;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly onBackgroundError: (what: string, err: unknown) => void;
  private readonly flushStats: LogFlushStats | undefined;

  constructor(p: LocalLogParams) {
    this.fs = p.fs;
    this._dir = p.dir;
    this.tp = p.tp;
    this.config = p.config;
    this.segments = p.segments;
    this.time = p.time;
    this.scheduler = p.scheduler;
    this.logger = p.logger;
    this.onBackgroundError = p.onBackgroundError;
    this.flushStats = p.flushStats;
    this._recoveryPoint = p.recoveryPoint;
    this._lastFlushedTime = p.time.milliseconds();
    const active = this.segments.activeSegment;
    this.nextOffsetMetadata = { messageOffset: p.logEndOffset, segmentBaseOffset: active.baseOffset, relativePositionInSegment: active.size };
  }

  get dir(): string {
    return this._dir;
  }

  get parentDir(): string {
    return path.dirname(this._dir);
  }

  get logEndOffset(): bigint {
    return this.nextOffsetMetadata.messageOffset;
  }

  get logEndOffsetMetadata(): LogOffsetMetadata {
    return this.nextOffsetMetadata;
  }

  get recoveryPoint(): bigint {
    return this._recoveryPoint;
  }

  get lastFlushedTime(): number {
    return this._lastFlushedTime;
  }

  get unflushedMessages(): bigint {
    return this.logEndOffset - this._recoveryPoint;
  }

  get activeSegment(): LogSegment {
    return this.segments.activeSegment;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private checkNotClosed(): void {
    if (this.closed) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `log ${this._dir} is closed`);
  }

  updateLogEndOffset(offset: bigint): void {
    const active = this.segments.activeSegment;
    this.nextOffsetMetadata = { messageOffset: offset, segmentBaseOffset: active.baseOffset, relativePositionInSegment: active.size };
    if (this._recoveryPoint > offset) this._recoveryPoint = offset;
  }

  updateRecoveryPoint(offset: bigint): void {
    this._recoveryPoint = offset;
  }

  /**
   * The append, in KAFKA-7866 order: write the batches to the active segment's .log, advance the
   * LEO, then update the indexes. A throw from the first step leaves the LEO unchanged; a throw from
   * the last leaves it advanced (the caller must take the log offline).
   */
  append(a: AppendParams): void {
    this.checkNotClosed();
    const seg = this.segments.activeSegment;
    const position = seg.appendToLog(a.records, a.lastOffset, a.largestTimestamp);
    this.updateLogEndOffset(a.lastOffset + 1n);
    seg.updateIndexes({ position, records: a.records });
  }

  /**
   * Starts a new active segment at max(expectedNextOffset, LEO). The new segment is opened before
   * the old one is retired, so a failure leaves the old one active.
   */
  roll(expectedNextOffset?: bigint): LogSegment {
    this.checkNotClosed();
    const newOffset = bigMax(expectedNextOffset ?? 0n, this.logEndOffset);
    const active = this.segments.activeSegment;
    if (this.segments.contains(newOffset)) {
      if (active.baseOffset === newOffset && active.size === 0) {
        this.logger.warn(`trying to roll a new segment at ${newOffset} while an empty active segment exists there; replacing it`);
        this.removeAndDeleteSegments([active], true);
      } else {
        throw new KafkaError(
          ErrorCode.UNKNOWN_SERVER_ERROR,
          `trying to roll a new log segment at ${newOffset} (LEO ${this.logEndOffset}) while segment ${newOffset} already exists`,
        );
      }
    } else if (newOffset < active.baseOffset) {
      throw new KafkaError(
        ErrorCode.UNKNOWN_SERVER_ERROR,
        `trying to roll a new log segment at ${newOffset} below the active segment's base offset ${active.baseOffset}`,
      );
    } else {
      for (const f of [logFile(this._dir, newOffset), offsetIndexFile(this._dir, newOffset), timeIndexFile(this._dir, newOffset), transactionIndexFile(this._dir, newOffset)]) {
        if (this.fs.existsSync(f)) {
          this.logger.warn(`deleting stale file ${f} before rolling a segment at ${newOffset}`);
          this.fs.unlinkSync(f);
        }
      }
    }
    const seg = LogSegment.open({ fs: this.fs, dir: this._dir, baseOffset: newOffset, config: this.config, time: this.time, fileAlreadyExists: false });
    try {
      const last = this.segments.lastSegment;
      if (last && this.segments.contains(last.baseOffset)) last.onBecomeInactiveSegment();
    } catch (e) {
      seg.closeHandlers();
      throw e;
    }
    this.segments.add(seg);
    this.layoutVersion++;
    this.dirNeedsFsync = true;
    this.updateLogEndOffset(this.logEndOffset);
    this.logger.info(`rolled new log segment at offset ${newOffset}`);
    return seg;
  }

  /** fsync every segment holding offsets in [recoveryPoint, offset), then raise the recovery point. */
  flush(offset: bigint): void {
    this.checkNotClosed();
    if (offset <= this._recoveryPoint) return;
    const started = performance.now();
    for (const seg of this.segments.valuesInRange(this._recoveryPoint, offset)) seg.flush();
    if (this.dirNeedsFsync) {
      this.fs.fsyncDirSync(this._dir);
      this.dirNeedsFsync = false;
    }
    this.flushStats?.record(performance.now() - started);
    if (offset > this._recoveryPoint) {
      this._recoveryPoint = bigMin(offset, this.logEndOffset);
      this._lastFlushedTime = this.time.milliseconds();
    }
  }

  /** The same, with the fsyncs on the thread pool; failures go to onBackgroundError. */
  flushInBackground(offset: bigint): Promise<void> {
    if (this.closed || offset <= this._recoveryPoint) return Promise.resolve();
    const segs = this.segments.valuesInRange(this._recoveryPoint, offset);
    const gen = this.generation;
    const needDir = this.dirNeedsFsync;
    this.dirNeedsFsync = false;
    const started = performance.now();
    let pending: Promise<void>[];
    try {
      pending = segs.map((s) => s.flushAsync());
    } catch (e) {
      this.onBackgroundError('flush', e);
      return Promise.resolve();
    }
    const done = Promise.all(pending).then(
      () => {
        if (this.closed) return;
        try {
          if (needDir) this.fs.fsyncDirSync(this._dir);
        } catch (e) {
          this.onBackgroundError('flush', e);
          return;
        }
        this.flushStats?.record(performance.now() - started);
        if (gen === this.generation && offset > this._recoveryPoint && offset <= this.logEndOffset) {
          this._recoveryPoint = offset;
          this._lastFlushedTime = this.time.milliseconds();
        }
      },
      (err) => {
        if (!this.closed) this.onBackgroundError('flush', err);
      },
    );
    this.backgroundFlushes.add(done);
    void done.finally(() => this.backgroundFlushes.delete(done));
    return done;
  }

  /** Resolves when every background flush started so far has finished (tests, shutdown). */
  async whenBackgroundFlushesDone(): Promise<void> {
    while (this.backgroundFlushes.size > 0) await Promise.all([...this.backgroundFlushes]);
  }

  /** Position metadata of `offset` (the start of the batch holding it), for read upper bounds. */
  offsetMetadata(offset: bigint): LogOffsetMetadata {
    if (offset >= this.logEndOffset) return this.nextOffsetMetadata;
    const c = this.boundCache;
    if (c && c.offset === offset && c.generation === this.generation && c.segments === this.layoutVersion) return c.md;
    const seg = this.segments.floorSegment(offset);
    let md: LogOffsetMetadata;
    if (!seg) {
      md = { messageOffset: offset, segmentBaseOffset: -1n, relativePositionInSegment: -1 };
    } else {
      const h = seg.translateOffset(offset);
      md = { messageOffset: offset, segmentBaseOffset: seg.baseOffset, relativePositionInSegment: h ? h.position : seg.size };
    }
    this.boundCache = { offset, generation: this.generation, segments: this.layoutVersion, md };
    return md;
  }

  /**
   * Bytes of log between two offsets (from the batch holding `from` to the batch holding `to`),
   * without reading them: what a delayed fetch waiting for min.bytes asks on every wake-up.
   */
  bytesBetween(from: bigint, to: bigint): number {
    if (to <= from) return 0;
    const a = this.offsetMetadata(from);
    const b = this.offsetMetadata(bigMin(to, this.logEndOffset));
    if (a.segmentBaseOffset < 0n || b.segmentBaseOffset < 0n) return 0;
    if (a.segmentBaseOffset === b.segmentBaseOffset) return Math.max(0, b.relativePositionInSegment - a.relativePositionInSegment);
    let total = 0;
    for (const seg of this.segments.valuesInRange(a.segmentBaseOffset, b.segmentBaseOffset + 1n)) {
      const start = seg.baseOffset === a.segmentBaseOffset ? a.relativePositionInSegment : 0;
      const end = seg.baseOffset === b.segmentBaseOffset ? b.relativePositionInSegment : seg.size;
      total += Math.max(0, end - start);
    }
    return total;
  }

  /**
   * Whole batches from the one holding `startOffset`, up to `maxLength` bytes, strictly below
   * `upperBound` (exclusive: high watermark, LSO or LEO). Data comes from one segment per call,
   * as in Kafka. OFFSET_OUT_OF_RANGE if startOffset is past the LEO or below the first segment.
   */
  read(startOffset: bigint, maxLength: number, minOneMessage: boolean, upperBound: bigint, pool?: ReadBufferPool): FetchDataInfo {
    this.checkNotClosed();
    const endOffset = this.logEndOffset;
    let idx = this.segments.indexOfFloor(startOffset);
    if (startOffset > endOffset || idx < 0) {
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `received request for offset ${startOffset} for partition ${this.tp.topic}-${this.tp.partition}, but the log has offsets [${this.segments.firstSegment?.baseOffset}, ${endOffset})`,
      );
    }
    const bound = this.offsetMetadata(bigMin(upperBound, endOffset));
    if (startOffset === bound.messageOffset) return emptyFetchDataInfo(bound);
    if (startOffset > bound.messageOffset) return emptyFetchDataInfo(this.offsetMetadata(startOffset));
    for (; idx < this.segments.size; idx++) {
      const seg = this.segments.at(idx) as LogSegment;
      if (bound.segmentBaseOffset >= 0n && bound.segmentBaseOffset < seg.baseOffset) break;
      const maxPosition = bound.segmentBaseOffset === seg.baseOffset ? bound.relativePositionInSegment : seg.size;
      const info = seg.read(startOffset, maxLength, maxPosition, minOneMessage, pool);
      if (info) return info;
    }
    // The start offset is in range but nothing at or after it remains (e.g. a gap before the LEO).
    return emptyFetchDataInfo(this.nextOffsetMetadata);
  }

  /**
   * Removes everything at or after `targetOffset` (a batch straddling it goes whole; the LEO then
   * becomes that batch's base offset). Returns the deleted segments.
   */
  truncateTo(targetOffset: bigint): LogSegment[] {
    this.checkNotClosed();
    if (targetOffset >= this.logEndOffset) return [];
    this.generation++;
    this.layoutVersion++;
    const doomed = this.segments.values().filter((s) => s.baseOffset > targetOffset);
    this.removeAndDeleteSegments(doomed, true);
    const active = this.segments.activeSegment;
    const h = active.translateOffset(targetOffset);
    const newLeo = h && h.baseOffset < targetOffset ? h.baseOffset : targetOffset;
    active.truncateTo(targetOffset);
    this.updateLogEndOffset(bigMax(newLeo, active.baseOffset));
    return doomed;
  }

  /** Deletes every segment and starts an empty one at `newOffset`. */
  truncateFullyAndStartAt(newOffset: bigint): LogSegment[] {
    this.checkNotClosed();
    this.generation++;
    this.layoutVersion++;
    const doomed = this.segments.values();
    // Rename the old files out of the way first: the new segment may reuse a base offset's name.
    for (const s of doomed) {
      this.segments.remove(s.baseOffset);
      this.retireSegment(s, true);
    }
    for (const f of [logFile(this._dir, newOffset), offsetIndexFile(this._dir, newOffset), timeIndexFile(this._dir, newOffset)]) {
      if (this.fs.existsSync(f)) this.fs.unlinkSync(f);
    }
    const seg = LogSegment.open({ fs: this.fs, dir: this._dir, baseOffset: newOffset, config: this.config, time: this.time, fileAlreadyExists: false });
    this.segments.add(seg);
    this.dirNeedsFsync = true;
    this.updateLogEndOffset(newOffset);
    this._recoveryPoint = newOffset;
    return doomed;
  }

  /**
   * Kafka's createNewCleanedSegment: a fresh segment at `baseOffset` whose files carry the
   * `.cleaned` suffix (leftovers of an earlier, interrupted pass at that offset are deleted first).
   * It is not part of the log until `replaceSegments` swaps it in.
   */
  createNewCleanedSegment(baseOffset: bigint): LogSegment {
    this.checkNotClosed();
    LogSegment.deleteIfExists(this.fs, this._dir, baseOffset, CLEANED_FILE_SUFFIX);
    return LogSegment.open({ fs: this.fs, dir: this._dir, baseOffset, config: this.config, time: this.time, fileAlreadyExists: false, suffix: CLEANED_FILE_SUFFIX });
  }

  /**
   * Kafka's LocalLog.replaceSegments: swaps cleaned segments (files `*.cleaned`, flushed) in for
   * `oldSegments`, in the order that keeps a crash at any point recoverable by the loader
   * (log-loader.ts):
   *  1. each new segment's files are renamed `.cleaned` -> `.swap`, highest base offset first, and
   *     the directory is fsynced. A crash before every file is renamed leaves a `.cleaned` file at
   *     an offset <= every `.swap` one: the loader deletes both kinds and the old segments stand;
   *  2. the new segments enter the segment list (one with an old segment's base offset replaces it);
   *  3. each old segment still in the log leaves it and its files are renamed `.deleted` (removed
   *     after file.delete.delay.ms). A crash here leaves complete `.swap` files: the loader deletes
   *     every non-swap file with a base offset in [lowest swap base, highest swap next offset) and
   *     renames the swap files into place;
   *  4. the `.swap` suffixes are removed and the directory is fsynced. A crash midway leaves some
   *     `.swap` files next to renamed ones of the same segment: the loader renames the rest.
   * Returns the old segments whose base offset no new segment took (their producer snapshots go).
   * Synchronous: nothing can observe the segment list half-replaced. An I/O error propagates (the
   * caller takes the directory offline; the files are in one of the states above).
   */
  replaceSegments(newSegments: LogSegment[], oldSegments: LogSegment[]): LogSegment[] {
    this.checkNotClosed();
    const sortedNew = [...newSegments].sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
    if (sortedNew.length === 0) throw new Error('replaceSegments needs at least one new segment');
    // Old segments already removed (retention, truncation) since the caller listed them are skipped.
    const sortedOld = oldSegments
      .filter((s) => this.segments.get(s.baseOffset) === s)
      .sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
    for (const seg of [...sortedNew].reverse()) {
      if (seg.hasSuffix(CLEANED_FILE_SUFFIX)) seg.changeFileSuffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX);
    }
    this.fs.fsyncDirSync(this._dir);
    for (const seg of [...sortedNew].reverse()) this.segments.add(seg);
    this.layoutVersion++;
    const newBases = new Set(sortedNew.map((s) => s.baseOffset));
    const deletedNotReplaced: LogSegment[] = [];
    for (const old of sortedOld) {
      if (old.baseOffset !== sortedNew[0].baseOffset && !newBases.has(old.baseOffset)) this.segments.remove(old.baseOffset);
      this.retireSegment(old, true);
      if (!newBases.has(old.baseOffset)) deletedNotReplaced.push(old);
    }
    for (const seg of sortedNew) seg.changeFileSuffixes(SWAP_FILE_SUFFIX, '');
    this.fs.fsyncDirSync(this._dir);
    this.layoutVersion++;
    return deletedNotReplaced;
  }

  /**
   * Takes segments out of the log, renames their files to *.deleted and removes them after
   * file.delete.delay.ms (asyncDelete) or now. A crash in between leaves *.deleted files, which the
   * loader removes.
   */
  removeAndDeleteSegments(segs: LogSegment[], asyncDelete: boolean): void {
    if (segs.length === 0) return;
    this.layoutVersion++;
    for (const s of segs) this.segments.remove(s.baseOffset);
    for (const s of segs) this.retireSegment(s, asyncDelete);
  }

  private retireSegment(s: LogSegment, asyncDelete: boolean): void {
    if (!s.hasSuffix(DELETED_FILE_SUFFIX)) s.changeFileSuffixes('', DELETED_FILE_SUFFIX);
    const run = () => {
      this.pendingDeletes.delete(s);
      try {
        s.closeHandlers();
        s.deleteIfExists();
      } catch (e) {
        this.onBackgroundError('delete segment', e);
      }
    };
    if (!asyncDelete) {
      run();
      return;
    }
    const task = this.scheduler.scheduleOnce(`delete-file-${s.baseOffset}`, this.config.fileDeleteDelayMs, run);
    this.pendingDeletes.set(s, task);
  }

  /** Segments whose files are renamed to .deleted but not yet removed. */
  get pendingDeletionCount(): number {
    return this.pendingDeletes.size;
  }

  /** Removes pending *.deleted files now (shutdown, log deletion). */
  deletePendingNow(): void {
    for (const [s, task] of [...this.pendingDeletes]) {
      task.cancel();
      this.pendingDeletes.delete(s);
      s.closeHandlers();
      try {
        s.deleteIfExists();
      } catch (e) {
        this.onBackgroundError('delete segment', e);
      }
    }
  }

  /**
   * Renames the log directory: deletion marks a closed log `-delete`; promoting a future replica
   * (`reinitialize`, Kafka's renameDir(shouldReinitialize = true)) renames an open one, whose
   * segments (and segments awaiting deletion) then name their files in the new directory (open
   * descriptors stay valid across a rename). The parent directory is fsynced by the caller.
   */
  renameDir(newName: string, opts: { reinitialize?: boolean } = {}): void {
    const target = path.join(path.dirname(this._dir), newName);
    this.fs.renameSync(this._dir, target);
    this._dir = target;
    if (opts.reinitialize) {
      for (const s of this.segments.values()) s.updateParentDir(target);
      for (const s of this.pendingDeletes.keys()) s.updateParentDir(target);
      this.boundCache = null;
    }
  }

  close(): void {
    if (this.closed) return;
    this.deletePendingNow();
    this.closed = true;
    let first: unknown;
    for (const s of this.segments.values()) {
      try {
        s.close();
      } catch (e) {
        first ??= e;
      }
    }
    if (first) throw first;
  }

  /** Drops every handle without writing (the directory failed). Never throws. */
  closeHandlers(): void {
    this.closed = true;
    for (const [s, task] of this.pendingDeletes) {
      task.cancel();
      s.closeHandlers();
    }
    this.pendingDeletes.clear();
    for (const s of this.segments.values()) s.closeHandlers();
  }
}
