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
import { Partitioners } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import type { RunningCluster } from '../../broker/cluster';
import { ErrorCode } from '../../protocol/errors';
import { fastCluster } from '../replication/helpers';
import { ADMIN, alterScram, credentialApplied, credentialRemoved, endpointOf, kafkaJs, krillClient, mechanismInfo, scramBrokerConfig, scramListeners, upsertion } from './scram-helpers';
import { consumeValues, sorted, values as testValues } from './kafkajs-helpers';

let cluster: RunningCluster;
let brokers: RunningBroker[] = [];

beforeAll(async () => {
  cluster = await fastCluster({
    logLevel: 'error',
    config: { 'min.insync.replicas': '2' },
    brokerConfig: () => ({ ...scramBrokerConfig(), listeners: scramListeners() }),
  });
  brokers = [0, 1, 2].map((id) => cluster.broker(id));
}, 60_000);

afterAll(async () => {
  await cluster?.close();
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
    const values = testValues(30);
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

    const got = await consumeValues(kafka, 'replicated', values.length, { groupId: 'scram-cluster' });
    expect(sorted(got)).toEqual(sorted(values));
  } finally {
    await admin.disconnect();
  }

  // A deletion through the third broker: gone everywhere.
  expect(await alterVia(brokers[2], [], [{ name: 'alice', mechanism: 1 }])).toEqual([['alice', ErrorCode.NONE, null]]);
  for (const b of brokers) {
    await credentialRemoved(b.server, 'alice', mechanismInfo('SCRAM-SHA-256'));
    expect(await authenticatesOn(b, 'SCRAM-SHA-256', 'alice', 'alice-secret')).toBe(false);
    expect(await authenticatesOn(b, 'SCRAM-SHA-512', 'alice', 'alice-secret')).toBe(true);
  }
}, 90_000);
