/**
 * Randomized interleavings of RemoteIndexCache (seeded PRNG, reproducible): readers of every kind
 * (offset, timestamp, aborted transactions, and readers that hold their lease across awaits),
 * remote fetches completed or failed in any order, remove / removeAll, resizeCacheSize, and the
 * clock of the delete delay moving, across a few segments of different sizes, with no resident
 * budget so that held readers really read their files back.
 *
 * Checked against a model after every step:
 * - answers: every lookup equals what the segment's index entries give (computed independently,
 *   remote-index-fixtures.ts); the only rejections are the fetch failures the test injected;
 * - pins: no file a held lease uses is unlinked, truncated or overwritten by a rename (a spying fs),
 *   and a held reader finds its files on disk when it resumes;
 * - disk: the canonical files are exactly the triples of the cached segments and their bytes are
 *   sizeBytes (<= the bound); every other file is a `.deleted` file of a pending deletion (three
 *   per pending entry); no `.tmp` file is ever seen between steps;
 * - counters: one hit or one miss per read;
 * and at the end, once every fetch is answered, every lease released and the delay passed: no
 * `.deleted` file is left, every read settled, and a restart reloads exactly the cached set.
 *
 * KRILL_INDEX_CACHE_OPS (default 1500 per seed, two seeds) and KRILL_INDEX_CACHE_SEED scale it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { StorageFs, nodeFs } from '../fs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import {
  Deferred,
  FakeRemoteStorageManager,
  TestSegment,
  drainMicrotasks,
  expectedAborted,
  expectedOffsetPosition,
  expectedTimestampPosition,
  testSegment,
} from '../testing/remote-index-fixtures';
import { REMOTE_INDEX_CACHE_DIR_NAME, RemoteIndexCache, RemoteIndexLease, remoteIndexFilePrefix } from './remote-index-cache';

const OPS = Number(process.env.KRILL_INDEX_CACHE_OPS ?? 1500);
const SEEDS = process.env.KRILL_INDEX_CACHE_SEED ? [Number(process.env.KRILL_INDEX_CACHE_SEED)] : [17, 4242];
const DELAY = 1000;

afterEach(removeTempDirs);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class InjectedFetchError extends Error {}

interface Reader {
  n: number;
  seg: TestSegment;
  kind: 'offset' | 'time' | 'txn' | 'hold';
  settled: boolean;
  lease?: RemoteIndexLease;
  gate?: Deferred;
}

test.each(SEEDS)(`seed %d: ${OPS} random operations keep answers right, pinned files intact and the disk equal to the cache`, async (seed) => {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const logDir = tempDir('krill-ricache-random-');
  const dir = path.join(logDir, REMOTE_INDEX_CACHE_DIR_NAME);
  const segs = [testSegment(0, 5), testSegment(1, 12), testSegment(2, 25, null), testSegment(3, 40, 4), testSegment(4, 60, 1)];
  const byPrefix = new Map(segs.map((s) => [remoteIndexFilePrefix(s.md), s]));
  const byId = new Map(segs.map((s) => [s.md.remoteLogSegmentId.id, s]));
  const avg = segs.reduce((a, s) => a + s.cachedBytes, 0) / segs.length;

  const violations: string[] = [];
  const held = new Set<Reader>();
  const heldPaths = (): Set<string> => new Set([...held].flatMap((r) => (r.lease ? Object.values(r.lease.files) : [])));
  // Every call that could destroy a file's contents is checked against the files held leases use.
  const spyFs: StorageFs = {
    ...nodeFs,
    fsyncSync: () => {}, // durability is not what this test is about; keeps it fast
    unlinkSync: (f) => {
      if (heldPaths().has(f)) violations.push(`unlink of held ${f}`);
      nodeFs.unlinkSync(f);
    },
    renameSync: (a, b) => {
      if (heldPaths().has(b)) violations.push(`rename of ${a} over held ${b}`);
      nodeFs.renameSync(a, b);
    },
    openSync: (f, flags, mode) => {
      if (typeof flags === 'string' && flags.startsWith('w') && heldPaths().has(f)) violations.push(`truncating open of held ${f}`);
      return nodeFs.openSync(f, flags, mode);
    },
  };
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const rsm = new FakeRemoteStorageManager().add(...segs);
  rsm.hold = true;
  const open = (maxSizeBytes: number) =>
    new RemoteIndexCache({ logDir, rsm, fs: spyFs, maxSizeBytes, fileDeleteDelayMs: DELAY, maxResidentBytes: 0, time, scheduler, logger: new Logger('test', 'error') });
  const cache = open(Math.floor(2.5 * avg));

  const readers: Reader[] = [];
  const check = (r: Reader, what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) violations.push(`reader ${r.n} (${r.kind}, segment ${r.seg.md.startOffset}) ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  };
  const randomOffset = (s: TestSegment) => s.md.startOffset + BigInt(Math.floor(rnd() * Number(s.md.endOffset - s.md.startOffset + 5n))) - 2n;
  const randomTimestamp = (s: TestSegment) => (s.times.length ? s.times[0].timestamp - 50 + Math.floor(rnd() * (s.times.length * 100 + 100)) : 0);

  const startReader = () => {
    const seg = pick(segs);
    const kind = pick(['offset', 'time', 'txn', 'hold', 'hold'] as const);
    const r: Reader = { n: readers.length, seg, kind, settled: false };
    readers.push(r);
    let p: Promise<unknown>;
    if (kind === 'offset') {
      const o = randomOffset(seg);
      p = cache.lookupOffset(seg.md, o).then((got) => check(r, `lookupOffset(${o})`, got, expectedOffsetPosition(seg, o)));
    } else if (kind === 'time') {
      const ts = randomTimestamp(seg);
      const from = randomOffset(seg);
      p = cache.lookupTimestamp(seg.md, ts, from).then((got) => check(r, `lookupTimestamp(${ts}, ${from})`, got, expectedTimestampPosition(seg, ts, from)));
    } else if (kind === 'txn') {
      const a = randomOffset(seg);
      const b = a + BigInt(Math.floor(rnd() * 40));
      p = cache.collectAbortedTransactions(seg.md, a, b).then((got) =>
        check(r, `collectAbortedTransactions(${a}, ${b})`, { producerIds: got.abortedTransactions.map((t) => t.producerId.toString()), isComplete: got.isComplete }, (() => {
          const w = expectedAborted(seg, a, b);
          return { producerIds: w.producerIds.map(String), isComplete: w.isComplete };
        })()),
      );
    } else {
      const o = randomOffset(seg);
      const ts = randomTimestamp(seg);
      r.gate = new Deferred();
      p = cache.withEntry(seg.md, async (lease) => {
        r.lease = lease;
        held.add(r);
        try {
          await r.gate!.promise;
          for (const f of Object.values(lease.files)) if (!fs.existsSync(f)) violations.push(`reader ${r.n}: held file ${f} missing`);
          check(r, `held lookupOffset(${o})`, lease.lookupOffset(o).position, expectedOffsetPosition(seg, o));
          check(r, `held lookupTimestamp(${ts})`, lease.lookupTimestamp(ts, seg.md.startOffset).position, expectedTimestampPosition(seg, ts, seg.md.startOffset));
        } finally {
          held.delete(r);
        }
      });
    }
    p.then(
      () => (r.settled = true),
      (e) => {
        r.settled = true;
        if (!(e instanceof InjectedFetchError)) violations.push(`reader ${r.n} (${kind}) failed: ${(e as Error).stack}`);
      },
    );
  };

  const checkDisk = (step: string) => {
    const names = fs.readdirSync(dir);
    const cached = new Set(cache.cachedSegmentIds());
    const canonical = names.filter((n) => !n.endsWith('.deleted'));
    const deleted = names.filter((n) => n.endsWith('.deleted'));
    const want = [...cached].flatMap((id) => {
      const p = remoteIndexFilePrefix(byId.get(id)!.md);
      return [`${p}.index`, `${p}.timeindex`, `${p}.txnindex`];
    });
    if (JSON.stringify(canonical.sort()) !== JSON.stringify(want.sort())) violations.push(`${step}: canonical files ${canonical} != cached ${want}`);
    const bytes = canonical.reduce((a, n) => a + fs.statSync(path.join(dir, n)).size, 0);
    if (bytes !== cache.sizeBytes) violations.push(`${step}: canonical files hold ${bytes} bytes, sizeBytes ${cache.sizeBytes}`);
    if (cache.sizeBytes > cache.maxSizeBytes) violations.push(`${step}: sizeBytes ${cache.sizeBytes} over ${cache.maxSizeBytes}`);
    if (deleted.length !== 3 * cache.pendingDeletionCount) violations.push(`${step}: ${deleted.length} .deleted files for ${cache.pendingDeletionCount} pending deletions`);
    for (const n of deleted) if (!byPrefix.has(n.slice(0, n.indexOf('.')))) violations.push(`${step}: stray ${n}`);
  };

  for (let step = 0; step < OPS && violations.length === 0; step++) {
    const x = rnd() * 100;
    let what: string;
    if (x < 35) {
      startReader();
      what = 'read';
    } else if (x < 60) {
      what = 'complete fetch';
      if (rsm.pending.length) pick(rsm.pending).complete();
    } else if (x < 62) {
      what = 'fail fetch';
      if (rsm.pending.length) pick(rsm.pending).fail(new InjectedFetchError('injected'));
    } else if (x < 77) {
      what = 'release';
      const hs = [...held];
      if (hs.length) pick(hs).gate!.resolve();
    } else if (x < 83) {
      const s = pick(segs);
      what = `remove ${s.md.startOffset}`;
      cache.remove(s.md.remoteLogSegmentId.id);
    } else if (x < 85) {
      what = 'removeAll';
      cache.removeAll(segs.filter(() => rnd() < 0.4).map((s) => s.md.remoteLogSegmentId.id));
    } else if (x < 89) {
      const size = Math.floor(rnd() * 3.5 * avg);
      what = `resize ${size}`;
      cache.resizeCacheSize(size);
    } else {
      const ms = Math.floor(rnd() * 1.5 * DELAY);
      what = `tick ${ms}`;
      scheduler.tick(ms);
    }
    await drainMicrotasks();
    checkDisk(`step ${step} (${what})`);
  }
  expect(violations).toEqual([]);

  // Quiesce: answer every fetch, release every lease, let the delay pass.
  for (let rounds = 0; rsm.pending.length > 0 || held.size > 0; rounds++) {
    expect(rounds).toBeLessThan(100);
    rsm.completeAll();
    for (const r of held) r.gate!.resolve();
    await drainMicrotasks();
  }
  scheduler.tick(DELAY);
  await drainMicrotasks();
  checkDisk('quiesced');
  expect(violations).toEqual([]);
  expect(readers.every((r) => r.settled)).toBe(true);
  expect(cache.pendingDeletionCount).toBe(0);
  expect(fs.readdirSync(dir).filter((n) => !n.endsWith('.index') && !n.endsWith('.timeindex') && !n.endsWith('.txnindex'))).toEqual([]);
  expect(cache.stats.hitCount + cache.stats.missCount).toBe(readers.length);

  // A restart reloads exactly what was cached, and serves it without fetching.
  const cached = new Set(cache.cachedSegmentIds());
  const size = cache.sizeBytes;
  await cache.close();
  const again = open(cache.maxSizeBytes);
  expect(new Set(again.cachedSegmentIds())).toEqual(cached);
  expect(again.sizeBytes).toBe(size);
  rsm.hold = false;
  const calls = rsm.calls.length;
  for (const id of cached) {
    const s = byId.get(id)!;
    expect(await again.lookupOffset(s.md, s.md.endOffset)).toBe(expectedOffsetPosition(s, s.md.endOffset));
  }
  expect(rsm.calls.length).toBe(calls);
  await again.close();
  // eslint-disable-next-line no-console
  if (process.env.KRILL_INDEX_CACHE_OPS) console.log(`seed ${seed}: ${readers.length} reads, stats ${JSON.stringify(cache.stats)}`);
});
