/**
 * The log cleaner running inside a LogManager (Kafka's LogCleanerIntegrationTest at storage
 * level): passes chosen and run by the cleaner's loops, awaited through awaitCleaned (the
 * checkpoint, no polling); the cleaner-offset-checkpoint on disk; Kafka's per-pass log lines;
 * compact,delete retention run by the cleaner; truncation, deletion and shutdown in the middle of a
 * pass (held at an await); a failed directory; a partition marked uncleanable; the event loop
 * kept free while a pass runs; and a restart that loads cleaned logs with their gaps (also after
 * the topic is switched to delete).
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { readRecords } from '../../protocol/records/record';
import { CapturingLogger, MockScheduler, MockTime } from '../../common/testing/mock-time';
import type { TopicPartition } from '../../common/topic-partition';
import { OffsetCheckpointFile } from '../checkpoint/offset-checkpoint-file';
import { logConfig, type LogConfig } from '../log-config';
import { LogManager, type LogManagerOptions } from '../log-manager';
import { FaultyFs } from '../testing/faulty-fs';
import { batchesInLog, record, recordsInLog, tombstone } from '../testing/compacted-logs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { dumpLog } from '../tools/dump-log';
import type { UnifiedLog } from '../unified-log';
import { cleanerConfig, type CleanerConfig } from './cleaner-config';
import { CLEANER_OFFSET_CHECKPOINT_FILE } from './log-cleaner-manager';
import type { CleanedEvent } from './log-cleaner';

afterAll(removeTempDirs);

const TP: TopicPartition = { topic: 'compacted', partition: 0 };

function compacted(o: Partial<LogConfig> = {}): LogConfig {
  return logConfig({ cleanupPolicy: ['compact'], segmentBytes: 2048, minCleanableDirtyRatio: 0, fileDeleteDelayMs: 60_000, ...o });
}

interface Env {
  lm: LogManager;
  dir: string;
  fs: FaultyFs;
  logger: CapturingLogger;
  time: MockTime;
}

async function start(dir: string, o: { cleaner?: Partial<CleanerConfig>; fs?: FaultyFs; lm?: Partial<LogManagerOptions>; config?: LogConfig } = {}): Promise<Env> {
  const time = new MockTime(Date.now());
  const fs = o.fs ?? new FaultyFs();
  const logger = new CapturingLogger();
  const lm = new LogManager({
    logDirs: [dir],
    defaultConfig: o.config ?? compacted(),
    fs,
    time,
    scheduler: new MockScheduler(time),
    logger,
    initialTaskDelayMs: 3_600_000,
    cleaner: cleanerConfig({ backoffMs: 5, dedupeBufferSize: 4 * 1024 * 1024, ioBufferSize: 64 * 1024, ...o.cleaner }),
    ...o.lm,
  });
  await lm.startup();
  return { lm, dir, fs, logger, time };
}

/** `rounds` updates of keys k0..k(keys-1), then a roll, the high watermark at the end. */
function fill(log: UnifiedLog, keys: number, rounds: number, prefix = 'v'): void {
  for (let r = 0; r < rounds; r++) for (let k = 0; k < keys; k++) log.appendAsLeader(record(`k${k}`, `${prefix}${r}-${k}`), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
}

/** Polls `cond` every few ms; true once it holds, false after `maxWaitMs`. */
async function until(cond: () => boolean, maxWaitMs: number): Promise<boolean> {
  const deadline = performance.now() + maxWaitMs;
  while (!cond()) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

function latestPerKey(log: UnifiedLog): Map<string, { offset: bigint; value: string | null }> {
  const m = new Map<string, { offset: bigint; value: string | null }>();
  for (const r of recordsInLog(log)) if (!r.control && r.key !== null) m.set(r.key, { offset: r.offset, value: r.value });
  return m;
}

test('a dirty compacted log is cleaned by the loop: the latest value per key at its offset, the checkpoint written, the pass logged as Kafka logs it', async () => {
  const env = await start(tempDir('krill-log-cleaner-'));
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  fill(log, 20, 10);
  const before = latestPerKey(log);
  const events: CleanedEvent[] = [];
  env.lm.cleaner!.on('cleaned', (e: CleanedEvent) => events.push(e));
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  expect(latestPerKey(log)).toEqual(before);
  expect(recordsInLog(log).length).toBe(20);
  const cp = new OffsetCheckpointFile(env.fs, path.join(env.dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read();
  expect([...cp.values()].map((e) => [e.tp.topic, e.tp.partition, e.offset])).toEqual([[TP.topic, 0, log.activeSegment.baseOffset]]);
  expect(events[0]).toMatchObject({ tp: TP, from: 0n, to: log.activeSegment.baseOffset });
  expect(events[0].stats.messagesRead).toBe(200);
  expect(events[0].stats.messagesWritten).toBe(20);
  const pass = env.logger.matching(/Log cleaner thread 0 cleaned log compacted-0/)[0];
  expect(pass.split('\n')[0]).toMatch(/^\[kafka-log-cleaner-thread-0\]: Log cleaner thread 0 cleaned log compacted-0 \(dirty section = \[0, 200\]\): read [\d.]+ MB, wrote [\d.]+ MB in [\d.]+ s \([\d,.]+ MB\/s\), 9\d\.\d% size reduction, 200 -> 20 messages$/);
  expect(pass).toMatch(/\(dirty section = \[0, 200\]\)\n/);
  expect(pass).toMatch(/MB of log processed in [\d.]+ seconds \([\d,.]+ MB\/sec\)/);
  expect(pass).toMatch(/Start size: [\d.]+ MB \(200 messages\)/);
  expect(pass).toMatch(/End size: [\d.]+ MB \(20 messages\)/);
  expect(pass).toMatch(/% size reduction \(90\.0% fewer messages\)/);
  expect(env.logger.matching(/^Cleaner 0: Beginning cleaning of log compacted-0/)).toHaveLength(1);
  await env.lm.close();
  // The files pass dump-log's checks, gaps allowed, and dump-log shows the gaps: offsets 0..179
  // are held by no record any more (the cleaned segments keep k0..k19 at 180..199).
  const lines: string[] = [];
  expect(dumpLog([path.join(env.dir, 'compacted-0')], { deepIteration: true, indexSanityCheck: true, allowOffsetGaps: true, closedLog: true }, (l) => lines.push(l)).problems).toEqual([]);
  const gaps = lines.filter((l) => l.startsWith('Offset gap: ')).map((l) => /^Offset gap: (\d+)\.\.(\d+) /.exec(l)!.slice(1).map(BigInt));
  expect(gaps.length).toBeGreaterThan(0);
  expect(gaps[0][0]).toBe(0n);
  expect(gaps.reduce((n, [a, b]) => n + (b - a + 1n), 0n)).toBe(180n);
  expect(lines.some((l) => /^Offset gaps in \d{20}\.log: \d+, \d+ offset\(s\) held by no record/.test(l))).toBe(true);
});

test('a restart loads the cleaned log, gaps and all, even after the topic was switched to delete and the shutdown was not clean', async () => {
  const dir = tempDir('krill-log-cleaner-');
  const env = await start(dir);
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  fill(log, 10, 20);
  await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000);
  const want = latestPerKey(log);
  const leo = log.logEndOffset;
  await env.lm.close();
  // No clean-shutdown marker, no recovery point: every segment is re-read, with the delete policy now.
  nodefs.rmSync(path.join(dir, '.kafka_cleanshutdown'));
  nodefs.rmSync(path.join(dir, 'recovery-point-offset-checkpoint'));
  const again = await start(dir, { config: compacted({ cleanupPolicy: ['delete'] }) });
  const l2 = again.lm.getLog(TP.topic, TP.partition)!;
  expect(l2.loadReport.truncatedAtOffset).toBeUndefined();
  expect(l2.logEndOffset).toBe(leo);
  expect(latestPerKey(l2)).toEqual(want);
  await again.lm.close();
});

test('tombstones go in a later pass once delete.retention.ms has passed; compact,delete retention runs in the cleaner loop', async () => {
  const env = await start(tempDir('krill-log-cleaner-'), { config: compacted({ deleteRetentionMs: 0 }) });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  fill(log, 5, 4);
  for (let k = 0; k < 5; k += 2) log.appendAsLeader(tombstone(`k${k}`), { leaderEpoch: 0 });
  // More dirty data after the tombstones, for other keys: each tombstone stays its key's latest.
  for (const k of [1, 3]) log.appendAsLeader(record(`k${k}`, `w-${k}`), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  // First pass: each tombstone is the latest of its key and is kept, with its delete horizon set.
  const horizonBatches = batchesInLog(log).filter((b) => b.hasDeleteHorizon);
  expect(horizonBatches.length).toBeGreaterThan(0);
  // New tombstones for the same keys (the first ones are superseded) and more dirty data, so another pass runs.
  for (let k = 0; k < 5; k += 2) log.appendAsLeader(tombstone(`k${k}`), { leaderEpoch: 0 });
  log.appendAsLeader(record('pad', 'x'), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  // The new tombstones got their horizon (now + 0) in that pass; one more pass removes them.
  log.appendAsLeader(record('pad2', 'x'), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  const live = latestPerKey(log);
  expect([...live.entries()].filter(([, v]) => v.value === null)).toEqual([]);
  expect([...live.keys()].sort()).toEqual(['k1', 'k3', 'pad', 'pad2']);

  // compact,delete: retention.ms applies, run by the cleaner's loop (not the log manager's task).
  const tp2 = { topic: 'cd', partition: 0 };
  const cd = env.lm.getOrCreateLog(tp2.topic, tp2.partition, undefined, compacted({ cleanupPolicy: ['compact', 'delete'], retentionMs: 1000 }));
  for (let i = 0; i < 30; i++) cd.appendAsLeader(record(`k${i}`, 'old', { timestamp: env.time.now - 10_000 }), { leaderEpoch: 0 });
  cd.roll();
  cd.appendAsLeader(record('fresh', 'new', { timestamp: env.time.now }), { leaderEpoch: 0 });
  cd.updateHighWatermark(cd.logEndOffset);
  // Each loop iteration runs the compacted logs' retention after its pass (whether or not this log
  // was cleaned first): the old segment goes.
  env.lm.cleaner!.wakeup();
  expect(await until(() => cd.logStartOffset >= 30n, 10_000)).toBe(true);
  expect(recordsInLog(cd).map((r) => r.key)).toEqual(['fresh']);
  // The log manager's own retention leaves compacted logs alone.
  expect(env.lm.cleanupLogs()).toBe(0);
  await env.lm.close();
}, 30_000);

/** A pause hook that can hold the cleaner at its next await, for mid-pass interleavings. */
function holdingPause() {
  let hold: (() => void) | null = null;
  let waiting: ((v: void) => void) | null = null;
  let armed: (() => boolean) | null = null;
  const reached = () => new Promise<void>((r) => (waiting = r));
  const pause = (ms: number): Promise<void> => {
    if (armed?.()) {
      armed = null;
      waiting?.();
      return new Promise<void>((r) => (hold = r));
    }
    return new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));
  };
  return {
    pause,
    /** The next await of a pass (at which `when` holds, if given) stops there; resolves once a pass is held. */
    arm: (when: () => boolean = () => true) => {
      armed = when;
      return reached();
    },
    release: () => hold?.(),
  };
}

test('truncation in the middle of a pass aborts it: nothing of the pass lands, the checkpoint follows the truncation, cleaning resumes', async () => {
  const h = holdingPause();
  const env = await start(tempDir('krill-log-cleaner-'), { cleaner: { ioBufferSize: 4096 }, lm: { cleanerPause: h.pause } });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  fill(log, 30, 10);
  const firstPass = env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000);
  await firstPass;
  // Second pass, held mid-way.
  fill(log, 30, 10, 'second');
  const segs = log.logSegments().map((s) => s.baseOffset);
  const held = h.arm();
  env.lm.cleaner!.wakeup();
  await held;
  expect(env.lm.cleaner!.cleanerManager.cleaningState(TP)).toEqual({ kind: 'InProgress' });
  // A follower truncation below the active segment while the pass is suspended at an await.
  const target = segs[segs.length - 3] + 3n;
  log.truncateTo(target);
  expect(env.lm.cleaner!.cleanerManager.cleaningState(TP)).toBeUndefined();
  expect(env.lm.cleaner!.cleanerManager.checkpointedOffset(TP)).toBeLessThanOrEqual(log.activeSegment.baseOffset);
  h.release();
  log.updateHighWatermark(log.logEndOffset);
  fill(log, 30, 2, 'after');
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  expect(nodefs.readdirSync(log.dir).filter((f) => f.includes('.cleaned') || f.includes('.swap'))).toEqual([]);
  const live = latestPerKey(log);
  for (let k = 0; k < 30; k++) expect(live.get(`k${k}`)?.value).toBe(`after1-${k}`);
  expect(env.logger.matching(/Marking its partition/)).toEqual([]);
  await env.lm.close();
}, 30_000);

test('deleting the partition in the middle of a pass aborts it; its checkpoint entry goes', async () => {
  const h = holdingPause();
  const env = await start(tempDir('krill-log-cleaner-'), { cleaner: { ioBufferSize: 4096 }, lm: { cleanerPause: h.pause } });
  const keep = env.lm.getOrCreateLog('other', 0);
  fill(keep, 5, 5);
  await env.lm.cleaner!.awaitCleaned({ topic: 'other', partition: 0 }, keep.activeSegment.baseOffset, 10_000);
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  const held = h.arm();
  fill(log, 30, 10);
  env.lm.cleaner!.wakeup();
  await held;
  env.lm.deleteLog(TP.topic, TP.partition);
  h.release();
  // The cleaner goes on with other logs; the deleted one is gone from its checkpoint.
  fill(keep, 5, 5, 'again');
  expect(await env.lm.cleaner!.awaitCleaned({ topic: 'other', partition: 0 }, keep.activeSegment.baseOffset, 10_000)).toBe(true);
  const cp = new OffsetCheckpointFile(env.fs, path.join(env.dir, CLEANER_OFFSET_CHECKPOINT_FILE)).read();
  expect([...cp.values()].map((e) => e.tp.topic)).toEqual(['other']);
  expect(env.logger.matching(/Marking its partition/)).toEqual([]);
  await env.lm.close();
}, 30_000);

test('shutdown in the middle of a pass: close() waits for it, its .cleaned files are gone, the log is as it was', async () => {
  const h = holdingPause();
  const dir = tempDir('krill-log-cleaner-');
  const env = await start(dir, { cleaner: { ioBufferSize: 4096 }, lm: { cleanerPause: h.pause } });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  // Held once the offset map is built and the first .cleaned segment is being written.
  const held = h.arm(() => nodefs.readdirSync(log.dir).some((f) => f.endsWith('.cleaned')));
  fill(log, 30, 10);
  const before = recordsInLog(log);
  env.lm.cleaner!.wakeup();
  await held;
  expect(nodefs.readdirSync(log.dir).some((f) => f.endsWith('.cleaned'))).toBe(true);
  const closing = env.lm.close();
  h.release();
  await closing;
  expect(nodefs.readdirSync(path.join(dir, 'compacted-0')).filter((f) => f.includes('.cleaned'))).toEqual([]);
  const again = await start(dir, { cleaner: { enableCleaner: false } });
  expect(recordsInLog(again.lm.getLog(TP.topic, TP.partition)!)).toEqual(before);
  await again.lm.close();
}, 30_000);

test('reconfiguring in the middle of a pass interrupts it (its .cleaned files go) and the new loops clean the log; a reconfiguration racing close() starts nothing', async () => {
  const h = holdingPause();
  const dir = tempDir('krill-log-cleaner-');
  const env = await start(dir, { cleaner: { ioBufferSize: 4096 }, lm: { cleanerPause: h.pause } });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  const held = h.arm(() => nodefs.readdirSync(log.dir).some((f) => f.endsWith('.cleaned')));
  fill(log, 30, 10);
  const want = latestPerKey(log);
  const cleaner = env.lm.cleaner!;
  cleaner.wakeup();
  await held;
  const reconfigured = env.lm.reconfigureCleaner({ ...cleaner.config, numThreads: 2, maxIoBytesPerSecond: 1e9 });
  h.release();
  await reconfigured;
  expect(cleaner.isRunning).toBe(true);
  expect(cleaner.lastStats.length).toBe(2);
  expect(cleaner.throttler.rate).toBe(1e9);
  expect(await cleaner.awaitCleaned(TP, log.activeSegment.baseOffset, 10_000)).toBe(true);
  expect(latestPerKey(log)).toEqual(want);
  expect(recordsInLog(log).length).toBe(30);

  const racing = env.lm.reconfigureCleaner({ ...cleaner.config, numThreads: 1 });
  await env.lm.close();
  await racing;
  expect(cleaner.isRunning).toBe(false);
  expect(cleaner.config.numThreads).toBe(1);
}, 30_000);

test('shutdown does not wait out the throttle: a pass held back by log.cleaner.io.max.bytes.per.second stops at once', async () => {
  const dir = tempDir('krill-log-cleaner-');
  // 2 KB/s against a ~200 KB log: each throttle wait lasts seconds (a read buffer is 8 KiB; the
  // throttle checks every 20 ms here instead of Kafka's 300, so it engages at once).
  const env = await start(dir, { cleaner: { ioBufferSize: 16 * 1024, maxIoBytesPerSecond: 2_000 }, lm: { cleanerThrottleCheckIntervalMs: 20 }, config: compacted({ segmentBytes: 64 * 1024 }) });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  fill(log, 200, 10);
  const want = latestPerKey(log);
  env.lm.cleaner!.wakeup();
  expect(await until(() => env.lm.cleaner!.cleanerManager.cleaningState(TP)?.kind === 'InProgress', 10_000)).toBe(true);
  // Let the throttle engage.
  await new Promise((r) => setTimeout(r, 300));
  expect(env.lm.cleaner!.cleanerManager.checkpointedOffset(TP)).toBeUndefined();
  const t0 = performance.now();
  await env.lm.close();
  expect(performance.now() - t0).toBeLessThan(2_000);
  expect(nodefs.readdirSync(path.join(dir, 'compacted-0')).filter((f) => f.includes('.cleaned'))).toEqual([]);
  // Groups swapped in before the stop are cleaned, the rest as they were: the same latest values.
  const again = await start(dir, { cleaner: { enableCleaner: false } });
  expect(latestPerKey(again.lm.getLog(TP.topic, TP.partition)!)).toEqual(want);
  await again.lm.close();
}, 30_000);

test('an I/O error while cleaning takes the directory offline (nothing is swapped in); another error marks the partition uncleanable and the cleaner goes on', async () => {
  const dir = tempDir('krill-log-cleaner-');
  const fs = new FaultyFs();
  const env = await start(dir, { fs });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  const failures: string[] = [];
  env.lm.onLogDirFailure((d) => failures.push(d));
  fs.failNext({ op: 'write', path: '.log.cleaned', errno: 'ENOSPC' });
  fill(log, 10, 10);
  env.lm.cleaner!.wakeup();
  expect(await until(() => failures.length > 0, 10_000)).toBe(true);
  expect(failures).toEqual([path.resolve(dir)]);
  expect(log.isOffline).toBe(true);
  await env.lm.close();

  // A non-I/O failure (a bug, say): the partition is uncleanable, other partitions are cleaned.
  const dir2 = tempDir('krill-log-cleaner-');
  const fs2 = new FaultyFs();
  const e2 = await start(dir2, { fs: fs2 });
  const bad = e2.lm.getOrCreateLog('bad', 0);
  const good = e2.lm.getOrCreateLog('good', 0);
  fs2.failNext({ op: 'read', path: /bad-0.*\.log$/, nonIo: true });
  fill(bad, 10, 10);
  fill(good, 10, 10);
  expect(await e2.lm.cleaner!.awaitCleaned({ topic: 'good', partition: 0 }, good.activeSegment.baseOffset, 10_000)).toBe(true);
  expect(await until(() => e2.lm.cleaner!.cleanerManager.uncleanablePartitions(dir2).includes('bad-0'), 10_000)).toBe(true);
  expect(e2.logger.matching(/Marking its partition \(bad-0\) as uncleanable/)).toHaveLength(1);
  expect(bad.isOffline).toBe(false);
  await e2.lm.close();
}, 30_000);

test('the event loop keeps turning during a pass: every chunk yields', async () => {
  const env = await start(tempDir('krill-log-cleaner-'), { cleaner: { ioBufferSize: 64 * 1024 }, config: compacted({ segmentBytes: 256 * 1024 }) });
  const log = env.lm.getOrCreateLog(TP.topic, TP.partition);
  const big = 'x'.repeat(900);
  for (let i = 0; i < 8000; i++) log.appendAsLeader(record(`k${i % 500}`, `${i}${big}`), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  let ticks = 0;
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    worst = Math.max(worst, t - last);
    last = t;
    ticks++;
  }, 1);
  const t0 = performance.now();
  env.lm.cleaner!.wakeup();
  expect(await env.lm.cleaner!.awaitCleaned(TP, log.activeSegment.baseOffset, 30_000)).toBe(true);
  const ms = performance.now() - t0;
  clearInterval(timer);
  expect(recordsInLog(log)).toHaveLength(500);
  // ~7 MB cleaned: the 1 ms timer kept firing throughout, never held up for long.
  expect(ticks).toBeGreaterThan(ms / 20);
  expect(worst).toBeLessThan(250);
  await env.lm.close();
}, 60_000);

void readRecords;
