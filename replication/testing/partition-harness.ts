/**
 * A leader Partition over a real log in a temp dir, with a settable clock and a fake controller
 * that records AlterPartition proposals and commits them on request. For tests of the partition
 * itself and of handlers that read from one (callers clean up with removeTempDirs).
 */
import * as path from 'node:path';
import { logConfig } from '../../storage/log-config';
import { testBatch } from '../../storage/testing/batches';
import { tempDir } from '../../storage/testing/temp-dir';
import { UnifiedLog } from '../../storage/unified-log';
import type { PartitionState } from '../../metadata/metadata-cache';
import { Partition, type AlterPartitionItem, type AlterPartitionOutcome, type PartitionContext } from '../partition';

export const MAX_LAG = 1000;

export function partitionHarness(opts: { minIsr?: number; replicas?: number[]; isr?: number[] } = {}) {
  let now = 10_000;
  const sent: { item: AlterPartitionItem; resolve: (o: AlterPartitionOutcome) => void }[] = [];
  const proposals: { kind: string; isr: number[] }[] = [];
  let hwChanges = 0;
  const ctx: PartitionContext = {
    now: () => now,
    replicaLagTimeMaxMs: () => MAX_LAG,
    minInsyncReplicas: () => opts.minIsr ?? 2,
    isReplicaIsrEligible: () => true,
    cachedBrokerEpoch: () => 1n,
    localBrokerEpoch: () => 1n,
    submitAlterPartition: (item) => new Promise((resolve) => sent.push({ item, resolve })),
    onHighWatermarkChanged: () => hwChanges++,
    onIsrChangeProposed: (_p, kind, isr) => proposals.push({ kind, isr }),
    info: () => {},
  };
  const dir = path.join(tempDir(), 't-0');
  const log = UnifiedLog.load({ dir, tp: { topic: 't', partition: 0 }, config: logConfig({}) });
  const p = new Partition('t', 0, 'topicid', 0, log, ctx);
  const state: PartitionState = {
    topicId: 'topicid',
    topic: 't',
    partition: 0,
    replicas: opts.replicas ?? [0, 1, 2],
    isr: opts.isr ?? [0, 1, 2],
    leader: 0,
    leaderEpoch: 0,
    partitionEpoch: 0,
    leaderRecoveryState: 0,
    addingReplicas: [],
    removingReplicas: [],
  };
  p.makeLeader(state);
  return {
    p,
    log,
    state,
    sent,
    proposals,
    get hwChanges() {
      return hwChanges;
    },
    advance(ms: number) {
      now += ms;
    },
    append(n = 1, acks = 1) {
      for (let i = 0; i < n; i++) p.appendRecordsToLeader(testBatch({ count: 1 }), acks, opts.minIsr ?? 2);
    },
    fetch(replicaId: number, fetchOffset: bigint, lastFetchedEpoch = -1) {
      return p.fetchForFollower({ replicaId, replicaEpoch: 1n, fetchOffset, lastFetchedEpoch, currentLeaderEpoch: p.leaderEpoch, followerLogStartOffset: 0n, maxBytes: 1 << 20, minOneMessage: true });
    },
    /** The controller commits the last AlterPartition sent. */
    commitLast() {
      const s = sent[sent.length - 1];
      s.resolve({ ok: true, leaderEpoch: s.item.leaderEpoch, partitionEpoch: s.item.partitionEpoch + 1, isr: s.item.newIsr.map((b) => b.brokerId) });
      return new Promise((r) => setImmediate(r));
    },
  };
}
