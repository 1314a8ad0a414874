/**
 * Client telemetry (KIP-714) with real clients: @platformatic/kafka's Admin sets a client-metrics
 * subscription (CLIENT_METRICS resource, in a child process: ../platformatic/client-metrics.mjs)
 * and describes it; a librdkafka 2.12 producer (node-rdkafka, enable.metrics.push) that the
 * subscription matches asks for it (GetTelemetrySubscriptions) and pushes its metrics
 * (PushTelemetry) on its own schedule; the broker keeps the last push, decompressed, with the
 * client's id and software, and /metrics counts the instances it holds. ListClientMetricsResources
 * lists the subscription.
 */
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { connect } from '../../client/network-client';
import { lastJsonLine, runNodeScript } from '../helpers/node-script';
import { waitFor } from '../replication/helpers';
import { scrape } from '../../broker/metrics/testing/scrape';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

jest.setTimeout(60_000);

const CLIENT_ID = 'rdkafka-telemetry';
const SUBSCRIPTION = 'rdkafka-sub';

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logger: new Logger('krill', 'warn'), metricsPort: 0, config: { 'num.partitions': 1 } });
});

afterAll(async () => {
  await broker?.close();
});

test('a librdkafka producer matched by a subscription pushes its metrics; the broker keeps the last push', async () => {
  const bootstrap = broker.bootstrapServers[0];
  const admin = lastJsonLine(await runNodeScript(path.join(__dirname, '..', 'platformatic', 'client-metrics.mjs'), [bootstrap, SUBSCRIPTION, CLIENT_ID], 30_000));
  expect(admin.refused).toEqual({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid value 10 for interval.ms, interval must be between 100 and 3600000 (1 hour)' });
  const configs = admin.described[0].configs.map((c: { name: string; value: string }) => [c.name, c.value]).sort();
  expect(configs).toEqual([
    ['interval.ms', '500'],
    ['match', `client_id=${CLIENT_ID}`],
    ['metrics', 'org.apache.kafka.'],
  ]);

  const conn = await connect(broker.host, broker.port, { clientId: 'telemetry-lister' });
  try {
    const listed = await conn.send('ListClientMetricsResources', 0, {});
    expect(listed.clientMetricsResources.map((r) => r.name)).toEqual([SUBSCRIPTION]);
  } finally {
    await conn.close();
  }

  const producer = new RdKafka.Producer({ 'metadata.broker.list': bootstrap, 'client.id': CLIENT_ID, 'enable.metrics.push': true, dr_cb: true, 'allow.auto.create.topics': true });
  producer.setPollInterval(10);
  await new Promise<void>((resolve, reject) => {
    producer.once('ready', () => resolve());
    producer.once('event.error', reject);
    producer.connect();
  });
  try {
    producer.produce('telemetry-topic', null, Buffer.from('hello'), 'k');
    const push = await waitFor(
      'a telemetry push from librdkafka',
      () => broker.server.clientMetrics.lastPushes().find((p) => p.clientId === CLIENT_ID),
      30_000,
      50,
    );
    expect(push).toMatchObject({ clientId: CLIENT_ID, clientSoftwareName: 'librdkafka', clientSourceAddress: '127.0.0.1', terminating: false });
    expect(push.clientSoftwareVersion).toMatch(/^2\.12/);
    // This build has no zstd, so it takes the broker's next preference, lz4 (3).
    expect(push.compressionType).toBe(RdKafka.features.includes('zstd') ? 4 : 3);
    // The payload is the decompressed OTLP ExportMetricsServiceRequest: field 1 (resource_metrics),
    // length-delimited, naming the producer metrics the subscription asked for.
    expect(push.payload[0]).toBe(0x0a);
    expect(push.payload.toString('latin1')).toContain('org.apache.kafka.producer.');
    expect(broker.server.clientMetrics.lastPush(push.clientInstanceId)).toMatchObject({ subscriptionId: push.subscriptionId });
    // /metrics counts the client instances the broker holds (the producer's, at least).
    expect((await scrape(broker.metricsAddress!)).value('kafka_server_clientmetrics_instance_count')).toBe(broker.server.clientMetrics.instanceCount);
    expect(broker.server.clientMetrics.instanceCount).toBeGreaterThanOrEqual(1);
  } finally {
    await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
  }
});
