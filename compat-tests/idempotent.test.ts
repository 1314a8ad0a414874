/**
 * Idempotent producers against an embedded krill broker, with lost responses: a test-only
 * control rule (`closeAfterHandling`, docs/operations.md) lets the broker append a Produce and then close the
 * connection instead of answering, so the client retries a batch the log already holds. The
 * producer state must answer the retry with the original offsets: no duplicates, offsets contiguous.
 * - KafkaJS 2.2.4 `producer({ idempotent: true })` (KafkaJS requires maxInFlightRequests 1 for it);
 * - librdkafka (node-rdkafka) `enable.idempotence=true`.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startBroker, type RunningBroker } from '../broker';
import type { InterceptRule } from '../broker';
import { RecordBatch } from '../protocol/records/record-batch';
import { readRecords } from '../protocol/records/record';
import { recordsBuffer } from '../storage/log-segment';
import { decodeBatches } from '../storage/testing/batches';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', config: { 'num.partitions': 1 } });
});

afterAll(async () => {
  await broker?.close();
});

/**
 * While `fn` runs, the connection is closed after every `every`-th Produce was handled (appended),
 * instead of answering (the control API's 'closeAfterHandling'); returns what fn returned and how
 * many responses were lost.
 */
async function withLostProduceResponses<T>(every: number, fn: () => Promise<T>): Promise<{ result: T; dropped: number }> {
  let seen = 0;
  const rule: InterceptRule = broker.control.intercept({ api: 'Produce', when: () => ++seen % every === 0 }, 'closeAfterHandling');
  try {
    const result = await fn();
    return { result, dropped: rule.hits };
  } finally {
    rule.remove();
  }
}

/** Every record value in the partition's log, in offset order, and the batches' offsets. */
function logValues(topic: string): { values: string[]; offsets: bigint[] } {
  const log = broker.server.logManager.getLog(topic, 0)!;
  const buf = recordsBuffer(log.read(0n, 64 * 1024 * 1024, { isolation: 'LOG_END' }));
  const values: string[] = [];
  const offsets: bigint[] = [];
  for (const b of decodeBatches(buf)) {
    for (const r of readRecords(new RecordBatch(buf, b.position))) {
      values.push(r.value ? r.value.toString() : '');
      offsets.push(b.baseOffset + BigInt(r.offsetDelta));
    }
  }
  return { values, offsets };
}

test('KafkaJS idempotent producer: retries after lost responses leave no duplicates, offsets contiguous', async () => {
  const topic = 'idem-kafkajs';
  const kafka = new Kafka({
    clientId: 'idem',
    brokers: broker.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 5_000,
    retry: { retries: 10, initialRetryTime: 50, maxRetryTime: 500 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const count = 40;
  const { result: results, dropped } = await withLostProduceResponses(3, async () => {
    const out = [];
    for (let i = 0; i < count; i += 2) {
      out.push(
        await producer.send({ topic, acks: -1, messages: [{ key: `k${i}`, value: `v${i}`, partition: 0 }, { key: `k${i + 1}`, value: `v${i + 1}`, partition: 0 }] }),
      );
    }
    return out;
  });
  await producer.disconnect();
  expect(dropped).toBeGreaterThan(3);
  // Each send got the offsets its batch really has (the retry was answered with the original ones).
  expect(results.map((r) => r[0].baseOffset)).toEqual(Array.from({ length: count / 2 }, (_, i) => String(i * 2)));
  const { values, offsets } = logValues(topic);
  expect(values).toEqual(Array.from({ length: count }, (_, i) => `v${i}`));
  expect(offsets).toEqual(Array.from({ length: count }, (_, i) => BigInt(i)));
}, 60_000);

test('librdkafka enable.idempotence=true: retries after lost responses leave no duplicates, offsets contiguous', async () => {
  const topic = 'idem-rdkafka';
  const count = 200;
  const { result: delivered, dropped } = await withLostProduceResponses(
    4,
    () =>
      new Promise<{ offset: number; value: string }[]>((resolve, reject) => {
        const producer = new RdKafka.Producer({
          'metadata.broker.list': broker.bootstrapServers.join(','),
          'client.id': 'rdkafka-idem',
          dr_cb: true,
          'enable.idempotence': true,
          'linger.ms': 2,
          'batch.num.messages': 10,
          'allow.auto.create.topics': true,
          'retry.backoff.ms': 50,
        });
        const out: { offset: number; value: string }[] = [];
        const timer = setTimeout(() => {
          producer.disconnect();
          reject(new Error(`timed out with ${out.length}/${count} delivered`));
        }, 45_000);
        producer.on('delivery-report', (err: Error | null, report: any) => {
          if (err) {
            clearTimeout(timer);
            producer.disconnect();
            reject(err);
            return;
          }
          out.push({ offset: report.offset, value: String(report.value) });
          if (out.length === count) {
            clearTimeout(timer);
            producer.disconnect(() => resolve(out));
          }
        });
        producer.setPollInterval(5);
        producer.on('ready', () => {
          let i = 0;
          // Paced, so that the batches (and the dropped responses) spread over many requests.
          const next = () => {
            for (let k = 0; k < 10 && i < count; k++, i++) producer.produce(topic, 0, Buffer.from(`v${i}`), `k${i}`);
            if (i < count) setTimeout(next, 10);
          };
          next();
        });
        producer.connect();
      }),
  );
  expect(dropped).toBeGreaterThan(0);
  expect(delivered.map((d) => d.offset).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
  const { values, offsets } = logValues(topic);
  expect(values).toEqual(Array.from({ length: count }, (_, i) => `v${i}`));
  expect(offsets).toEqual(Array.from({ length: count }, (_, i) => BigInt(i)));
}, 60_000);
