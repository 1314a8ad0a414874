/**
 * The log cleaner's metrics on /metrics (broker/metrics/cleaner-metrics.ts), read with the real
 * Prometheus text parser and checked against what was written and cleaned: one pass over a
 * compacted partition whose cleaning was paused while it was written (so the pass covers all of
 * it): the recopy percentage is the bytes of the cleaned segments after over before the pass, the
 * buffer utilization the distinct keys over the offset map's slots (log.cleaner.dedupe.buffer.size
 * / 24), and a compacted topic that is never clean enough (min.cleanable.dirty.ratio=1) holds
 * max-dirty-percent at 100. Waits are the cleaner's checkpoint event and bounded polls.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { produce } from '../../client/network-client';
import { scrape, type Scrape } from '../../broker/metrics/testing/scrape';
import { adminConn, awaitCleaned, createCompactedTopic, logOf, writePads } from '../compaction/helpers';
import { waitFor } from '../replication/helpers';

let broker: RunningBroker;
const DEDUPE_BYTES = 1025 * 1024; // Kafka wants more than 1 MiB per cleaner thread
const SLOTS = Math.floor(DEDUPE_BYTES / 24); // entries of 24 bytes (16 of key hash, 8 of offset)

beforeAll(async () => {
  broker = await startBroker({
    logLevel: 'warn',
    metricsPort: 0,
    config: { 'auto.create.topics.enable': false, 'log.cleaner.backoff.ms': 20, 'log.cleaner.dedupe.buffer.size': DEDUPE_BYTES, 'log.cleaner.threads': 1 },
  });
});

afterAll(async () => {
  await broker?.close();
});

const metrics = (): Promise<Scrape> => scrape(broker.metricsAddress!);

/** Bytes of the segments below the active one. */
function inactiveBytes(topic: string): number {
  const log = logOf(broker, topic);
  const active = log.activeSegment;
  return log.logSegments().filter((s) => s !== active).reduce((n, s) => n + s.size, 0);
}

test('a cleaning pass shows in the recopy and buffer gauges; a never-clean-enough log holds max-dirty-percent at 100', async () => {
  const before = await metrics();
  expect(before.value('kafka_log_logcleaner_deadthreadcount')).toBe(0);
  expect(before.samples('kafka_log_logcleanermanager_uncleanable_partitions_count')).toEqual([]);
  expect(before.family('kafka_log_logcleanermanager_max_dirty_percent')).toBeDefined();

  const topic = 'cleaner-metrics';
  await createCompactedTopic(broker, topic);
  const cleaner = broker.server.logManager.cleaner!;
  cleaner.abortAndPauseCleaning({ topic, partition: 0 });
  const conn = await adminConn(broker);
  const keys = 1000;
  try {
    for (let round = 0; round < 3; round++) {
      for (let from = 0; from < keys; from += 50) {
        const records = Array.from({ length: 50 }, (_, i) => ({ key: `k${from + i}`, value: `r${round}:k${from + i}`.padEnd(40, '.') }));
        await produce(conn, topic, 0, records, { acks: -1 });
      }
    }
  } finally {
    await conn.close();
  }
  const pads = await writePads(broker, topic);
  const dirtyBytes = inactiveBytes(topic);
  cleaner.resumeCleaning([{ topic, partition: 0 }]);
  await awaitCleaned(broker, topic, pads[1].offset);
  const cleanBytes = inactiveBytes(topic);
  expect(cleanBytes).toBeLessThan(dirtyBytes);

  const after = await metrics();
  // The pass read every byte of the paused partition's inactive segments and wrote what survived.
  expect(after.value('kafka_log_logcleaner_cleaner_recopy_percent')).toBe(Math.trunc((100 * cleanBytes) / dirtyBytes));
  // Its offset map held the 1,000 keys and the first pad's key (the second pad is in the active segment).
  expect(after.value('kafka_log_logcleaner_max_buffer_utilization_percent')).toBe(Math.trunc((100 * (keys + 1)) / SLOTS));
  expect(after.value('kafka_log_logcleaner_max_clean_time_secs')).toBeGreaterThanOrEqual(0);
  expect(after.value('kafka_log_logcleaner_max_compaction_delay_secs')).toBe(0);
  expect(after.value('kafka_log_logcleaner_deadthreadcount')).toBe(0);
  const sinceRun = after.value('kafka_log_logcleanermanager_time_since_last_run_ms');
  expect(sinceRun).toBeGreaterThanOrEqual(0);
  expect(sinceRun).toBeLessThan(30_000);

  // A log whose dirty ratio can never exceed min.cleanable.dirty.ratio=1 is never cleaned, and it
  // is the dirtiest at every decision: all of its inactive bytes are dirty.
  const never = 'never-clean-enough';
  await createCompactedTopic(broker, never, { 'min.cleanable.dirty.ratio': '1' });
  await writePads(broker, never);
  await waitFor('max-dirty-percent 100', async () => (await metrics()).value('kafka_log_logcleanermanager_max_dirty_percent') === 100);
  expect(cleaner.cleanerManager.checkpointedOffset({ topic: never, partition: 0 })).toBeUndefined();
});
