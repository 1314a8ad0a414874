/**
 * truncationOffset, the follower's truncation rule (Kafka's getOffsetTruncationState), against
 * follower logs described by their leader epochs. The fetch loop itself runs in the multi-broker
 * tests (compat-tests/replication/).
 */
import { LeaderEpochFileCache } from '../storage/leader-epoch-file-cache';
import { truncationOffset } from './replica-fetcher';

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
