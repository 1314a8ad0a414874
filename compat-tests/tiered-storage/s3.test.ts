/**
 * Tiered storage on an S3-compatible object store: a real S3 HTTP server (s3rver on 127.0.0.1)
 * and a broker configured with the property names of Aiven's tiered-storage plugin, as a Kafka
 * user's server.properties would have them. Segments are copied as objects and read back from
 * offset 0 by KafkaJS and by librdkafka (node-rdkafka); during an outage of the store the broker keeps serving, logs its
 * failures, and its local log stays bounded by the topic's retention; once the store is back,
 * copying resumes where it stopped.
 */
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import { startBroker } from '../../broker';
import { disconnectAll } from '../helpers/kafkajs';
import { rdkafkaConsumeValues } from '../helpers/rdkafka';
import { waitFor } from '../replication/helpers';
import { createTieredTopic, waitUntilTiered, kafkajsReadFromStart } from './helpers';

jest.setTimeout(90_000);
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (o: Record<string, unknown>) => S3rverInstance;

const BUCKET = 'krill-tiered-e2e';
const s3dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-s3rver-e2e-'));
let s3: S3rverInstance | null = null;
let port = 0;
let broker: RunningBroker;
let kafka: Kafka;

async function startS3(): Promise<void> {
  s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET }] });
  port = (await s3.run()).port;
}
async function stopS3(): Promise<void> {
  if (!s3) return;
  const closed = s3.close();
  s3.httpServer?.closeAllConnections();
  await closed;
  s3 = null;
}

/** The objects of the bucket (the store's own view). */
async function objectKeys(): Promise<string[]> {
  const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const out: string[] = [];
  try {
    let token: string | undefined;
    do {
      const res = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }));
      for (const o of res.Contents ?? []) out.push(o.Key!);
      token = res.NextContinuationToken;
    } while (token !== undefined);
  } finally {
    client.destroy();
  }
  return out;
}

beforeAll(async () => {
  await startS3();
  broker = await startBroker({
    logLevel: 'error',
    config: {
      'auto.create.topics.enable': false,
      'group.initial.rebalance.delay.ms': 0,
      'remote.log.storage.system.enable': true,
      'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
      'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
      'rsm.config.storage.s3.bucket.name': BUCKET,
      'rsm.config.storage.s3.region': 'us-east-1',
      'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${port}`,
      'rsm.config.storage.s3.path.style.access.enabled': true,
      'rsm.config.storage.aws.access.key.id': 'S3RVER',
      'rsm.config.storage.aws.secret.access.key': 'S3RVER',
      'rsm.config.key.prefix': 'krill/',
      'remote.log.manager.task.interval.ms': 100,
      'log.retention.check.interval.ms': 100,
      'rlmm.config.remote.log.metadata.topic.num.partitions': 3,
    },
  });
  kafka = new Kafka({ clientId: 'krill-tiered-s3', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 } });
});

afterAll(async () => {
  await broker?.close();
  await stopS3();
  fs.rmSync(s3dir, { recursive: true, force: true });
});

const value = (i: number): string => `s3-${String(i).padStart(5, '0')}-${'z'.repeat(80)}`;

async function produce(topic: string, from: number, n: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = from; i < from + n; i += 10) await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition: 0, value: value(i + j) })) });
  } finally {
    await disconnectAll(producer);
  }
}

const readFromStart = (topic: string, expected: number): Promise<string[]> => kafkajsReadFromStart(kafka, topic, expected);

test('segments become objects in the bucket under the key prefix, and KafkaJS and librdkafka read from offset 0 through the store', async () => {
  const topic = 's3-a';
  await createTieredTopic(broker, topic);
  await produce(topic, 0, 300);
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  const keys = await objectKeys();
  expect(keys.filter((k) => k.startsWith(`krill/${topic}-`) && k.endsWith('.log')).length).toBeGreaterThan(3);
  const expected = Array.from({ length: 300 }, (_, i) => value(i));
  expect(await readFromStart(topic, 300)).toEqual(expected);
  // librdkafka (node-rdkafka, Fetch v16) through the same store
  const rd = await rdkafkaConsumeValues({ 'metadata.broker.list': broker.bootstrapServers.join(','), 'group.id': `rd-${topic}` }, topic, 1, 300, 30_000);
  expect(rd).toEqual(expected);
});

test('an outage of the store: the broker keeps serving, the local log stays within retention.bytes, copying resumes afterwards', async () => {
  const topic = 's3-b';
  await createTieredTopic(broker, topic, 1, { 'retention.bytes': '12000' });
  await produce(topic, 0, 100);
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  const copiedBefore = log.highestOffsetInRemoteStorage;
  await stopS3();
  // writes go on; nothing more is copied, yet the local log does not grow past the retention
  await produce(topic, 100, 400);
  const segment = 2048;
  await waitFor('the local log bounded by retention.bytes', () => log.size < 12000 + 2 * segment, 20_000, 50);
  expect(log.highestOffsetInRemoteStorage).toBe(copiedBefore);
  expect(log.logEndOffset).toBe(500n);
  // the expired, never-copied data is gone: the log starts after it
  expect(log.logStartOffset).toBeGreaterThan(copiedBefore);
  await startS3();
  await waitFor('copying resumed', () => log.highestOffsetInRemoteStorage > copiedBefore, 30_000, 100);
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset, 30_000);
  // remote retention.bytes then trims the remote data too; wait until the log start settles
  let last = -1n;
  let stableFor = 0;
  await waitFor('the log start offset settles', () => {
    stableFor = log.logStartOffset === last ? stableFor + 1 : 0;
    last = log.logStartOffset;
    return stableFor >= 8;
  }, 30_000, 100);
  const start = Number(log.logStartOffset);
  expect(start).toBeGreaterThan(380);
  const rest = await readFromStart(topic, 500 - start);
  expect(rest[0]).toBe(value(start));
  expect(rest[rest.length - 1]).toBe(value(499));
});
