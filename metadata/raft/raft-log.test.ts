/**
 * The RaftLog contract (epoch cache, truncation, validation of fetch positions, snapshots), run
 * against the in-memory log and the on-disk one over UnifiedLog; then what only the disk log does:
 * survive a restart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InMemoryRaftLog, cleanSnapshots, decodeRaftRecords, validateOffsetAndEpoch, type RaftLog } from './raft-log';
import { UnifiedRaftLog, snapshotFileName } from './unified-raft-log';

const rec = (v: string) => ({ value: v, timestamp: 0 });

const dirs: string[] = [];
const opened: UnifiedRaftLog[] = [];
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-raft-log-'));
  dirs.push(d);
  return d;
}
function openDisk(dir: string): UnifiedRaftLog {
  const l = new UnifiedRaftLog({ dir });
  opened.push(l);
  return l;
}
afterEach(() => {
  for (const l of opened.splice(0)) {
    try {
      l.close();
    } catch {
      // already closed
    }
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const kinds: [string, () => RaftLog][] = [
  ['InMemoryRaftLog', () => new InMemoryRaftLog()],
  ['UnifiedRaftLog', () => openDisk(path.join(tmpDir(), '__cluster_metadata-0'))],
];

describe.each(kinds)('%s', (_name, newLog) => {
  /** Epoch 1: offsets 0-2 (batches 0, 1-2); epoch 3: offsets 3-4. */
  function sampleLog(): RaftLog {
    const log = newLog();
    log.appendAsLeader([rec('a')], 1);
    log.appendAsLeader([rec('b'), rec('c')], 1);
    log.appendAsLeader([rec('d'), rec('e')], 3);
    return log;
  }

  it('cleanSnapshots: the latest is always kept; older ones (and the log before the next) go while size or age retention is exceeded', () => {
    const log = sampleLog();
    log.updateHighWatermark(5n);
    const ts = new Map<bigint, bigint>([[1n, 1000n], [3n, 2000n], [5n, 3000n]]);
    const timestampOf = (id: { offset: bigint }) => ts.get(id.offset) ?? null;
    log.createSnapshot({ offset: 1n, epoch: 1 }, Buffer.alloc(100));
    log.createSnapshot({ offset: 3n, epoch: 1 }, Buffer.alloc(100));
    log.createSnapshot({ offset: 5n, epoch: 3 }, Buffer.alloc(100));
    expect(log.snapshotSize({ offset: 3n, epoch: 1 })).toBe(100);
    expect(log.sizeInBytes()).toBeGreaterThan(0);
    // Nothing is over: nothing goes.
    expect(cleanSnapshots(log, { maxBytes: -1, maxMs: 5000 }, 4000, timestampOf)).toBe(false);
    expect(log.snapshotIds().map((s) => s.offset)).toEqual([1n, 3n, 5n]);
    // The oldest is older than 2.5 s: it goes with the log before the next one; the next (2 s old) stays.
    expect(cleanSnapshots(log, { maxBytes: -1, maxMs: 2500 }, 4000, timestampOf)).toBe(true);
    expect(log.snapshotIds().map((s) => s.offset)).toEqual([3n, 5n]);
    expect(log.startOffset()).toBe(3n);
    // Size: log + snapshots above the limit: everything but the latest goes; the latest stays even when still over.
    expect(cleanSnapshots(log, { maxBytes: 0, maxMs: -1 }, 4000, timestampOf)).toBe(true);
    expect(log.snapshotIds()).toEqual([{ offset: 5n, epoch: 3 }]);
    expect(log.startOffset()).toBe(5n);
    expect(cleanSnapshots(log, { maxBytes: 0, maxMs: 0 }, 1e9, timestampOf)).toBe(false);
    expect(log.snapshotIds()).toEqual([{ offset: 5n, epoch: 3 }]);
  });

  it('cleanSnapshots stops at a snapshot it cannot delete past (above the high watermark)', () => {
    const log = sampleLog();
    log.updateHighWatermark(3n);
    log.createSnapshot({ offset: 1n, epoch: 1 }, Buffer.alloc(10));
    log.createSnapshot({ offset: 3n, epoch: 1 }, Buffer.alloc(10));
    log.storeFetchedSnapshot({ offset: 5n, epoch: 3 }, Buffer.alloc(10));
    expect(cleanSnapshots(log, { maxBytes: 0, maxMs: -1 }, 0, () => null)).toBe(true);
    expect(log.snapshotIds().map((s) => s.offset)).toEqual([3n, 5n]);
    expect(log.startOffset()).toBe(3n);
  });

  it('assigns offsets, stamps the epoch and answers the epoch cache as Kafka does', () => {
    const log = sampleLog();
    expect(log.endOffset()).toEqual({ offset: 5n, epoch: 3 });
    expect(log.endOffsetForEpoch(3)).toEqual({ offset: 5n, epoch: 3 });
    expect(log.endOffsetForEpoch(1)).toEqual({ offset: 3n, epoch: 1 });
    // An epoch without entries: the largest one below it and where that one ended.
    expect(log.endOffsetForEpoch(2)).toEqual({ offset: 3n, epoch: 1 });
    expect(log.endOffsetForEpoch(0)).toEqual({ offset: 0n, epoch: 0 });
    expect(log.epochForOffset(2n)).toBe(1);
    expect(log.epochForOffset(3n)).toBe(3);
    expect(decodeRaftRecords(log.read(1n, 1 << 20)).map((r) => r.value?.toString())).toEqual(['b', 'c', 'd', 'e']);
  });

  it('validates a follower position: valid, diverging, and an empty log', () => {
    const log = sampleLog();
    expect(validateOffsetAndEpoch(log, 0n, 0).kind).toBe('VALID');
    expect(validateOffsetAndEpoch(log, 3n, 1)).toEqual({ kind: 'VALID', offsetAndEpoch: { offset: 3n, epoch: 1 } });
    expect(validateOffsetAndEpoch(log, 4n, 1)).toEqual({ kind: 'DIVERGING', offsetAndEpoch: { offset: 3n, epoch: 1 } });
    expect(validateOffsetAndEpoch(log, 4n, 2)).toEqual({ kind: 'DIVERGING', offsetAndEpoch: { offset: 3n, epoch: 1 } });
    expect(validateOffsetAndEpoch(log, 6n, 3)).toEqual({ kind: 'DIVERGING', offsetAndEpoch: { offset: 5n, epoch: 3 } });
  });

  it('truncates on a diverging epoch to where the logs stop agreeing', () => {
    const follower = sampleLog();
    follower.appendAsLeader([rec('x')], 3);
    // The leader says epoch 1 ended at 3 (it never had epoch 3): everything from 3 goes.
    expect(follower.truncateToEndOffset({ offset: 9n, epoch: 1 })).toBe(3n);
    expect(follower.endOffset()).toEqual({ offset: 3n, epoch: 1 });
    expect(follower.truncateToEndOffset({ offset: 1n, epoch: 1 })).toBe(1n);
  });

  it('never truncates below the high watermark, nor inside a batch', () => {
    const log = sampleLog();
    log.updateHighWatermark(3n);
    expect(() => log.truncateTo(2n)).toThrow(/below the high watermark/);
    log.updateHighWatermark(5n);
    expect(log.highWatermark()).toBe(5n);
    const l2 = sampleLog();
    expect(() => l2.truncateTo(2n)).toThrow(/inside the batch/);
  });

  it('appends as follower only batches that continue the log with no older epoch', () => {
    const leader = sampleLog();
    const follower = newLog();
    follower.appendAsFollower(leader.read(0n, 1 << 20));
    expect(follower.endOffset()).toEqual({ offset: 5n, epoch: 3 });
    expect(() => follower.appendAsFollower(leader.read(3n, 1 << 20))).toThrow(/does not continue the log/);
    const stale = newLog();
    stale.appendAsLeader([rec('a')], 1);
    expect(() => stale.appendAsLeader([rec('z')], 0)).toThrow(/below the log's last epoch/);
  });

  it('snapshots: ids, log start, validation below the log start and a reset to the snapshot', () => {
    const log = sampleLog();
    log.updateHighWatermark(5n);
    expect(() => log.createSnapshot({ offset: 3n, epoch: 3 }, Buffer.from('x'))).toThrow(/does not match the log/);
    log.createSnapshot({ offset: 3n, epoch: 1 }, Buffer.from('state@3'));
    expect(log.deleteBeforeSnapshot({ offset: 3n, epoch: 1 })).toBe(true);
    expect(log.startOffset()).toBe(3n);
    expect(log.earliestSnapshotId()).toEqual({ offset: 3n, epoch: 1 });
    expect(log.epochForOffset(2n)).toBe(1);
    expect(validateOffsetAndEpoch(log, 1n, 1)).toEqual({ kind: 'SNAPSHOT', offsetAndEpoch: { offset: 3n, epoch: 1 } });
    expect(validateOffsetAndEpoch(log, 3n, 0)).toEqual({ kind: 'SNAPSHOT', offsetAndEpoch: { offset: 3n, epoch: 1 } });
    expect(validateOffsetAndEpoch(log, 3n, 1).kind).toBe('VALID');
    expect(validateOffsetAndEpoch(log, 5n, 3).kind).toBe('VALID');

    const follower = newLog();
    follower.storeFetchedSnapshot({ offset: 3n, epoch: 1 }, Buffer.from('state@3'));
    expect(follower.truncateToLatestSnapshot()).toBe(true);
    expect(follower.endOffset()).toEqual({ offset: 3n, epoch: 1 });
    expect(follower.highWatermark()).toBe(3n);
    follower.appendAsFollower(log.read(3n, 1 << 20));
    expect(follower.endOffset()).toEqual({ offset: 5n, epoch: 3 });
  });

  it('writes control batches for raft records', () => {
    const log = newLog();
    log.appendAsLeader([{ key: Buffer.from([0, 0, 0, 2]), value: Buffer.from('lc'), timestamp: 0 }], 1, true);
    expect(decodeRaftRecords(log.read(0n, 100))[0]).toMatchObject({ offset: 0n, epoch: 1, control: true });
  });
});

describe('UnifiedRaftLog on disk', () => {
  it('keeps batches, epochs and snapshots across a restart; the log start comes back from the snapshot', () => {
    const dir = path.join(tmpDir(), '__cluster_metadata-0');
    const log = openDisk(dir);
    log.appendAsLeader([rec('a')], 1);
    log.appendAsLeader([rec('b'), rec('c')], 1);
    log.appendAsLeader([rec('d')], 3);
    log.updateHighWatermark(3n);
    log.createSnapshot({ offset: 3n, epoch: 1 }, Buffer.from('state@3'));
    expect(log.deleteBeforeSnapshot({ offset: 3n, epoch: 1 })).toBe(true);
    expect(fs.existsSync(path.join(dir, snapshotFileName({ offset: 3n, epoch: 1 })))).toBe(true);
    expect(snapshotFileName({ offset: 3n, epoch: 1 })).toBe('00000000000000000003-0000000001.checkpoint');
    log.close();
    fs.writeFileSync(path.join(dir, '00000000000000000009-0000000003.checkpoint.part'), 'torn');

    const again = openDisk(dir);
    expect(again.endOffset()).toEqual({ offset: 4n, epoch: 3 });
    expect(again.startOffset()).toBe(3n);
    expect(again.latestSnapshotId()).toEqual({ offset: 3n, epoch: 1 });
    expect(again.readSnapshot({ offset: 3n, epoch: 1 })?.toString()).toBe('state@3');
    expect(again.endOffsetForEpoch(1)).toEqual({ offset: 3n, epoch: 1 });
    expect(decodeRaftRecords(again.read(3n, 1 << 20)).map((r) => r.value?.toString())).toEqual(['d']);
    expect(fs.existsSync(path.join(dir, '00000000000000000009-0000000003.checkpoint.part'))).toBe(false);
    // The high watermark is not persisted: it is learned again from the leader.
    expect(again.highWatermark()).toBe(3n);
  });

  it('restarts at a snapshot stored beyond its log end', () => {
    const dir = path.join(tmpDir(), '__cluster_metadata-0');
    const log = openDisk(dir);
    log.appendAsLeader([rec('a')], 1);
    log.storeFetchedSnapshot({ offset: 10n, epoch: 2 }, Buffer.from('s'));
    log.close();
    const again = openDisk(dir);
    expect(again.endOffset()).toEqual({ offset: 10n, epoch: 2 });
    expect(again.startOffset()).toBe(10n);
  });
});
