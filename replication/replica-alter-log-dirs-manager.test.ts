/**
 * The copy loops of replica moves (ReplicaAlterLogDirsManager) on a real LogManager with two
 * directories: a copy interleaved with appends ends in a swap with every offset in place; a
 * current log truncated below what the future had copied (a follower's truncation) cuts the future
 * back; a new leader epoch after the truncation is copied with the right epoch history; the log
 * start offset follows; a failed destination abandons the move and leaves the current log alone;
 * the thread a partition goes to is Kafka's getFetcherId.
 */
import { randomUuid } from '../protocol/primitives/uuid';
import { LogManager } from '../storage/log-manager';
import { logConfig } from '../storage/log-config';
import { recordsBuffer } from '../storage/log-segment';
import { offsetsIn, testBatch } from '../storage/testing/batches';
import { removeTempDirs, tempDir } from '../storage/testing/temp-dir';
import { CapturingLogger } from '../common/testing/mock-time';
import type { UnifiedLog } from '../storage/unified-log';
import { Partition } from './partition';
import { ReplicaAlterLogDirsManager, alterLogDirsThreadFor } from './replica-alter-log-dirs-manager';

afterAll(removeTempDirs);

async function setup() {
  const dirs = [tempDir(), tempDir()];
  const logger = new CapturingLogger();
  const lm = new LogManager({ logDirs: dirs, defaultConfig: logConfig({ segmentBytes: 3000, indexIntervalBytes: 500 }), logger, initialTaskDelayMs: 1_000_000 });
  await lm.startup();
  const log = lm.getOrCreateLog('t', 0, randomUuid());
  const p = new Partition('t', 0, log.topicId!, 1, log);
  const dest = dirs.find((d) => d !== log.parentDir)!;
  let moved: () => void;
  const done = new Promise<void>((r) => (moved = r));
  let abandon: (reason: string) => void;
  const abandoned = new Promise<string>((r) => (abandon = r));
  const mgr = new ReplicaAlterLogDirsManager({ logManager: lm, partition: () => p, logger, threads: 2, maxBytes: 700, onMoved: () => moved(), onAbandoned: (_t, _p, reason) => abandon(reason) });
  return { lm, p, dest, mgr, done, abandoned, logger };
}

function append(log: UnifiedLog, batches: number, epoch = 0): void {
  for (let i = 0; i < batches; i++) log.appendAsLeader(testBatch({ count: 4, valueSize: 60 }), { leaderEpoch: epoch });
  log.updateHighWatermark(log.logEndOffset);
}

function offsets(log: UnifiedLog): bigint[] {
  const out: bigint[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const offs = offsetsIn(recordsBuffer(log.read(next, 1 << 20, { isolation: 'LOG_END', minOneMessage: true })));
    if (offs.length === 0) break;
    out.push(...offs);
    next = offs[offs.length - 1] + 1n;
  }
  return out;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => BigInt(from + i));

test('a copy interleaved with appends ends in a swap with every offset in place', async () => {
  const { lm, p, dest, mgr, done } = await setup();
  append(p.log, 40);
  const old = p.log;
  lm.getOrCreateFutureLog('t', 0, dest);
  mgr.addPartition('t', 0);
  // Appends while the copy runs (each wakes the loop, as Partition's onLogAppend does).
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((r) => setImmediate(r));
    append(p.log, 3);
    mgr.wake('t', 0);
  }
  await done;
  expect(p.log).not.toBe(old);
  expect(p.log.parentDir).toBe(dest);
  expect(p.log.logEndOffset).toBe(220n);
  expect(offsets(p.log)).toEqual(range(0, 220));
  expect(p.log.highWatermark).toBe(220n);
  expect(mgr.isMoving('t', 0)).toBe(false);
  await mgr.shutdown();
  await lm.close();
});

test('a current log truncated below the copy, then written at a new epoch: the future is cut back and copies the new history', async () => {
  const { lm, p, dest, mgr, done, logger } = await setup();
  append(p.log, 20, 0); // 0..79 at epoch 0
  const future = lm.getOrCreateFutureLog('t', 0, dest)!;
  // The future has everything so far (copied by hand) ...
  while (future.logEndOffset < p.log.logEndOffset) future.appendAsFollower(Buffer.concat(p.log.read(future.logEndOffset, 700, { maxOffset: p.log.logEndOffset, minOneMessage: true }).records));
  // ... then the current log is truncated (a follower's truncation) and written at epoch 1.
  p.log.truncateTo(40n);
  p.log.maybeAssignEpochStartOffset(1, 40n);
  append(p.log, 10, 1); // 40..79 at epoch 1
  p.log.deleteRecordsBefore(8n);
  mgr.addPartition('t', 0);
  await done;
  expect(p.log.parentDir).toBe(dest);
  expect(logger.matching(/truncating from 80 to 40/)).toHaveLength(1);
  expect(offsets(p.log)).toEqual(range(8, 80));
  expect(p.log.logStartOffset).toBe(8n);
  expect(p.log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 40n });
  expect(p.log.latestEpoch).toBe(1);
  await mgr.shutdown();
  await lm.close();
});

test('the destination directory fails: the move is abandoned, the future dropped, the current log untouched; no new move while a directory is offline', async () => {
  const { lm, p, dest, mgr, abandoned } = await setup();
  append(p.log, 30);
  const old = p.log;
  lm.getOrCreateFutureLog('t', 0, dest);
  lm.handleLogDirFailure(dest, 'test: the disk failed');
  mgr.addPartition('t', 0);
  expect(await abandoned).toBe('the future replica is offline');
  expect(lm.getFutureLog('t', 0)).toBeUndefined();
  expect(p.log).toBe(old);
  expect(offsets(p.log)).toEqual(range(0, 120));
  append(p.log, 1);
  expect(lm.isLogDirOnline(dest)).toBe(false);
  // Kafka creates no future log while any directory is offline.
  expect(() => lm.getOrCreateFutureLog('t', 0, dest)).toThrow(/offline/);
  await mgr.shutdown();
  await lm.close();
});

test("a partition's thread is Kafka's getFetcherId: abs(31 * topic.hashCode() + partition) % threads", () => {
  // "test".hashCode() = 3556498; 31 * 3556498 + 2 = 110251440.
  expect(alterLogDirsThreadFor('test', 2, 7)).toBe(110251440 % 7);
  // A negative hash ("polygenelubricants".hashCode() = Integer.MIN_VALUE): 31 * MIN_VALUE overflows to MIN_VALUE, + 1.
  expect(alterLogDirsThreadFor('polygenelubricants', 1, 5)).toBe(Math.abs(-2147483648 + 1) % 5);
});
