/**
 * Partition reassignment (KIP-455) on a 4-broker in-process cluster, driven by KafkaJS 2.2.4's
 * alterPartitionReassignments / listPartitionReassignments / fetchTopicMetadata and krill's client
 * for what KafkaJS does not send (a cancellation: null replicas) and for the exact error messages.
 * A reassignment really moves data: records produced before it are read back from the new
 * replicas after it, the removed brokers delete their logs, and while the new replicas catch up
 * (their follower fetches slowed) Metadata lists target + removing replicas and
 * ListPartitionReassignments the adding / removing ones. Cancellation reverts to the original
 * replicas and the added broker drops its log. ListPartitionReassignments through a broker is
 * answered by the controller: with that broker's metadata fetches held back, a reassignment sent
 * to the controller is listed by the broker although its own image does not have it yet.
 */
import type { Admin, Kafka } from 'kafkajs';
import { ErrorCode } from '../../protocol/errors';
import { connect, type BrokerConnection } from '../../client/network-client';
import type { RunningCluster } from '../../broker/cluster';
import type { TestBroker } from '../helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from '../helpers/kafkajs';
import { fastCluster, waitFor } from '../replication/helpers';

const E = ErrorCode;
const SLOW_MS = 3000;

let cluster: RunningCluster;
let kafka: Kafka;
let admin: Admin;
let conn: BrokerConnection;

beforeAll(async () => {
  cluster = await fastCluster({ brokers: 4 });
  kafka = kafkaFor({ bootstrap: cluster.bootstrapServers[0] } as TestBroker, 'reassignment');
  admin = await connectedAdmin(kafka);
  const b0 = cluster.broker(0);
  conn = await connect(b0.host, b0.port, { clientId: 'reassignment' });
});
afterAll(async () => {
  await conn?.close();
  await disconnectAll(admin);
  await cluster?.close();
});

async function partition0(topic: string) {
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  return md.topics[0].partitions.find((p) => p.partitionId === 0)!;
}

async function consumeAll(topic: string, count: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `g-${topic}-${Date.now()}`, maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    await consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value!.toString());
        if (values.length >= count) resolveDone();
      },
    });
    await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`read ${values.length} of ${count}`)), 20_000))]);
  } finally {
    await consumer.disconnect();
  }
  return values;
}

test('a reassignment from [0,1] to [2,3] adds the new replicas, lets them catch up, moves leadership and drops the old ones; the data is readable from the new replicas', async () => {
  await admin.createTopics({ topics: [{ topic: 'moving', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true });
  const producer = await connectedProducer(kafka);
  const sent = Array.from({ length: 200 }, (_, i) => `v${i}`);
  try {
    for (let i = 0; i < sent.length; i += 50) await producer.send({ topic: 'moving', acks: -1, messages: sent.slice(i, i + 50).map((value) => ({ value })) });
  } finally {
    await producer.disconnect();
  }
  cluster.slowReplication(2, SLOW_MS);
  cluster.slowReplication(3, SLOW_MS);
  await admin.alterPartitionReassignments({ topics: [{ topic: 'moving', partitionAssignment: [{ partition: 0, replicas: [2, 3] }] }] });

  // In progress: Metadata lists target then removing replicas; ListPartitionReassignments the rest
  // (KafkaJS 2.2.4 returns each topic's `name`, although its typings say `topic`).
  const during = await partition0('moving');
  expect(during.replicas).toEqual([2, 3, 0, 1]);
  expect([0, 1]).toContain(during.leader);
  const listed = await admin.listPartitionReassignments({ topics: [{ topic: 'moving', partitions: [0] }] });
  expect(listed.topics).toEqual([{ name: 'moving', partitions: [{ partition: 0, replicas: [2, 3, 0, 1], addingReplicas: [2, 3], removingReplicas: [0, 1] }] }]);
  expect((await admin.listPartitionReassignments({})).topics.map((t) => (t as unknown as { name: string }).name)).toEqual(['moving']);

  cluster.slowReplication(2, 0);
  cluster.slowReplication(3, 0);
  await waitFor('the reassignment completes', async () => {
    const p = await partition0('moving');
    return p.replicas.join() === '2,3' && [2, 3].includes(p.leader) && p.isr.every((r) => [2, 3].includes(r));
  }, 20_000, 50);
  expect((await admin.listPartitionReassignments({})).topics).toEqual([]);
  // The removed replicas delete their logs; the new ones hold every record.
  await waitFor('brokers 0 and 1 drop their replicas', () =>
    [0, 1].every((id) => cluster.broker(id).server.replicaManager.getPartition('moving', 0) === undefined && cluster.broker(id).server.logManager.getLog('moving', 0) === undefined),
  );
  for (const id of [2, 3]) {
    const log = cluster.broker(id).server.logManager.getLog('moving', 0)!;
    expect(log.logEndOffset).toBe(200n);
  }
  expect(await consumeAll('moving', sent.length)).toEqual(sent);
});

test('a reassignment that only reorders or shrinks within the ISR completes at once, moving the leader off a removed replica', async () => {
  await admin.createTopics({ topics: [{ topic: 'shrink', replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }] }], waitForLeaders: true });
  await waitFor('full ISR', async () => (await partition0('shrink')).isr.length === 3);
  expect((await partition0('shrink')).leader).toBe(1);
  await admin.alterPartitionReassignments({ topics: [{ topic: 'shrink', partitionAssignment: [{ partition: 0, replicas: [3, 2] }] }] });
  const p = await partition0('shrink');
  expect(p.replicas).toEqual([3, 2]);
  expect([2, 3]).toContain(p.leader);
  expect((await admin.listPartitionReassignments({ topics: [{ topic: 'shrink', partitions: [0] }] })).topics).toEqual([]);
});

test('cancellation (null replicas) reverts to the original replicas and the added broker drops its log; errors carry Kafka codes and messages', async () => {
  await admin.createTopics({ topics: [{ topic: 'cancelled', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true });
  const producer = await connectedProducer(kafka);
  try {
    await producer.send({ topic: 'cancelled', acks: -1, messages: [{ value: 'kept' }] });
  } finally {
    await producer.disconnect();
  }
  cluster.slowReplication(3, SLOW_MS);
  try {
    await admin.alterPartitionReassignments({ topics: [{ topic: 'cancelled', partitionAssignment: [{ partition: 0, replicas: [0, 3] }] }] });
    expect((await partition0('cancelled')).replicas).toEqual([0, 3, 1]);
    await waitFor('broker 3 creates its replica', () => cluster.broker(3).server.logManager.getLog('cancelled', 0) !== undefined);
    const cancel = await conn.send('AlterPartitionReassignments', 0, { timeoutMs: 10_000, topics: [{ name: 'cancelled', partitions: [{ partitionIndex: 0, replicas: null }] }] });
    expect(cancel.errorCode).toBe(E.NONE);
    expect(cancel.responses[0].partitions[0]).toMatchObject({ partitionIndex: 0, errorCode: E.NONE, errorMessage: null });
  } finally {
    cluster.slowReplication(3, 0);
  }
  const after = await partition0('cancelled');
  expect(after.replicas).toEqual([0, 1]);
  expect(after.isr.every((r) => [0, 1].includes(r))).toBe(true);
  expect((await admin.listPartitionReassignments({})).topics).toEqual([]);
  await waitFor('broker 3 drops the cancelled replica', () => cluster.broker(3).server.logManager.getLog('cancelled', 0) === undefined);

  const res = await conn.send('AlterPartitionReassignments', 0, {
    timeoutMs: 10_000,
    topics: [
      { name: 'cancelled', partitions: [{ partitionIndex: 0, replicas: null }, { partitionIndex: 0, replicas: [0, 9] }, { partitionIndex: 0, replicas: [1, 1] }, { partitionIndex: 0, replicas: [] }, { partitionIndex: 4, replicas: [0] }] },
      { name: 'no-such-topic', partitions: [{ partitionIndex: 0, replicas: [0] }] },
    ],
  });
  expect(res.errorCode).toBe(E.NONE);
  expect(res.responses.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.errorMessage])])).toEqual([
    [
      'cancelled',
      [
        [0, E.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.'],
        [0, E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 9, but no such broker is registered.'],
        [0, E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes the broker 1 more than once.'],
        [0, E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
        [4, E.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find partition cancelled:4.'],
      ],
    ],
    ['no-such-topic', [[0, E.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find a topic named no-such-topic.']]],
  ]);
  // Nothing changed for the refused ones.
  expect((await partition0('cancelled')).replicas).toEqual([0, 1]);
  // KafkaJS surfaces a refused reassignment as its error.
  await expect(
    admin.alterPartitionReassignments({ topics: [{ topic: 'cancelled', partitionAssignment: [{ partition: 0, replicas: [0, 9] }] }] }),
  ).rejects.toThrow();
  const list = await conn.send('ListPartitionReassignments', 0, { timeoutMs: 10_000, topics: [{ name: 'cancelled', partitionIndexes: [0, 7] }, { name: 'nope', partitionIndexes: [0] }] });
  expect(list).toMatchObject({ errorCode: E.NONE, errorMessage: null, topics: [] });
  expect(await consumeAll('cancelled', 1)).toEqual(['kept']);
});

test('ListPartitionReassignments on a broker is answered by the controller: a reassignment it accepted is listed before that broker\'s metadata has it', async () => {
  await admin.createTopics({ topics: [{ topic: 'listed-early', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true });
  // Hold broker 1's next metadata fetch at the controller, and wait until it is held (the long
  // poll in flight when the rule was added must have come back first).
  let held!: () => void;
  const fetchHeld = new Promise<void>((resolve) => (held = resolve));
  const rule = cluster.control.controller.intercept(
    {
      api: 'Fetch',
      clientId: /^krill-broker-1-/,
      when: () => {
        held();
        return true;
      },
    },
    { delayMs: 3000 },
  );
  const [host, port] = cluster.controllerAddress.split(':');
  const toController = await connect(host, Number(port), { clientId: 'reassignment-admin' });
  const b1 = cluster.broker(1);
  const toBroker1 = await connect(b1.host, b1.port, { clientId: 'reassignment-list' });
  cluster.slowReplication(2, SLOW_MS);
  try {
    await fetchHeld;
    // The reassignment goes straight to the controller (as --bootstrap-controller would send it).
    const alter = await toController.send('AlterPartitionReassignments', 0, { timeoutMs: 10_000, topics: [{ name: 'listed-early', partitions: [{ partitionIndex: 0, replicas: [0, 2] }] }] });
    expect(alter.responses[0].partitions[0]).toMatchObject({ errorCode: E.NONE });
    const list = await toBroker1.send('ListPartitionReassignments', 0, { timeoutMs: 10_000, topics: [{ name: 'listed-early', partitionIndexes: [0] }] });
    // Broker 1's own image does not have the reassignment yet, its answer does.
    expect(b1.server.metadata.topic('listed-early')!.partitions.get(0)!.addingReplicas).toEqual([]);
    expect(list).toMatchObject({
      errorCode: E.NONE,
      errorMessage: null,
      topics: [{ name: 'listed-early', partitions: [{ partitionIndex: 0, replicas: [0, 2, 1], addingReplicas: [2], removingReplicas: [1] }] }],
    });
  } finally {
    rule.remove();
    cluster.slowReplication(2, 0);
    await toController.close();
    await toBroker1.close();
  }
  // The held fetch comes back after its delay and broker 1 catches up.
  await waitFor('broker 1 applies the reassignment', () => b1.server.metadata.topic('listed-early')!.partitions.get(0)!.replicas.includes(2), 10_000, 50);
  await waitFor('the reassignment completes', async () => (await partition0('listed-early')).replicas.join() === '0,2', 20_000, 50);
  expect((await admin.listPartitionReassignments({ topics: [{ topic: 'listed-early', partitions: [0] }] })).topics).toEqual([]);
});
