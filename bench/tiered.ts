/**
 * Tiered storage rows of the bench (KIP-405 on S3), all in the bench process: s3rver (a real S3
 * HTTP server on 127.0.0.1) and one krill broker started with startBroker, configured with Aiven's
 * plugin property names as s3.test.ts is; the bench's wire client (bench/wire-client.ts) is the
 * consumer. So the broker, the store and the client share one event loop: every figure here is
 * for that single thread.
 * - 'tiered catch-up s3 1KiB': a consumer (Fetch v11, 10 MB max, 1 MiB per partition, one in
 *   flight, as KafkaJS's consumer) reads ~50 MB of 1 KiB records (batches of 100) from offset 0
 *   of a tiered topic whose every segment but the active one is only in S3, and the same data from
 *   a topic whose data is all local, same broker, same run (alternating which goes first).
 *   Reported: MB/s (record values, MiB) of both and the ratio tiered / local (the goal is >= 0.5).
 * - 'tiered fetch latency s3 index-cache hit|miss': one Fetch of the tiered topic at a remote
 *   offset at a time, timed from send to response (p50 / p99 / max ms). hit: the same segment's
 *   offset again (the cache holds its indexes; checked with the cache's hit counter); miss: with
 *   remote.log.index.file.cache.total.size.bytes=1 (a dynamic cluster default, removed again
 *   afterwards) so every lookup fetches the three indexes from S3 first (checked with the miss
 *   counter), cycling over the segments; the miss row runs first, so the first pass of its first
 *   run is over segments never fetched before (reported apart).
 * - 'tiered copy lag s3 1KiB': a producer writes 1 KiB records at a steady rate for ~10 s to a
 *   tiered topic with 1 MiB segments; every 100 ms the leader log's onlyLocalLogSegmentsSize and
 *   the number of rolled local segments not yet copied (onlyLocalLogSegmentsCount - 1, the active
 *   segment excluded) are sampled; median and max reported, with the task interval used.
 * Each figure is the median over --runs runs (latencies are pooled over the runs).
 * Invariants: every run checks that it read exactly the records produced (offsets 0..end, none
 * missing) and that the tiered topic's local log starts above offset 0 (the reads really went to
 * S3); the broker, s3rver and the temp dirs are closed and removed even when a run fails.
 */
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBroker, type RunningBroker } from '../broker';
import { connect, produce, type BrokerConnection } from '../client/network-client';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import type { UnifiedLog } from '../storage/unified-log';
import type { RemoteIndexCache } from '../storage/remote/remote-index-cache';
import { makeTempDir, removeTempDir } from './proc';
import { WireClient } from './wire-client';
import { FETCH_MAX_BYTES, FETCH_PARTITION_MAX_BYTES, percentile } from './workloads';

const MiB = 1024 * 1024;
const SIZE = 1024;
const PER_BATCH = 100;
/** remote.log.manager.task.interval.ms of the bench broker (Kafka's default is 30 s). */
export const TIERED_TASK_INTERVAL_MS = 500;
/** segment.bytes of the catch-up topics. */
export const CATCH_UP_SEGMENT_BYTES = 4 * MiB;
/** segment.bytes and produce rate of the copy-lag topic. */
export const COPY_LAG_SEGMENT_BYTES = MiB;
export const COPY_LAG_RATE_BYTES = 4 * MiB;

export const tieredCatchUpName = 'tiered catch-up s3 1KiB';
export const tieredLatencyName = (kind: 'hit' | 'miss'): string => `tiered fetch latency s3 index-cache ${kind}`;
export const tieredCopyLagName = 'tiered copy lag s3 1KiB';

export interface TieredCatchUpRow {
  name: string;
  mb: number;
  records: number;
  remoteSegments: number;
  segmentBytes: number;
  /** Medians over the runs. */
  tieredMBps: number;
  localMBps: number;
  ratio: number;
  tieredSeconds: number;
  localSeconds: number;
  /** Fetch responses with no records (a remote read that missed remote.fetch.max.wait.ms), summed over the runs. */
  emptyTieredFetches: number;
}

export interface TieredLatencyRow {
  name: string;
  fetches: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Index cache counters over the measured fetches. */
  hits: number;
  misses: number;
  /** Bytes per response (median). */
  responseBytes: number;
  /** miss row: the first pass of its first run, over segments no fetch had touched (before the hit and catch-up rows). */
  neverFetched?: { fetches: number; p50Ms: number; maxMs: number };
}

export interface TieredCopyLagRow {
  name: string;
  seconds: number;
  rateMBps: number;
  segmentBytes: number;
  taskIntervalMs: number;
  /** Medians over the runs of each run's median / max. */
  medianLocalOnlyBytes: number;
  maxLocalOnlyBytes: number;
  medianUncopiedSegments: number;
  maxUncopiedSegments: number;
  samples: number;
}

export interface TieredReport {
  catchUp: TieredCatchUpRow[];
  latency: TieredLatencyRow[];
  copyLag: TieredCopyLagRow[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}

const BUCKET = 'krill-bench-tiered';

async function startS3(dir: string): Promise<{ port: number; close(): Promise<void> }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('s3rver') as new (o: Record<string, unknown>) => S3rverInstance;
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: BUCKET }] });
  const { port } = await s3.run();
  return {
    port,
    close: async () => {
      const closed = s3.close();
      s3.httpServer?.closeAllConnections();
      await closed;
    },
  };
}

async function createTopic(conn: BrokerConnection, name: string, configs: Record<string, string>): Promise<void> {
  const res = await conn.send('CreateTopics', undefined, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }],
    timeoutMs: 10_000,
  });
  if (res.topics[0].errorCode !== 0) throw new Error(`CreateTopics ${name}: error ${res.topics[0].errorCode}`);
}

/** Resolves once cond() holds, checking at each interval; rejects after timeoutMs. */
async function until(what: string, cond: () => boolean, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function logOf(broker: RunningBroker, topic: string): UnifiedLog {
  const log = broker.server.logManager.getLog(topic, 0);
  if (!log) throw new Error(`${topic}-0 is not on the broker`);
  return log;
}

const value = Buffer.alloc(SIZE, 0x62);
const batchOf = (n: number): Buffer => buildRecordBatch(Array.from({ length: n }, () => ({ value })));

/** Produces `records` 1 KiB records in batches of 100, acks=1, 4 batches in flight. */
async function produceRecords(conn: BrokerConnection, topic: string, records: number): Promise<void> {
  const batch = batchOf(PER_BATCH);
  let sent = 0;
  const lane = async (): Promise<void> => {
    while (sent < records) {
      const n = Math.min(PER_BATCH, records - sent);
      sent += n;
      await produce(conn, topic, 0, n === PER_BATCH ? batch : batchOf(n), { acks: 1 });
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}

interface FetchResult {
  records: number;
  seconds: number;
  empty: number;
}

function fetchOnce(client: WireClient, topic: string, offset: bigint) {
  return client.request('Fetch', 11, {
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: FETCH_MAX_BYTES,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, logStartOffset: -1n, partitionMaxBytes: FETCH_PARTITION_MAX_BYTES }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
}

/** The whole batches of a fetch response: the next offset and the records at or after `offset`. */
function walkBatches(recs: Buffer, offset: bigint): { next: bigint; records: number } {
  let next = offset;
  let records = 0;
  for (let pos = 0; pos + 61 <= recs.length; ) {
    const len = recs.readInt32BE(pos + 8) + 12;
    if (pos + len > recs.length) break;
    const base = recs.readBigInt64BE(pos);
    const last = base + BigInt(recs.readInt32BE(pos + 23));
    if (base !== next && next !== offset) throw new Error(`gap in the fetched batches: ${next} then ${base}`);
    if (last >= offset) records += Number(base >= offset ? BigInt(recs.readInt32BE(pos + 57)) : last - offset + 1n);
    next = last + 1n;
    pos += len;
  }
  return { next, records };
}

/** Reads the partition from offset 0 to `end` (exclusive) as a consumer would; checks that every offset came. */
async function readAll(client: WireClient, topic: string, end: bigint): Promise<FetchResult> {
  let offset = 0n;
  let records = 0;
  let empty = 0;
  const t0 = process.hrtime.bigint();
  while (offset < end) {
    const res = await fetchOnce(client, topic, offset);
    if (res.errorCode !== 0) throw new Error(`fetch error ${res.errorCode}`);
    const p = res.responses[0]?.partitions[0];
    if (!p) throw new Error('fetch response without the partition');
    if (p.errorCode !== 0) throw new Error(`fetch of ${topic} at ${offset}: error ${p.errorCode}`);
    const recs = p.records;
    if (!recs || recs.length < 61) {
      if (++empty > 100) throw new Error(`${topic}: 100 empty fetches at offset ${offset}`);
      continue;
    }
    const w = walkBatches(recs, offset);
    if (w.next === offset) throw new Error(`no whole batch in a ${recs.length}-byte fetch at offset ${offset}`);
    records += w.records;
    offset = w.next;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (records !== Number(end)) throw new Error(`${topic}: read ${records} records, expected ${end}`);
  return { records, seconds, empty };
}

/** The start offsets of the partition's remote segments, from the remote log metadata (one leader epoch). */
async function remoteSegmentStarts(broker: RunningBroker, topic: string): Promise<{ start: bigint; end: bigint }[]> {
  const ts = broker.server.tieredStorage;
  const log = logOf(broker, topic);
  if (!ts || log.topicId === undefined) throw new Error('tiered storage is not running');
  const tp = { topicId: log.topicId, topic, partition: 0 };
  const out: { start: bigint; end: bigint }[] = [];
  for (let off = 0n; off < log.localLogStartOffset; ) {
    const m = await ts.remoteLogSegmentMetadataFor(tp, log.leaderEpochCache.epochForOffset(off), off);
    if (!m) break;
    out.push({ start: m.startOffset, end: m.endOffset });
    off = m.endOffset + 1n;
  }
  return out;
}

async function setIndexCacheSize(conn: BrokerConnection, cache: RemoteIndexCache, bytes: number | null): Promise<void> {
  const res = await conn.send('IncrementalAlterConfigs', 1, {
    resources: [{ resourceType: 4, resourceName: '', configs: [{ name: 'remote.log.index.file.cache.total.size.bytes', configOperation: bytes === null ? 1 : 0, value: bytes === null ? null : String(bytes) }] }],
    validateOnly: false,
  });
  if (res.responses[0].errorCode !== 0) throw new Error(`IncrementalAlterConfigs: error ${res.responses[0].errorCode} ${res.responses[0].errorMessage}`);
  const want = bytes ?? 1024 * MiB;
  await until(`index cache size ${want}`, () => cache.maxSizeBytes === want, 10_000);
}

/** Times single fetches at `offsets` (cycled) `n` times; the index cache's counters over them. */
async function timedFetches(client: WireClient, topic: string, offsets: bigint[], n: number, cache: RemoteIndexCache): Promise<{ ms: number[]; hits: number; misses: number; bytes: number[] }> {
  const ms: number[] = [];
  const bytes: number[] = [];
  const h0 = cache.stats.hitCount;
  const m0 = cache.stats.missCount;
  for (let i = 0; i < n; i++) {
    const offset = offsets[i % offsets.length];
    const t = process.hrtime.bigint();
    const res = await fetchOnce(client, topic, offset);
    const elapsed = Number(process.hrtime.bigint() - t) / 1e6;
    const p = res.responses[0]?.partitions[0];
    if (!p || p.errorCode !== 0 || !p.records || p.records.length < 61) throw new Error(`remote fetch at ${offset} answered ${p?.errorCode} with ${p?.records?.length ?? 0} bytes`);
    ms.push(elapsed);
    bytes.push(p.records.length);
  }
  return { ms, hits: cache.stats.hitCount - h0, misses: cache.stats.missCount - m0, bytes };
}

/** One copy-lag run: a fresh topic, a paced producer for `seconds`, samples every 100 ms. */
async function copyLagRun(broker: RunningBroker, conn: BrokerConnection, topic: string, seconds: number): Promise<{ bytes: number[]; segments: number[]; rate: number }> {
  await createTopic(conn, topic, { 'remote.storage.enable': 'true', 'segment.bytes': String(COPY_LAG_SEGMENT_BYTES), 'local.retention.bytes': '1', 'retention.ms': '-1' });
  await until(`${topic}-0 on the broker`, () => broker.server.logManager.getLog(topic, 0) !== undefined, 10_000);
  const log = logOf(broker, topic);
  const perTick = Math.max(1, Math.round((COPY_LAG_RATE_BYTES / SIZE) / 100)); // records per 10 ms
  const batch = batchOf(perTick);
  const bytes: number[] = [];
  const segments: number[] = [];
  const sampler = setInterval(() => {
    bytes.push(log.onlyLocalLogSegmentsSize);
    segments.push(log.onlyLocalLogSegmentsCount - 1);
  }, 100);
  const t0 = Date.now();
  let sent = 0;
  try {
    // paced: each 10 ms tick's batch goes out when its time has come (no catching up in bursts beyond one tick)
    for (let tick = 0; Date.now() - t0 < seconds * 1000; tick++) {
      const due = t0 + tick * 10;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await produce(conn, topic, 0, batch, { acks: 1 });
      sent += perTick;
    }
  } finally {
    clearInterval(sampler);
  }
  const elapsed = (Date.now() - t0) / 1000;
  return { bytes, segments, rate: (sent * SIZE) / MiB / elapsed };
}

/** The selected tiered-storage rows. */
export async function measureTiered(o: { quick: boolean; runs: number }, selected: (name: string) => boolean, log: (s: string) => void): Promise<TieredReport> {
  const report: TieredReport = { catchUp: [], latency: [], copyLag: [] };
  const wantCatchUp = selected(tieredCatchUpName);
  const wantLatency = (['hit', 'miss'] as const).filter((k) => selected(tieredLatencyName(k)));
  const wantCopyLag = selected(tieredCopyLagName);
  if (!wantCatchUp && wantLatency.length === 0 && !wantCopyLag) return report;

  const root = makeTempDir('krill-bench-tiered-');
  let s3: { port: number; close(): Promise<void> } | null = null;
  let broker: RunningBroker | null = null;
  let conn: BrokerConnection | null = null;
  let client: WireClient | null = null;
  try {
    s3 = await startS3(root);
    broker = await startBroker({
      logLevel: 'error',
      config: {
        'auto.create.topics.enable': false,
        'remote.log.storage.system.enable': true,
        'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
        'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
        'rsm.config.storage.s3.bucket.name': BUCKET,
        'rsm.config.storage.s3.region': 'us-east-1',
        'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${s3.port}`,
        'rsm.config.storage.s3.path.style.access.enabled': true,
        'rsm.config.storage.aws.access.key.id': 'S3RVER',
        'rsm.config.storage.aws.secret.access.key': 'S3RVER',
        'remote.log.manager.task.interval.ms': TIERED_TASK_INTERVAL_MS,
        'log.retention.check.interval.ms': 200,
        'rlmm.config.remote.log.metadata.topic.num.partitions': 3,
        'rlmm.config.remote.log.metadata.topic.replication.factor': 1,
      },
    });
    const [host, port] = broker.bootstrapServers[0].split(':');
    conn = await connect(host, Number(port), { clientId: 'krill-bench-tiered' });
    client = await WireClient.connect(host, Number(port));
    const cache = broker.server.tieredStorage?.remoteIndexCache;
    if (!cache) throw new Error('the broker has no remote index cache');

    if (wantCatchUp || wantLatency.length > 0) {
      const mb = o.quick ? 8 : 50;
      const records = Math.floor((mb * MiB) / SIZE / PER_BATCH) * PER_BATCH;
      const common = { 'segment.bytes': String(CATCH_UP_SEGMENT_BYTES), 'retention.ms': '-1' };
      await createTopic(conn, 'tiered', { ...common, 'remote.storage.enable': 'true', 'local.retention.bytes': '1' });
      await createTopic(conn, 'local', common);
      await until('the topics on the broker', () => broker!.server.logManager.getLog('tiered', 0) !== undefined && broker!.server.logManager.getLog('local', 0) !== undefined, 10_000);
      log(`tiered: producing ${records} x 1 KiB records to a tiered and a local topic (${CATCH_UP_SEGMENT_BYTES / MiB} MiB segments)`);
      await produceRecords(conn, 'tiered', records);
      await produceRecords(conn, 'local', records);
      const tlog = logOf(broker, 'tiered');
      const t = Date.now();
      await until('the tiered topic in S3 up to its active segment', () => tlog.localLogStartOffset >= tlog.activeSegment.baseOffset && tlog.highestOffsetInRemoteStorage >= tlog.activeSegment.baseOffset - 1n, 120_000, 100);
      const segs = await remoteSegmentStarts(broker, 'tiered');
      log(`  ${segs.length} segments copied to S3 and deleted locally in ${((Date.now() - t) / 1000).toFixed(1)} s; local log starts at ${tlog.localLogStartOffset} of ${tlog.logEndOffset}`);
      if (tlog.localLogStartOffset <= 0n || segs.length === 0) throw new Error('nothing of the tiered topic is in remote storage');
      const end = BigInt(records);

      // an offset in the middle of each remote segment
      const mids = segs.map((s) => s.start + (s.end - s.start) / 2n);
      const perRun = o.quick ? 20 : 60;
      // the miss row first: its first pass is over segments nothing has fetched yet
      for (const kind of [...wantLatency].sort((x, y) => (x === 'miss' ? -1 : y === 'miss' ? 1 : 0))) {
        const pooled: { ms: number[]; hits: number; misses: number; bytes: number[] } = { ms: [], hits: 0, misses: 0, bytes: [] };
        const neverFetched: number[] = [];
        if (kind === 'miss') await setIndexCacheSize(conn, cache, 1);
        try {
          for (let r = 0; r < o.runs; r++) {
            // hit: one segment, warmed by one untimed fetch; miss: every segment in turn, the cache holding nothing
            const offsets = kind === 'hit' ? [mids[r % mids.length]] : mids;
            if (kind === 'hit') await timedFetches(client, 'tiered', offsets, 1, cache);
            const s = await timedFetches(client, 'tiered', offsets, perRun, cache);
            if (kind === 'miss' && r === 0) neverFetched.push(...s.ms.slice(0, mids.length));
            pooled.ms.push(...s.ms);
            pooled.bytes.push(...s.bytes);
            pooled.hits += s.hits;
            pooled.misses += s.misses;
            log(`  ${tieredLatencyName(kind)} run ${r + 1}/${o.runs}: p50 ${median(s.ms).toFixed(1)} ms, max ${Math.max(...s.ms).toFixed(1)} ms (${s.hits} hits, ${s.misses} misses)`);
          }
        } finally {
          if (kind === 'miss') await setIndexCacheSize(conn, cache, null);
        }
        if (kind === 'hit' && pooled.misses > 0) throw new Error(`index-cache hit row: ${pooled.misses} lookups missed`);
        if (kind === 'miss' && pooled.hits > 0) throw new Error(`index-cache miss row: ${pooled.hits} lookups hit`);
        const sorted = [...pooled.ms].sort((a, b) => a - b);
        report.latency.push({
          name: tieredLatencyName(kind),
          fetches: sorted.length,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          maxMs: sorted[sorted.length - 1],
          hits: pooled.hits,
          misses: pooled.misses,
          responseBytes: median(pooled.bytes),
          ...(neverFetched.length ? { neverFetched: { fetches: neverFetched.length, p50Ms: median(neverFetched), maxMs: Math.max(...neverFetched) } } : {}),
        });
        report.latency.sort((x, y) => x.name.localeCompare(y.name));
      }

      if (wantCatchUp) {
        const samples: { tiered: FetchResult; local: FetchResult }[] = [];
        for (let r = 0; r < o.runs; r++) {
          let tiered: FetchResult;
          let local: FetchResult;
          if (r % 2 === 0) {
            tiered = await readAll(client, 'tiered', end);
            local = await readAll(client, 'local', end);
          } else {
            local = await readAll(client, 'local', end);
            tiered = await readAll(client, 'tiered', end);
          }
          samples.push({ tiered, local });
          const mbps = (f: FetchResult): number => (f.records * SIZE) / MiB / f.seconds;
          log(`  ${tieredCatchUpName} run ${r + 1}/${o.runs}: tiered ${mbps(tiered).toFixed(1)} MB/s (${tiered.seconds.toFixed(2)} s, ${tiered.empty} empty fetches), local ${mbps(local).toFixed(1)} MB/s (${local.seconds.toFixed(2)} s)`);
        }
        const mbOf = (f: FetchResult): number => (f.records * SIZE) / MiB / f.seconds;
        const tiered = median(samples.map((s) => mbOf(s.tiered)));
        const local = median(samples.map((s) => mbOf(s.local)));
        report.catchUp.push({
          name: tieredCatchUpName,
          mb: Math.round((records * SIZE) / MiB),
          records,
          remoteSegments: segs.length,
          segmentBytes: CATCH_UP_SEGMENT_BYTES,
          tieredMBps: tiered,
          localMBps: local,
          ratio: tiered / local,
          tieredSeconds: median(samples.map((s) => s.tiered.seconds)),
          localSeconds: median(samples.map((s) => s.local.seconds)),
          emptyTieredFetches: samples.reduce((n, s) => n + s.tiered.empty, 0),
        });
      }
    }

    if (wantCopyLag) {
      const seconds = o.quick ? 4 : 10;
      const runs: { bytes: number[]; segments: number[]; rate: number }[] = [];
      for (let r = 0; r < o.runs; r++) {
        const s = await copyLagRun(broker, conn, `copylag-${r}`, seconds);
        runs.push(s);
        log(`  ${tieredCopyLagName} run ${r + 1}/${o.runs}: ${s.rate.toFixed(1)} MB/s produced; local-only bytes median ${(median(s.bytes) / MiB).toFixed(2)} MiB, max ${(Math.max(...s.bytes) / MiB).toFixed(2)} MiB; uncopied segments median ${median(s.segments)}, max ${Math.max(...s.segments)}`);
      }
      report.copyLag.push({
        name: tieredCopyLagName,
        seconds,
        rateMBps: median(runs.map((s) => s.rate)),
        segmentBytes: COPY_LAG_SEGMENT_BYTES,
        taskIntervalMs: TIERED_TASK_INTERVAL_MS,
        medianLocalOnlyBytes: median(runs.map((s) => median(s.bytes))),
        maxLocalOnlyBytes: median(runs.map((s) => Math.max(...s.bytes))),
        medianUncopiedSegments: median(runs.map((s) => median(s.segments))),
        maxUncopiedSegments: median(runs.map((s) => Math.max(...s.segments))),
        samples: runs.reduce((n, s) => n + s.bytes.length, 0),
      });
    }
  } finally {
    client?.close();
    await conn?.close();
    await broker?.close();
    await s3?.close();
    removeTempDir(root);
  }
  return report;
}
