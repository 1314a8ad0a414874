/**
 * The replicated log of the consensus core on disk (Kafka's KafkaMetadataLog): a RaftLog over the
 * same UnifiedLog the metadata log store uses (`<metadata.log.dir>/__cluster_metadata-0`: Kafka's
 * segment format, leader-epoch checkpoint, recovery), plus snapshot files beside the segments,
 * named as Kafka names them: `%020d-%010d.checkpoint` (end offset, epoch). A quorum controller's
 * metadata log (broker/controller/controller-server.ts). The segments have no time or size
 * retention of their own: they go only below a snapshot (deleteBeforeSnapshot), which the raft
 * client's cleanSnapshots (raft-log.ts) calls as metadata.max.retention.bytes / .ms say.
 *
 * Invariants: every append and truncation is fsynced before it returns, as `RaftLog` requires; a
 * snapshot file is written as `.checkpoint.part`, fsynced and renamed, so a crash leaves either no
 * snapshot or a whole one (a leftover `.part` is deleted at load); the log start offset is the
 * earliest snapshot's end offset once the log was trimmed to it (restored at load from the
 * snapshot files, since UnifiedLog alone does not persist it); the high watermark is not persisted
 * (as in Kafka, it is learned again from the leader) and never moves backwards while open.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../../common/logger';
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import { logConfig } from '../../storage/log-config';
import { METADATA_TOPIC_NAME } from '../../storage/log-manager';
import { UnifiedLog } from '../../storage/unified-log';
import { nodeFs, writeFully } from '../../storage/fs';
import { compareOffsetAndEpoch, type LogAppendInfo, type OffsetAndEpoch, type RaftLog } from './raft-log';

const SNAPSHOT_SUFFIX = '.checkpoint';
const PART_SUFFIX = '.part';
const SNAPSHOT_NAME = /^(\d{20})-(\d{10})\.checkpoint$/;

/** Kafka's SnapshotPath file name for a snapshot id. */
export function snapshotFileName(id: OffsetAndEpoch): string {
  return `${id.offset.toString().padStart(20, '0')}-${id.epoch.toString().padStart(10, '0')}${SNAPSHOT_SUFFIX}`;
}

export interface UnifiedRaftLogOptions {
  /** The partition directory, e.g. `<metadata.log.dir>/__cluster_metadata-0`. */
  dir: string;
  logger?: Logger;
  segmentBytes?: number;
}

export class UnifiedRaftLog implements RaftLog {
  readonly dir: string;
  private readonly log: UnifiedLog;
  /** Ascending by end offset. */
  private snapshots: OffsetAndEpoch[] = [];
  private hwm: bigint;

  constructor(opts: UnifiedRaftLogOptions) {
    this.dir = opts.dir;
    fs.mkdirSync(this.dir, { recursive: true });
    for (const name of fs.readdirSync(this.dir)) {
      if (name.endsWith(SNAPSHOT_SUFFIX + PART_SUFFIX)) fs.rmSync(path.join(this.dir, name), { force: true });
      const m = SNAPSHOT_NAME.exec(name);
      if (m) this.snapshots.push({ offset: BigInt(m[1]), epoch: Number(m[2]) });
    }
    this.snapshots.sort((a, b) => (a.offset === b.offset ? a.epoch - b.epoch : a.offset < b.offset ? -1 : 1));
    this.log = UnifiedLog.load({
      dir: this.dir,
      tp: { topic: METADATA_TOPIC_NAME, partition: 0 },
      // No time or size retention: the log is trimmed only below snapshots (deleteBeforeSnapshot).
      config: logConfig({ segmentBytes: opts.segmentBytes ?? 16 * 1024 * 1024, retentionMs: -1, retentionBytes: -1 }),
      logger: opts.logger,
      hadCleanShutdown: false,
    });
    this.hwm = this.log.logStartOffset;
    // A snapshot beyond the log (a crash after a fetched snapshot was stored, before the log was
    // reset) restarts the log at it; otherwise the log starts at the earliest snapshot.
    if (!this.truncateToLatestSnapshot()) {
      const earliest = this.snapshots[0];
      if (earliest && earliest.offset > this.log.logStartOffset) {
        this.log.updateHighWatermark(earliest.offset);
        this.log.maybeIncrementLogStartOffset(earliest.offset, 'SnapshotGenerated');
      }
    }
    this.hwm = this.log.logStartOffset;
  }

  endOffset(): OffsetAndEpoch {
    return { offset: this.log.logEndOffset, epoch: this.lastFetchedEpoch() };
  }

  startOffset(): bigint {
    return this.log.logStartOffset;
  }

  lastFetchedEpoch(): number {
    const e = this.log.latestEpoch;
    if (e >= 0) return e;
    return this.latestSnapshotId()?.epoch ?? 0;
  }

  appendAsLeader(records: readonly SimpleRecord[], epoch: number, isControlBatch = false): LogAppendInfo {
    if (records.length === 0) throw new Error('appendAsLeader needs at least one record');
    const last = this.lastFetchedEpoch();
    if (epoch < last) throw new Error(`batch epoch ${epoch} is below the log's last epoch ${last}`);
    const batch = buildRecordBatch(records, { partitionLeaderEpoch: epoch, isControlBatch });
    const info = this.log.appendAsLeader(batch, { leaderEpoch: epoch, origin: 'coordinator' });
    this.log.flush();
    return { firstOffset: info.firstOffset, lastOffset: info.lastOffset };
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    const parsed = splitBatches(batches);
    if (parsed.length === 0) throw new Error('appendAsFollower needs at least one batch');
    const leo = this.log.logEndOffset;
    if (parsed[0].baseOffset !== leo) throw new Error(`batch at offset ${parsed[0].baseOffset} does not continue the log (end offset ${leo})`);
    let last = this.lastFetchedEpoch();
    for (const b of parsed) {
      if (b.partitionLeaderEpoch < last) throw new Error(`batch epoch ${b.partitionLeaderEpoch} is below the log's last epoch ${last}`);
      last = b.partitionLeaderEpoch;
    }
    const info = this.log.appendAsFollower(batches);
    this.log.flush();
    return { firstOffset: info.firstOffset, lastOffset: info.lastOffset };
  }

  read(offset: bigint, maxBytes: number): Buffer {
    if (offset >= this.log.logEndOffset) return Buffer.alloc(0);
    const data = this.log.read(offset, maxBytes, { isolation: 'LOG_END', minOneMessage: true });
    return data.records.length === 1 ? data.records[0] : Buffer.concat(data.records);
  }

  truncateTo(offset: bigint): void {
    if (offset < this.hwm) throw new Error(`truncation to ${offset} below the high watermark ${this.hwm}`);
    if (offset < this.log.logStartOffset) throw new Error(`truncation to ${offset} below the log start offset ${this.log.logStartOffset}`);
    if (offset < this.log.logEndOffset) {
      const first = splitBatches(this.read(offset, 1))[0];
      if (first && first.baseOffset !== offset) throw new Error(`truncation to ${offset} inside the batch ${first.baseOffset}..${first.lastOffset}`);
    }
    this.log.truncateTo(offset);
    this.log.flush();
  }

  truncateToEndOffset(endOffset: OffsetAndEpoch): bigint {
    const local = this.endOffsetForEpoch(endOffset.epoch);
    let to = local.offset < endOffset.offset ? local.offset : endOffset.offset;
    if (to > this.log.logEndOffset) to = this.log.logEndOffset;
    this.truncateTo(to);
    return this.log.logEndOffset;
  }

  endOffsetForEpoch(epoch: number): OffsetAndEpoch {
    const r = epoch < 0 ? undefined : this.log.endOffsetForEpoch(epoch);
    const found = r ? { offset: r.endOffset, epoch: r.epoch } : null;
    const earliest = this.earliestSnapshotId();
    if (found && earliest && found.offset === earliest.offset && found.epoch < earliest.epoch) return { ...earliest };
    return found ?? this.endOffset();
  }

  epochForOffset(offset: bigint): number | null {
    if (offset >= this.log.logEndOffset) return null;
    if (offset < this.log.logStartOffset) {
      const snap = this.snapshots.find((s) => s.offset === offset + 1n);
      return snap ? snap.epoch : null;
    }
    const b = splitBatches(this.read(offset, 1))[0];
    return b ? b.partitionLeaderEpoch : null;
  }

  highWatermark(): bigint {
    return this.hwm;
  }

  updateHighWatermark(offset: bigint): void {
    const leo = this.log.logEndOffset;
    const v = offset > leo ? leo : offset;
    if (v > this.hwm) {
      this.hwm = v;
      this.log.updateHighWatermark(v);
    }
  }

  flush(): void {
    this.log.flush();
  }

  latestSnapshotId(): OffsetAndEpoch | null {
    const s = this.snapshots[this.snapshots.length - 1];
    return s ? { ...s } : null;
  }

  earliestSnapshotId(): OffsetAndEpoch | null {
    const s = this.snapshots[0];
    return s ? { ...s } : null;
  }

  readSnapshot(id: OffsetAndEpoch): Buffer | null {
    if (!this.snapshots.some((s) => compareOffsetAndEpoch(s, id) === 0)) return null;
    try {
      return fs.readFileSync(path.join(this.dir, snapshotFileName(id)));
    } catch {
      return null;
    }
  }

  createSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    if (id.offset > this.hwm) throw new Error(`snapshot end offset ${id.offset} is above the high watermark ${this.hwm}`);
    if (id.offset < this.log.logStartOffset) throw new Error(`snapshot end offset ${id.offset} is below the log start offset ${this.log.logStartOffset}`);
    const epoch = id.offset === 0n ? 0 : this.epochForOffset(id.offset - 1n);
    if (epoch !== id.epoch) throw new Error(`snapshot id ${id.offset}/${id.epoch} does not match the log (epoch ${epoch} at ${id.offset - 1n})`);
    this.writeSnapshot(id, data);
  }

  storeFetchedSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    this.writeSnapshot(id, data);
  }

  private writeSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    if (this.snapshots.some((s) => compareOffsetAndEpoch(s, id) === 0)) return;
    const file = path.join(this.dir, snapshotFileName(id));
    const part = file + PART_SUFFIX;
    const fd = fs.openSync(part, 'w');
    try {
      writeFully(nodeFs, fd, data, 0);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(part, file);
    nodeFs.fsyncDirSync(this.dir);
    this.snapshots.push({ ...id });
    this.snapshots.sort((a, b) => (a.offset === b.offset ? a.epoch - b.epoch : a.offset < b.offset ? -1 : 1));
  }

  private deleteSnapshotsBefore(offset: bigint): void {
    for (const s of this.snapshots) if (s.offset < offset) fs.rmSync(path.join(this.dir, snapshotFileName(s)), { force: true });
    this.snapshots = this.snapshots.filter((s) => s.offset >= offset);
  }

  truncateToLatestSnapshot(): boolean {
    const latest = this.latestSnapshotId();
    if (!latest) return false;
    const leo = this.log.logEndOffset;
    const start = this.log.logStartOffset;
    const localEpoch = latest.offset === 0n || latest.offset > leo || latest.offset <= start ? null : this.epochForOffset(latest.offset - 1n);
    if (latest.offset > leo || (latest.offset > start && localEpoch !== latest.epoch)) {
      if (this.hwm > latest.offset) throw new Error(`the log disagrees with snapshot ${latest.offset}/${latest.epoch} below its high watermark ${this.hwm}`);
      this.log.truncateFullyAndStartAt(latest.offset);
      this.log.flush();
      this.hwm = latest.offset;
      this.deleteSnapshotsBefore(latest.offset);
      return true;
    }
    return false;
  }

  deleteBeforeSnapshot(id: OffsetAndEpoch): boolean {
    if (!this.snapshots.some((s) => compareOffsetAndEpoch(s, id) === 0)) return false;
    if (id.offset <= this.log.logStartOffset || id.offset > this.hwm) return false;
    if (id.offset < this.log.logEndOffset) {
      const b = splitBatches(this.read(id.offset, 1))[0];
      if (b && b.baseOffset !== id.offset) throw new Error(`snapshot end ${id.offset} is inside a batch`);
    }
    this.log.maybeIncrementLogStartOffset(id.offset, 'SnapshotGenerated');
    this.log.deleteOldSegments();
    this.deleteSnapshotsBefore(id.offset);
    return true;
  }

  snapshotIds(): OffsetAndEpoch[] {
    return this.snapshots.map((s) => ({ ...s }));
  }

  snapshotSize(id: OffsetAndEpoch): number | null {
    if (!this.snapshots.some((s) => compareOffsetAndEpoch(s, id) === 0)) return null;
    try {
      return fs.statSync(path.join(this.dir, snapshotFileName(id))).size;
    } catch {
      return null;
    }
  }

  sizeInBytes(): number {
    return this.log.size;
  }

  close(): void {
    this.log.flush();
    this.log.close();
  }
}
