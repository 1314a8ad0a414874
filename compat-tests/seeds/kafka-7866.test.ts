/**
 * KAFKA-7866 (../shared/seeds/000_edb9fa99a6c8d34e.txt): an ABORT marker reached the log but its
 * transaction index entry could not be written (the on-demand .txnindex could not be created,
 * probably at the open-file limit). Kafka advanced the log end offset only after the index append,
 * so the next append reused the marker's offset: duplicate offsets for hours.
 *
 * The scenario through real clients (KafkaJS transactional producers, read_committed consumers):
 * a broker with two log directories; the .txnindex creation fails (EMFILE) at the first ABORT
 * marker of a partition in the second one. Then:
 * - the marker's offset is taken (the LEO moved right after the .log write) and never handed out
 *   again: the directory goes offline, so that partition refuses writes with KAFKA_STORAGE_ERROR;
 * - its last stable offset stays at the aborted transaction's first offset (the transaction is not
 *   complete while its index entry is missing), so read_committed readers never get the aborted
 *   records without the entry that tells them to skip them;
 * - other partitions keep taking transactions (committed and aborted) and read_committed readers see
 *   exactly the committed ones;
 * - after a restart the log's producer-state replay rebuilds the missing entry, the coordinator,
 *   reloaded from __transaction_state, finishes the abort, the LSO reaches the log end, and the log
 *   holds every offset exactly once.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { connect, type BrokerConnection } from '../../client/network-client';
import { describeTransaction, expectContiguousOffsets, lastStableOffset, storedBatches } from '../helpers/transactions';
import { quietLogger } from '../recovery/helpers';
import { waitFor } from '../replication/helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
jest.setTimeout(60_000);

const TOPIC = 'k7866';
const OTHER = 'k7866-other';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-kafka-7866-'));
const dirA = path.join(root, 'a');
const dirB = path.join(root, 'b');
// log.dirs as an override: it must win over startBroker's dataDir shorthand.
const OVERRIDES = [`log.dirs=${dirA},${dirB}`];
const CONFIG = {
  'transaction.state.log.num.partitions': 1,
  'offsets.topic.num.partitions': 1,
  'group.initial.rebalance.delay.ms': 0,
};

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function kafkaFor(b: RunningBroker): Kafka {
  return new Kafka({
    clientId: 'kafka-7866',
    brokers: b.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { retries: 5, initialRetryTime: 50, maxRetryTime: 500 },
  });
}

function transactional(kafka: Kafka, id: string): Producer {
  return kafka.producer({ transactionalId: id, maxInFlightRequests: 1, idempotent: true, allowAutoTopicCreation: false });
}

async function readCommitted(kafka: Kafka, topics: string[], count: number, groupId: string): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 100 });
  const got: string[] = [];
  try {
    await consumer.connect();
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor(`${count} committed records`, () => got.length >= count, 20_000, 20);
    // Nothing more arrives (a late aborted record would show up here).
    await new Promise((r) => setTimeout(r, 300));
    return got;
  } finally {
    await consumer.disconnect();
  }
}

test('KAFKA-7866: a failed .txnindex creation at the first ABORT marker never duplicates an offset, never exposes aborted data, and is repaired at restart', async () => {
  const lines: string[] = [];
  let broker = await startBroker({ logger: quietLogger(lines), config: CONFIG, overrides: OVERRIDES, dataDir: dirA });
  const port = broker.port;
  let kafka = kafkaFor(broker);
  let conn: BrokerConnection = await connect(broker.host, port);
  const producers: Producer[] = [];
  try {
    // Placement: new logs go to the directory with fewer of them (ties to the first). The
    // coordinators' logs (__transaction_state-0, __consumer_offsets-0) and the healthy topic end up
    // in dir A, the topic whose index will fail in dir B; a filler topic evens the counts.
    const admin = kafka.admin();
    await admin.connect();
    expect((await conn.send('FindCoordinator', 2, { key: 'k7866-first', keyType: 1 })).errorCode).toBe(ErrorCode.NONE);
    await admin.createTopics({ topics: [{ topic: 'k7866-filler', numPartitions: 1 }] });
    expect((await conn.send('FindCoordinator', 2, { key: 'k7866-readers', keyType: 0 })).errorCode).toBe(ErrorCode.NONE);
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    await admin.createTopics({ topics: [{ topic: OTHER, numPartitions: 1 }] });
    await admin.disconnect();
    const dirOf = (topic: string) => broker.server.logManager.getLog(topic, 0)!.parentDir;
    expect([dirOf('__transaction_state'), dirOf('__consumer_offsets'), dirOf(OTHER), dirOf(TOPIC)]).toEqual([
      path.resolve(dirA),
      path.resolve(dirA),
      path.resolve(dirA),
      path.resolve(dirB),
    ]);
    const logB = broker.server.logManager.getLog(TOPIC, 0)!;
    const p1 = transactional(kafka, 'k7866-first');
    producers.push(p1);
    await p1.connect();

    // A committed transaction across both topics (COMMIT writes no transaction index).
    let txn = await p1.transaction();
    await txn.send({ topic: TOPIC, messages: [{ value: 'committed-1b' }] });
    await txn.send({ topic: OTHER, messages: [{ value: 'committed-1a' }] });
    await txn.commit();
    await waitFor('the first commit complete', async () => (await describeTransaction(conn, 'k7866-first')).transactionState === 'CompleteCommit');

    // The next one aborts: the first ABORT marker of the partition in dir B creates its .txnindex, and that fails.
    broker.control.failStorage({ op: 'open', file: 'txnindex', topic: TOPIC, partition: 0, errno: 'EMFILE' });
    txn = await p1.transaction();
    await txn.send({ topic: TOPIC, messages: [{ value: 'aborted-2b' }] });
    await txn.send({ topic: OTHER, messages: [{ value: 'aborted-2a' }] });
    const abortedFirstOffset = (await lastStableOffset(conn, TOPIC, 0)).offset;
    await txn.abort(); // answered once PrepareAbort is durable
    await waitFor('the injected EMFILE', () => broker.control.storageFaultsInjected.some((i) => i.errno === 'EMFILE' && i.path.endsWith('.txnindex')));
    expect(broker.server.logManager.offlineLogDirs).toEqual([path.resolve(dirB)]);
    // The failure is logged with its context: which marker, where the LEO and the LSO stay.
    expect(lines.some((l) => /transaction index append for the ABORT marker .* failed; the log end offset stays at \d+, the last stable offset at or below \d+: EMFILE/.test(l))).toBe(true);

    // (0) The marker took its offset: the LEO moved before the index append.
    const markerOffset = logB.logEndOffset - 1n;
    const onDisk = storedBatches(logB.dir);
    expect(onDisk.at(-1)).toMatchObject({ baseOffset: markerOffset, marker: 'ABORT' });
    expect(fs.existsSync(path.join(logB.dir, '00000000000000000000.txnindex'))).toBe(false);
    // (1) The LSO stays at the aborted transaction's first offset: its records are not stable.
    expect(logB.lastStableOffset).toBe(abortedFirstOffset);
    // (2) The producer state's end offset did not move past the marker: a reload replays it.
    expect(logB.producerState.mapEndOffset).toBeLessThanOrEqual(markerOffset);
    // (3) Nothing more is written there: the partition answers KAFKA_STORAGE_ERROR, for fetches too.
    const idempotentWrite = await conn.send('Produce', 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildRecordBatch([{ value: 'stray' }]) }] }],
    });
    expect(idempotentWrite.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect((await lastStableOffset(conn, TOPIC, 0)).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    // The coordinator keeps retrying that marker; the abort is not complete.
    expect((await describeTransaction(conn, 'k7866-first')).transactionState).toBe('PrepareAbort');

    // Other producers keep going on the healthy directory: commits and aborts.
    const p2 = transactional(kafka, 'k7866-second');
    producers.push(p2);
    await p2.connect();
    const committedA: string[] = ['committed-1a'];
    for (let t = 0; t < 6; t++) {
      const x = await p2.transaction();
      const values = [`p2-${t}-0`, `p2-${t}-1`];
      await x.send({ topic: OTHER, messages: values.map((value) => ({ value })) });
      if (t % 2 === 0) {
        await x.commit();
        committedA.push(...values);
      } else {
        await x.abort();
      }
    }
    await waitFor('the second producer done', async () => (await describeTransaction(conn, 'k7866-second')).transactionState === 'CompleteAbort');
    const logA = broker.server.logManager.getLog(OTHER, 0)!;
    expect(logA.lastStableOffset).toBe(logA.logEndOffset);
    // read_committed readers get exactly the committed records of the topic that serves.
    const seenBefore = await readCommitted(kafka, [OTHER], committedA.length, 'k7866-readers');
    expect([...seenBefore].sort()).toEqual([...committedA].sort());
    expect(seenBefore.some((v) => v.startsWith('aborted'))).toBe(false);
    // No offset is on disk twice, in either partition.
    expectContiguousOffsets(storedBatches(logB.dir));
    expectContiguousOffsets(storedBatches(logA.dir));
    const leoB = logB.logEndOffset;

    await Promise.all(producers.splice(0).map((p) => p.disconnect()));
    await conn.close();
    await broker.close();

    // Restart with the same directories and no faults.
    broker = await startBroker({ logger: quietLogger(lines), config: CONFIG, overrides: OVERRIDES, dataDir: dirA, port });
    kafka = kafkaFor(broker);
    conn = await connect(broker.host, port);
    const reloaded = broker.server.logManager.getLog(TOPIC, 0)!;
    expect(broker.server.logManager.offlineLogDirs).toEqual([]);
    // The producer-state replay wrote the missing index entry ...
    expect(reloaded.rebuiltTxnIndexEntries).toBe(1);
    const entries = reloaded.logSegments()[0].txnIndex!.entries();
    expect(entries[0]).toMatchObject({ producerId: onDisk.at(-1)!.producerId, firstOffset: abortedFirstOffset, lastOffset: markerOffset });
    // ... and the reloaded coordinator finishes the abort (its marker is written again, at a new offset).
    await waitFor('the abort completed after the restart', async () => (await describeTransaction(conn, 'k7866-first')).transactionState === 'CompleteAbort', 15_000);
    expect(reloaded.logEndOffset).toBeGreaterThan(leoB);
    await waitFor('the LSO at the log end', async () => (await lastStableOffset(conn, TOPIC, 0)).offset === reloaded.logEndOffset);
    const finalB = storedBatches(reloaded.dir);
    expectContiguousOffsets(finalB);
    expect(finalB.filter((b) => b.marker).map((b) => b.marker)).toEqual(['COMMIT', 'ABORT', 'ABORT']);

    // The first producer carries on; read_committed sees every committed record and no aborted one.
    const p3 = transactional(kafka, 'k7866-first');
    producers.push(p3);
    await p3.connect();
    const last = await p3.transaction();
    await last.send({ topic: TOPIC, messages: [{ value: 'committed-3b' }] });
    await last.commit();
    const expected = [...committedA, 'committed-1b', 'committed-3b'];
    const seenAfter = await readCommitted(kafka, [TOPIC, OTHER], expected.length, 'k7866-readers-after');
    expect([...seenAfter].sort()).toEqual([...expected].sort());
    expectContiguousOffsets(storedBatches(reloaded.dir));
  } finally {
    await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
    await conn.close();
    await broker.close();
  }
});
