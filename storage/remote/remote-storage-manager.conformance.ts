/**
 * The conformance suite every RemoteStorageManager passes (the contract of remote-storage-manager.ts),
 * run by each implementation's test file with a factory for a fresh, configured store
 * (local-tiered-storage.test.ts, s3-remote-storage-manager.test.ts).
 *
 * Owns: building real segments with krill's own UnifiedLog (rolled segments with their offset,
 * time and transaction indexes, the producer snapshot at their end and the leader-epoch
 * checkpoint) and the checks: copies fetched whole, ranged and index by index byte-identical,
 * missing things RemoteResourceNotFoundError, idempotent deletes, no collisions between segments
 * and partitions, failed copies cleaned up, a store that is down RemoteStorageError in bounded time.
 *
 * Invariants: everything lives in temp dirs removed after the file; no sleeps; every await is
 * bounded by the suite's timeouts. Not a *.test.ts: jest runs it only through those files, and the
 * build (tsconfig.build.json) leaves it out.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { logConfig } from '../log-config';
import { LEADER_EPOCH_CHECKPOINT_FILENAME } from '../leader-epoch-file-cache';
import { offsetIndexFile, timeIndexFile, transactionIndexFile, logFile } from '../log-file-utils';
import { snapshotFileName } from '../producer-state-manager';
import { testBatch } from '../testing/batches';
import { tempDir } from '../testing/temp-dir';
import { UnifiedLog } from '../unified-log';
import { RemoteLogSegmentMetadata, RemoteLogSegmentState, TopicIdPartition } from './remote-log-segment-metadata';
import { IndexType, LogSegmentData, RemoteResourceNotFoundError, RemoteStorageError, RemoteStorageManager } from './remote-storage-manager';

/** A configured store under test, and the means to look behind it. */
export interface RsmFixture {
  rsm: RemoteStorageManager;
  /** Every file or object the store holds now (names relative to the store). */
  listStored(): Promise<string[]>;
  /** Makes the store unreachable (server closed, directory gone). */
  takeDown(): Promise<void>;
}

/** A rolled segment on disk and what a copy of it is handed. */
export interface BuiltSegment {
  data: LogSegmentData;
  startOffset: bigint;
  endOffset: bigint;
  log: Buffer;
  indexes: Record<IndexType, Buffer | null>;
}

const TS = 1_700_000_000_000;

export function randomId(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Two rolled segments of one partition written by UnifiedLog: the first has an aborted
 * transaction (so a `.txnindex`) and two leader epochs, the second none of those.
 */
export function buildSegments(topic = 'tiered', partition = 0): [BuiltSegment, BuiltSegment] {
  const dir = path.join(tempDir('krill-rsm-src-'), `${topic}-${partition}`);
  const time = new MockTime();
  const log = UnifiedLog.load({ dir, tp: { topic, partition }, config: logConfig({}), time, scheduler: new MockScheduler(time) });
  for (let i = 0; i < 30; i++) log.appendAsLeader(testBatch({ count: 5, valueSize: 100, prefix: `a${i}-`, timestamp: TS + i }), { leaderEpoch: 0 });
  const txn = buildRecordBatch([{ key: null, value: 'in-txn', timestamp: BigInt(TS + 40) }], { baseOffset: 0n, producerId: 7n, producerEpoch: 0, baseSequence: 0, isTransactional: true, now: TS });
  log.appendAsLeader(txn, { leaderEpoch: 1 });
  log.appendAsLeader(buildEndTxnMarkerBatch({ type: ControlRecordType.ABORT, producerId: 7n, producerEpoch: 0, coordinatorEpoch: 0, timestamp: TS + 41, baseOffset: 0n }), { leaderEpoch: 1, origin: 'coordinator' });
  for (let i = 0; i < 30; i++) log.appendAsLeader(testBatch({ count: 3, valueSize: 200, prefix: `b${i}-`, timestamp: TS + 50 + i }), { leaderEpoch: 1 });
  const firstEnd = log.logEndOffset;
  log.roll();
  for (let i = 0; i < 20; i++) log.appendAsLeader(testBatch({ count: 4, valueSize: 150, prefix: `c${i}-`, timestamp: TS + 100 + i }), { leaderEpoch: 1 });
  const secondEnd = log.logEndOffset;
  log.roll();
  log.close();
  const epochs = nodefs.readFileSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME));
  const segment = (start: bigint, next: bigint): BuiltSegment => {
    const txnFile = transactionIndexFile(dir, start);
    const data: LogSegmentData = {
      logSegment: logFile(dir, start),
      offsetIndex: offsetIndexFile(dir, start),
      timeIndex: timeIndexFile(dir, start),
      transactionIndex: nodefs.existsSync(txnFile) ? txnFile : null,
      producerSnapshotIndex: path.join(dir, snapshotFileName(next)),
      leaderEpochIndex: epochs,
    };
    return {
      data,
      startOffset: start,
      endOffset: next - 1n,
      log: nodefs.readFileSync(data.logSegment),
      indexes: {
        [IndexType.OFFSET]: nodefs.readFileSync(data.offsetIndex),
        [IndexType.TIMESTAMP]: nodefs.readFileSync(data.timeIndex),
        [IndexType.TRANSACTION]: data.transactionIndex === null ? null : nodefs.readFileSync(data.transactionIndex),
        [IndexType.PRODUCER_SNAPSHOT]: nodefs.readFileSync(data.producerSnapshotIndex),
        [IndexType.LEADER_EPOCH]: epochs,
      },
    };
  };
  return [segment(0n, firstEnd), segment(firstEnd, secondEnd)];
}

export function metadataFor(tp: TopicIdPartition, seg: BuiltSegment, id = randomId()): RemoteLogSegmentMetadata {
  return {
    remoteLogSegmentId: { topicIdPartition: tp, id },
    startOffset: seg.startOffset,
    endOffset: seg.endOffset,
    brokerId: 1,
    maxTimestampMs: BigInt(TS + 200),
    eventTimestampMs: BigInt(TS),
    segmentLeaderEpochs: [{ epoch: 0, startOffset: seg.startOffset }],
    segmentSizeInBytes: seg.log.length,
    customMetadata: null,
    state: RemoteLogSegmentState.COPY_SEGMENT_STARTED,
  };
}

const ALL_INDEXES = [IndexType.OFFSET, IndexType.TIMESTAMP, IndexType.PRODUCER_SNAPSHOT, IndexType.TRANSACTION, IndexType.LEADER_EPOCH];

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

export function remoteStorageManagerConformance(factory: () => Promise<RsmFixture>): void {
  let fx: RsmFixture;
  let first: BuiltSegment;
  let second: BuiltSegment;
  const tp: TopicIdPartition = { topic: 'tiered', partition: 0, topicId: randomId() };
  const tp1: TopicIdPartition = { ...tp, partition: 1 };

  beforeAll(() => {
    [first, second] = buildSegments();
  });
  beforeEach(async () => {
    fx = await factory();
  });
  afterEach(async () => {
    await fx.rsm.close();
  });

  test('the built segments are real: indexes with entries, an aborted transaction in the first only', () => {
    expect(first.log.length).toBeGreaterThan(8 * 1024);
    expect(first.indexes[IndexType.OFFSET]!.length).toBeGreaterThanOrEqual(16);
    expect(first.indexes[IndexType.OFFSET]!.length % 8).toBe(0);
    expect(first.indexes[IndexType.TIMESTAMP]!.length % 12).toBe(0);
    expect(first.indexes[IndexType.TRANSACTION]!.length).toBe(34);
    expect(first.indexes[IndexType.PRODUCER_SNAPSHOT]!.length).toBeGreaterThan(0);
    expect(first.indexes[IndexType.LEADER_EPOCH]!.toString()).toBe(`0\n2\n0 0\n1 150\n`);
    expect(second.data.transactionIndex).toBeNull();
    expect(second.startOffset).toBe(first.endOffset + 1n);
  });

  test('a copied segment is fetched whole and every index byte-identical', async () => {
    const m = metadataFor(tp, first);
    await fx.rsm.copyLogSegmentData(m, first.data);
    expect((await fx.rsm.fetchLogSegment(m, 0)).equals(first.log)).toBe(true);
    expect((await fx.rsm.fetchLogSegment(m, 0, first.log.length - 1)).equals(first.log)).toBe(true);
    for (const t of ALL_INDEXES) {
      const got = await fx.rsm.fetchIndex(m, t);
      expect({ t, same: got.equals(first.indexes[t]!) }).toEqual({ t, same: true });
    }
  });

  test('ranged fetches: first byte, last byte, a middle range, past the end', async () => {
    const m = metadataFor(tp, first);
    await fx.rsm.copyLogSegmentData(m, first.data);
    const size = first.log.length;
    expect((await fx.rsm.fetchLogSegment(m, 0, 0)).equals(first.log.subarray(0, 1))).toBe(true);
    expect((await fx.rsm.fetchLogSegment(m, size - 1, size - 1)).equals(first.log.subarray(size - 1))).toBe(true);
    expect((await fx.rsm.fetchLogSegment(m, 1000, 5000)).equals(first.log.subarray(1000, 5001))).toBe(true);
    expect((await fx.rsm.fetchLogSegment(m, 4321)).equals(first.log.subarray(4321))).toBe(true);
    // An end past the end is clamped to the segment's size; a start past it gives nothing.
    expect((await fx.rsm.fetchLogSegment(m, size - 10, size + 100)).equals(first.log.subarray(size - 10))).toBe(true);
    expect((await fx.rsm.fetchLogSegment(m, size)).length).toBe(0);
    expect((await fx.rsm.fetchLogSegment(m, size + 5, size + 50)).length).toBe(0);
    // Arguments Kafka refuses.
    expect(await rejection(fx.rsm.fetchLogSegment(m, -1))).toBeInstanceOf(RemoteStorageError);
    expect(await rejection(fx.rsm.fetchLogSegment(m, 10, 9))).toBeInstanceOf(RemoteStorageError);
  });

  test('TRANSACTION of a segment without a transaction index, and an unknown segment, are RemoteResourceNotFoundError', async () => {
    const m = metadataFor(tp, second);
    await fx.rsm.copyLogSegmentData(m, second.data);
    expect(await rejection(fx.rsm.fetchIndex(m, IndexType.TRANSACTION))).toBeInstanceOf(RemoteResourceNotFoundError);
    expect((await fx.rsm.fetchIndex(m, IndexType.OFFSET)).equals(second.indexes[IndexType.OFFSET]!)).toBe(true);
    const unknown = metadataFor(tp, second);
    expect(await rejection(fx.rsm.fetchLogSegment(unknown, 0))).toBeInstanceOf(RemoteResourceNotFoundError);
    expect(await rejection(fx.rsm.fetchIndex(unknown, IndexType.OFFSET))).toBeInstanceOf(RemoteResourceNotFoundError);
  });

  test('delete removes everything of the segment; fetching it then is not found; deleting twice (or never copied) succeeds', async () => {
    const m = metadataFor(tp, first);
    await fx.rsm.copyLogSegmentData(m, first.data);
    expect((await fx.listStored()).filter((n) => n.includes(m.remoteLogSegmentId.id))).toHaveLength(6);
    await fx.rsm.deleteLogSegmentData(m);
    expect((await fx.listStored()).filter((n) => n.includes(m.remoteLogSegmentId.id))).toEqual([]);
    expect(await rejection(fx.rsm.fetchLogSegment(m, 0))).toBeInstanceOf(RemoteResourceNotFoundError);
    for (const t of ALL_INDEXES) expect(await rejection(fx.rsm.fetchIndex(m, t))).toBeInstanceOf(RemoteResourceNotFoundError);
    await fx.rsm.deleteLogSegmentData(m);
    await fx.rsm.deleteLogSegmentData(metadataFor(tp1, second));
  });

  test('segments of one partition, of two partitions, and a retried copy with a new id never collide', async () => {
    const a = metadataFor(tp, first);
    const b = metadataFor(tp, second);
    const c = metadataFor(tp1, first);
    // A retry of the first segment's copy under a new id, with other bytes: a distinct segment.
    const retry = { ...metadataFor(tp, second), startOffset: first.startOffset };
    await Promise.all([fx.rsm.copyLogSegmentData(a, first.data), fx.rsm.copyLogSegmentData(b, second.data), fx.rsm.copyLogSegmentData(c, first.data), fx.rsm.copyLogSegmentData(retry, second.data)]);
    expect(new Set(await fx.listStored()).size).toBe(6 + 5 + 6 + 5);
    expect((await fx.rsm.fetchLogSegment(a, 0)).equals(first.log)).toBe(true);
    expect((await fx.rsm.fetchLogSegment(b, 0)).equals(second.log)).toBe(true);
    expect((await fx.rsm.fetchLogSegment(c, 0)).equals(first.log)).toBe(true);
    expect((await fx.rsm.fetchLogSegment(retry, 0)).equals(second.log)).toBe(true);
    await fx.rsm.deleteLogSegmentData(a);
    expect(await rejection(fx.rsm.fetchLogSegment(a, 0))).toBeInstanceOf(RemoteResourceNotFoundError);
    expect((await fx.rsm.fetchIndex(c, IndexType.TRANSACTION)).equals(first.indexes[IndexType.TRANSACTION]!)).toBe(true);
    expect((await fx.rsm.fetchIndex(b, IndexType.TIMESTAMP)).equals(second.indexes[IndexType.TIMESTAMP]!)).toBe(true);
    expect((await fx.rsm.fetchIndex(retry, IndexType.OFFSET)).equals(second.indexes[IndexType.OFFSET]!)).toBe(true);
  });

  test('a copy that fails part-way throws RemoteStorageError and leaves nothing of the segment', async () => {
    const m = metadataFor(tp, first);
    const broken: LogSegmentData = { ...first.data, timeIndex: path.join(path.dirname(first.data.timeIndex), 'no-such.timeindex') };
    const e = await rejection(fx.rsm.copyLogSegmentData(m, broken));
    expect(e).toBeInstanceOf(RemoteStorageError);
    expect(e).not.toBeInstanceOf(RemoteResourceNotFoundError);
    expect((await fx.listStored()).filter((n) => n.includes(m.remoteLogSegmentId.id))).toEqual([]);
    expect(await rejection(fx.rsm.fetchLogSegment(m, 0))).toBeInstanceOf(RemoteResourceNotFoundError);
  });

  test('a store that is down answers RemoteStorageError (not not-found), in bounded time', async () => {
    const m = metadataFor(tp, first);
    await fx.rsm.copyLogSegmentData(m, first.data);
    await fx.takeDown();
    const started = Date.now();
    const calls = [() => fx.rsm.fetchLogSegment(m, 0), () => fx.rsm.fetchIndex(m, IndexType.OFFSET), () => fx.rsm.copyLogSegmentData(metadataFor(tp, second), second.data), () => fx.rsm.deleteLogSegmentData(m)];
    for (const call of calls) {
      const e = await rejection(call());
      expect(e).toBeInstanceOf(RemoteStorageError);
      expect(e).not.toBeInstanceOf(RemoteResourceNotFoundError);
    }
    expect(Date.now() - started).toBeLessThan(15_000);
  });
}
