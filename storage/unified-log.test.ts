import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { CompressionType, RecordBatch, TimestampType } from '../protocol/records/record-batch';
import { readRecords } from '../protocol/records/record';
import { LogConfig, logConfig } from './log-config';
import { recordsBuffer } from './log-segment';
import { batchAt, decodeBatches, offsetsIn, testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP, UnifiedLog, UnifiedLogParams } from './unified-log';

afterAll(removeTempDirs);

const TP = { topic: 'events', partition: 0 };

interface Harness {
  log: UnifiedLog;
  fs: FaultyFs;
  time: MockTime;
  scheduler: MockScheduler;
  dir: string;
}

function open(overrides: Partial<LogConfig> = {}, extra: Partial<UnifiedLogParams> = {}, dir = path.join(tempDir(), 'events-0')): Harness {
  const fs = (extra.fs as FaultyFs | undefined) ?? new FaultyFs();
  const time = (extra.time as MockTime | undefined) ?? new MockTime();
  const scheduler = (extra.scheduler as MockScheduler | undefined) ?? new MockScheduler(time);
  const log = UnifiedLog.load({ dir, tp: TP, config: logConfig(overrides), fs, time, scheduler, ...extra });
  return { log, fs, time, scheduler, dir };
}

function expectCode(fn: () => unknown, code: number): KafkaError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(KafkaError);
    expect((e as KafkaError).codeName).toBe(new KafkaError(code).codeName);
    return e as KafkaError;
  }
  throw new Error(`expected error code ${code}`);
}

/** Appends `n` batches of `count` records; returns the first offset of each. */
function fill(log: UnifiedLog, n: number, count = 5, valueSize = 100, ts?: (i: number) => number): bigint[] {
  const firsts: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const info = log.appendAsLeader(testBatch({ count, valueSize, timestamp: ts ? ts(i) : undefined, prefix: `b${i}-` }), { leaderEpoch: 3 });
    firsts.push(info.firstOffset);
  }
  log.updateHighWatermark(log.logEndOffset);
  return firsts;
}

/** Reads everything from `from` to the LEO, batch by batch. */
function readAll(log: UnifiedLog, from = log.logStartOffset): Buffer[] {
  const out: Buffer[] = [];
  let next = from;
  while (next < log.logEndOffset) {
    const r = log.read(next, 64 * 1024, { isolation: 'LOG_END', minOneMessage: true });
    const buf = recordsBuffer(r);
    if (buf.length === 0) break;
    out.push(buf);
    const batches = decodeBatches(buf);
    next = batches[batches.length - 1].lastOffset + 1n;
  }
  return out;
}

describe('append and read', () => {
  test('assigns offsets from the LEO, stamps the leader epoch, and returns Kafka append info', () => {
    const { log } = open();
    const a = log.appendAsLeader(testBatch({ count: 3 }), { leaderEpoch: 7 });
    expect(a).toMatchObject({ firstOffset: 0n, lastOffset: 2n, recordCount: 3, logAppendTime: -1n, logStartOffset: 0n });
    const b = log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 7 });
    expect([b.firstOffset, b.lastOffset]).toEqual([3n, 4n]);
    expect(log.logEndOffset).toBe(5n);
    const buf = recordsBuffer(log.read(0n, 1 << 20, { isolation: 'LOG_END' }));
    const batches = decodeBatches(buf);
    expect(batches.map((x) => [x.baseOffset, x.lastOffset, x.partitionLeaderEpoch])).toEqual([
      [0n, 2n, 7],
      [3n, 4n, 7],
    ]);
    expect(log.latestEpoch).toBe(7);
  });

  test('round trip across many small segments, every record exactly once, in order', () => {
    const { log } = open({ segmentBytes: 2048, indexIntervalBytes: 256 });
    fill(log, 200, 4, 60);
    expect(log.numberOfSegments).toBeGreaterThan(20);
    const offsets = readAll(log).flatMap(offsetsIn);
    expect(offsets.length).toBe(800);
    offsets.forEach((o, i) => expect(o).toBe(BigInt(i)));
    // Each record's value survives byte for byte.
    const r = log.read(417n, 1, { isolation: 'LOG_END', minOneMessage: true });
    const rec = readRecords(new RecordBatch(recordsBuffer(r), 0));
    expect(rec.map((x) => x.offset)).toEqual([416n, 417n, 418n, 419n]);
    expect(rec[1].value?.toString().startsWith('b104-1')).toBe(true);
  });

  test('a fetch from inside a batch returns that whole batch', () => {
    const { log } = open();
    fill(log, 3, 10);
    const r = log.read(13n, 1 << 20, { isolation: 'LOG_END' });
    const batches = decodeBatches(recordsBuffer(r));
    expect(batches[0].baseOffset).toBe(10n);
    expect(r.fetchOffsetMetadata.messageOffset).toBe(13n);
  });

  test('maxBytes returns whole batches only; minOneMessage returns an oversized first batch', () => {
    const { log } = open();
    fill(log, 4, 10, 100);
    const one = decodeBatches(recordsBuffer(log.read(0n, 1 << 20, { isolation: 'LOG_END' })))[0];
    const size = Number(decodeBatches(recordsBuffer(log.read(0n, 1 << 20, { isolation: 'LOG_END' })))[1].position);
    const r = log.read(0n, size + 10, { isolation: 'LOG_END' });
    expect(decodeBatches(recordsBuffer(r)).length).toBe(1);
    expect(one.baseOffset).toBe(0n);
    const small = log.read(0n, 10, { isolation: 'LOG_END', minOneMessage: false });
    expect(small.sizeInBytes).toBe(0);
    expect(small.records).toEqual([]);
    expect(small.firstEntryIncomplete).toBe(true);
    const forced = log.read(0n, 10, { isolation: 'LOG_END', minOneMessage: true });
    expect(decodeBatches(recordsBuffer(forced)).length).toBe(1);
  });

  test('reads stop at the high watermark (default isolation) and at an explicit maxOffset', () => {
    const { log } = open();
    fill(log, 4, 10);
    log.updateHighWatermark(20n);
    expect(offsetsIn(recordsBuffer(log.read(0n, 1 << 20))).length).toBe(20);
    expect(log.read(20n, 1 << 20).sizeInBytes).toBe(0);
    // A bound inside a batch excludes that batch.
    expect(offsetsIn(recordsBuffer(log.read(0n, 1 << 20, { maxOffset: 25n }))).length).toBe(20);
    expect(offsetsIn(recordsBuffer(log.read(0n, 1 << 20, { isolation: 'LOG_END' }))).length).toBe(40);
    expect(log.lastStableOffset).toBe(20n);
  });

  test('updateHighWatermark clamps to [logStartOffset, LEO]', () => {
    const { log } = open();
    fill(log, 2, 5);
    expect(log.updateHighWatermark(100n)).toBe(10n);
    expect(log.updateHighWatermark(-5n)).toBe(0n);
  });

  test('OFFSET_OUT_OF_RANGE below the log start offset and past the LEO; empty at the LEO', () => {
    const { log } = open();
    fill(log, 2, 5);
    expectCode(() => log.read(11n, 100, { isolation: 'LOG_END' }), ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(log.read(10n, 100, { isolation: 'LOG_END' }).sizeInBytes).toBe(0);
    log.deleteRecordsBefore(5n);
    expectCode(() => log.read(4n, 100), ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(offsetsIn(recordsBuffer(log.read(5n, 1 << 20)))[0]).toBe(5n);
  });

  test('reading from the active segment sees every write immediately', () => {
    const { log } = open();
    for (let i = 0; i < 50; i++) {
      const info = log.appendAsLeader(testBatch({ count: 1 }), { leaderEpoch: 0 });
      const r = log.read(info.firstOffset, 1000, { isolation: 'LOG_END' });
      expect(decodeBatches(recordsBuffer(r))[0].baseOffset).toBe(info.firstOffset);
    }
  });
});

describe('validation (nothing is written when a request is rejected)', () => {
  test('max.message.bytes -> MESSAGE_TOO_LARGE, a set above segment.bytes -> RECORD_LIST_TOO_LARGE', () => {
    const { log } = open({ maxMessageBytes: 500, segmentBytes: 100_000 });
    expectCode(() => log.appendAsLeader(testBatch({ count: 10, valueSize: 100 }), { leaderEpoch: 0 }), ErrorCode.MESSAGE_TOO_LARGE);
    const { log: small } = open({ segmentBytes: 300 });
    expectCode(() => small.appendAsLeader(testBatch({ count: 10, valueSize: 100 }), { leaderEpoch: 0 }), ErrorCode.RECORD_LIST_TOO_LARGE);
    expect(log.logEndOffset).toBe(0n);
    expect(small.logEndOffset).toBe(0n);
  });

  test('corrupt CRC -> CORRUPT_MESSAGE; non-zero base offset from a client -> INVALID_RECORD', () => {
    const { log } = open();
    const b = testBatch({ count: 2 });
    b[b.length - 1] ^= 0xff;
    expectCode(() => log.appendAsLeader(b, { leaderEpoch: 0 }), ErrorCode.CORRUPT_MESSAGE);
    expectCode(() => log.appendAsLeader(testBatch({ baseOffset: 5n }), { leaderEpoch: 0 }), ErrorCode.INVALID_RECORD);
    expect(log.logEndOffset).toBe(0n);
    expect(log.size).toBe(0);
  });

  test('timestamps outside message.timestamp.before/after.max.ms -> INVALID_TIMESTAMP with record errors', () => {
    const { log, time } = open({ messageTimestampBeforeMaxMs: 1000, messageTimestampAfterMaxMs: 1000 });
    const now = time.now;
    const e = expectCode(
      () => log.appendAsLeader(testBatch({ count: 3, timestamp: (i) => (i === 1 ? now - 5000 : now) }), { leaderEpoch: 0 }),
      ErrorCode.INVALID_TIMESTAMP,
    );
    expect(e.recordErrors?.map((r) => r.batchIndex)).toEqual([1]);
    expectCode(() => log.appendAsLeader(testBatch({ timestamp: now + 5000 }), { leaderEpoch: 0 }), ErrorCode.INVALID_TIMESTAMP);
    expect(log.appendAsLeader(testBatch({ timestamp: now + 500 }), { leaderEpoch: 0 }).firstOffset).toBe(0n);
  });

  test('LogAppendTime topics stamp the broker time and report it', () => {
    const { log, time } = open({ messageTimestampType: 'LogAppendTime' });
    const info = log.appendAsLeader(testBatch({ count: 2, timestamp: 5 }), { leaderEpoch: 0 });
    expect(info.logAppendTime).toBe(BigInt(time.now));
    expect(info.maxTimestamp).toBe(BigInt(time.now));
    const b = new RecordBatch(recordsBuffer(log.read(0n, 1000, { isolation: 'LOG_END' })), 0);
    expect(b.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(b.maxTimestamp).toBe(BigInt(time.now));
    expect(b.isValidCrc()).toBe(true);
  });

  test('compression.type other than producer re-encodes the batch', () => {
    const { log } = open({ compressionType: 'gzip' });
    log.appendAsLeader(testBatch({ count: 20, valueSize: 200 }), { leaderEpoch: 0 });
    const b = new RecordBatch(recordsBuffer(log.read(0n, 1 << 20, { isolation: 'LOG_END' })), 0);
    expect(b.compressionType).toBe(CompressionType.GZIP);
    expect(readRecords(b).length).toBe(20);
  });
});

describe('rolling', () => {
  test('rolls on segment.bytes', () => {
    const { log } = open({ segmentBytes: 1500 });
    fill(log, 10, 3, 100);
    const segs = log.logSegments();
    expect(segs.length).toBeGreaterThan(3);
    for (const s of segs) expect(s.size).toBeLessThanOrEqual(1500);
  });

  test('rolls on segment.ms, measured by record timestamps', () => {
    const { log, time } = open({ segmentMs: 60_000 });
    log.appendAsLeader(testBatch({ timestamp: time.now }), { leaderEpoch: 0 });
    log.appendAsLeader(testBatch({ timestamp: time.now + 30_000 }), { leaderEpoch: 0 });
    expect(log.numberOfSegments).toBe(1);
    time.sleep(61_000);
    log.appendAsLeader(testBatch({ timestamp: time.now }), { leaderEpoch: 0 });
    expect(log.numberOfSegments).toBe(2);
    expect(log.logSegments()[1].baseOffset).toBe(2n);
  });

  test('rolls when the offset index is full', () => {
    const { log } = open({ segmentIndexBytes: 8 * 3, indexIntervalBytes: 0 });
    fill(log, 12, 1, 10);
    expect(log.numberOfSegments).toBeGreaterThan(2);
    for (const s of log.logSegments()) expect(s.offsetIndex.entries).toBeLessThanOrEqual(3);
    expect(readAll(log).flatMap(offsetsIn).length).toBe(12);
  });

  test('rolls when an offset would overflow the 32-bit relative offset (follower gap)', () => {
    const { log } = open();
    log.appendAsFollower(batchAt(0n, 2));
    log.appendAsFollower(batchAt(3_000_000_000n, 2));
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([0n, 3_000_000_000n]);
    expect(log.logEndOffset).toBe(3_000_000_002n);
  });

  test('the rolled segment is flushed in the background and the recovery point moves to it', async () => {
    const { log } = open({ segmentBytes: 1000 });
    fill(log, 6, 3, 100);
    expect(log.numberOfSegments).toBeGreaterThan(1);
    await log.whenBackgroundFlushesDone();
    expect(log.recoveryPoint).toBe(log.logSegments()[log.numberOfSegments - 1].baseOffset);
  });
});

describe('indexes and timestamps', () => {
  test('offset index entries every index.interval.bytes; lookups land on the right batch', () => {
    const { log } = open({ indexIntervalBytes: 1024 });
    fill(log, 100, 2, 200);
    const seg = log.logSegments()[0];
    expect(seg.offsetIndex.entries).toBeGreaterThan(10);
    for (const target of [0n, 1n, 57n, 101n, 199n]) {
      const h = seg.translateOffset(target);
      expect(h).not.toBeNull();
      expect(h!.baseOffset <= target && target <= h!.lastOffset).toBe(true);
    }
  });

  test('fetchOffsetByTimestamp is record-granular; MAX_TIMESTAMP names the record; special values', () => {
    const { log, time } = open({ segmentBytes: 4000, indexIntervalBytes: 300 });
    const t0 = time.now - 100_000;
    // 40 batches of 5 records; record k (global) has timestamp t0 + 10*k, except a spike.
    for (let b = 0; b < 40; b++) {
      log.appendAsLeader(
        testBatch({ count: 5, valueSize: 50, timestamp: (i) => (b === 30 && i === 3 ? t0 + 99_000 : t0 + 10 * (b * 5 + i)) }),
        { leaderEpoch: 2 },
      );
    }
    log.updateHighWatermark(log.logEndOffset);
    expect(log.numberOfSegments).toBeGreaterThan(2);
    // Exactly a record's timestamp, and between two records' timestamps.
    expect(log.fetchOffsetByTimestamp(BigInt(t0 + 10 * 123))).toEqual({ timestamp: BigInt(t0 + 1230), offset: 123n, leaderEpoch: 2 });
    expect(log.fetchOffsetByTimestamp(BigInt(t0 + 10 * 123 - 3))?.offset).toBe(123n);
    expect(log.fetchOffsetByTimestamp(BigInt(t0))?.offset).toBe(0n);
    expect(log.fetchOffsetByTimestamp(BigInt(t0 + 200_000))).toBeNull();
    expect(log.fetchOffsetByTimestamp(MAX_TIMESTAMP)).toEqual({ timestamp: BigInt(t0 + 99_000), offset: 153n, leaderEpoch: 2 });
    // The spike is the first record at or after any timestamp above the rest.
    expect(log.fetchOffsetByTimestamp(BigInt(t0 + 5000))?.offset).toBe(153n);
    expect(log.fetchOffsetByTimestamp(EARLIEST_TIMESTAMP)).toEqual({ timestamp: -1n, offset: 0n, leaderEpoch: 2 });
    expect(log.fetchOffsetByTimestamp(LATEST_TIMESTAMP)).toEqual({ timestamp: -1n, offset: 200n, leaderEpoch: 2 });
    // The time index of each rolled segment ends with its max timestamp.
    const first = log.logSegments()[0];
    expect(first.timeIndex.lastEntry().timestamp).toBe(first.maxTimestampSoFar);
    // After DeleteRecords the search starts at the log start offset.
    log.deleteRecordsBefore(130n);
    expect(log.fetchOffsetByTimestamp(BigInt(t0))?.offset).toBe(130n);
    expect(log.fetchOffsetByTimestamp(EARLIEST_TIMESTAMP)?.offset).toBe(130n);
  });

  test('empty log: earliest and latest are the log start, max timestamp is null', () => {
    const { log } = open();
    expect(log.fetchOffsetByTimestamp(EARLIEST_TIMESTAMP)).toEqual({ timestamp: -1n, offset: 0n, leaderEpoch: -1 });
    expect(log.fetchOffsetByTimestamp(LATEST_TIMESTAMP)).toEqual({ timestamp: -1n, offset: 0n, leaderEpoch: -1 });
    expect(log.fetchOffsetByTimestamp(MAX_TIMESTAMP)).toBeNull();
    expect(log.fetchOffsetByTimestamp(0n)).toBeNull();
  });
});

describe('log start offset and retention', () => {
  test('DeleteRecords: -1 means the high watermark, beyond it is OFFSET_OUT_OF_RANGE, segments go at the next retention pass', () => {
    const { log, scheduler, dir } = open({ segmentBytes: 1000, fileDeleteDelayMs: 1000 });
    fill(log, 20, 3, 100);
    log.updateHighWatermark(40n);
    expectCode(() => log.deleteRecordsBefore(41n), ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(log.deleteRecordsBefore(25n)).toBe(25n);
    expect(log.deleteRecordsBefore(10n)).toBe(25n);
    const before = log.numberOfSegments;
    const deleted = log.deleteOldSegments();
    expect(deleted).toBeGreaterThan(0);
    expect(log.numberOfSegments).toBe(before - deleted);
    expect(log.logSegments()[0].baseOffset <= 25n).toBe(true);
    expect(log.logStartOffset).toBe(25n);
    // Files are renamed to .deleted and removed after file.delete.delay.ms.
    expect(nodefs.readdirSync(dir).some((f) => f.endsWith('.deleted'))).toBe(true);
    scheduler.tick(1000);
    expect(nodefs.readdirSync(dir).some((f) => f.endsWith('.deleted'))).toBe(false);
    expect(log.deleteRecordsBefore(-1n)).toBe(40n);
  });

  test('DeleteRecords on a compact-only topic -> POLICY_VIOLATION', () => {
    const { log } = open({ cleanupPolicy: ['compact'] });
    log.appendAsLeader(testBatch({ keys: true }), { leaderEpoch: 0 });
    expectCode(() => log.deleteRecordsBefore(0n), ErrorCode.POLICY_VIOLATION);
  });

  test('retention.ms deletes segments by their largest timestamp, never past the high watermark, rolling the active one', () => {
    const { log, time } = open({ segmentBytes: 1000, retentionMs: 60_000 });
    fill(log, 10, 3, 100, () => time.now - 120_000);
    fill(log, 5, 3, 100, () => time.now);
    const n = log.numberOfSegments;
    log.updateHighWatermark(0n);
    expect(log.deleteOldSegments()).toBe(0);
    log.updateHighWatermark(log.logEndOffset);
    const deleted = log.deleteOldSegments();
    expect(deleted).toBeGreaterThan(0);
    expect(log.numberOfSegments).toBe(n - deleted);
    expect(offsetsIn(recordsBuffer(log.read(log.logStartOffset, 1 << 20)))[0]).toBe(log.logStartOffset);
    // Everything old: the log rolls and keeps only an empty active segment at the LEO.
    time.sleep(200_000);
    log.deleteOldSegments();
    expect(log.numberOfSegments).toBe(1);
    expect(log.logStartOffset).toBe(log.logEndOffset);
    expect(log.logSegments()[0].baseOffset).toBe(log.logEndOffset);
    log.appendAsLeader(testBatch(), { leaderEpoch: 0 });
    expect(log.logEndOffset).toBe(46n);
  });

  test('retention.bytes deletes the oldest segments while the log is too large', () => {
    const { log } = open({ segmentBytes: 1000, retentionBytes: 3000 });
    fill(log, 30, 3, 100);
    expect(log.size).toBeGreaterThan(3000);
    log.deleteOldSegments();
    expect(log.size).toBeLessThanOrEqual(3000 + 1000);
    expect(log.size).toBeGreaterThan(2000);
    expect(log.logStartOffset).toBe(log.logSegments()[0].baseOffset);
  });
});

describe('truncation (replication)', () => {
  test('truncateTo removes later segments and batches; the LEO and high watermark follow', () => {
    const { log } = open({ segmentBytes: 1000 });
    fill(log, 20, 3, 100);
    expect(log.truncateTo(100n)).toBe(false);
    expect(log.truncateTo(31n)).toBe(true);
    // 31 is inside the batch [30, 32]: the whole batch goes.
    expect(log.logEndOffset).toBe(30n);
    expect(log.highWatermark).toBe(30n);
    expect(readAll(log).flatMap(offsetsIn).length).toBe(30);
    expect(log.appendAsLeader(testBatch(), { leaderEpoch: 4 }).firstOffset).toBe(30n);
    expect(log.truncateTo(12n)).toBe(true);
    expect(log.logEndOffset).toBe(12n);
    expect(log.logSegments().every((s) => s.baseOffset <= 12n)).toBe(true);
  });

  test('truncateFullyAndStartAt empties the log at a new offset', () => {
    const { log } = open();
    fill(log, 5, 2);
    log.truncateFullyAndStartAt(500n);
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([500n, 500n, 500n]);
    expect(log.numberOfSegments).toBe(1);
    expect(log.appendAsLeader(testBatch(), { leaderEpoch: 0 }).firstOffset).toBe(500n);
  });

  test('follower appends keep offsets; below the LEO or out of order is refused', () => {
    const { log } = open();
    log.appendAsFollower(Buffer.concat([batchAt(0n, 3), batchAt(3n, 2)]));
    expect(log.logEndOffset).toBe(5n);
    expect(() => log.appendAsFollower(batchAt(4n, 2))).toThrow(/less than the next offset/);
    expect(() => log.appendAsFollower(Buffer.concat([batchAt(10n, 3), batchAt(11n, 2)]))).toThrow(/out of order/);
    log.appendAsFollower(batchAt(7n, 1));
    expect(log.logEndOffset).toBe(8n);
  });
});

describe('KAFKA-7866: an index failure after the .log write', () => {
  for (const which of ['.index', '.timeindex']) {
    test(`a ${which} write failure leaves the LEO advanced, the log offline, and no offset reused`, () => {
      const h = open({ indexIntervalBytes: 0 });
      const { log, fs, dir } = h;
      fill(log, 3, 2);
      fs.failNext({ op: 'write', path: which, errno: 'EIO' });
      const before = log.logEndOffset;
      expectCode(() => log.appendAsLeader(testBatch({ count: 4, timestamp: h.time.now + 1 }), { leaderEpoch: 3 }), ErrorCode.KAFKA_STORAGE_ERROR);
      expect(fs.injected.length).toBe(1);
      expect(log.logEndOffset).toBe(before + 4n);
      expect(log.isOffline).toBe(true);
      expectCode(() => log.appendAsLeader(testBatch(), { leaderEpoch: 3 }), ErrorCode.KAFKA_STORAGE_ERROR);
      expectCode(() => log.read(0n, 100), ErrorCode.KAFKA_STORAGE_ERROR);
      // Restart without a clean shutdown: recovery re-indexes, the next append starts after the LEO.
      const again = open({ indexIntervalBytes: 0 }, { fs: new FaultyFs() }, dir);
      expect(again.log.logEndOffset).toBe(before + 4n);
      const next = again.log.appendAsLeader(testBatch(), { leaderEpoch: 4 });
      expect(next.firstOffset).toBe(before + 4n);
      const all = readAll(again.log, 0n).flatMap(offsetsIn);
      expect(all).toEqual(Array.from({ length: Number(before) + 5 }, (_, i) => BigInt(i)));
    });
  }

  test('a torn .log write leaves the LEO where it was; recovery drops the torn bytes', () => {
    const h = open();
    fill(h.log, 2, 3);
    h.fs.failNext({ op: 'write', path: '.log', errno: 'ENOSPC', partial: true });
    expectCode(() => h.log.appendAsLeader(testBatch({ count: 5, valueSize: 400 }), { leaderEpoch: 3 }), ErrorCode.KAFKA_STORAGE_ERROR);
    expect(h.log.logEndOffset).toBe(6n);
    const again = open({}, { fs: new FaultyFs() }, h.dir);
    expect(again.log.logEndOffset).toBe(6n);
    expect(again.log.loadReport.truncatedBytes).toBeGreaterThan(0);
    expect(again.log.appendAsLeader(testBatch(), { leaderEpoch: 4 }).firstOffset).toBe(6n);
  });

  test('EMFILE opening the new segment at roll takes the log offline; nothing is lost', () => {
    const h = open({ segmentBytes: 1000 });
    fill(h.log, 3, 3, 100);
    const leo = h.log.logEndOffset;
    h.fs.failNext({ op: 'open', path: '.index', errno: 'EMFILE' });
    let failed = false;
    for (let i = 0; i < 10 && !failed; i++) {
      try {
        h.log.appendAsLeader(testBatch({ count: 3, valueSize: 100 }), { leaderEpoch: 3 });
      } catch (e) {
        expect((e as KafkaError).code).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
        failed = true;
      }
    }
    expect(failed).toBe(true);
    const again = open({ segmentBytes: 1000 }, { fs: new FaultyFs() }, h.dir);
    expect(again.log.logEndOffset).toBe(h.log.logEndOffset);
    expect(again.log.logEndOffset >= leo).toBe(true);
    expect(readAll(again.log, 0n).flatMap(offsetsIn).length).toBe(Number(again.log.logEndOffset));
  });
});
