/**
 * One partition as this broker sees it (Kafka's Partition): its local log, whether this broker
 * leads it and at which leader epoch, the replica set, and, on the leader, everything replication
 * decides: follower state (Replica), the ISR, the high watermark, and ISR changes.
 *
 * Invariants (leader):
 * - `isr` is the ISR the controller committed. An ISR change is proposed with AlterPartition and
 *   applied only when the controller answers (or the metadata log brings a newer partition epoch);
 *   while one is pending no other is started (at most one in flight per partition).
 * - The "maximal" ISR is the committed one plus a replica being added: the HWM waits for it too,
 *   which is safe whether or not the controller accepts (KIP-497).
 * - HWM = the smallest LEO over the maximal ISR and over caught-up eligible followers about to
 *   join; it never moves while the ISR is below min(min.insync.replicas, replication factor)
 *   (Kafka 4 with eligible leader replicas), and it never goes back.
 * - Shrink: an ISR follower that is not caught up (LEO = leader LEO, or caught up within
 *   replica.lag.time.max.ms) is removed.
 * - Expand (KAFKA-19996): a follower joins when its LEO >= HWM and >= the start offset of the
 *   current leader epoch, and, while the partition is under min ISR (so the HWM cannot advance and
 *   "LEO >= HWM" says little), only if it is also caught up by the shrink rule. Otherwise a far
 *   behind follower that reached the frozen HWM would be added and removed again, forever.
 * - Low watermark (DeleteRecords): the smallest log start offset over the leader and the followers
 *   whose broker is alive (Kafka's lowWatermarkIfLeader); a follower that has not fetched since
 *   this broker became leader counts as -1, so a DeleteRecords waits for it.
 *
 * The local log is replaced only by a finished replica move between log directories
 * (AlterReplicaLogDirs: `replaceLog`, same offsets, another directory); every append tells the
 * context (`onLogAppend`) so a move in progress copies it.
 *
 * Every method is synchronous; the fetcher, the produce path and metadata changes cannot interleave
 * inside one. AlterPartition answers arrive later and are matched to the pending change they
 * answer (a stale answer is ignored).
 */
import { ErrorCode, KafkaError, errorName } from '../protocol/errors';
import type { ReadBufferPool } from '../storage/read-buffer-pool';
import type { VerificationGuard } from '../storage/producer-state-manager';
import type { UnifiedLog, LogAppendInfo, LogReadResult } from '../storage/unified-log';
import { offsetOnlyMetadata } from '../storage/log-segment';
import type { PartitionState } from '../metadata/metadata-cache';
import { Replica } from './replica';
import { topicPartitionKey, tpString } from '../common/topic-partition';

export type FetchIsolation = 'LOG_END' | 'HIGH_WATERMARK' | 'TXN_COMMITTED';

export interface PartitionReadResult {
  read: LogReadResult;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  logEndOffset: bigint;
  /** Set on a follower fetch whose last fetched epoch diverges from the leader's log. */
  divergingEpoch?: { epoch: number; endOffset: bigint };
}

/** One ISR change sent to the controller. */
export interface AlterPartitionItem {
  topic: string;
  topicId: string;
  partition: number;
  leaderEpoch: number;
  partitionEpoch: number;
  newIsr: { brokerId: number; brokerEpoch: bigint }[];
}

export type AlterPartitionOutcome =
  | { ok: true; leaderEpoch: number; partitionEpoch: number; isr: number[] }
  | { ok: false; errorCode: number };

export interface PartitionContext {
  now(): number;
  replicaLagTimeMaxMs(): number;
  minInsyncReplicas(topic: string): number;
  /** KRaft's eligibility: registered, unfenced, not shutting down, and `fetchedEpoch` (if known) current. */
  isReplicaIsrEligible(brokerId: number, fetchedEpoch: bigint | null): boolean;
  /** The broker epoch the metadata has for `brokerId`. */
  cachedBrokerEpoch(brokerId: number): bigint | undefined;
  localBrokerEpoch(): bigint;
  submitAlterPartition(item: AlterPartitionItem): Promise<AlterPartitionOutcome>;
  /** The HWM moved (or leadership changed): parked produce and fetch requests may complete. */
  onHighWatermarkChanged(p: Partition): void;
  /** Registered and not fenced (Kafka's hasAliveBroker): whose log start offset the low watermark waits for. Absent: every replica. */
  isBrokerAlive?(brokerId: number): boolean;
  /** A follower reported a new log start offset: a parked DeleteRecords may complete. */
  onLowWatermarkChanged?(p: Partition): void;
  /** Told about every ISR change proposed (tests count them). */
  onIsrChangeProposed?(p: Partition, kind: 'expand' | 'shrink', isr: number[]): void;
  /** The log grew (leader or follower append): a future replica copying it has more to copy. */
  onLogAppend?(p: Partition): void;
  /** Told about the bytes of every follower append (ReplicationBytesInPerSec). */
  onFollowerAppend?(bytes: number): void;
  /**
   * Told once about every ISR change this leader proposed and the controller committed, whichever
   * says so first: the AlterPartition answer or the metadata (IsrShrinksPerSec / IsrExpandsPerSec).
   */
  onIsrChangeCommitted?(p: Partition, kind: 'expand' | 'shrink'): void;
  info(msg: string): void;
}

interface PendingIsrChange {
  kind: 'expand' | 'shrink';
  /** The ISR sent. */
  isr: number[];
  /** Expand: the replica being added (part of the maximal ISR meanwhile). */
  adding?: number;
  item: AlterPartitionItem;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}

export class Partition {
  leaderEpoch = -1;
  partitionEpoch = -1;
  leaderId = -1;
  replicas: number[] = [];
  /** Committed ISR (on followers: as the metadata says, informational). */
  isr: number[] = [];
  leaderRecoveryState = 0;
  /** Offset where the current leader epoch started on this leader (null when not leading). */
  leaderEpochStartOffset: bigint | null = null;
  private pending: PendingIsrChange | null = null;
  private readonly remoteReplicas = new Map<number, Replica>();

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly topicId: string,
    readonly localBrokerId: number,
    private _log: UnifiedLog,
    private readonly ctx: PartitionContext = standaloneContext,
  ) {}

  /**
   * The partition's current log. It changes only when a future replica (AlterReplicaLogDirs) is
   * promoted (`replaceLog`), so code that awaits must read it again afterwards rather than keep it.
   */
  get log(): UnifiedLog {
    return this._log;
  }

  /**
   * The future replica replaced the current log (Kafka's maybeReplaceCurrentWithFutureReplica):
   * the same partition at the same log end offset, now in another log directory.
   */
  replaceLog(log: UnifiedLog): void {
    if (log.topicPartition.topic !== this.topic || log.topicPartition.partition !== this.partition) throw new Error(`${log} is not a log of ${this.name}`);
    if (log.logEndOffset !== this._log.logEndOffset) throw new Error(`${log} is not caught up with ${this._log}`);
    this._log = log;
  }

  /** This partition's map key (topicPartitionKey), for purgatories and fetcher state. */
  get key(): string {
    return topicPartitionKey(this.topic, this.partition);
  }

  /** "topic-partition", for log lines and errors. */
  get name(): string {
    return tpString(this);
  }

  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId;
  }

  get hasPendingIsrChange(): boolean {
    return this.pending !== null;
  }

  /** Committed ISR plus a replica being added. */
  get maximalIsr(): number[] {
    const p = this.pending;
    return p?.kind === 'expand' && p.adding !== undefined && !this.isr.includes(p.adding) ? [...this.isr, p.adding] : this.isr;
  }

  replica(brokerId: number): Replica | undefined {
    return this.remoteReplicas.get(brokerId);
  }

  private effectiveMinIsr(): number {
    return Math.max(1, Math.min(this.ctx.minInsyncReplicas(this.topic), this.replicas.length || 1));
  }

  get isUnderMinIsr(): boolean {
    return this.isLeader && this.isr.length < this.effectiveMinIsr();
  }

  /** Applies the controller's committed state: makeLeader or makeFollower. Returns what changed. */
  applyState(state: PartitionState): { isNewLeaderEpoch: boolean; becameLeader: boolean; becameFollower: boolean } {
    const wasLeader = this.isLeader;
    if (state.leader === this.localBrokerId) {
      const isNewLeaderEpoch = this.makeLeader(state);
      return { isNewLeaderEpoch, becameLeader: !wasLeader && this.isLeader, becameFollower: false };
    }
    const isNewLeaderEpoch = this.makeFollower(state);
    return { isNewLeaderEpoch, becameLeader: false, becameFollower: wasLeader || isNewLeaderEpoch };
  }

  /**
   * Leader state from the metadata. A partition epoch older than ours is ignored (an
   * AlterPartition answer may have told us a newer one already). A new leader epoch records the
   * epoch's start offset (the LEO) in the leader epoch cache and resets what we know of followers.
   */
  makeLeader(state: PartitionState): boolean {
    if (state.partitionEpoch < this.partitionEpoch) return false;
    const now = this.ctx.now();
    const isNewLeader = !this.isLeader;
    const isNewLeaderEpoch = state.leaderEpoch > this.leaderEpoch;
    // Our own ISR proposal, committed and seen in the metadata before the AlterPartition answer.
    const p = this.pending;
    if (p && !isNewLeader && !isNewLeaderEpoch && state.partitionEpoch > this.partitionEpoch && sameMembers(state.isr, p.isr)) {
      this.ctx.onIsrChangeCommitted?.(this, p.kind);
    }
    this.replicas = [...state.replicas];
    this.isr = [...state.isr];
    this.leaderRecoveryState = state.leaderRecoveryState;
    this.pending = null;
    for (const id of [...this.remoteReplicas.keys()]) if (!this.replicas.includes(id)) this.remoteReplicas.delete(id);
    for (const id of this.replicas) if (id !== this.localBrokerId && !this.remoteReplicas.has(id)) this.remoteReplicas.set(id, new Replica(id));
    if (isNewLeaderEpoch) {
      const start = this.log.logEndOffset;
      this.log.maybeAssignEpochStartOffset(state.leaderEpoch, start);
      for (const r of this.remoteReplicas.values()) r.reset(now, start, isNewLeader, state.isr.includes(r.brokerId));
      this.leaderEpoch = state.leaderEpoch;
      this.leaderEpochStartOffset = start;
      this.ctx.info(
        `leader of ${this.name} at epoch ${state.leaderEpoch} from offset ${start}, partition epoch ${state.partitionEpoch}, HWM ${this.log.highWatermark}, ISR [${state.isr.join(',')}]${this.isr.length < this.effectiveMinIsr() ? ' (under min ISR)' : ''}`,
      );
    }
    this.partitionEpoch = state.partitionEpoch;
    this.leaderId = this.localBrokerId;
    this.maybeIncrementHighWatermark(now);
    return isNewLeaderEpoch;
  }

  /** Follower state from the metadata; true when the leader epoch changed (fetchers restart). */
  makeFollower(state: PartitionState): boolean {
    if (state.partitionEpoch < this.partitionEpoch) return false;
    const isNewLeaderEpoch = state.leaderEpoch > this.leaderEpoch;
    this.leaderId = state.leader;
    this.leaderEpoch = state.leaderEpoch;
    this.partitionEpoch = state.partitionEpoch;
    this.leaderEpochStartOffset = null;
    this.replicas = [...state.replicas];
    this.isr = [...state.isr];
    this.leaderRecoveryState = state.leaderRecoveryState;
    this.pending = null;
    this.remoteReplicas.clear();
    return isNewLeaderEpoch;
  }

  /**
   * Checks the leader epoch a client sent (-1 = not sent): older than ours is FENCED_LEADER_EPOCH,
   * newer is UNKNOWN_LEADER_EPOCH (this broker has not caught up with the controller yet).
   */
  checkLeaderEpoch(requestEpoch: number): void {
    if (requestEpoch === -1) return;
    if (requestEpoch < this.leaderEpoch) {
      throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${requestEpoch} is older than the current ${this.leaderEpoch}`);
    }
    if (requestEpoch > this.leaderEpoch) {
      throw new KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH, `leader epoch ${requestEpoch} is newer than the current ${this.leaderEpoch}`);
    }
  }

  private ensureLeader(): void {
    if (!this.isLeader) {
      throw new KafkaError(
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `broker ${this.localBrokerId} is not the leader of ${this.name} (leader ${this.leaderId})`,
      );
    }
  }

  appendRecordsToLeader(
    records: Buffer,
    requiredAcks: number,
    minInsyncReplicas: number,
    opts: { origin?: 'client' | 'coordinator'; requestVersion?: number; verificationRequired?: boolean; verificationGuard?: VerificationGuard } = {},
  ): LogAppendInfo {
    this.ensureLeader();
    const minIsr = Math.max(1, Math.min(minInsyncReplicas, this.replicas.length || 1));
    if (requiredAcks === -1 && this.isr.length < minIsr) {
      throw new KafkaError(
        ErrorCode.NOT_ENOUGH_REPLICAS,
        `The size of the current ISR [${this.isr.join(', ')}] is insufficient to satisfy the min.isr requirement of ${minIsr} for partition ${this.name}`,
      );
    }
    const info = this.log.appendAsLeader(records, { leaderEpoch: this.leaderEpoch, ...opts });
    this.ctx.onLogAppend?.(this);
    if (this.maybeIncrementHighWatermark()) this.ctx.onHighWatermarkChanged(this);
    return info;
  }

  /** Appends a leader's batches as they are (follower). */
  appendRecordsToFollower(records: Buffer): LogAppendInfo {
    if (this.isLeader) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${this.name} is led here; not appending as a follower`);
    const info = this.log.appendAsFollower(records);
    this.ctx.onFollowerAppend?.(records.length);
    this.ctx.onLogAppend?.(this);
    return info;
  }

  /** See the class comment. Returns true if the HWM moved. */
  maybeIncrementHighWatermark(now = this.ctx.now()): boolean {
    if (!this.isLeader) return false;
    if (this.isr.length < this.effectiveMinIsr()) return false;
    const leaderEnd = this.log.logEndOffset;
    const maxLag = this.ctx.replicaLagTimeMaxMs();
    const maximal = this.maximalIsr;
    let hw = leaderEnd;
    for (const r of this.remoteReplicas.values()) {
      if (r.logEndOffset >= hw) continue;
      const waitFor = maximal.includes(r.brokerId) || (r.isCaughtUp(leaderEnd, now, maxLag) && this.ctx.isReplicaIsrEligible(r.brokerId, r.brokerEpoch));
      if (waitFor) hw = r.logEndOffset;
    }
    if (hw > this.log.highWatermark) {
      this.log.updateHighWatermark(hw);
      return true;
    }
    return false;
  }

  /** Whether an acks=-1 produce that ended at `requiredOffset` is now committed. */
  checkEnoughReplicasReachOffset(requiredOffset: bigint, minInsyncReplicas: number): { done: boolean; errorCode: number } {
    if (!this.isLeader) return { done: true, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (this.log.highWatermark >= requiredOffset) {
      const minIsr = Math.max(1, Math.min(minInsyncReplicas, this.replicas.length || 1));
      return { done: true, errorCode: this.maximalIsr.length >= minIsr ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND };
    }
    return { done: false, errorCode: ErrorCode.NONE };
  }

  /** A consumer read (leader only). */
  read(
    fetchOffset: bigint,
    maxBytes: number,
    isolation: FetchIsolation,
    minOneMessage: boolean,
    currentLeaderEpoch: number,
    pool?: ReadBufferPool,
  ): PartitionReadResult {
    this.ensureLeader();
    this.checkLeaderEpoch(currentLeaderEpoch);
    const hw = this.log.highWatermark;
    const lso = this.log.lastStableOffset;
    const leo = this.log.logEndOffset;
    // read_committed goes by isolation so that the log adds the aborted transactions of the range
    // (its LSO is the one read above: nothing runs in between).
    const read =
      isolation === 'TXN_COMMITTED'
        ? this.log.read(fetchOffset, maxBytes, { isolation, minOneMessage, pool })
        : this.log.read(fetchOffset, maxBytes, { maxOffset: isolation === 'LOG_END' ? leo : hw, minOneMessage, pool });
    return { read, highWatermark: hw, lastStableOffset: lso, logStartOffset: this.log.logStartOffset, logEndOffset: leo };
  }

  /**
   * A follower's Fetch (Kafka's fetchRecords for a follower): leader and epoch checks; a replica
   * that is not in the replica set gets UNKNOWN_LEADER_EPOCH (NOT_LEADER_OR_FOLLOWER without an
   * epoch); a last fetched epoch that the leader's log contradicts returns the diverging epoch
   * and no records (the follower truncates); otherwise records up to the LEO, and the follower's
   * state (LEO, caught-up time) is updated, which may expand the ISR and move the HWM.
   */
  fetchForFollower(f: {
    replicaId: number;
    replicaEpoch: bigint;
    fetchOffset: bigint;
    lastFetchedEpoch: number;
    currentLeaderEpoch: number;
    followerLogStartOffset: bigint;
    maxBytes: number;
    minOneMessage: boolean;
  }): PartitionReadResult {
    this.ensureLeader();
    this.checkLeaderEpoch(f.currentLeaderEpoch);
    const replica = this.remoteReplicas.get(f.replicaId);
    if (!replica) {
      throw new KafkaError(
        f.currentLeaderEpoch >= 0 ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER,
        `replica ${f.replicaId} is not a replica of ${this.name} at leader epoch ${this.leaderEpoch} (partition epoch ${this.partitionEpoch})`,
      );
    }
    const cached = this.ctx.cachedBrokerEpoch(f.replicaId);
    if (f.replicaEpoch !== -1n && cached !== undefined && cached > f.replicaEpoch) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `stale fetch from replica ${f.replicaId}: broker epoch ${f.replicaEpoch}, expected ${cached}`);
    }
    // Offsets before the read: appends that follow it must not keep a follower from catching up.
    const hw = this.log.highWatermark;
    const lso = this.log.lastStableOffset;
    const leo = this.log.logEndOffset;
    const logStart = this.log.logStartOffset;
    const base = { highWatermark: hw, lastStableOffset: lso, logStartOffset: logStart, logEndOffset: leo };
    if (f.lastFetchedEpoch >= 0) {
      const end = this.log.endOffsetForEpoch(f.lastFetchedEpoch);
      if (!end) {
        throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `cannot determine the end offset of the last fetched epoch ${f.lastFetchedEpoch} of ${this.name}`);
      }
      if (f.fetchOffset < logStart) {
        throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${f.fetchOffset} is below the log start offset ${logStart} of ${this.name}`);
      }
      if (end.epoch < f.lastFetchedEpoch || end.endOffset < f.fetchOffset) {
        const empty: LogReadResult = { fetchOffsetMetadata: offsetOnlyMetadata(f.fetchOffset), records: [], sizeInBytes: 0, firstEntryIncomplete: false };
        return { ...base, read: empty, divergingEpoch: { epoch: end.epoch, endOffset: end.endOffset } };
      }
    }
    const read = this.log.read(f.fetchOffset, f.maxBytes, { maxOffset: leo, minOneMessage: f.minOneMessage });
    this.updateFollowerFetchState(replica, f.fetchOffset, f.followerLogStartOffset, this.ctx.now(), leo, f.replicaEpoch);
    return { ...base, read };
  }

  private updateFollowerFetchState(replica: Replica, fetchOffset: bigint, followerStart: bigint, now: number, leaderEnd: bigint, epoch: bigint): void {
    const before = replica.logEndOffset;
    const startBefore = replica.logStartOffset;
    replica.updateFetchState(fetchOffset, followerStart, now, leaderEnd, epoch);
    this.maybeExpandIsr(replica, now);
    if (before !== replica.logEndOffset && this.maybeIncrementHighWatermark(now)) this.ctx.onHighWatermarkChanged(this);
    if (startBefore !== replica.logStartOffset) this.ctx.onLowWatermarkChanged?.(this);
  }

  /**
   * The low watermark (Kafka's lowWatermarkIfLeader): the smallest log start offset of this log
   * and of the followers on alive brokers. NOT_LEADER_OR_FOLLOWER when not leading.
   */
  get lowWatermarkIfLeader(): bigint {
    this.ensureLeader();
    let low = this.log.logStartOffset;
    for (const r of this.remoteReplicas.values()) {
      if (r.logStartOffset < low && (this.ctx.isBrokerAlive?.(r.brokerId) ?? true)) low = r.logStartOffset;
    }
    return low;
  }

  /**
   * DeleteRecords on the leader (Kafka's deleteRecordsOnLeader): moves this log's start offset to
   * `offset` (-1 = the high watermark; POLICY_VIOLATION without cleanup.policy=delete,
   * OFFSET_OUT_OF_RANGE below 0 or past the high watermark) and returns the offset the replicas
   * must reach with the current low watermark.
   */
  deleteRecordsOnLeader(offset: bigint): { requestedOffset: bigint; lowWatermark: bigint } {
    this.ensureLeader();
    const requestedOffset = offset === -1n ? this.log.highWatermark : offset;
    this.log.deleteRecordsBefore(offset);
    return { requestedOffset, lowWatermark: this.lowWatermarkIfLeader };
  }

  /** The KAFKA-19996 rule: see the class comment. */
  isFollowerInSync(replica: Replica, now = this.ctx.now()): boolean {
    const leo = replica.logEndOffset;
    if (leo < this.log.highWatermark) return false;
    if (this.leaderEpochStartOffset === null || leo < this.leaderEpochStartOffset) return false;
    if (this.isUnderMinIsr && !replica.isCaughtUp(this.log.logEndOffset, now, this.ctx.replicaLagTimeMaxMs())) return false;
    return true;
  }

  private maybeExpandIsr(replica: Replica, now: number): void {
    if (!this.isLeader || this.pending || this.isr.includes(replica.brokerId)) return;
    if (!this.ctx.isReplicaIsrEligible(replica.brokerId, replica.brokerEpoch)) return;
    if (!this.isFollowerInSync(replica, now)) return;
    const isr = [...this.isr, replica.brokerId];
    this.ctx.info(`expanding the ISR of ${this.name} from [${this.isr.join(',')}] to [${isr.join(',')}] (follower LEO ${replica.logEndOffset}, HWM ${this.log.highWatermark}, leader LEO ${this.log.logEndOffset})`);
    this.proposeIsr('expand', isr, replica.brokerId);
  }

  /** Followers in the ISR that are not caught up (empty while a change is pending). */
  outOfSyncReplicas(now = this.ctx.now()): number[] {
    if (!this.isLeader || this.pending) return [];
    const leaderEnd = this.log.logEndOffset;
    const maxLag = this.ctx.replicaLagTimeMaxMs();
    return this.isr.filter((id) => {
      if (id === this.localBrokerId) return false;
      const r = this.remoteReplicas.get(id);
      return !r || !r.isCaughtUp(leaderEnd, now, maxLag);
    });
  }

  /** The periodic ISR check (every replica.lag.time.max.ms / 2). */
  maybeShrinkIsr(now = this.ctx.now()): void {
    const out = this.outOfSyncReplicas(now);
    if (out.length === 0) return;
    const isr = this.isr.filter((id) => !out.includes(id));
    const detail = out.map((id) => {
      const r = this.remoteReplicas.get(id);
      return `(broker ${id}: LEO ${r?.logEndOffset ?? 'unknown'}, last caught up ${r ? now - r.lastCaughtUpTimeMs : '?'} ms ago)`;
    });
    this.ctx.info(`shrinking the ISR of ${this.name} from [${this.isr.join(',')}] to [${isr.join(',')}]; leader LEO ${this.log.logEndOffset}, HWM ${this.log.highWatermark}; out of sync: ${detail.join(' ')}`);
    this.proposeIsr('shrink', isr);
  }

  private proposeIsr(kind: 'expand' | 'shrink', isr: number[], adding?: number): void {
    const item: AlterPartitionItem = {
      topic: this.topic,
      topicId: this.topicId,
      partition: this.partition,
      leaderEpoch: this.leaderEpoch,
      partitionEpoch: this.partitionEpoch,
      newIsr: isr.map((id) => ({
        brokerId: id,
        brokerEpoch: id === this.localBrokerId ? this.ctx.localBrokerEpoch() : (this.remoteReplicas.get(id)?.brokerEpoch ?? -1n),
      })),
    };
    const pending: PendingIsrChange = { kind, isr, adding, item };
    this.pending = pending;
    this.ctx.onIsrChangeProposed?.(this, kind, isr);
    this.submit(pending);
  }

  private submit(pending: PendingIsrChange): void {
    this.ctx.submitAlterPartition(pending.item).then(
      (outcome) => this.onAlterPartitionOutcome(pending, outcome),
      // A transport failure is transient: the default branch below retries.
      () => this.onAlterPartitionOutcome(pending, { ok: false, errorCode: ErrorCode.REQUEST_TIMED_OUT }),
    );
  }

  private onAlterPartitionOutcome(pending: PendingIsrChange, outcome: AlterPartitionOutcome): void {
    if (this.pending !== pending) return; // leadership or metadata moved on meanwhile
    if (outcome.ok) {
      if (outcome.leaderEpoch !== this.leaderEpoch || outcome.partitionEpoch < this.partitionEpoch) return;
      this.isr = [...outcome.isr];
      this.partitionEpoch = outcome.partitionEpoch;
      this.pending = null;
      this.ctx.onIsrChangeCommitted?.(this, pending.kind);
      this.ctx.info(`ISR of ${this.name} is now [${this.isr.join(',')}] at partition epoch ${this.partitionEpoch}${this.isUnderMinIsr ? ' (under min ISR)' : ''}`);
      if (this.maybeIncrementHighWatermark()) this.ctx.onHighWatermarkChanged(this);
      return;
    }
    switch (outcome.errorCode) {
      case ErrorCode.OPERATION_NOT_ATTEMPTED:
      case ErrorCode.INELIGIBLE_REPLICA:
        // The controller says the partition epoch is right and nothing was applied.
        this.pending = null;
        this.ctx.info(`ISR change of ${this.name} to [${pending.isr.join(',')}] rejected (${errorName(outcome.errorCode)}); back to [${this.isr.join(',')}]`);
        return;
      case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      case ErrorCode.UNKNOWN_TOPIC_ID:
      case ErrorCode.FENCED_LEADER_EPOCH:
      case ErrorCode.INVALID_UPDATE_VERSION:
      case ErrorCode.INVALID_REQUEST:
      case ErrorCode.NEW_LEADER_ELECTED:
        // Our view is stale: stay pending until the metadata log brings the partition's new state.
        this.ctx.info(`ISR change of ${this.name} failed with ${errorName(outcome.errorCode)}; waiting for newer metadata`);
        return;
      default:
        // Transient (controller unreachable, NOT_CONTROLLER, ...): try again.
        setTimeout(() => {
          if (this.pending === pending) this.submit(pending);
        }, 100).unref();
    }
  }

  /** OffsetForLeaderEpoch on the leader (Kafka's lastOffsetForLeaderEpoch). */
  lastOffsetForLeaderEpoch(currentLeaderEpoch: number, leaderEpoch: number): { leaderEpoch: number; endOffset: bigint } {
    this.ensureLeader();
    this.checkLeaderEpoch(currentLeaderEpoch);
    const r = this.log.endOffsetForEpoch(leaderEpoch);
    return r ? { leaderEpoch: r.epoch, endOffset: r.endOffset } : { leaderEpoch: -1, endOffset: -1n };
  }
}

/** A partition outside any cluster (a single broker, tests): no followers, no ISR changes. */
const standaloneContext: PartitionContext = {
  now: () => Date.now(),
  replicaLagTimeMaxMs: () => 30_000,
  minInsyncReplicas: () => 1,
  isReplicaIsrEligible: () => false,
  cachedBrokerEpoch: () => undefined,
  localBrokerEpoch: () => -1n,
  submitAlterPartition: async () => ({ ok: false, errorCode: ErrorCode.OPERATION_NOT_ATTEMPTED }),
  onHighWatermarkChanged: () => {},
  info: () => {},
};
