/**
 * Issue 11: internal topics are created with their own specs whatever path creates them, they are
 * deleted exactly where Kafka deletes them, and delete.topic.enable=false is honoured. Driven over
 * the wire against embedded brokers (each case needs a fresh one: the internal topics exist once).
 *
 * Invariants checked: a Metadata request that auto-creates __consumer_offsets / __transaction_state
 * on a fresh broker makes them with offsets.topic.* / transaction.state.log.* partitions and
 * configs (compacted), never as a 1-partition cleanup.policy=delete topic, and the group coordinator
 * works on it; __cluster_metadata is never created. A CreateTopics naming an internal topic is
 * allowed with the client's own spec (Kafka does not refuse it). DeleteTopics of
 * __consumer_offsets succeeds (Kafka's brokers and controller do not refuse it) and the next
 * FindCoordinator creates it again with its specs. delete.topic.enable=false: every listing gets
 * TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3) and nothing is deleted.
 */
import { ErrorCode } from '../../protocol/errors';
import { BrokerConnection, connect } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

jest.setTimeout(30_000);

const E = ErrorCode;
const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA';
const INTERNAL_CONFIG = {
  'offsets.topic.num.partitions': 4,
  'offsets.topic.segment.bytes': 20_971_520,
  'transaction.state.log.num.partitions': 3,
  'transaction.state.log.segment.bytes': 31_457_280,
  'num.partitions': 1,
};

async function withBroker(config: Record<string, string | number | boolean>, body: (conn: BrokerConnection, broker: TestBroker) => Promise<void>): Promise<void> {
  const broker = await startTestBroker('embedded', { config });
  const conn = await connect(broker.host, broker.port, { clientId: 'limits-internal' });
  try {
    await body(conn, broker);
  } finally {
    await conn.close();
    await broker.close();
  }
}

async function topicState(conn: BrokerConnection, name: string): Promise<{ errorCode: number; partitions: number; isInternal: boolean }> {
  const md = await conn.send('Metadata', 12, { topics: [{ name, topicId: ZERO }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const t = md.topics[0];
  return { errorCode: t.errorCode, partitions: t.partitions.length, isInternal: t.isInternal };
}

async function configs(conn: BrokerConnection, topic: string, keys: string[]): Promise<Record<string, string | null>> {
  const res = await conn.send('DescribeConfigs', undefined, {
    resources: [{ resourceType: 2, resourceName: topic, configurationKeys: keys }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  expect(res.results[0].errorCode).toBe(E.NONE);
  return Object.fromEntries(res.results[0].configs.map((c) => [c.name, c.value]));
}

async function commitAndFetch(conn: BrokerConnection, group: string): Promise<bigint> {
  expect((await conn.send('FindCoordinator', 0, { key: group })).errorCode).toBe(E.NONE);
  const commit = await conn.send('OffsetCommit', undefined, {
    groupId: group,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: 'data', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
  });
  expect(commit.topics[0].partitions[0].errorCode).toBe(E.NONE);
  const fetched = await conn.send('OffsetFetch', 7, { groupId: group, topics: [{ name: 'data', partitionIndexes: [0] }], requireStable: false });
  return fetched.topics[0].partitions[0].committedOffset;
}

test('Metadata auto-creation makes __consumer_offsets and __transaction_state with their own specs; the group coordinator works on it; __cluster_metadata is never created', async () => {
  await withBroker(INTERNAL_CONFIG, async (conn) => {
    const md = await conn.send('Metadata', 9, {
      topics: [{ name: '__consumer_offsets' }, { name: '__transaction_state' }, { name: 'plain-auto' }, { name: '__cluster_metadata' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    expect(md.topics.map((t) => [t.name, t.isInternal])).toEqual([
      ['__consumer_offsets', true],
      ['__transaction_state', true],
      ['plain-auto', false],
      ['__cluster_metadata', false],
    ]);
    expect(md.topics[3].errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await topicState(conn, '__consumer_offsets')).toEqual({ errorCode: E.NONE, partitions: 4, isInternal: true });
    expect(await topicState(conn, '__transaction_state')).toEqual({ errorCode: E.NONE, partitions: 3, isInternal: true });
    expect(await topicState(conn, 'plain-auto')).toEqual({ errorCode: E.NONE, partitions: 1, isInternal: false });
    expect((await topicState(conn, '__cluster_metadata')).errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await configs(conn, '__consumer_offsets', ['cleanup.policy', 'compression.type', 'segment.bytes'])).toEqual({
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': '20971520',
    });
    expect(await configs(conn, '__transaction_state', ['cleanup.policy', 'compression.type', 'segment.bytes', 'min.insync.replicas', 'unclean.leader.election.enable'])).toEqual({
      'cleanup.policy': 'compact',
      'compression.type': 'uncompressed',
      'segment.bytes': '31457280',
      'min.insync.replicas': '1',
      'unclean.leader.election.enable': 'false',
    });
    expect(await configs(conn, 'plain-auto', ['cleanup.policy'])).toEqual({ 'cleanup.policy': 'delete' });

    expect((await conn.send('CreateTopics', undefined, { topics: [{ name: 'data', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 })).topics[0].errorCode).toBe(E.NONE);
    expect(await commitAndFetch(conn, 'adopted-group')).toBe(7n);
    expect((await conn.send('FindCoordinator', 1, { key: 'a-txn', keyType: 1 })).errorCode).toBe(E.NONE);
  });
});

test('DeleteTopics of __consumer_offsets succeeds, as in Kafka, and the next FindCoordinator creates it again with its specs', async () => {
  await withBroker(INTERNAL_CONFIG, async (conn) => {
    expect((await conn.send('CreateTopics', undefined, { topics: [{ name: 'data', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 })).topics[0].errorCode).toBe(E.NONE);
    expect(await commitAndFetch(conn, 'before-delete')).toBe(7n);
    const del = await conn.send('DeleteTopics', 6, { topics: [{ name: '__consumer_offsets', topicId: ZERO }], timeoutMs: 5000 });
    expect(del.responses.map((r) => [r.name, r.errorCode])).toEqual([['__consumer_offsets', E.NONE]]);
    expect((await topicState(conn, '__consumer_offsets')).errorCode).toBe(E.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await commitAndFetch(conn, 'after-delete')).toBe(7n);
    expect(await topicState(conn, '__consumer_offsets')).toEqual({ errorCode: E.NONE, partitions: 4, isInternal: true });
    expect(await configs(conn, '__consumer_offsets', ['cleanup.policy'])).toEqual({ 'cleanup.policy': 'compact' });
  });
});

test('CreateTopics naming an internal topic is allowed with the client\'s spec (Kafka does not refuse it)', async () => {
  await withBroker(INTERNAL_CONFIG, async (conn) => {
    const res = await conn.send('CreateTopics', undefined, {
      topics: [{ name: '__transaction_state', numPartitions: 2, replicationFactor: 1, configs: [{ name: 'cleanup.policy', value: 'delete' }] }],
      timeoutMs: 5000,
    });
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([['__transaction_state', E.NONE]]);
    expect(await topicState(conn, '__transaction_state')).toEqual({ errorCode: E.NONE, partitions: 2, isInternal: true });
    expect(await configs(conn, '__transaction_state', ['cleanup.policy'])).toEqual({ 'cleanup.policy': 'delete' });
  });
});

test('delete.topic.enable=false: TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3) on every listing, without a message, nothing deleted', async () => {
  await withBroker({ ...INTERNAL_CONFIG, 'delete.topic.enable': false }, async (conn) => {
    expect((await conn.send('CreateTopics', undefined, { topics: [{ name: 'kept', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 5000 })).topics[0].errorCode).toBe(E.NONE);
    expect((await conn.send('FindCoordinator', 0, { key: 'g' })).errorCode).toBe(E.NONE);
    for (let v = 0; v <= 6; v++) {
      const body = v >= 6 ? { topics: [{ name: 'kept', topicId: ZERO }, { name: '__consumer_offsets', topicId: ZERO }, { name: 'kept', topicId: ZERO }], timeoutMs: 5000 } : { topicNames: ['kept', '__consumer_offsets', 'kept'], timeoutMs: 5000 };
      const res = await conn.send('DeleteTopics', v, body);
      const code = v < 3 ? E.INVALID_REQUEST : E.TOPIC_DELETION_DISABLED;
      expect(res.responses.map((r) => [r.name, r.errorCode])).toEqual([
        ['kept', code],
        ['__consumer_offsets', code],
        ['kept', code],
      ]);
      if (v >= 5) expect(res.responses.every((r) => r.errorMessage === null)).toBe(true);
    }
    expect((await topicState(conn, 'kept')).errorCode).toBe(E.NONE);
    expect((await topicState(conn, '__consumer_offsets')).errorCode).toBe(E.NONE);
  });
});
