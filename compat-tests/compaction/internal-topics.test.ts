/**
 * The internal topics are compacted by the broker's own cleaner (issue 13): __consumer_offsets and
 * __transaction_state are created with cleanup.policy=compact (as Kafka creates them), KafkaJS
 * commits offsets many times over and runs many transactions, the cleaner shrinks both logs to
 * about their live keys, and after a restart the broker's coordinators load the cleaned logs
 * (gaps and all) with the latest committed offsets and a transactional producer goes on.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigResourceTypes, Kafka, logLevel, Partitioners } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { waitFor } from '../replication/helpers';
import { adminConn, createCompactedTopic, logOf } from './helpers';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let dataDir: string;
let broker: RunningBroker | undefined;

const CONFIG = {
  'auto.create.topics.enable': false,
  'group.initial.rebalance.delay.ms': 0,
  'offsets.topic.num.partitions': 1,
  'offsets.topic.segment.bytes': 8192,
  'transaction.state.log.num.partitions': 1,
  'transaction.state.log.segment.bytes': 8192,
  'log.cleaner.backoff.ms': 20,
  'log.cleaner.min.cleanable.ratio': 0.01,
  'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024,
};

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-compaction-internal-'));
});

afterAll(async () => {
  await broker?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = async () => (broker = await startBroker({ logLevel: 'warn', dataDir, config: CONFIG }));

function kafkaFor(b: RunningBroker): Kafka {
  return new Kafka({ clientId: 'krill-internal-compaction', brokers: b.bootstrapServers, logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1_000 } });
}

/** Waits until the cleaner has cleaned the log below its active segment (which it never cleans). */
async function cleanedBelowActive(b: RunningBroker, topic: string): Promise<void> {
  const log = logOf(b, topic);
  const target = log.activeSegment.baseOffset;
  expect(target).toBeGreaterThan(0n);
  expect(await b.server.logManager.cleaner!.awaitCleaned({ topic, partition: 0 }, target, 30_000)).toBe(true);
}

test('__consumer_offsets and __transaction_state are compacted, and load back after a restart', async () => {
  const b = await start();
  await createCompactedTopic(b, 'orders', { 'cleanup.policy': 'delete' });
  const kafka = kafkaFor(b);
  const admin = kafka.admin();
  await admin.connect();
  // 300 commits of the same partition (as a simple consumer commits: no generation, no member).
  const conn = await adminConn(b);
  await waitFor('the group coordinator', async () => (await conn.send('FindCoordinator', 0, { key: 'g' })).errorCode === 0);
  for (let i = 1; i <= 300; i++) {
    const commit = await conn.send('OffsetCommit', undefined, {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: BigInt(i), committedLeaderEpoch: -1, committedMetadata: '' }] }],
    });
    expect(commit.topics[0].partitions[0].errorCode).toBe(0);
  }
  await conn.close();
  // 60 transactions of one transactional id: 4 records each in __transaction_state.
  const producer = kafka.producer({ transactionalId: 'tx', idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  for (let i = 0; i < 60; i++) {
    const t = await producer.transaction();
    await t.send({ topic: 'orders', messages: [{ key: 'k', value: `v${i}` }] });
    await t.commit();
  }
  await producer.disconnect();

  // Both internal topics exist with cleanup.policy=compact, as Kafka creates them.
  for (const topic of ['__consumer_offsets', '__transaction_state']) {
    const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['cleanup.policy'] }] });
    expect({ topic, policy: resources[0].configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue }).toEqual({ topic, policy: 'compact' });
  }

  // What is below the active segments gets cleaned.
  await cleanedBelowActive(b, '__consumer_offsets');
  await cleanedBelowActive(b, '__transaction_state');
  const sizes = (topic: string) => logOf(b, topic).logSegments().reduce((n, s) => n + s.size, 0);
  const offsetsBytes = sizes('__consumer_offsets');
  expect(logOf(b, '__consumer_offsets').logEndOffset).toBe(300n);
  // 300 commit records of ~100 bytes each were written; the cleaned log holds a few segments' worth at most.
  expect(offsetsBytes).toBeLessThan(3 * 8192);
  await admin.disconnect();

  await b.close();
  broker = undefined;
  const b2 = await start();
  const kafka2 = kafkaFor(b2);
  const admin2 = kafka2.admin();
  await admin2.connect();
  const fetched = await waitFor('the offsets of g after the restart', async () => {
    const r = await admin2.fetchOffsets({ groupId: 'g', topics: ['orders'] });
    return r[0]?.partitions[0]?.offset === '300' ? r : undefined;
  });
  expect(fetched[0].partitions.map((p) => p.offset)).toEqual(['300']);
  await admin2.disconnect();
  // The transactional id's state came back from the cleaned log: the producer is fenced forward
  // (a new epoch) and commits again.
  const producer2 = kafka2.producer({ transactionalId: 'tx', idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await producer2.connect();
  const t = await producer2.transaction();
  await t.send({ topic: 'orders', messages: [{ key: 'k', value: 'after-restart' }] });
  await t.commit();
  await producer2.disconnect();
  await waitFor('tx CompleteCommit', () => b2.server.transactionCoordinator.handleDescribeTransaction('tx').transactionState === 'CompleteCommit');
}, 120_000);
