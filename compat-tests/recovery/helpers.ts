/**
 * Helpers of the recovery suites (issue 5): a real log written through the broker, copies of it
 * to damage, a restart on the damaged copy, and the checks every case shares: the records before
 * the damage come back exactly (Fetch), nothing after it, offsets contiguous and strictly
 * increasing, ListOffsets agreeing, new produces continuing at the truncation point, and
 * `dump-log`'s checks passing on the recovered files.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { RecordBatch } from '../../protocol/records/record-batch';
import { BrokerConnection, connect, fetchAll, listOffset, OffsetSpec, produce, type FetchedRecord } from '../../client/network-client';
import { dumpLog } from '../../storage/tools/dump-log';

/** Deterministic PRNG (mulberry32): every damage is reproducible from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SentRecord {
  offset: bigint;
  key: string;
  value: string;
  timestamp: bigint;
  headers: string[];
}

/** A batch as it lies in a segment file. */
export interface BatchOnDisk {
  file: string;
  position: number;
  size: number;
  baseOffset: bigint;
  lastOffset: bigint;
  partitionLeaderEpoch: number;
}

export interface PristineLog {
  /** The broker's data dir (log.dirs), cleanly shut down. */
  dataDir: string;
  topic: string;
  /** Every record, in offset order. */
  records: SentRecord[];
}

export const TOPIC = 'rec';
export const T0 = Date.now() - 60_000;

export function mkTemp(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function quietLogger(lines?: string[]): Logger {
  return lines ? new Logger('krill[1]', 'info', (l) => lines.push(l)) : new Logger('krill[1]', 'error', () => undefined);
}

export async function createTopic(conn: BrokerConnection, name: string, configs: Record<string, string>, partitions = 1): Promise<void> {
  const res = await conn.send('CreateTopics', undefined, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }],
    timeoutMs: 10_000,
  });
  if (res.topics[0].errorCode !== ErrorCode.NONE) throw new Error(`CreateTopics ${name}: error ${res.topics[0].errorCode}`);
}

/**
 * Writes the log every damage case starts from: `batches` batches through the embedded broker
 * (keys, values of varied sizes, headers, increasing timestamps) into segments of ~4 KiB with an
 * index entry every 256 bytes, the last batch a single small record; then a clean shutdown.
 */
export async function writePristineLog(batches = 40): Promise<PristineLog> {
  const dataDir = mkTemp('krill-recovery-pristine-');
  const broker = await startBroker({ dataDir, logger: quietLogger() });
  const conn = await connect(broker.host, broker.port, { clientId: 'recovery-writer' });
  const records: SentRecord[] = [];
  try {
    await createTopic(conn, TOPIC, { 'segment.bytes': '4096', 'index.interval.bytes': '256' });
    const rnd = prng(7);
    for (let b = 0; b < batches; b++) {
      const n = b === batches - 1 ? 1 : 1 + Math.floor(rnd() * 6);
      const batch = Array.from({ length: n }, (_, i) => {
        const ts = BigInt(T0 + b * 100 + i);
        return {
          key: `k${b}-${i}`,
          value: b === batches - 1 ? 'end' : `v${b}-${i}-`.padEnd(10 + Math.floor(rnd() * 120), 'x'),
          timestamp: ts,
          headers: i % 2 === 0 ? [{ key: `h${i}`, value: 'hv' }] : [],
        };
      });
      const r = await produce(conn, TOPIC, 0, batch, { acks: -1 });
      batch.forEach((x, i) =>
        records.push({ offset: r!.baseOffset + BigInt(i), key: x.key, value: x.value, timestamp: x.timestamp, headers: x.headers.map((h) => h.key) }),
      );
    }
  } finally {
    await conn.close();
    await broker.close();
  }
  return { dataDir, topic: TOPIC, records };
}

export function partitionDir(dataDir: string, topic = TOPIC, partition = 0): string {
  return path.join(dataDir, `${topic}-${partition}`);
}

export function segmentFiles(dir: string, suffix: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Every batch of the partition's segments, in offset order. */
export function batchesOnDisk(dir: string): BatchOnDisk[] {
  const out: BatchOnDisk[] = [];
  for (const file of segmentFiles(dir, '.log')) {
    const buf = fs.readFileSync(file);
    let pos = 0;
    while (pos < buf.length) {
      const b = new RecordBatch(buf, pos);
      out.push({ file, position: pos, size: b.sizeInBytes, baseOffset: b.baseOffset, lastOffset: b.lastOffset, partitionLeaderEpoch: b.partitionLeaderEpoch });
      pos += b.sizeInBytes;
    }
  }
  return out;
}

/** A copy of the pristine data dir to damage. */
export function copyDataDir(pristine: PristineLog, prefix = 'krill-recovery-case-'): string {
  const d = mkTemp(prefix);
  fs.cpSync(pristine.dataDir, d, { recursive: true });
  return d;
}

/**
 * As if the broker had died without ever checkpointing: no clean-shutdown marker and no
 * recovery point, so every segment is re-read at the next start.
 */
export function simulateCrash(dataDir: string): void {
  for (const f of ['.kafka_cleanshutdown', 'recovery-point-offset-checkpoint']) fs.rmSync(path.join(dataDir, f), { force: true });
}

export function flipBit(file: string, bit: number): void {
  const b = fs.readFileSync(file);
  b[bit >> 3] ^= 1 << (bit & 7);
  fs.writeFileSync(file, b);
}

function canonical(r: { offset: bigint; key: Buffer | string | null; value: Buffer | string | null; timestamp: bigint; headers: (string | { key: string })[] }): string {
  const s = (x: Buffer | string | null) => (x === null ? 'null' : x.toString());
  return `${r.offset} ${s(r.key)}=${s(r.value)} @${r.timestamp} [${r.headers.map((h) => (typeof h === 'string' ? h : h.key)).join(',')}]`;
}

export interface RestartCheck {
  /** Records the broker served after the restart. */
  served: FetchedRecord[];
  /** The broker's log lines (info and up). */
  lines: string[];
}

/**
 * Starts a broker on `dataDir` and checks, through the wire: exactly the first `survivors`
 * records of `pristine` are served (content, offsets, timestamps, headers), offsets contiguous
 * from 0; ListOffsets earliest/latest agree; a new produce gets offset `survivors` and is read back.
 * Then a clean shutdown and dump-log (deep iteration, index sanity) on the partition: no problem.
 */
export async function restartAndCheck(dataDir: string, pristine: PristineLog, survivors: number, label: string): Promise<RestartCheck> {
  const lines: string[] = [];
  let broker: RunningBroker | undefined;
  let conn: BrokerConnection | undefined;
  let served: FetchedRecord[] = [];
  try {
    broker = await startBroker({ dataDir, logger: quietLogger(lines) });
    conn = await connect(broker.host, broker.port, { clientId: 'recovery-check' });
    const latest = await listOffset(conn, pristine.topic, 0, OffsetSpec.LATEST);
    const earliest = await listOffset(conn, pristine.topic, 0, OffsetSpec.EARLIEST);
    const got = await fetchAll(conn, pristine.topic, 0, 0n);
    served = got.records;
    const want = pristine.records.slice(0, survivors).map(canonical);
    expect({ label, served: served.map(canonical) }).toEqual({ label, served: want });
    expect({ label, latest: latest.offset, earliest: earliest.offset, hwm: got.highWatermark }).toEqual({
      label,
      latest: BigInt(survivors),
      earliest: 0n,
      hwm: BigInt(survivors),
    });
    // Strictly increasing, contiguous offsets.
    served.forEach((r, i) => expect(r.offset).toBe(BigInt(i)));
    // ListOffsets by timestamp (the time index): the first record at or after each target.
    const kept = pristine.records.slice(0, survivors);
    for (const r of [kept[0], kept[Math.floor(kept.length / 2)], kept[kept.length - 1]]) {
      if (r === undefined) continue;
      const target = r.timestamp - 1n;
      const want = kept.find((x) => x.timestamp >= target)!.offset;
      expect({ label, target, offset: (await listOffset(conn, pristine.topic, 0, target)).offset }).toEqual({ label, target, offset: want });
    }
    // Produces continue at the truncation point.
    const r = await produce(conn, pristine.topic, 0, [{ key: 'after', value: `after ${label}` }], { acks: -1 });
    expect({ label, next: r!.baseOffset }).toEqual({ label, next: BigInt(survivors) });
    const tail = await fetchAll(conn, pristine.topic, 0, BigInt(survivors));
    expect(tail.records.map((x) => x.value?.toString())).toEqual([`after ${label}`]);
  } finally {
    await conn?.close();
    await broker?.close();
  }
  const problems = dumpLog([partitionDir(dataDir, pristine.topic)], { deepIteration: true, indexSanityCheck: true, closedLog: true }, () => undefined).problems;
  expect({ label, problems }).toEqual({ label, problems: [] });
  return { served, lines };
}

/** `krill dump-log ARGS...` through the CLI (bin/krill.js), output captured (64 MiB at most, 30 s). */
export function dumpLogCli(args: readonly string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [path.resolve(__dirname, '../../bin/krill.js'), 'dump-log', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30_000,
  });
}
