/**
 * Internal topics replicate like any other: __consumer_offsets gets offsets.topic.replication.factor
 * (capped at the live brokers when unset: 3 here), and when the broker leading a group's offsets
 * partition dies, the new leader's group coordinator loads the group and its committed offsets from
 * its replica, so a KafkaJS consumer group carries on where it committed; a KIP-848 consumer group
 * (librdkafka, group.protocol=consumer) carries on with the same member and epochs.
 */
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from './helpers';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

jest.setTimeout(60_000);

describe('__consumer_offsets across a coordinator failover', () => {
  let cluster: RunningCluster;
  let producer: Producer | undefined;
  const consumers: Consumer[] = [];
  beforeAll(async () => {
    cluster = await fastCluster({ config: { 'group.initial.rebalance.delay.ms': '0' } });
  });
  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    await producer?.disconnect().catch(() => undefined);
    await cluster?.close();
  });

  test('the group moves with the offsets partition leadership and keeps its committed offsets', async () => {
    await createTopic(cluster, 'work', 1, 3);
    const kafka = new Kafka({ clientId: 'groups', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: 'work', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `a${i}` })) });

    const got: string[] = [];
    // KafkaJS keeps heartbeating a dead coordinator until its retries run out, then restarts the
    // consumer, which looks the coordinator up again: few retries and short fetch waits keep that
    // quick (a client trait: Kafka brokers see the same).
    const consumer = kafka.consumer({ groupId: 'g1', sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 200, retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 } });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: 'work', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor('the first 10 messages', () => got.length >= 10, 20_000, 50);

    const offsets = await partitionsOf(cluster.bootstrapServers[0], '__consumer_offsets');
    expect(offsets.length).toBeGreaterThan(0);
    expect(offsets.every((p) => p.replicas.length === 3)).toBe(true);

    // Where does g1 live? FindCoordinator names the leader of its offsets partition.
    const conn = await connectTo(cluster.bootstrapServers[0]);
    let coordinator: number;
    try {
      coordinator = (await conn.send('FindCoordinator', 6, { keyType: 0, coordinatorKeys: ['g1'] })).coordinators[0].nodeId;
    } finally {
      await conn.close();
    }
    // Let the commit of the first 10 reach every replica, then kill the coordinator's broker.
    await waitFor('committed offsets replicated', async () => {
      const parts = await partitionsOf(cluster.bootstrapServers[(coordinator + 1) % 3], '__consumer_offsets');
      return parts.every((p) => p.isr.length === 3);
    });
    await new Promise((r) => setTimeout(r, 500));
    await cluster.killBroker(coordinator);

    await producer.send({ topic: 'work', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `b${i}` })) }).catch(async () => {
      await new Promise((r) => setTimeout(r, 1500));
      await producer!.send({ topic: 'work', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `b${i}` })) });
    });
    await waitFor('the next 10 messages after the failover', () => got.filter((v) => v.startsWith('b')).length >= 10, 30_000, 100);
    await consumer.disconnect();

    // A new member of the group starts from the committed offsets: nothing of the first batch again.
    const again: string[] = [];
    const second = kafka.consumer({ groupId: 'g1', sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
    consumers.push(second);
    await second.connect();
    await second.subscribe({ topic: 'work', fromBeginning: true });
    await producer.send({ topic: 'work', acks: -1, messages: [{ value: 'c0' }] });
    await second.run({ eachMessage: async ({ message }) => void again.push(message.value!.toString()) });
    await waitFor('the message produced after the restart', () => again.includes('c0'), 30_000, 100);
    expect(again.filter((v) => v.startsWith('a'))).toEqual([]);
  });
});

describe('a KIP-848 consumer group across a coordinator failover', () => {
  let cluster: RunningCluster;
  let producer: Producer | undefined;
  let consumer: any;
  beforeAll(async () => {
    cluster = await fastCluster({
      config: { 'group.consumer.min.heartbeat.interval.ms': '100', 'group.consumer.heartbeat.interval.ms': '250', 'group.consumer.min.session.timeout.ms': '1000', 'group.consumer.session.timeout.ms': '10000' },
    });
  });
  afterAll(async () => {
    if (consumer?.isConnected()) await new Promise((r) => consumer.disconnect(r));
    await producer?.disconnect().catch(() => undefined);
    await cluster?.close();
  });

  /** ConsumerGroupDescribe from whichever live broker coordinates the group now. */
  async function describe(groupId: string, live: string[]): Promise<any> {
    for (const hostPort of live) {
      const conn = await connectTo(hostPort).catch(() => undefined);
      if (!conn) continue;
      try {
        const g = (await conn.send('ConsumerGroupDescribe', 1, { groupIds: [groupId], includeAuthorizedOperations: false })).groups[0];
        if (g.errorCode === 0) return g;
      } finally {
        await conn.close();
      }
    }
    return undefined;
  }

  test('the new coordinator loads the group with the same member and epochs, and the member keeps consuming', async () => {
    await createTopic(cluster, 'kip848', 2, 3);
    const kafka = new Kafka({ clientId: 'kip848', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const send = (tag: string) => producer!.send({ topic: 'kip848', acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `${tag}${i}` })) });
    await send('a');

    const got: string[] = [];
    consumer = new RdKafka.KafkaConsumer(
      { 'group.id': 'g848', 'group.protocol': 'consumer', 'metadata.broker.list': cluster.bootstrapServers.join(','), 'fetch.wait.max.ms': 100, 'auto.commit.interval.ms': 100, 'enable.partition.eof': false },
      { 'auto.offset.reset': 'earliest' },
    );
    consumer.on('data', (m: { value: Buffer }) => got.push(m.value.toString()));
    await new Promise<void>((resolve, reject) => {
      consumer.on('ready', () => {
        consumer.subscribe(['kip848']);
        consumer.consume();
        resolve();
      });
      consumer.connect({}, (err: Error | null) => err && reject(err));
    });
    await waitFor('the first 10 messages', () => got.length >= 10, 30_000, 50);
    const before = await waitFor('the group described', () => describe('g848', cluster.bootstrapServers), 10_000, 100);
    expect(before.groupState).toBe('Stable');

    const conn = await connectTo(cluster.bootstrapServers[0]);
    let coordinator: number;
    try {
      coordinator = (await conn.send('FindCoordinator', 6, { keyType: 0, coordinatorKeys: ['g848'] })).coordinators[0].nodeId;
    } finally {
      await conn.close();
    }
    await waitFor('the group records replicated', async () => (await partitionsOf(cluster.bootstrapServers[(coordinator + 1) % 3], '__consumer_offsets')).every((p) => p.isr.length === 3));
    await new Promise((r) => setTimeout(r, 500));
    await cluster.killBroker(coordinator);
    const live = cluster.bootstrapServers.filter((_, i) => i !== coordinator);

    const after = await waitFor('the new coordinator serves the group', () => describe('g848', live), 30_000, 200);
    expect(after.groupEpoch).toBe(before.groupEpoch);
    expect(after.assignmentEpoch).toBe(before.assignmentEpoch);
    expect(after.members.map((m: any) => [m.memberId, m.memberEpoch])).toEqual(before.members.map((m: any) => [m.memberId, m.memberEpoch]));

    await send('b').catch(async () => {
      await new Promise((r) => setTimeout(r, 1500));
      await send('b');
    });
    await waitFor('the next 10 messages after the failover', () => got.filter((v) => v.startsWith('b')).length >= 10, 30_000, 100);
    expect(got.filter((v) => v.startsWith('a')).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}`).sort());
    const last = await describe('g848', live);
    expect(last.members.map((m: any) => m.memberId)).toEqual(before.members.map((m: any) => m.memberId));
  });
});
