/**
 * DelayedDeleteRecords over a real leader Partition: the low watermark (Kafka's
 * lowWatermarkIfLeader) is the smallest log start offset of the leader and its alive followers; a
 * parked DeleteRecords completes when a follower's fetch brings it to the requested offset (woken
 * through onLowWatermarkChanged, no polling), stops waiting for a partition that fails, and times
 * out with REQUEST_TIMED_OUT and the low watermark it had.
 */
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import { logConfig } from '../../storage/log-config';
import { testBatch } from '../../storage/testing/batches';
import { removeTempDirs, tempDir } from '../../storage/testing/temp-dir';
import { UnifiedLog } from '../../storage/unified-log';
import { Partition, type PartitionContext } from '../partition';
import { DelayedOperationPurgatory } from './purgatory';
import { DelayedDeleteRecords, type DeleteRecordsPartitionStatus } from './delayed-delete-records';

afterAll(removeTempDirs);

function leader(alive: Set<number>) {
  const purgatory = new DelayedOperationPurgatory<DelayedDeleteRecords>('DeleteRecords');
  let wakeUps = 0;
  const ctx: PartitionContext = {
    now: () => 10_000,
    replicaLagTimeMaxMs: () => 1000,
    minInsyncReplicas: () => 1,
    isReplicaIsrEligible: () => true,
    cachedBrokerEpoch: () => 1n,
    localBrokerEpoch: () => 1n,
    submitAlterPartition: () => new Promise(() => {}),
    onHighWatermarkChanged: () => {},
    isBrokerAlive: (id) => alive.has(id),
    onLowWatermarkChanged: (p) => {
      wakeUps++;
      purgatory.checkAndComplete(p.key);
    },
    info: () => {},
  };
  const log = UnifiedLog.load({ dir: path.join(tempDir(), 't-0'), tp: { topic: 't', partition: 0 }, config: logConfig({}) });
  const p = new Partition('t', 0, 'topicid', 0, log, ctx);
  p.makeLeader({ topicId: 'topicid', topic: 't', partition: 0, replicas: [0, 1, 2], isr: [0, 1, 2], leader: 0, leaderEpoch: 0, partitionEpoch: 0, leaderRecoveryState: 0, addingReplicas: [], removingReplicas: [] });
  for (let i = 0; i < 10; i++) p.appendRecordsToLeader(testBatch({ count: 1 }), 1, 1);
  const fetch = (replicaId: number, logStart: bigint) =>
    p.fetchForFollower({ replicaId, replicaEpoch: 1n, fetchOffset: 10n, lastFetchedEpoch: -1, currentLeaderEpoch: 0, followerLogStartOffset: logStart, maxBytes: 1 << 20, minOneMessage: true });
  fetch(1, 0n);
  fetch(2, 0n);
  expect(log.highWatermark).toBe(10n);
  /** Parks a DeleteRecords for `offset`; resolves with its statuses when it completes. */
  const park = (offset: bigint, timeoutMs = 60_000) => {
    const r = p.deleteRecordsOnLeader(offset);
    const status: DeleteRecordsPartitionStatus[] = [{ topic: 't', partition: 0, requiredOffset: r.requestedOffset, errorCode: ErrorCode.NONE, lowWatermark: r.lowWatermark }];
    let completed: DeleteRecordsPartitionStatus[] | null = null;
    const done = new Promise<DeleteRecordsPartitionStatus[]>((resolve) => {
      const op = new DelayedDeleteRecords(timeoutMs, status, () => (p.isLeader ? { lowWatermark: p.lowWatermarkIfLeader } : { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }), (s) => {
        completed = s;
        resolve(s);
      });
      purgatory.tryCompleteElseWatch(op, [p.key]);
    });
    return { done, get completed() { return completed; }, status };
  };
  return { p, log, fetch, park, purgatory, get wakeUps() { return wakeUps; } };
}

describe('DelayedDeleteRecords', () => {
  test('waits for every alive follower\'s log start offset, woken by their fetches', async () => {
    const h = leader(new Set([0, 1, 2]));
    const wakeUpsBefore = h.wakeUps;
    const op = h.park(5n);
    expect(h.log.logStartOffset).toBe(5n);
    expect(h.p.lowWatermarkIfLeader).toBe(0n);
    expect(op.completed).toBeNull();
    expect(op.status[0].errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT); // what a timeout would answer
    h.fetch(1, 5n);
    expect(op.completed).toBeNull();
    h.fetch(2, 7n);
    expect(await op.done).toEqual([expect.objectContaining({ errorCode: ErrorCode.NONE, lowWatermark: 5n, requiredOffset: 5n })]);
    expect(h.purgatory.watched).toBe(0);
    expect(h.wakeUps - wakeUpsBefore).toBe(2);
  });

  test('-1 means the high watermark; a follower on a broker that is not alive is not waited for', async () => {
    const h = leader(new Set([0, 1]));
    const op = h.park(-1n);
    expect(op.status[0].requiredOffset).toBe(10n);
    h.fetch(1, 10n);
    expect(await op.done).toEqual([expect.objectContaining({ errorCode: ErrorCode.NONE, lowWatermark: 10n })]);
  });

  test('already reached: completes at once; the leader moving away ends the wait with its error', async () => {
    const h = leader(new Set([0, 1, 2]));
    h.fetch(1, 3n);
    h.fetch(2, 3n);
    // The leader's own log start (now 2) is the lowest.
    expect(h.park(2n).completed).toEqual([expect.objectContaining({ errorCode: ErrorCode.NONE, lowWatermark: 2n })]);
    const op = h.park(6n);
    expect(op.completed).toBeNull();
    h.p.makeFollower({ topicId: 'topicid', topic: 't', partition: 0, replicas: [0, 1, 2], isr: [0, 1, 2], leader: 1, leaderEpoch: 1, partitionEpoch: 1, leaderRecoveryState: 0, addingReplicas: [], removingReplicas: [] });
    h.purgatory.checkAndComplete(h.p.key);
    expect(await op.done).toEqual([expect.objectContaining({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n })]);
  });

  test('timeout: REQUEST_TIMED_OUT with the low watermark of the moment the request was accepted', async () => {
    const h = leader(new Set([0, 1, 2]));
    h.fetch(1, 2n);
    h.fetch(2, 4n);
    const op = h.park(8n, 20);
    h.fetch(1, 8n); // one of two followers is not enough
    expect(await op.done).toEqual([expect.objectContaining({ errorCode: ErrorCode.REQUEST_TIMED_OUT, lowWatermark: 2n })]);
    expect(h.purgatory.watched).toBe(0);
  });
});
