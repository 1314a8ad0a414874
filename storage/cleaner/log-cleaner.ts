/**
 * The log cleaner (Kafka's LogCleaner and its CleanerThreads), run inside the broker process:
 * log.cleaner.threads loops, each of which repeatedly picks the filthiest compacted log
 * (LogCleanerManager), cleans it (Cleaner), then runs the retention of the compacted logs
 * (deleteOldSegments: compact,delete retention, and segments below the log start offset of
 * compact-only logs), and pauses log.cleaner.backoff.ms when there was nothing to clean.
 *
 * A "thread" here is an async loop on the event loop, not an OS thread: each pass works in chunks
 * that yield (cleaner.ts lists what may happen at each await and why it is safe), so
 * log.cleaner.threads is how many logs are cleaned at once, each with its own offset map
 * (log.cleaner.dedupe.buffer.size / threads) and I/O buffers (log.cleaner.io.buffer.size / threads
 * / 2 each); the throttle (log.cleaner.io.max.bytes.per.second) is shared. worker_threads were not
 * used: storage is synchronous and single-threaded by design (no log locks), a worker would need
 * its own file handles and a protocol to hand the swap back to the main thread, and the measured
 * cost of a pass on the main thread is a small share of each loop iteration (docs/storage.md).
 *
 * Errors, as Kafka's cleanLog / tryCleanFilthiestLog handle them: an aborted pass, or one on a log
 * that went offline, ends quietly; an I/O error takes the log's directory offline; anything else
 * marks the partition uncleanable in its directory (logged) and the cleaner goes on with others.
 * Every pass, finished or not, ends with doneCleaning (the checkpoint moves only for a finished one).
 *
 * Invariant: `shutdown()` resolves only once every loop has stopped, so no pass runs after the log
 * manager closes its logs; a pass interrupted by it deletes its `.cleaned` files first.
 */
import { EventEmitter } from 'node:events';
import { KafkaError } from '../../protocol/errors';
import { isIoError, type StorageFs } from '../fs';
import { KafkaStorageError } from '../errors';
import type { UnifiedLog } from '../unified-log';
import { Cleaner, CleanerStats, LogCleaningAbortedException, ThreadShutdownException, defaultPause } from './cleaner';
import type { CleanerConfig } from './cleaner-config';
import { LogCleanerManager, LogCleaningException, PreCleanStats, type LogToClean } from './log-cleaner-manager';
import { SkimpyOffsetMap, type OffsetMap } from './offset-map';
import { Throttler } from './throttler';
import type { Logger } from '../../common/logger';
import { SystemTime, type Time } from '../../common/time';
import { topicPartitionKey, tpString, type TopicPartition } from '../../common/topic-partition';

export interface LogCleanerOptions {
  config: CleanerConfig;
  logDirs: readonly string[];
  logs: () => Iterable<UnifiedLog>;
  fs: StorageFs;
  time?: Time;
  logger: Logger;
  /** Takes a log directory offline (the log manager's handleLogDirFailure). */
  onIoError: (dir: string, message: string, err: unknown) => void;
  /** Offset map of a cleaner thread (tests); default a SkimpyOffsetMap of the thread's share. */
  offsetMapFactory?: (memory: number) => OffsetMap;
  /** The waits between chunks and after an idle run (tests may replace it). */
  pause?: (ms: number) => Promise<void>;
  /** Tests: how often the throttle compares the observed rate with the limit (default 300 ms, as Kafka). */
  throttleCheckIntervalMs?: number;
}

/** One finished pass, as 'cleaned' events report it. */
export interface CleanedEvent {
  tp: TopicPartition;
  /** The dirty section cleaned: [from, to); `to` is the new checkpoint. */
  from: bigint;
  to: bigint;
  stats: CleanerStats;
}

const MiB = 1024 * 1024;

function mb(bytes: number): number {
  return bytes / MiB;
}

/** a / b, 0 when b is 0 (a pass too quick to measure prints 0.0, not Infinity or NaN). */
function div(a: number, b: number): number {
  return b > 0 ? a / b : 0;
}

function f1(n: number): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }) : String(n);
}

/**
 * One pass's stats: a one-line summary (bytes read and written, time, throughput, size
 * reduction: what a log search wants), then Kafka's recordStats message, line for line.
 */
export function formatCleanerStats(id: number, name: string, from: bigint, to: bigint, stats: CleanerStats): string {
  const cleanSecs = stats.elapsedSecs - stats.elapsedIndexSecs;
  return (
    `Log cleaner thread ${id} cleaned log ${name} (dirty section = [${from}, ${to}]): read ${f1(mb(stats.bytesRead))} MB, wrote ${f1(mb(stats.bytesWritten))} MB ` +
    `in ${stats.elapsedSecs.toFixed(3)} s (${f1(div(mb(stats.bytesRead), stats.elapsedSecs))} MB/s), ${f1(100 * (1 - div(stats.bytesWritten, stats.bytesRead)))}% size reduction, ` +
    `${stats.messagesRead} -> ${stats.messagesWritten} messages` +
    `\n\tLog cleaner thread ${id} cleaned log ${name} (dirty section = [${from}, ${to}])\n` +
    `\t${f1(mb(stats.bytesRead))} MB of log processed in ${f1(stats.elapsedSecs)} seconds (${f1(div(mb(stats.bytesRead), stats.elapsedSecs))} MB/sec).\n` +
    `\tIndexed ${f1(mb(stats.mapBytesRead))} MB in ${f1(stats.elapsedIndexSecs)} seconds (${f1(div(mb(stats.mapBytesRead), stats.elapsedIndexSecs))} Mb/sec, ${f1(div(100 * stats.elapsedIndexSecs, stats.elapsedSecs))}% of total time)\n` +
    `\tBuffer utilization: ${f1(100 * stats.bufferUtilization)}%\n` +
    `\tCleaned ${f1(mb(stats.bytesRead))} MB in ${f1(cleanSecs)} seconds (${f1(div(mb(stats.bytesRead), cleanSecs))} Mb/sec, ${f1(div(100 * cleanSecs, stats.elapsedSecs))}% of total time)\n` +
    `\tStart size: ${f1(mb(stats.bytesRead))} MB (${stats.messagesRead.toLocaleString('en-US')} messages)\n` +
    `\tEnd size: ${f1(mb(stats.bytesWritten))} MB (${stats.messagesWritten.toLocaleString('en-US')} messages)\n` +
    `\t${f1(100 * (1 - div(stats.bytesWritten, stats.bytesRead)))}% size reduction (${f1(100 * (1 - div(stats.messagesWritten, stats.messagesRead)))}% fewer messages)\n`
  );
}

class CleanerThread {
  readonly cleaner: Cleaner;
  lastStats = new CleanerStats();
  lastPreCleanStats = new PreCleanStats();
  /** The pass in hand (its partition, log and token), for checkDone. */
  private current: { tp: TopicPartition; log: UnifiedLog; pass: symbol } | null = null;
  private done: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** Throttle waits in progress, ended at once by `stop()`. */
  private readonly sleeps = new Set<() => void>();
  failed = false;

  constructor(
    readonly id: number,
    private readonly owner: LogCleaner,
    offsetMap: OffsetMap,
    ioBufferSize: number,
    maxIoBufferSize: number,
    loadFactor: number,
    throttler: Throttler,
    private readonly time: Time,
    private readonly logger: Logger,
    private readonly pause: ((ms: number) => Promise<void>) | undefined,
    /** The log cleaner's own logger: the Cleaner prefixes it "Cleaner <id>: " as Kafka's does. */
    cleanerLogger: Logger,
  ) {
    this.cleaner = new Cleaner({
      id,
      offsetMap,
      ioBufferSize,
      maxIoBufferSize,
      dupBufferLoadFactor: loadFactor,
      throttler,
      time,
      checkDone: (tp) => this.checkDone(tp),
      logger: cleanerLogger,
      pause: (ms) => this.sleep(ms),
    });
  }

  /**
   * The pass's waits: the test hook when given; else a turn of the event loop, or the throttle's
   * wait (log.cleaner.io.max.bytes.per.second), which shutdown ends early so that a throttled pass
   * does not hold up close() (the pass then stops at its next checkDone).
   */
  private sleep(ms: number): Promise<void> {
    if (this.pause) return this.pause(ms);
    if (ms <= 0 || !this.owner.isRunning) return defaultPause(0);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.sleeps.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.sleeps.add(finish);
    });
  }

  /** Throws when the cleaner stops, the pass was aborted, or its log closed or went offline. */
  private checkDone(tp: TopicPartition): void {
    if (!this.owner.isRunning) throw new ThreadShutdownException();
    const c = this.current;
    if (!c) return;
    this.owner.cleanerManager.checkCleaningAborted(tp, c.pass);
    if (c.log.isOffline) throw new KafkaStorageError(`log ${tpString(tp)} is offline`);
    if (c.log.isClosed) throw new LogCleaningAbortedException(`log ${tpString(tp)} was closed`);
  }

  start(): void {
    this.done = this.run().catch((e) => {
      this.failed = true;
      this.logger.error(`cleaner thread ${this.id} died`, { err: e });
    });
  }

  /** Ends a backoff wait early (a test that made a log dirty, or shutdown). */
  interrupt(): void {
    this.wake?.();
  }

  /** Shutdown: ends the backoff and any throttle wait now. */
  stop(): void {
    this.interrupt();
    for (const finish of [...this.sleeps]) finish();
  }

  whenDone(): Promise<void> {
    return this.done ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    this.logger.info(`Starting`);
    while (this.owner.isRunning) {
      let cleaned = false;
      try {
        cleaned = await this.tryCleanFilthiestLog();
      } catch (e) {
        if (e instanceof ThreadShutdownException) break;
        throw e;
      }
      this.owner.cleanerManager.maintainUncleanablePartitions();
      if (!this.owner.isRunning) break;
      // Between passes the loop only lets the event loop turn (not the test hook: a test holding
      // "the next await" means one inside a pass).
      if (!cleaned) await this.backoff();
      else await defaultPause(0);
    }
    this.logger.info(`Stopped`);
  }

  private backoff(): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, Math.min(this.owner.config.backoffMs, 0x7fffffff));
      t.unref();
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }

  /** Kafka's tryCleanFilthiestLog: a LogCleaningException marks the partition uncleanable. */
  private async tryCleanFilthiestLog(): Promise<boolean> {
    try {
      return await this.cleanFilthiestLog();
    } catch (e) {
      if (e instanceof LogCleaningException) {
        this.logger.warn(`Unexpected exception thrown when cleaning log ${e.log}. Marking its partition (${tpString(e.log.topicPartition)}) as uncleanable`, {
          err: e.cause instanceof Error ? e.cause.message : e.message,
        });
        this.owner.cleanerManager.markPartitionUncleanable(e.log.parentDir, e.log.topicPartition);
        return false;
      }
      throw e;
    }
  }

  private async cleanFilthiestLog(): Promise<boolean> {
    const preCleanStats = new PreCleanStats();
    const grabbed = this.owner.cleanerManager.grabFilthiestCompactedLog(this.time.milliseconds(), preCleanStats);
    let cleaned = false;
    if (grabbed) {
      this.lastPreCleanStats = preCleanStats;
      try {
        await this.cleanLog(grabbed.ltc, grabbed.pass);
        cleaned = true;
      } catch (e) {
        if (e instanceof ThreadShutdownException) throw e;
        throw new LogCleaningException(grabbed.ltc.log, (e as Error).message, e);
      }
    }
    const deletable = this.owner.cleanerManager.deletableLogs();
    try {
      for (const log of deletable) {
        try {
          log.deleteOldSegments();
        } catch (e) {
          if (e instanceof KafkaStorageError) continue; // offline: the directory failure is already handled
          throw new LogCleaningException(log, (e as Error).message, e);
        }
      }
    } finally {
      this.owner.cleanerManager.doneDeleting(deletable.map((l) => l.topicPartition));
    }
    return cleaned;
  }

  private async cleanLog(cleanable: LogToClean, pass: symbol): Promise<void> {
    const startOffset = cleanable.firstDirtyOffset;
    let endOffset = startOffset;
    const log = cleanable.log;
    this.current = { tp: cleanable.topicPartition, log, pass };
    try {
      const [nextDirtyOffset, stats] = await this.cleaner.clean(cleanable);
      endOffset = nextDirtyOffset;
      this.recordStats(tpString(cleanable.topicPartition), startOffset, endOffset, stats);
      this.owner.emit('cleaned', { tp: cleanable.topicPartition, from: startOffset, to: endOffset, stats } satisfies CleanedEvent);
    } catch (e) {
      if (e instanceof LogCleaningAbortedException) {
        // aborted (truncation, deletion): let it go
      } else if (e instanceof KafkaStorageError || (e instanceof KafkaError && log.isOffline)) {
        // the partition is offline already: let it go
      } else if (isIoError(e)) {
        this.owner.onIoError(log.parentDir, `Failed to clean up log for ${tpString(cleanable.topicPartition)} in dir ${log.parentDir} due to IOException: ${e.message}`, e);
      } else {
        throw e;
      }
    } finally {
      this.current = null;
      this.owner.cleanerManager.doneCleaning(cleanable.topicPartition, log.parentDir, endOffset, pass);
    }
  }

  private recordStats(name: string, from: bigint, to: bigint, stats: CleanerStats): void {
    this.lastStats = stats;
    this.logger.info(formatCleanerStats(this.id, name, from, to, stats));
    const p = this.lastPreCleanStats;
    if (p.delayedPartitions > 0) {
      this.logger.info(`\tCleanable partitions: ${p.cleanablePartitions}, Delayed partitions: ${p.delayedPartitions}, max delay: ${p.maxCompactionDelayMs}`);
    }
    if (stats.invalidMessagesRead > 0) this.logger.warn(`\tFound ${stats.invalidMessagesRead} invalid messages during compaction.`);
  }
}

export class LogCleaner extends EventEmitter {
  private _config: CleanerConfig;
  readonly cleanerManager: LogCleanerManager;
  readonly throttler: Throttler;
  private readonly threads: CleanerThread[] = [];
  private running = false;
  /** Set by shutdown(): a reconfiguration in flight does not start the loops again. */
  private closed = false;
  /** Reconfigurations run one after another. */
  private reconfiguring: Promise<void> = Promise.resolve();
  private readonly time: Time;
  private readonly logger: Logger;

  constructor(private readonly opts: LogCleanerOptions) {
    super();
    this._config = opts.config;
    this.time = opts.time ?? SystemTime;
    this.logger = opts.logger;
    this.cleanerManager = new LogCleanerManager({ logDirs: opts.logDirs, logs: opts.logs, fs: opts.fs, logger: opts.logger, onIoError: opts.onIoError });
    this.throttler = new Throttler(this.config.maxIoBytesPerSecond, opts.throttleCheckIntervalMs);
  }

  /** The settings the loops run with (replaced by reconfigure). */
  get config(): CleanerConfig {
    return this._config;
  }

  get isRunning(): boolean {
    return this.running;
  }

  onIoError(dir: string, message: string, err: unknown): void {
    this.opts.onIoError(dir, message, err);
  }

  /** Starts log.cleaner.threads loops. */
  startup(): void {
    if (this.running) return;
    this.logger.info('Starting the log cleaner');
    this.running = true;
    const n = this.config.numThreads;
    const perThread = Math.min(Math.floor(this.config.dedupeBufferSize / n), 0x7fffffff);
    if (this.config.dedupeBufferSize / n > 0x7fffffff) this.logger.warn('Cannot use more than 2G of cleaner buffer space per cleaner thread, ignoring excess buffer space...');
    for (let i = 0; i < n; i++) {
      const map = this.opts.offsetMapFactory ? this.opts.offsetMapFactory(perThread) : new SkimpyOffsetMap(perThread);
      const t = new CleanerThread(
        i,
        this,
        map,
        Math.floor(this.config.ioBufferSize / n / 2),
        this.config.maxMessageSize,
        this.config.dedupeBufferLoadFactor,
        this.throttler,
        this.time,
        this.logger.withPrefix(`[kafka-log-cleaner-thread-${i}]: `),
        this.opts.pause,
        this.logger,
      );
      this.threads.push(t);
      t.start();
    }
  }

  /** Stops every loop; resolves once none is running (an interrupted pass has deleted its `.cleaned` files). */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.stopLoops();
  }

  /**
   * Kafka's LogCleaner.reconfigure (dynamic log.cleaner.* configs): the throttle takes the new
   * log.cleaner.io.max.bytes.per.second at once, and running loops are stopped (an interrupted pass
   * deletes its `.cleaned` files and is redone later) and started again with the new thread count,
   * offset maps and I/O buffers, which also replaces loops that died. The cleaner manager (its
   * checkpoints, paused and uncleanable partitions) is kept. Resolves once the new loops run; after
   * shutdown() it only records the settings.
   */
  reconfigure(config: CleanerConfig): Promise<void> {
    const run = this.reconfiguring.then(async () => {
      const old = this._config;
      this._config = config;
      if (config.maxIoBytesPerSecond !== old.maxIoBytesPerSecond) this.throttler.updateDesiredRatePerSec(config.maxIoBytesPerSecond);
      if (!this.running) return;
      await this.stopLoops();
      if (!this.closed) this.startup();
    });
    this.reconfiguring = run.catch(() => undefined);
    return run;
  }

  private async stopLoops(): Promise<void> {
    if (!this.running) {
      await Promise.all(this.threads.map((t) => t.whenDone()));
      return;
    }
    this.logger.info('Shutting down the log cleaner.');
    this.running = false;
    for (const t of this.threads) t.stop();
    await Promise.all(this.threads.map((t) => t.whenDone()));
    this.threads.length = 0;
  }

  /** Kafka's DeadThreadCount. */
  get deadThreadCount(): number {
    return this.threads.filter((t) => t.failed).length;
  }

  /** The last finished pass of each thread. */
  get lastStats(): CleanerStats[] {
    return this.threads.map((t) => t.lastStats);
  }

  /** The pre-selection figures of each thread's last decision (max-compaction-delay-secs). */
  get lastPreCleanStats(): PreCleanStats[] {
    return this.threads.map((t) => t.lastPreCleanStats);
  }

  /** The clock the cleaner decides with (time-since-last-run-ms, uncleanable-bytes). */
  now(): number {
    return this.time.milliseconds();
  }

  abortCleaning(tp: TopicPartition): void {
    this.cleanerManager.abortCleaning(tp);
  }

  abortAndPauseCleaning(tp: TopicPartition): void {
    this.cleanerManager.abortAndPauseCleaning(tp);
  }

  resumeCleaning(tps: readonly TopicPartition[]): void {
    this.cleanerManager.resumeCleaning(tps);
  }

  updateCheckpoints(dataDir: string, partitionToRemove?: TopicPartition): void {
    this.cleanerManager.updateCheckpoints(dataDir, undefined, partitionToRemove);
  }

  /** A moved replica's checkpoint follows it (LogCleanerManager.alterCheckpointDir). */
  alterCheckpointDir(tp: TopicPartition, sourceDir: string, destDir: string): void {
    this.cleanerManager.alterCheckpointDir(tp, sourceDir, destDir);
  }

  maybeTruncateCheckpoint(dataDir: string, tp: TopicPartition, offset: bigint): void {
    this.cleanerManager.maybeTruncateCheckpoint(dataDir, tp, offset);
  }

  handleLogDirFailure(dir: string): void {
    this.cleanerManager.handleLogDirFailure(dir);
  }

  pauseCleaningForNonCompactedPartitions(): UnifiedLog[] {
    return this.cleanerManager.pauseCleaningForNonCompactedPartitions();
  }

  /** Ends every thread's backoff wait now (a test that has just made a log dirty). */
  wakeup(): void {
    for (const t of this.threads) t.stop();
  }

  /**
   * Kafka's awaitCleaned, without polling: resolves true once the partition's checkpoint is at or
   * beyond `offset` (at once if it already is), false after `maxWaitMs`.
   */
  awaitCleaned(tp: TopicPartition, offset: bigint, maxWaitMs = 60_000): Promise<boolean> {
    const k = topicPartitionKey(tp.topic, tp.partition);
    if ((this.cleanerManager.checkpointedOffset(tp) ?? -1n) >= offset) return Promise.resolve(true);
    return new Promise((resolve) => {
      const off = this.cleanerManager.onCheckpointUpdated((t, o) => {
        if (topicPartitionKey(t.topic, t.partition) === k && o >= offset) finish(true);
      });
      const timer = setTimeout(() => finish(false), maxWaitMs);
      timer.unref();
      const finish = (v: boolean) => {
        clearTimeout(timer);
        off();
        resolve(v);
      };
    });
  }
}
