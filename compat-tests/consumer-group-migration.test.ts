/**
 * Mixed groups and the online migration between the group protocols (KIP-848,
 * group.consumer.migration.policy=bidirectional, Kafka 4.0's default) with two client families:
 * KafkaJS 2.2.4 speaks only the classic protocol (JoinGroup / SyncGroup / Heartbeat, eager
 * RoundRobinAssigner), librdkafka 2.12 (node-rdkafka) with group.protocol=consumer speaks
 * ConsumerGroupHeartbeat.
 * - Upgrade: a KafkaJS group is consuming; a librdkafka member joins under the same group id; the
 *   classic group becomes a consumer group (ConsumerGroupDescribe shows one member of each type),
 *   the server splits the partitions, the KafkaJS member rejoins and keeps half; the librdkafka
 *   member leaves and the group downgrades to a classic group that gives KafkaJS everything again.
 * - The other way: a librdkafka group (consumer protocol) is consuming; a KafkaJS member joins it as
 *   a classic member of the consumer group; then the librdkafka member leaves and the group
 *   becomes a classic group.
 * Throughout, messages are produced and every one is consumed by the group (commits are made by
 * both clients with their own APIs: OffsetCommit v9 with member epochs, OffsetCommit with the
 * generation, which for a classic member is its member epoch), and no partition is owned by both
 * members at once.
 */
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll } from './helpers/kafkajs';
import { connect } from '../client/network-client';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

const PARTITIONS = 6;

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a member of either client owns and read. */
interface Tracked {
  owned: Set<number>;
  /** "partition/offset" of every message read. */
  seen: Set<string>;
}

/** Partitions owned by two members at once, checked at every assignment change. */
const overlaps: string[] = [];
function checkDisjoint(a: Tracked, b: Tracked): void {
  for (const p of a.owned) if (b.owned.has(p)) overlaps.push(`partition ${p}`);
}

interface KafkaJsMember extends Tracked {
  consumer: Consumer;
}

async function startKafkaJs(kafka: Kafka, groupId: string, topic: string, group: Tracked[]): Promise<KafkaJsMember> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
  const m: KafkaJsMember = { consumer, owned: new Set(), seen: new Set() };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    m.owned = new Set(e.payload.memberAssignment[topic] ?? []);
    for (const o of group) if (o !== m) checkDisjoint(m, o);
  });
  group.push(m);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommitInterval: 100,
    eachMessage: async ({ partition, message }) => {
      m.seen.add(`${partition}/${message.offset}`);
    },
  });
  return m;
}

interface RdMember extends Tracked {
  consumer: any;
}

function startRdKafka(broker: TestBroker, groupId: string, topic: string, group: Tracked[]): Promise<RdMember> {
  const m: RdMember = { consumer: undefined, owned: new Set(), seen: new Set() };
  const consumer = new RdKafka.KafkaConsumer(
    {
      'group.id': groupId,
      'group.protocol': 'consumer',
      'client.id': `rdkafka-${groupId}`,
      'metadata.broker.list': broker.bootstrap,
      'fetch.wait.max.ms': 100,
      'enable.auto.commit': true,
      'auto.commit.interval.ms': 100,
      'enable.partition.eof': false,
      rebalance_cb: (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
        if (err.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
          consumer.incrementalAssign(assignment);
          for (const a of assignment) m.owned.add(a.partition);
          for (const o of group) if (o !== m) checkDisjoint(m, o);
        } else if (err.code === RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
          consumer.incrementalUnassign(assignment);
          for (const a of assignment) m.owned.delete(a.partition);
        }
      },
    },
    { 'auto.offset.reset': 'earliest' },
  );
  m.consumer = consumer;
  group.push(m);
  consumer.on('data', (msg: { partition: number; offset: number }) => m.seen.add(`${msg.partition}/${msg.offset}`));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('librdkafka consumer did not connect')), 20_000);
    consumer.on('ready', () => {
      clearTimeout(timer);
      consumer.subscribe([topic]);
      consumer.consume();
      resolve(m);
    });
    consumer.connect();
  });
}

function stopRd(m: RdMember | undefined): Promise<void> {
  if (!m?.consumer?.isConnected()) return Promise.resolve();
  return new Promise((resolve) => m.consumer.disconnect(() => resolve()));
}

describe('mixed classic / consumer groups and the online migration', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const kafkajsMembers: KafkaJsMember[] = [];
  const rdMembers: RdMember[] = [];
  let produced = 0;

  const describeGroup = async (groupId: string) => {
    const wire = await connect(broker.host, broker.port, { clientId: 'migration-describe' });
    try {
      const [cg, classic] = await Promise.all([
        wire.send('ConsumerGroupDescribe', 1, { groupIds: [groupId], includeAuthorizedOperations: false }),
        wire.send('DescribeGroups', 5, { groups: [groupId], includeAuthorizedOperations: false }),
      ]);
      return { consumer: cg.groups[0], classic: classic.groups[0] };
    } finally {
      await wire.close();
    }
  };

  /** Sends `n` messages round-robin over the partitions; returns their count so far. */
  const produce = async (topic: string, n: number) => {
    const messages = Array.from({ length: n }, (_, i) => ({ partition: (produced + i) % PARTITIONS, value: `m${produced + i}` }));
    produced += n;
    await producer.send({ topic, acks: -1, messages });
  };

  /** Every produced message was read by some member (at least once). */
  const allConsumed = async (topic: string, members: Tracked[]) => {
    const offsets = await admin.fetchTopicOffsets(topic);
    const want: string[] = [];
    for (const o of offsets) for (let i = 0; i < Number(o.high); i++) want.push(`${o.partition}/${i}`);
    await until(`every message of ${topic} consumed`, () => {
      const seen = new Set(members.flatMap((m) => [...m.seen]));
      return want.every((k) => seen.has(k));
    });
  };

  beforeAll(async () => {
    broker = await startTestBroker('embedded', {
      config: {
        'offsets.topic.num.partitions': 1,
        'group.initial.rebalance.delay.ms': 0,
        'group.consumer.min.heartbeat.interval.ms': 100,
        'group.consumer.heartbeat.interval.ms': 250,
        'group.consumer.min.session.timeout.ms': 1000,
        'group.consumer.session.timeout.ms': 10_000,
      },
    });
    // KafkaJS logs a line per rebalance it is asked to join; the assertions below say what happened.
    kafka = new Kafka({ clientId: 'migration', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
    await admin.createTopics({
      topics: [
        { topic: 'upgrade', numPartitions: PARTITIONS },
        { topic: 'downgrade', numPartitions: PARTITIONS },
      ],
      waitForLeaders: true,
    });
  });

  afterAll(async () => {
    for (const m of rdMembers) await stopRd(m);
    for (const m of kafkajsMembers) await m.consumer.disconnect();
    await disconnectAll(admin, producer);
    await broker?.stop();
  });

  test('classic -> consumer -> classic: a librdkafka member upgrades a KafkaJS group, then leaves and downgrades it', async () => {
    const group = 'migration-up';
    const members: Tracked[] = [];
    const js = await startKafkaJs(kafka, group, 'upgrade', members);
    kafkajsMembers.push(js);
    await until('the KafkaJS member owning every partition', () => js.owned.size === PARTITIONS);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);
    expect((await describeGroup(group)).classic).toMatchObject({ groupState: 'Stable', protocolType: 'consumer', protocolData: 'RoundRobinAssigner' });

    // Upgrade: the consumer-protocol member joins the classic group.
    const rd = await startRdKafka(broker, group, 'upgrade', members);
    rdMembers.push(rd);
    await until('the partitions split between the two members', () => js.owned.size === PARTITIONS / 2 && rd.owned.size === PARTITIONS / 2);
    const described = await until('a Stable consumer group with one member of each type', async () => {
      const d = (await describeGroup(group)).consumer;
      return d.errorCode === 0 && d.groupState === 'Stable' && d.members.length === 2 ? d : undefined;
    });
    expect(described.members.map((m: { memberType: number }) => m.memberType).sort()).toEqual([0, 1]);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);

    // Downgrade: the last consumer-protocol member leaves; the group is classic again and KafkaJS owns everything.
    await stopRd(rd);
    rd.owned.clear();
    await until('the KafkaJS member owning every partition again', () => js.owned.size === PARTITIONS);
    const classic = await until('a Stable classic group', async () => {
      const d = await describeGroup(group);
      return d.classic.groupState === 'Stable' ? d : undefined;
    });
    expect(classic.consumer.errorCode).toBe(69); // GROUP_ID_NOT_FOUND: "Group ... is not a consumer group."
    expect(classic.classic.members).toHaveLength(1);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);
    expect(overlaps).toEqual([]);
  });

  test('consumer group + classic member -> classic: a KafkaJS member joins a librdkafka consumer group as a classic member, then the group downgrades', async () => {
    const group = 'migration-down';
    const members: Tracked[] = [];
    const rd = await startRdKafka(broker, group, 'downgrade', members);
    rdMembers.push(rd);
    await until('the librdkafka member owning every partition', () => rd.owned.size === PARTITIONS);
    await produce('downgrade', 60);
    await allConsumed('downgrade', members);

    const js = await startKafkaJs(kafka, group, 'downgrade', members);
    kafkajsMembers.push(js);
    await until('the partitions split between the two members', () => js.owned.size === PARTITIONS / 2 && rd.owned.size === PARTITIONS / 2);
    const d = (await describeGroup(group)).consumer;
    expect(d.members.map((m: { memberType: number }) => m.memberType).sort()).toEqual([0, 1]);
    await produce('downgrade', 60);
    await allConsumed('downgrade', members);

    await stopRd(rd);
    rd.owned.clear();
    await until('the KafkaJS member owning every partition', () => js.owned.size === PARTITIONS);
    await until('a Stable classic group', async () => (await describeGroup(group)).classic.groupState === 'Stable');
    await produce('downgrade', 60);
    await allConsumed('downgrade', members);
    // The group's committed offsets cover what was read (both clients committed into one group).
    const committed = await admin.fetchOffsets({ groupId: group, topics: ['downgrade'] });
    await until('the commits reaching the end of every partition', async () => {
      const c = await admin.fetchOffsets({ groupId: group, topics: ['downgrade'] });
      const high = await admin.fetchTopicOffsets('downgrade');
      return c[0].partitions.every((p) => p.offset === high.find((h) => h.partition === p.partition)!.high);
    });
    expect(committed[0].partitions).toHaveLength(PARTITIONS);
    expect(overlaps).toEqual([]);
  });
});
