/**
 * QuorumLog (quorum-log.ts) over the deterministic raft simulator, for controller tests: each
 * SimQuorumLog wraps one simulated voter's RaftNode and log. The simulator has no listener hook,
 * so the test drives delivery: after every simulator step, `sync()` reports what changed on that
 * node (QuorumHarness.step does both and lets the controllers' promises run in between).
 *
 * Keeps the QuorumLog contract: only batches wholly below the node's high watermark are delivered
 * (control batches as empty batches), in order, once each; an append resolves after its batch was
 * delivered, and is rejected once the node stops leading the epoch it was appended in; nothing is
 * delivered or resolved re-entrantly from inside `append`. A crashed node reports leader -1 and
 * delivers nothing until it restarts. Snapshots as KafkaRaftClient handles them: the latest one is
 * handed over first when the feed starts (and whenever the node's log start passed the next offset
 * to deliver: a snapshot downloaded by FetchSnapshot), `createSnapshot` stores Kafka's format in the
 * node's log and runs cleanSnapshots with the harness's retention (build the simulator with
 * `opaqueSnapshots`, which QuorumHarness does).
 */
import { splitBatches } from '../../../protocol/records/record-batch';
import { readRecords } from '../../../protocol/records/record';
import { decodeMetadataRecord, encodeMetadataRecord } from '../../metadata-log-store';
import type { MetadataRecord } from '../../metadata-records';
import { NotLeaderError } from '../../raft/raft-node';
import { RaftSimulator, type SimulatorOptions } from '../../raft/testing/raft-simulator';
import type { CommittedBatch, QuorumLeader, QuorumLog, QuorumLogListener } from '../quorum-log';
import { cleanSnapshots, type OffsetAndEpoch, type SnapshotRetention } from '../../raft/raft-log';
import { readSnapshotRecords, readSnapshotTimestamp, writeSnapshotRecords } from '../../snapshot/snapshot-records';

interface PendingAppend {
  offset: bigint;
  epoch: number;
  resolve: (offset: bigint) => void;
  reject: (err: Error) => void;
}

export class SimQuorumLog implements QuorumLog {
  private listener: QuorumLogListener | null = null;
  private nextOffset = 0n;
  private reported: QuorumLeader = { id: -1, epoch: 0 };
  private pending: PendingAppend[] = [];
  /** Every batch delivered, for assertions. */
  readonly delivered: CommittedBatch[] = [];

  /** Snapshots handed to the listener (ids), for assertions. */
  readonly loadedSnapshots: OffsetAndEpoch[] = [];
  private started = false;

  constructor(
    private readonly sim: RaftSimulator,
    readonly localId: number,
    private readonly retention: SnapshotRetention = { maxBytes: -1, maxMs: -1 },
  ) {}

  createSnapshot(id: OffsetAndEpoch, records: readonly MetadataRecord[], lastContainedLogTimestamp: number): void {
    const log = this.sim.node(this.localId).log;
    if (id.offset > this.nextOffset) throw new Error(`snapshot ${id.offset} is past what was delivered (${this.nextOffset})`);
    log.createSnapshot(id, writeSnapshotRecords(records, { epoch: id.epoch, lastContainedLogTimestamp, now: this.sim.now }));
    cleanSnapshots(log, this.retention, this.sim.now, (sid) => {
      const bytes = log.readSnapshot(sid);
      return bytes ? readSnapshotTimestamp(bytes) : null;
    });
  }

  leader(): QuorumLeader {
    return this.reported;
  }

  append(records: MetadataRecord[]): Promise<bigint> {
    const n = this.sim.node(this.localId);
    const raft = n.raft;
    if (!raft?.isLeader || this.reported.id !== this.localId || raft.epoch !== this.reported.epoch) {
      return Promise.reject(new NotLeaderError(raft?.epoch ?? this.reported.epoch, raft?.leaderId ?? -1));
    }
    const offset = raft.append(records.map((r) => ({ value: encodeMetadataRecord(r), timestamp: 0 })));
    // As the simulator's own client does: re-poll so the node's wake-up and parked fetches follow.
    (this.sim as unknown as { afterActivity(n: unknown): void }).afterActivity(n);
    return new Promise((resolve, reject) => this.pending.push({ offset, epoch: raft.epoch, resolve, reject }));
  }

  register(listener: QuorumLogListener): void {
    if (this.listener) throw new Error('one listener per quorum log');
    this.listener = listener;
    this.sync();
  }

  /** Reports the committed batches and the leader change since the last call. */
  sync(): void {
    const listener = this.listener;
    if (!listener) return;
    const n = this.sim.node(this.localId);
    const raft = n.raft;
    if (raft) {
      const latest = n.log.latestSnapshotId();
      if (latest && latest.offset >= this.nextOffset && (!this.started || this.nextOffset < n.log.startOffset())) {
        const { records } = readSnapshotRecords(n.log.readSnapshot(latest)!);
        this.nextOffset = latest.offset;
        this.loadedSnapshots.push({ ...latest });
        listener.onLoadSnapshot({ id: { ...latest }, records });
        const last = latest.offset - 1n;
        const done = this.pending.filter((p) => p.offset <= last);
        this.pending = this.pending.filter((p) => p.offset > last);
        for (const p of done) p.resolve(p.offset);
      }
      this.started = true;
      if (this.nextOffset < n.log.startOffset()) throw new Error(`node ${this.localId}: offsets ${this.nextOffset}..${n.log.startOffset()} are below the log start with no snapshot`);
      const hw = n.log.highWatermark();
      while (this.nextOffset < hw) {
        const batches = splitBatches(n.log.read(this.nextOffset, 1 << 20));
        let progressed = false;
        for (const b of batches) {
          if (b.lastOffset < this.nextOffset) continue;
          if (b.lastOffset >= hw) break;
          const records: MetadataRecord[] = [];
          if (!b.isControlBatch) {
            for (const r of readRecords(b)) {
              const rec = r.value === null ? null : decodeMetadataRecord(r.value);
              if (rec) records.push(rec);
            }
          }
          const batch: CommittedBatch = { records, lastOffset: b.lastOffset, epoch: b.partitionLeaderEpoch, sizeInBytes: b.sizeInBytes, appendTimestamp: this.sim.now };
          this.nextOffset = b.lastOffset + 1n;
          progressed = true;
          this.delivered.push(batch);
          listener.onCommit(batch);
          const done = this.pending.filter((p) => p.offset <= b.lastOffset);
          this.pending = this.pending.filter((p) => p.offset > b.lastOffset);
          for (const p of done) {
            if (p.offset === b.lastOffset && p.epoch === b.partitionLeaderEpoch) p.resolve(p.offset);
            else p.reject(new NotLeaderError(b.partitionLeaderEpoch, -1));
          }
        }
        if (!progressed) break;
      }
    }
    const now: QuorumLeader = raft ? { id: raft.leaderId, epoch: raft.epoch } : { id: -1, epoch: this.reported.epoch };
    if (now.id !== this.reported.id || now.epoch !== this.reported.epoch) {
      this.reported = now;
      const lost = this.pending.filter((p) => now.id !== this.localId || p.epoch !== now.epoch);
      this.pending = this.pending.filter((p) => !lost.includes(p));
      for (const p of lost) p.reject(new NotLeaderError(now.epoch, now.id));
      listener.onLeaderChange(now);
    }
  }
}

/** Lets every promise continuation that is ready run (the controllers' queues, the tests' awaits). */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A simulated quorum with one SimQuorumLog per voter, stepped in small increments of virtual time. */
export class QuorumHarness {
  readonly sim: RaftSimulator;
  readonly logs: SimQuorumLog[];

  constructor(
    opts: Partial<SimulatorOptions> & { nodeCount: number; retention?: SnapshotRetention },
    private readonly stepMs = 5,
  ) {
    this.sim = new RaftSimulator({ seed: 1, opaqueSnapshots: true, ...opts });
    this.retention = opts.retention ?? { maxBytes: -1, maxMs: -1 };
    this.logs = this.sim.nodes.filter((n) => n.id <= opts.nodeCount).map((n) => new SimQuorumLog(this.sim, n.id, this.retention));
  }

  readonly retention: SnapshotRetention;

  /** A fresh quorum log on node `id` (a controller restarted there), replacing the old one. */
  reopen(id: number): SimQuorumLog {
    const i = this.logs.findIndex((l) => l.localId === id);
    const fresh = new SimQuorumLog(this.sim, id, this.retention);
    this.logs[i] = fresh;
    return fresh;
  }

  log(id: number): SimQuorumLog {
    return this.logs.find((l) => l.localId === id)!;
  }

  /** Advances virtual time by `ms`, syncing every quorum log and running the ready promises after each step. */
  async step(ms: number): Promise<void> {
    const end = this.sim.now + ms;
    while (this.sim.now < end) {
      this.sim.runUntil(Math.min(end, this.sim.now + this.stepMs));
      for (const l of this.logs) l.sync();
      await flushPromises();
    }
  }

  /** Steps until `pred` holds; returns the virtual ms it took, or throws after `maxMs`. */
  async until(pred: () => boolean, maxMs: number, what = 'condition'): Promise<number> {
    const start = this.sim.now;
    while (!pred()) {
      if (this.sim.now - start >= maxMs) throw new Error(`${what} not reached within ${maxMs} ms of virtual time`);
      await this.step(this.stepMs);
    }
    return this.sim.now - start;
  }

  /** Steps until the promise settles (resolving with its value, or rethrowing), at most `maxMs`. */
  async settle<T>(p: Promise<T>, maxMs: number): Promise<T> {
    let done = false;
    const tracked = p.then(
      (v) => {
        done = true;
        return v;
      },
      (err) => {
        done = true;
        throw err;
      },
    );
    tracked.catch(() => {});
    await this.until(() => done, maxMs, 'settling a controller request');
    return tracked;
  }
}
