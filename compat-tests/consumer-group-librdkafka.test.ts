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

function startMember(broker: TestBroker, clientId: string): Promise<Member> {
  const m: Member = { consumer: undefined, owned: new Set(), revocations: [], seen: new Map() };
  const consumer = new RdKafka.KafkaConsumer(
    {
      'group.id': GROUP,
      'client.id': clientId,
      'metadata.broker.list': broker.bootstrap,
      'partition.assignment.strategy': 'cooperative-sticky',
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
    const mine = assignment.filter((a) => a.topic === TOPIC).map((a) => a.partition);
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
      consumer.subscribe([TOPIC]);
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
});
