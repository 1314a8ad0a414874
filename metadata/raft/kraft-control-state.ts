/**
 * The kraft.version and voter set in force on one replica (Kafka's KRaftControlRecordStateMachine
 * with its LogHistory), read from the replica's own log: the snapshot at the log start (the
 * bootstrap checkpoint `00000000000000000000-0000000000.checkpoint` written by `krill storage
 * format --standalone / --initial-controllers`, or a later snapshot whose header batch carries a
 * KRaftVersionRecord and a VotersRecord), then every KRaftVersion / Voters control record in the log.
 *
 * Owns: the history (offset -> voter set, offset -> kraft.version) of the log as it is now.
 *
 * Invariants (after `sync()`, which RaftNode calls after every change to the log):
 * - the voter set in force is the latest one in the log, committed or not (Kafka's rule); a set
 *   from the snapshot at the log start is at offset (snapshot end - 1), so the bootstrap
 *   checkpoint's is at -1; without any, it is the static `controller.quorum.voters` at -1;
 * - entries at or above the log end are dropped, so a truncation reverts to the set before it;
 * - a log start that moved (a snapshot loaded, older batches deleted) rebuilds the history from the
 *   snapshot there (keeping the latest known entry below it when the snapshot has none).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { splitBatches } from '../../protocol/records/record-batch';
import { nodeFs, writeFileAtomic } from '../../storage/fs';
import type { RaftLog } from './raft-log';
import { readRecords } from '../../protocol/records/record';
import { KRAFT_VERSION_0, bootstrapCheckpoint, decodeKRaftControlRecord, readSnapshotControlState, VoterSet } from './voter-set';

export interface HistoryEntry<T> {
  offset: bigint;
  value: T;
}

export class KRaftControlState {
  private voterHistory: HistoryEntry<VoterSet>[] = [];
  private versionHistory: HistoryEntry<number>[] = [];
  /** Offsets below this were read. */
  private nextOffset = 0n;
  private loadedStart: bigint | null = null;

  constructor(
    private readonly log: RaftLog,
    /** `controller.quorum.voters` (empty for a dynamic quorum). */
    private readonly staticVoters: VoterSet,
  ) {
    this.sync();
  }

  /** Brings the history in line with the log (after appends, truncations and snapshot loads). */
  sync(): void {
    const start = this.log.startOffset();
    if (this.loadedStart !== start) this.reload(start);
    const end = this.log.endOffset().offset;
    if (end < this.nextOffset) {
      this.voterHistory = this.voterHistory.filter((e) => e.offset < end);
      this.versionHistory = this.versionHistory.filter((e) => e.offset < end);
      this.nextOffset = end;
    }
    while (this.nextOffset < end) {
      if (!this.observe(this.log.read(this.nextOffset, 1 << 20))) break;
    }
  }

  /**
   * Takes the kraft control records of `batches` (record batches starting at or before the next
   * unread offset) and moves past them; false when they bring nothing new. RaftNode hands in what it
   * just appended as a follower, so the log is not read back.
   */
  observe(batches: Buffer): boolean {
    const split = splitBatches(batches);
    if (split.length === 0 || split[0].baseOffset > this.nextOffset) return false;
    const last = split[split.length - 1].lastOffset;
    if (last < this.nextOffset) return false;
    for (const b of split) {
      if (b.lastOffset < this.nextOffset || !b.isControlBatch) continue;
      for (const r of readRecords(b)) {
        const record = r.offset < this.nextOffset ? null : decodeKRaftControlRecord(r.key, r.value);
        if (!record) continue;
        if (record.type === 'VOTERS') this.voterHistory.push({ offset: r.offset, value: record.voters });
        else this.versionHistory.push({ offset: r.offset, value: record.kraftVersion });
      }
    }
    this.nextOffset = last + 1n;
    return true;
  }

  /** The leader appended a batch of data records (no control records) over [from, to): nothing to read. */
  skipDataAppend(from: bigint, to: bigint): void {
    if (this.nextOffset === from && this.loadedStart === this.log.startOffset()) this.nextOffset = to;
  }

  private reload(start: bigint): void {
    const before = { voters: this.lastEntryBelow(this.voterHistory, start), version: this.lastEntryBelow(this.versionHistory, start) };
    this.voterHistory = [];
    this.versionHistory = [];
    const snap = this.snapshotAtStart(start);
    if (snap) {
      const data = this.log.readSnapshot(snap);
      const state = data ? readSnapshotControlState(data) : { kraftVersion: null, voters: null };
      if (state.voters) this.voterHistory.push({ offset: snap.offset - 1n, value: state.voters });
      else if (before.voters) this.voterHistory.push(before.voters);
      if (state.kraftVersion !== null) this.versionHistory.push({ offset: snap.offset - 1n, value: state.kraftVersion });
      else if (before.version) this.versionHistory.push(before.version);
    }
    this.nextOffset = start;
    this.loadedStart = start;
  }

  private snapshotAtStart(start: bigint): { offset: bigint; epoch: number } | null {
    const earliest = this.log.earliestSnapshotId();
    if (earliest && earliest.offset === start) return earliest;
    const latest = this.log.latestSnapshotId();
    if (latest && latest.offset === start) return latest;
    return null;
  }

  private lastEntryBelow<T>(h: HistoryEntry<T>[], offset: bigint): HistoryEntry<T> | null {
    let found: HistoryEntry<T> | null = null;
    for (const e of h) if (e.offset < offset) found = e;
    return found;
  }

  /** Kafka's lastVoterSetEntry: the set in force and its offset (-1: the checkpoint or the static config). */
  lastVoterSetEntry(): HistoryEntry<VoterSet> {
    return this.voterHistory[this.voterHistory.length - 1] ?? { offset: -1n, value: this.staticVoters };
  }

  lastVoterSet(): VoterSet {
    return this.lastVoterSetEntry().value;
  }

  /** Whether the voter set in force came from the log or a snapshot (not the static config). */
  hasVoterSetInLog(): boolean {
    return this.voterHistory.length > 0;
  }

  /** The voter set in force at `offset` (the latest entry at or below it). */
  voterSetAtOffset(offset: bigint): VoterSet {
    let found: VoterSet = this.staticVoters;
    for (const e of this.voterHistory) if (e.offset <= offset) found = e.value;
    return found;
  }

  /** Kafka's lastKraftVersion: the latest KRaftVersionRecord, else 0 (static voters). */
  lastKraftVersion(): number {
    return this.versionHistory[this.versionHistory.length - 1]?.value ?? KRAFT_VERSION_0;
  }
}

/** Kafka's bootstrap checkpoint name: snapshot id (0, 0). */
export const BOOTSTRAP_CHECKPOINT_FILE = `${'0'.repeat(20)}-${'0'.repeat(10)}.checkpoint`;

/**
 * Writes the bootstrap checkpoint (kraft.version 1 and `voters`, voter-set.ts bootstrapCheckpoint)
 * into a metadata partition directory (`<metadata.log.dir>/__cluster_metadata-0`), atomically, as
 * `kafka-storage.sh format --standalone / --initial-controllers` does. A log opened on the directory
 * then starts with that voter set in force.
 */
export function writeBootstrapCheckpoint(partitionDir: string, voters: VoterSet): string {
  fs.mkdirSync(partitionDir, { recursive: true });
  const file = path.join(partitionDir, BOOTSTRAP_CHECKPOINT_FILE);
  writeFileAtomic(nodeFs, file, bootstrapCheckpoint(voters));
  return file;
}
