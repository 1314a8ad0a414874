/**
 * Quota metrics over the wire: a client-id quota set with AlterClientQuotas, a producer that goes
 * over it (krill's own client, which reports the throttle times it was given); /metrics then shows
 * that client's byte rate and a mean throttle time that matches the throttle times the responses
 * carried, tagged as Kafka tags the sensor of a client-id quota (user ''). A client without a quota
 * has no series.
 */
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { connect, type BrokerConnection } from '../../client/network-client';
import { startBroker, type RunningBroker } from '../../broker';
import { scrape } from '../../broker/metrics/testing/scrape';

let broker: RunningBroker;
const conns: BrokerConnection[] = [];

beforeAll(async () => {
  // Thirty one-second samples: everything the test records stays in the window.
  broker = await startBroker({ metricsPort: 0, logLevel: 'warn', config: { 'quota.window.num': 30, 'quota.window.size.seconds': 1 } });
});

afterAll(async () => {
  for (const c of conns) await c.close();
  await broker?.close();
});

async function client(clientId: string): Promise<BrokerConnection> {
  const c = await connect(broker.host, broker.port, { clientId });
  conns.push(c);
  return c;
}

test('throttle-time and byte-rate of a quota\'d producer', async () => {
  const admin = await client('admin');
  const created = await admin.send('CreateTopics', undefined, { topics: [{ name: 'q', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 10_000 });
  expect(created.topics[0].errorCode).toBe(0);
  const altered = await admin.send('AlterClientQuotas', undefined, {
    entries: [{ entity: [{ entityType: 'client-id', entityName: 'slow' }], ops: [{ key: 'producer_byte_rate', value: 3_000, remove: false }] }],
    validateOnly: false,
  });
  expect(altered.entries[0].errorCode).toBe(0);
  const p = await client('slow');
  const throttles: number[] = [];
  // 30 kB, 60 kB, then 90 kB over the 29 s the rate is measured over while the window fills (Kafka's
  // Rate pads it to quota.window.num - 1 samples): the third goes over 3 kB/s and is throttled.
  for (let i = 0; i < 3; i++) {
    const res = await p.send('Produce', undefined, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 10_000,
      topicData: [{ name: 'q', partitionData: [{ index: 0, records: buildRecordBatch([{ value: Buffer.alloc(30_000, i) }]) }] }],
    });
    expect(res.responses[0].partitionResponses[0].errorCode).toBe(0);
    throttles.push(res.throttleTimeMs);
  }
  expect(throttles[0]).toBe(0);
  expect(throttles[2]).toBeGreaterThan(0);

  const s = await scrape(broker.metricsAddress!);
  const labels = { resource: 'Produce', user: '', clientId: 'slow' };
  const mean = throttles.reduce((a, b) => a + b, 0) / throttles.length;
  expect(s.value('kafka_server_quota_throttle_time', labels)).toBeCloseTo(mean, 5);
  const rate = s.value('kafka_server_quota_byte_rate', labels)!;
  expect(rate).toBeGreaterThan(90_000 / 30);
  expect(rate).toBeLessThan((90_000 * 1.01) / 29);
  expect(s.samples('kafka_server_quota_throttle_time', { clientId: 'admin' })).toHaveLength(0);
  expect(s.samples('kafka_server_quota_byte_rate', { resource: 'Fetch' })).toHaveLength(0);
});
