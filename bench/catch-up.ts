/**
 * The catch-up rows of the bench ('fetch catch-up <size> raw' and 'fetch catch-up <size> rdkafka'):
 * a consumer reading a large topic (1 GiB of 1 KiB records by default, `--catch-up-bytes N`; 64 MiB
 * with --quick) from offset 0 to the end, on krill and on the null sink, as MB/s and a ratio krill /
 * null sink, with the broker's CPU per message and its peak RSS during the read.
 *
 * Owns: one krill process (fresh temp data dir, removed after) and one null sink, spawned for this
 * section only, so that krill's RSS is that of a broker holding nothing but this topic; the untimed
 * fill of both (the bench's wire client, Produce v7 acks=1, batches of 1,000 records, a few requests
 * in flight; the null sink keeps one template batch and its high watermark, and serves every fetch
 * from memory); and the timed reads:
 *  - raw: the bench wire client's Fetch v11 loop (bench/workloads fetchRaw: 10 MB max, 1 MiB per
 *    partition, one in flight, batch headers only), so the broker is the bottleneck;
 *  - rdkafka: a librdkafka consumer (node-rdkafka, manual assignment of partition 0 from offset 0,
 *    a group.id that is never joined, no commits; fetch settings at librdkafka's defaults), counting
 *    every message it hands over (KRILL_BENCH_RDKAFKA_DEBUG=fetch,protocol prints librdkafka's debug
 *    log of these consumers on stderr).
 * Invariants: each read must deliver exactly the produced record count (else the section throws);
 * nothing is asserted about RSS, which is only printed: the broker must not hold the topic in
 * memory, so its peak RSS during the read should stay far below the topic's size. The page cache
 * is warm (the topic was just written), so this measures krill's read path, not the disk.
 */
import { cpuNow, loadRdkafka, now, fetchRaw, highWatermark, KafkaJsTarget, type ClientResult } from './workloads';
import { cpuSeconds, KRILL_BIN, KRILL_READY, makeTempDir, memoryMB, NULL_BROKER_JS, NULL_READY, removeTempDir, resetPeakRss, schedSeconds, spawnBroker, type BrokerProcess } from './proc';
import { WireClient } from './wire-client';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const CATCH_UP_RECORD_BYTES = 1024;
export const CATCH_UP_BATCH_RECORDS = 1000;
export const CATCH_UP_DEFAULT_BYTES = 1 << 30;
export const CATCH_UP_QUICK_BYTES = 64 << 20;
const FILL_IN_FLIGHT = 4;
const RDKAFKA_DEBUG = process.env.KRILL_BENCH_RDKAFKA_DEBUG;
const CLIENTS = ['raw', 'rdkafka'] as const;
type CatchUpClient = (typeof CLIENTS)[number];
type Target = 'krill' | 'null';

const sizeLabel = (bytes: number): string =>
  bytes % (1 << 30) === 0 ? `${bytes / (1 << 30)}GiB` : bytes % (1 << 20) === 0 ? `${bytes / (1 << 20)}MiB` : `${bytes}B`;

export const catchUpName = (bytes: number, client: CatchUpClient): string => `fetch catch-up ${sizeLabel(bytes)} ${client}`;

export interface CatchUpSample {
  seconds: number;
  mbPerSec: number;
  msgsPerSec: number;
  brokerCpu: number;
  brokerCpuUsPerMsg: number;
  brokerMainCpuUsPerMsg: number;
  brokerRunQueueWait: number;
  /** VmHWM over the read (reset just before it). */
  brokerPeakRssMB: number;
  /** VmRSS right before the read. */
  brokerRssBeforeMB: number;
  clientCpu: number;
}

export interface CatchUpRow {
  name: string;
  client: CatchUpClient;
  bytes: number;
  messages: number;
  samples: Record<Target, CatchUpSample[]>;
  median: Record<Target, CatchUpSample>;
  /** median krill MB/s / median null-sink MB/s */
  ratio: number;
  /** krill's data dir after the fill (segments and indexes), MB. */
  krillLogMB: number;
  /** Fill rate (untimed in the table), MB/s of values, per target. */
  fillMBps: Record<Target, number>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;

/** Produces `batches` copies of one 1,000-record batch to partition 0 with FILL_IN_FLIGHT requests outstanding. */
async function fill(bp: BrokerProcess, topic: string, batches: number): Promise<number> {
  const batch = buildRecordBatch(Array.from({ length: CATCH_UP_BATCH_RECORDS }, () => ({ value: randomBytes(CATCH_UP_RECORD_BYTES) })));
  const client = await WireClient.connect(bp.host, bp.port);
  const t0 = now();
  try {
    let sent = 0;
    const worker = async (): Promise<void> => {
      while (sent < batches) {
        sent++;
        const res = await client.request('Produce', 7, {
          transactionalId: null,
          acks: 1,
          timeoutMs: 30000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }],
        });
        const p = res.responses[0]?.partitionResponses[0];
        if (!p || p.errorCode !== 0) throw new Error(`${bp.name}: produce to ${topic}-0 failed: error ${p?.errorCode}`);
      }
    };
    await Promise.all(Array.from({ length: FILL_IN_FLIGHT }, worker));
  } finally {
    client.close();
  }
  return Number(now() - t0) / 1e9;
}

/** The slice of node-rdkafka's KafkaConsumer used here. */
interface RdConsumer {
  connect(opts: object, cb: (err: Error | null) => void): void;
  assign(tps: { topic: string; partition: number; offset: number }[]): void;
  consume(n: number, cb: (err: (Error & { code?: number }) | null, messages: { value: Buffer | null; offset: number }[]) => void): void;
  setDefaultConsumeTimeout(ms: number): void;
  disconnect(cb: () => void): void;
  on(event: 'event.error', cb: (err: Error) => void): void;
}

/**
 * librdkafka reads partition 0 of `topic` from offset 0 until `expected` messages were handed over;
 * timed from assign() (the connection and metadata are set up before) to the last message.
 */
export async function consumeRdkafka(bootstrap: string, topic: string, expected: number): Promise<ClientResult> {
  const mod = loadRdkafka() as unknown as { KafkaConsumer: new (conf: object, topicConf: object) => RdConsumer; CODES: { ERRORS: Record<string, number> } } | null;
  if (!mod) throw new Error('node-rdkafka is not installed');
  const c = new mod.KafkaConsumer({ 'bootstrap.servers': bootstrap, 'client.id': 'krill-bench-catch-up', 'group.id': 'krill-bench-catch-up', 'enable.auto.commit': false, ...(RDKAFKA_DEBUG ? { debug: RDKAFKA_DEBUG } : {}) }, { 'auto.offset.reset': 'error' });
  let failure: Error | null = null;
  c.on('event.error', (err) => (failure ??= err));
  if (RDKAFKA_DEBUG) (c as unknown as { on(e: string, cb: (l: { message: string }) => void): void }).on('event.log', (l) => process.stderr.write(`${l.message}\n`));
  await new Promise<void>((resolve, reject) => c.connect({ timeout: 10000, topic }, (err) => (err ? reject(err) : resolve())));
  try {
    c.setDefaultConsumeTimeout(100);
    let messages = 0;
    let payloadBytes = 0;
    const cpu0 = cpuNow();
    const t0 = now();
    const deadline = Date.now() + 600_000;
    c.assign([{ topic, partition: 0, offset: 0 }]);
    await new Promise<void>((resolve, reject) => {
      const loop = (): void => {
        c.consume(10000, (err, ms) => {
          if (err && err.code !== mod.CODES.ERRORS.ERR__TIMED_OUT) return reject(err);
          if (failure) return reject(failure);
          for (const m of ms ?? []) {
            messages++;
            payloadBytes += m.value?.length ?? 0;
          }
          if (messages >= expected) return resolve();
          if (Date.now() > deadline) return reject(new Error(`rdkafka catch-up: ${messages}/${expected} messages after 600 s`));
          setImmediate(loop);
        });
      };
      loop();
    });
    const seconds = Number(now() - t0) / 1e9;
    if (messages !== expected) throw new Error(`rdkafka catch-up: ${messages} messages, expected ${expected}`);
    return { seconds, messages, payloadBytes, clientCpu: cpuNow() - cpu0 };
  } finally {
    await new Promise<void>((resolve) => c.disconnect(() => resolve()));
  }
}

async function timed(bp: BrokerProcess, fn: () => Promise<ClientResult>): Promise<CatchUpSample> {
  const before = memoryMB(bp.pid).rss;
  resetPeakRss(bp.pid);
  const cpu0 = cpuSeconds(bp.pid);
  const s0 = schedSeconds(bp.pid);
  const r = await fn();
  const cpu = cpuSeconds(bp.pid) - cpu0;
  const s1 = schedSeconds(bp.pid);
  const mem = memoryMB(bp.pid);
  return {
    seconds: round(r.seconds, 3),
    mbPerSec: round(r.payloadBytes / r.seconds / 1e6),
    msgsPerSec: Math.round(r.messages / r.seconds),
    brokerCpu: round(cpu, 2),
    brokerCpuUsPerMsg: round((cpu / r.messages) * 1e6, 2),
    brokerMainCpuUsPerMsg: round(((s1.run - s0.run) / r.messages) * 1e6, 2),
    brokerRunQueueWait: round(s1.wait - s0.wait, 2),
    brokerPeakRssMB: round(mem.peak),
    brokerRssBeforeMB: round(before),
    clientCpu: round(r.clientCpu, 2),
  };
}

function dirMB(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else total += fs.statSync(p).size;
    }
  };
  walk(dir);
  return round(total / 1e6);
}

export async function measureCatchUp(
  o: { quick: boolean; runs: number; catchUpBytes: number | null; krillArgs: string[] },
  selected: (name: string) => boolean,
  log: (line: string) => void,
): Promise<CatchUpRow[]> {
  const bytes = o.catchUpBytes ?? (o.quick ? CATCH_UP_QUICK_BYTES : CATCH_UP_DEFAULT_BYTES);
  const rdkafka = loadRdkafka();
  const clients = CLIENTS.filter((c) => selected(catchUpName(bytes, c)) && (c !== 'rdkafka' || rdkafka));
  if (!clients.length) return [];
  const batches = Math.ceil(bytes / CATCH_UP_RECORD_BYTES / CATCH_UP_BATCH_RECORDS);
  const messages = batches * CATCH_UP_BATCH_RECORDS;
  const topic = 'catch-up';
  const dir = makeTempDir('krill-bench-catch-up-');
  const procs = {} as Record<Target, BrokerProcess>;
  const rows: CatchUpRow[] = [];
  try {
    procs.krill = await spawnBroker({ name: 'krill (catch-up)', args: [KRILL_BIN, '--port', '0', '--data-dir', dir, ...o.krillArgs], readyPattern: KRILL_READY, timeoutMs: 20000 });
    procs.null = await spawnBroker({ name: 'null sink (catch-up)', args: [NULL_BROKER_JS, '--port', '0'], readyPattern: NULL_READY });
    const fillMBps = {} as Record<Target, number>;
    for (const t of ['krill', 'null'] as const) {
      const bp = procs[t];
      const admin = new KafkaJsTarget(`${bp.host}:${bp.port}`);
      await admin.createTopic(topic);
      await admin.close();
      log(`catch-up: filling ${t} with ${messages} x ${CATCH_UP_RECORD_BYTES} B (${sizeLabel(bytes)}, untimed) ...`);
      const s = await fill(bp, topic, batches);
      fillMBps[t] = round((messages * CATCH_UP_RECORD_BYTES) / s / 1e6);
      const hwm = await highWatermark(bp.host, bp.port, topic);
      if (hwm !== messages) throw new Error(`${t}: ${topic} has high watermark ${hwm} after producing ${messages} messages`);
      log(`  ${t}: ${s.toFixed(1)} s (${fillMBps[t]} MB/s), RSS after ${round(memoryMB(bp.pid).rss)} MB`);
    }
    const krillLogMB = dirMB(dir);
    for (const c of clients) {
      rows.push({
        name: catchUpName(bytes, c),
        client: c,
        bytes,
        messages,
        samples: { krill: [], null: [] },
        median: {} as CatchUpRow['median'],
        ratio: NaN,
        krillLogMB,
        fillMBps,
      });
    }
    for (let run = 1; run <= o.runs; run++) {
      const order: Target[] = run % 2 === 1 ? ['null', 'krill'] : ['krill', 'null'];
      for (const row of rows) {
        for (const t of order) {
          const bp = procs[t];
          const s = await timed(bp, () =>
            row.client === 'raw' ? fetchRaw(bp.host, bp.port, topic, messages, CATCH_UP_RECORD_BYTES) : consumeRdkafka(`${bp.host}:${bp.port}`, topic, messages),
          );
          row.samples[t].push(s);
          log(
            `  run ${run} ${row.name.padEnd(30)} ${t.padEnd(5)} ${s.mbPerSec.toFixed(1).padStart(7)} MB/s  ${s.seconds.toFixed(2)} s, broker CPU ${s.brokerCpu.toFixed(2)} s ` +
              `(${s.brokerCpuUsPerMsg.toFixed(2)} µs/msg, waited ${s.brokerRunQueueWait.toFixed(2)} s), client CPU ${s.clientCpu.toFixed(2)} s, RSS ${s.brokerRssBeforeMB} -> peak ${s.brokerPeakRssMB} MB`,
          );
        }
      }
    }
    for (const row of rows) {
      for (const t of ['krill', 'null'] as const) {
        const xs = row.samples[t];
        const m = (f: (x: CatchUpSample) => number, d = 1): number => round(median(xs.map(f)), d);
        row.median[t] = {
          seconds: m((x) => x.seconds, 3),
          mbPerSec: m((x) => x.mbPerSec),
          msgsPerSec: Math.round(median(xs.map((x) => x.msgsPerSec))),
          brokerCpu: m((x) => x.brokerCpu, 2),
          brokerCpuUsPerMsg: m((x) => x.brokerCpuUsPerMsg, 2),
          brokerMainCpuUsPerMsg: m((x) => x.brokerMainCpuUsPerMsg, 2),
          brokerRunQueueWait: m((x) => x.brokerRunQueueWait, 2),
          brokerPeakRssMB: m((x) => x.brokerPeakRssMB),
          brokerRssBeforeMB: m((x) => x.brokerRssBeforeMB),
          clientCpu: m((x) => x.clientCpu, 2),
        };
      }
      row.ratio = round(row.median.krill.mbPerSec / row.median.null.mbPerSec, 2);
    }
  } catch (err) {
    if (procs.krill) log(`krill (catch-up) stderr (tail):\n${procs.krill.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    await procs.krill?.stop();
    await procs.null?.stop();
    removeTempDir(dir);
  }
  return rows;
}

/** The table of the catch-up rows and its note, for run.ts's text report. */
export function renderCatchUp(rows: CatchUpRow[], table: (rows: string[][]) => string): string[] {
  if (!rows.length) return [];
  const out = [
    table([
      ['workload (catch-up)', 'msgs', 'krill MB/s', 'null MB/s', 'ratio', 'krill µs/msg', 'main µs/msg', 'wait s', 'null µs/msg', 'client CPU s', 'krill RSS before MB', 'krill peak RSS MB'],
      ...rows.map((r) => {
        const k = r.median.krill;
        const z = r.median.null;
        return [
          r.name,
          String(r.messages),
          k.mbPerSec.toFixed(1),
          z.mbPerSec.toFixed(1),
          r.ratio.toFixed(2),
          k.brokerCpuUsPerMsg.toFixed(2),
          k.brokerMainCpuUsPerMsg.toFixed(2),
          k.brokerRunQueueWait.toFixed(2),
          z.brokerCpuUsPerMsg.toFixed(2),
          k.clientCpu.toFixed(2),
          k.brokerRssBeforeMB.toFixed(0),
          k.brokerPeakRssMB.toFixed(0),
        ];
      }),
    ]),
    `  catch-up: krill's log ${rows[0].krillLogMB} MB on disk (page cache warm); fill (untimed) krill ${rows[0].fillMBps.krill} MB/s, null sink ${rows[0].fillMBps.null} MB/s; ` +
      'peak RSS is VmHWM over the read; the broker is not expected to hold the topic in memory',
  ];
  return out;
}

export function catchUpNote(rows: CatchUpRow[]): string | null {
  if (!rows.length) return null;
  return (
    `catch-up rows: a fresh krill process (and null sink) holding one topic of ${rows[0].messages} x ${CATCH_UP_RECORD_BYTES}-byte records (one partition, batches of ${CATCH_UP_BATCH_RECORDS}, ` +
    'written untimed by the bench wire client), read from offset 0 to the end per run: raw = the wire client\'s Fetch v11 loop (10 MB max, 1 MiB per partition, one in flight, headers only); ' +
    'rdkafka = a librdkafka consumer (node-rdkafka, assign() from offset 0, a group.id never joined, librdkafka\'s default fetch settings), timed from assign() to the last message handed to JS. ' +
    'ratio = median krill MB/s / median null-sink MB/s.'
  );
}
