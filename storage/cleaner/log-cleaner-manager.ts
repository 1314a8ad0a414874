/**
 * The cleaning state of every partition and the per-directory `cleaner-offset-checkpoint` files
 * (Kafka's LogCleanerManager): which compacted log is cleaned next, which are paused, which failed.
 *
 * States per partition (Kafka's LogCleaningState): none; InProgress (a pass or the compacted logs'
 * retention is running); Paused(n) (no pass may start; n pauses to undo). Kafka has a fourth,
 * Aborted, in which a pause request blocks until the running pass stops; here the pass is always
 * suspended at an await when anything else runs, and it checks `checkCleaningAborted` before it
 * touches the log again, so `abortAndPauseCleaning` marks the pass aborted and pauses at once (the
 * caller may truncate or delete right away, which is what Kafka's wait guarantees). An aborted pass
 * still running is remembered, so no second pass of the same partition starts before it has
 * deleted its `.cleaned` files.
 *
 * Which log is cleaned (grabFilthiestCompactedLog, Kafka's rules): among logs with cleanup.policy
 * containing compact, not in progress, not paused, not uncleanable (a pass failed on them before,
 * per log directory) and not offline: the cleanable range is [first dirty offset, first
 * uncleanable offset), the first dirty offset being the checkpointed one (reset to the log start
 * offset, and the checkpoint rewritten, when it is below the log start or above the log end), the
 * first uncleanable one the least of the last stable offset (itself bounded by the high watermark),
 * the active segment's base offset and, with min.compaction.lag.ms, the first dirty segment whose
 * largest timestamp is within the lag; rounded down to a segment boundary for the byte counts. The
 * dirty ratio is cleanable bytes / (clean + cleanable bytes); a log qualifies when the ratio is
 * above min.cleanable.dirty.ratio, or when max.compaction.lag.ms has passed since the first batch of
 * its earliest dirty segment (then it must have cleanable bytes); the highest ratio is chosen.
 *
 * Checkpoints: Kafka's offset checkpoint format (storage/checkpoint), one file per log directory,
 * read at every decision (a corrupt one counts as empty, and is logged), written atomically; an
 * update keeps only partitions that still have a log. A directory that goes offline loses its
 * checkpoint (nothing more is written there), as in Kafka's handleLogDirFailure.
 */
import * as path from 'node:path';
import { CorruptCheckpointError, OffsetCheckpointFile } from '../checkpoint/offset-checkpoint-file';
import { isIoError, type StorageFs } from '../fs';
import { compactEnabled, deleteEnabled, LONG_MAX } from '../log-config';
import type { UnifiedLog } from '../unified-log';
import { LogCleaningAbortedException } from './cleaner';
import type { Logger } from '../../common/logger';
import { topicPartitionKey, tpString, type TopicPartition } from '../../common/topic-partition';

export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint';

export type LogCleaningState = { kind: 'InProgress' } | { kind: 'Paused'; count: number };

/** A pass failed on this log for a reason other than an abort or an I/O error (Kafka's LogCleaningException). */
export class LogCleaningException extends Error {
  constructor(
    readonly log: UnifiedLog,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'LogCleaningException';
  }
}

export interface OffsetsToClean {
  firstDirtyOffset: bigint;
  firstUncleanableDirtyOffset: bigint;
  /** The checkpointed offset was out of the log's range and is to be rewritten as firstDirtyOffset. */
  forceUpdateCheckpoint: boolean;
}

/** Kafka's LogToClean: a log with its dirty range and its byte counts. */
export class LogToClean {
  readonly cleanBytes: number;
  readonly firstUncleanableOffset: bigint;
  readonly cleanableBytes: number;
  readonly totalBytes: number;
  readonly cleanableRatio: number;

  constructor(
    readonly topicPartition: TopicPartition,
    readonly log: UnifiedLog,
    readonly firstDirtyOffset: bigint,
    uncleanableOffset: bigint,
    readonly needCompactionNow = false,
  ) {
    this.cleanBytes = log.logSegmentsIn(-1n, firstDirtyOffset).reduce((n, s) => n + s.size, 0);
    const [firstUncleanable, cleanable] = calculateCleanableBytes(log, firstDirtyOffset, uncleanableOffset);
    this.firstUncleanableOffset = firstUncleanable;
    this.cleanableBytes = cleanable;
    this.totalBytes = this.cleanBytes + this.cleanableBytes;
    this.cleanableRatio = this.cleanableBytes / this.totalBytes;
  }
}

/** Pre-selection figures of one decision (Kafka's PreCleanStats). */
export class PreCleanStats {
  maxCompactionDelayMs = 0;
  delayedPartitions = 0;
  cleanablePartitions = 0;
  updateMaxCompactionDelay(delayMs: number): void {
    this.maxCompactionDelayMs = Math.max(this.maxCompactionDelayMs, delayMs);
    if (delayMs > 0) this.delayedPartitions++;
  }
}

/**
 * Kafka's calculateCleanableBytes: the base offset of the segment holding `uncleanableOffset` (the
 * active segment when it is past the others) and the bytes of the segments from the one holding
 * the first dirty offset up to it.
 */
export function calculateCleanableBytes(log: UnifiedLog, firstDirtyOffset: bigint, uncleanableOffset: bigint): [bigint, number] {
  const firstUncleanableSegment = log.nonActiveLogSegmentsFrom(uncleanableOffset)[0] ?? log.activeSegment;
  const firstUncleanableOffset = firstUncleanableSegment.baseOffset;
  const from = firstDirtyOffset < firstUncleanableOffset ? firstDirtyOffset : firstUncleanableOffset;
  const cleanableBytes = log.logSegmentsIn(from, firstUncleanableOffset).reduce((n, s) => n + s.size, 0);
  return [firstUncleanableOffset, cleanableBytes];
}

/**
 * Kafka's maxCompactionDelay: how far past max.compaction.lag.ms the earliest dirty non-active
 * segment is (by the max timestamp of its first batch), 0 when none is.
 */
export function maxCompactionDelay(log: UnifiedLog, firstDirtyOffset: bigint, now: number): number {
  let earliest = LONG_MAX;
  for (const s of log.nonActiveLogSegmentsFrom(firstDirtyOffset)) {
    const t = s.getFirstBatchTimestamp();
    if (t > 0 && t < earliest) earliest = t;
  }
  const maxCompactionLagMs = Math.max(log.config.maxCompactionLagMs, 0);
  const cleanUntilTime = now - maxCompactionLagMs;
  return earliest < cleanUntilTime ? cleanUntilTime - earliest : 0;
}

/** Kafka's cleanableOffsets (see the file header). */
export function cleanableOffsets(log: UnifiedLog, lastCleanOffset: bigint | undefined, now: number, logger?: Logger): OffsetsToClean {
  const logStartOffset = log.logStartOffset;
  const checkpointDirtyOffset = lastCleanOffset ?? logStartOffset;
  let firstDirtyOffset: bigint;
  let forceUpdateCheckpoint = false;
  if (checkpointDirtyOffset < logStartOffset) {
    // No warning with compact and delete: retention moves the log start past the checkpoint routinely.
    if (!(compactEnabled(log.config) && deleteEnabled(log.config))) {
      logger?.warn(`Resetting first dirty offset of ${tpString(log.topicPartition)} to log start offset ${logStartOffset} since the checkpointed offset ${checkpointDirtyOffset} is invalid.`);
    }
    firstDirtyOffset = logStartOffset;
    forceUpdateCheckpoint = true;
  } else if (checkpointDirtyOffset > log.logEndOffset) {
    // Ahead of the log end (data lost at the end of the log): the whole log is dirty again.
    logger?.warn(
      `The last checkpoint dirty offset for partition ${tpString(log.topicPartition)} is ${checkpointDirtyOffset}, which is larger than the log end offset ${log.logEndOffset}. Resetting to the log start offset ${logStartOffset}.`,
    );
    firstDirtyOffset = logStartOffset;
    forceUpdateCheckpoint = true;
  } else {
    firstDirtyOffset = checkpointDirtyOffset;
  }
  const minCompactionLagMs = Math.max(log.config.minCompactionLagMs, 0);
  // Not past the last stable offset (so every transaction seen is decided; it is at most the high
  // watermark), nor into the active segment, nor into segments younger than the compaction lag.
  let firstUncleanable = log.lastStableOffset;
  const activeBase = log.activeSegment.baseOffset;
  if (activeBase < firstUncleanable) firstUncleanable = activeBase;
  if (minCompactionLagMs > 0) {
    for (const s of log.nonActiveLogSegmentsFrom(firstDirtyOffset)) {
      const isUncleanable = s.largestTimestamp() > now - minCompactionLagMs;
      logger?.debug(
        `Checking if log segment may be cleaned: log='${tpString(log.topicPartition)}' segment.baseOffset=${s.baseOffset} segment.largestTimestamp=${s.largestTimestamp()}; now - compactionLag=${now - minCompactionLagMs}; is uncleanable=${isUncleanable}`,
      );
      if (isUncleanable) {
        if (s.baseOffset < firstUncleanable) firstUncleanable = s.baseOffset;
        break;
      }
    }
  }
  return {
    firstDirtyOffset,
    firstUncleanableDirtyOffset: firstUncleanable > firstDirtyOffset ? firstUncleanable : firstDirtyOffset,
    forceUpdateCheckpoint,
  };
}

export interface LogCleanerManagerOptions {
  logDirs: readonly string[];
  /** The logs of the broker (every directory), read at each decision. */
  logs: () => Iterable<UnifiedLog>;
  fs: StorageFs;
  logger: Logger;
  /** An I/O error on a checkpoint file: the log manager takes the directory offline. */
  onIoError: (dir: string, message: string, err: unknown) => void;
}

export class LogCleanerManager {
  private readonly checkpoints = new Map<string, OffsetCheckpointFile>();
  private readonly inProgress = new Map<string, LogCleaningState>();
  /** Partitions whose pass was aborted but has not finished yet (key -> the pass's token). */
  private readonly abortedPasses = new Map<string, symbol>();
  /** The running pass of each partition (its token), so an abort reaches the right one. */
  private readonly runningPasses = new Map<string, symbol>();
  private readonly uncleanable = new Map<string, Set<string>>();
  private readonly checkpointListeners = new Set<(tp: TopicPartition, offset: bigint) => void>();
  /** The dirtiest log's cleanable ratio at the last decision (Kafka's max-dirty-percent). */
  dirtiestLogCleanableRatio = 0;
  timeOfLastRun = 0;

  constructor(private readonly opts: LogCleanerManagerOptions) {
    for (const d of opts.logDirs) {
      const dir = path.resolve(d);
      this.checkpoints.set(dir, new OffsetCheckpointFile(opts.fs, path.join(dir, CLEANER_OFFSET_CHECKPOINT_FILE)));
    }
  }

  private logsByKey(): Map<string, UnifiedLog> {
    const m = new Map<string, UnifiedLog>();
    for (const l of this.opts.logs()) m.set(topicPartitionKey(l.topicPartition.topic, l.topicPartition.partition), l);
    return m;
  }

  private readCheckpoint(dir: string, file: OffsetCheckpointFile): Map<string, bigint> {
    const out = new Map<string, bigint>();
    try {
      for (const [k, e] of file.read()) out.set(k, e.offset);
    } catch (e) {
      if (e instanceof CorruptCheckpointError) {
        this.opts.logger.error(`Failed to access checkpoint file ${path.basename(file.file)} in dir ${dir}: ${e.message}`);
      } else if (isIoError(e)) {
        this.opts.onIoError(dir, `Failed to access checkpoint file ${file.file}: ${e.message}`, e);
      } else {
        throw e;
      }
    }
    return out;
  }

  /** Kafka's allCleanerCheckpoints: every checkpointed offset of every online directory, by partition key. */
  allCleanerCheckpoints(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const [dir, file] of this.checkpoints) for (const [k, v] of this.readCheckpoint(dir, file)) out.set(k, v);
    return out;
  }

  /** The checkpointed offset of one partition, if any. */
  checkpointedOffset(tp: TopicPartition): bigint | undefined {
    return this.allCleanerCheckpoints().get(topicPartitionKey(tp.topic, tp.partition));
  }

  /** Called after every checkpoint write with each updated partition (awaitCleaned, tests). */
  onCheckpointUpdated(listener: (tp: TopicPartition, offset: bigint) => void): () => void {
    this.checkpointListeners.add(listener);
    return () => this.checkpointListeners.delete(listener);
  }

  cleaningState(tp: TopicPartition): LogCleaningState | undefined {
    return this.inProgress.get(key(tp));
  }

  /** For tests (Kafka's setCleaningState). */
  setCleaningState(tp: TopicPartition, state: LogCleaningState): void {
    this.inProgress.set(key(tp), state);
  }

  private isUncleanablePartition(log: UnifiedLog): boolean {
    return this.uncleanable.get(path.resolve(log.parentDir))?.has(key(log.topicPartition)) ?? false;
  }

  private isEligible(log: UnifiedLog, k: string): boolean {
    return !log.isOffline && !log.isClosed && this.checkpoints.has(log.parentDir) && !this.inProgress.has(k) && !this.abortedPasses.has(k) && !this.isUncleanablePartition(log);
  }

  /**
   * Kafka's grabFilthiestCompactedLog (see the file header): the chosen log is marked InProgress
   * and returned with a token for its pass; undefined when no log qualifies.
   */
  grabFilthiestCompactedLog(now: number, preCleanStats = new PreCleanStats()): { ltc: LogToClean; pass: symbol } | undefined {
    this.timeOfLastRun = now;
    const lastClean = this.allCleanerCheckpoints();
    const dirtyLogs: LogToClean[] = [];
    for (const [k, log] of this.logsByKey()) {
      if (!compactEnabled(log.config) || !this.isEligible(log, k)) continue;
      let ltc: LogToClean;
      try {
        const offsetsToClean = cleanableOffsets(log, lastClean.get(k), now, this.opts.logger);
        if (offsetsToClean.forceUpdateCheckpoint) this.updateCheckpoints(log.parentDir, { tp: log.topicPartition, offset: offsetsToClean.firstDirtyOffset });
        const compactionDelayMs = maxCompactionDelay(log, offsetsToClean.firstDirtyOffset, now);
        preCleanStats.updateMaxCompactionDelay(compactionDelayMs);
        ltc = new LogToClean(log.topicPartition, log, offsetsToClean.firstDirtyOffset, offsetsToClean.firstUncleanableDirtyOffset, compactionDelayMs > 0);
      } catch (e) {
        throw new LogCleaningException(log, `Failed to calculate log cleaning stats for partition ${tpString(log.topicPartition)}: ${(e as Error).message}`, e);
      }
      if (ltc.totalBytes > 0) dirtyLogs.push(ltc);
    }
    this.dirtiestLogCleanableRatio = dirtyLogs.reduce((m, l) => Math.max(m, l.cleanableRatio), 0);
    const cleanable = dirtyLogs.filter((l) => (l.needCompactionNow && l.cleanableBytes > 0) || l.cleanableRatio > l.log.config.minCleanableDirtyRatio);
    if (cleanable.length === 0) return undefined;
    preCleanStats.cleanablePartitions = cleanable.length;
    let filthiest = cleanable[0];
    for (const l of cleanable) if (l.cleanableRatio > filthiest.cleanableRatio) filthiest = l;
    const k = key(filthiest.topicPartition);
    this.inProgress.set(k, { kind: 'InProgress' });
    const pass = Symbol(k);
    this.runningPasses.set(k, pass);
    return { ltc: filthiest, pass };
  }

  /**
   * Kafka's pauseCleaningForNonCompactedPartitions: the log manager's retention of logs without
   * compact pauses their cleaning (a policy changed meanwhile must not let a pass start); logs
   * already in progress are skipped.
   */
  pauseCleaningForNonCompactedPartitions(): UnifiedLog[] {
    const out: UnifiedLog[] = [];
    for (const [k, log] of this.logsByKey()) {
      if (compactEnabled(log.config) || this.inProgress.has(k)) continue;
      this.inProgress.set(k, { kind: 'Paused', count: 1 });
      out.push(log);
    }
    return out;
  }

  /**
   * Kafka's deletableLogs: compacted logs (compact alone too: segments below the log start offset)
   * whose retention the cleaner runs, marked InProgress meanwhile; `doneDeleting` ends it.
   */
  deletableLogs(): UnifiedLog[] {
    const out: UnifiedLog[] = [];
    for (const [k, log] of this.logsByKey()) {
      if (!compactEnabled(log.config) || !this.isEligible(log, k)) continue;
      this.inProgress.set(k, { kind: 'InProgress' });
      out.push(log);
    }
    return out;
  }

  /** Kafka's abortCleaning: abort (if running) and pause, then resume; the partition ends with no state. */
  abortCleaning(tp: TopicPartition): void {
    this.abortAndPauseCleaning(tp);
    this.resumeCleaning([tp]);
  }

  /**
   * Kafka's abortAndPauseCleaning: a running pass is aborted (it stops at its next check, before
   * touching the log), and no pass starts until `resumeCleaning` is called as many times.
   */
  abortAndPauseCleaning(tp: TopicPartition): void {
    const k = key(tp);
    const s = this.inProgress.get(k);
    if (s === undefined) {
      this.inProgress.set(k, { kind: 'Paused', count: 1 });
    } else if (s.kind === 'InProgress') {
      const pass = this.runningPasses.get(k);
      if (pass !== undefined) this.abortedPasses.set(k, pass);
      this.inProgress.set(k, { kind: 'Paused', count: 1 });
    } else {
      this.inProgress.set(k, { kind: 'Paused', count: s.count + 1 });
    }
  }

  /** Kafka's resumeCleaning: undoes one pause of each partition (IllegalState when it is not paused). */
  resumeCleaning(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const k = key(tp);
      const s = this.inProgress.get(k);
      if (s === undefined) throw new Error(`Compaction for partition ${tpString(tp)} cannot be resumed since it is not paused.`);
      if (s.kind !== 'Paused') throw new Error(`Compaction for partition ${tpString(tp)} cannot be resumed since it is in ${s.kind} state.`);
      if (s.count === 1) this.inProgress.delete(k);
      else this.inProgress.set(k, { kind: 'Paused', count: s.count - 1 });
    }
  }

  /** Kafka's checkCleaningAborted: throws LogCleaningAbortedException when the pass was aborted. */
  checkCleaningAborted(tp: TopicPartition, pass: symbol): void {
    if (this.abortedPasses.get(key(tp)) === pass) throw new LogCleaningAbortedException();
  }

  /**
   * Kafka's doneCleaning: a pass that ran to its end (not aborted) checkpoints `endOffset` and
   * leaves the InProgress state; an aborted one only forgets itself (the pause it left stays).
   */
  doneCleaning(tp: TopicPartition, dataDir: string, endOffset: bigint, pass: symbol): void {
    const k = key(tp);
    if (this.runningPasses.get(k) === pass) this.runningPasses.delete(k);
    if (this.abortedPasses.get(k) === pass) {
      this.abortedPasses.delete(k);
      return;
    }
    const s = this.inProgress.get(k);
    if (s === undefined) throw new Error(`State for partition ${tpString(tp)} should exist.`);
    if (s.kind !== 'InProgress') throw new Error(`In-progress partition ${tpString(tp)} cannot be in ${s.kind} state.`);
    this.updateCheckpoints(dataDir, { tp, offset: endOffset });
    this.inProgress.delete(k);
  }

  /** Kafka's doneDeleting: the compacted logs' retention run is over. */
  doneDeleting(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const k = key(tp);
      const s = this.inProgress.get(k);
      if (s === undefined) throw new Error(`State for partition ${tpString(tp)} should exist.`);
      if (s.kind !== 'InProgress') throw new Error(`In-progress partition ${tpString(tp)} cannot be in ${s.kind} state.`);
      this.inProgress.delete(k);
    }
  }

  /**
   * Kafka's updateCheckpoints: rewrites a directory's checkpoint with partitions that still have a
   * log, `update` added or replaced, `remove` removed. An I/O error is reported (the directory goes
   * offline), never thrown.
   */
  updateCheckpoints(dataDir: string, update?: { tp: TopicPartition; offset: bigint }, remove?: TopicPartition): void {
    const dir = path.resolve(dataDir);
    const file = this.checkpoints.get(dir);
    if (!file) return;
    const logs = this.logsByKey();
    const current = new Map<string, { tp: TopicPartition; offset: bigint }>();
    try {
      for (const [k, e] of file.read()) if (logs.has(k)) current.set(k, { tp: e.tp, offset: e.offset });
    } catch (e) {
      if (e instanceof CorruptCheckpointError) this.opts.logger.error(`Failed to access checkpoint file ${path.basename(file.file)} in dir ${dir}: ${e.message}`);
      else if (isIoError(e)) {
        this.opts.onIoError(dir, `Failed to access checkpoint file ${file.file}: ${e.message}`, e);
        return;
      } else throw e;
    }
    if (remove) current.delete(key(remove));
    if (update) current.set(key(update.tp), update);
    try {
      file.write(current.values());
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.opts.onIoError(dir, `Failed to access checkpoint file ${file.file}: ${e.message}`, e);
      return;
    }
    if (update) for (const l of this.checkpointListeners) l(update.tp, update.offset);
  }

  /**
   * Kafka's alterCheckpointDir: a replica moved between log directories (AlterReplicaLogDirs) takes
   * its cleaner checkpoint along (removed from the source directory's file, added to the
   * destination's), so the moved log is neither recleaned from scratch nor recovered as contiguous.
   */
  alterCheckpointDir(tp: TopicPartition, sourceDir: string, destDir: string): void {
    const src = path.resolve(sourceDir);
    const file = this.checkpoints.get(src);
    if (!file) return;
    const offset = this.readCheckpoint(src, file).get(key(tp));
    if (offset === undefined) return;
    this.updateCheckpoints(src, undefined, tp);
    this.updateCheckpoints(destDir, { tp, offset });
  }

  /** Kafka's maybeTruncateCheckpoint: a compacted log's checkpoint above `offset` comes down to it (truncation). */
  maybeTruncateCheckpoint(dataDir: string, tp: TopicPartition, offset: bigint): void {
    const log = this.logsByKey().get(key(tp));
    if (!log || !compactEnabled(log.config)) return;
    const dir = path.resolve(dataDir);
    const file = this.checkpoints.get(dir);
    if (!file) return;
    const existing = this.readCheckpoint(dir, file).get(key(tp)) ?? 0n;
    if (existing > offset) this.updateCheckpoints(dir, { tp, offset });
  }

  /** Kafka's handleLogDirFailure: the directory's checkpoint is dropped; nothing is written there any more. */
  handleLogDirFailure(dir: string): void {
    this.opts.logger.warn(`Stopping cleaning logs in dir ${dir}`);
    this.checkpoints.delete(path.resolve(dir));
  }

  markPartitionUncleanable(logDir: string, tp: TopicPartition): void {
    const dir = path.resolve(logDir);
    let s = this.uncleanable.get(dir);
    if (!s) this.uncleanable.set(dir, (s = new Set()));
    s.add(key(tp));
  }

  /** The uncleanable partitions of a directory, as "topic-partition" names (tests, logs). */
  uncleanablePartitions(logDir: string): string[] {
    // A key is topic NUL partition (topicPartitionKey); a topic name holds no NUL.
    return [...(this.uncleanable.get(path.resolve(logDir)) ?? [])].map((k) => k.replace('\0', '-'));
  }

  /**
   * Kafka's uncleanable-partitions-count and uncleanable-bytes gauges, per log directory with
   * uncleanable partitions: how many, and the cleanable bytes they hold (what cleaning them would
   * read), from their checkpoints as a decision would compute them at `now`.
   */
  uncleanableStats(now: number): { logDir: string; partitions: number; bytes: number }[] {
    const logs = this.logsByKey();
    const checkpoints = this.allCleanerCheckpoints();
    const out: { logDir: string; partitions: number; bytes: number }[] = [];
    for (const [dir, parts] of this.uncleanable) {
      let bytes = 0;
      for (const k of parts) {
        const log = logs.get(k);
        if (!log || log.isOffline || log.isClosed) continue;
        const offsets = cleanableOffsets(log, checkpoints.get(k), now);
        bytes += calculateCleanableBytes(log, offsets.firstDirtyOffset, offsets.firstUncleanableDirtyOffset)[1];
      }
      out.push({ logDir: dir, partitions: parts.size, bytes });
    }
    return out;
  }

  /** Kafka's maintainUncleanablePartitions: deleted partitions are forgotten. */
  maintainUncleanablePartitions(): void {
    const logs = this.logsByKey();
    for (const [dir, parts] of this.uncleanable) {
      for (const k of parts) if (!logs.has(k)) parts.delete(k);
      if (parts.size === 0) this.uncleanable.delete(dir);
    }
  }
}

function key(tp: TopicPartition): string {
  return topicPartitionKey(tp.topic, tp.partition);
}
