/**
 * Transactions through KafkaJS 2.2.4 (FindCoordinator v2 key type 1, InitProducerId v1,
 * AddPartitionsToTxn v1, AddOffsetsToTxn v1, TxnOffsetCommit v1, EndTxn v1, Produce v7 with
 * transactional batches, Fetch v11 read_committed) against an embedded krill broker:
 * - commit and abort: read_committed consumers see only committed records, read_uncommitted both;
 * - consume-transform-produce: sendOffsets commits the group's offsets atomically with the output;
 * - a transaction left open by a producer that went silent is aborted after its timeout (the LSO
 *   moves on, its records are never visible, the zombie is fenced);
 * - the coordinator's state survives a restart: a commit whose markers could not be delivered
 *   (WriteTxnMarkers dropped by a fault hook) completes after the broker comes back.
 * The first four run at transaction.version 2 (a fresh cluster's level, Kafka 4.0's default) and
 * at 1: KafkaJS's EndTxn v1 never gets the per-transaction epoch bump of 2; only the coordinator's
 * own abort of a timed-out transaction bumps once more at 2.
 */
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { connect, type BrokerConnection } from '../../client/network-client';
import { describeTransaction, expectContiguousOffsets, lastStableOffset, storedBatches } from '../helpers/transactions';
import { waitFor } from '../replication/helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
jest.setTimeout(60_000);

const CONFIG = {
  'num.partitions': 2,
  'offsets.topic.num.partitions': 2,
  'transaction.state.log.num.partitions': 2,
  'group.initial.rebalance.delay.ms': 0,
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': 100,
};

function kafkaFor(b: RunningBroker, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: b.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { retries: 8, initialRetryTime: 50, maxRetryTime: 500 },
  });
}

function transactionalProducer(kafka: Kafka, transactionalId: string, transactionTimeout = 30_000): Producer {
  return kafka.producer({ transactionalId, maxInFlightRequests: 1, idempotent: true, transactionTimeout, allowAutoTopicCreation: false });
}

/** Reads `topic` from the beginning with a fresh group until `count` values arrived (bounded). */
async function readAll(kafka: Kafka, topic: string, count: number, readUncommitted: boolean, groupId: string): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 500 });
  const got: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ partition, message }) => void got.push(`${partition}:${message.value!.toString()}`) });
    await waitFor(`${count} values from ${topic}`, () => got.length >= count, 20_000, 20);
    return got;
  } finally {
    await consumer.disconnect();
  }
}

const byValue = (xs: string[]) => [...xs].sort();

describe.each([2, 1])('KafkaJS transactional producer at transaction.version %i', (tv) => {
  let broker: RunningBroker;
  let kafka: Kafka;
  let conn: BrokerConnection;
  const clients: { disconnect(): Promise<void> }[] = [];
  /** Epochs the coordinator's abort of a timed-out transaction adds: the fence's, and at 2 the abort's own bump (Kafka's server TV). */
  const abortBumps = tv >= 2 ? 2 : 1;

  beforeAll(async () => {
    broker = await startBroker({ logLevel: 'error', config: CONFIG });
    kafka = kafkaFor(broker, 'txn-kafkajs');
    conn = await connect(broker.host, broker.port);
    if (tv < 2) {
      // A fresh cluster is at 2; an UpdateFeatures safe downgrade gives the KIP-890 part 1 coordinator.
      const down = await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: tv, upgradeType: 2 }], validateOnly: false });
      expect(down.errorCode).toBe(ErrorCode.NONE);
    }
    const admin = kafka.admin();
    clients.push(admin);
    await admin.connect();
    await admin.createTopics({ topics: ['tx-commit', 'tx-in', 'tx-out', 'tx-timeout'].map((topic) => ({ topic, numPartitions: 2 })) });
  });

  afterAll(async () => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect().catch(() => undefined)));
    await conn?.close();
    await broker?.close();
  });

  test('commit and abort: read_committed sees only committed records, read_uncommitted sees both', async () => {
    const producer = transactionalProducer(kafka, 'tx-commit-1');
    clients.push(producer);
    await producer.connect();
    const committed: string[] = [];
    const aborted: string[] = [];
    for (let t = 0; t < 6; t++) {
      const txn = await producer.transaction();
      const values = Array.from({ length: 5 }, (_, i) => `t${t}-${i}`);
      // Both partitions in every transaction.
      await txn.send({ topic: 'tx-commit', messages: values.map((value, i) => ({ partition: i % 2, value })) });
      if (t % 3 === 1) {
        await txn.abort();
        aborted.push(...values);
      } else {
        await txn.commit();
        committed.push(...values);
      }
    }
    const rc = await readAll(kafka, 'tx-commit', committed.length, false, 'rc-readers');
    expect(byValue(rc.map((v) => v.slice(2)))).toEqual(byValue(committed));
    const ru = await readAll(kafka, 'tx-commit', committed.length + aborted.length, true, 'ru-readers');
    expect(byValue(ru.map((v) => v.slice(2)))).toEqual(byValue([...committed, ...aborted]));

    // On disk: every transaction ends with one marker per partition; offsets contiguous, none reused.
    for (const p of [0, 1]) {
      const batches = storedBatches(path.join(broker.server.logManager.getLog('tx-commit', p)!.dir));
      expectContiguousOffsets(batches);
      const markers = batches.filter((b) => b.marker).map((b) => b.marker);
      expect(markers).toEqual(['COMMIT', 'ABORT', 'COMMIT', 'COMMIT', 'ABORT', 'COMMIT']);
      const ls = await lastStableOffset(conn, 'tx-commit', p);
      expect(ls).toEqual({ errorCode: ErrorCode.NONE, offset: broker.server.logManager.getLog('tx-commit', p)!.logEndOffset });
    }
    expect((await describeTransaction(conn, 'tx-commit-1')).transactionState).toBe('CompleteCommit');
  });

  test('consume-transform-produce: sendOffsets commits the offsets with the output, an abort moves neither', async () => {
    const plain = kafka.producer({ allowAutoTopicCreation: false });
    clients.push(plain);
    await plain.connect();
    const inputs = Array.from({ length: 40 }, (_, i) => ({ key: `k${i % 4}`, value: `in-${i}` }));
    await plain.send({ topic: 'tx-in', acks: -1, messages: inputs });

    const producer = transactionalProducer(kafka, 'tx-ctp');
    clients.push(producer);
    await producer.connect();
    const consumer: Consumer = kafka.consumer({ groupId: 'ctp', maxWaitTimeInMs: 100, readUncommitted: false });
    clients.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: 'tx-in', fromBeginning: true });
    let transformed = 0;
    let abortedOnce = false;
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (batch.messages.length === 0) return;
        const txn = await producer.transaction();
        await txn.send({ topic: 'tx-out', messages: batch.messages.map((m) => ({ key: m.key, value: `out(${m.value!.toString()})` })) });
        await txn.sendOffsets({
          consumerGroupId: 'ctp',
          topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(batch.lastOffset()) + 1n).toString() }] }],
        });
        if (!abortedOnce) {
          // The first batch's transaction is aborted: neither its output nor its offsets stay; the
          // consumer is told to read the batch again.
          abortedOnce = true;
          await txn.abort();
          consumer.seek({ topic: batch.topic, partition: batch.partition, offset: batch.firstOffset()! });
          return;
        }
        await txn.commit();
        transformed += batch.messages.length;
      },
    });
    await waitFor('every input transformed', () => transformed >= inputs.length, 30_000, 20);
    await consumer.stop();

    const admin = kafka.admin();
    clients.push(admin);
    await admin.connect();
    const offsets = await admin.fetchOffsets({ groupId: 'ctp', topics: ['tx-in'] });
    const ends = await admin.fetchTopicOffsets('tx-in');
    expect(offsets[0].partitions.map((p) => [p.partition, p.offset]).sort()).toEqual(ends.map((e) => [e.partition, e.high]).sort());
    const out = await readAll(kafka, 'tx-out', inputs.length, false, 'out-readers');
    expect(byValue(out.map((v) => v.slice(2)))).toEqual(byValue(inputs.map((m) => `out(${m.value})`)));
    // The aborted batch's outputs are in the log, but only read_uncommitted sees them.
    const all = await readAll(kafka, 'tx-out', inputs.length + 1, true, 'out-readers-ru');
    expect(all.length).toBeGreaterThan(inputs.length);
  });

  test('a transaction left open is aborted after its timeout; the LSO moves on and the zombie is fenced', async () => {
    const zombie = transactionalProducer(kafka, 'tx-zombie', 1_000);
    clients.push(zombie);
    await zombie.connect();
    const txn = await zombie.transaction();
    await txn.send({ topic: 'tx-timeout', messages: [{ partition: 0, value: 'never' }, { partition: 1, value: 'never' }] });
    const open = await describeTransaction(conn, 'tx-zombie');
    expect(open.transactionState).toBe('Ongoing');
    // The producer goes silent. The LSO of the partitions it wrote is held at its first record...
    const logs = [0, 1].map((p) => broker.server.logManager.getLog('tx-timeout', p)!);
    for (const log of logs) expect(log.lastStableOffset).toBeLessThan(log.highWatermark);
    // ... until the coordinator aborts it (transaction.timeout.ms 1000, checked every 100 ms).
    await waitFor('the timed-out transaction aborted', async () => (await describeTransaction(conn, 'tx-zombie')).transactionState === 'CompleteAbort', 10_000);
    const after = await describeTransaction(conn, 'tx-zombie');
    expect(after.producerEpoch).toBe(open.producerEpoch + abortBumps);
    for (const [p, log] of logs.entries()) {
      expect(await lastStableOffset(conn, 'tx-timeout', p)).toEqual({ errorCode: ErrorCode.NONE, offset: log.logEndOffset });
      const batches = storedBatches(log.dir);
      expect(batches.at(-1)).toMatchObject({ marker: 'ABORT', producerEpoch: open.producerEpoch + abortBumps });
    }
    // The zombie comes back: its commit is refused (its epoch was bumped), nothing becomes visible.
    await expect(txn.commit()).rejects.toThrow();
    const later = transactionalProducer(kafka, 'tx-later');
    clients.push(later);
    await later.connect();
    const t2 = await later.transaction();
    await t2.send({ topic: 'tx-timeout', messages: [{ partition: 0, value: 'visible' }] });
    await t2.commit();
    expect(await readAll(kafka, 'tx-timeout', 1, false, 'timeout-readers')).toEqual([expect.stringMatching(/:visible$/)]);
  });
});

describe('transaction coordinator state across a restart', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-txn-restart-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('a commit whose markers were not delivered completes after the restart; an open transaction is aborted after its timeout', async () => {
    let broker = await startBroker({ logLevel: 'error', config: CONFIG, dataDir });
    const port = broker.port;
    let kafka = kafkaFor(broker, 'txn-restart');
    let conn = await connect(broker.host, port);
    const producers: Producer[] = [];
    try {
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'tx-restart', numPartitions: 2 }] });
      await admin.disconnect();
      const p1 = transactionalProducer(kafka, 'tx-restart-commit');
      const p2 = transactionalProducer(kafka, 'tx-restart-open', 2_000);
      producers.push(p1, p2);
      await Promise.all([p1.connect(), p2.connect()]);
      const open = await p2.transaction();
      await open.send({ topic: 'tx-restart', messages: [{ partition: 0, value: 'open-0' }] });

      // The markers are lost: every WriteTxnMarkers connection is closed before it is served.
      broker.control.intercept({ api: 'WriteTxnMarkers' }, 'close');
      const txn = await p1.transaction();
      await txn.send({ topic: 'tx-restart', messages: [{ partition: 0, value: 'c-0' }, { partition: 1, value: 'c-1' }] });
      // EndTxn is answered once PrepareCommit is durable; the markers then fail to arrive.
      await txn.commit();
      expect((await describeTransaction(conn, 'tx-restart-commit')).transactionState).toBe('PrepareCommit');
      const logs = [0, 1].map((p) => broker.server.logManager.getLog('tx-restart', p)!);
      expect(logs.every((l) => l.lastStableOffset < l.logEndOffset)).toBe(true);
      await Promise.all(producers.map((p) => p.disconnect()));
      await conn.close();
      await broker.close();

      broker = await startBroker({ logLevel: 'error', config: CONFIG, dataDir, port });
      kafka = kafkaFor(broker, 'txn-restart-2');
      conn = await connect(broker.host, port);
      // The reloaded coordinator resends the COMMIT markers and completes the transaction ...
      await waitFor('the commit completed after the restart', async () => (await describeTransaction(conn, 'tx-restart-commit')).transactionState === 'CompleteCommit', 10_000);
      // ... and aborts the one left open once its timeout passes.
      await waitFor('the open transaction aborted', async () => (await describeTransaction(conn, 'tx-restart-open')).transactionState === 'CompleteAbort', 10_000);
      const rc = await readAll(kafka, 'tx-restart', 2, false, 'restart-readers');
      expect(byValue(rc.map((v) => v.slice(2)))).toEqual(['c-0', 'c-1']);
      for (const p of [0, 1]) {
        const log = broker.server.logManager.getLog('tx-restart', p)!;
        expectContiguousOffsets(storedBatches(log.dir));
        expect(await lastStableOffset(conn, 'tx-restart', p)).toEqual({ errorCode: ErrorCode.NONE, offset: log.logEndOffset });
      }
      // The producer can carry on with its transactional id.
      const p3 = transactionalProducer(kafka, 'tx-restart-commit');
      producers.push(p3);
      await p3.connect();
      const next = await p3.transaction();
      await next.send({ topic: 'tx-restart', messages: [{ partition: 1, value: 'c-2' }] });
      await next.commit();
    } finally {
      await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
      await conn.close();
      await broker.close();
    }
  });
});
