/**
 * The public control API of an in-process cluster (`startCluster(...).control`): a network cut
 * between the leader and the follower of a replicated partition drops the follower out of the ISR
 * (the leader's AlterPartition reaches the controller, recorded there), heal brings it back; a cut
 * between a broker and the controller gets the broker fenced; a broker's stop/start through its
 * control. Startup topics of a cluster exist on every broker before startCluster returns.
 * KafkaJS 2.2.4 is the client; only exported names are used.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { startCluster, type RunningCluster } from '../../broker';
import { FAST_CLUSTER_CONFIG, partitionsOf, waitFor } from '../replication/helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let cluster: RunningCluster;
let admin: Admin;
let producer: Producer;

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 3,
    logLevel: 'error',
    config: { ...FAST_CLUSTER_CONFIG, 'auto.create.topics.enable': 'false' },
    topics: ['cut-rf2:1:2', 'cut-rf3:1:3:min.insync.replicas=1'],
  });
  const kafka = new Kafka({ clientId: 'cluster-control', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50, maxRetryTime: 500 } });
  admin = kafka.admin();
  await admin.connect();
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
}, 60_000);

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await cluster?.close();
});

test('startup topics are on every broker, with their replication factor', async () => {
  for (const b of cluster.bootstrapServers) {
    const ps = await partitionsOf(b, 'cut-rf2');
    expect(ps).toHaveLength(1);
    expect(ps[0].replicas).toHaveLength(2);
  }
  const md = await admin.fetchTopicMetadata({ topics: ['cut-rf3'] });
  expect(md.topics[0].partitions[0].replicas).toHaveLength(3);
});

test('a cut between leader and follower: the follower leaves the ISR, and rejoins after heal', async () => {
  const [p] = await partitionsOf(cluster.bootstrapServers[0], 'cut-rf2');
  const leader = p.leader;
  const follower = p.replicas.find((r) => r !== leader)!;
  await waitFor('both replicas in the ISR', async () => (await partitionsOf(cluster.bootstrapServers[0], 'cut-rf2'))[0].isr.length === 2);
  const alters = cluster.control.controller.record({ api: 'AlterPartition', topic: 'cut-rf2' });
  cluster.control.cut(leader, follower);
  expect(cluster.control.activeCuts).toEqual([[Math.min(leader, follower), Math.max(leader, follower)]]);
  await producer.send({ topic: 'cut-rf2', acks: 1, messages: [{ value: 'during-cut' }] });
  const shrunk = await waitFor('the follower out of the ISR', async () => {
    const [q] = await partitionsOf(cluster.bootstrapServers[leader], 'cut-rf2');
    return q.isr.length === 1 ? q : undefined;
  });
  expect(shrunk.isr).toEqual([leader]);
  expect(alters.requests.length).toBeGreaterThan(0);
  cluster.control.heal(leader, follower);
  expect(cluster.control.activeCuts).toEqual([]);
  const healed = await waitFor('the follower back in the ISR', async () => {
    const [q] = await partitionsOf(cluster.bootstrapServers[leader], 'cut-rf2');
    return q.isr.length === 2 ? q : undefined;
  });
  expect(healed.isr.sort()).toEqual([leader, follower].sort());
  alters.stop();
  // A shrink and an expand, both sent by the leader's controller link.
  expect(alters.requests.length).toBeGreaterThanOrEqual(2);
  expect(alters.requests.every((r) => r.clientId?.startsWith(`krill-broker-${leader}-`))).toBe(true);
}, 30_000);

test('a cut between a broker and the controller gets the broker fenced; heal unfences it', async () => {
  const victim = 2;
  const controllerId = cluster.control.controllerId;
  cluster.control.cut(victim, controllerId);
  // Its partitions' leadership moves away once its session expires.
  await waitFor('the fenced broker no longer leads or is in an ISR', async () => {
    const [q] = await partitionsOf(cluster.bootstrapServers[0], 'cut-rf3');
    return q.leader !== victim && !q.isr.includes(victim);
  }, 15_000);
  cluster.control.healAll();
  await waitFor('the broker back in the ISR', async () => (await partitionsOf(cluster.bootstrapServers[0], 'cut-rf3'))[0].isr.includes(victim), 15_000);
}, 40_000);

test('stop and start one broker through its control', async () => {
  const c = cluster.control.broker(1);
  await c.stop();
  expect(c.running).toBe(false);
  expect(cluster.brokers.has(1)).toBe(false);
  await c.start();
  expect(c.running).toBe(true);
  await waitFor('broker 1 in the ISR of cut-rf3 again', async () => (await partitionsOf(cluster.bootstrapServers[0], 'cut-rf3'))[0].isr.includes(1), 15_000);
}, 30_000);

test('cuts need two distinct nodes of the cluster', () => {
  expect(() => cluster.control.cut(0, 0)).toThrow('cannot cut node 0 from itself');
  expect(() => cluster.control.cut(0, 42)).toThrow('no broker 42 in this cluster');
});
