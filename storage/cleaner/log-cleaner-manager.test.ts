/**
 * Which logs are cleaned and in what order, the cleaning states and the cleaner-offset-checkpoint
 * (ported from Kafka's LogCleanerManagerTest): the dirtiest ratio wins, uncleanable and in-progress
 * partitions are skipped, checkpoints out of the log's range are reset (and rewritten), the first
 * uncleanable offset is bounded by the last stable offset (so the high watermark and undecided
 * transactions), the active segment and min.compaction.lag.ms; max.compaction.lag.ms forces a
 * pass; pause / abort / resume and done* transitions; checkpoint updates, truncation and a failed
 * log directory.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ControlRecordType } from '../../protocol/records/control-record';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { Logger } from '../../common/logger';
import { MockTime } from '../../common/testing/mock-time';
import type { TopicPartition } from '../../common/topic-partition';
import { OffsetCheckpointFile } from '../checkpoint/offset-checkpoint-file';
import { nodeFs } from '../fs';
import type { CleanupPolicy, LogConfig } from '../log-config';
import { makeLog, marker, record } from '../testing/compacted-logs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import type { UnifiedLog } from '../unified-log';
import { LogCleaningAbortedException } from './cleaner';
import { CLEANER_OFFSET_CHECKPOINT_FILE, LogCleanerManager, LogToClean, cleanableOffsets } from './log-cleaner-manager';

afterAll(removeTempDirs);

const time = new MockTime();

function createLog(dataDir: string, segmentSize: number, policy: CleanupPolicy[], tp: TopicPartition = { topic: 'log', partition: 0 }, extra: Partial<LogConfig> = {}): UnifiedLog {
  return makeLog({ segmentBytes: segmentSize, retentionMs: 1, cleanupPolicy: policy, minCleanableDirtyRatio: 0.05, ...extra }, { dir: path.join(dataDir, `${tp.topic}-${tp.partition}`), time, tp }).log;
}

function appendRecords(log: UnifiedLog, numRecords: number): void {
  const start = Number(log.logEndOffset);
  const recs = Array.from({ length: numRecords }, (_, i) => ({ key: `key-${start + i}`, value: `value-${start + i}`, timestamp: time.now }));
  log.appendAsLeader(buildRecordBatch(recs, { now: time.now }), { leaderEpoch: 1 });
  log.updateHighWatermark(log.logEndOffset);
}

function writeRecords(log: UnifiedLog, numBatches: number, recordsPerBatch: number, batchesPerSegment: number): void {
  for (let i = 0; i < numBatches; i++) {
    appendRecords(log, recordsPerBatch);
    if (i % batchesPerSegment === 0) log.roll();
  }
  log.roll();
}

interface Setup {
  dataDir: string;
  logs: UnifiedLog[];
  manager: LogCleanerManager;
  ioErrors: string[];
}

function setup(logs: UnifiedLog[], dataDir: string, dirs: string[] = [dataDir]): Setup {
  const ioErrors: string[] = [];
  const manager = new LogCleanerManager({ logDirs: dirs, logs: () => logs, fs: nodeFs, logger: Logger.silent(), onIoError: (d, m) => ioErrors.push(`${d}: ${m}`) });
  return { dataDir, logs, manager, ioErrors };
}

/** Kafka's setupIncreasinglyFilthyLogs: 2 KiB compacted segments, one record per batch, a roll every 5 batches. */
function increasinglyFilthyLogs(partitions: TopicPartition[], startNumBatches: number, batchIncrement: number): Setup {
  const dataDir = tempDir('krill-cleaner-manager-');
  const logs: UnifiedLog[] = [];
  let numBatches = startNumBatches;
  for (const tp of partitions) {
    const log = createLog(dataDir, 2048, ['compact'], tp);
    writeRecords(log, numBatches, 1, 5);
    logs.push(log);
    numBatches += batchIncrement;
  }
  return setup(logs, dataDir);
}

const tps = (n: number, topic = 'wishing-well'): TopicPartition[] => Array.from({ length: n }, (_, i) => ({ topic, partition: i }));

function checkpoint(s: Setup, tp: TopicPartition, offset: bigint): void {
  s.manager.updateCheckpoints(s.dataDir, { tp, offset });
}

function closeAll(s: Setup): void {
  for (const l of s.logs) l.close();
}

describe('grabFilthiestCompactedLog', () => {
  test('returns the log with the dirtiest ratio (testGrabFilthiestCompactedLogReturnsLogWithDirtiestRatio)', () => {
    const parts = tps(3);
    const s = increasinglyFilthyLogs(parts, 20, 5);
    for (const tp of parts) checkpoint(s, tp, 20n);
    const g = s.manager.grabFilthiestCompactedLog(time.now)!;
    expect(g.ltc.topicPartition).toEqual(parts[2]);
    expect(s.manager.cleaningState(parts[2])).toEqual({ kind: 'InProgress' });
    closeAll(s);
  });

  test('ignores uncleanable partitions', () => {
    const parts = tps(3);
    const s = increasinglyFilthyLogs(parts, 20, 5);
    for (const tp of parts) checkpoint(s, tp, 20n);
    s.manager.markPartitionUncleanable(s.logs[2].parentDir, parts[2]);
    expect(s.manager.grabFilthiestCompactedLog(time.now)!.ltc.topicPartition).toEqual(parts[1]);
    closeAll(s);
  });

  test('ignores in-progress partitions', () => {
    const parts = tps(3);
    const s = increasinglyFilthyLogs(parts, 20, 5);
    for (const tp of parts) checkpoint(s, tp, 20n);
    s.manager.setCleaningState(parts[2], { kind: 'InProgress' });
    expect(s.manager.grabFilthiestCompactedLog(time.now)!.ltc.topicPartition).toEqual(parts[1]);
    closeAll(s);
  });

  test('ignores both: nothing left to clean', () => {
    const parts = tps(3);
    const s = increasinglyFilthyLogs(parts, 20, 5);
    for (const tp of parts) checkpoint(s, tp, 20n);
    s.manager.setCleaningState(parts[2], { kind: 'InProgress' });
    s.manager.markPartitionUncleanable(s.logs[1].parentDir, parts[1]);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    closeAll(s);
  });

  test('a checkpoint beyond the log end resets to the log start (testDirtyOffsetResetIfLargerThanEndOffset)', () => {
    const tp = { topic: 'foo', partition: 0 };
    const s = increasinglyFilthyLogs([tp], 20, 5);
    checkpoint(s, tp, 200n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)!.ltc.firstDirtyOffset).toBe(0n);
    closeAll(s);
  });

  test('a checkpoint below the log start resets to it (testDirtyOffsetResetIfSmallerThanStartOffset)', () => {
    const tp = { topic: 'foo', partition: 0 };
    const s = increasinglyFilthyLogs([tp], 20, 5);
    s.logs[0].maybeIncrementLogStartOffset(10n, 'ClientRecordDeletion');
    checkpoint(s, tp, 0n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)!.ltc.firstDirtyOffset).toBe(10n);
    closeAll(s);
  });

  test('nothing when the log start is in the active segment (testLogStartOffsetLargerThanActiveSegmentBaseOffset)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 2048, ['compact'], { topic: 'foo', partition: 0 });
    appendRecords(log, 3);
    appendRecords(log, 3);
    appendRecords(log, 3);
    expect(log.numberOfSegments).toBe(1);
    log.maybeIncrementLogStartOffset(2n, 'ClientRecordDeletion');
    const s = setup([log], dataDir);
    checkpoint(s, log.topicPartition, 0n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    log.close();
  });

  test('nothing when the checkpoint is inside the active segment (testDirtyOffsetLargerThanActiveSegmentBaseOffset)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 2048, ['compact'], { topic: 'foo', partition: 0 });
    appendRecords(log, 3);
    appendRecords(log, 3);
    const s = setup([log], dataDir);
    checkpoint(s, log.topicPartition, 3n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    log.close();
  });

  test('an invalid checkpoint is rewritten even when the log is not chosen (testCheckpointUpdatedForInvalidOffsetNoCleaning / NotSelected)', () => {
    const tp = { topic: 'foo', partition: 0 };
    const s = increasinglyFilthyLogs([tp], 20, 5);
    s.logs[0].maybeIncrementLogStartOffset(20n, 'ClientRecordDeletion');
    checkpoint(s, tp, 15n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    expect(s.manager.checkpointedOffset(tp)).toBe(20n);
    closeAll(s);

    const parts = tps(2, 'foo');
    const t = increasinglyFilthyLogs(parts, 20, 5);
    t.logs[0].maybeIncrementLogStartOffset(15n, 'ClientRecordDeletion');
    checkpoint(t, parts[0], 10n);
    checkpoint(t, parts[1], 5n);
    expect(t.manager.grabFilthiestCompactedLog(time.now)!.ltc.topicPartition).toEqual(parts[1]);
    expect(t.manager.checkpointedOffset(parts[0])).toBe(15n);
    closeAll(t);
  });

  test('max.compaction.lag.ms forces a pass below min.cleanable.dirty.ratio', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const t0 = time.now;
    const log = createLog(dataDir, 2048, ['compact'], { topic: 'lag', partition: 0 }, { minCleanableDirtyRatio: 0.99, maxCompactionLagMs: 60_000 });
    writeRecords(log, 10, 1, 5);
    const s = setup([log], dataDir);
    // Segments [0] [1..5] [6..10]: with [0, 6) clean, the dirty ratio (4 of 10 records) is below 0.99.
    checkpoint(s, log.topicPartition, 6n);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    // Once the first dirty segment's first batch is older than the lag, the log must be cleaned.
    const g = s.manager.grabFilthiestCompactedLog(t0 + 60_001 + 1);
    expect(g?.ltc.topicPartition).toEqual(log.topicPartition);
    expect(g?.ltc.needCompactionNow).toBe(true);
    log.close();
  });
});

describe('deletable logs and retention', () => {
  test('delete-only logs are the log manager\'s; compact and compact,delete ones the cleaner\'s; uncleanable ones nobody\'s', () => {
    for (const [policy, n] of [[['delete'], 0], [['compact', 'delete'], 1], [['compact'], 1]] as [CleanupPolicy[], number][]) {
      const dataDir = tempDir('krill-cleaner-manager-');
      const log = createLog(dataDir, 300, policy);
      const s = setup([log], dataDir);
      expect(s.manager.deletableLogs()).toHaveLength(n);
      log.close();
    }
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 300, ['compact']);
    const s = setup([log], dataDir);
    s.manager.markPartitionUncleanable(log.parentDir, log.topicPartition);
    expect(s.manager.deletableLogs()).toHaveLength(0);
    log.close();
  });

  test('a log under retention cannot be compacted, one being compacted is not retention\'s (testLogsUnderCleanupIneligibleForCompaction)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 300, ['delete']);
    const s = setup([log], dataDir);
    log.appendAsLeader(record('test', 'test'), { leaderEpoch: 0 });
    log.roll();
    log.appendAsLeader(record('test', 'test'), { leaderEpoch: 0 });
    log.updateHighWatermark(2n);
    const deletable = s.manager.pauseCleaningForNonCompactedPartitions();
    expect(deletable).toHaveLength(1);
    log.updateConfig({ ...log.config, cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0 });
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    s.manager.resumeCleaning(deletable.map((l) => l.topicPartition));
    const cleanable = s.manager.grabFilthiestCompactedLog(time.now);
    expect(cleanable).toBeDefined();
    log.updateConfig({ ...log.config, cleanupPolicy: ['delete'] });
    expect(s.manager.pauseCleaningForNonCompactedPartitions()).toHaveLength(0);
    s.manager.doneDeleting([cleanable!.ltc.topicPartition]);
    expect(s.manager.pauseCleaningForNonCompactedPartitions()).toHaveLength(1);
    log.close();
  });
});

describe('states', () => {
  test('retention and truncation pauses stack and unstack (testConcurrentLogCleanupAndLogTruncation / TopicDeletion)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 300, ['delete']);
    const s = setup([log], dataDir);
    const paused = s.manager.pauseCleaningForNonCompactedPartitions();
    s.manager.abortAndPauseCleaning(log.topicPartition);
    expect(s.manager.cleaningState(log.topicPartition)).toEqual({ kind: 'Paused', count: 2 });
    s.manager.resumeCleaning([log.topicPartition]);
    s.manager.resumeCleaning(paused.map((l) => l.topicPartition));
    expect(s.manager.cleaningState(log.topicPartition)).toBeUndefined();

    const again = s.manager.pauseCleaningForNonCompactedPartitions();
    s.manager.abortCleaning(log.topicPartition);
    s.manager.resumeCleaning(again.map((l) => l.topicPartition));
    expect(s.manager.cleaningState(log.topicPartition)).toBeUndefined();
    expect(() => s.manager.resumeCleaning([log.topicPartition])).toThrow(/not paused/);
    log.close();
  });

  test('doneCleaning and doneDeleting transitions (testDoneCleaning, testDoneDeleting)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 1024, ['compact', 'delete']);
    const s = setup([log], dataDir);
    const tp = log.topicPartition;
    const pass = Symbol('test');
    expect(() => s.manager.doneCleaning(tp, dataDir, 1n, pass)).toThrow(/should exist/);
    s.manager.setCleaningState(tp, { kind: 'Paused', count: 1 });
    expect(() => s.manager.doneCleaning(tp, dataDir, 1n, pass)).toThrow(/cannot be in Paused state/);
    s.manager.setCleaningState(tp, { kind: 'InProgress' });
    s.manager.doneCleaning(tp, dataDir, 1n, pass);
    expect(s.manager.cleaningState(tp)).toBeUndefined();
    expect(s.manager.checkpointedOffset(tp)).toBe(1n);

    expect(() => s.manager.doneDeleting([tp])).toThrow(/should exist/);
    s.manager.setCleaningState(tp, { kind: 'Paused', count: 1 });
    expect(() => s.manager.doneDeleting([tp])).toThrow(/cannot be in Paused state/);
    s.manager.setCleaningState(tp, { kind: 'InProgress' });
    s.manager.doneDeleting([tp]);
    expect(s.manager.cleaningState(tp)).toBeUndefined();
    log.close();
  });

  test('abortAndPauseCleaning of a running pass: the pass is aborted at its next check, pauses at once, and its checkpoint does not move', () => {
    const parts = tps(1, 'abort');
    const s = increasinglyFilthyLogs(parts, 20, 5);
    const g = s.manager.grabFilthiestCompactedLog(time.now)!;
    expect(() => s.manager.checkCleaningAborted(parts[0], g.pass)).not.toThrow();
    s.manager.abortAndPauseCleaning(parts[0]);
    expect(s.manager.cleaningState(parts[0])).toEqual({ kind: 'Paused', count: 1 });
    expect(() => s.manager.checkCleaningAborted(parts[0], g.pass)).toThrow(LogCleaningAbortedException);
    // Resumed before the aborted pass noticed: no second pass starts until it has ended.
    s.manager.resumeCleaning(parts);
    expect(s.manager.grabFilthiestCompactedLog(time.now)).toBeUndefined();
    s.manager.doneCleaning(parts[0], s.dataDir, 99n, g.pass);
    expect(s.manager.checkpointedOffset(parts[0])).toBeUndefined();
    expect(s.manager.cleaningState(parts[0])).toBeUndefined();
    expect(s.manager.grabFilthiestCompactedLog(time.now)?.ltc.topicPartition).toEqual(parts[0]);
    closeAll(s);
  });
});

describe('cleaner-offset-checkpoint', () => {
  test('Kafka\'s format; updates add, replace and remove partitions; only partitions with a log are kept', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const a = createLog(dataDir, 1024, ['compact'], { topic: 'a', partition: 0 });
    const b = createLog(dataDir, 1024, ['compact'], { topic: 'b', partition: 3 });
    const s = setup([a, b], dataDir);
    s.manager.updateCheckpoints(dataDir, { tp: a.topicPartition, offset: 107n });
    s.manager.updateCheckpoints(dataDir, { tp: b.topicPartition, offset: 9n });
    const file = path.join(dataDir, CLEANER_OFFSET_CHECKPOINT_FILE);
    const lines = nodefs.readFileSync(file, 'utf8').split('\n');
    expect(lines.slice(0, 2)).toEqual(['0', '2']);
    expect(lines.slice(2, 4).sort()).toEqual(['a 0 107', 'b 3 9']);
    // The partition updated is written as given; entries of partitions without a log go at the next update.
    s.manager.updateCheckpoints(dataDir, { tp: { topic: 'gone', partition: 0 }, offset: 5n });
    expect(s.manager.allCleanerCheckpoints().size).toBe(3);
    s.manager.updateCheckpoints(dataDir, { tp: b.topicPartition, offset: 9n });
    expect(s.manager.allCleanerCheckpoints().size).toBe(2);
    s.manager.updateCheckpoints(dataDir, undefined, b.topicPartition);
    expect([...new OffsetCheckpointFile(nodeFs, file).read().values()].map((e) => `${e.tp.topic} ${e.tp.partition} ${e.offset}`)).toEqual(['a 0 107']);
    // A corrupt file counts as empty (and is replaced at the next update).
    nodefs.writeFileSync(file, 'garbage\n');
    expect(s.manager.allCleanerCheckpoints().size).toBe(0);
    s.manager.updateCheckpoints(dataDir, { tp: a.topicPartition, offset: 3n });
    expect(s.manager.checkpointedOffset(a.topicPartition)).toBe(3n);
    a.close();
    b.close();
  });

  test('maybeTruncateCheckpoint lowers a compacted log\'s checkpoint only (testMaybeTruncateCheckpointShouldTruncateData)', () => {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 1024, ['compact']);
    const s = setup([log], dataDir);
    s.manager.updateCheckpoints(dataDir, { tp: log.topicPartition, offset: 100n });
    s.manager.maybeTruncateCheckpoint(dataDir, log.topicPartition, 200n);
    expect(s.manager.checkpointedOffset(log.topicPartition)).toBe(100n);
    s.manager.maybeTruncateCheckpoint(dataDir, log.topicPartition, 50n);
    expect(s.manager.checkpointedOffset(log.topicPartition)).toBe(50n);
    log.close();
  });

  test('a failed log directory loses its checkpoint: nothing more is read or written there (testHandleLogDirFailureShouldRemoveDirAndData)', () => {
    const d1 = tempDir('krill-cleaner-manager-');
    const d2 = tempDir('krill-cleaner-manager-');
    const a = createLog(d1, 1024, ['compact'], { topic: 'a', partition: 0 });
    const b = createLog(d2, 1024, ['compact'], { topic: 'b', partition: 0 });
    const s = setup([a, b], d1, [d1, d2]);
    s.manager.updateCheckpoints(d1, { tp: a.topicPartition, offset: 10n });
    s.manager.updateCheckpoints(d2, { tp: b.topicPartition, offset: 20n });
    expect(s.manager.allCleanerCheckpoints().size).toBe(2);
    s.manager.handleLogDirFailure(d2);
    expect([...s.manager.allCleanerCheckpoints().values()]).toEqual([10n]);
    s.manager.updateCheckpoints(d2, { tp: b.topicPartition, offset: 30n });
    const onDisk = [...new OffsetCheckpointFile(nodeFs, path.join(d2, CLEANER_OFFSET_CHECKPOINT_FILE)).read().values()].map((e) => e.offset);
    expect(onDisk).toEqual([20n]);
    a.close();
    b.close();
  });
});

describe('cleanableOffsets', () => {
  function filled(extra: Partial<LogConfig> = {}, segments = 8, ts = () => time.now): UnifiedLog {
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = createLog(dataDir, 1024, ['compact'], { topic: 'c', partition: 0 }, { minCleanableDirtyRatio: 0.5, retentionMs: 7 * 86_400_000, ...extra });
    while (log.numberOfSegments < segments) log.appendAsLeader(record(Number(log.logEndOffset), Number(log.logEndOffset), { timestamp: ts() }), { leaderEpoch: 0 });
    return log;
  }

  test('bounded by the last stable offset, that is the high watermark (testCleanableOffsetsForNone)', () => {
    const log = filled();
    log.updateHighWatermark(50n);
    const o = cleanableOffsets(log, 0n, time.now);
    expect(o.firstDirtyOffset).toBe(0n);
    expect(log.lastStableOffset).toBe(log.highWatermark);
    expect(o.firstUncleanableDirtyOffset).toBe(log.lastStableOffset);
    log.close();
  });

  test('bounded by the active segment (testCleanableOffsetsActiveSegment)', () => {
    const log = filled();
    log.updateHighWatermark(log.logEndOffset);
    const o = cleanableOffsets(log, 0n, time.now);
    expect(o.firstDirtyOffset).toBe(0n);
    expect(o.firstUncleanableDirtyOffset).toBe(log.activeSegment.baseOffset);
    log.close();
  });

  test('bounded by min.compaction.lag.ms (testCleanableOffsetsForTime)', () => {
    const lag = 60 * 60 * 1000;
    const t = new MockTime(time.now);
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = makeLog({ segmentBytes: 1024, minCompactionLagMs: lag }, { dir: path.join(dataDir, 'c-0'), time: t }).log;
    const t0 = t.now;
    while (log.numberOfSegments < 4) log.appendAsLeader(record(Number(log.logEndOffset), Number(log.logEndOffset), { timestamp: t0 }), { leaderEpoch: 0 });
    const activeAtT0 = log.activeSegment;
    t.sleep(lag + 1);
    const t1 = t.now;
    while (log.numberOfSegments < 8) log.appendAsLeader(record(Number(log.logEndOffset), Number(log.logEndOffset), { timestamp: t1 }), { leaderEpoch: 0 });
    log.updateHighWatermark(log.logEndOffset);
    const o = cleanableOffsets(log, 0n, t.now);
    expect(o.firstDirtyOffset).toBe(0n);
    expect(o.firstUncleanableDirtyOffset).toBe(activeAtT0.baseOffset);
    log.close();
  });

  test('a lag the active segment contains (testCleanableOffsetsForShortTime)', () => {
    const lag = 60 * 60 * 1000;
    const t = new MockTime(time.now);
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = makeLog({ segmentBytes: 1024, minCompactionLagMs: lag }, { dir: path.join(dataDir, 'c-0'), time: t }).log;
    const t0 = t.now;
    while (log.numberOfSegments < 8) log.appendAsLeader(record(Number(log.logEndOffset), Number(log.logEndOffset), { timestamp: t0 }), { leaderEpoch: 0 });
    log.updateHighWatermark(log.logEndOffset);
    t.sleep(lag + 1);
    const o = cleanableOffsets(log, 0n, t.now);
    expect(o.firstUncleanableDirtyOffset).toBe(log.activeSegment.baseOffset);
    log.close();
  });

  test('a checkpoint out of range asks for a reset (testCleanableOffsetsNeedsCheckpointReset)', () => {
    const tp = { topic: 'foo', partition: 0 };
    const s = increasinglyFilthyLogs([tp], 20, 5);
    const log = s.logs[0];
    log.maybeIncrementLogStartOffset(10n, 'ClientRecordDeletion');
    expect(cleanableOffsets(log, 15n, time.now).forceUpdateCheckpoint).toBe(false);
    log.maybeIncrementLogStartOffset(20n, 'ClientRecordDeletion');
    expect(cleanableOffsets(log, 15n, time.now).forceUpdateCheckpoint).toBe(true);
    expect(cleanableOffsets(log, 25n, time.now).forceUpdateCheckpoint).toBe(true);
    closeAll(s);
  });

  test('undecided transactional data is not cleanable (testUndecidedTransactionalDataNotCleanable)', () => {
    const lag = 60 * 60 * 1000;
    const t = new MockTime(time.now);
    const dataDir = tempDir('krill-cleaner-manager-');
    const log = makeLog({ segmentBytes: 1024, minCompactionLagMs: lag }, { dir: path.join(dataDir, 'c-0'), time: t }).log;
    const pid = 15n;
    log.appendAsLeader(
      buildRecordBatch([{ key: '1', value: 'a', timestamp: t.now }, { key: '2', value: 'b', timestamp: t.now }], { producerId: pid, producerEpoch: 0, baseSequence: 0, isTransactional: true }),
      { leaderEpoch: 0 },
    );
    log.appendAsLeader(buildRecordBatch([{ key: '3', value: 'c', timestamp: t.now }], { producerId: pid, producerEpoch: 0, baseSequence: 2, isTransactional: true }), { leaderEpoch: 0 });
    log.roll();
    log.updateHighWatermark(3n);
    t.sleep(lag + 1);
    let o = cleanableOffsets(log, 0n, t.now);
    expect([o.firstDirtyOffset, o.firstUncleanableDirtyOffset]).toEqual([0n, 0n]);
    marker(log, ControlRecordType.ABORT, pid, 0, { coordinatorEpoch: 15, timestamp: t.now });
    log.roll();
    log.updateHighWatermark(4n);
    o = cleanableOffsets(log, 0n, t.now);
    expect([o.firstDirtyOffset, o.firstUncleanableDirtyOffset]).toEqual([0n, 3n]);
    t.sleep(lag + 1);
    o = cleanableOffsets(log, 0n, t.now);
    expect([o.firstDirtyOffset, o.firstUncleanableDirtyOffset]).toEqual([0n, 4n]);
    log.close();
  });

  test('LogToClean over the chosen range', () => {
    const log = filled();
    log.updateHighWatermark(log.logEndOffset);
    const o = cleanableOffsets(log, 0n, time.now);
    const l = new LogToClean(log.topicPartition, log, o.firstDirtyOffset, o.firstUncleanableDirtyOffset);
    expect(l.cleanBytes).toBe(0);
    expect(l.cleanableBytes).toBe(log.size - log.activeSegment.size);
    expect(l.cleanableRatio).toBe(1);
    log.close();
  });
});
