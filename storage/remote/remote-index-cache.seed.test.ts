/**
 * Seed 002_032a61dbfb1aa57d (../shared/seeds/002_032a61dbfb1aa57d.txt): apache/kafka#19462,
 * KAFKA-17184, the RemoteIndexCache reader/deleter race.
 *
 * In Kafka both the remote-log reader and the deleter took only the cache's read lock. The deleter
 * (retention removing a remote segment, or the cache evicting it by size) marked the entry
 * `markedForCleanup` before taking it out of the cache, and a reader that already held that entry
 * then failed its lookup with IllegalStateException. Kafka's fix renames the files to `.deleted`,
 * lets readers keep using them, and deletes them later from a cleaner thread.
 *
 * Here the interleaving is forced, not hoped for: a reader pins an entry and is suspended inside
 * its read (in its withEntry body, or inside the fetch the fake RSM holds), the deleter removes the
 * segment (or the cache evicts it by size) meanwhile, and the reader then resumes. It must return
 * the right position from the renamed files (with maxResidentBytes 0, and another segment read in
 * between, its in-memory copy is dropped, so it really reads them back from disk), and the files
 * must stay until the pin is released and file.delete.delay.ms has passed, and be gone after. The
 * fourth case fetches the removed segment again while the first generation is pinned and removes it
 * again: the two generations' files never collide.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { Logger } from '../../common/logger';
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

const DELAY = 60_000;

function setup(opts: { maxSizeBytes?: number } = {}) {
  const logDir = tempDir('krill-ricache-seed-');
  const time = new MockTime();
  const scheduler = new MockScheduler(time);
  const rsm = new FakeRemoteStorageManager();
  const segs = [testSegment(0, 50), testSegment(1, 40), testSegment(2, 30)];
  rsm.add(...segs);
  const cache = new RemoteIndexCache({
    logDir,
    rsm,
    maxSizeBytes: opts.maxSizeBytes,
    fileDeleteDelayMs: DELAY,
    maxResidentBytes: 0,
    time,
    scheduler,
    logger: new Logger('test', 'error'),
  });
  const dir = path.join(logDir, REMOTE_INDEX_CACHE_DIR_NAME);
  const filesOf = (s: TestSegment) => fs.readdirSync(dir).filter((f) => f.startsWith(remoteIndexFilePrefix(s.md))).sort();
  return { cache, rsm, segs, time, scheduler, dir, filesOf };
}

afterEach(removeTempDirs);

/** A reader that pins `s`, signals `pinned`, waits for `resume`, then looks up `offset` through its lease. */
function suspendedReader(cache: RemoteIndexCache, s: TestSegment, offset: bigint) {
  const pinned = new Deferred<RemoteIndexLease>();
  const resume = new Deferred();
  const result = cache.withEntry(s.md, async (lease) => {
    pinned.resolve(lease);
    await resume.promise;
    for (const f of Object.values(lease.files)) expect(fs.existsSync(f)).toBe(true);
    return {
      position: lease.lookupOffset(offset).position,
      byTime: lease.lookupTimestamp(s.times[5].timestamp, s.md.startOffset).position,
      aborted: lease.collectAbortedTxns(s.md.startOffset, s.md.endOffset + 1n),
    };
  });
  return { pinned: pinned.promise, resume, result };
}

describe('seed 002_032a61dbfb1aa57d (apache/kafka#19462, KAFKA-17184): a reader holding an entry while the deleter removes it', () => {
  test('remove() while a reader is suspended inside its read: the reader completes on the renamed files, which go once it releases', async () => {
    const { cache, segs, scheduler, filesOf } = setup();
    const [s0, s1] = segs;
    const target = s0.offsets[17].offset + 3n;
    const reader = suspendedReader(cache, s0, target);
    const lease = await reader.pinned;
    expect(filesOf(s0)).toEqual([`${remoteIndexFilePrefix(s0.md)}.index`, `${remoteIndexFilePrefix(s0.md)}.timeindex`, `${remoteIndexFilePrefix(s0.md)}.txnindex`]);

    // The deleter: retention removed the remote segment.
    cache.remove(s0.md.remoteLogSegmentId.id);
    expect(cache.isCached(s0.md.remoteLogSegmentId.id)).toBe(false);
    expect(cache.sizeBytes).toBe(0);
    expect(filesOf(s0)).toEqual([
      `${remoteIndexFilePrefix(s0.md)}.index.deleted`,
      `${remoteIndexFilePrefix(s0.md)}.timeindex.deleted`,
      `${remoteIndexFilePrefix(s0.md)}.txnindex.deleted`,
    ]);
    expect(lease.files.offsetIndex.endsWith('.index.deleted')).toBe(true);
    // Another read loads another segment: with no resident budget the pinned entry's copy is dropped,
    // so the suspended reader must read its (renamed) files back from disk.
    expect(await cache.lookupOffset(s1.md, s1.offsets[3].offset)).toBe(s1.offsets[3].position);
    // The delete delay passes while the reader still holds the entry: nothing is deleted.
    scheduler.tick(DELAY + 1);
    expect(filesOf(s0)).toHaveLength(3);

    reader.resume.resolve();
    const r = await reader.result;
    expect(r.position).toBe(expectedOffsetPosition(s0, target));
    expect(r.byTime).toBe(expectedTimestampPosition(s0, s0.times[5].timestamp, s0.md.startOffset));
    expect(r.aborted.abortedTransactions.map((t) => t.producerId)).toEqual(expectedAborted(s0, s0.md.startOffset, s0.md.endOffset + 1n).producerIds);
    // Released after the delay: the files go at once.
    expect(filesOf(s0)).toEqual([]);
    expect(cache.pendingDeletionCount).toBe(0);
    await cache.close();
  });

  test('eviction by size while a reader is suspended inside its read: same guarantee', async () => {
    const probe = testSegment(0, 50);
    // Room for segment 0 or segment 1, not both.
    const { cache, segs, scheduler, filesOf } = setup({ maxSizeBytes: probe.cachedBytes });
    const [s0, s1] = segs;
    const target = s0.offsets[42].offset;
    const reader = suspendedReader(cache, s0, target);
    await reader.pinned;

    // A read of segment 1 evicts segment 0 (least recently used) while the reader holds it.
    expect(await cache.lookupOffset(s1.md, s1.offsets[0].offset)).toBe(s1.offsets[0].position);
    expect(cache.cachedSegmentIds()).toEqual([s1.md.remoteLogSegmentId.id]);
    expect(cache.stats.evictionCount).toBe(1);
    expect(filesOf(s0).every((f) => f.endsWith('.deleted'))).toBe(true);
    expect(filesOf(s0)).toHaveLength(3);

    reader.resume.resolve();
    expect((await reader.result).position).toBe(expectedOffsetPosition(s0, target));
    // Released before the delay: the files wait for it.
    expect(filesOf(s0)).toHaveLength(3);
    scheduler.tick(DELAY - 1);
    expect(filesOf(s0)).toHaveLength(3);
    scheduler.tick(1);
    expect(filesOf(s0)).toEqual([]);
    expect(filesOf(s1)).toHaveLength(3);

    // resizeCacheSize (Kafka's) evicts the same way, also under a pinned reader.
    const reader2 = suspendedReader(cache, s1, s1.offsets[9].offset);
    await reader2.pinned;
    cache.resizeCacheSize(1);
    expect(cache.entryCount).toBe(0);
    reader2.resume.resolve();
    expect((await reader2.result).position).toBe(s1.offsets[9].position);
    scheduler.tick(DELAY);
    expect(filesOf(s1)).toEqual([]);
    await cache.close();
  });

  test('remove() while the reader is suspended inside the fetch of its lookup: the lookup answers, nothing is cached, the files go', async () => {
    const { cache, rsm, segs, scheduler, filesOf } = setup();
    const s0 = segs[0];
    rsm.hold = true;
    const target = s0.offsets[30].offset;
    const lookup = cache.lookupOffset(s0.md, target);
    await rsm.waitForPending(3);
    rsm.pending[0].complete(); // the offset index arrives; the time index fetch is still out
    await drainMicrotasks();
    expect(filesOf(s0)).toEqual([]); // nothing is written until the whole triple is in

    cache.remove(s0.md.remoteLogSegmentId.id);
    rsm.completeAll();
    expect(await lookup).toBe(expectedOffsetPosition(s0, target));
    expect(cache.entryCount).toBe(0);
    scheduler.tick(DELAY);
    expect(filesOf(s0)).toEqual([]);
    await cache.close();
  });

  test('a fetch of the same segment after removal gets fresh files that never collide with the pinned .deleted ones', async () => {
    const { cache, rsm, segs, scheduler, filesOf } = setup();
    const s0 = segs[0];
    const id = s0.md.remoteLogSegmentId.id;
    const first = suspendedReader(cache, s0, s0.offsets[1].offset);
    await first.pinned;
    cache.remove(id);
    const second = suspendedReader(cache, s0, s0.offsets[2].offset);
    const secondLease = await second.pinned;
    expect(rsm.callsFor(id)).toHaveLength(6); // fetched again
    expect(secondLease.files.offsetIndex.endsWith('.index')).toBe(true);
    cache.remove(id); // removed again while the first generation is still pinned
    expect(secondLease.files.offsetIndex.endsWith('.index.1.deleted')).toBe(true);
    expect(filesOf(s0)).toHaveLength(6);
    // A read of another segment drops both pinned copies from memory: both readers reload their own files.
    const s1 = segs[1];
    expect(await cache.lookupOffset(s1.md, s1.offsets[4].offset)).toBe(s1.offsets[4].position);
    scheduler.tick(DELAY); // the delay passes; both generations are still pinned
    expect(filesOf(s0)).toHaveLength(6);

    second.resume.resolve();
    first.resume.resolve();
    expect((await second.result).position).toBe(s0.offsets[2].position);
    expect((await first.result).position).toBe(s0.offsets[1].position);
    expect(filesOf(s0)).toEqual([]);
    await cache.close();
  });
});
