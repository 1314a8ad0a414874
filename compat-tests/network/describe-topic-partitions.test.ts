/**
 * DescribeTopicPartitions (75, KIP-966) over the wire with krill's own client (no installable
 * client sends it: @platformatic/kafka ships the codec but never calls it): pagination with
 * response_partition_limit and the cursor, the cap max.request.partition.size.limit, every
 * partition field (ELR lists empty, as Kafka with ELR off), unknown and invalid names, and
 * INVALID_REQUEST for a bad cursor; in a 3-broker cluster, a stopped broker's replicas are offline
 * and the partitions it led have moved.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import { connect, type BrokerConnection } from '../../client/network-client';
import type { DescribeTopicPartitionsResponse } from '../../protocol/generated/describe-topic-partitions';
import { connectTo, createTopic, fastCluster, waitFor } from '../replication/helpers';

jest.setTimeout(30_000);

describe('DescribeTopicPartitions against a krill broker', () => {
  let broker: RunningBroker;
  let conn: BrokerConnection;
  const describe_ = (topics: string[], responsePartitionLimit: number, cursor: { topicName: string; partitionIndex: number } | null = null): Promise<DescribeTopicPartitionsResponse> =>
    conn.send('DescribeTopicPartitions', 0, { topics: topics.map((name) => ({ name })), responsePartitionLimit, cursor });
  const shape = (res: DescribeTopicPartitionsResponse) => res.topics.map((t) => [t.name, t.errorCode, t.partitions.map((p) => p.partitionIndex)]);

  beforeAll(async () => {
    broker = await startBroker({ logger: new Logger('krill', 'warn'), config: { 'max.request.partition.size.limit': 6 } });
    conn = await connect(broker.host, broker.port, { clientId: 'dtp-test' });
    const res = await conn.send('CreateTopics', undefined, {
      topics: [
        { name: 'dtp-a', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] },
        { name: 'dtp-b', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
        { name: 'dtp-c', numPartitions: 5, replicationFactor: 1, assignments: [], configs: [] },
      ],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(res.topics.map((t) => t.errorCode)).toEqual([0, 0, 0]);
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.close();
  });

  test('it is advertised at v0', () => {
    expect(conn.apiVersions.get(75)).toEqual({ minVersion: 0, maxVersion: 0 });
  });

  test('every partition field: leader, epoch, replicas, ISR, empty ELR lists, no offline replicas; the topic id', async () => {
    const res = await describe_(['dtp-b'], 10);
    expect(res.nextCursor).toBeNull();
    const t = res.topics[0];
    expect(t).toMatchObject({ name: 'dtp-b', errorCode: ErrorCode.NONE, isInternal: false, topicId: broker.server.metadata.topic('dtp-b')!.topicId });
    expect(t.partitions).toEqual([
      expect.objectContaining({
        errorCode: 0,
        partitionIndex: 0,
        leaderId: broker.server.nodeId,
        leaderEpoch: 0,
        replicaNodes: [broker.server.nodeId],
        isrNodes: [broker.server.nodeId],
        eligibleLeaderReplicas: [],
        lastKnownElr: [],
        offlineReplicas: [],
      }),
    ]);
  });

  test('pages through listed topics in name order: a topic cut short, a limit used up at a topic boundary', async () => {
    const topics = ['dtp-c', 'dtp-a', 'dtp-b', 'dtp-a'];
    const first = await describe_(topics, 4);
    expect(shape(first)).toEqual([
      ['dtp-a', 0, [0, 1, 2]],
      ['dtp-b', 0, [0]],
    ]);
    expect(first.nextCursor).toEqual({ topicName: 'dtp-c', partitionIndex: 0 });
    const second = await describe_(topics, 2, first.nextCursor);
    expect(shape(second)).toEqual([['dtp-c', 0, [0, 1]]]);
    expect(second.nextCursor).toEqual({ topicName: 'dtp-c', partitionIndex: 2 });
    const third = await describe_(topics, 100, second.nextCursor);
    expect(shape(third)).toEqual([['dtp-c', 0, [2, 3, 4]]]);
    expect(third.nextCursor).toBeNull();
  });

  test('the limit is at least 1 and at most max.request.partition.size.limit', async () => {
    const one = await describe_(['dtp-a'], 0);
    expect(shape(one)).toEqual([['dtp-a', 0, [0]]]);
    expect(one.nextCursor).toEqual({ topicName: 'dtp-a', partitionIndex: 1 });
    const capped = await describe_(['dtp-a', 'dtp-b', 'dtp-c'], 2000);
    expect(shape(capped)).toEqual([
      ['dtp-a', 0, [0, 1, 2]],
      ['dtp-b', 0, [0]],
      ['dtp-c', 0, [0, 1]],
    ]);
    expect(capped.nextCursor).toEqual({ topicName: 'dtp-c', partitionIndex: 2 });
  });

  test('all topics (an empty list): from the cursor topic on, unknown cursor topics allowed', async () => {
    const all = await describe_([], 6, { topicName: 'dtp-b', partitionIndex: 0 });
    expect(shape(all).filter(([n]) => String(n).startsWith('dtp-'))).toEqual([
      ['dtp-b', 0, [0]],
      ['dtp-c', 0, [0, 1, 2, 3, 4]],
    ]);
    const fromGap = await describe_([], 6, { topicName: 'dtp-bb', partitionIndex: 3 });
    expect(shape(fromGap).filter(([n]) => String(n).startsWith('dtp-'))).toEqual([['dtp-c', 0, [0, 1, 2, 3, 4]]]);
  });

  test('unknown and invalid names, in name order, with a zero id and no partitions', async () => {
    const res = await describe_(['zz-missing', 'dtp-a', 'bad/name'], 100);
    expect(res.topics.map((t) => [t.name, t.errorCode, t.topicId, t.partitions.length])).toEqual([
      ['bad/name', ErrorCode.INVALID_TOPIC_EXCEPTION, ZERO_UUID, 0],
      ['dtp-a', ErrorCode.NONE, broker.server.metadata.topic('dtp-a')!.topicId, 3],
      ['zz-missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, 0],
    ]);
  });

  test('a cursor topic missing from the list, or a negative cursor partition, is INVALID_REQUEST for every listed topic', async () => {
    const missing = await describe_(['dtp-a', 'dtp-c'], 100, { topicName: 'dtp-b', partitionIndex: 0 });
    expect(missing.topics.map((t) => [t.name, t.errorCode, t.partitions.length])).toEqual([
      ['dtp-a', ErrorCode.INVALID_REQUEST, 0],
      ['dtp-c', ErrorCode.INVALID_REQUEST, 0],
    ]);
    expect(missing.nextCursor).toBeNull();
    const negative = await describe_(['dtp-a'], 100, { topicName: 'dtp-a', partitionIndex: -1 });
    expect(negative.topics.map((t) => [t.name, t.errorCode])).toEqual([['dtp-a', ErrorCode.INVALID_REQUEST]]);
    const negativeAll = await describe_([], 100, { topicName: 'dtp-a', partitionIndex: -1 });
    expect(negativeAll.topics).toEqual([]);
  });
});

describe('DescribeTopicPartitions in a 3-broker cluster', () => {
  test('a stopped broker is an offline replica, out of the ISR and no longer a leader', async () => {
    const cluster = await fastCluster();
    const conn = await connectTo(cluster.bootstrapServers[0]);
    try {
      await createTopic(cluster, 'dtp-rf3', 3, 3);
      const ask = () => conn.send('DescribeTopicPartitions', 0, { topics: [{ name: 'dtp-rf3' }], responsePartitionLimit: 100, cursor: null });
      const before = (await ask()).topics[0].partitions;
      expect(before.map((p) => p.replicaNodes.length)).toEqual([3, 3, 3]);
      expect(before.every((p) => p.offlineReplicas.length === 0 && p.isrNodes.length === 3)).toBe(true);
      await cluster.stopBroker(2);
      const after = await waitFor('broker 2 out of every ISR', async () => {
        const ps = (await ask()).topics[0].partitions;
        return ps.every((p) => !p.isrNodes.includes(2)) ? ps : null;
      });
      for (const p of after) {
        expect(p.offlineReplicas).toEqual([2]);
        expect(p.replicaNodes).toContain(2);
        expect(p.leaderId).not.toBe(2);
        expect(p.leaderId).toBeGreaterThanOrEqual(0);
        expect(p).toMatchObject({ eligibleLeaderReplicas: [], lastKnownElr: [] });
      }
    } finally {
      await conn.close();
      await cluster.close();
    }
  });
});
