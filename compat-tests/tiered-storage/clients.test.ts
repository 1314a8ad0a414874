/**
 * Tiered storage (KIP-405) seen by more clients, on an embedded broker with LocalTieredStorage
 * (helpers.ts): topics of 2 KiB segments whose rolled segments are copied and then leave the disk.
 * - @platformatic/kafka (ESM only, so its consumer runs in a child process: ../platformatic/consume.mjs)
 *   reads a tiered topic from offset 0, every record at its offset, once its old segments are only
 *   in remote storage.
 * - read_committed across remote segments: a KafkaJS transactional producer writes committed and
 *   aborted transactions spread over many segments; once they are tiered (the aborted ones, their
 *   markers and the remote transaction indexes below the local log start), a read_committed KafkaJS
 *   consumer (readUncommitted: false, Fetch v11) and a node-rdkafka consumer with
 *   isolation.level=read_committed (Fetch v16) read from offset 0 exactly the committed records in
 *   order and none of the aborted ones, while a read_uncommitted consumer still sees both.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import { disconnectAll } from '../helpers/kafkajs';
import { runNodeScript } from '../helpers/node-script';
import { rdkafkaConsumeValues } from '../helpers/rdkafka';
import { waitFor } from '../replication/helpers';
import { createTieredTopic, removeRemoteDirs, startTieredBroker, waitUntilTiered } from './helpers';

jest.setTimeout(90_000);
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const SCRIPT = path.join(__dirname, '..', 'platformatic', 'consume.mjs');

let broker: RunningBroker;
let kafka: Kafka;
let tmp: string;

beforeAll(async () => {
  broker = await startTieredBroker({ 'transaction.state.log.num.partitions': 2, 'offsets.topic.num.partitions': 2 });
  kafka = new Kafka({ clientId: 'krill-tiered-clients', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 } });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-tiered-clients-'));
});

afterAll(async () => {
  await broker?.close();
  removeRemoteDirs();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The `.txnindex` / `.log` files LocalTieredStorage holds for the partition. */
function remoteFiles(topic: string, suffix: string): string[] {
  const root = path.join(broker.server.config.originals().get('rsm.config.dir')!, 'kafka-tiered-storage');
  const dir = fs.readdirSync(root).find((d) => d.startsWith(`${topic}-0-`));
  return dir ? fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith(suffix)) : [];
}

async function kafkajsRead(topic: string, expected: number, readUncommitted: boolean): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `g-${topic}-${readUncommitted}`, maxWaitTimeInMs: 200, readUncommitted });
  const got: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void got.push(message.value!.toString()) });
    await waitFor(`KafkaJS read ${expected} of ${topic}`, () => got.length >= expected, 30_000, 20);
  } finally {
    await disconnectAll(consumer);
  }
  return got;
}

test('@platformatic/kafka reads a tiered topic from offset 0 after its old segments left the disk', async () => {
  const topic = 'tiered-platformatic';
  await createTieredTopic(broker, topic);
  const value = (i: number): string => `pl-${String(i).padStart(5, '0')}-${'p'.repeat(70)}`;
  const n = 300;
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < n; i += 10) await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ partition: 0, value: value(i + j) })) });
  } finally {
    await disconnectAll(producer);
  }
  const log = broker.server.logManager.getLog(topic, 0)!;
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  // offset 0 is no longer on the disk: the first local segment starts well after it
  expect(log.logSegments()[0].baseOffset).toBe(log.localLogStartOffset);
  expect(log.localLogStartOffset).toBeGreaterThan(200n);
  expect(remoteFiles(topic, '.log').length).toBeGreaterThan(5);

  const out = path.join(tmp, 'platformatic.json');
  expect(await runNodeScript(SCRIPT, [broker.bootstrapServers[0], topic, 'g-platformatic-tiered', String(n), out, 'classic', 'none'], 60_000)).toBe(`ok ${n}\n`);
  const read = JSON.parse(fs.readFileSync(out, 'utf8')) as { offset: string; value: string }[];
  expect(read.map((r) => r.offset)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
  expect(read.map((r) => r.value)).toEqual(Array.from({ length: n }, (_, i) => value(i)));
});

test('read_committed across remote segments: KafkaJS and librdkafka see exactly the committed records, in order, none of the aborted ones', async () => {
  const topic = 'tiered-txn';
  await createTieredTopic(broker, topic);
  const producer = kafka.producer({ transactionalId: 'tiered-txn-producer', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  const committed: string[] = [];
  const all: string[] = [];
  const abortedOffsets: bigint[] = [];
  const TXNS = 40;
  try {
    for (let t = 0; t < TXNS; t++) {
      // every third transaction (t = 1, 4, 7, ...) aborts; the last one commits
      const abort = t % 3 === 1;
      const values = Array.from({ length: 5 }, (_, j) => `${abort ? 'aborted' : 'committed'}-${String(t).padStart(2, '0')}-${j}-${'t'.repeat(60)}`);
      const txn = await producer.transaction();
      const [meta] = await txn.send({ topic, messages: values.map((v) => ({ partition: 0, value: v })) });
      all.push(...values);
      if (abort) {
        await txn.abort();
        abortedOffsets.push(BigInt(meta.baseOffset!));
      } else {
        await txn.commit();
        committed.push(...values);
      }
    }
  } finally {
    await disconnectAll(producer);
  }
  const log = broker.server.logManager.getLog(topic, 0)!;
  // every transaction is decided: the last stable offset is the log end, so every rolled segment can be copied
  await waitFor('the last stable offset at the log end', () => log.lastStableOffset === log.logEndOffset, 10_000, 20);
  await waitUntilTiered(broker, topic, 0, log.activeSegment.baseOffset);
  // the transactions are spread over many segments, most aborted ones only in remote storage,
  // with the remote transaction indexes that list them
  expect(remoteFiles(topic, '.log').length).toBeGreaterThan(8);
  expect(abortedOffsets.filter((o) => o < log.localLogStartOffset).length).toBeGreaterThanOrEqual(8);
  expect(remoteFiles(topic, '.txnindex').length).toBeGreaterThanOrEqual(4);

  expect(await kafkajsRead(topic, committed.length, false)).toEqual(committed);
  // the aborted records are there for a read_uncommitted consumer
  expect(await kafkajsRead(topic, all.length, true)).toEqual(all);
  const rd = await rdkafkaConsumeValues(
    { 'metadata.broker.list': broker.bootstrapServers.join(','), 'group.id': `rd-${topic}`, 'isolation.level': 'read_committed' },
    topic,
    1,
    committed.length,
    40_000,
  );
  expect(rd).toEqual(committed);
});
