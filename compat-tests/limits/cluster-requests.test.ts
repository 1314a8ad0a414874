/**
 * Issue 11 on a 3-broker in-process cluster: DeleteRecords waits for the replicas (Kafka's
 * DelayedDeleteRecords), the controller listener honours delete.topic.enable=false itself (also for
 * what brokers forward to it), and manual assignments of uneven lengths are refused.
 *
 * Invariants checked: DeleteRecords moves the leader's log start offset at once but answers NONE
 * only once every alive follower has reported a log start offset at or past the requested offset
 * (checked on the leader's own follower state at the moment of the answer); before that, timeout_ms
 * ends it with REQUEST_TIMED_OUT and the low watermark it had; a fenced broker's replica is not
 * waited for; a follower answers NOT_LEADER_OR_FOLLOWER.
 */
import type { RunningCluster } from '../../broker/cluster';
import { ErrorCode } from '../../protocol/errors';
import { produce, type BrokerConnection } from '../../client/network-client';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from '../replication/helpers';

jest.setTimeout(60_000);

const E = ErrorCode;
const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA';

let cluster: RunningCluster;
const conns: BrokerConnection[] = [];

async function connTo(hostPort: string): Promise<BrokerConnection> {
  const c = await connectTo(hostPort);
  conns.push(c);
  return c;
}

beforeAll(async () => {
  // The controller refuses topic deletion; the brokers would allow it: the controller decides.
  cluster = await fastCluster({ config: { 'delete.topic.enable': false }, brokerConfig: () => ({ 'delete.topic.enable': true }) });
});

afterAll(async () => {
  for (const c of conns) await c.close();
  await cluster?.close();
});

function addressOf(nodeId: number): string {
  const b = cluster.broker(nodeId);
  return `${b.host}:${b.port}`;
}

function leaderPartition(leader: number, topic: string) {
  const p = cluster.broker(leader).server.replicaManager.getPartition(topic, 0);
  if (!p) throw new Error(`${topic}-0 is not hosted on broker ${leader}`);
  return p;
}

async function deleteRecords(conn: BrokerConnection, topic: string, offset: bigint, timeoutMs: number) {
  const res = await conn.send('DeleteRecords', undefined, { topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset }] }], timeoutMs }, { timeoutMs: timeoutMs + 10_000 });
  return res.topics[0].partitions[0];
}

test('DeleteRecords waits until every alive replica\'s log start offset reached the offset, up to timeout_ms', async () => {
  const topic = 'dr-wait';
  await createTopic(cluster, topic, 1, 3);
  const [{ leader, replicas }] = await partitionsOf(cluster.bootstrapServers[0], topic);
  const [slow, other] = replicas.filter((r) => r !== leader);
  const conn = await connTo(addressOf(leader));
  await produce(conn, topic, 0, Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
  // The followers know the high watermark (they apply the leader's log start offset only below it).
  await waitFor('followers to learn the high watermark', () =>
    [slow, other].every((f) => cluster.broker(f).server.replicaManager.getPartition(topic, 0)?.log.highWatermark === 10n),
  );
  const lp = leaderPartition(leader, topic);

  cluster.slowReplication(slow, 4000);
  const timedOut = await deleteRecords(conn, topic, 5n, 300);
  expect(timedOut.errorCode).toBe(E.REQUEST_TIMED_OUT);
  expect(timedOut.lowWatermark).toBeLessThan(5n);
  // The leader's own log moved at once.
  expect(lp.log.logStartOffset).toBe(5n);
  expect(lp.replica(slow)!.logStartOffset).toBeLessThan(5n);

  const done = await deleteRecords(conn, topic, 5n, 20_000);
  // Answered only once both followers had reported it (the slow one after its delayed fetch).
  expect(done).toMatchObject({ errorCode: E.NONE, lowWatermark: 5n });
  expect(lp.replica(slow)!.logStartOffset).toBeGreaterThanOrEqual(5n);
  expect(lp.replica(other)!.logStartOffset).toBeGreaterThanOrEqual(5n);
  expect(lp.lowWatermarkIfLeader).toBe(5n);
  cluster.slowReplication(slow, 0);

  // A follower is not where records are deleted.
  const onFollower = await deleteRecords(await connTo(addressOf(other)), topic, 6n, 1000);
  expect(onFollower).toMatchObject({ errorCode: E.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });

  // A fenced broker's replica is not waited for (Kafka counts only alive brokers).
  await cluster.killBroker(other);
  await waitFor('the killed broker to be fenced', () => cluster.broker(leader).server.metadata.broker(other)?.fenced === true, 20_000);
  const withoutDead = await deleteRecords(conn, topic, 8n, 20_000);
  expect(withoutDead).toMatchObject({ errorCode: E.NONE, lowWatermark: 8n });
  expect(lp.replica(other)!.logStartOffset).toBeLessThan(8n);
  await cluster.startBroker(other);
});

test('the controller listener honours its own delete.topic.enable=false, for clients and for what brokers forward', async () => {
  await createTopic(cluster, 'undeletable', 1, 1);
  const ctl = await connTo(cluster.controllerAddress);
  for (let v = 1; v <= 6; v++) {
    const body = v >= 6 ? { topics: [{ name: 'undeletable', topicId: ZERO }, { name: 'undeletable', topicId: ZERO }], timeoutMs: 5000 } : { topicNames: ['undeletable', 'undeletable'], timeoutMs: 5000 };
    const res = await ctl.send('DeleteTopics', v, body);
    const code = v < 3 ? E.INVALID_REQUEST : E.TOPIC_DELETION_DISABLED;
    expect(res.responses.map((r) => [r.name, r.errorCode])).toEqual([
      ['undeletable', code],
      ['undeletable', code],
    ]);
  }
  const viaBroker = await connTo(cluster.bootstrapServers[0]);
  for (const v of [2, 6]) {
    const res = await viaBroker.send('DeleteTopics', v, v >= 6 ? { topics: [{ name: 'undeletable', topicId: ZERO }], timeoutMs: 5000 } : { topicNames: ['undeletable'], timeoutMs: 5000 });
    expect(res.responses.map((r) => [r.name, r.errorCode])).toEqual([['undeletable', v < 3 ? E.INVALID_REQUEST : E.TOPIC_DELETION_DISABLED]]);
  }
  expect((await partitionsOf(cluster.bootstrapServers[0], 'undeletable')).length).toBe(1);
});

test('manual assignments of uneven lengths, and CreatePartitions lists unlike the topic\'s replication factor, are INVALID_REPLICA_ASSIGNMENT', async () => {
  const conn = await connTo(cluster.bootstrapServers[1]);
  const ct = await conn.send('CreateTopics', undefined, {
    topics: [
      { name: 'uneven', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0] }, { partitionIndex: 1, brokerIds: [0, 1] }], configs: [] },
      { name: 'even', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1] }, { partitionIndex: 1, brokerIds: [1, 2] }], configs: [] },
    ],
    timeoutMs: 10_000,
  });
  expect(ct.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([
    ['uneven', E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes a partition with 2 replica(s), but this is not consistent with previous partitions, which have 1 replica(s).'],
    ['even', E.NONE, null],
  ]);
  const cp = await conn.send('CreatePartitions', undefined, { topics: [{ name: 'even', count: 3, assignments: [{ brokerIds: [2] }] }], timeoutMs: 10_000, validateOnly: false });
  expect(cp.results.map((r) => [r.errorCode, r.errorMessage])).toEqual([
    [E.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).'],
  ]);
  expect((await partitionsOf(cluster.bootstrapServers[1], 'even')).length).toBe(2);
});
