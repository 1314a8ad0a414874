/**
 * librdkafka (node-rdkafka) consumer groups against the embedded broker: the C client's own
 * versions (JoinGroup v5, SyncGroup v3, OffsetCommit v7, OffsetFetch v7 with require_stable,
 * LeaveGroup v1), and cooperative rebalancing (partition.assignment.strategy=cooperative-sticky),
 * which is client-side but runs over the classic protocol: a second member takes half of the
 * partitions while the first keeps the other half (only the moved partitions are revoked), both
 * consume and commit, and the first takes everything back when the second leaves.
 */
import type { Admin, Kafka, Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from './helpers/kafkajs';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

const TOPIC = 'coop';
const GROUP = 'coop-group';
const STATIC_TOPIC = 'static';

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
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
  /** Current partitions of TOPIC, as the rebalance callbacks left them. */
  owned: Set<number>;
  /** Sizes of every revocation this member went through. */
  revocations: number[];
  seen: Map<string, number>;
}

function startMember(broker: TestBroker, clientId: string, extra: Record<string, unknown> = {}, group = GROUP): Promise<Member> {
  const m: Member = { consumer: undefined, owned: new Set(), revocations: [], seen: new Map() };
  const consumer = new RdKafka.KafkaConsumer(
    {
      'group.id': group,
      'client.id': clientId,
      'metadata.broker.list': broker.bootstrap,
      'partition.assignment.strategy': 'cooperative-sticky',
      ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'topic')),
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 200,
      'fetch.wait.max.ms': 100,
      'enable.auto.commit': true,
      'auto.commit.interval.ms': 100,
      'enable.partition.eof': false,
      rebalance_cb: true,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  m.consumer = consumer;
  consumer.on('rebalance', (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
    const mine = assignment.map((a) => a.partition);
    if (err.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) for (const p of mine) m.owned.add(p);
    else if (err.code === RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
      m.revocations.push(mine.length);
      for (const p of mine) m.owned.delete(p);
    }
  });
  consumer.on('data', (msg: { topic: string; partition: number; offset: number }) => {
    const k = `${msg.partition}/${msg.offset}`;
    m.seen.set(k, (m.seen.get(k) ?? 0) + 1);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${clientId} did not connect`)), 20_000);
    consumer.on('ready', () => {
      clearTimeout(timer);
      consumer.subscribe([(extra.topic as string | undefined) ?? TOPIC]);
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

const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);

describe('librdkafka consumer group, cooperative-sticky', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let a: Member | undefined;
  let b: Member | undefined;

  beforeAll(async () => {
    broker = await startTestBroker('embedded', {
      config: { 'offsets.topic.num.partitions': 2, 'group.initial.rebalance.delay.ms': 0, 'group.min.session.timeout.ms': 500 },
    });
    kafka = kafkaFor(broker, 'rdk-setup');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 4 }], waitForLeaders: true });
    await admin.createTopics({ topics: [{ topic: STATIC_TOPIC, numPartitions: 4 }], waitForLeaders: true });
  });

  afterAll(async () => {
    await stop(b);
    await stop(a);
    await disconnectAll(admin, producer);
    await broker?.close();
  });

  const produce = (n: number, tag: string) =>
    producer.send({ topic: TOPIC, messages: Array.from({ length: n }, (_, i) => ({ partition: i % 4, value: `${tag}-${i}` })) });
  const seenBy = (...ms: (Member | undefined)[]) => ms.reduce((n, m) => n + (m?.seen.size ?? 0), 0);

  test('join, incremental rebalance onto a second member, commits, and takeover on leave', async () => {
    a = await startMember(broker, 'rdk-a');
    await until('a owns every partition', () => a!.owned.size === 4);
    await produce(100, 'one');
    await until('a consumed 100', () => seenBy(a) >= 100);

    b = await startMember(broker, 'rdk-b');
    await until('the partitions are split 2/2', () => a!.owned.size === 2 && b!.owned.size === 2);
    expect(sorted(new Set([...a.owned, ...b.owned]))).toEqual([0, 1, 2, 3]);
    // Cooperative: `a` gave up only the partitions that moved, never all four at once.
    expect(a.revocations).toEqual([2]);
    const { groups } = await admin.describeGroups([GROUP]);
    expect(groups[0]).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'cooperative-sticky' });
    expect(groups[0].members.map((m) => m.clientId).sort()).toEqual(['rdk-a', 'rdk-b']);

    await produce(100, 'two');
    await until('the second 100 consumed', () => [0, 1, 2, 3].every((p) => Array.from({ length: 25 }, (_, i) => `${p}/${25 + i}`).every((k) => a!.seen.has(k) || b!.seen.has(k))));
    // Every new message was read by the member that owns its partition, exactly once.
    for (const [m, other] of [
      [a, b],
      [b, a],
    ] as const) {
      for (const [k, n] of m!.seen) {
        if (Number(k.split('/')[1]) < 25) continue;
        expect(n).toBe(1);
        expect(other!.seen.has(k)).toBe(false);
        expect(m!.owned.has(Number(k.split('/')[0]))).toBe(true);
      }
    }
    await until('auto-commits reached the coordinator', async () => {
      const [o] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
      return o.partitions.every((p) => p.offset === '50');
    });

    const fromB = sorted(b.owned);
    await stop(b); // LeaveGroup
    await until('a owns every partition again', () => a!.owned.size === 4);
    await produce(4, 'three');
    await until('a consumes every partition from the committed offsets', () => [0, 1, 2, 3].every((p) => a!.seen.has(`${p}/50`)));
    // b's partitions went on from b's commits: a never read what b had consumed.
    for (const p of fromB) for (let o = 25; o < 50; o++) expect(a.seen.has(`${p}/${o}`)).toBe(false);
  });

  test('static membership (group.instance.id): a restarted member takes its place back without a rebalance', async () => {
    const group = 'static-group';
    const conf = (instance: string) => ({ topic: STATIC_TOPIC, 'group.instance.id': instance, 'partition.assignment.strategy': 'range', 'session.timeout.ms': 10_000 });
    const s1 = await startMember(broker, 'static-1', conf('instance-1'), group);
    let s2 = await startMember(broker, 'static-2', conf('instance-2'), group);
    try {
      await until('static members split the partitions', () => s1.owned.size === 2 && s2.owned.size === 2);
      const before = await admin.describeGroups([group]);
      expect(before.groups[0].state).toBe('Stable');
      const s1Revocations = s1.revocations.length;
      const s2Partitions = sorted(s2.owned);
      // A static member closing does not leave the group (KIP-345): it keeps its slot until its
      // session times out.
      await stop(s2);
      const during = await admin.describeGroups([group]);
      expect(during.groups[0]).toMatchObject({ state: 'Stable' });
      expect(during.groups[0].members).toHaveLength(2);
      s2 = await startMember(broker, 'static-2', conf('instance-2'), group);
      await until('the restarted member gets its partitions back', () => s2.owned.size === 2);
      expect(sorted(s2.owned)).toEqual(s2Partitions);
      // No rebalance: the other member kept its partitions throughout.
      expect(s1.revocations.length).toBe(s1Revocations);
      expect(s1.owned.size).toBe(2);
      const after = await admin.describeGroups([group]);
      expect(after.groups[0].state).toBe('Stable');
      expect(after.groups[0].members).toHaveLength(2);
      const oldIds = before.groups[0].members.map((m) => m.memberId);
      const newIds = after.groups[0].members.map((m) => m.memberId);
      expect(newIds.filter((id) => oldIds.includes(id))).toHaveLength(1); // instance-2 has a new member id
      await producer.send({ topic: STATIC_TOPIC, messages: [0, 1, 2, 3].map((partition) => ({ partition, value: 'x' })) });
      await until('both members consume', () => s1.seen.size + s2.seen.size >= 4);
    } finally {
      await stop(s2);
      await stop(s1);
    }
  });
});
