/**
 * The coordinator's state machine against a fake __consumer_offsets log (real short timers, an
 * injectable clock): rebalances, session/rebalance/sync timeouts, the initial delay, static
 * membership, group.max.size, persistence and loading, expiry, failures and unloading.
 */
import { ErrorCode } from '../../protocol/errors';
import { RecordBatch, splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { Writer } from '../../protocol/primitives/writer';
import { writeConsumerProtocolSubscription } from '../../protocol/generated/message-data/consumer-protocol-subscription';
import type { MetadataCache, MetadataDelta, PartitionState } from '../../metadata/metadata-cache';
import type { Partition } from '../../replication/partition';
import { Logger } from '../../common/logger';
import { CompressionType } from '../../protocol/records/record-batch';
import { GroupCoordinator } from './group-coordinator';
import type { GroupCoordinatorConfig } from './group-coordinator-config';
import { parseCoordinatorRecord, type ParsedCoordinatorRecord } from './coordinator-records';
import type { JoinGroupParams } from './group-metadata-manager';
import type { JoinResult } from './classic-group';

/** An in-memory __consumer_offsets-0 that assigns offsets and serves reads like UnifiedLog. */
class FakeOffsetsLog {
  batches: Buffer[] = [];
  next = 0n;
  /** Error code for the next append(s), then back to success. */
  failNext: { code: number; times: number } | null = null;

  append(records: Buffer): { errorCode: number } {
    if (this.failNext && this.failNext.times > 0) {
      this.failNext.times--;
      return { errorCode: this.failNext.code };
    }
    const b = Buffer.from(records);
    const batch = new RecordBatch(b);
    batch.baseOffset = this.next;
    this.next = batch.nextOffset;
    this.batches.push(b);
    return { errorCode: ErrorCode.NONE };
  }

  get logStartOffset(): bigint {
    return 0n;
  }
  get logEndOffset(): bigint {
    return this.next;
  }

  read(offset: bigint) {
    const records = this.batches.filter((b) => new RecordBatch(b).lastOffset >= offset);
    return { records, sizeInBytes: records.reduce((n, b) => n + b.length, 0), firstEntryIncomplete: false, fetchOffsetMetadata: undefined };
  }

  parsed(): ParsedCoordinatorRecord[] {
    return this.batches.flatMap((b) => splitBatches(b).flatMap((batch) => readRecords(batch).map((r) => parseCoordinatorRecord(r.key, r.value))));
  }
}

const BASE_CONFIG: GroupCoordinatorConfig = {
  offsetsTopicNumPartitions: 1,
  minSessionTimeoutMs: 10,
  maxSessionTimeoutMs: 60_000,
  maxSize: 100,
  initialRebalanceDelayMs: 0,
  newMemberJoinTimeoutMs: 300_000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 60_000,
  offsetsRetentionCheckIntervalMs: 3_600_000,
  offsetCommitTimeoutMs: 5000,
  compression: CompressionType.NONE,
  loadBufferSize: 1 << 20,
};

const partitionState = (leader: number, leaderEpoch: number): PartitionState => ({
  topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
  topic: '__consumer_offsets',
  partition: 0,
  replicas: [1],
  isr: [1],
  leader,
  leaderEpoch,
  partitionEpoch: leaderEpoch,
  leaderRecoveryState: 0,
  addingReplicas: [],
  removingReplicas: [],
});

const delta = (changedPartitions: PartitionState[], removedTopics: MetadataDelta['removedTopics'] = []): MetadataDelta => ({
  changedPartitions,
  removedTopics,
  changedTopicConfigs: new Set(),
  changedBrokers: new Set(),
});

interface Harness {
  c: GroupCoordinator;
  log: FakeOffsetsLog;
  clock: { now: number };
}

const running: GroupCoordinator[] = [];

async function harness(cfg: Partial<GroupCoordinatorConfig> = {}, log = new FakeOffsetsLog(), clock = { now: 1_000_000 }): Promise<Harness> {
  const partitions = new Map([[0, partitionState(1, 0)]]);
  const metadata = { topic: (n: string) => (n === '__consumer_offsets' ? { partitions } : undefined) } as unknown as MetadataCache;
  const c = new GroupCoordinator({
    nodeId: 1,
    config: { ...BASE_CONFIG, ...cfg },
    logger: new Logger('test', 'error'),
    replicaManager: {
      getPartition: () => ({ log }) as unknown as Partition,
      appendRecords: async ({ entries }) =>
        entries.map((e) => ({
          topic: e.topic,
          partition: e.partition,
          errorCode: log.append(e.records).errorCode,
          errorMessage: null,
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: 0n,
          recordErrors: [],
        })),
    },
    metadata,
    createOffsetsTopic: async () => ErrorCode.NONE,
    now: () => clock.now,
  });
  running.push(c);
  c.startup();
  c.onMetadataDelta(delta([partitionState(1, 0)]));
  await waitFor(() => c.groupStatus('any') === ErrorCode.NONE);
  return { c, log, clock };
}

afterEach(async () => {
  for (const c of running.splice(0)) await c.shutdown();
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function subscription(...topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(w, 0, { topics, userData: null });
  return w.toBuffer();
}

function params(groupId: string, over: Partial<JoinGroupParams> = {}): JoinGroupParams {
  return {
    groupId,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription('t') }],
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    supportSkippingAssignment: false,
    reason: null,
    ...over,
  };
}

/** A new dynamic member: MEMBER_ID_REQUIRED, then the real join (whose promise may stay parked). */
async function joinNew(c: GroupCoordinator, groupId: string, over: Partial<JoinGroupParams> = {}): Promise<{ memberId: string; joined: Promise<JoinResult> }> {
  const first = await c.joinGroup(params(groupId, over));
  expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  return { memberId: first.memberId, joined: c.joinGroup(params(groupId, { ...over, memberId: first.memberId })) };
}

async function syncAll(c: GroupCoordinator, groupId: string, generationId: number, leader: string, followers: string[]) {
  const pending = followers.map((m) => c.syncGroup({ groupId, generationId, memberId: m, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }));
  const assignments = [leader, ...followers].map((m) => ({ memberId: m, assignment: Buffer.from(`a:${m}`) }));
  const l = await c.syncGroup({ groupId, generationId, memberId: leader, groupInstanceId: null, protocolType: null, protocolName: null, assignments });
  return [l, ...(await Promise.all(pending))];
}

const state = async (c: GroupCoordinator, g: string) => (await c.describeGroup(g)).groupState;

describe('GroupCoordinator', () => {
  test('two members rebalance into one generation; the assignment is persisted before SyncGroup answers', async () => {
    const { c, log } = await harness();
    const a = await joinNew(c, 'g');
    const ja = await a.joined;
    expect(ja).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1, leader: a.memberId });
    const [sa] = await syncAll(c, 'g', 1, a.memberId, []);
    expect(sa.assignment.toString()).toBe(`a:${a.memberId}`);

    const b = await joinNew(c, 'g');
    // A learns about the rebalance from its heartbeat and rejoins; B was parked meanwhile.
    expect(await c.heartbeat('g', a.memberId, null, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const ja2 = await c.joinGroup(params('g', { memberId: a.memberId }));
    const jb = await b.joined;
    expect([ja2.generationId, jb.generationId]).toEqual([2, 2]);
    expect(ja2.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(jb.members).toEqual([]);
    expect(await c.heartbeat('g', b.memberId, null, 2)).toBe(ErrorCode.NONE); // CompletingRebalance: heartbeats are fine
    expect((await c.commitOffsets({ groupId: 'g', memberId: b.memberId, groupInstanceId: null, generationId: 2, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] }))[0].partitions[0].errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const [, sb] = await syncAll(c, 'g', 2, a.memberId, [b.memberId]);
    expect(sb.assignment.toString()).toBe(`a:${b.memberId}`);
    expect(await state(c, 'g')).toBe('Stable');
    const groups = log.parsed().filter((r) => r.type === 'group');
    const last = groups[groups.length - 1];
    expect(last.type === 'group' && last.value!.generation).toBe(2);
    expect(last.type === 'group' && last.value!.members.map((m) => Buffer.from(m.assignment).toString()).sort()).toEqual([`a:${a.memberId}`, `a:${b.memberId}`].sort());
  });

  test('a member that stops heartbeating is removed after its session timeout and the group rebalances', async () => {
    const { c } = await harness();
    const a = await joinNew(c, 'g', { sessionTimeoutMs: 150 });
    await a.joined;
    const b = await joinNew(c, 'g', { sessionTimeoutMs: 150 });
    await c.joinGroup(params('g', { memberId: a.memberId, sessionTimeoutMs: 150 }));
    await b.joined;
    await syncAll(c, 'g', 2, a.memberId, [b.memberId]);
    // Only A keeps heartbeating.
    const t0 = Date.now();
    let hb: number = ErrorCode.NONE;
    while (hb === ErrorCode.NONE && Date.now() - t0 < 3000) {
      await new Promise((r) => setTimeout(r, 40));
      hb = await c.heartbeat('g', a.memberId, null, 2);
    }
    expect(hb).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    const j = await c.joinGroup(params('g', { memberId: a.memberId, sessionTimeoutMs: 150 }));
    expect(j.generationId).toBe(3);
    expect(j.members.map((m) => m.memberId)).toEqual([a.memberId]);
    expect(await c.heartbeat('g', b.memberId, null, 2)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('group.initial.rebalance.delay.ms: members joining within the delay land in the first generation', async () => {
    const { c } = await harness({ initialRebalanceDelayMs: 200 });
    const t0 = Date.now();
    const a = await joinNew(c, 'g');
    await new Promise((r) => setTimeout(r, 60));
    const b = await joinNew(c, 'g');
    const [ja, jb] = await Promise.all([a.joined, b.joined]);
    expect([ja.generationId, jb.generationId]).toEqual([1, 1]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  test('a member that does not rejoin within the rebalance timeout is dropped', async () => {
    const { c } = await harness();
    const a = await joinNew(c, 'g', { rebalanceTimeoutMs: 200 });
    await a.joined;
    const b = await joinNew(c, 'g', { rebalanceTimeoutMs: 200 });
    await c.joinGroup(params('g', { memberId: a.memberId, rebalanceTimeoutMs: 200 }));
    await b.joined;
    await syncAll(c, 'g', 2, a.memberId, [b.memberId]);
    // A third member joins; only A rejoins.
    const x = await joinNew(c, 'g', { rebalanceTimeoutMs: 200 });
    const t0 = Date.now();
    const ja = await c.joinGroup(params('g', { memberId: a.memberId, rebalanceTimeoutMs: 200 }));
    const jx = await x.joined;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect([ja.generationId, jx.generationId]).toEqual([3, 3]);
    expect(ja.members.map((m) => m.memberId).sort()).toEqual([a.memberId, x.memberId].sort());
    expect(await c.heartbeat('g', b.memberId, null, 3)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('a member id handed out with MEMBER_ID_REQUIRED expires if it never comes back', async () => {
    const { c } = await harness();
    const first = await c.joinGroup(params('g', { sessionTimeoutMs: 80 }));
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    await new Promise((r) => setTimeout(r, 200));
    const late = await c.joinGroup(params('g', { memberId: first.memberId, sessionTimeoutMs: 80 }));
    expect(late.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('JoinGroup v0-3 assign the member id in the first response', async () => {
    const { c } = await harness();
    const j = await c.joinGroup(params('g', { requireKnownMemberId: false }));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1 });
    expect(j.memberId).toMatch(/^client-/);
    expect(j.leader).toBe(j.memberId);
  });

  test('static membership: a restarted instance takes over its member id without a rebalance; the old id is fenced', async () => {
    const { c, log } = await harness();
    const s = { groupInstanceId: 'instance-1', requireKnownMemberId: true };
    const a = await c.joinGroup(params('g', s));
    expect(a.errorCode).toBe(ErrorCode.NONE); // static members never get MEMBER_ID_REQUIRED
    expect(a.memberId).toMatch(/^instance-1-/);
    const b = await joinNew(c, 'g');
    await c.joinGroup(params('g', { ...s, memberId: a.memberId }));
    await b.joined;
    await syncAll(c, 'g', 2, a.memberId, [b.memberId]);
    const before = log.parsed().length;
    // The instance restarts: unknown member id, same instance id.
    const again = await c.joinGroup(params('g', s));
    expect(again.errorCode).toBe(ErrorCode.NONE);
    expect(again.generationId).toBe(2);
    expect(again.memberId).not.toBe(a.memberId);
    // It was the leader: it is told the old leader id (pre-v9), so it does not reassign.
    expect(again.leader).toBe(a.memberId);
    expect(await state(c, 'g')).toBe('Stable');
    expect(log.parsed().length).toBe(before + 1); // the new member id was persisted
    expect(await c.heartbeat('g', a.memberId, 'instance-1', 2)).toBe(ErrorCode.FENCED_INSTANCE_ID);
    expect(await c.heartbeat('g', again.memberId, 'instance-1', 2)).toBe(ErrorCode.NONE);
    expect(await c.heartbeat('g', b.memberId, null, 2)).toBe(ErrorCode.NONE);
    const sync = await c.syncGroup({ groupId: 'g', generationId: 2, memberId: again.memberId, groupInstanceId: 'instance-1', protocolType: null, protocolName: null, assignments: [] });
    expect(sync.assignment.toString()).toBe(`a:${a.memberId}`); // keeps its assignment
    // v9+: the rejoining static leader is told it leads and must skip the assignment.
    const v9 = await c.joinGroup(params('g', { ...s, supportSkippingAssignment: true }));
    expect(v9).toMatchObject({ errorCode: ErrorCode.NONE, skipAssignment: true, generationId: 2 });
    expect(v9.leader).toBe(v9.memberId);
    expect(v9.members).toHaveLength(2);
    // LeaveGroup by instance id (administrative removal).
    const left = await c.leaveGroup('g', [{ memberId: '', groupInstanceId: 'instance-1', reason: 'admin' }]);
    expect(left.members[0].errorCode).toBe(ErrorCode.NONE);
    expect(await c.heartbeat('g', b.memberId, null, 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  test('group.max.size: a new member beyond the limit gets GROUP_MAX_SIZE_REACHED', async () => {
    const { c } = await harness({ maxSize: 1 });
    const a = await c.joinGroup(params('g', { requireKnownMemberId: false }));
    expect(a.errorCode).toBe(ErrorCode.NONE);
    await syncAll(c, 'g', 1, a.memberId, []);
    const b = await c.joinGroup(params('g', { requireKnownMemberId: false }));
    expect([b.errorCode, b.memberId]).toEqual([ErrorCode.GROUP_MAX_SIZE_REACHED, '']);
    expect(await state(c, 'g')).toBe('Stable');
  });

  test('followers that never send SyncGroup are removed after the rebalance timeout', async () => {
    const { c } = await harness();
    const a = await joinNew(c, 'g', { rebalanceTimeoutMs: 150 });
    await a.joined;
    const b = await joinNew(c, 'g', { rebalanceTimeoutMs: 150 });
    await c.joinGroup(params('g', { memberId: a.memberId, rebalanceTimeoutMs: 150 }));
    await b.joined;
    // Only the leader syncs.
    await c.syncGroup({ groupId: 'g', generationId: 2, memberId: a.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
    await waitFor(() => c.groupManager.group('g')!.state === 'PreparingRebalance');
    expect(await c.heartbeat('g', b.memberId, null, 2)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('a failed write of the assignment sends every member back to rebalance', async () => {
    const { c, log } = await harness();
    const a = await joinNew(c, 'g');
    await a.joined;
    log.failNext = { code: ErrorCode.NOT_LEADER_OR_FOLLOWER, times: 1 };
    const [s] = await syncAll(c, 'g', 1, a.memberId, []);
    expect(s.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await state(c, 'g')).not.toBe('Stable');
  });

  test('offset commits are written before they are visible; a failed write changes nothing', async () => {
    const { c, log } = await harness();
    const commit = (offset: bigint) =>
      c.commitOffsets({ groupId: 's', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 3, commitTimestamp: -1n, committedMetadata: 'm' }] }] });
    expect((await commit(5n))[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
    log.failNext = { code: ErrorCode.NOT_ENOUGH_REPLICAS, times: 1 };
    expect((await commit(9n))[0].partitions[0].errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    log.failNext = { code: ErrorCode.MESSAGE_TOO_LARGE, times: 1 };
    expect((await commit(9n))[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_COMMIT_OFFSET_SIZE);
    const f = await c.fetchOffsets('s', [{ name: 't', partitionIndexes: [0] }], false);
    expect(f.topics[0].partitions[0]).toMatchObject({ committedOffset: 5n, committedLeaderEpoch: 3, metadata: 'm' });
    // A commit that fails for a group that did not exist leaves no group behind.
    log.failNext = { code: ErrorCode.NOT_ENOUGH_REPLICAS, times: 1 };
    await c.commitOffsets({ groupId: 'fresh', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] });
    expect(c.groupManager.group('fresh')).toBeUndefined();
    // A generation for a group that does not exist: ILLEGAL_GENERATION, v9 GROUP_ID_NOT_FOUND.
    const old = (apiVersion: number) => c.commitOffsets({ groupId: 'nope', memberId: 'm', groupInstanceId: null, generationId: 3, retentionTimeMs: -1n, apiVersion, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] });
    expect((await old(8))[0].partitions[0].errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect((await old(9))[0].partitions[0].errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  test('a new coordinator on the same log loads groups and offsets back; silent members then time out', async () => {
    const first = await harness();
    const a = await joinNew(first.c, 'g', { sessionTimeoutMs: 150 });
    await a.joined;
    await syncAll(first.c, 'g', 1, a.memberId, []);
    await first.c.commitOffsets({ groupId: 'g', memberId: a.memberId, groupInstanceId: null, generationId: 1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }, { partitionIndex: 1, committedOffset: 8n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] });
    await first.c.commitOffsets({ groupId: 'simple', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] });
    await first.c.deleteOffsets('simple', [{ name: 'x', partitions: [{ partitionIndex: 0 }] }]);
    await first.c.shutdown();

    const second = await harness({}, first.log);
    const d = await second.c.describeGroup('g');
    expect(d).toMatchObject({ groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect(d.members.map((m) => m.memberId)).toEqual([a.memberId]);
    expect(d.members[0].memberAssignment.toString()).toBe(`a:${a.memberId}`);
    const f = await second.c.fetchOffsets('g', null, false);
    expect(f.topics).toEqual([{ name: 't', partitions: [expect.objectContaining({ partitionIndex: 0, committedOffset: 7n }), expect.objectContaining({ partitionIndex: 1, committedOffset: 8n })] }]);
    expect(await state(second.c, 'simple')).toBe('Empty');
    expect(await second.c.heartbeat('g', a.memberId, null, 1)).toBe(ErrorCode.NONE);
    // Nobody heartbeats any more: the member is removed, the group becomes Empty (and that is persisted).
    await waitFor(() => second.c.groupManager.group('g')?.state === 'Empty');
    await second.c.shutdown();
    const third = await harness({}, first.log);
    expect(await third.c.describeGroup('g')).toMatchObject({ groupState: 'Empty', members: [] });
    expect((await third.c.fetchOffsets('g', [{ name: 't', partitionIndexes: [1] }], false)).topics[0].partitions[0].committedOffset).toBe(8n);
  });

  test('DeleteGroups writes tombstones: the group and its offsets stay gone after a reload', async () => {
    const first = await harness();
    await first.c.commitOffsets({ groupId: 'd', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] });
    expect(await first.c.deleteGroup('d')).toBe(ErrorCode.NONE);
    expect(await first.c.deleteGroup('d')).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    await first.c.shutdown();
    const second = await harness({}, first.log);
    expect(second.c.groupManager.group('d')).toBeUndefined();
    expect((await second.c.fetchOffsets('d', null, false)).topics).toEqual([]);
  });

  test('offsets.retention.minutes: expiry per Kafka condition, then the empty group goes', async () => {
    const { c, clock, log } = await harness({ offsetsRetentionMs: 60_000 });
    const commit = (groupId: string, over: object = {}) =>
      c.commitOffsets({ groupId, memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }], ...over });
    await commit('simple');
    await commit('explicit', { retentionTimeMs: 10_000n, apiVersion: 2 });
    // A consumer group: Stable, subscribed to 't', also has offsets for 'old' it no longer reads.
    const a = await c.joinGroup(params('cg', { requireKnownMemberId: false }));
    await syncAll(c, 'cg', 1, a.memberId, []);
    await c.commitOffsets({ groupId: 'cg', memberId: a.memberId, groupInstanceId: null, generationId: 1, retentionTimeMs: -1n, apiVersion: 8, topics: ['t', 'old'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 2n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] })) });

    clock.now += 10_000;
    expect(await c.expireOffsets()).toBe(1); // 'explicit' (its own expire timestamp)
    expect(c.groupManager.group('explicit')).toBeUndefined();
    clock.now += 50_000;
    expect(await c.expireOffsets()).toBe(2); // 'simple' from its commit time; 'cg' only for 'old'
    expect(c.groupManager.group('simple')).toBeUndefined();
    expect((await c.fetchOffsets('cg', null, false)).topics.map((t) => t.name)).toEqual(['t']);
    // The consumer group empties: its offsets count from when it became Empty.
    await c.leaveGroup('cg', [{ memberId: a.memberId, groupInstanceId: null, reason: null }]);
    await waitFor(() => c.groupManager.group('cg')?.state === 'Empty');
    clock.now += 59_000;
    expect(await c.expireOffsets()).toBe(0);
    clock.now += 1_000;
    expect(await c.expireOffsets()).toBe(1);
    expect(c.groupManager.group('cg')).toBeUndefined();
    const tombstones = log.parsed().filter((r) => (r.type === 'offset' || r.type === 'group') && r.value === null);
    expect(tombstones.filter((r) => r.type === 'group').map((r) => r.type === 'group' && r.groupId).sort()).toEqual(['cg', 'explicit', 'simple']);
  });

  test('deleted topics lose their committed offsets', async () => {
    const { c } = await harness();
    await c.commitOffsets({ groupId: 's', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 8, topics: ['keep', 'drop'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] })) });
    c.onMetadataDelta(delta([], [{ name: 'drop', topicId: 'x', partitions: [0] }]));
    await waitFor(() => c.offsetManager.get('s', 'drop', 0) === undefined);
    expect(c.offsetManager.get('s', 'keep', 0)?.committedOffset).toBe(1n);
  });

  test('losing leadership answers parked requests NOT_COORDINATOR; a new leader epoch reloads', async () => {
    const { c } = await harness();
    const a = await joinNew(c, 'g', { rebalanceTimeoutMs: 60_000 });
    await a.joined;
    await syncAll(c, 'g', 1, a.memberId, []);
    const b = await joinNew(c, 'g');
    c.onMetadataDelta(delta([partitionState(2, 1)]));
    expect((await b.joined).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await c.heartbeat('g', a.memberId, null, 1)).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await c.fetchOffsets('g', null, false)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(c.timer.size).toBe(0);
    c.onMetadataDelta(delta([partitionState(1, 2)]));
    await waitFor(() => c.groupStatus('g') === ErrorCode.NONE);
    expect(await state(c, 'g')).toBe('Stable');
  });

  test('shutdown answers parked joins, clears every timer, and refuses new work', async () => {
    const { c } = await harness();
    const a = await joinNew(c, 'g');
    await a.joined;
    await syncAll(c, 'g', 1, a.memberId, []);
    const b = await joinNew(c, 'g');
    expect(c.timer.size).toBeGreaterThan(0);
    await c.shutdown();
    expect((await b.joined).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(c.timer.size).toBe(0);
    expect(await c.heartbeat('g', a.memberId, null, 1)).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect((await c.findGroupCoordinator('g')).errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });
});
