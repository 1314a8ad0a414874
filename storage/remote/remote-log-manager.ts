/**
 * Tiered storage's engine (Kafka's RemoteLogManager, KIP-405): for the partitions this broker
 * leads, copies rolled segments to remote storage and expires remote segments; for the partitions
 * it follows, keeps the log's highest offset in remote storage current; for every tiered
 * partition, reads remote data (a fetch below the local log start offset) and looks up offsets by
 * timestamp in remote segments.
 *
 * Owns: one task per tiered partition (copy + expiration on a leader, the highest-remote-offset
 * refresh on a follower), run every remote.log.manager.task.interval.ms; the copy byte-rate quota
 * (remote.log.manager.copy.max.bytes.per.second); the copy state of each leader (the highest
 * offset copied, found again from the metadata when leadership starts).
 *
 * Invariants:
 * - Only a leader copies or expires, and only after it has found what is already in remote storage
 *   (findHighestRemoteOffset, for a new leader before any size-based deletion: KAFKA-20732).
 * - A segment is copied only once it is rolled and wholly below the last stable offset; the copy is
 *   published COPY_SEGMENT_STARTED before any byte moves and COPY_SEGMENT_FINISHED after the
 *   storage manager returns; the log's highest offset in remote storage (and with it local
 *   deletion, UnifiedLog) moves only after FINISHED is durable. A failed copy deletes what it wrote
 *   (DELETE_SEGMENT_STARTED -> FINISHED) or leaves it for the expiration pass to retry.
 * - Expiration moves the log start offset before deleting the segments below it; a segment is
 *   deleted DELETE_SEGMENT_STARTED -> storage delete -> DELETE_SEGMENT_FINISHED, and dangling
 *   DELETE_SEGMENT_STARTED segments are retried on every pass.
 * - A partition's task never overlaps itself (one run at a time, the next scheduled after it
 *   ends); every await is followed by a check that the task was not cancelled (leadership moved,
 *   the partition stopped, the manager closed), so a stale task never publishes.
 * - Remote failures are logged with the partition and retried at the next interval; they never
 *   take the log offline.
 * - A remote read fetches a bounded byte range (the budget + REMOTE_READ_SLACK_BYTES from the
 *   index position) and falls back to the rest of the segment only when that range holds no
 *   whole batch at or after the fetch offset, so its answer is what a whole-segment read gives.
 *
 * Concurrency: krill is single-threaded; the await points are the metadata manager's and the
 * storage manager's calls and the index lookups. Between them the log may be appended to, rolled,
 * or have local segments deleted (only ones at or below the highest offset in remote storage,
 * which this manager alone raises), so every log read here goes through UnifiedLog's own checks.
 */
import * as crypto from 'node:crypto';
import type { Logger } from '../../common/logger';
import { Rate } from '../../common/rate';
import type { ScheduledTask, Scheduler } from '../../common/scheduler';
import type { Time } from '../../common/time';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { ATTRIBUTES_OFFSET, BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, CONTROL_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD } from '../../protocol/records/record-batch';
import type { AbortedTxn, TxnIndexSearchResult } from '../index/transaction-index';
import { LeaderEpochCheckpointFile, type EpochEntry } from '../leader-epoch-file-cache';
import type { FetchDataInfo } from '../log-segment';
import type { UnifiedLog } from '../unified-log';
import { firstRecordAtOrAfter, nextOffsetAfter, type RecordTimestampAndOffset } from '../record-access';
import type { RemoteLogMetadataManager } from './remote-log-metadata-manager';
import {
  RemoteLogSegmentMetadata,
  RemoteLogSegmentState,
  RemotePartitionDeleteState,
  SegmentLeaderEpoch,
  TopicIdPartition,
  topicIdPartitionString,
} from './remote-log-segment-metadata';
import { IndexType, LogSegmentData, RemoteStorageManager } from './remote-storage-manager';

export interface RemoteLogManagerConfig {
  brokerId: number;
  /** remote.log.manager.task.interval.ms (30 s). */
  taskIntervalMs: number;
  /** remote.log.manager.copy.max.bytes.per.second (Long.MAX_VALUE = no limit: Infinity). */
  copyMaxBytesPerSecond: number;
  /** remote.log.manager.copy.quota.window.num (11) and .window.size.seconds (1). */
  copyQuotaWindowNum: number;
  copyQuotaWindowSizeSeconds: number;
  /** remote.log.metadata.custom.metadata.max.bytes (128): a copy whose custom metadata is larger is undone and the partition's copying stops. */
  customMetadataMaxBytes: number;
  /** remote.log.manager.fetch.max.bytes.per.second (Infinity = no limit), over .fetch.quota.window.num windows of .window.size.seconds. */
  fetchMaxBytesPerSecond: number;
  fetchQuotaWindowNum: number;
  fetchQuotaWindowSizeSeconds: number;
}

export const DEFAULT_REMOTE_LOG_MANAGER_CONFIG: Readonly<Omit<RemoteLogManagerConfig, 'brokerId'>> = Object.freeze({
  taskIntervalMs: 30_000,
  copyMaxBytesPerSecond: Infinity,
  copyQuotaWindowNum: 11,
  copyQuotaWindowSizeSeconds: 1,
  customMetadataMaxBytes: 128,
  fetchMaxBytesPerSecond: Infinity,
  fetchQuotaWindowNum: 11,
  fetchQuotaWindowSizeSeconds: 1,
});

/**
 * What reads need of the remote index cache (RemoteIndexCache in remote-index-cache.ts has this
 * shape); without one, reads scan the fetched segment from its start and read_committed reads
 * find no aborted transaction in remote segments.
 */
export interface RemoteIndexLookups {
  /** A file position in the remote segment at or before the batch holding `offset`. */
  lookupOffset(metadata: RemoteLogSegmentMetadata, offset: bigint): Promise<number>;
  /** A file position at or before the first batch whose max timestamp may be >= `timestamp` at or after `startingOffset`. */
  lookupTimestamp(metadata: RemoteLogSegmentMetadata, timestamp: number, startingOffset: bigint): Promise<number>;
  /** The aborted transactions of the segment overlapping [fetchOffset, upperBoundOffset); isComplete = no later segment can add any. */
  collectAbortedTransactions(metadata: RemoteLogSegmentMetadata, fetchOffset: bigint, upperBoundOffset: bigint): Promise<TxnIndexSearchResult>;
  /** The segment was deleted: drop its cached indexes. */
  remove(segmentId: string): void;
}

/**
 * A remote read asks the storage manager for the fetch's byte budget plus this much from the
 * position the offset index gives (which is at most index.interval.bytes, 4 KiB by default, plus
 * one batch before the fetch offset's batch), instead of the rest of the segment.
 */
export const REMOTE_READ_SLACK_BYTES = 64 * 1024;

/** A fetch of one partition that must be served from remote storage (Kafka's RemoteStorageFetchInfo). */
export interface RemoteFetchInfo {
  tp: TopicIdPartition;
  fetchOffset: bigint;
  /** The smaller of the partition's and the request's remaining byte budget. */
  maxBytes: number;
  minOneMessage: boolean;
  readCommitted: boolean;
}

/**
 * One topic's remote storage counts (Kafka's RemoteStorageMetrics in BrokerTopicMetrics: the
 * *PerSec meters as totals, the lag / size gauges as the last values seen), read by the metrics
 * layer at scrape time.
 */
export interface RemoteTopicStats {
  remoteCopyBytes: number;
  remoteCopyRequests: number;
  failedRemoteCopyRequests: number;
  remoteFetchBytes: number;
  remoteFetchRequests: number;
  failedRemoteFetchRequests: number;
  remoteDeleteRequests: number;
  failedRemoteDeleteRequests: number;
  /** Per partition: bytes and segments of the rolled local segments not yet copied (leader), at its last copy pass. */
  remoteCopyLagBytes: Map<number, number>;
  remoteCopyLagSegments: Map<number, number>;
  /** Per partition: bytes and number of the remote segments, at its last expiration pass. */
  remoteLogSizeBytes: Map<number, number>;
  remoteLogMetadataCount: Map<number, number>;
}

function emptyTopicStats(): RemoteTopicStats {
  return {
    remoteCopyBytes: 0,
    remoteCopyRequests: 0,
    failedRemoteCopyRequests: 0,
    remoteFetchBytes: 0,
    remoteFetchRequests: 0,
    failedRemoteFetchRequests: 0,
    remoteDeleteRequests: 0,
    failedRemoteDeleteRequests: 0,
    remoteCopyLagBytes: new Map(),
    remoteCopyLagSegments: new Map(),
    remoteLogSizeBytes: new Map(),
    remoteLogMetadataCount: new Map(),
  };
}

interface PartitionTask {
  readonly tp: TopicIdPartition;
  readonly role: 'leader' | 'follower';
  timer: ScheduledTask | null;
  running: boolean;
  cancelled: boolean;
  /** Leader: the last offset known to be copied (undefined until found from the metadata). */
  copiedOffset: bigint | undefined;
  logStartOffsetUpdated: boolean;
  /** Copying stopped for good (custom metadata too large), as Kafka cancels the task. */
  copyStopped: boolean;
}

export interface RemoteLogManagerOptions {
  config: RemoteLogManagerConfig;
  rsm: RemoteStorageManager;
  rlmm: RemoteLogMetadataManager;
  indexes?: RemoteIndexLookups;
  /** The local log of a partition, if this broker hosts it. */
  fetchLog: (tp: TopicIdPartition) => UnifiedLog | undefined;
  time: Time;
  scheduler: Scheduler;
  logger: Logger;
}

/** Kafka's buildFilteredLeaderEpochMap: epochs that hold no record (the next one starts at the same offset) are dropped. */
export function filteredLeaderEpochs(entries: readonly { epoch: number; startOffset: bigint }[]): { epoch: number; startOffset: bigint }[] {
  const out: { epoch: number; startOffset: bigint }[] = [];
  for (let i = 0; i < entries.length; i++) {
    const next = entries[i + 1];
    if (next && next.startOffset === entries[i].startOffset) continue;
    out.push(entries[i]);
  }
  return out;
}

/**
 * Kafka's isRemoteSegmentWithinLeaderEpochs: whether a remote segment belongs to the partition's
 * current leader-epoch lineage (entries filtered of empty epochs) and ends below the log end offset.
 * Segments outside it (an unclean election's divergent history) are not counted or kept by retention.
 */
export function isRemoteSegmentWithinLeaderEpochs(m: RemoteLogSegmentMetadata, logEndOffset: bigint, lineage: readonly EpochEntry[]): boolean {
  if (lineage.length === 0) return false;
  const segEpochs = filteredLeaderEpochs(m.segmentLeaderEpochs.map((e) => ({ epoch: e.epoch, startOffset: e.startOffset })));
  const segLast = segEpochs[segEpochs.length - 1].epoch;
  const first = lineage[0].epoch;
  const last = lineage[lineage.length - 1].epoch;
  if (segLast < first || segLast > last) return false;
  const byEpoch = new Map(lineage.map((e, i) => [e.epoch, i]));
  const segFirst = segEpochs.find((e) => e.epoch >= first);
  if (!segFirst) return false;
  for (let i = 0; i < segEpochs.length; i++) {
    const { epoch, startOffset } = segEpochs[i];
    if (epoch < segFirst.epoch) continue;
    const li = byEpoch.get(epoch);
    if (li === undefined) return false;
    if (epoch === segFirst.epoch && li > 0 && startOffset < lineage[li].startOffset) return false;
    if (epoch === segLast) {
      const nextLineage = lineage[li + 1];
      if (nextLineage && m.endOffset > nextLineage.startOffset - 1n) return false;
    } else {
      const nextLineage = lineage[li + 1];
      const nextSeg = segEpochs[i + 1];
      if (!nextLineage || nextLineage.epoch !== nextSeg.epoch || nextLineage.startOffset !== nextSeg.startOffset) return false;
    }
  }
  return m.endOffset < logEndOffset;
}

/** The leader-epoch-checkpoint file's bytes for these entries (what a remote segment carries as its LEADER_EPOCH index). */
export function leaderEpochCheckpointBytes(entries: readonly EpochEntry[]): Buffer {
  return Buffer.from(LeaderEpochCheckpointFile.encode(entries), 'utf8');
}


/** A fresh segment id: 16 random bytes in Kafka's base64 form (URL-safe, unpadded), as topic ids. */
export function newRemoteSegmentUuid(): string {
  return crypto.randomBytes(16).toString('base64url');
}

export class RemoteLogManager {
  private readonly tasks = new Map<string, PartitionTask>();
  private readonly copyQuota: Rate;
  private readonly fetchQuota: Rate;
  private closed = false;
  /** By topic name (Kafka's topic tag). */
  readonly stats = new Map<string, RemoteTopicStats>();

  /** The topic's counters, created on first use. */
  topicStats(topic: string): RemoteTopicStats {
    let s = this.stats.get(topic);
    if (!s) {
      s = emptyTopicStats();
      this.stats.set(topic, s);
    }
    return s;
  }

  constructor(private readonly opts: RemoteLogManagerOptions) {
    const c = opts.config;
    this.copyQuota = new Rate({ windowMs: c.copyQuotaWindowSizeSeconds * 1000, samples: c.copyQuotaWindowNum }, c.copyMaxBytesPerSecond);
    this.fetchQuota = new Rate({ windowMs: c.fetchQuotaWindowSizeSeconds * 1000, samples: c.fetchQuotaWindowNum }, c.fetchMaxBytesPerSecond);
  }

  /** remote.log.manager.fetch.max.bytes.per.second changed (a dynamic broker config). */
  updateFetchQuota(bytesPerSecond: number): void {
    this.fetchQuota.bound = bytesPerSecond;
  }

  /** How long remote reads should pause to respect the fetch quota (0 = read now), as Kafka's RLMQuotaManager.getThrottleTimeMs. */
  fetchThrottleTimeMs(): number {
    return this.fetchQuota.throttleTimeMs(this.opts.time.milliseconds());
  }

  /** The finished remote segment holding `offset` of `epoch` (a follower rebuilding its state). */
  remoteLogSegmentMetadataFor(tp: TopicIdPartition, epoch: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null> {
    return this.opts.rlmm.remoteLogSegmentMetadata(tp, epoch, offset);
  }

  /** One index of a remote segment, straight from the storage manager (a follower rebuilding its state). */
  fetchIndex(m: RemoteLogSegmentMetadata, type: IndexType): Promise<Buffer> {
    return this.opts.rsm.fetchIndex(m, type);
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  /** remote.log.manager.copy.max.bytes.per.second changed (a dynamic broker config). */
  updateCopyQuota(bytesPerSecond: number): void {
    this.copyQuota.bound = bytesPerSecond;
  }

  /**
   * Leadership moved (Kafka's onLeadershipChange): leaders get a copy + expiration task, followers
   * a highest-remote-offset task; a partition's previous task is cancelled first.
   */
  onLeadershipChange(leaders: readonly TopicIdPartition[], followers: readonly TopicIdPartition[]): void {
    if (this.closed) return;
    this.opts.rlmm.onPartitionLeadershipChanges(leaders, followers);
    for (const tp of leaders) this.startTask(tp, 'leader');
    for (const tp of followers) this.startTask(tp, 'follower');
  }

  /**
   * The partitions are no longer hosted here (or tiering was turned off for them): their tasks
   * stop. With deleteRemoteLog (the topic was deleted, or remote.log.delete.on.disable), their
   * remote data is deleted too: DELETE_PARTITION_MARKED, STARTED, every segment, FINISHED
   * (Kafka's deleteRemoteLogPartition); the returned promise settles when that is done.
   */
  stopPartitions(partitions: readonly TopicIdPartition[], o: { deleteRemoteLog: boolean }): Promise<void> {
    for (const tp of partitions) this.cancelTask(topicIdPartitionString(tp));
    const done = o.deleteRemoteLog ? Promise.all(partitions.map((tp) => this.deleteRemoteLogPartition(tp))).then(() => undefined) : Promise.resolve();
    // Never rejects: the deletion logs its own failures, and the metadata manager may have been
    // closed meanwhile (broker shutdown).
    return done.then(() => {
      if (this.closed) return;
      try {
        this.opts.rlmm.onStopPartitions(partitions);
      } catch (err) {
        this.log.warn(`the metadata manager could not drop ${partitions.map(topicIdPartitionString).join(', ')}: ${(err as Error).message}`);
      }
    });
  }

  private async deleteRemoteLogPartition(tp: TopicIdPartition): Promise<void> {
    const brokerId = this.opts.config.brokerId;
    const at = (): bigint => BigInt(this.opts.time.milliseconds());
    try {
      await this.opts.rlmm.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: RemotePartitionDeleteState.DELETE_PARTITION_MARKED, eventTimestampMs: at(), brokerId });
      await this.opts.rlmm.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: RemotePartitionDeleteState.DELETE_PARTITION_STARTED, eventTimestampMs: at(), brokerId });
      for (const m of await this.opts.rlmm.listRemoteLogSegments(tp)) {
        if (m.state === RemoteLogSegmentState.DELETE_SEGMENT_FINISHED) continue;
        await this.deleteRemoteLogSegment(m);
      }
      await this.opts.rlmm.putRemotePartitionDeleteMetadata({ topicIdPartition: tp, state: RemotePartitionDeleteState.DELETE_PARTITION_FINISHED, eventTimestampMs: at(), brokerId });
      this.log.info(`deleted the remote data of ${topicIdPartitionString(tp)}`);
    } catch (err) {
      this.log.error(`deleting the remote data of ${topicIdPartitionString(tp)} failed (it is left in DELETE_PARTITION_STARTED): ${(err as Error).message}`);
    }
  }

  /** The partitions this manager runs a task for, with the task's role. */
  taskRoles(): Map<string, 'leader' | 'follower'> {
    return new Map([...this.tasks.values()].map((t) => [topicIdPartitionString(t.tp), t.role]));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const key of [...this.tasks.keys()]) this.cancelTask(key);
  }

  private startTask(tp: TopicIdPartition, role: 'leader' | 'follower'): void {
    const key = topicIdPartitionString(tp);
    this.cancelTask(key);
    const task: PartitionTask = { tp, role, timer: null, running: false, cancelled: false, copiedOffset: undefined, logStartOffsetUpdated: false, copyStopped: false };
    this.tasks.set(key, task);
    this.schedule(task, 0);
  }

  private cancelTask(key: string): void {
    const t = this.tasks.get(key);
    if (!t) return;
    const s = this.stats.get(t.tp.topic);
    if (s) for (const m of [s.remoteCopyLagBytes, s.remoteCopyLagSegments, s.remoteLogSizeBytes, s.remoteLogMetadataCount]) m.delete(t.tp.partition);
    t.cancelled = true;
    t.timer?.cancel();
    this.tasks.delete(key);
  }

  private schedule(task: PartitionTask, delayMs: number): void {
    if (task.cancelled || this.closed) return;
    task.timer = this.opts.scheduler.scheduleOnce(`remote-log-${task.role}-${topicIdPartitionString(task.tp)}`, delayMs, () => {
      void this.runTask(task);
    });
  }

  /** Runs the partition's task once now (tests and the fault-injection tools); resolves when that run ends. */
  async runOnce(tp: TopicIdPartition): Promise<void> {
    const task = this.tasks.get(topicIdPartitionString(tp));
    if (task) await this.runTask(task, false);
  }

  private async runTask(task: PartitionTask, reschedule = true): Promise<void> {
    if (task.running || task.cancelled) return;
    task.running = true;
    try {
      const log = this.opts.fetchLog(task.tp);
      if (!log || !log.remoteLogEnabled() || log.isOffline) return;
      if (!this.opts.rlmm.isReady(task.tp)) {
        this.log.debug(`remote log metadata of ${topicIdPartitionString(task.tp)} is not loaded yet; the task runs again later`);
        return;
      }
      if (task.role === 'leader') {
        await this.copyLogSegmentsToRemote(task, log);
        if (!task.cancelled) await this.cleanupExpiredRemoteLogSegments(task, log);
      } else {
        const highest = await this.findHighestRemoteOffset(task.tp, log);
        if (!task.cancelled) log.updateHighestOffsetInRemoteStorage(highest.offset);
      }
    } catch (err) {
      if (!task.cancelled) this.log.error(`remote log task of ${topicIdPartitionString(task.tp)} (${task.role}) failed; retrying in ${this.opts.config.taskIntervalMs} ms: ${(err as Error).message}`);
    } finally {
      task.running = false;
      if (reschedule) this.schedule(task, this.opts.config.taskIntervalMs);
    }
  }

  // ---- copy -----------------------------------------------------------------------------------

  /**
   * Kafka's findHighestRemoteOffset: from the latest epoch of the log's lineage down, the first
   * epoch with a finished remote segment gives the highest copied offset, capped at that epoch's
   * end in this log. -1 when remote storage holds nothing of the lineage.
   */
  async findHighestRemoteOffset(tp: TopicIdPartition, log: UnifiedLog): Promise<{ offset: bigint; epoch: number }> {
    const entries = log.leaderEpochCache.entries;
    for (let i = entries.length - 1; i >= 0; i--) {
      const epoch = entries[i].epoch;
      const highest = await this.opts.rlmm.highestOffsetForEpoch(tp, epoch);
      if (highest === null) continue;
      const { epoch: requested, endOffset } = log.leaderEpochCache.endOffsetFor(epoch, log.logEndOffset);
      if (endOffset <= highest) return { offset: endOffset - 1n, epoch: requested };
      return { offset: highest, epoch };
    }
    return { offset: -1n, epoch: -1 };
  }

  /** Kafka's findLogStartOffset: the start of the first remote segment of the earliest epoch that has one, else the local log start offset. */
  async findLogStartOffset(tp: TopicIdPartition, log: UnifiedLog): Promise<bigint> {
    for (const e of log.leaderEpochCache.entries) {
      const segs = await this.opts.rlmm.listRemoteLogSegmentsForEpoch(tp, e.epoch);
      if (segs.length > 0) return segs[0].startOffset;
    }
    return log.localLogStartOffset;
  }

  private async copyLogSegmentsToRemote(task: PartitionTask, log: UnifiedLog): Promise<void> {
    // Seeding comes first even when copying is off: size-based expiration counts the local-only
    // bytes above the highest remote offset, so a leader that had not found it would count
    // copied bytes twice and over-delete (KAFKA-20732).
    if (!task.logStartOffsetUpdated) {
      const start = await this.findLogStartOffset(task.tp, log);
      if (task.cancelled) return;
      if (start > log.logStartOffset && start <= log.highWatermark) log.maybeIncrementLogStartOffset(start, 'SegmentDeletion');
      task.logStartOffsetUpdated = true;
    }
    if (task.copiedOffset === undefined) {
      const found = await this.findHighestRemoteOffset(task.tp, log);
      if (task.cancelled) return;
      task.copiedOffset = found.offset;
      log.updateHighestOffsetInRemoteStorage(found.offset);
      this.log.info(`found the highest copied remote offset ${found.offset} (epoch ${found.epoch}) of ${topicIdPartitionString(task.tp)} after becoming leader`);
    }
    if (task.copyStopped || log.config.remoteLogCopyDisable) return;
    const lso = log.lastStableOffset;
    this.recordCopyLag(task.tp, log);
    if (lso <= 0n || task.copiedOffset >= lso) return;
    // The log start offset may be ahead of the copied offset (DeleteRecords, tiering just enabled).
    const from = task.copiedOffset + 1n > log.logStartOffset ? task.copiedOffset + 1n : log.logStartOffset;
    const segs = log.logSegments();
    for (let i = 0; i + 1 < segs.length; i++) {
      const seg = segs[i];
      const nextBase = segs[i + 1].baseOffset;
      if (nextBase <= from) continue; // wholly copied (or below the log start)
      if (nextBase > lso) break; // not yet stable
      if (task.cancelled) return;
      await this.waitForCopyQuota(task, seg.size);
      if (task.cancelled) return;
      await this.copyLogSegment(task, log, seg.baseOffset, nextBase);
      if (task.cancelled || task.copyStopped) return;
      this.recordCopyLag(task.tp, log);
    }
  }

  /** Kafka's RemoteCopyLagBytes / RemoteCopyLagSegments: the rolled local segments above the highest remote offset. */
  private recordCopyLag(tp: TopicIdPartition, log: UnifiedLog): void {
    const s = this.topicStats(tp.topic);
    s.remoteCopyLagBytes.set(tp.partition, Math.max(0, log.onlyLocalLogSegmentsSize - log.activeSegment.size));
    s.remoteCopyLagSegments.set(tp.partition, Math.max(0, log.onlyLocalLogSegmentsCount - 1));
  }

  private async waitForCopyQuota(task: PartitionTask, bytes: number): Promise<void> {
    for (;;) {
      const wait = this.copyQuota.throttleTimeMs(this.opts.time.milliseconds());
      if (wait <= 0 || task.cancelled) break;
      this.log.debug(`copy quota exceeded; waiting ${wait} ms before copying the next segment of ${topicIdPartitionString(task.tp)}`);
      await new Promise<void>((resolve) => this.opts.scheduler.scheduleOnce('remote-log-copy-quota', Math.min(wait, 1000), resolve));
    }
    this.copyQuota.add(bytes, this.opts.time.milliseconds());
  }

  private async copyLogSegment(task: PartitionTask, log: UnifiedLog, baseOffset: bigint, nextBaseOffset: bigint): Promise<void> {
    const seg = log.logSegments().find((s) => s.baseOffset === baseOffset);
    if (!seg) return; // deleted meanwhile (only possible below the log start offset)
    const tpName = topicIdPartitionString(task.tp);
    const endOffset = nextBaseOffset - 1n;
    const snapshot = log.producerSnapshotPath(nextBaseOffset);
    if (!snapshot) throw new Error(`no producer snapshot at ${nextBaseOffset} for segment ${seg.baseOffset} of ${tpName}`);
    const lineage = log.leaderEpochCache.entries;
    const segEpochs = epochsInRange(lineage, seg.baseOffset, nextBaseOffset);
    if (segEpochs.length === 0) throw new Error(`segment ${seg.baseOffset} of ${tpName} has no leader epoch`);
    const now = BigInt(this.opts.time.milliseconds());
    const started: RemoteLogSegmentMetadata = {
      remoteLogSegmentId: { topicIdPartition: task.tp, id: newRemoteSegmentUuid() },
      startOffset: seg.baseOffset,
      endOffset,
      brokerId: this.opts.config.brokerId,
      maxTimestampMs: BigInt(seg.largestTimestamp()),
      eventTimestampMs: now,
      segmentLeaderEpochs: segEpochs,
      segmentSizeInBytes: seg.size,
      customMetadata: null,
      state: RemoteLogSegmentState.COPY_SEGMENT_STARTED,
    };
    this.log.info(`copying segment ${seg.baseOffset}..${endOffset} of ${tpName} (${seg.size} bytes) to remote storage as ${started.remoteLogSegmentId.id}`);
    await this.opts.rlmm.addRemoteLogSegmentMetadata(started);
    if (task.cancelled) return;
    const data: LogSegmentData = {
      logSegment: seg.log.file,
      offsetIndex: seg.offsetIndex.file,
      timeIndex: seg.timeIndex.file,
      transactionIndex: seg.txnIndex !== null ? seg.txnIndexFile : null,
      producerSnapshotIndex: snapshot,
      leaderEpochIndex: leaderEpochCheckpointBytes(epochsBefore(lineage, nextBaseOffset)),
    };
    let custom: Buffer | null;
    const stats = this.topicStats(task.tp.topic);
    stats.remoteCopyRequests++;
    try {
      custom = await this.opts.rsm.copyLogSegmentData(started, data);
    } catch (err) {
      stats.failedRemoteCopyRequests++;
      this.log.warn(`copy of segment ${seg.baseOffset} of ${tpName} failed, cleaning up ${started.remoteLogSegmentId.id}: ${(err as Error).message}`);
      await this.deleteRemoteLogSegment(started).catch((e: Error) => this.log.info(`cleanup of ${started.remoteLogSegmentId.id} failed, the expiration pass retries it: ${e.message}`));
      throw err;
    }
    if (custom !== null && custom.length > this.opts.config.customMetadataMaxBytes) {
      this.log.error(
        `custom metadata of ${started.remoteLogSegmentId.id} (${custom.length} bytes) exceeds remote.log.metadata.custom.metadata.max.bytes ${this.opts.config.customMetadataMaxBytes}; copying of ${tpName} stops and the copy is deleted`,
      );
      task.copyStopped = true;
      await this.deleteRemoteLogSegment({ ...started, customMetadata: custom }).catch((e: Error) => this.log.info(`cleanup of ${started.remoteLogSegmentId.id} failed: ${e.message}`));
      return;
    }
    if (task.cancelled) return;
    await this.opts.rlmm.updateRemoteLogSegmentMetadata({
      remoteLogSegmentId: started.remoteLogSegmentId,
      eventTimestampMs: BigInt(this.opts.time.milliseconds()),
      customMetadata: custom,
      state: RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
      brokerId: this.opts.config.brokerId,
    });
    task.copiedOffset = endOffset;
    stats.remoteCopyBytes += started.segmentSizeInBytes;
    log.updateHighestOffsetInRemoteStorage(endOffset);
    this.log.info(`copied segment ${seg.baseOffset}..${endOffset} of ${tpName} to remote storage as ${started.remoteLogSegmentId.id}`);
  }

  // ---- expiration -----------------------------------------------------------------------------

  private async deleteRemoteLogSegment(m: RemoteLogSegmentMetadata): Promise<void> {
    const brokerId = this.opts.config.brokerId;
    await this.opts.rlmm.updateRemoteLogSegmentMetadata({ remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: BigInt(this.opts.time.milliseconds()), customMetadata: m.customMetadata, state: RemoteLogSegmentState.DELETE_SEGMENT_STARTED, brokerId });
    const stats = this.topicStats(m.remoteLogSegmentId.topicIdPartition.topic);
    stats.remoteDeleteRequests++;
    try {
      await this.opts.rsm.deleteLogSegmentData(m);
    } catch (err) {
      stats.failedRemoteDeleteRequests++;
      throw err;
    }
    this.opts.indexes?.remove(m.remoteLogSegmentId.id);
    await this.opts.rlmm.updateRemoteLogSegmentMetadata({ remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: BigInt(this.opts.time.milliseconds()), customMetadata: m.customMetadata, state: RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, brokerId });
  }

  /**
   * Kafka's cleanupExpiredRemoteLogSegments: walks the lineage's epochs in order and, per epoch,
   * its remote segments by offset, deleting those below the log start offset or breaching
   * retention.ms (largest timestamp) or retention.bytes (over the finished remote segments of the
   * lineage plus the local-only segments), stopping at the first that is kept; retries dangling
   * DELETE_SEGMENT_STARTED ones; moves the log start offset first; then deletes segments of epochs
   * older than the lineage's earliest (an unclean election's leftovers).
   */
  private async cleanupExpiredRemoteLogSegments(task: PartitionTask, log: UnifiedLog): Promise<void> {
    const tp = task.tp;
    const all = await this.opts.rlmm.listRemoteLogSegments(tp);
    if (task.cancelled) return;
    const sizeStats = this.topicStats(tp.topic);
    sizeStats.remoteLogMetadataCount.set(tp.partition, all.length);
    sizeStats.remoteLogSizeBytes.set(tp.partition, all.reduce((n, m) => n + m.segmentSizeInBytes, 0));
    if (all.length === 0) return;
    const remoteEpochs = new Set<number>();
    for (const m of all) for (const e of m.segmentLeaderEpochs) remoteEpochs.add(e.epoch);
    const lineage = filteredLeaderEpochs(log.leaderEpochCache.entries);
    const logStartOffset = log.logStartOffset;
    const logEndOffset = log.logEndOffset;
    const config = log.config;
    const nowMs = this.opts.time.milliseconds();

    let remainingBreachedSize = 0n;
    if (config.retentionBytes > -1) {
      let remoteSize = 0n;
      const seen = new Set<string>();
      for (const e of lineage) {
        for (const m of await this.opts.rlmm.listRemoteLogSegmentsForEpoch(tp, e.epoch)) {
          if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED || seen.has(m.remoteLogSegmentId.id)) continue;
          if (!isRemoteSegmentWithinLeaderEpochs(m, logEndOffset, lineage)) continue;
          seen.add(m.remoteLogSegmentId.id);
          remoteSize += BigInt(m.segmentSizeInBytes);
        }
        if (task.cancelled) return;
      }
      const total = BigInt(log.onlyLocalLogSegmentsSize) + remoteSize;
      if (total > BigInt(config.retentionBytes)) remainingBreachedSize = total - BigInt(config.retentionBytes);
    }
    const cleanupUntilMs = config.retentionMs > -1 ? BigInt(nowMs - config.retentionMs) : undefined;

    const toDelete: RemoteLogSegmentMetadata[] = [];
    const chosen = new Set<string>();
    // Dangling segments first, wherever they are: a delete that did not finish (retried), and a
    // copy that never finished. This partition's copies run in this same task, before this pass,
    // so none is in flight here: a COPY_SEGMENT_STARTED is a failed copy's or a crashed or
    // previous leader's leftover. (A previous leader still uploading it gets its FINISHED refused:
    // DELETE states cannot go back.)
    for (const m of all) {
      if (m.state === RemoteLogSegmentState.DELETE_SEGMENT_STARTED || m.state === RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
        toDelete.push(m);
        chosen.add(m.remoteLogSegmentId.id);
      }
    }
    let newLogStartOffset: bigint | undefined;
    const raiseStart = (m: RemoteLogSegmentMetadata): void => {
      if (newLogStartOffset === undefined || newLogStartOffset < m.endOffset + 1n) newLogStartOffset = m.endOffset + 1n;
    };
    let canProcess = true;
    const firstEpoch = lineage.length > 0 ? lineage[0].epoch : undefined;
    for (const e of lineage) {
      if (!canProcess) break;
      const segs = await this.opts.rlmm.listRemoteLogSegmentsForEpoch(tp, e.epoch);
      if (task.cancelled) return;
      for (const m of segs) {
        if (!canProcess) break;
        const id = m.remoteLogSegmentId.id;
        if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED || chosen.has(id)) continue;
        let shouldDelete = firstEpoch !== undefined && m.segmentLeaderEpochs.every((x) => x.epoch <= firstEpoch) && m.endOffset < logStartOffset;
        let valid = false;
        if (!shouldDelete) {
          valid = isRemoteSegmentWithinLeaderEpochs(m, logEndOffset, lineage);
          if (valid) {
            if (cleanupUntilMs !== undefined && m.maxTimestampMs <= cleanupUntilMs) {
              shouldDelete = true;
              remainingBreachedSize = remainingBreachedSize > BigInt(m.segmentSizeInBytes) ? remainingBreachedSize - BigInt(m.segmentSizeInBytes) : 0n;
              this.log.info(`deleting remote segment ${id} of ${topicIdPartitionString(tp)}: retention.ms ${config.retentionMs} breach`);
            } else if (remainingBreachedSize > 0n && remainingBreachedSize - BigInt(m.segmentSizeInBytes) >= 0n) {
              shouldDelete = true;
              remainingBreachedSize -= BigInt(m.segmentSizeInBytes);
              this.log.info(`deleting remote segment ${id} of ${topicIdPartitionString(tp)}: retention.bytes ${config.retentionBytes} breach`);
            }
            if (shouldDelete) raiseStart(m);
          }
        } else {
          this.log.info(`deleting remote segment ${id} of ${topicIdPartitionString(tp)}: below the log start offset ${logStartOffset}`);
        }
        if (shouldDelete) toDelete.push(m), chosen.add(id);
        canProcess = shouldDelete || !valid;
      }
    }
    // The log start offset moves before anything is deleted, so no reader is sent to a gone segment.
    if (newLogStartOffset !== undefined && newLogStartOffset > log.logStartOffset) {
      const target = newLogStartOffset <= log.highWatermark ? newLogStartOffset : log.highWatermark;
      log.maybeIncrementLogStartOffset(target, 'SegmentDeletion');
    }
    for (const m of toDelete) {
      if (task.cancelled) return;
      try {
        await this.deleteRemoteLogSegment(m);
      } catch (err) {
        this.log.info(`remote segment ${m.remoteLogSegmentId.id} of ${topicIdPartitionString(tp)} could not be deleted, retrying at the next pass: ${(err as Error).message}`);
      }
    }
    // Segments of epochs older than the lineage's earliest: no longer referenced by this leader.
    if (firstEpoch !== undefined) {
      for (const epoch of [...remoteEpochs].filter((x) => x < firstEpoch).sort((a, b) => a - b)) {
        for (const m of await this.opts.rlmm.listRemoteLogSegmentsForEpoch(tp, epoch)) {
          if (task.cancelled) return;
          if (chosen.has(m.remoteLogSegmentId.id) || m.state === RemoteLogSegmentState.DELETE_SEGMENT_FINISHED) continue;
          if (!m.segmentLeaderEpochs.every((x) => x.epoch < firstEpoch)) continue;
          chosen.add(m.remoteLogSegmentId.id);
          try {
            await this.deleteRemoteLogSegment(m);
            this.log.info(`deleted remote segment ${m.remoteLogSegmentId.id} of ${topicIdPartitionString(tp)}: its epochs precede the leader's earliest epoch ${firstEpoch}`);
          } catch (err) {
            this.log.info(`remote segment ${m.remoteLogSegmentId.id} could not be deleted, retrying at the next pass: ${(err as Error).message}`);
          }
        }
      }
    }
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** The finished remote segment holding `offset` in the log's lineage (Kafka's fetchRemoteLogSegmentMetadata). */
  async fetchRemoteLogSegmentMetadata(tp: TopicIdPartition, log: UnifiedLog, offset: bigint): Promise<RemoteLogSegmentMetadata | null> {
    const epoch = log.leaderEpochCache.epochForOffset(offset);
    if (epoch < 0) return null;
    return this.opts.rlmm.remoteLogSegmentMetadata(tp, epoch, offset);
  }

  /**
   * Kafka's RemoteLogManager.read: the batches from the one holding fetchOffset, at most maxBytes
   * (the first batch whole when minOneMessage), from the remote segment holding the offset (or the
   * next one when compaction left none there). OFFSET_OUT_OF_RANGE when remote storage does not
   * hold the offset. read_committed reads carry the aborted transactions, from the remote
   * transaction indexes (fetched only as far as needed) and then the local ones.
   */
  async read(f: RemoteFetchInfo): Promise<FetchDataInfo> {
    const stats = this.topicStats(f.tp.topic);
    stats.remoteFetchRequests++;
    try {
      const info = await this.readRemote(f);
      stats.remoteFetchBytes += info.sizeInBytes;
      return info;
    } catch (err) {
      stats.failedRemoteFetchRequests++;
      throw err;
    }
  }

  private async readRemote(f: RemoteFetchInfo): Promise<FetchDataInfo> {
    const log = this.opts.fetchLog(f.tp);
    if (!log) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${topicIdPartitionString(f.tp)} is not hosted by this broker`);
    let m = await this.fetchRemoteLogSegmentMetadata(f.tp, log, f.fetchOffset);
    if (!m) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `received request for offset ${f.fetchOffset} of ${topicIdPartitionString(f.tp)}, which does not exist in remote storage`);
    }
    while (m) {
      const startPos = this.opts.indexes ? await this.opts.indexes.lookupOffset(m, f.fetchOffset) : 0;
      // Only what this fetch can return (plus the offset index's granularity), not the rest of the
      // segment; the rest when that range holds no whole batch at or after the offset (a batch
      // larger than the budget, or a compacted stretch).
      // (Without an index cache the position is 0 and the offset may be anywhere: the rest of the segment.)
      const rangeEnd = this.opts.indexes ? startPos + f.maxBytes + REMOTE_READ_SLACK_BYTES - 1 : Infinity;
      let data = await this.opts.rsm.fetchLogSegment(m, startPos, rangeEnd < m.segmentSizeInBytes - 1 ? rangeEnd : undefined);
      this.fetchQuota.add(data.length, this.opts.time.milliseconds());
      let first = firstBatchAtOrAfter(data, f.fetchOffset);
      if (!first && rangeEnd < m.segmentSizeInBytes - 1 && data.length === rangeEnd - startPos + 1) {
        data = await this.opts.rsm.fetchLogSegment(m, startPos);
        this.fetchQuota.add(data.length, this.opts.time.milliseconds());
        first = firstBatchAtOrAfter(data, f.fetchOffset);
      }
      if (first) {
        const firstSize = first.size;
        if (!f.minOneMessage && firstSize > f.maxBytes) {
          return { fetchOffsetMetadata: { messageOffset: f.fetchOffset, segmentBaseOffset: m.startOffset, relativePositionInSegment: startPos + first.position }, records: [], sizeInBytes: 0, firstEntryIncomplete: true, abortedTransactions: f.readCommitted ? [] : undefined };
        }
        const budget = f.minOneMessage && firstSize > f.maxBytes ? firstSize : f.maxBytes;
        const end = wholeBatchesEnd(data, first.position, budget);
        const records = data.subarray(first.position, end);
        const info: FetchDataInfo = {
          fetchOffsetMetadata: { messageOffset: f.fetchOffset, segmentBaseOffset: m.startOffset, relativePositionInSegment: startPos + first.position },
          records: records.length > 0 ? [records] : [],
          sizeInBytes: records.length,
          firstEntryIncomplete: false,
        };
        if (f.readCommitted) info.abortedTransactions = await this.abortedTransactions(f.tp, log, m, first.baseOffset, records.length > 0 ? nextOffsetAfter([records]) : m.endOffset + 1n);
        return info;
      }
      m = await this.fetchRemoteLogSegmentMetadata(f.tp, log, m.endOffset + 1n);
    }
    return { fetchOffsetMetadata: { messageOffset: f.fetchOffset, segmentBaseOffset: -1n, relativePositionInSegment: -1 }, records: [], sizeInBytes: 0, firstEntryIncomplete: false, abortedTransactions: f.readCommitted ? [] : undefined };
  }

  private async abortedTransactions(tp: TopicIdPartition, log: UnifiedLog, from: RemoteLogSegmentMetadata, startOffset: bigint, upperBoundOffset: bigint): Promise<AbortedTxn[]> {
    const out = new Map<string, AbortedTxn>();
    const add = (list: readonly AbortedTxn[]): void => {
      for (const a of list) out.set(`${a.producerId}:${a.firstOffset}`, a);
    };
    let m: RemoteLogSegmentMetadata | null = from;
    let complete = false;
    while (m && !complete) {
      if (this.opts.indexes) {
        const r = await this.opts.indexes.collectAbortedTransactions(m, startOffset, upperBoundOffset);
        add(r.abortedTransactions);
        complete = r.isComplete;
      }
      if (!complete) m = await this.fetchRemoteLogSegmentMetadata(tp, log, m.endOffset + 1n);
    }
    if (!complete && upperBoundOffset > log.localLogStartOffset) add(log.collectAbortedTransactions(startOffset > log.localLogStartOffset ? startOffset : log.localLogStartOffset, upperBoundOffset));
    return [...out.values()].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /**
   * Kafka's findOffsetByTimestamp over remote segments: the first record at or after
   * `startingOffset` whose timestamp is >= `timestamp`, searching the lineage's epochs from the one
   * holding startingOffset; null when no remote record qualifies (the caller then searches locally).
   */
  async findOffsetByTimestamp(tp: TopicIdPartition, timestamp: bigint, startingOffset: bigint): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | null> {
    const log = this.opts.fetchLog(tp);
    if (!log) return null;
    const entries = log.leaderEpochCache.entries;
    const startEpoch = log.leaderEpochCache.epochForOffset(startingOffset);
    for (const e of entries) {
      if (startEpoch >= 0 && e.epoch < startEpoch) continue;
      for (const m of await this.opts.rlmm.listRemoteLogSegmentsForEpoch(tp, e.epoch)) {
        if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED) continue;
        if (m.maxTimestampMs < timestamp || m.endOffset < startingOffset) continue;
        const startPos = this.opts.indexes ? await this.opts.indexes.lookupTimestamp(m, Number(timestamp), startingOffset) : 0;
        const data = await this.opts.rsm.fetchLogSegment(m, startPos);
        const found = firstRemoteRecordAtOrAfter(data, timestamp, startingOffset);
        if (found) return { ...found, leaderEpoch: log.leaderEpochCache.epochForOffset(found.offset) };
      }
    }
    return null;
  }
}

/** The lineage entries covering [from, to), the first moved to `from` (Kafka's getLeaderEpochEntries for a segment). */
export function epochsInRange(lineage: readonly EpochEntry[], from: bigint, to: bigint): SegmentLeaderEpoch[] {
  const out: SegmentLeaderEpoch[] = [];
  for (let i = 0; i < lineage.length; i++) {
    const e = lineage[i];
    const next = lineage[i + 1];
    const end = next ? next.startOffset : BigInt(Number.MAX_SAFE_INTEGER) * 1024n;
    if (end <= from || e.startOffset >= to) continue;
    out.push({ epoch: e.epoch, startOffset: e.startOffset < from ? from : e.startOffset });
  }
  return out;
}

/** The lineage entries that start below `to` (the leader-epoch checkpoint a copied segment carries). */
export function epochsBefore(lineage: readonly EpochEntry[], to: bigint): EpochEntry[] {
  return lineage.filter((e) => e.startOffset < to);
}

/** The first complete batch in `data` whose last offset is >= `offset`, with its position, base offset and size. */
export function firstBatchAtOrAfter(data: Buffer, offset: bigint): { position: number; baseOffset: bigint; size: number } | null {
  let pos = 0;
  while (pos + RECORD_BATCH_OVERHEAD <= data.length) {
    const size = LOG_OVERHEAD + data.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (size < RECORD_BATCH_OVERHEAD || pos + size > data.length) return null;
    const base = data.readBigInt64BE(pos + BASE_OFFSET_OFFSET);
    const last = base + BigInt(data.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET));
    if (last >= offset) return { position: pos, baseOffset: base, size };
    pos += size;
  }
  return null;
}

/** The end of the whole batches from `start` that fit in `budget` bytes (at least the first). */
function wholeBatchesEnd(data: Buffer, start: number, budget: number): number {
  let pos = start;
  while (pos + RECORD_BATCH_OVERHEAD <= data.length) {
    const size = LOG_OVERHEAD + data.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (pos + size > data.length) break;
    if (pos + size - start > budget && pos > start) break;
    pos += size;
    if (pos - start >= budget) break;
  }
  return pos;
}


/**
 * The first record with timestamp >= `timestamp` and offset >= `startingOffset` in the whole
 * batches of `data` (control batches skipped); each batch is looked at by record-access.ts, as a
 * local segment's search does (LogAppendTime from the header, CreateTime record by record).
 */
function firstRemoteRecordAtOrAfter(data: Buffer, timestamp: bigint, startingOffset: bigint): RecordTimestampAndOffset | null {
  let pos = 0;
  while (pos + RECORD_BATCH_OVERHEAD <= data.length) {
    const size = LOG_OVERHEAD + data.readInt32BE(pos + BATCH_LENGTH_OFFSET);
    if (pos + size > data.length) break;
    if ((data.readInt16BE(pos + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) === 0) {
      const hit = firstRecordAtOrAfter(data.subarray(pos, pos + size), timestamp, startingOffset);
      if (hit) return hit;
    }
    pos += size;
  }
  return null;
}
