/**
 * The Controller in quorum mode (quorum-log.ts): three controllers on a 3-voter raft quorum in the
 * deterministic simulator (testing/raft-quorum-log.ts), virtual time for both the quorum and the
 * controllers' clocks, no controller timers running (the tests call fenceStaleBrokers). Covers:
 * one active controller, standby images converging on the committed batches, bootstrap written once,
 * NOT_CONTROLLER from standbys, failover (a new active within the election bounds, acknowledged
 * writes kept, an in-flight write on the partitioned leader failing and applied nowhere), unique
 * producer id blocks and surviving broker sessions across a failover.
 */
import { ErrorCode } from '../../protocol/errors';
import { Logger } from '../../common/logger';
import { randomUuid } from '../../protocol/primitives/uuid';
import { FeatureName } from '../features';
import { Controller } from './controller';
import { QuorumHarness } from './testing/raft-quorum-log';

const SESSION_TIMEOUT_MS = 2000;

const topic = (name: string, numPartitions = 3, replicationFactor = 3) => ({ name, numPartitions, replicationFactor, assignments: [], configs: [] });

function quorumCluster(seed = 1) {
  const h = new QuorumHarness({ nodeCount: 3, seed });
  const controllers = h.logs.map(
    (l) =>
      new Controller({
        nodeId: l.localId,
        clusterId: 'quorum-test',
        quorum: l,
        logger: new Logger('test', 'error'),
        defaultNumPartitions: () => 1,
        defaultReplicationFactor: () => 3,
        validateTopicConfig: () => {},
        sessions: { sessionTimeoutMs: SESSION_TIMEOUT_MS },
        now: () => h.sim.now,
      }),
  );
  const epochs = new Map<number, bigint>();
  const t = {
    h,
    controllers,
    epochs,
    actives: () => controllers.filter((c) => c.isActiveController),
    async active(maxMs = 10_000): Promise<Controller> {
      await h.until(() => t.actives().length === 1, maxMs, 'an active controller');
      return t.actives()[0];
    },
    idOf: (c: Controller) => h.logs[controllers.indexOf(c)].localId,
    standbys: (c: Controller) => controllers.filter((x) => x !== c),
    async register(c: Controller, id: number) {
      const e = await h.settle(c.registerBroker({ brokerId: id, incarnationId: randomUuid(), endpoints: [], rack: null, logDirs: [] }), 2000);
      epochs.set(id, e);
      return e;
    },
    heartbeat(c: Controller, id: number) {
      return h.settle(c.heartbeat({ brokerId: id, brokerEpoch: epochs.get(id)!, currentMetadataOffset: c.lastCommittedOffset, wantFence: false, wantShutDown: false }), 2000);
    },
    async brokersUp(c: Controller, ...ids: number[]) {
      for (const id of ids) await t.register(c, id);
      for (const id of ids) await t.heartbeat(c, id);
    },
    /** Every controller has applied the same committed offset. */
    converged: () => controllers.every((c) => c.lastCommittedOffset === controllers[0].lastCommittedOffset),
  };
  return t;
}

describe('Controller on a raft quorum', () => {
  test('one controller becomes active; standbys answer NOT_CONTROLLER and their images converge', async () => {
    const t = quorumCluster();
    const active = await t.active();
    // Claimed only after its epoch's LeaderChange was applied, and the bootstrap is committed.
    expect(active.image.featureLevel(FeatureName.METADATA_VERSION)).toBeGreaterThan(0);
    for (const s of t.standbys(active)) {
      await expect(t.h.settle(s.createTopics([topic('nope')], false), 1000)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
      await expect(t.h.settle(s.registerBroker({ brokerId: 9, incarnationId: randomUuid(), endpoints: [], rack: null, logDirs: [] }), 1000)).rejects.toMatchObject({
        code: ErrorCode.NOT_CONTROLLER,
      });
      await expect(t.h.settle(s.allocateProducerIds(9, 1n, 1000), 1000)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    }
    await t.brokersUp(active, 100, 101, 102);
    const results = await t.h.settle(active.createTopics([topic('a'), topic('b')], false), 2000);
    expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    // Answered only once committed: the active's image has it, and the standbys catch up.
    expect(active.image.topic('a')).toBeDefined();
    await t.h.until(t.converged, 2000, 'convergence');
    for (const c of t.controllers) {
      expect(c.image.topic('a')?.topicId).toBe(active.image.topic('a')!.topicId);
      expect(c.image.topic('b')?.partitions.size).toBe(3);
      expect(c.image.broker(101)?.fenced).toBe(false);
      expect(c.metadataLog.readAll().map((b) => b.lastOffset)).toEqual(active.metadataLog.readAll().map((b) => b.lastOffset));
    }
    // The bootstrap (metadata.version) was written once, by the first leader.
    const mvBatches = active.metadataLog.readAll().filter((b) => b.records.some((r) => r.type === 'FeatureLevelRecord' && r.data.name === FeatureName.METADATA_VERSION));
    expect(mvBatches).toHaveLength(1);
    // Subscribers replay the committed batches and then follow new ones.
    const seen: bigint[] = [];
    t.controllers[0].subscribe((_records, lastOffset) => seen.push(lastOffset));
    expect(seen).toEqual(t.controllers[0].metadataLog.readAll().map((b) => b.lastOffset));
    for (const c of t.controllers) await c.close();
  });

  test('failover: a new active controller keeps every acknowledged write; the in-flight write on the partitioned leader fails and is applied nowhere', async () => {
    const t = quorumCluster(3);
    const old = await t.active();
    await t.brokersUp(old, 100, 101, 102);
    const acked: string[] = [];
    for (let i = 0; i < 5; i++) {
      const [r] = await t.h.settle(old.createTopics([topic(`t${i}`)], false), 2000);
      expect(r.errorCode).toBe(ErrorCode.NONE);
      acked.push(`t${i}`);
    }
    const oldId = t.idOf(old);
    const others = t.standbys(old);
    t.h.sim.partition([[oldId], others.map(t.idOf)]);
    // A write on the isolated leader: appended to its log, never committed.
    const inflight = old.createTopics([topic('lost')], false);
    inflight.catch(() => {});
    await t.h.step(10);
    // In the isolated leader's raft log, past what it has applied (uncommitted).
    expect(t.h.sim.node(oldId).log.endOffset().offset).toBeGreaterThan(old.metadataLog.logEndOffset);
    expect(old.image.topic('lost')).toBeUndefined();
    const cfg = t.h.sim.config;
    const took = await t.h.until(() => others.some((c) => c.isActiveController), cfg.fetchTimeoutMs + 3 * cfg.electionTimeoutMs, 'a new active controller');
    expect(took).toBeLessThanOrEqual(cfg.fetchTimeoutMs + 3 * cfg.electionTimeoutMs);
    const next = others.find((c) => c.isActiveController)!;
    for (const name of acked) expect(next.image.topic(name)).toBeDefined();
    expect(next.image.topic('lost')).toBeUndefined();
    // The old leader resigns (check-quorum): its pending write fails with NOT_CONTROLLER.
    await expect(t.h.settle(inflight, 2 * cfg.fetchTimeoutMs)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    expect(old.isActiveController).toBe(false);
    expect(old.image.topic('lost')).toBeUndefined();
    await expect(t.h.settle(old.createTopics([topic('late')], false), 1000)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    // The new active controller writes; the old one follows once the partition heals.
    const [after] = await t.h.settle(next.createTopics([topic('after')], false), 2000);
    expect(after.errorCode).toBe(ErrorCode.NONE);
    t.h.sim.heal();
    await t.h.until(() => t.converged() && old.image.topic('after') !== undefined, 10_000, 'convergence after healing');
    for (const c of t.controllers) {
      for (const name of [...acked, 'after']) expect(c.image.topic(name)).toBeDefined();
      expect(c.image.topic('lost')).toBeUndefined();
      expect(c.image.topic('late')).toBeUndefined();
    }
    expect(t.actives()).toEqual([next]);
    // Nothing written twice: one metadata.version batch in the whole history.
    const mv = next.metadataLog.readAll().filter((b) => b.records.some((r) => r.type === 'FeatureLevelRecord' && r.data.name === FeatureName.METADATA_VERSION));
    expect(mv).toHaveLength(1);
    for (const c of t.controllers) await c.close();
  });

  test('producer id blocks stay unique across a failover', async () => {
    const t = quorumCluster(5);
    const old = await t.active();
    await t.brokersUp(old, 100);
    const blocks: { first: bigint; size: number }[] = [];
    for (let i = 0; i < 3; i++) blocks.push(await t.h.settle(old.allocateProducerIds(100, t.epochs.get(100)!, 1000), 2000));
    t.h.sim.partition([[t.idOf(old)], t.standbys(old).map(t.idOf)]);
    const inflight = old.allocateProducerIds(100, t.epochs.get(100)!, 1000);
    inflight.catch(() => {});
    await t.h.until(() => t.standbys(old).some((c) => c.isActiveController), 10_000, 'a new active controller');
    const next = t.actives().find((c) => c !== old)!;
    for (let i = 0; i < 3; i++) blocks.push(await t.h.settle(next.allocateProducerIds(100, t.epochs.get(100)!, 1000), 2000));
    await expect(t.h.settle(inflight, 5000)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    t.h.sim.heal();
    await t.h.until(t.converged, 10_000, 'convergence after healing');
    // The old leader, now a standby, can hand out nothing.
    await expect(t.h.settle(old.allocateProducerIds(100, t.epochs.get(100)!, 1000), 1000)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    const sorted = [...blocks].sort((a, b) => (a.first < b.first ? -1 : 1));
    for (let i = 1; i < sorted.length; i++) expect(sorted[i].first).toBeGreaterThanOrEqual(sorted[i - 1].first + BigInt(sorted[i - 1].size));
    for (const c of t.controllers) expect(c.image.nextProducerId).toBe(sorted.at(-1)!.first + 1000n);
    for (const c of t.controllers) await c.close();
  });

  test('broker registrations and heartbeats survive a failover: nobody is fenced by the failover alone', async () => {
    const t = quorumCluster(7);
    const old = await t.active();
    await t.brokersUp(old, 100, 101, 102);
    const [r] = await t.h.settle(old.createTopics([topic('x', 1, 3)], false), 2000);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    await t.h.step(500);
    for (const id of [100, 101, 102]) await t.heartbeat(old, id);
    const lastHeartbeat = t.h.sim.now;
    // The active's quorum leader is cut off; no broker reaches any controller during the failover.
    t.h.sim.partition([[t.idOf(old)], t.standbys(old).map(t.idOf)]);
    await t.h.until(() => t.standbys(old).some((c) => c.isActiveController), 10_000, 'a new active controller');
    const next = t.actives().find((c) => c !== old)!;
    // Longer than a session timeout without heartbeats, yet the failover fences nobody.
    await t.h.step(SESSION_TIMEOUT_MS / 2);
    expect(t.h.sim.now - lastHeartbeat).toBeGreaterThan(SESSION_TIMEOUT_MS);
    expect(await t.h.settle(next.fenceStaleBrokers(), 1000)).toEqual([]);
    // The brokers find the new controller and heartbeat with the epochs they registered with.
    for (const id of [100, 101, 102]) {
      expect(await t.heartbeat(next, id)).toMatchObject({ isFenced: false, shouldShutDown: false });
      expect(next.image.broker(id)?.fenced).toBe(false);
    }
    expect(next.image.partition('x', 0)!.isr.length).toBe(3);
    // A new registration gets an epoch above every committed one.
    const e = await t.register(next, 103);
    expect(e).toBeGreaterThan(t.epochs.get(102)!);
    // Sessions keep working after the failover: a broker that stops heartbeating is fenced.
    for (let i = 0; i < 3; i++) {
      await t.h.step(SESSION_TIMEOUT_MS / 2);
      for (const id of [100, 101, 103]) await t.heartbeat(next, id);
    }
    expect(await t.h.settle(next.fenceStaleBrokers(), 1000)).toEqual([102]);
    expect(next.image.broker(102)?.fenced).toBe(true);
    for (const c of t.controllers) await c.close();
  });

  test('a controller that is active again after a failover starts its broker sessions afresh', async () => {
    const t = quorumCluster(11);
    const first = await t.active();
    const firstId = t.idOf(first);
    await t.brokersUp(first, 100, 101, 102);
    const lastHeartbeatToFirst = t.h.sim.now;
    // Move leadership away, and then back to the first controller.
    t.h.sim.partition([[firstId], t.standbys(first).map(t.idOf)]);
    await t.h.until(() => t.standbys(first).some((c) => c.isActiveController), 10_000, 'a second active controller');
    const second = t.actives().find((c) => c !== first)!;
    for (const id of [100, 101, 102]) await t.heartbeat(second, id);
    t.h.sim.heal();
    await t.h.until(() => t.converged() && !first.isActiveController, 10_000, 'the first controller follows');
    const secondId = t.idOf(second);
    t.h.sim.partition([[secondId], t.standbys(second).map(t.idOf)]);
    await t.h.until(() => t.standbys(second).some((c) => c.isActiveController), 10_000, 'a third term');
    const third = t.actives().find((c) => c !== second)!;
    t.h.sim.heal();
    // (This seed makes the first controller win the third term.)
    expect(third).toBe(first);
    // Its sessions of the first term are older than a session timeout, yet they fence nobody.
    expect(t.h.sim.now - lastHeartbeatToFirst).toBeGreaterThan(SESSION_TIMEOUT_MS);
    expect(await t.h.settle(third.fenceStaleBrokers(), 1000)).toEqual([]);
    for (const id of [100, 101, 102]) expect(third.image.broker(id)?.fenced).toBe(false);
    for (const c of t.controllers) await c.close();
  });
});
