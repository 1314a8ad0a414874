/**
 * The Controller in cluster mode (broker sessions) on a fake clock with no timers running:
 * registration and unfencing, session expiry and fencing, ISR and leadership moves, unclean
 * election, AlterPartition validation, controlled shutdown, preferred leader election; then
 * buildPartitionChange's election rules on their own.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { Logger } from '../../common/logger';
import { Controller, ElectionType } from './controller';
import { InMemoryMetadataLog } from '../metadata-log';
import { buildPartitionChange } from './partition-change-builder';

/** A cluster-mode controller on a fake clock, with no timers running. */
function cluster(opts: { unclean?: boolean } = {}) {
  let now = 1_000_000;
  const c = new Controller({
    nodeId: 3000,
    clusterId: 'test-cluster',
    log: new InMemoryMetadataLog(),
    logger: new Logger('test', 'error'),
    defaultNumPartitions: () => 1,
    defaultReplicationFactor: () => 3,
    validateTopicConfig: () => {},
    sessions: { sessionTimeoutMs: 1000 },
    staticUncleanLeaderElection: () => opts.unclean ?? false,
    now: () => now,
  });
  const epochs = new Map<number, bigint>();
  return {
    c,
    epochs,
    advance(ms: number) {
      now += ms;
    },
    async register(id: number, incarnation = `inc-${id}`) {
      const e = await c.registerBroker({ brokerId: id, incarnationId: incarnation, endpoints: [], rack: null, logDirs: [] });
      epochs.set(id, e);
      return e;
    },
    heartbeat(id: number, o: { wantFence?: boolean; wantShutDown?: boolean } = {}) {
      return c.heartbeat({
        brokerId: id,
        brokerEpoch: epochs.get(id)!,
        currentMetadataOffset: c.lastCommittedOffset,
        wantFence: o.wantFence ?? false,
        wantShutDown: o.wantShutDown ?? false,
      });
    },
    async up(...ids: number[]) {
      for (const id of ids) await this.register(id);
      for (const id of ids) await this.heartbeat(id);
    },
    part(topic: string, p = 0) {
      return c.image.partition(topic, p)!;
    },
  };
}

const topic = (name: string, numPartitions = 1, replicationFactor = 3) => ({ name, numPartitions, replicationFactor, assignments: [], configs: [] });

describe('Controller in cluster mode', () => {
  test('brokers register fenced and are unfenced by a heartbeat once caught up', async () => {
    const t = cluster();
    await t.register(0);
    expect(t.c.image.broker(0)!.fenced).toBe(true);
    // Behind its own registration: stays fenced.
    const behind = await t.c.heartbeat({ brokerId: 0, brokerEpoch: t.epochs.get(0)!, currentMetadataOffset: -1n, wantFence: false, wantShutDown: false });
    expect(behind).toMatchObject({ isCaughtUp: false, isFenced: true });
    expect(await t.heartbeat(0)).toMatchObject({ isCaughtUp: true, isFenced: false, shouldShutDown: false });
    expect(t.c.image.broker(0)!.fenced).toBe(false);
    await expect(t.c.heartbeat({ brokerId: 0, brokerEpoch: 99n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false })).rejects.toMatchObject({
      code: ErrorCode.STALE_BROKER_EPOCH,
    });
    await expect(t.c.heartbeat({ brokerId: 7, brokerEpoch: 1n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false })).rejects.toMatchObject({
      code: ErrorCode.BROKER_ID_NOT_REGISTERED,
    });
  });

  test('replication factor is bounded by the active brokers', async () => {
    const t = cluster();
    await t.up(0, 1);
    const [r] = await t.c.createTopics([topic('t', 1, 3)], false);
    expect(r.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
    await t.up(2);
    const [ok] = await t.c.createTopics([topic('t', 3, 3)], false);
    expect(ok.errorCode).toBe(ErrorCode.NONE);
    expect([0, 1, 2].map((p) => t.part('t', p).leader)).toEqual([0, 1, 2]);
  });

  test('a broker that misses heartbeats is fenced: out of every ISR, its leaderships move within the ISR', async () => {
    const t = cluster();
    await t.up(0, 1, 2);
    await t.c.createTopics([topic('t', 3, 3)], false);
    const before = t.part('t', 0);
    expect(before).toMatchObject({ leader: 0, isr: [0, 1, 2], leaderEpoch: 0, partitionEpoch: 0 });
    t.advance(600);
    await t.heartbeat(1);
    await t.heartbeat(2);
    t.advance(600); // broker 0: 1200 ms without a heartbeat
    expect(await t.c.fenceStaleBrokers()).toEqual([0]);
    expect(t.c.image.broker(0)!.fenced).toBe(true);
    expect(t.part('t', 0)).toMatchObject({ leader: 1, isr: [1, 2], leaderEpoch: 1, partitionEpoch: 1 });
    // A partition it only followed: ISR shrinks, leader and leader epoch stay.
    expect(t.part('t', 1)).toMatchObject({ leader: 1, isr: [1, 2], leaderEpoch: 0, partitionEpoch: 1 });
    // A live previous incarnation blocks a new one with the same id; an expired one does not.
    await expect(t.register(1, 'other')).rejects.toMatchObject({ code: ErrorCode.DUPLICATE_BROKER_REGISTRATION });
    await t.register(0, 'second-life');
    expect(t.c.image.broker(0)).toMatchObject({ fenced: true, incarnationId: 'second-life' });
    await t.heartbeat(0);
    // Unfenced, but not back in the ISR: only the leader's AlterPartition adds it.
    expect(t.part('t', 0).isr).toEqual([1, 2]);
  });

  test('the last ISR member is kept; the partition is offline until it returns (no unclean election)', async () => {
    const t = cluster();
    await t.up(0, 1);
    await t.c.createTopics([{ ...topic('solo', 1, 1), assignments: [], replicationFactor: 1 }], false);
    expect(t.part('solo')).toMatchObject({ leader: 0, isr: [0] });
    t.advance(1500);
    await t.heartbeat(1);
    await t.c.fenceStaleBrokers();
    expect(t.part('solo')).toMatchObject({ leader: -1, isr: [0], leaderEpoch: 1 });
    await t.register(0, 'again');
    await t.heartbeat(0);
    expect(t.part('solo')).toMatchObject({ leader: 0, isr: [0], leaderEpoch: 2 });
  });

  test('unclean election picks an active replica outside the ISR only when enabled', async () => {
    for (const unclean of [false, true]) {
      const t = cluster({ unclean });
      await t.up(0, 1);
      await t.c.createTopics([topic('u', 1, 2)], false);
      // Broker 1 falls out of the ISR (the leader says so), then the leader dies.
      const p = t.part('u');
      const r = await t.c.alterPartition(
        { brokerId: 0, brokerEpoch: t.epochs.get(0)!, topics: [{ topicName: null, topicId: p.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs: [{ brokerId: 0, brokerEpoch: -1n }] }] }] },
        3,
      );
      expect(r.topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, isr: [0], partitionEpoch: 1 });
      t.advance(1500);
      await t.heartbeat(1);
      await t.c.fenceStaleBrokers();
      expect(t.part('u')).toMatchObject(unclean ? { leader: 1, isr: [1] } : { leader: -1, isr: [0] });
    }
  });

  test('unclean.leader.election.enable: the topic\'s value, else the controller node\'s dynamic config, else the dynamic cluster default, else the static config', async () => {
    const SET = 0;
    const DELETE = 1;
    const broker = (resourceName: string, value: string | null) => [{ resourceName, incremental: true, ops: [{ name: 'unclean.leader.election.enable', op: value === null ? DELETE : SET, value }] }];
    const topicCfg = (name: string, value: string | null) => [{ topic: name, incremental: true, ops: [{ name: 'unclean.leader.election.enable', op: value === null ? DELETE : SET, value }] }];
    let staticValue = false;
    // A combined-mode controller whose static value the test changes.
    const c = new Controller({
      nodeId: 3000,
      clusterId: 'test-cluster',
      log: new InMemoryMetadataLog(),
      logger: new Logger('test', 'error'),
      defaultNumPartitions: () => 1,
      defaultReplicationFactor: () => 1,
      validateTopicConfig: () => {},
      staticUncleanLeaderElection: () => staticValue,
    });
    await c.registerBroker({ brokerId: 0, incarnationId: 'inc-0', endpoints: [], rack: null, logDirs: [] });
    expect((await c.createTopics([topic('u', 1, 1)], false))[0].errorCode).toBe(ErrorCode.NONE);
    const ok = (r: { errorCode: number }[]) => expect(r.map((x) => x.errorCode)).toEqual([ErrorCode.NONE]);
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(false);
    staticValue = true;
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(true);
    ok(await c.alterBrokerConfigs(broker('', 'false'), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(false);
    // Another broker's per-broker value is not the controller's: Kafka reads only its own node's.
    ok(await c.alterBrokerConfigs(broker('1', 'true'), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(false);
    ok(await c.alterBrokerConfigs(broker('3000', 'TRUE'), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(true);
    ok(await c.alterTopicConfigs(topicCfg('u', 'false'), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(false);
    ok(await c.alterTopicConfigs(topicCfg('u', null), false));
    ok(await c.alterBrokerConfigs(broker('3000', null), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(false);
    ok(await c.alterBrokerConfigs(broker('', null), false));
    expect(c.uncleanLeaderElectionEnabled('u')).toBe(true);
    await c.close();

    // And the election follows it: broker 1 out of the ISR, the leader fenced; the controller
    // node's dynamic value (set after the topic was created) allows the unclean election.
    const u = cluster({ unclean: false });
    await u.up(0, 1);
    await u.c.createTopics([topic('v', 1, 2)], false);
    ok(await u.c.alterBrokerConfigs(broker('3000', 'true'), false));
    const p = u.part('v');
    await u.c.alterPartition(
      { brokerId: 0, brokerEpoch: u.epochs.get(0)!, topics: [{ topicName: null, topicId: p.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs: [{ brokerId: 0, brokerEpoch: -1n }] }] }] },
      3,
    );
    expect(u.part('v').isr).toEqual([0]);
    u.advance(1500);
    await u.heartbeat(1);
    await u.c.fenceStaleBrokers();
    expect(u.part('v')).toMatchObject({ leader: 1, isr: [1] });
    await u.c.close();
  });

  test('AlterPartition: stale leader epoch or partition epoch, non-leader, bad ISR, ineligible replicas are rejected and change nothing', async () => {
    const t = cluster();
    await t.up(0, 1, 2);
    await t.c.createTopics([topic('a', 1, 3)], false);
    const p = t.part('a');
    const send = (brokerId: number, o: { leaderEpoch?: number; partitionEpoch?: number; isr?: number[]; epochs?: bigint[] }, version = 3) =>
      t.c.alterPartition(
        {
          brokerId,
          brokerEpoch: t.epochs.get(brokerId)!,
          topics: [
            {
              topicName: version < 2 ? 'a' : null,
              topicId: version >= 2 ? p.topicId : null,
              partitions: [
                {
                  partitionIndex: 0,
                  leaderEpoch: o.leaderEpoch ?? p.leaderEpoch,
                  partitionEpoch: o.partitionEpoch ?? p.partitionEpoch,
                  leaderRecoveryState: 0,
                  newIsrWithEpochs: (o.isr ?? [0, 1]).map((id, i) => ({ brokerId: id, brokerEpoch: o.epochs?.[i] ?? -1n })),
                },
              ],
            },
          ],
        },
        version,
      );
    const code = async (r: ReturnType<typeof send>) => (await r).topics[0].partitions[0].errorCode;
    const log = t.c.lastCommittedOffset;
    expect(await code(send(0, { leaderEpoch: -1 }))).toBe(ErrorCode.FENCED_LEADER_EPOCH);
    expect(await code(send(0, { leaderEpoch: 5 }))).toBe(ErrorCode.NOT_CONTROLLER);
    expect(await code(send(0, { partitionEpoch: -1 }))).toBe(ErrorCode.INVALID_UPDATE_VERSION);
    expect(await code(send(1, {}))).toBe(ErrorCode.INVALID_REQUEST);
    expect(await code(send(0, { isr: [1, 2] }))).toBe(ErrorCode.INVALID_REQUEST);
    expect(await code(send(0, { isr: [0, 5] }))).toBe(ErrorCode.INVALID_REQUEST);
    expect(await code(send(0, { isr: [0, 1], epochs: [-1n, 42n] }))).toBe(ErrorCode.INELIGIBLE_REPLICA);
    expect(await code(send(0, { isr: [0, 1], epochs: [-1n, 42n] }, 1))).toBe(ErrorCode.OPERATION_NOT_ATTEMPTED);
    expect((await t.c.alterPartition({ brokerId: 0, brokerEpoch: 77n, topics: [] }, 3)).errorCode).toBe(ErrorCode.STALE_BROKER_EPOCH);
    const unknown = await t.c.alterPartition({ brokerId: 0, brokerEpoch: t.epochs.get(0)!, topics: [{ topicName: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partitionIndex: 0, leaderEpoch: 0, partitionEpoch: 0, leaderRecoveryState: 0, newIsrWithEpochs: [] }] }] }, 2);
    expect(unknown.topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
    expect(t.c.lastCommittedOffset).toBe(log);
    expect(t.part('a')).toMatchObject({ isr: [0, 1, 2], partitionEpoch: 0 });

    // A valid shrink, by name (v1) and then by id: the partition epoch moves each time.
    const ok = await send(0, { isr: [0, 1] }, 1);
    expect(ok.topics[0]).toMatchObject({ topicName: 'a', partitions: [{ errorCode: 0, leaderId: 0, leaderEpoch: 0, isr: [0, 1], partitionEpoch: 1 }] });
    // Replaying the same request (now a stale partition epoch) is rejected.
    expect(await code(send(0, { isr: [0, 1] }))).toBe(ErrorCode.INVALID_UPDATE_VERSION);
    // A member in controlled shutdown is ineligible.
    await t.heartbeat(2, { wantShutDown: true });
    expect(await code(send(0, { isr: [0, 1, 2], partitionEpoch: 1 }))).toBe(ErrorCode.INELIGIBLE_REPLICA);
  });

  test('controlled shutdown moves leaderships first, then lets the broker go once the others have seen it', async () => {
    const t = cluster();
    await t.up(0, 1, 2);
    await t.c.createTopics([topic('c', 3, 3)], false);
    expect(t.part('c', 1).leader).toBe(1);
    const first = await t.heartbeat(1, { wantShutDown: true });
    expect(first).toMatchObject({ isFenced: false, inControlledShutdown: true, shouldShutDown: false });
    expect(t.part('c', 1)).toMatchObject({ leader: 2, isr: [2, 0] });
    expect(t.part('c', 0).isr).toEqual([0, 2]);
    // The others have not reported the new metadata yet.
    expect((await t.heartbeat(1, { wantShutDown: true })).shouldShutDown).toBe(false);
    await t.heartbeat(0);
    await t.heartbeat(2);
    const done = await t.heartbeat(1, { wantShutDown: true });
    expect(done).toMatchObject({ isFenced: true, shouldShutDown: true });
  });

  test('ElectLeaders and the periodic balance restore preferred leaders', async () => {
    const t = cluster();
    await t.up(0, 1, 2);
    await t.c.createTopics([topic('e', 3, 3)], false);
    await t.heartbeat(0, { wantShutDown: true });
    await t.heartbeat(1);
    await t.heartbeat(2);
    expect((await t.heartbeat(0, { wantShutDown: true })).shouldShutDown).toBe(true);
    expect(t.part('e', 0).leader).not.toBe(0);
    // Broker 0 comes back (new incarnation) and its followers let it back into the ISR.
    await t.register(0, 'back');
    await t.heartbeat(0);
    const p0 = t.part('e', 0);
    expect(
      (await t.c.electLeaders(ElectionType.PREFERRED, [{ topic: 'e', partitions: [0, 1, 7] }]))[0].partitionResult.map((r) => r.errorCode),
    ).toEqual([ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    await t.c.alterPartition(
      {
        brokerId: p0.leader,
        brokerEpoch: t.epochs.get(p0.leader)!,
        topics: [{ topicName: null, topicId: p0.topicId, partitions: [{ partitionIndex: 0, leaderEpoch: p0.leaderEpoch, partitionEpoch: p0.partitionEpoch, leaderRecoveryState: 0, newIsrWithEpochs: [...p0.isr, 0].map((b) => ({ brokerId: b, brokerEpoch: -1n })) }] }],
      },
      3,
    );
    const [res] = await t.c.electLeaders(ElectionType.PREFERRED, [{ topic: 'e', partitions: [0] }]);
    expect(res.partitionResult[0].errorCode).toBe(ErrorCode.NONE);
    expect(t.part('e', 0).leader).toBe(0);
    // Nothing left to do: a null topic list reports no partitions.
    expect((await t.c.electLeaders(ElectionType.PREFERRED, null)).flatMap((r) => r.partitionResult)).toEqual([]);
    expect(await t.c.balancePartitionLeaders()).toBe(0);
    await expect(t.c.electLeaders(9, null)).rejects.toBeInstanceOf(KafkaError);
  });
});

describe('buildPartitionChange', () => {
  const base = {
    topicId: 't',
    topic: 'x',
    partition: 0,
    replicas: [0, 1, 2],
    isr: [0, 1, 2],
    leader: 0,
    leaderEpoch: 3,
    partitionEpoch: 7,
    leaderRecoveryState: 0,
    addingReplicas: [],
    removingReplicas: [],
  };
  test('no change is no record', () => {
    expect(buildPartitionChange(base, { isAcceptableLeader: () => true })).toBeUndefined();
    expect(buildPartitionChange(base, { targetIsr: [2, 1, 0], isAcceptableLeader: () => true })).toBeUndefined();
  });
  test('the leader stays while acceptable; otherwise the first acceptable ISR member leads', () => {
    expect(buildPartitionChange(base, { targetIsr: [0, 2], isAcceptableLeader: () => true })).toMatchObject({ isr: [0, 2], leader: -2 });
    expect(buildPartitionChange(base, { targetIsr: [1, 2], isAcceptableLeader: (r) => r !== 0 })).toMatchObject({ isr: [1, 2], leader: 1 });
    expect(buildPartitionChange({ ...base, leader: 2 }, { isAcceptableLeader: () => true, election: 'PREFERRED' })).toMatchObject({ leader: 0, isr: null });
  });
});
