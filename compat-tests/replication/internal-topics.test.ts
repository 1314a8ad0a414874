/**
 * Internal topics replicate like any other: __consumer_offsets gets offsets.topic.replication.factor
 * (capped at the live brokers when unset: 3 here), and when the broker leading a group's offsets
 * partition dies, the new leader's group coordinator loads the group and its committed offsets from
 * its replica, so a KafkaJS consumer group carries on where it committed.
 */
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from './helpers';

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
