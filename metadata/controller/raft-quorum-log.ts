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
 * - every callback runs from the client's listener microtasks, never from inside `append`.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { decodeMetadataRecord, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';
import type { KafkaRaftClient, CommittedBatch as RaftCommittedBatch, RaftLeader } from '../raft/kafka-raft-client';
import { NotLeaderError, type CommittedBatch, type QuorumLeader, type QuorumLog, type QuorumLogListener } from './quorum-log';

export class RaftQuorumLog implements QuorumLog {
  readonly localId: number;
  private listener: QuorumLogListener | null = null;
  /** Committed batches received before `register`. */
  private backlog: CommittedBatch[] = [];
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
    for (const b of backlog) this.deliver(b);
    listener.onLeaderChange(this.reported);
  }

  /** Stops listening to the client; appends waiting for delivery are rejected. The client is the caller's. */
  close(): void {
    this.closed = true;
    this.unlisten();
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w.reject(new NotLeaderError(this.reported.epoch, -1));
  }

  private onCommit(batches: readonly RaftCommittedBatch[]): void {
    if (this.closed) return;
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
      const batch: CommittedBatch = { records, lastOffset: b.lastOffset, epoch: b.epoch };
      if (this.listener) this.deliver(batch);
      else this.backlog.push(batch);
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
