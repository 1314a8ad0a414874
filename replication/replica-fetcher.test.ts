/**
 * truncationOffset, the follower's truncation rule (Kafka's getOffsetTruncationState), against
 * follower logs described by their leader epochs. The fetch loop itself runs in the multi-broker
 * tests (compat-tests/replication/).
 * FollowerFetchSession: which partitions each request lists and forgets, and when it starts over.
 */
import { LeaderEpochFileCache } from '../storage/leader-epoch-file-cache';
import { FollowerFetchSession, truncationOffset } from './replica-fetcher';
import { ErrorCode } from '../protocol/errors';

/** A follower log described by its epochs and LEO (Kafka's getOffsetTruncationState cases). */
function follower(entries: [number, bigint][], leo: bigint, hw = 0n) {
  const cache = new LeaderEpochFileCache(null, entries.map(([epoch, startOffset]) => ({ epoch, startOffset })));
  return {
    logEndOffset: leo,
    highWatermark: hw,
    endOffsetForEpoch: (e: number) => {
      const r = cache.endOffsetFor(e, leo);
      return r.endOffset < 0n ? undefined : r;
    },
  };
}

describe('truncationOffset', () => {
  test('same epoch on both sides: the smaller end offset', () => {
    // Follower wrote epoch 1 up to 15; the leader's epoch 1 ends at 12.
    expect(truncationOffset(follower([[0, 0n], [1, 10n]], 15n), { leaderEpoch: 1, endOffset: 12n })).toEqual({ offset: 12n, completed: true });
    // The leader has more of it: nothing to cut.
    expect(truncationOffset(follower([[0, 0n], [1, 10n]], 15n), { leaderEpoch: 1, endOffset: 20n })).toEqual({ offset: 15n, completed: true });
  });

  test('the leader names an epoch the follower does not have: cut to the follower\'s end of the largest smaller epoch, then ask again', () => {
    // Follower: epochs 0, 2; the leader answers epoch 1 (ends at 8).
    expect(truncationOffset(follower([[0, 0n], [2, 10n]], 14n), { leaderEpoch: 1, endOffset: 8n })).toEqual({ offset: 10n, completed: false });
  });

  test('undefined answers', () => {
    expect(truncationOffset(follower([[3, 0n]], 9n, 4n), { leaderEpoch: -1, endOffset: -1n })).toEqual({ offset: 4n, completed: true });
    expect(truncationOffset(follower([[3, 0n]], 9n), { leaderEpoch: -1, endOffset: 7n })).toEqual({ offset: 7n, completed: true });
    // Every epoch of the follower is newer than the leader's answer: its records from the first
    // of them on are not the leader's (the cache answers the requested epoch ending at 0).
    expect(truncationOffset(follower([[5, 0n]], 9n), { leaderEpoch: 2, endOffset: 6n })).toEqual({ offset: 0n, completed: true });
  });
});

describe('FollowerFetchSession (KIP-227, the follower side)', () => {
  const owner = {};
  const pos = (key: string, fetchOffset: bigint, o: object = owner) => ({ key, fetchOffset, logStartOffset: 0n, currentLeaderEpoch: 1, lastFetchedEpoch: 1, owner: o });

  test('full, then only changed partitions; removed ones forgotten', () => {
    const s = new FollowerFetchSession();
    let r = s.build([pos('a-0', 0n), pos('b-0', 0n)], true);
    expect(r).toMatchObject({ sessionId: 0, sessionEpoch: 0, forgotten: [] });
    expect(r.send.map((x) => x.key)).toEqual(['a-0', 'b-0']);
    s.onResponse(ErrorCode.NONE, 42);
    r = s.build([pos('a-0', 10n), pos('b-0', 0n)], true);
    expect(r).toMatchObject({ sessionId: 42, sessionEpoch: 1, forgotten: [] });
    expect(r.send.map((x) => x.key)).toEqual(['a-0']);
    s.onResponse(ErrorCode.NONE, 42);
    r = s.build([pos('a-0', 10n)], true);
    expect(r).toMatchObject({ sessionId: 42, sessionEpoch: 2, send: [], forgotten: ['b-0'] });
    s.onResponse(ErrorCode.NONE, 42);
    // Back after a delay, or a re-added partition (new state) at the same offset: listed again.
    const readded = {};
    r = s.build([pos('a-0', 10n, readded), pos('b-0', 0n)], true);
    expect(r.sessionEpoch).toBe(3);
    expect(r.send.map((x) => x.key)).toEqual(['a-0', 'b-0']);
    s.onResponse(ErrorCode.NONE, 42);
    // Not caught up: listed though unchanged.
    r = s.build([pos('a-0', 10n, readded), { ...pos('b-0', 0n), always: true }], true);
    expect(r.send.map((x) => x.key)).toEqual(['b-0']);
  });

  test('errors and doubts make the next request full; no session below v7 or when the leader opens none', () => {
    const s = new FollowerFetchSession();
    s.build([pos('a-0', 0n)], true);
    s.onResponse(ErrorCode.NONE, 7);
    s.build([pos('a-0', 1n)], true);
    s.onResponse(ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0);
    expect(s.build([pos('a-0', 1n)], true)).toMatchObject({ sessionId: 7, sessionEpoch: 0 }); // closes 7, opens a new one
    s.onResponse(ErrorCode.NONE, 8);
    s.build([pos('a-0', 1n)], true);
    s.onResponse(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0);
    expect(s.build([pos('a-0', 1n)], true)).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    s.onResponse(ErrorCode.NONE, 9);
    s.build([pos('a-0', 1n)], true);
    s.reset();
    expect(s.build([pos('a-0', 1n)], true)).toMatchObject({ sessionId: 9, sessionEpoch: 0, send: [pos('a-0', 1n)] });
    s.onResponse(ErrorCode.NONE, 0);
    expect(s.build([pos('a-0', 1n)], true)).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    expect(s.build([pos('a-0', 1n)], false)).toMatchObject({ sessionId: 0, sessionEpoch: -1 });
  });
});
