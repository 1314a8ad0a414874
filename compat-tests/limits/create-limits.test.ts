/**
 * Issue 11, hostile sizes and impossible counts in CreateTopics / CreatePartitions, over the wire
 * against an embedded broker.
 *
 * Invariants checked: a request that would create more than 10,000 partitions (2^31-1 in one topic,
 * or several topics adding up) is answered at once with Kafka's POLICY_VIOLATION "Excessively large
 * number of partitions per request." on every topic listed, validate_only or not, nothing is
 * created, the broker's RSS grows by less than 100 MB over many such requests, and a well-behaved
 * client on another connection is served meanwhile; exactly 10,000 passes (validate_only). Counts
 * and replication factors that cannot be are refused with Kafka's codes and messages
 * (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST).
 */
import { ErrorCode } from '../../protocol/errors';
import { BrokerConnection, OffsetSpec, connect, describeTopic, listOffset, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

jest.setTimeout(60_000);

const E = ErrorCode;
const MAX_INT32 = 2_147_483_647;
const EXCESSIVE = 'Excessively large number of partitions per request.';
const RSS_GROWTH_LIMIT = 100 * 1024 * 1024;

let broker: TestBroker;
let attacker: BrokerConnection;
let client: BrokerConnection;
let nodeId: number;

type TopicSpec = { name: string; numPartitions?: number; replicationFactor?: number; assignments?: { partitionIndex: number; brokerIds: number[] }[]; configs?: { name: string; value: string | null }[] };

async function createTopics(conn: BrokerConnection, topics: TopicSpec[], validateOnly = false) {
  const res = await conn.send('CreateTopics', undefined, {
    topics: topics.map((t) => ({ numPartitions: -1, replicationFactor: -1, assignments: [], configs: [], ...t })),
    timeoutMs: 10_000,
    validateOnly,
  });
  return res.topics.map((t) => [t.name, t.errorCode, t.errorMessage] as const);
}

async function exists(name: string): Promise<boolean> {
  const md = await client.send('Metadata', 12, { topics: [{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  return md.topics[0].errorCode === E.NONE;
}

beforeAll(async () => {
  broker = await startTestBroker('embedded', { config: { 'num.partitions': 1 } });
  attacker = await connect(broker.host, broker.port, { clientId: 'attacker' });
  client = await connect(broker.host, broker.port, { clientId: 'well-behaved' });
  nodeId = broker.embedded!.nodeId;
  expect(await createTopics(client, [{ name: 'served', numPartitions: 1, replicationFactor: 1 }])).toEqual([['served', E.NONE, null]]);
});

afterAll(async () => {
  await attacker?.close();
  await client?.close();
  await broker?.close();
});

describe('more than 10,000 partitions in one request: POLICY_VIOLATION before anything is allocated', () => {
  test('CreateTopics with num_partitions = 2^31-1, validate_only or not, answered at once with bounded memory while another client is served', async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let served = 0;
    let stop = false;
    // The well-behaved client produces and reads back all along.
    const wellBehaved = (async () => {
      while (!stop) {
        await produce(client, 'served', 0, [{ key: 'k', value: `v${served}` }]);
        served++;
        expect((await listOffset(client, 'served', 0, OffsetSpec.LATEST)).offset).toBe(BigInt(served));
      }
    })();
    const started = Date.now();
    for (let i = 0; i < 50; i++) {
      const validateOnly = i % 2 === 0;
      expect(await createTopics(attacker, [{ name: `huge-${i}`, numPartitions: MAX_INT32, replicationFactor: 1 }], validateOnly)).toEqual([
        [`huge-${i}`, E.POLICY_VIOLATION, EXCESSIVE],
      ]);
      expect(await createTopics(attacker, [{ name: `huge-rf-${i}`, numPartitions: MAX_INT32, replicationFactor: 32_767 }], validateOnly)).toEqual([
        [`huge-rf-${i}`, E.POLICY_VIOLATION, EXCESSIVE],
      ]);
    }
    const elapsed = Date.now() - started;
    stop = true;
    await wellBehaved;
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(elapsed).toBeLessThan(10_000);
    expect(rssGrowth).toBeLessThan(RSS_GROWTH_LIMIT);
    expect(served).toBeGreaterThan(0);
    expect(await exists('huge-0')).toBe(false);
    expect(await exists('huge-1')).toBe(false);
  });

  test('topics that add up to more than 10,000 (counting -1 as num.partitions and manual assignments by length) are all refused; exactly 10,000 passes', async () => {
    expect(
      await createTopics(attacker, [
        { name: 'sum-a', numPartitions: 5000, replicationFactor: 1 },
        { name: 'sum-b', numPartitions: 5000, replicationFactor: 1 },
        { name: 'sum-c', numPartitions: -1, replicationFactor: 1 },
      ]),
    ).toEqual([
      ['sum-a', E.POLICY_VIOLATION, EXCESSIVE],
      ['sum-b', E.POLICY_VIOLATION, EXCESSIVE],
      ['sum-c', E.POLICY_VIOLATION, EXCESSIVE],
    ]);
    expect(
      await createTopics(attacker, [
        { name: 'sum-d', numPartitions: 9999, replicationFactor: 1 },
        { name: 'sum-e', assignments: [{ partitionIndex: 0, brokerIds: [nodeId] }, { partitionIndex: 1, brokerIds: [nodeId] }] },
      ]),
    ).toEqual([
      ['sum-d', E.POLICY_VIOLATION, EXCESSIVE],
      ['sum-e', E.POLICY_VIOLATION, EXCESSIVE],
    ]);
    // A refused request answers every listing, duplicates included (Kafka's whole-request error response).
    expect(
      await createTopics(attacker, [
        { name: 'sum-f', numPartitions: MAX_INT32, replicationFactor: 1 },
        { name: 'sum-f', numPartitions: 1, replicationFactor: 1 },
        { name: 'sum-g', numPartitions: MAX_INT32, replicationFactor: 1 },
      ]),
    ).toEqual([
      ['sum-f', E.POLICY_VIOLATION, EXCESSIVE],
      ['sum-f', E.POLICY_VIOLATION, EXCESSIVE],
      ['sum-g', E.POLICY_VIOLATION, EXCESSIVE],
    ]);
    for (const name of ['sum-a', 'sum-b', 'sum-c', 'sum-d', 'sum-e']) expect(await exists(name)).toBe(false);
    // Non-positive counts add nothing to the total: they fail on their own.
    expect(
      await createTopics(attacker, [
        { name: 'sum-h', numPartitions: 10_000, replicationFactor: 1 },
        { name: 'sum-i', numPartitions: -7, replicationFactor: 1 },
      ], true),
    ).toEqual([
      ['sum-h', E.NONE, null],
      ['sum-i', E.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.'],
    ]);
    expect(await exists('sum-h')).toBe(false);
  });

  test('CreatePartitions to 2^31-1, or adding more than 10,000 in all, is refused for every topic listed, validate_only or not', async () => {
    expect(await createTopics(client, [{ name: 'grow-a', numPartitions: 1, replicationFactor: 1 }, { name: 'grow-b', numPartitions: 2, replicationFactor: 1 }])).toEqual([
      ['grow-a', E.NONE, null],
      ['grow-b', E.NONE, null],
    ]);
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    for (const validateOnly of [true, false]) {
      const res = await attacker.send('CreatePartitions', undefined, {
        topics: [
          { name: 'grow-a', count: MAX_INT32, assignments: null },
          { name: 'grow-b', count: 3, assignments: null },
        ],
        timeoutMs: 5000,
        validateOnly,
      });
      expect(res.results.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
        ['grow-a', E.POLICY_VIOLATION, EXCESSIVE],
        ['grow-b', E.POLICY_VIOLATION, EXCESSIVE],
      ]);
      const sum = await attacker.send('CreatePartitions', undefined, {
        topics: [
          { name: 'grow-a', count: 6001, assignments: null },
          { name: 'grow-b', count: 4003, assignments: null },
        ],
        timeoutMs: 5000,
        validateOnly,
      });
      expect(sum.results.map((r) => r.errorCode)).toEqual([E.POLICY_VIOLATION, E.POLICY_VIOLATION]);
    }
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(RSS_GROWTH_LIMIT);
    expect((await describeTopic(client, 'grow-a')).partitions).toBe(1);
    expect((await describeTopic(client, 'grow-b')).partitions).toBe(2);
    // Exactly 10,000 new partitions is within the limit (validate_only: nothing is made).
    const ok = await attacker.send('CreatePartitions', undefined, { topics: [{ name: 'grow-a', count: 10_001, assignments: null }], timeoutMs: 5000, validateOnly: true });
    expect(ok.results.map((r) => [r.errorCode, r.errorMessage])).toEqual([[E.NONE, null]]);
  });
});

describe('impossible counts, replication factors and assignments get Kafka\'s codes and messages', () => {
  test('CreateTopics: partitions 0 or < -1, replication factor 0, < -1 or above the registered brokers', async () => {
    expect(
      await createTopics(attacker, [
        { name: 'bad-p0', numPartitions: 0, replicationFactor: 1 },
        { name: 'bad-pneg', numPartitions: -2, replicationFactor: 1 },
        { name: 'bad-r0', numPartitions: 1, replicationFactor: 0 },
        { name: 'bad-rneg', numPartitions: 1, replicationFactor: -2 },
        { name: 'bad-both', numPartitions: 0, replicationFactor: 0 },
        { name: 'bad-r2', numPartitions: 1, replicationFactor: 2 },
        { name: 'bad-rmax', numPartitions: 3, replicationFactor: 32_767 },
      ]),
    ).toEqual([
      ['bad-p0', E.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.'],
      ['bad-pneg', E.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.'],
      ['bad-r0', E.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.'],
      ['bad-rneg', E.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.'],
      // Kafka checks the replication factor first.
      ['bad-both', E.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.'],
      ['bad-r2', E.INVALID_REPLICATION_FACTOR, 'Unable to replicate the partition 2 time(s): The target replication factor of 2 cannot be reached because only 1 broker(s) are registered.'],
      ['bad-rmax', E.INVALID_REPLICATION_FACTOR, 'Unable to replicate the partition 32767 time(s): The target replication factor of 32767 cannot be reached because only 1 broker(s) are registered.'],
    ]);
  });

  test('CreateTopics: manual assignments with duplicates, unknown brokers, empty lists, gaps, repeated indexes, or counts set too', async () => {
    const n = nodeId;
    expect(
      await createTopics(attacker, [
        { name: 'as-dup', assignments: [{ partitionIndex: 0, brokerIds: [n, n] }] },
        { name: 'as-unknown', assignments: [{ partitionIndex: 0, brokerIds: [n, 99] }] },
        { name: 'as-empty', assignments: [{ partitionIndex: 0, brokerIds: [] }] },
        { name: 'as-gap', assignments: [{ partitionIndex: 0, brokerIds: [n] }, { partitionIndex: 2, brokerIds: [n] }] },
        { name: 'as-huge-index', assignments: [{ partitionIndex: MAX_INT32, brokerIds: [n] }] },
        { name: 'as-negative-index', assignments: [{ partitionIndex: -1, brokerIds: [n] }] },
        { name: 'as-twice', assignments: [{ partitionIndex: 0, brokerIds: [n] }, { partitionIndex: 0, brokerIds: [n] }] },
        { name: 'as-rf', replicationFactor: 1, assignments: [{ partitionIndex: 0, brokerIds: [n] }] },
        { name: 'as-count', numPartitions: 1, assignments: [{ partitionIndex: 0, brokerIds: [n] }] },
        { name: 'as-uneven', assignments: [{ partitionIndex: 0, brokerIds: [n] }, { partitionIndex: 1, brokerIds: [n, 98] }] },
      ]),
    ).toEqual([
      ['as-dup', E.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${n} more than once.`],
      ['as-unknown', E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 99, but no such broker is registered.'],
      ['as-empty', E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
      ['as-gap', E.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence'],
      ['as-huge-index', E.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence'],
      ['as-negative-index', E.INVALID_REPLICA_ASSIGNMENT, 'partitions should be a consecutive 0-based integer sequence'],
      ['as-twice', E.INVALID_REPLICA_ASSIGNMENT, 'Found multiple manual partition assignments for partition 0'],
      ['as-rf', E.INVALID_REQUEST, 'A manual partition assignment was specified, but replication factor was not set to -1.'],
      ['as-count', E.INVALID_REQUEST, 'A manual partition assignment was specified, but numPartitions was not set to -1.'],
      ['as-uneven', E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 98, but no such broker is registered.'],
    ]);
    for (const name of ['as-dup', 'as-gap', 'as-twice', 'as-huge-index']) expect(await exists(name)).toBe(false);
    // A well-formed manual assignment works.
    expect(await createTopics(attacker, [{ name: 'as-ok', assignments: [{ partitionIndex: 1, brokerIds: [n] }, { partitionIndex: 0, brokerIds: [n] }] }])).toEqual([['as-ok', E.NONE, null]]);
    expect((await describeTopic(client, 'as-ok')).partitions).toBe(2);
  });

  test('CreateTopics: null config values, __cluster_metadata; CreatePartitions: unknown topic, no increase, wrong assignments', async () => {
    expect(
      await createTopics(attacker, [
        { name: 'cfg-null', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: null }, { name: 'cleanup.policy', value: null }] },
        { name: '__cluster_metadata', numPartitions: 1, replicationFactor: 1 },
      ]),
    ).toEqual([
      ['cfg-null', E.INVALID_CONFIG, 'Null value not supported for topic configs: retention.ms,cleanup.policy'],
      ['__cluster_metadata', E.INVALID_REQUEST, 'Creation of internal topic __cluster_metadata is prohibited.'],
    ]);
    expect(await createTopics(client, [{ name: 'grow-c', numPartitions: 2, replicationFactor: 1 }])).toEqual([['grow-c', E.NONE, null]]);
    const n = nodeId;
    const res = await attacker.send('CreatePartitions', undefined, {
      topics: [
        { name: 'no-such-topic', count: 3, assignments: null },
        { name: 'grow-c', count: 1, assignments: null },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    expect(res.results.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
      ['no-such-topic', E.UNKNOWN_TOPIC_OR_PARTITION, null],
      ['grow-c', E.INVALID_PARTITIONS, 'The topic grow-c currently has 2 partition(s); 1 would not be an increase.'],
    ]);
    const assignments = async (count: number, lists: number[][]) =>
      (await attacker.send('CreatePartitions', undefined, { topics: [{ name: 'grow-c', count, assignments: lists.map((brokerIds) => ({ brokerIds })) }], timeoutMs: 5000, validateOnly: false })).results.map((r) => [
        r.errorCode,
        r.errorMessage,
      ]);
    expect(await assignments(4, [[n]])).toEqual([[E.INVALID_REPLICA_ASSIGNMENT, 'Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.']]);
    expect(await assignments(3, [[n, n]])).toEqual([[E.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${n} more than once.`]]);
    expect(await assignments(3, [[7]])).toEqual([[E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 7, but no such broker is registered.']]);
    expect(await assignments(3, [[]])).toEqual([[E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.']]);
    expect((await describeTopic(client, 'grow-c')).partitions).toBe(2);
    expect(await assignments(3, [[n]])).toEqual([[E.NONE, null]]);
    expect((await describeTopic(client, 'grow-c')).partitions).toBe(3);
  });
});
