/**
 * Transactions on a three-broker cluster: __transaction_state is replicated
 * (transaction.state.log.replication.factor capped at the live brokers: 3, min ISR 2), markers
 * travel from the coordinator to partition leaders on other brokers, and when the coordinator's
 * broker dies mid-transaction the new leader of its __transaction_state partition loads the state
 * and the KafkaJS producer commits through it: read_committed readers see every committed record
 * exactly once and nothing of the aborted transaction.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import { describeTransaction } from '../helpers/transactions';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from './helpers';

jest.setTimeout(90_000);

describe('transactions across brokers and a coordinator failover', () => {
  let cluster: RunningCluster;
  const clients: { disconnect(): Promise<void> }[] = [];
  beforeAll(async () => {
    cluster = await fastCluster({
      config: { 'transaction.state.log.num.partitions': '3', 'group.initial.rebalance.delay.ms': '0', 'min.insync.replicas': '2' },
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.disconnect().catch(() => undefined)));
    await cluster?.close();
  });

  test('markers reach leaders on other brokers; the producer commits through the next coordinator after a kill', async () => {
    await createTopic(cluster, 'ctx', 3, 3);
    const kafka = new Kafka({
      clientId: 'cluster-txn',
      brokers: cluster.bootstrapServers,
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 15, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    const producer: Producer = kafka.producer({ transactionalId: 'cluster-tx', maxInFlightRequests: 1, idempotent: true, allowAutoTopicCreation: false });
    clients.push(producer);
    await producer.connect();
    const leaders = (await partitionsOf(cluster.bootstrapServers[0], 'ctx')).map((p) => p.leader);
    expect(new Set(leaders).size).toBe(3); // one partition led by each broker

    const committed: string[] = [];
    for (let t = 0; t < 4; t++) {
      const txn = await producer.transaction();
      const values = [0, 1, 2].map((p) => `t${t}-p${p}`);
      await txn.send({ topic: 'ctx', acks: -1, messages: values.map((value, p) => ({ partition: p, value })) });
      if (t === 2) await txn.abort();
      else {
        await txn.commit();
        committed.push(...values);
      }
    }
    const txnState = await partitionsOf(cluster.bootstrapServers[0], '__transaction_state');
    expect(txnState.every((p) => p.replicas.length === 3)).toBe(true);

    // Which broker coordinates the transactional id? Kill it with a transaction open.
    const conn = await connectTo(cluster.bootstrapServers[0]);
    let coordinator: number;
    try {
      coordinator = (await conn.send('FindCoordinator', 4, { keyType: 1, coordinatorKeys: ['cluster-tx'] })).coordinators[0].nodeId;
    } finally {
      await conn.close();
    }
    const open = await producer.transaction();
    const lastValues = [0, 1, 2].map((p) => `after-kill-p${p}`);
    await open.send({ topic: 'ctx', acks: -1, messages: lastValues.map((value, p) => ({ partition: p, value })) });
    // Let the Ongoing record reach the replicas of __transaction_state before the kill.
    await waitFor('__transaction_state replicated', async () => (await partitionsOf(cluster.bootstrapServers[(coordinator + 1) % 3], '__transaction_state')).every((p) => p.isr.length === 3));
    await cluster.killBroker(coordinator);
    // KafkaJS finds the new coordinator (NOT_COORDINATOR / connection errors) and commits there; the
    // partitions the dead broker led have new leaders by then.
    await open.commit();
    committed.push(...lastValues);
    const survivor = cluster.bootstrapServers[(coordinator + 1) % 3];
    const c2 = await connectTo(survivor);
    try {
      await waitFor('the transaction completed on the new coordinator', async () => (await describeTransaction(c2, 'cluster-tx')).transactionState === 'CompleteCommit', 20_000);
    } finally {
      await c2.close();
    }

    const consumer = kafka.consumer({ groupId: 'cluster-txn-readers', readUncommitted: false, maxWaitTimeInMs: 100, sessionTimeout: 6_000, heartbeatInterval: 500 });
    clients.push(consumer);
    const got: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'ctx', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor('every committed record', () => got.length >= committed.length, 30_000, 50);
    await consumer.disconnect();
    expect([...got].sort()).toEqual([...committed].sort());

    // The killed broker comes back and follows again.
    await cluster.startBroker(coordinator);
    await waitFor('the broker back in every ISR', async () => (await partitionsOf(survivor, 'ctx')).every((p) => p.isr.length === 3), 20_000);
  });
});
