import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { logConfig } from './log-config';
import { NUM_BATCHES_TO_RETAIN, ProducerStateManager, snapshotFileName } from './producer-state-manager';
import { FaultyFs } from './testing/faulty-fs';
import { MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { UnifiedLog } from './unified-log';
import { nodeFs } from './fs';

afterAll(removeTempDirs);

const TP = { topic: 'idem', partition: 0 };
const TS = 1_700_000_000_000;

function pbatch(producerId: bigint, producerEpoch: number, baseSequence: number, count = 2, ts = TS): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`r${baseSequence + i}`), timestamp: BigInt(ts) }));
  return buildRecordBatch(records, { producerId, producerEpoch, baseSequence, now: TS });
}

function open(dir = path.join(tempDir(), 'idem-0'), time = new MockTime(TS), segmentBytes?: number) {
  const log = UnifiedLog.load({
    dir,
    tp: TP,
    config: logConfig(segmentBytes ? { segmentBytes } : {}),
    fs: new FaultyFs(),
    time,
    scheduler: new MockScheduler(time),
    producerIdExpirationMs: 60_000,
  });
  return { log, dir, time };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof KafkaError) return e.codeName;
    throw e;
  }
  return 'NONE';
}
const name = (c: number) => new KafkaError(c).codeName;

describe('producer state rules on leader appends', () => {
  test('in-sequence batches append; a retry of any of the last 5 gets its original offsets and is not appended', () => {
    const { log } = open();
    const infos = [];
    for (let i = 0; i < 7; i++) infos.push(log.appendAsLeader(pbatch(7n, 0, i * 2), { leaderEpoch: 0 }));
    expect(infos.map((i) => i.firstOffset)).toEqual([0n, 2n, 4n, 6n, 8n, 10n, 12n]);
    expect(log.logEndOffset).toBe(14n);
    // the last 5 (seq 4..13) are duplicates
    for (let i = 7 - NUM_BATCHES_TO_RETAIN; i < 7; i++) {
      const dup = log.appendAsLeader(pbatch(7n, 0, i * 2), { leaderEpoch: 0 });
      expect(dup.duplicate).toBe(true);
      expect(dup.firstOffset).toBe(infos[i].firstOffset);
      expect(dup.lastOffset).toBe(infos[i].lastOffset);
    }
    expect(log.logEndOffset).toBe(14n);
    // older than the retained 5: out of order
    expect(code(() => log.appendAsLeader(pbatch(7n, 0, 0), { leaderEpoch: 0 }))).toBe(name(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    expect(log.logEndOffset).toBe(14n);
  });

  test('a gap is OUT_OF_ORDER_SEQUENCE_NUMBER and nothing is written', () => {
    const { log } = open();
    log.appendAsLeader(pbatch(1n, 0, 0), { leaderEpoch: 0 });
    expect(code(() => log.appendAsLeader(pbatch(1n, 0, 5), { leaderEpoch: 0 }))).toBe(name(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    expect(log.logEndOffset).toBe(2n);
    expect(log.appendAsLeader(pbatch(1n, 0, 2), { leaderEpoch: 0 }).firstOffset).toBe(2n);
  });

  test('an older epoch is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence 0', () => {
    const { log } = open();
    log.appendAsLeader(pbatch(1n, 3, 0), { leaderEpoch: 0 });
    expect(code(() => log.appendAsLeader(pbatch(1n, 2, 2), { leaderEpoch: 0 }))).toBe(name(ErrorCode.INVALID_PRODUCER_EPOCH));
    expect(code(() => log.appendAsLeader(pbatch(1n, 4, 2), { leaderEpoch: 0 }))).toBe(name(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    expect(log.appendAsLeader(pbatch(1n, 4, 0), { leaderEpoch: 0 }).firstOffset).toBe(2n);
    // the old epoch's batches are no longer duplicates: the old epoch is fenced
    expect(code(() => log.appendAsLeader(pbatch(1n, 3, 0), { leaderEpoch: 0 }))).toBe(name(ErrorCode.INVALID_PRODUCER_EPOCH));
    expect(log.logEndOffset).toBe(4n);
  });

  test('an unknown producer is accepted at any sequence (KIP-360: no UNKNOWN_PRODUCER_ID); sequences wrap', () => {
    const { log } = open();
    expect(log.appendAsLeader(pbatch(9n, 0, 42), { leaderEpoch: 0 }).firstOffset).toBe(0n);
    expect(log.appendAsLeader(pbatch(10n, 0, 0x7fffffff - 1, 2), { leaderEpoch: 0 }).firstOffset).toBe(2n);
    expect(log.appendAsLeader(pbatch(10n, 0, 0, 1), { leaderEpoch: 0 }).firstOffset).toBe(4n);
  });

  test('producers are independent; batches without a producer id are not tracked', () => {
    const { log } = open();
    log.appendAsLeader(pbatch(1n, 0, 0), { leaderEpoch: 0 });
    log.appendAsLeader(pbatch(2n, 0, 0), { leaderEpoch: 0 });
    log.appendAsLeader(buildRecordBatch([{ key: null, value: Buffer.from('x'), timestamp: BigInt(TS) }], { now: TS }), { leaderEpoch: 0 });
    expect(log.producerState.size).toBe(2);
    expect(log.appendAsLeader(pbatch(1n, 0, 0), { leaderEpoch: 0 }).firstOffset).toBe(0n);
    expect(log.appendAsLeader(pbatch(2n, 0, 0), { leaderEpoch: 0 }).firstOffset).toBe(2n);
  });

  test('producer.id.expiration.ms: an idle producer is forgotten', () => {
    const { log, time } = open();
    log.appendAsLeader(pbatch(1n, 0, 0), { leaderEpoch: 0 });
    time.now += 30_000;
    expect(log.removeExpiredProducers(time.now)).toBe(0);
    time.now += 30_000;
    expect(log.removeExpiredProducers(time.now)).toBe(1);
    expect(log.producerState.size).toBe(0);
  });

  test('follower appends update the state without checks', () => {
    const { log } = open();
    const b = buildRecordBatch([{ key: null, value: Buffer.from('a'), timestamp: BigInt(TS) }], { baseOffset: 0n, producerId: 5n, producerEpoch: 1, baseSequence: 10, now: TS });
    log.appendAsFollower(b);
    expect(log.producerState.entry(5n)?.batches).toEqual([{ firstSeq: 10, lastSeq: 10, firstOffset: 0n, lastOffset: 0n, timestamp: BigInt(TS) }]);
  });
});

describe('producer state recovery', () => {
  test('clean shutdown writes a snapshot at the LEO; reopening loads it and duplicates are still detected', () => {
    const { log, dir, time } = open();
    log.appendAsLeader(pbatch(1n, 0, 0), { leaderEpoch: 0 });
    log.appendAsLeader(pbatch(1n, 0, 2), { leaderEpoch: 0 });
    log.flush();
    log.close();
    expect(nodeFs.existsSync(path.join(dir, snapshotFileName(4n)))).toBe(true);
    const again = open(dir, time).log;
    expect(again.producerState.entry(1n)?.producerEpoch).toBe(0);
    const dup = again.appendAsLeader(pbatch(1n, 0, 2), { leaderEpoch: 0 });
    expect(dup.duplicate).toBe(true);
    expect(dup.firstOffset).toBe(2n);
    expect(again.appendAsLeader(pbatch(1n, 0, 4), { leaderEpoch: 0 }).firstOffset).toBe(4n);
    again.close();
  });

  test('without a snapshot the state is rebuilt from the log (crash), retaining the last 5 batches', () => {
    const { log, dir, time } = open();
    for (let i = 0; i < 6; i++) log.appendAsLeader(pbatch(1n, 0, i * 2), { leaderEpoch: 0 });
    log.flush();
    log.closeHandlers(); // crash: no snapshot
    expect(nodeFs.readdirSync(dir).filter((f) => f.endsWith('.snapshot'))).toEqual([]);
    const again = open(dir, time).log;
    expect(again.producerState.entry(1n)?.batches.map((b) => b.firstSeq)).toEqual([2, 4, 6, 8, 10]);
    expect(again.appendAsLeader(pbatch(1n, 0, 4), { leaderEpoch: 0 }).firstOffset).toBe(4n);
    expect(code(() => again.appendAsLeader(pbatch(1n, 0, 20), { leaderEpoch: 0 }))).toBe(name(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
  });

  test('segment rolls write <offset>.snapshot; a snapshot plus the replay after it gives the state', () => {
    const { log, dir, time } = open(undefined, undefined, 300);
    for (let i = 0; i < 8; i++) log.appendAsLeader(pbatch(3n, 1, i * 2, 2), { leaderEpoch: 0 });
    const snaps = nodeFs.readdirSync(dir).filter((f) => f.endsWith('.snapshot'));
    expect(snaps.length).toBeGreaterThan(0);
    expect(snaps).toEqual(log.logSegments().slice(1).map((s) => snapshotFileName(s.baseOffset)));
    log.flush();
    log.closeHandlers();
    const again = open(dir, time, 300).log;
    expect(again.producerState.entry(3n)?.batches[again.producerState.entry(3n)!.batches.length - 1].lastSeq).toBe(15);
    expect(again.appendAsLeader(pbatch(3n, 1, 16), { leaderEpoch: 0 }).firstOffset).toBe(16n);
  });

  test('snapshots past the log end are deleted on load and on truncation', () => {
    const { log, dir, time } = open(undefined, undefined, 300);
    for (let i = 0; i < 8; i++) log.appendAsLeader(pbatch(3n, 1, i * 2, 2), { leaderEpoch: 0 });
    log.updateHighWatermark(log.logEndOffset);
    const last = log.logSegments()[log.logSegments().length - 1].baseOffset;
    log.truncateTo(last - 1n);
    for (const f of nodeFs.readdirSync(dir).filter((x) => x.endsWith('.snapshot'))) {
      expect(BigInt(f.slice(0, 20))).toBeLessThanOrEqual(log.logEndOffset);
    }
    const lastSeq = log.producerState.entry(3n)!.batches.at(-1)!.lastSeq;
    expect(BigInt(lastSeq)).toBe(log.logEndOffset - 1n);
    // a stray snapshot above the LEO (from a log that was cut by recovery) goes at load
    log.flush();
    log.closeHandlers();
    const stray = new ProducerStateManager(nodeFs, () => dir, 60_000);
    stray.updateMapEndOffset(10_000n);
    stray.takeSnapshot();
    open(dir, time, 300);
    expect(nodeFs.existsSync(path.join(dir, snapshotFileName(10_000n)))).toBe(false);
  });

  test("the snapshot is Kafka's format: version 1, CRC32C, fixed-size entries", () => {
    const m = new ProducerStateManager(nodeFs, () => tempDir(), 60_000);
    const { log } = open();
    log.appendAsLeader(pbatch(77n, 2, 0, 3), { leaderEpoch: 0 });
    const buf = log.producerState.encodeSnapshot();
    expect(buf.readInt16BE(0)).toBe(1);
    expect(buf.readInt32BE(6)).toBe(1); // one entry
    expect(buf.length).toBe(2 + 4 + 4 + 46);
    expect(buf.readBigInt64BE(10)).toBe(77n);
    const entries = ProducerStateManager.decodeSnapshot(buf);
    expect(entries[0]).toMatchObject({ producerId: 77n, producerEpoch: 2, batches: [{ firstSeq: 0, lastSeq: 2, firstOffset: 0n, lastOffset: 2n }] });
    buf[buf.length - 1] ^= 1;
    expect(() => ProducerStateManager.decodeSnapshot(buf)).toThrow(/CRC/);
    expect(m.size).toBe(0);
  });

  test('a batch whose sequence wraps past 2^31-1 round-trips through a snapshot (offsetDelta counts offsets)', () => {
    const { log } = open();
    log.appendAsLeader(pbatch(78n, 0, 2147483646, 3), { leaderEpoch: 0 }); // sequences 2147483646, 2147483647, 0
    const buf = log.producerState.encodeSnapshot();
    const [e] = ProducerStateManager.decodeSnapshot(buf);
    expect(e.batches).toEqual([expect.objectContaining({ firstSeq: 2147483646, lastSeq: 0, firstOffset: 0n, lastOffset: 2n })]);
    log.close();
  });
});
