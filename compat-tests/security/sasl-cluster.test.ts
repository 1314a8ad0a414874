/**
 * A 3-broker cluster (a controller node and three brokers in this process) whose inter-broker
 * listener INTERNAL is SASL_PLAINTEXT with PLAIN, and whose controller listener is SASL_PLAINTEXT
 * too: brokers take their client credentials from `listener.name.<listener>.plain.sasl.jaas.config`
 * (username / password), as Kafka brokers do, with sasl.mechanism.inter.broker.protocol and
 * sasl.mechanism.controller.protocol. Registration, heartbeats and the metadata log go over the
 * authenticated controller listener; followers replicate over the authenticated INTERNAL listener,
 * so a topic with replication factor 3 keeps its full ISR while KafkaJS produces with acks=all
 * (min.insync.replicas=2) on the PLAINTEXT client listener and reads it back.
 */
import { Partitioners } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import type { RunningCluster } from '../../broker/cluster';
import { fastCluster, partitionsOf, waitFor } from '../replication/helpers';
import { consumeValues, quietKafka } from './kafkajs-helpers';
import { ALICE, plainJaas, rawPlainLogin, RawSocket } from './sasl-helpers';
import { ErrorCode } from '../../protocol/errors';

jest.setTimeout(90_000);

let cluster: RunningCluster;

const SECURITY = {
  'controller.listener.names': 'CONTROLLER',
  'sasl.enabled.mechanisms': 'PLAIN',
  'sasl.mechanism.controller.protocol': 'PLAIN',
  'listener.name.controller.plain.sasl.jaas.config': plainJaas(),
};

beforeAll(async () => {
  cluster = await fastCluster({
    logLevel: 'error',
    // The controller's listener map; each broker's own (below) replaces it.
    config: { 'min.insync.replicas': '2', ...SECURITY, 'listener.security.protocol.map': 'CONTROLLER:SASL_PLAINTEXT' },
    brokerConfig: () => ({
      listeners: 'PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT',
      'inter.broker.listener.name': 'INTERNAL',
      'sasl.mechanism.inter.broker.protocol': 'PLAIN',
      'listener.name.internal.plain.sasl.jaas.config': plainJaas(),
    }),
  });
});

afterAll(async () => {
  await cluster?.close();
});

const broker = (id: number): RunningBroker => cluster.broker(id);
const plainOf = (b: RunningBroker) => `${b.host}:${b.port}`;
const brokers = () => [0, 1, 2].map(broker);

test('the controller listener authenticates the brokers: all three are registered and unfenced', async () => {
  await waitFor('three unfenced brokers', () => [0, 1, 2].every((id) => cluster.controller.controller.image.broker(id) && !cluster.controller.controller.image.broker(id)!.fenced));
  // The controller listener serves nothing unauthenticated either.
  const s = await RawSocket.connect(cluster.controller.endpoint.host, cluster.controller.endpoint.port);
  try {
    expect((await rawPlainLogin(s, { username: 'alice', password: 'bad' })).errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    await s.waitForClose();
  } finally {
    s.destroy();
  }
});

test('followers replicate over the SASL inter-broker listener: full ISR, acks=all produce, everything read back', async () => {
  const kafka = quietKafka(brokers().map(plainOf), { clientId: 'sasl-cluster', retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  await waitFor('a full ISR on every partition', async () => {
    const parts = await partitionsOf(plainOf(broker(0)), 'replicated');
    return parts.length === 3 && parts.every((p) => p.isr.length === 3);
  }, 20_000);

  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < 10; i++) {
      await producer.send({ topic: 'replicated', acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ key: `k${i * 10 + j}`, value: `v${i * 10 + j}` })) });
    }
  } finally {
    await producer.disconnect();
  }
  // Every replica caught up: each partition's ISR is still complete after the acks=all writes.
  const parts = await partitionsOf(plainOf(broker(1)), 'replicated');
  expect(parts.map((p) => p.isr.length)).toEqual([3, 3, 3]);

  const seen = new Set(await consumeValues(kafka, 'replicated', 100, { groupId: 'sasl-cluster-readers', distinct: true }));
  expect(seen.size).toBe(100);
});

test('a client on the inter-broker listener needs credentials too', async () => {
  const internal = broker(0).server.advertisedEndpoint('INTERNAL')!;
  const s = await RawSocket.connect(internal.host, internal.port);
  try {
    expect((await rawPlainLogin(s, ALICE)).errorCode).toBe(ErrorCode.NONE);
  } finally {
    s.destroy();
  }
  const denied = await RawSocket.connect(internal.host, internal.port);
  try {
    expect((await rawPlainLogin(denied, { username: 'admin', password: 'nope' })).errorMessage).toBe('Authentication failed: Invalid username or password');
  } finally {
    denied.destroy();
  }
});
