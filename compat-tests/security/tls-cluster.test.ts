/**
 * A 3-broker cluster (startCluster) that speaks only TLS: every broker's one listener is SSL with
 * ssl.client.auth=required and is the inter-broker listener, and the controller listener is SSL too
 * (listener.security.protocol.map CONTROLLER:SSL, controller.listener.names on every node). So
 * registration, heartbeats and the metadata log go to the controller over TLS, and follower fetches
 * between brokers use TLS with the brokers' own certificate. A topic with replication factor 3 and
 * min.insync.replicas=3 takes acks=-1 writes from KafkaJS (over mutual TLS), which can only succeed
 * once every follower has fetched them; each replica then holds every record. A restarted broker
 * comes back on the same SSL port and rejoins the ISR.
 */
import { startCluster, type RunningCluster } from '../../broker/cluster';
import { createTestCertificates, type RequestRecording, type TestCertificates } from '../../broker';
import { FAST_CLUSTER_CONFIG, waitFor } from '../replication/helpers';
import { kafkaJs } from './tls-helpers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';
import type { Kafka } from 'kafkajs';

jest.setTimeout(90_000);

let certs: TestCertificates;
let cluster: RunningCluster;
let kafka: Kafka;
/** Who sent the follower fetches each broker served (principal and security protocol). */
/** The follower fetches each broker received. */
const followerFetches: RequestRecording[] = [];

beforeAll(async () => {
  certs = createTestCertificates();
  cluster = await startCluster({
    brokers: 3,
    logLevel: 'error',
    config: {
      ...FAST_CLUSTER_CONFIG,
      listeners: 'SSL://127.0.0.1:0',
      'inter.broker.listener.name': 'SSL',
      'listener.security.protocol.map': 'CONTROLLER:SSL,SSL:SSL',
      'controller.listener.names': 'CONTROLLER',
      ...certs.brokerSsl({ format: 'PKCS12', clientAuth: 'required' }),
    },
  });
  for (const id of cluster.brokers.keys()) {
    followerFetches.push(
      cluster.control.broker(id).record({
        api: 'Fetch',
        when: (r) => ((r.body as { replicaState?: { replicaId: number }; replicaId?: number }).replicaState?.replicaId ?? (r.body as { replicaId?: number }).replicaId ?? -1) >= 0,
      }, { bodies: false }),
    );
  }
  kafka = kafkaJs(cluster.bootstrapServers, 'tls-cluster', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key } });
});

afterAll(async () => {
  await cluster?.close();
  certs?.cleanup();
});

test('the controller and the brokers are reached over TLS only', async () => {
  expect(cluster.brokers.size).toBe(3);
  for (const b of cluster.brokers.values()) {
    expect(b.server.advertisedEndpoints.map((e) => e.securityProtocol)).toEqual(['SSL']);
  }
  // The controller listener answers no plaintext request...
  const [host, port] = cluster.controllerAddress.split(':');
  const raw = await RawSocket.connect(host, Number(port));
  await raw.write(requestFrame(18, 3, 1, { clientSoftwareName: 'plain', clientSoftwareVersion: '1' }));
  await raw.waitForClose();
  expect(raw.bufferedFrames).toBe(0);
  // ...so registration and the metadata log came over TLS: every broker is registered and unfenced.
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { brokers } = await admin.describeCluster();
    expect(brokers.map((x) => x.nodeId).sort()).toEqual([0, 1, 2]);
  } finally {
    await admin.disconnect();
  }
});

test('acks=-1 with min.insync.replicas=3 over mutual TLS: every follower fetched every record over TLS', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: 'tls-replicated', numPartitions: 2, replicationFactor: 3, configEntries: [{ name: 'min.insync.replicas', value: '3' }] }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let batch = 0; batch < 5; batch++) {
      await producer.send({ topic: 'tls-replicated', acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `b${batch}-${i}` })) });
    }
  } finally {
    await producer.disconnect();
  }
  let total = 0n;
  for (const p of [0, 1]) {
    const ends = [0, 1, 2].map((id) => cluster.broker(id).server.replicaManager.getPartition('tls-replicated', p)!.log.logEndOffset);
    expect(new Set(ends).size).toBe(1);
    total += ends[0];
  }
  expect(total).toBe(100n);
  // Brokers authenticated to each other with the broker certificate.
  expect(new Set(followerFetches.flatMap((rec) => rec.requests.map((r) => `${r.principal} ${r.securityProtocol}`)))).toEqual(new Set(['User:CN=localhost SSL']));
});

test('a restarted broker comes back on the same SSL port and rejoins the ISR', async () => {
  const before = cluster.broker(2).port;
  await cluster.stopBroker(2);
  const b = await cluster.startBroker(2);
  expect(b.port).toBe(before);
  await waitFor('broker 2 back in every ISR', () => cluster.controller.controller.image.partition('tls-replicated', 0)?.isr.includes(2) && cluster.controller.controller.image.partition('tls-replicated', 1)?.isr.includes(2), 20_000);
});
