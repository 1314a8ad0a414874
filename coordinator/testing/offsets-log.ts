/**
 * A __consumer_offsets partition written and loaded the way the group coordinator does it, for the
 * compaction test (coordinator/compacted-load.test.ts) and the bench (bench/cleaner.ts): offset
 * commits of `groups` groups over `partitions` partitions each (one batch per commit request of
 * up to `partitions` partitions), a group that commits and is then deleted (offset and group
 * tombstones), a cleaning of everything below the active segment in two passes (the second, later
 * in time, removes the tombstones once delete.retention.ms = 0 has passed), and a load by a fresh
 * GroupCoordinator reporting its time, the records it replayed and the committed offsets.
 *
 * No jest here (tsconfig.build.json compiles it): callers assert.
 */
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { CompressionType } from '../../protocol/records/record-batch';
import { Logger } from '../../common/logger';
import type { MockTime } from '../../common/testing/mock-time';
import type { MetadataCache, MetadataDelta, PartitionState } from '../../metadata/metadata-cache';
import type { Partition } from '../../replication/partition';
import { Cleaner, CleanerStats } from '../../storage/cleaner/cleaner';
import { LogToClean } from '../../storage/cleaner/log-cleaner-manager';
import { SkimpyOffsetMap } from '../../storage/cleaner/offset-map';
import { Throttler } from '../../storage/cleaner/throttler';
import type { UnifiedLog } from '../../storage/unified-log';
import { GroupCoordinator } from '../group/group-coordinator';
import type { GroupCoordinatorConfig } from '../group/group-coordinator-config';
import { groupMetadataTombstone, offsetCommitRecord, offsetCommitTombstone, type CoordinatorRecord } from '../group/coordinator-records';

export const OFFSETS_TP = { topic: '__consumer_offsets', partition: 0 };

export const LOAD_CONFIG: GroupCoordinatorConfig = {
  offsetsTopicNumPartitions: 1,
  minSessionTimeoutMs: 10,
  maxSessionTimeoutMs: 60_000,
  maxSize: 100,
  initialRebalanceDelayMs: 0,
  newMemberJoinTimeoutMs: 300_000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 7 * 24 * 3600_000,
  offsetsRetentionCheckIntervalMs: 3_600_000,
  offsetCommitTimeoutMs: 5000,
  compression: CompressionType.NONE,
  loadBufferSize: 5 * 1024 * 1024,
};

export function partitionState(topic: string): PartitionState {
  return {
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    topic,
    partition: 0,
    replicas: [1],
    isr: [1],
    leader: 1,
    leaderEpoch: 0,
    partitionEpoch: 0,
    leaderRecoveryState: 0,
    addingReplicas: [],
    removingReplicas: [],
  };
}

/** A metadata cache that knows one partition of `topic`, led here. */
export function metadataWith(topic: string): MetadataCache {
  const partitions = new Map([[0, partitionState(topic)]]);
  return { topic: (n: string) => (n === topic ? { partitions } : undefined) } as unknown as MetadataCache;
}

/** One batch of coordinator records, appended as the coordinator appends. */
export function appendCoordinatorRecords(log: UnifiedLog, records: CoordinatorRecord[], now: number): void {
  log.appendAsLeader(buildRecordBatch(records.map((r) => ({ key: r.key, value: r.value, timestamp: now })), { now }), { leaderEpoch: 0, origin: 'coordinator' });
}

export interface CommitHistory {
  commits: number;
  groups: number;
  partitions: number;
}

/** `commits` offset commits (see the file header); the group `gone` is committed to and deleted in the second round. */
export function writeOffsetCommits(log: UnifiedLog, h: CommitHistory, now: number): void {
  let n = 0;
  let round = 0;
  while (n < h.commits) {
    for (let g = 0; g < h.groups && n < h.commits; g++) {
      const recs: CoordinatorRecord[] = [];
      for (let p = 0; p < h.partitions && n < h.commits; p++, n++) {
        recs.push(offsetCommitRecord(`g${g}`, 'orders', p, { committedOffset: BigInt(round * 100 + p), leaderEpoch: 0, metadata: '', commitTimestampMs: now, expireTimestampMs: null }));
      }
      appendCoordinatorRecords(log, recs, now);
    }
    if (round === 1) {
      appendCoordinatorRecords(log, [0, 1, 2].map((p) => offsetCommitRecord('gone', 'orders', p, { committedOffset: 5n, leaderEpoch: 0, metadata: '', commitTimestampMs: now, expireTimestampMs: null })), now);
      appendCoordinatorRecords(log, [...[0, 1, 2].map((p) => offsetCommitTombstone('gone', 'orders', p)), groupMetadataTombstone('gone')], now);
    }
    round++;
  }
}

/**
 * Cleans everything below the active segment (rolled first): one pass, then, `time` moved on past
 * delete.retention.ms, another that removes the tombstones. A pass that stops where the offset map
 * filled up is followed by more until the dirty section is done. Returns the stats of every pass.
 */
export async function cleanTwice(log: UnifiedLog, time: MockTime, offsetMapBytes = 16 * 1024 * 1024): Promise<CleanerStats[]> {
  if (log.activeSegment.size > 0) log.roll();
  log.updateHighWatermark(log.logEndOffset);
  const out: CleanerStats[] = [];
  const cleaner = new Cleaner({
    id: 0,
    offsetMap: new SkimpyOffsetMap(offsetMapBytes),
    ioBufferSize: 256 * 1024,
    maxIoBufferSize: 1024 * 1024 + 12,
    dupBufferLoadFactor: 0.9,
    throttler: new Throttler(Number.MAX_VALUE),
    time,
    checkDone: () => undefined,
    logger: Logger.silent(),
  });
  for (let pass = 0; pass < 2; pass++) {
    let from = 0n;
    while (from < log.activeSegment.baseOffset) {
      const [next, stats] = await cleaner.clean(new LogToClean(log.topicPartition, log, from, log.activeSegment.baseOffset, false));
      from = next;
      out.push(stats);
    }
    time.sleep(1000);
  }
  return out;
}

export interface OffsetsLoad {
  /** Wall time from the leadership change to the partition being served. */
  ms: number;
  /** Records the coordinator replayed (its own "loaded" line). */
  records: number;
  /** `group/topic/partition` -> committed offset, for groups g0..g(groups-1) and `gone`. */
  offsets: Map<string, bigint>;
}

/** A fresh GroupCoordinator becomes leader of the partition and loads it. */
export async function loadOffsetsPartition(log: UnifiedLog, groups: number, timeoutMs = 300_000): Promise<OffsetsLoad> {
  const lines: string[] = [];
  const c = new GroupCoordinator({
    nodeId: 1,
    config: LOAD_CONFIG,
    logger: new Logger('load', 'info', (l) => lines.push(l)),
    replicaManager: { getPartition: () => ({ log }) as unknown as Partition, appendRecords: async () => [] },
    metadata: metadataWith(OFFSETS_TP.topic),
    createOffsetsTopic: async () => ErrorCode.NONE,
  });
  c.startup();
  const t0 = performance.now();
  c.onMetadataDelta({ changedPartitions: [partitionState(OFFSETS_TP.topic)], removedTopics: [], changedTopicConfigs: new Set(), changedBrokers: new Set() } as MetadataDelta);
  const deadline = Date.now() + timeoutMs;
  while (c.groupStatus('g0') !== ErrorCode.NONE) {
    if (Date.now() > deadline) throw new Error('the __consumer_offsets load did not finish');
    await new Promise((r) => setImmediate(r));
  }
  const ms = performance.now() - t0;
  const offsets = new Map<string, bigint>();
  for (const g of [...Array.from({ length: groups }, (_, i) => `g${i}`), 'gone']) {
    const res = await c.fetchOffsets(g, null, false);
    if (res.errorCode !== ErrorCode.NONE) throw new Error(`fetchOffsets ${g}: ${res.errorCode}`);
    for (const t of res.topics) for (const p of t.partitions) offsets.set(`${g}/${t.name}/${p.partitionIndex}`, p.committedOffset);
  }
  await c.shutdown();
  const line = lines.find((l) => l.includes(`loaded ${OFFSETS_TP.topic}-0`));
  return { ms, records: Number(/"records":(\d+)/.exec(line ?? '')?.[1] ?? NaN), offsets };
}
