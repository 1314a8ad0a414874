/**
 * krill's benchmark (`npm run bench`, or `node dist/bench/run.js [options]` after a build).
 *
 * Runs krill (the CLI, `bin/krill.js`, fresh temp data dir) and the null sink (bench/null-broker,
 * which acknowledges without storing and serves fetches from memory) as separate processes, drives
 * both with the same client in the same run, and reports each throughput as a ratio krill / null
 * sink (the client's own ceiling on this machine), with the broker process's CPU seconds
 * (/proc/<pid>/stat) and peak RSS (VmHWM, reset per workload through /proc/<pid>/clear_refs), plus
 * time-to-ready, time-to-first-Metadata and idle RSS from cold starts.
 *
 * Options:
 *   --quick          small counts, one run: a smoke test (well under 30 s)
 *   --json           print the results as JSON on stdout (progress still goes to stderr)
 *   --runs N         repetitions of each measurement (default 3; the median is reported)
 *   --in-flight N    KafkaJS send() calls outstanding during produce (default 4)
 *   --profile DIR    run both broker processes under `node --cpu-prof` (profiles written to DIR/krill
 *                    and DIR/null) and print where their CPU time went during the measured workloads;
 *                    throughput numbers are then slowed by profiling; the acks=-1 latency rows'
 *                    processes are profiled too (DIR/latency-*, summaries on stderr)
 *   --priority N     run the bench and its brokers at nice value N (e.g. -10; needs root or
 *                    CAP_SYS_NICE) so that other work on a shared machine disturbs the figures less
 *   --only REGEX     only the workloads whose name matches (e.g. 'produce 1KiB', 'fetch .* raw',
 *                    'consume group', 'acks=-1 3 brokers', 'acks=-1 3 broker processes', 'idempotent', 'txn'); 'startup' selects the
 *                    start-up measurements
 *   --krill-arg ARG  one more argument for the measured krill broker (repeatable), e.g.
 *                    `--krill-arg --metrics-port --krill-arg 0` to measure it with metrics on
 *   --catch-up-bytes N
 *                    size of the catch-up rows' topic (default 1 GiB; 64 MiB with --quick)
 *   --rebalance-conf KEY=VALUE
 *                    one more librdkafka setting for the classic-protocol consumers of the rebalance
 *                    rows (repeatable), e.g. `--rebalance-conf heartbeat.interval.ms=1000`; the
 *                    consumer protocol's timings are the broker's (`--krill-arg --override --krill-arg
 *                    group.consumer.heartbeat.interval.ms=...`)
 *
 * Also: 'consume group <size> kafkajs' (a KafkaJS group consumer reading the acks=1 topic back; krill
 * only, the null sink has no group coordinator); 'produce <size> idempotent acks=-1' (a KafkaJS
 * idempotent producer, one send in flight, against both targets: the null sink hands out producer
 * ids and checks sequences); 'produce <size> txn 10 batches/commit' (a KafkaJS transactional
 * producer committing every 10 batches; krill only, its ratio is to krill's idempotent row, which
 * selecting it also runs); 'produce <size> rdkafka idempotent' (librdkafka, enable.idempotence,
 * both targets); and after the interleaved phase, acks=-1 produce
 * throughput with per-send p50/p99 latency on `krill --brokers 3` (replication factor 3,
 * min.insync.replicas=2; one process, so its CPU covers the three brokers and the controller) and,
 * for comparison, on a single krill broker; then the TLS rows ('tls': bench/tls.ts), KafkaJS produce
 * and fetch over an SSL listener as a ratio to PLAINTEXT on the same broker; then the log cleaner
 * rows ('cleaner <size> records': a cleaning pass's MB/s read and written as a ratio to CRC32C over
 * the same bytes) and 'coordinator load after N commits' before and after cleaning (bench/cleaner.ts);
 * then the tiered-storage rows (bench/tiered.ts, in the bench process with s3rver): 'tiered catch-up
 * s3 1KiB' (a consumer reading a tiered topic from offset 0 through S3 as a ratio to the same read
 * of an all-local topic), 'tiered fetch latency s3 index-cache hit|miss' and 'tiered copy lag s3 1KiB';
 * then the catch-up rows (bench/catch-up.ts): 'fetch catch-up 1GiB raw|rdkafka', a fresh krill
 * process and null sink each holding 1 GiB of 1 KiB records (`--catch-up-bytes`), read from offset 0
 * to the end by the wire client's Fetch loop and by a librdkafka consumer: MB/s, ratio, broker CPU
 * µs/msg and peak RSS during the read (printed, not asserted); then the controller quorum rows ('failover ...', bench/failover.ts): SIGKILL of the active
 * controller of three `krill --config` controller processes to the first acknowledged CreateTopics,
 * and CreateTopics round-trip latency with three controllers against one. The soak is separate:
 * `npm run soak` (bench/soak.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  cpuSeconds,
  KRILL_BIN,
  KRILL_READY,
  makeTempDir,
  memoryMB,
  NULL_BROKER_JS,
  NULL_READY,
  removeTempDir,
  resetPeakRss,
  schedSeconds,
  spawnBroker,
  type BrokerProcess,
} from './proc';
import { summarizeProfile, type ProfileSummary } from './profile-summary';
import { nodeBaseline, requireCliSample, startupSample, type StartupSample } from './startup';
import {
  BATCH_MESSAGES,
  fetchKafkaJs,
  fetchRaw,
  highWatermark,
  KafkaJsTarget,
  loadRdkafka,
  percentile,
  produceKafkaJs,
  produceRdkafka,
  RDKAFKA_IN_FLIGHT,
  type ClientResult,
} from './workloads';
import { consumeGroup, createReplicatedTopic, leaderHighWatermark, produceLatency, type LatencyResult } from './group-cluster';
import { checkCommitted, checkOneProducer, produceIdempotent, produceTransactional, type Retried, type TxnResult } from './eos';
import { measureTls, type TlsRow } from './tls';
import { measureCleaner, type CleanerRow, type CoordinatorLoadRow } from './cleaner';
import { measureTiered, type TieredReport } from './tiered';
import { measureRebalance, rebalanceNote, type RebalanceRow } from './rebalance';
import { catchUpNote, measureCatchUp, renderCatchUp, type CatchUpRow } from './catch-up';
import { measureQuorumFailover, renderQuorumFailover, type QuorumBenchReport } from './failover';

type TargetName = 'krill' | 'null';
const TARGETS: readonly TargetName[] = ['krill', 'null'];

interface Options {
  quick: boolean;
  json: boolean;
  runs: number;
  inFlight: number;
  profileDir: string | null;
  only: RegExp | null;
  priority: number | null;
  krillArgs: string[];
  rebalanceConf: Record<string, string>;
  catchUpBytes: number | null;
}

function parseOptions(argv: string[]): Options {
  const o: Options = { quick: false, json: false, runs: 3, inFlight: 4, profileDir: null, only: null, priority: null, krillArgs: [], rebalanceConf: {}, catchUpBytes: null };
  let runsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a} needs a positive integer`);
      return v;
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--json') o.json = true;
    else if (a === '--runs') {
      o.runs = num();
      runsGiven = true;
    } else if (a === '--in-flight') o.inFlight = num();
    else if (a === '--profile') {
      const d = argv[++i];
      if (!d) throw new Error('--profile needs a directory');
      o.profileDir = path.resolve(d);
    } else if (a === '--priority') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < -20 || v > 19) throw new Error('--priority needs a nice value from -20 to 19');
      o.priority = v;
    } else if (a === '--only') {
      const re = argv[++i];
      if (!re) throw new Error('--only needs a regular expression');
      o.only = new RegExp(re);
    } else if (a === '--krill-arg') {
      const v = argv[++i];
      if (v === undefined) throw new Error('--krill-arg needs a value');
      o.krillArgs.push(v);
    } else if (a === '--rebalance-conf') {
      const v = argv[++i];
      const eq = v?.indexOf('=') ?? -1;
      if (!v || eq < 1) throw new Error('--rebalance-conf needs KEY=VALUE');
      o.rebalanceConf[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (a === '--catch-up-bytes') o.catchUpBytes = num();
    else throw new Error(`unknown option ${a}\nusage: run.js [--quick] [--json] [--runs N] [--in-flight N] [--profile DIR] [--priority N] [--only REGEX] [--krill-arg ARG ...] [--rebalance-conf KEY=VALUE ...] [--catch-up-bytes N]`);
  }
  if (o.quick && !runsGiven) o.runs = 1;
  return o;
}

/**
 * Message sizes, the number of 1,000-message batches produced per run (a couple of seconds each in a
 * full run), and how many times the raw fetch reads the topic back.
 */
function plan(o: Options): { size: number; batches: number; rawPasses: number; rdkafkaMessages: number }[] {
  return o.quick
    ? [
        { size: 100, batches: 20, rawPasses: 2, rdkafkaMessages: 30000 },
        { size: 1024, batches: 10, rawPasses: 1, rdkafkaMessages: 10000 },
      ]
    : [
        { size: 100, batches: 150, rawPasses: 6, rdkafkaMessages: 300000 },
        { size: 1024, batches: 60, rawPasses: 3, rdkafkaMessages: 100000 },
      ];
}

const sizeLabel = (size: number): string => (size >= 1024 ? `${size / 1024}KiB` : `${size}B`);

/** Batches of 1,000 messages per transaction in the transactional rows (every plan's batch count is a multiple). */
const TXN_BATCHES = 10;
const idempotentName = (label: string): string => `produce ${label} idempotent acks=-1`;
const txnName = (label: string): string => `produce ${label} txn ${TXN_BATCHES} batches/commit`;
const rdkafkaIdempotentName = (label: string): string => `produce ${label} rdkafka idempotent`;

interface Sample extends ClientResult {
  run: number;
  msgsPerSec: number;
  mbPerSec: number;
  brokerCpu: number;
  /** CPU seconds of the broker's main (JS) thread alone (/proc/<pid>/schedstat): without V8's compiler and GC threads. */
  brokerMainCpu: number;
  /** Seconds the broker's main (JS) thread was runnable but waiting for a CPU. */
  brokerRunQueueWait: number;
  brokerPeakRssMB: number;
  brokerRssAfterMB: number;
}

interface Summary {
  brokerRunQueueWait: number;
  msgsPerSec: number;
  mbPerSec: number;
  seconds: number;
  brokerCpu: number;
  /** Broker CPU per message in µs: unlike throughput, hardly moved by other load on the machine. */
  brokerCpuUsPerMsg: number;
  /** The main (JS) thread's share of it: what the request path costs, without V8's background threads. */
  brokerMainCpuUsPerMsg: number;
  brokerPeakRssMB: number;
  clientCpu: number;
  /** consume group only: consumer.run() to GROUP_JOIN, ms. */
  joinMs?: number;
}

interface WorkloadResult {
  name: string;
  kind: 'produce' | 'produce-rdkafka' | 'fetch-kafkajs' | 'fetch-raw' | 'consume-group' | 'produce-idempotent' | 'produce-txn' | 'produce-rdkafka-idempotent';
  size: number;
  acks: number | null;
  messages: number;
  samples: Record<TargetName, Sample[]>;
  median: Record<TargetName, Summary>;
  /** median krill msgs/s over median null-sink msgs/s (produce-txn: over krill's idempotent row of the same size). */
  ratio: number;
  /** What `ratio` divides by. */
  ratioOf: 'null sink' | 'krill idempotent' | null;
  /** idempotent/txn rows: error lines KafkaJS logged during the timed runs (each retried request logs one), summed over runs and targets. */
  clientErrors?: number;
  firstClientError?: string | null;
  /** produce-txn only: transaction.commit() latency over every commit of every run. */
  commit?: { transactionsPerRun: number; batchesPerTransaction: number; commits: number; p50Ms: number; p99Ms: number; maxMs: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;

function summarize(xs: Sample[]): Summary {
  return {
    msgsPerSec: Math.round(median(xs.map((x) => x.msgsPerSec))),
    mbPerSec: round(median(xs.map((x) => x.mbPerSec))),
    seconds: round(median(xs.map((x) => x.seconds)), 3),
    brokerCpu: round(median(xs.map((x) => x.brokerCpu)), 2),
    brokerCpuUsPerMsg: round(median(xs.map((x) => (x.brokerCpu / x.messages) * 1e6)), 2),
    brokerMainCpuUsPerMsg: round(median(xs.map((x) => (x.brokerMainCpu / x.messages) * 1e6)), 2),
    brokerRunQueueWait: round(median(xs.map((x) => x.brokerRunQueueWait)), 3),
    brokerPeakRssMB: round(median(xs.map((x) => x.brokerPeakRssMB))),
    clientCpu: round(median(xs.map((x) => x.clientCpu)), 2),
    ...(xs.some((x) => (x as { joinMs?: number }).joinMs !== undefined)
      ? { joinMs: Math.round(median(xs.map((x) => (x as { joinMs?: number }).joinMs ?? NaN))) }
      : {}),
  };
}

function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

/** Time windows (monotonic µs) of the measurements taken on each broker, to cut its CPU profile to. */
const windows = new Map<number, [number, number][]>();
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/** Runs one client workload against a broker process, with the broker's CPU and peak RSS around it. */
async function measure(bp: BrokerProcess, run: number, fn: () => Promise<ClientResult>): Promise<Sample> {
  resetPeakRss(bp.pid);
  const cpu0 = cpuSeconds(bp.pid);
  const sched0 = schedSeconds(bp.pid);
  const w0 = monotonicUs();
  const r = await fn();
  const w = windows.get(bp.pid) ?? [];
  w.push([w0, monotonicUs()]);
  windows.set(bp.pid, w);
  const cpu1 = cpuSeconds(bp.pid);
  const sched1 = schedSeconds(bp.pid);
  const mem = memoryMB(bp.pid);
  return {
    ...r,
    run,
    msgsPerSec: r.messages / r.seconds,
    mbPerSec: r.payloadBytes / r.seconds / 1e6,
    brokerCpu: round(cpu1 - cpu0, 2),
    brokerMainCpu: round(sched1.run - sched0.run, 3),
    brokerRunQueueWait: round(sched1.wait - sched0.wait, 3),
    brokerPeakRssMB: round(mem.peak),
    brokerRssAfterMB: round(mem.rss),
  };
}

interface StartupReport {
  samples: number;
  /** An empty `node -e`: spawn to exit, and its RSS. */
  nodeBaselineMs: number;
  nodeBaselineRssMB: number;
  /** Time a fresh process spends requiring krill's modules (part of readyMs), how many, and its RSS after. */
  requireCliMs: number;
  modulesLoaded: number;
  rssAfterRequireMB: number;
  /** bin/krill.js with its bundle (KRILL_BUNDLE=1), and the same on the plain dist/ (KRILL_BUNDLE=0). */
  krill: { readyMs: number; readyCpuMs: number; metadataMs: number; idleRssMB: number };
  krillDist: { readyMs: number; readyCpuMs: number; metadataMs: number; idleRssMB: number };
  null: { readyMs: number; readyCpuMs: number; metadataMs: number; idleRssMB: number };
}

async function measureStartup(n: number): Promise<StartupReport> {
  const base: number[] = [];
  const baseRss: number[] = [];
  const req: number[] = [];
  const reqRss: number[] = [];
  let modules = 0;
  const k: StartupSample[] = [];
  const kd: StartupSample[] = [];
  const z: StartupSample[] = [];
  for (let i = 0; i < n; i++) {
    const b = nodeBaseline();
    base.push(b.ms);
    baseRss.push(b.rssMB);
    const rq = requireCliSample();
    req.push(rq.ms);
    reqRss.push(rq.rssMB);
    modules = rq.modules;
    k.push(await startupSample('krill', 300));
    kd.push(await startupSample('krill-dist', 300));
    z.push(await startupSample('null', 300));
  }
  const med = (xs: StartupSample[]): StartupReport['krill'] => ({
    readyMs: round(median(xs.map((x) => x.readyMs))),
    readyCpuMs: round(median(xs.map((x) => x.readyCpuMs))),
    metadataMs: round(median(xs.map((x) => x.metadataMs))),
    idleRssMB: round(median(xs.map((x) => x.idleRssMB))),
  });
  return {
    samples: n,
    nodeBaselineMs: round(median(base)),
    nodeBaselineRssMB: round(median(baseRss)),
    requireCliMs: round(median(req)),
    modulesLoaded: modules,
    rssAfterRequireMB: round(median(reqRss)),
    krill: med(k),
    krillDist: med(kd),
    null: med(z),
  };
}

/**
 * acks=-1 produce with per-send latency: a 3-broker in-process cluster (`krill --brokers 3`, one
 * process and one event loop for the three brokers and the controller), the same cluster as four
 * processes (a controller and three brokers, as across machines: each broker has its own event
 * loop), and one broker.
 */
const LATENCY_SIZE = 1024;
const LATENCY_PER_SEND = 100;
const LATENCY_IN_FLIGHT = 4;
const LATENCY_TARGETS = [
  { key: '3 brokers', brokers: 3, rf: 3, minIsr: 2, processes: false },
  { key: '3 broker processes', brokers: 3, rf: 3, minIsr: 2, processes: true },
  { key: '1 broker', brokers: 1, rf: 1, minIsr: 1, processes: false },
] as const;
const CONTROLLER_READY = /krill controller ready: CONTROLLER:\/\/([^\s:]+):(\d+)/;
const latencyProfDir = (o: Options, key: string): string => path.join(o.profileDir!, `latency-${key.replace(/ /g, '-')}`);
const latencyName = (key: string): string => `produce ${sizeLabel(LATENCY_SIZE)}x${LATENCY_PER_SEND} acks=-1 ${key}`;

interface LatencySample extends LatencyResult {
  run: number;
  msgsPerSec: number;
  mbPerSec: number;
  brokerCpu: number;
  brokerPeakRssMB: number;
}

interface LatencyRow {
  name: string;
  brokers: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  sends: number;
  messagesPerSend: number;
  inFlight: number;
  messages: number;
  samples: LatencySample[];
  median: {
    msgsPerSec: number;
    mbPerSec: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    brokerCpu: number;
    brokerCpuUsPerMsg: number;
    brokerPeakRssMB: number;
    clientCpu: number;
  };
}

async function measureLatency(o: Options, selected: (name: string) => boolean): Promise<LatencyRow[]> {
  const targets = LATENCY_TARGETS.filter((t) => selected(latencyName(t.key)));
  if (!targets.length) return [];
  const sends = o.quick ? 60 : 600;
  const procs: BrokerProcess[] = [];
  /** Per target, the other processes of a cluster of processes (controller, other brokers): their CPU counts too. */
  const others: BrokerProcess[][] = [];
  const clients: KafkaJsTarget[] = [];
  const dirs: string[] = [];
  const rows: LatencyRow[] = [];
  try {
    for (const t of targets) {
      const dir = makeTempDir('krill-bench-cluster-');
      dirs.push(dir);
      const prof = o.profileDir ? ['--cpu-prof', '--cpu-prof-dir', latencyProfDir(o, t.key)] : [];
      if (o.profileDir) fs.mkdirSync(latencyProfDir(o, t.key), { recursive: true });
      let bp: BrokerProcess;
      const rest: BrokerProcess[] = [];
      if (t.processes) {
        const controller = await spawnBroker({
          name: `krill controller (${t.key})`,
          args: [...prof, KRILL_BIN, '--process-roles', 'controller', '--host', '127.0.0.1', '--port', '0', '--data-dir', path.join(dir, 'controller')],
          readyPattern: CONTROLLER_READY,
          timeoutMs: 20000,
        });
        rest.push(controller);
        const brokers = await Promise.all(
          Array.from({ length: t.brokers }, (_, id) =>
            spawnBroker({
              name: `krill broker ${id} (${t.key})`,
              args: [...prof, KRILL_BIN, '--node-id', String(id), '--controller', `${controller.host}:${controller.port}`, '--host', '127.0.0.1', '--port', '0', '--data-dir', path.join(dir, `broker-${id}`)],
              readyPattern: KRILL_READY,
              timeoutMs: 20000,
            }),
          ),
        );
        bp = brokers[0];
        rest.push(...brokers.slice(1));
      } else {
        const args = t.brokers > 1 ? [...prof, KRILL_BIN, '--brokers', String(t.brokers), '--port', '0', '--data-dir', dir] : [...prof, KRILL_BIN, '--port', '0', '--data-dir', dir];
        bp = await spawnBroker({ name: `krill (${t.key})`, args, readyPattern: KRILL_READY, timeoutMs: 20000 });
      }
      procs.push(bp);
      others.push(rest);
      clients.push(new KafkaJsTarget(`${bp.host}:${bp.port}`));
      rows.push({
        name: latencyName(t.key),
        brokers: t.brokers,
        replicationFactor: t.rf,
        minInsyncReplicas: t.minIsr,
        sends,
        messagesPerSend: LATENCY_PER_SEND,
        inFlight: LATENCY_IN_FLIGHT,
        messages: sends * LATENCY_PER_SEND,
        samples: [],
        median: {} as LatencyRow['median'],
      });
    }
    log(`acks=-1 latency (${targets.map((t) => t.key).join(', ')}): warm-up ...`);
    for (let i = 0; i < targets.length; i++) {
      const topic = 'warmup-latency';
      await createReplicatedTopic(clients[i], topic, targets[i].rf, targets[i].minIsr);
      await produceLatency(clients[i], topic, LATENCY_SIZE, LATENCY_PER_SEND, o.quick ? 20 : 100, -1, LATENCY_IN_FLIGHT);
    }
    for (let run = 1; run <= o.runs; run++) {
      const order = run % 2 === 1 ? targets.map((_, i) => i) : targets.map((_, i) => i).reverse();
      for (const i of order) {
        const t = targets[i];
        const bp = procs[i];
        const topic = `bench-latency-r${run}`;
        await createReplicatedTopic(clients[i], topic, t.rf, t.minIsr);
        for (const x of others[i]) resetPeakRss(x.pid);
        const othersCpu0 = others[i].reduce((n, x) => n + cpuSeconds(x.pid), 0);
        const s = await measure(bp, run, () => produceLatency(clients[i], topic, LATENCY_SIZE, LATENCY_PER_SEND, sends, -1, LATENCY_IN_FLIGHT));
        if (others[i].length > 0) {
          // A cluster of processes: the CPU of all of them; the peak RSS of the largest.
          s.brokerCpu = round(s.brokerCpu + others[i].reduce((n, x) => n + cpuSeconds(x.pid), 0) - othersCpu0, 2);
          s.brokerPeakRssMB = Math.max(s.brokerPeakRssMB, ...others[i].map((x) => round(memoryMB(x.pid).peak)));
        }
        const hwm = await leaderHighWatermark(clients[i], topic);
        if (hwm !== sends * LATENCY_PER_SEND) throw new Error(`${t.key}: ${topic} has high watermark ${hwm} after producing ${sends * LATENCY_PER_SEND} messages`);
        const ls = s as unknown as LatencySample;
        rows[i].samples.push(ls);
        log(
          `  run ${run} ${rows[i].name.padEnd(34)} ${Math.round(ls.msgsPerSec).toString().padStart(8)} msg/s ${ls.mbPerSec.toFixed(1).padStart(6)} MB/s` +
            `  p50 ${ls.p50Ms.toFixed(1)} ms p99 ${ls.p99Ms.toFixed(1)} ms, broker CPU ${ls.brokerCpu.toFixed(2)} s, client CPU ${ls.clientCpu.toFixed(2)} s`,
        );
      }
    }
    for (const r of rows) {
      const xs = r.samples;
      const m = (f: (x: LatencySample) => number, d = 1): number => round(median(xs.map(f)), d);
      r.median = {
        msgsPerSec: Math.round(median(xs.map((x) => x.msgsPerSec))),
        mbPerSec: m((x) => x.mbPerSec),
        p50Ms: m((x) => x.p50Ms, 2),
        p99Ms: m((x) => x.p99Ms, 2),
        maxMs: m((x) => x.maxMs, 2),
        brokerCpu: m((x) => x.brokerCpu, 2),
        brokerCpuUsPerMsg: m((x) => (x.brokerCpu / x.messages) * 1e6, 2),
        brokerPeakRssMB: m((x) => x.brokerPeakRssMB),
        clientCpu: m((x) => x.clientCpu, 2),
      };
    }
  } catch (err) {
    for (const bp of procs) log(`${bp.name} stderr (tail):\n${bp.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const bp of procs) await bp.stop();
    for (const rest of others) for (const bp of rest.slice().reverse()) await bp.stop();
    for (const d of dirs) removeTempDir(d);
  }
  if (o.profileDir) {
    // Printed to stderr only: the latency rows' profiles (cut to the measured sends) for a look at where the CPU went.
    targets.forEach((t, i) => {
      const dir = latencyProfDir(o, t.key);
      const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f));
      if (!files.length) return log(`no .cpuprofile in ${dir}`);
      // One profile per process (a cluster of processes has several), each cut to the measured sends.
      for (const file of files) {
        const p = summarizeProfile(file, 30, windows.get(procs[i].pid) ?? []);
        log(`${rows[i].name} CPU profile ${p.file}: ${p.busyMs} ms busy of ${p.totalMs} ms`);
        log(table([['area', 'self ms', '% busy'], ...p.areas.slice(0, 10).map((a) => [a.name, String(a.selfMs), a.pct.toFixed(1)])]));
        log(table([['function', 'location', 'self ms', '% busy'], ...p.functions.map((f) => [f.name, f.location, String(f.selfMs), f.pct.toFixed(1)])]));
      }
    });
  }
  return rows;
}

interface Report {
  options: Omit<Options, 'only'> & { only: string | null };
  machine: { cpus: number; node: string; platform: string; loadAverageAtStart: number[] };
  client: string;
  rdkafka: string | null;
  startup: StartupReport | null;
  workloads: WorkloadResult[];
  krillIdleAfterWorkloadsRssMB: number;
  profile: Record<TargetName, ProfileSummary | null> | null;
  latency: LatencyRow[];
  tls: TlsRow[];
  cleaner: CleanerRow[];
  coordinatorLoad: CoordinatorLoadRow[];
  tiered: TieredReport;
  rebalance: RebalanceRow[];
  catchUp: CatchUpRow[];
  quorum: QuorumBenchReport | null;
  notes: string[];
  durationSeconds: number;
}

interface ThroughputReport {
  workloads: WorkloadResult[];
  krillIdleAfterWorkloadsRssMB: number;
  profile: Record<TargetName, ProfileSummary | null> | null;
}

/** Both brokers up for the whole phase; warm-up, then every selected workload, runs interleaved. */
async function measureThroughput(o: Options, selected: (name: string) => boolean): Promise<ThroughputReport> {
  const dataDir = makeTempDir('krill-bench-data-');
  const profDir = (t: TargetName): string => path.join(o.profileDir!, t);
  if (o.profileDir) for (const t of TARGETS) fs.mkdirSync(profDir(t), { recursive: true });
  const profArgs = (t: TargetName): string[] => (o.profileDir ? ['--cpu-prof', '--cpu-prof-dir', profDir(t)] : []);
  const procs = {} as Record<TargetName, BrokerProcess>;
  const clients = {} as Record<TargetName, KafkaJsTarget>;
  const rdkafka = loadRdkafka();
  const workloads: WorkloadResult[] = [];
  let profile: Record<TargetName, ProfileSummary | null> | null = null;
  let krillIdleAfter = NaN;
  const pids = {} as Record<TargetName, number>;
  try {
    procs.krill = await spawnBroker({
      name: 'krill',
      // No initial rebalance delay (Kafka's default is 3 s): the group join is not timed, only waited for.
      args: [...profArgs('krill'), KRILL_BIN, '--port', '0', '--data-dir', dataDir, '--override', 'group.initial.rebalance.delay.ms=0', ...o.krillArgs],
      readyPattern: KRILL_READY,
    });
    procs.null = await spawnBroker({ name: 'null sink', args: [...profArgs('null'), NULL_BROKER_JS, '--port', '0'], readyPattern: NULL_READY });
    for (const t of TARGETS) pids[t] = procs[t].pid;
    for (const t of TARGETS) clients[t] = new KafkaJsTarget(`${procs[t].host}:${procs[t].port}`);

    // Warm-up: JIT both brokers and the client on every path before anything is timed.
    log('warm-up ...');
    for (const t of TARGETS) {
      for (const { size } of plan(o)) {
        const topic = `warmup-${size}`;
        const batches = o.quick ? 3 : 10;
        await clients[t].createTopic(topic);
        await produceKafkaJs(clients[t], topic, size, batches, 1, o.inFlight);
        await produceKafkaJs(clients[t], topic, size, batches, -1, o.inFlight);
        await fetchKafkaJs(clients[t], topic, 2 * batches * BATCH_MESSAGES);
        await fetchRaw(procs[t].host, procs[t].port, topic, 2 * batches * BATCH_MESSAGES, size);
        if (t === 'krill' && selected(`consume group ${sizeLabel(size)} kafkajs`)) await consumeGroup(clients[t], topic, 2 * batches * BATCH_MESSAGES);
        if (rdkafka && selected(`produce ${sizeLabel(size)} rdkafka acks=1`)) {
          await clients[t].createTopic(`warmup-rdkafka-${size}`);
          await produceRdkafka(clients[t].bootstrap, `warmup-rdkafka-${size}`, size, batches * BATCH_MESSAGES, 1);
        }
        const txnSelected = selected(txnName(sizeLabel(size)));
        if (selected(idempotentName(sizeLabel(size))) || txnSelected) {
          await clients[t].createTopic(`warmup-idempotent-${size}`);
          await produceIdempotent(clients[t].bootstrap, `warmup-idempotent-${size}`, size, batches);
        }
        // The first transactional id also makes krill create __transaction_state.
        if (t === 'krill' && txnSelected) {
          await clients[t].createTopic(`warmup-txn-${size}`);
          await produceTransactional(clients[t].bootstrap, `warmup-txn-${size}`, size, o.quick ? TXN_BATCHES : 2 * TXN_BATCHES, TXN_BATCHES);
        }
        if (rdkafka && selected(rdkafkaIdempotentName(sizeLabel(size)))) {
          await clients[t].createTopic(`warmup-rdkafka-idempotent-${size}`);
          await clients[t].createTopic(`warmup-rdkafka-idempotent-prime-${size}`);
          const eos = { idempotent: true, primeTopic: `warmup-rdkafka-idempotent-prime-${size}` };
          await produceRdkafka(clients[t].bootstrap, `warmup-rdkafka-idempotent-${size}`, size, batches * BATCH_MESSAGES, -1, eos);
        }
      }
    }

    const results = new Map<string, WorkloadResult>();
    const record = (name: string, kind: WorkloadResult['kind'], size: number, acks: number | null, t: TargetName, s: Sample): void => {
      let w = results.get(name);
      if (!w) {
        w = { name, kind, size, acks, messages: s.messages, samples: { krill: [], null: [] }, median: {} as WorkloadResult['median'], ratio: NaN, ratioOf: null };
        results.set(name, w);
        workloads.push(w);
      }
      w.samples[t].push(s);
      log(
        `  run ${s.run} ${name.padEnd(34)} ${t.padEnd(5)} ${Math.round(s.msgsPerSec).toString().padStart(8)} msg/s ${s.mbPerSec.toFixed(1).padStart(7)} MB/s` +
          `  ${s.seconds.toFixed(2)} s, broker CPU ${s.brokerCpu.toFixed(2)} s (waited ${s.brokerRunQueueWait.toFixed(2)} s for a CPU), client CPU ${s.clientCpu.toFixed(2)} s, peak RSS ${s.brokerPeakRssMB} MB`,
      );
      const e = s as Sample & Partial<Retried>;
      if (e.clientErrors !== undefined) {
        w.clientErrors = (w.clientErrors ?? 0) + e.clientErrors;
        w.firstClientError ??= e.firstClientError;
        if (e.clientErrors) log(`    ${t}: KafkaJS logged ${e.clientErrors} error(s) during this run (retried requests, in the timed window); first: ${e.firstClientError}`);
      }
    };

    for (let run = 1; run <= o.runs; run++) {
      // Each workload runs on both targets back to back, alternating which goes first from run to
      // run, so that load from elsewhere on the machine and drift hit both sides alike.
      const order: TargetName[] = run % 2 === 1 ? ['null', 'krill'] : ['krill', 'null'];
      for (const { size, batches, rawPasses, rdkafkaMessages } of plan(o)) {
        const label = sizeLabel(size);
        const n = batches * BATCH_MESSAGES;
        const fetchKj = `fetch ${label} kafkajs`;
        const fetchRw = `fetch ${label} raw`;
        const groupName = `consume group ${label} kafkajs`;
        const needFetch = selected(fetchKj) || selected(fetchRw) || selected(groupName);
        for (const acks of [1, -1]) {
          const name = `produce ${label} acks=${acks}`;
          // The fetches read back the acks=1 topic, so it is produced whenever a fetch is selected.
          if (!selected(name) && !(acks === 1 && needFetch)) continue;
          for (const t of order) {
            const bp = procs[t];
            const c = clients[t];
            const topic = `bench-${label}-acks${acks}-r${run}`;
            await c.createTopic(topic);
            const produce = (): Promise<ClientResult> => produceKafkaJs(c, topic, size, batches, acks, o.inFlight);
            // Measured only when selected, so a profile cut to the measured windows holds only what was asked for.
            const s = selected(name) ? await measure(bp, run, produce) : (await produce(), null);
            const hwm = await highWatermark(bp.host, bp.port, topic);
            if (hwm !== n) throw new Error(`${t}: ${topic} has high watermark ${hwm} after producing ${n} messages`);
            if (s) record(name, 'produce', size, acks, t, s);
          }
        }
        const topic = `bench-${label}-acks1-r${run}`;
        if (selected(fetchKj)) {
          for (const t of order) record(fetchKj, 'fetch-kafkajs', size, null, t, await measure(procs[t], run, () => fetchKafkaJs(clients[t], topic, n)));
        }
        if (selected(fetchRw)) {
          for (const t of order) {
            const bp = procs[t];
            record(fetchRw, 'fetch-raw', size, null, t, await measure(bp, run, () => fetchRaw(bp.host, bp.port, topic, n, size, rawPasses)));
          }
        }
        // The null sink has no group coordinator: this row is krill's alone.
        if (selected(groupName)) {
          const s = await measure(procs.krill, run, () => consumeGroup(clients.krill, topic, n));
          record(groupName, 'consume-group', size, null, 'krill', s);
          log(`    (joined the group in ${Math.round((s as Sample & { joinMs?: number }).joinMs ?? NaN)} ms, not timed)`);
        }
        const rdName = `produce ${label} rdkafka acks=1`;
        if (rdkafka && selected(rdName)) {
          for (const t of order) {
            const bp = procs[t];
            const rdTopic = `bench-${label}-rdkafka-r${run}`;
            await clients[t].createTopic(rdTopic);
            const s = await measure(bp, run, () => produceRdkafka(clients[t].bootstrap, rdTopic, size, rdkafkaMessages, 1));
            const hwm = await highWatermark(bp.host, bp.port, rdTopic);
            if (hwm !== rdkafkaMessages) throw new Error(`${t}: ${rdTopic} has high watermark ${hwm} after producing ${rdkafkaMessages} messages`);
            record(rdName, 'produce-rdkafka', size, 1, t, s);
          }
        }
        // Idempotent KafkaJS producer on both targets; also run when its txn row is selected (the txn row's ratio is to it).
        const idemName = idempotentName(label);
        const txName = txnName(label);
        if (selected(idemName) || selected(txName)) {
          for (const t of order) {
            const bp = procs[t];
            const topic = `bench-${label}-idempotent-r${run}`;
            await clients[t].createTopic(topic);
            const s = await measure(bp, run, () => produceIdempotent(clients[t].bootstrap, topic, size, batches));
            const hwm = await highWatermark(bp.host, bp.port, topic);
            if (hwm !== n) throw new Error(`${t}: ${topic} has high watermark ${hwm} after producing ${n} messages`);
            await checkOneProducer(bp.host, bp.port, topic, n, t);
            record(idemName, 'produce-idempotent', size, -1, t, s);
          }
        }
        // Transactions: krill only (the null sink coordinates none).
        if (selected(txName)) {
          const bp = procs.krill;
          const topic = `bench-${label}-txn-r${run}`;
          await clients.krill.createTopic(topic);
          const s = await measure(bp, run, () => produceTransactional(clients.krill.bootstrap, topic, size, batches, TXN_BATCHES));
          const lso = await checkCommitted(bp.host, bp.port, topic, n, batches / TXN_BATCHES);
          await checkOneProducer(bp.host, bp.port, topic, n, 'krill');
          record(txName, 'produce-txn', size, -1, 'krill', s);
          const tr = s as unknown as TxnResult;
          log(
            `    (${tr.transactions} transactions of ${tr.batchesPerTransaction} batches; commit() p50 ${tr.commitP50Ms.toFixed(1)} ms, p99 ${tr.commitP99Ms.toFixed(1)} ms, ` +
              `max ${tr.commitMaxMs.toFixed(1)} ms; read_committed LSO = HWM ${lso.checks === 1 ? 'at the first check' : `after ${lso.checks} checks, ${lso.ms.toFixed(0)} ms`}, not timed)`,
          );
        }
        const rdIdemName = rdkafkaIdempotentName(label);
        if (rdkafka && selected(rdIdemName)) {
          for (const t of order) {
            const bp = procs[t];
            const rdTopic = `bench-${label}-rdkafka-idempotent-r${run}`;
            await clients[t].createTopic(rdTopic);
            await clients[t].createTopic(`${rdTopic}-prime`);
            const eos = { idempotent: true, primeTopic: `${rdTopic}-prime` };
            const s = await measure(bp, run, () => produceRdkafka(clients[t].bootstrap, rdTopic, size, rdkafkaMessages, -1, eos));
            const hwm = await highWatermark(bp.host, bp.port, rdTopic);
            if (hwm !== rdkafkaMessages) throw new Error(`${t}: ${rdTopic} has high watermark ${hwm} after producing ${rdkafkaMessages} messages`);
            await checkOneProducer(bp.host, bp.port, rdTopic, rdkafkaMessages, t);
            record(rdIdemName, 'produce-rdkafka-idempotent', size, -1, t, s);
          }
        }
      }
    }
    for (const w of workloads) {
      w.median = { krill: summarize(w.samples.krill), null: summarize(w.samples.null) };
      w.ratio = w.samples.null.length ? round(w.median.krill.msgsPerSec / w.median.null.msgsPerSec, 2) : NaN;
      if (w.samples.null.length) w.ratioOf = 'null sink';
    }
    for (const w of workloads) {
      if (w.kind !== 'produce-txn') continue;
      const base = workloads.find((x) => x.kind === 'produce-idempotent' && x.size === w.size);
      if (base) {
        w.ratio = round(w.median.krill.msgsPerSec / base.median.krill.msgsPerSec, 2);
        w.ratioOf = 'krill idempotent';
      }
      const txs = w.samples.krill as unknown as (Sample & TxnResult)[];
      const all = txs.flatMap((x) => x.commitMs).sort((a, b) => a - b);
      const pct = (p: number): number => round(percentile(all, p), 2);
      w.commit = {
        transactionsPerRun: txs[0].transactions,
        batchesPerTransaction: txs[0].batchesPerTransaction,
        commits: all.length,
        p50Ms: pct(50),
        p99Ms: pct(99),
        maxMs: round(all[all.length - 1], 2),
      };
    }
    for (const t of TARGETS) await clients[t].close();
    await new Promise((r) => setTimeout(r, 300));
    krillIdleAfter = round(memoryMB(procs.krill.pid).rss);
  } catch (err) {
    if (procs.krill) log(`krill stderr (tail):\n${procs.krill.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    for (const t of TARGETS) await clients[t]?.close().catch(() => undefined);
    for (const t of TARGETS) await procs[t]?.stop();
    removeTempDir(dataDir);
  }

  if (o.profileDir) {
    const summary = (t: TargetName): ProfileSummary | null => {
      const files = fs
        .readdirSync(profDir(t))
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(profDir(t), f))
        .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
      if (!files.length) {
        log(`no .cpuprofile in ${profDir(t)} (${t} did not exit cleanly?)`);
        return null;
      }
      const ps = summarizeProfile(files[0], 20, windows.get(pids[t]) ?? []);
      if (ps.totalMs > 0) return ps;
      // Seen under heavy machine load: V8's sampler thread starved, no sample inside the windows.
      log(`the ${t} profile has no samples inside the measured windows: summarizing all of it`);
      return summarizeProfile(files[0], 20);
    };
    profile = { krill: summary('krill'), null: summary('null') };
  }
  return { workloads, krillIdleAfterWorkloadsRssMB: krillIdleAfter, profile };
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const o = parseOptions(process.argv.slice(2));
  const os = await import('node:os');
  const loadAtStart = os.loadavg().map((x) => round(x, 2));
  if (o.priority !== null) {
    try {
      os.setPriority(0, o.priority); // inherited by every process the bench spawns from now on
    } catch (err) {
      log(`--priority ${o.priority}: ${(err as Error).message}; running at the normal priority`);
      o.priority = null;
    }
  }
  if (loadAtStart[0] > 0.7) log(`note: load average ${loadAtStart.join(' ')} before the bench: other work on this machine makes the figures noisy`);
  log(`krill bench: ${o.quick ? 'quick' : 'full'} run, ${o.runs} run(s) per measurement, ${o.inFlight} sends in flight${o.priority !== null ? `, nice ${o.priority}` : ''}`);

  const selected = (name: string): boolean => o.only === null || o.only.test(name);
  let startup: StartupReport | null = null;
  if (selected('startup')) {
    log('start-up: cold starts of krill and the null sink ...');
    startup = await measureStartup(o.quick ? 2 : 5);
    log(`  krill ready ${startup.krill.readyMs} ms, Metadata answered ${startup.krill.metadataMs} ms, idle RSS ${startup.krill.idleRssMB} MB (node -e: ${startup.nodeBaselineMs} ms, require: ${startup.requireCliMs} ms)`);
  }
  const allWorkloads = plan(o).flatMap(({ size }) => {
    const label = sizeLabel(size);
    return [
      `produce ${label} acks=1`,
      `produce ${label} acks=-1`,
      `fetch ${label} kafkajs`,
      `fetch ${label} raw`,
      `consume group ${label} kafkajs`,
      `produce ${label} rdkafka acks=1`,
      idempotentName(label),
      txnName(label),
      rdkafkaIdempotentName(label),
    ];
  });
  const throughput = allWorkloads.some(selected);
  const latencySelected = LATENCY_TARGETS.some((t) => selected(latencyName(t.key)));

  const tp: ThroughputReport = throughput
    ? await measureThroughput(o, selected)
    : { workloads: [], krillIdleAfterWorkloadsRssMB: NaN, profile: null };
  const latency = await measureLatency(o, selected);
  const tls = await measureTls(o, selected, log);
  const { cleaner, coordinatorLoad } = await measureCleaner(o, selected, log);
  const tiered = await measureTiered(o, selected, log);
  const rebalance = await measureRebalance(o, selected, log);
  const catchUp = await measureCatchUp(o, selected, log);
  const quorum = await measureQuorumFailover(o, selected, log);

  const rdkafka = loadRdkafka();
  const notes = [
    'Client: KafkaJS 2.2.4 in the bench process (one core); each broker is its own process (the other core).',
    rdkafka
      ? `produce ... rdkafka: librdkafka ${rdkafka.librdkafkaVersion} through node-rdkafka (a devDependency of this checkout) in the bench process: batch.num.messages ${BATCH_MESSAGES}, linger.ms 5, max.in.flight ${RDKAFKA_IN_FLIGHT}, one produce() call per message, completion by flush().`
      : 'A librdkafka-class load generator is not available here (node-rdkafka is not installed), so every ceiling is KafkaJS\'s own.',
    `Produce: batches of ${BATCH_MESSAGES} messages to one partition, ${o.inFlight} send() calls in flight on KafkaJS's connection, no compression, no keys.`,
    'fetch kafkajs: KafkaJS Broker.fetch (Fetch v11, what its consumer sends: 10 MB max, 1 MB per partition, one in flight) decoding every record.',
    'fetch raw: the same requests from the bench\'s wire client, reading batch headers only (the topic read several times over), so the broker is the bottleneck.',
    'MB/s counts message values only. ratio = median krill msgs/s / median null-sink msgs/s.',
  ];
  if (o.profileDir) notes.push('Both brokers ran under --cpu-prof: throughput is understated.');
  const waited = tp.workloads.reduce((a, w) => a + w.median.krill.brokerRunQueueWait, 0);
  const wall = tp.workloads.reduce((a, w) => a + w.median.krill.seconds, 0);
  if (wall > 0 && waited / wall > 0.15) {
    notes.push(`krill waited for a CPU ${Math.round((100 * waited) / wall)}% of the measured time: the machine was contended, so throughput figures understate krill; the µs/msg columns are steadier.`);
  }
  if (!throughput) notes.length = 0;
  if (throughput && tp.workloads.some((w) => w.kind === 'consume-group')) {
    notes.push(
      'consume group: a KafkaJS consumer in a fresh group (subscribe fromBeginning, run with eachBatch, autoCommit) reading the acks=1 topic back; timed from GROUP_JOIN ' +
        'to the last message (the join is left out; krill runs with group.initial.rebalance.delay.ms=0 here). krill only: the null sink implements no group APIs.',
    );
  }
  if (throughput && tp.workloads.some((w) => w.kind === 'produce-idempotent' || w.kind === 'produce-txn')) {
    notes.push(
      'idempotent: a fresh KafkaJS producer({ idempotent: true, maxInFlightRequests: 1 }) per run (connect and InitProducerId not timed), acks=-1, one send() of ' +
        `${BATCH_MESSAGES} messages at a time (KafkaJS serializes idempotent produce requests per broker anyway), so not comparable with the 4-in-flight acks=-1 rows. ` +
        'The null sink answers InitProducerId and checks each batch\'s producer id, epoch and sequence (no storage); after every run DescribeProducers on both must show one producer with last sequence = messages - 1.',
    );
  }
  if (throughput && tp.workloads.some((w) => w.kind === 'produce-txn')) {
    notes.push(
      `txn: a fresh KafkaJS producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 }) per run; each transaction sends ${TXN_BATCHES} batches of ${BATCH_MESSAGES} messages ` +
        '(one send() at a time; AddPartitionsToTxn before the first) and commits; msg/s includes the commits. krill only: the null sink coordinates no transactions, so the ratio is ' +
        'krill txn msg/s / krill idempotent msg/s of the same size (the cost of transactions). commit() latency is EndTxn\'s round trip (krill answers once PREPARE_COMMIT is written; ' +
        'markers follow), pooled over every commit of every run; each run then waits (untimed) for the read_committed last stable offset to reach the high watermark (messages + one marker per transaction).',
    );
  }
  if (throughput && tp.workloads.some((w) => w.kind === 'produce-rdkafka-idempotent')) {
    notes.push(
      'produce ... rdkafka idempotent: the rdkafka producer above with enable.idempotence=true and acks=-1; one message to another topic, flushed, before the timed window, ' +
        'so that librdkafka has its producer id (its PID timer can otherwise add 0.5-1 s of client-side waiting on either target); DescribeProducers checked as for KafkaJS.',
    );
  }
  if (latencySelected) {
    notes.push(
      `acks=-1 latency rows: KafkaJS send() of ${LATENCY_PER_SEND} x ${LATENCY_SIZE}-byte messages, ${LATENCY_IN_FLIGHT} in flight, each send timed (p50/p99/max ms). ` +
        '3 brokers: `krill --brokers 3` (3 brokers + controller in one process and one event loop, so its CPU is the whole cluster\'s), topic replication factor 3, min.insync.replicas=2; ' +
        '3 broker processes: the same cluster as 4 processes (`krill --process-roles controller` and 3 x `krill --node-id N --controller ...`, as across machines; CPU = the sum over the 4, peak RSS = the largest), the client bootstrapping from broker 0; ' +
        '1 broker: a separate single krill process, replication factor 1. Fresh processes, not the ones of the table above.',
    );
  }
  if (tls.length) {
    notes.push(
      `tls rows: one krill process with a PLAINTEXT and an SSL listener (throwaway CA, PEM stores, no client certificate, TLS 1.3 negotiated); the KafkaJS produce (acks=1, ${o.inFlight} in flight) and ` +
        'fetch workloads above run against each listener in turn (alternating which goes first); ratio = median SSL msg/s / median PLAINTEXT msg/s.',
    );
  }
  if (cleaner.length) {
    notes.push(
      'cleaner rows: one pass of the log cleaner (storage/cleaner, in the bench process) over a compacted log of keyed records in batches of 100, each key written 10 times, ' +
        "Kafka's defaults (128 MiB offset map, 256 KiB buffers, no throttle, a yield after every buffer), page cache warm; read/written MB/s are the pass's bytes over its wall time " +
        '(fsyncs of the cleaned segments included); ratios are to CRC32C over the same bytes in memory.',
    );
  }
  if (coordinatorLoad.length) {
    notes.push(
      'coordinator load rows: a GroupCoordinator loading one __consumer_offsets partition of N offset commits (20 groups x 10 partitions, one batch per commit of 10 partitions), ' +
        'from the leadership change to the partition being served, before and after the partition is cleaned (two passes; tombstones removed); records = what the load replayed.',
    );
  }
  if (tiered.catchUp.length || tiered.latency.length || tiered.copyLag.length) {
    notes.push(
      'tiered rows: s3rver and one krill broker (startBroker, Aiven S3 property names) in the bench process with the client, so all three share one event loop; ' +
        'reads are Fetch v11 from the bench wire client (10 MB max, 1 MiB per partition, one in flight), 1 KiB records in batches of 100. catch-up: a tiered topic ' +
        '(local.retention.bytes=1, only the active segment local) and an all-local topic of the same records and segment size, each read from offset 0 per run, order alternating; ' +
        'ratio = median tiered MB/s / median local MB/s. latency: one fetch in flight at the middle offset of a remote segment; hit = the same segment again, ' +
        'miss = remote.log.index.file.cache.total.size.bytes=1 (every lookup fetches the indexes), percentiles over all runs pooled. copy lag: ' +
        `remote.log.manager.task.interval.ms=${tiered.copyLag[0]?.taskIntervalMs ?? 500}, local-only bytes = onlyLocalLogSegmentsSize (the active segment included), uncopied = rolled local segments not yet in S3.`,
    );
  }
  if (rebalance.length) notes.push(rebalanceNote(rebalance, rdkafka?.librdkafkaVersion ?? '?'));
  if (catchUp.length) notes.push(catchUpNote(catchUp)!);
  const report: Report = {
    options: { ...o, only: o.only?.source ?? null },
    machine: { cpus: os.cpus().length, node: process.version, platform: `${process.platform}-${process.arch}`, loadAverageAtStart: loadAtStart },
    client: 'kafkajs@2.2.4',
    rdkafka: rdkafka ? `node-rdkafka (librdkafka ${rdkafka.librdkafkaVersion})` : null,
    startup,
    ...tp,
    latency,
    tls,
    cleaner,
    coordinatorLoad,
    tiered,
    rebalance,
    catchUp,
    quorum,
    notes,
    durationSeconds: round((Date.now() - t0) / 1000),
  };
  const text = o.json ? `${JSON.stringify(report, null, 2)}\n` : renderText(report);
  // Exit explicitly once the output is flushed: a KafkaJS timer left behind must not keep us alive.
  process.stdout.write(text, () => process.exit(0));
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const na = (x: string): string => (x === 'NaN' ? '-' : x);

function renderText(r: Report): string {
  const out: string[] = [];
  out.push('');
  out.push(
    `krill bench (${r.options.quick ? 'quick' : 'full'}; median of ${r.options.runs} run(s); ${r.machine.cpus} CPUs, node ${r.machine.node}; ` +
      `load average before: ${r.machine.loadAverageAtStart.join(' ')}${r.options.priority !== null ? `; nice ${r.options.priority}` : ''}; ${r.durationSeconds} s)`,
  );
  out.push('');
  if (r.workloads.length) {
    const rows: string[][] = [
      ['workload', 'msgs', 'krill msg/s', 'MB/s', 'null msg/s', 'MB/s', 'ratio', 'krill CPU s', 'µs/msg', 'main µs/msg', 'wait s', 'null CPU s', 'µs/msg', 'main µs/msg', 'client CPU s', 'krill peak RSS MB'],
    ];
    for (const w of r.workloads) {
      const k = w.median.krill;
      const z = w.median.null;
      rows.push([
        w.name,
        String(w.messages),
        String(k.msgsPerSec),
        k.mbPerSec.toFixed(1),
        na(String(z.msgsPerSec)),
        na(z.mbPerSec.toFixed(1)),
        w.kind === 'consume-group'
          ? 'krill only'
          : w.kind === 'produce-txn'
            ? (w.ratioOf === 'krill idempotent' ? `${w.ratio.toFixed(2)} of idem` : 'krill only')
            : w.ratio.toFixed(2) + ((w.kind === 'produce' || w.kind === 'fetch-kafkajs') && w.ratio < 0.9 ? ' *' : ''),
        k.brokerCpu.toFixed(2),
        k.brokerCpuUsPerMsg.toFixed(2),
        k.brokerMainCpuUsPerMsg.toFixed(2),
        k.brokerRunQueueWait.toFixed(2),
        na(z.brokerCpu.toFixed(2)),
        na(z.brokerCpuUsPerMsg.toFixed(2)),
        na(z.brokerMainCpuUsPerMsg.toFixed(2)),
        k.clientCpu.toFixed(2),
        k.brokerPeakRssMB.toFixed(0),
      ]);
    }
    out.push(table(rows));
    out.push('  * below the 0.9 target (set for KafkaJS produce and fetch; the raw fetch and rdkafka rows are informative)');
    out.push('  wait s: time krill\'s JS thread was runnable but waiting for a CPU (contention), median per run');
    out.push('  µs/msg: CPU of every thread of the broker process per message; main µs/msg: its JS thread alone (without V8\'s compiler and GC threads)');
    const groups = r.workloads.filter((w) => w.median.krill.joinMs !== undefined);
    if (groups.length) out.push(`  consume group rows: krill only (the null sink has no group coordinator); group join took ${groups.map((w) => `${w.median.krill.joinMs} ms`).join(' / ')} (not timed)`);
    for (const w of r.workloads.filter((x) => x.clientErrors)) {
      out.push(`  ${w.name}: KafkaJS logged ${w.clientErrors} error(s) in the timed runs (retried requests; each retry waits KafkaJS's backoff, about 300 ms for the first); first: ${w.firstClientError}`);
    }
    const txns = r.workloads.filter((w) => w.commit);
    if (txns.length) {
      out.push('  txn rows: krill only (the null sink coordinates no transactions); "of idem" = krill txn msg/s / krill idempotent msg/s, same size');
      for (const w of txns) {
        const c = w.commit!;
        out.push(
          `  ${w.name}: commit() p50 ${c.p50Ms.toFixed(1)} ms, p99 ${c.p99Ms.toFixed(1)} ms, max ${c.maxMs.toFixed(1)} ms over ${c.commits} commits ` +
            `(${c.transactionsPerRun} transactions of ${c.batchesPerTransaction} x ${BATCH_MESSAGES} messages per run)`,
        );
      }
    }
    out.push(`krill RSS after the workloads: ${r.krillIdleAfterWorkloadsRssMB} MB`);
    out.push('');
  }
  if (r.latency.length) {
    const rows: string[][] = [['workload (latency)', 'msgs', 'msg/s', 'MB/s', 'p50 ms', 'p99 ms', 'max ms', 'broker CPU s', 'µs/msg', 'client CPU s', 'peak RSS MB']];
    for (const l of r.latency) {
      const m = l.median;
      rows.push([
        l.name,
        String(l.messages),
        String(m.msgsPerSec),
        m.mbPerSec.toFixed(1),
        m.p50Ms.toFixed(1),
        m.p99Ms.toFixed(1),
        m.maxMs.toFixed(1),
        m.brokerCpu.toFixed(2),
        m.brokerCpuUsPerMsg.toFixed(2),
        m.clientCpu.toFixed(2),
        m.brokerPeakRssMB.toFixed(0),
      ]);
    }
    out.push(table(rows));
    out.push('');
  }
  if (r.tls.length) {
    const rows: string[][] = [['workload (tls)', 'msgs', 'PLAINTEXT msg/s', 'µs/msg', 'SSL msg/s', 'µs/msg', 'ratio SSL/PLAINTEXT']];
    for (const t of r.tls) {
      rows.push([t.name, String(t.messages), String(t.plaintext.msgsPerSec), t.plaintext.brokerCpuUsPerMsg.toFixed(2), String(t.ssl.msgsPerSec), t.ssl.brokerCpuUsPerMsg.toFixed(2), t.ratio.toFixed(2)]);
    }
    out.push(table(rows));
    out.push('');
  }
  if (r.cleaner.length) {
    const rows: string[][] = [['workload (cleaner)', 'log MB', 'written MB', 'seconds', 'read MB/s', 'written MB/s', 'crc32c MB/s', 'read/crc32c', 'written/crc32c']];
    for (const c of r.cleaner) {
      rows.push([c.name, String(c.logMB), c.writtenMB.toFixed(1), c.seconds.toFixed(2), String(c.readMBps), String(c.writtenMBps), String(c.crcMBps), c.readRatio.toFixed(2), c.writtenRatio.toFixed(3)]);
    }
    out.push(table(rows));
    out.push('');
  }
  if (r.coordinatorLoad.length) {
    const rows: string[][] = [['workload (coordinator)', 'before ms', 'records', 'cleaned ms', 'records', 'before/cleaned']];
    for (const c of r.coordinatorLoad) rows.push([c.name, c.beforeMs.toFixed(0), String(c.beforeRecords), c.afterMs.toFixed(1), String(c.afterRecords), c.ratio.toFixed(0)]);
    out.push(table(rows));
    out.push('');
  }
  if (r.tiered.catchUp.length) {
    const rows: string[][] = [['workload (tiered)', 'MB', 'remote segments', 'tiered MB/s', 'local MB/s', 'ratio tiered/local', 'tiered s', 'local s', 'empty fetches']];
    for (const c of r.tiered.catchUp) {
      rows.push([c.name, String(c.mb), String(c.remoteSegments), c.tieredMBps.toFixed(1), c.localMBps.toFixed(1), c.ratio.toFixed(2) + (c.ratio < 0.5 ? ' *' : ''), c.tieredSeconds.toFixed(2), c.localSeconds.toFixed(2), String(c.emptyTieredFetches)]);
    }
    out.push(table(rows));
    out.push('  * below the 0.5 goal');
    out.push('');
  }
  if (r.tiered.latency.length) {
    const rows: string[][] = [['workload (tiered latency)', 'fetches', 'p50 ms', 'p99 ms', 'max ms', 'cache hits', 'misses', 'bytes/response']];
    for (const l of r.tiered.latency) rows.push([l.name, String(l.fetches), l.p50Ms.toFixed(1), l.p99Ms.toFixed(1), l.maxMs.toFixed(1), String(l.hits), String(l.misses), String(l.responseBytes)]);
    out.push(table(rows));
    for (const l of r.tiered.latency.filter((x) => x.neverFetched)) {
      const n = l.neverFetched!;
      out.push(`  ${l.name}: of these, the first ${n.fetches} (one per segment, none fetched before): p50 ${n.p50Ms.toFixed(1)} ms, max ${n.maxMs.toFixed(1)} ms`);
    }
    out.push('');
  }
  if (r.tiered.copyLag.length) {
    const rows: string[][] = [['workload (tiered copy lag)', 'seconds', 'produced MB/s', 'segment MiB', 'task ms', 'local-only MiB p50', 'max', 'uncopied segments p50', 'max']];
    for (const c of r.tiered.copyLag) {
      rows.push([c.name, String(c.seconds), c.rateMBps.toFixed(1), String(c.segmentBytes / 1048576), String(c.taskIntervalMs), (c.medianLocalOnlyBytes / 1048576).toFixed(2), (c.maxLocalOnlyBytes / 1048576).toFixed(2), String(c.medianUncopiedSegments), String(c.maxUncopiedSegments)]);
    }
    out.push(table(rows));
    out.push('');
  }
  if (r.rebalance.length) {
    const rows: string[][] = [
      ['workload (rebalance, 10 -> 11 members)', 'partitions', 'stable again ms', 'min-max', 'moved', 'revoked', 'longest unowned ms', 'none owned ms', 'old members reacted ms', 'new member first ms', 'callbacks', 'joined after ms'],
    ];
    for (const b of r.rebalance) {
      const m = b.median;
      rows.push([
        b.name,
        String(b.partitions),
        String(m.stableMs),
        `${b.stableRangeMs[0]}-${b.stableRangeMs[1]}`,
        String(m.moved),
        String(m.revoked),
        String(m.maxUnownedMs),
        String(m.allUnownedMs),
        `${na(String(m.firstOldMemberReactMs))}-${na(String(m.lastOldMemberReactMs))} (${m.oldMembersInvolved})`,
        String(m.newMemberFirstAssignMs),
        String(m.callbacks),
        String(m.joinAfterSettledMs),
      ]);
    }
    out.push(table(rows));
    out.push(`  medians of ${r.options.runs} run(s); old members reacted: first-last of the old members' first callbacks (how many had one); section took ${r.rebalance[0].sectionSeconds} s`);
    out.push('');
  }
  if (r.catchUp.length) out.push(...renderCatchUp(r.catchUp, table), '');
  if (r.quorum) out.push(...renderQuorumFailover(r.quorum, table));
  const s = r.startup;
  const ok = (b: boolean): string => (b ? 'ok' : 'MISSED');
  if (s) {
    out.push(`start-up (median of ${s.samples} cold starts):`);
    out.push(table([
      ['', 'ready line ms', 'CPU ms to ready', 'Metadata answered ms', 'RSS MB (idle)'],
      ['krill (bundle)', String(s.krill.readyMs), String(s.krill.readyCpuMs), String(s.krill.metadataMs), String(s.krill.idleRssMB)],
      ['krill (plain dist/)', String(s.krillDist.readyMs), String(s.krillDist.readyCpuMs), String(s.krillDist.metadataMs), String(s.krillDist.idleRssMB)],
      ['null sink', String(s.null.readyMs), String(s.null.readyCpuMs), String(s.null.metadataMs), String(s.null.idleRssMB)],
      ['node -e (empty)', `${s.nodeBaselineMs} (to exit)`, '', '', String(s.nodeBaselineRssMB)],
      [`require dist/ (${s.modulesLoaded} modules)`, `${s.requireCliMs} (in-process)`, '', '', String(s.rssAfterRequireMB)],
    ]));
    out.push(`targets: ready < 150 ms: ${ok(s.krill.metadataMs < 150)}; idle < 60 MB: ${ok(s.krill.idleRssMB < 60)}`);
    out.push('');
  }
  for (const t of TARGETS) {
    const p = r.profile?.[t];
    if (!p) continue;
    const top = t === 'krill' ? 20 : 8;
    out.push(`${t} CPU profile ${p.file}${p.windowed ? ' (measured workloads only)' : ''}: ${p.busyMs} ms busy of ${p.totalMs} ms`);
    out.push(table([['area', 'self ms', '% busy'], ...p.areas.slice(0, 10).map((a) => [a.name, String(a.selfMs), a.pct.toFixed(1)])]));
    out.push('');
    out.push(table([['function', 'location', 'self ms', '% busy'], ...p.functions.slice(0, top).map((f) => [f.name, f.location, String(f.selfMs), f.pct.toFixed(1)])]));
    out.push('');
  }
  for (const n of r.notes) out.push(`- ${n}`);
  out.push('');
  return out.join('\n');
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1); // the exit hook in proc.ts kills any broker still running and removes temp dirs
});
