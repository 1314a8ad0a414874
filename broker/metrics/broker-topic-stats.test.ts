import { Registry } from 'prom-client';
import { BrokerTopicStats } from './broker-topic-stats';
import { registerTopicMetrics } from './topic-metrics';
import { Scrape } from './testing/scrape';

/** A v2 record batch header (61 bytes) with `count` records, padded to `size` bytes. */
function batch(count: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  b.writeInt8(2, 16);
  b.writeInt32BE(count, 57);
  return b;
}

test('produce and fetch counts per topic and for all topics, as Prometheus reads them', async () => {
  const stats = new BrokerTopicStats();
  stats.recordProduce('a', batch(10, 500), true);
  stats.recordProduce('a', batch(3, 200), true);
  stats.recordProduce('b', batch(1, 100), true);
  stats.recordProduce('b', batch(7, 300), false); // NOT_LEADER etc.: a failed produce, no bytes
  stats.recordFetch('a', 700, false, false);
  stats.recordFetch('b', 0, true, false);
  stats.recordFetch('a', 700, false, true); // a follower: replication bytes only
  const registry = new Registry();
  registerTopicMetrics(registry, stats);
  const s = new Scrape(await registry.metrics());
  expect(s.family('kafka_server_brokertopicmetrics_bytesin_total')?.type).toBe('COUNTER');
  expect(s.value('kafka_server_brokertopicmetrics_bytesin_total', { topic: 'a' })).toBe(700);
  expect(s.value('kafka_server_brokertopicmetrics_bytesin_total', { topic: 'b' })).toBe(100);
  expect(s.value('kafka_server_brokertopicmetrics_bytesin_total')).toBe(800);
  expect(s.value('kafka_server_brokertopicmetrics_messagesin_total', { topic: 'a' })).toBe(13);
  expect(s.value('kafka_server_brokertopicmetrics_messagesin_total')).toBe(14);
  expect(s.value('kafka_server_brokertopicmetrics_totalproducerequests_total')).toBe(4);
  expect(s.value('kafka_server_brokertopicmetrics_failedproducerequests_total', { topic: 'b' })).toBe(1);
  expect(s.value('kafka_server_brokertopicmetrics_bytesout_total', { topic: 'a' })).toBe(700);
  expect(s.value('kafka_server_brokertopicmetrics_totalfetchrequests_total')).toBe(2);
  expect(s.value('kafka_server_brokertopicmetrics_failedfetchrequests_total', { topic: 'b' })).toBe(1);
  expect(s.value('kafka_server_brokertopicmetrics_replicationbytesout_total')).toBe(700);

  // A deleted topic's series go; the all-topics counts keep what it contributed.
  stats.removeTopic('a');
  const after = new Scrape(await registry.metrics());
  expect(after.value('kafka_server_brokertopicmetrics_bytesin_total', { topic: 'a' })).toBeUndefined();
  expect(after.value('kafka_server_brokertopicmetrics_bytesin_total')).toBe(800);
});
