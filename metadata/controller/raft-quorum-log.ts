/**
 * RaftQuorumLog: the controller's QuorumLog (quorum-log.ts) over the network driver, KafkaRaftClient
 * (metadata/raft/kafka-raft-client.ts). It translates, nothing more: records are encoded with
 * encodeMetadataRecord into one raft batch per append, committed raft batches are decoded back
 * (control batches as empty record lists with their epoch), and the driver's NotControllerError
 * becomes the contract's NotLeaderError.
 *
 * Keeps every point of quorum-log.ts's contract:
 * - it listens to the client from construction (build it before `client.start()`), so the backlog a
 *   started client replays from the log start is buffered until `register`, which delivers it first,
 *   then the current leader, then every new batch and leader change, in the client's order;
 * - each committed batch is delivered once, in offset order (the client's guarantee; checked here too:
 *   a batch at or below the last delivered offset is dropped);
 * - `append` is refused with NotLeaderError unless the last reported leader is this node (and the
 *   client still leads that epoch); it resolves with the batch's last offset only after the batch was
 *   delivered to the listener; a NotControllerError from the client (not leader, leadership of the
 *   epoch lost before the commit, client closed) rejects it with NotLeaderError, anything else as it is;
 * - every callback runs from the client's listener microtasks, never from inside `append`;
 * - a snapshot the client hands over (onLoadSnapshot: at start, or downloaded by a follower) is
 *   decoded (readSnapshotRecords; a corrupt one stops this quorum log: nothing more is delivered)
 *   and delivered in its place in the feed (buffered before `register` like the batches, replacing
 *   whatever was buffered before it); the feed continues after its end offset; `createSnapshot`
 *   encodes the image records in Kafka's snapshot format and has the client store them.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { decodeMetadataRecord, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';
import type { KafkaRaftClient, CommittedBatch as RaftCommittedBatch, RaftLeader, RaftSnapshot } from '../raft/kafka-raft-client';
import type { OffsetAndEpoch } from '../raft/raft-log';
import { readSnapshotRecords, writeSnapshotRecords } from '../snapshot/snapshot-records';
import { NotLeaderError, type CommittedBatch, type LoadedSnapshot, type QuorumLeader, type QuorumLog, type QuorumLogListener } from './quorum-log';

type FeedEvent = { kind: 'batch'; batch: CommittedBatch } | { kind: 'snapshot'; snapshot: LoadedSnapshot };

export class RaftQuorumLog implements QuorumLog {
  readonly localId: number;
  private listener: QuorumLogListener | null = null;
  /** Committed batches (and a loaded snapshot) received before `register`. */
  private backlog: FeedEvent[] = [];
  /** Set when a snapshot could not be decoded: nothing more is delivered. */
  private failed: Error | null = null;
  /** Past the last batch handed on (or buffered). */
  private nextOffset = -1n;
  private reported: QuorumLeader = { id: -1, epoch: 0 };
  /** Committed appends waiting for their batch to reach the listener. */
  private waiting: { offset: bigint; resolve: (offset: bigint) => void; reject: (err: Error) => void }[] = [];
  private readonly unlisten: () => void;
  private closed = false;

  constructor(private readonly client: KafkaRaftClient) {
    this.localId = client.nodeId;
    this.unlisten = client.addListener({
      onCommit: (batches) => this.onCommit(batches),
      onLeaderChange: (leader) => this.onLeaderChange(leader),
      onLoadSnapshot: (snapshot) => this.onLoadSnapshot(snapshot),
    });
  }

  leader(): QuorumLeader {
    return this.reported;
  }

  append(records: MetadataRecord[]): Promise<bigint> {
    if (this.closed || this.reported.id !== this.localId || !this.client.isLeader || this.client.epoch !== this.reported.epoch) {
      return Promise.reject(new NotLeaderError(this.reported.epoch, this.reported.id));
    }
    let appended: Promise<bigint>;
    try {
      appended = this.client.append(records.map((r) => ({ value: encodeMetadataRecord(r), timestamp: Date.now() })));
    } catch (err) {
      return Promise.reject(err);
    }
    return appended.then(
      (offset) => {
        if (this.nextOffset > offset) return offset;
        if (this.closed) throw new NotLeaderError(this.reported.epoch, -1);
        return new Promise<bigint>((resolve, reject) => this.waiting.push({ offset, resolve, reject }));
      },
      (err: unknown) => {
        if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) throw new NotLeaderError(this.client.epoch, this.client.leader.id);
        throw err;
      },
    );
  }

  register(listener: QuorumLogListener): void {
    if (this.listener) throw new Error('one listener per quorum log');
    this.listener = listener;
    const backlog = this.backlog;
    this.backlog = [];
    for (const e of backlog) {
      if (e.kind === 'batch') this.deliver(e.batch);
      else this.deliverSnapshot(e.snapshot);
    }
    listener.onLeaderChange(this.reported);
  }

  createSnapshot(id: OffsetAndEpoch, records: readonly MetadataRecord[], lastContainedLogTimestamp: number): void {
    if (this.closed) throw new Error('the quorum log is closed');
    // With kraft.version 1 the voter set in force at the snapshot's end goes in its header batch
    // (KRaftVersionRecord + VotersRecord), so a replica starting from it knows the voters.
    const extraHeaderControlRecords = this.client.snapshotControlRecords(id.offset);
    this.client.createSnapshot(id, writeSnapshotRecords(records, { epoch: id.epoch, lastContainedLogTimestamp, extraHeaderControlRecords }));
  }

  /** Stops listening to the client; appends waiting for delivery are rejected. The client is the caller's. */
  close(): void {
    this.closed = true;
    this.unlisten();
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.reject(new NotLeaderError(this.reported.epoch, -1));
  }

  private onLoadSnapshot(raw: RaftSnapshot): void {
    if (this.closed || this.failed) return;
    let snapshot: LoadedSnapshot;
    try {
      snapshot = { id: { ...raw.id }, records: readSnapshotRecords(raw.data).records };
    } catch (err) {
      this.failed = err as Error;
      throw new Error(`snapshot ${raw.id.offset}/${raw.id.epoch} cannot be read, the controller stops following the quorum: ${(err as Error).message}`);
    }
    this.nextOffset = raw.id.offset;
    if (this.listener) this.deliverSnapshot(snapshot);
    else this.backlog = [{ kind: 'snapshot', snapshot }];
  }

  private deliverSnapshot(snapshot: LoadedSnapshot): void {
    this.listener!.onLoadSnapshot(snapshot);
    const last = snapshot.id.offset - 1n;
    const due = this.waiting.filter((w) => w.offset <= last);
    this.waiting = this.waiting.filter((w) => w.offset > last);
    for (const w of due) w.resolve(w.offset);
  }

  private onCommit(batches: readonly RaftCommittedBatch[]): void {
    if (this.closed || this.failed) return;
    for (const b of batches) {
      if (b.lastOffset < this.nextOffset) continue;
      const records: MetadataRecord[] = [];
      if (!b.isControl) {
        for (const r of b.records) {
          const rec = r.value === null ? null : decodeMetadataRecord(r.value);
          if (rec) records.push(rec);
        }
      }
      this.nextOffset = b.lastOffset + 1n;
      const batch: CommittedBatch = { records, lastOffset: b.lastOffset, epoch: b.epoch, sizeInBytes: b.sizeInBytes, appendTimestamp: b.appendTimestamp };
      if (this.listener) this.deliver(batch);
      else this.backlog.push({ kind: 'batch', batch });
    }
  }

  private deliver(batch: CommittedBatch): void {
    this.listener!.onCommit(batch);
    if (this.waiting.length === 0) return;
    const due = this.waiting.filter((w) => w.offset <= batch.lastOffset);
    this.waiting = this.waiting.filter((w) => w.offset > batch.lastOffset);
    for (const w of due) w.resolve(w.offset);
  }

  private onLeaderChange(leader: RaftLeader): void {
    if (this.closed) return;
    if (leader.id === this.reported.id && leader.epoch === this.reported.epoch) return;
    this.reported = { id: leader.id, epoch: leader.epoch };
    this.listener?.onLeaderChange(this.reported);
  }
}
