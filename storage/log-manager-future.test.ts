/**
 * Future replicas in the LogManager (AlterReplicaLogDirs): creation in the destination with
 * Kafka's directory name and the current log's topic id and log start offset; the swap of a caught-up
 * future (the log now in the destination, readable, appendable, its old directory `-delete` and then
 * gone, checkpoints without it); and what a restart does with what a stop or a crash left:
 * a future next to its current log is kept (to resume), one in the current log's own directory or of
 * another topic id is discarded, one with no current log is promoted, and two copies of one topic id
 * (a crash between the swap's renames) keep the longer one; a compacted log's cleaner checkpoint
 * moves with it and its cleaning resumes after the swap. The copying itself is the replication
 * layer's (replication/replica-alter-log-dirs-manager.ts); here batches are copied by hand.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { randomUuid } from '../protocol/primitives/uuid';
import { LogConfig, logConfig } from './log-config';
import { LogManager, LogManagerOptions } from './log-manager';
import { recordsBuffer } from './log-segment';
import { offsetsIn, testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { CapturingLogger, MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import type { UnifiedLog } from './unified-log';
import { readPartitionMetadata } from './partition-metadata';
import { OffsetCheckpointFile } from './checkpoint/offset-checkpoint-file';
import { CLEANER_OFFSET_CHECKPOINT_FILE } from './cleaner/log-cleaner-manager';
import { cleanerConfig } from './cleaner/cleaner-config';
import { record } from './testing/compacted-logs';

afterAll(removeTempDirs);

function config(o: Partial<LogConfig> = {}): LogConfig {
  return logConfig({ segmentBytes: 4000, indexIntervalBytes: 500, fileDeleteDelayMs: 1000, ...o });
}

async function start(dirs: string[], o: Partial<LogManagerOptions> = {}) {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const logger = new CapturingLogger();
  const lm = new LogManager({ logDirs: dirs, defaultConfig: config(), fs: new FaultyFs(), time, scheduler, logger, initialTaskDelayMs: 1000, ...o });
  await lm.startup();
  return { lm, time, scheduler, logger };
}

function produce(log: UnifiedLog, batches: number): void {
  for (let i = 0; i < batches; i++) log.appendAsLeader(testBatch({ count: 5, valueSize: 100 }), { leaderEpoch: 0 });
  log.updateHighWatermark(log.logEndOffset);
}

/** What the copy loop does, all at once: the current log's batches after the future's end. */
function copy(from: UnifiedLog, to: UnifiedLog): void {
  while (to.logEndOffset < from.logEndOffset) {
    const r = from.read(to.logEndOffset, 1500, { maxOffset: from.logEndOffset, minOneMessage: true });
    to.appendAsFollower(Buffer.concat(r.records));
  }
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

const ls = (dir: string, prefix: string) => nodefs.readdirSync(dir).filter((n) => n.startsWith(prefix)).sort();

test('a future replica is created in the destination, caught up, and swapped in; the old directory goes', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm, scheduler, time } = await start([a, b]);
  const topicId = randomUuid();
  const log = lm.getOrCreateLog('t', 0, topicId);
  const [src, dst] = log.parentDir === a ? [a, b] : [b, a];
  produce(log, 30);
  log.deleteRecordsBefore(10n);
  const future = lm.getOrCreateFutureLog('t', 0, dst)!;
  expect(path.basename(future.dir)).toMatch(/^t-0\.[0-9a-f]{32}-future$/);
  expect(path.dirname(future.dir)).toBe(dst);
  expect(readPartitionMetadata(nodefs as never, future.dir)).toBe(topicId);
  expect(future.logStartOffset).toBe(10n);
  // Asked again: the same future; the current directory: nothing to move.
  expect(lm.getOrCreateFutureLog('t', 0, dst)).toBe(future);
  expect(code(() => lm.getOrCreateFutureLog('t', 0, path.join(a, 'nope')))).toBe(ErrorCode.LOG_DIR_NOT_FOUND);
  expect(code(() => lm.isLogDirOnline('relative'))).toBe(ErrorCode.LOG_DIR_NOT_FOUND);

  copy(log, future);
  expect(() => lm.replaceCurrentWithFutureLog('t', 0)).not.toThrow();
  const moved = lm.getLog('t', 0)!;
  expect(moved).toBe(future);
  expect(moved.dir).toBe(path.join(dst, 't-0'));
  expect(lm.getFutureLog('t', 0)).toBeUndefined();
  expect(moved.highWatermark).toBe(log.highWatermark);
  expect(offsets(moved)).toEqual(Array.from({ length: 140 }, (_, i) => BigInt(i + 10)));
  // The renamed log keeps writing: new segments in its new directory.
  produce(moved, 20);
  expect(ls(path.join(dst, 't-0'), '').filter((f) => f.endsWith('.log')).length).toBeGreaterThan(1);
  expect(ls(src, 't-0')).toEqual([expect.stringMatching(/^t-0\.[0-9a-f]{32}-delete$/)]);
  time.sleep(1000);
  scheduler.tick();
  expect(ls(src, 't-0')).toEqual([]);
  await lm.close();

  const again = await start([a, b]);
  expect(again.lm.getLog('t', 0)!.parentDir).toBe(dst);
  expect(offsets(again.lm.getLog('t', 0)!)).toEqual(Array.from({ length: 240 }, (_, i) => BigInt(i + 10)));
  await again.lm.close();
});

test('restart: a future next to its current log is kept, with what it had copied', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm } = await start([a, b]);
  const log = lm.getOrCreateLog('t', 0, randomUuid());
  const dst = log.parentDir === a ? b : a;
  produce(log, 10);
  const future = lm.getOrCreateFutureLog('t', 0, dst)!;
  const r = log.read(0n, 600, { maxOffset: log.logEndOffset, minOneMessage: true });
  future.appendAsFollower(Buffer.concat(r.records));
  const copied = future.logEndOffset;
  await lm.close();
  const again = await start([a, b]);
  expect(again.lm.getFutureLog('t', 0)!.logEndOffset).toBe(copied);
  expect(again.lm.getFutureLog('t', 0)!.parentDir).toBe(dst);
  expect(again.lm.getLog('t', 0)!.logEndOffset).toBe(50n);
  await again.lm.close();
});

test('restart: a future in its current log directory, or of another topic id, is discarded; one without a current log is promoted', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm } = await start([a, b]);
  const keep = lm.getOrCreateLog('same', 0, randomUuid());
  const other = lm.getOrCreateLog('other', 0, randomUuid());
  const orphan = lm.getOrCreateLog('orphan', 0, randomUuid());
  for (const l of [keep, other, orphan]) produce(l, 4);
  const fOther = lm.getOrCreateFutureLog('other', 0, other.parentDir === a ? b : a)!;
  const fOrphan = lm.getOrCreateFutureLog('orphan', 0, orphan.parentDir === a ? b : a)!;
  copy(other, fOther);
  copy(orphan, fOrphan);
  const orphanDir = orphan.dir;
  const orphanFutureParent = fOrphan.parentDir;
  const otherFutureDir = fOther.dir;
  await lm.close();
  // By hand: a future of `same` in its own directory, `other`'s future relabelled with another
  // topic id, `orphan`'s current log removed.
  nodefs.cpSync(keep.dir, path.join(keep.parentDir, `same-0.${'ab'.repeat(16)}-future`), { recursive: true });
  nodefs.writeFileSync(path.join(otherFutureDir, 'partition.metadata'), `version: 0\ntopic_id: ${randomUuid()}\n`);
  nodefs.rmSync(orphanDir, { recursive: true });

  const again = await start([a, b]);
  expect(again.lm.getFutureLog('same', 0)).toBeUndefined();
  expect(again.lm.getFutureLog('other', 0)).toBeUndefined();
  expect(ls(path.dirname(otherFutureDir), 'other-0')).toEqual([expect.stringMatching(/^other-0\.[0-9a-f]{32}-delete$/)]);
  expect(again.logger.matching(/discarding future replica .*other-0\..*belongs to topic id/)).toHaveLength(1);
  expect(ls(keep.parentDir, 'same-0').filter((n) => n.endsWith('-future'))).toEqual([]);
  const promoted = again.lm.getLog('orphan', 0)!;
  expect(promoted.parentDir).toBe(orphanFutureParent);
  expect(promoted.dir).toBe(path.join(orphanFutureParent, 'orphan-0'));
  expect(offsets(promoted)).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i)));
  expect(again.lm.getLog('other', 0)!.logEndOffset).toBe(20n);
  await again.lm.close();
});

test('restart: two logs of one topic id in two directories (a crash between the renames of a swap) keep the longer one', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm } = await start([a, b]);
  const log = lm.getOrCreateLog('dup', 0, randomUuid());
  produce(log, 6);
  const src = log.parentDir;
  const dst = src === a ? b : a;
  await lm.close();
  // The copy in the destination is complete and has one more batch than the source copy
  // (the source lost an unflushed tail, say).
  nodefs.cpSync(path.join(src, 'dup-0'), path.join(dst, 'dup-0'), { recursive: true });
  const tmp = await start([dst]);
  produce(tmp.lm.getLog('dup', 0)!, 1);
  await tmp.lm.close();

  const again = await start([a, b]);
  const kept = again.lm.getLog('dup', 0)!;
  expect(kept.parentDir).toBe(dst);
  expect(kept.logEndOffset).toBe(35n);
  expect(again.lm.partitionFailure('dup', 0)).toBeUndefined();
  expect(ls(src, 'dup-0')).toEqual([expect.stringMatching(/^dup-0\.[0-9a-f]{32}-delete$/)]);
  await again.lm.close();
});

test('a preferred directory is where a log not hosted yet is created; deleting the log drops its future', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm } = await start([a, b]);
  lm.maybeUpdatePreferredLogDir('p', 0, b);
  lm.maybeUpdatePreferredLogDir('q', 0, a);
  expect(lm.getOrCreateLog('p', 0).parentDir).toBe(b);
  expect(lm.getOrCreateLog('q', 0).parentDir).toBe(a);
  expect(lm.preferredLogDir('p', 0)).toBeUndefined();
  const p = lm.getLog('p', 0)!;
  produce(p, 2);
  const f = lm.getOrCreateFutureLog('p', 0, a)!;
  // A new destination replaces the future; back to the current directory: none.
  expect(lm.getOrCreateFutureLog('p', 0, b)).toBeUndefined();
  expect(lm.getFutureLog('p', 0)).toBeUndefined();
  expect(f.isClosed).toBe(true);
  lm.getOrCreateFutureLog('p', 0, a);
  lm.deleteLog('p', 0);
  expect(lm.getFutureLog('p', 0)).toBeUndefined();
  expect(ls(a, 'p-0').every((n) => n.endsWith('-delete'))).toBe(true);
  await lm.close();
});

test('a compacted log moves with its cleaner checkpoint; cleaning resumes after the swap', async () => {
  const [a, b] = [tempDir(), tempDir()];
  const { lm } = await start([a, b], {
    defaultConfig: logConfig({ cleanupPolicy: ['compact'], segmentBytes: 2048, minCleanableDirtyRatio: 0, fileDeleteDelayMs: 1000 }),
    cleaner: cleanerConfig({ backoffMs: 5, dedupeBufferSize: 4 * 1024 * 1024, ioBufferSize: 64 * 1024 }),
  });
  const log = lm.getOrCreateLog('c', 0, randomUuid());
  const fill = (rounds: number, prefix: string) => {
    for (let r = 0; r < rounds; r++) for (let k = 0; k < 10; k++) log.appendAsLeader(record(`k${k}`, `${prefix}${r}-${k}`), { leaderEpoch: 0 });
  };
  fill(10, 'a');
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  const tp = { topic: 'c', partition: 0 };
  expect(await lm.cleaner!.awaitCleaned(tp, log.activeSegment.baseOffset, 10_000)).toBe(true);
  const src = log.parentDir;
  const dst = src === a ? b : a;
  const entry = (dir: string) => [...new OffsetCheckpointFile(nodefs as never, path.join(dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read().values()].find((e) => e.tp.topic === 'c')?.offset;
  const cleanedTo = entry(src);
  expect(cleanedTo).toBeDefined();
  const future = lm.getOrCreateFutureLog('c', 0, dst)!;
  copy(log, future); // the cleaned log has offset gaps: the future takes the batches as they are
  lm.replaceCurrentWithFutureLog('c', 0);
  const moved = lm.getLog('c', 0)!;
  expect(entry(src)).toBeUndefined();
  expect(entry(dst)).toBe(cleanedTo);
  // Cleaning goes on in the new directory.
  for (let r = 0; r < 10; r++) for (let k = 0; k < 10; k++) moved.appendAsLeader(record(`k${k}`, `b${r}-${k}`), { leaderEpoch: 0 });
  moved.roll();
  moved.updateHighWatermark(moved.logEndOffset);
  expect(await lm.cleaner!.awaitCleaned(tp, moved.activeSegment.baseOffset, 10_000)).toBe(true);
  expect(entry(dst)).toBe(moved.activeSegment.baseOffset);
  await lm.close();
});

function code(fn: () => unknown): number {
  try {
    fn();
  } catch (e) {
    if (e instanceof KafkaError) return e.code;
    throw e;
  }
  return ErrorCode.NONE;
}
