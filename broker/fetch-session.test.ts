import { ErrorCode } from '../protocol/errors';
import { FetchSessionCache, FINAL_EPOCH, INITIAL_EPOCH, nextEpoch, type PartitionFetchSpec } from './fetch-session';

const spec = (topic: string, partition: number, fetchOffset = 0n): PartitionFetchSpec => ({
  topic,
  topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
  partition,
  fetchOffset,
  partitionMaxBytes: 1024,
  currentLeaderEpoch: -1,
  logStartOffset: -1n,
  lastFetchedEpoch: -1,
});

const state = (hw: bigint, size = 0) => ({
  errorCode: 0,
  highWatermark: hw,
  lastStableOffset: hw,
  logStartOffset: 0n,
  recordsSize: size,
});

describe('FetchSessionCache (KIP-227)', () => {
  test('session ids are random, distinct and never 0, so one client cannot guess another\'s', () => {
    const c = new FetchSessionCache(100);
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      const ctx = c.newContext(0, INITIAL_EPOCH, [spec('t', i)], [], 0);
      if (ctx.kind !== 'full' || !ctx.session) throw new Error('no session created');
      ids.push(ctx.session.id);
    }
    expect(new Set(ids).size).toBe(50);
    expect(ids.every((id) => id >= 1 && id <= 0x7ffffffe)).toBe(true);
    const sequential = ids.slice(1).filter((id, i) => id === ids[i] + 1).length;
    expect(sequential).toBeLessThan(3);
  });

  test('epoch -1 with no session is a sessionless full fetch', () => {
    const c = new FetchSessionCache(10);
    const ctx = c.newContext(0, FINAL_EPOCH, [spec('t', 0)], [], 0);
    expect(ctx).toMatchObject({ kind: 'full', session: null });
    expect(c.size).toBe(0);
  });

  test('epoch 0 opens a session whose next expected epoch is 1', () => {
    const c = new FetchSessionCache(10);
    const ctx = c.newContext(0, INITIAL_EPOCH, [spec('t', 0), spec('t', 1)], [], 0);
    if (ctx.kind !== 'full' || !ctx.session) throw new Error('expected a new session');
    expect(ctx.session.id).toBeGreaterThan(0);
    expect(ctx.session.epoch).toBe(1);
    expect(ctx.session.partitions.size).toBe(2);
  });

  test('incremental requests update positions, forget partitions and answer only changes', () => {
    const c = new FetchSessionCache(10);
    const full = c.newContext(0, INITIAL_EPOCH, [spec('t', 0), spec('t', 1)], [], 0);
    if (full.kind !== 'full' || !full.session) throw new Error('no session');
    const id = full.session.id;
    for (const p of full.session.partitions.values()) expect(FetchSessionCache.noteResponse(p, state(5n), false)).toBe(true);

    const inc = c.newContext(id, 1, [spec('t', 0, 5n)], [], 1);
    if (inc.kind !== 'incremental') throw new Error('expected incremental');
    expect(inc.partitions.map((p) => [p.partition, p.fetchOffset])).toEqual([
      [0, 5n],
      [1, 0n],
    ]);
    // Partition 0 unchanged (no records, same HWM): left out; partition 1 got records: included.
    expect(FetchSessionCache.noteResponse(inc.partitions[0], state(5n), true)).toBe(false);
    expect(FetchSessionCache.noteResponse(inc.partitions[1], state(5n, 100), true)).toBe(true);
    // A HWM change alone is news too.
    const inc2 = c.newContext(id, 2, [], [{ topic: 't', partition: 1 }], 2);
    if (inc2.kind !== 'incremental') throw new Error('expected incremental');
    expect(inc2.partitions).toHaveLength(1);
    expect(FetchSessionCache.noteResponse(inc2.partitions[0], state(9n), true)).toBe(true);
  });

  test('unknown session and wrong epoch get their session-level errors', () => {
    const c = new FetchSessionCache(10);
    expect(c.newContext(12345, 1, [], [], 0)).toEqual({ kind: 'error', errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
    const full = c.newContext(0, INITIAL_EPOCH, [spec('t', 0)], [], 0);
    if (full.kind !== 'full' || !full.session) throw new Error('no session');
    expect(c.newContext(full.session.id, 7, [], [], 0)).toEqual({
      kind: 'error',
      errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH,
    });
  });

  test('a full request naming a session closes it', () => {
    const c = new FetchSessionCache(10);
    const full = c.newContext(0, INITIAL_EPOCH, [spec('t', 0)], [], 0);
    if (full.kind !== 'full' || !full.session) throw new Error('no session');
    c.newContext(full.session.id, FINAL_EPOCH, [spec('t', 0)], [], 0);
    expect(c.size).toBe(0);
  });

  test('a full cache creates no session until the oldest has been idle long enough', () => {
    const c = new FetchSessionCache(1, 1000);
    c.newContext(0, INITIAL_EPOCH, [spec('t', 0)], [], 0);
    expect(c.newContext(0, INITIAL_EPOCH, [spec('t', 0)], [], 500)).toMatchObject({ kind: 'full', session: null });
    const later = c.newContext(0, INITIAL_EPOCH, [spec('t', 0)], [], 5000);
    expect(later.kind === 'full' && later.session !== null).toBe(true);
    expect(c.size).toBe(1);
  });

  test('epochs wrap after Int32 max to 1', () => {
    expect(nextEpoch(0x7fffffff)).toBe(1);
    expect(nextEpoch(0)).toBe(1);
  });
});
