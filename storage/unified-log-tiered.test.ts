/**
 * UnifiedLog for tiered topics (KIP-405): the local log start offset, the highest offset in remote
 * storage, and local retention that only deletes what remote storage already holds, as Kafka's
 * UnifiedLog does.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { LogConfig, logConfig } from './log-config';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { isRemoteLogEnabled, UnifiedLog, UnifiedLogParams } from './unified-log';

afterAll(removeTempDirs);

const TP = { topic: 'tiered', partition: 0 };
const TIERED: Partial<LogConfig> = { segmentBytes: 1000, remoteStorageEnable: true, retentionMs: -1, retentionBytes: -1 };

function open(overrides: Partial<LogConfig>, extra: Partial<UnifiedLogParams> = {}, dir = path.join(tempDir(), 'tiered-0')) {
  const fs = new FaultyFs();
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const params = { dir, tp: TP, config: logConfig(overrides), fs, time, scheduler, remoteStorageSystemEnable: true, ...extra };
  return { log: UnifiedLog.load(params), params, dir };
}

function fill(log: UnifiedLog, n: number): void {
  for (let i = 0; i < n; i++) log.appendAsLeader(testBatch({ count: 5, valueSize: 100, prefix: `b${i}-` }), { leaderEpoch: 1 });
  log.updateHighWatermark(log.logEndOffset);
}

function expectOutOfRange(fn: () => unknown): KafkaError {
  try {
    fn();
  } catch (e) {
    expect((e as KafkaError).code).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    return e as KafkaError;
  }
  throw new Error('expected OFFSET_OUT_OF_RANGE');
}

test('a log is tiered only with the broker switch, the topic config and a non-internal topic', () => {
  const c = logConfig({ remoteStorageEnable: true });
  expect(isRemoteLogEnabled(true, c, 'events')).toBe(true);
  expect(isRemoteLogEnabled(false, c, 'events')).toBe(false);
  expect(isRemoteLogEnabled(true, logConfig({}), 'events')).toBe(false);
  expect(isRemoteLogEnabled(true, c, '__consumer_offsets')).toBe(false);
  expect(isRemoteLogEnabled(true, c, '__transaction_state')).toBe(false);
});

test('local retention deletes nothing before remote storage holds it, then only what it holds', () => {
  const { log } = open({ ...TIERED, localRetentionBytes: 0 });
  fill(log, 12);
  const segs = log.logSegments();
  expect(segs.length).toBeGreaterThan(4);
  expect(log.highestOffsetInRemoteStorage).toBe(-1n);
  // nothing copied yet: local retention of 0 bytes deletes nothing
  expect(log.deleteOldSegments()).toBe(0);
  expect(log.logSegments().length).toBe(segs.length);
  // remote storage holds the first two segments
  const copiedEnd = segs[2].baseOffset - 1n;
  log.updateHighestOffsetInRemoteStorage(copiedEnd);
  expect(log.onlyLocalLogSegmentsCount).toBe(segs.length - 2);
  expect(log.deleteOldSegments()).toBe(2);
  expect(log.logSegments()[0].baseOffset).toBe(segs[2].baseOffset);
  // the log start offset stays: the data is still readable from remote storage
  expect(log.logStartOffset).toBe(0n);
  expect(log.localLogStartOffset).toBe(segs[2].baseOffset);
  const e = expectOutOfRange(() => log.read(0n, 10_000));
  expect(e.message).toMatch(/remote storage/);
  expect(log.read(segs[2].baseOffset, 10_000).sizeInBytes).toBeGreaterThan(0);
  // the highest offset never goes back
  log.updateHighestOffsetInRemoteStorage(0n);
  expect(log.highestOffsetInRemoteStorage).toBe(copiedEnd);
});

test('local.retention.ms and -2 (follow retention.*) pick the local limits', () => {
  const { log } = open({ ...TIERED, retentionBytes: 1_000_000, localRetentionBytes: -2 });
  fill(log, 12);
  log.updateHighestOffsetInRemoteStorage(log.logEndOffset);
  // -2 follows retention.bytes (1 MB): the log is far smaller, nothing goes
  expect(log.deleteOldSegments()).toBe(0);
  const { log: timed, params } = open({ ...TIERED, localRetentionMs: 1000 });
  fill(timed, 6);
  const active = timed.activeSegment.baseOffset;
  timed.updateHighestOffsetInRemoteStorage(active - 1n);
  (params.time as MockTime).sleep(5000);
  const before = timed.logSegments().length;
  // every rolled (and copied) segment goes; the active one, breached too, is rolled so that it can
  // be copied, and stays until it is
  expect(timed.deleteOldSegments()).toBe(before - 1);
  expect(timed.logSegments().map((s) => s.baseOffset)).toEqual([active, timed.logEndOffset]);
  expect(timed.localLogStartOffset).toBeGreaterThan(0n);
  expect(timed.logStartOffset).toBe(0n);
});

test('remote.log.copy.disable: local retention falls back to retention.* and moves the log start offset', () => {
  const { log } = open({ ...TIERED, remoteLogCopyDisable: true, retentionBytes: 2000, localRetentionBytes: 0 });
  fill(log, 12);
  expect(log.deleteOldSegments()).toBeGreaterThan(0);
  expect(log.logStartOffset).toBe(log.localLogStartOffset);
  expect(log.logStartOffset).toBeGreaterThan(0n);
});

test('DeleteRecords past the copied offset lets the local segments go and moves both start offsets', () => {
  const { log } = open({ ...TIERED, localRetentionBytes: -2 });
  fill(log, 12);
  const segs = log.logSegments();
  log.deleteRecordsBefore(segs[3].baseOffset);
  expect(log.logStartOffset).toBe(segs[3].baseOffset);
  expect(log.localLogStartOffset).toBe(segs[3].baseOffset);
  expect(log.deleteOldSegments()).toBe(3);
  expect(log.logSegments()[0].baseOffset).toBe(segs[3].baseOffset);
});

test('a tiered log reloads with its checkpointed log start offset below the first local segment', () => {
  const { log, params, dir } = open({ ...TIERED, localRetentionBytes: 0 });
  fill(log, 12);
  const segs = log.logSegments();
  log.updateHighestOffsetInRemoteStorage(segs[3].baseOffset - 1n);
  log.deleteOldSegments();
  const localStart = log.localLogStartOffset;
  log.close();
  const again = UnifiedLog.load({ ...params, dir, logStartOffset: 0n, recoveryPoint: log.logEndOffset, hadCleanShutdown: true });
  expect(again.logStartOffset).toBe(0n);
  expect(again.localLogStartOffset).toBe(localStart);
  expect(again.highWatermark).toBeGreaterThanOrEqual(localStart);
  // the same files as a non-tiered log: the log start offset is the first segment
  again.close();
  const plain = UnifiedLog.load({ ...params, dir, logStartOffset: 0n, remoteStorageSystemEnable: false, hadCleanShutdown: true });
  expect(plain.logStartOffset).toBe(localStart);
  plain.close();
});

test('a follower rebuilding from remote data starts its local log at the leader local start, keeping the log start offset', () => {
  const { log } = open({ ...TIERED });
  fill(log, 2);
  log.truncateFullyAndStartAt(500n, 100n);
  expect([log.logStartOffset, log.localLogStartOffset, log.logEndOffset]).toEqual([100n, 500n, 500n]);
  const { log: plain } = open({ segmentBytes: 1000 });
  plain.truncateFullyAndStartAt(500n, 100n);
  expect([plain.logStartOffset, plain.localLogStartOffset]).toEqual([500n, 500n]);
});

test('a remote outage cannot grow the local log past the total retention: uncopied segments that breach it go, with the log start offset', () => {
  const { log, params } = open({ ...TIERED, retentionBytes: 3000, localRetentionBytes: 0 });
  fill(log, 12);
  const segmentSize = log.logSegments()[0].size;
  // nothing was ever copied (the store is down); local retention alone deletes nothing
  expect(log.highestOffsetInRemoteStorage).toBe(-1n);
  const deleted = log.deleteOldSegments();
  expect(deleted).toBeGreaterThan(0);
  // as retention.bytes always does: whole segments go while the rest stays at or above the limit
  expect(log.size).toBeGreaterThanOrEqual(3000);
  expect(log.size).toBeLessThan(3000 + segmentSize);
  // the data is gone for good: the log start offset moved past it
  expect(log.logStartOffset).toBe(log.localLogStartOffset);
  expect(log.logStartOffset).toBeGreaterThan(0n);
  // retention.ms likewise
  const { log: timed, params: p2 } = open({ ...TIERED, retentionMs: 10_000, localRetentionMs: 1000 });
  fill(timed, 6);
  (p2.time as MockTime).sleep(20_000);
  expect(timed.deleteOldSegments()).toBeGreaterThan(0);
  expect(timed.logStartOffset).toBe(timed.localLogStartOffset);
  void params;
});

test('the producer snapshot at a segment end is there for the copy, and the snapshots of locally deleted segments go', () => {
  const { log } = open({ ...TIERED, localRetentionBytes: 0 });
  fill(log, 6);
  const segs = log.logSegments();
  for (let i = 1; i < segs.length; i++) expect(log.producerSnapshotPath(segs[i].baseOffset)).toBeDefined();
  log.updateHighestOffsetInRemoteStorage(segs[3].baseOffset - 1n);
  log.deleteOldSegments();
  expect(log.producerSnapshotPath(segs[1].baseOffset)).toBeUndefined();
  expect(log.producerSnapshotPath(segs[4].baseOffset)).toBeDefined();
});

test('ListOffsets -4 (EARLIEST_LOCAL) and -5 (LATEST_TIERED) on a tiered log, and on a plain one', () => {
  const { log } = open({ ...TIERED, localRetentionBytes: 0 });
  fill(log, 8);
  expect(log.fetchOffsetByTimestamp(-5n)).toEqual({ timestamp: -1n, offset: -1n, leaderEpoch: -1 });
  const segs = log.logSegments();
  log.updateHighestOffsetInRemoteStorage(segs[3].baseOffset - 1n);
  log.deleteOldSegments();
  expect(log.fetchOffsetByTimestamp(-2n)?.offset).toBe(0n);
  expect(log.fetchOffsetByTimestamp(-4n)).toEqual({ timestamp: -1n, offset: segs[3].baseOffset, leaderEpoch: 1 });
  expect(log.fetchOffsetByTimestamp(-5n)).toEqual({ timestamp: -1n, offset: segs[3].baseOffset - 1n, leaderEpoch: 1 });
  const { log: plain } = open({ segmentBytes: 1000 }, { remoteStorageSystemEnable: false });
  fill(plain, 3);
  expect(plain.fetchOffsetByTimestamp(-4n)?.offset).toBe(0n);
  expect(plain.fetchOffsetByTimestamp(-5n)).toEqual({ timestamp: -1n, offset: -1n, leaderEpoch: -1 });
});

test('a follower rebuilds from the remote leader-epoch checkpoint and producer snapshot, then appends from the leader local start', () => {
  // the leader's history: an idempotent producer, epochs 1 and 2
  const { log: leader } = open({ ...TIERED });
  fill(leader, 3);
  const pid = 42n;
  const idem = (seq: number, n: number) => buildRecordBatch(Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`p${seq + i}`), timestamp: 1_700_000_000_000n })), { producerId: pid, producerEpoch: 0, baseSequence: seq });
  leader.appendAsLeader(idem(0, 2), { leaderEpoch: 2 });
  leader.updateHighWatermark(leader.logEndOffset);
  leader.roll();
  const localStart = leader.logEndOffset;
  const snapshotFile = leader.producerSnapshotPath(localStart);
  expect(snapshotFile).toBeDefined();
  const snapshot = nodefs.readFileSync(snapshotFile as string);
  const epochs = leader.leaderEpochCache.entries.map((e) => ({ ...e }));
  const { log: follower } = open({ ...TIERED }, {}, path.join(tempDir(), 'tiered-0'));
  follower.rebuildFromRemote({ localLogStartOffset: localStart, logStartOffset: 0n, epochs, producerSnapshot: snapshot });
  expect([follower.logStartOffset, follower.localLogStartOffset, follower.logEndOffset]).toEqual([0n, localStart, localStart]);
  expect(follower.leaderEpochCache.entries).toEqual(epochs);
  expect(follower.highestOffsetInRemoteStorage).toBe(localStart - 1n);
  // the producer's sequence carried over: its next batch is accepted in order as the follower appends it
  expect(follower.producerState.entry(pid)?.producerEpoch).toBe(0);
  const next = leader.appendAsLeader(idem(2, 1), { leaderEpoch: 2 });
  expect(next.firstOffset).toBe(localStart);
  follower.appendAsFollower(leader.read(localStart, 10_000, { isolation: 'LOG_END' }).records[0]);
  expect(follower.logEndOffset).toBe(localStart + 1n);
  // a corrupt snapshot changes nothing
  const before = [follower.logStartOffset, follower.logEndOffset];
  expect(() => follower.rebuildFromRemote({ localLogStartOffset: 99n, logStartOffset: 0n, epochs, producerSnapshot: Buffer.from('junk') })).toThrow();
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual(before);
});
