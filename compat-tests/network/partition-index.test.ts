/**
 * A partition index names exactly that partition, never another one. Topic "neg" partition -1 and
 * topic "neg-" partition 1 used to share the map key "neg--1", so a Produce to ("neg", -1) was
 * appended to ("neg-", 1). Driven over the wire: the produce to the negative partition is refused
 * with UNKNOWN_TOPIC_OR_PARTITION, and the other topic's partition stays empty.
 */
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { BrokerConnection, OffsetSpec, connect, listOffset, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

let broker: TestBroker;
let conn: BrokerConnection;

beforeAll(async () => {
  broker = await startTestBroker('embedded');
  conn = await connect(broker.host, broker.port, { clientId: 'partition-index' });
  const res = await conn.send('CreateTopics', undefined, {
    topics: [
      { name: 'neg', numPartitions: 1, replicationFactor: 1 },
      { name: 'neg-', numPartitions: 2, replicationFactor: 1 },
    ],
    timeoutMs: 10_000,
  });
  expect(res.topics.map((t) => t.errorCode)).toEqual([0, 0]);
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
});

test('a produce to partition -1 of "neg" is refused and nothing reaches partition 1 of "neg-"', async () => {
  const res = await conn.send('Produce', undefined, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: 'neg', partitionData: [{ index: -1, records: buildRecordBatch([{ key: 'k', value: 'misrouted' }]) }] }],
  });
  expect(res.responses).toHaveLength(1);
  expect(res.responses[0].partitionResponses.map((p) => [p.index, p.errorCode])).toEqual([[-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
  expect((await listOffset(conn, 'neg-', 1, OffsetSpec.LATEST)).offset).toBe(0n);
  expect((await listOffset(conn, 'neg', 0, OffsetSpec.LATEST)).offset).toBe(0n);

  // The real partitions of both topics still take writes, each its own.
  expect((await produce(conn, 'neg-', 1, [{ key: 'k', value: 'v' }]))!.baseOffset).toBe(0n);
  expect((await listOffset(conn, 'neg-', 1, OffsetSpec.LATEST)).offset).toBe(1n);
  expect((await listOffset(conn, 'neg', 0, OffsetSpec.LATEST)).offset).toBe(0n);
});

test('ListOffsets and Fetch of partition -1 answer UNKNOWN_TOPIC_OR_PARTITION, not the data of "neg-" partition 1', async () => {
  const lo = await conn.send('ListOffsets', undefined, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: 'neg', partitions: [{ partitionIndex: -1, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    timeoutMs: 1000,
  });
  expect(lo.topics[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const f = await conn.send('Fetch', 4, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    topics: [{ topic: 'neg', partitions: [{ partition: -1, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
  });
  expect(f.responses[0].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  expect(f.responses[0].partitions[0].records?.length ?? 0).toBe(0);
});
