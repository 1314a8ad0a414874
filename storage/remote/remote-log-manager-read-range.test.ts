/**
 * The byte ranges a remote read asks the storage manager for (RemoteLogManager.read with the
 * remote index cache, over a real UnifiedLog and in-memory remote storage): the fetch's budget
 * plus REMOTE_READ_SLACK_BYTES from the offset index's position, not the rest of the segment; the
 * rest only when that range holds no whole batch at or after the offset (a batch larger than the
 * range with minOneMessage). The answers are the log's own bytes, batch for batch.
 */
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { logConfig } from '../log-config';
import { testBatch } from '../testing/batches';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { UnifiedLog } from '../unified-log';
import { RemoteIndexCache } from './remote-index-cache';
import { DEFAULT_REMOTE_LOG_MANAGER_CONFIG, REMOTE_READ_SLACK_BYTES, RemoteLogManager } from './remote-log-manager';
import type { RemoteLogSegmentMetadata } from './remote-log-segment-metadata';
import { MemoryRemoteLogMetadataManager, MemoryRemoteStorageManager } from './testing/memory-remote-storage';

afterAll(removeTempDirs);

const TP = { topic: 'ranged', partition: 0 };
const TIP = { topicId: 'AAAAAAAAAAAAAAAAAAAAAg', topic: 'ranged', partition: 0 };

/** The storage manager of the tests, recording each fetchLogSegment range it is asked for. */
class RecordingRsm extends MemoryRemoteStorageManager {
  readonly ranges: { start: number; end: number | undefined; size: number }[] = [];
  override async fetchLogSegment(m: RemoteLogSegmentMetadata, start: number, end?: number): Promise<Buffer> {
    this.ranges.push({ start, end, size: m.segmentSizeInBytes });
    return super.fetchLogSegment(m, start, end);
  }
}

async function tieredLog(fill: (log: UnifiedLog) => void) {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const dir = tempDir();
  const log = UnifiedLog.load({
    dir: path.join(dir, 'ranged-0'),
    tp: TP,
    config: logConfig({ segmentBytes: 400_000, indexIntervalBytes: 4096, remoteStorageEnable: true, retentionMs: -1, retentionBytes: -1, localRetentionBytes: 0 }),
    time,
    scheduler,
    remoteStorageSystemEnable: true,
  });
  fill(log);
  log.updateHighWatermark(log.logEndOffset);
  log.roll();
  const rsm = new RecordingRsm();
  const indexes = new RemoteIndexCache({ logDir: dir, rsm, time, scheduler, logger: Logger.silent() });
  const rlm = new RemoteLogManager({ config: { ...DEFAULT_REMOTE_LOG_MANAGER_CONFIG, brokerId: 1 }, rsm, rlmm: new MemoryRemoteLogMetadataManager(), indexes, fetchLog: () => log, time, scheduler, logger: Logger.silent() });
  // every batch's bytes, read locally before the segments go
  const local = Buffer.concat(log.read(0n, 1 << 24).records);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  log.deleteOldSegments();
  expect(log.localLogStartOffset).toBe(log.logEndOffset);
  return { log, rsm, rlm, indexes, local };
}

/** The [position, end) of each batch in `buf`, keyed by base offset. */
function batchSpans(buf: Buffer): Map<bigint, [number, number]> {
  const out = new Map<bigint, [number, number]>();
  for (let pos = 0; pos < buf.length; ) {
    const len = 12 + buf.readInt32BE(pos + 8);
    out.set(buf.readBigInt64BE(pos), [pos, pos + len]);
    pos += len;
  }
  return out;
}

test('reads ask for the budget plus the slack from the index position and return the log\'s bytes, batch for batch', async () => {
  // ~300 KB in one segment: batches of 5 x 500 B
  const { log, rsm, rlm, indexes, local } = await tieredLog((l) => {
    for (let i = 0; i < 110; i++) l.appendAsLeader(testBatch({ count: 5, valueSize: 500, prefix: `b${i}-` }), { leaderEpoch: 1 });
  });
  const spans = batchSpans(local);
  const maxBytes = 20_000;
  const got: Buffer[] = [];
  for (let next = 0n; next < log.logEndOffset; ) {
    const info = await rlm.read({ tp: TIP, fetchOffset: next, maxBytes, minOneMessage: true, readCommitted: false });
    const b = Buffer.concat(info.records);
    expect(b.length).toBeGreaterThan(0);
    expect(b.length).toBeLessThanOrEqual(maxBytes);
    // exactly the log's batches from the one holding `next`
    const [from] = spans.get(next)!;
    expect(b.equals(local.subarray(from, from + b.length))).toBe(true);
    got.push(b);
    next = [...batchSpans(b).keys()].pop()! + 5n;
  }
  expect(Buffer.concat(got).equals(local)).toBe(true);
  // every request was bounded: budget + slack from the position, never the rest of the ~300 KB segment
  expect(rsm.ranges.length).toBe(got.length);
  for (const r of rsm.ranges) {
    if (r.end === undefined) {
      // only the last stretch of the segment may be asked for as "the rest": it is shorter than the range anyway
      expect(r.size - r.start).toBeLessThanOrEqual(maxBytes + REMOTE_READ_SLACK_BYTES);
    } else {
      expect(r.end - r.start + 1).toBe(maxBytes + REMOTE_READ_SLACK_BYTES);
    }
  }
  expect(rsm.ranges.filter((r) => r.end !== undefined).length).toBeGreaterThan(5);
  await rlm.close();
  await indexes.close();
});

test('a first batch larger than the range is still returned whole with minOneMessage (the rest of the segment is fetched)', async () => {
  const big = 100_000;
  const { rsm, rlm, indexes, local } = await tieredLog((l) => {
    l.appendAsLeader(testBatch({ count: 1, valueSize: 100, prefix: 'small-' }), { leaderEpoch: 1 });
    l.appendAsLeader(testBatch({ count: 1, valueSize: big, prefix: 'big-' }), { leaderEpoch: 1 });
    l.appendAsLeader(testBatch({ count: 1, valueSize: 100, prefix: 'after-' }), { leaderEpoch: 1 });
  });
  const spans = batchSpans(local);
  const maxBytes = 100;
  const info = await rlm.read({ tp: TIP, fetchOffset: 1n, maxBytes, minOneMessage: true, readCommitted: false });
  const [from, to] = spans.get(1n)!;
  expect(Buffer.concat(info.records).equals(local.subarray(from, to))).toBe(true);
  // first the bounded range, then (no whole batch in it) the rest of the segment
  expect(rsm.ranges.map((r) => r.end)).toEqual([rsm.ranges[0].start + maxBytes + REMOTE_READ_SLACK_BYTES - 1, undefined]);
  // without minOneMessage the same read answers nothing, marked incomplete
  const none = await rlm.read({ tp: TIP, fetchOffset: 1n, maxBytes, minOneMessage: false, readCommitted: false });
  expect([none.sizeInBytes, none.firstEntryIncomplete]).toEqual([0, true]);
  await rlm.close();
  await indexes.close();
});
