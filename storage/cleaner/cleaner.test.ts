/**
 * The cleaner's record rules, ported from Kafka's LogCleanerTest: latest value per key with its
 * original offset, tombstones kept until a pass after their delete horizon, aborted transactions
 * removed, transaction markers removed only when Kafka removes them, the last batch of each active
 * producer kept (sequence and epoch survive a reload), compressed batches recompressed with their
 * codec, headers kept, keyless records removed, offset gaps, partial passes when the map is full,
 * segment grouping, and an abort mid-pass.
 */
import * as nodefs from 'node:fs';
import { ControlRecordType, controlRecordKey } from '../../protocol/records/control-record';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { readRecords } from '../../protocol/records/record';
import { CompressionType, RecordBatch, TimestampType } from '../../protocol/records/record-batch';
import { MockTime } from '../../common/testing/mock-time';
import { removeTempDirs } from '../testing/temp-dir';
import {
  FakeOffsetMap,
  abortMarker,
  batchBaseOffsetsInLog,
  batchesInLog,
  commitMarker,
  idempotentAppender,
  keysInLog,
  lastOffsetsPerBatchInLog,
  lastSequencesInLog,
  makeCleaner,
  makeLog,
  marker,
  offsetsInLog,
  record,
  records,
  tombstone,
  transactionalAppender,
  TEST_TP,
} from '../testing/compacted-logs';
import { CleanedTransactionMetadata, CleanerStats, LogCleaningAbortedException, type Cleaner } from './cleaner';
import { LogToClean } from './log-cleaner-manager';
import { SkimpyOffsetMap } from './offset-map';
import type { UnifiedLog } from '../unified-log';
import { LONG_MAX } from '../log-config';

afterAll(removeTempDirs);

const DAY = 86_400_000;
/** Kafka's largeTimestamp, within krill's number range (the delete horizon cap is 2^51). */
const LARGE = 2 ** 50;
/** Kafka's Long.MaxValue clock: past every horizon. */
const MAX_TIME = 2 ** 52;
const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

const n = (xs: readonly bigint[]) => xs.map(Number);
const ltc = (log: UnifiedLog, firstDirty: bigint, uncleanable = log.activeSegment.baseOffset, now = false) => new LogToClean(TEST_TP, log, firstDirty, uncleanable, now);

function appendUntilSegments(log: UnifiedLog, segments: number, value = (o: number) => o, key = (o: number) => o): void {
  while (log.numberOfSegments < segments) {
    const o = Number(log.logEndOffset);
    log.appendAsLeader(record(key(o), value(o)), { leaderEpoch: 0 });
  }
}

/** Kafka's runTwoPassClean: a pass now, then one after delete.retention.ms: the horizon set by the first has passed. */
async function runTwoPassClean(cleaner: Cleaner, c: LogToClean, currentTime: number, retention = DAY): Promise<bigint> {
  await cleaner.doClean(c, currentTime);
  return (await cleaner.doClean(c, currentTime + retention + 1))[0];
}

describe('latest value per key', () => {
  test('cleanSegments keeps every key the map does not supersede (testCleanSegments)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    appendUntilSegments(log, 4);
    expect(keysInLog(log)).toEqual(Array.from({ length: Number(log.logEndOffset) }, (_, i) => String(i)));
    const map = new FakeOffsetMap(2 ** 31);
    const gone = ['1', '3', '5', '7', '9'];
    for (const k of gone) map.putKey(k, MAX_OFFSET);
    const segments = log.logSegments().slice(0, 3);
    const stats = new CleanerStats();
    const expectedBytesRead = segments.reduce((s, x) => s + x.size, 0);
    const shouldRemain = keysInLog(log).filter((k) => !gone.includes(k));
    await makeCleaner(2 ** 31).cleanSegments(log, segments, map, 0, stats, new CleanedTransactionMetadata(), -1, segments[2].readNextOffset());
    expect(keysInLog(log)).toEqual(shouldRemain);
    expect(stats.bytesRead).toBe(expectedBytesRead);
    log.close();
  });

  test('a pass keeps the latest record of each key at its original offset; offsets are left with gaps', async () => {
    const { log } = makeLog({ segmentBytes: 512 });
    for (let i = 0; i < 60; i++) log.appendAsLeader(record(i % 5, `v${i}`), { leaderEpoch: 0 });
    log.roll();
    const [end] = await makeCleaner(2 ** 31).clean(ltc(log, 0n));
    expect(end).toBe(60n);
    const got = batchesInLog(log).flatMap((b) => readRecords(b).map((r) => [Number(r.offset), r.key!.toString(), r.value!.toString()]));
    expect(got).toEqual([55, 56, 57, 58, 59].map((o) => [o, String(o % 5), `v${o}`]));
    // The reads the broker serves see the gaps: a fetch at 0 gets the first retained batch.
    const read = log.read(0n, 1 << 20, { isolation: 'LOG_END' });
    expect(read.sizeInBytes).toBeGreaterThan(0);
    log.close();
  });

  test('the real SkimpyOffsetMap gives the same result as the fake one', async () => {
    const a = makeLog({ segmentBytes: 700 });
    const b = makeLog({ segmentBytes: 700 });
    for (let i = 0; i < 300; i++) {
      a.log.appendAsLeader(record(`key-${i % 37}`, `v${i}`), { leaderEpoch: 0 });
      b.log.appendAsLeader(record(`key-${i % 37}`, `v${i}`), { leaderEpoch: 0 });
    }
    a.log.roll();
    b.log.roll();
    await makeCleaner(2 ** 31).clean(ltc(a.log, 0n));
    await makeCleaner(0, { offsetMap: new SkimpyOffsetMap(1024 * 1024) }).clean(ltc(b.log, 0n));
    expect(offsetsInLog(b.log)).toEqual(offsetsInLog(a.log));
    expect(offsetsInLog(a.log)).toHaveLength(37);
    a.log.close();
    b.log.close();
  });

  test('the map bounds a pass: a full map ends it at the last mapped offset and the next pass goes on (testPartialSegmentClean)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    for (const k of [0, 1, 0, 1, 0]) log.appendAsLeader(record(k, k), { leaderEpoch: 0 });
    log.roll();
    const cleaner = makeCleaner(2); // load factor 0.75: one key per pass
    await cleaner.clean(ltc(log, 2n));
    expect(keysInLog(log)).toEqual(['1', '0', '1', '0']);
    expect(n(offsetsInLog(log))).toEqual([1, 2, 3, 4]);
    await cleaner.clean(ltc(log, 3n));
    expect(keysInLog(log)).toEqual(['0', '1', '0']);
    expect(n(offsetsInLog(log))).toEqual([2, 3, 4]);
    await cleaner.clean(ltc(log, 4n));
    expect(keysInLog(log)).toEqual(['1', '0']);
    expect(n(offsetsInLog(log))).toEqual([3, 4]);
    log.close();
  });

  test('stats: bytes and messages read and written (testLogCleanerStats)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    for (const k of [0, 1, 0, 1, 0]) log.appendAsLeader(record(k, k), { leaderEpoch: 0 });
    log.roll();
    const initialSize = log.size;
    const [end, stats] = await makeCleaner(4).clean(ltc(log, 2n));
    expect(end).toBe(5n);
    expect(stats.messagesRead).toBe(5);
    expect(stats.bytesRead).toBe(initialSize);
    expect(stats.messagesWritten).toBe(2);
    expect(stats.bytesWritten).toBe(log.size);
    expect(stats.invalidMessagesRead).toBe(0);
    expect(stats.endTime).toBeGreaterThanOrEqual(stats.startTime);
    log.close();
  });

  test('the uncleanable section is left alone (testCleaningWithUncleanableSection)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    const N = 10;
    while (log.numberOfSegments <= 2) log.appendAsLeader(record(Number(log.logEndOffset) % N, Number(log.logEndOffset)), { leaderEpoch: 0 });
    const firstUncleanable = log.logEndOffset + 1n;
    while (log.numberOfSegments < 6) log.appendAsLeader(record(Number(log.logEndOffset) % N, Number(log.logEndOffset)), { leaderEpoch: 0 });
    const distinct = () => log.logSegments().map((s) => new Set(s.size === 0 ? [] : readSegmentValues(s.log.read(0, s.size))).size);
    const before = distinct();
    expect(before.slice(0, -1).every((x) => x > N)).toBe(true);
    await makeCleaner(2 ** 31).clean(ltc(log, 0n, firstUncleanable));
    const after = distinct();
    expect(before.slice(0, 2).every((b, i) => after[i] < b)).toBe(true);
    expect(after.slice(2)).toEqual(before.slice(2));
    log.close();
  });

  test('keyless records (a topic switched to compact) are removed and counted invalid (testCleaningWithUnkeyedMessages)', async () => {
    const { log } = makeLog({ segmentBytes: 1024, cleanupPolicy: ['delete'] });
    while (log.numberOfSegments < 2) log.appendAsLeader(records([[null, Number(log.logEndOffset)]]), { leaderEpoch: 0 });
    const unkeyed = batchesInLog(log).reduce((s, b) => s + readRecords(b).filter((r) => r.key === null).length, 0);
    const sizeWithUnkeyed = log.size;
    while (log.numberOfSegments < 3) log.appendAsLeader(record(Number(log.logEndOffset), Number(log.logEndOffset)), { leaderEpoch: 0 });
    const expectedSize = log.size - sizeWithUnkeyed;
    log.updateConfig({ ...log.config, cleanupPolicy: ['compact'] });
    const [, stats] = await makeCleaner(2 ** 31).clean(ltc(log, 0n));
    expect(batchesInLog(log).flatMap((b) => readRecords(b)).filter((r) => r.key === null)).toHaveLength(0);
    expect(log.size).toBe(expectedSize);
    expect(stats.invalidMessagesRead).toBe(unkeyed);
    log.close();
  });

  test('compressed batches are recompressed with their codec; headers, timestamps and LogAppendTime survive', async () => {
    const { log } = makeLog({ segmentBytes: 4096 });
    const hdr = [{ key: 'h', value: 'hv' }];
    for (const codec of [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]) {
      log.appendAsLeader(records([[`a${codec}`, 'old'], [`b${codec}`, 'keep'], [`a${codec}`, 'new']], { compression: codec, headers: hdr, timestamp: 1_700_000_000_000 + codec }), { leaderEpoch: 0 });
    }
    log.roll();
    await makeCleaner(2 ** 31).clean(ltc(log, 0n));
    const batches = batchesInLog(log);
    expect(batches.map((b) => b.compressionType)).toEqual([CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]);
    for (const b of batches) {
      expect(b.isValidCrc()).toBe(true);
      expect(b.recordsCount).toBe(2);
      expect(b.lastOffsetDelta).toBe(2);
      const rs = readRecords(b);
      expect(rs.map((r) => r.value!.toString())).toEqual(['keep', 'new']);
      expect(rs.map((r) => Number(r.offset - b.baseOffset))).toEqual([1, 2]);
      expect(rs.every((r) => r.headers.length === 1 && r.headers[0].key === 'h' && r.headers[0].value!.toString() === 'hv')).toBe(true);
      expect(rs.every((r) => r.timestamp === b.maxTimestamp)).toBe(true);
    }
    log.close();
  });

  test('gaps: the pass moves beyond missing offsets in the dirty section (testCleaningBeyondMissingOffsets)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 * 1024 });
    for (let i = 0; i <= 9; i++) log.appendAsLeader(record(i, i), { leaderEpoch: 0 });
    log.roll(11n);
    log.appendAsFollower(buildRecordBatch([{ key: '1015', value: '1015', timestamp: 1_700_000_000_000 }], { baseOffset: 11n }));
    const [next] = await makeCleaner(2 ** 31).clean(ltc(log, 0n, log.activeSegment.baseOffset, true));
    expect(next).toBe(log.activeSegment.baseOffset);

    const b = makeLog({ segmentBytes: 1024 * 1024 }).log;
    for (let i = 0; i <= 9; i++) b.appendAsLeader(record(i, i), { leaderEpoch: 0 });
    b.roll(15n);
    for (let i = 15; i <= 24; i++) b.appendAsFollower(buildRecordBatch([{ key: String(i), value: String(i), timestamp: 1_700_000_000_000 }], { baseOffset: BigInt(i) }));
    b.roll(30n);
    b.appendAsFollower(buildRecordBatch([{ key: '1015', value: '1015', timestamp: 1_700_000_000_000 }], { baseOffset: 30n }));
    const [next2] = await makeCleaner(2 ** 31).clean(ltc(b, 0n, b.activeSegment.baseOffset, true));
    expect(next2).toBe(b.activeSegment.baseOffset);
    log.close();
    b.close();
  });
});

function readSegmentValues(buf: Buffer): string[] {
  const out: string[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const b = new RecordBatch(buf, pos);
    for (const r of readRecords(b)) out.push(r.value?.toString() ?? 'null');
    pos += b.sizeInBytes;
  }
  return out;
}

describe('tombstones and the delete horizon (KIP-534)', () => {
  test('a tombstone is kept by its first pass, with the horizon set in its batch, and removed by a pass after it', async () => {
    const time = new MockTime(1_700_000_000_000);
    const { log } = makeLog({ segmentBytes: 1024, deleteRetentionMs: 1000 }, { time });
    log.appendAsLeader(record('k', 'v1'), { leaderEpoch: 0 });
    log.appendAsLeader(record('other', 'x'), { leaderEpoch: 0 });
    log.appendAsLeader(tombstone('k'), { leaderEpoch: 0 });
    log.appendAsLeader(record('last', 'y'), { leaderEpoch: 0 });
    log.roll();
    const cleaner = makeCleaner(2 ** 31);
    await cleaner.doClean(ltc(log, 0n), time.now);
    const first = batchesInLog(log);
    expect(first.map((b) => Number(b.baseOffset))).toEqual([1, 2, 3]);
    const t = first[1];
    expect(t.hasDeleteHorizon).toBe(true);
    expect(t.baseTimestamp).toBe(BigInt(time.now + 1000));
    // The record keeps its own timestamp, as a delta from the horizon.
    expect(readRecords(t)[0].timestamp).toBe(1_700_000_000_000n);
    expect(readRecords(t)[0].value).toBeNull();
    // Before the horizon: still there.
    await cleaner.doClean(ltc(log, 0n), time.now + 999);
    expect(n(batchBaseOffsetsInLog(log))).toEqual([1, 2, 3]);
    await cleaner.doClean(ltc(log, 0n), time.now + 1000);
    expect(n(batchBaseOffsetsInLog(log))).toEqual([1, 3]);
    log.close();
  });

  test('every even key deleted: none of them survives (testCleaningWithDeletes)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    appendUntilSegments(log, 2);
    const leo = Number(log.logEndOffset);
    for (let k = 0; k < leo; k += 2) log.appendAsLeader(tombstone(k), { leaderEpoch: 0 });
    appendUntilSegments(log, 4);
    await makeCleaner(2 ** 31).clean(ltc(log, 0n));
    const keys = new Set(keysInLog(log));
    for (let k = 0; k < leo; k += 2) expect(keys.has(String(k))).toBe(false);
    log.close();
  });

  test('a tombstone with an old record timestamp is still kept by its first passes (testCleanTombstone)', async () => {
    const time = new MockTime();
    const { log, config } = makeLog({ messageTimestampAfterMaxMs: LONG_MAX }, { time });
    const cleaner = makeCleaner(10, { time });
    log.appendAsLeader(record('0', '0', { timestamp: time.now + config.deleteRetentionMs + 10_000 }), { leaderEpoch: 0 });
    log.roll();
    await cleaner.clean(ltc(log, 0n));
    log.appendAsLeader(tombstone('0', { timestamp: time.now - config.deleteRetentionMs - 10_000 }), { leaderEpoch: 0 });
    log.roll();
    await cleaner.clean(ltc(log, 1n));
    expect(batchesInLog(log)[0].lastOffset).toBe(1n);
    log.appendAsLeader(record('1', '1', { timestamp: time.now }), { leaderEpoch: 0 });
    log.roll();
    await cleaner.clean(ltc(log, 2n));
    expect(batchesInLog(log)[0].lastOffset).toBe(1n);
    log.close();
  });
});

describe('transactions', () => {
  test('aborted data goes at once; markers stay until their data is gone and their horizon passed (testMultiPassSegmentCleaningWithAbortedTransactions)', async () => {
    const deleteRetentionMs = 50_000;
    const time = new MockTime();
    const { log } = makeLog({ deleteRetentionMs }, { time });
    const p1 = transactionalAppender(log, 1n);
    const p2 = transactionalAppender(log, 2n);
    p1([1, 2]); // 0, 1
    p2([2, 3]); // 2, 3
    p1([3, 4]); // 4, 5
    commitMarker(log, 1n); // 6
    commitMarker(log, 2n); // 7
    p1([2, 3]); // 8, 9
    abortMarker(log, 1n); // 10
    p2([4, 5]); // 11, 12
    p1([5, 6]); // 13, 14
    commitMarker(log, 1n); // 15
    abortMarker(log, 2n); // 16
    p2([6, 7]); // 17, 18
    commitMarker(log, 2n); // 19
    log.roll();
    expect(log.logEndOffset).toBe(20n);
    const expectedAborted = [
      { producerId: 1n, firstOffset: 8n, lastOffset: 10n, lastStableOffset: 11n },
      { producerId: 2n, firstOffset: 11n, lastOffset: 16n, lastStableOffset: 17n },
    ];
    expect(log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual(expectedAborted);
    const cleaner = makeCleaner(2 ** 31, { time });
    let dirtyOffset = 0n;
    const pass = async () => {
      const map = new FakeOffsetMap(4);
      const segments = log.logSegmentsIn(0n, log.activeSegment.baseOffset);
      const stats = new CleanerStats();
      await cleaner.buildOffsetMap(log, dirtyOffset, log.activeSegment.baseOffset, map, stats);
      await cleaner.cleanSegments(log, segments, map, time.now, stats, new CleanedTransactionMetadata(), Number.MAX_SAFE_INTEGER, segments[segments.length - 1].readNextOffset());
      dirtyOffset = BigInt(map.latestOffset + 1);
    };
    await pass();
    expect(dirtyOffset).toBe(4n);
    expect(n(batchBaseOffsetsInLog(log))).toEqual([0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]);
    expect(n(offsetsInLog(log))).toEqual([0, 2, 3, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]);
    expect(log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual(expectedAborted);
    // Second pass: no aborted data left; the markers stay (retention) without index entries.
    await pass();
    expect(dirtyOffset).toBe(14n);
    expect(n(batchBaseOffsetsInLog(log))).toEqual([0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]);
    expect(n(offsetsInLog(log))).toEqual([0, 2, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]);
    expect(log.collectAbortedTransactions(0n, log.logEndOffset)).toEqual([]);
    // After the retention: the ABORT markers (10, 16) go.
    time.sleep(deleteRetentionMs);
    await pass();
    expect(dirtyOffset).toBe(20n);
    expect(n(batchBaseOffsetsInLog(log))).toEqual([0, 2, 4, 6, 7, 13, 15, 17, 19]);
    expect(n(offsetsInLog(log))).toEqual([0, 2, 4, 5, 6, 7, 13, 15, 17, 18, 19]);
    expect(log.producerState.ongoingTransactions()).toEqual([]);
    log.close();
  });

  test('a COMMIT marker stays while its transaction has records and goes a pass after its horizon (testCommitMarkerRemoval)', async () => {
    const { log } = makeLog({ segmentBytes: 256 });
    const cleaner = makeCleaner(2 ** 31);
    const p = transactionalAppender(log, 1n);
    p([1]);
    p([2, 3]);
    commitMarker(log, 1n);
    p([2]);
    commitMarker(log, 1n);
    log.roll();
    let dirty = (await cleaner.doClean(ltc(log, 0n), LARGE))[0];
    expect(keysInLog(log)).toEqual(['1', '3', '2']);
    expect(n(offsetsInLog(log))).toEqual([0, 2, 3, 4, 5]);
    p([1, 3]);
    commitMarker(log, 1n);
    log.roll();
    dirty = (await cleaner.doClean(ltc(log, dirty), LARGE))[0];
    expect(keysInLog(log)).toEqual(['2', '1', '3']);
    expect(n(offsetsInLog(log))).toEqual([3, 4, 5, 6, 7, 8]);
    dirty = (await cleaner.doClean(ltc(log, dirty), LARGE))[0];
    expect(n(offsetsInLog(log))).toEqual([3, 4, 5, 6, 7, 8]);
    await cleaner.doClean(ltc(log, dirty), MAX_TIME);
    expect(keysInLog(log)).toEqual(['2', '1', '3']);
    expect(n(offsetsInLog(log))).toEqual([4, 5, 6, 7, 8]);
    log.close();
  });

  test('an ABORT marker goes a pass after its horizon once its data is gone (testAbortMarkerRemoval)', async () => {
    const { log } = makeLog({ segmentBytes: 256 });
    const cleaner = makeCleaner(2 ** 31);
    const p = transactionalAppender(log, 1n);
    p([1]);
    p([2, 3]);
    abortMarker(log, 1n);
    p([3]);
    commitMarker(log, 1n);
    log.roll();
    const dirty = (await cleaner.doClean(ltc(log, 0n), LARGE))[0];
    expect(keysInLog(log)).toEqual(['3']);
    expect(n(offsetsInLog(log))).toEqual([3, 4, 5]);
    await runTwoPassClean(cleaner, ltc(log, dirty), LARGE);
    expect(keysInLog(log)).toEqual(['3']);
    expect(n(offsetsInLog(log))).toEqual([4, 5]);
    log.close();
  });

  test('empty batches keep the last sequence; a COMMIT of an emptied transaction goes (testCommitMarkerRetentionWithEmptyBatch)', async () => {
    const { log } = makeLog({ segmentBytes: 256 });
    const cleaner = makeCleaner(2 ** 31);
    const p1 = transactionalAppender(log, 1n);
    const p2 = transactionalAppender(log, 2n);
    p1([2, 3]); // 0, 1
    log.roll();
    p2([2, 3]); // 2, 3
    commitMarker(log, 2n); // 4
    log.roll();
    log.appendAsLeader(record(2, 2), { leaderEpoch: 0 }); // 5
    log.appendAsLeader(record(3, 3), { leaderEpoch: 0 }); // 6
    commitMarker(log, 1n); // 7
    log.roll();
    let dirty = (await cleaner.doClean(ltc(log, 0n), LARGE))[0];
    expect(keysInLog(log)).toEqual(['2', '3']);
    expect(n(offsetsInLog(log))).toEqual([4, 5, 6, 7]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 3, 4, 5, 6, 7]);
    dirty = (await cleaner.doClean(ltc(log, dirty), LARGE))[0];
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 3, 4, 5, 6, 7]);
    p2([1]); // 8
    commitMarker(log, 2n); // 9
    log.roll();
    dirty = (await cleaner.doClean(ltc(log, dirty), LARGE))[0];
    expect(keysInLog(log)).toEqual(['2', '3', '1']);
    expect(n(offsetsInLog(log))).toEqual([4, 5, 6, 7, 8, 9]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 4, 5, 6, 7, 8, 9]);
    await runTwoPassClean(cleaner, ltc(log, dirty), LARGE);
    expect(keysInLog(log)).toEqual(['2', '3', '1']);
    expect(n(offsetsInLog(log))).toEqual([5, 6, 7, 8, 9]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 5, 6, 7, 8, 9]);
    log.close();
  });

  test('an ABORT marker with an empty last batch: index entry kept while data remains, then gone (testAbortMarkerRetentionWithEmptyBatch)', async () => {
    const { log } = makeLog({ segmentBytes: 256 });
    const cleaner = makeCleaner(2 ** 31);
    const p = transactionalAppender(log, 1n);
    p([2, 3]); // last offset 1
    abortMarker(log, 1n); // 2
    log.roll();
    const indexed = () => {
      const t = log.collectAbortedTransactions(0n, 100n);
      expect(t.map((x) => [x.producerId, x.firstOffset, x.lastOffset])).toEqual([[1n, 0n, 2n]]);
    };
    indexed();
    let dirty = (await cleaner.doClean(ltc(log, 0n), LARGE))[0];
    indexed();
    expect(keysInLog(log)).toEqual([]);
    expect(n(offsetsInLog(log))).toEqual([2]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 2]);
    dirty = await runTwoPassClean(cleaner, ltc(log, dirty), LARGE);
    indexed();
    expect(n(offsetsInLog(log))).toEqual([2]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 2]);
    p([1]);
    log.roll();
    dirty = (await cleaner.doClean(ltc(log, dirty), LARGE))[0];
    indexed();
    expect(keysInLog(log)).toEqual(['1']);
    expect(n(offsetsInLog(log))).toEqual([2, 3]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([2, 3]);
    dirty = await runTwoPassClean(cleaner, ltc(log, dirty), LARGE);
    expect(keysInLog(log)).toEqual(['1']);
    expect(n(offsetsInLog(log))).toEqual([3]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([3]);
    expect(log.collectAbortedTransactions(0n, 100n)).toHaveLength(0);
    log.close();
  });

  test('an empty control batch is kept for the producer epoch and cleans without error (testCleanEmptyControlBatch)', async () => {
    const { log } = makeLog({ segmentBytes: 256 });
    const cleaner = makeCleaner(2 ** 31);
    commitMarker(log, 1n); // 0
    log.appendAsLeader(record(2, 2), { leaderEpoch: 0 }); // 1
    log.appendAsLeader(record(3, 3), { leaderEpoch: 0 }); // 2
    log.roll();
    const dirty = await runTwoPassClean(cleaner, ltc(log, 0n), LARGE);
    expect(keysInLog(log)).toEqual(['2', '3']);
    expect(n(offsetsInLog(log))).toEqual([1, 2]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([0, 1, 2]);
    expect(batchesInLog(log)[0].recordsCount).toBe(0);
    await cleaner.doClean(ltc(log, dirty), MAX_TIME);
    expect(n(offsetsInLog(log))).toEqual([1, 2]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([0, 1, 2]);
    log.close();
  });

  test('committed and aborted transactions spanning segments keep their data and markers (testCommitted/AbortedTransactionSpanningSegments)', async () => {
    const c = makeLog({ segmentBytes: 128 }).log;
    const pc = transactionalAppender(c, 1n);
    pc([1]);
    c.roll();
    commitMarker(c, 1n);
    c.roll();
    await runTwoPassClean(makeCleaner(2 ** 31), ltc(c, 0n), LARGE);
    expect(n(offsetsInLog(c))).toEqual([0, 1]);
    expect(n(lastOffsetsPerBatchInLog(c))).toEqual([0, 1]);

    const a = makeLog({ segmentBytes: 128 }).log;
    const pa = transactionalAppender(a, 1n);
    pa([1]);
    a.roll();
    abortMarker(a, 1n);
    a.roll();
    const cleaner = makeCleaner(2 ** 31);
    await cleaner.doClean(ltc(a, 0n), LARGE);
    expect(n(offsetsInLog(a))).toEqual([1]);
    expect(n(lastOffsetsPerBatchInLog(a))).toEqual([0, 1]);
    await cleaner.doClean(ltc(a, 0n), MAX_TIME);
    expect(n(offsetsInLog(a))).toEqual([1]);
    expect(n(lastOffsetsPerBatchInLog(a))).toEqual([0, 1]);
    c.close();
    a.close();
  });

  test('old empty batches and markers go under sequence reuse (testEmptyBatchRemovalWithSequenceReuse)', async () => {
    const { log } = makeLog({ segmentBytes: 2048 });
    const cleaner = makeCleaner(2 ** 31);
    transactionalAppender(log, 1n, 0, { origin: 'coordinator' })([1]);
    commitMarker(log, 1n);
    transactionalAppender(log, 1n, 0, { origin: 'coordinator' })([2]);
    commitMarker(log, 1n);
    log.appendAsLeader(record(1, 1), { leaderEpoch: 0 });
    log.appendAsLeader(record(2, 1), { leaderEpoch: 0 });
    log.roll();
    await cleaner.doClean(ltc(log, 0n), LARGE);
    expect(n(offsetsInLog(log))).toEqual([1, 3, 4, 5]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 2, 3, 4, 5]);
    await runTwoPassClean(cleaner, ltc(log, 0n), LARGE);
    expect(n(offsetsInLog(log))).toEqual([3, 4, 5]);
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([2, 3, 4, 5]);
    log.close();
  });

  test('a key equal to a marker key in a data batch does not confuse the cleaner (testCleaningWithKeysConflictingWithTxnMarkerKeys)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    transactionalAppender(log, 1n, 0, { leaderEpoch: 5 })([1]);
    marker(log, ControlRecordType.COMMIT, 1n, 0, { leaderEpoch: 5 });
    // A data record whose key is a COMMIT marker's key.
    log.appendAsLeader(
      buildRecordBatch([{ key: controlRecordKey(ControlRecordType.COMMIT), value: 'foo', timestamp: 1_700_000_000_000 }], { producerId: 2n, producerEpoch: 0, baseSequence: 0, isTransactional: true }),
      { leaderEpoch: 5 },
    );
    marker(log, ControlRecordType.COMMIT, 2n, 0, { leaderEpoch: 5 });
    log.roll();
    expect(n(offsetsInLog(log))).toEqual([0, 1, 2, 3]);
    await makeCleaner(10).clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([0, 1, 2, 3]);
    expect(n(offsetsInLog(log))).toEqual([0, 1, 2, 3]);
    log.close();
  });
});

describe('producer state', () => {
  test('the last batch of each producer is kept, emptied, with its sequence (testLogCleanerRetainsProducerLastSequence)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    log.appendAsLeader(record(0, 0), { leaderEpoch: 0 }); // 0
    log.appendAsLeader(record(0, 1, { producerId: 1n, producerEpoch: 0, sequence: 0 }), { leaderEpoch: 0 }); // 1
    log.appendAsLeader(record(0, 2, { producerId: 2n, producerEpoch: 0, sequence: 0 }), { leaderEpoch: 0 }); // 2
    log.appendAsLeader(record(0, 3, { producerId: 3n, producerEpoch: 0, sequence: 0 }), { leaderEpoch: 0 }); // 3
    log.appendAsLeader(record(1, 1, { producerId: 2n, producerEpoch: 0, sequence: 1 }), { leaderEpoch: 0 }); // 4
    log.roll();
    await makeCleaner(10).clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1, 3, 4]);
    expect(lastSequencesInLog(log)).toEqual(new Map([[1n, 0], [2n, 1], [3n, 0]]));
    expect(keysInLog(log)).toEqual(['0', '1']);
    expect(n(offsetsInLog(log))).toEqual([3, 4]);
    log.close();
  });

  test('the last sequence is kept even when its transaction aborted (testLogCleanerRetainsLastSequenceEvenIfTransactionAborted)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    const p = transactionalAppender(log, 1n);
    p([1]);
    p([2, 3]);
    abortMarker(log, 1n);
    log.roll();
    const cleaner = makeCleaner(10);
    await cleaner.clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([2, 3]);
    expect(lastSequencesInLog(log)).toEqual(new Map([[1n, 2]]));
    expect(keysInLog(log)).toEqual([]);
    expect(n(offsetsInLog(log))).toEqual([3]);
    p([1, 5]);
    log.roll();
    await cleaner.clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([3, 5]);
    expect(lastSequencesInLog(log)).toEqual(new Map([[1n, 4]]));
    expect(keysInLog(log)).toEqual(['1', '5']);
    expect(n(offsetsInLog(log))).toEqual([3, 4, 5]);
    log.close();
  });

  test('duplicates are still detected after cleaning and a reload (testDuplicateCheckAfterCleaning)', async () => {
    const t = makeLog({ segmentBytes: 2048 });
    let log = t.log;
    const cleaner = makeCleaner(2 ** 31);
    idempotentAppender(log, 1n)([1, 2, 3]);
    idempotentAppender(log, 2n)([3, 1, 4]);
    idempotentAppender(log, 3n)([1, 4]);
    log.roll();
    await cleaner.clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([2, 5, 7]);
    expect(lastSequencesInLog(log)).toEqual(new Map([[1n, 2], [2n, 2], [3n, 1]]));
    expect(keysInLog(log)).toEqual(['2', '3', '1', '4']);
    expect(n(offsetsInLog(log))).toEqual([1, 3, 6, 7]);
    const reload = () => {
      log.close();
      log = makeLog({ segmentBytes: 2048 }, { dir: t.dir, recoveryPoint: 0n }).log;
    };
    reload();
    const dup = (pid: bigint, keys: number[], seq: number) =>
      log.appendAsLeader(buildRecordBatch(keys.map((k) => ({ key: String(k), value: String(k), timestamp: 1_700_000_000_000 })), { producerId: pid, producerEpoch: 0, baseSequence: seq }), { leaderEpoch: 0 });
    let r = dup(1n, [1, 2, 3], 0);
    expect([r.firstOffset, r.lastOffset, r.duplicate]).toEqual([0n, 2n, true]);
    r = dup(3n, [1, 4], 0);
    expect([r.firstOffset, r.lastOffset]).toEqual([6n, 7n]);
    r = dup(2n, [3, 1, 4], 0);
    expect([r.firstOffset, r.lastOffset]).toEqual([3n, 5n]);
    idempotentAppender(log, 4n)([2]);
    log.roll();
    await cleaner.clean(ltc(log, 0n));
    expect(lastSequencesInLog(log)).toEqual(new Map([[1n, 2], [2n, 2], [3n, 1], [4n, 0]]));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([2, 5, 7, 8]);
    expect(keysInLog(log)).toEqual(['3', '1', '4', '2']);
    expect(n(offsetsInLog(log))).toEqual([3, 6, 7, 8]);
    reload();
    r = dup(1n, [1, 2, 3], 0);
    expect([r.firstOffset, r.lastOffset]).toEqual([0n, 2n]);
    log.close();
  });

  test('a producer that is no longer active keeps nothing: its emptied batches go', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    log.appendAsLeader(record('a', 1, { producerId: 7n, producerEpoch: 0, sequence: 0 }), { leaderEpoch: 0 });
    log.appendAsLeader(record('a', 2), { leaderEpoch: 0 });
    log.roll();
    log.producerState.removeExpiredProducers(Date.now() + 10 * 86_400_000);
    expect(log.lastRecordsOfActiveProducers().size).toBe(0);
    await makeCleaner(10).clean(ltc(log, 0n));
    expect(n(lastOffsetsPerBatchInLog(log))).toEqual([1]);
    log.close();
  });
});

describe('grouping, map building, aborts', () => {
  test('segments group by log and index size (testSegmentGrouping)', () => {
    const { log } = makeLog({ segmentBytes: 300, indexIntervalBytes: 1 });
    while (log.numberOfSegments < 10) log.appendAsLeader(records([['hello', 'hello']]), { leaderEpoch: 0 });
    const cleaner = makeCleaner(2 ** 31);
    const segs = log.logSegments();
    const inOrder = (g: { baseOffset: bigint }[][]) => {
      const o = g.flat().map((s) => s.baseOffset);
      expect(o).toEqual([...o].sort((a, b) => (a < b ? -1 : 1)));
    };
    let groups = cleaner.groupSegmentsBySize(segs, 2 ** 31 - 1, 2 ** 31 - 1, log.logEndOffset);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toHaveLength(segs.length);
    groups = cleaner.groupSegmentsBySize(segs, 1, 2 ** 31 - 1, log.logEndOffset);
    expect(groups.every((g) => g.length === 1)).toBe(true);
    inOrder(groups);
    groups = cleaner.groupSegmentsBySize(segs, 2 ** 31 - 1, 1, log.logEndOffset);
    expect(groups.every((g) => g.length === 1)).toBe(true);
    const logSize = segs.slice(0, 3).reduce((s, x) => s + x.size, 0) + 1;
    groups = cleaner.groupSegmentsBySize(segs, logSize, 2 ** 31 - 1, log.logEndOffset);
    inOrder(groups);
    expect(groups.slice(0, -1).every((g) => g.length === 3)).toBe(true);
    const indexSize = segs.slice(0, 3).reduce((s, x) => s + x.offsetIndex.sizeInBytes, 0) + 1;
    groups = cleaner.groupSegmentsBySize(segs, 2 ** 31 - 1, indexSize, log.logEndOffset);
    expect(groups.slice(0, -1).every((g) => g.length === 3)).toBe(true);
    log.close();
  });

  test('a group never spans more than an int32 of offsets; empty segments do not limit it (testSegmentGroupingWithSparseOffsets)', () => {
    const { log } = makeLog({ segmentBytes: 400, indexIntervalBytes: 1 });
    while (log.numberOfSegments === 1) log.appendAsLeader(records([['hello', 'hello']]), { leaderEpoch: 0 });
    log.appendAsFollower(buildRecordBatch([{ key: 'hello', value: 'hello', timestamp: 1_700_000_000_000 }], { baseOffset: 2147483646n }));
    log.appendAsLeader(records([['hello', 'hello']]), { leaderEpoch: 0 });
    const cleaner = makeCleaner(2 ** 31);
    expect(cleaner.groupSegmentsBySize(log.logSegments(), 2 ** 31 - 1, 2 ** 31 - 1, log.logEndOffset)).toHaveLength(1);
    log.appendAsLeader(records([['hello', 'hello']]), { leaderEpoch: 0 });
    const groups = cleaner.groupSegmentsBySize(log.logSegments(), 2 ** 31 - 1, 2 ** 31 - 1, log.logEndOffset);
    expect(groups).toHaveLength(2);
    log.close();
  });

  test('buildOffsetMap maps every key of a range to its offset (testBuildOffsetMap)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    for (let i = 0; i < 500; i++) log.appendAsLeader(record(i, i), { leaderEpoch: 0 });
    const cleaner = makeCleaner(2 ** 31);
    const check = async (start: number, end: number) => {
      const map = new FakeOffsetMap(1000);
      const stats = new CleanerStats();
      await cleaner.buildOffsetMap(log, BigInt(start), BigInt(end), map, stats);
      expect(map.latestOffset + 1).toBe(end);
      expect(map.size).toBe(end - start);
      for (let i = start; i < end; i++) expect(map.getKey(i)).toBe(i);
      expect(map.getKey(start - 1)).toBe(-1);
      expect(map.getKey(end)).toBe(-1);
      expect(stats.mapMessagesRead).toBe(end - start);
    };
    const segs = log.logSegments();
    await check(0, Number(segs[1].baseOffset));
    await check(Number(segs[1].baseOffset), Number(segs[3].baseOffset));
    await check(Number(segs[3].baseOffset), Number(log.logEndOffset));
    log.close();
  });

  test('a partial map stops at its load factor (testBuildPartialOffsetMap)', async () => {
    const { log } = makeLog();
    for (let i = 0; i < 5; i++) log.appendAsLeader(record(i, i), { leaderEpoch: 0 });
    log.roll();
    const cleaner = makeCleaner(3);
    const map = cleaner.offsetMap as FakeOffsetMap;
    const stats = new CleanerStats();
    await cleaner.buildOffsetMap(log, 2n, 2n ** 31n, map, stats);
    expect(map.size).toBe(2);
    expect(map.getKey(0)).toBe(-1);
    expect(map.getKey(2)).toBe(2);
    expect(map.getKey(3)).toBe(3);
    expect(map.getKey(4)).toBe(-1);
    expect(stats.mapMessagesRead).toBe(4);
    log.close();
  });

  test('LogToClean byte counts (testLogToClean, testLogToCleanWithUncleanableSection)', () => {
    const { log } = makeLog({ segmentBytes: 100 });
    for (let i = 0; i < 6; i++) log.appendAsLeader(records([['1', '0'.repeat(25)]]), { leaderEpoch: 0 });
    const a = new LogToClean(TEST_TP, log, log.activeSegment.baseOffset, log.activeSegment.baseOffset);
    expect(a.totalBytes).toBe(log.size - log.activeSegment.size);
    const segs = log.logSegments();
    const b = new LogToClean(TEST_TP, log, segs[2].baseOffset, segs[4].baseOffset);
    const clean = segs.slice(0, 2).reduce((s, x) => s + x.size, 0);
    const cleanable = segs.slice(2, 4).reduce((s, x) => s + x.size, 0);
    expect(b.cleanBytes).toBe(clean);
    expect(b.cleanableBytes).toBe(cleanable);
    expect(b.totalBytes).toBe(clean + cleanable);
    expect(b.cleanableRatio).toBeCloseTo(cleanable / (clean + cleanable), 6);
    log.close();
  });

  test('an abort mid-pass throws LogCleaningAbortedException and leaves the log and no .cleaned file (testCleanSegmentsWithAbort)', async () => {
    const { log, dir } = makeLog({ segmentBytes: 1024 });
    appendUntilSegments(log, 4);
    const before = offsetsInLog(log);
    const cleaner = makeCleaner(2 ** 31, {
      checkDone: () => {
        throw new LogCleaningAbortedException();
      },
    });
    const map = new FakeOffsetMap(2 ** 31);
    for (const k of keysInLog(log)) map.putKey(k, MAX_OFFSET);
    const segments = log.logSegments().slice(0, 3);
    await expect(cleaner.cleanSegments(log, segments, map, 0, new CleanerStats(), new CleanedTransactionMetadata(), -1, segments[2].readNextOffset())).rejects.toThrow(LogCleaningAbortedException);
    expect(offsetsInLog(log)).toEqual(before);
    expect(nodefs.readdirSync(dir).filter((f) => f.includes('.cleaned'))).toEqual([]);
    log.close();
  });

  test('everything deleted: the last batch of the pass is kept empty (testCleanSegmentsRetainingLastEmptyBatch)', async () => {
    const { log } = makeLog({ segmentBytes: 1024 });
    appendUntilSegments(log, 4);
    const map = new FakeOffsetMap(2 ** 31);
    for (const k of keysInLog(log)) map.putKey(k, MAX_OFFSET);
    const segments = log.logSegments().slice(0, 3);
    await makeCleaner(2 ** 31).cleanSegments(log, segments, map, 0, new CleanerStats(), new CleanedTransactionMetadata(), -1, segments[2].readNextOffset());
    expect(log.numberOfSegments).toBe(2);
    const first = batchesInLog(log)[0];
    expect(first.lastOffset).toBe(log.logSegments()[1].baseOffset - 1n);
    expect(first.recordsCount).toBe(0);
    log.close();
  });

  test('LogAppendTime batches are rebuilt with the records reading the batch time', async () => {
    const { log } = makeLog({ segmentBytes: 4096, messageTimestampType: 'LogAppendTime' });
    log.appendAsLeader(records([['a', '1'], ['b', '2'], ['a', '3']], { timestampType: TimestampType.CREATE_TIME }), { leaderEpoch: 0 });
    log.roll();
    const at = batchesInLog(log)[0].maxTimestamp;
    await makeCleaner(2 ** 31).clean(ltc(log, 0n));
    const b = batchesInLog(log)[0];
    expect(b.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(b.maxTimestamp).toBe(at);
    expect(readRecords(b).map((r) => [r.key!.toString(), r.timestamp])).toEqual([
      ['b', at],
      ['a', at],
    ]);
    log.close();
  });
});
