/**
 * The Controller in quorum mode (quorum-log.ts): three controllers on a 3-voter raft quorum in the
 * deterministic simulator (testing/raft-quorum-log.ts), virtual time for both the quorum and the
 * controllers' clocks, no controller timers running (the tests call fenceStaleBrokers). Covers:
 * one active controller, standby images converging on the committed batches, bootstrap written once,
 * NOT_CONTROLLER from standbys, failover (a new active within the election bounds, acknowledged
 * writes kept, an in-flight write on the partitioned leader failing and applied nowhere; a crashed
 * leader, and a fresh Controller on the restarted node catching up), unique
 * producer id blocks and surviving broker sessions across a failover. Then one controller on a
 * hand-driven QuorumLog for the exact orderings (claim after the epoch's LeaderChange, bootstrap
 * first, a write failed by a leader change mid-flight), and CommittedMetadataLog's offsets.
 */
import { ErrorCode } from '../../protocol/errors';
import { Logger } from '../../common/logger';
import { randomUuid } from '../../protocol/primitives/uuid';
import { FeatureName } from '../features';
import { Controller } from './controller';
import { QuorumHarness, SimQuorumLog } from './testing/raft-quorum-log';
import { CommittedMetadataLog, NotLeaderError, type CommittedBatch, type QuorumLeader, type QuorumLog, type QuorumLogListener } from './quorum-log';
import type { MetadataRecord } from '../metadata-records';

/** A QuorumLog the test drives by hand: it commits, fails and changes leaders when told to. */
class ManualQuorumLog implements QuorumLog {
  readonly localId = 1;
  private listener!: QuorumLogListener;
  current: QuorumLeader = { id: -1, epoch: 0 };
  next = 0n;
  readonly appended: { records: MetadataRecord[]; lastOffset: bigint; epoch: number; resolve: (o: bigint) => void; reject: (e: Error) => void }[] = [];
  leader(): QuorumLeader {
    return this.current;
  }
  append(records: MetadataRecord[]): Promise<bigint> {
    if (this.current.id !== this.localId) return Promise.reject(new NotLeaderError(this.current.epoch, this.current.id));
    const lastOffset = this.next + BigInt(records.length) - 1n;
    this.next = lastOffset + 1n;
    return new Promise((resolve, reject) => this.appended.push({ records, lastOffset, epoch: this.current.epoch, resolve, reject }));
  }
  register(listener: QuorumLogListener): void {
    this.listener = listener;
  }
  commit(batch: CommittedBatch): void {
    this.listener.onCommit(batch);
  }
  /** Commits the oldest pending append (feed first, then the promise). */
  commitNext(): void {
    const a = this.appended.shift()!;
    this.listener.onCommit({ records: a.records, lastOffset: a.lastOffset, epoch: a.epoch });
    a.resolve(a.lastOffset);
  }
  /** A leadership change; pending appends of an epoch this node no longer leads are failed. */
  lead(id: number, epoch: number): void {
    this.current = { id, epoch };
    for (const a of this.appended.splice(0)) a.reject(new NotLeaderError(epoch, id));
    this.listener.onLeaderChange(this.current);
  }
  /** The LeaderChange control batch of the current epoch, committed. */
  commitLeaderChange(): void {
    this.listener.onCommit({ records: [], lastOffset: this.next, epoch: this.current.epoch });
    this.next++;
  }
}

const tick = () => new Promise((r) => setImmediate(r));

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
    const epoch = t.h.log(t.idOf(active)).leader().epoch;
    const leaderChange = t.h.log(t.idOf(active)).delivered.find((b) => b.epoch === epoch && b.records.length === 0)!;
    expect(leaderChange).toBeDefined();
    expect(active.lastCommittedOffset).toBeGreaterThan(leaderChange.lastOffset);
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

  test('a crashed leader: another controller claims, the write in flight fails (yet may be committed by the next leader, then everywhere); a controller started afresh on the restarted node rebuilds the same image', async () => {
    const t = quorumCluster(9);
    const old = await t.active();
    await t.brokersUp(old, 100, 101, 102);
    const [r] = await t.h.settle(old.createTopics([topic('kept')], false), 2000);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    const oldId = t.idOf(old);
    const inflight = old.createTopics([topic('crashed')], false);
    inflight.catch(() => {});
    await t.h.step(1);
    t.h.sim.crash(oldId);
    await expect(t.h.settle(inflight, 100)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    const cfg = t.h.sim.config;
    await t.h.until(() => t.standbys(old).some((c) => c.isActiveController), cfg.fetchTimeoutMs + 3 * cfg.electionTimeoutMs, 'a new active controller');
    const next = t.actives()[0];
    expect(next.image.topic('kept')).toBeDefined();
    const [r2] = await t.h.settle(next.createTopics([topic('later')], false), 2000);
    expect(r2.errorCode).toBe(ErrorCode.NONE);
    await old.close();
    t.h.sim.restart(oldId);
    const freshLog = new SimQuorumLog(t.h.sim, oldId);
    t.h.logs.push(freshLog);
    const fresh = new Controller({
      nodeId: oldId,
      clusterId: 'quorum-test',
      quorum: freshLog,
      logger: new Logger('test', 'error'),
      defaultNumPartitions: () => 1,
      defaultReplicationFactor: () => 3,
      validateTopicConfig: () => {},
      sessions: { sessionTimeoutMs: SESSION_TIMEOUT_MS },
      now: () => t.h.sim.now,
    });
    await t.h.until(() => fresh.lastCommittedOffset === next.lastCommittedOffset && fresh.image.topic('later') !== undefined, 10_000, 'the restarted controller catching up');
    expect(fresh.isActiveController).toBe(false);
    expect(fresh.image.topic('kept')?.topicId).toBe(next.image.topic('kept')!.topicId);
    // The write answered NOT_CONTROLLER had reached a follower before the crash, so the next leader
    // committed it (Kafka's same ambiguity: a retried CreateTopics then gets TOPIC_ALREADY_EXISTS).
    // What matters is that every controller agrees.
    expect(next.image.topic('crashed')).toBeDefined();
    expect(fresh.image.topic('crashed')?.topicId).toBe(next.image.topic('crashed')!.topicId);
    for (const c of t.standbys(old)) expect(c.image.topic('crashed')?.topicId).toBe(next.image.topic('crashed')!.topicId);
    expect(fresh.metadataLog.readAll()).toEqual(next.metadataLog.readAll());
    for (const c of [...t.standbys(old), fresh]) await c.close();
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

describe('Controller on a hand-driven QuorumLog', () => {
  function manual() {
    const q = new ManualQuorumLog();
    const c = new Controller({
      nodeId: 1,
      clusterId: 'manual',
      quorum: q,
      logger: new Logger('test', 'error'),
      defaultNumPartitions: () => 1,
      defaultReplicationFactor: () => 1,
      validateTopicConfig: () => {},
      sessions: { sessionTimeoutMs: 1000 },
      now: () => 0,
    });
    return { q, c };
  }

  test('claims only once a committed batch of its own epoch is applied; the bootstrap batch comes first', async () => {
    const { q, c } = manual();
    q.lead(1, 1);
    await tick();
    // Leader, but the epoch's LeaderChange is not applied yet: nothing written, nothing accepted.
    expect(c.isActiveController).toBe(false);
    expect(q.appended).toHaveLength(0);
    await expect(c.createTopics([topic('too-early', 1, 1)], false)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    q.commitLeaderChange();
    // Claimed, but not ready before the bootstrap batch is committed.
    expect(c.isActiveController).toBe(false);
    const early = c.createTopics([topic('early', 1, 1)], false);
    early.catch(() => {});
    await tick();
    expect(q.appended).toHaveLength(1);
    expect(q.appended[0].records.every((r) => r.type === 'FeatureLevelRecord')).toBe(true);
    q.commitNext();
    await tick();
    expect(c.isActiveController).toBe(true);
    // A request that came in meanwhile ran after the bootstrap batch (here: no broker to place it on).
    expect(await early).toMatchObject([{ name: 'early', errorCode: ErrorCode.INVALID_REPLICATION_FACTOR }]);
    expect(c.image.featureLevel(FeatureName.METADATA_VERSION)).toBeGreaterThan(0);
    // Before any claim, a request is refused at once.
    const other = manual();
    await expect(other.c.createTopics([topic('x', 1, 1)], false)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    await other.c.close();
    await c.close();
  });

  test('a follower applies what is committed; a leader of a non-empty log writes no bootstrap', async () => {
    const { q, c } = manual();
    q.lead(2, 1);
    q.commitLeaderChange();
    q.commit({ records: [{ type: 'FeatureLevelRecord', data: { name: FeatureName.METADATA_VERSION, featureLevel: 20 } }], lastOffset: 1n, epoch: 1 });
    q.next = 2n;
    await expect(c.createTopics([topic('x', 1, 1)], false)).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    expect(c.lastCommittedOffset).toBe(1n);
    q.lead(1, 2);
    q.commitLeaderChange();
    expect(c.isActiveController).toBe(true);
    expect(q.appended).toHaveLength(0);
    await c.close();
  });

  test('losing leadership mid-write fails the write with NOT_CONTROLLER and applies nothing', async () => {
    const { q, c } = manual();
    q.lead(1, 1);
    q.commitLeaderChange();
    await tick();
    q.commitNext();
    await tick();
    const offsetBefore = c.lastCommittedOffset;
    const seen: bigint[] = [];
    c.subscribe((_r, o) => seen.push(o), false);
    const w = c.registerBroker({ brokerId: 5, incarnationId: randomUuid(), endpoints: [], rack: null, logDirs: [] });
    w.catch(() => {});
    await tick();
    expect(q.appended).toHaveLength(1);
    q.lead(2, 2);
    await expect(w).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    expect(c.isActiveController).toBe(false);
    expect(c.image.broker(5)).toBeUndefined();
    expect(c.lastCommittedOffset).toBe(offsetBefore);
    expect(seen).toEqual([]);
    await c.close();
  });
});

describe('CommittedMetadataLog', () => {
  test('keeps the raft offsets, skips control batches, and ends after the last batch with records', () => {
    const log = new CommittedMetadataLog();
    log.appendCommitted([], 0n);
    expect(log.logEndOffset).toBe(0n);
    const fl: MetadataRecord = { type: 'FeatureLevelRecord', data: { name: FeatureName.METADATA_VERSION, featureLevel: 20 } };
    log.appendCommitted([fl, fl], 2n);
    log.appendCommitted([], 3n);
    expect(log.logEndOffset).toBe(3n);
    expect(log.readAll()).toEqual([{ records: [fl, fl], lastOffset: 2n }]);
    expect(log.read(0n, 1 << 20).records).toHaveLength(1);
    expect(log.read(3n, 1 << 20).records).toHaveLength(0);
    expect(() => log.appendCommitted([fl], 3n)).toThrow();
    expect(() => log.append()).toThrow();
  });
});
