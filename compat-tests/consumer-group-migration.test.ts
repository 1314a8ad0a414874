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
 * generation, which for a classic member is its member epoch), and no partition is assigned to a
 * member while the other still owns it (helpers/kip848.ts's Ownership, fed by both clients' callbacks).
 */
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll } from './helpers/kafkajs';
import { connect } from '../client/network-client';
import { InProcessMember, Ownership, until } from './helpers/kip848';

const PARTITIONS = 6;

/** What a member of either client owns and read. */
interface Tracked {
  readonly owned: ReadonlySet<number>;
  /** "partition/offset" -> times read. */
  readonly seen: ReadonlyMap<string, number>;
}

interface KafkaJsMember extends Tracked {
  consumer: Consumer;
  owned: Set<number>;
  seen: Map<string, number>;
}

/**
 * A KafkaJS group member reporting to `ownership` as librdkafka members do from their rebalance
 * callbacks: KafkaJS is eager, so it owns nothing from the moment it rejoins (REBALANCING) until
 * its next assignment (GROUP_JOIN).
 */
async function startKafkaJs(kafka: Kafka, groupId: string, topic: string, ownership: Ownership): Promise<KafkaJsMember> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
  const m: KafkaJsMember = { consumer, owned: new Set(), seen: new Map() };
  const id = `kafkajs-${groupId}`;
  consumer.on(consumer.events.REBALANCING, () => {
    ownership.revoked(id, [...m.owned]);
    m.owned.clear();
  });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    ownership.revoked(id, [...m.owned]);
    m.owned = new Set(e.payload.memberAssignment[topic] ?? []);
    ownership.assigned(id, [...m.owned]);
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommitInterval: 100,
    eachMessage: async ({ partition, message }) => {
      const k = `${partition}/${message.offset}`;
      m.seen.set(k, (m.seen.get(k) ?? 0) + 1);
    },
  });
  return m;
}

/** A librdkafka member on the consumer protocol (helpers/kip848.ts: polled in batches, offsets stored once read). */
function startRdKafka(broker: TestBroker, groupId: string, topic: string, ownership: Ownership): Promise<InProcessMember> {
  return InProcessMember.start({ bootstrap: broker.bootstrap, group: groupId, topic, clientId: `rdkafka-${groupId}` }, ownership);
}

describe('mixed classic / consumer groups and the online migration', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  const kafkajsMembers: KafkaJsMember[] = [];
  const rdMembers: InProcessMember[] = [];
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
      const seen = new Set(members.flatMap((m) => [...m.seen.keys()]));
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
    for (const m of rdMembers) await m.stop();
    for (const m of kafkajsMembers) await m.consumer.disconnect();
    await disconnectAll(admin, producer);
    await broker?.stop();
  });

  test('classic -> consumer -> classic: a librdkafka member upgrades a KafkaJS group, then leaves and downgrades it', async () => {
    const group = 'migration-up';
    const ownership = new Ownership('upgrade');
    const js = await startKafkaJs(kafka, group, 'upgrade', ownership);
    kafkajsMembers.push(js);
    const members: Tracked[] = [js];
    await until('the KafkaJS member owning every partition', () => js.owned.size === PARTITIONS);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);
    expect((await describeGroup(group)).classic).toMatchObject({ groupState: 'Stable', protocolType: 'consumer', protocolData: 'RoundRobinAssigner' });

    // Upgrade: the consumer-protocol member joins the classic group.
    const rd = await startRdKafka(broker, group, 'upgrade', ownership);
    rdMembers.push(rd);
    members.push(rd);
    await until('the partitions split between the two members', () => js.owned.size === PARTITIONS / 2 && rd.owned.size === PARTITIONS / 2);
    const described = await until('a Stable consumer group with one member of each type', async () => {
      const d = (await describeGroup(group)).consumer;
      return d.errorCode === 0 && d.groupState === 'Stable' && d.members.length === 2 ? d : undefined;
    });
    expect(described.members.map((m: { memberType: number }) => m.memberType).sort()).toEqual([0, 1]);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);

    // Downgrade: the last consumer-protocol member leaves; the group is classic again and KafkaJS owns everything.
    await rd.stop();
    await until('the KafkaJS member owning every partition again', () => js.owned.size === PARTITIONS);
    const classic = await until('a Stable classic group', async () => {
      const d = await describeGroup(group);
      return d.classic.groupState === 'Stable' ? d : undefined;
    });
    expect(classic.consumer.errorCode).toBe(69); // GROUP_ID_NOT_FOUND: "Group ... is not a consumer group."
    expect(classic.classic.members).toHaveLength(1);
    await produce('upgrade', 60);
    await allConsumed('upgrade', members);
    expect(ownership.violations).toEqual([]);
  });

  test('consumer group + classic member -> classic: a KafkaJS member joins a librdkafka consumer group as a classic member, then the group downgrades', async () => {
    const group = 'migration-down';
    const ownership = new Ownership('downgrade');
    const rd = await startRdKafka(broker, group, 'downgrade', ownership);
    rdMembers.push(rd);
    const members: Tracked[] = [rd];
    await until('the librdkafka member owning every partition', () => rd.owned.size === PARTITIONS);
    await produce('downgrade', 60);
    await allConsumed('downgrade', members);

    const js = await startKafkaJs(kafka, group, 'downgrade', ownership);
    kafkajsMembers.push(js);
    members.push(js);
    await until('the partitions split between the two members', () => js.owned.size === PARTITIONS / 2 && rd.owned.size === PARTITIONS / 2);
    const d = (await describeGroup(group)).consumer;
    expect(d.members.map((m: { memberType: number }) => m.memberType).sort()).toEqual([0, 1]);
    await produce('downgrade', 60);
    await allConsumed('downgrade', members);

    await rd.stop();
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
    expect(ownership.violations).toEqual([]);
  });
});
