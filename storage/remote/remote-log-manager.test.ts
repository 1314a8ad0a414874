/**
 * The remote log manager over a real UnifiedLog with in-memory remote storage and metadata
 * (testing/memory-remote-storage.ts): what a leader copies and when, what it expires, what a new
 * leader or a follower finds, reads below the local log start offset, and remote failures.
 */
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { LogConfig, logConfig } from '../log-config';
import { testBatch } from '../testing/batches';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { UnifiedLog } from '../unified-log';
import {
  DEFAULT_REMOTE_LOG_MANAGER_CONFIG,
  epochsInRange,
  filteredLeaderEpochs,
  firstBatchAtOrAfter,
  isRemoteSegmentWithinLeaderEpochs,
  RemoteLogManager,
} from './remote-log-manager';
import { RemoteLogSegmentMetadata, RemoteLogSegmentState as S } from './remote-log-segment-metadata';
import { MemoryRemoteLogMetadataManager, MemoryRemoteStorageManager } from './testing/memory-remote-storage';

afterAll(removeTempDirs);

const TP = { topic: 'tiered', partition: 0 };
const TIP = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 'tiered', partition: 0 };
const BASE: Partial<LogConfig> = { segmentBytes: 1000, remoteStorageEnable: true, retentionMs: -1, retentionBytes: -1, localRetentionBytes: 0 };

function harness(config: Partial<LogConfig> = {}) {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const log = UnifiedLog.load({ dir: path.join(tempDir(), 'tiered-0'), tp: TP, config: logConfig({ ...BASE, ...config }), time, scheduler, remoteStorageSystemEnable: true });
  const rsm = new MemoryRemoteStorageManager();
  const rlmm = new MemoryRemoteLogMetadataManager();
  const logs = new Map<string, UnifiedLog>([['tiered-0', log]]);
  const mk = (brokerId: number, l: UnifiedLog = log) =>
    new RemoteLogManager({
      config: { ...DEFAULT_REMOTE_LOG_MANAGER_CONFIG, brokerId },
      rsm,
      rlmm,
      fetchLog: () => l,
      time,
      scheduler,
      logger: Logger.silent(),
    });
  return { log, rsm, rlmm, time, scheduler, logs, rlm: mk(1), mk };
}

function fill(log: UnifiedLog, n: number, epoch = 1, ts?: (i: number) => number): void {
  for (let i = 0; i < n; i++) log.appendAsLeader(testBatch({ count: 5, valueSize: 100, prefix: `e${epoch}b${i}-`, timestamp: ts ? ts(i) : undefined }), { leaderEpoch: epoch });
  log.updateHighWatermark(log.logEndOffset);
}

function finished(rlmm: MemoryRemoteLogMetadataManager): RemoteLogSegmentMetadata[] {
  return [...rlmm.segments.values()].filter((m) => m.state === S.COPY_SEGMENT_FINISHED).sort((a, b) => Number(a.startOffset - b.startOffset));
}

test('a leader copies every rolled segment below the last stable offset, STARTED before FINISHED, and then the local copies may go', async () => {
  const { log, rsm, rlmm, rlm } = harness();
  fill(log, 8);
  const segs = log.logSegments();
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  const done = finished(rlmm);
  // every segment but the active one
  expect(done.map((m) => m.startOffset)).toEqual(segs.slice(0, -1).map((s) => s.baseOffset));
  for (let i = 0; i < done.length; i++) {
    expect(done[i].endOffset).toBe(segs[i + 1].baseOffset - 1n);
    expect(done[i].segmentSizeInBytes).toBe(segs[i].size);
    expect(done[i].segmentLeaderEpochs).toEqual([{ epoch: 1, startOffset: segs[i].baseOffset }]);
    expect(rsm.segments.get(done[i].remoteLogSegmentId.id)?.get('LOG')?.length).toBe(segs[i].size);
  }
  for (const m of done) {
    const states = rlmm.events.filter((e) => e.id === m.remoteLogSegmentId.id).map((e) => e.state);
    expect(states).toEqual([S.COPY_SEGMENT_STARTED, S.COPY_SEGMENT_FINISHED]);
  }
  expect(log.highestOffsetInRemoteStorage).toBe(segs[segs.length - 1].baseOffset - 1n);
  // local retention of 0 bytes can now delete what was copied, and only that; the breached
  // active segment is rolled so that it can be copied too
  expect(log.deleteOldSegments()).toBe(segs.length - 1);
  expect(log.logStartOffset).toBe(0n);
  expect(log.logSegments().length).toBe(2);
  const copies = rsm.copies;
  await rlm.runOnce(TIP);
  expect(rsm.copies).toBe(copies + 1);
  // and then there is nothing new to copy
  await rlm.runOnce(TIP);
  expect(rsm.copies).toBe(copies + 1);
  await rlm.close();
});

test('nothing at or above the last stable offset is copied', async () => {
  const { log, rlmm, rlm } = harness();
  fill(log, 6);
  const segs = log.logSegments();
  // the high watermark (and so the LSO) is inside the third segment
  log.updateHighWatermark(segs[2].baseOffset + 2n);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  expect(finished(rlmm).map((m) => m.startOffset)).toEqual([segs[0].baseOffset, segs[1].baseOffset]);
  await rlm.close();
});

test('reads below the local log start offset come from remote storage, batch for batch', async () => {
  const { log, rlm } = harness();
  fill(log, 8);
  const originalBytes = Buffer.concat(log.logSegments().map((seg) => log.read(seg.baseOffset, 1 << 20).records).flat());
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  log.deleteOldSegments();
  expect(log.localLogStartOffset).toBeGreaterThan(0n);
  // locally out of range; from remote storage the same bytes come back, segment by segment
  expect(() => log.read(0n, 1000)).toThrow(KafkaError);
  const got: Buffer[] = [];
  let next = 0n;
  while (next < log.localLogStartOffset) {
    const info = await rlm.read({ tp: TIP, fetchOffset: next, maxBytes: 10_000, minOneMessage: true, readCommitted: false });
    expect(info.sizeInBytes).toBeGreaterThan(0);
    const b = Buffer.concat(info.records);
    got.push(b);
    let pos = 0;
    while (pos < b.length) {
      const base = b.readBigInt64BE(pos);
      next = base + BigInt(b.readInt32BE(pos + 23)) + 1n;
      pos += 12 + b.readInt32BE(pos + 8);
    }
  }
  expect(Buffer.concat(got).equals(originalBytes.subarray(0, Buffer.concat(got).length))).toBe(true);
  // from inside a batch: that whole batch first
  const mid = await rlm.read({ tp: TIP, fetchOffset: 7n, maxBytes: 10_000, minOneMessage: true, readCommitted: true });
  expect(Buffer.concat(mid.records).readBigInt64BE(0)).toBe(5n);
  expect(mid.abortedTransactions).toEqual([]);
  // maxBytes smaller than the first batch without minOneMessage: nothing, marked incomplete
  const tiny = await rlm.read({ tp: TIP, fetchOffset: 0n, maxBytes: 10, minOneMessage: false, readCommitted: false });
  expect([tiny.sizeInBytes, tiny.firstEntryIncomplete]).toEqual([0, true]);
  await rlm.close();
});

test('an offset remote storage does not hold is OFFSET_OUT_OF_RANGE', async () => {
  const { log, rlm } = harness();
  fill(log, 2);
  rlm.onLeadershipChange([TIP], []);
  await expect(rlm.read({ tp: TIP, fetchOffset: 0n, maxBytes: 1000, minOneMessage: true, readCommitted: false })).rejects.toMatchObject({ code: ErrorCode.OFFSET_OUT_OF_RANGE });
  await rlm.close();
});

test('a failed copy cleans up what it published, moves nothing, and the next run copies it', async () => {
  const { log, rsm, rlmm, rlm } = harness();
  fill(log, 4);
  rsm.failCopies = true;
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  expect(finished(rlmm)).toEqual([]);
  expect(log.highestOffsetInRemoteStorage).toBe(-1n);
  // the started segment was deleted again (STARTED -> DELETE_STARTED -> DELETE_FINISHED)
  expect(rlmm.events.map((e) => e.state)).toEqual([S.COPY_SEGMENT_STARTED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]);
  expect(log.deleteOldSegments()).toBe(0);
  rsm.failCopies = false;
  await rlm.runOnce(TIP);
  expect(finished(rlmm).length).toBe(log.logSegments().length - 1);
  await rlm.close();
});

test('a dangling COPY_SEGMENT_STARTED (a crash mid-copy) and a dangling DELETE_SEGMENT_STARTED are cleaned up', async () => {
  const { log, rsm, rlmm, rlm } = harness();
  fill(log, 4);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  const done = finished(rlmm);
  // a copy that was never finished (a crash between STARTED and FINISHED); its delete then fails
  // once, leaving a dangling DELETE_SEGMENT_STARTED
  const dangling: RemoteLogSegmentMetadata = { ...done[done.length - 1], remoteLogSegmentId: { topicIdPartition: TIP, id: 'AAAAAAAAAAAAAAAAAAAA_w' }, state: S.COPY_SEGMENT_STARTED };
  await rlmm.addRemoteLogSegmentMetadata(dangling);
  rsm.failDeletes = true;
  await rlm.runOnce(TIP);
  expect(rlmm.segments.get(dangling.remoteLogSegmentId.id)?.state).toBe(S.DELETE_SEGMENT_STARTED);
  rsm.failDeletes = false;
  await rlm.runOnce(TIP);
  expect(rlmm.segments.has(dangling.remoteLogSegmentId.id)).toBe(false);
  // the finished ones are untouched
  expect(finished(rlmm).length).toBe(done.length);
  await rlm.close();
});

test('retention.ms expires remote segments by their largest timestamp, moving the log start offset first', async () => {
  const { log, rlmm, rlm, time } = harness({ retentionMs: 60_000, localRetentionMs: 1000 });
  const t0 = time.milliseconds();
  // old records first, then fresh ones
  fill(log, 6, 1, () => t0 - 3_600_000);
  fill(log, 4, 1, () => t0);
  const segs = log.logSegments();
  const rolled = segs.slice(0, -1);
  const oldSegs = rolled.filter((seg) => seg.largestTimestamp() < t0 - 60_000);
  expect(oldSegs.length).toBe(6);
  rlm.onLeadershipChange([TIP], []);
  // one pass copies every rolled segment, then expires the old ones
  await rlm.runOnce(TIP);
  const kept = finished(rlmm);
  expect(kept.map((m) => m.startOffset)).toEqual(rolled.slice(oldSegs.length).map((seg) => seg.baseOffset));
  const lastOld = segs[oldSegs.length].baseOffset;
  expect(log.logStartOffset).toBe(lastOld);
  // the expired ones went STARTED -> FINISHED -> DELETE_STARTED -> DELETE_FINISHED
  expect(rlmm.events.filter((e) => e.state === S.DELETE_SEGMENT_FINISHED).length).toBe(6);
  await rlm.close();
});

test('retention.bytes counts finished remote segments plus the local-only ones', async () => {
  const { log, rlmm, rlm } = harness({ retentionBytes: 2500 });
  fill(log, 10);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  await rlm.runOnce(TIP);
  const remote = finished(rlmm).reduce((n, m) => n + m.segmentSizeInBytes, 0);
  expect(remote + log.onlyLocalLogSegmentsSize).toBeLessThan(2500 + log.logSegments()[0].size);
  expect(remote + log.onlyLocalLogSegmentsSize).toBeGreaterThanOrEqual(2500);
  expect(log.logStartOffset).toBe(finished(rlmm)[0].startOffset);
  await rlm.close();
});

test('a new leader finds what is already copied and does not copy it again; a follower keeps its highest remote offset current', async () => {
  const { log, rsm, rlmm, rlm, mk } = harness();
  fill(log, 6);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  await rlm.close();
  const copies = rsm.copies;
  const highest = log.highestOffsetInRemoteStorage;
  // another broker's view: a replica of the same data with nothing known about remote storage yet
  const follower = UnifiedLog.load({ dir: path.join(tempDir(), 'tiered-0'), tp: TP, config: log.config, remoteStorageSystemEnable: true });
  fill(follower, 6);
  expect(follower.highestOffsetInRemoteStorage).toBe(-1n);
  const rlm2 = mk(2, follower);
  rlm2.onLeadershipChange([], [TIP]);
  await rlm2.runOnce(TIP);
  expect(follower.highestOffsetInRemoteStorage).toBe(highest);
  // it becomes leader: nothing is copied twice
  rlm2.onLeadershipChange([TIP], []);
  await rlm2.runOnce(TIP);
  expect(rsm.copies).toBe(copies);
  expect(finished(rlmm).length).toBe(copies);
  await rlm2.close();
});

test('a new leader with copying disabled still finds the highest remote offset before size-based expiration (KAFKA-20732)', async () => {
  const { log, rlmm, rlm, mk } = harness({ retentionBytes: -1 });
  fill(log, 10);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  await rlm.close();
  const copied = finished(rlmm).length;
  // a new leader's replica (its local segments are all still there), read-only remote data and a
  // retention.bytes that the remote and local-only data together do not exceed
  const replica = UnifiedLog.load({ dir: path.join(tempDir(), 'tiered-0'), tp: TP, config: logConfig({ ...BASE, remoteLogCopyDisable: true, retentionBytes: log.size + 100 }), remoteStorageSystemEnable: true });
  fill(replica, 10);
  const rlm2 = mk(2, replica);
  rlm2.onLeadershipChange([TIP], []);
  await rlm2.runOnce(TIP);
  // counted once, the data is within retention: nothing is deleted
  expect(replica.highestOffsetInRemoteStorage).toBe(log.highestOffsetInRemoteStorage);
  expect(finished(rlmm).length).toBe(copied);
  expect(replica.logStartOffset).toBe(0n);
  await rlm2.close();
});

test('a partition whose metadata is not loaded yet is left alone until it is', async () => {
  const { log, rlmm, rlm } = harness();
  fill(log, 4);
  rlmm.notReady.add('AAAAAAAAAAAAAAAAAAAAAQ:tiered-0');
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  expect(rlmm.segments.size).toBe(0);
  rlmm.notReady.clear();
  await rlm.runOnce(TIP);
  expect(finished(rlmm).length).toBe(log.logSegments().length - 1);
  await rlm.close();
});

test('ListOffsets by timestamp finds the first remote record at or after the timestamp', async () => {
  const { log, rlm, time } = harness();
  const t0 = time.milliseconds();
  fill(log, 8, 1, (i) => t0 + i * 1000);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  log.deleteOldSegments();
  // batch i holds offsets 5i..5i+4, all stamped t0 + 1000 i
  expect(await rlm.findOffsetByTimestamp(TIP, BigInt(t0 + 2500), 0n)).toEqual({ offset: 15n, timestamp: BigInt(t0 + 3000), leaderEpoch: 1 });
  expect(await rlm.findOffsetByTimestamp(TIP, BigInt(t0), 12n)).toEqual({ offset: 12n, timestamp: BigInt(t0 + 2000), leaderEpoch: 1 });
  expect(await rlm.findOffsetByTimestamp(TIP, BigInt(t0 + 60_000), 0n)).toBeNull();
  await rlm.close();
});

describe('leader-epoch lineage helpers (Kafka RemoteLogManager semantics)', () => {
  const seg = (epochs: [number, bigint][], end: bigint): RemoteLogSegmentMetadata => ({
    remoteLogSegmentId: { topicIdPartition: TIP, id: 'x' },
    startOffset: epochs[0][1],
    endOffset: end,
    brokerId: 0,
    maxTimestampMs: 0n,
    eventTimestampMs: 0n,
    segmentLeaderEpochs: epochs.map(([epoch, startOffset]) => ({ epoch, startOffset })),
    segmentSizeInBytes: 1,
    customMetadata: null,
    state: S.COPY_SEGMENT_FINISHED,
  });
  const lineage = [
    { epoch: 0, startOffset: 0n },
    { epoch: 1, startOffset: 10n },
    { epoch: 2, startOffset: 20n },
    { epoch: 3, startOffset: 30n },
    { epoch: 4, startOffset: 40n },
    { epoch: 5, startOffset: 60n },
    { epoch: 6, startOffset: 60n },
    { epoch: 7, startOffset: 70n },
  ];
  test('epochs without records are filtered out', () => {
    expect(filteredLeaderEpochs(lineage).map((e) => e.epoch)).toEqual([0, 1, 2, 3, 4, 6, 7]);
  });
  test('a segment inside the lineage is valid; one that diverges, overruns an epoch or the log end is not', () => {
    const f = filteredLeaderEpochs(lineage);
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[0, 0n], [1, 10n]], 15n), 100n, f)).toBe(true);
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[2, 20n]], 29n), 100n, f)).toBe(true);
    // epoch 2 may not run past 29
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[2, 20n]], 31n), 100n, f)).toBe(false);
    // a different start for epoch 1 inside the segment: another history
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[0, 0n], [1, 12n]], 15n), 100n, f)).toBe(false);
    // an epoch the lineage does not have
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[8, 80n]], 85n), 100n, f)).toBe(false);
    // at or past the log end
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[7, 70n]], 100n), 100n, f)).toBe(false);
    // the lineage starts later (log start moved): a segment whose first epochs precede it is judged from its first epoch in the lineage
    const later = f.filter((e) => e.epoch >= 1).map((e, i) => (i === 0 ? { epoch: 1, startOffset: 15n } : e));
    expect(isRemoteSegmentWithinLeaderEpochs(seg([[0, 5n], [1, 10n], [2, 20n]], 25n), 100n, later)).toBe(true);
  });
  test('a segment gets the lineage entries of its range, the first moved to its base', () => {
    expect(epochsInRange(lineage, 15n, 45n)).toEqual([
      { epoch: 1, startOffset: 15n },
      { epoch: 2, startOffset: 20n },
      { epoch: 3, startOffset: 30n },
      { epoch: 4, startOffset: 40n },
    ]);
    expect(epochsInRange(lineage, 75n, 80n)).toEqual([{ epoch: 7, startOffset: 75n }]);
  });
  test('the first whole batch holding an offset is found in fetched bytes', () => {
    const b1 = testBatch({ count: 5, baseOffset: 10n });
    const b2 = testBatch({ count: 5, baseOffset: 15n });
    const data = Buffer.concat([b1, b2, b2.subarray(0, 30)]);
    expect(firstBatchAtOrAfter(data, 12n)).toEqual({ position: 0, baseOffset: 10n, size: b1.length });
    expect(firstBatchAtOrAfter(data, 15n)).toEqual({ position: b1.length, baseOffset: 15n, size: b2.length });
    expect(firstBatchAtOrAfter(data, 20n)).toBeNull();
  });
});
