/**
 * The remote log manager with the real plugins: LocalTieredStorage holds the copies and
 * RemoteIndexCache serves the index lookups. Reads start at the indexed position, read_committed
 * reads carry the aborted transactions of remote segments (their transaction indexes fetched only
 * when needed), and deleted segments leave the index cache.
 */
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { logConfig } from '../log-config';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { UnifiedLog } from '../unified-log';
import { LocalTieredStorage } from './local-tiered-storage';
import { RemoteIndexCache } from './remote-index-cache';
import { DEFAULT_REMOTE_LOG_MANAGER_CONFIG, RemoteLogManager } from './remote-log-manager';
import { RemoteLogSegmentState as S } from './remote-log-segment-metadata';
import { RemoteResourceNotFoundError } from './remote-storage-manager';
import { MemoryRemoteLogMetadataManager } from './testing/memory-remote-storage';

afterAll(removeTempDirs);

const TP = { topic: 'txn', partition: 0 };
const TIP = { topicId: 'AAAAAAAAAAAAAAAAAAAAAg', topic: 'txn', partition: 0 };
const TS = 1_700_000_000_000n;

async function harness() {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const logDir = tempDir();
  const log = UnifiedLog.load({
    dir: path.join(logDir, 'txn-0'),
    tp: TP,
    config: logConfig({ segmentBytes: 600, remoteStorageEnable: true, retentionMs: -1, localRetentionBytes: 0 }),
    time,
    scheduler,
    remoteStorageSystemEnable: true,
  });
  const rsm = new LocalTieredStorage();
  await rsm.configure({ dir: tempDir(), 'broker.id': '1' });
  const indexes = new RemoteIndexCache({ logDir, rsm, time, scheduler, logger: Logger.silent() });
  const rlmm = new MemoryRemoteLogMetadataManager();
  const rlm = new RemoteLogManager({ config: { ...DEFAULT_REMOTE_LOG_MANAGER_CONFIG, brokerId: 1 }, rsm, rlmm, indexes, fetchLog: () => log, time, scheduler, logger: Logger.silent() });
  return { log, rsm, indexes, rlmm, rlm };
}

const seqs = new Map<bigint, number>();
function data(log: UnifiedLog, pid: bigint, transactional: boolean): void {
  const seq = seqs.get(pid) ?? 0;
  seqs.set(pid, seq + 3);
  const recs = Array.from({ length: 3 }, (_, i) => ({ key: null, value: `p${pid}-${seq + i}-${'x'.repeat(60)}`, timestamp: TS }));
  log.appendAsLeader(buildRecordBatch(recs, { producerId: pid, producerEpoch: 0, baseSequence: seq, isTransactional: transactional, now: TS }), { leaderEpoch: 0 });
}
function marker(log: UnifiedLog, pid: bigint, type: ControlRecordType.ABORT | ControlRecordType.COMMIT): void {
  log.appendAsLeader(buildEndTxnMarkerBatch({ type, producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, timestamp: TS, baseOffset: 0n }), { leaderEpoch: 0, origin: 'coordinator' });
}

test('read_committed over remote segments: aborted transactions come from the remote transaction indexes, positions from the offset index', async () => {
  const { log, rlm, indexes, rlmm } = await harness();
  // producer 7 aborts a transaction spread over several segments; producer 8 writes plain data
  data(log, 7n, true);
  for (let i = 0; i < 6; i++) data(log, 8n, false);
  data(log, 7n, true);
  marker(log, 7n, ControlRecordType.ABORT);
  for (let i = 0; i < 6; i++) data(log, 8n, false);
  log.updateHighWatermark(log.logEndOffset);
  log.roll();
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  const copied = [...rlmm.segments.values()].filter((m) => m.state === S.COPY_SEGMENT_FINISHED);
  expect(copied.length).toBe(log.logSegments().length - 1);
  expect(log.deleteOldSegments()).toBeGreaterThan(0);
  expect(log.localLogStartOffset).toBe(log.logEndOffset);

  // from the start: the abort of producer 7 overlaps the first batches
  const first = await rlm.read({ tp: TIP, fetchOffset: 0n, maxBytes: 100_000, minOneMessage: true, readCommitted: true });
  expect(first.sizeInBytes).toBeGreaterThan(0);
  expect(first.abortedTransactions).toEqual([{ producerId: 7n, firstOffset: 0n, lastOffset: expect.any(BigInt), lastStableOffset: expect.any(BigInt) }]);
  // from a later segment, after the marker: nothing aborted overlaps
  const last = copied.sort((a, b) => Number(b.startOffset - a.startOffset))[0];
  const late = await rlm.read({ tp: TIP, fetchOffset: last.startOffset, maxBytes: 100_000, minOneMessage: true, readCommitted: true });
  expect(late.sizeInBytes).toBeGreaterThan(0);
  expect(late.abortedTransactions).toEqual([]);
  // a read in the middle of a remote segment starts at the batch holding the offset
  const mid = copied.find((m) => m.endOffset - m.startOffset >= 5n)!;
  const inside = await rlm.read({ tp: TIP, fetchOffset: mid.startOffset + 4n, maxBytes: 100_000, minOneMessage: true, readCommitted: false });
  const base = Buffer.concat(inside.records).readBigInt64BE(0);
  expect(base).toBeLessThanOrEqual(mid.startOffset + 4n);
  expect(base + 2n).toBeGreaterThanOrEqual(mid.startOffset + 4n);
  expect(indexes.isCached(mid.remoteLogSegmentId.id)).toBe(true);
  await rlm.close();
  await indexes.close();
});

test('segments deleted by retention leave remote storage and the index cache', async () => {
  const { log, rlm, indexes, rlmm, rsm } = await harness();
  for (let i = 0; i < 12; i++) data(log, 9n, false);
  log.updateHighWatermark(log.logEndOffset);
  rlm.onLeadershipChange([TIP], []);
  await rlm.runOnce(TIP);
  const copied = [...rlmm.segments.values()].sort((a, b) => Number(a.startOffset - b.startOffset));
  await rlm.read({ tp: TIP, fetchOffset: 0n, maxBytes: 1000, minOneMessage: true, readCommitted: false });
  expect(indexes.isCached(copied[0].remoteLogSegmentId.id)).toBe(true);
  // DeleteRecords past the first two remote segments: the next pass deletes them everywhere
  log.deleteRecordsBefore(copied[2].startOffset);
  await rlm.runOnce(TIP);
  expect(rlmm.segments.has(copied[0].remoteLogSegmentId.id)).toBe(false);
  expect(rlmm.segments.has(copied[1].remoteLogSegmentId.id)).toBe(false);
  expect(indexes.isCached(copied[0].remoteLogSegmentId.id)).toBe(false);
  await expect(rsm.fetchLogSegment(copied[0], 0)).rejects.toBeInstanceOf(RemoteResourceNotFoundError);
  expect(rlmm.segments.has(copied[2].remoteLogSegmentId.id)).toBe(true);
  await rlm.close();
  await indexes.close();
});
