/**
 * The states of a KRaft replica within one epoch (Kafka's EpochState and its implementations,
 * with KIP-996's Prospective state). Each holds only what the state needs; the transitions between
 * them, the timers' randomization and all I/O live in RaftNode (raft-node.ts), which is Kafka's
 * QuorumState + KafkaRaftClient. Times are ms on the injected clock; deadlines are absolute.
 *
 *   Unattached  -> Unattached (higher epoch, or a granted vote), Prospective (election timeout), Follower (leader found)
 *   Prospective -> Candidate (majority of pre-votes), Follower (leader found, or lost/timed out with a known leader),
 *                  Unattached (higher epoch, or lost/timed out without a known leader)
 *   Candidate   -> Leader (majority of votes), Prospective (lost or timed out), Unattached/Follower (higher epoch / leader found)
 *   Leader      -> Resigned (check-quorum failed, or resign()), Unattached/Follower (higher epoch)
 *   Follower    -> Prospective (fetch timeout), Unattached/Follower (higher epoch)
 *   Resigned    -> Prospective (election timeout), Unattached/Follower (higher epoch)
 *
 * KIP-853: a LeaderState's voter states follow the voter set in force (`updateVoters`), so the
 * high watermark is the majority of the latest voter set; a removed leader stays in the states as
 * an observer and resigns once the removal commits (`resignRequested`).
 *
 * Invariants: a vote tally counts each voter once and only voters; a LeaderState's high watermark
 * only grows and is only set once a majority has replicated past the epoch start offset (so the
 * leader has committed an entry of its own epoch, its LeaderChange record, before it exposes
 * anything older); the leader's own entry in the voter states is its log end offset.
 */
import type { OffsetAndEpoch } from './raft-log';

export class VoteTally {
  readonly granted = new Set<number>();
  readonly rejected = new Set<number>();
  constructor(
    readonly voters: ReadonlySet<number>,
    localId: number,
  ) {
    if (voters.has(localId)) this.granted.add(localId);
  }
  private get majority(): number {
    return Math.floor(this.voters.size / 2) + 1;
  }
  record(voterId: number, granted: boolean): void {
    if (!this.voters.has(voterId) || this.granted.has(voterId) || this.rejected.has(voterId)) return;
    (granted ? this.granted : this.rejected).add(voterId);
  }
  isGranted(): boolean {
    return this.granted.size >= this.majority;
  }
  /** No majority is possible any more. */
  isRejected(): boolean {
    return this.rejected.size > this.voters.size - this.majority;
  }
  unrecorded(): number[] {
    return [...this.voters].filter((v) => !this.granted.has(v) && !this.rejected.has(v));
  }
}

export class UnattachedState {
  readonly name = 'Unattached' as const;
  constructor(
    readonly epoch: number,
    /** -1 when this replica has not voted in the epoch. */
    readonly votedId: number,
    readonly electionDeadline: number,
  ) {}
  get leaderId(): number {
    return -1;
  }
}

export class ProspectiveState {
  readonly name = 'Prospective' as const;
  readonly tally: VoteTally;
  constructor(
    readonly epoch: number,
    readonly votedId: number,
    /** The leader this replica followed in the epoch before its fetch timeout (-1 if none). */
    readonly retainedLeaderId: number,
    voters: ReadonlySet<number>,
    localId: number,
    readonly electionDeadline: number,
    readonly retries: number,
  ) {
    this.tally = new VoteTally(voters, localId);
  }
  get leaderId(): number {
    return -1;
  }
}

export class CandidateState {
  readonly name = 'Candidate' as const;
  readonly tally: VoteTally;
  backoffUntil: number | null = null;
  constructor(
    readonly epoch: number,
    voters: ReadonlySet<number>,
    readonly localId: number,
    readonly electionDeadline: number,
    readonly retries: number,
  ) {
    this.tally = new VoteTally(voters, localId);
  }
  get votedId(): number {
    return this.localId;
  }
  get leaderId(): number {
    return -1;
  }
}

export class ReplicaState {
  /** The replica's log end offset as the leader knows it (its fetch offset); null until it fetches. */
  endOffset: bigint | null = null;
  lastFetchTimestamp = -1;
  lastFetchLeaderLogEndOffset = -1n;
  lastCaughtUpTimestamp = -1;
  hasAcknowledgedLeader = false;
  /** KIP-853: the directory id the replica fetched with (NO_DIRECTORY_ID when it sent none). */
  directoryId: string | null = null;
  constructor(readonly replicaId: number) {}

  /** Kafka's ReplicaState.updateFollowerState: caught up when the fetch reaches the leader's end offset of the previous fetch. */
  updateFollowerState(now: number, fetchOffset: bigint, leaderEndOffset: bigint): void {
    if (fetchOffset >= leaderEndOffset) {
      this.lastCaughtUpTimestamp = Math.max(this.lastCaughtUpTimestamp, now);
    } else if (this.lastFetchLeaderLogEndOffset > 0n && fetchOffset >= this.lastFetchLeaderLogEndOffset) {
      this.lastCaughtUpTimestamp = Math.max(this.lastCaughtUpTimestamp, this.lastFetchTimestamp);
    }
    this.lastFetchLeaderLogEndOffset = leaderEndOffset;
    this.lastFetchTimestamp = Math.max(this.lastFetchTimestamp, now);
    this.endOffset = fetchOffset;
    this.hasAcknowledgedLeader = true;
  }
}

/** Kafka's LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR: resign after 1.5 fetch timeouts without a fetching majority. */
export const CHECK_QUORUM_TIMEOUT_FACTOR = 1.5;

export class LeaderState {
  readonly name = 'Leader' as const;
  readonly voterStates = new Map<number, ReplicaState>();
  readonly observerStates = new Map<number, ReplicaState>();
  highWatermark: bigint | null = null;
  readonly checkQuorumTimeoutMs: number;
  checkQuorumDeadline: number;
  /** Voters (not the leader) that fetched since the check-quorum timer was last reset. */
  private readonly fetchedVoters = new Set<number>();
  readonly beginQuorumEpochTimeoutMs: number;
  beginQuorumEpochDeadline: number;
  /** KIP-853: set when the committed voter set no longer holds this leader; it resigns at the next poll. */
  resignRequested = false;

  constructor(
    readonly epoch: number,
    readonly localId: number,
    voters: ReadonlySet<number>,
    /** The log end offset when this replica became leader: where its LeaderChange record goes. */
    readonly epochStartOffset: bigint,
    readonly grantingVoters: ReadonlySet<number>,
    now: number,
    fetchTimeoutMs: number,
  ) {
    for (const v of voters) this.voterStates.set(v, new ReplicaState(v));
    const self = this.voterStates.get(localId);
    if (self) self.hasAcknowledgedLeader = true;
    this.checkQuorumTimeoutMs = Math.floor(fetchTimeoutMs * CHECK_QUORUM_TIMEOUT_FACTOR);
    this.checkQuorumDeadline = now + this.checkQuorumTimeoutMs;
    this.beginQuorumEpochTimeoutMs = Math.floor(fetchTimeoutMs / 2);
    this.beginQuorumEpochDeadline = now;
  }

  get votedId(): number {
    return this.localId;
  }
  get leaderId(): number {
    return this.localId;
  }

  /** The check-quorum deadline, or Infinity for a single-voter quorum. */
  checkQuorumExpiry(): number {
    return this.voterStates.size === 1 && this.voterStates.has(this.localId) ? Infinity : this.checkQuorumDeadline;
  }

  /**
   * KIP-853 (Kafka's updateVoterAndObserverStates): the voter set in force changed; replicas keep
   * their state, voters no longer in the set become observers, new voters leave the observers.
   * Returns whether the high watermark moved (it never moves back).
   */
  updateVoters(voters: ReadonlySet<number>): boolean {
    const old = new Map(this.voterStates);
    this.voterStates.clear();
    for (const v of voters) {
      const state = old.get(v) ?? this.observerStates.get(v) ?? new ReplicaState(v);
      old.delete(v);
      this.observerStates.delete(v);
      this.voterStates.set(v, state);
    }
    for (const [id, state] of old) if (!this.observerStates.has(id)) this.observerStates.set(id, state);
    this.fetchedVoters.clear();
    return this.maybeUpdateHighWatermark();
  }

  private updateCheckQuorum(replicaId: number, now: number): void {
    if (replicaId === this.localId || !this.voterStates.has(replicaId)) return;
    this.fetchedVoters.add(replicaId);
    let majority = Math.floor(this.voterStates.size / 2) + 1;
    if (this.voterStates.has(this.localId)) majority -= 1;
    if (this.fetchedVoters.size >= majority) {
      this.fetchedVoters.clear();
      this.checkQuorumDeadline = now + this.checkQuorumTimeoutMs;
    }
  }

  /** A Fetch or FetchSnapshot from a voter counts for check-quorum even when it does not move offsets. */
  recordVoterContact(replicaId: number, now: number): void {
    this.updateCheckQuorum(replicaId, now);
  }

  addAcknowledgementFrom(replicaId: number): void {
    const s = this.voterStates.get(replicaId);
    if (s) s.hasAcknowledgedLeader = true;
  }

  /** The leader's own log end offset moved (append); returns whether the high watermark moved. */
  updateLocalState(logEndOffset: bigint): boolean {
    const self = this.voterStates.get(this.localId) ?? this.observerStates.get(this.localId);
    if (self) {
      if (self.endOffset !== null && self.endOffset > logEndOffset) throw new Error(`non-monotonic local end offset ${self.endOffset} -> ${logEndOffset}`);
      self.endOffset = logEndOffset;
    }
    return this.maybeUpdateHighWatermark();
  }

  /** A follower fetched at `fetchOffset`; returns whether the high watermark moved. */
  updateReplicaState(replicaId: number, now: number, fetchOffset: bigint, leaderEndOffset: bigint, directoryId: string | null = null): boolean {
    if (replicaId < 0) return false;
    if (replicaId === this.localId) throw new Error(`remote replica id ${replicaId} is the leader's own`);
    let state = this.voterStates.get(replicaId);
    const isVoter = state !== undefined;
    if (!state) {
      state = this.observerStates.get(replicaId);
      if (!state) {
        state = new ReplicaState(replicaId);
        this.observerStates.set(replicaId, state);
      }
    }
    state.updateFollowerState(now, fetchOffset, leaderEndOffset);
    if (directoryId !== null) state.directoryId = directoryId;
    this.updateCheckQuorum(replicaId, now);
    return isVoter && this.maybeUpdateHighWatermark();
  }

  /** Voters other than the leader, most caught up first (the preferred successors when resigning). */
  nonLeaderVotersByDescendingFetchOffset(): number[] {
    return this.votersByDescendingEndOffset()
      .filter((s) => s.replicaId !== this.localId)
      .map((s) => s.replicaId);
  }

  private votersByDescendingEndOffset(): ReplicaState[] {
    return [...this.voterStates.values()].sort((a, b) => {
      if (a.endOffset === b.endOffset) return a.replicaId - b.replicaId;
      if (a.endOffset === null) return 1;
      if (b.endOffset === null) return -1;
      return a.endOffset > b.endOffset ? -1 : 1;
    });
  }

  private maybeUpdateHighWatermark(): boolean {
    const sorted = this.votersByDescendingEndOffset();
    const candidate = sorted[Math.floor(this.voterStates.size / 2)]?.endOffset ?? null;
    // Only once a majority has an entry of this epoch (the LeaderChange record at epochStartOffset).
    if (candidate === null || candidate <= this.epochStartOffset) return false;
    if (this.highWatermark === null || candidate > this.highWatermark) {
      this.highWatermark = candidate;
      return true;
    }
    return false;
  }
}

export interface FetchingSnapshot {
  id: OffsetAndEpoch;
  position: bigint;
  size: bigint | null;
  chunks: Buffer[];
}

export class FollowerState {
  readonly name = 'Follower' as const;
  highWatermark: bigint | null = null;
  /** Set by the first successful Fetch response in this epoch; a follower that has it rejects pre-votes. */
  hasFetchedFromLeader = false;
  fetchingSnapshot: FetchingSnapshot | null = null;
  constructor(
    readonly epoch: number,
    readonly leaderId: number,
    readonly votedId: number,
    public fetchDeadline: number,
  ) {}
}

export class ResignedState {
  readonly name = 'Resigned' as const;
  readonly unackedVoters: Set<number>;
  constructor(
    readonly epoch: number,
    readonly localId: number,
    voters: ReadonlySet<number>,
    readonly electionDeadline: number,
    /** Voters by descending fetch offset: sent in EndQuorumEpoch so the most caught up runs first. */
    readonly preferredSuccessors: number[],
  ) {
    this.unackedVoters = new Set([...voters].filter((v) => v !== localId));
  }
  get votedId(): number {
    return this.localId;
  }
  get leaderId(): number {
    return this.localId;
  }
  acknowledgeResignation(voterId: number): void {
    this.unackedVoters.delete(voterId);
  }
}

export type EpochState = UnattachedState | ProspectiveState | CandidateState | LeaderState | FollowerState | ResignedState;
