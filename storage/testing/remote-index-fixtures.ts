/**
 * Test support for the RemoteIndexCache suites: remote segments with known offset, time and
 * transaction indexes (bytes in krill's / Kafka's index formats), the answers a lookup must give
 * computed independently of the index classes, and FakeRemoteStorageManager, an in-memory
 * RemoteStorageManager whose fetchIndex calls can be held and then completed or failed one by one
 * (so a test decides exactly where a reader is suspended), plus Deferred.
 *
 * No jest here (tsconfig.build.json compiles it): callers assert.
 */
import { uuidFromBuffer } from '../../protocol/primitives/uuid';
import { AbortedTxn, encodeAbortedTxn } from '../index/transaction-index';
import { RemoteLogSegmentMetadata, RemoteLogSegmentState } from '../remote/remote-log-segment-metadata';
import { IndexType, LogSegmentData, RemoteResourceNotFoundError, RemoteStorageManager } from '../remote/remote-storage-manager';

export class Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve!: (v: T) => void;
  reject!: (e: unknown) => void;
  constructor() {
    this.promise = new Promise<T>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }
}

export interface TestSegment {
  md: RemoteLogSegmentMetadata;
  /** Offset-index entries (absolute offset, position), ascending. */
  offsets: { offset: bigint; position: number }[];
  /** Time-index entries (timestamp, absolute offset), strictly increasing timestamps. */
  times: { timestamp: number; offset: bigint }[];
  /** Aborted transactions, or null for a segment without a transaction index. */
  aborted: AbortedTxn[] | null;
  offsetBytes: Buffer;
  timeBytes: Buffer;
  txnBytes: Buffer | null;
  /** Bytes the three cached files take (an absent transaction index is an empty file). */
  cachedBytes: number;
}

const TP = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 'tiered', partition: 0 };

/** A deterministic segment uuid for segment number `n` (and generation `gen`). */
export function segmentUuid(n: number, gen = 0): string {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(0x6b72696c, 0); // "kril"
  b.writeUInt32BE(gen, 8);
  b.writeUInt32BE(n + 1, 12);
  return uuidFromBuffer(b);
}

/**
 * Segment `n`: starts at offset n * 100000, `entries` offset / time index entries (one per 10
 * offsets, 4 KiB apart), and `aborted` aborted transactions (null: no transaction index at all).
 */
export function testSegment(n: number, entries: number, aborted: number | null = 2, gen = 0): TestSegment {
  const start = BigInt(n) * 100_000n;
  const offsets: TestSegment['offsets'] = [];
  const times: TestSegment['times'] = [];
  for (let j = 0; j < entries; j++) {
    offsets.push({ offset: start + BigInt(10 * j + 9), position: 4096 * (j + 1) + n });
    times.push({ timestamp: 1_700_000_000_000 + n * 1_000_000 + 100 * j, offset: start + BigInt(10 * j + 9) });
  }
  const end = start + BigInt(10 * entries + 19);
  const txns: AbortedTxn[] | null =
    aborted === null
      ? null
      : Array.from({ length: aborted }, (_, k) => ({
          producerId: BigInt(1000 + k),
          firstOffset: start + BigInt(7 * k),
          lastOffset: start + BigInt(7 * k + 5),
          lastStableOffset: start + BigInt(7 * k + 6),
        }));
  const offsetBytes = Buffer.alloc(8 * entries);
  offsets.forEach((e, j) => {
    offsetBytes.writeInt32BE(Number(e.offset - start), 8 * j);
    offsetBytes.writeInt32BE(e.position, 8 * j + 4);
  });
  const timeBytes = Buffer.alloc(12 * entries);
  times.forEach((e, j) => {
    timeBytes.writeBigInt64BE(BigInt(e.timestamp), 12 * j);
    timeBytes.writeInt32BE(Number(e.offset - start), 12 * j + 8);
  });
  const txnBytes = txns === null ? null : Buffer.concat(txns.map(encodeAbortedTxn));
  const md: RemoteLogSegmentMetadata = {
    remoteLogSegmentId: { topicIdPartition: TP, id: segmentUuid(n, gen) },
    startOffset: start,
    endOffset: end,
    brokerId: 1,
    maxTimestampMs: BigInt(times.length > 0 ? times[times.length - 1].timestamp : 0),
    eventTimestampMs: 0n,
    segmentLeaderEpochs: [{ epoch: 0, startOffset: start }],
    segmentSizeInBytes: 4096 * (entries + 2),
    customMetadata: null,
    state: RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
  };
  return {
    md,
    offsets,
    times,
    aborted: txns,
    offsetBytes,
    timeBytes,
    txnBytes,
    cachedBytes: offsetBytes.length + timeBytes.length + (txnBytes?.length ?? 0),
  };
}

/** What lookupOffset must answer: the position of the largest entry at or below `offset`, else 0. */
export function expectedOffsetPosition(s: TestSegment, offset: bigint): number {
  let pos = 0;
  for (const e of s.offsets) if (e.offset <= offset) pos = e.position;
  return pos;
}

/** What lookupTimestamp must answer (Kafka's Entry.lookupTimestamp over these entries). */
export function expectedTimestampPosition(s: TestSegment, timestamp: number, startingOffset: bigint): number {
  let at = s.md.startOffset;
  for (const e of s.times) if (e.timestamp <= timestamp) at = e.offset;
  return expectedOffsetPosition(s, at > startingOffset ? at : startingOffset);
}

/** What collectAbortedTransactions must answer (Kafka's TransactionIndex.collectAbortedTxns). */
export function expectedAborted(s: TestSegment, fetchOffset: bigint, upperBound: bigint): { producerIds: bigint[]; isComplete: boolean } {
  const producerIds: bigint[] = [];
  for (const t of s.aborted ?? []) {
    if (t.lastOffset >= fetchOffset && t.firstOffset < upperBound) producerIds.push(t.producerId);
    if (t.lastStableOffset >= upperBound) return { producerIds, isComplete: true };
  }
  return { producerIds, isComplete: false };
}

export interface PendingFetch {
  readonly segmentId: string;
  readonly indexType: IndexType;
  /** Answers the call with the segment's index (or its absence). */
  complete(): void;
  fail(err: Error): void;
  readonly settled: boolean;
}

/**
 * An in-memory RemoteStorageManager serving fetchIndex from TestSegments. With `hold` set, every
 * fetchIndex waits in `pending` until the test completes or fails it; otherwise it answers at once.
 * `corrupt` replaces an index's bytes; `failures` makes the next call for an index type throw.
 */
export class FakeRemoteStorageManager implements RemoteStorageManager {
  readonly segments = new Map<string, TestSegment>();
  readonly calls: { segmentId: string; indexType: IndexType }[] = [];
  readonly pending: PendingFetch[] = [];
  hold = false;
  readonly corrupt = new Map<string, Buffer>();
  readonly failures = new Map<IndexType, Error>();
  private waiters: { n: number; d: Deferred }[] = [];

  add(...segs: TestSegment[]): this {
    for (const s of segs) this.segments.set(s.md.remoteLogSegmentId.id, s);
    return this;
  }

  configure(): void {}

  async copyLogSegmentData(_md: RemoteLogSegmentMetadata, _data: LogSegmentData): Promise<Buffer | null> {
    throw new Error('FakeRemoteStorageManager serves indexes only');
  }

  async fetchLogSegment(): Promise<Buffer> {
    throw new Error('FakeRemoteStorageManager serves indexes only');
  }

  async deleteLogSegmentData(): Promise<void> {}

  async close(): Promise<void> {}

  fetchIndex(md: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer> {
    const segmentId = md.remoteLogSegmentId.id;
    this.calls.push({ segmentId, indexType });
    const answer = (): Buffer => {
      const failure = this.failures.get(indexType);
      if (failure) {
        this.failures.delete(indexType);
        throw failure;
      }
      return this.indexBytes(segmentId, indexType);
    };
    if (!this.hold) {
      try {
        return Promise.resolve(answer());
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const d = new Deferred<Buffer>();
    let settled = false;
    const p: PendingFetch = {
      segmentId,
      indexType,
      complete: () => {
        if (settled) return;
        settled = true;
        this.dropPending(p);
        try {
          d.resolve(answer());
        } catch (e) {
          d.reject(e);
        }
      },
      fail: (err) => {
        if (settled) return;
        settled = true;
        this.dropPending(p);
        d.reject(err);
      },
      get settled() {
        return settled;
      },
    };
    this.pending.push(p);
    for (const w of this.waiters.filter((x) => this.pending.length >= x.n)) w.d.resolve();
    this.waiters = this.waiters.filter((x) => this.pending.length < x.n);
    return d.promise;
  }

  /** Resolves once at least `n` fetches are held. */
  waitForPending(n: number): Promise<void> {
    if (this.pending.length >= n) return Promise.resolve();
    const d = new Deferred();
    this.waiters.push({ n, d });
    return d.promise;
  }

  /** Completes every held fetch (in call order). */
  completeAll(): void {
    for (const p of [...this.pending]) p.complete();
  }

  callsFor(segmentId: string): IndexType[] {
    return this.calls.filter((c) => c.segmentId === segmentId).map((c) => c.indexType);
  }

  private dropPending(p: PendingFetch): void {
    const i = this.pending.indexOf(p);
    if (i >= 0) this.pending.splice(i, 1);
  }

  private indexBytes(segmentId: string, indexType: IndexType): Buffer {
    const s = this.segments.get(segmentId);
    if (!s) throw new RemoteResourceNotFoundError(`no remote segment ${segmentId}`);
    const bad = this.corrupt.get(`${segmentId}:${indexType}`);
    if (bad) return bad;
    switch (indexType) {
      case IndexType.OFFSET:
        return s.offsetBytes;
      case IndexType.TIMESTAMP:
        return s.timeBytes;
      case IndexType.TRANSACTION:
        if (!s.txnBytes) throw new RemoteResourceNotFoundError(`remote segment ${segmentId} has no transaction index`);
        return s.txnBytes;
      default:
        throw new RemoteResourceNotFoundError(`index ${indexType} not served`);
    }
  }
}

/** Resolves after every pending promise continuation has run (the fs here is synchronous, so nothing else is waiting). */
export function drainMicrotasks(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
