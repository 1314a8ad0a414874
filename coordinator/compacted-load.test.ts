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
import { Logger } from '../common/logger';
import { MockTime } from '../common/testing/mock-time';
import type { Partition } from '../replication/partition';
import { makeLog } from '../storage/testing/compacted-logs';
import { removeTempDirs } from '../storage/testing/temp-dir';
import type { UnifiedLog } from '../storage/unified-log';
import { OFFSETS_TP, appendCoordinatorRecords, cleanTwice, loadOffsetsPartition, metadataWith, writeOffsetCommits } from './testing/offsets-log';
import { transactionLogKey, transactionLogValue } from './transaction/transaction-log';
import { TransactionStateManager } from './transaction/transaction-state-manager';
import { TransactionState } from './transaction/transaction-state';
import type { TransactionCoordinatorConfig } from './transaction/transaction-coordinator-config';

afterAll(removeTempDirs);

const COMMITS = Number(process.env.KRILL_COORDINATOR_LOAD_COMMITS ?? 100_000);
const GROUPS = 20;
const PARTITIONS_PER_GROUP = 10;

test(`group coordinator: a load after ${COMMITS.toLocaleString('en-US')} offset commits replays about one record per live key once the log is cleaned`, async () => {
  const time = new MockTime(1_700_000_000_000);
  const { log } = makeLog({ segmentBytes: 8 * 1024 * 1024, deleteRetentionMs: 0, maxMessageBytes: 1024 * 1024 }, { time, tp: OFFSETS_TP });
  // Commits of GROUPS groups over PARTITIONS_PER_GROUP partitions each, one batch per request; a
  // group 'gone' commits and is then deleted (offset and group tombstones).
  writeOffsetCommits(log, { commits: COMMITS, groups: GROUPS, partitions: PARTITIONS_PER_GROUP }, time.now);
  const before = await loadOffsetsPartition(log, GROUPS);
  expect(before.records).toBeGreaterThanOrEqual(COMMITS);
  expect(before.offsets.size).toBe(GROUPS * PARTITIONS_PER_GROUP);
  expect([...before.offsets.keys()].some((k) => k.startsWith('gone/'))).toBe(false);

  await cleanTwice(log, time);
  const after = await loadOffsetsPartition(log, GROUPS);
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
    appendCoordinatorRecords(
      log,
      [
        {
          key: transactionLogKey(id),
          value: transactionLogValue({
            producerId,
            lastProducerId: -1n,
            nextProducerId: -1n,
            nextProducerEpoch: -1,
            clientTransactionVersion: 0,
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
  for (const id of ids.slice(25)) appendCoordinatorRecords(log, [{ key: transactionLogKey(id), value: null }], time.now);
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
