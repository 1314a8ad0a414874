/**
 * apache/kafka#19462 / KAFKA-17184 (../shared/seeds/002_032a61dbfb1aa57d.txt): in Kafka's
 * RemoteIndexCache, a reader holding a cached index entry got an IllegalStateException when the
 * deleter (remote retention) or the cache's eviction marked that entry for cleanup at the same
 * time, so a consumer's fetch of remote data failed. The deterministic reproduction is
 * storage/remote/remote-index-cache.seed.test.ts (a reader suspended inside its lookup while the
 * segment is removed or evicted); this test drives the same race over the wire on a real broker:
 * an index cache of one byte (every entry is evicted as soon as the next one loads), file
 * deletion without delay, remote retention deleting segments under the readers (DeleteRecords
 * moving the log start offset forward every few milliseconds), and several consumers fetching
 * remote offsets concurrently. Every fetch must be answered with the right records or, once the
 * offset is gone, OFFSET_OUT_OF_RANGE; never another error.
 *
 * What makes the failure impossible, and which test shows it: a krill reader pins its entry in
 * the same synchronous step as it finds it, and its lookup then runs without an await, so over the
 * wire there is no point at which a deletion could come between finding an entry and reading it.
 * The only awaits with an entry pinned are inside the cache (a fetch, a reload from disk), which is
 * where the storage seed test suspends a reader; that test fails when deletion ignores the pins or
 * the delete delay (checked by switching the pin check off), while this one checks the whole
 * broker path under load.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect, decodeRecordSet, type BrokerConnection } from '../../client/network-client';
import { waitFor } from '../replication/helpers';
import type { RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { readRecords } from '../../protocol/records/record';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { disconnectAll } from '../helpers/kafkajs';
import { createTieredTopic, removeRemoteDirs, startTieredBroker, waitUntilTiered } from '../tiered-storage/helpers';

jest.setTimeout(60_000);
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const TOPIC = 'seed-19462';
const value = (i: number): string => `r${String(i).padStart(6, '0')}-${'y'.repeat(60)}`;

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startTieredBroker({ 'remote.log.index.file.cache.total.size.bytes': 1, 'log.segment.delete.delay.ms': 0 });
});

afterAll(async () => {
  await broker?.close();
  removeRemoteDirs();
});

async function fetchAt(conn: BrokerConnection, topicId: string, offset: bigint): Promise<{ errorCode: number; firstOffset?: bigint; values: string[] }> {
  const res = await conn.send('Fetch', 13, {
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 64 * 1024,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: TOPIC, topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 4096 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
  const p = res.responses[0].partitions[0];
  if (p.errorCode !== ErrorCode.NONE) return { errorCode: p.errorCode, values: [] };
  const values: string[] = [];
  let firstOffset: bigint | undefined;
  for (const b of decodeRecordSet(p.records).batches) {
    for (const r of readRecords(b)) {
      if (r.offset < offset) continue;
      firstOffset ??= r.offset;
      values.push(`${r.offset}:${r.value?.toString()}`);
    }
  }
  return { errorCode: p.errorCode, firstOffset, values };
}

test('KAFKA-17184: remote reads racing index-cache eviction and remote retention never fail', async () => {
  await createTieredTopic(broker, TOPIC);
  const kafka = new Kafka({ clientId: 'seed-19462', brokers: broker.bootstrapServers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  const n = 800;
  for (let i = 0; i < n; i += 8) await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 8 }, (_, j) => ({ partition: 0, value: value(i + j) })) });
  await disconnectAll(producer);
  const log = broker.server.logManager.getLog(TOPIC, 0)!;
  await waitUntilTiered(broker, TOPIC, 0, log.activeSegment.baseOffset);
  const remoteEnd = log.localLogStartOffset;
  expect(remoteEnd).toBeGreaterThan(400n);
  const topicId = broker.server.metadata.topic(TOPIC)!.topicId;
  const [host, port] = broker.bootstrapServers[0].split(':');

  const errors: string[] = [];
  let served = 0;
  let outOfRange = 0;
  let done = false;
  // readers: random remote offsets at or above the current log start
  const reader = async (seed: number): Promise<void> => {
    const conn = await connect(host, Number(port), { clientId: `reader-${seed}` });
    let x = seed;
    try {
      while (!done) {
        x = (x * 1103515245 + 12345) % 2147483648;
        const start = log.logStartOffset;
        if (start >= remoteEnd) break;
        const offset = start + BigInt(x % Number(remoteEnd - start));
        const r = await fetchAt(conn, topicId, offset);
        if (r.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
          outOfRange++;
          continue;
        }
        if (r.errorCode !== ErrorCode.NONE) {
          errors.push(`offset ${offset}: error ${r.errorCode}`);
          continue;
        }
        if (r.values.length === 0) continue; // nothing arrived within this fetch (allowed)
        served++;
        if (r.firstOffset !== offset) errors.push(`offset ${offset}: first record ${r.firstOffset}`);
        for (const v of r.values) {
          const [o, val] = v.split(':');
          if (val !== value(Number(o))) errors.push(`offset ${o}: wrong value`);
        }
      }
    } finally {
      await conn.close();
    }
  };
  // the deleter: the log start moves forward, remote retention deletes the segments below it
  const deleter = async (): Promise<void> => {
    const conn = await connect(host, Number(port), { clientId: 'deleter' });
    try {
      for (let target = 20n; target < remoteEnd; target += 20n) {
        const res = await conn.send('DeleteRecords', 2, { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: target }] }], timeoutMs: 5000 });
        expect(res.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE);
        await new Promise((r) => setTimeout(r, 15));
      }
    } finally {
      await conn.close();
      done = true;
    }
  };
  await Promise.all([deleter(), reader(1), reader(2), reader(3), reader(4)]);
  expect(errors).toEqual([]);
  expect(served).toBeGreaterThan(20);
  // the deleter went all the way: every remote offset was deleted while the readers ran
  expect(log.logStartOffset).toBeGreaterThanOrEqual(remoteEnd - 20n);
  // the deleted segments left the remote store, and the evicted and deleted index files the disk
  const remoteRoot = path.join(broker.server.config.originals().get('rsm.config.dir')!, 'kafka-tiered-storage');
  const partitionDir = path.join(remoteRoot, fs.readdirSync(remoteRoot).find((d) => d.startsWith(`${TOPIC}-0-`))!);
  await waitFor('remote segments below the log start deleted', () => fs.readdirSync(partitionDir).filter((f) => f.endsWith('.log')).length <= 2, 20_000, 50);
  const cacheDir = path.join(broker.server.config.logDirs()[0], 'remote-log-index-cache');
  await waitFor('no deleted index file left', () => !fs.readdirSync(cacheDir).some((f) => f.endsWith('.deleted')), 20_000, 50);
});
