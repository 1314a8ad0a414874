/**
 * The KIP-848 consumer group protocol with a real client: librdkafka 2.12 (node-rdkafka) with
 * `group.protocol: 'consumer'`, which speaks ConsumerGroupHeartbeat v1 (client-generated member
 * ids), OffsetCommit v9 with member epochs and OffsetFetch v9. Two consumers share a 4-partition
 * topic (the server-side uniform assignor splits it 2/2, the first member revoking before the
 * second gets its partitions) and read every message exactly once with auto-commits; when one
 * leaves, the other takes all four partitions and continues from the commits; a consumer started
 * after the group emptied resumes from the committed offsets, and keeps going across a broker
 * restart (the coordinator reloads the group from __consumer_offsets with the same epochs). Static
 * members (group.instance.id) closing leave temporarily (epoch -2) and get their partitions back
 * under a new member id without a rebalance. A regex subscription follows topic creation.
 * ConsumerGroupDescribe is checked with krill's own client along the way.
 */
import type { Admin, Kafka, Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from './helpers/kafkajs';
import { connect, type BrokerConnection } from '../client/network-client';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

const TOPIC = 'kip848';
const GROUP = 'kip848-group';

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Member {
  consumer: any;
  /** Partitions of TOPIC owned now. */
  owned: Set<number>;
  /** "topic/partition" of every topic owned now. */
  ownedKeys: Set<string>;
  /** How many partitions each revocation took away. */
  revocations: number[];
  /** "partition/offset" -> how many times this member read it. */
  seen: Map<string, number>;
}

function startMember(broker: TestBroker, clientId: string, extra: Record<string, string> = {}, group = GROUP, topics: string[] = [TOPIC]): Promise<Member> {
  const m: Member = { consumer: undefined, owned: new Set(), ownedKeys: new Set(), revocations: [], seen: new Map() };
  const consumer = new RdKafka.KafkaConsumer(
    {
      ...extra,
      'group.id': group,
      'group.protocol': 'consumer',
      'client.id': clientId,
      'metadata.broker.list': broker.bootstrap,
      'fetch.wait.max.ms': 100,
      'enable.auto.commit': true,
      'auto.commit.interval.ms': 100,
      'enable.partition.eof': false,
      'topic.metadata.refresh.interval.ms': 1000,
      rebalance_cb: (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
        // The consumer protocol is incremental: partitions come and go a few at a time.
        if (err.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
          consumer.incrementalAssign(assignment);
          for (const a of assignment) {
            if (a.topic === TOPIC) m.owned.add(a.partition);
            m.ownedKeys.add(`${a.topic}/${a.partition}`);
          }
        } else if (err.code === RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
          consumer.incrementalUnassign(assignment);
          m.revocations.push(assignment.length);
          for (const a of assignment) {
            if (a.topic === TOPIC) m.owned.delete(a.partition);
            m.ownedKeys.delete(`${a.topic}/${a.partition}`);
          }
        }
      },
    },
    { 'auto.offset.reset': 'earliest' },
  );
  m.consumer = consumer;
  consumer.on('data', (msg: { topic: string; partition: number; offset: number }) => {
    const k = msg.topic === TOPIC ? `${msg.partition}/${msg.offset}` : `${msg.topic}/${msg.partition}/${msg.offset}`;
    m.seen.set(k, (m.seen.get(k) ?? 0) + 1);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${clientId} did not connect`)), 20_000);
    consumer.on('ready', () => {
      clearTimeout(timer);
      consumer.subscribe(topics);
      consumer.consume();
      resolve(m);
    });
    consumer.connect();
  });
}

function stop(m: Member | undefined): Promise<void> {
  if (!m?.consumer.isConnected()) return Promise.resolve();
  return new Promise((resolve) => m.consumer.disconnect(() => resolve()));
}

const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);
/** Every "partition/offset" key of offsets [from, to) on partitions 0-3. */
const keys = (from: number, to: number) => [0, 1, 2, 3].flatMap((p) => Array.from({ length: to - from }, (_, i) => `${p}/${from + i}`));

describe('librdkafka with group.protocol=consumer (KIP-848)', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const members: Member[] = [];
  /** ConsumerGroupDescribe v1 from krill's own client (the broker is the group's coordinator). */
  const describe = async (group = GROUP) => {
    const wire: BrokerConnection = await connect(broker.host, broker.port, { clientId: 'kip848-describe' });
    try {
      return (await wire.send('ConsumerGroupDescribe', 1, { groupIds: [group], includeAuthorizedOperations: false })).groups[0];
    } finally {
      await wire.close();
    }
  };

  beforeAll(async () => {
    broker = await startTestBroker('embedded', {
      config: {
        'offsets.topic.num.partitions': 2,
        'group.consumer.min.heartbeat.interval.ms': 100,
        'group.consumer.heartbeat.interval.ms': 250,
        'group.consumer.min.session.timeout.ms': 1000,
        'group.consumer.session.timeout.ms': 6000,
      },
    });
    kafka = kafkaFor(broker, 'kip848-setup');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }], waitForLeaders: true });
  });

  afterAll(async () => {
    for (const m of members.reverse()) await stop(m);
    await disconnectAll(admin, producer);
    await broker?.close();
  });

  /** `n` messages per partition. */
  const produce = (n: number, tag: string) =>
    producer.send({ topic: TOPIC, messages: Array.from({ length: 4 * n }, (_, i) => ({ partition: i % 4, value: `${tag}-${i}` })) });

  const committed = async () => {
    const [o] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    return new Map(o.partitions.map((p) => [p.partition, Number(p.offset)]));
  };

  test('two consumers share the partitions, consume exactly once with commits, and one takes over when the other leaves', async () => {
    const a = await startMember(broker, 'kip848-a');
    members.push(a);
    await until('a owns every partition', () => a.owned.size === 4);
    await produce(25, 'one');
    await until('a consumed the first 100', () => keys(0, 25).every((k) => a.seen.has(k)));

    const b = await startMember(broker, 'kip848-b');
    members.push(b);
    await until('the partitions are split 2/2', () => a.owned.size === 2 && b.owned.size === 2);
    expect(sorted([...a.owned, ...b.owned])).toEqual([0, 1, 2, 3]);

    const described = await describe();
    expect(described).toMatchObject({ errorCode: 0, groupState: 'Stable', assignorName: 'uniform' });
    expect(described.members.map((m) => m.clientId).sort()).toEqual(['kip848-a', 'kip848-b']);
    expect(described.members.every((m) => m.memberEpoch === described.groupEpoch)).toBe(true);

    await produce(25, 'two');
    await until('the second 100 consumed', () => keys(25, 50).every((k) => a.seen.has(k) || b.seen.has(k)));
    // Every message read exactly once, by the member owning its partition.
    for (const k of keys(0, 50)) expect((a.seen.get(k) ?? 0) + (b.seen.get(k) ?? 0)).toBe(1);
    for (const k of keys(25, 50)) {
      const p = Number(k.split('/')[0]);
      expect((a.owned.has(p) ? a : b).seen.has(k)).toBe(true);
    }
    await until('the commits reached offset 50 everywhere', async () => [...(await committed()).values()].every((o) => o === 50));

    const fromB = sorted(b.owned);
    await stop(b); // ConsumerGroupHeartbeat with epoch -1
    members.splice(members.indexOf(b), 1);
    await until('a owns every partition again', () => a.owned.size === 4);
    await produce(5, 'three');
    await until('a consumes b\'s partitions from the committed offsets', () => keys(50, 55).every((k) => a.seen.has(k)));
    for (const p of fromB) for (let o = 25; o < 50; o++) expect(a.seen.has(`${p}/${o}`)).toBe(false);
    for (const k of keys(0, 55)) expect((a.seen.get(k) ?? 0) + (b.seen.get(k) ?? 0)).toBe(1);
    await until('the commits reached offset 55 everywhere', async () => [...(await committed()).values()].every((o) => o === 55));
  });

  test('a consumer started after the group emptied resumes from the committed offsets', async () => {
    for (const m of members.splice(0)) await stop(m);
    await until('the group is empty', async () => (await describe()).groupState === 'Empty');
    await produce(5, 'four');
    const c = await startMember(broker, 'kip848-c');
    members.push(c);
    await until('c owns every partition', () => c.owned.size === 4);
    await until('c consumed the new messages', () => keys(55, 60).every((k) => c.seen.has(k)));
    // Nothing before the committed offsets was read again.
    expect(sorted(new Set([...c.seen.keys()].map((k) => Number(k.split('/')[1]))))).toEqual([55, 56, 57, 58, 59]);
    for (const n of c.seen.values()) expect(n).toBe(1);
  });

  test('the group survives a broker restart: reloaded with the same member and epochs, consumption continues', async () => {
    const c = members[0];
    const before = await describe();
    expect(before).toMatchObject({ errorCode: 0, groupState: 'Stable' });
    expect(before.members).toHaveLength(1);
    expect(before.members[0].memberType).toBe(1);
    await until('the commits reached offset 60 everywhere', async () => [...(await committed()).values()].every((o) => o === 60));
    await broker.restart();
    const after = await until('the group is loaded again', async () => {
      const d = await describe().catch(() => undefined);
      return d?.errorCode === 0 ? d : undefined;
    });
    expect(after.groupEpoch).toBe(before.groupEpoch);
    expect(after.assignmentEpoch).toBe(before.assignmentEpoch);
    expect(after.members.map((m) => [m.memberId, m.memberEpoch])).toEqual(before.members.map((m) => [m.memberId, m.memberEpoch]));
    await produce(5, 'five');
    await until('c consumes after the restart', () => keys(60, 65).every((k) => c.seen.has(k)));
    for (const n of c.seen.values()) expect(n).toBe(1);
    const last = await describe();
    expect(last.members.map((m) => m.memberId)).toEqual(before.members.map((m) => m.memberId));
  });

  test('static members (group.instance.id): a restarted member gets its partitions back without a rebalance', async () => {
    const group = 'kip848-static';
    const s1 = await startMember(broker, 'static-1', { 'group.instance.id': 'instance-1' }, group);
    members.push(s1);
    let s2 = await startMember(broker, 'static-2', { 'group.instance.id': 'instance-2' }, group);
    members.push(s2);
    await until('the static members split the partitions', () => s1.owned.size === 2 && s2.owned.size === 2);
    await until('the group is stable', async () => (await describe(group)).groupState === 'Stable');
    const before = await describe(group);
    expect(before.members.map((m) => m.instanceId).sort()).toEqual(['instance-1', 'instance-2']);
    const s2Partitions = sorted(s2.owned);
    const s1Revocations = s1.revocations.length;

    // Closing a static member is a temporary leave (epoch -2): it keeps its partitions.
    await stop(s2);
    members.splice(members.indexOf(s2), 1);
    const during = await until('instance-2 left temporarily', async () => {
      const d = await describe(group);
      return d.members.find((m) => m.instanceId === 'instance-2')?.memberEpoch === -2 ? d : undefined;
    });
    expect(during.groupEpoch).toBe(before.groupEpoch);

    s2 = await startMember(broker, 'static-2', { 'group.instance.id': 'instance-2' }, group);
    members.push(s2);
    await until('the restarted member gets its partitions back', () => s2.owned.size === 2);
    expect(sorted(s2.owned)).toEqual(s2Partitions);
    const after = await describe(group);
    expect(after.groupEpoch).toBe(before.groupEpoch); // no rebalance
    expect(s1.revocations.length).toBe(s1Revocations);
    expect(s1.owned.size).toBe(2);
    const newId = after.members.find((m) => m.instanceId === 'instance-2')!.memberId;
    expect(newId).not.toBe(before.members.find((m) => m.instanceId === 'instance-2')!.memberId);
  });

  test('a regex subscription (SubscribedTopicRegex) picks up a topic created later', async () => {
    const group = 'kip848-regex';
    await admin.createTopics({ topics: [{ topic: 're-a', numPartitions: 2 }], waitForLeaders: true });
    const r = await startMember(broker, 'regex-1', {}, group, ['^re-.*']);
    members.push(r);
    await until('the member gets re-a', () => r.ownedKeys.size === 2);
    const first = await describe(group);
    // librdkafka sends its regex subscriptions joined as one: each in parentheses, '|' between.
    expect(first.members[0].subscribedTopicRegex).toBe('(^re-.*)');
    await admin.createTopics({ topics: [{ topic: 're-b', numPartitions: 2 }], waitForLeaders: true });
    await until('the member gets re-b too', () => r.ownedKeys.size === 4);
    expect([...r.ownedKeys].sort()).toEqual(['re-a/0', 're-a/1', 're-b/0', 're-b/1']);
    const after = await describe(group);
    expect(after.groupEpoch).toBeGreaterThan(first.groupEpoch);
    expect(after.members[0].assignment.topicPartitions.map((t) => t.topicName).sort()).toEqual(['re-a', 're-b']);
    await producer.send({ topic: 're-b', messages: [{ partition: 0, value: 'x' }, { partition: 1, value: 'y' }] });
    await until('the member reads re-b', () => r.seen.has('re-b/0/0') && r.seen.has('re-b/1/0'));
  });
});
