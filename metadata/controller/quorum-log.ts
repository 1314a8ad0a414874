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
 * - every callback runs on the caller's event loop, never re-entrantly from inside `append`.
 */
import type { MetadataRecord } from '../metadata-records';
import type { MetadataBatch, MetadataLog, MetadataLogRead } from '../metadata-log';
import { encodeMetadataBatch } from '../metadata-log-store';

export { NotLeaderError } from '../raft/not-leader-error';

export interface CommittedBatch {
  /** The metadata records; empty for a control batch. */
  records: MetadataRecord[];
  /** Offset of the batch's last record (control records count). */
  lastOffset: bigint;
  /** The leader epoch the batch was appended in. */
  epoch: number;
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
}

/**
 * The committed batches as a MetadataLog (read-only: `append` throws; the controller adds batches
 * with `appendCommitted` as the quorum commits them). Offsets are the raft log's; control batches
 * are not kept, so they leave gaps that reads skip. Kept in memory whole (no snapshots yet).
 */
export class CommittedMetadataLog implements MetadataLog {
  private readonly batches: MetadataBatch[] = [];
  /** Past the last committed batch, control batches included. */
  private committedEnd = 0n;
  /** Past the last batch with records: what readers (brokers) can reach, so a long-poll past it waits. */
  private dataEnd = 0n;

  appendCommitted(records: MetadataRecord[], lastOffset: bigint): void {
    if (lastOffset < this.committedEnd) throw new Error(`committed batch at ${lastOffset} is behind the committed end ${this.committedEnd}`);
    this.committedEnd = lastOffset + 1n;
    if (records.length === 0) return;
    this.batches.push({ records: [...records], lastOffset });
    this.dataEnd = lastOffset + 1n;
  }

  readAll(): MetadataBatch[] {
    return this.batches.map((b) => ({ records: [...b.records], lastOffset: b.lastOffset }));
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
