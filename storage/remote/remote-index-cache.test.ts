/**
 * RemoteIndexCache unit tests, after Kafka's RemoteIndexCacheTest: file names and location, hits
 * without refetching, the missing transaction index, LRU eviction by bytes and resizeCacheSize,
 * reload on restart (leftovers cleaned, incomplete and malformed triples dropped), corrupt copies
 * refetched, corrupt remote indexes refused, single flight, fetch failures, remove / removeAll,
 * close, a failed rename to `.deleted` (the file stays owned), and the resident-copy budget. The race of apache/kafka#19462 has its own seed test (remote-index-cache.seed.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { CorruptIndexError } from '../errors';
import { FaultyFs } from '../testing/faulty-fs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { FakeRemoteStorageManager, TestSegment, drainMicrotasks, expectedAborted, expectedTimestampPosition, testSegment } from '../testing/remote-index-fixtures';
import { IndexType, RemoteStorageError } from './remote-storage-manager';
import {
  REMOTE_INDEX_CACHE_DIR_NAME,
  RemoteIndexCache,
  RemoteIndexCacheOptions,
  remoteIndexFilePrefix,
  remoteOffsetIndexFileName,
  remoteTimeIndexFileName,
  remoteTransactionIndexFileName,
} from './remote-index-cache';

const DELAY = 1000;

afterEach(removeTempDirs);

function harness(segs: TestSegment[], opts: Partial<RemoteIndexCacheOptions> = {}, logDir = tempDir('krill-ricache-')) {
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const rsm = new FakeRemoteStorageManager().add(...segs);
  const open = (extra: Partial<RemoteIndexCacheOptions> = {}) =>
    new RemoteIndexCache({ logDir, rsm, fileDeleteDelayMs: DELAY, time, scheduler, logger: new Logger('test', 'error'), ...opts, ...extra });
  const cache = open();
  const dir = path.join(logDir, REMOTE_INDEX_CACHE_DIR_NAME);
  const files = () => fs.readdirSync(dir).sort();
  return { cache, rsm, time, scheduler, dir, files, open, logDir };
}

const id = (s: TestSegment) => s.md.remoteLogSegmentId.id;
const triple = (s: TestSegment) => [remoteOffsetIndexFileName(s.md), remoteTimeIndexFileName(s.md), remoteTransactionIndexFileName(s.md)].sort();

test("index files are named and placed as Kafka's, and a second lookup is a hit that fetches nothing", async () => {
  const s = testSegment(3, 20);
  const { cache, rsm, dir, files } = harness([s]);
  expect(await cache.lookupOffset(s.md, s.offsets[4].offset)).toBe(s.offsets[4].position);
  expect(files()).toEqual(triple(s));
  expect(remoteOffsetIndexFileName(s.md)).toBe(`300000_${id(s)}.index`);
  expect(rsm.callsFor(id(s)).sort()).toEqual([IndexType.OFFSET, IndexType.TIMESTAMP, IndexType.TRANSACTION].sort());
  expect(fs.readFileSync(path.join(dir, remoteOffsetIndexFileName(s.md)))).toEqual(s.offsetBytes);
  expect(fs.readFileSync(path.join(dir, remoteTimeIndexFileName(s.md)))).toEqual(s.timeBytes);
  expect(fs.readFileSync(path.join(dir, remoteTransactionIndexFileName(s.md)))).toEqual(s.txnBytes);

  expect(await cache.lookupOffset(s.md, s.offsets[5].offset + 1n)).toBe(s.offsets[5].position);
  expect(await cache.lookupOffset(s.md, s.md.startOffset - 1n)).toBe(0); // below every entry: the segment's start
  expect(await cache.lookupOffset(s.md, s.md.endOffset + 10n)).toBe(s.offsets[19].position);
  expect(rsm.calls).toHaveLength(3);
  expect(cache.stats).toMatchObject({ hitCount: 3, missCount: 1, loadSuccessCount: 1, loadFailureCount: 0 });
  expect(cache.sizeBytes).toBe(s.cachedBytes);
  await cache.close();
});

test('lookupTimestamp and collectAbortedTransactions answer from the time and transaction indexes', async () => {
  const s = testSegment(1, 30, 3);
  const { cache } = harness([s]);
  for (const [ts, from] of [
    [s.times[0].timestamp - 1, s.md.startOffset],
    [s.times[12].timestamp, s.md.startOffset],
    [s.times[12].timestamp + 50, s.md.startOffset],
    [s.times[3].timestamp, s.offsets[20].offset], // startingOffset beyond the time index's answer wins
    [s.times[29].timestamp + 1000, s.md.startOffset],
  ] as const) {
    expect(await cache.lookupTimestamp(s.md, ts, from)).toBe(expectedTimestampPosition(s, ts, from));
  }
  for (const [a, b] of [
    [s.md.startOffset, s.md.endOffset + 1n],
    [s.md.startOffset + 6n, s.md.startOffset + 13n],
    [s.md.startOffset + 100n, s.md.endOffset + 1n],
  ] as const) {
    const r = await cache.collectAbortedTransactions(s.md, a, b);
    const want = expectedAborted(s, a, b);
    expect(r.abortedTransactions.map((t) => t.producerId)).toEqual(want.producerIds);
    expect(r.isComplete).toBe(want.isComplete);
  }
  await cache.close();
});

test('a segment without a transaction index gets an empty .txnindex (as Kafka) and no aborted transactions', async () => {
  const s = testSegment(0, 10, null);
  const { cache, dir } = harness([s]);
  expect(await cache.collectAbortedTransactions(s.md, 0n, 1000n)).toEqual({ abortedTransactions: [], isComplete: false });
  expect(fs.statSync(path.join(dir, remoteTransactionIndexFileName(s.md))).size).toBe(0);
  expect(cache.sizeBytes).toBe(s.offsetBytes.length + s.timeBytes.length);
  await cache.close();
});

test('LRU eviction by total file bytes: the least recently used entry goes, its files after the delete delay', async () => {
  const [a, b, c] = [testSegment(0, 20), testSegment(1, 20), testSegment(2, 20)];
  const { cache, rsm, files, scheduler } = harness([a, b, c], { maxSizeBytes: a.cachedBytes + b.cachedBytes });
  await cache.lookupOffset(a.md, 0n);
  await cache.lookupOffset(b.md, 0n);
  await cache.lookupOffset(a.md, 0n); // a is now the most recently used
  expect(cache.sizeBytes).toBe(a.cachedBytes + b.cachedBytes);
  await cache.lookupOffset(c.md, 0n);
  expect(cache.cachedSegmentIds()).toEqual([id(a), id(c)]);
  expect(cache.stats.evictionCount).toBe(1);
  expect(cache.stats.evictionBytes).toBe(b.cachedBytes);
  expect(cache.sizeBytes).toBe(a.cachedBytes + c.cachedBytes);
  expect(files()).toEqual([...triple(a), ...triple(b).map((f) => f + '.deleted'), ...triple(c)].sort());
  scheduler.tick(DELAY);
  expect(files()).toEqual([...triple(a), ...triple(c)].sort());
  // b comes back through a fetch, evicting a (now least recently used).
  await cache.lookupOffset(b.md, 0n);
  expect(rsm.callsFor(id(b))).toHaveLength(6);
  expect(cache.cachedSegmentIds()).toEqual([id(c), id(b)]);
  await cache.close();
});

test('an entry larger than the whole cache is served, then evicted at once', async () => {
  const s = testSegment(0, 40);
  const { cache, files, scheduler } = harness([s], { maxSizeBytes: s.cachedBytes - 1 });
  expect(await cache.lookupOffset(s.md, s.offsets[7].offset)).toBe(s.offsets[7].position);
  expect(cache.entryCount).toBe(0);
  scheduler.tick(DELAY);
  expect(files()).toEqual([]);
  await cache.close();
});

test('resizeCacheSize shrinks (evicting least recently used first) and grows at run time', async () => {
  const segs = [testSegment(0, 10), testSegment(1, 10), testSegment(2, 10)];
  const one = segs[0].cachedBytes;
  const { cache, files, scheduler } = harness(segs, { maxSizeBytes: 3 * one });
  for (const s of segs) await cache.lookupOffset(s.md, 0n);
  expect(cache.entryCount).toBe(3);
  cache.resizeCacheSize(2 * one);
  expect(cache.cachedSegmentIds()).toEqual([id(segs[1]), id(segs[2])]);
  cache.resizeCacheSize(1);
  expect(cache.entryCount).toBe(0);
  expect(cache.sizeBytes).toBe(0);
  scheduler.tick(DELAY);
  expect(files()).toEqual([]);
  cache.resizeCacheSize(2 * one);
  for (const s of segs) await cache.lookupOffset(s.md, 0n);
  expect(cache.cachedSegmentIds()).toEqual([id(segs[1]), id(segs[2])]);
  cache.resizeCacheSize(2 * one); // same size: nothing changes
  expect(cache.entryCount).toBe(2);
  expect(() => cache.resizeCacheSize(-1)).toThrow(RangeError);
  await cache.close();
});

test('restart: complete triples are reloaded without fetching; .tmp, .deleted, incomplete and malformed triples are removed', async () => {
  const [a, b, c, d] = [testSegment(0, 12), testSegment(1, 8), testSegment(2, 5), testSegment(3, 5)];
  const h = harness([a, b, c, d]);
  await h.cache.lookupOffset(a.md, 0n);
  await h.cache.lookupOffset(b.md, 0n);
  await h.cache.lookupOffset(c.md, 0n);
  await h.cache.lookupOffset(d.md, 0n);
  await h.cache.close();
  // Leftovers of a crash, an incomplete triple (c lost its time index), a malformed file (d's offset index torn).
  fs.writeFileSync(path.join(h.dir, remoteOffsetIndexFileName(a.md) + '.tmp'), 'partial');
  fs.writeFileSync(path.join(h.dir, remoteTimeIndexFileName(b.md) + '.deleted'), 'old');
  fs.writeFileSync(path.join(h.dir, remoteTimeIndexFileName(b.md) + '.3.deleted'), 'old');
  fs.unlinkSync(path.join(h.dir, remoteTimeIndexFileName(c.md)));
  fs.appendFileSync(path.join(h.dir, remoteOffsetIndexFileName(d.md)), Buffer.alloc(3));
  fs.writeFileSync(path.join(h.dir, 'not-ours.txt'), 'x');

  const calls = h.rsm.calls.length;
  const again = h.open();
  expect(h.files()).toEqual([...triple(a), ...triple(b), 'not-ours.txt'].sort());
  expect(new Set(again.cachedSegmentIds())).toEqual(new Set([id(a), id(b)]));
  expect(again.sizeBytes).toBe(a.cachedBytes + b.cachedBytes);
  expect(await again.lookupOffset(a.md, a.offsets[11].offset)).toBe(a.offsets[11].position);
  expect(await again.lookupOffset(b.md, b.offsets[2].offset)).toBe(b.offsets[2].position);
  expect(h.rsm.calls.length).toBe(calls);
  expect(await again.lookupOffset(c.md, c.offsets[1].offset)).toBe(c.offsets[1].position); // fetched again
  expect(h.rsm.calls.length).toBe(calls + 3);
  await again.close();
});

test('restart with more cached than the configured size evicts down to it', async () => {
  const segs = [testSegment(0, 10), testSegment(1, 10), testSegment(2, 10)];
  const h = harness(segs);
  for (const s of segs) await h.cache.lookupOffset(s.md, 0n);
  await h.cache.close();
  const small = h.open({ maxSizeBytes: segs[0].cachedBytes });
  expect(small.entryCount).toBe(1);
  expect(small.sizeBytes).toBeLessThanOrEqual(segs[0].cachedBytes);
  await small.close();
  expect(h.files()).toHaveLength(3);
});

test('a corrupt cached index (reloaded at start-up) is discarded on first use and fetched again', async () => {
  const s = testSegment(0, 16);
  const h = harness([s]);
  await h.cache.lookupOffset(s.md, 0n);
  await h.cache.close();
  // Entries out of order: right size, wrong content.
  const f = path.join(h.dir, remoteOffsetIndexFileName(s.md));
  const bytes = fs.readFileSync(f);
  bytes.writeInt32BE(999_999, 8 * 3);
  fs.writeFileSync(f, bytes);
  const again = h.open();
  expect(again.entryCount).toBe(1);
  const calls = h.rsm.calls.length;
  expect(await again.lookupOffset(s.md, s.offsets[5].offset)).toBe(s.offsets[5].position);
  expect(h.rsm.calls.length).toBe(calls + 3);
  expect(again.stats.corruptIndexCount).toBe(1);
  h.scheduler.tick(DELAY);
  expect(h.files()).toEqual(triple(s));
  expect(fs.readFileSync(f)).toEqual(s.offsetBytes);
  await again.close();
});

test('a corrupt cached copy found when a trimmed entry is reloaded is refetched too', async () => {
  const [s, other] = [testSegment(0, 16), testSegment(1, 4)];
  const h = harness([s, other], { maxResidentBytes: 0 });
  await h.cache.lookupOffset(s.md, 0n); // released: its in-memory copy is dropped
  const f = path.join(h.dir, remoteTimeIndexFileName(s.md));
  const bytes = fs.readFileSync(f);
  bytes.writeBigInt64BE(0n, 12 * 2); // timestamps no longer increase
  fs.writeFileSync(f, bytes);
  expect(await h.cache.lookupTimestamp(s.md, s.times[9].timestamp, 0n)).toBe(expectedTimestampPosition(s, s.times[9].timestamp, 0n));
  expect(h.rsm.callsFor(id(s))).toHaveLength(6);
  expect(h.cache.stats.corruptIndexCount).toBe(1);
  await h.cache.close();
});

test("a corrupt file under a canonical name that no entry owns is refetched; a valid one is used as it is (Kafka's loadIndexFile)", async () => {
  const s = testSegment(0, 10);
  const h = harness([s]);
  fs.writeFileSync(path.join(h.dir, remoteTimeIndexFileName(s.md)), Buffer.alloc(12 * 3, 0xff)); // negative offsets
  fs.writeFileSync(path.join(h.dir, remoteOffsetIndexFileName(s.md)), s.offsetBytes);
  expect(await h.cache.lookupTimestamp(s.md, s.times[4].timestamp, 0n)).toBe(expectedTimestampPosition(s, s.times[4].timestamp, 0n));
  expect(h.rsm.callsFor(id(s)).sort()).toEqual([IndexType.TIMESTAMP, IndexType.TRANSACTION]);
  expect(h.cache.stats.corruptIndexCount).toBe(1);
  await h.cache.close();
});

test.each([IndexType.OFFSET, IndexType.TIMESTAMP, IndexType.TRANSACTION])('a corrupt %s index from the remote store is refused: nothing cached, no files left', async (type) => {
  const s = testSegment(0, 10);
  const h = harness([s]);
  h.rsm.corrupt.set(`${id(s)}:${type}`, Buffer.alloc(type === IndexType.OFFSET ? 16 : type === IndexType.TIMESTAMP ? 24 : 34, 0x7f));
  await expect(h.cache.lookupOffset(s.md, 0n)).rejects.toBeInstanceOf(CorruptIndexError);
  expect(h.cache.entryCount).toBe(0);
  expect(h.files()).toEqual([]);
  expect(h.cache.stats.loadFailureCount).toBe(1);
  await h.cache.close();
});

test('single flight: concurrent misses of one segment fetch each index once and all get the answer', async () => {
  const s = testSegment(0, 25);
  const h = harness([s]);
  h.rsm.hold = true;
  const lookups = s.offsets.slice(0, 6).map((e) => h.cache.lookupOffset(s.md, e.offset));
  const withTime = h.cache.lookupTimestamp(s.md, s.times[8].timestamp, 0n);
  await h.rsm.waitForPending(3);
  await drainMicrotasks();
  expect(h.rsm.calls).toHaveLength(3);
  h.rsm.completeAll();
  expect(await Promise.all(lookups)).toEqual(s.offsets.slice(0, 6).map((e) => e.position));
  expect(await withTime).toBe(expectedTimestampPosition(s, s.times[8].timestamp, 0n));
  expect(h.rsm.calls).toHaveLength(3);
  expect(h.cache.stats).toMatchObject({ missCount: 7, loadSuccessCount: 1 });
  await h.cache.close();
});

test('a fetch failure caches nothing, rejects every waiter with the error, and the next read fetches again', async () => {
  const s = testSegment(0, 10);
  const h = harness([s]);
  h.rsm.hold = true;
  const waiters = [h.cache.lookupOffset(s.md, 0n), h.cache.lookupTimestamp(s.md, 0, 0n), h.cache.collectAbortedTransactions(s.md, 0n, 10n)];
  await h.rsm.waitForPending(3);
  const boom = new RemoteStorageError('bucket unreachable');
  h.rsm.pending.find((p) => p.indexType === IndexType.OFFSET)!.complete();
  h.rsm.pending.find((p) => p.indexType === IndexType.TIMESTAMP)!.fail(boom);
  for (const w of waiters) await expect(w).rejects.toBe(boom);
  expect(h.cache.entryCount).toBe(0);
  expect(h.files()).toEqual([]);
  expect(h.cache.stats.loadFailureCount).toBe(1);
  h.rsm.completeAll(); // the straggling transaction index fetch changes nothing
  await drainMicrotasks();
  expect(h.files()).toEqual([]);

  h.rsm.hold = false;
  expect(await h.cache.lookupOffset(s.md, s.offsets[3].offset)).toBe(s.offsets[3].position);
  expect(h.cache.entryCount).toBe(1);
  await h.cache.close();
});

test('remove and removeAll: entries leave at once, files after the delay; unknown ids are ignored', async () => {
  const segs = [testSegment(0, 5), testSegment(1, 5), testSegment(2, 5)];
  const h = harness(segs);
  for (const s of segs) await h.cache.lookupOffset(s.md, 0n);
  h.cache.remove('unknownsegmentuuid0000');
  expect(h.cache.entryCount).toBe(3);
  h.cache.remove(id(segs[0]));
  h.cache.removeAll([id(segs[1]), id(segs[2]), 'unknownsegmentuuid0000']);
  expect(h.cache.entryCount).toBe(0);
  expect(h.cache.sizeBytes).toBe(0);
  expect(h.files().every((f) => f.endsWith('.deleted'))).toBe(true);
  expect(h.cache.pendingDeletionCount).toBe(3);
  h.scheduler.tick(DELAY - 1);
  expect(h.files()).toHaveLength(9);
  h.scheduler.tick(1);
  expect(h.files()).toEqual([]);
  expect(h.cache.pendingDeletionCount).toBe(0);
  await h.cache.close();
});

test('with file.delete.delay.ms 0 an unpinned entry goes at once', async () => {
  const s = testSegment(0, 5);
  const h = harness([s], { fileDeleteDelayMs: 0 });
  await h.cache.lookupOffset(s.md, 0n);
  h.cache.remove(id(s));
  expect(h.files()).toEqual([]);
  await h.cache.close();
});

test('close: refuses new reads, waits for fetches in flight, keeps cached files, deletes unpinned .deleted ones; idempotent', async () => {
  const [a, b] = [testSegment(0, 5), testSegment(1, 5)];
  const h = harness([a, b]);
  await h.cache.lookupOffset(a.md, 0n);
  h.cache.remove(id(a));
  h.rsm.hold = true;
  const inFlight = h.cache.lookupOffset(b.md, b.offsets[2].offset);
  await h.rsm.waitForPending(3);
  const closing = h.cache.close();
  await expect(h.cache.lookupOffset(a.md, 0n)).rejects.toThrow(/closed/);
  h.rsm.completeAll();
  await closing;
  expect(await inFlight).toBe(b.offsets[2].position);
  expect(h.files()).toEqual(triple(b));
  await h.cache.close();
  expect(remoteIndexFilePrefix(b.md)).toBe(`100000_${id(b)}`);
});

test('a lease cannot be used after release', async () => {
  const s = testSegment(0, 5);
  const h = harness([s]);
  const lease = await h.cache.acquire(s.md);
  expect(lease.lookupOffset(s.offsets[1].offset).position).toBe(s.offsets[1].position);
  lease.release();
  lease.release();
  expect(() => lease.lookupOffset(0n)).toThrow(/after release/);
  await h.cache.close();
});

test('a rename to .deleted that fails with an I/O error keeps the file owned: refetches fail until the entry is deleted, nothing is overwritten', async () => {
  const s = testSegment(0, 8);
  const faulty = new FaultyFs();
  const h = harness([s], { fs: faulty });
  const lease = await h.cache.acquire(s.md);
  faulty.failNext({ op: 'rename', path: remoteTimeIndexFileName(s.md) });
  h.cache.remove(id(s));
  expect(h.cache.entryCount).toBe(0);
  expect(lease.files.timeIndex.endsWith(remoteTimeIndexFileName(s.md))).toBe(true); // still under its canonical name
  expect(lease.files.offsetIndex.endsWith('.index.deleted')).toBe(true);
  // The canonical time index belongs to the removed entry: a new fetch must not write over it.
  await expect(h.cache.lookupOffset(s.md, 0n)).rejects.toThrow(/still held by a removed entry/);
  expect(lease.lookupTimestamp(s.times[3].timestamp, 0n).position).toBe(expectedTimestampPosition(s, s.times[3].timestamp, 0n));
  lease.release();
  h.scheduler.tick(DELAY);
  expect(h.files()).toEqual([]);
  expect(await h.cache.lookupOffset(s.md, s.offsets[2].offset)).toBe(s.offsets[2].position);
  expect(h.files()).toEqual(triple(s));
  await h.cache.close();
});

test('maxResidentBytes bounds the loaded copies: within it a hit reads no file, with 0 every read loads its files', async () => {
  const [a, b] = [testSegment(0, 10), testSegment(1, 10)];
  for (const [budget, readsPerHit] of [
    [a.cachedBytes + b.cachedBytes, 0],
    [0, 3],
  ] as const) {
    const faulty = new FaultyFs();
    const h = harness([a, b], { fs: faulty, maxResidentBytes: budget });
    await h.cache.lookupOffset(a.md, 0n);
    await h.cache.lookupOffset(b.md, 0n);
    let readCount = 0;
    const inner = faulty.readFileSync.bind(faulty);
    faulty.readFileSync = (f: string) => {
      readCount++;
      return inner(f);
    };
    expect(await h.cache.lookupOffset(a.md, a.offsets[4].offset)).toBe(a.offsets[4].position);
    expect(await h.cache.lookupOffset(b.md, b.offsets[5].offset)).toBe(b.offsets[5].position);
    expect(readCount).toBe(2 * readsPerHit);
    await h.cache.close();
  }
});

test("close waits for outstanding leases (Kafka's close waits for reads in progress), then deletes what they held", async () => {
  const s = testSegment(0, 6);
  const h = harness([s]);
  const lease = await h.cache.acquire(s.md);
  h.cache.remove(id(s));
  let closed = false;
  const closing = h.cache.close().then(() => (closed = true));
  await drainMicrotasks();
  expect(closed).toBe(false);
  expect(lease.lookupOffset(s.offsets[3].offset).position).toBe(s.offsets[3].position);
  expect(h.files()).toHaveLength(3);
  lease.release();
  await closing;
  expect(h.files()).toEqual([]);
});
