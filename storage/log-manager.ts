/**
 * All partition logs of this broker across its log directories (Kafka's LogManager).
 *
 * Owns: the map topic-partition -> UnifiedLog, the state of each log directory (online/offline),
 * the flush counts of its logs (LogFlushStats) and how many entries of each directory are left to
 * load while it loads (remainingLogsToRecover),
 * its checkpoint files (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
 * replication-offset-checkpoint; cleaner-offset-checkpoint belongs to the log cleaner), its
 * clean-shutdown marker and meta.properties, and the background tasks: retention
 * (log.retention.check.interval.ms), the flush.ms flusher, periodic checkpoints, producer id expiry
 * and removal of deleted logs; and the log cleaner (cleaner/log-cleaner.ts) when
 * log.cleaner.enable is set, started after the logs are loaded and stopped first at close. As in
 * Kafka's LogManager: retention here covers logs without compact (their cleaning paused meanwhile),
 * the cleaner runs the compacted logs' retention itself (without a cleaner, compacted logs get
 * none); deleting a log aborts its cleaning and drops its cleaner checkpoint; truncation pauses
 * cleaning (UnifiedLog's cleanerHooks). Logs are keyed by topicPartitionKey.
 * Also the future replicas of AlterReplicaLogDirs (`<topic>-<partition>.<32 hex>-future`: created,
 * swapped in for the current log once the replication layer has caught them up, removed; cleaning
 * of a moving partition paused), the preferred directories of replicas not hosted yet, and what a
 * restart does with the futures and duplicate directories a stop or crash left (resumed, promoted,
 * discarded: see resolveDuplicateLogs / reconcileFutureLogs and docs/storage.md).
 *
 * Invariants: a topic-partition has at most one current log, in one directory, and at most one
 * future log, in another (a swap never deletes the old log before the new one is in place); a
 * directory that failed an
 * I/O call is offline for the rest of the process's life and every log in it raises
 * KAFKA_STORAGE_ERROR (never a process crash); the clean-shutdown marker exists only while the
 * broker is stopped after flushing every log and writing every checkpoint. It is removed at
 * startup before any log is loaded, so a crash during loading still means recovery next time.
 *
 * Everything here is synchronous except `startup` (which loads up to num.recovery.threads.per.data.dir
 * logs per directory at once, their recovery reads running on the thread pool, and yields between
 * logs so a large recovery does not starve the event loop); `close` returns a promise but flushes
 * and closes every log synchronously.
 */
import { LogFlushStats } from './log-flush-stats';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { CorruptCheckpointError, CheckpointEntry, OffsetCheckpointFile } from './checkpoint/offset-checkpoint-file';
import { StorageFs, isIoError, nodeFs, writeFileAtomic } from './fs';
import { DEFAULT_LOG_CONFIG, LONG_MAX, LogConfig, compactEnabled } from './log-config';
import {
  CLEAN_SHUTDOWN_FILE,
  FUTURE_DIR_SUFFIX,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  futureDirName,
  parseFutureDirName,
  RECOVERY_POINT_CHECKPOINT_FILE,
  REPLICATION_OFFSET_CHECKPOINT_FILE,
  STRAY_DIR_SUFFIX,
  deleteDirName,
  isDeleteDirName,
  parseTopicPartitionName,
  partitionDirName,
} from './log-file-utils';
import { MetaProperties, MetaPropertiesError, ensureMetaProperties } from './meta-properties';
import { readPartitionMetadata, writePartitionMetadata } from './partition-metadata';
import { KafkaStorageError } from './errors';
import { ScheduledTask, Scheduler, TimerScheduler } from '../common/scheduler';
import { Logger } from '../common/logger';
import { SystemTime, Time } from '../common/time';
import { TopicPartition, topicPartitionKey, tpString } from '../common/topic-partition';
import { ProducerStateManager } from './producer-state-manager';
import { UnifiedLog, type CleanerHooks } from './unified-log';
import { LogCleaner } from './cleaner/log-cleaner';
import { CLEANER_OFFSET_CHECKPOINT_FILE } from './cleaner/log-cleaner-manager';
import type { CleanerConfig } from './cleaner/cleaner-config';

export interface LogManagerOptions {
  /** log.dirs (log.dir when unset). */
  logDirs: string[];
  /** Broker-level defaults for logs with no topic-specific config. */
  defaultConfig?: LogConfig;
  /** Effective config of a topic (broker defaults + overrides) for logs found at startup. */
  topicConfig?: (topic: string) => LogConfig | undefined;
  /** With both set, every directory's meta.properties is created or checked against them. */
  nodeId?: number;
  clusterId?: string;
  fs?: StorageFs;
  time?: Time;
  scheduler?: Scheduler;
  logger?: Logger;
  /** log.retention.check.interval.ms (default 300000). */
  retentionCheckIntervalMs?: number;
  /** log.flush.scheduler.interval.ms (default Long.MAX_VALUE: no flusher). */
  flushCheckIntervalMs?: number;
  /** log.flush.offset.checkpoint.interval.ms (default 60000). */
  flushRecoveryOffsetCheckpointIntervalMs?: number;
  /** log.flush.start.offset.checkpoint.interval.ms (default 60000). */
  flushStartOffsetCheckpointIntervalMs?: number;
  /** replica.high.watermark.checkpoint.interval.ms (default 5000). */
  highWatermarkCheckpointIntervalMs?: number;
  /** log.initial.task.delay.ms (default 30000). */
  initialTaskDelayMs?: number;
  /** producer.id.expiration.ms (default 86400000). */
  producerIdExpirationMs?: number;
  /** remote.log.storage.system.enable: topics with remote.storage.enable get tiered logs (UnifiedLog.remoteLogEnabled). */
  remoteStorageSystemEnable?: boolean;
  /** producer.id.expiration.check.interval.ms (default 600000). */
  producerIdExpirationCheckIntervalMs?: number;
  /** num.recovery.threads.per.data.dir (default 1): logs of one directory recovered at once. */
  recoveryThreadsPerDataDir?: number;
  /** Recovery progress lines at most this often per log (default 10 s). */
  recoveryProgressIntervalMs?: number;
  /** The log cleaner's settings (log.cleaner.*); none, or enableCleaner false: no cleaner runs. */
  cleaner?: CleanerConfig;
  /** Tests: the cleaner's waits between chunks (see LogCleanerOptions.pause). */
  cleanerPause?: (ms: number) => Promise<void>;
  /** Tests: the cleaner throttle's check interval (Kafka's 300 ms by default). */
  cleanerThrottleCheckIntervalMs?: number;
}

export interface LogDirState {
  path: string;
  online: boolean;
  offlineReason?: string;
  /** Whether the last shutdown left the clean-shutdown marker. */
  hadCleanShutdown: boolean;
  /** Every partition directory in it was looked at (checkpoints and the marker may be written). */
  loaded: boolean;
  /** Some partition could not be loaded: no clean-shutdown marker may vouch for this directory. */
  hasFailedPartitions: boolean;
  meta?: MetaProperties;
}

export type LogDirFailureListener = (dir: string, reason: string) => void;

/** KRaft's metadata topic; its log is loaded by the metadata log store. */
export const METADATA_TOPIC_NAME = '__cluster_metadata';

const CLEAN_SHUTDOWN_CONTENT = JSON.stringify({ version: 0, brokerEpoch: -1 });

export class LogManager {
  private readonly fs: StorageFs;
  private readonly time: Time;
  private readonly scheduler: Scheduler;
  private readonly ownScheduler: TimerScheduler | null;
  private readonly logger: Logger;
  private readonly dirs = new Map<string, LogDirState>();
  private readonly logs = new Map<string, UnifiedLog>();
  /** Future replicas (AlterReplicaLogDirs): the copy of a log being built in another directory. */
  private readonly futureLogs = new Map<string, UnifiedLog>();
  /** Where a log not hosted yet is to be created (AlterReplicaLogDirs of a replica not here; in memory, as Kafka's). */
  private readonly preferredLogDirs = new Map<string, string>();
  /** Partitions whose cleaning this manager paused for a move (resumed when the move ends, once). */
  private readonly pausedForMove = new Set<string>();
  /** A second `<topic>-<partition>` directory found while loading, resolved once every directory has loaded. */
  private readonly duplicateLogs: { key: string; log: UnifiedLog; dir: LogDirState }[] = [];
  /** Partitions that could not be loaded (not an I/O error: the directory stays online). */
  private readonly failedPartitions = new Map<string, string>();
  /** Logs being loaded right now (key -> directory), so two directories cannot both load one. */
  private readonly loadingLogs = new Map<string, string>();
  private readonly tasks: ScheduledTask[] = [];
  private readonly pendingDirDeletes = new Map<string, ScheduledTask>();
  private readonly listeners: LogDirFailureListener[] = [];
  private defaultConfig: LogConfig;
  private state: 'new' | 'loaded' | 'started' | 'closed' = 'new';
  private loading = false;
  private _cleaner: LogCleaner | null = null;
  /** The cleaner's settings: opts.cleaner until reconfigureCleaner replaces them. */
  private cleanerConfig: CleanerConfig | undefined;
  /** What truncation tells the cleaner (installed on every log while a cleaner runs). */
  private readonly cleanerHooks: CleanerHooks = {
    abortAndPauseCleaning: (tp) => this._cleaner?.abortAndPauseCleaning(tp),
    resumeCleaning: (tps) => this._cleaner?.resumeCleaning(tps),
    maybeTruncateCheckpoint: (dir, tp, offset) => this._cleaner?.maybeTruncateCheckpoint(dir, tp, offset),
  };

  constructor(private readonly opts: LogManagerOptions) {
    this.cleanerConfig = opts.cleaner;
    if (opts.logDirs.length === 0) throw new Error('at least one log directory is required');
    this.fs = opts.fs ?? nodeFs;
    this.time = opts.time ?? SystemTime;
    this.logger = opts.logger ?? new Logger('storage');
    if (opts.scheduler) {
      this.scheduler = opts.scheduler;
      this.ownScheduler = null;
    } else {
      this.ownScheduler = new TimerScheduler((name, err) => this.logger.error(`background task ${name} failed`, { err }));
      this.scheduler = this.ownScheduler;
    }
    this.defaultConfig = opts.defaultConfig ?? { ...DEFAULT_LOG_CONFIG, cleanupPolicy: [...DEFAULT_LOG_CONFIG.cleanupPolicy] };
    for (const d of opts.logDirs) {
      const p = path.resolve(d);
      if (this.dirs.has(p)) throw new Error(`duplicate log directory ${d}`);
      this.dirs.set(p, { path: p, online: true, hadCleanShutdown: false, loaded: false, hasFailedPartitions: false });
    }
  }

  // ---- startup --------------------------------------------------------------------------------

  /** Loads (and recovers) every log, then starts the background tasks. */
  async startup(): Promise<void> {
    await this.loadLogs();
    this.startTasks();
  }

  /**
   * Loads every partition directory of every log directory. A directory that cannot be read goes
   * offline; a partition that cannot be loaded for another reason is reported and skipped; a
   * meta.properties of another cluster or node throws (the broker must not start on it).
   */
  async loadLogs(): Promise<void> {
    if (this.state !== 'new') throw new Error('logs already loaded');
    this.loading = true;
    try {
      await Promise.all([...this.dirs.values()].map((d) => this.loadDir(d)));
      this.resolveDuplicateLogs();
      this.reconcileFutureLogs();
    } finally {
      this.loading = false;
    }
    this.state = 'loaded';
  }

  /**
   * Two `<topic>-<partition>` directories of one topic id in two log directories are what a crash
   * between the two renames of a future replica's promotion leaves (the future renamed into place,
   * the old replica not yet renamed `-delete`; replaceCurrentWithFutureLog). The promoted copy was
   * caught up, so both hold the same offsets: the one with the higher log end offset is kept (the
   * other renamed `-delete`), so nothing acknowledged is lost even if one lost an unflushed tail.
   * Without matching topic ids nothing says which is right: the partition fails (both stay on disk)
   * and the operator decides, as Kafka refuses to start.
   */
  private resolveDuplicateLogs(): void {
    for (const { key, log, dir } of this.duplicateLogs.splice(0)) {
      const other = this.logs.get(key);
      if (!other && !this.failedPartitions.has(key)) {
        this.logs.set(key, log); // the other copy could not be loaded at all
        continue;
      }
      const sameTopic = other !== undefined && other.topicId !== undefined && other.topicId === log.topicId && !other.isOffline && !log.isOffline;
      if (!sameTopic) {
        const reason = `duplicate log directories for ${tpString(log.topicPartition)}: ${other?.dir ?? '?'} and ${log.dir}`;
        this.logger.error(reason);
        this.failedPartitions.set(key, reason);
        dir.hasFailedPartitions = true;
        log.closeHandlers();
        continue;
      }
      const [keep, drop] = log.logEndOffset > other.logEndOffset ? [log, other] : [other, log];
      this.logger.warn(
        `two logs of ${tpString(log.topicPartition)} (topic id ${log.topicId}) in ${other.parentDir} and ${log.parentDir}: an interrupted ` +
          `replica move; keeping ${keep.dir} (log end offset ${keep.logEndOffset}), deleting ${drop.dir} (log end offset ${drop.logEndOffset})`,
      );
      this.logs.set(key, keep);
      this.retireLog(drop);
    }
  }

  /**
   * Future replicas found at startup (a move interrupted by a stop or a crash). Kept, to be resumed
   * by the replication layer from their log end offset, when their current log is online in another
   * directory with the same topic id; discarded (renamed `-delete`) when the current log is in the
   * same directory or belongs to another topic id. A future with no current log at all, with every
   * directory online (the current one was removed by hand), becomes the current log: it is the only
   * copy left. With a directory offline it is kept idle: the current log may be there.
   */
  private reconcileFutureLogs(): void {
    for (const [key, future] of [...this.futureLogs]) {
      const current = this.logs.get(key);
      const tp = future.topicPartition;
      if (!current) {
        if (this.offlineLogDirs.length > 0 || this.failedPartitions.has(key)) {
          this.logger.warn(`future replica ${future.dir} has no current log online; it stays idle`);
          continue;
        }
        try {
          const parent = future.parentDir;
          future.localLog.renameDir(partitionDirName(tp), { reinitialize: true });
          this.fs.fsyncDirSync(parent);
          this.futureLogs.delete(key);
          this.logs.set(key, future);
          this.logger.warn(`future replica of ${tpString(tp)} has no current log: it becomes the current log in ${future.dir}`);
        } catch (e) {
          if (!isIoError(e)) throw e;
          this.handleLogDirFailure(future.parentDir, `error promoting ${future.dir}: ${errMessage(e)}`);
        }
        continue;
      }
      const sameDir = current.parentDir === future.parentDir;
      const otherTopic = current.topicId !== undefined && future.topicId !== undefined && current.topicId !== future.topicId;
      if (sameDir || otherTopic) {
        this.logger.warn(`discarding future replica ${future.dir}: ${sameDir ? 'the current log is in the same directory' : `it belongs to topic id ${future.topicId}, the log to ${current.topicId}`}`);
        this.futureLogs.delete(key);
        this.retireLog(future);
      } else {
        this.logger.info(`future replica of ${tpString(tp)} in ${future.parentDir} (log end offset ${future.logEndOffset}, current ${current.logEndOffset}) will resume copying`);
      }
    }
  }

  private pauseCleaningForMove(tp: TopicPartition): void {
    const key = topicPartitionKey(tp.topic, tp.partition);
    if (!this._cleaner || this.pausedForMove.has(key)) return;
    this._cleaner.abortAndPauseCleaning(tp);
    this.pausedForMove.add(key);
  }

  private resumeCleaningAfterMove(tp: TopicPartition): void {
    const key = topicPartitionKey(tp.topic, tp.partition);
    if (!this._cleaner || !this.pausedForMove.delete(key)) return;
    try {
      this._cleaner.resumeCleaning([tp]);
    } catch (e) {
      this.logger.error(`resuming the cleaning of ${tpString(tp)} after its move failed`, { err: e });
    }
  }

  /** Closes a log that is no longer in any map and renames its directory `-delete` (removed after file.delete.delay.ms). */
  private retireLog(log: UnifiedLog): void {
    const parent = log.parentDir;
    if (log.isOffline) {
      log.closeHandlers();
      return;
    }
    try {
      log.close();
      log.localLog.renameDir(deleteDirName(log.topicPartition));
      this.fs.fsyncDirSync(parent);
      this.scheduleDirDelete(log.dir);
      this.logger.info(`log ${tpString(log.topicPartition)} is renamed to ${log.dir} and is scheduled for deletion`);
    } catch (e) {
      if (!isIoError(e) && !(e instanceof KafkaStorageError)) throw e;
      this.handleLogDirFailure(parent, `error while deleting ${log.dir}: ${errMessage(e)}`);
    }
  }

  private async loadDir(d: LogDirState): Promise<void> {
    let names: string[];
    let recoveryPoints: Map<string, CheckpointEntry>;
    let startOffsets: Map<string, CheckpointEntry>;
    let hwms: Map<string, CheckpointEntry>;
    let cleaned: Map<string, CheckpointEntry>;
    try {
      if (!this.fs.existsSync(d.path)) this.fs.mkdirSync(d.path, { recursive: true });
      if (this.opts.nodeId !== undefined && this.opts.clusterId !== undefined) {
        d.meta = ensureMetaProperties(this.fs, d.path, this.opts.nodeId, this.opts.clusterId);
      }
      const marker = path.join(d.path, CLEAN_SHUTDOWN_FILE);
      d.hadCleanShutdown = this.fs.existsSync(marker);
      if (d.hadCleanShutdown) {
        this.fs.unlinkSync(marker);
        this.fs.fsyncDirSync(d.path);
      } else {
        this.logger.info(`log directory ${d.path}: no clean shutdown marker, logs will be recovered from their recovery points`);
      }
      recoveryPoints = this.readCheckpoint(d.path, RECOVERY_POINT_CHECKPOINT_FILE, 'every log in it will be recovered in full');
      startOffsets = this.readCheckpoint(d.path, LOG_START_OFFSET_CHECKPOINT_FILE, 'log start offsets fall back to the first segment');
      hwms = this.readCheckpoint(d.path, REPLICATION_OFFSET_CHECKPOINT_FILE, 'high watermarks start at the log start offset');
      // Logs the cleaner has worked on may hold offset gaps whatever their policy is now.
      cleaned = this.readCheckpoint(d.path, CLEANER_OFFSET_CHECKPOINT_FILE, 'logs switched from compact to delete are recovered as contiguous');
      names = this.fs.readdirSync(d.path).sort();
    } catch (e) {
      if (e instanceof MetaPropertiesError) throw e;
      this.handleLogDirFailure(d.path, `cannot load log directory: ${errMessage(e)}`);
      return;
    }
    // num.recovery.threads.per.data.dir logs of this directory load at once: each one's recovery
    // reads run on the thread pool while this thread checks another's bytes (docs/storage.md).
    const started = performance.now();
    const stats = { logs: 0, recovered: 0, scannedBytes: 0, truncated: 0 };
    const ctx = { recoveryPoints, startOffsets, hwms, cleaned, stats };
    let next = 0;
    let remaining = names.length;
    this.remainingToLoad.set(d.path, remaining);
    const worker = async (): Promise<void> => {
      while (d.online && next < names.length) {
        const name = names[next++];
        await this.loadDirEntry(d, name, ctx);
        this.remainingToLoad.set(d.path, --remaining);
        // Small logs recover without an await: let timers and sockets run between them.
        await new Promise<void>((r) => setImmediate(r));
      }
    };
    const threads = Math.max(1, Math.floor(this.opts.recoveryThreadsPerDataDir ?? 1));
    await Promise.all(Array.from({ length: Math.min(threads, Math.max(1, names.length)) }, worker));
    if (!d.online) return;
    d.loaded = true;
    const ms = performance.now() - started;
    if (stats.recovered > 0) {
      this.logger.info(
        `log directory ${d.path}: loaded ${stats.logs} log(s) in ${ms.toFixed(0)} ms; recovered ${stats.recovered} ` +
          `(${(stats.scannedBytes / 1048576).toFixed(1)} MB re-read at ${ms > 0 ? (stats.scannedBytes / 1048576 / (ms / 1000)).toFixed(0) : '-'} MB/s` +
          `, ${stats.truncated} truncated) with ${threads} recovery thread(s)`,
      );
    } else {
      this.logger.info(`log directory ${d.path}: loaded ${stats.logs} log(s) in ${ms.toFixed(0)} ms`);
    }
  }

  private async loadDirEntry(
    d: LogDirState,
    name: string,
    ctx: {
      recoveryPoints: Map<string, CheckpointEntry>;
      startOffsets: Map<string, CheckpointEntry>;
      hwms: Map<string, CheckpointEntry>;
      cleaned: Map<string, CheckpointEntry>;
      stats: { logs: number; recovered: number; scannedBytes: number; truncated: number };
    },
  ): Promise<void> {
    const full = path.join(d.path, name);
    let key: string | undefined;
    try {
      const st = this.fs.statSync(full);
      if (!st || !st.isDirectory()) return;
      if (isDeleteDirName(name)) {
        this.scheduleDirDelete(full);
        return;
      }
      if (name.endsWith(FUTURE_DIR_SUFFIX)) {
        const ftp = parseFutureDirName(name);
        if (!ftp) return;
        const fkey = `future:${topicPartitionKey(ftp.topic, ftp.partition)}`;
        const fother = this.futureLogs.get(topicPartitionKey(ftp.topic, ftp.partition))?.dir ?? this.loadingLogs.get(fkey);
        if (fother !== undefined) {
          this.logger.error(`two future replicas of ${tpString(ftp)}: ${fother} and ${full}; ${full} is left alone`);
          return;
        }
        key = fkey;
        this.loadingLogs.set(fkey, full);
        const flog = await this.loadPartition(d, ftp, full, ctx.recoveryPoints.get(topicPartitionKey(ftp.topic, ftp.partition))?.offset, ctx.startOffsets.get(topicPartitionKey(ftp.topic, ftp.partition))?.offset, ctx.cleaned.has(topicPartitionKey(ftp.topic, ftp.partition)));
        if (!flog) return;
        if (!d.online) flog.markOffline(`log directory ${d.path} failed: ${d.offlineReason ?? 'offline'}`);
        this.futureLogs.set(topicPartitionKey(ftp.topic, ftp.partition), flog);
        return;
      }
      if (name.endsWith(STRAY_DIR_SUFFIX)) {
        this.logger.info(`skipping ${full} (stray replicas are not supported yet)`);
        return;
      }
      const tp = parseTopicPartitionName(name);
      if (!tp) return;
      // The cluster metadata log shares metadata.log.dir but is owned by the controller's
      // metadata log store, not by this manager (as in Kafka's LogManager).
      if (tp.topic === METADATA_TOPIC_NAME) return;
      key = topicPartitionKey(tp.topic, tp.partition);
      // A second directory of one partition (another log directory has it, or is loading it):
      // loaded too, and resolved once every directory has loaded (resolveDuplicateLogs).
      const duplicate = this.logs.has(key) || this.loadingLogs.has(key);
      const loadingKey = duplicate ? `duplicate:${full}` : key;
      key = loadingKey;
      this.loadingLogs.set(loadingKey, full);
      const tpKey = topicPartitionKey(tp.topic, tp.partition);
      const log = await this.loadPartition(d, tp, full, ctx.recoveryPoints.get(tpKey)?.offset, ctx.startOffsets.get(tpKey)?.offset, ctx.cleaned.has(tpKey));
      if (!log) return;
      const hw = ctx.hwms.get(tpKey);
      if (hw) log.updateHighWatermark(hw.offset);
      // The directory may have failed while this log was loading (another log's I/O error).
      if (!d.online) log.markOffline(`log directory ${d.path} failed: ${d.offlineReason ?? 'offline'}`);
      if (duplicate) {
        this.duplicateLogs.push({ key: tpKey, log, dir: d });
        return;
      }
      this.logs.set(tpKey, log);
      ctx.stats.logs++;
      const r = log.loadReport;
      if (r.recoveredSegments > 0) ctx.stats.recovered++;
      ctx.stats.scannedBytes += r.scannedBytes;
      if (r.truncatedAtOffset !== undefined) ctx.stats.truncated++;
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.handleLogDirFailure(d.path, `error loading ${full}: ${errMessage(e)}`);
    } finally {
      if (key !== undefined) this.loadingLogs.delete(key);
    }
  }

  private async loadPartition(
    d: LogDirState,
    tp: TopicPartition,
    dir: string,
    recoveryPoint?: bigint,
    logStartOffset?: bigint,
    allowOffsetGaps = false,
  ): Promise<UnifiedLog | undefined> {
    let topicId: string | undefined;
    try {
      topicId = readPartitionMetadata(this.fs, dir);
    } catch (e) {
      if (isIoError(e)) throw e;
      const reason = `cannot load ${tpString(tp)}: ${errMessage(e)}`;
      this.logger.error(reason);
      this.failedPartitions.set(topicPartitionKey(tp.topic, tp.partition), reason);
      d.hasFailedPartitions = true;
      return undefined;
    }
    try {
      return await UnifiedLog.loadAsync({
        dir,
        tp,
        topicId,
        config: this.configFor(tp.topic),
        fs: this.fs,
        time: this.time,
        scheduler: this.scheduler,
        logger: this.logger,
        recoveryPoint: recoveryPoint ?? 0n,
        logStartOffset: logStartOffset ?? 0n,
        hadCleanShutdown: d.hadCleanShutdown,
        allowOffsetGaps,
        recoveryProgressIntervalMs: this.opts.recoveryProgressIntervalMs,
        producerIdExpirationMs: this.opts.producerIdExpirationMs,
        remoteStorageSystemEnable: this.opts.remoteStorageSystemEnable,
        onIoError: (log, message) => this.handleLogDirFailure(log.parentDir, message),
        flushStats: this.flushStats,
      });
    } catch (e) {
      if (isIoError(e)) throw e;
      // Recovery does not throw on bad data; anything else is a bug, which must cost this one
      // partition and not the broker.
      const reason = `cannot load ${tpString(tp)}: ${errMessage(e)}`;
      this.logger.error(reason, { err: e });
      this.failedPartitions.set(topicPartitionKey(tp.topic, tp.partition), reason);
      d.hasFailedPartitions = true;
      return undefined;
    }
  }

  private readCheckpoint(dir: string, name: string, fallback: string): Map<string, CheckpointEntry> {
    const file = new OffsetCheckpointFile(this.fs, path.join(dir, name));
    try {
      return file.read();
    } catch (e) {
      if (!(e instanceof CorruptCheckpointError)) throw e;
      this.logger.warn(`${e.message}; ${fallback}`);
      return new Map();
    }
  }

  private configFor(topic: string): LogConfig {
    return this.opts.topicConfig?.(topic) ?? this.defaultConfig;
  }

  private startTasks(): void {
    if (this.state !== 'loaded') return;
    this.state = 'started';
    const cc = this.cleanerConfig;
    if (cc?.enableCleaner) {
      this._cleaner = new LogCleaner({
        config: cc,
        logDirs: this.liveLogDirs,
        logs: () => this.logs.values(),
        fs: this.fs,
        time: this.time,
        logger: this.logger.child('log-cleaner'),
        onIoError: (dir, message) => this.handleLogDirFailure(dir, message),
        pause: this.opts.cleanerPause,
        throttleCheckIntervalMs: this.opts.cleanerThrottleCheckIntervalMs,
      });
      for (const l of this.logs.values()) l.cleanerHooks = this.cleanerHooks;
      this._cleaner.startup();
      // Moves interrupted by the last stop resume: their partitions are not cleaned meanwhile.
      for (const f of this.futureLogs.values()) this.pauseCleaningForMove(f.topicPartition);
    }
    const initial = this.opts.initialTaskDelayMs ?? 30_000;
    const every = (name: string, period: number | undefined, dflt: number, fn: () => void) => {
      const p = period ?? dflt;
      if (!Number.isFinite(p) || p >= LONG_MAX || p <= 0) return;
      this.tasks.push(this.scheduler.schedulePeriodic(name, Math.min(initial, p), p, fn));
    };
    every('kafka-log-retention', this.opts.retentionCheckIntervalMs, 300_000, () => this.cleanupLogs());
    every('kafka-log-flusher', this.opts.flushCheckIntervalMs, LONG_MAX, () => this.flushDirtyLogs());
    every('kafka-recovery-point-checkpoint', this.opts.flushRecoveryOffsetCheckpointIntervalMs, 60_000, () =>
      this.checkpointLogRecoveryOffsets(),
    );
    every('kafka-log-start-offset-checkpoint', this.opts.flushStartOffsetCheckpointIntervalMs, 60_000, () =>
      this.checkpointLogStartOffsets(),
    );
    every('PeriodicProducerExpirationCheck', this.opts.producerIdExpirationCheckIntervalMs, 600_000, () => {
      const now = this.time.milliseconds();
      for (const l of this.allLogs()) l.removeExpiredProducers(now);
    });
    every('highwatermark-checkpoint', this.opts.highWatermarkCheckpointIntervalMs, 5_000, () => this.checkpointHighWatermarks());
  }

  // ---- logs -----------------------------------------------------------------------------------

  /** The log cleaner, when log.cleaner.enable is set and the manager has started. */
  get cleaner(): LogCleaner | null {
    return this._cleaner;
  }

  getLog(topic: string, partition: number): UnifiedLog | undefined {
    return this.logs.get(topicPartitionKey(topic, partition));
  }

  /** Every flush of these logs (Kafka's LogFlushStats). */
  readonly flushStats = new LogFlushStats();
  /** Log directory -> logs not loaded yet while the directory loads (Kafka's remainingLogsToRecover). */
  private readonly remainingToLoad = new Map<string, number>();

  /** remainingLogsToRecover of every directory: 0 once it has loaded. */
  remainingLogsToRecover(): { dir: string; remaining: number }[] {
    return [...this.dirs.values()].map((d) => ({ dir: d.path, remaining: this.remainingToLoad.get(d.path) ?? 0 }));
  }

  allLogs(): UnifiedLog[] {
    return [...this.logs.values()];
  }

  /** Log directories taken offline (Kafka's OfflineLogDirectoryCount). */
  offlineLogDirCount(): number {
    let n = 0;
    for (const d of this.dirs.values()) if (!d.online) n++;
    return n;
  }

  /** Why a partition is unavailable without an offline directory (undefined if it is not). */
  partitionFailure(topic: string, partition: number): string | undefined {
    return this.failedPartitions.get(topicPartitionKey(topic, partition));
  }

  // ---- future replicas (AlterReplicaLogDirs) ---------------------------------------------------

  /** The future replica of a partition: the copy being built in another log directory. */
  getFutureLog(topic: string, partition: number): UnifiedLog | undefined {
    return this.futureLogs.get(topicPartitionKey(topic, partition));
  }

  allFutureLogs(): UnifiedLog[] {
    return [...this.futureLogs.values()];
  }

  /**
   * Kafka's isLogDirOnline: whether `dir` (an absolute path) is an online log directory;
   * LOG_DIR_NOT_FOUND when it is not one of log.dirs.
   */
  isLogDirOnline(dir: string): boolean {
    const d = path.isAbsolute(dir) ? this.dirs.get(path.resolve(dir)) : undefined;
    if (!d) throw new KafkaError(ErrorCode.LOG_DIR_NOT_FOUND, `Log dir ${dir} is not found in the config.`);
    return d.online;
  }

  /**
   * Kafka's maybeUpdatePreferredLogDir: remembers where the partition's log is to be created,
   * unless its current or future log already lives there.
   */
  maybeUpdatePreferredLogDir(topic: string, partition: number, dir: string): void {
    const key = topicPartitionKey(topic, partition);
    const target = path.resolve(dir);
    if (this.logs.get(key)?.parentDir === target || this.futureLogs.get(key)?.parentDir === target) return;
    this.preferredLogDirs.set(key, target);
  }

  /** The preferred directory recorded for a partition (tests, DescribeLogDirs of a pending move). */
  preferredLogDir(topic: string, partition: number): string | undefined {
    return this.preferredLogDirs.get(topicPartitionKey(topic, partition));
  }

  /**
   * The future replica of a hosted partition in `destDir` (Kafka's getOrCreateLog(isFuture =
   * true)): `<destDir>/<topic>-<partition>.<32 hex>-future`, empty, starting at the current log's
   * log start offset, with its topic id and config. An existing future in `destDir` is returned;
   * one elsewhere is removed first (a new destination). Cleaning of the partition is aborted and
   * paused until the move ends (Kafka's alterReplicaLogDirs). Undefined when the current log is
   * already in `destDir` (nothing to move).
   */
  getOrCreateFutureLog(topic: string, partition: number, destDir: string): UnifiedLog | undefined {
    this.checkNotClosed();
    const tp = { topic, partition };
    const key = topicPartitionKey(topic, partition);
    const current = this.logs.get(key);
    if (!current) throw new KafkaError(ErrorCode.REPLICA_NOT_AVAILABLE, `no log of ${tpString(tp)} here`);
    if (current.isOffline) throw new KafkaStorageError(`log ${tpString(tp)} is in an offline log directory (${current.parentDir})`);
    const target = path.resolve(destDir);
    const d = this.dirs.get(target);
    if (!d) throw new KafkaError(ErrorCode.LOG_DIR_NOT_FOUND, `Log dir ${destDir} is not found in the config.`);
    if (!d.online) throw new KafkaStorageError(`Log directory ${destDir} is offline`);
    const existing = this.futureLogs.get(key);
    if (existing) {
      if (existing.parentDir === target) return existing;
      this.removeFutureLog(topic, partition);
    }
    if (current.parentDir === target) return undefined;
    // Kafka creates no future log while a directory is offline: the partition could end up with futures in two.
    if (this.offlineLogDirs.length > 0) throw new KafkaStorageError(`cannot move ${tpString(tp)}: log directories ${this.offlineLogDirs.join(', ')} are offline`);
    const dir = path.join(target, futureDirName(tp));
    try {
      this.fs.mkdirSync(dir, { recursive: true });
      this.fs.fsyncDirSync(target);
      if (current.topicId) writePartitionMetadata(this.fs, dir, current.topicId);
      const future = this.loadEmptyLog(dir, tp, current.topicId, current.config);
      if (current.remoteLogEnabled() && current.localLogStartOffset > current.logStartOffset) this.restartTieredFuture(current, future);
      else if (current.logStartOffset > 0n) future.truncateFullyAndStartAt(current.logStartOffset);
      this.futureLogs.set(key, future);
      this.preferredLogDirs.delete(key);
      this.pauseCleaningForMove(tp);
      this.logger.info(`created future log for partition ${tpString(tp)} in ${dir} (moving from ${current.parentDir})`);
      return future;
    } catch (e) {
      if (e instanceof KafkaError) throw e;
      if (isIoError(e)) {
        const msg = `error while creating the future log for ${tpString(tp)} in dir ${target}: ${errMessage(e)}`;
        this.handleLogDirFailure(target, msg);
        throw new KafkaStorageError(msg, e);
      }
      throw e;
    }
  }

  /**
   * Drops a partition's future replica (a move cancelled, redirected, or failed): closed, renamed
   * `-delete`, removed after file.delete.delay.ms; cleaning resumes. Returns whether there was one.
   */
  removeFutureLog(topic: string, partition: number): boolean {
    const key = topicPartitionKey(topic, partition);
    const future = this.futureLogs.get(key);
    if (!future) return false;
    this.futureLogs.delete(key);
    this.retireLog(future);
    this.resumeCleaningAfterMove(future.topicPartition);
    this.logger.info(`removed the future log of ${tpString(future.topicPartition)} (${future.parentDir})`);
    return true;
  }

  /**
   * Kafka's replaceCurrentWithFutureLog, called when the future replica has caught up (its log end
   * offset is the current log's; the caller checks, in the same synchronous step as the swap, so no
   * append can come between): the future is flushed, renamed `<topic>-<partition>` in its directory
   * (the directory fsynced) and becomes the partition's log with the current high watermark; then the
   * old log is closed, renamed `-delete` (removed after file.delete.delay.ms) and its directory's
   * checkpoints rewritten without it. The cleaner's checkpoint moves along and cleaning resumes.
   * A crash between the two renames leaves two complete copies, resolved at the next start
   * (resolveDuplicateLogs). Returns the new current log.
   */
  /**
   * A tiered log's future replica copies only the local part: it starts (again) at the current
   * log's local start, with the current log's lineage and the producer state there (the snapshot
   * at the first local segment's base), the data below being in remote storage, as Kafka's
   * TierStateMachine starts a future replica. Used when the future is created and when the current
   * log's local start has moved past the future's end while it copied.
   */
  restartTieredFuture(current: UnifiedLog, future: UnifiedLog): void {
    const snapshot = current.producerSnapshotPath(current.localLogStartOffset);
    future.rebuildFromRemote({
      localLogStartOffset: current.localLogStartOffset,
      logStartOffset: current.logStartOffset,
      epochs: current.leaderEpochCache.entries,
      producerSnapshot: snapshot ? this.fs.readFileSync(snapshot) : ProducerStateManager.emptySnapshot(),
    });
  }

  /** A log in a directory just created for it (a new partition, or a future replica). */
  private loadEmptyLog(dir: string, tp: TopicPartition, topicId: string | undefined, config: LogConfig): UnifiedLog {
    return UnifiedLog.load({
      dir,
      tp,
      topicId,
      config,
      fs: this.fs,
      time: this.time,
      scheduler: this.scheduler,
      logger: this.logger,
      recoveryPoint: 0n,
      logStartOffset: 0n,
      hadCleanShutdown: false,
      producerIdExpirationMs: this.opts.producerIdExpirationMs,
      remoteStorageSystemEnable: this.opts.remoteStorageSystemEnable,
      onIoError: (l, message) => this.handleLogDirFailure(l.parentDir, message),
      flushStats: this.flushStats,
    });
  }

  replaceCurrentWithFutureLog(topic: string, partition: number): UnifiedLog {
    this.checkNotClosed();
    const tp = { topic, partition };
    const key = topicPartitionKey(topic, partition);
    const source = this.logs.get(key);
    const dest = this.futureLogs.get(key);
    if (!source || source.isOffline) throw new KafkaStorageError(`The current replica for ${tpString(tp)} is offline`);
    if (!dest || dest.isOffline) throw new KafkaStorageError(`The future replica for ${tpString(tp)} is offline`);
    if (dest.logEndOffset !== source.logEndOffset) throw new Error(`the future replica of ${tpString(tp)} is at ${dest.logEndOffset}, the current at ${source.logEndOffset}`);
    const destParent = dest.parentDir;
    try {
      dest.flush();
      dest.localLog.renameDir(partitionDirName(tp), { reinitialize: true });
      this.fs.fsyncDirSync(destParent);
    } catch (e) {
      if (!isIoError(e) && !(e instanceof KafkaStorageError)) throw e;
      this.handleLogDirFailure(destParent, `error promoting the future log of ${tpString(tp)}: ${errMessage(e)}`);
      throw e instanceof KafkaStorageError ? e : new KafkaStorageError(`error promoting the future log of ${tpString(tp)}: ${errMessage(e)}`, e);
    }
    dest.updateHighWatermark(source.highWatermark);
    if (dest.remoteLogEnabled()) dest.updateHighestOffsetInRemoteStorage(source.highestOffsetInRemoteStorage);
    this.futureLogs.delete(key);
    this.logs.set(key, dest);
    // From here on nothing throws: the new log is in place, what follows only tidies up.
    if (this._cleaner) {
      dest.cleanerHooks = this.cleanerHooks;
      try {
        this._cleaner.alterCheckpointDir(tp, source.parentDir, destParent);
      } catch (e) {
        this.logger.error(`moving the cleaner checkpoint of ${tpString(tp)} failed`, { err: e });
      }
    }
    this.resumeCleaningAfterMove(tp);
    const sourceParent = source.parentDir;
    this.retireLog(source);
    this.writeCheckpoint(sourceParent, RECOVERY_POINT_CHECKPOINT_FILE, this.logsIn(sourceParent).map((l) => ({ tp: l.topicPartition, offset: l.recoveryPoint })));
    this.writeCheckpoint(sourceParent, LOG_START_OFFSET_CHECKPOINT_FILE, this.logsIn(sourceParent).map((l) => ({ tp: l.topicPartition, offset: l.logStartOffset })));
    this.logger.info(`the current replica of ${tpString(tp)} is replaced with the future replica: ${sourceParent} -> ${destParent}`);
    return dest;
  }

  /**
   * The log of topic-partition, created in the online directory holding the fewest logs if it does
   * not exist. With a topic id: a log (or leftover directory) recorded under a different id is
   * INCONSISTENT_TOPIC_ID; a log without one gets it recorded. `config` replaces the log's config.
   * `isNew: false` (a partition known before this start) refuses to create a missing log while
   * any log directory is offline.
   */
  getOrCreateLog(topic: string, partition: number, topicId?: string, config?: LogConfig, opts: { isNew?: boolean } = {}): UnifiedLog {
    this.checkNotClosed();
    const tp = { topic, partition };
    const key = topicPartitionKey(topic, partition);
    const existing = this.logs.get(key);
    if (existing) {
      if (existing.isOffline) throw new KafkaStorageError(`log ${tpString(tp)} is in an offline log directory (${existing.parentDir})`);
      this.reconcileTopicId(existing, topicId);
      if (config) existing.updateConfig(config);
      return existing;
    }
    const failure = this.failedPartitions.get(key);
    if (failure) throw new KafkaStorageError(`partition ${tpString(tp)} is unavailable: ${failure}`);
    // Kafka's rule: a partition that existed before may have its data in a directory that is
    // offline; creating an empty log elsewhere would silently restart its offsets.
    const offline = this.offlineLogDirs;
    if (opts.isNew === false && offline.length > 0) {
      throw new KafkaStorageError(`cannot create a log for ${tpString(tp)}: log directories ${offline.join(', ')} are offline and it may live there`);
    }
    const preferred = this.preferredLogDirs.get(key);
    const pd = preferred !== undefined ? this.dirs.get(preferred) : undefined;
    const d = pd?.online ? pd : this.nextLogDir();
    const dir = path.join(d.path, partitionDirName(tp));
    try {
      if (this.fs.existsSync(dir)) {
        const recorded = readPartitionMetadata(this.fs, dir);
        if (topicId && recorded && recorded !== topicId) {
          throw new KafkaError(
            ErrorCode.INCONSISTENT_TOPIC_ID,
            `the directory ${dir} belongs to topic id ${recorded}, not ${topicId}`,
          );
        }
      } else {
        this.fs.mkdirSync(dir, { recursive: true });
        this.fs.fsyncDirSync(d.path);
      }
      if (topicId) writePartitionMetadata(this.fs, dir, topicId);
      const log = this.loadEmptyLog(dir, tp, topicId, config ?? this.configFor(topic));
      if (this._cleaner) log.cleanerHooks = this.cleanerHooks;
      this.logs.set(key, log);
      // The preferred directory (AlterReplicaLogDirs before the replica existed) is satisfied.
      this.preferredLogDirs.delete(key);
      this.logger.info(`created log for partition ${tpString(tp)} in ${d.path}${topicId ? ` with topic id ${topicId}` : ''}`);
      return log;
    } catch (e) {
      if (e instanceof KafkaError) throw e;
      if (isIoError(e)) {
        const msg = `error while creating log for ${tpString(tp)} in dir ${d.path}: ${errMessage(e)}`;
        this.handleLogDirFailure(d.path, msg);
        throw new KafkaStorageError(msg, e);
      }
      throw e;
    }
  }

  private reconcileTopicId(log: UnifiedLog, topicId: string | undefined): void {
    if (!topicId) return;
    if (log.topicId && log.topicId !== topicId) {
      throw new KafkaError(
        ErrorCode.INCONSISTENT_TOPIC_ID,
        `the log for ${tpString(log.topicPartition)} has topic id ${log.topicId}, not ${topicId}`,
      );
    }
    if (!log.topicId) {
      try {
        writePartitionMetadata(this.fs, log.dir, topicId);
      } catch (e) {
        if (!isIoError(e)) throw e;
        const msg = `error writing partition.metadata for ${tpString(log.topicPartition)}: ${errMessage(e)}`;
        this.handleLogDirFailure(log.parentDir, msg);
        throw new KafkaStorageError(msg, e);
      }
      log.topicId = topicId;
    }
  }

  private nextLogDir(): LogDirState {
    const counts = new Map<string, number>();
    for (const l of this.logs.values()) counts.set(l.parentDir, (counts.get(l.parentDir) ?? 0) + 1);
    let best: LogDirState | undefined;
    for (const d of this.dirs.values()) {
      if (!d.online) continue;
      if (!best || (counts.get(d.path) ?? 0) < (counts.get(best.path) ?? 0)) best = d;
    }
    if (!best) throw new KafkaStorageError('no online log directory to create a log in');
    return best;
  }

  /**
   * Removes a partition's log: closes it, renames its directory to `<topic>-<partition>.<uuid>-delete`
   * and removes that after file.delete.delay.ms (a crash in between leaves the -delete directory,
   * which the next startup removes). Returns the removed log, if there was one.
   */
  deleteLog(topic: string, partition: number): UnifiedLog | undefined {
    const key = topicPartitionKey(topic, partition);
    this.failedPartitions.delete(key);
    this.preferredLogDirs.delete(key);
    this.removeFutureLog(topic, partition);
    const log = this.logs.get(key);
    if (!log) return undefined;
    // Kafka's asyncDelete: a pass on it stops before it touches the log again, and its checkpoint goes.
    this._cleaner?.abortCleaning(log.topicPartition);
    this.logs.delete(key);
    this._cleaner?.updateCheckpoints(log.parentDir, log.topicPartition);
    if (log.isOffline) {
      log.closeHandlers();
      return log;
    }
    const parent = log.parentDir;
    try {
      log.close();
      log.localLog.renameDir(deleteDirName(log.topicPartition));
      this.fs.fsyncDirSync(parent);
      this.logger.info(`log for partition ${tpString(log.topicPartition)} is renamed to ${log.dir} and is scheduled for deletion`);
      this.scheduleDirDelete(log.dir);
    } catch (e) {
      if (!isIoError(e) && !(e instanceof KafkaStorageError)) throw e;
      this.handleLogDirFailure(parent, `error while deleting ${tpString(log.topicPartition)}: ${errMessage(e)}`);
    }
    return log;
  }

  private scheduleDirDelete(dir: string): void {
    const run = () => {
      this.pendingDirDeletes.delete(dir);
      try {
        this.fs.rmSync(dir, { recursive: true, force: true });
        this.logger.info(`deleted log directory ${dir}`);
      } catch (e) {
        this.handleLogDirFailure(path.dirname(dir), `error deleting ${dir}: ${errMessage(e)}`);
      }
    };
    const delay = this.defaultConfig.fileDeleteDelayMs;
    this.pendingDirDeletes.set(dir, this.scheduler.scheduleOnce(`delete-log-${path.basename(dir)}`, delay, run));
  }

  /** Applies a topic's new effective config to its logs. */
  updateTopicConfig(topic: string, config: LogConfig): void {
    for (const l of this.logs.values()) if (l.topicPartition.topic === topic) l.updateConfig(config);
  }

  updateDefaultConfig(config: LogConfig): void {
    this.defaultConfig = config;
  }

  /**
   * New log.cleaner.* settings (dynamic broker configs): before startup they are the ones the
   * cleaner starts with; afterwards the running cleaner is reconfigured (LogCleaner.reconfigure).
   * Whether a cleaner runs at all (log.cleaner.enable) is fixed at startup, as in Kafka.
   */
  reconfigureCleaner(config: CleanerConfig): Promise<void> {
    this.cleanerConfig = config;
    return this._cleaner?.reconfigure(config) ?? Promise.resolve();
  }

  // ---- directories ----------------------------------------------------------------------------

  get logDirs(): LogDirState[] {
    return [...this.dirs.values()].map((d) => ({ ...d }));
  }

  get liveLogDirs(): string[] {
    return [...this.dirs.values()].filter((d) => d.online).map((d) => d.path);
  }

  get offlineLogDirs(): string[] {
    return [...this.dirs.values()].filter((d) => !d.online).map((d) => d.path);
  }

  /** Registers a listener, called with (dir, reason) when a log directory goes offline. */
  onLogDirFailure(listener: LogDirFailureListener): void {
    this.listeners.push(listener);
  }

  /**
   * Takes a directory offline: every log in it raises KAFKA_STORAGE_ERROR from now on and its
   * handles are released. Idempotent.
   */
  handleLogDirFailure(dir: string, reason: string): void {
    const d = this.dirs.get(path.resolve(dir));
    if (!d || !d.online) return;
    d.online = false;
    d.offlineReason = reason;
    this.logger.error(`log directory ${d.path} is offline: ${reason}`);
    this._cleaner?.handleLogDirFailure(d.path);
    for (const l of this.logs.values()) if (l.parentDir === d.path) l.markOffline(`log directory ${d.path} failed: ${reason}`);
    for (const l of this.futureLogs.values()) if (l.parentDir === d.path) l.markOffline(`log directory ${d.path} failed: ${reason}`);
    for (const l of this.listeners) {
      try {
        l(d.path, reason);
      } catch (e) {
        this.logger.error('log dir failure listener threw', { err: e });
      }
    }
  }

  /** The online logs of a directory, future replicas included (their checkpoints live there too, as in Kafka). */
  private logsIn(dir: string): UnifiedLog[] {
    return [...this.logs.values(), ...this.futureLogs.values()].filter((l) => l.parentDir === dir && !l.isOffline);
  }

  // ---- checkpoints ----------------------------------------------------------------------------

  private writeCheckpoint(dir: string, name: string, entries: CheckpointEntry[]): void {
    try {
      new OffsetCheckpointFile(this.fs, path.join(dir, name)).write(entries);
    } catch (e) {
      if (!isIoError(e)) throw e;
      this.handleLogDirFailure(dir, `error writing ${name}: ${errMessage(e)}`);
    }
  }

  /** recovery-point-offset-checkpoint of every online directory. */
  checkpointLogRecoveryOffsets(): void {
    for (const d of this.dirs.values()) {
      if (!d.online || !d.loaded) continue;
      this.writeCheckpoint(
        d.path,
        RECOVERY_POINT_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.recoveryPoint })),
      );
    }
  }

  /** log-start-offset-checkpoint of every online directory. */
  checkpointLogStartOffsets(): void {
    for (const d of this.dirs.values()) {
      if (!d.online || !d.loaded) continue;
      this.writeCheckpoint(
        d.path,
        LOG_START_OFFSET_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.logStartOffset })),
      );
    }
  }

  /** replication-offset-checkpoint: the high watermarks the replication layer set on each log. */
  checkpointHighWatermarks(): void {
    for (const d of this.dirs.values()) {
      if (!d.online || !d.loaded) continue;
      this.writeCheckpoint(
        d.path,
        REPLICATION_OFFSET_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.highWatermark })),
      );
    }
  }

  // ---- background work ------------------------------------------------------------------------

  /**
   * One retention pass (Kafka's cleanupLogs) over the online logs without compact, their cleaning
   * paused meanwhile (a policy switched to compact must not start a pass mid-retention); compacted
   * logs are the cleaner's (or, without one, get no retention, as in Kafka). Returns the number of
   * segments deleted.
   */
  cleanupLogs(): number {
    let n = 0;
    const cleaner = this._cleaner;
    const deletable = cleaner ? cleaner.pauseCleaningForNonCompactedPartitions() : [...this.logs.values()].filter((l) => !compactEnabled(l.config));
    try {
      for (const l of deletable) {
        if (l.isOffline) continue;
        try {
          n += l.deleteOldSegments();
        } catch (e) {
          if (!(e instanceof KafkaStorageError)) this.logger.error(`retention of ${tpString(l.topicPartition)} failed`, { err: e });
        }
      }
    } finally {
      cleaner?.resumeCleaning(deletable.map((l) => l.topicPartition));
    }
    return n;
  }

  /** The flush.ms flusher: background flush of logs whose last flush is older than their flush.ms. */
  flushDirtyLogs(): void {
    const now = this.time.milliseconds();
    for (const l of this.logs.values()) l.flushIfDue(now);
  }

  // ---- shutdown -------------------------------------------------------------------------------

  private checkNotClosed(): void {
    if (this.state === 'closed') throw new KafkaStorageError('the log manager is shut down');
    // Creating a log while directories are still being scanned could create a second copy of one.
    if (this.state === 'new') throw new Error('the log manager has not loaded its logs yet (call startup() or loadLogs())');
  }

  /**
   * Clean shutdown: stop background tasks, flush and close every log, write every checkpoint, and
   * only then write the clean-shutdown marker, in each directory that stayed online throughout.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.loading) throw new Error('cannot close the log manager while it is loading logs');
    this.state = 'closed';
    // Kafka's shutdown order: the cleaner stops first (a pass in flight deletes its .cleaned files).
    await this._cleaner?.shutdown();
    for (const t of this.tasks) t.cancel();
    this.tasks.length = 0;
    for (const t of this.pendingDirDeletes.values()) t.cancel();
    this.pendingDirDeletes.clear();
    for (const d of this.dirs.values()) {
      for (const l of [...this.logs.values(), ...this.futureLogs.values()].filter((x) => x.parentDir === d.path)) {
        if (!d.online || l.isOffline) {
          l.closeHandlers();
          continue;
        }
        try {
          l.flush();
        } catch (e) {
          if (!(e instanceof KafkaStorageError)) this.logger.error(`flush of ${tpString(l.topicPartition)} at shutdown failed`, { err: e });
        }
      }
      // A directory never fully loaded holds logs nobody has recovered: no checkpoint or marker
      // may claim anything about them.
      if (!d.online || !d.loaded) continue;
      this.writeCheckpoint(
        d.path,
        RECOVERY_POINT_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.recoveryPoint })),
      );
      this.writeCheckpoint(
        d.path,
        LOG_START_OFFSET_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.logStartOffset })),
      );
      this.writeCheckpoint(
        d.path,
        REPLICATION_OFFSET_CHECKPOINT_FILE,
        this.logsIn(d.path).map((l) => ({ tp: l.topicPartition, offset: l.highWatermark })),
      );
      for (const l of this.logsIn(d.path)) {
        try {
          l.close();
        } catch (e) {
          if (!(e instanceof KafkaStorageError)) this.logger.error(`close of ${tpString(l.topicPartition)} failed`, { err: e });
        }
      }
      if (!d.online || d.hasFailedPartitions) continue;
      try {
        writeFileAtomic(this.fs, path.join(d.path, CLEAN_SHUTDOWN_FILE), CLEAN_SHUTDOWN_CONTENT);
      } catch (e) {
        if (!isIoError(e)) throw e;
        this.handleLogDirFailure(d.path, `error writing the clean shutdown marker: ${errMessage(e)}`);
      }
    }
    this.logs.clear();
    this.futureLogs.clear();
    this.ownScheduler?.shutdown();
  }
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
