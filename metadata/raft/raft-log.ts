/**
 * The replicated log under the consensus core (Kafka's ReplicatedLog): record batches in Kafka's
 * v2 format whose partitionLeaderEpoch is the epoch of the leader that appended them, a leader
 * epoch cache (epoch -> start offset, Kafka's LeaderEpochFileCache) derived from those batches, the
 * high watermark, and snapshots named by their id = (end offset, epoch of the last record before
 * it). `InMemoryRaftLog` implements it for tests and the simulation; `UnifiedRaftLog`
 * (unified-raft-log.ts) implements it on disk over the metadata log's UnifiedLog.
 *
 * Invariants: offsets are dense and start at startOffset (0, or a snapshot's end offset); batch
 * epochs never decrease along the log; the epoch cache has exactly one entry per epoch present,
 * with increasing epochs and start offsets; every append and truncation is durable when it
 * returns (the simulation's crash keeps it all); the high watermark never passes the log end and
 * never moves backwards while the log is open (a disk log does not persist it: after a restart it
 * is learned from the leader again), and truncation below it is a caller bug.
 */
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { splitBatches, type RecordBatch } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';

export interface OffsetAndEpoch {
  offset: bigint;
  epoch: number;
}

export function compareOffsetAndEpoch(a: OffsetAndEpoch, b: OffsetAndEpoch): number {
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1;
  return a.offset === b.offset ? 0 : a.offset < b.offset ? -1 : 1;
}

/** Kafka's ValidOffsetAndEpoch: the leader's verdict on a follower's (fetchOffset, lastFetchedEpoch). */
export type ValidOffsetAndEpoch =
  | { kind: 'VALID'; offsetAndEpoch: OffsetAndEpoch }
  | { kind: 'DIVERGING'; offsetAndEpoch: OffsetAndEpoch }
  | { kind: 'SNAPSHOT'; offsetAndEpoch: OffsetAndEpoch };

export interface LogAppendInfo {
  firstOffset: bigint;
  lastOffset: bigint;
}

export interface RaftLog {
  /** Log end offset and the epoch of the last batch (the latest snapshot's when the log is empty). */
  endOffset(): OffsetAndEpoch;
  startOffset(): bigint;
  lastFetchedEpoch(): number;
  /** Appends `records` as one batch at the end, stamped with `epoch` (a control batch for raft's own records). */
  appendAsLeader(records: readonly SimpleRecord[], epoch: number, isControlBatch?: boolean): LogAppendInfo;
  /** Appends batches fetched from the leader; they must start at the log end offset. */
  appendAsFollower(batches: Buffer): LogAppendInfo;
  /** Whole batches from the one holding `offset`, at least one if any, about `maxBytes`. */
  read(offset: bigint, maxBytes: number): Buffer;
  /** Removes every batch at or above `offset`. */
  truncateTo(offset: bigint): void;
  /** Truncates on a leader's DivergingEpoch; returns the new end offset. */
  truncateToEndOffset(endOffset: OffsetAndEpoch): bigint;
  /** Kafka's endOffsetForEpoch: the largest epoch <= `epoch` and the offset where it ended. */
  endOffsetForEpoch(epoch: number): OffsetAndEpoch;
  /** The epoch of the batch holding `offset` (the snapshot's for startOffset-1), or null if unknown. */
  epochForOffset(offset: bigint): number | null;
  highWatermark(): bigint;
  updateHighWatermark(offset: bigint): void;
  flush(): void;

  latestSnapshotId(): OffsetAndEpoch | null;
  earliestSnapshotId(): OffsetAndEpoch | null;
  readSnapshot(id: OffsetAndEpoch): Buffer | null;
  /** Stores a snapshot of the replicated state up to id.offset (at most the high watermark). */
  createSnapshot(id: OffsetAndEpoch, data: Buffer): void;
  /** Stores a snapshot fetched from the leader (not validated against the local log). */
  storeFetchedSnapshot(id: OffsetAndEpoch, data: Buffer): void;
  /**
   * When the latest snapshot ends beyond the log (or the log does not agree with it), drops the log
   * and restarts it at the snapshot's end offset; returns whether it did.
   */
  truncateToLatestSnapshot(): boolean;
  /** Moves the log start offset up to the snapshot's end offset, dropping older batches and snapshots. */
  deleteBeforeSnapshot(id: OffsetAndEpoch): boolean;
  /** Every snapshot's id, ascending. */
  snapshotIds(): OffsetAndEpoch[];
  /** A snapshot's size in bytes (null if there is none with that id). */
  snapshotSize(id: OffsetAndEpoch): number | null;
  /** The bytes the log's batches take (Kafka's log.size: what metadata.max.retention.bytes counts with the snapshots). */
  sizeInBytes(): number;
}

/** metadata.max.retention.bytes / metadata.max.retention.ms (negative: no limit). */
export interface SnapshotRetention {
  maxBytes: number;
  maxMs: number;
}

/** Kafka's defaults: 100 MiB and 7 days. */
export const DEFAULT_SNAPSHOT_RETENTION: SnapshotRetention = { maxBytes: 100 * 1024 * 1024, maxMs: 7 * 24 * 3600 * 1000 };

/**
 * Kafka's KafkaMetadataLog.maybeClean: the latest snapshot is always kept; walking the older ones
 * oldest first, a snapshot is deleted, with every batch before the next snapshot
 * (deleteBeforeSnapshot(next)), while the log's bytes plus the snapshots' exceed `maxBytes`, and
 * then while its lastContainedLogTimestamp (`timestampOf`, the SnapshotHeaderRecord's) is more than
 * `maxMs` before `now`. Stops at the first snapshot it keeps or cannot delete past (the next one is
 * above the high watermark). Returns whether it deleted anything.
 */
export function cleanSnapshots(log: RaftLog, retention: SnapshotRetention, now: number, timestampOf: (id: OffsetAndEpoch) => bigint | null): boolean {
  let cleaned = false;
  const walk = (shouldDelete: (id: OffsetAndEpoch) => boolean): void => {
    const ids = log.snapshotIds();
    for (let i = 0; i + 1 < ids.length; i++) {
      if (!shouldDelete(ids[i])) return;
      if (!log.deleteBeforeSnapshot(ids[i + 1])) return;
      cleaned = true;
    }
  };
  if (retention.maxBytes >= 0) {
    const sizes = new Map(log.snapshotIds().map((id) => [`${id.offset}/${id.epoch}`, log.snapshotSize(id) ?? 0]));
    let total = [...sizes.values()].reduce((a, b) => a + b, 0);
    walk((id) => {
      if (log.sizeInBytes() + total <= retention.maxBytes) return false;
      total -= sizes.get(`${id.offset}/${id.epoch}`) ?? 0;
      return true;
    });
  }
  if (retention.maxMs >= 0) {
    walk((id) => {
      const ts = timestampOf(id);
      return ts !== null && now - Number(ts) > retention.maxMs;
    });
  }
  return cleaned;
}

/**
 * The leader's check of a follower's fetch position (Kafka's ReplicatedLog.validateOffsetAndEpoch):
 * SNAPSHOT when the position is below the log start (or at it in another epoch), DIVERGING with the
 * leader's end offset for that epoch when the follower's log does not match, VALID otherwise.
 */
export function validateOffsetAndEpoch(log: RaftLog, offset: bigint, epoch: number): ValidOffsetAndEpoch {
  if (log.startOffset() === 0n && offset === 0n) return { kind: 'VALID', offsetAndEpoch: { offset: 0n, epoch: 0 } };
  const earliest = log.earliestSnapshotId();
  if (earliest && (offset < log.startOffset() || (offset === log.startOffset() && epoch !== earliest.epoch) || epoch < earliest.epoch)) {
    const latest = log.latestSnapshotId();
    if (!latest) throw new Error('an earliest snapshot exists without a latest one');
    return { kind: 'SNAPSHOT', offsetAndEpoch: latest };
  }
  const end = log.endOffsetForEpoch(epoch);
  if (end.epoch !== epoch || end.offset < offset) return { kind: 'DIVERGING', offsetAndEpoch: end };
  return { kind: 'VALID', offsetAndEpoch: { offset, epoch } };
}

interface StoredBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  epoch: number;
  buf: Buffer;
}

interface EpochEntry {
  epoch: number;
  startOffset: bigint;
}

export interface RaftRecord {
  offset: bigint;
  epoch: number;
  control: boolean;
  key: Buffer | null;
  value: Buffer | null;
}

/** The records of the batches in `buf` (for tests and state machines over the raw log). */
export function decodeRaftRecords(buf: Buffer): RaftRecord[] {
  const out: RaftRecord[] = [];
  for (const b of splitBatches(buf)) {
    for (const r of readRecords(b)) out.push({ offset: r.offset, epoch: b.partitionLeaderEpoch, control: b.isControlBatch, key: r.key, value: r.value });
  }
  return out;
}

export class InMemoryRaftLog implements RaftLog {
  private batches: StoredBatch[] = [];
  private epochs: EpochEntry[] = [];
  private logStart = 0n;
  private hwm = 0n;
  /** Ascending by end offset. */
  private snapshots: { id: OffsetAndEpoch; data: Buffer }[] = [];

  endOffset(): OffsetAndEpoch {
    return { offset: this.logEndOffset(), epoch: this.lastFetchedEpoch() };
  }

  private logEndOffset(): bigint {
    return this.batches.length ? this.batches[this.batches.length - 1].lastOffset + 1n : this.logStart;
  }

  startOffset(): bigint {
    return this.logStart;
  }

  lastFetchedEpoch(): number {
    if (this.epochs.length) return this.epochs[this.epochs.length - 1].epoch;
    return this.latestSnapshotId()?.epoch ?? 0;
  }

  appendAsLeader(records: readonly SimpleRecord[], epoch: number, isControlBatch = false): LogAppendInfo {
    if (records.length === 0) throw new Error('appendAsLeader needs at least one record');
    const base = this.logEndOffset();
    const buf = buildRecordBatch(records, { baseOffset: base, partitionLeaderEpoch: epoch, now: 0, isControlBatch });
    this.appendBatch({ baseOffset: base, lastOffset: base + BigInt(records.length) - 1n, epoch, buf });
    return { firstOffset: base, lastOffset: base + BigInt(records.length) - 1n };
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    const parsed: RecordBatch[] = splitBatches(batches);
    if (parsed.length === 0) throw new Error('appendAsFollower needs at least one batch');
    const first = parsed[0].baseOffset;
    for (const b of parsed) {
      this.appendBatch({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch: b.partitionLeaderEpoch, buf: Buffer.from(b.buf.subarray(b.offset, b.offset + b.sizeInBytes)) });
    }
    return { firstOffset: first, lastOffset: parsed[parsed.length - 1].lastOffset };
  }

  private appendBatch(b: StoredBatch): void {
    const leo = this.logEndOffset();
    if (b.baseOffset !== leo) throw new Error(`batch at offset ${b.baseOffset} does not continue the log (end offset ${leo})`);
    const last = this.lastFetchedEpoch();
    if (b.epoch < last) throw new Error(`batch epoch ${b.epoch} is below the log's last epoch ${last}`);
    this.batches.push(b);
    if (this.epochs.length === 0 || this.epochs[this.epochs.length - 1].epoch < b.epoch) this.epochs.push({ epoch: b.epoch, startOffset: b.baseOffset });
  }

  read(offset: bigint, maxBytes: number): Buffer {
    const out: Buffer[] = [];
    let size = 0;
    for (const b of this.batches) {
      if (b.lastOffset < offset) continue;
      if (out.length > 0 && size + b.buf.length > maxBytes) break;
      out.push(b.buf);
      size += b.buf.length;
    }
    return Buffer.concat(out);
  }

  truncateTo(offset: bigint): void {
    if (offset < this.hwm) throw new Error(`truncation to ${offset} below the high watermark ${this.hwm}`);
    if (offset < this.logStart) throw new Error(`truncation to ${offset} below the log start offset ${this.logStart}`);
    const kept: StoredBatch[] = [];
    for (const b of this.batches) {
      if (b.lastOffset < offset) kept.push(b);
      else if (b.baseOffset < offset) throw new Error(`truncation to ${offset} inside the batch ${b.baseOffset}..${b.lastOffset}`);
    }
    this.batches = kept;
    this.rebuildEpochs();
  }

  truncateToEndOffset(endOffset: OffsetAndEpoch): bigint {
    // Where our log stops agreeing: the end of that epoch here, or the leader's end of it if sooner.
    const local = this.endOffsetForEpoch(endOffset.epoch);
    let to = local.offset < endOffset.offset ? local.offset : endOffset.offset;
    if (to > this.logEndOffset()) to = this.logEndOffset();
    this.truncateTo(to);
    return this.logEndOffset();
  }

  endOffsetForEpoch(epoch: number): OffsetAndEpoch {
    const found = this.cacheEndOffsetFor(epoch);
    const earliest = this.earliestSnapshotId();
    if (found && earliest && found.offset === earliest.offset && found.epoch < earliest.epoch) return { ...earliest };
    return found ?? this.endOffset();
  }

  /** LeaderEpochFileCache.endOffsetFor; null is Kafka's (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET). */
  private cacheEndOffsetFor(epoch: number): OffsetAndEpoch | null {
    if (epoch < 0 || this.epochs.length === 0) return null;
    const latest = this.epochs[this.epochs.length - 1];
    if (epoch === latest.epoch) return { offset: this.logEndOffset(), epoch };
    const higher = this.epochs.find((e) => e.epoch > epoch);
    if (!higher) return null;
    let floor: EpochEntry | undefined;
    for (const e of this.epochs) if (e.epoch <= epoch) floor = e;
    return { offset: higher.startOffset, epoch: floor ? floor.epoch : epoch };
  }

  private rebuildEpochs(): void {
    this.epochs = [];
    for (const b of this.batches) {
      if (this.epochs.length === 0 || this.epochs[this.epochs.length - 1].epoch < b.epoch) this.epochs.push({ epoch: b.epoch, startOffset: b.baseOffset });
    }
  }

  epochForOffset(offset: bigint): number | null {
    if (offset >= this.logEndOffset()) return null;
    if (offset < this.logStart) {
      const snap = this.snapshots.find((s) => s.id.offset === offset + 1n);
      return snap ? snap.id.epoch : null;
    }
    let epoch: number | null = null;
    for (const e of this.epochs) if (e.startOffset <= offset) epoch = e.epoch;
    return epoch;
  }

  highWatermark(): bigint {
    return this.hwm;
  }

  updateHighWatermark(offset: bigint): void {
    const leo = this.logEndOffset();
    const v = offset > leo ? leo : offset;
    if (v > this.hwm) this.hwm = v;
  }

  flush(): void {}

  latestSnapshotId(): OffsetAndEpoch | null {
    const s = this.snapshots[this.snapshots.length - 1];
    return s ? { ...s.id } : null;
  }

  earliestSnapshotId(): OffsetAndEpoch | null {
    const s = this.snapshots[0];
    return s ? { ...s.id } : null;
  }

  readSnapshot(id: OffsetAndEpoch): Buffer | null {
    return this.snapshots.find((s) => compareOffsetAndEpoch(s.id, id) === 0)?.data ?? null;
  }

  createSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    if (id.offset > this.hwm) throw new Error(`snapshot end offset ${id.offset} is above the high watermark ${this.hwm}`);
    if (id.offset < this.logStart) throw new Error(`snapshot end offset ${id.offset} is below the log start offset ${this.logStart}`);
    const epoch = id.offset === 0n ? 0 : this.epochForOffset(id.offset - 1n);
    if (epoch !== id.epoch) throw new Error(`snapshot id ${id.offset}/${id.epoch} does not match the log (epoch ${epoch} at ${id.offset - 1n})`);
    this.putSnapshot(id, data);
  }

  storeFetchedSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    this.putSnapshot(id, data);
  }

  private putSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    if (this.snapshots.some((s) => compareOffsetAndEpoch(s.id, id) === 0)) return;
    this.snapshots.push({ id: { ...id }, data: Buffer.from(data) });
    this.snapshots.sort((a, b) => (a.id.offset === b.id.offset ? 0 : a.id.offset < b.id.offset ? -1 : 1));
  }

  truncateToLatestSnapshot(): boolean {
    const latest = this.latestSnapshotId();
    if (!latest) return false;
    const leo = this.logEndOffset();
    const localEpoch = latest.offset === 0n ? 0 : this.epochForOffset(latest.offset - 1n);
    if (latest.offset > leo || (latest.offset > this.logStart && localEpoch !== latest.epoch)) {
      if (this.hwm > latest.offset) throw new Error(`the log disagrees with snapshot ${latest.offset}/${latest.epoch} below its high watermark ${this.hwm}`);
      this.batches = [];
      this.epochs = [];
      this.logStart = latest.offset;
      this.hwm = latest.offset;
      this.snapshots = this.snapshots.filter((s) => s.id.offset >= latest.offset);
      return true;
    }
    return false;
  }

  deleteBeforeSnapshot(id: OffsetAndEpoch): boolean {
    if (!this.readSnapshot(id) || id.offset <= this.logStart) return false;
    if (id.offset > this.hwm) return false;
    if (this.batches.some((b) => b.baseOffset < id.offset && b.lastOffset >= id.offset)) throw new Error(`snapshot end ${id.offset} is inside a batch`);
    this.batches = this.batches.filter((b) => b.baseOffset >= id.offset);
    this.rebuildEpochs();
    this.logStart = id.offset;
    this.snapshots = this.snapshots.filter((s) => s.id.offset >= id.offset);
    return true;
  }

  snapshotIds(): OffsetAndEpoch[] {
    return this.snapshots.map((s) => ({ ...s.id }));
  }

  snapshotSize(id: OffsetAndEpoch): number | null {
    return this.readSnapshot(id)?.length ?? null;
  }

  sizeInBytes(): number {
    return this.batches.reduce((n, b) => n + b.buf.length, 0);
  }

  /** Every batch as stored (tests). */
  batchesForTest(): readonly { baseOffset: bigint; lastOffset: bigint; epoch: number }[] {
    return this.batches.map((b) => ({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch: b.epoch }));
  }
}
