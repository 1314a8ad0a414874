/**
 * A KIP-848 consumer group (librdkafka 2.12, node-rdkafka, `group.protocol: 'consumer'`) losing its
 * coordinator in the middle of a rebalance: a cluster of separate krill processes (a controller and
 * three brokers, compat-tests/replication/processes.ts), __consumer_offsets and the data topic with
 * replication factor 3 (min.insync.replicas 2), a producer writing with acks=all throughout. Two
 * members are stable; a third joins and, while the first two hold back the partitions they must
 * revoke (their rebalance callbacks wait, so the group stays Reconciling), the broker coordinating
 * the group (FindCoordinator) is SIGKILLed. The group moves to the new leader of its
 * __consumer_offsets partition, which loads it at the same epochs; the members find it, the
 * revocations go through, the rebalance completes (three members, disjoint, complete, balanced),
 * no partition is ever owned by two members at once, and every acknowledged message is read.
 */
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { fetchAll } from '../client/network-client';
import { connectTo, partitionsOf } from './replication/helpers';
import { startProcessCluster, type ProcessCluster } from './replication/processes';
import { describeGroup, findCoordinator, InProcessMember, Ownership, readRanges, StreamProducer, unread, until, waitStable } from './helpers/kip848';

jest.setTimeout(90_000);

const OVERRIDES = {
  'broker.heartbeat.interval.ms': '100',
  'broker.session.timeout.ms': '1500',
  'replica.lag.time.max.ms': '2000',
  'replica.fetch.wait.max.ms': '100',
  'replica.fetch.backoff.ms': '50',
  'auto.leader.rebalance.enable': 'false',
  'offsets.topic.num.partitions': '3',
  'offsets.topic.replication.factor': '3',
  'group.consumer.min.heartbeat.interval.ms': '100',
  'group.consumer.heartbeat.interval.ms': '250',
  'group.consumer.min.session.timeout.ms': '1000',
  // Long enough that no member is fenced while the group waits for its new coordinator.
  'group.consumer.session.timeout.ms': '20000',
};
const TOPIC = 'failover';
const GROUP = 'failover-group';
const PARTITIONS = 6;

describe('a KIP-848 group whose coordinator is SIGKILLed during a rebalance', () => {
  let cluster: ProcessCluster;
  let producer: Producer | undefined;
  let stream: StreamProducer | undefined;
  const members: InProcessMember[] = [];
  const release: (() => void)[] = [];

  beforeAll(async () => {
    cluster = await startProcessCluster(3, OVERRIDES);
  });
  afterAll(async () => {
    for (const r of release) r();
    await stream?.stop().catch(() => undefined);
    await Promise.all(members.map((m) => m.stop().catch(() => undefined)));
    await producer?.disconnect().catch(() => undefined);
    await cluster?.close();
  });

  test('the group reloads on the new coordinator and the rebalance completes; nothing acknowledged is lost', async () => {
    const servers = cluster.bootstrapServers();
    const live = () => servers.filter((_, id) => cluster.running(id));
    /** ConsumerGroupDescribe from whichever live broker coordinates the group now. */
    const describe = async () => {
      for (const s of live()) {
        const d = await describeGroup(s, GROUP);
        if (d?.errorCode === 0) return d;
      }
      return undefined;
    };

    const admin = await connectTo(servers[0]);
    try {
      const res = await admin.send('CreateTopics', undefined, {
        topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      expect(res.topics[0].errorCode).toBe(0);
    } finally {
      await admin.close();
    }
    await until('the topic has leaders everywhere', async () => (await partitionsOf(servers[0], TOPIC)).every((p) => p.leader >= 0 && p.isr.length === 3));
    producer = new Kafka({ clientId: 'kip848-failover', brokers: servers, logLevel: logLevel.NOTHING, connectionTimeout: 1000, requestTimeout: 5000, retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 } }).producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    stream = new StreamProducer(producer, TOPIC, PARTITIONS);
    await stream.progress(PARTITIONS * 5);

    const ownership = new Ownership(TOPIC);
    const bootstrap = servers.join(',');
    const start = async (clientId: string) => {
      const m = await InProcessMember.start({ bootstrap, group: GROUP, topic: TOPIC, clientId }, ownership);
      members.push(m);
      return m;
    };
    const a = await start('failover-a');
    const b = await start('failover-b');
    const stable = await waitStable(describe, [a, b], PARTITIONS);
    await stream.progress(PARTITIONS * 5);

    // The group's __consumer_offsets partition is fully replicated before its leader goes.
    const coordinator = (await findCoordinator(servers[0], GROUP)).nodeId;
    expect(coordinator).toBeGreaterThanOrEqual(0);
    await until('__consumer_offsets fully replicated', async () => (await partitionsOf(servers[(coordinator + 1) % 3], '__consumer_offsets')).every((p) => p.isr.length === 3));

    // a and b hold back what they must revoke: c's partitions stay withheld, the group Reconciling.
    const gate = new Promise<void>((r) => release.push(r));
    a.holdRevocations = gate;
    b.holdRevocations = gate;
    const c = await start('failover-c');
    await until('a and b were asked to revoke', () => a.heldRevocations > 0 && b.heldRevocations > 0);
    const reconciling = await until('the group is reconciling with three members', async () => {
      const d = await describe();
      return d?.groupState === 'Reconciling' && d.members.length === 3 ? d : undefined;
    });
    expect(reconciling.groupEpoch).toBeGreaterThan(stable.groupEpoch);
    expect(c.owned.size).toBe(0);

    const leadersAtKill = await partitionsOf(servers[coordinator], TOPIC);
    const killedAt = Date.now();
    await cluster.kill9(coordinator);
    const moved = await until(
      'another broker coordinates the group',
      async () => {
        for (const s of live()) {
          const f = await findCoordinator(s, GROUP).catch(() => undefined);
          if (f && f.errorCode === 0 && f.nodeId !== coordinator && f.nodeId >= 0) return f.nodeId;
        }
        return undefined;
      },
      30_000,
    );
    expect(cluster.running(moved)).toBe(true);
    // Loaded from __consumer_offsets: the same group epoch, target and members, still reconciling.
    const loaded = await until('the new coordinator serves the group', () => describeGroup(servers[moved], GROUP).then((d) => (d?.errorCode === 0 ? d : undefined)), 30_000);
    expect(loaded.groupEpoch).toBe(reconciling.groupEpoch);
    expect(loaded.assignmentEpoch).toBe(reconciling.assignmentEpoch);
    expect(loaded.members.map((m: any) => [m.clientId, m.memberId]).sort()).toEqual(reconciling.members.map((m: any) => [m.clientId, m.memberId]).sort());
    expect(loaded.groupState).toBe('Reconciling');

    for (const r of release.splice(0)) r();
    a.holdRevocations = undefined;
    b.holdRevocations = undefined;
    const done = await waitStable(describe, [a, b, c], PARTITIONS, 45_000);
    expect(done.members.map((m: any) => m.memberId).sort()).toEqual(reconciling.members.map((m: any) => m.memberId).sort());
    expect(ownership.violations).toEqual([]);

    await stream.progress(PARTITIONS * 5);
    await stream.stop();
    let left: string[] = [];
    try {
      await until('every acknowledged message read', () => (left = unread(stream!, members)).length === 0, 30_000);
    } catch (err) {
      const ps = [...new Set(left.map((v) => Number(v.split('/')[1].split('#')[0])))];
      const logs: string[] = [];
      for (const q of ps) {
        const leader = (await partitionsOf(live()[0], TOPIC))[q];
        const lc = await connectTo(servers[leader.leader]);
        try {
          const r = await fetchAll(lc, TOPIC, q);
          logs.push(`partition ${q} (leader at kill ${leadersAtKill[q].leader}, isr ${leadersAtKill[q].isr}; now ${leader.leader} epoch ${leader.leaderEpoch}): ${r.records.map((x) => `${x.offset}=${x.value?.toString()}`).join(' ')}`);
        } finally {
          await lc.close();
        }
      }
      const times = left.map((v) => `${v} acked ${stream!.ackedAt.get(v)! - killedAt} ms after the kill`);
      throw new Error(`${times.join(', ')} (${stream!.partialSends} partial sends)\n${logs.join('\n')}\n${(err as Error).message}: ${left.length} unread, e.g. ${left.slice(0, 5).join(' ')}\n${ps.map((q) => `partition ${q}: ${readRanges(members, q)}`).join('\n')}\n${ownership.history.join(' | ')}`);
    }
    expect(stream.acked.size).toBeGreaterThan(PARTITIONS * 15);
    expect(ownership.violations).toEqual([]);
  });
});
