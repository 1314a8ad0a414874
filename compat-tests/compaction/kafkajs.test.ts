/**
 * Log compaction seen by KafkaJS 2.2.4 (issue 13), on an embedded broker whose cleaner backs off
 * 20 ms and topics with 4 KiB segments: keyed updates and tombstones read back as exactly the
 * latest record per key at its original offset; tombstones expire after delete.retention.ms
 * (kept by the pass that first sees them, removed by a later one); transactions on a compacted
 * topic (aborted data gone at once, committed data kept, markers removed only once their
 * transaction has no data left and their horizon has passed); compact,delete (retention and
 * compaction both). Keyless records are refused on a compacted topic (INVALID_RECORD). Every wait
 * is bounded: the cleaner's checkpoint (an event) or a bounded poll.
 */
import type { Kafka, Producer } from 'kafkajs';
import type { RunningBroker } from '../../broker';
import { fetchAll } from '../../client/network-client';
import { ControlRecordType } from '../../protocol/records/control-record';
import { ErrorCode } from '../../protocol/errors';
import { ConfigResourceType } from '../../metadata/metadata-records';

/** IncrementalAlterConfigs' DELETE operation. */
const DELETE = 1;
import { disconnectAll } from '../helpers/kafkajs';
import { scanLog, type ScannedBatch } from '../helpers/transactions';
import { waitFor } from '../replication/helpers';
import { adminConn, byOffset, createCompactedTopic, logOf, padAndClean, startCompactionBroker, updates, viewAfter, writePads, type Written } from './helpers';
import { Kafka as KafkaJs, logLevel, Partitioners } from 'kafkajs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let broker: RunningBroker;
let kafka: Kafka;
let producer: Producer;

beforeAll(async () => {
  broker = await startCompactionBroker();
  kafka = new KafkaJs({
    clientId: 'krill-compaction',
    brokers: broker.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
});

afterAll(async () => {
  await disconnectAll(producer);
  await broker?.close();
});

/** Sends `msgs` in sends of `per` messages (one batch each); returns them with their offsets. */
async function send(topic: string, msgs: readonly { key: string; value: string | null; timestamp?: number }[], per = 10): Promise<Written[]> {
  const out: Written[] = [];
  for (let i = 0; i < msgs.length; i += per) {
    const chunk = msgs.slice(i, i + per);
    const [meta] = await producer.send({
      topic,
      acks: -1,
      messages: chunk.map((m) => ({ key: m.key, value: m.value, partition: 0, timestamp: m.timestamp === undefined ? undefined : String(m.timestamp) })),
    });
    chunk.forEach((m, j) => out.push({ key: m.key, value: m.value, offset: BigInt(meta.baseOffset!) + BigInt(j) }));
  }
  return out;
}

/** What a KafkaJS consumer (a fresh group, from the beginning) reads: `count` records. */
async function readWithKafkaJs(topic: string, count: number, readUncommitted = false): Promise<Written[]> {
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${readUncommitted}-${Date.now()}`, readUncommitted, maxWaitTimeInMs: 100 });
  const got: Written[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        got.push({ key: message.key!.toString(), value: message.value === null ? null : message.value.toString(), offset: BigInt(message.offset) });
      },
    });
    await waitFor(`${count} records of ${topic} through KafkaJS (have ${got.length})`, () => got.length >= count, 30_000);
  } finally {
    await consumer.disconnect();
  }
  return got;
}

/** What krill's own client fetches from the log start (every batch, gaps and all). */
async function readWithKrill(topic: string): Promise<Written[]> {
  const conn = await adminConn(broker);
  try {
    const { records } = await fetchAll(conn, topic, 0, logOf(broker, topic).logStartOffset);
    return records.map((r) => ({ key: r.key!.toString(), value: r.value === null ? null : r.value.toString(), offset: r.offset }));
  } finally {
    await conn.close();
  }
}

test('keyed updates and tombstones: a KafkaJS consumer reads exactly the latest record per key, at its original offset', async () => {
  const topic = 'cmp-kafkajs';
  await createCompactedTopic(broker, topic);
  const written = await send(topic, updates('kj', 60, 8));
  const pads = await padAndClean(broker, topic);
  written.push(...pads);
  const want = viewAfter(written, pads);
  // The log shrank to one record per key (and the two pads: the second is in the active segment,
  // never cleaned), with gaps where the older updates were.
  expect(want.length).toBe(60 + 2);
  const read = await readWithKafkaJs(topic, want.length);
  expect(read).toEqual(want);
  expect(await readWithKrill(topic)).toEqual(want);
  // Tombstones are kept by the pass that first sees them (delete.retention.ms is a day here).
  expect(read.filter((r) => r.value === null).map((r) => r.key)).toEqual(want.filter((w) => w.value === null).map((w) => w.key));
  expect(read.some((r) => r.value === null)).toBe(true);
  // Later updates of a cleaned log are cleaned again: the new latest replaces the old one.
  const more = await send(topic, updates('kj', 60, 1).slice(0, 20).map((m) => ({ ...m, value: `again:${m.key}` })));
  const pads2 = await padAndClean(broker, topic);
  const want2 = viewAfter([...written, ...more, ...pads2], pads2);
  expect(await readWithKafkaJs(topic, want2.length)).toEqual(want2);
});

test('a keyless record is refused on a compacted topic (INVALID_RECORD), as Kafka refuses it', async () => {
  const topic = 'cmp-keyless';
  await createCompactedTopic(broker, topic);
  await expect(producer.send({ topic, acks: -1, messages: [{ value: 'no key', partition: 0 }] })).rejects.toMatchObject({ type: 'INVALID_RECORD' });
  expect(logOf(broker, topic).logEndOffset).toBe(0n);
});

test('tombstones expire: kept by the first pass, gone from a pass after delete.retention.ms', async () => {
  const topic = 'cmp-tombstones';
  await createCompactedTopic(broker, topic, { 'delete.retention.ms': '1500' });
  const written = await send(topic, [...updates('ts', 20, 2).map((m) => ({ ...m, value: m.value ?? 'x' })), ...['ts-k1', 'ts-k4', 'ts-k9'].map((key) => ({ key, value: null }))]);
  let pads = await padAndClean(broker, topic);
  written.push(...pads);
  const want = viewAfter(written, pads);
  expect(want.filter((w) => w.value === null).map((w) => w.key)).toEqual(['ts-k1', 'ts-k4', 'ts-k9']);
  // Right after the pass that first saw them (well within 1.5 s): still there, as Kafka keeps them.
  const seen = await readWithKrill(topic);
  expect(seen.filter((r) => r.value === null).map((r) => r.key)).toEqual(['ts-k1', 'ts-k4', 'ts-k9']);
  // Passes after the horizon remove them (each needs dirty data: more pads, bounded).
  let after: Written[] = [];
  await waitFor(
    'the tombstones to be removed',
    async () => {
      pads = await padAndClean(broker, topic);
      written.push(...pads);
      after = await readWithKrill(topic);
      return after.every((r) => r.value !== null);
    },
    30_000,
    200,
  );
  const expected = viewAfter(written, pads).filter((w) => w.value !== null);
  expect(after).toEqual(expected);
  expect(await readWithKafkaJs(topic, expected.length)).toEqual(expected);
});

/** Markers of the partition's log by offset. */
function markers(batches: readonly ScannedBatch[]): Map<bigint, ControlRecordType | undefined> {
  return new Map(batches.filter((b) => b.isControl && b.control !== undefined).map((b) => [b.baseOffset, b.control]));
}

test('transactions on a compacted topic: aborted data gone, committed data kept, markers removed only once their transaction has no data left', async () => {
  const topic = 'cmp-txn';
  await createCompactedTopic(broker, topic, { 'delete.retention.ms': '500' });
  const txp = kafka.producer({ transactionalId: 'cmp-txn-producer', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await txp.connect();
  const written: Written[] = [];
  const txnSend = async (values: { key: string; value: string }[], commit: boolean) => {
    const t = await txp.transaction();
    const [meta] = await t.send({ topic, messages: values.map((v) => ({ ...v, partition: 0 })) });
    if (commit) await t.commit();
    else await t.abort();
    return values.map((v, i) => ({ ...v, offset: BigInt(meta.baseOffset!) + BigInt(i) }));
  };
  try {
    const a = await txnSend(['t0', 't1', 't2', 't3', 't4'].map((key) => ({ key, value: `A:${key}` })), true);
    const b = await txnSend([...['t0', 't1', 't2', 't3', 't4'], 'x0', 'x1'].map((key) => ({ key, value: `B:${key}` })), false);
    const c = await txnSend([{ key: 'c', value: 'C:c' }], true);
    written.push(...a, ...c);
    // The markers: A's right after A's data, B's after B's, C's after C's.
    await waitFor('the three markers', () => markers(scanLog(broker, topic, 0)).size === 3);
    const ms = [...markers(scanLog(broker, topic, 0)).entries()];
    const [markerA, markerB, markerC] = ms.map(([o]) => o);
    expect(ms.map(([, t]) => t)).toEqual([ControlRecordType.COMMIT, ControlRecordType.ABORT, ControlRecordType.COMMIT]);
    expect(markerA > a[4].offset && markerA < b[0].offset && markerB > b[6].offset && markerB < c[0].offset && markerC > c[0].offset).toBe(true);

    let pads = await padAndClean(broker, topic);
    written.push(...pads);
    const want = viewAfter(written, pads);
    // read_committed and read_uncommitted alike: B's records are gone from the log itself.
    expect(await readWithKafkaJs(topic, want.length)).toEqual(want);
    expect(await readWithKafkaJs(topic, want.length, true)).toEqual(want);
    let log = scanLog(broker, topic, 0);
    expect(log.flatMap((x) => x.records).filter((r) => r.value?.startsWith('B:'))).toEqual([]);
    // A's data is there, so its COMMIT marker is; C's likewise.
    expect(markers(log).get(markerA)).toBe(ControlRecordType.COMMIT);
    expect(markers(log).get(markerC)).toBe(ControlRecordType.COMMIT);

    // Plain updates supersede A's keys: once A has no data left, its marker goes (after its
    // horizon, in a later pass); C's marker stays while C's record does.
    written.push(...(await send(topic, ['t0', 't1', 't2', 't3', 't4'].map((key) => ({ key, value: `plain:${key}` })))));
    await waitFor(
      "A's and B's markers to be removed",
      async () => {
        pads = await padAndClean(broker, topic);
        written.push(...pads);
        log = scanLog(broker, topic, 0);
        const m = markers(log);
        // Never a marker gone while data of its transaction remains.
        const aData = log.flatMap((x) => x.records).filter((r) => r.value?.startsWith('A:'));
        if (aData.length > 0) expect(m.get(markerA)).toBe(ControlRecordType.COMMIT);
        expect(m.get(markerC)).toBe(ControlRecordType.COMMIT);
        return !m.has(markerA) && !m.has(markerB);
      },
      30_000,
      200,
    );
    const want2 = viewAfter(written, pads);
    expect(await readWithKafkaJs(topic, want2.length)).toEqual(want2);
    expect(want2.find((w) => w.key === 'c')?.offset).toBe(c[0].offset);
  } finally {
    await txp.disconnect();
  }
}, 90_000);

test('compact,delete: segments past retention.ms go, and what remains is compacted', async () => {
  const topic = 'cmp-cd';
  // min.compaction.lag.ms keeps the cleaner off the hour-old data, so retention alone decides it. Were a
  // pass to empty a segment first, the empty cleaned segment would keep the modification time of the
  // segments it replaced (Kafka's Cleaner does the same) and time retention would wait for that.
  await createCompactedTopic(broker, topic, { 'cleanup.policy': 'compact,delete', 'retention.ms': String(30 * 60_000), 'min.compaction.lag.ms': String(2 * 3_600_000) });
  const old = Date.now() - 60 * 60_000;
  // An hour old: every segment of it is past retention once inactive.
  const oldWritten = await send(topic, updates('old', 30, 3).map((m) => ({ ...m, timestamp: old })));
  const oldPads = await writePads(broker, topic, old);
  // The cleaner's loop runs the retention of compacted logs: every old segment goes, the active
  // one too (rolled first), as Kafka's retention does.
  await waitFor('the old segments to be deleted', () => logOf(broker, topic).logStartOffset > oldPads[1].offset, 30_000).catch((err: Error) => {
    const log = logOf(broker, topic);
    const cleaner = broker.server.logManager.cleaner!;
    const segments = log.logSegments().map((g) => `${g.baseOffset}:${g.size}B:ts=${g.largestTimestamp()}`);
    throw new Error(
      `${err.message}; now=${Date.now()} logStart=${log.logStartOffset} hwm=${log.highWatermark} leo=${log.logEndOffset} segments=[${segments.join(' ')}] ` +
        `cleaning=${JSON.stringify(cleaner.cleanerManager.cleaningState({ topic, partition: 0 }) ?? null)} running=${cleaner.isRunning} dead=${cleaner.deadThreadCount} ` +
        `uncleanable=[${cleaner.cleanerManager.uncleanablePartitions(log.parentDir).join(',')}] checkpoint=${cleaner.cleanerManager.checkpointedOffset({ topic, partition: 0 })}`,
    );
  });
  // Fresh data is compacted at once.
  const conn = await adminConn(broker);
  try {
    const res = await conn.send('IncrementalAlterConfigs', 1, {
      resources: [{ resourceType: ConfigResourceType.TOPIC, resourceName: topic, configs: [{ name: 'min.compaction.lag.ms', configOperation: DELETE, value: null }] }],
      validateOnly: false,
    });
    expect(res.responses[0].errorCode).toBe(ErrorCode.NONE);
  } finally {
    await conn.close();
  }
  await waitFor('the topic config without the compaction lag', () => logOf(broker, topic).config.minCompactionLagMs === 0);
  const start = logOf(broker, topic).logStartOffset;
  expect(start).toBe(oldPads[1].offset + 1n);
  const fresh = await send(topic, updates('new', 20, 5));
  const pads = await padAndClean(broker, topic);
  const written = [...oldWritten, ...oldPads, ...fresh, ...pads];
  expect(logOf(broker, topic).logStartOffset).toBe(start);
  // What remains is compacted: the latest of each fresh key, and the two new pads.
  const want = viewAfter(written, pads, start);
  expect(want.length).toBe(20 + 2);
  expect(byOffset(await readWithKafkaJs(topic, want.length))).toEqual(want);
  expect(await readWithKrill(topic)).toEqual(want);
}, 60_000);
