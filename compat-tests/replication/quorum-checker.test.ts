/**
 * The quorum checker on hand-made controller logs: each node's `__cluster_metadata-0` written on
 * disk with UnifiedRaftLog (the leader's batches built by appendAsLeader with the epoch, copied to
 * followers byte for byte with appendAsFollower, LeaderChange control records as the raft node
 * writes them) and a quorum-state file, then read back by readControllerLog. A correct history
 * (with an uncommitted tail truncated and replaced) passes; each broken property is reported:
 * two leaders in one epoch, an epoch not opened by its LeaderChange, different batches at one
 * offset and epoch, a committed prefix missing on a node, an acknowledged operation missing or
 * twice, a topic never asked for, an acknowledged operation after a later one, and quorum-state
 * files naming other leaders. Trimmed logs (two nodes snapshot and delete their log below it, one
 * keeps everything): compared from the highest log start, the snapshot standing for the state
 * there; an acknowledged operation it does not explain, one in it and again after it, and an
 * unreadable snapshot are reported.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UnifiedRaftLog, snapshotFileName } from '../../metadata/raft/unified-raft-log';
import { writeSnapshotRecords } from '../../metadata/snapshot/snapshot-records';
import { FileQuorumStateStore, electionState } from '../../metadata/raft/quorum-state-store';
import { encodeMetadataRecord, METADATA_PARTITION_DIR } from '../../metadata/metadata-log-store';
import type { MetadataRecord } from '../../metadata/metadata-records';
import { controlRecordKey, ControlRecordType } from '../../protocol/records/control-record';
import { writeLeaderChangeMessage } from '../../protocol/generated/message-data/leader-change-message';
import { Writer } from '../../protocol/primitives/writer';
import { checkQuorumRun, readControllerLog, topicRecordsAnywhere, type OpOutcome } from './quorum-checker';

const IDS = [1, 2, 3];
let root: string;
let logs: Map<number, UnifiedRaftLog>;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-quorum-checker-'));
  logs = new Map(IDS.map((id) => [id, new UnifiedRaftLog({ dir: path.join(root, `c${id}`, METADATA_PARTITION_DIR) })]));
});
afterEach(() => {
  for (const l of logs.values()) l.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const topicId = (name: string): string => Buffer.from(name.padEnd(16, '_').slice(0, 16)).toString('base64url');
const create = (name: string): MetadataRecord => ({ type: 'TopicRecord', data: { name, topicId: topicId(name) } });
const remove = (name: string): MetadataRecord => ({ type: 'RemoveTopicRecord', data: { topicId: topicId(name) } });
const alter = (name: string, value: string): MetadataRecord => ({ type: 'ConfigRecord', data: { resourceType: 2, resourceName: name, name: 'retention.ms', value } });

function leaderChange(node: number, epoch: number, leaderId: number): void {
  const w = new Writer(64);
  writeLeaderChangeMessage(w, 0, { version: 0, leaderId, voters: IDS.map((voterId) => ({ voterId, voterDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' })), grantingVoters: [] });
  logs.get(node)!.appendAsLeader([{ key: controlRecordKey(ControlRecordType.LEADER_CHANGE), value: w.toBuffer(), timestamp: 0 }], epoch, true);
}
function write(node: number, epoch: number, records: MetadataRecord[]): void {
  logs.get(node)!.appendAsLeader(records.map((r) => ({ value: encodeMetadataRecord(r), timestamp: 0 })), epoch);
}
/** Copies `from`'s batches past `to`'s end onto `to`, as a follower's fetch does. */
function replicate(from: number, to: number): void {
  const src = logs.get(from)!;
  const dst = logs.get(to)!;
  const bytes = src.read(dst.endOffset().offset, 1 << 20);
  if (bytes.length) dst.appendAsFollower(bytes);
}
function state(node: number, epoch: number, leaderId: number, votedId = -1): void {
  FileQuorumStateStore.inDir(path.join(root, `c${node}`, METADATA_PARTITION_DIR), { voterIds: IDS }).write(electionState(epoch, leaderId, votedId));
}
function read() {
  for (const l of logs.values()) l.close();
  const out = IDS.map((id) => readControllerLog(id, path.join(root, `c${id}`), IDS));
  logs = new Map(IDS.map((id) => [id, new UnifiedRaftLog({ dir: path.join(root, `c${id}`, METADATA_PARTITION_DIR) })]));
  return out;
}
let clock = 0;
const acked = (op: OpOutcome['op']): OpOutcome => ({ op, sentAt: ++clock, doneAt: ++clock, acked: true });
const failed = (op: OpOutcome['op']): OpOutcome => ({ op, sentAt: ++clock, doneAt: ++clock, acked: false });

/**
 * Epoch 1 led by 1: LeaderChange, create a, alter a (all on every node); then 1 writes "lost" alone
 * (uncommitted). Epoch 2 led by 2 (voted by 3): LeaderChange, create b, delete a; 1 truncates its
 * tail and catches up. Returns the final high watermark (everything).
 */
function correctHistory(): bigint {
  leaderChange(1, 1, 1);
  write(1, 1, [create('run-a')]);
  write(1, 1, [alter('run-a', '1001')]);
  replicate(1, 2);
  replicate(1, 3);
  write(1, 1, [create('run-lost')]);
  leaderChange(2, 2, 2);
  write(2, 2, [create('run-b')]);
  write(2, 2, [remove('run-a')]);
  replicate(2, 3);
  // Node 1 diverged at offset 3 (epoch 1's "lost"); the new leader's epoch 1 ends at 3.
  logs.get(1)!.truncateTo(3n);
  replicate(2, 1);
  state(1, 2, 2);
  state(2, 2, 2, 2);
  state(3, 2, 2, 2);
  return logs.get(2)!.endOffset().offset;
}
const correctOps = (): OpOutcome[] => [acked({ kind: 'create', topic: 'run-a' }), acked({ kind: 'alter', topic: 'run-a', key: 'retention.ms', value: '1001' }), failed({ kind: 'create', topic: 'run-lost' }), acked({ kind: 'create', topic: 'run-b' }), acked({ kind: 'delete', topic: 'run-a' })];

test('a correct history passes, with its uncommitted tail gone', () => {
  const hw = correctHistory();
  const nodes = read();
  const r = checkQuorumRun({ logs: nodes, highWatermark: hw, ops: correctOps(), topicPrefix: 'run-' });
  expect(r.violations).toEqual([]);
  expect([...r.epochLeaders]).toEqual([[1, 1], [2, 2]]);
  expect(r).toMatchObject({ acked: 4, failedAbsent: 1, failedApplied: 0 });
  expect(r.committed.length).toBe(6);
  expect(topicRecordsAnywhere(nodes, 'run-lost')).toEqual([]);
  expect(nodes.map((n) => n.quorumState?.leaderId)).toEqual([2, 2, 2]);
});

test('an uncommitted entry still in a log is found, and an unacknowledged operation that committed counts as applied', () => {
  correctHistory();
  write(2, 2, [create('run-late')]);
  const nodes = read();
  // Only node 2 has it, above the high watermark: not committed.
  expect(topicRecordsAnywhere(nodes, 'run-late')).toEqual([{ nodeId: 2, offset: 6n, epoch: 2 }]);
  const r = checkQuorumRun({ logs: nodes, highWatermark: 6n, ops: [...correctOps(), failed({ kind: 'create', topic: 'run-late' })], topicPrefix: 'run-' });
  expect(r.violations).toEqual([]);
  expect(r.failedAbsent).toBe(2);
  replicate(2, 1);
  replicate(2, 3);
  const r2 = checkQuorumRun({ logs: read(), highWatermark: 7n, ops: [...correctOps(), failed({ kind: 'create', topic: 'run-late' })], topicPrefix: 'run-' });
  expect(r2.violations).toEqual([]);
  expect(r2.failedApplied).toBe(1);
});

test('two leaders in one epoch are reported, from the logs and from quorum-state', () => {
  leaderChange(1, 1, 1);
  write(1, 1, [create('run-a')]);
  replicate(1, 2);
  // Node 3 also thinks it won epoch 1.
  leaderChange(3, 1, 3);
  state(1, 1, 1);
  state(2, 1, 1);
  state(3, 1, 3);
  const r = checkQuorumRun({ logs: read(), highWatermark: 2n, ops: [acked({ kind: 'create', topic: 'run-a' })], topicPrefix: 'run-' });
  expect(r.violations).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^epoch 1 had two leaders: 1 \(node 1 offset 0\) and 3 \(node 3 offset 0\)$/),
      expect.stringMatching(/^nodes 1 and 3 hold different batches at offset 0 in epoch 1$/),
      expect.stringMatching(/^node 3: quorum-state names leader 3 for epoch 1, the logs' LeaderChange names 1$/),
      expect.stringMatching(/^quorum-state files disagree on epoch 1: node 2 says leader 1, node 3 says 3$/),
      expect.stringMatching(/^node 3: log ends at 1, below the high watermark 2$/),
    ]),
  );
});

test('an epoch not opened by its LeaderChange, and diverging committed prefixes, are reported', () => {
  leaderChange(1, 1, 1);
  replicate(1, 2);
  replicate(1, 3);
  write(1, 1, [create('run-a')]);
  write(2, 1, [create('run-a2')]); // a second writer in epoch 1, at the same offset
  replicate(1, 3);
  write(3, 2, [create('run-c')]); // epoch 2 without a LeaderChange
  const r = checkQuorumRun({ logs: read(), highWatermark: 2n, ops: [acked({ kind: 'create', topic: 'run-a' })], topicPrefix: 'run-' });
  expect(r.violations).toEqual(
    expect.arrayContaining([
      'nodes 1 and 2 hold different batches at offset 1 in epoch 1',
      'node 3: epoch 2 opens at offset 2 with a data batch, not its LeaderChange',
      expect.stringMatching(/^node 2: committed prefix \(below 2\) differs from node 1's from offset 1$/),
    ]),
  );
});

test('acknowledged operations missing or twice, topics never asked for, and real-time order are checked', () => {
  leaderChange(1, 1, 1);
  write(1, 1, [create('run-b')]); // acknowledged after run-a was acknowledged and sent after it, yet first
  write(1, 1, [create('run-a')]);
  write(1, 1, [alter('run-a', '7')]);
  write(1, 1, [alter('run-a', '7')]);
  write(1, 1, [create('run-ghost'), create('other-topic')]);
  for (const n of [2, 3]) replicate(1, n);
  const a = acked({ kind: 'create', topic: 'run-a' });
  const b = acked({ kind: 'create', topic: 'run-b' });
  const r = checkQuorumRun({
    logs: read(),
    highWatermark: 7n,
    ops: [a, b, acked({ kind: 'alter', topic: 'run-a', key: 'retention.ms', value: '7' }), acked({ kind: 'delete', topic: 'run-b' })],
    topicPrefix: 'run-',
  });
  expect(r.violations.sort()).toEqual(
    [
      'acknowledged alter run-a retention.ms=7 is in the committed log 2 times (offsets 3, 4)',
      'acknowledged delete run-b is in the committed log 0 times',
      'topic run-ghost is in the committed log (offset 5) but was never asked for',
      `create run-a was acknowledged (t=${a.doneAt.toFixed(1)}) before create run-b was sent (t=${b.sentAt.toFixed(1)}) but sits after it in the log`,
    ].sort(),
  );
});

/**
 * Epoch 1 led by 1 commits (every node): create a, alter a=1001, create x, delete x, alter a=1002,
 * create c; then nodes 1 and 2 snapshot at 7 (a, a's 1002, c) and trim their logs below it; node 3
 * keeps its whole log. Epoch 2 led by 2: create b, delete c. Returns the high watermark.
 */
function trimmedHistory(opts: { extra?: MetadataRecord[] } = {}): bigint {
  leaderChange(1, 1, 1);
  write(1, 1, [create('run-a')]);
  write(1, 1, [alter('run-a', '1001')]);
  write(1, 1, [create('run-x')]);
  write(1, 1, [remove('run-x')]);
  write(1, 1, [alter('run-a', '1002')]);
  write(1, 1, [create('run-c')]);
  replicate(1, 2);
  replicate(1, 3);
  const image = writeSnapshotRecords([create('run-a'), alter('run-a', '1002'), create('run-c')], { epoch: 1, lastContainedLogTimestamp: 0 });
  for (const n of [1, 2]) {
    const l = logs.get(n)!;
    l.updateHighWatermark(7n);
    l.createSnapshot({ offset: 7n, epoch: 1 }, image);
    expect(l.deleteBeforeSnapshot({ offset: 7n, epoch: 1 })).toBe(true);
  }
  leaderChange(2, 2, 2);
  write(2, 2, [create('run-b')]);
  write(2, 2, [remove('run-c')]);
  if (opts.extra) write(2, 2, opts.extra);
  replicate(2, 1);
  replicate(2, 3);
  state(1, 2, 2);
  state(2, 2, 2, 2);
  state(3, 2, 2, 2);
  return logs.get(2)!.endOffset().offset;
}
const trimmedOps = (): OpOutcome[] => [
  acked({ kind: 'create', topic: 'run-a' }),
  acked({ kind: 'alter', topic: 'run-a', key: 'retention.ms', value: '1001' }),
  acked({ kind: 'create', topic: 'run-x' }),
  acked({ kind: 'delete', topic: 'run-x' }),
  acked({ kind: 'alter', topic: 'run-a', key: 'retention.ms', value: '1002' }),
  acked({ kind: 'create', topic: 'run-c' }),
  acked({ kind: 'create', topic: 'run-b' }),
  acked({ kind: 'delete', topic: 'run-c' }),
];

test('trimmed logs are compared from the highest log start, the snapshot there standing for what is below', () => {
  const hw = trimmedHistory();
  const nodes = read();
  expect(nodes.map((n) => n.startOffset)).toEqual([7n, 7n, 0n]);
  expect(nodes.map((n) => (n.snapshots ?? []).map((s) => `${s.offset}-${s.epoch}`))).toEqual([['7-1'], ['7-1'], []]);
  const r = checkQuorumRun({ logs: nodes, highWatermark: hw, ops: trimmedOps(), topicPrefix: 'run-' });
  expect(r.violations).toEqual([]);
  expect(r).toMatchObject({ base: 7n, acked: 8, beforeSnapshot: 3 });
  // Only the batches from the highest log start: epoch 2's LeaderChange, create b, delete c.
  expect(r.committed.map((b) => b.baseOffset)).toEqual([7n, 8n, 9n]);
});

test('on trimmed logs an acknowledged operation the snapshot does not explain, one in the snapshot and again after it, and an unreadable snapshot are reported', () => {
  const hw = trimmedHistory({ extra: [create('run-a')] });
  const ops = [...trimmedOps(), acked({ kind: 'create', topic: 'run-missing' }), acked({ kind: 'alter', topic: 'run-b', key: 'retention.ms', value: '5' })];
  const r = checkQuorumRun({ logs: read(), highWatermark: hw, ops, topicPrefix: 'run-' });
  expect(r.violations.sort()).toEqual(
    [
      'acknowledged create run-a is in the committed log 2 times (offsets 6, 10)',
      'acknowledged create run-missing is in the committed log 0 times',
      'acknowledged alter run-b retention.ms=5 is in the committed log 0 times',
      // The second create of run-a comes after the config the snapshot holds for the first.
      'topic run-a: a config change at 6 before its TopicRecord at 10',
    ].sort(),
  );
  for (const n of [1, 2]) fs.writeFileSync(path.join(root, `c${n}`, METADATA_PARTITION_DIR, snapshotFileName({ offset: 7n, epoch: 1 })), Buffer.from('not a snapshot'));
  const nodes = read();
  expect(nodes.map((n) => n.startOffset)).toEqual([7n, 7n, 0n]);
  const r2 = checkQuorumRun({ logs: nodes, highWatermark: hw, ops: trimmedOps(), topicPrefix: 'run-' });
  expect(r2.violations).toEqual(expect.arrayContaining([expect.stringMatching(/^the logs are compared from offset 7 \(the highest log start\) but no node holds a readable snapshot ending there \(node 1: .+; node 2: .+\)$/)]));
});
