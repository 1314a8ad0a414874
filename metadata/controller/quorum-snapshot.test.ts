/**
 * Metadata snapshots on a 3-voter simulated quorum (testing/raft-quorum-log.ts), with a small
 * metadata.log.max.record.bytes.between.snapshots and a retention that keeps only the latest
 * snapshot: every controller (active and standby) takes its own snapshots and the log before the
 * latest one is deleted; a controller started afresh on a node loads the latest snapshot and then
 * the log after it, and has the same image; a voter that was down while the log start moved past
 * its log end catches up by FetchSnapshot, and its controller (kept running across the crash)
 * loads that snapshot onto its stale image and ends with the same image; the interval rule; and
 * random schedules (3 by default, KRILL_QUORUM_SNAPSHOT_SEEDS=n for more; 30 took 10 s) of writes,
 * crashes, restarts and controllers replaced by fresh ones while snapshots are taken and the log
 * trimmed, after which every controller has the same image.
 */
import { ErrorCode } from '../../protocol/errors';
import { Logger } from '../../common/logger';
import { randomUuid } from '../../protocol/primitives/uuid';
import { Controller } from './controller';
import { QuorumHarness, type SimQuorumLog } from './testing/raft-quorum-log';
import { Rng, imageState } from '../snapshot/testing/random-metadata';
import { readSnapshotRecords } from '../snapshot/snapshot-records';
import { ConfigResourceType } from '../metadata-records';

const SNAPSHOT_BYTES = 2500;

function controllerOn(h: QuorumHarness, log: SimQuorumLog, snapshots = { maxRecordBytesBetween: SNAPSHOT_BYTES, maxIntervalMs: 0 }): Controller {
  return new Controller({
    nodeId: log.localId,
    clusterId: 'snapshot-test',
    quorum: log,
    logger: new Logger('test', 'error'),
    defaultNumPartitions: () => 2,
    defaultReplicationFactor: () => 3,
    validateTopicConfig: () => {},
    sessions: { sessionTimeoutMs: 60_000 },
    now: () => h.sim.now,
    snapshots,
  });
}

const topic = (name: string) => ({ name, numPartitions: 2, replicationFactor: 3, assignments: [], configs: [{ name: 'retention.ms', value: String(name.length * 1000) }] });

async function setup(seed: number) {
  // Retention of 0 bytes: everything before the latest snapshot goes as soon as it is taken.
  const h = new QuorumHarness({ nodeCount: 3, seed, retention: { maxBytes: 0, maxMs: -1 } });
  const controllers = h.logs.map((l) => controllerOn(h, l));
  await h.until(() => controllers.filter((c) => c.isActiveController).length === 1, 10_000, 'an active controller');
  const active = (): Controller => {
    const a = controllers.filter((c) => c.isActiveController);
    if (a.length !== 1) throw new Error(`${a.length} active controllers`);
    return a[0];
  };
  const epochs = new Map<number, bigint>();
  for (const id of [100, 101, 102]) {
    const c = active();
    epochs.set(id, await h.settle(c.registerBroker({ brokerId: id, incarnationId: randomUuid(), endpoints: [{ name: 'PLAINTEXT', host: 'h', port: id, securityProtocol: 0 }], rack: null, logDirs: [] }), 2000));
  }
  for (const id of [100, 101, 102]) {
    const c = active();
    await h.settle(c.heartbeat({ brokerId: id, brokerEpoch: epochs.get(id)!, currentMetadataOffset: c.lastCommittedOffset, wantFence: false, wantShutDown: false }), 2000);
  }
  let n = 0;
  const writeSome = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++, n++) {
      const c = active();
      const [r] = await h.settle(c.createTopics([topic(`t${n}`)], false), 3000);
      expect(r.errorCode).toBe(ErrorCode.NONE);
      if (n % 5 === 4) {
        const [d] = await h.settle(c.deleteTopics([{ name: `t${n - 2}`, topicId: null }]), 3000);
        expect(d.errorCode).toBe(ErrorCode.NONE);
        await h.settle(c.alterBrokerConfigs([{ resourceName: '', ops: [{ name: 'log.retention.ms', value: String(n), op: 0 }], incremental: false }], false), 3000);
      }
    }
  };
  const converged = (cs: Controller[]): boolean => cs.every((c) => c.lastCommittedOffset === cs[0].lastCommittedOffset);
  return { h, controllers, active, writeSome, converged };
}

describe('metadata snapshots on the quorum', () => {
  test('snapshots are taken on every controller, the log before the latest is deleted, and a controller restarted on a node loads snapshot + log into the same image', async () => {
    const t = await setup(3);
    await t.writeSome(40);
    await t.h.until(() => t.converged(t.controllers), 5000, 'the controllers converging');
    for (const c of t.controllers) expect(c.snapshotsTaken).toBeGreaterThan(2);
    for (const l of t.h.logs) {
      const log = t.h.sim.node(l.localId).log;
      const latest = log.latestSnapshotId()!;
      expect(latest.offset).toBeGreaterThan(0n);
      // Only the latest snapshot is kept, and the log starts at it.
      expect(log.snapshotIds()).toEqual([latest]);
      expect(log.startOffset()).toBe(latest.offset);
      // Kafka's format, rebuilding an image with the topics written before it.
      const { records } = readSnapshotRecords(log.readSnapshot(latest)!);
      expect(records[0]).toMatchObject({ type: 'FeatureLevelRecord', data: { name: 'metadata.version' } });
      expect(records.some((r) => r.type === 'RegisterBrokerRecord')).toBe(true);
      expect(records.some((r) => r.type === 'ConfigRecord' && r.data.resourceType === ConfigResourceType.BROKER)).toBe(true);
    }
    // The committed log held by each controller is bounded: the snapshot plus what followed it.
    for (const c of t.controllers) expect((c.metadataLog as import('./quorum-log').CommittedMetadataLog).logStartOffset).toBeGreaterThan(0n);

    // A standby's controller is replaced by a fresh one on the same node's log.
    const active = t.active();
    const standby = t.controllers.find((c) => c !== active)!;
    const id = t.h.logs[t.controllers.indexOf(standby)].localId;
    await standby.close();
    const freshLog = t.h.reopen(id);
    const fresh = controllerOn(t.h, freshLog);
    t.controllers[t.controllers.indexOf(standby)] = fresh;
    expect(freshLog.loadedSnapshots).toHaveLength(1);
    await t.writeSome(3);
    await t.h.until(() => t.converged(t.controllers), 5000, 'the fresh controller catching up');
    expect(imageState(fresh.image)).toEqual(imageState(active.image));
    expect(fresh.image.broker(101)?.epoch).toBe(active.image.broker(101)?.epoch);
    // Broker epochs keep increasing after a snapshot load (the counter is past every epoch in it).
    for (const c of t.controllers) await c.close();
  });

  test('a voter down while the log start moved past its log end catches up by FetchSnapshot; its controller ends with the same image', async () => {
    const t = await setup(5);
    await t.writeSome(5);
    await t.h.until(() => t.converged(t.controllers), 5000, 'the controllers converging');
    const active = t.active();
    const downIdx = t.controllers.findIndex((c) => c !== active);
    const down = t.controllers[downIdx];
    const downId = t.h.logs[downIdx].localId;
    const endBefore = t.h.sim.node(downId).log.endOffset().offset;
    const staleTopics = [...down.image.topics()].length;
    t.h.sim.crash(downId);
    expect(down.image.topic('t0')).toBeDefined();
    // Topics the stale image has are deleted meanwhile: the snapshot it gets no longer has them.
    const deleted = await t.h.settle(t.active().deleteTopics([{ name: 't0', topicId: null }, { name: 't1', topicId: null }]), 3000);
    expect(deleted.map((d) => d.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    await t.writeSome(30);
    const upIds = t.h.logs.map((l) => l.localId).filter((x) => x !== downId);
    // The others' logs now start past what the crashed voter has.
    for (const x of upIds) expect(t.h.sim.node(x).log.startOffset()).toBeGreaterThan(endBefore);
    const chunksBefore = t.h.sim.snapshotChunks;
    const loadsBefore = t.h.logs[downIdx].loadedSnapshots.length;
    t.h.sim.restart(downId);
    await t.h.until(() => t.converged(t.controllers), 10_000, 'the restarted voter catching up');
    expect(t.h.sim.snapshotChunks).toBeGreaterThan(chunksBefore);
    expect(t.h.logs[downIdx].loadedSnapshots.length).toBeGreaterThan(loadsBefore);
    expect([...down.image.topics()].length).toBeGreaterThan(staleTopics);
    expect(down.image.topic('t0')).toBeUndefined();
    expect(down.image.topic('t1')).toBeUndefined();
    // Deleted topics are gone from it too: exactly the active controller's image.
    expect(imageState(down.image, true)).toEqual(imageState(active.image, true));
    // And it keeps following: a later write reaches it.
    await t.writeSome(2);
    await t.h.until(() => t.converged(t.controllers), 5000, 'converging after the catch-up');
    expect(imageState(down.image, true)).toEqual(imageState(t.active().image, true));
    for (const c of t.controllers) await c.close();
  });
});

test('metadata.log.max.snapshot.interval.ms: a snapshot once the interval passed with new records, none without', async () => {
  const h = new QuorumHarness({ nodeCount: 3, seed: 11 });
  const controllers = h.logs.map((l) => controllerOn(h, l, { maxRecordBytesBetween: 1 << 30, maxIntervalMs: 2000 }));
  await h.until(() => controllers.some((c) => c.isActiveController), 10_000, 'an active controller');
  const active = controllers.find((c) => c.isActiveController)!;
  await h.step(2500);
  // Only the bootstrap batch so far, committed before the interval passed: nothing yet.
  expect(controllers.map((c) => c.snapshotsTaken)).toEqual([0, 0, 0]);
  await h.settle(active.alterBrokerConfigs([{ resourceName: '', ops: [{ name: 'log.retention.ms', value: '1', op: 0 }], incremental: false }], false), 3000);
  await h.until(() => controllers.every((c) => c.snapshotsTaken === 1), 3000, 'a snapshot on every controller');
  // Time passing with no new records takes none.
  await h.step(5000);
  expect(controllers.map((c) => c.snapshotsTaken)).toEqual([1, 1, 1]);
  for (const c of controllers) await c.close();
});

const RANDOM_SEEDS = Number(process.env.KRILL_QUORUM_SNAPSHOT_SEEDS ?? 3);

test(`random crashes and restarts while snapshots are taken and the log trimmed: every controller ends with the same image (${RANDOM_SEEDS} seeds)`, async () => {
  let loads = 0;
  let fresh = 0;
  for (let seed = 1; seed <= RANDOM_SEEDS; seed++) {
    const h = new QuorumHarness({ nodeCount: 3, seed: 100 + seed, retention: { maxBytes: 0, maxMs: -1 } });
    const controllers = h.logs.map((l) => controllerOn(h, l));
    const rng = new Rng(seed * 7919);
    const next = (n: number): number => rng.int(n);
    const down = new Set<number>();
    let created = 0;
    const brokers = new Map<number, bigint>();
    for (let step = 0; step < 80; step++) {
      const act = controllers.find((c, i) => c.isActiveController && !down.has(h.logs[i].localId));
      const r = next(10);
      if (r <= 1 && down.size === 0) {
        const id = h.logs[next(3)].localId;
        h.sim.crash(id);
        down.add(id);
      } else if (r <= 2 && down.size > 0) {
        const id = [...down][0];
        h.sim.restart(id);
        down.delete(id);
        if (next(2) === 0) {
          // A new controller on the node (a process restart) instead of the one that kept running.
          const i = h.logs.findIndex((l) => l.localId === id);
          await controllers[i].close();
          controllers[i] = controllerOn(h, h.reopen(id));
          fresh++;
        }
      } else if (act) {
        try {
          if (brokers.size < 1) {
            const epoch = await h.settle(act.registerBroker({ brokerId: 100, incarnationId: randomUuid(), endpoints: [], rack: null, logDirs: [] }), 3000);
            await h.settle(act.heartbeat({ brokerId: 100, brokerEpoch: epoch, currentMetadataOffset: act.lastCommittedOffset, wantFence: false, wantShutDown: false }), 3000);
            brokers.set(100, epoch);
          } else if (next(4) === 0 && created > 2) {
            await h.settle(act.deleteTopics([{ name: `r${next(created)}`, topicId: null }]), 3000);
          } else {
            const [res] = await h.settle(act.createTopics([{ ...topic(`r${created}`), replicationFactor: 1, numPartitions: 1 + next(3) }], false), 3000);
            expect(res.errorCode).toBe(ErrorCode.NONE);
            created++;
          }
        } catch (err) {
          // A failover in the middle: NOT_CONTROLLER, the write may or may not have committed.
          expect((err as { code?: number }).code).toBe(ErrorCode.NOT_CONTROLLER);
        }
      }
      await h.step(20 + next(200));
    }
    for (const id of down) h.sim.restart(id);
    await h.until(() => controllers.filter((c) => c.isActiveController).length === 1 && controllers.every((c) => c.lastCommittedOffset === controllers[0].lastCommittedOffset), 20_000, 'converging after the heal');
    const want = imageState(controllers[0].image, true);
    for (const c of controllers) expect(imageState(c.image, true)).toEqual(want);
    loads += h.logs.reduce((n, l) => n + l.loadedSnapshots.length, 0);
    for (const c of controllers) await c.close();
  }
  if (process.env.KRILL_QUORUM_SNAPSHOT_SEEDS) console.log(`${RANDOM_SEEDS} seeds: ${loads} snapshot loads, ${fresh} fresh controllers`);
  // The schedules did exercise loading (a fresh controller on a trimmed log, or a download).
  expect(loads).toBeGreaterThan(0);
  expect(fresh).toBeGreaterThan(0);
});
