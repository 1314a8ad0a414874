/**
 * Tiered storage's metrics on /metrics (Kafka's RemoteStorageMetrics with the Strimzi exporter's
 * names): after a topic's segments are copied and read back from remote storage, the copy, fetch
 * and size metrics of that topic agree with what the remote store holds and what was read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { connect, fetchAll } from '../../client/network-client';
import { scrape } from '../../broker/metrics/testing/scrape';
import { createTieredTopic, removeRemoteDirs, tieredConfig, waitUntilTiered } from './helpers';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { disconnectAll } from '../helpers/kafkajs';
import { waitFor } from '../replication/helpers';

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'warn', metricsPort: 0, config: tieredConfig() });
});

afterAll(async () => {
  await broker?.close();
  removeRemoteDirs();
});

test('copy, fetch, lag and size metrics of a tiered topic', async () => {
  const topic = 'tiered-metrics';
  await createTieredTopic(broker, topic);
  const kafka = new Kafka({ clientId: 'tiered-metrics', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  for (let i = 0; i < 200; i += 10) await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition: 0, value: `m${i + j}-${'q'.repeat(80)}` })) });
  await disconnectAll(producer);
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  const remoteRoot = path.join(broker.server.config.originals().get('rsm.config.dir')!, 'kafka-tiered-storage');
  const dir = path.join(remoteRoot, fs.readdirSync(remoteRoot).find((d) => d.startsWith(`${topic}-0-`))!);
  const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log'));
  const remoteBytes = logs.reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);

  const [host, port] = broker.bootstrapServers[0].split(':');
  const conn = await connect(host, Number(port));
  let read: Awaited<ReturnType<typeof fetchAll>>;
  try {
    read = await fetchAll(conn, topic, 0, 0n, { untilOffset: log.localLogStartOffset });
  } finally {
    await conn.close();
  }
  expect(read.records.length).toBe(Number(log.localLogStartOffset));

  const labels = { topic };
  const s = await waitFor('the expiration pass has counted the remote segments', async () => {
    const m = await scrape(broker.metricsAddress!);
    return m.value('kafka_server_brokertopicmetrics_remotelogmetadatacount', labels) === logs.length ? m : null;
  }, 10_000, 100);
  expect(s.value('kafka_server_brokertopicmetrics_remotecopybytes_total', labels)).toBe(remoteBytes);
  expect(s.value('kafka_server_brokertopicmetrics_remotecopyrequests_total', labels)).toBe(logs.length);
  expect(s.value('kafka_server_brokertopicmetrics_failedremotecopyrequests_total', labels)).toBe(0);
  expect(s.value('kafka_server_brokertopicmetrics_remotelogsizebytes', labels)).toBe(remoteBytes);
  expect(s.value('kafka_server_brokertopicmetrics_remotecopylagsegments', labels)).toBe(0);
  expect(s.value('kafka_server_brokertopicmetrics_remotefetchrequests_total', labels)).toBeGreaterThanOrEqual(read.fetches);
  expect(s.value('kafka_server_brokertopicmetrics_remotefetchbytes_total', labels)).toBeGreaterThan(0);
  expect(s.value('kafka_server_brokertopicmetrics_failedremotefetchrequests_total', labels)).toBe(0);
  // the all-topics series (no topic label) add up the topics
  expect(s.value('kafka_server_brokertopicmetrics_remotecopybytes_total')).toBeGreaterThanOrEqual(remoteBytes);
});
