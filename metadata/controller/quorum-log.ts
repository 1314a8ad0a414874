/**
 * The controller's view of a KRaft quorum (Kafka's RaftClient as QuorumController uses it): what
 * the controller needs from the replicated metadata log, and nothing about how it is replicated.
 * The network driver (metadata/raft/kafka-raft-client.ts, RaftNode over TCP) implements it for a
 * real cluster; metadata/controller/testing/raft-quorum-log.ts implements it over RaftNodes on the
 * deterministic simulator for tests.
 *
 * Also owns CommittedMetadataLog: the controller's in-memory copy of the committed batches in
 * quorum mode, served as the MetadataLog that subscribers replay and brokers fetch.
 *
 * Contract an implementation must keep (the controller relies on every point):
 * - the committed-batch feed delivers every committed batch exactly once, in offset order, from the
 *   start of the log, and never an uncommitted one; control batches (LeaderChange, ...) are
 *   delivered too, with no records, so the controller sees the epoch of each committed batch;
 * - `append` is only accepted from the leader; it resolves (with the batch's last offset) once the
 *   batch is committed, and rejects with NotLeaderError (raft-node.ts) when this node is not the
 *   leader, or once leadership of the epoch it was appended in is lost before the commit (the
 *   batch may still be committed later by another leader: the caller cannot know); any other
 *   rejection is a failure of the write itself and reaches the caller as it is;
 * - a leader change is reported whenever the epoch or the known leader changes (id -1: unknown),
 *   including this node becoming leader; `leader()` answers the latest reported state;
 * - every callback runs on the caller's event loop, never re-entrantly from inside `append`;
 * - snapshots (Kafka's handleLoadSnapshot / createSnapshot): when the log the feed would replay
 *   starts with a snapshot (a restart on a trimmed log, or a follower that downloaded one because it
 *   was behind the leader's log start), `onLoadSnapshot` hands over its records first, and the feed
 *   continues with the batch after the snapshot's end offset; `createSnapshot` (optional: a log
 *   without it takes no snapshots) stores the image records the controller wrote of the state it
 *   applied up to a committed batch boundary, and applies the retention.
 *
 * CommittedMetadataLog is bounded: once the controller takes or loads a snapshot it holds the
 * snapshot's records (the image's size) and the batches after it, not the history.
 */
import type { MetadataRecord } from '../metadata-records';
import type { MetadataBatch, MetadataLog, MetadataLogRead } from '../metadata-log';
import { encodeMetadataBatch } from '../metadata-log-store';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import type { OffsetAndEpoch } from '../raft/raft-log';

export { NotLeaderError } from '../raft/not-leader-error';

export interface CommittedBatch {
  /** The metadata records; empty for a control batch. */
  records: MetadataRecord[];
  /** Offset of the batch's last record (control records count). */
  lastOffset: bigint;
  /** The leader epoch the batch was appended in. */
  epoch: number;
  /** The batch's size in the log (metadata.log.max.record.bytes.between.snapshots counts it; estimated when absent). */
  sizeInBytes?: number;
  /** The batch's append timestamp, ms (a snapshot's lastContainedLogTimestamp). */
  appendTimestamp?: number;
}

/** A snapshot of the committed state below `id.offset`, as the records that rebuild its image. */
export interface LoadedSnapshot {
  id: OffsetAndEpoch;
  records: MetadataRecord[];
}

export interface QuorumLeader {
  /** The leader's node id, -1 when unknown. */
  id: number;
  epoch: number;
}

export interface QuorumLogListener {
  /** Kafka's handleCommit: one committed batch. */
  onCommit(batch: CommittedBatch): void;
  /** Kafka's handleLeaderChange. */
  onLeaderChange(leader: QuorumLeader): void;
  /** Kafka's handleLoadSnapshot: the state is now the snapshot's; the next batch follows id.offset - 1. */
  onLoadSnapshot(snapshot: LoadedSnapshot): void;
}

export interface QuorumLog {
  /** This controller's node id (a voter). */
  readonly localId: number;
  /** The leader as last reported. */
  leader(): QuorumLeader;
  /** Appends as the leader; resolves with the batch's last offset once committed. */
  append(records: MetadataRecord[]): Promise<bigint>;
  /**
   * Registers the (single) listener: the committed batches so far are delivered to it first,
   * then the current leader, then every new batch and leader change.
   */
  register(listener: QuorumLogListener): void;
  /**
   * Stores a snapshot: `records` rebuild the image of every committed batch below `id.offset` (a
   * batch boundary already delivered; id.epoch that batch's epoch); then the retention runs.
   */
  createSnapshot?(id: OffsetAndEpoch, records: readonly MetadataRecord[], lastContainedLogTimestamp: number): void;
}

/**
 * The committed batches as a MetadataLog (read-only: `append` throws; the controller adds batches
 * with `appendCommitted` as the quorum commits them). Offsets are the raft log's; control batches
 * are not kept, so they leave gaps that reads skip. Bounded by snapshots: after `compactTo` or
 * `resetToSnapshot` it keeps the snapshot's records (served by readAll as one batch ending at the
 * snapshot's end offset - 1) and the batches after it; `read` below the snapshot refuses with
 * OFFSET_OUT_OF_RANGE (a reader that far behind needs the snapshot, `snapshot`).
 */
export class CommittedMetadataLog implements MetadataLog {
  private batches: MetadataBatch[] = [];
  /** Past the last committed batch, control batches included. */
  private committedEnd = 0n;
  /** Past the last batch with records: what readers (brokers) can reach, so a long-poll past it waits. */
  private dataEnd = 0n;
  private snap: { endOffset: bigint; records: MetadataRecord[] } | null = null;

  appendCommitted(records: MetadataRecord[], lastOffset: bigint): void {
    if (lastOffset < this.committedEnd) throw new Error(`committed batch at ${lastOffset} is behind the committed end ${this.committedEnd}`);
    this.committedEnd = lastOffset + 1n;
    if (records.length === 0) return;
    this.batches.push({ records: [...records], lastOffset });
    this.dataEnd = lastOffset + 1n;
  }

  /** A snapshot was taken at `endOffset` (at or below the committed end): the batches below it go. */
  compactTo(endOffset: bigint, records: readonly MetadataRecord[]): void {
    if (endOffset > this.committedEnd) throw new Error(`snapshot end ${endOffset} is past the committed end ${this.committedEnd}`);
    this.snap = { endOffset, records: [...records] };
    this.batches = this.batches.filter((b) => b.lastOffset >= endOffset);
  }

  /** A snapshot was loaded: it replaces everything. */
  resetToSnapshot(endOffset: bigint, records: readonly MetadataRecord[]): void {
    this.snap = { endOffset, records: [...records] };
    this.batches = [];
    this.committedEnd = endOffset;
    this.dataEnd = endOffset;
  }

  /** The latest snapshot this log holds instead of the batches below it, if any. */
  get snapshot(): { endOffset: bigint; records: readonly MetadataRecord[] } | null {
    return this.snap;
  }

  /** The first offset `read` can serve. */
  get logStartOffset(): bigint {
    return this.snap?.endOffset ?? 0n;
  }

  /** How many batches are held (besides the snapshot): bounded by the snapshot interval. */
  get batchCount(): number {
    return this.batches.length;
  }

  readAll(): MetadataBatch[] {
    const out = this.batches.map((b) => ({ records: [...b.records], lastOffset: b.lastOffset }));
    if (this.snap && this.snap.records.length > 0) out.unshift({ records: [...this.snap.records], lastOffset: this.snap.endOffset - 1n });
    return out;
  }

  append(): bigint {
    throw new Error('the quorum metadata log is written through the quorum, not appended to directly');
  }

  /**
   * The offset after the last batch with records (control batches are not served, so a reader
   * that has everything sits here; the raft log's end may be past it by trailing control batches).
   */
  get logEndOffset(): bigint {
    return this.dataEnd;
  }

  read(offset: bigint, maxBytes: number): MetadataLogRead {
    if (offset < this.logStartOffset) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${offset} is below the log start ${this.logStartOffset}: the snapshot ending there covers it`);
    }
    const records: Buffer[] = [];
    let size = 0;
    for (const b of this.batches) {
      if (b.lastOffset < offset) continue;
      const buf = encodeMetadataBatch(b.records, b.lastOffset - BigInt(b.records.length) + 1n);
      if (size > 0 && size + buf.length > maxBytes) break;
      records.push(buf);
      size += buf.length;
    }
    return { records, sizeInBytes: size };
  }

  close(): void {}
}
