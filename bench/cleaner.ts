/**
 * Log cleaner rows of the bench (issue 13), run in the bench process itself (storage level, no
 * broker process):
 * - 'cleaner <size> records': one cleaning pass (Cleaner.clean, Kafka's defaults: a 128 MiB offset
 *   map, 256 KiB read and write buffers, load factor 0.9, no throttle, a yield to the event loop
 *   after every buffer as in the broker) over a compacted log of <size>-byte values in batches of
 *   100 records, each key written 10 times (so ~90% of it goes), page cache warm (the copy was
 *   just written). Reported: MB/s read and MB/s written by the pass, and both as a ratio to
 *   CRC32C over the same bytes in memory (the floor of anything that checks every batch; the
 *   cleaner CRCs what it reads and what it writes, and hashes every key twice).
 * - 'coordinator load after N commits': a GroupCoordinator loading a __consumer_offsets partition
 *   of N offset commits (20 groups x 10 partitions, one batch per request) before and after it is
 *   cleaned (two passes: tombstones removed), with the records each load replayed.
 * Each figure is the median of --runs runs (a fresh copy of the log per cleaning run).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32c, crc32cImplementation } from '../protocol/records/crc32c';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { Logger } from '../common/logger';
import { MockTime } from '../common/testing/mock-time';
import { SystemTime } from '../common/time';
import { TimerScheduler } from '../common/scheduler';
import { Cleaner } from '../storage/cleaner/cleaner';
import { LogToClean } from '../storage/cleaner/log-cleaner-manager';
import { SkimpyOffsetMap } from '../storage/cleaner/offset-map';
import { Throttler } from '../storage/cleaner/throttler';
import { logConfig } from '../storage/log-config';
import { UnifiedLog } from '../storage/unified-log';
import { OFFSETS_TP, cleanTwice, loadOffsetsPartition, writeOffsetCommits } from '../coordinator/testing/offsets-log';
import { makeTempDir, removeTempDir } from './proc';

const MiB = 1024 * 1024;

export interface CleanerRow {
  name: string;
  logMB: number;
  records: number;
  /** Medians over the runs. */
  readMBps: number;
  writtenMBps: number;
  crcMBps: number;
  readRatio: number;
  writtenRatio: number;
  seconds: number;
  writtenMB: number;
}

export interface CoordinatorLoadRow {
  name: string;
  commits: number;
  beforeMs: number;
  beforeRecords: number;
  afterMs: number;
  afterRecords: number;
  ratio: number;
}

export const cleanerRowName = (size: number): string => `cleaner ${size >= 1024 ? `${size / 1024}KiB` : `${size}B`} records`;
export const coordinatorLoadName = (commits: number): string => `coordinator load after ${commits.toLocaleString('en-US')} commits`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function openLog(dir: string, config = logConfig({ cleanupPolicy: ['compact'], segmentBytes: 64 * MiB })): UnifiedLog {
  return UnifiedLog.load({ dir, tp: { topic: 'bench', partition: 0 }, config, time: SystemTime, scheduler: new TimerScheduler(), hadCleanShutdown: true });
}

/** Writes ~`mb` MiB of keyed records of `size`-byte values (each key 10 times) into `dir`; returns the record count. */
function writeCompactedLog(dir: string, mb: number, size: number): number {
  const log = openLog(dir);
  const perRecord = size + 30;
  const total = Math.floor((mb * MiB) / perRecord);
  const keys = Math.max(1, Math.floor(total / 10));
  const value = Buffer.alloc(size, 0x61);
  for (let i = 0; i < total; i += 100) {
    const n = Math.min(100, total - i);
    log.appendAsLeader(buildRecordBatch(Array.from({ length: n }, (_, j) => ({ key: `key-${(i + j) % keys}`, value })), { now: 1_700_000_000_000 }), { leaderEpoch: 0 });
  }
  log.roll();
  log.flush();
  log.close();
  return total;
}

/** The CRCs go somewhere, so that nothing optimizes the loop away. */
let crcSink = 0;

function crcMBps(dir: string): { mbps: number; bytes: number } {
  const bufs = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .map((f) => fs.readFileSync(path.join(dir, f)));
  const bytes = bufs.reduce((n, b) => n + b.length, 0);
  const t = process.hrtime.bigint();
  for (const b of bufs) for (let p = 0; p < b.length; p += MiB) crcSink ^= crc32c(b.subarray(p, Math.min(b.length, p + MiB)));
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  return { mbps: bytes / MiB / s, bytes };
}

async function cleanerRow(size: number, mb: number, runs: number, log: (s: string) => void): Promise<CleanerRow> {
  const root = makeTempDir('krill-bench-cleaner-');
  try {
    const pristine = path.join(root, 'pristine', 'bench-0');
    const records = writeCompactedLog(pristine, mb, size);
    const samples: { read: number; written: number; crc: number; secs: number; writtenMB: number; logMB: number }[] = [];
    for (let r = 0; r < runs; r++) {
      const dir = path.join(root, `run${r}`, 'bench-0');
      fs.cpSync(pristine, dir, { recursive: true });
      const crc = crcMBps(dir);
      const l = openLog(dir);
      const cleaner = new Cleaner({
        id: 0,
        offsetMap: new SkimpyOffsetMap(128 * MiB),
        ioBufferSize: 256 * 1024,
        maxIoBufferSize: MiB + 12,
        dupBufferLoadFactor: 0.9,
        throttler: new Throttler(Number.MAX_VALUE),
        time: SystemTime,
        checkDone: () => undefined,
        logger: Logger.silent(),
      });
      const t = process.hrtime.bigint();
      const [, stats] = await cleaner.clean(new LogToClean(l.topicPartition, l, 0n, l.activeSegment.baseOffset, false));
      const secs = Number(process.hrtime.bigint() - t) / 1e9;
      l.close();
      samples.push({ read: stats.bytesRead / MiB / secs, written: stats.bytesWritten / MiB / secs, crc: crc.mbps, secs, writtenMB: stats.bytesWritten / MiB, logMB: crc.bytes / MiB });
      log(`  ${cleanerRowName(size)} run ${r + 1}/${runs}: ${(stats.bytesRead / MiB).toFixed(0)} MB read in ${secs.toFixed(2)} s (${samples[r].read.toFixed(0)} MB/s), crc32c ${crc.mbps.toFixed(0)} MB/s`);
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    }
    const crc = median(samples.map((s) => s.crc));
    const read = median(samples.map((s) => s.read));
    const written = median(samples.map((s) => s.written));
    return {
      name: cleanerRowName(size),
      logMB: Math.round(samples[0].logMB),
      records,
      readMBps: Math.round(read),
      writtenMBps: Math.round(written),
      crcMBps: Math.round(crc),
      readRatio: read / crc,
      writtenRatio: written / crc,
      seconds: median(samples.map((s) => s.secs)),
      writtenMB: samples[0].writtenMB,
    };
  } finally {
    removeTempDir(root);
  }
}

async function coordinatorRow(commits: number, runs: number, log: (s: string) => void): Promise<CoordinatorLoadRow> {
  const root = makeTempDir('krill-bench-offsets-');
  try {
    const time = new MockTime(1_700_000_000_000);
    const offsetsLog = UnifiedLog.load({
      dir: path.join(root, '__consumer_offsets-0'),
      tp: OFFSETS_TP,
      config: logConfig({ cleanupPolicy: ['compact'], segmentBytes: 100 * MiB, deleteRetentionMs: 0 }),
      time,
      scheduler: new TimerScheduler(),
    });
    writeOffsetCommits(offsetsLog, { commits, groups: 20, partitions: 10 }, time.now);
    const before: number[] = [];
    let beforeRecords = 0;
    for (let r = 0; r < runs; r++) {
      const l = await loadOffsetsPartition(offsetsLog, 20);
      before.push(l.ms);
      beforeRecords = l.records;
    }
    await cleanTwice(offsetsLog, time);
    const after: number[] = [];
    let afterRecords = 0;
    for (let r = 0; r < runs; r++) {
      const l = await loadOffsetsPartition(offsetsLog, 20);
      after.push(l.ms);
      afterRecords = l.records;
    }
    offsetsLog.close();
    const b = median(before);
    const a = median(after);
    log(`  ${coordinatorLoadName(commits)}: ${b.toFixed(0)} ms (${beforeRecords} records), cleaned ${a.toFixed(1)} ms (${afterRecords} records)`);
    return { name: coordinatorLoadName(commits), commits, beforeMs: b, beforeRecords, afterMs: a, afterRecords, ratio: b / a };
  } finally {
    removeTempDir(root);
  }
}

/** The selected cleaner and coordinator-load rows. */
export async function measureCleaner(
  o: { quick: boolean; runs: number },
  selected: (name: string) => boolean,
  log: (s: string) => void,
): Promise<{ cleaner: CleanerRow[]; coordinatorLoad: CoordinatorLoadRow[] }> {
  const cleaner: CleanerRow[] = [];
  const sizes = o.quick ? [{ size: 100, mb: 8 }, { size: 1024, mb: 16 }] : [{ size: 100, mb: 64 }, { size: 1024, mb: 256 }];
  for (const { size, mb } of sizes) {
    if (!selected(cleanerRowName(size))) continue;
    log(`${cleanerRowName(size)} (${mb} MB, crc32c: ${crc32cImplementation})`);
    cleaner.push(await cleanerRow(size, mb, o.runs, log));
  }
  const coordinatorLoad: CoordinatorLoadRow[] = [];
  const commits = o.quick ? 100_000 : 1_000_000;
  if (selected(coordinatorLoadName(commits))) {
    log(coordinatorLoadName(commits));
    coordinatorLoad.push(await coordinatorRow(commits, o.runs, log));
  }
  return { cleaner, coordinatorLoad };
}
