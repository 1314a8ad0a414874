/**
 * Recovery speed (issue 5): how fast krill re-reads a log after a crash, against CRC32C over the
 * same bytes, the floor of any recovery that checks every batch. Target: >= 0.5x the CRC speed.
 *
 *   npm run build && node dist/bench/recovery.js [--mb 1024] [--batch-kb 16] [--runs 3]
 *                                                [--partitions 1] [--threads 1,2,4] [--json]
 *
 * Writes one partition directory per partition (Kafka's layout, batches of ~--batch-kb KiB with
 * 1 KiB records, offsets assigned, one 1 GiB segment per GiB) in a temp dir, then measures, each
 * --runs times (median reported), with the page cache warm (the files were just written; this is
 * the CPU cost of recovery, not the disk's):
 * - crc32c:      CRC32C over the file's bytes already in memory (1 MiB slices);
 * - read+crc32c: read the file in 1 MiB chunks and CRC each (what any checking reader pays);
 * - recovery sync / async: krill's log loader with no clean-shutdown marker and recovery point 0,
 *   indexes deleted (every segment re-read: framing, CRC, offsets, epochs, timestamps, indexes
 *   rebuilt and written); sync = synchronous reads, async = read-ahead on the thread pool;
 * - clean load: the same directory after a clean shutdown (indexes checked against batch headers);
 * - with --partitions > 1, the log manager recovering them all with num.recovery.threads.per.data.dir
 *   = each of --threads.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32c, crc32cImplementation } from '../protocol/records/crc32c';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { nodeFs } from '../storage/fs';
import { DEFAULT_LOG_CONFIG } from '../storage/log-config';
import { LoadParams, loadLog, loadLogAsync } from '../storage/log-loader';
import { LogManager } from '../storage/log-manager';
import { Logger } from '../common/logger';
import { makeTempDir, removeTempDir } from './proc';

interface Options {
  mb: number;
  batchKb: number;
  runs: number;
  partitions: number;
  threads: number[];
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { mb: 1024, batchKb: 16, runs: 3, partitions: 1, threads: [1, 2, 4], json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${a} needs a positive number`);
      return v;
    };
    if (a === '--mb') o.mb = num();
    else if (a === '--batch-kb') o.batchKb = num();
    else if (a === '--runs') o.runs = Math.floor(num());
    else if (a === '--partitions') o.partitions = Math.floor(num());
    else if (a === '--threads') o.threads = (argv[++i] ?? '').split(',').map(Number).filter((n) => n >= 1);
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const MiB = 1024 * 1024;
const SEGMENT_BYTES = 1024 * MiB;

/** Writes ~`mb` MiB of contiguous batches into `dir` as Kafka segments; returns the bytes written. */
function writePartition(dir: string, mb: number, batchKb: number): number {
  fs.mkdirSync(dir, { recursive: true });
  const perBatch = Math.max(1, Math.round((batchKb * 1024) / 1030));
  const value = Buffer.alloc(1000, 0x61);
  const proto = buildRecordBatch(
    Array.from({ length: perBatch }, (_, i) => ({ key: `key-${i}`, value })),
    { now: 1_700_000_000_000, partitionLeaderEpoch: 0 },
  );
  const total = mb * MiB;
  const group = Math.max(1, Math.floor((4 * MiB) / proto.length));
  const chunk = Buffer.allocUnsafe(proto.length * group);
  let offset = 0n;
  let written = 0;
  while (written < total) {
    const file = path.join(dir, `${offset.toString().padStart(20, '0')}.log`);
    const fd = fs.openSync(file, 'w');
    let pos = 0;
    while (pos + chunk.length <= SEGMENT_BYTES && written < total) {
      for (let i = 0; i < group; i++) {
        proto.copy(chunk, i * proto.length);
        chunk.writeBigInt64BE(offset, i * proto.length);
        offset += BigInt(perBatch);
      }
      fs.writeSync(fd, chunk, 0, chunk.length, pos);
      pos += chunk.length;
      written += chunk.length;
    }
    fs.closeSync(fd);
  }
  return written;
}

function logFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => path.join(dir, f));
}

function removeIndexes(dir: string): void {
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.index') || f.endsWith('.timeindex')) fs.rmSync(path.join(dir, f));
}

function timeMs(f: () => void): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function timeMsAsync(f: () => Promise<void>): Promise<number> {
  const t = process.hrtime.bigint();
  await f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function loadParams(dir: string, clean: boolean): LoadParams {
  return {
    fs: nodeFs,
    dir,
    tp: { topic: 'bench', partition: 0 },
    config: DEFAULT_LOG_CONFIG,
    time: { milliseconds: () => Date.now() },
    logger: Logger.silent(),
    recoveryPointCheckpoint: 0n,
    logStartOffsetCheckpoint: 0n,
    hadCleanShutdown: clean,
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const root = makeTempDir('krill-bench-recovery-');
  try {
    log(`writing ${o.partitions} x ${o.mb} MiB (batches of ~${o.batchKb} KiB) under ${root}; CRC32C: ${crc32cImplementation}`);
    const dirs = Array.from({ length: o.partitions }, (_, p) => path.join(root, `bench-${p}`));
    let bytes = 0;
    for (const d of dirs) bytes = writePartition(d, o.mb, o.batchKb);
    const dir = dirs[0];
    const files = logFiles(dir);
    const mbOf = (ms: number, b = bytes): number => b / MiB / (ms / 1000);

    const res: Record<string, number[]> = { crc32c: [], 'read+crc32c': [], 'recovery sync': [], 'recovery async': [], 'clean load': [] };
    for (let r = 0; r < o.runs; r++) {
      // CRC32C over the bytes in memory, in 1 MiB slices (one file at a time to bound memory).
      let crcMs = 0;
      for (const f of files) {
        const all = fs.readFileSync(f);
        crcMs += timeMs(() => {
          for (let p = 0; p < all.length; p += MiB) crc32c(all.subarray(p, Math.min(all.length, p + MiB)));
        });
      }
      res.crc32c.push(mbOf(crcMs));
      const buf = Buffer.allocUnsafe(MiB);
      res['read+crc32c'].push(
        mbOf(
          timeMs(() => {
            for (const f of files) {
              const fd = fs.openSync(f, 'r');
              const size = fs.fstatSync(fd).size;
              for (let p = 0; p < size; p += MiB) crc32c(buf.subarray(0, fs.readSync(fd, buf, 0, MiB, p)));
              fs.closeSync(fd);
            }
          }),
        ),
      );
      removeIndexes(dir);
      res['recovery sync'].push(
        mbOf(
          timeMs(() => {
            const l = loadLog(loadParams(dir, false));
            if (l.report.truncatedAtOffset !== undefined || l.report.scannedBytes !== bytes) throw new Error(`unexpected recovery: ${JSON.stringify(l.report, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`);
            for (const s of l.segments.values()) s.close();
          }),
        ),
      );
      removeIndexes(dir);
      res['recovery async'].push(
        mbOf(
          await timeMsAsync(async () => {
            const l = await loadLogAsync(loadParams(dir, false));
            if (l.report.truncatedAtOffset !== undefined || l.report.scannedBytes !== bytes) throw new Error('unexpected recovery');
            for (const s of l.segments.values()) s.close();
          }),
        ),
      );
      res['clean load'].push(
        mbOf(
          timeMs(() => {
            const l = loadLog(loadParams(dir, true));
            if (l.report.recoveredSegments !== 0) throw new Error(`clean load re-read ${l.report.recoveredSegments} segment(s)`);
            for (const s of l.segments.values()) s.close();
          }),
        ),
      );
    }

    const many: Record<string, number[]> = {};
    if (o.partitions > 1) {
      for (const t of o.threads) {
        many[`log manager, ${o.partitions} logs, ${t} recovery thread(s)`] = [];
        for (let r = 0; r < o.runs; r++) {
          for (const d of dirs) removeIndexes(d);
          for (const f of ['.kafka_cleanshutdown', 'recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint']) {
            fs.rmSync(path.join(root, f), { force: true });
          }
          const lm = new LogManager({ logDirs: [root], logger: Logger.silent(), recoveryThreadsPerDataDir: t });
          const ms = await timeMsAsync(() => lm.loadLogs());
          if (lm.offlineLogDirs.length > 0) throw new Error('log dir went offline');
          await lm.close();
          many[`log manager, ${o.partitions} logs, ${t} recovery thread(s)`].push(mbOf(ms, bytes * o.partitions));
        }
      }
    }

    const crc = median(res.crc32c);
    const rows = [...Object.entries(res), ...Object.entries(many)].map(([name, xs]) => ({
      name,
      mbPerS: Math.round(median(xs)),
      vsCrc: Math.round((median(xs) / crc) * 100) / 100,
      runs: xs.map((x) => Math.round(x)),
    }));
    if (o.json) {
      process.stdout.write(JSON.stringify({ mb: o.mb, batchKb: o.batchKb, crc32c: crc32cImplementation, rows }, null, 2) + '\n');
    } else {
      process.stdout.write(`recovery of ${o.mb} MiB (batches of ~${o.batchKb} KiB), page cache warm, median of ${o.runs}\n`);
      for (const r of rows) process.stdout.write(`  ${r.name.padEnd(44)} ${String(r.mbPerS).padStart(6)} MB/s  ${r.vsCrc.toFixed(2)}x CRC32C   [${r.runs.join(' ')}]\n`);
      process.stdout.write(`  load average ${require('node:os').loadavg().map((x: number) => x.toFixed(2)).join(' ')}\n`);
    }
  } finally {
    removeTempDir(root);
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
