/**
 * @platformatic/kafka 1.x (ESM only, so it runs in a child `node` process: produce.mjs) produces
 * to krill with the Admin and Producer clients; krill's own client reads everything back and
 * compares it exactly (keys, values, headers, timestamps, order per partition). Then its Consumer
 * reads the same topic back through a consumer group (consume.mjs) and commits.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrokerConnection, connect, decodeRecordSet, fetchAll, type FetchedRecord } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { canonicalRead, line, type Canonical } from '../helpers/messages';
import { runNodeScript } from '../helpers/node-script';

const SCRIPT = path.join(__dirname, 'produce.mjs');
const RUN_TIMEOUT_MS = 30_000;

let broker: TestBroker;
let conn: BrokerConnection;
let tmp: string;

beforeAll(async () => {
  broker = await startTestBroker('embedded', { config: { 'auto.create.topics.enable': false } });
  conn = await connect(broker.host, broker.port);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-platformatic-'));
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const runScript = (args: string[], script = SCRIPT): Promise<string> => runNodeScript(script, args, RUN_TIMEOUT_MS);

test('platformatic Admin + Producer (acks -1, 1, 0, gzip): krill reads back every message exactly', async () => {
  const out = path.join(tmp, 'sent.json');
  expect(await runScript([broker.bootstrap, 'plat', out])).toBe('ok 2000\n');
  const { report, sent } = JSON.parse(fs.readFileSync(out, 'utf8')) as {
    report: { created: boolean; listed: boolean; partitions: number };
    sent: Canonical[];
  };
  expect(report).toMatchObject({ created: true, listed: true, partitions: 3 });

  const read: FetchedRecord[][] = [];
  for (let p = 0; p < 3; p++) read.push((await fetchAll(conn, 'plat', p)).records);
  expect(read.reduce((n, r) => n + r.length, 0)).toBe(sent.length);

  // Whatever partitioner the client used, a key lands in one partition, and each partition holds
  // exactly the messages sent to it, in send order.
  const partitionOfKey = new Map<string | null, number>();
  read.forEach((records, p) => records.forEach((r) => partitionOfKey.set(canonicalRead(r).key, p)));
  expect(read.every((r) => r.length > 0)).toBe(true);
  for (let p = 0; p < 3; p++) {
    const expected = sent.filter((m) => partitionOfKey.get(m.key) === p);
    expect(read[p].map((r) => line(canonicalRead(r)))).toEqual(expected.map(line));
    expect(read[p].map((r) => r.offset)).toEqual(read[p].map((_, i) => BigInt(i)));
  }
});

test('platformatic Consumer in a group reads every message back and commits', async () => {
  // Relies on the topic written by the test above (jest runs a file's tests in order).
  const out = path.join(tmp, 'read.json');
  expect(await runScript([broker.bootstrap, 'plat', 'plat-group', '2000', out], path.join(__dirname, 'consume.mjs'))).toBe('ok 2000\n');
  const read = JSON.parse(fs.readFileSync(out, 'utf8')) as { partition: number; offset: string; key: string | null }[];
  // Every (partition, offset) exactly once, offsets per partition 0..n-1 in order.
  for (let p = 0; p < 3; p++) {
    const offsets = read.filter((r) => r.partition === p).map((r) => BigInt(r.offset));
    expect(offsets).toEqual(offsets.map((_, i) => BigInt(i)));
    expect(offsets.length).toBe((await fetchAll(conn, 'plat', p)).records.length);
  }
  expect(new Set(read.map((r) => `${r.partition}:${r.offset}`)).size).toBe(2000);
  // The group committed through OffsetCommit: the next offset after the last message read is stored.
  const last = read[read.length - 1];
  const res = await conn.send('OffsetFetch', 7, {
    groupId: 'plat-group',
    topics: [{ name: 'plat', partitionIndexes: [last.partition] }],
    requireStable: false,
  });
  expect(res.errorCode).toBe(0);
  expect(res.topics[0].partitions[0].committedOffset).toBe(BigInt(last.offset) + 1n);
});

test('platformatic idempotent Producer: InitProducerId v5, then sequenced batches stored once each', async () => {
  await conn.send('CreateTopics', undefined, {
    topics: [{ name: 'plat-idem', numPartitions: 1, replicationFactor: 1 }],
    timeoutMs: 5000,
  });
  const out = JSON.parse(await runScript([broker.bootstrap, 'plat-idem', '500'], path.join(__dirname, 'idempotent.mjs'))) as {
    offsets: string[];
  };
  expect(out.offsets.length).toBeGreaterThan(0);
  const { records } = await fetchAll(conn, 'plat-idem', 0);
  expect(records.map((r) => r.value!.toString())).toEqual(Array.from({ length: 500 }, (_, i) => `v${i}`));
  expect(records.map((r) => r.offset)).toEqual(records.map((_, i) => BigInt(i)));
  // The batches carry a real producer id (not -1) and sequences from 0 upward.
  const fetched = await conn.send('Fetch', 11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionEpoch: -1,
    topics: [{ topic: 'plat-idem', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
  });
  const { batches } = decodeRecordSet(fetched.responses[0].partitions[0].records);
  expect(batches.length).toBeGreaterThan(0);
  expect(batches.every((b) => b.producerId >= 0n)).toBe(true);
  expect(batches[0].baseSequence).toBe(0);
});
