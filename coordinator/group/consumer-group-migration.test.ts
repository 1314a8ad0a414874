/**
 * Classic members in consumer groups and the online migration between the protocols
 * (group.consumer.migration.policy), through the GroupCoordinator against an in-memory
 * __consumer_offsets-0: a classic member joining a consumer group with members (server-side
 * assignment, generation = member epoch, REBALANCE_IN_PROGRESS to rejoin, generation-checked
 * commits), a consumer-protocol member upgrading a classic group, the last consumer-protocol member
 * leaving and downgrading it, a static classic member replacing the last consumer-protocol member,
 * LeaveGroup and session timeouts of classic members, the policy switched off, and reloads that
 * rebuild the converted groups from the log.
 */
import { ErrorCode } from '../../protocol/errors';
import { Writer } from '../../protocol/primitives/writer';
import { writeConsumerProtocolSubscription } from '../../protocol/generated/message-data/consumer-protocol-subscription';
import type { JoinGroupParams, SyncGroupParams } from './group-metadata-manager';
import type { JoinResult } from './classic-group';
import { deserializeAssignment, serializeAssignment } from './consumer/consumer-protocol';
import { FOO, hb, owned, ownedList, start, stopAll, waitFor } from './testing/consumer-group-harness';
import type { GroupCoordinator } from './group-coordinator';

afterEach(stopAll);

/** A ConsumerProtocolSubscription of `version` (KafkaJS writes v0, the Java client v3). */
function subscription(topics: string[], ownedPartitions: { topic: string; partitions: number[] }[] = [], version = 1): Buffer {
  const w = new Writer(64);
  w.int16(version);
  writeConsumerProtocolSubscription(w, version, { topics, userData: null, ownedPartitions, generationId: -1, rackId: null });
  return w.toBuffer();
}

function join(groupId: string, memberId: string, metadata: Buffer, over: Partial<JoinGroupParams> = {}): JoinGroupParams {
  return {
    groupId,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata }],
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    clientId: 'classic-client',
    clientHost: '/127.0.0.1',
    requireKnownMemberId: true,
    supportSkippingAssignment: false,
    reason: null,
    ...over,
  };
}

function sync(groupId: string, j: JoinResult, assignments: SyncGroupParams['assignments'] = [], instanceId: string | null = null): SyncGroupParams {
  return { groupId, generationId: j.generationId, memberId: j.memberId, groupInstanceId: instanceId, protocolType: 'consumer', protocolName: j.protocolName, assignments };
}

/** A classic member through MEMBER_ID_REQUIRED and its real JoinGroup. */
async function classicJoin(c: GroupCoordinator, groupId: string, metadata: Buffer, over: Partial<JoinGroupParams> = {}): Promise<JoinResult> {
  const first = await c.joinGroup(join(groupId, '', metadata, over));
  if (first.errorCode !== ErrorCode.MEMBER_ID_REQUIRED) return first;
  return c.joinGroup(join(groupId, first.memberId, metadata, over));
}

const partitionsOf = (bytes: Buffer): string[] => deserializeAssignment(bytes).flatMap((t) => t.partitions.map((p) => `${t.topic}:${p}`)).sort();

describe('classic members in a consumer group', () => {
  test('a classic member joins, is assigned by the server after the consumer member revokes, and commits with its generation', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 4);
    const m1 = await c.consumerGroupHeartbeat(hb('g', 'm1', 0));
    expect(owned(m1)).toHaveLength(4);

    // The classic member joins: a new group epoch, nobody is the leader, its generation is its epoch.
    const j = await classicJoin(c, 'g', subscription(['foo']));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2, protocolType: 'consumer', protocolName: 'range', leader: '', members: [] });
    // Its partitions are still owned by m1: nothing yet.
    const s1 = await c.syncGroup(sync('g', j));
    expect(s1.errorCode).toBe(ErrorCode.NONE);
    expect(partitionsOf(s1.assignment)).toEqual([]);
    // m1 revokes two partitions (the uniform assignor splits 2/2), then the classic member is told to rejoin.
    const m1b = await c.consumerGroupHeartbeat(hb('g', 'm1', 1, { topicPartitions: ownedList(m1) }));
    expect(owned(m1b)).toHaveLength(2);
    const kept = ownedList(m1b);
    await c.consumerGroupHeartbeat(hb('g', 'm1', 1, { topicPartitions: kept }));
    expect(await c.heartbeat('g', j.memberId, null, j.generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const j2 = await c.joinGroup(join('g', j.memberId, subscription(['foo'])));
    expect(j2.generationId).toBe(2);
    const s2 = await c.syncGroup(sync('g', j2));
    expect(partitionsOf(s2.assignment)).toHaveLength(2);
    expect(await c.heartbeat('g', j.memberId, null, j2.generationId)).toBe(ErrorCode.NONE);
    expect(await c.heartbeat('g', j.memberId, null, j2.generationId - 1)).toBe(ErrorCode.ILLEGAL_GENERATION);

    const d = await c.consumerGroupDescribe('g');
    expect(d.groupState).toBe('Stable');
    expect(d.members.map((m) => [m.memberId === 'm1' ? 'consumer' : 'classic', m.memberType]).sort()).toEqual([['classic', 0], ['consumer', 1]]);

    // Classic members commit with any OffsetCommit version, checked against the generation.
    const commit = (generationId: number, apiVersion: number) =>
      c.commitOffsets({
        groupId: 'g', memberId: j.memberId, groupInstanceId: null, generationId, retentionTimeMs: -1n, apiVersion,
        topics: [{ name: 'foo', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
      });
    expect((await commit(2, 2))[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
    expect((await commit(1, 8))[0].partitions[0].errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);

    // A second protocol the classic member does not share is refused; LeaveGroup of a consumer-protocol member is UNKNOWN_MEMBER_ID.
    const other = await c.joinGroup(join('g', '', subscription(['foo']), { protocols: [{ name: 'roundrobin', metadata: subscription(['foo']) }], requireKnownMemberId: false }));
    expect(other.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const left = await c.leaveGroup('g', [{ memberId: 'm1', groupInstanceId: null, reason: null }, { memberId: j.memberId, groupInstanceId: null, reason: 'done' }]);
    expect(left.members.map((m) => m.errorCode)).toEqual([ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE]);
    const after = await c.consumerGroupDescribe('g');
    expect(after.members.map((m) => m.memberId)).toEqual(['m1']);
    expect(after.groupEpoch).toBe(3);
  });

  test('a classic member that stops heartbeating is fenced after its own session timeout', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 2);
    await c.consumerGroupHeartbeat(hb('g', 'm1', 0));
    const j = await classicJoin(c, 'g', subscription(['foo']), { sessionTimeoutMs: 50 });
    expect(j.errorCode).toBe(ErrorCode.NONE);
    await c.syncGroup(sync('g', j));
    await waitFor(async () => (await c.consumerGroupDescribe('g')).members.length === 1);
    expect(await c.heartbeat('g', j.memberId, null, j.generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });
});

describe('online migration (group.consumer.migration.policy)', () => {
  /** A Stable classic group of one member owning foo-0..3 at generation 1. */
  async function classicGroup(c: GroupCoordinator): Promise<JoinResult> {
    const j = await classicJoin(c, 'g', subscription(['foo'], [], 0));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1 });
    expect(j.leader).toBe(j.memberId);
    const assignment = serializeAssignment(new Map([[FOO, new Set([0, 1, 2, 3])]]), { topic: () => undefined, topicById: () => ({ name: 'foo' }) }, 0);
    const s = await c.syncGroup(sync('g', j, [{ memberId: j.memberId, assignment }]));
    expect(s.errorCode).toBe(ErrorCode.NONE);
    return j;
  }

  test('upgrade: a consumer-protocol member converts a classic group; the classic member keeps its partitions until it rejoins', async () => {
    const { c, metadata, log } = await start();
    metadata.add('foo', FOO, 4);
    const classic = await classicGroup(c);

    const m2 = await c.consumerGroupHeartbeat(hb('g', 'm2', 0));
    expect(m2.errorCode).toBe(ErrorCode.NONE);
    expect(m2.memberEpoch).toBe(2);
    // Everything is still owned by the classic member: m2 waits for its two.
    expect(owned(m2)).toEqual([]);
    const d = await c.consumerGroupDescribe('g');
    expect(d).toMatchObject({ groupState: 'Reconciling', groupEpoch: 2, assignmentEpoch: 2 });
    const classicView = d.members.find((m) => m.memberId === classic.memberId)!;
    expect(classicView).toMatchObject({ memberType: 0, memberEpoch: 1, subscribedTopicNames: ['foo'] });
    expect(classicView.assignment.topicPartitions[0].partitions).toEqual([0, 1, 2, 3]);
    expect(c.listGroups([], ['classic']).groups).toEqual([]);

    // The classic member learns of the rebalance, revokes (eager: owns nothing when it rejoins) and gets its half.
    expect(await c.heartbeat('g', classic.memberId, null, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const j = await c.joinGroup(join('g', classic.memberId, subscription(['foo'], [], 0)));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2 });
    expect(partitionsOf((await c.syncGroup(sync('g', j))).assignment)).toHaveLength(2);
    const m2b = await c.consumerGroupHeartbeat(hb('g', 'm2', 2));
    expect(owned(m2b)).toHaveLength(2);
    expect((await c.consumerGroupDescribe('g')).groupState).toBe('Stable');

    // The log rebuilds the same consumer group (the classic group tombstoned before it).
    await c.shutdown();
    const reloaded = await start({ log, metadata });
    const r = await reloaded.c.consumerGroupDescribe('g');
    expect(r).toMatchObject({ groupState: 'Stable', groupEpoch: 2 });
    expect(r.members.map((m) => m.memberType).sort()).toEqual([0, 1]);
    expect(await reloaded.c.heartbeat('g', classic.memberId, null, 2)).toBe(ErrorCode.NONE);
  });

  test('downgrade: the last consumer-protocol member leaving turns the group back into a classic group that rebalances', async () => {
    const { c, metadata, log } = await start();
    metadata.add('foo', FOO, 4);
    const classic = await classicGroup(c);
    await c.consumerGroupHeartbeat(hb('g', 'm2', 0));
    const left = await c.consumerGroupHeartbeat(hb('g', 'm2', 2, { memberEpoch: -1 }));
    expect(left.errorCode).toBe(ErrorCode.NONE);

    expect((await c.consumerGroupDescribe('g')).errorMessage).toBe('Group g is not a consumer group.');
    expect(c.listGroups([], ['classic']).groups).toEqual([{ groupId: 'g', protocolType: 'consumer', groupState: 'PreparingRebalance', groupType: 'classic' }]);
    // The classic member rejoins the classic group and leads the next generation.
    expect(await c.heartbeat('g', classic.memberId, null, 2)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const j = await c.joinGroup(join('g', classic.memberId, subscription(['foo'], [], 0)));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 3, leader: classic.memberId });
    expect(j.members.map((m) => m.memberId)).toEqual([classic.memberId]);

    await c.shutdown();
    const reloaded = await start({ log, metadata });
    expect(reloaded.c.listGroups([], []).groups).toEqual([{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }]);
  });

  test('a static classic member replacing the last consumer-protocol static member downgrades the group and takes its assignment', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 4);
    const classic = await classicGroup(c);
    const s = await c.consumerGroupHeartbeat(hb('g', 's1', 0, { instanceId: 'instance-1' }));
    expect(s.errorCode).toBe(ErrorCode.NONE);
    // The classic member rejoins so that the static one gets its two partitions.
    const rj = await c.joinGroup(join('g', classic.memberId, subscription(['foo'], [], 0)));
    await c.syncGroup(sync('g', rj));
    const s1 = await c.consumerGroupHeartbeat(hb('g', 's1', 2, { instanceId: 'instance-1' }));
    expect(owned(s1)).toHaveLength(2);

    // The same instance comes back on the classic protocol (a new member id, no leave first).
    const j = await c.joinGroup(join('g', '', subscription(['foo'], [], 0), { groupInstanceId: 'instance-1' }));
    expect(j).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2, protocolName: 'range' });
    expect(j.memberId).not.toBe('s1');
    const groups = c.listGroups([], []).groups;
    expect(groups).toEqual([{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' }]);
    const synced = await c.syncGroup(sync('g', j, [], 'instance-1'));
    expect(synced.errorCode).toBe(ErrorCode.NONE);
    expect(partitionsOf(synced.assignment)).toEqual(owned(s1).map((tp) => tp.replace(FOO, 'foo')));
  });

  test('with the policy disabled a classic group is not upgraded and a consumer group is not downgraded', async () => {
    const { c, metadata } = await start({ consumer: { migrationPolicy: 'disabled' } });
    metadata.add('foo', FOO, 4);
    await classicGroup(c);
    const refused = await c.consumerGroupHeartbeat(hb('g', 'm2', 0));
    expect(refused).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group g is not a consumer group.' });

    // A consumer group with a classic member stays a consumer group when its consumer-protocol member leaves.
    await c.consumerGroupHeartbeat(hb('h', 'm1', 0));
    const j = await classicJoin(c, 'h', subscription(['foo']));
    expect(j.errorCode).toBe(ErrorCode.NONE);
    await c.consumerGroupHeartbeat(hb('h', 'm1', 1, { memberEpoch: -1 }));
    const d = await c.consumerGroupDescribe('h');
    expect(d.errorCode).toBe(ErrorCode.NONE);
    expect(d.members.map((m) => [m.memberId, m.memberType])).toEqual([[j.memberId, 0]]);
  });
});
