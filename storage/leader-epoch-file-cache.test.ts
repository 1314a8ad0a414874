import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { nodeFs } from './fs';
import { logConfig } from './log-config';
import { LEADER_EPOCH_CHECKPOINT_FILENAME, LeaderEpochCheckpointFile, LeaderEpochFileCache } from './leader-epoch-file-cache';
import { batchAt, testBatch } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { UnifiedLog } from './unified-log';

afterAll(removeTempDirs);

function cacheIn(dir: string): LeaderEpochFileCache {
  return LeaderEpochFileCache.forDir(nodeFs, () => dir).cache;
}

describe('LeaderEpochFileCache', () => {
  test('writes Kafka’s checkpoint format and reads it back', () => {
    const dir = tempDir();
    const cache = cacheIn(dir);
    cache.assign(0, 0n);
    cache.assign(3, 100n);
    expect(nodefs.readFileSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME), 'utf8')).toBe('0\n2\n0 0\n3 100\n');
    expect(cacheIn(dir).entries).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 100n },
    ]);
  });

  test('assign ignores the current epoch at a later offset and keeps entries monotonic', () => {
    const cache = new LeaderEpochFileCache(null);
    expect(cache.assign(1, 10n)).toBe(true);
    expect(cache.assign(1, 20n)).toBe(false);
    expect(cache.assign(2, 30n)).toBe(true);
    expect(cache.assign(4, 50n)).toBe(true);
    // A lower epoch at a higher offset (a follower taking a new leader's batches after a
    // divergence) removes the conflicting entries at the end.
    expect(cache.assign(3, 40n)).toBe(true);
    expect(cache.entries).toEqual([
      { epoch: 1, startOffset: 10n },
      { epoch: 2, startOffset: 30n },
      { epoch: 3, startOffset: 40n },
    ]);
    // The same epoch at a lower offset moves its start.
    expect(cache.assign(3, 35n)).toBe(true);
    expect(cache.latestEntry()).toEqual({ epoch: 3, startOffset: 35n });
    expect(() => cache.assign(-1, 0n)).toThrow(RangeError);
  });

  test('endOffsetFor follows OffsetForLeaderEpoch semantics', () => {
    const cache = new LeaderEpochFileCache(null, [
      { epoch: 2, startOffset: 10n },
      { epoch: 5, startOffset: 30n },
      { epoch: 7, startOffset: 50n },
    ]);
    expect(cache.endOffsetFor(-1, 80n)).toEqual({ epoch: -1, endOffset: -1n });
    expect(cache.endOffsetFor(7, 80n)).toEqual({ epoch: 7, endOffset: 80n }); // latest: the LEO
    expect(cache.endOffsetFor(5, 80n)).toEqual({ epoch: 5, endOffset: 50n });
    expect(cache.endOffsetFor(6, 80n)).toEqual({ epoch: 5, endOffset: 50n }); // unknown: floor epoch, next start
    expect(cache.endOffsetFor(1, 80n)).toEqual({ epoch: 1, endOffset: 10n }); // below all
    expect(cache.endOffsetFor(9, 80n)).toEqual({ epoch: -1, endOffset: -1n }); // above all
    expect(cache.epochForOffset(9n)).toBe(-1);
    expect(cache.epochForOffset(10n)).toBe(2);
    expect(cache.epochForOffset(49n)).toBe(5);
    expect(cache.epochForOffset(1000n)).toBe(7);
  });

  test('truncation from the end and from the start', () => {
    const dir = tempDir();
    const cache = cacheIn(dir);
    cache.assign(1, 0n);
    cache.assign(2, 10n);
    cache.assign(3, 20n);
    cache.truncateFromEnd(20n);
    expect(cache.entries.map((e) => e.epoch)).toEqual([1, 2]);
    cache.truncateFromEnd(15n); // inside epoch 2: nothing starts at or after 15
    expect(cache.entries.map((e) => e.epoch)).toEqual([1, 2]);
    cache.truncateFromStart(12n);
    expect(cache.entries).toEqual([{ epoch: 2, startOffset: 12n }]);
    expect(cacheIn(dir).entries).toEqual([{ epoch: 2, startOffset: 12n }]);
    cache.clearAndFlush();
    expect(nodefs.readFileSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME), 'utf8')).toBe('0\n0\n');
  });

  test('a corrupt file is reported and starts empty', () => {
    const dir = tempDir();
    nodefs.writeFileSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME), '0\n2\n1 0\n');
    const r = LeaderEpochFileCache.forDir(nodeFs, () => dir);
    expect(r.corrupt).toBeDefined();
    expect(r.cache.isEmpty).toBe(true);
    expect(() => new LeaderEpochCheckpointFile(nodeFs, () => path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME)).read()).toThrow(/expected 2 entries/);
  });
});

describe('UnifiedLog and its leader epoch cache', () => {
  const TP = { topic: 'epochs', partition: 0 };
  function open(dir: string, fs = new FaultyFs()): UnifiedLog {
    const time = new MockTime();
    return UnifiedLog.load({ dir, tp: TP, config: logConfig({ segmentBytes: 4096 }), fs, time, scheduler: new MockScheduler(time) });
  }

  test('leader appends assign epochs; truncation and the log start offset move them; reload keeps them', () => {
    const dir = path.join(tempDir(), 'epochs-0');
    const log = open(dir);
    log.appendAsLeader(testBatch({ count: 5 }), { leaderEpoch: 0 });
    log.appendAsLeader(testBatch({ count: 5 }), { leaderEpoch: 0 });
    log.maybeAssignEpochStartOffset(2, log.logEndOffset); // took over at offset 10
    log.appendAsLeader(testBatch({ count: 5 }), { leaderEpoch: 2 });
    expect(log.leaderEpochCache.entries).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 2, startOffset: 10n },
    ]);
    expect(log.latestEpoch).toBe(2);
    expect(log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 10n });
    expect(log.endOffsetForEpoch(1)).toEqual({ epoch: 0, endOffset: 10n });
    expect(log.endOffsetForEpoch(2)).toEqual({ epoch: 2, endOffset: 15n });
    expect(log.endOffsetForEpoch(3)).toBeUndefined();

    log.truncateTo(10n);
    expect(log.leaderEpochCache.entries).toEqual([{ epoch: 0, startOffset: 0n }]);
    log.appendAsFollower(batchAt(10n, 3, { partitionLeaderEpoch: 3 }));
    log.appendAsFollower(batchAt(13n, 3, { partitionLeaderEpoch: 3 }));
    log.appendAsFollower(batchAt(16n, 2, { partitionLeaderEpoch: 4 }));
    expect(log.leaderEpochCache.entries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [0, 0n],
      [3, 10n],
      [4, 16n],
    ]);
    log.updateHighWatermark(log.logEndOffset);
    log.maybeIncrementLogStartOffset(12n, 'test');
    expect(log.leaderEpochCache.entries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [3, 12n],
      [4, 16n],
    ]);
    log.flush();
    log.close();
    const again = open(dir);
    expect(again.leaderEpochCache.entries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [3, 12n],
      [4, 16n],
    ]);
    again.truncateFullyAndStartAt(40n);
    expect(again.leaderEpochCache.isEmpty).toBe(true);
    again.close();
  });

  test('a missing checkpoint is rebuilt from the batch headers; entries past the recovered end are dropped', () => {
    const dir = path.join(tempDir(), 'epochs-0');
    const log = open(dir);
    log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 1 });
    log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 1 });
    log.appendAsLeader(testBatch({ count: 2 }), { leaderEpoch: 4 });
    log.maybeAssignEpochStartOffset(6, log.logEndOffset);
    log.flush();
    log.close();
    // The entry at the LEO (no record of epoch 6 yet) does not survive a reload.
    const reloaded = open(dir);
    expect(reloaded.leaderEpochCache.entries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [1, 0n],
      [4, 4n],
    ]);
    reloaded.close();
    nodefs.rmSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME));
    const rebuilt = open(dir);
    expect(rebuilt.leaderEpochCache.entries.map((e) => [e.epoch, e.startOffset])).toEqual([
      [1, 0n],
      [4, 4n],
    ]);
    expect(nodefs.existsSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILENAME))).toBe(true);
    rebuilt.close();
  });
});
