/**
 * The soak (`npm run soak`, i.e. `node dist/bench/soak.js --minutes 10`; or `--seconds N` for a
 * short run): one krill broker process under a steady produce + consume load for N minutes, its
 * memory sampled throughout, and a verdict on whether its RSS stayed flat.
 *
 *   node dist/bench/soak.js [--minutes N | --seconds N] [--rate MSGS_PER_S] [--size BYTES]
 *        [--interval-s N] [--peak producer|both] [--peak-seconds N] [--metrics-port N]
 *        [--bound-mb N] [--bound-pct N]
 *        [--krill-arg ARG ...] [--json]
 *
 * Phases: krill is spawned (fresh temp data dir, removed after; log.retention.check.interval.ms=5000
 * so that retention keeps the disk bounded; the soak topic has 3 partitions, segment.bytes 32 MiB,
 * retention.bytes 512 MiB per partition, file.delete.delay.ms 1000). Unless --rate is given, the
 * peak is measured first: a librdkafka producer (node-rdkafka, acks=-1, linger.ms 5, batches of
 * 1,000) unthrottled for --peak-seconds (default 5) to another topic, which is then deleted. With
 * `--peak producer` (the default) the peak is that producer's rate alone; with `--peak both` the same
 * kind of consumer as the soak's reads the topic meanwhile and the peak is the smaller of the produced
 * and consumed rates (conservative, for a loaded machine: on the shared 2-core VM at load 8-12 the
 * producer alone made 58,000-147,000 msg/s, and at a throttled 60,000/s the consumer read only
 * 44,000/s, so half of the producer's peak can outrun it; an unthrottled producer starves the
 * consumer, so `both` gives 6,500-16,000 msg/s there). The soak then produces at half the peak (a
 * token bucket topped up every 10 ms, random partition per message) with a KafkaJS group consumer
 * (eachBatch, autoCommit, fetch min bytes 256 KiB / max wait 250 ms) reading the topic back in a
 * process of its own. Every --interval-s
 * (default 5) it samples the broker's VmRSS / VmHWM and CPU from /proc, and, with --metrics-port
 * (krill's Prometheus endpoint; 0 picks a free port), process_resident_memory_bytes and the
 * nodejs_heap_size_used_bytes / nodejs_heap_size_total_bytes / nodejs_external_memory_bytes gauges.
 * At the end the producer is flushed, the consumer lag at that moment is recorded, and the consumer
 * is given up to 120 s to read the rest.
 *
 * The rule (exit 1 when broken): a least-squares line is fitted to RSS over the samples of the second
 * half of the run; its rise over that half (slope x the half's length) must not exceed
 * max(--bound-mb, default 10 MB; --bound-pct, default 5 %, of the half's mean RSS). Why: the first
 * half is warm-up (JIT, pooled buffers, V8 sizing its heap for the load), not growth; in the second
 * half a steady broker's RSS only saws up and down with GC, which the fit averages out, while a leak
 * proportional to traffic rises steadily (10 MB over 5 minutes at 25,000 msg/s is under 2 bytes a
 * message). The 10 MB floor is about the size of V8's old-space growth steps and of one GC sawtooth
 * on krill's ~100 MB; 5 % takes over for larger brokers. Also exit 1: a producer or consumer error,
 * fewer than 4 samples in the second half, the broker exiting, or messages produced but not consumed
 * (or consumed more than produced) after the drain. The report prints the samples' summary, the rate
 * achieved against the target, the broker's CPU per message and the lag.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { fork } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { cpuSeconds, schedSeconds, KRILL_BIN, KRILL_READY, makeTempDir, memoryMB, removeTempDir, spawnBroker, type BrokerProcess } from './proc';
import { BATCH_MESSAGES, cpuNow, loadRdkafka, now } from './workloads';
import { freePort } from './startup';

interface Options {
  seconds: number;
  rate: number | null;
  size: number;
  intervalS: number;
  peakSeconds: number;
  peakWith: 'producer' | 'both';
  metricsPort: number | null;
  boundMB: number;
  boundPct: number;
  krillArgs: string[];
  json: boolean;
}

const USAGE =
  'usage: soak.js [--minutes N | --seconds N] [--rate MSGS_PER_S] [--size BYTES] [--interval-s N] [--peak producer|both] [--peak-seconds N] ' +
  '[--metrics-port N] [--bound-mb N] [--bound-pct N] [--krill-arg ARG ...] [--json]';

function parseOptions(argv: string[]): Options {
  const o: Options = { seconds: 600, rate: null, size: 1024, intervalS: 5, peakSeconds: 5, peakWith: 'producer', metricsPort: null, boundMB: 10, boundPct: 5, krillArgs: [], json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (min = 1): number => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < min) throw new Error(`${a} needs a number >= ${min}\n${USAGE}`);
      return v;
    };
    if (a === '--minutes') o.seconds = num(0.1) * 60;
    else if (a === '--seconds') o.seconds = num();
    else if (a === '--rate') o.rate = num();
    else if (a === '--size') o.size = Math.round(num());
    else if (a === '--interval-s') o.intervalS = num(0.5);
    else if (a === '--peak-seconds') o.peakSeconds = num();
    else if (a === '--peak') {
      const v = argv[++i];
      if (v !== 'producer' && v !== 'both') throw new Error(`--peak needs producer or both\n${USAGE}`);
      o.peakWith = v;
    }
    else if (a === '--metrics-port') o.metricsPort = Math.round(num(0));
    else if (a === '--bound-mb') o.boundMB = num(0);
    else if (a === '--bound-pct') o.boundPct = num(0);
    else if (a === '--krill-arg') {
      const v = argv[++i];
      if (v === undefined) throw new Error('--krill-arg needs a value');
      o.krillArgs.push(v);
    } else if (a === '--json') o.json = true;
    else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  return o;
}

const log = (msg: string): void => void process.stderr.write(`${msg}\n`);
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const MB = 1024 * 1024;


/** The memory gauges of krill's /metrics (bytes), or null if the scrape fails. */
function scrapeMemory(port: number): Promise<{ rss: number; heapUsed: number; heapTotal: number; external: number } | null> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/metrics', timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        const gauge = (name: string): number => {
          const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(body);
          return m ? Number(m[1]) : NaN;
        };
        resolve({
          rss: gauge('process_resident_memory_bytes'),
          heapUsed: gauge('nodejs_heap_size_used_bytes'),
          heapTotal: gauge('nodejs_heap_size_total_bytes'),
          external: gauge('nodejs_external_memory_bytes'),
        });
      });
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** Bytes under `dir` (files that vanish while it is walked, as deleted segments do, are skipped). */
function dirBytes(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) total += dirBytes(p);
    else {
      try {
        total += fs.statSync(p).size;
      } catch {
        /* deleted meanwhile */
      }
    }
  }
  return total;
}

/** Least-squares slope (per second) of ys over ts. */
function slope(ts: number[], ys: number[]): number {
  const n = ts.length;
  const mt = ts.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (ts[i] - mt) * (ys[i] - my);
    den += (ts[i] - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

interface RdProducer {
  connect(opts: object, cb: (err: Error | null) => void): void;
  produce(topic: string, partition: number | null, value: Buffer, key: null): unknown;
  poll(): void;
  setPollInterval(ms: number): void;
  flush(timeoutMs: number, cb: (err: Error | null) => void): void;
  disconnect(cb: () => void): void;
  on(event: 'event.error', cb: (err: Error) => void): void;
}

/** librdkafka acks=-1 producer, connected; errors collected in `failures`. */
async function rdProducer(bootstrap: string, failures: Error[]): Promise<RdProducer> {
  const mod = loadRdkafka() as unknown as { Producer: new (conf: object, topicConf: object) => RdProducer } | null;
  if (!mod) throw new Error('node-rdkafka is not installed: the soak needs it');
  const p = new mod.Producer(
    {
      'bootstrap.servers': bootstrap,
      'client.id': 'krill-soak',
      acks: -1,
      'linger.ms': 5,
      'batch.num.messages': BATCH_MESSAGES,
      'queue.buffering.max.messages': 1000000,
      'queue.buffering.max.kbytes': 1048576,
      'compression.codec': 'none',
      dr_cb: false,
    },
    {},
  );
  p.on('event.error', (err) => failures.push(err));
  await new Promise<void>((resolve, reject) => p.connect({ timeout: 10000 }, (err) => (err ? reject(err) : resolve())));
  p.setPollInterval(100);
  return p;
}

const flush = (p: RdProducer): Promise<void> => new Promise((resolve, reject) => p.flush(120000, (err) => (err ? reject(err) : resolve())));
const QUEUE_FULL = -184;
const CONSUMER_MIN_BYTES = 256 * 1024;
const CONSUMER_MAX_WAIT_MS = 250;

/** Hands one message to librdkafka; false when its local queue is full (try again later). */
function tryProduce(p: RdProducer, topic: string, value: Buffer): boolean {
  try {
    p.produce(topic, null, value, null);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === QUEUE_FULL) return false;
    throw err;
  }
}

/** The sums of the partitions' latest and earliest offsets (ListOffsets through KafkaJS's admin). */
async function offsetSums(kafka: Kafka, topic: string): Promise<{ high: number; low: number }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offs = await admin.fetchTopicOffsets(topic);
    return { high: offs.reduce((a, p) => a + Number(p.high), 0), low: offs.reduce((a, p) => a + Number(p.low), 0) };
  } finally {
    await admin.disconnect();
  }
}

interface Reader {
  state: { consumed: number; bytes: number };
  /** pid of the consumer's process. */
  pid: number;
  stop(): Promise<void>;
}

/** What the consumer process tells the soak (IPC). */
type ConsumerReport = { joined: true } | { consumed: number; bytes: number; final?: true } | { error: string };

/**
 * Starts the consumer in a process of its own (this file with `--consumer-child`), so that it does
 * not share the soak's JS thread with the producer: in one thread, a fast producer starved it
 * (2,500-5,000 msg/s consumed while 73,000/s were produced). Resolves once it joined its group; its
 * counts arrive every 200 ms, and a last time when it is stopped.
 */
async function startConsumer(bootstrap: string, topic: string, groupId: string, errors: string[]): Promise<Reader> {
  const child = fork(__filename, ['--consumer-child', bootstrap, topic, groupId], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const state = { consumed: 0, bytes: 0 };
  let finalReport: (() => void) | null = null;
  let joined!: () => void;
  let failed!: (err: Error) => void;
  const join = new Promise<void>((resolve, reject) => {
    joined = resolve;
    failed = reject;
  });
  child.on('message', (m: ConsumerReport) => {
    if ('joined' in m) joined();
    else if ('error' in m) {
      errors.push(`consumer: ${m.error}`);
      failed(new Error(m.error));
    } else {
      state.consumed = m.consumed;
      state.bytes = m.bytes;
      if (m.final) finalReport?.();
    }
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.once('exit', (code, sig) => {
    if (finalReport === null) errors.push(`the consumer process exited (${code ?? sig}) before it was stopped`);
    failed(new Error(`the consumer process exited (${code ?? sig})`));
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([join, new Promise((_, rej) => (timer = setTimeout(() => rej(new Error(`consumer ${groupId} did not join within 30 s`)), 30000)))]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    state,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const last = new Promise<void>((r) => (finalReport = r));
      child.send('stop');
      const t = setTimeout(() => child.kill('SIGKILL'), 15000);
      await Promise.race([last.then(() => exited), exited]);
      clearTimeout(t);
    },
  };
}

/** The consumer process: a KafkaJS group member reading `topic` from the beginning (eachBatch, offsets auto-committed). */
async function consumerChild(bootstrap: string, topic: string, groupId: string): Promise<void> {
  const send = (m: ConsumerReport): void => void process.send!(m);
  const state = { consumed: 0, bytes: 0 };
  const consumer = new Kafka({ clientId: 'krill-soak-consumer', brokers: [bootstrap], logLevel: logLevel.NOTHING }).consumer({
    groupId,
    allowAutoTopicCreation: false,
    // Fetches wait for CONSUMER_MIN_BYTES (or CONSUMER_MAX_WAIT_MS) instead of returning each few records:
    // on a loaded machine a consumer paying a round trip per handful of records falls behind.
    minBytes: CONSUMER_MIN_BYTES,
    maxWaitTimeInMs: CONSUMER_MAX_WAIT_MS,
  });
  consumer.on(consumer.events.CRASH, (e) => send({ error: `crashed: ${(e.payload as { error: Error }).error.message}` }));
  consumer.on(consumer.events.GROUP_JOIN, () => send({ joined: true }));
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      for (const m of batch.messages) {
        state.consumed++;
        state.bytes += m.value?.length ?? 0;
      }
      if (batch.messages.length) resolveOffset(batch.lastOffset());
      await heartbeat();
    },
  });
  const tick = setInterval(() => send({ ...state }), 200);
  const stop = async (): Promise<void> => {
    clearInterval(tick);
    await consumer.disconnect().catch(() => undefined);
    process.send!({ ...state, final: true }, () => process.exit(0));
  };
  process.on('message', (m) => m === 'stop' && void stop());
  // The soak is gone (even killed): so are we.
  process.on('disconnect', () => process.exit(1));
}

/**
 * The peak: the producer unthrottled for `seconds`; its rate, or with `withConsumer` (a consumer
 * reading the same topic meanwhile) the rate both sides sustained: the smaller of produced/s and
 * consumed/s over the window.
 */
async function measurePeak(kafka: Kafka, bootstrap: string, size: number, seconds: number, withConsumer: boolean): Promise<{ peak: number; produced: number; consumed: number | null }> {
  const topic = 'soak-peak';
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'file.delete.delay.ms', value: '1000' }] }],
    waitForLeaders: true,
  });
  const errors: string[] = [];
  const reader = withConsumer ? await startConsumer(bootstrap, topic, 'krill-soak-peak', errors) : null;
  const failures: Error[] = [];
  const p = await rdProducer(bootstrap, failures);
  const value = randomBytes(size);
  let sent = 0;
  const t0 = now();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      try {
        for (let i = 0; i < 10000; i++) {
          if (!tryProduce(p, topic, value)) break;
          sent++;
        }
      } catch (err) {
        return reject(err as Error);
      }
      if (now() >= end) return resolve();
      setImmediate(pump);
    };
    pump();
  });
  const secs = Number(now() - t0) / 1e9;
  const consumed = reader ? reader.state.consumed : null;
  await flush(p);
  await new Promise<void>((r) => p.disconnect(() => r()));
  await reader?.stop();
  if (failures.length) throw failures[0];
  if (errors.length) throw new Error(`peak: ${errors[0]}`);
  const hwm = (await offsetSums(kafka, topic)).high;
  if (hwm !== sent) throw new Error(`peak: ${sent} messages produced, end offsets sum to ${hwm}`);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  return { peak: Math.min(sent, consumed ?? sent) / secs, produced: sent / secs, consumed: consumed === null ? null : consumed / secs };
}

interface SoakSample {
  t: number;
  rssMB: number;
  hwmMB: number;
  cpu: number;
  produced: number;
  consumed: number;
  /** The data dir's size (segments, indexes, metadata log): retention must keep it bounded. */
  diskMB: number;
  metricsRssMB?: number;
  heapUsedMB?: number;
  heapTotalMB?: number;
  externalMB?: number;
}

interface Fit {
  samples: number;
  fromS: number;
  toS: number;
  meanMB: number;
  slopeMBPerMin: number;
  riseMB: number;
}

function fit(xs: SoakSample[], f: (s: SoakSample) => number | undefined): Fit | null {
  const pts = xs.filter((s) => Number.isFinite(f(s)));
  if (pts.length < 2) return null;
  const ts = pts.map((s) => s.t);
  const ys = pts.map((s) => f(s)!);
  const k = slope(ts, ys);
  return {
    samples: pts.length,
    fromS: round(ts[0]),
    toS: round(ts[ts.length - 1]),
    meanMB: round(ys.reduce((a, b) => a + b, 0) / ys.length),
    slopeMBPerMin: round(k * 60, 3),
    riseMB: round(k * (ts[ts.length - 1] - ts[0]), 2),
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const load0 = fs.readFileSync('/proc/loadavg', 'utf8').trim();
  log(`krill soak: ${o.seconds} s, load average ${load0}`);
  const dir = makeTempDir('krill-soak-');
  const metricsPort = o.metricsPort === null ? null : o.metricsPort === 0 ? await freePort() : o.metricsPort;
  const errors: string[] = [];
  let bp: BrokerProcess | null = null;
  let exitCode = 0;
  try {
    bp = await spawnBroker({
      name: 'krill (soak)',
      args: [
        KRILL_BIN,
        '--port',
        '0',
        '--data-dir',
        dir,
        '--override',
        'log.retention.check.interval.ms=5000',
        '--override',
        'group.initial.rebalance.delay.ms=0',
        ...(metricsPort !== null ? ['--metrics-port', String(metricsPort)] : []),
        ...o.krillArgs,
      ],
      readyPattern: KRILL_READY,
      timeoutMs: 20000,
    });
    const broker = bp;
    let brokerExit: string | null = null;
    const bootstrap = `${broker.host}:${broker.port}`;
    const kafka = new Kafka({ clientId: 'krill-soak', brokers: [bootstrap], logLevel: logLevel.NOTHING });

    const peakRun = o.rate === null ? await measurePeak(kafka, bootstrap, o.size, o.peakSeconds, o.peakWith === 'both') : null;
    const peak = peakRun?.peak ?? null;
    if (peakRun) log(`peak: ${Math.round(peakRun.peak)} msg/s (librdkafka acks=-1 unthrottled, ${o.size} B, ${o.peakSeconds} s: produced ${Math.round(peakRun.produced)}/s${peakRun.consumed === null ? ', no consumer' : `, consumed ${Math.round(peakRun.consumed)}/s`})`);
    const rate = o.rate ?? Math.round(peak! / 2);
    log(`soak: ${rate} msg/s (${round((rate * o.size) / 1e6)} MB/s) for ${o.seconds} s, sampling every ${o.intervalS} s${metricsPort !== null ? `, metrics on :${metricsPort}` : ''}`);

    const topic = 'soak';
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: 3,
          replicationFactor: 1,
          configEntries: [
            { name: 'segment.bytes', value: String(32 * MB) },
            { name: 'retention.bytes', value: String(512 * MB) },
            // Deleted segments go at once rather than after Kafka's 60 s: at ~70 MB/s that is 4 GB.
            { name: 'file.delete.delay.ms', value: '1000' },
          ],
        },
      ],
      waitForLeaders: true,
    });
    await admin.disconnect();

    const reader = await startConsumer(bootstrap, topic, 'krill-soak', errors);
    const failures: Error[] = [];
    const producer = await rdProducer(bootstrap, failures);
    const value = randomBytes(o.size);
    const samples: SoakSample[] = [];
    let produced = 0;
    const t0 = now();
    const cpu0 = cpuSeconds(broker.pid);
    const consumerCpu0 = cpuSeconds(reader.pid);
    const sched0 = schedSeconds(broker.pid);
    const producerCpu0 = cpuNow();
    const elapsed = (): number => Number(now() - t0) / 1e9;
    const sample = async (): Promise<void> => {
      const mem = memoryMB(broker.pid);
      const s: SoakSample = { t: round(elapsed(), 2), rssMB: round(mem.rss, 2), hwmMB: round(mem.peak, 2), cpu: round(cpuSeconds(broker.pid) - cpu0, 2), produced, consumed: reader.state.consumed, diskMB: round(dirBytes(dir) / MB) };
      if (metricsPort !== null) {
        const m = await scrapeMemory(metricsPort);
        if (m) {
          s.metricsRssMB = round(m.rss / MB, 2);
          s.heapUsedMB = round(m.heapUsed / MB, 2);
          s.heapTotalMB = round(m.heapTotal / MB, 2);
          s.externalMB = round(m.external / MB, 2);
        }
      }
      samples.push(s);
      log(
        `  ${s.t.toFixed(0).padStart(5)} s  RSS ${s.rssMB.toFixed(1)} MB${s.heapUsedMB !== undefined ? `  heap ${s.heapUsedMB.toFixed(1)}/${s.heapTotalMB!.toFixed(1)} MB  external ${s.externalMB!.toFixed(1)} MB` : ''}` +
          `  disk ${s.diskMB.toFixed(0)} MB  produced ${produced}  consumed ${s.consumed}  lag ${produced - s.consumed}`,
      );
    };
    // Producing: a token bucket topped up every 10 ms; a full local queue just defers the rest.
    await new Promise<void>((resolve, reject) => {
      let nextSample = 0;
      const tick = setInterval(() => {
        if (brokerExit) {
          clearInterval(tick);
          return reject(new Error(brokerExit));
        }
        const t = elapsed();
        const due = Math.min(Math.floor(rate * Math.min(t, o.seconds)), Math.ceil(rate * o.seconds));
        try {
          while (produced < due && tryProduce(producer, topic, value)) produced++;
        } catch (err) {
          clearInterval(tick);
          return reject(err as Error);
        }
        if (t >= nextSample) {
          nextSample += o.intervalS;
          // /proc/<pid> is gone once the broker exits: the next tick ends the soak.
          sample().catch((err: Error) => (brokerExit = `the broker is gone (${err.message})`));
        }
        if (t >= o.seconds) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    const soakSeconds = elapsed();
    await flush(producer);
    const flushedAt = elapsed();
    const lagAtStop = produced - reader.state.consumed;
    await sample();
    const end = (await offsetSums(kafka, topic)).high;
    if (end !== produced) errors.push(`produced ${produced} messages but the partitions' end offsets sum to ${end}`);
    // Drain: the consumer gets up to 120 s to read what is left (it stops early after 20 s without progress).
    const drainStart = elapsed();
    let progressAt = drainStart;
    let last = reader.state.consumed;
    while (reader.state.consumed < produced && elapsed() - drainStart < 120 && elapsed() - progressAt < 20) {
      await new Promise((r) => setTimeout(r, 100));
      if (reader.state.consumed !== last) {
        last = reader.state.consumed;
        progressAt = elapsed();
      }
    }
    const drainSeconds = elapsed() - drainStart;
    const sched = schedSeconds(broker.pid);
    const brokerCpu = cpuSeconds(broker.pid) - cpu0;
    const consumerCpu = cpuSeconds(reader.pid) - consumerCpu0;
    const producerCpu = cpuNow() - producerCpu0;
    const consumed = reader.state.consumed;
    if (consumed !== produced) {
      const low = (await offsetSums(kafka, topic)).low;
      errors.push(
        `consumed ${consumed} of ${produced} messages after a ${round(drainSeconds)} s drain` +
          (low > 0 ? `; retention has deleted the partitions' first ${low} messages: the consumer fell behind by more than retention.bytes (try --peak both or a lower --rate)` : ''),
      );
    }
    for (const f of failures) errors.push(`producer: ${f.message}`);
    await new Promise<void>((r) => producer.disconnect(() => r()));
    await reader.stop();
    const load1 = fs.readFileSync('/proc/loadavg', 'utf8').trim();

    // The verdict, on the second half.
    const second = samples.filter((s) => s.t >= o.seconds / 2 && s.t <= soakSeconds + 0.5);
    const rss = fit(second, (s) => s.rssMB);
    const heap = fit(second, (s) => s.heapUsedMB);
    const external = fit(second, (s) => s.externalMB);
    const allowedMB = rss ? round(Math.max(o.boundMB, (o.boundPct / 100) * rss.meanMB), 2) : NaN;
    if (second.length < 4 || !rss) errors.push(`only ${second.length} samples in the second half (need 4)`);
    const grew = rss !== null && rss.riseMB > allowedMB;
    const rssAll = samples.map((s) => s.rssMB);
    const report = {
      loadAverage: { before: load0, after: load1 },
      seconds: o.seconds,
      size: o.size,
      peakMsgsPerSec: peak === null ? null : Math.round(peak),
      peakProducedMsgsPerSec: peakRun ? Math.round(peakRun.produced) : null,
      peakConsumedMsgsPerSec: peakRun?.consumed != null ? Math.round(peakRun.consumed) : null,
      peakWith: o.rate === null ? o.peakWith : null,
      targetMsgsPerSec: rate,
      achievedMsgsPerSec: Math.round(produced / soakSeconds),
      achievedMBps: round((produced * o.size) / soakSeconds / 1e6),
      produced,
      consumed,
      consumedBytes: reader.state.bytes,
      lagAtStop,
      maxSampledLag: Math.max(...samples.map((s) => s.produced - s.consumed)),
      flushSeconds: round(flushedAt - soakSeconds, 2),
      drainSeconds: round(drainSeconds, 2),
      brokerCpuSeconds: round(brokerCpu, 2),
      /** Seconds the broker's JS thread was runnable but waiting for a CPU (contention from other processes). */
      brokerRunQueueWaitSeconds: round(sched.wait - sched0.wait, 2),
      brokerMainThreadSeconds: round(sched.run - sched0.run, 2),
      brokerCpuUsPerMsg: round((brokerCpu / Math.max(1, produced)) * 1e6, 2),
      producerCpuSeconds: round(producerCpu, 2),
      consumerCpuSeconds: round(consumerCpu, 2),
      samples: samples.length,
      diskMBMax: Math.max(...samples.map((s) => s.diskMB)),
      rssMB: { first: rssAll[0], min: Math.min(...rssAll), max: Math.max(...rssAll), last: rssAll[rssAll.length - 1], peakHwm: Math.max(...samples.map((s) => s.hwmMB)) },
      secondHalf: { rss, heapUsed: heap, external },
      rule: `RSS rise over the second half (least-squares slope x its length) <= max(${o.boundMB} MB, ${o.boundPct}% of its mean RSS) = ${allowedMB} MB`,
      rssFlat: !grew,
      errors,
      samplesDetail: samples,
    };
    if (grew || errors.length) exitCode = 1;
    if (o.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      const lines = [
        '',
        `krill soak: ${round(soakSeconds)} s at ${report.achievedMsgsPerSec} msg/s (${report.achievedMBps} MB/s of ${o.size} B values; target ${rate}${peak !== null ? `, half the measured peak ${report.peakMsgsPerSec} (--peak ${o.peakWith})` : ', given'}), ` +
          `librdkafka acks=-1 producer + KafkaJS group consumer, 3 partitions`,
        `load average before ${load0}; after ${load1}`,
        `produced ${produced}, consumed ${consumed}; lag at most ${report.maxSampledLag} in the samples, ${lagAtStop} when production stopped (flush ${report.flushSeconds} s), drained in ${report.drainSeconds} s`,
        `broker CPU ${report.brokerCpuSeconds} s = ${report.brokerCpuUsPerMsg} µs per message produced (and consumed); its JS thread ran ${report.brokerMainThreadSeconds} s and waited ${report.brokerRunQueueWaitSeconds} s for a CPU; client CPU: producer (soak process) ${report.producerCpuSeconds} s, consumer process ${report.consumerCpuSeconds} s`,
        `data dir at most ${report.diskMBMax} MB on disk (retention; ${round((produced * o.size) / MB)} MiB of values produced)`,
        `RSS MB over ${samples.length} samples: first ${report.rssMB.first}, min ${report.rssMB.min}, max ${report.rssMB.max}, last ${report.rssMB.last}; VmHWM ${report.rssMB.peakHwm}`,
        rss ? `second half (${rss.fromS}-${rss.toS} s, ${rss.samples} samples): RSS mean ${rss.meanMB} MB, slope ${rss.slopeMBPerMin} MB/min, rise ${rss.riseMB} MB` : 'second half: no fit',
        heap ? `  heap used mean ${heap.meanMB} MB, slope ${heap.slopeMBPerMin} MB/min, rise ${heap.riseMB} MB` + (external ? `; external mean ${external.meanMB} MB, rise ${external.riseMB} MB` : '') : '  (no heap figures: run with --metrics-port 0)',
        `rule: ${report.rule}: ${grew ? 'BROKEN' : 'ok'}`,
        ...errors.map((e) => `error: ${e}`),
        exitCode ? 'soak FAILED' : 'soak passed',
        '',
      ];
      process.stdout.write(lines.join('\n'));
    }
  } catch (err) {
    if (bp) log(`krill (soak) stderr (tail):\n${bp.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    await bp?.stop();
    removeTempDir(dir);
  }
  process.exit(exitCode);
}

if (process.argv[2] === '--consumer-child') {
  consumerChild(process.argv[3], process.argv[4], process.argv[5]).catch((err: Error) => {
    process.send?.({ error: err.message });
    process.exit(1);
  });
} else main().catch((err) => {
  process.stderr.write(`soak failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
