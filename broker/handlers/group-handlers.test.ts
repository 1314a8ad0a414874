/**
 * The group coordinator APIs at every version they advertise, through the real dispatcher of a
 * running broker: the request is encoded with the generated codec, the response must encode for
 * that version (a field set at a version that lacks it fails here) and decode with Kafka's results.
 */
import { startBroker, type RunningBroker } from '..';
import { Writer } from '../../protocol/primitives/writer';
import { ErrorCode } from '../../protocol/errors';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';
import { writeConsumerProtocolSubscription } from '../../protocol/generated/message-data/consumer-protocol-subscription';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'group-test');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);


const API = {
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  CreateTopics: 19,
  DeleteGroups: 42,
  OffsetDelete: 47,
  ConsumerGroupHeartbeat: 68,
  ConsumerGroupDescribe: 69,
};



/** ConsumerProtocolSubscription bytes (version prefix + v0 body), as consumers send them. */
function subscription(...topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(w, 0, { topics, userData: null });
  return w.toBuffer();
}

const protocols = (...topics: string[]) => [{ name: 'range', metadata: subscription(...topics) }];

/** Joins as a new member at `v` (handling MEMBER_ID_REQUIRED on v4+) and returns the response. */
async function joinNew(v: number, groupId: string, extra: object = {}): Promise<any> {
  const body = { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: protocols('gt'), ...extra };
  let res = await call(API.JoinGroup, v, body);
  if (v >= 4 && (extra as { groupInstanceId?: string }).groupInstanceId === undefined) {
    expect(res.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect(res.memberId).toMatch(/^group-test-/);
    res = await call(API.JoinGroup, v, { ...body, memberId: res.memberId });
  }
  return res;
}

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    config: {
      'offsets.topic.num.partitions': 3,
      'transaction.state.log.num.partitions': 3,
      'group.initial.rebalance.delay.ms': 0,
      'group.min.session.timeout.ms': 100,
    },
  });
  const created = await call(API.CreateTopics, 7, { topics: [{ name: 'gt', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
});

afterAll(async () => {
  await broker?.close();
});

describe('group coordinator APIs at every advertised version', () => {
  test('FindCoordinator: group keys (single and batched), transaction and unknown key types', async () => {
    for (const v of versions(API.FindCoordinator)) {
      if (v < 4) {
        const res = await call(API.FindCoordinator, v, { key: `fc-${v}`, keyType: 0 });
        expect(res).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker.nodeId, host: broker.host, port: broker.port });
        if (v >= 1) {
          const tx = await call(API.FindCoordinator, v, { key: 'tx', keyType: 1 });
          expect(tx).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker.nodeId, host: broker.host, port: broker.port });
          const bad = await call(API.FindCoordinator, v, { key: 'x', keyType: 9 });
          expect(bad).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, nodeId: -1 });
        }
      } else {
        const res = await call(API.FindCoordinator, v, { keyType: 0, coordinatorKeys: ['a', 'b', ''] });
        expect(res.coordinators.map((c: any) => [c.key, c.errorCode, c.nodeId, c.port])).toEqual([
          ['a', ErrorCode.NONE, broker.nodeId, broker.port],
          ['b', ErrorCode.NONE, broker.nodeId, broker.port],
          ['', ErrorCode.NONE, broker.nodeId, broker.port],
        ]);
        const tx = await call(API.FindCoordinator, v, { keyType: 1, coordinatorKeys: ['t1'] });
        expect(tx.coordinators[0]).toMatchObject({ key: 't1', errorCode: ErrorCode.NONE, nodeId: broker.nodeId, port: broker.port });
      }
    }
    // The topic was created on first use with Kafka's internal topic settings.
    const t = broker.server.metadata.topic('__consumer_offsets')!;
    expect(t.partitions.size).toBe(3);
    expect(broker.server.metadata.topicConfig('__consumer_offsets').get('cleanup.policy')).toBe('compact');
    // So was __transaction_state, by the first transactional key.
    const txn = broker.server.metadata.topic('__transaction_state')!;
    expect(txn.partitions.size).toBe(3);
    const txnConfig = broker.server.metadata.topicConfig('__transaction_state');
    expect([txnConfig.get('cleanup.policy'), txnConfig.get('min.insync.replicas'), txnConfig.get('compression.type')]).toEqual(['compact', '1', 'uncompressed']);
  });

  test('JoinGroup, SyncGroup, Heartbeat, OffsetCommit and LeaveGroup: one member per version', async () => {
    for (const v of versions(API.JoinGroup)) {
      const groupId = `jg-${v}`;
      const join = await joinNew(v, groupId);
      expect(join.errorCode).toBe(ErrorCode.NONE);
      expect(join.generationId).toBe(1);
      expect(join.leader).toBe(join.memberId);
      expect(join.protocolName).toBe('range');
      if (v >= 7) expect(join.protocolType).toBe('consumer');
      expect(join.members.map((m: any) => m.memberId)).toEqual([join.memberId]);
      expect(Buffer.from(join.members[0].metadata)).toEqual(subscription('gt'));
      const memberId = join.memberId;

      const sv = Math.min(v, 5);
      const assignment = Buffer.from(`assignment-${v}`);
      const sync = await call(API.SyncGroup, sv, {
        groupId,
        generationId: 1,
        memberId,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId, assignment }],
      });
      expect(sync.errorCode).toBe(ErrorCode.NONE);
      expect(Buffer.from(sync.assignment)).toEqual(assignment);
      if (sv >= 5) expect([sync.protocolType, sync.protocolName]).toEqual(['consumer', 'range']);
      const badGen = await call(API.SyncGroup, sv, { groupId, generationId: 7, memberId, assignments: [] });
      expect(badGen.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);

      const hv = Math.min(v, 4);
      expect((await call(API.Heartbeat, hv, { groupId, generationId: 1, memberId })).errorCode).toBe(ErrorCode.NONE);
      expect((await call(API.Heartbeat, hv, { groupId, generationId: 2, memberId })).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
      expect((await call(API.Heartbeat, hv, { groupId, generationId: 1, memberId: 'nobody' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      expect((await call(API.Heartbeat, hv, { groupId: '', generationId: 1, memberId })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);

      // The member commits in its generation; a wrong generation or member is refused.
      const cv = v;
      const commit = (body: object) =>
        call(API.OffsetCommit, cv, { groupId, retentionTimeMs: -1n, topics: [{ name: 'gt', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedMetadata: 'm' }] }], ...body });
      const ok = await commit({ generationIdOrMemberEpoch: 1, memberId });
      expect(ok.topics[0].partitions[0].errorCode).toBe(cv === 0 ? ErrorCode.UNKNOWN_MEMBER_ID : ErrorCode.NONE);
      if (cv >= 1) {
        expect((await commit({ generationIdOrMemberEpoch: 3, memberId })).topics[0].partitions[0].errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
        expect((await commit({ generationIdOrMemberEpoch: 1, memberId: 'stranger' })).topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      }

      // A Stable group's follower-free rejoin with the same metadata by the leader rebalances to
      // generation 2 at once (every member is in).
      const rejoin = await call(API.JoinGroup, v, {
        groupId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        protocolType: 'consumer',
        protocols: protocols('gt'),
      });
      expect([rejoin.errorCode, rejoin.generationId, rejoin.leader]).toEqual([ErrorCode.NONE, 2, memberId]);
      const inconsistent = await call(API.JoinGroup, v, {
        groupId,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: '',
        protocolType: 'connect',
        protocols: protocols('gt'),
      });
      expect(inconsistent.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      expect(inconsistent.generationId).toBe(-1);

      const lv = Math.min(v, 5);
      const leave = await call(
        API.LeaveGroup,
        lv,
        lv >= 3 ? { groupId, members: [{ memberId }, { memberId: 'ghost' }] } : { groupId, memberId },
      );
      expect(leave.errorCode).toBe(ErrorCode.NONE);
      if (lv >= 3) {
        expect(leave.members.map((m: any) => [m.memberId, m.errorCode])).toEqual([
          [memberId, ErrorCode.NONE],
          ['ghost', ErrorCode.UNKNOWN_MEMBER_ID],
        ]);
      }
      const described = await call(API.DescribeGroups, 5, { groups: [groupId] });
      expect(described.groups[0]).toMatchObject({ groupState: 'Empty', members: [] });
      const gone = await call(API.LeaveGroup, lv, lv >= 3 ? { groupId, members: [{ memberId }] } : { groupId, memberId });
      expect(lv >= 3 ? gone.members[0].errorCode : gone.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    }
  });

  test('JoinGroup errors: session timeout bounds, unknown member, empty protocol type, empty group id', async () => {
    for (const v of versions(API.JoinGroup)) {
      const base = { groupId: `je-${v}`, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: protocols('gt') };
      const j = (body: object) => call(API.JoinGroup, v, { ...base, ...body });
      expect((await j({ sessionTimeoutMs: 50 })).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
      expect((await j({ sessionTimeoutMs: 3_600_000 })).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
      const unknown = await j({ memberId: 'made-up' });
      expect([unknown.errorCode, unknown.memberId]).toEqual([ErrorCode.UNKNOWN_MEMBER_ID, 'made-up']);
      expect((await j({ protocolType: '' })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      expect((await j({ protocols: [] })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      expect((await j({ groupId: '' })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    }
    // None of these created a group.
    const listed = await call(API.ListGroups, 5, { statesFilter: [], typesFilter: [] });
    expect(listed.groups.filter((g: any) => g.groupId.startsWith('je-'))).toEqual([]);
  });

  test('two members: the follower waits for the leader, both get the generation; SyncGroup waits for the leader', async () => {
    const groupId = 'two';
    const a = await joinNew(5, groupId);
    expect(a.errorCode).toBe(ErrorCode.NONE);
    // B joins: the group rebalances and B's JoinGroup waits until A rejoins.
    const bFirst = await call(API.JoinGroup, 5, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: protocols('gt') });
    expect(bFirst.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    const bJoin = call(API.JoinGroup, 5, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: bFirst.memberId, protocolType: 'consumer', protocols: protocols('gt') });
    expect((await call(API.Heartbeat, 3, { groupId, generationId: 1, memberId: a.memberId })).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const aJoin = await call(API.JoinGroup, 5, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: a.memberId, protocolType: 'consumer', protocols: protocols('gt') });
    const b = await bJoin;
    expect([aJoin.generationId, b.generationId]).toEqual([2, 2]);
    expect(aJoin.leader).toBe(a.memberId);
    expect(aJoin.members).toHaveLength(2);
    expect(b.members).toEqual([]);
    // B's SyncGroup waits for the leader's.
    const bSync = call(API.SyncGroup, 3, { groupId, generationId: 2, memberId: b.memberId, assignments: [] });
    const aSync = await call(API.SyncGroup, 3, {
      groupId,
      generationId: 2,
      memberId: a.memberId,
      assignments: [
        { memberId: a.memberId, assignment: Buffer.from('A') },
        { memberId: b.memberId, assignment: Buffer.from('B') },
      ],
    });
    expect(Buffer.from(aSync.assignment).toString()).toBe('A');
    expect(Buffer.from((await bSync).assignment).toString()).toBe('B');
    const d = await call(API.DescribeGroups, 4, { groups: [groupId, 'no-such-group'], includeAuthorizedOperations: true });
    expect(d.groups[0]).toMatchObject({ groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect(d.groups[0].members.map((m: any) => [m.clientId, m.clientHost])).toEqual([
      ['group-test', '/127.0.0.1'],
      ['group-test', '/127.0.0.1'],
    ]);
    expect(d.groups[1]).toMatchObject({ errorCode: ErrorCode.NONE, groupId: 'no-such-group', groupState: 'Dead', members: [] });
    // Deleting a group with members is refused; offsets of a consumed topic cannot be deleted.
    expect((await call(API.DeleteGroups, 1, { groupsNames: [groupId] })).results[0].errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);
    const od = await call(API.OffsetDelete, 0, { groupId, topics: [{ name: 'gt', partitions: [{ partitionIndex: 0 }] }] });
    expect(od.topics[0].partitions[0].errorCode).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
    await call(API.LeaveGroup, 3, { groupId, members: [{ memberId: a.memberId }, { memberId: b.memberId }] });
  });

  test('OffsetCommit (simple group) and OffsetFetch at every version', async () => {
    for (const v of versions(API.OffsetCommit)) {
      const groupId = `oc-${v}`;
      const res = await call(API.OffsetCommit, v, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        retentionTimeMs: -1n,
        topics: [
          {
            name: 'gt',
            partitions: [
              { partitionIndex: 0, committedOffset: BigInt(10 + v), committedLeaderEpoch: 0, commitTimestamp: -1n, committedMetadata: `meta-${v}` },
              { partitionIndex: 7, committedOffset: 1n, committedMetadata: null },
              { partitionIndex: 1, committedOffset: 3n, committedMetadata: 'x'.repeat(4097) },
            ],
          },
          { name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] },
        ],
      });
      expect(res.topics.map((t: any) => [t.name, t.partitions.map((p: any) => [p.partitionIndex, p.errorCode])])).toEqual([
        ['gt', [[0, ErrorCode.NONE], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], [1, ErrorCode.OFFSET_METADATA_TOO_LARGE]]],
        ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ]);
    }
    for (const v of versions(API.OffsetFetch)) {
      const groupId = `oc-${v}`;
      const asked = [
        { name: 'gt', partitionIndexes: [1, 0] },
        { name: 'nope', partitionIndexes: [0] },
      ];
      const body = v >= 8 ? { groups: [{ groupId, topics: asked }, { groupId: 'unknown-group', topics: [{ name: 'gt', partitionIndexes: [0] }] }], requireStable: true } : { groupId, topics: asked, requireStable: v >= 7 };
      const res = await call(API.OffsetFetch, v, body);
      const topics = v >= 8 ? res.groups[0].topics : res.topics;
      if (v >= 2 && v < 8) expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(topics.map((t: any) => [t.name, t.partitions.map((p: any) => [p.partitionIndex, p.committedOffset, p.metadata, p.errorCode])])).toEqual([
        ['gt', [[1, -1n, '', ErrorCode.NONE], [0, BigInt(10 + v), `meta-${v}`, ErrorCode.NONE]]],
        ['nope', [[0, -1n, '', ErrorCode.NONE]]],
      ]);
      if (v >= 5) expect(topics[0].partitions[1].committedLeaderEpoch).toBe(v >= 6 ? 0 : -1);
      if (v >= 8) {
        expect(res.groups[1]).toMatchObject({ groupId: 'unknown-group', errorCode: ErrorCode.NONE });
        expect(res.groups[1].topics[0].partitions[0].committedOffset).toBe(-1n);
      }
      if (v >= 2) {
        // Null topics: every committed offset of the group.
        const all = await call(API.OffsetFetch, v, v >= 8 ? { groups: [{ groupId, topics: null }] } : { groupId, topics: null });
        const allTopics = v >= 8 ? all.groups[0].topics : all.topics;
        expect(allTopics.map((t: any) => [t.name, t.partitions.map((p: any) => [p.partitionIndex, p.committedOffset])])).toEqual([['gt', [[0, BigInt(10 + v)]]]]);
      }
    }
    // Group-level errors (here: the group's partition is still loading): v0-1 on every partition
    // asked, v2-7 top level without topics, v8+ per group.
    const coordinator = broker.server.groupCoordinator;
    const st = (coordinator as any).partitions.get(coordinator.partitionFor('oc-1'));
    st.state = 'loading';
    try {
      const asked = [{ name: 'gt', partitionIndexes: [0, 1] }];
      const v1 = await call(API.OffsetFetch, 1, { groupId: 'oc-1', topics: asked });
      expect(v1.topics[0].partitions.map((p: any) => [p.partitionIndex, p.committedOffset, p.errorCode])).toEqual([
        [0, -1n, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS],
        [1, -1n, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS],
      ]);
      const v3 = await call(API.OffsetFetch, 3, { groupId: 'oc-1', topics: asked });
      expect([v3.errorCode, v3.topics]).toEqual([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, []]);
      const v8 = await call(API.OffsetFetch, 8, { groups: [{ groupId: 'oc-1', topics: asked }] });
      expect(v8.groups[0]).toMatchObject({ groupId: 'oc-1', errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, topics: [] });
      const commit = await call(API.OffsetCommit, 8, {
        groupId: 'oc-1',
        generationIdOrMemberEpoch: -1,
        topics: [{ name: 'gt', partitions: [{ partitionIndex: 0, committedOffset: 99n, committedMetadata: '' }] }, { name: 'nope', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }] }],
      });
      expect(commit.topics.map((t: any) => t.partitions[0].errorCode)).toEqual([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      expect((await call(API.Heartbeat, 4, { groupId: 'oc-1', generationId: 0, memberId: 'm' })).errorCode).toBe(ErrorCode.NONE);
      expect((await call(API.SyncGroup, 4, { groupId: 'oc-1', generationId: 0, memberId: 'm', assignments: [] })).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    } finally {
      st.state = 'loaded';
    }
  });

  test('ListGroups, DescribeGroups, OffsetDelete and DeleteGroups at every version', async () => {
    for (const v of versions(API.ListGroups)) {
      const res = await call(API.ListGroups, v, { statesFilter: v >= 4 ? ['empty'] : [], typesFilter: v >= 5 ? ['Classic'] : [] });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      const oc = res.groups.find((g: any) => g.groupId === 'oc-0');
      expect(oc).toMatchObject({ protocolType: '' });
      if (v >= 4) {
        expect(oc.groupState).toBe('Empty');
        expect(res.groups.every((g: any) => g.groupState === 'Empty')).toBe(true);
        expect((await call(API.ListGroups, v, { statesFilter: ['Stable'] })).groups).toEqual([]);
      }
      if (v >= 5) {
        expect(oc.groupType).toBe('classic');
        expect((await call(API.ListGroups, v, { statesFilter: [], typesFilter: ['consumer'] })).groups).toEqual([]);
      }
    }
    for (const v of versions(API.DescribeGroups)) {
      const res = await call(API.DescribeGroups, v, { groups: ['oc-1', 'nobody'], includeAuthorizedOperations: v >= 3 });
      expect(res.groups.map((g: any) => [g.groupId, g.errorCode, g.groupState, g.protocolType])).toEqual([
        ['oc-1', ErrorCode.NONE, 'Empty', ''],
        ['nobody', ErrorCode.NONE, 'Dead', ''],
      ]);
      // Without an authorizer: every operation a GROUP supports (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS).
      if (v >= 3) expect(res.groups[0].authorizedOperations).toBe((1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11));
    }
    const od = await call(API.OffsetDelete, 0, {
      groupId: 'oc-2',
      topics: [
        { name: 'gt', partitions: [{ partitionIndex: 0 }, { partitionIndex: 1 }, { partitionIndex: 9 }] },
        { name: 'nope', partitions: [{ partitionIndex: 0 }] },
      ],
    });
    expect(od.errorCode).toBe(ErrorCode.NONE);
    expect(od.topics.map((t: any) => t.partitions.map((p: any) => p.errorCode))).toEqual([
      [ErrorCode.NONE, ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    const after = await call(API.OffsetFetch, 4, { groupId: 'oc-2', topics: [{ name: 'gt', partitionIndexes: [0] }] });
    expect(after.topics[0].partitions[0].committedOffset).toBe(-1n);
    expect((await call(API.OffsetDelete, 0, { groupId: 'no-group', topics: [] })).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);

    for (const v of versions(API.DeleteGroups)) {
      const res = await call(API.DeleteGroups, v, { groupsNames: [`oc-${v + 3}`, 'never-there', `oc-${v + 3}`] });
      expect(res.results.map((r: any) => [r.groupId, r.errorCode])).toEqual([
        [`oc-${v + 3}`, ErrorCode.NONE],
        ['never-there', ErrorCode.GROUP_ID_NOT_FOUND],
      ]);
      const fetched = await call(API.OffsetFetch, 4, { groupId: `oc-${v + 3}`, topics: null });
      expect(fetched.topics).toEqual([]);
      const d = await call(API.DescribeGroups, 0, { groups: [`oc-${v + 3}`] });
      expect(d.groups[0].groupState).toBe('Dead');
    }
  });

  test('ConsumerGroupHeartbeat and ConsumerGroupDescribe at every version, with OffsetCommit v9 member epochs and the classic APIs on a consumer group', async () => {
    const topicId = (await call(3, 12, { topics: [{ name: 'gt', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })).topics[0].topicId;
    for (const v of versions(API.ConsumerGroupHeartbeat)) {
      const groupId = `cg-${v}`;
      const join = await call(API.ConsumerGroupHeartbeat, v, {
        groupId,
        memberId: v >= 1 ? `member-${v}` : '',
        memberEpoch: 0,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: ['gt'],
        topicPartitions: [],
      });
      expect(join).toMatchObject({ errorCode: ErrorCode.NONE, errorMessage: null, memberEpoch: 1, heartbeatIntervalMs: 5000 });
      expect(join.assignment.topicPartitions).toEqual([{ topicId, partitions: [0, 1] }]);
      const memberId = join.memberId;
      if (v >= 1) expect(memberId).toBe(`member-${v}`);
      const again = await call(API.ConsumerGroupHeartbeat, v, { groupId, memberId, memberEpoch: 1, topicPartitions: join.assignment.topicPartitions });
      expect(again).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 1, assignment: null });
      const bad = await call(API.ConsumerGroupHeartbeat, v, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 1, subscribedTopicNames: ['gt'], topicPartitions: null });
      expect(bad).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'TopicPartitions must be empty when (re-)joining.', memberId: null });

      // OffsetCommit v9 carries the member epoch.
      const commit = (epoch: number) =>
        call(API.OffsetCommit, 9, { groupId, generationIdOrMemberEpoch: epoch, memberId, topics: [{ name: 'gt', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedMetadata: null }] }] });
      expect((await commit(2)).topics[0].partitions[0].errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
      expect((await commit(1)).topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
      const fetched = await call(API.OffsetFetch, 9, { groups: [{ groupId, memberId, memberEpoch: 1, topics: null }] });
      expect(fetched.groups[0].topics[0].partitions[0]).toMatchObject({ partitionIndex: 0, committedOffset: 7n });
      const stale = await call(API.OffsetFetch, 9, { groups: [{ groupId, memberId, memberEpoch: 0, topics: null }] });
      expect(stale.groups[0].errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);

      for (const dv of versions(API.ConsumerGroupDescribe)) {
        const d = await call(API.ConsumerGroupDescribe, dv, { groupIds: [groupId, 'nobody', ''], includeAuthorizedOperations: true });
        expect(d.groups.map((g: any) => [g.groupId, g.errorCode])).toEqual([
          [groupId, ErrorCode.NONE],
          ['nobody', ErrorCode.GROUP_ID_NOT_FOUND],
          ['', ErrorCode.INVALID_GROUP_ID],
        ]);
        expect(d.groups[0]).toMatchObject({ groupState: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'uniform' });
        expect(d.groups[0].members).toEqual([
          expect.objectContaining({
            memberId,
            memberEpoch: 1,
            clientId: 'group-test',
            subscribedTopicNames: ['gt'],
            subscribedTopicRegex: null,
            assignment: { topicPartitions: [{ topicId, topicName: 'gt', partitions: [0, 1] }] },
            targetAssignment: { topicPartitions: [{ topicId, topicName: 'gt', partitions: [0, 1] }] },
            memberType: dv >= 1 ? 1 : -1,
          }),
        ]);
        expect(d.groups[0].authorizedOperations).toBe((1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11));
      }

      // The classic APIs see a consumer group.
      const listed = await call(API.ListGroups, 5, { statesFilter: [], typesFilter: ['consumer'] });
      expect(listed.groups).toContainEqual({ groupId, protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' });
      const described = await call(API.DescribeGroups, 5, { groups: [groupId], includeAuthorizedOperations: false });
      expect(described.groups[0]).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Stable', protocolType: 'consumer' });
      expect((await call(API.DeleteGroups, 2, { groupsNames: [groupId] })).results[0].errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);

      const leave = await call(API.ConsumerGroupHeartbeat, v, { groupId, memberId, memberEpoch: -1 });
      expect(leave).toMatchObject({ errorCode: ErrorCode.NONE, memberId, memberEpoch: -1 });
      expect((await call(API.DeleteGroups, 2, { groupsNames: [groupId] })).results[0].errorCode).toBe(ErrorCode.NONE);
      const gone = await call(API.ConsumerGroupDescribe, 0, { groupIds: [groupId], includeAuthorizedOperations: false });
      expect(gone.groups[0].errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    }
  });
});
