import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { LogConfig, logConfig } from './log-config';
import { logFile, offsetIndexFile, timeIndexFile } from './log-file-utils';
import { recordsBuffer } from './log-segment';
import { batchAt, decodeBatches, offsetsIn, testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { CapturingLogger, MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { UnifiedLog } from './unified-log';

afterAll(removeTempDirs);

const TP = { topic: 'orders', partition: 3 };

function load(
  dir: string,
  opts: { clean?: boolean; recoveryPoint?: bigint; logStartOffset?: bigint; config?: Partial<LogConfig> } = {},
): { log: UnifiedLog; logger: CapturingLogger } {
  const logger = new CapturingLogger();
  const time = new MockTime();
  const log = UnifiedLog.load({
    dir,
    tp: TP,
    config: logConfig({ indexIntervalBytes: 200, ...opts.config }),
    fs: new FaultyFs(),
    time,
    scheduler: new MockScheduler(time),
    logger,
    hadCleanShutdown: opts.clean ?? false,
    recoveryPoint: opts.recoveryPoint ?? 0n,
    logStartOffset: opts.logStartOffset ?? 0n,
  });
  return { log, logger };
}

function newDir(): string {
  return path.join(tempDir(), 'orders-3');
}

/** Writes a log through UnifiedLog: `batches` batches of `count` records, small segments. */
function writeLog(dir: string, batches: number, count = 4, config: Partial<LogConfig> = { segmentBytes: 2000 }): UnifiedLog {
  const { log } = load(dir, { config });
  for (let i = 0; i < batches; i++) log.appendAsLeader(testBatch({ count, valueSize: 60, prefix: `r${i}-` }), { leaderEpoch: 1 });
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

function allOffsets(log: UnifiedLog): bigint[] {
  const out: bigint[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const buf = recordsBuffer(log.read(next, 1 << 20, { isolation: 'LOG_END', minOneMessage: true }));
    if (buf.length === 0) break;
    const offs = offsetsIn(buf);
    out.push(...offs);
    next = offs[offs.length - 1] + 1n;
  }
  return out;
}

function range(from: number, to: number): bigint[] {
  return Array.from({ length: to - from }, (_, i) => BigInt(from + i));
}

function lastLogFile(dir: string): string {
  const logs = nodefs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return path.join(dir, logs[logs.length - 1]);
}

function segmentFiles(dir: string): string[] {
  return nodefs.readdirSync(dir).sort();
}

describe('clean restart', () => {
  test('no segment is re-read; indexes load from disk and lookups work', () => {
    const dir = newDir();
    const log = writeLog(dir, 60);
    const leo = log.logEndOffset;
    const entries = log.logSegments().map((s) => s.offsetIndex.entries);
    log.flush();
    log.close();
    const { log: again } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    expect(again.loadReport).toMatchObject({ recoveredSegments: 0, rebuiltIndexes: 0, truncatedBytes: 0 });
    expect(again.logEndOffset).toBe(leo);
    expect(again.recoveryPoint).toBe(leo);
    expect(again.logSegments().map((s) => s.offsetIndex.entries)).toEqual(entries);
    expect(allOffsets(again)).toEqual(range(0, Number(leo)));
    for (const seg of again.logSegments()) {
      const h = seg.translateOffset(seg.baseOffset + 5n);
      expect(h!.baseOffset <= seg.baseOffset + 5n && seg.baseOffset + 5n <= h!.lastOffset).toBe(true);
    }
    expect(again.appendAsLeader(testBatch(), { leaderEpoch: 2 }).firstOffset).toBe(leo);
  });
});

describe('crash restart (no clean-shutdown marker)', () => {
  test('a torn last batch is cut off; everything acknowledged survives', () => {
    const dir = newDir();
    const log = writeLog(dir, 40);
    const leo = log.logEndOffset;
    const torn = testBatch({ count: 4, valueSize: 60, baseOffset: leo });
    nodefs.appendFileSync(lastLogFile(dir), torn.subarray(0, torn.length - 17));
    const { log: again, logger } = load(dir);
    expect(again.logEndOffset).toBe(leo);
    expect(allOffsets(again)).toEqual(range(0, Number(leo)));
    expect(again.loadReport.truncatedBytes).toBe(torn.length - 17);
    expect(again.loadReport.truncatedAtOffset).toBe(leo);
    expect(logger.matching(new RegExp(`truncated the log at offset ${leo}.*${torn.length - 17} bytes discarded`)).length).toBe(1);
    expect(again.appendAsLeader(testBatch(), { leaderEpoch: 2 }).firstOffset).toBe(leo);
  });

  test('a zero-filled tail (preallocated or never written) is cut off', () => {
    const dir = newDir();
    const leo = writeLog(dir, 30).logEndOffset;
    nodefs.appendFileSync(lastLogFile(dir), Buffer.alloc(8192));
    const { log, logger } = load(dir);
    expect(log.logEndOffset).toBe(leo);
    expect(log.loadReport.truncatedBytes).toBe(8192);
    expect(logger.matching(/zero-filled tail/).length).toBe(1);
  });

  test('garbage after the last batch is cut off', () => {
    const dir = newDir();
    const leo = writeLog(dir, 30).logEndOffset;
    const junk = Buffer.alloc(5000);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) & 0xff;
    nodefs.appendFileSync(lastLogFile(dir), junk);
    const { log } = load(dir);
    expect(log.logEndOffset).toBe(leo);
    expect(allOffsets(log)).toEqual(range(0, Number(leo)));
  });

  test('a corrupt batch in the middle of the active segment: truncate there, later batches go', () => {
    const dir = newDir();
    writeLog(dir, 10, 4, { segmentBytes: 1 << 20 });
    const file = lastLogFile(dir);
    const bytes = nodefs.readFileSync(file);
    const batches = decodeBatches(bytes);
    const victim = batches[6];
    bytes[victim.position + 70] ^= 0x55;
    nodefs.writeFileSync(file, bytes);
    const { log, logger } = load(dir);
    expect(log.logEndOffset).toBe(victim.baseOffset);
    expect(allOffsets(log)).toEqual(range(0, Number(victim.baseOffset)));
    expect(logger.matching(/CRC/).length).toBeGreaterThan(0);
  });

  test('only segments from the recovery point on are re-read', () => {
    const dir = newDir();
    const log = writeLog(dir, 60);
    const segs = log.logSegments();
    expect(segs.length).toBeGreaterThan(4);
    const rp = segs[segs.length - 2].baseOffset;
    const { log: again } = load(dir, { recoveryPoint: rp, config: { segmentBytes: 2000 } });
    expect(again.loadReport.recoveredSegments).toBe(2);
    expect(again.logEndOffset).toBe(log.logEndOffset);
  });

  test('KAFKA-3955: non-monotonic offsets (15000362 then 15000337) in a middle segment truncate there and drop later segments; startup succeeds', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    const A = 15_000_000n;
    const B = 15_000_100n;
    const C = 15_000_400n;
    const segA: Buffer[] = [];
    for (let o = A; o < B; o += 10n) segA.push(batchAt(o, 10));
    const segB: Buffer[] = [];
    for (let o = B; o < 15_000_360n; o += 20n) segB.push(batchAt(o, 20)); // ..15000359
    segB.push(batchAt(15_000_360n, 3)); // 15000360..15000362
    const goodB = Buffer.concat(segB).length;
    segB.push(batchAt(15_000_337n, 10)); // goes backwards
    segB.push(batchAt(15_000_347n, 40));
    const segC: Buffer[] = [];
    for (let o = C; o < 15_000_500n; o += 25n) segC.push(batchAt(o, 25));
    nodefs.writeFileSync(logFile(dir, A), Buffer.concat(segA));
    nodefs.writeFileSync(logFile(dir, B), Buffer.concat(segB));
    nodefs.writeFileSync(logFile(dir, C), Buffer.concat(segC));

    const { log, logger } = load(dir, { recoveryPoint: A });
    expect(log.logEndOffset).toBe(15_000_363n);
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([A, B]);
    expect(log.logSegments()[1].size).toBe(goodB);
    expect(log.loadReport.deletedSegments).toBe(1);
    expect(log.loadReport.truncatedAtOffset).toBe(15_000_363n);
    expect(logger.matching(/non-monotonic or duplicate offsets: batch base offset 15000337 is not above the previous batch's last offset 15000362/).length).toBe(1);
    expect(nodefs.existsSync(logFile(dir, C))).toBe(false);
    expect(allOffsets(log)).toEqual(range(15_000_000, 15_000_363));
    // The rebuilt index of the truncated segment never saw the bad batch.
    expect(log.logSegments()[1].offsetIndex.lastOffset <= 15_000_362n).toBe(true);
    expect(log.appendAsFollower(batchAt(15_000_363n, 2)).lastOffset).toBe(15_000_364n);
  });

  test('KAFKA-3955 through the index-rebuild path: same truncation after a clean shutdown with the index missing', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    const segB = [batchAt(100n, 20), batchAt(120n, 5), batchAt(110n, 5), batchAt(130n, 5)];
    nodefs.writeFileSync(logFile(dir, 0n), Buffer.concat([batchAt(0n, 50), batchAt(50n, 50)]));
    nodefs.writeFileSync(logFile(dir, 100n), Buffer.concat(segB));
    nodefs.writeFileSync(logFile(dir, 200n), batchAt(200n, 10));
    // Segment 0 has valid, empty indexes; segments 100 and 200 have none.
    nodefs.writeFileSync(offsetIndexFile(dir, 0n), Buffer.alloc(0));
    nodefs.writeFileSync(timeIndexFile(dir, 0n), Buffer.alloc(0));
    const { log } = load(dir, { clean: true, recoveryPoint: 210n });
    expect(log.logEndOffset).toBe(125n);
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([0n, 100n]);
  });

  test('a segment emptied by truncation (not the first) is removed with everything after it', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    nodefs.writeFileSync(logFile(dir, 0n), Buffer.concat([batchAt(0n, 10), batchAt(10n, 10)]));
    // Its first batch overlaps the previous segment's offsets.
    nodefs.writeFileSync(logFile(dir, 20n), Buffer.concat([batchAt(15n, 10), batchAt(25n, 5)]));
    nodefs.writeFileSync(logFile(dir, 30n), batchAt(30n, 5));
    const { log } = load(dir);
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([0n]);
    expect(log.logEndOffset).toBe(20n);
    expect(segmentFiles(dir).filter((f) => f.endsWith('.log'))).toEqual(['00000000000000000000.log']);
  });

  test('a batch below its segment base offset is invalid', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    nodefs.writeFileSync(logFile(dir, 50n), Buffer.concat([batchAt(50n, 5), batchAt(40n, 5)]));
    const { log } = load(dir);
    expect(log.logEndOffset).toBe(55n);
  });

  test('log end below the checkpointed log start offset: start over at the checkpoint', () => {
    const dir = newDir();
    writeLog(dir, 5, 2);
    const { log } = load(dir, { logStartOffset: 1000n });
    expect([log.logStartOffset, log.logEndOffset, log.numberOfSegments]).toEqual([1000n, 1000n, 1]);
  });
});

describe('indexes in doubt are rebuilt, even after a clean shutdown', () => {
  function cleanLog(): { dir: string; leo: bigint; entries: number[] } {
    const dir = newDir();
    const log = writeLog(dir, 60);
    log.flush();
    log.close();
    return { dir, leo: log.logEndOffset, entries: log.logSegments().map((s) => s.offsetIndex.entries) };
  }

  const corruptions: [string, (file: string) => void][] = [
    ['a size that is not a multiple of 8', (f) => nodefs.appendFileSync(f, Buffer.from([1, 2, 3]))],
    [
      'entries going backwards',
      (f) => {
        const b = nodefs.readFileSync(f);
        b.writeInt32BE(b.readInt32BE(0) + 1000, 8);
        nodefs.writeFileSync(f, b);
      },
    ],
    [
      'an entry pointing past the segment',
      (f) => {
        const b = nodefs.readFileSync(f);
        b.writeInt32BE(0x7fff0000, b.length - 4);
        nodefs.writeFileSync(f, b);
      },
    ],
  ];
  for (const [what, corrupt] of corruptions) {
    test(`offset index with ${what}`, () => {
      const { dir, leo, entries } = cleanLog();
      const middle = nodefs.readdirSync(dir).filter((f) => f.endsWith('.index')).sort()[1];
      corrupt(path.join(dir, middle));
      const { log, logger } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
      expect(log.loadReport.rebuiltIndexes).toBe(1);
      expect(log.loadReport.recoveredSegments).toBe(1);
      expect(log.logEndOffset).toBe(leo);
      expect(log.logSegments().map((s) => s.offsetIndex.entries).length).toBe(entries.length);
      expect(allOffsets(log)).toEqual(range(0, Number(leo)));
      expect(logger.matching(/rebuilding its indexes/).length).toBe(1);
      expect(nodefs.statSync(path.join(dir, middle)).size % 8).toBe(0);
    });
  }

  test('a time index going backwards', () => {
    const { dir, leo } = cleanLog();
    const f = path.join(dir, nodefs.readdirSync(dir).filter((x) => x.endsWith('.timeindex')).sort()[0]);
    const b = nodefs.readFileSync(f);
    expect(b.length).toBeGreaterThanOrEqual(12);
    nodefs.writeFileSync(f, Buffer.concat([b, b.subarray(0, 12)]));
    const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    expect(log.loadReport.rebuiltIndexes).toBe(1);
    expect(log.logEndOffset).toBe(leo);
  });

  test('a missing index file', () => {
    const { dir, leo } = cleanLog();
    nodefs.unlinkSync(offsetIndexFile(dir, 0n));
    const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    expect(log.loadReport.rebuiltIndexes).toBe(1);
    expect(nodefs.existsSync(offsetIndexFile(dir, 0n))).toBe(true);
    expect(log.logSegments()[0].offsetIndex.entries).toBeGreaterThan(0);
  });

  test('a Kafka-style preallocated zero tail on an index is trimmed, not a reason to rebuild', () => {
    const { dir, leo, entries } = cleanLog();
    const f = offsetIndexFile(dir, 0n);
    const t = timeIndexFile(dir, 0n);
    const before = nodefs.statSync(f).size;
    nodefs.appendFileSync(f, Buffer.alloc(64 * 1024));
    nodefs.appendFileSync(t, Buffer.alloc(12 * 1000));
    const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    expect(log.loadReport.rebuiltIndexes).toBe(0);
    expect(log.logSegments()[0].offsetIndex.entries).toBe(entries[0]);
    expect(nodefs.statSync(f).size).toBe(before);
  });

  test('a .log whose tail does not end on a batch boundary is recovered even with the marker', () => {
    const { dir, leo } = cleanLog();
    nodefs.appendFileSync(lastLogFile(dir), Buffer.from('not a batch at all'));
    const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    expect(log.logEndOffset).toBe(leo);
    expect(log.loadReport.truncatedBytes).toBe(18);
  });
});

describe('temporary files', () => {
  test('stray .deleted and .cleaned files and orphaned indexes are removed', () => {
    const dir = newDir();
    const log = writeLog(dir, 10);
    log.close();
    nodefs.writeFileSync(path.join(dir, '00000000000000000000.log.deleted'), 'x');
    nodefs.writeFileSync(path.join(dir, '00000000000000000500.log.cleaned'), 'x');
    nodefs.writeFileSync(path.join(dir, '00000000000000000900.index'), Buffer.alloc(8));
    load(dir, { clean: true, recoveryPoint: log.logEndOffset });
    const files = segmentFiles(dir);
    expect(files.some((f) => f.endsWith('.deleted') || f.endsWith('.cleaned'))).toBe(false);
    expect(files).not.toContain('00000000000000000900.index');
  });

  test('a .swap segment (interrupted compaction) replaces the segments it covers', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    nodefs.writeFileSync(logFile(dir, 0n), Buffer.concat([batchAt(0n, 50), batchAt(50n, 50)]));
    nodefs.writeFileSync(logFile(dir, 100n), Buffer.concat([batchAt(100n, 50)]));
    nodefs.writeFileSync(logFile(dir, 150n), Buffer.concat([batchAt(150n, 10)]));
    // The cleaner's output for [0, 150): a subset of the records, offsets preserved.
    nodefs.writeFileSync(logFile(dir, 0n, '.swap'), Buffer.concat([batchAt(10n, 5), batchAt(120n, 30)]));
    // Only a compacted topic has swap files, and only there are offset gaps legal.
    const { log } = load(dir, { config: { cleanupPolicy: ['compact'] } });
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([0n, 150n]);
    expect(allOffsets(log)).toEqual([...range(10, 15), ...range(120, 160)]);
    expect(segmentFiles(dir).some((f) => f.endsWith('.swap'))).toBe(false);
  });
});

test('recovery leaves no index write handles open and no index bytes resident for cold segments', async () => {
  const dir = newDir();
  const fs = new FaultyFs();
  const time = new MockTime();
  const make = () =>
    UnifiedLog.load({ dir, tp: TP, config: logConfig({ segmentBytes: 2000, indexIntervalBytes: 200 }), fs, time, scheduler: new MockScheduler(time) });
  const log = make();
  for (let i = 0; i < 40; i++) log.appendAsLeader(testBatch({ count: 4, valueSize: 60 }), { leaderEpoch: 1 });
  // The fsyncs started at each roll finish on the thread pool; their files close after them.
  await log.whenBackgroundFlushesDone();
  log.close();
  expect(fs.openFdCount).toBe(0);
  const again = make();
  const segs = again.logSegments();
  expect(segs.length).toBeGreaterThan(3);
  expect(segs.slice(0, -1).every((s) => !s.offsetIndex.isLoaded && !s.timeIndex.isLoaded)).toBe(true);
  // One .log handle per segment (opened to re-read it), none for indexes.
  expect(fs.openFdCount).toBe(segs.length);
  again.close();
  expect(fs.openFdCount).toBe(0);
});

describe('hardened recovery (issue 5)', () => {
  function cleanLog(batches = 60): { dir: string; leo: bigint } {
    const dir = newDir();
    const log = writeLog(dir, batches);
    log.flush();
    log.close();
    return { dir, leo: log.logEndOffset };
  }

  function indexFiles(dir: string): Map<string, Buffer> {
    const m = new Map<string, Buffer>();
    for (const f of segmentFiles(dir)) if (f.endsWith('.index') || f.endsWith('.timeindex')) m.set(f, nodefs.readFileSync(path.join(dir, f)));
    return m;
  }

  test('the append path and recovery write identical indexes (per batch, Kafka 3.x)', () => {
    const { dir, leo } = cleanLog();
    const before = indexFiles(dir);
    for (const f of before.keys()) nodefs.unlinkSync(path.join(dir, f));
    const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
    log.close();
    const after = indexFiles(dir);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [f, b] of before) expect({ f, same: after.get(f)?.equals(b) }).toEqual({ f, same: true });
  });

  test('a single flipped bit anywhere in an index (after a clean shutdown) is found and the index rebuilt', () => {
    const { dir, leo } = cleanLog();
    const before = indexFiles(dir);
    let rng = 12345;
    const next = () => (rng = (rng * 1103515245 + 12345) & 0x7fffffff);
    const names = [...before.keys()].filter((f) => before.get(f)!.length > 0);
    for (let i = 0; i < 60; i++) {
      const f = names[next() % names.length];
      const orig = before.get(f)!;
      const b = Buffer.from(orig);
      const bit = next() % (b.length * 8);
      b[bit >> 3] ^= 1 << (bit & 7);
      nodefs.writeFileSync(path.join(dir, f), b);
      const { log } = load(dir, { clean: true, recoveryPoint: leo, config: { segmentBytes: 2000 } });
      expect({ f, bit, rebuilt: log.loadReport.rebuiltIndexes }).toEqual({ f, bit, rebuilt: 1 });
      expect(log.logEndOffset).toBe(leo);
      log.close();
      expect({ f, bit, same: nodefs.readFileSync(path.join(dir, f)).equals(orig) }).toEqual({ f, bit, same: true });
    }
  });

  test('loadAsync (read-ahead on the thread pool) recovers exactly like load', async () => {
    const make = (): string => {
      const dir = newDir();
      const log = writeLog(dir, 40, 4, { segmentBytes: 4000 });
      log.close();
      // A corrupt batch in the middle of the second segment.
      const seg = path.join(dir, segmentFiles(dir).filter((f) => f.endsWith('.log'))[1]);
      const b = nodefs.readFileSync(seg);
      b[Math.floor(b.length / 2)] ^= 0x40;
      nodefs.writeFileSync(seg, b);
      return dir;
    };
    const a = make();
    const b = make();
    const sync = load(a).log;
    const logger = new CapturingLogger();
    const time = new MockTime();
    const asyncLog = await UnifiedLog.loadAsync({
      dir: b,
      tp: TP,
      config: logConfig({ indexIntervalBytes: 200, segmentBytes: 4000 }),
      fs: new FaultyFs(),
      time,
      scheduler: new MockScheduler(time),
      logger,
    });
    expect(asyncLog.logEndOffset).toBe(sync.logEndOffset);
    expect(asyncLog.loadReport.truncatedAtOffset).toBe(sync.loadReport.truncatedAtOffset);
    expect(asyncLog.loadReport.truncatedBytes).toBe(sync.loadReport.truncatedBytes);
    expect(allOffsets(asyncLog)).toEqual(allOffsets(sync));
    expect(segmentFiles(b)).toEqual(segmentFiles(a));
    for (const f of segmentFiles(a)) expect(nodefs.readFileSync(path.join(b, f)).equals(nodefs.readFileSync(path.join(a, f)))).toBe(true);
  });

  test('the truncation line names the offset, the position and every byte removed (cut tail + later segments)', () => {
    const dir = newDir();
    const log = writeLog(dir, 30);
    log.close();
    const logs = segmentFiles(dir).filter((f) => f.endsWith('.log'));
    expect(logs.length).toBeGreaterThan(3);
    const victim = path.join(dir, logs[1]);
    const b = nodefs.readFileSync(victim);
    const batches = decodeBatches(b);
    b[batches[1].position + 30] ^= 1; // under the CRC of the second batch
    nodefs.writeFileSync(victim, b);
    const laterBytes = logs.slice(2).reduce((n, f) => n + nodefs.statSync(path.join(dir, f)).size, 0);
    const { log: again, logger } = load(dir, { config: { segmentBytes: 2000 } });
    const cut = b.length - batches[1].position;
    expect(again.logEndOffset).toBe(batches[1].baseOffset);
    expect(again.loadReport.truncatedBytes).toBe(cut + laterBytes);
    const line = logger.matching(/recovery truncated the log/)[0];
    expect(line).toContain(`recovery truncated the log at offset ${batches[1].baseOffset}: segment ${batches[0].baseOffset} cut at position ${batches[1].position} (${cut} bytes discarded)`);
    expect(line).toContain(`${logs.length - 2} later segment(s) with ${laterBytes} bytes deleted; reason: record batch CRC mismatch`);
  });

  test('progress lines while recovering (here on every chunk and segment)', () => {
    const dir = newDir();
    writeLog(dir, 20).close();
    const logger = new CapturingLogger();
    const time = new MockTime();
    UnifiedLog.load({
      dir,
      tp: TP,
      config: logConfig({ indexIntervalBytes: 200, segmentBytes: 2000 }),
      time,
      scheduler: new MockScheduler(time),
      logger,
      recoveryProgressIntervalMs: 0,
    });
    const lines = logger.matching(/recovering segment \d+ of \d+ \(base offset \d+\): [\d.]+ of [\d.]+ MB scanned, (\d+|-) MB\/s/);
    expect(lines.length).toBeGreaterThan(3);
    expect(logger.matching(/recovered \d+ segment\(s\), [\d.]+ MB in \d+ ms \((\d+|-) MB\/s\); log end offset 80/).length).toBe(1);
  });

  test('epochs and timestamps through the loader: a batch with a lower leader epoch ends the log', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    nodefs.writeFileSync(
      logFile(dir, 0n),
      Buffer.concat([batchAt(0n, 5, { partitionLeaderEpoch: 4 }), batchAt(5n, 5, { partitionLeaderEpoch: 3 }), batchAt(10n, 5, { partitionLeaderEpoch: 4 })]),
    );
    const { log, logger } = load(dir);
    expect(log.logEndOffset).toBe(5n);
    expect(logger.matching(/leader epoch 3 is below the epoch 4/).length).toBe(1);
  });

  test('the leader epoch cache learns epochs from re-read batches its checkpoint missed', () => {
    const dir = newDir();
    const { log } = load(dir);
    log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 1 });
    const checkpoint = nodefs.readFileSync(path.join(dir, 'leader-epoch-checkpoint'));
    log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 2 });
    log.close();
    // As if the broker died between the .log write and the checkpoint write.
    nodefs.writeFileSync(path.join(dir, 'leader-epoch-checkpoint'), checkpoint);
    const again = load(dir).log;
    expect(again.latestEpoch).toBe(2);
    expect(again.endOffsetForEpoch(1)).toEqual({ epoch: 1, endOffset: 2n });
  });

  test('a gap between two trusted segments (non-compacted) recovers the later one and cuts there', () => {
    const dir = newDir();
    nodefs.mkdirSync(dir, { recursive: true });
    nodefs.writeFileSync(logFile(dir, 0n), batchAt(0n, 10));
    nodefs.writeFileSync(logFile(dir, 12n), batchAt(12n, 10));
    const { log, logger } = load(dir, { clean: true, recoveryPoint: 22n });
    expect(log.logEndOffset).toBe(10n);
    expect(logger.matching(/segment base offset 12 does not follow the previous segment's last offset 9/).length).toBeGreaterThan(0);
  });
});
