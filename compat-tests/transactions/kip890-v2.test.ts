/**
 * KIP-890 part 2 (transaction.version 2) over the wire, driven with krill's own protocol codecs the
 * way Kafka 4.0's Java producer drives a broker whose finalized transaction.version is 2:
 * InitProducerId, Produce v12 transactional batches to two partitions with no AddPartitionsToTxn
 * (the partition leader adds them), TxnOffsetCommit v5 with no AddOffsetsToTxn (the group
 * coordinator adds the offsets partition), EndTxn v5 commit answered with the bumped epoch, then a
 * second transaction on that epoch (sequences restart at 0) that is aborted (epoch + 1 again), its
 * retry answered idempotently, and the fenced epochs refused by the partitions and the offsets
 * partition. A read_committed KafkaJS consumer then sees exactly the committed records, and the
 * group's committed offsets are the first transaction's. Produce v11 keeps part-1 verification.
 * Across a clean broker restart: a commit whose markers were not delivered is reloaded from
 * __transaction_state with its bumped epoch, completed with markers of that epoch, and its retry
 * is answered from the reloaded state.
 */
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { connect, type BrokerConnection } from '../../client/network-client';
import { describeTransaction, scanLog, layout } from '../helpers/transactions';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { waitFor } from '../replication/helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
jest.setTimeout(60_000);

const TOPIC = 'kip890';
const GROUP = 'kip890-group';
const TXN_ID = 'kip890-producer';

let broker: RunningBroker;
let conn: BrokerConnection;

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    config: { 'offsets.topic.num.partitions': 2, 'transaction.state.log.num.partitions': 2, 'group.initial.rebalance.delay.ms': 0 },
  });
  conn = await connect(broker.host, broker.port, { clientId: 'kip890-java-like' });
  const created = await conn.send('CreateTopics', 7, { topics: [{ name: TOPIC, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
  expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
});

interface Producer {
  producerId: bigint;
  producerEpoch: number;
  /** Next sequence per partition; a new epoch starts every partition at 0 again. */
  seq: Map<number, number>;
}

async function produce(p: Producer, partition: number, values: string[], version = 12, epoch = p.producerEpoch): Promise<{ errorCode: number; baseOffset: bigint }> {
  const seq = p.seq.get(partition) ?? 0;
  const records = buildRecordBatch(
    values.map((value) => ({ key: null, value })),
    { producerId: p.producerId, producerEpoch: epoch, baseSequence: seq, isTransactional: true },
  );
  const r = await conn.send('Produce', version, { transactionalId: TXN_ID, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  const res = r.responses[0].partitionResponses[0];
  if (res.errorCode === ErrorCode.NONE) p.seq.set(partition, seq + values.length);
  return res;
}

async function txnOffsetCommit(p: Producer, offsets: [number, bigint][], epoch = p.producerEpoch): Promise<number[]> {
  const r = await conn.send('TxnOffsetCommit', 5, {
    transactionalId: TXN_ID,
    groupId: GROUP,
    producerId: p.producerId,
    producerEpoch: epoch,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: offsets.map(([partitionIndex, committedOffset]) => ({ partitionIndex, committedOffset, committedLeaderEpoch: -1, committedMetadata: '' })) }],
  });
  return r.topics[0].partitions.map((x) => x.errorCode);
}

const endTxn = (p: Producer, committed: boolean, epoch = p.producerEpoch) =>
  conn.send('EndTxn', 5, { transactionalId: TXN_ID, producerId: p.producerId, producerEpoch: epoch, committed });

/** The coordinator has written every marker (bounded wait on the transaction's state). */
const completed = (state: 'CompleteCommit' | 'CompleteAbort') =>
  waitFor(`${TXN_ID} ${state}`, async () => ((await describeTransaction(conn, TXN_ID)).transactionState === state ? true : undefined));

async function transactionPartitions(): Promise<string[]> {
  const r = await conn.send('DescribeTransactions', 0, { transactionalIds: [TXN_ID] });
  return r.transactionStates[0].topics.flatMap((t) => t.partitions.map((x) => `${t.topic}-${x}`)).sort();
}

test('a Kafka 4.0 producer at transaction.version 2: implicit partitions and offsets, an epoch bump per transaction, read_committed sees the commit only', async () => {
  // What the Java client looks at before it uses the v2 protocol: transaction.version 2 finalized, the versions advertised.
  const av = await conn.send('ApiVersions', 4, { clientSoftwareName: 'kip890-test', clientSoftwareVersion: '4.0' });
  expect(av.finalizedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersionLevel: 2, maxVersionLevel: 2 });
  expect(av.supportedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersion: 0, maxVersion: 2 });
  const max = (key: number) => av.apiKeys.find((k) => k.apiKey === key)?.maxVersion;
  expect([max(0), max(28), max(26)]).toEqual([12, 5, 5]);

  const fc = await conn.send('FindCoordinator', 4, { keyType: 1, coordinatorKeys: [TXN_ID] });
  expect(fc.coordinators[0]).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker.nodeId });
  const init = await conn.send('InitProducerId', 5, { transactionalId: TXN_ID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(init).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
  const p: Producer = { producerId: init.producerId, producerEpoch: init.producerEpoch, seq: new Map() };

  // Transaction 1: two partitions and the group's offsets, none of them added by the producer.
  expect((await produce(p, 0, ['c0-a', 'c0-b'])).errorCode).toBe(ErrorCode.NONE);
  expect((await produce(p, 1, ['c1-a'])).errorCode).toBe(ErrorCode.NONE);
  expect((await produce(p, 0, ['c0-c'])).errorCode).toBe(ErrorCode.NONE); // already in the transaction here
  expect(await transactionPartitions()).toEqual([`${TOPIC}-0`, `${TOPIC}-1`]);
  const gc = await conn.send('FindCoordinator', 4, { keyType: 0, coordinatorKeys: [GROUP] });
  expect(gc.coordinators[0].errorCode).toBe(ErrorCode.NONE);
  expect(await txnOffsetCommit(p, [[0, 3n], [1, 1n]])).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  const offsetsPartition = `__consumer_offsets-${broker.server.groupCoordinator.partitionFor(GROUP)}`;
  expect(await transactionPartitions()).toEqual([offsetsPartition, `${TOPIC}-0`, `${TOPIC}-1`].sort());
  const commit = await endTxn(p, true);
  expect(commit).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 1 });
  await completed('CompleteCommit');
  // The markers carry the bumped epoch.
  const markerEpochs = scanLog(broker, TOPIC, 0).filter((b) => b.isControl).map((b) => b.producerEpoch);
  expect(markerEpochs).toEqual([1]);

  // Transaction 2 on the new epoch, sequences from 0 again; it is aborted.
  p.producerEpoch = commit.producerEpoch;
  p.seq.clear();
  expect((await produce(p, 0, ['a0-a'])).errorCode).toBe(ErrorCode.NONE);
  expect((await produce(p, 1, ['a1-a', 'a1-b'])).errorCode).toBe(ErrorCode.NONE);
  expect(await txnOffsetCommit(p, [[0, 4n], [1, 3n]])).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  // The epoch of the committed transaction is fenced from now on, for data and offsets alike.
  expect((await produce(p, 1, ['zombie'], 12, 0)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect(await txnOffsetCommit(p, [[0, 99n]], 0)).toEqual([ErrorCode.INVALID_PRODUCER_EPOCH]);
  const abort = await endTxn(p, false);
  expect(abort).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 2 });
  await completed('CompleteAbort');
  // The retry of that EndTxn (the response was lost, say) gets the same answer; an EndTxn of an older epoch is fenced.
  expect(await endTxn(p, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: 2 });
  expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.INVALID_TXN_STATE, producerId: -1n, producerEpoch: -1 });
  expect(await endTxn(p, false, 0)).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1 });
  expect(layout(scanLog(broker, TOPIC, 0))).toEqual(['c0-a', 'c0-b', 'c0-c', '<COMMIT>', 'a0-a', '<ABORT>']);
  expect(layout(scanLog(broker, TOPIC, 1))).toEqual(['c1-a', '<COMMIT>', 'a1-a', 'a1-b', '<ABORT>']);

  // Produce v11 keeps KIP-890 part 1: a partition the producer did not add is refused, not added.
  p.producerEpoch = abort.producerEpoch;
  p.seq.clear();
  expect((await produce(p, 0, ['v11'], 11)).errorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE);
  expect((await describeTransaction(conn, TXN_ID)).transactionState).toBe('CompleteAbort');

  // A read_committed consumer sees exactly the committed records; the group's offsets are transaction 1's.
  // A plain record after everything in each partition tells when the reader is past the aborted ones.
  const kafka = new Kafka({ clientId: 'kip890-reader', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 50 } });
  const plain = kafka.producer({ allowAutoTopicCreation: false });
  await plain.connect();
  try {
    await plain.send({ topic: TOPIC, messages: [0, 1].map((partition) => ({ partition, value: `end-${partition}` })) });
  } finally {
    await plain.disconnect();
  }
  const consumer = kafka.consumer({ groupId: 'kip890-reader', readUncommitted: false, maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 500 });
  const got: string[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ partition, message }) => void got.push(`${partition}:${message.value!.toString()}`) });
    await waitFor('both end records', () => (got.includes('0:end-0') && got.includes('1:end-1') ? true : undefined), 20_000, 20);
  } finally {
    await consumer.disconnect();
  }
  expect(got.sort()).toEqual(['0:c0-a', '0:c0-b', '0:c0-c', '0:end-0', '1:c1-a', '1:end-1']);

  const admin = kafka.admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
    expect(offsets.partitions.map((x) => [x.partition, x.offset]).sort()).toEqual([
      [0, '3'],
      [1, '1'],
    ]);
  } finally {
    await admin.disconnect();
  }
});

describe('across a clean broker restart', () => {
  let tb: TestBroker;
  let c: BrokerConnection;
  const topic = 'kip890-restart';
  const id = 'kip890-restart-producer';

  beforeAll(async () => {
    tb = await startTestBroker('embedded', { config: { 'offsets.topic.num.partitions': 1, 'transaction.state.log.num.partitions': 1 } });
    c = await connect(tb.host, tb.port);
    const res = await c.send('CreateTopics', 7, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    expect(res.topics[0].errorCode).toBe(ErrorCode.NONE);
  }, 30_000);

  afterAll(async () => {
    await c?.close();
    await tb?.close();
  });

  const send = async (producerId: bigint, producerEpoch: number, baseSequence: number, value: string) => {
    const records = buildRecordBatch([{ key: null, value }], { producerId, producerEpoch, baseSequence, isTransactional: true });
    const r = await c.send('Produce', 12, { transactionalId: id, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
    return r.responses[0].partitionResponses[0].errorCode;
  };
  const end = (producerId: bigint, producerEpoch: number, committed: boolean) => c.send('EndTxn', 5, { transactionalId: id, producerId, producerEpoch, committed });
  const stateOf = async () => (await describeTransaction(c, id)).transactionState;

  test('a bumped PrepareCommit whose markers were lost completes after the restart with its epoch; the retry is answered from the log', async () => {
    expect((await c.send('FindCoordinator', 4, { keyType: 1, coordinatorKeys: [id] })).coordinators[0].errorCode).toBe(ErrorCode.NONE);
    const init = await c.send('InitProducerId', 5, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(init.errorCode).toBe(ErrorCode.NONE);
    const pid = init.producerId;
    expect(await send(pid, 0, 0, 'one')).toBe(ErrorCode.NONE);
    expect(await end(pid, 0, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 1 });
    await waitFor('the first commit complete', async () => ((await stateOf()) === 'CompleteCommit' ? true : undefined));

    // The second transaction's markers cannot be delivered before the broker stops.
    expect(await send(pid, 1, 0, 'two')).toBe(ErrorCode.NONE);
    tb.embedded!.control.intercept({ api: 'WriteTxnMarkers' }, 'close');
    expect(await end(pid, 1, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 2 });
    expect(await stateOf()).toBe('PrepareCommit');

    await c.close();
    await tb.restart();
    c = await connect(tb.host, tb.port);
    await waitFor('the reloaded commit complete', async () => ((await stateOf()) === 'CompleteCommit' ? true : undefined), 20_000);
    const markers = scanLog(tb.embedded!, topic, 0).filter((b) => b.isControl);
    expect(markers.map((b) => [b.producerId, b.producerEpoch])).toEqual([
      [pid, 1],
      [pid, 2],
    ]);
    expect(layout(scanLog(tb.embedded!, topic, 0))).toEqual(['one', '<COMMIT>', 'two', '<COMMIT>']);
    // The retry of the EndTxn that bumped to 2, answered from the reloaded record; older epochs are fenced.
    expect(await end(pid, 1, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 2 });
    expect(await end(pid, 0, true)).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED });
    expect(await send(pid, 1, 1, 'late')).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    // The producer carries on at epoch 2.
    expect(await send(pid, 2, 0, 'three')).toBe(ErrorCode.NONE);
    expect(await end(pid, 2, false)).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 3 });
    await waitFor('the abort complete', async () => ((await stateOf()) === 'CompleteAbort' ? true : undefined));
    expect(layout(scanLog(tb.embedded!, topic, 0))).toEqual(['one', '<COMMIT>', 'two', '<COMMIT>', 'three', '<ABORT>']);
  }, 45_000);
});
