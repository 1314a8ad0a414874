/**
 * Issue 11, careless and hostile clients: every partition index in every request is validated, and a
 * topic or partition listed twice is answered as Kafka answers it. Driven over the wire from this
 * test's own client against an embedded broker.
 *
 * Invariants checked: a negative index, one past the partition count, or an extreme int32 gets
 * UNKNOWN_TOPIC_OR_PARTITION for that partition in each API that takes partition indexes (OffsetFetch
 * answers -1 offsets, as Kafka does), and never reaches another partition's data: the real partitions
 * of "pv" and of "pv-" (whose keys a careless key scheme confuses with ("pv", -1)) keep their offsets,
 * log start offsets and committed offsets. Duplicates: one answer per partition where Kafka keys the
 * request by partition (Produce, Fetch, ListOffsets, DeleteRecords, WriteTxnMarkers,
 * AddPartitionsToTxn), one INVALID_REQUEST per duplicated name or resource for the admin APIs, every
 * listing where Kafka answers each (ElectLeaders).
 */
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { BrokerConnection, OffsetSpec, connect, describeTopic, listOffset, produce, recordsOf } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

jest.setTimeout(30_000);

const BAD = [-1, 2, 2_147_483_647, -2_147_483_648];
const E = ErrorCode;

let broker: TestBroker;
let conn: BrokerConnection;

async function leo(topic: string, partition: number): Promise<bigint> {
  return (await listOffset(conn, topic, partition, OffsetSpec.LATEST)).offset;
}
async function logStart(topic: string, partition: number): Promise<bigint> {
  return (await listOffset(conn, topic, partition, OffsetSpec.EARLIEST)).offset;
}
/** Offsets of every real partition of both topics: nothing a bad index does may change them. */
async function snapshot(): Promise<string> {
  const out: string[] = [];
  for (const t of ['pv', 'pv-']) for (const p of [0, 1]) out.push(`${t}/${p}: ${await logStart(t, p)}..${await leo(t, p)}`);
  return out.join(', ');
}

beforeAll(async () => {
  broker = await startTestBroker('embedded', { config: { 'offsets.topic.num.partitions': 2, 'transaction.state.log.num.partitions': 2 } });
  conn = await connect(broker.host, broker.port, { clientId: 'limits-requests' });
  const res = await conn.send('CreateTopics', undefined, {
    topics: [
      { name: 'pv', numPartitions: 2, replicationFactor: 1 },
      { name: 'pv-', numPartitions: 2, replicationFactor: 1 },
    ],
    timeoutMs: 10_000,
  });
  expect(res.topics.map((t) => t.errorCode)).toEqual([E.NONE, E.NONE]);
  for (const [t, p] of [['pv', 0], ['pv', 1], ['pv-', 0], ['pv-', 1]] as const) {
    await produce(conn, t, p, [1, 2, 3].map((i) => ({ key: `k${i}`, value: `${t}-${p}-${i}` })));
  }
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
});

describe('every partition index is validated', () => {
  test('Produce, Fetch (by name and by id), ListOffsets, OffsetForLeaderEpoch, DeleteRecords: UNKNOWN_TOPIC_OR_PARTITION, no other partition touched', async () => {
    const before = await snapshot();
    const records = buildRecordBatch([{ key: 'k', value: 'misrouted' }]);
    const prod = await conn.send('Produce', undefined, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: 'pv', partitionData: BAD.map((index) => ({ index, records })) }],
    });
    expect(prod.responses[0].partitionResponses.map((p) => [p.index, p.errorCode])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]));
    // Record validation comes after the partition check (KafkaApis order): garbage records still get UNKNOWN_TOPIC_OR_PARTITION.
    const garbage = await conn.send('Produce', undefined, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: 'pv', partitionData: [{ index: -1, records: Buffer.from('not a batch') }] }],
    });
    expect(garbage.responses[0].partitionResponses[0].errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);

    const fetchByName = await conn.send('Fetch', 12, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'pv', partitions: BAD.map((partition) => ({ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })) }],
    });
    const fetched = fetchByName.responses.flatMap((t) => t.partitions);
    expect(fetched.map((p) => [p.partitionIndex, p.errorCode])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]));
    expect(fetched.every((p) => recordsOf(p.records).length === 0)).toBe(true);
    const { topicId } = await describeTopic(conn, 'pv');
    const fetchById = await conn.send('Fetch', 13, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topicId, partitions: BAD.map((partition) => ({ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })) }],
    });
    expect(fetchById.responses.flatMap((t) => t.partitions).map((p) => [p.partitionIndex, p.errorCode])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]));

    const lo = await conn.send('ListOffsets', undefined, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'pv', partitions: BAD.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n })) }],
    });
    expect(lo.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode, p.offset])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION, -1n]));

    const ofle = await conn.send('OffsetForLeaderEpoch', undefined, {
      replicaId: -1,
      topics: [{ topic: 'pv', partitions: BAD.map((partition) => ({ partition, currentLeaderEpoch: -1, leaderEpoch: 0 })) }],
    });
    expect(ofle.topics[0].partitions.map((p) => [p.partition, p.errorCode, p.endOffset])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION, -1n]));

    const dr = await conn.send('DeleteRecords', undefined, {
      topics: [{ name: 'pv', partitions: BAD.map((partitionIndex) => ({ partitionIndex, offset: 2n })) }],
      timeoutMs: 5000,
    });
    expect(dr.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode, p.lowWatermark])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION, -1n]));

    expect(await snapshot()).toBe(before);
  });

  test('OffsetCommit, TxnOffsetCommit, OffsetDelete: UNKNOWN_TOPIC_OR_PARTITION, nothing stored; OffsetFetch answers -1 for them', async () => {
    const group = 'g-indexes';
    expect((await conn.send('FindCoordinator', 0, { key: group })).errorCode).toBe(E.NONE);
    const commit = await conn.send('OffsetCommit', undefined, {
      groupId: group,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'pv', partitions: [0, ...BAD].map((partitionIndex) => ({ partitionIndex, committedOffset: 2n, committedLeaderEpoch: -1, committedMetadata: 'm' })) }],
    });
    expect(commit.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual([[0, E.NONE], ...BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION])]);
    // "pv-" partition 1 is where ("pv", -1) used to land: it has no committed offset.
    const fetched = await conn.send('OffsetFetch', 7, {
      groupId: group,
      topics: [
        { name: 'pv', partitionIndexes: [0, 1, ...BAD] },
        { name: 'pv-', partitionIndexes: [1] },
      ],
      requireStable: false,
    });
    expect(fetched.errorCode).toBe(E.NONE);
    expect(fetched.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.partitionIndex, p.committedOffset, p.errorCode]))).toEqual([
      ['pv', 0, 2n, E.NONE],
      ['pv', 1, -1n, E.NONE],
      ...BAD.map((i) => ['pv', i, -1n, E.NONE]),
      ['pv-', 1, -1n, E.NONE],
    ]);

    const txn = await conn.send('TxnOffsetCommit', undefined, {
      transactionalId: 'txn-indexes',
      groupId: group,
      producerId: 1n,
      producerEpoch: 0,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'pv', partitions: BAD.map((partitionIndex) => ({ partitionIndex, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null })) }],
    });
    expect(txn.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]));

    const del = await conn.send('OffsetDelete', undefined, {
      groupId: group,
      topics: [{ name: 'pv', partitions: BAD.map((partitionIndex) => ({ partitionIndex })) }],
    });
    expect(del.errorCode).toBe(E.NONE);
    expect(del.topics[0].partitions.map((p) => [p.partitionIndex, p.errorCode])).toEqual(BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]));
    const still = await conn.send('OffsetFetch', 7, { groupId: group, topics: [{ name: 'pv', partitionIndexes: [0] }], requireStable: false });
    expect(still.topics[0].partitions[0].committedOffset).toBe(2n);
  });

  test('AddPartitionsToTxn, WriteTxnMarkers, ElectLeaders, DescribeProducers: UNKNOWN_TOPIC_OR_PARTITION for the bad index only', async () => {
    const before = await snapshot();
    const add = await conn.send('AddPartitionsToTxn', 3, {
      v3AndBelowTransactionalId: 'txn-indexes',
      v3AndBelowProducerId: 1n,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: 'pv', partitions: [0, ...BAD] }],
    });
    expect(add.resultsByTopicV3AndBelow[0].resultsByPartition.map((p) => [p.partitionIndex, p.partitionErrorCode])).toEqual([
      [0, E.OPERATION_NOT_ATTEMPTED],
      ...BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION]),
    ]);

    const markers = await conn.send('WriteTxnMarkers', undefined, {
      markers: [
        {
          producerId: 77n,
          producerEpoch: 0,
          transactionResult: false,
          coordinatorEpoch: 0,
          topics: [
            { name: 'pv', partitionIndexes: BAD },
            { name: '__consumer_offsets', partitionIndexes: [-1, 2] },
          ],
        },
      ],
    });
    expect(markers.markers[0].topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
      ['pv', BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION])],
      ['__consumer_offsets', [[-1, E.UNKNOWN_TOPIC_OR_PARTITION], [2, E.UNKNOWN_TOPIC_OR_PARTITION]]],
    ]);

    const elect = await conn.send('ElectLeaders', 2, { electionType: 0, topicPartitions: [{ topic: 'pv', partitions: BAD }, { topic: 'no-such-topic', partitions: [0] }], timeoutMs: 5000 });
    expect(elect.errorCode).toBe(E.NONE);
    expect(elect.replicaElectionResults.map((t) => [t.topic, t.partitionResult.map((p) => [p.partitionId, p.errorCode, p.errorMessage])])).toEqual([
      ['pv', BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION, `No such partition as pv-${i}`])],
      ['no-such-topic', [[0, E.UNKNOWN_TOPIC_OR_PARTITION, 'No such topic as no-such-topic']]],
    ]);

    const dp = await conn.send('DescribeProducers', undefined, { topics: [{ name: 'pv', partitionIndexes: BAD }, { name: 'bad/name', partitionIndexes: [0] }] });
    expect(dp.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
      ['pv', BAD.map((i) => [i, E.UNKNOWN_TOPIC_OR_PARTITION])],
      ['bad/name', [[0, E.INVALID_TOPIC_EXCEPTION]]],
    ]);

    expect(await snapshot()).toBe(before);
  });
});

describe('a partition or topic listed twice is answered as Kafka answers it', () => {
  test('Produce: one append of the last valid record set, one answer, one topic entry', async () => {
    const start = await leo('pv', 1);
    const res = await conn.send('Produce', undefined, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        { name: 'pv', partitionData: [{ index: 1, records: buildRecordBatch([{ key: 'a', value: 'first' }]) }] },
        { name: 'pv', partitionData: [{ index: 1, records: buildRecordBatch([{ key: 'b', value: 'last-1' }, { key: 'b', value: 'last-2' }]) }] },
      ],
    });
    expect(res.responses.map((t) => [t.name, t.partitionResponses.map((p) => [p.index, p.errorCode, p.baseOffset])])).toEqual([['pv', [[1, E.NONE, start]]]]);
    expect(await leo('pv', 1)).toBe(start + 2n);
    const f = await conn.send('Fetch', 12, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'pv', partitions: [{ partition: 1, fetchOffset: start, partitionMaxBytes: 1 << 20 }, { partition: 1, fetchOffset: start, partitionMaxBytes: 1 << 20 }] }],
    });
    // Fetch: one answer for the partition listed twice.
    expect(f.responses.flatMap((t) => t.partitions).map((p) => p.partitionIndex)).toEqual([1]);
    expect(recordsOf(f.responses[0].partitions[0].records).map((r) => r.value?.toString())).toEqual(['last-1', 'last-2']);
  });

  test('ListOffsets: one INVALID_REQUEST answer for the duplicate, the others answered; DeleteRecords: one answer, the last offset', async () => {
    const lo = await conn.send('ListOffsets', 7, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        { name: 'pv', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
        { name: 'pv-', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] },
        { name: 'pv', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2n }, { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -2n }] },
      ],
    });
    expect(lo.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([
      ['pv', [[0, E.INVALID_REQUEST], [1, E.NONE]]],
      ['pv-', [[0, E.NONE]]],
    ]);

    const dr = await conn.send('DeleteRecords', undefined, {
      topics: [{ name: 'pv-', partitions: [{ partitionIndex: 0, offset: 1n }, { partitionIndex: 0, offset: 2n }] }],
      timeoutMs: 5000,
    });
    expect(dr.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode, p.lowWatermark])])).toEqual([['pv-', [[0, E.NONE, 2n]]]]);
    expect(await logStart('pv-', 0)).toBe(2n);
  });

  test('WriteTxnMarkers: a partition listed twice gets one marker and one answer; AddPartitionsToTxn: one answer per partition', async () => {
    const start = await leo('pv-', 1);
    const res = await conn.send('WriteTxnMarkers', undefined, {
      markers: [{ producerId: 4242n, producerEpoch: 0, transactionResult: false, coordinatorEpoch: 0, topics: [{ name: 'pv-', partitionIndexes: [1, 1] }, { name: 'pv-', partitionIndexes: [1] }] }],
    });
    expect(res.markers[0].topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])).toEqual([['pv-', [[1, E.NONE]]]]);
    expect(await leo('pv-', 1)).toBe(start + 1n);

    const add = await conn.send('AddPartitionsToTxn', 3, {
      v3AndBelowTransactionalId: 'txn-dups',
      v3AndBelowProducerId: 1n,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: 'pv', partitions: [0, 0, -1] }, { name: 'pv', partitions: [-1] }],
    });
    expect(add.resultsByTopicV3AndBelow.map((t) => [t.name, t.resultsByPartition.map((p) => [p.partitionIndex, p.partitionErrorCode])])).toEqual([
      ['pv', [[0, E.OPERATION_NOT_ATTEMPTED], [-1, E.UNKNOWN_TOPIC_OR_PARTITION]]],
    ]);
  });

  test('ElectLeaders answers every listing (Kafka\'s controller does); Metadata answers a topic once', async () => {
    const elect = await conn.send('ElectLeaders', 2, { electionType: 0, topicPartitions: [{ topic: 'pv', partitions: [0, 0] }], timeoutMs: 5000 });
    expect(elect.replicaElectionResults[0].partitionResult.map((p) => [p.partitionId, p.errorCode])).toEqual([
      [0, E.ELECTION_NOT_NEEDED],
      [0, E.ELECTION_NOT_NEEDED],
    ]);
    const md = await conn.send('Metadata', 12, { topics: [{ name: 'pv', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }, { name: 'pv', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(md.topics.map((t) => t.name)).toEqual(['pv']);
  });

  test('CreateTopics, CreatePartitions, DeleteTopics: INVALID_REQUEST "Duplicate topic name." once per name, and nothing done to it', async () => {
    const ct = await conn.send('CreateTopics', undefined, {
      topics: [
        { name: 'dup-a', numPartitions: 1, replicationFactor: 1 },
        { name: 'dup-b', numPartitions: 1, replicationFactor: 1 },
        { name: 'dup-a', numPartitions: 2, replicationFactor: 1 },
        { name: 'dup-a', numPartitions: 3, replicationFactor: 1 },
      ],
      timeoutMs: 5000,
    });
    expect(ct.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([
      ['dup-a', E.INVALID_REQUEST, 'Duplicate topic name.'],
      ['dup-b', E.NONE, null],
    ]);
    const md = await conn.send('Metadata', 12, { topics: [{ name: 'dup-a', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(md.topics[0].errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);

    const cp = await conn.send('CreatePartitions', undefined, {
      topics: [
        { name: 'dup-b', count: 2, assignments: null },
        { name: 'dup-b', count: 3, assignments: null },
        { name: 'pv', count: 2, assignments: null },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    expect(cp.results.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
      ['dup-b', E.INVALID_REQUEST, 'Duplicate topic name.'],
      ['pv', E.INVALID_PARTITIONS, 'Topic already has 2 partition(s).'],
    ]);
    expect((await describeTopic(conn, 'dup-b')).partitions).toBe(1);

    const { topicId } = await describeTopic(conn, 'dup-b');
    const zero = 'AAAAAAAAAAAAAAAAAAAAAA';
    const dt = await conn.send('DeleteTopics', 6, {
      topics: [
        { name: 'dup-b', topicId: zero },
        { name: 'dup-b', topicId: zero },
        { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
        { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
        { name: 'pv', topicId },
        { name: null, topicId: zero },
      ],
      timeoutMs: 5000,
    });
    expect(dt.responses.map((r) => [r.name, r.topicId, r.errorCode, r.errorMessage])).toEqual([
      ['dup-b', zero, E.INVALID_REQUEST, 'Duplicate topic name.'],
      [null, 'AAAAAAAAAAAAAAAAAAAAAQ', E.INVALID_REQUEST, 'Duplicate topic id.'],
      ['pv', topicId, E.INVALID_REQUEST, 'You may not specify both topic name and topic id.'],
      [null, zero, E.INVALID_REQUEST, 'Neither topic name nor id were specified.'],
    ]);
    // A name and the id it resolves to: one answer, nothing deleted.
    const both = await conn.send('DeleteTopics', 6, { topics: [{ name: null, topicId }, { name: 'dup-b', topicId: zero }], timeoutMs: 5000 });
    expect(both.responses.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([['dup-b', E.INVALID_REQUEST, 'The provided topic name maps to an ID that was already supplied.']]);
    expect((await describeTopic(conn, 'dup-b')).topicId).toBe(topicId);
    const v5 = await conn.send('DeleteTopics', 5, { topicNames: ['dup-b', 'dup-b'], timeoutMs: 5000 });
    expect(v5.responses.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([['dup-b', E.INVALID_REQUEST, 'Duplicate topic name.']]);
    expect((await describeTopic(conn, 'dup-b')).topicId).toBe(topicId);
  });

  test('AlterConfigs and IncrementalAlterConfigs: one INVALID_REQUEST "Duplicate resource.", unknown resource types UNSUPPORTED_VERSION, nothing changed', async () => {
    const alter = await conn.send('AlterConfigs', undefined, {
      resources: [
        { resourceType: 2, resourceName: 'pv', configs: [{ name: 'retention.ms', value: '1000' }] },
        { resourceType: 2, resourceName: 'pv', configs: [{ name: 'retention.ms', value: '2000' }] },
        { resourceType: 99, resourceName: 'x', configs: [] },
        { resourceType: 2, resourceName: 'pv-', configs: [{ name: 'retention.ms', value: '3000' }] },
      ],
      validateOnly: false,
    });
    expect(alter.responses.map((r) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage])).toEqual([
      [2, 'pv', E.INVALID_REQUEST, 'Duplicate resource.'],
      [99, 'x', E.UNSUPPORTED_VERSION, 'Unknown resource type 99.'],
      [2, 'pv-', E.NONE, null],
    ]);
    const inc = await conn.send('IncrementalAlterConfigs', undefined, {
      resources: [
        { resourceType: 2, resourceName: 'pv', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] },
        { resourceType: 2, resourceName: 'pv', configs: [{ name: 'retention.ms', configOperation: 0, value: '2000' }] },
      ],
      validateOnly: false,
    });
    expect(inc.responses.map((r) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([['pv', E.INVALID_REQUEST, 'Duplicate resource.']]);
    const described = await conn.send('DescribeConfigs', undefined, {
      resources: [
        { resourceType: 2, resourceName: 'pv', configurationKeys: ['retention.ms'] },
        { resourceType: 2, resourceName: 'pv-', configurationKeys: ['retention.ms'] },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    expect(described.results.map((r) => [r.resourceName, r.configs[0].value])).toEqual([
      ['pv', '604800000'],
      ['pv-', '3000'],
    ]);
  });
});
