/**
 * The transaction APIs at every version they advertise, through the real dispatcher of a running
 * broker (markers go out over its own listener, as in production): InitProducerId with a
 * transactional id, AddPartitionsToTxn (v0-3 and the batched / verify-only v4+), Produce of
 * transactional batches, AddOffsetsToTxn, TxnOffsetCommit with OffsetFetch require_stable, EndTxn,
 * WriteTxnMarkers, DescribeTransactions, ListTransactions, DescribeProducers, and what
 * read_committed Fetch and ListOffsets see.
 * The broker runs at transaction.version 1 (KIP-890 part 1), lowered with UpdateFeatures from the
 * fresh cluster's 2: these are the semantics of clients that use AddPartitionsToTxn themselves.
 * Produce v12, TxnOffsetCommit v5 and EndTxn v5 at transaction.version 2 (part 2) are
 * txn-v2-handlers.test.ts.
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';

const API = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  OffsetFetch: 9,
  FindCoordinator: 10,
  CreateTopics: 19,
  InitProducerId: 22,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  WriteTxnMarkers: 27,
  TxnOffsetCommit: 28,
  DescribeProducers: 61,
  DescribeTransactions: 65,
  ListTransactions: 66,
  UpdateFeatures: 57,
};

const TOPIC = 'txt';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'txn-test');
const call = (apiKey: number, version: number, body: object) => client.call(apiKey, version, body);

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'error',
    config: { 'offsets.topic.num.partitions': 2, 'transaction.state.log.num.partitions': 2, 'transaction.max.timeout.ms': 120_000 },
  });
  const created = await call(API.CreateTopics, 7, { topics: [{ name: TOPIC, numPartitions: 3, replicationFactor: 1 }], timeoutMs: 1000 });
  expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);
  const tv = await call(API.UpdateFeatures, 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }], validateOnly: false });
  expect(tv.errorCode).toBe(ErrorCode.NONE);
  // The transaction coordinator's topic exists from the first lookup on.
  const fc = await call(API.FindCoordinator, 4, { keyType: 1, coordinatorKeys: ['setup'] });
  expect(fc.coordinators[0]).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker.nodeId });
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

async function initProducer(transactionalId: string, version = 3): Promise<Producer> {
  const r = await call(API.InitProducerId, version, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(r.errorCode).toBe(ErrorCode.NONE);
  return { transactionalId, producerId: r.producerId, producerEpoch: r.producerEpoch, seq: new Map() };
}

async function addPartitions(p: Producer, partitions: number[], topic = TOPIC): Promise<number[]> {
  const r = await call(API.AddPartitionsToTxn, 3, {
    v3AndBelowTransactionalId: p.transactionalId,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: [{ name: topic, partitions }],
  });
  return r.resultsByTopicV3AndBelow[0].resultsByPartition.map((x: any) => x.partitionErrorCode);
}

async function produceTxn(p: Producer, partition: number, values: string[], version = 9): Promise<{ errorCode: number; baseOffset: bigint }> {
  const seq = p.seq.get(partition) ?? 0;
  const records = buildRecordBatch(values.map((value) => ({ value })), {
    producerId: p.producerId,
    producerEpoch: p.producerEpoch,
    baseSequence: seq,
    isTransactional: true,
  });
  const r = await call(API.Produce, version, {
    transactionalId: p.transactionalId,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }],
  });
  const res = r.responses[0].partitionResponses[0];
  if (res.errorCode === ErrorCode.NONE) p.seq.set(partition, seq + values.length);
  return res;
}

async function endTxn(p: Producer, commit: boolean, version = 3): Promise<number> {
  const r = await call(API.EndTxn, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed: commit });
  return r.errorCode;
}

async function describeTxn(transactionalId: string): Promise<any> {
  const r = await call(API.DescribeTransactions, 0, { transactionalIds: [transactionalId] });
  return r.transactionStates[0];
}

/** Waits (bounded) until the coordinator has written every marker of the transaction. */
async function completed(transactionalId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await describeTxn(transactionalId);
    if (s.transactionState === 'CompleteCommit' || s.transactionState === 'CompleteAbort') return s.transactionState;
    if (Date.now() > deadline) throw new Error(`${transactionalId} still ${s.transactionState}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function fetchCommitted(partition: number, fetchOffset: bigint, version: number, isolationLevel: number): Promise<any> {
  const topicId = broker.server.metadata.topic(TOPIC)!.topicId;
  const r = await call(API.Fetch, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel,
    sessionEpoch: -1,
    topics: [{ topic: TOPIC, topicId, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
  });
  expect(r.errorCode).toBe(ErrorCode.NONE);
  return r.responses[0].partitions[0];
}

describe('transaction APIs at every advertised version', () => {
  test('InitProducerId: new ids, epoch bumps, KIP-360 resumption, fencing, timeouts', async () => {
    for (const v of versions(API.InitProducerId)) {
      const tid = `init-${v}`;
      const base = { transactionalId: tid, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 };
      const a = await call(API.InitProducerId, v, base);
      expect(a).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
      expect(a.producerId).toBeGreaterThanOrEqual(0n);
      const b = await call(API.InitProducerId, v, base);
      expect(b).toMatchObject({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
      if (v >= 3) {
        // The producer recovering with its own id and epoch gets the next epoch ...
        const c = await call(API.InitProducerId, v, { ...base, producerId: a.producerId, producerEpoch: 1 });
        expect(c).toMatchObject({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 2 });
        // ... a stale epoch is fenced (INVALID_PRODUCER_EPOCH before v4) ...
        const stale = await call(API.InitProducerId, v, { ...base, producerId: a.producerId, producerEpoch: 0 });
        expect(stale.errorCode).toBe(v >= 4 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH);
        // ... and a retry of the bump it missed gets the same epoch again.
        const retry = await call(API.InitProducerId, v, { ...base, producerId: a.producerId, producerEpoch: 1 });
        expect(retry).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 2 });
        const half = await call(API.InitProducerId, v, { ...base, producerId: a.producerId, producerEpoch: -1 });
        expect(half.errorCode).toBe(ErrorCode.INVALID_REQUEST);
      }
      expect((await call(API.InitProducerId, v, { ...base, transactionTimeoutMs: 0 })).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      expect((await call(API.InitProducerId, v, { ...base, transactionTimeoutMs: 120_001 })).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      expect((await call(API.InitProducerId, v, { ...base, transactionalId: '' })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
      const idem = await call(API.InitProducerId, v, { ...base, transactionalId: null });
      expect(idem).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 0 });
      expect(idem.producerId).not.toBe(a.producerId);
    }
  });

  test('InitProducerId with a transaction open aborts it under a bumped epoch and answers CONCURRENT_TRANSACTIONS', async () => {
    const p = await initProducer('fence-open');
    expect(await addPartitions(p, [2])).toEqual([ErrorCode.NONE]);
    const first = await produceTxn(p, 2, ['x']);
    expect(first.errorCode).toBe(ErrorCode.NONE);
    const again = await call(API.InitProducerId, 3, { transactionalId: p.transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(again.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(await completed(p.transactionalId)).toBe('CompleteAbort');
    // The fencing epoch is the one after the producer's; the retry bumps once more.
    expect((await describeTxn(p.transactionalId)).producerEpoch).toBe(p.producerEpoch + 1);
    const retried = await call(API.InitProducerId, 3, { transactionalId: p.transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    expect(retried).toMatchObject({ errorCode: ErrorCode.NONE, producerId: p.producerId, producerEpoch: p.producerEpoch + 2 });
    // The old producer is fenced everywhere: the partition saw the abort marker's epoch.
    expect((await produceTxn(p, 2, ['late'])).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await endTxn(p, true)).toBe(ErrorCode.PRODUCER_FENCED);
  });

  test('AddPartitionsToTxn, transactional Produce and EndTxn; verify-only checks (v4+)', async () => {
    for (const v of versions(API.AddPartitionsToTxn)) {
      const p = await initProducer(`apt-${v}`);
      const add = (partitions: { name: string; partitions: number[] }[], over: Partial<Producer> = {}, verifyOnly = false) =>
        v < 4
          ? call(API.AddPartitionsToTxn, v, {
              v3AndBelowTransactionalId: over.transactionalId ?? p.transactionalId,
              v3AndBelowProducerId: over.producerId ?? p.producerId,
              v3AndBelowProducerEpoch: over.producerEpoch ?? p.producerEpoch,
              v3AndBelowTopics: partitions,
            }).then((r) => r.resultsByTopicV3AndBelow)
          : call(API.AddPartitionsToTxn, v, {
              transactions: [
                {
                  transactionalId: over.transactionalId ?? p.transactionalId,
                  producerId: over.producerId ?? p.producerId,
                  producerEpoch: over.producerEpoch ?? p.producerEpoch,
                  verifyOnly,
                  topics: partitions,
                },
              ],
            }).then((r) => {
              expect(r.errorCode).toBe(ErrorCode.NONE);
              return r.resultsByTransaction[0].topicResults;
            });
      const codes = (results: any[]) => results.flatMap((t: any) => t.resultsByPartition.map((x: any) => [t.name, x.partitionIndex, x.partitionErrorCode]));

      // One unknown partition and nothing is added.
      expect(codes(await add([{ name: TOPIC, partitions: [0, 9] }, { name: 'no-such', partitions: [0] }]))).toEqual([
        [TOPIC, 0, ErrorCode.OPERATION_NOT_ATTEMPTED],
        [TOPIC, 9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ['no-such', 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
      expect((await describeTxn(p.transactionalId)).transactionState).toBe('Empty');
      expect(codes(await add([{ name: TOPIC, partitions: [0] }], { producerEpoch: p.producerEpoch + 1 }))).toEqual([
        [TOPIC, 0, v >= 2 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH],
      ]);
      expect(codes(await add([{ name: TOPIC, partitions: [0] }], { producerId: p.producerId + 1000n }))).toEqual([[TOPIC, 0, ErrorCode.INVALID_PRODUCER_ID_MAPPING]]);
      expect(codes(await add([{ name: TOPIC, partitions: [0] }], { transactionalId: `never-initialised-${v}` }))).toEqual([
        [TOPIC, 0, ErrorCode.INVALID_PRODUCER_ID_MAPPING],
      ]);
      expect(codes(await add([{ name: TOPIC, partitions: [0] }]))).toEqual([[TOPIC, 0, ErrorCode.NONE]]);
      if (v >= 4) {
        expect(codes(await add([{ name: TOPIC, partitions: [0, 1] }], {}, true))).toEqual([
          [TOPIC, 0, ErrorCode.NONE],
          [TOPIC, 1, ErrorCode.TRANSACTION_ABORTABLE],
        ]);
      }
      const d = await describeTxn(p.transactionalId);
      expect(d).toMatchObject({ errorCode: ErrorCode.NONE, transactionState: 'Ongoing', producerId: p.producerId, topics: [{ topic: TOPIC, partitions: [0] }] });
      expect(d.transactionStartTimeMs).toBeGreaterThan(0n);
      const w = await produceTxn(p, 0, [`c-${v}`, `c-${v}b`]);
      expect(w.errorCode).toBe(ErrorCode.NONE);

      const commit = v % 2 === 0;
      const endVersion = Math.min(v, 4);
      expect(await endTxn(p, commit, endVersion)).toBe(ErrorCode.NONE);
      expect(await completed(p.transactionalId)).toBe(commit ? 'CompleteCommit' : 'CompleteAbort');
      // A retried EndTxn is fine; the other outcome is not; AddPartitions starts the next transaction.
      expect(await endTxn(p, commit, endVersion)).toBe(ErrorCode.NONE);
      expect(await endTxn(p, !commit, endVersion)).toBe(ErrorCode.INVALID_TXN_STATE);
    }
    // No transaction open: EndTxn is INVALID_TXN_STATE.
    const idle = await initProducer('idle');
    expect(await endTxn(idle, true)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await endTxn({ ...idle, transactionalId: '' }, true)).toBe(ErrorCode.INVALID_REQUEST);
  });

  test('Produce: a transactional batch may start a transaction only in a partition added to it (KIP-890 verification)', async () => {
    // v12 has the leader add the partition instead (txn-v2-handlers.test.ts).
    for (const v of versions(API.Produce).filter((x) => x <= 11)) {
      const p = await initProducer(`verify-${v}`);
      expect(await addPartitions(p, [0])).toEqual([ErrorCode.NONE]);
      const stray = await produceTxn(p, 1, ['not added'], v);
      expect(stray.errorCode).toBe(v >= 11 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE);
      expect((await produceTxn(p, 0, ['added'], v)).errorCode).toBe(ErrorCode.NONE);
      // Once the transaction is open here, later batches need no verification.
      expect((await produceTxn(p, 0, ['again'], v)).errorCode).toBe(ErrorCode.NONE);
      // A producer the coordinator fenced (a newer InitProducerId) is refused before anything is written.
      expect(await addPartitions(p, [2])).toEqual([ErrorCode.NONE]);
      const bumped = await call(API.InitProducerId, 3, { transactionalId: p.transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      expect(bumped.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS); // its open transaction is aborted first
      await completed(p.transactionalId);
      const log = broker.server.logManager.getLog(TOPIC, 2)!;
      const end = log.logEndOffset;
      expect((await produceTxn(p, 2, ['fenced'], v)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(log.logEndOffset).toBe(end);
    }
  });

  test('read_committed Fetch and ListOffsets: the LSO stops at an open transaction; aborted ones are listed', async () => {
    const p = await initProducer('rc');
    expect(await addPartitions(p, [1])).toEqual([ErrorCode.NONE]);
    const aborted = await produceTxn(p, 1, ['a1', 'a2']);
    expect(await endTxn(p, false)).toBe(ErrorCode.NONE);
    await completed(p.transactionalId);
    expect(await addPartitions(p, [1])).toEqual([ErrorCode.NONE]);
    const open = await produceTxn(p, 1, ['o1']);
    const log = broker.server.logManager.getLog(TOPIC, 1)!;
    expect(log.lastStableOffset).toBe(open.baseOffset);
    expect(log.highWatermark).toBe(open.baseOffset + 1n);
    for (const v of versions(API.ListOffsets).filter((x) => x >= 2)) {
      const r = await call(API.ListOffsets, v, {
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, timestamp: -1n, currentLeaderEpoch: -1 }] }],
      });
      expect(r.topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, offset: open.baseOffset });
    }
    for (const v of versions(API.Fetch)) {
      const committed = await fetchCommitted(1, 0n, v, 1);
      expect(committed.lastStableOffset).toBe(open.baseOffset);
      expect(committed.abortedTransactions).toEqual([expect.objectContaining({ producerId: p.producerId, firstOffset: aborted.baseOffset })]);
      // Everything below the LSO comes back (the aborted records and their marker); nothing of the open transaction.
      const offsets = splitBatches(committed.records).flatMap((b) => (b.isControlBatch ? [b.baseOffset] : readRecords(b).map((r) => r.offset)));
      expect(offsets).toEqual([aborted.baseOffset, aborted.baseOffset + 1n, aborted.baseOffset + 2n]);
      const uncommitted = await fetchCommitted(1, 0n, v, 0);
      expect(uncommitted.abortedTransactions).toBeNull();
      expect(splitBatches(uncommitted.records).pop()!.baseOffset).toBe(open.baseOffset);
      // Past the aborted transaction's range nothing is listed.
      expect((await fetchCommitted(1, aborted.baseOffset + 3n, v, 1)).abortedTransactions).toEqual([]);
    }
    expect(await endTxn(p, true)).toBe(ErrorCode.NONE);
    await completed(p.transactionalId);
    expect(log.lastStableOffset).toBe(log.logEndOffset);
  });

  test('AddOffsetsToTxn and TxnOffsetCommit: offsets count once the transaction commits', async () => {
    for (const v of versions(API.TxnOffsetCommit)) {
      const p = await initProducer(`to-${v}`);
      const groupId = `txg-${v}`;
      const addOffsetsVersion = Math.min(v, 4);
      const ao = await call(API.AddOffsetsToTxn, addOffsetsVersion, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
      expect(ao.errorCode).toBe(ErrorCode.NONE);
      expect((await describeTxn(p.transactionalId)).topics).toEqual([{ topic: '__consumer_offsets', partitions: [broker.server.groupCoordinator.partitionFor(groupId)] }]);
      const fc = await call(API.FindCoordinator, 2, { key: groupId, keyType: 0 });
      expect(fc.errorCode).toBe(ErrorCode.NONE);
      const commitBody = {
        transactionalId: p.transactionalId,
        groupId,
        producerId: p.producerId,
        producerEpoch: p.producerEpoch,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [
          { name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 40n + BigInt(v), committedLeaderEpoch: -1, committedMetadata: 'm' }] },
          { name: 'no-such', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
        ],
      };
      const tc = await call(API.TxnOffsetCommit, v, commitBody);
      expect(tc.topics.map((t: any) => [t.name, t.partitions[0].errorCode])).toEqual([
        [TOPIC, ErrorCode.NONE],
        ['no-such', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ]);
      const fetchOffsets = (requireStable: boolean) =>
        call(API.OffsetFetch, 8, { groups: [{ groupId, topics: [{ name: TOPIC, partitionIndexes: [0] }] }], requireStable }).then((r) => r.groups[0].topics[0].partitions[0]);
      expect(await fetchOffsets(true)).toMatchObject({ errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT });
      expect(await fetchOffsets(false)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: -1n });
      const commit = v !== 1;
      expect(await endTxn(p, commit)).toBe(ErrorCode.NONE);
      await completed(p.transactionalId);
      expect(await fetchOffsets(true)).toMatchObject({ errorCode: ErrorCode.NONE, committedOffset: commit ? 40n + BigInt(v) : -1n, metadata: commit ? 'm' : '' });
    }
    // A producer epoch older than the one the offsets partition has seen is refused.
    const p = await initProducer('to-epoch');
    const groupId = 'txg-epoch';
    await call(API.AddOffsetsToTxn, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
    const body = (epoch: number) => ({
      transactionalId: p.transactionalId,
      groupId,
      producerId: p.producerId,
      producerEpoch: epoch,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect((await call(API.TxnOffsetCommit, 3, body(p.producerEpoch))).topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
    expect((await call(API.TxnOffsetCommit, 3, body(p.producerEpoch - 1))).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    // Member checks (v3+): an unknown member of an existing group; a generation of a group that does not exist.
    const member = { ...body(p.producerEpoch), generationId: 3, memberId: 'm' };
    expect((await call(API.TxnOffsetCommit, 3, member)).topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await call(API.TxnOffsetCommit, 3, { ...member, groupId: 'txg-none' })).topics[0].partitions[0].errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect((await call(API.TxnOffsetCommit, 3, { ...member, groupId: '' })).topics[0].partitions[0].errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect(await endTxn(p, false)).toBe(ErrorCode.NONE);
    await completed(p.transactionalId);
  });

  test('WriteTxnMarkers: a marker takes one offset; stale producer and coordinator epochs are refused', async () => {
    for (const v of versions(API.WriteTxnMarkers)) {
      const pid = 900_000n + BigInt(v);
      const log = broker.server.logManager.getLog(TOPIC, 2)!;
      const before = log.logEndOffset;
      const marker = (epoch: number, coordinatorEpoch: number, partitions = [2]) =>
        call(API.WriteTxnMarkers, v, {
          markers: [{ producerId: pid, producerEpoch: epoch, transactionResult: false, coordinatorEpoch, topics: [{ name: TOPIC, partitionIndexes: partitions }, { name: 'no-such', partitionIndexes: [0] }] }],
        }).then((r) => r.markers[0].topics.map((t: any) => [t.name, t.partitions.map((x: any) => x.errorCode)]));
      expect(await marker(5, 3)).toEqual([[TOPIC, [ErrorCode.NONE]], ['no-such', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]]);
      expect(log.logEndOffset).toBe(before + 1n);
      expect(await marker(4, 3)).toEqual([[TOPIC, [ErrorCode.INVALID_PRODUCER_EPOCH]], ['no-such', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]]);
      expect(await marker(5, 2)).toEqual([[TOPIC, [ErrorCode.TRANSACTION_COORDINATOR_FENCED]], ['no-such', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]]);
      expect(log.logEndOffset).toBe(before + 1n);
    }
  });

  test('DescribeTransactions, ListTransactions and DescribeProducers', async () => {
    const p = await initProducer('admin-open');
    expect(await addPartitions(p, [0, 2])).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    const w = await produceTxn(p, 2, ['z']);
    const r = await call(API.DescribeTransactions, 0, { transactionalIds: [p.transactionalId, 'never-seen', ''] });
    expect(r.transactionStates.map((s: any) => [s.transactionalId, s.errorCode, s.transactionState])).toEqual([
      [p.transactionalId, ErrorCode.NONE, 'Ongoing'],
      ['never-seen', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, ''],
      ['', ErrorCode.INVALID_REQUEST, ''],
    ]);
    expect(r.transactionStates[0]).toMatchObject({ producerId: p.producerId, producerEpoch: p.producerEpoch, transactionTimeoutMs: 60_000, topics: [{ topic: TOPIC, partitions: [0, 2] }] });
    for (const v of versions(API.ListTransactions)) {
      const all = await call(API.ListTransactions, v, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });
      expect(all.errorCode).toBe(ErrorCode.NONE);
      expect(all.transactionStates).toEqual(expect.arrayContaining([expect.objectContaining({ transactionalId: p.transactionalId, transactionState: 'Ongoing' })]));
      const ongoing = await call(API.ListTransactions, v, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [p.producerId], durationFilter: -1n });
      expect(ongoing.unknownStateFilters).toEqual(['Bogus']);
      expect(ongoing.transactionStates).toEqual([{ transactionalId: p.transactionalId, producerId: p.producerId, transactionState: 'Ongoing' }]);
      if (v >= 1) {
        const long = await call(API.ListTransactions, v, { stateFilters: ['Ongoing'], producerIdFilters: [p.producerId], durationFilter: 3_600_000n });
        expect(long.transactionStates).toEqual([]);
      }
    }
    const dp = await call(API.DescribeProducers, 0, { topics: [{ name: TOPIC, partitionIndexes: [2, 9] }, { name: 'no-such', partitionIndexes: [0] }] });
    const [partition2, partition9] = dp.topics[0].partitions;
    expect(partition9.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(dp.topics[1].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(partition2.errorCode).toBe(ErrorCode.NONE);
    expect(partition2.activeProducers).toEqual(
      expect.arrayContaining([expect.objectContaining({ producerId: p.producerId, producerEpoch: p.producerEpoch, lastSequence: 0, currentTxnStartOffset: w.baseOffset })]),
    );
    expect(await endTxn(p, false)).toBe(ErrorCode.NONE);
    expect(await completed(p.transactionalId)).toBe('CompleteAbort');
    const after = await call(API.DescribeProducers, 0, { topics: [{ name: TOPIC, partitionIndexes: [2] }] });
    expect(after.topics[0].partitions[0].activeProducers.find((x: any) => x.producerId === p.producerId).currentTxnStartOffset).toBe(-1n);
  });
});
