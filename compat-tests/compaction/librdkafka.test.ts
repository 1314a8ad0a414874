/**
 * Log compaction seen by librdkafka (node-rdkafka) (issue 13): a producer with acks=all and its
 * own batching (lz4) writes keyed updates and tombstones to a compacted topic; once the cleaner
 * has cleaned everything below the active segment, a consumer with a manual assignment reads back
 * exactly the latest record per key at the offset its delivery report gave it, tombstones
 * included (delete.retention.ms is a day), across the gaps the cleaner left.
 */
import type { RunningBroker } from '../../broker';
import { rdkafkaConsume, rdkafkaProduce } from '../helpers/rdkafka';
import { createCompactedTopic, padAndClean, startCompactionBroker, updates, viewAfter, type Written } from './helpers';

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startCompactionBroker();
});

afterAll(async () => {
  await broker?.close();
});

test('librdkafka: keyed updates and tombstones read back as the latest record per key at its original offset', async () => {
  const topic = 'cmp-rdkafka';
  await createCompactedTopic(broker, topic);
  const msgs = updates('rd', 80, 6);
  const brokers = broker.bootstrapServers.join(',');
  const delivered = await rdkafkaProduce({ 'metadata.broker.list': brokers, 'client.id': 'rd-compaction', acks: -1, 'compression.codec': 'lz4', 'linger.ms': 2, 'batch.size': 2048 }, topic, msgs.length, (i) => ({
    partition: 0,
    key: msgs[i].key,
    value: msgs[i].value === null ? null : Buffer.from(msgs[i].value!),
  }));
  const offsetOf = new Map<string, bigint[]>();
  for (const d of delivered) offsetOf.set(d.key, [...(offsetOf.get(d.key) ?? []), BigInt(d.offset)]);
  // librdkafka reports deliveries in order per partition: the n-th report of a key is its n-th write.
  const seenOf = new Map<string, number>();
  const written: Written[] = msgs.map((m) => {
    const n = seenOf.get(m.key) ?? 0;
    seenOf.set(m.key, n + 1);
    return { key: m.key, value: m.value, offset: offsetOf.get(m.key)![n] };
  });
  const pads = await padAndClean(broker, topic);
  written.push(...pads);
  const want = viewAfter(written, pads);
  expect(want.length).toBe(80 + 2);
  const read = await rdkafkaConsume({ 'group.id': 'rd-compaction-reader', 'metadata.broker.list': brokers, 'enable.partition.eof': false }, topic, 1, want.length);
  expect(read.map((m) => ({ key: String(m.key), value: m.value === null ? null : m.value.toString(), offset: BigInt(m.offset) }))).toEqual(want);
  expect(read.filter((m) => m.value === null).length).toBe(want.filter((w) => w.value === null).length);
  expect(want.some((w) => w.value === null)).toBe(true);
});
