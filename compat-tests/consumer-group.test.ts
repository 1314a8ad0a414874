/**
 * Consumer groups with real KafkaJS 2.2.4 consumers (issue 3): partition assignment across members,
 * leave and crash rebalances, committed offsets that resume without loss, eachMessage/eachBatch,
 * seek, pause/resume, the admin group APIs, bad input answered with Kafka's error codes, and
 * committed offsets plus group metadata surviving a clean restart and a kill -9 of the broker
 * (the CLI as a child process).
 *
 * Timeouts are small on purpose (session 1.5-6 s, heartbeat 200 ms, fetch wait 100 ms,
 * group.initial.rebalance.delay.ms 0) so that every rebalance happens in well under a second,
 * except the ones that must wait for a session timeout.
 */
import { AssignerProtocol, type Admin, type Consumer, type ConsumerConfig, type EachBatchPayload, type Kafka, type Producer } from 'kafkajs';
import { ErrorCode } from '../protocol/errors';
import { Writer } from '../protocol/primitives/writer';
import { writeConsumerProtocolSubscription } from '../protocol/generated/message-data/consumer-protocol-subscription';
import { connect, type BrokerConnection } from '../client/network-client';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from './helpers/kafkajs';

const GROUP_CONFIG = {
  'auto.create.topics.enable': false,
  'offsets.topic.num.partitions': 3,
  'group.initial.rebalance.delay.ms': 0,
  'group.min.session.timeout.ms': 500,
};

/** Bounded wait for a condition that other events make true (consumers, timers in the broker). */
async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Tracked {
  consumer: Consumer;
  /** The latest assignment (GROUP_JOIN), as topic -> partitions. */
  assignment: Record<string, number[]>;
  memberId: string;
  joins: number;
  /** `${topic}/${partition}/${offset}` -> times seen. */
  seen: Map<string, number>;
}

function track(consumer: Consumer): Tracked {
  const t: Tracked = { consumer, assignment: {}, memberId: '', joins: 0, seen: new Map() };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    t.assignment = e.payload.memberAssignment;
    t.memberId = e.payload.memberId;
    t.joins++;
  });
  return t;
}

function consumerConfig(groupId: string, extra: Partial<ConsumerConfig> = {}): ConsumerConfig {
  return {
    groupId,
    sessionTimeout: 6000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 200,
    maxWaitTimeInMs: 100,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 },
    ...extra,
  };
}

async function startTracked(kafka: Kafka, groupId: string, topic: string, extra: Partial<ConsumerConfig> = {}, fromBeginning = true): Promise<Tracked> {
  const consumer = kafka.consumer(consumerConfig(groupId, extra));
  const t = track(consumer);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  await consumer.run({
    eachMessage: async ({ topic: tp, partition, message }) => {
      const k = `${tp}/${partition}/${message.offset}`;
      t.seen.set(k, (t.seen.get(k) ?? 0) + 1);
    },
  });
  return t;
}

/** Whether the trackers together saw offsets [from, to) of every partition of a topic. */
function sawRange(ts: Tracked[], topic: string, partitions: number, from: number, to: number): boolean {
  for (let p = 0; p < partitions; p++) {
    for (let o = from; o < to; o++) if (!ts.some((t) => t.seen.has(`${topic}/${p}/${o}`))) return false;
  }
  return true;
}

const partitionsOf = (t: Tracked, topic: string): number[] => [...(t.assignment[topic] ?? [])].sort((a, b) => a - b);

/** Describes the group; assignments decoded from the consumer protocol. */
async function describeGroup(admin: Admin, groupId: string) {
  const { groups } = await admin.describeGroups([groupId]);
  const g = groups[0];
  return {
    ...g,
    assignments: g.members.map((m) => ({
      memberId: m.memberId,
      clientId: m.clientId,
      partitions: g.state === 'Stable' ? (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment ?? {}) : {},
    })),
  };
}

/** Waits until the group is Stable with `n` members whose assignments split `partitions` exactly. */
async function stableWith(admin: Admin, groupId: string, topic: string, members: Tracked[], partitions: number) {
  return until(`group ${groupId} stable with ${members.length} members`, async () => {
    const d = await describeGroup(admin, groupId);
    if (d.state !== 'Stable' || d.members.length !== members.length) return false;
    const ids = new Set(d.members.map((m) => m.memberId));
    if (!members.every((t) => ids.has(t.memberId))) return false;
    // Each consumer's own view (its last GROUP_JOIN) must match what the coordinator stored.
    for (const t of members) {
      const stored = (d.assignments.find((a) => a.memberId === t.memberId)!.partitions[topic] ?? []).slice().sort((a, b) => a - b);
      if (JSON.stringify(stored) !== JSON.stringify(partitionsOf(t, topic))) return false;
    }
    const all = members.flatMap((t) => partitionsOf(t, topic)).sort((a, b) => a - b);
    if (JSON.stringify(all) !== JSON.stringify(Array.from({ length: partitions }, (_, i) => i))) return false;
    return d;
  });
}

async function produceN(producer: Producer, topic: string, n: number, tag: string, partitions: number): Promise<void> {
  await producer.send({
    topic,
    messages: Array.from({ length: n }, (_, i) => ({ partition: i % partitions, key: `${tag}-${i}`, value: `${tag}-${i}` })),
  });
}

describe('KafkaJS consumer groups (embedded broker)', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const consumers: Tracked[] = [];

  beforeAll(async () => {
    broker = await startTestBroker('embedded', { config: GROUP_CONFIG });
    kafka = kafkaFor(broker, 'cg');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    await admin.createTopics({ topics: [{ topic: 'six', numPartitions: 6 }, { topic: 'resume', numPartitions: 2 }, { topic: 'admin', numPartitions: 3 }], waitForLeaders: true });
  });

  afterAll(async () => {
    await disconnectAll(...consumers.map((c) => c.consumer), admin, producer);
    await broker?.close();
  });

  test('3 consumers on a 6-partition topic: every partition assigned exactly once, every message consumed once', async () => {
    for (const id of ['a', 'b', 'c']) consumers.push(await startTracked(kafkaFor(broker, `member-${id}`), 'six-group', 'six'));
    await stableWith(admin, 'six-group', 'six', consumers, 6);
    for (const t of consumers) expect(partitionsOf(t, 'six')).toHaveLength(2);
    await produceN(producer, 'six', 600, 'first', 6);
    await until('600 messages consumed', () => consumers.reduce((n, t) => n + t.seen.size, 0) >= 600);
    const all = consumers.flatMap((t) => [...t.seen.entries()]);
    expect(all).toHaveLength(600);
    expect(all.every(([, times]) => times === 1)).toBe(true);
    // Each message came from a partition its consumer owns.
    for (const t of consumers) {
      for (const k of t.seen.keys()) expect(partitionsOf(t, 'six')).toContain(Number(k.split('/')[1]));
    }
  });

  test('a member leaves: the other two take over its partitions and consume them', async () => {
    const leaving = consumers.pop()!;
    const left = partitionsOf(leaving, 'six');
    await leaving.consumer.disconnect(); // LeaveGroup
    await stableWith(admin, 'six-group', 'six', consumers, 6);
    const owners = consumers.flatMap((t) => partitionsOf(t, 'six'));
    for (const p of left) expect(owners).toContain(p);
    await produceN(producer, 'six', 60, 'second', 6);
    await until('the 60 new messages consumed', () => sawRange(consumers, 'six', 6, 100, 110));
    // The leaver's partitions went on from where it had committed: nothing it consumed is read again.
    for (const t of consumers) for (const [k, times] of t.seen) if (left.includes(Number(k.split('/')[1]))) expect([k, times]).toEqual([k, 1]);
    expect(consumers.flatMap((t) => [...t.seen.keys()]).filter((k) => left.includes(Number(k.split('/')[1])))).toHaveLength(20);
    // Committed offsets cover everything consumed (the leaver committed before it left).
    await until('offsets committed', async () => {
      const [o] = await admin.fetchOffsets({ groupId: 'six-group', topics: ['six'] });
      return o.partitions.every((p) => p.offset === '110') && o;
    });
  });

  test('a member killed without leaving: after its session timeout the group rebalances onto the survivor', async () => {
    const sessionTimeout = 1500;
    const survivor = await startTracked(kafkaFor(broker, 'survivor'), 'crash-group', 'six', { sessionTimeout });
    const victim = await startTracked(kafkaFor(broker, 'victim'), 'crash-group', 'six', { sessionTimeout, retry: { retries: 0, restartOnFailure: async () => false } });
    consumers.push(survivor, victim);
    await stableWith(admin, 'crash-group', 'six', [survivor, victim], 6);
    const survivorJoins = survivor.joins;
    // The victim's process "dies": every request from it is dropped with its connection, so the
    // coordinator never hears from it again (no LeaveGroup, no heartbeat).
    const killed = broker.embedded!.control.intercept({ clientId: 'victim' }, 'close');
    const t0 = Date.now();
    try {
      const d = await stableWith(admin, 'crash-group', 'six', [survivor], 6);
      expect(d.members).toHaveLength(1);
      expect(survivor.joins).toBeGreaterThan(survivorJoins);
      // Not before the victim's session ran out (heartbeats every 200 ms kept it alive until then).
      expect(Date.now() - t0).toBeGreaterThanOrEqual(sessionTimeout - 300);
      await produceN(producer, 'six', 12, 'after-crash', 6);
      await until('the survivor consumes every partition', () => sawRange([survivor], 'six', 6, 110, 112));
    } finally {
      killed.remove();
    }
  });

  test('committed offsets resume with no loss or duplicate (eachBatch), seek and pause/resume', async () => {
    await produceN(producer, 'resume', 100, 'r1', 2);
    const batchConsumer = async (seen: Map<string, number>) => {
      const c = kafka.consumer(consumerConfig('resume-group'));
      await c.connect();
      await c.subscribe({ topic: 'resume', fromBeginning: true });
      await c.run({
        eachBatch: async ({ batch, resolveOffset, heartbeat }: EachBatchPayload) => {
          for (const m of batch.messages) {
            const k = `${batch.partition}/${m.offset}`;
            seen.set(k, (seen.get(k) ?? 0) + 1);
            resolveOffset(m.offset);
          }
          await heartbeat();
        },
      });
      return c;
    };
    const first = new Map<string, number>();
    const c1 = await batchConsumer(first);
    await until('first 100', () => first.size >= 100);
    await c1.disconnect(); // commits what it resolved, then leaves
    const [committed] = await admin.fetchOffsets({ groupId: 'resume-group', topics: ['resume'] });
    expect(committed.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
      [0, '50'],
      [1, '50'],
    ]);
    await produceN(producer, 'resume', 40, 'r2', 2);
    const second = new Map<string, number>();
    const c2 = await batchConsumer(second);
    await until('the 40 new messages', () => second.size >= 40);
    expect([...second.keys()].sort()).toEqual(
      [...Array.from({ length: 20 }, (_, i) => `0/${50 + i}`), ...Array.from({ length: 20 }, (_, i) => `1/${50 + i}`)].sort(),
    );
    expect([...second.values()].every((n) => n === 1)).toBe(true);

    // seek: partition 0 is read again from offset 10.
    c2.seek({ topic: 'resume', partition: 0, offset: '10' });
    await until('partition 0 re-read from 10', () => (second.get('0/10') ?? 0) >= 1 && (second.get('0/69') ?? 0) >= 2);
    expect(second.has('0/9')).toBe(false);

    // pause/resume: messages to a paused partition wait; the other partition keeps flowing.
    c2.pause([{ topic: 'resume', partitions: [1] }]);
    await producer.send({ topic: 'resume', messages: [{ partition: 1, value: 'paused' }, { partition: 0, value: 'flowing' }] });
    await until('partition 0 keeps flowing', () => second.has('0/70'));
    expect(second.has('1/70')).toBe(false);
    expect(c2.paused()).toEqual([{ topic: 'resume', partitions: [1] }]);
    c2.resume([{ topic: 'resume', partitions: [1] }]);
    await until('partition 1 resumes', () => second.has('1/70'));
    await c2.disconnect();
    const [after] = await admin.fetchOffsets({ groupId: 'resume-group', topics: ['resume'] });
    expect(after.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
      [0, '71'],
      [1, '71'],
    ]);
  });

  test('admin: describeGroups, listGroups, fetchOffsets, resetOffsets, deleteGroups', async () => {
    await produceN(producer, 'admin', 30, 'adm', 3);
    const t = await startTracked(kafkaFor(broker, 'admin-member'), 'admin-group', 'admin');
    consumers.push(t);
    const d = await stableWith(admin, 'admin-group', 'admin', [t], 3);
    expect(d).toMatchObject({ groupId: 'admin-group', state: 'Stable', protocolType: 'consumer', protocol: 'RoundRobinAssigner' });
    expect(d.members[0]).toMatchObject({ memberId: t.memberId, clientId: 'admin-member', clientHost: '/127.0.0.1' });
    const listed = await admin.listGroups();
    expect(listed.groups).toEqual(expect.arrayContaining([{ groupId: 'admin-group', protocolType: 'consumer' }, { groupId: 'six-group', protocolType: 'consumer' }]));
    await until('30 consumed', () => t.seen.size >= 30);
    await until('offsets committed', async () => {
      const [o] = await admin.fetchOffsets({ groupId: 'admin-group', topics: ['admin'] });
      return o.partitions.every((p) => p.offset === '10');
    });
    // A running group cannot be reset or deleted.
    await expect(admin.resetOffsets({ groupId: 'admin-group', topic: 'admin', earliest: true })).rejects.toThrow(/no running instances/);
    await expect(admin.deleteGroups(['admin-group'])).rejects.toMatchObject({ groups: [expect.objectContaining({ groupId: 'admin-group', errorCode: ErrorCode.NON_EMPTY_GROUP })] });
    consumers.splice(consumers.indexOf(t), 1);
    await t.consumer.disconnect();
    expect((await describeGroup(admin, 'admin-group')).state).toBe('Empty');
    await admin.resetOffsets({ groupId: 'admin-group', topic: 'admin', earliest: true });
    // KafkaJS commits the "earliest" sentinel itself (-2), as it does against Kafka, which stores
    // any offset; a consumer takes a negative committed offset as "none" and starts where its
    // policy says (from the beginning here).
    const [reset] = await admin.fetchOffsets({ groupId: 'admin-group', topics: ['admin'] });
    expect(reset.partitions.map((p) => p.offset)).toEqual(['-2', '-2', '-2']);
    const again = await startTracked(kafkaFor(broker, 'admin-member'), 'admin-group', 'admin');
    consumers.push(again);
    await until('the re-read from the beginning', () => again.seen.size >= 30);
    consumers.splice(consumers.indexOf(again), 1);
    await again.consumer.disconnect();
    expect(await admin.deleteGroups(['admin-group'])).toEqual([{ groupId: 'admin-group', errorCode: ErrorCode.NONE }]);
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain('admin-group');
    expect((await describeGroup(admin, 'admin-group')).state).toBe('Dead');
    const [gone] = await admin.fetchOffsets({ groupId: 'admin-group', topics: ['admin'] });
    expect(gone.partitions.map((p) => p.offset)).toEqual(['-1', '-1', '-1']);
  });

  test("kafka-python 2.0.2's fixed group versions: FindCoordinator v0, JoinGroup v2, SyncGroup v1, OffsetCommit v2, OffsetFetch v1, Heartbeat v1, LeaveGroup v1", async () => {
    const conn = await connect(broker.host, broker.port, { clientId: 'kafka-python', negotiate: false });
    try {
      const fc = await conn.send('FindCoordinator', 0, { key: 'py-group' });
      expect(fc).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: 1, host: broker.host, port: broker.port });
      const w = new Writer();
      w.int16(0);
      writeConsumerProtocolSubscription(w, 0, { topics: ['resume'], userData: null });
      // v2: no MEMBER_ID_REQUIRED round, the member id comes with the first response.
      const join = await conn.send('JoinGroup', 2, {
        groupId: 'py-group',
        sessionTimeoutMs: 6000,
        rebalanceTimeoutMs: 6000,
        memberId: '',
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: w.toBuffer() }],
      });
      expect(join).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1, protocolName: 'range' });
      expect(join.leader).toBe(join.memberId);
      expect(join.memberId).toMatch(/^kafka-python-/);
      const sync = await conn.send('SyncGroup', 1, {
        groupId: 'py-group',
        generationId: 1,
        memberId: join.memberId,
        assignments: [{ memberId: join.memberId, assignment: Buffer.from('assigned') }],
      });
      expect([sync.errorCode, Buffer.from(sync.assignment).toString()]).toEqual([ErrorCode.NONE, 'assigned']);
      const commit = await conn.send('OffsetCommit', 2, {
        groupId: 'py-group',
        generationIdOrMemberEpoch: 1,
        memberId: join.memberId,
        retentionTimeMs: -1n,
        topics: [{ name: 'resume', partitions: [{ partitionIndex: 1, committedOffset: 17n, committedMetadata: 'py' }] }],
      });
      expect(commit.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
      const fetched = await conn.send('OffsetFetch', 1, { groupId: 'py-group', topics: [{ name: 'resume', partitionIndexes: [0, 1] }] });
      expect(fetched.topics[0].partitions.map((p) => [p.partitionIndex, p.committedOffset, p.metadata, p.errorCode])).toEqual([
        [0, -1n, '', ErrorCode.NONE],
        [1, 17n, 'py', ErrorCode.NONE],
      ]);
      expect((await conn.send('Heartbeat', 1, { groupId: 'py-group', generationId: 1, memberId: join.memberId })).errorCode).toBe(ErrorCode.NONE);
      expect((await conn.send('LeaveGroup', 1, { groupId: 'py-group', memberId: join.memberId })).errorCode).toBe(ErrorCode.NONE);
      expect((await describeGroup(admin, 'py-group')).state).toBe('Empty');
    } finally {
      await conn.close();
    }
  });

  test("bad input gets Kafka's error codes and leaves the group as it was", async () => {
    const g = 'six-group';
    const before = await describeGroup(admin, g);
    expect(before.state).toBe('Stable');
    const joinsBefore = consumers.filter((t) => before.members.some((m) => m.memberId === t.memberId)).map((t) => t.joins);
    const [offsetsBefore] = await admin.fetchOffsets({ groupId: g, topics: ['six'] });
    const conn: BrokerConnection = await connect(broker.host, broker.port, { clientId: 'intruder' });
    try {
      const w = new Writer();
      w.int16(0);
      writeConsumerProtocolSubscription(w, 0, { topics: ['six'], userData: null });
      // A JoinGroup with a protocol type the group does not use.
      const join = await conn.send('JoinGroup', 5, {
        groupId: g,
        sessionTimeoutMs: 6000,
        rebalanceTimeoutMs: 6000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'not-consumer',
        protocols: [{ name: 'RoundRobinAssigner', metadata: w.toBuffer() }],
      });
      expect(join.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      // A SyncGroup from a real member with a wrong generation.
      const member = before.members[0].memberId;
      const sync = await conn.send('SyncGroup', 3, { groupId: g, generationId: 9999, memberId: member, groupInstanceId: null, assignments: [] });
      expect(sync.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
      // An OffsetCommit from a member that is not in the group.
      const commit = await conn.send('OffsetCommit', 5, {
        groupId: g,
        generationIdOrMemberEpoch: 1,
        memberId: 'not-a-member',
        topics: [{ name: 'six', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedMetadata: null }] }],
      });
      expect(commit.topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
      // And one for a topic that does not exist.
      const unknownTopic = await conn.send('OffsetCommit', 5, {
        groupId: g,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        topics: [{ name: 'no-such-topic', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedMetadata: null }] }],
      });
      expect(unknownTopic.topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    } finally {
      await conn.close();
    }
    // Nothing changed: same members, assignments, state and committed offsets, and no consumer rejoined.
    const after = await describeGroup(admin, g);
    expect(after.state).toBe('Stable');
    expect(after.assignments).toEqual(before.assignments);
    expect(consumers.filter((t) => before.members.some((m) => m.memberId === t.memberId)).map((t) => t.joins)).toEqual(joinsBefore);
    const [offsetsAfter] = await admin.fetchOffsets({ groupId: g, topics: ['six'] });
    expect(offsetsAfter).toEqual(offsetsBefore);
  });
});

describe('committed offsets and group metadata survive broker restarts (CLI broker)', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;

  beforeAll(async () => {
    broker = await startTestBroker('cli', { config: GROUP_CONFIG });
    kafka = kafkaFor(broker, 'restart');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    await admin.createTopics({ topics: [{ topic: 'durable', numPartitions: 2 }], waitForLeaders: true });
  });

  afterAll(async () => {
    await disconnectAll(admin, producer);
    await broker?.close();
  });

  async function reconnect(): Promise<void> {
    kafka = kafkaFor(broker, 'restart');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
  }

  async function consumeAll(groupId: string, expected: number): Promise<{ t: Tracked }> {
    const t = await startTracked(kafka, groupId, 'durable');
    await until(`${expected} messages in ${groupId}`, () => t.seen.size >= expected);
    return { t };
  }

  test('clean restart: an Empty group keeps its protocol type and offsets; consumption resumes with no loss', async () => {
    await produceN(producer, 'durable', 40, 'd1', 2);
    const { t } = await consumeAll('durable-group', 40);
    await t.consumer.disconnect();
    await disconnectAll(admin, producer);
    await broker.restart();
    await reconnect();
    const d = await describeGroup(admin, 'durable-group');
    expect(d).toMatchObject({ state: 'Empty', protocolType: 'consumer' });
    const [o] = await admin.fetchOffsets({ groupId: 'durable-group', topics: ['durable'] });
    expect(o.partitions.map((p) => p.offset)).toEqual(['20', '20']);
    await produceN(producer, 'durable', 10, 'd2', 2);
    const { t: again } = await consumeAll('durable-group', 10);
    expect([...again.seen.keys()].map((k) => Number(k.split('/')[2])).every((off) => off >= 20)).toBe(true);
    await again.consumer.disconnect();
  });

  test('kill -9: a Stable group is loaded back with its member and assignment; offsets are all there', async () => {
    await produceN(producer, 'durable', 10, 'd3', 2);
    // This member must really be gone when the broker comes back (else it would rejoin first).
    const t = await startTracked(kafka, 'live-group', 'durable', { retry: { retries: 0, restartOnFailure: async () => false } });
    await until('60 messages in live-group', () => t.seen.size >= 60);
    await until('live-group committed', async () => {
      const [o] = await admin.fetchOffsets({ groupId: 'live-group', topics: ['durable'] });
      return o.partitions.every((p) => p.offset === '30');
    });
    const before = await describeGroup(admin, 'live-group');
    expect(before.state).toBe('Stable');
    await disconnectAll(admin, producer);
    await broker.kill9();
    await t.consumer.disconnect().catch(() => undefined);
    await broker.start();
    await reconnect();
    const after = await describeGroup(admin, 'live-group');
    expect(after.state).toBe('Stable');
    expect(after.protocol).toBe('RoundRobinAssigner');
    expect(after.assignments).toEqual(before.assignments);
    const [o] = await admin.fetchOffsets({ groupId: 'live-group', topics: ['durable'] });
    expect(o.partitions.map((p) => p.offset)).toEqual(['30', '30']);
    const [d] = await admin.fetchOffsets({ groupId: 'durable-group', topics: ['durable'] });
    expect(d.partitions.map((p) => p.offset)).toEqual(['25', '25']);
  });
});
