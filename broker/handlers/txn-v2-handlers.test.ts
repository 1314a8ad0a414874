/**
 * KIP-890 part 2 through the real dispatcher of a running broker at transaction.version 2 (a fresh
 * cluster's level), for what the wire test in compat-tests/transactions/kip890-v2.test.ts does
 * not cover: Produce v12 adds partitions even with transaction.partition.verification.enable off,
 * and its errors as the producer sees them (INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH for
 * a fenced epoch, NOT_ENOUGH_REPLICAS while the previous transaction's markers are still being
 * written), with nothing appended on a failure; TxnOffsetCommit v5's errors from the implicit add
 * (INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH, CONCURRENT_TRANSACTIONS); EndTxn v5's
 * response fields on errors; and EndTxn v5 below transaction.version 2, handled as v4 (no bump).
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { DispatchClient } from '../testing/dispatch-client';

const API = { Produce: 0, FindCoordinator: 10, CreateTopics: 19, InitProducerId: 22, EndTxn: 26, TxnOffsetCommit: 28, UpdateFeatures: 57, DescribeTransactions: 65 };
const TOPIC = 'tv2';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'txn-v2-test');
const call = (apiKey: number, version: number, body: object) => client.call(apiKey, version, body);

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    config: { 'offsets.topic.num.partitions': 1, 'transaction.state.log.num.partitions': 1, 'transaction.partition.verification.enable': false },
  });
  const created = await call(API.CreateTopics, 7, { topics: [{ name: TOPIC, numPartitions: 2, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
  // The coordinators' topics exist from the first lookups on (__consumer_offsets for TxnOffsetCommit).
  for (const keyType of [1, 0]) {
    const fc = await call(API.FindCoordinator, 4, { keyType, coordinatorKeys: ['setup'] });
    expect(fc.coordinators[0].errorCode).toBe(ErrorCode.NONE);
  }
});

afterAll(async () => {
  await broker?.close();
});

interface Producer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  seq: Map<number, number>;
}

async function initProducer(transactionalId: string): Promise<Producer> {
  const r = await call(API.InitProducerId, 5, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(r.errorCode).toBe(ErrorCode.NONE);
  return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch, seq: new Map() };
}

async function produce(p: Producer, partition: number, value: string, over: { producerId?: bigint; producerEpoch?: number } = {}): Promise<{ errorCode: number; errorMessage: string | null }> {
  const seq = p.seq.get(partition) ?? 0;
  const records = buildRecordBatch([{ value }], { producerId: over.producerId ?? p.producerId, producerEpoch: over.producerEpoch ?? p.producerEpoch, baseSequence: seq, isTransactional: true });
  const r = await call(API.Produce, 12, { transactionalId: p.transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  const res = r.responses[0].partitionResponses[0];
  if (res.errorCode === ErrorCode.NONE) p.seq.set(partition, seq + 1);
  return res;
}

async function txnOffsetCommit(p: Producer, groupId: string, over: { producerId?: bigint; producerEpoch?: number } = {}): Promise<number> {
  const r = await call(API.TxnOffsetCommit, 5, {
    transactionalId: p.transactionalId,
    groupId,
    producerId: over.producerId ?? p.producerId,
    producerEpoch: over.producerEpoch ?? p.producerEpoch,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  return r.topics[0].partitions[0].errorCode;
}

const endTxn = (p: Producer, committed: boolean, version = 5) =>
  call(API.EndTxn, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed });

async function describeTxn(transactionalId: string): Promise<any> {
  return (await call(API.DescribeTransactions, 0, { transactionalIds: [transactionalId] })).transactionStates[0];
}

/** Bounded wait until the coordinator wrote every marker of the transaction. */
async function completed(transactionalId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await describeTxn(transactionalId);
    if (s.transactionState === 'CompleteCommit' || s.transactionState === 'CompleteAbort') return s.transactionState;
    if (Date.now() > deadline) throw new Error(`${transactionalId} still ${s.transactionState}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Faults a failed test must not leave behind for the next one. */
const afterRemove: (() => void)[] = [];
afterEach(() => {
  for (const f of afterRemove.splice(0)) f();
});

const leo = (partition: number) => broker.server.logManager.getLog(TOPIC, partition)!.logEndOffset;

test('Produce v12 adds the partition to the transaction with transaction.partition.verification.enable off', async () => {
  const p = await initProducer('v12-add');
  expect(await produce(p, 0, 'x')).toMatchObject({ errorCode: ErrorCode.NONE });
  expect(await describeTxn('v12-add')).toMatchObject({ transactionState: 'Ongoing', topics: [{ topic: TOPIC, partitions: [0] }] });
  expect((await endTxn(p, true)).errorCode).toBe(ErrorCode.NONE);
  await completed('v12-add');
});

test('Produce v12 errors: an unknown id or producer id, a fenced epoch, the previous transaction still completing; nothing is appended', async () => {
  const p = await initProducer('v12-errors');
  const before = leo(1);
  expect((await produce({ ...p, transactionalId: 'v12-never-initialized' }, 1, 'nobody')).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  expect((await produce(p, 1, 'other id', { producerId: p.producerId + 1000n })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  expect((await produce(p, 1, 'future epoch', { producerEpoch: p.producerEpoch + 1 })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect(leo(1)).toBe(before);

  // The first transaction commits, but its markers cannot be delivered for now.
  expect((await produce(p, 1, 'first')).errorCode).toBe(ErrorCode.NONE);
  const lost = broker.control.intercept({ api: 'WriteTxnMarkers' }, 'close');
  afterRemove.push(() => lost.remove());
  const commit = await endTxn(p, true);
  expect(commit).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: p.producerEpoch + 1 });
  const old = { ...p };
  p.producerEpoch = commit.producerEpoch;
  p.seq.clear();
  // The next transaction's first write: CONCURRENT_TRANSACTIONS at the coordinator, which a producer retries as NOT_ENOUGH_REPLICAS.
  const during = await produce(p, 1, 'second');
  expect(during.errorCode).toBe(ErrorCode.NOT_ENOUGH_REPLICAS);
  expect(during.errorMessage).toMatch(/CONCURRENT_TRANSACTIONS/);
  expect(await txnOffsetCommit(p, 'v12-group')).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
  const held = leo(1);
  lost.remove();
  expect(await completed('v12-errors')).toBe('CompleteCommit');
  expect(leo(1)).toBe(held + 1n); // the COMMIT marker
  expect((await produce(p, 1, 'second')).errorCode).toBe(ErrorCode.NONE);
  // The epoch of the committed transaction is fenced.
  expect((await produce(old, 0, 'zombie')).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect((await endTxn(p, false)).producerEpoch).toBe(p.producerEpoch + 1);
  await completed('v12-errors');
});

test('TxnOffsetCommit v5 errors from the implicit add: INVALID_PRODUCER_ID_MAPPING, INVALID_PRODUCER_EPOCH; nothing is stored', async () => {
  const p = await initProducer('v5-offsets');
  expect(await txnOffsetCommit({ ...p, transactionalId: 'v5-never-initialized' }, 'v5-group')).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  expect(await txnOffsetCommit(p, 'v5-group', { producerEpoch: p.producerEpoch + 3 })).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  expect((await describeTxn('v5-offsets')).transactionState).toBe('Empty');
  expect(await txnOffsetCommit(p, 'v5-group')).toBe(ErrorCode.NONE);
  expect((await describeTxn('v5-offsets')).topics).toEqual([{ topic: '__consumer_offsets', partitions: [0] }]);
  expect((await endTxn(p, false)).errorCode).toBe(ErrorCode.NONE);
  await completed('v5-offsets');
});

test('EndTxn v5 answers -1 / -1 with an error; below transaction.version 2 it is v4 (no bump, the same epoch returned)', async () => {
  const p = await initProducer('v5-end');
  expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.INVALID_TXN_STATE, producerId: -1n, producerEpoch: -1 });
  expect(await endTxn({ ...p, producerEpoch: 9 }, true)).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1 });

  const down = await call(API.UpdateFeatures, 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }], validateOnly: false });
  expect(down.errorCode).toBe(ErrorCode.NONE);
  try {
    expect((await produce(p, 0, 'tv1')).errorCode).toBe(ErrorCode.NONE); // v12 still adds the partition
    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: p.producerEpoch });
    await completed('v5-end');
    expect(await describeTxn('v5-end')).toMatchObject({ producerEpoch: p.producerEpoch });
    expect(await endTxn(p, true)).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: p.producerEpoch });
  } finally {
    const up = await call(API.UpdateFeatures, 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: 1 }], validateOnly: false });
    expect(up.errorCode).toBe(ErrorCode.NONE);
  }
});
