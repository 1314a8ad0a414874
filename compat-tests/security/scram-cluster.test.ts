/**
 * SASL/SCRAM in a 3-broker cluster (a controller node and three brokers in this process, each
 * broker with a PLAINTEXT and a SASL_PLAINTEXT listener, inter-broker traffic on SASL_PLAINTEXT
 * with SCRAM-SHA-512 as admin):
 * - AlterUserScramCredentials sent to one broker is forwarded to the controller and reaches every
 *   broker's image (awaited through the image's listener), so the user authenticates on every
 *   broker (krill's SCRAM client and KafkaJS, each pointed at that broker alone);
 * - followers replicate over the SCRAM-authenticated inter-broker listener (krill's SCRAM client
 *   with the admin credential created the same way): a topic with replication factor 3 keeps its
 *   full ISR while KafkaJS produces with acks=all as a SCRAM user and consumes it back;
 * - a deletion through another broker takes the credential away everywhere.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Partitioners } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { ControllerServer } from '../../broker/controller/controller-server';
import { ErrorCode } from '../../protocol/errors';
import { FAST_CLUSTER_CONFIG } from '../replication/helpers';
import { ADMIN, alterScram, credentialApplied, endpointOf, kafkaJs, krillClient, listenersOverride, mechanismInfo, scramBrokerConfig, upsertion } from './scram-helpers';

let dir: string;
let controller: ControllerServer;
const brokers: RunningBroker[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-scram-cluster-'));
  const common = { ...FAST_CLUSTER_CONFIG, 'min.insync.replicas': '2' };
  controller = await ControllerServer.start({
    props: {
      ...common,
      'process.roles': 'controller',
      'node.id': '3000',
      listeners: 'CONTROLLER://127.0.0.1:0',
      'controller.listener.names': 'CONTROLLER',
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
          overrides: [listenersOverride()],
          config: { ...common, ...scramBrokerConfig(), 'process.roles': 'broker', 'node.id': String(id), 'controller.quorum.bootstrap.servers': controllerAddress },
        }),
      ),
    )),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(brokers.map((b) => b.close().catch(() => undefined)));
  await controller?.shutdown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const plainOf = (b: RunningBroker) => endpointOf(b.server, 'PLAINTEXT');
const saslOf = (b: RunningBroker) => endpointOf(b.server, 'SASL_PLAINTEXT');

async function alterVia(b: RunningBroker, ...args: Parameters<typeof alterScram> extends [unknown, ...infer R] ? R : never) {
  const conn = await krillClient(plainOf(b).host, plainOf(b).port);
  try {
    return await alterScram(conn, ...args);
  } finally {
    await conn.close();
  }
}

/** krill's own SCRAM client authenticating to `b`'s SASL listener, then a Metadata request. */
async function authenticatesOn(b: RunningBroker, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username: string, password: string): Promise<boolean> {
  try {
    const conn = await krillClient(saslOf(b).host, saslOf(b).port, { mechanism, username, password });
    try {
      const md = await conn.send('Metadata', undefined, { topics: null, allowAutoTopicCreation: false });
      return md.brokers.length === 3;
    } finally {
      await conn.close();
    }
  } catch {
    return false;
  }
}

test('a credential added through one broker authenticates on every broker; followers replicate over SCRAM', async () => {
  // The brokers' own user first (it has to exist before they can fetch from each other over SASL).
  expect(await alterVia(brokers[0], [upsertion(ADMIN.username, ADMIN.password, 'SCRAM-SHA-512')])).toEqual([[ADMIN.username, ErrorCode.NONE, null]]);
  // alice through another broker, with both mechanisms in two requests (one alteration per user per request).
  expect(await alterVia(brokers[1], [upsertion('alice', 'alice-secret', 'SCRAM-SHA-256')])).toEqual([['alice', ErrorCode.NONE, null]]);
  expect(await alterVia(brokers[1], [upsertion('alice', 'alice-secret', 'SCRAM-SHA-512', 8192)])).toEqual([['alice', ErrorCode.NONE, null]]);
  for (const b of brokers) {
    await credentialApplied(b.server, ADMIN.username, mechanismInfo('SCRAM-SHA-512'));
    await credentialApplied(b.server, 'alice', mechanismInfo('SCRAM-SHA-256'));
    await credentialApplied(b.server, 'alice', mechanismInfo('SCRAM-SHA-512'));
  }

  for (const b of brokers) {
    expect(await authenticatesOn(b, 'SCRAM-SHA-256', 'alice', 'alice-secret')).toBe(true);
    expect(await authenticatesOn(b, 'SCRAM-SHA-512', 'alice', 'alice-secret')).toBe(true);
    expect(await authenticatesOn(b, 'SCRAM-SHA-512', 'alice', 'wrong')).toBe(false);
    const admin = kafkaJs(saslOf(b).bootstrap, { mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' }, `seed-${b.nodeId}`).admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers.map((x) => x.nodeId).sort()).toEqual([0, 1, 2]);
    } finally {
      await admin.disconnect();
    }
  }

  // Replication factor 3, acks=all: the followers fetch over SASL_PLAINTEXT as admin.
  const kafka = kafkaJs(brokers.map((b) => saslOf(b).bootstrap), { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 3, replicationFactor: 3 }], waitForLeaders: true });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await producer.connect();
    const values = Array.from({ length: 30 }, (_, i) => `v${i}`);
    try {
      await producer.send({ topic: 'replicated', acks: -1, timeout: 10_000, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
    } finally {
      await producer.disconnect();
    }
    const md = await admin.fetchTopicMetadata({ topics: ['replicated'] });
    for (const p of md.topics[0].partitions) expect([...p.isr].sort()).toEqual([0, 1, 2]);
    // The high watermark (acks=all, full ISR) only moves once every follower has fetched the records.
    const offsets = await admin.fetchTopicOffsets('replicated');
    expect(offsets.reduce((n, o) => n + Number(o.high), 0)).toBe(values.length);

    const consumer = kafka.consumer({ groupId: 'scram-cluster', sessionTimeout: 10_000, heartbeatInterval: 500 });
    await consumer.connect();
    const got: string[] = [];
    try {
      await consumer.subscribe({ topic: 'replicated', fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`consumed ${got.length}/${values.length}`)), 20_000);
        consumer
          .run({
            eachMessage: async ({ message }) => {
              got.push(message.value!.toString());
              if (got.length === values.length) {
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
    expect(got.sort()).toEqual([...values].sort());
  } finally {
    await admin.disconnect();
  }

  // A deletion through the third broker: gone everywhere.
  expect(await alterVia(brokers[2], [], [{ name: 'alice', mechanism: 1 }])).toEqual([['alice', ErrorCode.NONE, null]]);
  for (const b of brokers) {
    await new Promise<void>((resolve, reject) => {
      if (!b.server.metadata.scramCredential('alice', 1)) return resolve();
      const timer = setTimeout(() => reject(new Error(`broker ${b.nodeId} kept alice's credential`)), 10_000);
      const unsubscribe = b.server.metadata.subscribeScramCredentials(() => {
        if (b.server.metadata.scramCredential('alice', 1)) return;
        clearTimeout(timer);
        unsubscribe();
        resolve();
      });
    });
    expect(await authenticatesOn(b, 'SCRAM-SHA-256', 'alice', 'alice-secret')).toBe(false);
    expect(await authenticatesOn(b, 'SCRAM-SHA-512', 'alice', 'alice-secret')).toBe(true);
  }
}, 90_000);
