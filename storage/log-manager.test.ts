import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { randomUuid } from '../protocol/primitives/uuid';
import { OffsetCheckpointFile } from './checkpoint/offset-checkpoint-file';
import { nodeFs } from './fs';
import { LogConfig, logConfig } from './log-config';
import { RECOVERY_READ_AHEAD } from './log-loader';
import { LogManager, LogManagerOptions } from './log-manager';
import { recordsBuffer } from './log-segment';
import { readMetaProperties } from './meta-properties';
import { readPartitionMetadata } from './partition-metadata';
import { offsetsIn, testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { CapturingLogger, MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { UnifiedLog } from './unified-log';
import { topicPartitionKey } from '../common/topic-partition';

afterAll(removeTempDirs);

interface Broker {
  lm: LogManager;
  fs: FaultyFs;
  time: MockTime;
  scheduler: MockScheduler;
  logger: CapturingLogger;
}

function config(o: Partial<LogConfig> = {}): LogConfig {
  return logConfig({ segmentBytes: 4000, indexIntervalBytes: 500, fileDeleteDelayMs: 1000, ...o });
}

async function start(dirs: string[], o: Partial<LogManagerOptions> = {}, fs = new FaultyFs()): Promise<Broker> {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const logger = new CapturingLogger();
  const lm = new LogManager({ logDirs: dirs, defaultConfig: config(), fs, time, scheduler, logger, initialTaskDelayMs: 1000, ...o });
  await lm.startup();
  return { lm, fs, time, scheduler, logger };
}

function produce(log: UnifiedLog, batches: number, count = 5): void {
  for (let i = 0; i < batches; i++) log.appendAsLeader(testBatch({ count, valueSize: 100 }), { leaderEpoch: 0 });
  log.updateHighWatermark(log.logEndOffset);
}

function readAllOffsets(log: UnifiedLog): bigint[] {
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

function code(fn: () => unknown): number {
  try {
    fn();
  } catch (e) {
    if (e instanceof KafkaError) return e.code;
    throw e;
  }
  return ErrorCode.NONE;
}

test('creates logs across log dirs with partition.metadata and meta.properties; topic id mismatch is an error', async () => {
  const d1 = tempDir();
  const d2 = tempDir();
  const { lm } = await start([d1, d2], { nodeId: 1, clusterId: 'abcdefghijklmnopqrstuv' });
  const id = randomUuid();
  const a = lm.getOrCreateLog('t', 0, id);
  const b = lm.getOrCreateLog('t', 1, id);
  expect(new Set([a.parentDir, b.parentDir])).toEqual(new Set([path.resolve(d1), path.resolve(d2)]));
  expect(lm.getOrCreateLog('t', 0, id)).toBe(a);
  expect(lm.getLog('t', 0)).toBe(a);
  expect(readPartitionMetadata(nodeFs, a.dir)).toBe(id);
  expect(nodefs.readFileSync(path.join(a.dir, 'partition.metadata'), 'utf8')).toBe(`version: 0\ntopic_id: ${id}\n`);
  expect(code(() => lm.getOrCreateLog('t', 0, randomUuid()))).toBe(ErrorCode.INCONSISTENT_TOPIC_ID);
  const meta = readMetaProperties(nodeFs, d1);
  expect(meta).toMatchObject({ version: 1, nodeId: 1, clusterId: 'abcdefghijklmnopqrstuv' });
  expect(meta?.directoryId).toHaveLength(22);
  await lm.close();
  await expect(start([d1], { nodeId: 2, clusterId: 'abcdefghijklmnopqrstuv' })).rejects.toThrow(/node id/);
  await expect(start([d2], { nodeId: 1, clusterId: 'zzzzzzzzzzzzzzzzzzzzzz' })).rejects.toThrow(/cluster id/);
});

test('a log or a leftover directory recorded under another topic id is refused', async () => {
  const d = tempDir();
  const first = await start([d]);
  first.lm.getOrCreateLog('t', 0, randomUuid());
  await first.lm.close();
  const second = await start([d]);
  expect(code(() => second.lm.getOrCreateLog('t', 0, randomUuid()))).toBe(ErrorCode.INCONSISTENT_TOPIC_ID);
  // A directory that appears after loading (not known to the manager) is checked too.
  const stray = path.join(d, 't-1');
  nodefs.mkdirSync(stray);
  nodefs.writeFileSync(path.join(stray, 'partition.metadata'), `version: 0\ntopic_id: ${randomUuid()}\n`);
  expect(code(() => second.lm.getOrCreateLog('t', 1, randomUuid()))).toBe(ErrorCode.INCONSISTENT_TOPIC_ID);
  // Without a topic id on either side, the log is simply created.
  expect(second.lm.getOrCreateLog('t', 2).topicId).toBeUndefined();
  await second.lm.close();
});

test('clean shutdown writes checkpoints and the marker; restart skips recovery and keeps HWMs and log start offsets', async () => {
  const d = tempDir();
  const b1 = await start([d]);
  const log = b1.lm.getOrCreateLog('t', 0, randomUuid());
  produce(log, 40);
  log.updateHighWatermark(150n);
  log.deleteRecordsBefore(20n);
  const leo = log.logEndOffset;
  await b1.lm.close();
  expect(nodefs.existsSync(path.join(d, '.kafka_cleanshutdown'))).toBe(true);
  const rp = new OffsetCheckpointFile(nodeFs, path.join(d, 'recovery-point-offset-checkpoint')).read();
  expect(rp.get(topicPartitionKey('t', 0))?.offset).toBe(leo);
  expect(nodefs.readFileSync(path.join(d, 'log-start-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 0 20\n');
  expect(nodefs.readFileSync(path.join(d, 'replication-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 0 150\n');

  const b2 = await start([d]);
  expect(nodefs.existsSync(path.join(d, '.kafka_cleanshutdown'))).toBe(false);
  const again = b2.lm.getLog('t', 0)!;
  expect(again.loadReport.recoveredSegments).toBe(0);
  expect([again.logStartOffset, again.highWatermark, again.logEndOffset]).toEqual([20n, 150n, leo]);
  expect(readAllOffsets(again)[0]).toBe(20n);
  await b2.lm.close();
});

test('crash restart: no marker, torn tail recovered, acknowledged data intact', async () => {
  const d = tempDir();
  const b1 = await start([d]);
  const log = b1.lm.getOrCreateLog('t', 0, randomUuid());
  produce(log, 30);
  b1.lm.checkpointLogRecoveryOffsets();
  produce(log, 10);
  const leo = log.logEndOffset;
  // kill -9: no close; a half-written batch at the end.
  const logs = nodefs.readdirSync(log.dir).filter((f) => f.endsWith('.log')).sort();
  const half = testBatch({ count: 5, valueSize: 100 });
  nodefs.appendFileSync(path.join(log.dir, logs[logs.length - 1]), half.subarray(0, 100));
  const b2 = await start([d]);
  const again = b2.lm.getLog('t', 0)!;
  expect(again.logEndOffset).toBe(leo);
  expect(again.loadReport.recoveredSegments).toBeGreaterThan(0);
  expect(readAllOffsets(again)).toEqual(Array.from({ length: Number(leo) }, (_, i) => BigInt(i)));
  expect(again.appendAsLeader(testBatch(), { leaderEpoch: 1 }).firstOffset).toBe(leo);
  await b2.lm.close();
});

test('a corrupt recovery-point checkpoint means full recovery, not a failed startup', async () => {
  const d = tempDir();
  const b1 = await start([d]);
  const log = b1.lm.getOrCreateLog('t', 0, randomUuid());
  produce(log, 40);
  const leo = log.logEndOffset;
  const segments = log.numberOfSegments;
  await b1.lm.close();
  nodefs.unlinkSync(path.join(d, '.kafka_cleanshutdown'));
  nodefs.writeFileSync(path.join(d, 'recovery-point-offset-checkpoint'), '0\n7\nt 0 garbage\n');
  const b2 = await start([d]);
  expect(b2.logger.matching(/malformed checkpoint file .*recovery-point-offset-checkpoint/).length).toBe(1);
  const again = b2.lm.getLog('t', 0)!;
  expect(again.loadReport.recoveredSegments).toBe(segments);
  expect(again.logEndOffset).toBe(leo);
  await b2.lm.close();
});

test('deleteLog renames the directory to -delete and removes it after file.delete.delay.ms; startup removes leftovers', async () => {
  const d = tempDir();
  const b = await start([d]);
  const log = b.lm.getOrCreateLog('gone', 2, randomUuid());
  produce(log, 3);
  b.lm.deleteLog('gone', 2);
  expect(b.lm.getLog('gone', 2)).toBeUndefined();
  const names = nodefs.readdirSync(d).filter((n) => n.startsWith('gone-2'));
  expect(names).toHaveLength(1);
  expect(names[0]).toMatch(/^gone-2\.[0-9a-f]{32}-delete$/);
  b.scheduler.tick(1000);
  expect(nodefs.readdirSync(d).filter((n) => n.startsWith('gone-2'))).toHaveLength(0);
  // A -delete directory left by a crash goes at the next startup.
  const stale = path.join(d, 'old-0.0123456789abcdef0123456789abcdef-delete');
  nodefs.mkdirSync(stale);
  await b.lm.close();
  const b2 = await start([d]);
  b2.scheduler.tick(1000);
  expect(nodefs.existsSync(stale)).toBe(false);
  await b2.lm.close();
});

test('retention runs every log.retention.check.interval.ms', async () => {
  const d = tempDir();
  const b = await start([d], { retentionCheckIntervalMs: 5000 });
  const log = b.lm.getOrCreateLog('t', 0, randomUuid(), config({ retentionBytes: 4000 }));
  produce(log, 60);
  const before = log.numberOfSegments;
  b.scheduler.tick(1000);
  expect(log.numberOfSegments).toBeLessThan(before);
  expect(log.size).toBeLessThanOrEqual(8000);
  await b.lm.close();
});

test('an I/O failure takes the whole log directory offline; the other directory keeps working; no crash', async () => {
  const d1 = tempDir();
  const d2 = tempDir();
  const fs = new FaultyFs();
  const b = await start([d1, d2], {}, fs);
  const failures: string[] = [];
  b.lm.onLogDirFailure((dir) => failures.push(dir));
  const a = b.lm.getOrCreateLog('t', 0, randomUuid());
  const c = b.lm.getOrCreateLog('t', 1, randomUuid());
  const other = b.lm.getOrCreateLog('u', 0, randomUuid());
  const [bad, good] = a.parentDir === other.parentDir ? [a, c] : [a, other];
  const sibling = [a, c, other].find((l) => l !== bad && l.parentDir === bad.parentDir)!;
  produce(bad, 2);
  fs.failNext({ op: 'write', path: bad.dir, errno: 'EIO' });
  expect(code(() => produce(bad, 1))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
  expect(failures).toEqual([bad.parentDir]);
  expect(b.lm.offlineLogDirs).toEqual([bad.parentDir]);
  expect(code(() => sibling.read(0n, 100))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
  expect(code(() => b.lm.getOrCreateLog(bad.topicPartition.topic, bad.topicPartition.partition))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
  produce(good, 2);
  expect(good.logEndOffset).toBe(10n);
  // New logs go to the surviving directory.
  expect(b.lm.getOrCreateLog('v', 0, randomUuid()).parentDir).toBe(good.parentDir);
  await b.lm.close();
  expect(nodefs.existsSync(path.join(bad.parentDir, '.kafka_cleanshutdown'))).toBe(false);
  expect(nodefs.existsSync(path.join(good.parentDir, '.kafka_cleanshutdown'))).toBe(true);
});

test('a checkpoint fsync failure takes its directory offline instead of throwing', async () => {
  const d = tempDir();
  const fs = new FaultyFs();
  const b = await start([d], {}, fs);
  const log = b.lm.getOrCreateLog('t', 0, randomUuid());
  produce(log, 2);
  fs.failNext({ op: 'fsync', path: 'recovery-point-offset-checkpoint.tmp', errno: 'EIO' });
  expect(() => b.lm.checkpointLogRecoveryOffsets()).not.toThrow();
  expect(b.lm.offlineLogDirs).toEqual([path.resolve(d)]);
  expect(log.isOffline).toBe(true);
  await b.lm.close();
});

test('an unreadable log directory at startup is offline, the broker still starts', async () => {
  const good = tempDir();
  const fs = new FaultyFs();
  const badDir = tempDir();
  fs.failNext({ op: 'readdir', path: badDir, errno: 'EIO' });
  const b = await start([badDir, good], {}, fs);
  expect(b.lm.offlineLogDirs).toEqual([path.resolve(badDir)]);
  expect(b.lm.getOrCreateLog('t', 0).parentDir).toBe(path.resolve(good));
  await b.lm.close();
});

test('the flush.ms flusher advances recovery points in the background', async () => {
  const d = tempDir();
  const b = await start([d], { flushCheckIntervalMs: 1000 });
  const log = b.lm.getOrCreateLog('t', 0, randomUuid(), config({ flushMs: 2000, segmentBytes: 1 << 20 }));
  produce(log, 5);
  expect(log.recoveryPoint).toBe(0n);
  b.scheduler.tick(3000);
  await log.whenBackgroundFlushesDone();
  expect(log.recoveryPoint).toBe(log.logEndOffset);
  await b.lm.close();
});

test('flush.messages flushes on the append path', async () => {
  const d = tempDir();
  const b = await start([d]);
  const log = b.lm.getOrCreateLog('t', 0, randomUuid(), config({ flushMessages: 10 }));
  produce(log, 1, 5);
  expect(log.recoveryPoint).toBe(0n);
  produce(log, 1, 5);
  expect(log.recoveryPoint).toBe(10n);
  await b.lm.close();
});

test('a partition that cannot be loaded is unavailable, and its directory gets no clean-shutdown marker', async () => {
  const d = tempDir();
  const b1 = await start([d]);
  produce(b1.lm.getOrCreateLog('t', 0, randomUuid()), 2);
  produce(b1.lm.getOrCreateLog('t', 1, randomUuid()), 2);
  await b1.lm.close();
  nodefs.writeFileSync(path.join(d, 't-1', 'partition.metadata'), 'garbage');
  const b2 = await start([d]);
  expect(b2.lm.getLog('t', 0)?.logEndOffset).toBe(10n);
  expect(b2.lm.getLog('t', 1)).toBeUndefined();
  expect(b2.lm.partitionFailure('t', 1)).toMatch(/malformed partition metadata/);
  expect(code(() => b2.lm.getOrCreateLog('t', 1))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
  await b2.lm.close();
  expect(nodefs.existsSync(path.join(d, '.kafka_cleanshutdown'))).toBe(false);
});

test('closing a manager that never loaded writes neither checkpoints nor the marker', async () => {
  const d = tempDir();
  const lm = new LogManager({ logDirs: [d], fs: new FaultyFs(), logger: new CapturingLogger() });
  expect(() => lm.getOrCreateLog('t', 0)).toThrow(/not loaded/);
  await lm.close();
  expect(nodefs.readdirSync(d)).toEqual([]);
});

test('appending to a deleted log is KAFKA_STORAGE_ERROR but does not fail its directory', async () => {
  const d = tempDir();
  const b = await start([d]);
  const log = b.lm.getOrCreateLog('t', 0, randomUuid());
  produce(log, 1);
  b.lm.deleteLog('t', 0);
  expect(code(() => produce(log, 1))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
  expect(b.lm.offlineLogDirs).toEqual([]);
  expect(b.lm.getOrCreateLog('t', 0, randomUuid()).logEndOffset).toBe(0n);
  await b.lm.close();
});

describe('recovery at startup (issue 5)', () => {
  /** Writes `partitions` logs of ~`mb` MiB each in `dir`, then "crashes" (no marker, no checkpoints). */
  async function crashedDir(dir: string, partitions: number, mb: number, topic = 'big'): Promise<Map<string, bigint>> {
    const b = await start([dir], {}, new FaultyFs());
    const leos = new Map<string, bigint>();
    for (let p = 0; p < partitions; p++) {
      const log = b.lm.getOrCreateLog(topic, p, randomUuid(), config({ segmentBytes: 64 << 20 }));
      const batch = testBatch({ count: 64, valueSize: 1000 });
      while (log.size < mb * 1024 * 1024) log.appendAsLeader(Buffer.from(batch), { leaderEpoch: 0 });
      leos.set(`${topic}-${p}`, log.logEndOffset);
    }
    await b.lm.close();
    for (const f of ['.kafka_cleanshutdown', 'recovery-point-offset-checkpoint']) nodefs.rmSync(path.join(dir, f), { force: true });
    return leos;
  }

  /** A StorageFs that records how many thread-pool reads were in flight at once. */
  class CountingFs extends FaultyFs {
    inFlight = 0;
    maxInFlight = 0;
    override read(fd: number, buf: Buffer, offset: number, length: number, position: number, cb: (err: NodeJS.ErrnoException | null, n: number) => void): void {
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      super.read(fd, buf, offset, length, position, (err, n) => {
        this.inFlight--;
        cb(err, n);
      });
    }
  }

  test('num.recovery.threads.per.data.dir logs of a directory recover at once, with the same results', async () => {
    const d = tempDir();
    const leos = await crashedDir(d, 3, 3);
    for (const threads of [1, 3]) {
      const fs = new CountingFs();
      const b = await start([d], { recoveryThreadsPerDataDir: threads }, fs);
      for (const [key, leo] of leos) {
        const log = b.lm.getLog('big', Number(key.split('-')[1]))!;
        expect(log.logEndOffset).toBe(leo);
        expect(log.loadReport.recoveredSegments).toBe(1);
        expect(log.loadReport.scannedBytes).toBeGreaterThan(3 << 20);
      }
      // RECOVERY_READ_AHEAD reads per log in flight, for up to `threads` logs at a time.
      expect(fs.maxInFlight).toBe(threads * RECOVERY_READ_AHEAD);
      expect(b.logger.matching(new RegExp(`loaded 3 log\\(s\\) in \\d+ ms; recovered 3 \\(.* MB re-read at .* MB/s, 0 truncated\\) with ${threads} recovery thread`)).length).toBe(1);
      await b.lm.close();
      nodefs.rmSync(path.join(d, '.kafka_cleanshutdown'));
      nodefs.rmSync(path.join(d, 'recovery-point-offset-checkpoint'));
    }
  });

  test('an I/O error while a log recovers takes its directory offline; the other directory serves; nothing throws', async () => {
    const bad = tempDir();
    const good = tempDir();
    await crashedDir(bad, 2, 2);
    const goodLeos = await crashedDir(good, 1, 1, 'other');
    const fs = new FaultyFs();
    fs.failNext({ op: 'read', path: path.join(bad, 'big-1'), errno: 'EIO' });
    const b = await start([bad, good], { recoveryThreadsPerDataDir: 2 }, fs);
    expect(b.lm.offlineLogDirs).toEqual([path.resolve(bad)]);
    expect(b.logger.matching(/log directory .* is offline: error loading .*big-1: EIO/).length).toBe(1);
    expect(b.lm.getLog('big', 0)?.isOffline ?? true).toBe(true);
    const served = b.lm.getLog('other', 0)!;
    expect(served.isOffline).toBe(false);
    expect(served.logEndOffset).toBe(goodLeos.get('other-0'));
    produce(served, 1);
    // A partition known before (not new) is not re-created elsewhere while a directory is offline.
    expect(code(() => b.lm.getOrCreateLog('big', 1, undefined, undefined, { isNew: false }))).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect(b.lm.getOrCreateLog('fresh', 0, undefined, undefined, { isNew: true }).parentDir).toBe(path.resolve(good));
    await b.lm.close();
    expect(nodefs.existsSync(path.join(bad, '.kafka_cleanshutdown'))).toBe(false);
  });

  test('a log directory whose index file is unreadable (EISDIR, as root cannot chmod a file unreadable) goes offline', async () => {
    const bad = tempDir();
    const good = tempDir();
    const b0 = await start([bad], {}, new FaultyFs());
    produce(b0.lm.getOrCreateLog('t', 0, randomUuid()), 30);
    await b0.lm.close();
    const idx = path.join(bad, 't-0', '00000000000000000000.index');
    nodefs.rmSync(idx);
    nodefs.mkdirSync(idx);
    const b = await start([bad, good]);
    expect(b.lm.offlineLogDirs).toEqual([path.resolve(bad)]);
    expect(b.lm.getLog('t', 0)?.isOffline ?? true).toBe(true);
    await b.lm.close();
  });
});
