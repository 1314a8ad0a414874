/**
 * The checker of a KRaft controller quorum run (multi-process chaos tests): it reads every
 * controller's metadata log from its directory after the run (`__cluster_metadata-0`, through the
 * storage layer's UnifiedLog with its normal recovery, as metadata/raft/unified-raft-log.ts opens
 * it, plus the `quorum-state` file) and checks, without trusting anything the nodes said:
 *
 *   (i)   one leader per epoch: the LeaderChange control records of an epoch name one leader in
 *         every log, every epoch in a log opens with its LeaderChange batch, epochs never go down
 *         in a log, and the quorum-state files agree with the logs and with each other;
 *   (ii)  the logs agree: a batch at base offset o in epoch e is byte-identical on every node that
 *         holds one there (Raft's log matching), everything before such a shared batch is identical
 *         too, and every log holds exactly the same batches below the final high watermark;
 *   (iii) every acknowledged operation (CreateTopics / DeleteTopics / IncrementalAlterConfigs SET of
 *         the run) is in that agreed prefix exactly once, a failed or unanswered one at most once,
 *         nothing of the run's topics is there that was never asked for, a topic's records are in
 *         the order create < config changes < removal, and an operation acknowledged before
 *         another was sent sits at a lower offset.
 *
 * Pure over what it is given (`NodeLog`s and the run's operations): `checkQuorumRun` returns the
 * violations as sentences (empty = the run was correct) so a test prints all of them at once.
 * Control batches are kept (they are the epochs' openers).
 *
 * Trimmed logs (controllers snapshot and delete the log below a snapshot): a node's log start is
 * where it starts on restart (UnifiedRaftLog's rule: the latest snapshot if the log ends before it,
 * else the earliest snapshot above the segments' start), and its snapshot files are read too. The
 * logs are compared from the highest log start among the nodes (`base`): below it some node holds
 * no batches and a snapshot covers them, so (ii) looks at batches from `base` on, and some node must
 * hold a snapshot ending at `base` (else a violation). For (iii) that snapshot is the state at
 * `base`: a topic or config value in it counts as one occurrence (an acknowledged create found in
 * it and again in the log is twice); an acknowledged operation found nowhere is accepted only when
 * the snapshot explains it (a create whose topic is absent from it and whose deletion was asked and
 * is not in the log either: both below `base`; a delete of a topic the snapshot does not hold; a
 * config value the snapshot holds another value of, or of a topic it does not hold) and counted
 * as `beforeSnapshot`, since the history below `base` is gone (exactly once cannot be checked
 * there). An operation the snapshot holds is placed before every batch of the log for the
 * real-time order check.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control-record';
import { readLeaderChangeMessage } from '../../protocol/generated/message-data/leader-change-message';
import { Reader } from '../../protocol/primitives/reader';
import { UnifiedLog } from '../../storage/unified-log';
import { logConfig } from '../../storage/log-config';
import { METADATA_TOPIC_NAME } from '../../storage/log-manager';
import { decodeMetadataRecord, METADATA_PARTITION_DIR } from '../../metadata/metadata-log-store';
import type { MetadataRecord } from '../../metadata/metadata-records';
import { FileQuorumStateStore, QUORUM_STATE_FILE_NAME, type ElectionState } from '../../metadata/raft/quorum-state-store';
import { readSnapshotRecords } from '../../metadata/snapshot/snapshot-records';

export interface LogBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  epoch: number;
  control: boolean;
  /** The whole batch as stored (header, CRC and records). */
  bytes: Buffer;
  /** The leader a LeaderChange control record in this batch names. */
  leaderChange: number | null;
  /** Decoded metadata records (data batches). */
  records: MetadataRecord[];
}

export interface NodeSnapshot {
  /** The snapshot id: its end offset (exclusive) and epoch. */
  offset: bigint;
  epoch: number;
  /** The image's records, or null with `error` when the file does not decode. */
  records: MetadataRecord[] | null;
  error?: string;
}

export interface NodeLog {
  nodeId: number;
  startOffset: bigint;
  endOffset: bigint;
  batches: LogBatch[];
  quorumState: ElectionState | null;
  /** Its snapshot files (`<offset>-<epoch>.checkpoint`), ascending. */
  snapshots?: NodeSnapshot[];
}

const SNAPSHOT_FILE = /^(\d{20})-(\d{10})\.checkpoint$/;

export function decodeLogBatches(buf: Buffer): LogBatch[] {
  const out: LogBatch[] = [];
  for (const b of splitBatches(buf, { checkCrc: true })) {
    let leaderChange: number | null = null;
    const records: MetadataRecord[] = [];
    for (const r of readRecords(b)) {
      if (b.isControlBatch) {
        if (parseControlRecordType(r.key) === ControlRecordType.LEADER_CHANGE && r.value) {
          const m = readLeaderChangeMessage(new Reader(r.value), 0);
          leaderChange = m.leaderId;
        }
      } else if (r.value) {
        const rec = decodeMetadataRecord(r.value);
        if (rec) records.push(rec);
      }
    }
    out.push({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch: b.partitionLeaderEpoch, control: b.isControlBatch, bytes: Buffer.from(b.bytes), leaderChange, records });
  }
  return out;
}

/**
 * A controller's metadata log and quorum-state, read from `<metadataDir>/__cluster_metadata-0`
 * after its process has stopped (recovery drops a torn last batch, as a restart would).
 */
export function readControllerLog(nodeId: number, metadataDir: string, voterIds: readonly number[]): NodeLog {
  const dir = path.join(metadataDir, METADATA_PARTITION_DIR);
  if (!fs.existsSync(dir)) return { nodeId, startOffset: 0n, endOffset: 0n, batches: [], quorumState: null };
  const log = UnifiedLog.load({
    dir,
    tp: { topic: METADATA_TOPIC_NAME, partition: 0 },
    config: logConfig({ segmentBytes: 16 * 1024 * 1024, retentionMs: -1, retentionBytes: -1 }),
    hadCleanShutdown: false,
  });
  try {
    const snapshots: NodeSnapshot[] = [];
    for (const name of fs.readdirSync(dir).sort()) {
      const m = SNAPSHOT_FILE.exec(name);
      if (!m) continue;
      const snap: NodeSnapshot = { offset: BigInt(m[1]), epoch: Number(m[2]), records: null };
      try {
        snap.records = readSnapshotRecords(fs.readFileSync(path.join(dir, name))).records;
      } catch (err) {
        snap.error = (err as Error).message;
      }
      snapshots.push(snap);
    }
    snapshots.sort((a, b) => (a.offset === b.offset ? a.epoch - b.epoch : a.offset < b.offset ? -1 : 1));
    // Where the node's log starts on a restart (UnifiedRaftLog): past its end at the latest
    // snapshot, else at the earliest snapshot above the segments' start.
    const latest = snapshots[snapshots.length - 1];
    let start = log.logStartOffset;
    let end = log.logEndOffset;
    if (latest && latest.offset > log.logEndOffset) start = end = latest.offset;
    else if (snapshots[0] && snapshots[0].offset > start) start = snapshots[0].offset;
    const batches: LogBatch[] = [];
    let offset = start;
    while (offset < end) {
      const data = log.read(offset, 1 << 20, { isolation: 'LOG_END', minOneMessage: true });
      const buf = Buffer.concat(data.records);
      if (buf.length === 0) break;
      const got = decodeLogBatches(buf);
      batches.push(...got.filter((b) => b.lastOffset >= start));
      offset = got[got.length - 1].lastOffset + 1n;
    }
    const quorumState = fs.existsSync(path.join(dir, QUORUM_STATE_FILE_NAME)) ? FileQuorumStateStore.inDir(dir, { voterIds: [...voterIds] }).read() : null;
    return { nodeId, startOffset: start, endOffset: end, batches, quorumState, snapshots };
  } finally {
    log.close();
  }
}

export type QuorumOp =
  | { kind: 'create'; topic: string }
  | { kind: 'delete'; topic: string }
  | { kind: 'alter'; topic: string; key: string; value: string };

export interface OpOutcome {
  op: QuorumOp;
  /** The test's clock (ms) when the request was sent and when its answer (or failure) came. */
  sentAt: number;
  doneAt: number;
  /** true: answered with error code 0. false: an error, a timeout or a lost connection (it may or may not have been applied). */
  acked: boolean;
}

export interface CheckInput {
  logs: readonly NodeLog[];
  /** The final leader's high watermark (DescribeQuorum after the heal, every voter caught up). */
  highWatermark: bigint;
  ops: readonly OpOutcome[];
  /** Topic names starting with this belong to the run: any of them in the log must be one of `ops`. */
  topicPrefix: string;
}

export interface CheckResult {
  violations: string[];
  /** The agreed batches below the high watermark. */
  committed: LogBatch[];
  epochLeaders: Map<number, number>;
  acked: number;
  failedApplied: number;
  failedAbsent: number;
  /** The highest log start among the nodes: the logs are compared from there. */
  base: bigint;
  /** Acknowledged operations found nowhere that the snapshot at `base` explains (applied, then undone, below it). */
  beforeSnapshot: number;
  /** The records of the snapshot ending at `base` (empty when `base` is 0): the state the committed batches start from. */
  snapshotRecords: MetadataRecord[];
}

const opName = (op: QuorumOp): string => (op.kind === 'alter' ? `alter ${op.topic} ${op.key}=${op.value}` : `${op.kind} ${op.topic}`);

export function checkQuorumRun(input: CheckInput): CheckResult {
  const violations: string[] = [];
  const { logs, highWatermark: hw } = input;

  // (i) One leader per epoch; every epoch opens with its LeaderChange.
  const epochLeaders = new Map<number, number>();
  const leaderSeenAt = new Map<number, string>();
  // The logs are compared from the highest log start; a snapshot ending there covers what is below.
  const base = logs.reduce((m, l) => (l.startOffset > m ? l.startOffset : m), 0n);
  let snapshot: NodeSnapshot | null = null;
  if (base > 0n) {
    const held = logs.flatMap((l) => (l.snapshots ?? []).filter((x) => x.offset === base).map((x) => ({ node: l.nodeId, x })));
    const good = held.find((h) => h.x.records !== null);
    if (good) snapshot = good.x;
    else violations.push(`the logs are compared from offset ${base} (the highest log start) but no node holds a readable snapshot ending there${held.length ? ` (${held.map((h) => `node ${h.node}: ${h.x.error}`).join('; ')})` : ''}`);
    for (const h of held) if (h.x.records === null && good) violations.push(`node ${h.node}: snapshot ${h.x.offset}-${h.x.epoch} does not decode: ${h.x.error}`);
    if (hw < base) violations.push(`the high watermark ${hw} is below the highest log start ${base} (a snapshot of uncommitted records)`);
  }
  for (const l of logs) {
    let lastEpoch = -1;
    for (const b of l.batches) {
      if (b.epoch < lastEpoch) violations.push(`node ${l.nodeId}: epoch goes down from ${lastEpoch} to ${b.epoch} at offset ${b.baseOffset}`);
      if (b.epoch > lastEpoch && b.leaderChange === null && !(l.startOffset > 0n && lastEpoch === -1)) {
        violations.push(`node ${l.nodeId}: epoch ${b.epoch} opens at offset ${b.baseOffset} with a ${b.control ? 'control' : 'data'} batch, not its LeaderChange`);
      }
      if (b.leaderChange !== null) {
        if (b.epoch === lastEpoch) violations.push(`node ${l.nodeId}: a second LeaderChange in epoch ${b.epoch} at offset ${b.baseOffset}`);
        const known = epochLeaders.get(b.epoch);
        if (known === undefined) {
          epochLeaders.set(b.epoch, b.leaderChange);
          leaderSeenAt.set(b.epoch, `node ${l.nodeId} offset ${b.baseOffset}`);
        } else if (known !== b.leaderChange) {
          violations.push(`epoch ${b.epoch} had two leaders: ${known} (${leaderSeenAt.get(b.epoch)}) and ${b.leaderChange} (node ${l.nodeId} offset ${b.baseOffset})`);
        }
      }
      if (b.epoch > lastEpoch) lastEpoch = b.epoch;
    }
  }
  const stateLeaders = new Map<number, { leader: number; node: number }>();
  for (const l of logs) {
    const s = l.quorumState;
    if (!s || s.leaderId < 0) continue;
    const fromLog = epochLeaders.get(s.epoch);
    if (fromLog !== undefined && fromLog !== s.leaderId) violations.push(`node ${l.nodeId}: quorum-state names leader ${s.leaderId} for epoch ${s.epoch}, the logs' LeaderChange names ${fromLog}`);
    const other = stateLeaders.get(s.epoch);
    if (other && other.leader !== s.leaderId) violations.push(`quorum-state files disagree on epoch ${s.epoch}: node ${other.node} says leader ${other.leader}, node ${l.nodeId} says ${s.leaderId}`);
    stateLeaders.set(s.epoch, { leader: s.leaderId, node: l.nodeId });
  }

  // (ii) Log matching: same (offset, epoch) -> same batch, and the same history before it (from `base`).
  for (const l of logs) {
    const across = l.batches.find((b) => b.baseOffset < base && b.lastOffset >= base);
    if (across) violations.push(`node ${l.nodeId}: its batch ${across.baseOffset}-${across.lastOffset} spans the highest log start ${base} (a snapshot inside a batch)`);
  }
  const fromBase = logs.map((l) => ({ ...l, batches: l.batches.filter((b) => b.baseOffset >= base) }));
  const byOffset = fromBase.map((l) => new Map(l.batches.map((b) => [b.baseOffset, b])));
  for (let i = 0; i < fromBase.length; i++) {
    for (let j = i + 1; j < fromBase.length; j++) {
      const a = fromBase[i];
      const bMap = byOffset[j];
      let lastShared = -1n;
      for (const x of a.batches) {
        const y = bMap.get(x.baseOffset);
        if (y && y.epoch === x.epoch) {
          if (!y.bytes.equals(x.bytes)) violations.push(`nodes ${a.nodeId} and ${logs[j].nodeId} hold different batches at offset ${x.baseOffset} in epoch ${x.epoch}`);
          lastShared = x.baseOffset;
        }
      }
      for (const x of a.batches) {
        if (x.baseOffset > lastShared) break;
        const y = bMap.get(x.baseOffset);
        if (!y || !y.bytes.equals(x.bytes)) {
          violations.push(`nodes ${a.nodeId} and ${logs[j].nodeId} share the batch at ${lastShared} but differ before it, at offset ${x.baseOffset} (epochs ${x.epoch} / ${y?.epoch ?? 'none'})`);
          break;
        }
      }
    }
  }
  // The committed prefix: identical on every node.
  const prefixOf = (l: NodeLog) => l.batches.filter((b) => b.lastOffset < hw);
  const reference = fromBase.length ? prefixOf(fromBase[0]) : [];
  const committed = reference;
  for (const l of fromBase) {
    if (l.endOffset < hw) violations.push(`node ${l.nodeId}: log ends at ${l.endOffset}, below the high watermark ${hw}`);
    const p = prefixOf(l);
    if (p.length !== reference.length || p.some((b, k) => !b.bytes.equals(reference[k].bytes))) {
      const k = p.findIndex((b, n) => !reference[n] || !b.bytes.equals(reference[n].bytes));
      violations.push(`node ${l.nodeId}: committed prefix (below ${hw}) differs from node ${logs[0].nodeId}'s${k >= 0 ? ` from offset ${p[k].baseOffset}` : ` (${p.length} batches against ${reference.length})`}`);
    }
  }
  if (reference.length && reference[reference.length - 1].lastOffset + 1n !== hw && hw > 0n) {
    violations.push(`the high watermark ${hw} is not at a batch boundary of the committed log (last committed batch ends at ${reference[reference.length - 1].lastOffset})`);
  }
  if (!reference.length && hw > base) violations.push(`no committed batch between the highest log start ${base} and the high watermark ${hw}`);

  // (iii) The run's operations in the committed prefix.
  const created = new Map<string, { offset: bigint; topicId: string }[]>();
  const removed = new Map<string, bigint[]>();
  const configs = new Map<string, bigint[]>();
  for (const b of committed) {
    for (const r of b.records) {
      if (r.type === 'TopicRecord') created.set(r.data.name, [...(created.get(r.data.name) ?? []), { offset: b.baseOffset, topicId: r.data.topicId }]);
      else if (r.type === 'RemoveTopicRecord') removed.set(r.data.topicId, [...(removed.get(r.data.topicId) ?? []), b.baseOffset]);
      else if (r.type === 'ConfigRecord' && r.data.resourceType === 2) {
        const k = `${r.data.resourceName}\u0000${r.data.name}\u0000${r.data.value}`;
        configs.set(k, [...(configs.get(k) ?? []), b.baseOffset]);
      }
    }
  }
  // The snapshot at `base`: the topics and topic configs then (placed at base - 1, before every batch).
  const snapTopics = new Map<string, string>(); // name -> topic id
  const snapConfigs = new Map<string, string | null>(); // topic \0 key -> value
  for (const r of snapshot?.records ?? []) {
    if (r.type === 'TopicRecord') snapTopics.set(r.data.name, r.data.topicId);
    else if (r.type === 'ConfigRecord' && r.data.resourceType === 2) snapConfigs.set(`${r.data.resourceName}\u0000${r.data.name}`, r.data.value);
  }
  const inSnapshot = base - 1n;
  for (const [name, topicId] of snapTopics) created.set(name, [{ offset: inSnapshot, topicId }, ...(created.get(name) ?? [])]);
  for (const [k, v] of snapConfigs) {
    if (v === null) continue;
    const key = `${k}\u0000${v}`;
    configs.set(key, [inSnapshot, ...(configs.get(key) ?? [])]);
  }
  const offsetsOf = (op: QuorumOp): bigint[] => {
    if (op.kind === 'create') return (created.get(op.topic) ?? []).map((c) => c.offset);
    if (op.kind === 'delete') return (created.get(op.topic) ?? []).flatMap((c) => removed.get(c.topicId) ?? []);
    return configs.get(`${op.topic}\u0000${op.key}\u0000${op.value}`) ?? [];
  };
  const deletesAsked = new Set(input.ops.filter((o) => o.op.kind === 'delete').map((o) => o.op.topic));
  /** An operation found nowhere that could have been applied below `base` and undone there too. */
  const explainedBySnapshot = (op: QuorumOp): boolean => {
    if (base === 0n) return false;
    const gone = !snapTopics.has(op.topic) && !(created.get(op.topic) ?? []).length;
    if (op.kind === 'create') return gone && deletesAsked.has(op.topic) && offsetsOf({ kind: 'delete', topic: op.topic }).length === 0;
    if (op.kind === 'delete') return gone;
    if (gone) return true;
    const now = snapConfigs.get(`${op.topic}\u0000${op.key}`);
    return snapTopics.has(op.topic) && now !== undefined && now !== op.value;
  };
  let beforeSnapshot = 0;
  let acked = 0;
  let failedApplied = 0;
  let failedAbsent = 0;
  const placed: { o: OpOutcome; offset: bigint }[] = [];
  const asked = new Set<string>();
  for (const o of input.ops) {
    if (o.op.kind === 'create') asked.add(o.op.topic);
    const at = offsetsOf(o.op);
    if (o.acked) {
      acked++;
      if (at.length === 0 && explainedBySnapshot(o.op)) {
        beforeSnapshot++;
        continue;
      }
      if (at.length !== 1) violations.push(`acknowledged ${opName(o.op)} is in the committed log ${at.length} times${at.length ? ` (offsets ${at.join(', ')})` : ''}`);
      if (at.length >= 1) placed.push({ o, offset: at[0] });
    } else {
      if (at.length > 1) violations.push(`unacknowledged ${opName(o.op)} is in the committed log ${at.length} times (offsets ${at.join(', ')})`);
      if (at.length === 0) failedAbsent++;
      else failedApplied++;
    }
  }
  for (const [name, cs] of created) {
    if (name.startsWith(input.topicPrefix) && !asked.has(name)) violations.push(`topic ${name} is in the committed log (offset ${cs[0].offset}) but was never asked for`);
    for (const c of cs) {
      const rm = removed.get(c.topicId) ?? [];
      for (const [k, offs] of configs) {
        if (!k.startsWith(`${name}\u0000`)) continue;
        for (const off of offs) {
          if (off < c.offset) violations.push(`topic ${name}: a config change at ${off} before its TopicRecord at ${c.offset}`);
          if (rm.length && off > rm[0]) violations.push(`topic ${name}: a config change at ${off} after its removal at ${rm[0]}`);
        }
      }
      for (const r of rm) if (r < c.offset) violations.push(`topic ${name}: removed at ${r} before its TopicRecord at ${c.offset}`);
    }
  }
  // Real-time order: an operation acknowledged before another was sent precedes it in the log.
  placed.sort((x, y) => (x.offset < y.offset ? -1 : x.offset > y.offset ? 1 : 0));
  // Operations at one offset (the snapshot's, or one batch) are not ordered among themselves.
  let minAckAfter = Infinity;
  let minAckOp: OpOutcome | null = null;
  for (let k = placed.length - 1; k >= 0; ) {
    let g = k;
    while (g > 0 && placed[g - 1].offset === placed[k].offset) g--;
    for (let n = g; n <= k; n++) {
      const p = placed[n];
      if (minAckOp && minAckAfter < p.o.sentAt) {
        violations.push(`${opName(minAckOp.op)} was acknowledged (t=${minAckAfter.toFixed(1)}) before ${opName(p.o.op)} was sent (t=${p.o.sentAt.toFixed(1)}) but sits after it in the log`);
      }
    }
    for (let n = g; n <= k; n++) {
      if (placed[n].o.doneAt < minAckAfter) {
        minAckAfter = placed[n].o.doneAt;
        minAckOp = placed[n].o;
      }
    }
    k = g - 1;
  }
  return { violations, committed, epochLeaders, acked, failedApplied, failedAbsent, base, beforeSnapshot, snapshotRecords: snapshot?.records ?? [] };
}

/** Every log's offsets holding a TopicRecord named `topic`, committed or not (an uncommitted tail that survived is found too). */
export function topicRecordsAnywhere(logs: readonly NodeLog[], topic: string): { nodeId: number; offset: bigint; epoch: number }[] {
  const out: { nodeId: number; offset: bigint; epoch: number }[] = [];
  for (const l of logs) for (const b of l.batches) for (const r of b.records) if (r.type === 'TopicRecord' && r.data.name === topic) out.push({ nodeId: l.nodeId, offset: b.baseOffset, epoch: b.epoch });
  return out;
}
