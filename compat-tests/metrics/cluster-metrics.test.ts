/**
 * Metrics of an in-process cluster (startCluster): every broker has its own registry and port, so
 * each reports its own partitions; a follower that stops fetching is shrunk out of the ISR by the
 * leader (IsrShrinksPerSec, UnderReplicatedPartitions on the leader) and expanded back once it
 * catches up (IsrExpandsPerSec), its MaxLag showing while it does; follower fetches count as
 * FetchFollower and replication bytes out.
 * A controller-only node serves its own registry (KafkaController gauges, its listener's requests).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, startCluster, type RunningBroker, type RunningCluster } from '../../broker';
import { startTestController } from '../../broker/testing/controller-node';
import { httpStatus, scrape, type Scrape } from '../../broker/metrics/testing/scrape';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await startCluster({
    brokers: 2,
    metricsPort: 0,
    logLevel: 'warn',
    config: { 'replica.lag.time.max.ms': 1000, 'replica.fetch.max.bytes': 1024, 'auto.create.topics.enable': false },
  });
});

afterAll(async () => {
  await cluster?.close();
});

const metricsOf = (id: number): Promise<Scrape> => scrape(cluster.broker(id).metricsAddress!);

async function waitFor(what: string, cond: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('own registries per broker; ISR shrink and expand of a lagging follower are counted on the leader', async () => {
  const [a0, a1] = [cluster.broker(0).metricsAddress!, cluster.broker(1).metricsAddress!];
  expect(a0.port).not.toBe(a1.port);
  const kafka = new Kafka({ clientId: 'krill-compat-cluster-metrics', brokers: cluster.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await admin.createTopics({ topics: [{ topic: 'rf2', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true });
    await producer.connect();
    await producer.send({ topic: 'rf2', acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ value: `m${i}` })) });
    const [leader, follower] = [0, 1];
    await waitFor('the follower to be in sync', async () => (await metricsOf(leader)).value('kafka_server_replicamanager_underreplicatedpartitions') === 0);

    const l1 = await metricsOf(leader);
    const f1 = await metricsOf(follower);
    expect(l1.value('kafka_server_replicamanager_partitioncount')).toBe(1);
    expect(l1.value('kafka_server_replicamanager_leadercount')).toBe(1);
    expect(f1.value('kafka_server_replicamanager_partitioncount')).toBe(1);
    expect(f1.value('kafka_server_replicamanager_leadercount')).toBe(0);
    expect(l1.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: 'rf2' })).toBe(20);
    expect(f1.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: 'rf2' })).toBeUndefined(); // follower appends are not client produce
    expect(l1.sum('kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' })).toBeGreaterThan(0);
    expect(l1.value('kafka_server_brokertopicmetrics_replicationbytesout_total')).toBeGreaterThanOrEqual(l1.value('kafka_log_log_size', { topic: 'rf2', partition: '0' })!);
    // The follower appended exactly what its log holds (and the leader, which appends for clients, nothing).
    expect(f1.value('kafka_server_brokertopicmetrics_replicationbytesin_total')).toBe(f1.value('kafka_log_log_size', { topic: 'rf2', partition: '0' }));
    expect(l1.value('kafka_server_brokertopicmetrics_replicationbytesin_total')).toBe(0);
    // The controller runs elsewhere: a cluster broker reports no KafkaController gauges.
    expect(l1.family('kafka_controller_kafkacontroller_activecontrollercount')).toBeUndefined();
    expect(l1.value('kafka_server_replicamanager_isrshrinks_total')).toBe(0);

    // The follower stops fetching for longer than replica.lag.time.max.ms while the leader takes
    // records (a follower at the leader's end offset is in sync however long ago it fetched): the
    // leader shrinks the ISR.
    cluster.slowReplication(follower, 3000);
    await new Promise((r) => setTimeout(r, 600)); // a long-poll fetch in flight comes back first (replica.fetch.wait.max.ms)
    await producer.send({ topic: 'rf2', acks: 1, messages: [{ value: 'while the follower sleeps' }] });
    await waitFor('the ISR shrink', async () => (await metricsOf(leader)).value('kafka_server_replicamanager_isrshrinks_total') === 1);
    const l2 = await metricsOf(leader);
    expect(l2.value('kafka_server_replicamanager_underreplicatedpartitions')).toBe(1);
    expect(l2.value('kafka_server_replicafetchermanager_maxlag', { clientId: 'Replica' })).toBe(0); // the leader follows nothing
    expect(l2.value('kafka_server_replicamanager_isrexpands_total')).toBe(0);
    // Ten more batches while it sleeps; then it fetches one batch (replica.fetch.max.bytes) every
    // 300 ms, and while it catches up its MaxLag is what it still lacks of the leader's HWM.
    const value = 'x'.repeat(900);
    for (let i = 0; i < 10; i++) await producer.send({ topic: 'rf2', acks: 1, messages: [{ value }] });
    cluster.slowReplication(follower, 300);
    await waitFor('a follower lag', async () => ((await metricsOf(follower)).value('kafka_server_replicafetchermanager_maxlag', { clientId: 'Replica' }) ?? 0) > 0);
    cluster.slowReplication(follower, 0);
    await waitFor('the ISR expansion', async () => (await metricsOf(leader)).value('kafka_server_replicamanager_isrexpands_total') === 1);
    const l3 = await metricsOf(leader);
    expect(l3.value('kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
    // Caught up again: the follower's last answer had the leader's high watermark at its end offset.
    await waitFor('the follower lag to be 0', async () => (await metricsOf(follower)).value('kafka_server_replicafetchermanager_maxlag', { clientId: 'Replica' }) === 0);
    expect(l3.value('kafka_server_replicamanager_isrshrinks_total')).toBe(1);
    expect((await metricsOf(follower)).value('kafka_server_replicamanager_isrshrinks_total')).toBe(0);
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
}, 45_000);

test('a controller-only node serves its own metrics: KafkaController gauges, its listener\'s requests and connections', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-controller-metrics-'));
  const controller = await startTestController(path.join(dir, 'controller'), { props: { 'krill.metrics.port': 0, 'krill.metrics.host': '127.0.0.1' } });
  let broker: RunningBroker | undefined;
  try {
    const address = controller.metricsAddress!;
    expect(await httpStatus(address, '/ready')).toBe(200);
    broker = await startBroker({
      dataDir: path.join(dir, 'broker'),
      logLevel: 'warn',
      config: { 'process.roles': 'broker', 'node.id': '0', 'controller.quorum.bootstrap.servers': `${controller.endpoint.host}:${controller.endpoint.port}` },
    });
    const kafka = new Kafka({ clientId: 'krill-compat-controller-metrics', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 3 } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'c1', numPartitions: 2 }], waitForLeaders: true });
    } finally {
      await admin.disconnect();
    }
    const s = await scrape(address);
    expect(s.value('kafka_controller_kafkacontroller_activecontrollercount')).toBe(1);
    expect(s.value('kafka_controller_kafkacontroller_activebrokercount')).toBe(1);
    expect(s.value('kafka_controller_kafkacontroller_fencedbrokercount')).toBe(0);
    expect(s.value('kafka_controller_kafkacontroller_globaltopiccount')).toBe(1);
    expect(s.value('kafka_controller_kafkacontroller_globalpartitioncount')).toBe(2);
    expect(s.sum('kafka_network_requestmetrics_requests_total', { request: 'BrokerRegistration' })).toBe(1);
    expect(s.sum('kafka_network_requestmetrics_requests_total', { request: 'BrokerHeartbeat' })).toBeGreaterThan(0);
    expect(s.sum('kafka_network_requestmetrics_requests_total', { request: 'CreateTopics' })).toBe(1); // forwarded by the broker
    expect(s.value('kafka_server_socket_server_metrics_connection_count', { listener: 'CONTROLLER', networkProcessor: '0' })).toBeGreaterThanOrEqual(1);
    // A broker's own metrics are not there: this is the controller's registry.
    expect(s.family('kafka_server_replicamanager_partitioncount')).toBeUndefined();
  } finally {
    await broker?.close();
    await controller.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  expect(controller.metricsAddress).toBeNull();
});
