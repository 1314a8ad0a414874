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
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { ControllerServer } from '../../broker/controller/controller-server';
import { FAST_CLUSTER_CONFIG, partitionsOf, waitFor } from '../replication/helpers';
import { ALICE, plainJaas, rawPlainLogin, RawSocket } from './sasl-helpers';
import { ErrorCode } from '../../protocol/errors';

jest.setTimeout(90_000);

let dir: string;
let controller: ControllerServer;
const brokers: RunningBroker[] = [];

const SECURITY = {
  'controller.listener.names': 'CONTROLLER',
  'sasl.enabled.mechanisms': 'PLAIN',
  'sasl.mechanism.controller.protocol': 'PLAIN',
  'listener.name.controller.plain.sasl.jaas.config': plainJaas(),
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-sasl-cluster-'));
  const common = { ...FAST_CLUSTER_CONFIG, 'min.insync.replicas': '2' };
  controller = await ControllerServer.start({
    props: {
      ...common,
      ...SECURITY,
      'process.roles': 'controller',
      'node.id': '3000',
      listeners: 'CONTROLLER://127.0.0.1:0',
      'listener.security.protocol.map': 'CONTROLLER:SASL_PLAINTEXT',
      'log.dirs': path.join(dir, 'controller'),
    },
    logLevel: 'error',
  });
  const controllerAddress = `${controller.endpoint.host}:${controller.endpoint.port}`;
  brokers.push(
    ...(await Promise.all(
      [0, 1, 2].map((id) =>
        startBroker({
          dataDir: path.join(dir, `broker-${id}`),
          keepDataDir: true,
          logLevel: 'error',
          overrides: ['listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0'],
          config: {
            ...common,
            ...SECURITY,
            'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT',
            'inter.broker.listener.name': 'INTERNAL',
            'sasl.mechanism.inter.broker.protocol': 'PLAIN',
            'listener.name.internal.plain.sasl.jaas.config': plainJaas(),
            'process.roles': 'broker',
            'node.id': String(id),
            'controller.quorum.bootstrap.servers': controllerAddress,
          },
        }),
      ),
    )),
  );
});

afterAll(async () => {
  await Promise.all(brokers.map((b) => b.close().catch(() => undefined)));
  await controller?.shutdown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const plainOf = (b: RunningBroker) => `${b.host}:${b.port}`;

test('the controller listener authenticates the brokers: all three are registered and unfenced', async () => {
  await waitFor('three unfenced brokers', () => [0, 1, 2].every((id) => controller.controller.image.broker(id) && !controller.controller.image.broker(id)!.fenced));
  // The controller listener serves nothing unauthenticated either.
  const s = await RawSocket.connect(controller.endpoint.host, controller.endpoint.port);
  try {
    expect((await rawPlainLogin(s, { username: 'alice', password: 'bad' })).errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    await s.waitForClose();
  } finally {
    s.destroy();
  }
});

test('followers replicate over the SASL inter-broker listener: full ISR, acks=all produce, everything read back', async () => {
  const kafka = new Kafka({
    clientId: 'sasl-cluster',
    brokers: brokers.map(plainOf),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  await waitFor('a full ISR on every partition', async () => {
    const parts = await partitionsOf(plainOf(brokers[0]), 'replicated');
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
  const parts = await partitionsOf(plainOf(brokers[1]), 'replicated');
  expect(parts.map((p) => p.isr.length)).toEqual([3, 3, 3]);

  const consumer = kafka.consumer({ groupId: 'sasl-cluster-readers', sessionTimeout: 10_000, heartbeatInterval: 500 });
  const seen = new Set<string>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: 'replicated', fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${seen.size} of 100`)), 30_000);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            seen.add(message.value!.toString());
            if (seen.size === 100) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  expect(seen.size).toBe(100);
});

test('a client on the inter-broker listener needs credentials too', async () => {
  const internal = brokers[0].server.advertisedEndpoint('INTERNAL')!;
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
