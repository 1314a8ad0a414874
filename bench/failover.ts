/**
 * The controller quorum rows of the bench (`--only failover`), on `krill --config FILE` controller
 * processes (process.roles=controller) formatted with one cluster id by `krill storage format`:
 *
 *  - 'failover kill9 active controller': a 3-voter quorum with Kafka's default quorum timeouts
 *    (controller.quorum.election.timeout.ms 1000, controller.quorum.fetch.timeout.ms 2000), one
 *    fake broker registered (so topics can be placed); the active controller's process is
 *    SIGKILLed, and the time runs to the first CreateTopics acknowledged by another controller
 *    (probes every 10 ms, each to both survivors, fresh topic names); also the time until a
 *    survivor answers DescribeQuorum as leader. A fresh quorum per run; medians of N runs.
 *  - 'failover create latency 3 controllers' / '... 1 controller': CreateTopics round trips on the
 *    active controller's listener, one at a time (200, or 50 with --quick), p50 / p99 / mean, with
 *    three voters (each write committed by a majority, fsync on each) against a single controller
 *    (the single-writer metadata log, no quorum).
 *
 * Owns nothing outside its runs: every process and temp dir goes through bench/proc.ts (removed on
 * exit, even on failure).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NodeChannel } from '../client/node-channel';
import { describeQuorumRequest } from '../metadata/raft/raft-messages';
import { supportedFeatureRecords } from '../metadata/features';
import { adminMain } from '../broker/admin-cli/admin-main';
import { CollectedOutput } from '../broker/admin-cli/tool-output';
import { ErrorCode } from '../protocol/errors';
import { KRILL_BIN, makeTempDir, removeTempDir, spawnBroker, type BrokerProcess } from './proc';
import { freePort } from './startup';
import { percentile } from './workloads';

const CONTROLLER_READY = /krill controller ready: CONTROLLER:\/\/([^\s:]+):(\d+)/;
const HOST = '127.0.0.1';
const CLUSTER_ID = 'QmVuY2hGYWlsb3ZlcjAwMQ';
export const FAILOVER_ROW = 'failover kill9 active controller';
export const LATENCY_ROWS = ['failover create latency 3 controllers', 'failover create latency 1 controller'] as const;

export interface FailoverSample {
  /** SIGKILL to the first acknowledged CreateTopics on another controller. */
  writeMs: number;
  /** SIGKILL to a survivor answering DescribeQuorum as leader. */
  electedMs: number;
}

export interface FailoverReport {
  electionTimeoutMs: number;
  fetchTimeoutMs: number;
  samples: FailoverSample[];
  median: FailoverSample;
  range: [number, number];
}

export interface CreateLatencyRow {
  name: string;
  controllers: number;
  creates: number;
  samples: { p50Ms: number; p99Ms: number; meanMs: number }[];
  median: { p50Ms: number; p99Ms: number; meanMs: number };
}

export interface QuorumBenchReport {
  failover: FailoverReport | null;
  createLatency: CreateLatencyRow[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

interface Quorum {
  dir: string;
  ids: number[];
  procs: Map<number, BrokerProcess>;
  channels: Map<number, NodeChannel>;
  /** DescribeQuorum goes on connections of its own: a listener answers one connection's requests in order. */
  probes: Map<number, NodeChannel>;
}

async function startQuorum(ids: number[], timeouts: { election: number; fetch: number }): Promise<Quorum> {
  const dir = makeTempDir('krill-bench-failover-');
  const ports = new Map<number, number>();
  for (const id of ids) ports.set(id, await freePort());
  const voters = ids.map((id) => `${id}@${HOST}:${ports.get(id)}`).join(',');
  const procs = new Map<number, BrokerProcess>();
  const q: Quorum = { dir, ids, procs, channels: new Map(), probes: new Map() };
  try {
    await Promise.all(
      ids.map(async (id) => {
        const file = path.join(dir, `controller-${id}.properties`);
        const props: Record<string, string | number> = {
          'process.roles': 'controller',
          'node.id': id,
          listeners: `CONTROLLER://${HOST}:${ports.get(id)}`,
          'controller.listener.names': 'CONTROLLER',
          'controller.quorum.voters': voters,
          'controller.quorum.election.timeout.ms': timeouts.election,
          'controller.quorum.fetch.timeout.ms': timeouts.fetch,
          'log.dirs': path.join(dir, `controller-${id}`),
          'broker.session.timeout.ms': 600_000,
        };
        fs.writeFileSync(file, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
        const out = new CollectedOutput();
        if ((await adminMain('storage', ['format', '-t', CLUSTER_ID, '-c', file], out)) !== 0) throw new Error(`krill storage format failed for controller ${id}`);
        procs.set(id, await spawnBroker({ name: `controller ${id}`, args: [KRILL_BIN, '--config', file], readyPattern: CONTROLLER_READY, timeoutMs: 20_000, env: { ...process.env, KRILL_LOG_LEVEL: 'warn' } }));
        q.channels.set(id, new NodeChannel(HOST, ports.get(id)!, { clientId: 'krill-bench-failover', timeoutMs: 2_000, requestTimeoutMs: 2_000 }));
        q.probes.set(id, new NodeChannel(HOST, ports.get(id)!, { clientId: 'krill-bench-failover-probe', timeoutMs: 2_000, requestTimeoutMs: 2_000 }));
      }),
    );
  } catch (err) {
    await stopQuorum(q);
    throw err;
  }
  return q;
}

async function stopQuorum(q: Quorum): Promise<void> {
  for (const c of [...q.channels.values(), ...q.probes.values()]) c.close();
  for (const p of q.procs.values()) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await Promise.all([...q.procs.values()].map((p) => p.stop()));
  removeTempDir(q.dir);
}

/** The voter that answers DescribeQuorum as leader (a single controller: that one), or null. */
async function leaderOf(q: Quorum, among: number[]): Promise<number | null> {
  if (q.ids.length === 1) return q.ids[0];
  const answers = await Promise.all(
    among.map(async (id) => {
      try {
        const r = await q.probes.get(id)!.send('DescribeQuorum', describeQuorumRequest(), { version: 2, timeoutMs: 500 });
        const p = r.topics[0]?.partitions[0];
        return p && p.errorCode === ErrorCode.NONE && p.leaderId === id ? id : null;
      } catch {
        return null;
      }
    }),
  );
  return answers.find((x) => x !== null) ?? null;
}

let topicSeq = 0;
async function createTopic(q: Quorum, id: number, timeoutMs = 2_000): Promise<number> {
  try {
    const r = await q.channels.get(id)!.send(
      'CreateTopics',
      { topics: [{ name: `bench-failover-${process.pid}-${++topicSeq}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs, validateOnly: false },
      { timeoutMs },
    );
    return r.topics[0].errorCode;
  } catch {
    return -1;
  }
}

/** Waits for the active controller and registers one fake broker on it (unfenced), so topics can be placed. */
async function activeWithBroker(q: Quorum, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`no active controller with a registered broker within ${timeoutMs} ms`);
    const id = await leaderOf(q, q.ids);
    if (id !== null) {
      try {
        const c = q.channels.get(id)!;
        const reg = await c.send('BrokerRegistration', {
          brokerId: 0,
          clusterId: CLUSTER_ID,
          incarnationId: 'QmVuY2hGYWtlQnJva2VyMA',
          listeners: [{ name: 'PLAINTEXT', host: HOST, port: 19092, securityProtocol: 0 }],
          features: supportedFeatureRecords(),
          rack: null,
        });
        if (reg.errorCode === ErrorCode.NONE) {
          // The fake broker replicates nothing: it claims to be caught up with any metadata offset.
          const hb = await c.send('BrokerHeartbeat', { brokerId: 0, brokerEpoch: reg.brokerEpoch, currentMetadataOffset: BigInt(Number.MAX_SAFE_INTEGER), wantFence: false, wantShutDown: false });
          if (hb.errorCode === ErrorCode.NONE && !hb.isFenced && (await createTopic(q, id)) === ErrorCode.NONE) return id;
        }
      } catch {
        /* not ready yet */
      }
    }
    await sleep(20);
  }
}

async function failoverSample(timeouts: { election: number; fetch: number }): Promise<FailoverSample> {
  const q = await startQuorum([1, 2, 3], timeouts);
  try {
    const active = await activeWithBroker(q, 30_000);
    for (let i = 0; i < 5; i++) await createTopic(q, active);
    const survivors = q.ids.filter((id) => id !== active);
    const t0 = nowMs();
    process.kill(q.procs.get(active)!.pid, 'SIGKILL');
    let electedMs = NaN;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error('no write acknowledged within 30 s of the SIGKILL');
      const [codes, leader] = await Promise.all([Promise.all(survivors.map((id) => createTopic(q, id, 500))), Number.isNaN(electedMs) ? leaderOf(q, survivors) : Promise.resolve(null)]);
      const t = nowMs() - t0;
      if (leader !== null && Number.isNaN(electedMs)) electedMs = t;
      if (codes.includes(ErrorCode.NONE)) return { writeMs: round(t), electedMs: round(Number.isNaN(electedMs) ? t : electedMs) };
      await sleep(10);
    }
  } finally {
    await stopQuorum(q);
  }
}

async function createLatency(name: string, controllers: number, creates: number): Promise<{ p50Ms: number; p99Ms: number; meanMs: number }> {
  const q = await startQuorum(controllers === 1 ? [1] : [1, 2, 3], { election: 1_000, fetch: 2_000 });
  try {
    const active = await activeWithBroker(q, 30_000);
    for (let i = 0; i < 10; i++) await createTopic(q, active); // warm-up
    const times: number[] = [];
    for (let i = 0; i < creates; i++) {
      const t = nowMs();
      const code = await createTopic(q, active, 5_000);
      if (code !== ErrorCode.NONE) throw new Error(`${name}: CreateTopics failed with ${code}`);
      times.push(nowMs() - t);
    }
    times.sort((a, b) => a - b);
    return { p50Ms: round(percentile(times, 50), 2), p99Ms: round(percentile(times, 99), 2), meanMs: round(times.reduce((a, b) => a + b, 0) / times.length, 2) };
  } finally {
    await stopQuorum(q);
  }
}

export async function measureQuorumFailover(o: { quick: boolean; runs: number }, selected: (name: string) => boolean, log: (line: string) => void): Promise<QuorumBenchReport | null> {
  const wantFailover = selected(FAILOVER_ROW);
  const latencyRows = LATENCY_ROWS.filter((n) => selected(n));
  if (!wantFailover && latencyRows.length === 0) return null;
  const timeouts = { election: 1_000, fetch: 2_000 };
  let failover: FailoverReport | null = null;
  if (wantFailover) {
    const runs = o.quick ? 1 : Math.max(o.runs, 5);
    log(`${FAILOVER_ROW}: ${runs} run(s), election timeout ${timeouts.election} ms, fetch timeout ${timeouts.fetch} ms ...`);
    const samples: FailoverSample[] = [];
    for (let i = 0; i < runs; i++) {
      const s = await failoverSample(timeouts);
      log(`  run ${i + 1}: first write ${s.writeMs} ms, leader ${s.electedMs} ms`);
      samples.push(s);
    }
    const w = samples.map((s) => s.writeMs);
    failover = {
      electionTimeoutMs: timeouts.election,
      fetchTimeoutMs: timeouts.fetch,
      samples,
      median: { writeMs: median(w), electedMs: median(samples.map((s) => s.electedMs)) },
      range: [Math.min(...w), Math.max(...w)],
    };
  }
  const createLatencyRows: CreateLatencyRow[] = [];
  const creates = o.quick ? 50 : 200;
  for (const name of latencyRows) {
    const controllers = name.endsWith('3 controllers') ? 3 : 1;
    const row: CreateLatencyRow = { name, controllers, creates, samples: [], median: { p50Ms: NaN, p99Ms: NaN, meanMs: NaN } };
    const runs = o.quick ? 1 : o.runs;
    for (let i = 0; i < runs; i++) {
      const s = await createLatency(name, controllers, creates);
      log(`  ${name} run ${i + 1}: p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, mean ${s.meanMs} ms`);
      row.samples.push(s);
    }
    row.median = { p50Ms: median(row.samples.map((s) => s.p50Ms)), p99Ms: median(row.samples.map((s) => s.p99Ms)), meanMs: median(row.samples.map((s) => s.meanMs)) };
    createLatencyRows.push(row);
  }
  return { failover, createLatency: createLatencyRows };
}

/** The rows as text (bench/run.ts's table format). */
export function renderQuorumFailover(r: QuorumBenchReport, table: (rows: string[][]) => string): string[] {
  const out: string[] = [];
  if (r.failover) {
    const f = r.failover;
    out.push(table([
      ['workload (controller quorum, 3 voters)', 'runs', 'first write ms', 'min-max', 'leader ms'],
      [FAILOVER_ROW, String(f.samples.length), String(f.median.writeMs), `${f.range[0]}-${f.range[1]}`, String(f.median.electedMs)],
    ]));
    out.push(`  SIGKILL of the active controller's process to the first CreateTopics acknowledged by another controller; election timeout ${f.electionTimeoutMs} ms, fetch timeout ${f.fetchTimeoutMs} ms (Kafka's defaults); medians`);
    out.push('');
  }
  if (r.createLatency.length) {
    const rows = [['workload (CreateTopics round trip, one at a time)', 'controllers', 'creates', 'p50 ms', 'p99 ms', 'mean ms']];
    for (const c of r.createLatency) rows.push([c.name, String(c.controllers), String(c.creates), String(c.median.p50Ms), String(c.median.p99Ms), String(c.median.meanMs)]);
    out.push(table(rows));
    out.push(`  medians of ${r.createLatency[0].samples.length} run(s); on the controller listener, one partition, replication factor 1 (one fake broker registered)`);
    out.push('');
  }
  return out;
}
