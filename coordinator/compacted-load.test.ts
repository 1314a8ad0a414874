/**
 * The coordinators on compacted internal topics (issue 13): a real __consumer_offsets /
 * __transaction_state log (UnifiedLog on disk) written as the coordinators write it, cleaned by
 * the log cleaner (Cleaner) in two passes (the first sets the tombstones' delete horizon, the
 * second removes them), then loaded by a fresh coordinator. The load must give the same state as
 * a load of the uncleaned log (offset gaps, emptied batches and removed tombstones and markers
 * included), and replay a number of records bounded by the live keys, not by the history.
 *
 * The group coordinator's history is COMMITS offset commits (default 100,000, built directly with
 * the storage helpers; KRILL_COORDINATOR_LOAD_COMMITS=1000000 for the issue's million, not part of
 * npm test). Its load time is logged before and after cleaning; the assertion is on the records
 * replayed (deterministic) and that the cleaned load is the faster one.
 */
import { ErrorCode } from '../protocol/errors';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { CompressionType } from '../protocol/records/record-batch';
import { Logger } from '../common/logger';
import { MockTime } from '../common/testing/mock-time';
import type { MetadataCache, MetadataDelta, PartitionState } from '../metadata/metadata-cache';
import type { Partition } from '../replication/partition';
import { SkimpyOffsetMap } from '../storage/cleaner/offset-map';
import { LogToClean } from '../storage/cleaner/log-cleaner-manager';
import { makeCleaner, makeLog } from '../storage/testing/compacted-logs';
import { removeTempDirs } from '../storage/testing/temp-dir';
import type { UnifiedLog } from '../storage/unified-log';
import { GroupCoordinator } from './group/group-coordinator';
import type { GroupCoordinatorConfig } from './group/group-coordinator-config';
import { groupMetadataTombstone, offsetCommitRecord, offsetCommitTombstone, type CoordinatorRecord } from './group/coordinator-records';
import { transactionLogKey, transactionLogValue } from './transaction/transaction-log';
import { TransactionStateManager } from './transaction/transaction-state-manager';
import { TransactionState } from './transaction/transaction-state';
import type { TransactionCoordinatorConfig } from './transaction/transaction-coordinator-config';

afterAll(removeTempDirs);

const COMMITS = Number(process.env.KRILL_COORDINATOR_LOAD_COMMITS ?? 100_000);
const GROUPS = 20;
const PARTITIONS_PER_GROUP = 10;

const GROUP_CONFIG: GroupCoordinatorConfig = {
  offsetsTopicNumPartitions: 1,
  minSessionTimeoutMs: 10,
  maxSessionTimeoutMs: 60_000,
  maxSize: 100,
  initialRebalanceDelayMs: 0,
  newMemberJoinTimeoutMs: 300_000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 7 * 24 * 3600_000,
  offsetsRetentionCheckIntervalMs: 3_600_000,
  offsetCommitTimeoutMs: 5000,
  compression: CompressionType.NONE,
  loadBufferSize: 5 * 1024 * 1024,
};

const partitionState = (topic: string): PartitionState => ({
  topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
  topic,
  partition: 0,
  replicas: [1],
  isr: [1],
  leader: 1,
  leaderEpoch: 0,
  partitionEpoch: 0,
  leaderRecoveryState: 0,
  addingReplicas: [],
  removingReplicas: [],
});

function metadataWith(topic: string): MetadataCache {
  const partitions = new Map([[0, partitionState(topic)]]);
  return { topic: (n: string) => (n === topic ? { partitions } : undefined) } as unknown as MetadataCache;
}

function append(log: UnifiedLog, records: CoordinatorRecord[], now: number): void {
  log.appendAsLeader(buildRecordBatch(records.map((r) => ({ key: r.key, value: r.value, timestamp: now })), { now }), { leaderEpoch: 0, origin: 'coordinator' });
}

/** Cleans everything below the active segment: one pass, then (the clock moved past delete.retention.ms = 0) another that removes the tombstones. */
async function cleanTwice(log: UnifiedLog, time: MockTime): Promise<void> {
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  for (let pass = 0; pass < 2; pass++) {
    const cleaner = makeCleaner(0, { offsetMap: new SkimpyOffsetMap(16 * 1024 * 1024), time });
    let from = 0n;
    // A pass may stop where the offset map filled up: go on until the whole dirty section is cleaned.
    while (from < log.activeSegment.baseOffset) [from] = await cleaner.clean(new LogToClean(log.topicPartition, log, from, log.activeSegment.baseOffset, false));
    time.sleep(1000);
  }
}

interface Loaded {
  ms: number;
  records: number;
  offsets: Map<string, bigint>;
}

async function loadGroups(log: UnifiedLog): Promise<Loaded> {
  const lines: string[] = [];
  const c = new GroupCoordinator({
    nodeId: 1,
    config: GROUP_CONFIG,
    logger: new Logger('test', 'info', (l) => lines.push(l)),
    replicaManager: { getPartition: () => ({ log }) as unknown as Partition, appendRecords: async () => [] },
    metadata: metadataWith('__consumer_offsets'),
    createOffsetsTopic: async () => ErrorCode.NONE,
  });
  c.startup();
  const t0 = performance.now();
  c.onMetadataDelta({ changedPartitions: [partitionState('__consumer_offsets')], removedTopics: [], changedTopicConfigs: new Set(), changedBrokers: new Set() } as MetadataDelta);
  const deadline = Date.now() + 120_000;
  while (c.groupStatus('g0') !== ErrorCode.NONE) {
    if (Date.now() > deadline) throw new Error('the __consumer_offsets load did not finish');
    await new Promise((r) => setImmediate(r));
  }
  const ms = performance.now() - t0;
  const offsets = new Map<string, bigint>();
  for (const g of [...Array.from({ length: GROUPS }, (_, i) => `g${i}`), 'gone']) {
    const res = await c.fetchOffsets(g, null, false);
    if (res.errorCode !== ErrorCode.NONE) throw new Error(`fetchOffsets ${g}: ${res.errorCode}`);
    for (const t of res.topics) for (const p of t.partitions) offsets.set(`${g}/${t.name}/${p.partitionIndex}`, p.committedOffset);
  }
  await c.shutdown();
  const line = lines.find((l) => l.includes('loaded __consumer_offsets-0'));
  const records = Number(/"records":(\d+)/.exec(line ?? '')?.[1] ?? NaN);
  return { ms, records, offsets };
}

test(`group coordinator: a load after ${COMMITS.toLocaleString('en-US')} offset commits replays about one record per live key once the log is cleaned`, async () => {
  const time = new MockTime(1_700_000_000_000);
  const { log } = makeLog({ segmentBytes: 8 * 1024 * 1024, deleteRetentionMs: 0, maxMessageBytes: 1024 * 1024 }, { time, tp: { topic: '__consumer_offsets', partition: 0 } });
  // Commits of GROUPS groups over PARTITIONS_PER_GROUP partitions each, in requests of up to 10
  // partitions (one batch each, as the coordinator appends them); a group 'gone' commits and is
  // then deleted (offset and group tombstones).
  let n = 0;
  let round = 0;
  while (n < COMMITS) {
    for (let g = 0; g < GROUPS && n < COMMITS; g++) {
      const recs: CoordinatorRecord[] = [];
      for (let p = 0; p < PARTITIONS_PER_GROUP && n < COMMITS; p++, n++) {
        recs.push(offsetCommitRecord(`g${g}`, 'orders', p, { committedOffset: BigInt(round * 100 + p), leaderEpoch: 0, metadata: '', commitTimestampMs: time.now, expireTimestampMs: null }));
      }
      append(log, recs, time.now);
    }
    if (round === 1) {
      append(log, [0, 1, 2].map((p) => offsetCommitRecord('gone', 'orders', p, { committedOffset: 5n, leaderEpoch: 0, metadata: '', commitTimestampMs: time.now, expireTimestampMs: null })), time.now);
      append(log, [...[0, 1, 2].map((p) => offsetCommitTombstone('gone', 'orders', p)), groupMetadataTombstone('gone')], time.now);
    }
    round++;
  }
  const before = await loadGroups(log);
  expect(before.records).toBeGreaterThanOrEqual(COMMITS);
  expect(before.offsets.size).toBe(GROUPS * PARTITIONS_PER_GROUP);
  expect([...before.offsets.keys()].some((k) => k.startsWith('gone/'))).toBe(false);

  await cleanTwice(log, time);
  const after = await loadGroups(log);
  // The same committed offsets, the deleted group still gone (its tombstones removed too).
  expect(after.offsets).toEqual(before.offsets);
  // Bounded by the live keys, whatever the history was.
  expect(after.records).toBe(GROUPS * PARTITIONS_PER_GROUP);
  expect(after.ms).toBeLessThan(before.ms);
  process.stderr.write(
    `coordinator load after ${COMMITS} commits: ${before.ms.toFixed(0)} ms for ${before.records} records; cleaned: ${after.ms.toFixed(0)} ms for ${after.records} records\n`,
  );
  log.closeHandlers();
}, 300_000);

const TXN_CONFIG: TransactionCoordinatorConfig = {
  transactionalIdExpirationMs: 7 * 24 * 3600_000,
  transactionMaxTimeoutMs: 900_000,
  transactionLogNumPartitions: 1,
  loadBufferSize: 5 * 1024 * 1024,
  abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
  requestTimeoutMs: 30_000,
  markerRetryBackoffMs: 100,
};

async function loadTxns(log: UnifiedLog, ids: string[]): Promise<{ records: number; states: Map<string, string> }> {
  const lines: string[] = [];
  const m = new TransactionStateManager({
    config: TXN_CONFIG,
    logger: new Logger('txn', 'info', (l) => lines.push(l)),
    replicaManager: { getPartition: () => ({ log }) as unknown as Partition, appendRecords: async () => [] },
    metadata: metadataWith('__transaction_state'),
  });
  m.startup();
  await m.loadPartition(0, 1);
  const states = new Map<string, string>();
  for (const id of ids) {
    const st = m.getTransactionState(id);
    expect(st.errorCode).toBe(ErrorCode.NONE);
    if (st.metadata) states.set(id, `${st.metadata.producerId}/${st.metadata.producerEpoch}/${TransactionState[st.metadata.state]}`);
  }
  await m.shutdown();
  const line = lines.find((l) => l.includes('loaded __transaction_state-0'));
  return { records: Number(/"records":(\d+)/.exec(line ?? '')?.[1] ?? NaN), states };
}

test('transaction coordinator: a cleaned __transaction_state (gaps, removed tombstones of expired ids) loads the same transactions from one record per live id', async () => {
  const time = new MockTime(1_700_000_000_000);
  const { log } = makeLog({ segmentBytes: 64 * 1024, deleteRetentionMs: 0 }, { time, tp: { topic: '__transaction_state', partition: 0 } });
  const ids = Array.from({ length: 30 }, (_, i) => `txn-${i}`);
  const write = (id: string, producerId: bigint, epoch: number, state: TransactionState) =>
    append(
      log,
      [
        {
          key: transactionLogKey(id),
          value: transactionLogValue({
            producerId,
            lastProducerId: -1n,
            producerEpoch: epoch,
            lastProducerEpoch: -1,
            txnTimeoutMs: 60_000,
            txnState: state,
            topicPartitions: state === TransactionState.Ongoing || state === TransactionState.PrepareCommit ? [{ topic: 'out', partition: 0 }] : [],
            txnStartTimestamp: time.now,
            txnLastUpdateTimestamp: time.now,
          }),
        },
      ],
      time.now,
    );
  // Each id goes through 40 transactions (Ongoing, PrepareCommit, CompleteCommit), its epoch bumped
  // every 10; ids 25..29 then expire (tombstones).
  for (let t = 0; t < 40; t++) {
    for (const [i, id] of ids.entries()) {
      const epoch = Math.floor(t / 10);
      write(id, BigInt(1000 + i), epoch, TransactionState.Ongoing);
      write(id, BigInt(1000 + i), epoch, TransactionState.PrepareCommit);
      write(id, BigInt(1000 + i), epoch, TransactionState.CompleteCommit);
    }
  }
  for (const id of ids.slice(25)) append(log, [{ key: transactionLogKey(id), value: null }], time.now);
  const before = await loadTxns(log, ids);
  expect(before.records).toBe(40 * 30 * 3 + 5);
  expect(before.states.size).toBe(25);
  expect(before.states.get('txn-3')).toBe('1003/3/CompleteCommit');

  await cleanTwice(log, time);
  const after = await loadTxns(log, ids);
  expect(after.states).toEqual(before.states);
  expect(after.records).toBe(25);
  log.closeHandlers();
});
