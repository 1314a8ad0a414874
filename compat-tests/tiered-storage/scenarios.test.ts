/**
 * Tiered storage (KIP-405) end to end on an embedded broker, once on each remote store
 * (backends.ts: Kafka's LocalTieredStorage in a directory, as Kafka's own tiered-storage tests
 * configure it, and a real S3 server with Aiven's property names), the topic-based metadata
 * manager over `__remote_log_metadata`: a tiered topic's rolled segments are copied and then deleted locally,
 * and real clients still read everything from offset 0: KafkaJS 2.2.4 (Fetch v11), librdkafka
 * (node-rdkafka, Fetch v16), read_committed over remote data; ListOffsets -4 / -5; retention by
 * DeleteRecords reaches remote storage; tiering turned on for an existing topic, copying
 * disabled (remote data kept read-only), tiering turned off with remote.log.delete.on.disable.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import { connect } from '../../client/network-client';
import { ErrorCode } from '../../protocol/errors';
import { disconnectAll } from '../helpers/kafkajs';
import { rdkafkaConsumeValues } from '../helpers/rdkafka';
import { waitFor } from '../replication/helpers';
import { createTieredTopic, removeRemoteDirs, startTieredBroker, waitUntilTiered, kafkajsReadFromStart } from './helpers';
import { openBackend, type BackendName, type RemoteBackend } from './backends';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

jest.setTimeout(60_000);

describe.each(['local', 's3'] as BackendName[])('tiered storage on %s', (backendName) => {
let broker: RunningBroker;
let kafka: Kafka;
let backend: RemoteBackend;

beforeAll(async () => {
  backend = await openBackend(backendName);
  broker = await startTieredBroker(backend.configs);
  kafka = new Kafka({ clientId: 'krill-tiered', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 } });
});

afterAll(async () => {
  await broker?.close();
  await backend?.close();
  removeRemoteDirs();
});

const remoteLogFiles = async (topic: string): Promise<string[]> => (await backend.files(topic, 0)).filter((f) => f.endsWith('.log'));

const value = (i: number): string => `v${String(i).padStart(5, '0')}-${'x'.repeat(80)}`;

async function produce(topic: string, n: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < n; i += 10) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: Math.min(10, n - i) }, (_, j) => ({ partition: 0, value: value(i + j) })) });
    }
  } finally {
    await disconnectAll(producer);
  }
}

const kafkajsReadAll = (topic: string, expected: number, isolation?: 'read_committed'): Promise<string[]> =>
  kafkajsReadFromStart(kafka, topic, expected, { readCommitted: isolation === 'read_committed', timeoutMs: 20_000 });

test('rolled segments move to remote storage, local ones go, and KafkaJS and librdkafka read everything from offset 0', async () => {
  const topic = 'tiered-a';
  await createTieredTopic(broker, topic);
  const n = 300;
  await produce(topic, n);
  const log = broker.server.logManager.getLog(topic, 0)!;
  // the active segment stays local; everything before it goes to remote storage and leaves the disk
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  expect(log.logStartOffset).toBe(0n);
  expect(log.localLogStartOffset).toBeGreaterThan(0n);
  // the copies are in the store, in its layout (LocalTieredStorage's files, Aiven's objects)
  const files = await backend.files(topic, 0);
  expect(files.some((f) => f.endsWith('.log'))).toBe(true);
  expect(files.some((f) => f.endsWith('.index'))).toBe(true);
  expect(files.some((f) => f.endsWith(backendName === 'local' ? '.leader_epoch_checkpoint' : '.leader-epoch-checkpoint'))).toBe(true);
  expect(files.some((f) => f.endsWith('.snapshot'))).toBe(true);
  // the metadata topic exists, as Kafka names it
  expect(broker.server.metadata.topic('__remote_log_metadata')).toBeDefined();

  const expected = Array.from({ length: n }, (_, i) => value(i));
  expect(await kafkajsReadAll(topic, n)).toEqual(expected);
  const rd = await rdkafkaConsumeValues({ 'metadata.broker.list': broker.bootstrapServers.join(','), 'group.id': `rd-${topic}` }, topic, 1, n, 30_000);
  expect(rd).toEqual(expected);
});

test('ListOffsets: earliest is the log start, -4 the local log start, -5 the highest offset in remote storage; a timestamp finds a remote record', async () => {
  const topic = 'tiered-b';
  await createTieredTopic(broker, topic);
  await produce(topic, 200);
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  const [host, port] = broker.bootstrapServers[0].split(':');
  const conn = await connect(host, Number(port));
  try {
    const ask = async (timestamp: bigint) => {
      const res = await conn.send('ListOffsets', 10, { replicaId: -1, isolationLevel: 0, timeoutMs: 5000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }] });
      const p = res.topics[0].partitions[0];
      expect(p.errorCode).toBe(ErrorCode.NONE);
      return p.offset;
    };
    expect(await ask(-2n)).toBe(0n);
    expect(await ask(-4n)).toBe(log.localLogStartOffset);
    expect(await ask(-5n)).toBe(log.highestOffsetInRemoteStorage);
    expect(await ask(-1n)).toBe(log.logEndOffset);
    // every record carries the produce time: timestamp 0 finds the first record, in remote storage
    expect(await ask(0n)).toBe(0n);
  } finally {
    await conn.close();
  }
});

test('DeleteRecords moves the log start offset and the remote segments below it are deleted', async () => {
  const topic = 'tiered-c';
  await createTieredTopic(broker, topic);
  await produce(topic, 300);
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  const segmentsBefore = (await remoteLogFiles(topic)).length;
  const admin = kafka.admin();
  await admin.connect();
  try {
    // KafkaJS needs the topic's metadata first (compat-tests/FINDINGS.md)
    await admin.fetchTopicMetadata({ topics: [topic] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '150' }] });
  } finally {
    await admin.disconnect();
  }
  expect(log.logStartOffset).toBe(150n);
  await waitFor('remote segments below offset 150 deleted', async () => (await remoteLogFiles(topic)).length < segmentsBefore, 20_000, 50);
  // what remains reads from the new log start
  const rest = await kafkajsReadAll(topic, 150);
  expect(rest[0]).toBe(value(150));
  expect(rest[149]).toBe(value(299));
});

async function alterTopic(topic: string, configs: Record<string, string>): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2 /* TOPIC */, name: topic, configEntries: Object.entries(configs).map(([name, v]) => ({ name, value: v })) }] });
  } finally {
    await admin.disconnect();
  }
}


test('tiering turned on for an existing topic, then copying disabled, then tiering turned off with its remote data deleted', async () => {
  const topic = 'tiered-d';
  // an ordinary topic first: nothing is copied
  await createTieredTopic(broker, topic, 1, { 'remote.storage.enable': 'false', 'local.retention.bytes': '-2' });
  await produce(topic, 150);
  const log = broker.server.logManager.getLog(topic, 0)!;
  expect(log.remoteLogEnabled()).toBe(false);
  // turned on: the existing segments are copied and then leave the disk
  await alterTopic(topic, { 'remote.storage.enable': 'true', 'segment.bytes': '2048', 'local.retention.bytes': '1', 'retention.ms': '-1' });
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  expect(log.logStartOffset).toBe(0n);
  const copied = (await remoteLogFiles(topic)).length;
  expect(copied).toBeGreaterThan(3);
  // copying disabled: the remote data stays readable, new segments stay local (local retention
  // falls back to retention.ms = -1, so nothing local is deleted)
  await alterTopic(topic, { 'remote.storage.enable': 'true', 'remote.log.copy.disable': 'true', 'segment.bytes': '2048', 'local.retention.bytes': '1', 'retention.ms': '-1' });
  await waitFor('the copy switch reaches the log', () => log.config.remoteLogCopyDisable);
  const highest = log.highestOffsetInRemoteStorage;
  const localStart = log.localLogStartOffset;
  await produce(topic, 100);
  await new Promise((r) => setTimeout(r, 500)); // several task intervals (100 ms): nothing may be copied
  expect((await remoteLogFiles(topic)).length).toBe(copied);
  expect(log.highestOffsetInRemoteStorage).toBe(highest);
  expect(log.localLogStartOffset).toBe(localStart);
  expect((await kafkajsReadAll(topic, 250))[0]).toBe(value(0));
  // tiering off, and the remote data with it: the log starts at its local segments
  await alterTopic(topic, { 'remote.storage.enable': 'false', 'remote.log.delete.on.disable': 'true', 'segment.bytes': '2048', 'retention.ms': '-1' });
  await waitFor('the remote copies deleted', async () => (await remoteLogFiles(topic)).length === 0, 20_000, 50);
  expect(log.remoteLogEnabled()).toBe(false);
  expect(log.logStartOffset).toBe(localStart);
  const rest = await kafkajsReadAll(topic, 250 - Number(localStart));
  expect(rest[0]).toBe(value(Number(localStart)));
});
});
