/**
 * KIP-848 consumer groups through the GroupCoordinator against an in-memory __consumer_offsets-0
 * and a fake metadata cache (topics can be created and deleted): joining, two members
 * reconciling with revocation first, a member leaving, session timeouts fencing, a static member
 * coming back to its partitions, a regex subscription picking up a new topic, validation errors
 * with Kafka's messages, offset commit epochs, deletion, a reload from the records giving the same
 * group, routing (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE), an empty classic group giving way, and
 * offset expiry.
 */
import { ErrorCode } from '../../protocol/errors';
import { RecordBatch } from '../../protocol/records/record-batch';
import { CompressionType } from '../../protocol/records/record-batch';
import { Logger } from '../../common/logger';
import { GroupCoordinator } from './group-coordinator';
import type { ConsumerGroupHeartbeatParams } from './consumer-group-manager';
import { FOO, BAR, FOO2, FakeOffsetsLog, partitionState, FakeMetadata, delta, CONFIG, running, start, stopAll, waitFor, hb, owned, ownedList } from './testing/consumer-group-harness';
import { partitionForGroup } from './group-partition';

afterEach(stopAll);

describe('consumer groups (KIP-848)', () => {
  test('a member joins with epoch 0 and gets the group epoch and every partition', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 4);
    const r = await c.consumerGroupHeartbeat(hb('g', 'm1', 0));
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'm1', memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(owned(r)).toEqual([0, 1, 2, 3].map((p) => `${FOO}:${p}`));
    // A plain heartbeat at the same epoch: nothing changed, no assignment in the answer.
    const again = await c.consumerGroupHeartbeat(hb('g', 'm1', 1));
    expect(again).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 1, assignment: null });
    const d = await c.consumerGroupDescribe('g');
    expect(d).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'uniform' });
    expect(d.members[0]).toMatchObject({ memberId: 'm1', memberEpoch: 1, clientId: 'client', subscribedTopicNames: ['foo'] });
    expect(d.members[0].assignment.topicPartitions).toEqual([{ topicId: FOO, topicName: 'foo', partitions: [0, 1, 2, 3] }]);
    expect(c.listGroups([], ['consumer']).groups).toEqual([{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' }]);
    expect(c.listGroups([], ['classic']).groups).toEqual([]);
  });

  test('two members reconcile: the first revokes before the second gets its partitions; one leaves, the other takes all', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 4);
    const a1 = await c.consumerGroupHeartbeat(hb('g', 'a', 0));
    expect(a1.memberEpoch).toBe(1);

    // b joins: epoch 2, but its partitions are still a's, so it gets none yet.
    const b1 = await c.consumerGroupHeartbeat(hb('g', 'b', 0));
    expect(b1).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 });
    expect(owned(b1)).toEqual([]);
    expect((await c.consumerGroupDescribe('g')).groupState).toBe('Reconciling');

    // a must revoke two partitions first: it stays at epoch 1 with what it keeps.
    const a2 = await c.consumerGroupHeartbeat(hb('g', 'a', 1, { topicPartitions: ownedList(a1) }));
    expect(a2.memberEpoch).toBe(1);
    expect(owned(a2)).toHaveLength(2);
    // Still owning everything: unchanged.
    const a2b = await c.consumerGroupHeartbeat(hb('g', 'a', 1, { topicPartitions: ownedList(a1) }));
    expect(a2b).toMatchObject({ memberEpoch: 1, assignment: null });
    // Revoked: a moves to epoch 2.
    const a3 = await c.consumerGroupHeartbeat(hb('g', 'a', 1, { topicPartitions: ownedList(a2) }));
    expect(a3).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 });
    // Now b gets the released partitions.
    const b2 = await c.consumerGroupHeartbeat(hb('g', 'b', 2, { topicPartitions: [] }));
    expect(b2.memberEpoch).toBe(2);
    expect(owned(b2)).toHaveLength(2);
    expect(new Set([...owned(a2), ...owned(b2)]).size).toBe(4);
    expect((await c.consumerGroupDescribe('g')).groupState).toBe('Stable');

    // b leaves: epoch 3; a takes every partition at its next heartbeat.
    const left = await c.consumerGroupHeartbeat(hb('g', 'b', -1));
    expect(left).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'b', memberEpoch: -1 });
    const a4 = await c.consumerGroupHeartbeat(hb('g', 'a', 2, { topicPartitions: ownedList(a2) }));
    expect(a4.memberEpoch).toBe(3);
    expect(owned(a4)).toEqual([0, 1, 2, 3].map((p) => `${FOO}:${p}`));
    // The member that left is gone.
    expect((await c.consumerGroupHeartbeat(hb('g', 'b', 2))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('the session timeout fences a silent member and its partitions go to the others', async () => {
    const { c, metadata } = await start({ consumer: { sessionTimeoutMs: 150 } });
    metadata.add('foo', FOO, 2);
    await c.consumerGroupHeartbeat(hb('g', 'a', 0));
    await c.consumerGroupHeartbeat(hb('g', 'b', 0));
    // b keeps heartbeating; a goes silent.
    let bEpoch = 2;
    let bOwned: { topicId: string; partitions: number[] }[] = [];
    await waitFor(async () => {
      const r = await c.consumerGroupHeartbeat(hb('g', 'b', bEpoch, { topicPartitions: bOwned }));
      expect(r.errorCode).toBe(ErrorCode.NONE);
      bEpoch = r.memberEpoch;
      if (r.assignment) bOwned = ownedList(r);
      return bOwned.reduce((n, t) => n + t.partitions.length, 0) === 2;
    });
    const d = await c.consumerGroupDescribe('g');
    expect(d.members.map((m) => m.memberId)).toEqual(['b']);
    expect((await c.consumerGroupHeartbeat(hb('g', 'a', 1))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  test('the rebalance timeout fences a member that does not revoke in time', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 2);
    const a1 = await c.consumerGroupHeartbeat(hb('g', 'a', 0, { rebalanceTimeoutMs: 100 }));
    await c.consumerGroupHeartbeat(hb('g', 'b', 0));
    // a is told to revoke, keeps heartbeating but keeps owning everything.
    const a2 = await c.consumerGroupHeartbeat(hb('g', 'a', 1, { topicPartitions: ownedList(a1) }));
    expect(owned(a2)).toHaveLength(1);
    await waitFor(async () => (await c.consumerGroupHeartbeat(hb('g', 'a', 1, { topicPartitions: ownedList(a1) }))).errorCode === ErrorCode.UNKNOWN_MEMBER_ID);
    const d = await c.consumerGroupDescribe('g');
    expect(d.members.map((m) => m.memberId)).toEqual(['b']);
    expect(d.groupEpoch).toBe(3);
  });

  test('a static member leaving with -2 keeps its partitions and gets them back under a new member id', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 4);
    const s1 = await c.consumerGroupHeartbeat(hb('g', 's-1', 0, { instanceId: 'i1' }));
    const d1 = await c.consumerGroupHeartbeat(hb('g', 'd', 0));
    await c.consumerGroupHeartbeat(hb('g', 's-1', 1, { instanceId: 'i1', topicPartitions: ownedList(s1) }));
    const s2 = await c.consumerGroupHeartbeat(hb('g', 's-1', 1, { instanceId: 'i1', topicPartitions: [] }));
    expect(s2.memberEpoch).toBe(2);
    const d2 = await c.consumerGroupHeartbeat(hb('g', 'd', d1.memberEpoch, { topicPartitions: [] }));
    const staticPartitions = (await c.consumerGroupDescribe('g')).members.find((m) => m.instanceId === 'i1')!.assignment;

    // Another member may not take the instance id while it is held.
    const taken = await c.consumerGroupHeartbeat(hb('g', 's-x', 0, { instanceId: 'i1' }));
    expect(taken.errorCode).toBe(ErrorCode.UNRELEASED_INSTANCE_ID);
    expect(taken.errorMessage).toBe('Static member s-x with instance id i1 cannot join the group because the instance id is owned by s-1 member.');

    const leave = await c.consumerGroupHeartbeat(hb('g', 's-1', -2, { instanceId: 'i1' }));
    expect(leave).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 's-1', memberEpoch: -2 });
    const epochBefore = (await c.consumerGroupDescribe('g')).groupEpoch;

    const back = await c.consumerGroupHeartbeat(hb('g', 's-2', 0, { instanceId: 'i1' }));
    expect(back).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 's-2' });
    const after = await c.consumerGroupDescribe('g');
    expect(after.groupEpoch).toBe(epochBefore); // no rebalance
    const replaced = after.members.find((m) => m.instanceId === 'i1')!;
    expect(replaced.memberId).toBe('s-2');
    expect(replaced.assignment).toEqual(staticPartitions);
    expect(after.members.map((m) => m.memberId).sort()).toEqual(['d', 's-2']);
    expect(owned(d2).length + staticPartitions.topicPartitions[0].partitions.length).toBe(4);
  });

  test('a regex subscription picks up a topic created later and drops a deleted one', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 2);
    metadata.add('bar', BAR, 2);
    const r1 = await c.consumerGroupHeartbeat(hb('g', 'm', 0, { subscribedTopicNames: null, subscribedTopicRegex: 'foo.*' }));
    expect(owned(r1)).toEqual([`${FOO}:0`, `${FOO}:1`]);
    c.onMetadataDelta(delta(metadata.add('foo2', FOO2, 1)));
    const r2 = await c.consumerGroupHeartbeat(hb('g', 'm', r1.memberEpoch, { topicPartitions: ownedList(r1) }));
    expect(r2.memberEpoch).toBe(r1.memberEpoch + 1);
    expect(owned(r2)).toEqual([`${FOO}:0`, `${FOO}:1`, `${FOO2}:0`]);

    metadata.byName.delete('foo');
    c.onMetadataDelta(delta([], [{ name: 'foo', topicId: FOO, partitions: [0, 1] }]));
    const r3 = await c.consumerGroupHeartbeat(hb('g', 'm', r2.memberEpoch, { topicPartitions: ownedList(r2) }));
    expect(r3.memberEpoch).toBe(r2.memberEpoch); // foo must be revoked first
    const r4 = await c.consumerGroupHeartbeat(hb('g', 'm', r3.memberEpoch, { topicPartitions: [{ topicId: FOO2, partitions: [0] }] }));
    expect(r4.memberEpoch).toBe(r2.memberEpoch + 1);
    expect((await c.consumerGroupDescribe('g')).members[0].assignment.topicPartitions).toEqual([{ topicId: FOO2, topicName: 'foo2', partitions: [0] }]);

    const bad = await c.consumerGroupHeartbeat(hb('g', 'x', 0, { subscribedTopicRegex: '(' }));
    expect(bad).toMatchObject({
      errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION,
      errorMessage: 'SubscribedTopicRegex `(` is not a valid regular expression: missing closing ).',
    });
    // RE2/J syntax, as Kafka: no lookarounds or backreferences.
    const lookahead = await c.consumerGroupHeartbeat(hb('g', 'x', 0, { subscribedTopicRegex: 'foo(?!2)' }));
    expect(lookahead).toMatchObject({ errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION });
    expect(lookahead.errorMessage).toMatch(/^SubscribedTopicRegex `foo\(\?!2\)` is not a valid regular expression: invalid or unsupported Perl syntax/);
    // The whole name must match: "fo" alone matches neither foo nor foo2.
    const partial = await c.consumerGroupHeartbeat(hb('h', 'y', 0, { subscribedTopicNames: null, subscribedTopicRegex: 'fo' }));
    expect(partial).toMatchObject({ errorCode: ErrorCode.NONE });
    expect(owned(partial)).toEqual([]);
  });

  test("requests are validated with Kafka's messages; epochs, sizes and group types are enforced", async () => {
    const { c, metadata } = await start({ consumer: { maxSize: 1 } });
    metadata.add('foo', FOO, 1);
    const expectError = async (p: ConsumerGroupHeartbeatParams, errorCode: number, errorMessage?: string) => {
      const r = await c.consumerGroupHeartbeat(p);
      expect(r.errorCode).toBe(errorCode);
      expect(r.memberId).toBeNull();
      if (errorMessage !== undefined) expect(r.errorMessage).toBe(errorMessage);
    };
    await expectError(hb('', 'm', 0), ErrorCode.INVALID_REQUEST, "GroupId can't be empty.");
    await expectError(hb('g', '', 0), ErrorCode.INVALID_REQUEST, "MemberId can't be empty.");
    await expectError(hb('g', 'm', 0, { rebalanceTimeoutMs: -1 }), ErrorCode.INVALID_REQUEST, 'RebalanceTimeoutMs must be provided in first request.');
    await expectError(hb('g', 'm', 0, { topicPartitions: null }), ErrorCode.INVALID_REQUEST, 'TopicPartitions must be empty when (re-)joining.');
    await expectError(hb('g', 'm', 0, { subscribedTopicNames: null }), ErrorCode.INVALID_REQUEST, 'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
    await expectError(hb('g', 'm', -2), ErrorCode.INVALID_REQUEST, "InstanceId can't be null.");
    await expectError(hb('g', 'm', -3), ErrorCode.INVALID_REQUEST, 'MemberEpoch is invalid.');
    await expectError(hb('g', 'm', 0, { instanceId: '' }), ErrorCode.INVALID_REQUEST, "InstanceId can't be empty.");
    await expectError(hb('g', 'm', 0, { serverAssignor: 'sticky' }), ErrorCode.UNSUPPORTED_ASSIGNOR, 'ServerAssignor sticky is not supported. Supported assignors: uniform, range.');
    await expectError(hb('g', 'm', 3), ErrorCode.GROUP_ID_NOT_FOUND, 'Consumer group g not found.');

    // v0: the coordinator generates the member id.
    const v0 = await c.consumerGroupHeartbeat(hb('g', '', 0, { apiVersion: 0 }));
    expect(v0.errorCode).toBe(ErrorCode.NONE);
    expect(v0.memberId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await expectError(hb('g', v0.memberId!, 5), ErrorCode.FENCED_MEMBER_EPOCH);
    await expectError(hb('g', 'other', 0), ErrorCode.GROUP_MAX_SIZE_REACHED, 'The consumer group has reached its maximum capacity of 1 members.');
    // Kafka checks the size before looking the member up.
    await expectError(hb('g', 'other', 1), ErrorCode.GROUP_MAX_SIZE_REACHED);
    await c.consumerGroupHeartbeat(hb('g', v0.memberId!, -1));
    await expectError(hb('g', 'other', 1), ErrorCode.UNKNOWN_MEMBER_ID, 'Member other is not a member of group g.');

    // A classic group whose members' embedded protocol does not decode cannot be upgraded; a
    // classic member with such metadata cannot join a consumer group (the migration paths are in
    // consumer-group-migration.test.ts).
    const classic = await c.joinGroup({
      groupId: 'classic', memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, clientId: 'c', clientHost: '/h', requireKnownMemberId: true, supportSkippingAssignment: false, reason: null,
    });
    expect(classic.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const joined = c.joinGroup({
      groupId: 'classic', memberId: classic.memberId, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, clientId: 'c', clientHost: '/h', requireKnownMemberId: true, supportSkippingAssignment: false, reason: null,
    });
    expect((await joined).errorCode).toBe(ErrorCode.NONE);
    await expectError(
      hb('classic', 'm', 0),
      ErrorCode.GROUP_ID_NOT_FOUND,
      'Cannot upgrade the classic group classic to consumer group because the embedded consumer protocol is malformed.',
    );
    await expectError(hb('classic', 'm', 1), ErrorCode.GROUP_ID_NOT_FOUND, 'Group classic is not a consumer group.');
    expect((await c.consumerGroupDescribe('classic')).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const classicJoin = () =>
      c.joinGroup({
        groupId: 'g', memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
        sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, clientId: 'c', clientHost: '/h', requireKnownMemberId: true, supportSkippingAssignment: false, reason: null,
      });
    expect((await c.consumerGroupHeartbeat(hb('g', 'other', 0))).errorCode).toBe(ErrorCode.NONE);
    // The size limit is checked first (Kafka's order), as for a consumer-protocol member.
    expect((await classicJoin()).errorCode).toBe(ErrorCode.GROUP_MAX_SIZE_REACHED);
    // An empty consumer group gives way to a classic one.
    await c.consumerGroupHeartbeat(hb('g', 'other', 1, { memberEpoch: -1 }));
    expect((await classicJoin()).errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect((await c.consumerGroupDescribe('g')).errorMessage).toBe('Group g is not a consumer group.');
  });

  test('offset commits and fetches check the member epoch; an empty group can be deleted', async () => {
    const { c, metadata } = await start();
    metadata.add('foo', FOO, 1);
    const r = await c.consumerGroupHeartbeat(hb('g', 'm', 0));
    const commit = (memberId: string, generationId: number, apiVersion = 9) =>
      c.commitOffsets({
        groupId: 'g', memberId, groupInstanceId: null, generationId, retentionTimeMs: -1n, apiVersion,
        topics: [{ name: 'foo', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
      });
    const code = async (p: ReturnType<typeof commit>) => (await p)[0].partitions[0].errorCode;
    expect(await code(commit('m', r.memberEpoch + 1))).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect(await code(commit('nobody', r.memberEpoch))).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(await code(commit('m', r.memberEpoch, 8))).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(await code(commit('', -1))).toBe(ErrorCode.UNKNOWN_MEMBER_ID); // the group has members
    expect(await code(commit('m', r.memberEpoch))).toBe(ErrorCode.NONE);

    expect((await c.fetchOffsets('g', null, false, { memberId: 'm', memberEpoch: r.memberEpoch - 1 })).errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await c.fetchOffsets('g', null, false, { memberId: 'x', memberEpoch: r.memberEpoch })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const fetched = await c.fetchOffsets('g', null, false, { memberId: 'm', memberEpoch: r.memberEpoch });
    expect(fetched.topics).toEqual([{ name: 'foo', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE }] }]);
    expect((await c.fetchOffsets('g', null, false)).errorCode).toBe(ErrorCode.NONE); // the admin client

    const described = await c.describeGroup('g');
    expect(described).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Stable', protocolType: 'consumer' });
    expect(described.members.map((m) => m.memberId)).toEqual(['m']);
    expect((await c.deleteOffsets('g', [{ name: 'foo', partitions: [{ partitionIndex: 0 }] }])).topics[0].partitions[0].errorCode).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);

    expect(await c.deleteGroup('g')).toBe(ErrorCode.NON_EMPTY_GROUP);
    await c.consumerGroupHeartbeat(hb('g', 'm', -1));
    expect((await c.consumerGroupDescribe('g')).groupState).toBe('Empty');
    expect(await code(commit('', -1))).toBe(ErrorCode.NONE); // an empty group takes admin commits
    expect(await c.deleteGroup('g')).toBe(ErrorCode.NONE);
    expect((await c.consumerGroupDescribe('g')).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    expect((await c.fetchOffsets('g', null, false)).topics).toEqual([]);
  });

  test('a reloaded partition gives the same group: epochs, members, assignments, and members continue', async () => {
    const metadata = new FakeMetadata();
    metadata.add('foo', FOO, 4);
    const first = await start({ metadata });
    const c = first.c;
    const a1 = await c.consumerGroupHeartbeat(hb('g', 'a', 0, { instanceId: 'ia', serverAssignor: 'range' }));
    const b1 = await c.consumerGroupHeartbeat(hb('g', 'b', 0));
    // a is in the middle of revoking: UNREVOKED_PARTITIONS, persisted as such.
    const a2 = await c.consumerGroupHeartbeat(hb('g', 'a', a1.memberEpoch, { instanceId: 'ia', topicPartitions: ownedList(a1) }));
    const before = await c.consumerGroupDescribe('g');
    expect(before.groupState).toBe('Reconciling');
    expect(before.assignorName).toBe('range');
    await c.shutdown();

    const second = await start({ metadata, log: first.log });
    const after = await second.c.consumerGroupDescribe('g');
    expect(after).toEqual(before);
    // The members carry on from where they were.
    const a3 = await second.c.consumerGroupHeartbeat(hb('g', 'a', a1.memberEpoch, { instanceId: 'ia', topicPartitions: ownedList(a2) }));
    expect(a3).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: b1.memberEpoch });
    const b2 = await second.c.consumerGroupHeartbeat(hb('g', 'b', b1.memberEpoch, { topicPartitions: [] }));
    expect(owned(b2)).toHaveLength(2);
    expect((await second.c.consumerGroupDescribe('g')).groupState).toBe('Stable');
  });

  test('routing: a group of a partition led elsewhere is NOT_COORDINATOR; a stopped coordinator COORDINATOR_NOT_AVAILABLE', async () => {
    // __consumer_offsets has two partitions; this broker leads (and loaded) only partition 0.
    const { c } = await start({ metadata: new FakeMetadata(2) });
    const elsewhere = ['a', 'b', 'c', 'd', 'e', 'f'].find((g) => partitionForGroup(g, 2) === 1)!;
    const here = ['a', 'b', 'c', 'd', 'e', 'f'].find((g) => partitionForGroup(g, 2) === 0)!;
    expect(await c.consumerGroupHeartbeat(hb(elsewhere, 'm', 0))).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR, memberId: null });
    expect((await c.consumerGroupDescribe(elsewhere)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await c.consumerGroupHeartbeat(hb(here, 'm', 0))).errorCode).toBe(ErrorCode.NONE);
    await c.shutdown();
    expect((await c.consumerGroupHeartbeat(hb(here, 'm', 1))).errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect((await c.consumerGroupDescribe(here)).errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  test('an empty classic group gives way to a consumer group (its record tombstoned); a non-empty one does not', async () => {
    const { c, log, metadata } = await start();
    metadata.add('foo', FOO, 1);
    // A simple (classic, Empty) group with an offset.
    const committed = await c.commitOffsets({
      groupId: 'simple', memberId: '', groupInstanceId: null, generationId: -1, retentionTimeMs: -1n, apiVersion: 9,
      topics: [{ name: 'foo', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
    });
    expect(committed[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
    expect((await c.describeGroup('simple')).groupState).toBe('Empty');
    expect((await c.consumerGroupHeartbeat(hb('simple', 'm', 1))).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const joined = await c.consumerGroupHeartbeat(hb('simple', 'm', 0));
    expect(joined.errorCode).toBe(ErrorCode.NONE);
    expect(c.listGroups([], []).groups.filter((g) => g.groupId === 'simple')).toEqual([{ groupId: 'simple', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' }]);
    // The offsets stay; the member commits at its epoch.
    expect((await c.fetchOffsets('simple', null, false)).topics[0].partitions[0].committedOffset).toBe(3n);
    // Reloaded, it is a consumer group (the classic group's tombstone came first).
    await c.shutdown();
    const again = await start({ log, metadata });
    expect((await again.c.consumerGroupDescribe('simple')).members.map((m) => m.memberId)).toEqual(['m']);
    expect(again.c.groupManager.group('simple')).toBeUndefined();
  });

  test('offsets of a consumer group expire only for topics no member subscribes to; an empty group without offsets is deleted', async () => {
    const clock = { now: 1_000_000 };
    const { c, metadata } = await start({ clock });
    metadata.add('foo', FOO, 1);
    metadata.add('bar', BAR, 1);
    const r = await c.consumerGroupHeartbeat(hb('g', 'm', 0));
    const commit = (memberId: string, epoch: number, topic: string) =>
      c.commitOffsets({
        groupId: 'g', memberId, groupInstanceId: null, generationId: epoch, retentionTimeMs: -1n, apiVersion: 9,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
      });
    await commit('m', r.memberEpoch, 'foo');
    await commit('m', r.memberEpoch, 'bar');
    clock.now += CONFIG.offsetsRetentionMs + 1;
    expect(await c.expireOffsets()).toBe(1); // bar: nobody subscribes to it
    expect((await c.fetchOffsets('g', null, false)).topics.map((t) => t.name)).toEqual(['foo']);
    await c.consumerGroupHeartbeat(hb('g', 'm', -1));
    expect(await c.expireOffsets()).toBe(1);
    expect((await c.consumerGroupDescribe('g')).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });
});
