/**
 * One KRaft replica's consensus logic (Kafka's KafkaRaftClient + QuorumState), I/O-free and
 * deterministic: time comes from an injected clock, randomness from an injected source, durable
 * state from the injected log and quorum-state store, and every outbound message goes to an
 * injected sink. A driver (the network layer later, the simulation now) delivers inbound requests
 * and responses and calls `poll()` when the delay it returned has passed.
 *
 * Owns: the current epoch state (epoch-state.ts), the in-flight request table (one request per
 * destination, Kafka's RequestManager), the parked Fetch requests of a leader (Kafka's fetch
 * purgatory) and the chunked snapshot download of a follower.
 *
 * Invariants:
 * - every transition that changes (epoch, leader, vote) is written to the quorum-state store
 *   before any message that depends on it is sent; in particular a granted vote is persisted
 *   before the Vote response leaves, and a replica never votes twice in an epoch;
 * - the epoch never decreases; a leader exists only with a majority of granted votes for its epoch;
 * - a pre-vote (KIP-996) changes no state on the receiver, and a replica that is following a live
 *   leader rejects it, so a partitioned replica cannot bump the epoch of a healthy quorum;
 * - the leader's high watermark is the offset a majority of voters has replicated, and is only
 *   exposed once that offset is past the leader's epoch start (an entry of its own epoch is
 *   committed); a follower never truncates below its high watermark;
 * - a leader that has not heard a Fetch/FetchSnapshot from a majority within 1.5 fetch timeouts
 *   resigns (check-quorum), so a partitioned leader stops claiming leadership.
 * - KIP-853: the voter set in force is the latest in the log (kraft-control-state.ts), synced after
 *   every log change; the leader changes it one VotersRecord at a time, only once it has a high
 *   watermark in its epoch and the previous VotersRecord is committed, answers the change when it
 *   commits, and resigns after committing its own removal.
 * Error codes are Kafka's, chosen where KafkaRaftClient chooses them.
 */
import { ErrorCode } from '../../protocol/errors';
import { controlRecordKey, ControlRecordType } from '../../protocol/records/control-record';
import { Writer } from '../../protocol/primitives/writer';
import { writeLeaderChangeMessage } from '../../protocol/generated/message-data/leader-change-message';
import type { SimpleRecord } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import type { VoteRequest, VoteResponse } from '../../protocol/generated/vote';
import type { BeginQuorumEpochRequest, BeginQuorumEpochResponse } from '../../protocol/generated/begin-quorum-epoch';
import type { EndQuorumEpochRequest, EndQuorumEpochResponse } from '../../protocol/generated/end-quorum-epoch';
import type { FetchRequest, FetchResponse } from '../../protocol/generated/fetch';
import type { FetchSnapshotRequest, FetchSnapshotResponse } from '../../protocol/generated/fetch-snapshot';
import type { DescribeQuorumRequest, DescribeQuorumResponse, DescribeQuorumResponseReplicaState } from '../../protocol/generated/describe-quorum';
import type { AddRaftVoterRequest, AddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import type { RemoveRaftVoterRequest, RemoveRaftVoterResponse } from '../../protocol/generated/remove-raft-voter';
import type { UpdateRaftVoterRequest, UpdateRaftVoterResponse } from '../../protocol/generated/update-raft-voter';
import type { FetchResponseNodeEndpoint } from '../../protocol/generated/fetch';
import { KRaftControlState } from './kraft-control-state';
import {
  DEFAULT_CONTROLLER_LISTENER,
  KRAFT_VERSION_1,
  SUPPORTED_KRAFT_VERSIONS,
  VoterSet,
  kraftVersionControlRecord,
  replicaKeyString,
  snapshotControlRecords,
  votersControlRecord,
  type Endpoint,
  type ReplicaKey,
} from './voter-set';
import {
  CandidateState,
  FollowerState,
  LeaderState,
  ProspectiveState,
  ResignedState,
  UnattachedState,
  type EpochState,
  type ReplicaState,
} from './epoch-state';
import { bootstrapServerId, type QuorumConfig } from './quorum-config';
import { NO_DIRECTORY_ID, type ElectionState, type QuorumStateStore } from './quorum-state-store';
import { compareOffsetAndEpoch, validateOffsetAndEpoch, type OffsetAndEpoch, type RaftLog, type ValidOffsetAndEpoch } from './raft-log';
import { NotLeaderError } from './not-leader-error';
import {
  METADATA_PARTITION,
  METADATA_TOPIC,
  METADATA_TOPIC_ID,
  addRaftVoterResponse,
  beginQuorumEpochRequest,
  beginQuorumEpochResponse,
  removeRaftVoterResponse,
  updateRaftVoterResponse,
  describeQuorumResponse,
  endQuorumEpochRequest,
  endQuorumEpochResponse,
  fetchReplicaId,
  fetchRequest,
  fetchResponse,
  fetchSnapshotRequest,
  fetchSnapshotResponse,
  voteRequest,
  voteResponse,
  type RaftApiKey,
  type RaftRequest,
  type RaftResponse,
} from './raft-messages';

export interface RaftClock {
  now(): number;
}

export interface RaftRandom {
  /** A uniformly random integer in [0, bound). */
  nextInt(bound: number): number;
}

export interface RaftMessageSink {
  sendRequest(destinationId: number, correlationId: number, request: RaftRequest): void;
  sendResponse(destinationId: number, correlationId: number, response: RaftResponse): void;
}

export interface RaftListener {
  /** The high watermark moved: offsets below it are committed. */
  onHighWatermark?(highWatermark: bigint): void;
  /** The epoch or the known leader changed (leaderId -1: unknown). */
  onLeaderChange?(epoch: number, leaderId: number): void;
}

export interface RaftNodeOptions {
  nodeId: number;
  clusterId: string;
  config: QuorumConfig;
  clock: RaftClock;
  random: RaftRandom;
  log: RaftLog;
  store: QuorumStateStore;
  sink: RaftMessageSink;
  listener?: RaftListener;
  /** Max bytes per Fetch / FetchSnapshot response (Kafka: 1 MiB). */
  fetchMaxBytes?: number;
  /** KIP-853: this replica's directory id (meta.properties `directory.id`); NO_DIRECTORY_ID when unknown. */
  directoryId?: string;
  /** KIP-853: this replica's own listeners (the first is the default one), as a VotersRecord names them. */
  listeners?: readonly Endpoint[];
  /** KIP-853's controller.quorum.auto.join.enable: an observer that caught up asks the leader to add it. */
  autoJoin?: boolean;
}

/** A voter change the leader has appended and answers once it commits (one at a time, Kafka's LeaderState). */
interface PendingVoterChange {
  apiKey: 'ADD_RAFT_VOTER' | 'REMOVE_RAFT_VOTER';
  source: number;
  correlationId: number;
  /** The offset of the VotersRecord. */
  offset: bigint;
  deadline: number;
}

/** Kafka's KafkaRaftClient.RETRY_BACKOFF_BASE_MS for the binary exponential election backoff. */
export const RETRY_BACKOFF_BASE_MS = 50;
const DEFAULT_FETCH_MAX_BYTES = 1024 * 1024;

interface InFlight {
  destination: number;
  apiKey: RaftApiKey;
  deadline: number;
  /** For Vote: whether it was a pre-vote, and the epoch it was sent in. */
  preVote: boolean;
  epoch: number;
}

interface ParkedFetch {
  source: number;
  correlationId: number;
  request: FetchRequest;
  deadline: number;
}

export { NotLeaderError };

export class RaftNode {
  readonly nodeId: number;
  private readonly clusterId: string;
  private readonly config: QuorumConfig;
  private readonly control: KRaftControlState;
  private readonly localKey: ReplicaKey;
  private readonly localListeners: readonly Endpoint[];
  private readonly autoJoin: boolean;
  private autoJoinAt = 0;
  /** UpdateRaftVoter: the epoch in which the leader accepted this voter's endpoints, and the next try. */
  private voterUpdatedInEpoch = -1;
  private updateVoterAt = 0;
  /** Endpoints learned from Fetch responses (the leader's NodeEndpoints), by id. */
  private readonly learnedEndpoints = new Map<number, { host: string; port: number }>();
  private votersCache: { set: VoterSet; ids: ReadonlySet<number> } | null = null;
  private pendingVoterChange: PendingVoterChange | null = null;
  private readonly clock: RaftClock;
  private readonly random: RaftRandom;
  readonly log: RaftLog;
  private readonly store: QuorumStateStore;
  private readonly sink: RaftMessageSink;
  private readonly listener: RaftListener;
  private readonly fetchMaxBytes: number;

  private state!: EpochState;
  private persisted: ElectionState | null;
  private nextCorrelationId = 0;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly inFlightByDestination = new Map<number, number>();
  private readonly backoffUntil = new Map<number, number>();
  private readonly parkedFetches: ParkedFetch[] = [];
  private shuttingDown = false;

  constructor(opts: RaftNodeOptions) {
    this.nodeId = opts.nodeId;
    this.clusterId = opts.clusterId;
    this.config = opts.config;
    this.localKey = { id: opts.nodeId, directoryId: opts.directoryId ?? NO_DIRECTORY_ID };
    this.localListeners = opts.listeners ?? [];
    this.autoJoin = opts.autoJoin ?? false;
    this.control = new KRaftControlState(opts.log, VoterSet.fromStatic(opts.config.voters, this.localListeners[0]?.name ?? DEFAULT_CONTROLLER_LISTENER));
    this.clock = opts.clock;
    this.random = opts.random;
    this.log = opts.log;
    this.store = opts.store;
    this.sink = opts.sink;
    this.listener = opts.listener ?? {};
    this.fetchMaxBytes = opts.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES;
    this.persisted = this.store.read();
    this.initialize();
  }

  // ---------------------------------------------------------------- state access

  get epoch(): number {
    return this.state.epoch;
  }
  get stateName(): EpochState['name'] {
    return this.state.name;
  }
  get leaderId(): number {
    return this.state.leaderId;
  }
  get isVoter(): boolean {
    return this.control.lastVoterSet().isVoter(this.localKey);
  }
  /** The voter ids in force (KIP-853: the latest VotersRecord in the log, else controller.quorum.voters). */
  private get voters(): ReadonlySet<number> {
    const set = this.control.lastVoterSet();
    if (this.votersCache?.set !== set) this.votersCache = { set, ids: set.ids() };
    return this.votersCache.ids;
  }
  /** The voter set in force (tests, DescribeQuorum, the driver's endpoints). */
  get voterSet(): VoterSet {
    return this.control.lastVoterSet();
  }
  /** kraft.version in force: 0 static voters, 1 KIP-853 dynamic voters. */
  get kraftVersion(): number {
    return this.control.lastKraftVersion();
  }
  get directoryId(): string {
    return this.localKey.directoryId;
  }
  /**
   * KIP-853: the control records a snapshot ending at `snapshotEndOffset` carries right after its
   * SnapshotHeader (KRaftVersionRecord and VotersRecord with kraft.version 1; none with 0): the
   * controller's snapshot writer puts them there, and a replica that loads the snapshot reads its
   * voter set from them.
   */
  snapshotControlRecords(snapshotEndOffset: bigint): SimpleRecord[] {
    this.control.sync();
    return snapshotControlRecords(this.control.lastKraftVersion(), this.control.voterSetAtOffset(snapshotEndOffset - 1n));
  }
  /**
   * Where replica `id` listens, as far as this node knows: the voter set in force, the leader
   * endpoints Fetch responses named, `controller.quorum.bootstrap.servers` for the negative ids.
   */
  endpointOf(id: number): { host: string; port: number } | null {
    if (id <= -2) return this.config.bootstrapServers[-2 - id] ?? null;
    const e = this.control.lastVoterSet().endpoint(id, this.listenerName);
    if (e) return { host: e.host, port: e.port };
    return this.learnedEndpoints.get(id) ?? null;
  }
  private get listenerName(): string {
    return this.localListeners[0]?.name ?? DEFAULT_CONTROLLER_LISTENER;
  }

  /**
   * Brings the kraft.version / voter set in line with the log (after every log change); a leader's
   * replica states follow the voter set in force.
   */
  private syncVoters(): void {
    const before = this.control.lastVoterSet();
    this.control.sync();
    const after = this.control.lastVoterSet();
    const s = this.state as EpochState | undefined;
    if (after !== before && s?.name === 'Leader') {
      if (s.updateVoters(this.voters)) this.onUpdateLeaderHighWatermark(s);
    }
  }
  get isLeader(): boolean {
    return this.state.name === 'Leader';
  }
  /** The high watermark this replica knows (null: unknown in this epoch). */
  get highWatermark(): bigint | null {
    const s = this.state;
    if (s.name === 'Leader' || s.name === 'Follower') return s.highWatermark;
    return null;
  }
  /** The epoch state itself (tests and the simulation; do not mutate). */
  get currentState(): EpochState {
    return this.state;
  }

  // ---------------------------------------------------------------- initialization (QuorumState.initialize)

  private initialize(): void {
    const now = this.clock.now();
    let stored = this.persisted ?? { epoch: 0, leaderId: -1, votedId: -1, votedDirectoryId: NO_DIRECTORY_ID };
    if (stored.epoch < 0) stored = { epoch: 0, leaderId: -1, votedId: -1, votedDirectoryId: NO_DIRECTORY_ID };
    const logEpoch = this.log.lastFetchedEpoch();
    if (logEpoch > stored.epoch) {
      // The log is ahead of the quorum state (e.g. the file was lost): start unattached at the log's epoch.
      this.setState(new UnattachedState(logEpoch, -1, now + this.randomElectionTimeoutMs()));
    } else if (stored.leaderId === this.nodeId) {
      // A leader that restarts does not resume leadership: it resigns and lets an election run.
      const voters = this.isVoter ? this.voters : new Set<number>();
      this.setState(new ResignedState(stored.epoch, this.nodeId, voters, now + this.randomElectionTimeoutMs(), []));
    } else if (stored.leaderId >= 0) {
      this.setState(new FollowerState(stored.epoch, stored.leaderId, stored.votedId, now + this.config.fetchTimeoutMs));
    } else if (stored.votedId === this.nodeId && this.isVoter) {
      this.setState(new ProspectiveState(stored.epoch, this.nodeId, -1, this.voters, this.nodeId, now + this.randomElectionTimeoutMs(), 0));
      this.onEnterProspective();
    } else {
      this.setState(new UnattachedState(stored.epoch, stored.votedId, now + this.randomElectionTimeoutMs()));
    }
  }

  // ---------------------------------------------------------------- timers

  private randomElectionTimeoutMs(): number {
    return this.config.electionTimeoutMs + this.random.nextInt(this.config.electionTimeoutMs);
  }

  private binaryExponentialElectionBackoffMs(retries: number): number {
    if (retries <= 0) throw new Error(`retries ${retries} should be larger than zero`);
    return Math.min(RETRY_BACKOFF_BASE_MS * this.random.nextInt(2 << Math.min(20, retries - 1)), this.config.electionBackoffMaxMs);
  }

  private strictExponentialElectionBackoffMs(position: number, total: number): number {
    if (position === 0) return 0;
    if (position < 0 || position >= total) return this.config.electionBackoffMaxMs;
    const base = this.config.electionBackoffMaxMs >> (total - 1);
    return Math.min(this.config.electionBackoffMaxMs, base << (position - 1));
  }

  // ---------------------------------------------------------------- transitions

  private electionStateOf(s: EpochState): ElectionState {
    const votedId = s.votedId;
    const leaderId = s.name === 'Prospective' ? s.retainedLeaderId : s.leaderId;
    // KIP-853 (quorum-state data_version 1): the directory id of the replica voted for.
    const votedDirectoryId = votedId < 0 ? NO_DIRECTORY_ID : votedId === this.nodeId ? this.localKey.directoryId : (this.control.lastVoterSet().get(votedId)?.key.directoryId ?? NO_DIRECTORY_ID);
    return { epoch: s.epoch, leaderId, votedId, votedDirectoryId };
  }

  private setState(next: EpochState): void {
    const prev = this.state as EpochState | undefined;
    if (prev && next.epoch < prev.epoch) throw new Error(`epoch would go backwards: ${prev.epoch} -> ${next.epoch}`);
    const es = this.electionStateOf(next);
    const p = this.persisted;
    if (!p || p.epoch !== es.epoch || p.leaderId !== es.leaderId || p.votedId !== es.votedId) {
      if (p && p.epoch === es.epoch && p.votedId >= 0 && es.votedId !== p.votedId) {
        throw new Error(`replica ${this.nodeId} would change its vote in epoch ${es.epoch}: ${p.votedId} -> ${es.votedId}`);
      }
      this.store.write(es);
      this.persisted = es;
    }
    const leaving = prev?.name === 'Leader' && next !== prev;
    this.state = next;
    // Requests of the previous state are answered, if at all, to a replica that moved on.
    this.inFlight.clear();
    this.inFlightByDestination.clear();
    this.backoffUntil.clear();
    if (leaving) {
      this.finishVoterChange(ErrorCode.NOT_LEADER_OR_FOLLOWER, 'The leader resigned or lost its leadership before the voter change committed');
      this.completeParkedFetches(true);
    }
    if (!prev || prev.epoch !== next.epoch || prev.leaderId !== next.leaderId) this.listener.onLeaderChange?.(next.epoch, next.leaderId);
  }

  private transitionToUnattached(epoch: number): void {
    // Same epoch (an observer that lost its leader, a removed voter): keep the vote cast in it.
    const voted = epoch === this.state?.epoch ? this.persistedVote(epoch) : -1;
    this.setState(new UnattachedState(epoch, voted, this.clock.now() + this.randomElectionTimeoutMs()));
  }

  private transitionToUnattachedVoted(candidateId: number, epoch: number): void {
    const s = this.state;
    if ((s.name !== 'Unattached' && s.name !== 'Prospective') || s.epoch !== epoch || s.votedId >= 0) {
      throw new Error(`cannot vote for ${candidateId} in epoch ${epoch} from ${s.name} (voted ${'votedId' in s ? s.votedId : -1})`);
    }
    this.setState(new UnattachedState(epoch, candidateId, this.clock.now() + this.randomElectionTimeoutMs()));
  }

  private transitionToProspective(retries: number): void {
    const s = this.state;
    if (!this.isVoter) throw new Error('an observer cannot become prospective');
    const votedId = s.name === 'Candidate' || s.name === 'Resigned' ? this.nodeId : s.name === 'Leader' ? this.nodeId : s.votedId;
    const retained = s.name === 'Follower' ? s.leaderId : -1;
    this.setState(new ProspectiveState(s.epoch, votedId, retained, this.voters, this.nodeId, this.clock.now() + this.randomElectionTimeoutMs(), retries));
    this.onEnterProspective();
  }

  private onEnterProspective(): void {
    const s = this.state as ProspectiveState;
    if (s.tally.isGranted()) this.transitionToCandidate(s.retries);
  }

  private transitionToCandidate(previousRetries: number): void {
    const s = this.state;
    const retries = previousRetries + 1;
    this.setState(new CandidateState(s.epoch + 1, this.voters, this.nodeId, this.clock.now() + this.randomElectionTimeoutMs(), retries));
    const c = this.state as CandidateState;
    if (c.tally.isGranted()) this.transitionToLeader();
  }

  private transitionToLeader(): void {
    const s = this.state;
    if (s.name !== 'Candidate' || !s.tally.isGranted()) throw new Error(`cannot become leader from ${s.name}`);
    const now = this.clock.now();
    const epochStart = this.log.endOffset().offset;
    const leader = new LeaderState(s.epoch, this.nodeId, this.voters, epochStart, new Set(s.tally.granted), now, this.config.fetchTimeoutMs);
    this.setState(leader);
    // Kafka's LeaderChange control record: the first entry of the epoch; committing it commits
    // everything before it.
    const w = new Writer(64);
    const voterSet = this.control.lastVoterSet();
    // LeaderChangeMessage version 0 (Kafka's current one) names voters by id only.
    writeLeaderChangeMessage(w, 0, {
      version: 0,
      leaderId: this.nodeId,
      voters: [...this.voters].map((voterId) => ({ voterId, voterDirectoryId: NO_DIRECTORY_ID })),
      grantingVoters: [...leader.grantingVoters].map((voterId) => ({ voterId, voterDirectoryId: NO_DIRECTORY_ID })),
    });
    const records: SimpleRecord[] = [{ key: controlRecordKey(ControlRecordType.LEADER_CHANGE), value: w.toBuffer(), timestamp: 0 }];
    // KIP-853 (LeaderState.appendStartOfEpochControlRecords): a voter set known only from the
    // bootstrap checkpoint goes into the log, so that replicas without the checkpoint learn it.
    // It also writes its own endpoints when the voter set names others (Kafka's voterNodeNeedsUpdate).
    if (this.control.lastKraftVersion() >= KRAFT_VERSION_1) {
      const me = voterSet.get(this.nodeId);
      const mine = { key: this.localKey, endpoints: this.localListeners, kraftVersion: { ...SUPPORTED_KRAFT_VERSIONS } };
      const updated = me && this.localListeners.length > 0 && me.key.directoryId === this.localKey.directoryId && !new VoterSet([me]).equals(new VoterSet([mine])) ? voterSet.updateVoter(mine) : null;
      if (this.control.lastVoterSetEntry().offset < 0n) records.push(kraftVersionControlRecord(this.control.lastKraftVersion()), votersControlRecord(updated ?? voterSet));
      else if (updated) records.push(votersControlRecord(updated));
    }
    this.log.appendAsLeader(records, leader.epoch, true);
    this.log.flush();
    this.syncVoters();
    this.onLeaderAppend();
  }

  private transitionToFollower(epoch: number, leaderId: number): void {
    const s = this.state;
    if (s.name === 'Leader' && s.epoch === epoch) throw new Error(`leader ${this.nodeId} told of leader ${leaderId} in its own epoch ${epoch}`);
    const votedId = s.epoch === epoch ? this.persistedVote(epoch) : -1;
    this.setState(new FollowerState(epoch, leaderId, votedId, this.clock.now() + this.config.fetchTimeoutMs));
  }

  private persistedVote(epoch: number): number {
    return this.persisted && this.persisted.epoch === epoch ? this.persisted.votedId : -1;
  }

  private transitionToResigned(preferredSuccessors: number[]): void {
    const s = this.state;
    if (s.name !== 'Leader') throw new Error(`cannot resign from ${s.name}`);
    this.setState(new ResignedState(s.epoch, this.nodeId, this.voters, this.clock.now() + this.randomElectionTimeoutMs(), preferredSuccessors));
  }

  /** The leader steps down: EndQuorumEpoch to the other voters, most caught up first. */
  resign(): void {
    const s = this.state;
    if (s.name === 'Leader') this.transitionToResigned(s.nonLeaderVotersByDescendingFetchOffset());
  }

  /**
   * Graceful shutdown (Kafka's KafkaRaftClient.shutdown): a leader resigns so that its most caught-up
   * follower runs at once; from now on this replica starts no election (it stays what it is until an
   * epoch bump moves it) and, as leader, answers leader-only requests BROKER_NOT_AVAILABLE. The
   * driver stops once `isShutdownComplete()` or its own timeout passes.
   */
  beginShutdown(): void {
    this.shuttingDown = true;
    this.resign();
  }

  /** Not leading, and a resignation (if any) acknowledged by every other voter or overtaken by a new epoch. */
  isShutdownComplete(): boolean {
    const s = this.state;
    if (!this.shuttingDown) return false;
    return s.name !== 'Leader' && (s.name !== 'Resigned' || s.unackedVoters.size === 0);
  }

  /** Kafka's maybeTransition: follow what a request or response says about the epoch and leader. */
  private maybeTransition(leaderId: number, epoch: number): void {
    const s = this.state;
    // Our own leadership of an epoch we no longer lead (we resigned or restarted) is not a leader to follow.
    if (leaderId === this.nodeId && s.name !== 'Leader') leaderId = -1;
    const known = s.name === 'Prospective' ? s.retainedLeaderId : s.leaderId;
    if (epoch === s.epoch && leaderId >= 0 && known >= 0 && known !== leaderId) {
      throw new Error(`replica ${this.nodeId}: leader ${leaderId} in epoch ${epoch} is inconsistent with the known leader ${known}`);
    }
    if (epoch > s.epoch) {
      if (leaderId >= 0) this.transitionToFollower(epoch, leaderId);
      else this.transitionToUnattached(epoch);
    } else if (epoch === s.epoch && leaderId >= 0 && s.leaderId < 0) {
      this.transitionToFollower(epoch, leaderId);
    }
  }

  // ---------------------------------------------------------------- the leader's API

  /** Appends records as the leader; returns the offset of the last one. Throws NotLeaderError elsewhere. */
  append(records: readonly SimpleRecord[]): bigint {
    const s = this.state;
    if (s.name !== 'Leader') throw new NotLeaderError(s.epoch, s.leaderId);
    const info = this.log.appendAsLeader(records, s.epoch);
    this.log.flush();
    // A data batch holds no voter change: the control-record state moves past it without reading it.
    this.control.skipDataAppend(info.firstOffset, info.lastOffset + 1n);
    this.onLeaderAppend();
    return info.lastOffset;
  }

  /** Appends a VotersRecord for `voters` (a control batch) as the leader; returns its offset. */
  private appendVotersRecord(voters: VoterSet): bigint {
    const s = this.state as LeaderState;
    const info = this.log.appendAsLeader([votersControlRecord(voters)], s.epoch, true);
    this.log.flush();
    this.syncVoters();
    this.onLeaderAppend();
    return info.lastOffset;
  }

  private onLeaderAppend(): void {
    const s = this.state as LeaderState;
    if (s.updateLocalState(this.log.endOffset().offset)) this.onUpdateLeaderHighWatermark(s);
    this.completeParkedFetches(false);
  }

  private onUpdateLeaderHighWatermark(s: LeaderState): void {
    if (s.highWatermark === null) return;
    this.log.updateHighWatermark(s.highWatermark);
    this.listener.onHighWatermark?.(s.highWatermark);
    this.maybeCompleteVoterChange(s);
    this.completeParkedFetches(false);
  }

  /** Kafka's RemoveVoterHandler/AddVoterHandler.highWatermarkUpdated: the pending change committed. */
  private maybeCompleteVoterChange(s: LeaderState): void {
    const p = this.pendingVoterChange;
    if (!p || s.highWatermark === null || s.highWatermark <= p.offset) return;
    this.finishVoterChange(ErrorCode.NONE, null);
    // A leader that is not in the committed voter set resigns (at the next poll).
    if (!this.isVoter) s.resignRequested = true;
  }

  private finishVoterChange(errorCode: number, message: string | null): void {
    const p = this.pendingVoterChange;
    if (!p) return;
    this.pendingVoterChange = null;
    const data = p.apiKey === 'ADD_RAFT_VOTER' ? addRaftVoterResponse(errorCode, message) : removeRaftVoterResponse(errorCode, message);
    this.sink.sendResponse(p.source, p.correlationId, { apiKey: p.apiKey, data } as RaftResponse);
  }

  // ---------------------------------------------------------------- poll

  /** Runs the timers and sends what the state needs; returns the ms until it needs to run again. */
  poll(): number {
    const now = this.clock.now();
    this.syncVoters();
    this.expireInFlight(now);
    let wake = Infinity;
    // A transition inside a poll step may need another step right away (bounded).
    for (let i = 0; i < 4; i++) {
      const before = this.state;
      wake = this.pollState(now);
      if (this.state === before) break;
    }
    wake = Math.min(wake, this.expireParkedFetches(now));
    const pending = this.pendingVoterChange;
    if (pending) {
      if (now >= pending.deadline) this.finishVoterChange(ErrorCode.REQUEST_TIMED_OUT, 'Timed out waiting for the voter change to commit');
      else wake = Math.min(wake, pending.deadline);
    }
    for (const f of this.inFlight.values()) wake = Math.min(wake, f.deadline);
    for (const b of this.backoffUntil.values()) if (b > now) wake = Math.min(wake, b);
    return Math.max(0, wake - now);
  }

  private pollState(now: number): number {
    const s = this.state;
    switch (s.name) {
      case 'Unattached':
        if (!this.isVoter) {
          // An observer finds the leader by fetching from controller.quorum.bootstrap.servers or a
          // voter of the set in force (krill also asks the voters it knows: bootstrap servers that
          // were all removed from the quorum would otherwise strand it): the answer names the leader.
          const targets = [...this.config.bootstrapServers.map((_, i) => bootstrapServerId(i)), ...[...this.voters].filter((v) => v !== this.nodeId && this.endpointOf(v) !== null)];
          if (targets.length === 0) return Infinity;
          const v = targets[this.random.nextInt(targets.length)];
          this.maybeSend(v, 'FETCH', { apiKey: 'FETCH', data: this.buildFetchRequest(s.epoch) });
          return Infinity;
        }
        if (now >= s.electionDeadline && !this.shuttingDown) {
          this.transitionToProspective(0);
          return 0;
        }
        return this.shuttingDown ? Infinity : s.electionDeadline;
      case 'Prospective':
        if (now >= s.electionDeadline) {
          this.prospectiveLost();
          return 0;
        }
        for (const v of s.tally.unrecorded()) this.maybeSendVote(v, true, s.epoch + 1);
        return s.electionDeadline;
      case 'Candidate':
        if (s.backoffUntil !== null) {
          if (now >= s.backoffUntil) {
            this.transitionToProspective(s.retries);
            return 0;
          }
          return s.backoffUntil;
        }
        if (now >= s.electionDeadline && !this.shuttingDown) {
          this.transitionToProspective(s.retries);
          return 0;
        }
        for (const v of s.tally.unrecorded()) this.maybeSendVote(v, false, s.epoch);
        return this.shuttingDown && now >= s.electionDeadline ? Infinity : s.electionDeadline;
      case 'Leader': {
        if (s.resignRequested) {
          this.transitionToResigned(s.nonLeaderVotersByDescendingFetchOffset());
          return 0;
        }
        if (now >= s.checkQuorumExpiry()) {
          this.transitionToResigned(s.nonLeaderVotersByDescendingFetchOffset());
          return 0;
        }
        if (now >= s.beginQuorumEpochDeadline) {
          // To every voter, acknowledged or not, every fetch timeout / 2: a voter stuck in a higher
          // epoch (whose pre-votes fail while this leader is healthy) answers FENCED_LEADER_EPOCH,
          // and this leader steps down so that the quorum moves past that epoch.
          for (const v of this.voters) this.maybeSend(v, 'BEGIN_QUORUM_EPOCH', { apiKey: 'BEGIN_QUORUM_EPOCH', data: beginQuorumEpochRequest(this.clusterId, v, this.nodeId, s.epoch) });
          s.beginQuorumEpochDeadline = now + s.beginQuorumEpochTimeoutMs;
        }
        return Math.min(s.checkQuorumExpiry(), s.beginQuorumEpochDeadline);
      }
      case 'Follower':
        if (now >= s.fetchDeadline && !this.shuttingDown) {
          if (this.isVoter) this.transitionToProspective(0);
          else this.transitionToUnattached(s.epoch);
          return 0;
        }
        if (this.needsVoterUpdate(s)) {
          // KIP-853 (Kafka's UpdateVoter from a follower): the voter set names other endpoints or
          // versions for this voter than it has: tell the leader, once per epoch while it succeeds.
          this.updateVoterAt = now + this.config.fetchTimeoutMs;
          this.maybeSend(s.leaderId, 'UPDATE_RAFT_VOTER', {
            apiKey: 'UPDATE_RAFT_VOTER',
            data: {
              clusterId: this.clusterId,
              currentLeaderEpoch: s.epoch,
              voterId: this.nodeId,
              voterDirectoryId: this.localKey.directoryId,
              listeners: this.localListeners.map((l) => ({ ...l })),
              kRaftVersionFeature: { minSupportedVersion: SUPPORTED_KRAFT_VERSIONS.min, maxSupportedVersion: SUPPORTED_KRAFT_VERSIONS.max },
            },
          });
        }
        if (this.autoJoin && !this.isVoter && s.hasFetchedFromLeader && this.control.lastKraftVersion() >= KRAFT_VERSION_1 && now >= this.autoJoinAt && !s.fetchingSnapshot) {
          // controller.quorum.auto.join.enable: ask the leader to add this replica (it answers
          // REQUEST_TIMED_OUT until this replica is caught up, DUPLICATE_VOTER if its id votes).
          this.autoJoinAt = now + this.config.fetchTimeoutMs;
          this.maybeSend(s.leaderId, 'ADD_RAFT_VOTER', {
            apiKey: 'ADD_RAFT_VOTER',
            data: { clusterId: this.clusterId, timeoutMs: this.config.requestTimeoutMs, voterId: this.nodeId, voterDirectoryId: this.localKey.directoryId, listeners: this.localListeners.map((l) => ({ ...l })) },
          });
          return Math.min(s.fetchDeadline, this.autoJoinAt);
        }
        if (s.fetchingSnapshot) {
          this.maybeSend(s.leaderId, 'FETCH_SNAPSHOT', {
            apiKey: 'FETCH_SNAPSHOT',
            data: fetchSnapshotRequest({
              clusterId: this.clusterId,
              replicaId: this.nodeId,
              maxBytes: this.fetchMaxBytes,
              currentLeaderEpoch: s.epoch,
              snapshotId: s.fetchingSnapshot.id,
              position: s.fetchingSnapshot.position,
            }),
          });
        } else {
          this.maybeSend(s.leaderId, 'FETCH', { apiKey: 'FETCH', data: this.buildFetchRequest(s.epoch) });
        }
        return this.shuttingDown && now >= s.fetchDeadline ? Infinity : s.fetchDeadline;
      case 'Resigned':
        if (now >= s.electionDeadline && !this.shuttingDown) {
          // A leader removed from the voter set (KIP-853) goes on as an observer.
          if (this.isVoter) this.transitionToProspective(0);
          else this.transitionToUnattached(s.epoch);
          return 0;
        }
        for (const v of s.unackedVoters) {
          this.maybeSend(v, 'END_QUORUM_EPOCH', { apiKey: 'END_QUORUM_EPOCH', data: endQuorumEpochRequest(this.clusterId, this.nodeId, s.epoch, s.preferredSuccessors) });
        }
        return this.shuttingDown && now >= s.electionDeadline ? Infinity : s.electionDeadline;
    }
  }

  private buildFetchRequest(epoch: number): FetchRequest {
    const end = this.log.endOffset();
    return fetchRequest({
      clusterId: this.clusterId,
      replicaId: this.nodeId,
      maxWaitMs: this.config.fetchMaxWaitMs,
      currentLeaderEpoch: epoch,
      fetchOffset: end.offset,
      lastFetchedEpoch: end.epoch,
      logStartOffset: this.log.startOffset(),
      maxBytes: this.fetchMaxBytes,
      replicaDirectoryId: this.localKey.directoryId,
    });
  }

  /** A prospective lost or timed out: back to following the leader it knew, else unattached. */
  private prospectiveLost(): void {
    const s = this.state as ProspectiveState;
    if (s.retainedLeaderId >= 0) {
      this.setState(new FollowerState(s.epoch, s.retainedLeaderId, s.votedId, this.clock.now() + this.config.fetchTimeoutMs));
    } else {
      this.setState(new UnattachedState(s.epoch, s.votedId, this.clock.now() + this.randomElectionTimeoutMs()));
    }
  }

  private maybeSendVote(voterId: number, preVote: boolean, candidateEpoch: number): void {
    const data = voteRequest({
      clusterId: this.clusterId,
      voterId,
      candidateEpoch,
      candidateId: this.nodeId,
      lastEndOffset: this.log.endOffset(),
      preVote,
      candidateDirectoryId: this.localKey.directoryId,
      voterDirectoryId: this.control.lastVoterSet().get(voterId)?.key.directoryId ?? NO_DIRECTORY_ID,
    });
    this.maybeSend(voterId, 'VOTE', { apiKey: 'VOTE', data }, preVote);
  }

  private maybeSend(destination: number, apiKey: RaftApiKey, request: RaftRequest, preVote = false): void {
    // -1 is nobody; ids below it are the bootstrap servers.
    if (destination === this.nodeId || destination === -1) return;
    if (this.inFlightByDestination.has(destination)) return;
    const now = this.clock.now();
    const b = this.backoffUntil.get(destination);
    if (b !== undefined && now < b) return;
    const correlationId = this.nextCorrelationId++;
    this.inFlight.set(correlationId, { destination, apiKey, deadline: now + this.config.requestTimeoutMs, preVote, epoch: this.state.epoch });
    this.inFlightByDestination.set(destination, correlationId);
    this.sink.sendRequest(destination, correlationId, request);
  }

  private expireInFlight(now: number): void {
    for (const [id, f] of this.inFlight) {
      if (now >= f.deadline) {
        this.inFlight.delete(id);
        this.inFlightByDestination.delete(f.destination);
        this.backoffUntil.set(f.destination, now + this.config.retryBackoffMs);
      }
    }
  }

  // ---------------------------------------------------------------- inbound requests

  /** Handles a request; the response goes to the sink now or, for a parked Fetch, later. */
  handleRequest(source: number, correlationId: number, request: RaftRequest): void {
    const reply = (response: RaftResponse): void => this.sink.sendResponse(source, correlationId, response);
    this.syncVoters();
    switch (request.apiKey) {
      case 'VOTE':
        return reply({ apiKey: 'VOTE', data: this.handleVoteRequest(request.data) });
      case 'BEGIN_QUORUM_EPOCH':
        return reply({ apiKey: 'BEGIN_QUORUM_EPOCH', data: this.handleBeginQuorumEpochRequest(request.data) });
      case 'END_QUORUM_EPOCH':
        return reply({ apiKey: 'END_QUORUM_EPOCH', data: this.handleEndQuorumEpochRequest(request.data) });
      case 'FETCH': {
        const r = this.handleFetchRequest(request.data);
        if (r) reply({ apiKey: 'FETCH', data: r });
        else this.parkedFetches.push({ source, correlationId, request: request.data, deadline: this.clock.now() + request.data.maxWaitMs });
        return;
      }
      case 'FETCH_SNAPSHOT':
        return reply({ apiKey: 'FETCH_SNAPSHOT', data: this.handleFetchSnapshotRequest(request.data) });
      case 'DESCRIBE_QUORUM':
        return reply({ apiKey: 'DESCRIBE_QUORUM', data: this.handleDescribeQuorumRequest(request.data) });
      case 'ADD_RAFT_VOTER': {
        const r = this.handleAddVoterRequest(source, correlationId, request.data);
        if (r) reply({ apiKey: 'ADD_RAFT_VOTER', data: r });
        return;
      }
      case 'REMOVE_RAFT_VOTER': {
        const r = this.handleRemoveVoterRequest(source, correlationId, request.data);
        if (r) reply({ apiKey: 'REMOVE_RAFT_VOTER', data: r });
        return;
      }
      case 'UPDATE_RAFT_VOTER':
        return reply({ apiKey: 'UPDATE_RAFT_VOTER', data: this.handleUpdateVoterRequest(request.data) });
    }
  }

  // ---------------------------------------------------------------- KIP-853 voter changes (leader side)

  /**
   * Kafka's checks common to AddVoter / RemoveVoter / UpdateVoter on the leader: one change at a
   * time, a high watermark in this epoch (the epoch's LeaderChange committed, so no older voter
   * change is pending), kraft.version 1, and the latest VotersRecord committed. Null when all pass.
   */
  private voterChangeRefusal(verb: string): { code: number; message: string } | null {
    const s = this.state as LeaderState;
    if (this.pendingVoterChange) return { code: ErrorCode.REQUEST_TIMED_OUT, message: 'Request timed out waiting for leader to handle previous voter change request' };
    if (s.highWatermark === null) return { code: ErrorCode.REQUEST_TIMED_OUT, message: 'Request timed out waiting for leader to establish HWM and fence previous voter changes' };
    const kraftVersion = this.control.lastKraftVersion();
    if (kraftVersion < KRAFT_VERSION_1) return { code: ErrorCode.UNSUPPORTED_VERSION, message: `Cluster doesn't support ${verb} voter because the kraft.version feature is ${kraftVersion}` };
    const entry = this.control.lastVoterSetEntry();
    if (entry.offset >= s.highWatermark) {
      return { code: ErrorCode.REQUEST_TIMED_OUT, message: `Request timed out waiting for voters to commit the latest voter change at ${entry.offset} with HWM ${s.highWatermark}` };
    }
    return null;
  }

  private handleAddVoterRequest(source: number, correlationId: number, request: AddRaftVoterRequest): AddRaftVoterResponse | null {
    if (!this.hasValidClusterId(request.clusterId)) return addRaftVoterResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, `The given id "${request.clusterId}" doesn't match the cluster id "${this.clusterId}"`);
    const err = this.validateLeaderOnlyRequest(this.state.epoch);
    if (err !== ErrorCode.NONE) return addRaftVoterResponse(err, null);
    if (request.voterId < 0 || request.voterDirectoryId === NO_DIRECTORY_ID) return addRaftVoterResponse(ErrorCode.INVALID_REQUEST, "Add voter request didn't include a valid voter");
    const endpoints = request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port }));
    if (!endpoints.some((e) => e.name === this.listenerName)) {
      return addRaftVoterResponse(ErrorCode.INVALID_REQUEST, `Add voter request didn't include the endpoint for the default listener ${this.listenerName}`);
    }
    const refusal = this.voterChangeRefusal('adding');
    if (refusal) return addRaftVoterResponse(refusal.code, refusal.message);
    const voters = this.control.lastVoterSet();
    const key = { id: request.voterId, directoryId: request.voterDirectoryId };
    if (voters.hasId(key.id)) return addRaftVoterResponse(ErrorCode.DUPLICATE_VOTER, `The voter id for ${replicaKeyString(key)} is already part of the set of voters ${voters}.`);
    // Caught up (Kafka's isReplicaCaughtUp): an observer with this replica key that has reached the
    // leader's end offset at least once and fetched within the last hour. (Kafka first asks the new
    // voter's ApiVersions for its kraft.version range; every krill controller supports 0-1.)
    const s = this.state as LeaderState;
    const now = this.clock.now();
    const o = s.observerStates.get(key.id);
    const caughtUp = o !== undefined && o.directoryId === key.directoryId && o.lastCaughtUpTimestamp > 0 && o.lastFetchTimestamp > 0 && o.lastFetchTimestamp > now - 3_600_000;
    if (!caughtUp) return addRaftVoterResponse(ErrorCode.REQUEST_TIMED_OUT, `Aborted add voter operation for ${replicaKeyString(key)} since it is lagging behind`);
    const next = voters.addVoter({ key, endpoints, kraftVersion: { ...SUPPORTED_KRAFT_VERSIONS } })!;
    const offset = this.appendVotersRecord(next);
    this.pendingVoterChange = { apiKey: 'ADD_RAFT_VOTER', source, correlationId, offset, deadline: now + this.config.requestTimeoutMs };
    this.maybeCompleteVoterChange(this.state as LeaderState);
    return null;
  }

  private handleRemoveVoterRequest(source: number, correlationId: number, request: RemoveRaftVoterRequest): RemoveRaftVoterResponse | null {
    if (!this.hasValidClusterId(request.clusterId)) return removeRaftVoterResponse(ErrorCode.INCONSISTENT_CLUSTER_ID, `The given id "${request.clusterId}" doesn't match the cluster id "${this.clusterId}"`);
    const err = this.validateLeaderOnlyRequest(this.state.epoch);
    if (err !== ErrorCode.NONE) return removeRaftVoterResponse(err, null);
    if (request.voterId < 0) return removeRaftVoterResponse(ErrorCode.INVALID_REQUEST, "Remove voter request didn't include a valid voter");
    const refusal = this.voterChangeRefusal('removing');
    if (refusal) return removeRaftVoterResponse(refusal.code, refusal.message);
    const voters = this.control.lastVoterSet();
    const key = { id: request.voterId, directoryId: request.voterDirectoryId };
    const next = voters.get(key.id)?.key.directoryId === key.directoryId ? voters.removeVoter(key) : null;
    if (!next) return removeRaftVoterResponse(ErrorCode.VOTER_NOT_FOUND, `Cannot remove voter ${replicaKeyString(key)} from the set of voters ${voters}`);
    const offset = this.appendVotersRecord(next);
    this.pendingVoterChange = { apiKey: 'REMOVE_RAFT_VOTER', source, correlationId, offset, deadline: this.clock.now() + this.config.requestTimeoutMs };
    this.maybeCompleteVoterChange(this.state as LeaderState);
    return null;
  }

  private handleUpdateVoterRequest(request: UpdateRaftVoterRequest): UpdateRaftVoterResponse {
    const respond = (code: number): UpdateRaftVoterResponse => updateRaftVoterResponse(code, this.state.leaderId, this.state.epoch, this.state.leaderId >= 0 ? this.endpointOf(this.state.leaderId) : null);
    if (!this.hasValidClusterId(request.clusterId)) return respond(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const err = this.validateLeaderOnlyRequest(request.currentLeaderEpoch);
    if (err !== ErrorCode.NONE) return respond(err);
    if (request.voterId < 0 || request.voterDirectoryId === NO_DIRECTORY_ID) return respond(ErrorCode.INVALID_REQUEST);
    const endpoints = request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port }));
    if (!endpoints.some((e) => e.name === this.listenerName)) return respond(ErrorCode.INVALID_REQUEST);
    const v = request.kRaftVersionFeature;
    if (v.minSupportedVersion < 0 || v.maxSupportedVersion < 0 || v.maxSupportedVersion < v.minSupportedVersion) return respond(ErrorCode.INVALID_REQUEST);
    const refusal = this.voterChangeRefusal('updating');
    if (refusal) return respond(refusal.code);
    const key = { id: request.voterId, directoryId: request.voterDirectoryId };
    const next = this.control.lastVoterSet().updateVoter({ key, endpoints, kraftVersion: { min: v.minSupportedVersion, max: v.maxSupportedVersion } });
    if (!next) return respond(ErrorCode.VOTER_NOT_FOUND);
    // Kafka answers at once, without waiting for the commit.
    this.appendVotersRecord(next);
    return respond(ErrorCode.NONE);
  }

  /** A request naming this replica's directory id (or none) is for this replica (Kafka's isValidVoterKey). */
  private isLocalDirectory(directoryId: string | undefined): boolean {
    return directoryId === undefined || directoryId === NO_DIRECTORY_ID || this.localKey.directoryId === NO_DIRECTORY_ID || directoryId === this.localKey.directoryId;
  }

  private hasValidClusterId(requestClusterId: string | null): boolean {
    // Not enforced when the request does not carry one.
    return requestClusterId === null || requestClusterId === this.clusterId;
  }

  /** Kafka's validateVoterOnlyRequest for Vote, BeginQuorumEpoch and EndQuorumEpoch. */
  private validateVoterOnlyRequest(remoteNodeId: number, requestEpoch: number): number {
    if (requestEpoch < this.state.epoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (remoteNodeId < 0) return ErrorCode.INVALID_REQUEST;
    // With a static voter set both ends must be voters. With KIP-853's voter set in the log Kafka 4.0
    // answers anyone: the sender may know a newer set than this replica (a voter just added, which
    // has not fetched its VotersRecord yet, must still vote, or a quorum can be left without a majority).
    if (this.isStaticVoterSet() && (!this.isVoter || !this.voters.has(remoteNodeId))) return ErrorCode.INCONSISTENT_VOTER_SET;
    return ErrorCode.NONE;
  }

  /** controller.quorum.voters in force (kraft.version 0), not a voter set from the log. */
  private isStaticVoterSet(): boolean {
    return !this.control.hasVoterSetInLog() && this.config.voters.size > 0;
  }

  /** Kafka's validateLeaderOnlyRequest for Fetch and FetchSnapshot. */
  private validateLeaderOnlyRequest(requestEpoch: number): number {
    if (requestEpoch < this.state.epoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (requestEpoch > this.state.epoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    if (this.state.name !== 'Leader') return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    if (this.shuttingDown) return ErrorCode.BROKER_NOT_AVAILABLE;
    return ErrorCode.NONE;
  }

  private isLogUpToDate(lastEpoch: number, lastOffset: bigint): boolean {
    return compareOffsetAndEpoch({ offset: lastOffset, epoch: lastEpoch }, this.log.endOffset()) >= 0;
  }

  private handleVoteRequest(request: VoteRequest): VoteResponse {
    if (!this.hasValidClusterId(request.clusterId)) return voteResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const t = request.topics;
    if (t.length !== 1 || t[0].topicName !== METADATA_TOPIC || t[0].partitions.length !== 1 || t[0].partitions[0].partitionIndex !== METADATA_PARTITION) {
      return voteResponse(ErrorCode.INVALID_REQUEST);
    }
    const p = t[0].partitions[0];
    const respond = (errorCode: number, voteGranted: boolean): VoteResponse =>
      voteResponse(ErrorCode.NONE, { errorCode, leaderId: this.state.leaderId, leaderEpoch: this.state.epoch, voteGranted });
    if (p.lastOffset < 0n || p.lastOffsetEpoch < 0 || p.lastOffsetEpoch >= p.candidateEpoch) return respond(ErrorCode.INVALID_REQUEST, false);
    const err = this.validateVoterOnlyRequest(p.candidateId, p.candidateEpoch);
    if (err !== ErrorCode.NONE) return respond(err, false);
    // A pre-vote is hypothetical: it never moves the receiver to the candidate's epoch.
    if (!p.preVote && p.candidateEpoch > this.state.epoch) this.transitionToUnattached(p.candidateEpoch);
    if (request.voterId >= 0 && request.voterId !== this.nodeId) return respond(ErrorCode.INVALID_VOTER_KEY, false);
    if (!this.isLocalDirectory(p.voterDirectoryId)) return respond(ErrorCode.INVALID_VOTER_KEY, false);
    const upToDate = this.isLogUpToDate(p.lastOffsetEpoch, p.lastOffset);
    const granted = p.preVote ? this.canGrantPreVote(p.candidateId, p.candidateEpoch, upToDate) : this.canGrantVote(p.candidateId, upToDate);
    if (granted && !p.preVote) {
      const s = this.state;
      if ((s.name === 'Unattached' || s.name === 'Prospective') && s.votedId < 0) this.transitionToUnattachedVoted(p.candidateId, p.candidateEpoch);
    }
    return respond(ErrorCode.NONE, granted);
  }

  /** A binding vote in the current epoch (the candidate's epoch equals ours by now). */
  private canGrantVote(candidateId: number, upToDate: boolean): boolean {
    const s = this.state;
    switch (s.name) {
      case 'Unattached':
      case 'Prospective':
        return s.votedId >= 0 ? s.votedId === candidateId : upToDate;
      default:
        // A candidate voted for itself; a leader, follower or resigned leader knows this epoch's leader.
        return false;
    }
  }

  /** KIP-996: would this replica vote for `candidateId` in `candidateEpoch` (>= ours)? */
  private canGrantPreVote(candidateId: number, candidateEpoch: number, upToDate: boolean): boolean {
    const s = this.state;
    if (!upToDate) return false;
    switch (s.name) {
      case 'Leader':
        return false;
      case 'Follower':
        // Following a live leader: do not help anyone start an election.
        return !s.hasFetchedFromLeader;
      case 'Candidate':
        return candidateEpoch > s.epoch;
      case 'Resigned':
        return candidateEpoch > s.epoch;
      case 'Unattached':
      case 'Prospective':
        return candidateEpoch > s.epoch || s.votedId < 0 || s.votedId === candidateId;
    }
  }

  private handleBeginQuorumEpochRequest(request: BeginQuorumEpochRequest): BeginQuorumEpochResponse {
    if (!this.hasValidClusterId(request.clusterId)) return beginQuorumEpochResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const t = request.topics;
    if (t.length !== 1 || t[0].topicName !== METADATA_TOPIC || t[0].partitions.length !== 1 || t[0].partitions[0].partitionIndex !== METADATA_PARTITION) {
      return beginQuorumEpochResponse(ErrorCode.INVALID_REQUEST);
    }
    const p = t[0].partitions[0];
    const respond = (errorCode: number): BeginQuorumEpochResponse =>
      beginQuorumEpochResponse(ErrorCode.NONE, { errorCode, leaderId: this.state.leaderId, leaderEpoch: this.state.epoch });
    const err = this.validateVoterOnlyRequest(p.leaderId, p.leaderEpoch);
    if (err !== ErrorCode.NONE) return respond(err);
    this.maybeTransition(p.leaderId, p.leaderEpoch);
    if (request.voterId >= 0 && request.voterId !== this.nodeId) return respond(ErrorCode.INVALID_VOTER_KEY);
    return respond(ErrorCode.NONE);
  }

  private handleEndQuorumEpochRequest(request: EndQuorumEpochRequest): EndQuorumEpochResponse {
    if (!this.hasValidClusterId(request.clusterId)) return endQuorumEpochResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const t = request.topics;
    if (t.length !== 1 || t[0].topicName !== METADATA_TOPIC || t[0].partitions.length !== 1 || t[0].partitions[0].partitionIndex !== METADATA_PARTITION) {
      return endQuorumEpochResponse(ErrorCode.INVALID_REQUEST);
    }
    const p = t[0].partitions[0];
    const respond = (errorCode: number): EndQuorumEpochResponse =>
      endQuorumEpochResponse(ErrorCode.NONE, { errorCode, leaderId: this.state.leaderId, leaderEpoch: this.state.epoch });
    // KIP-853: the leader of our epoch may resign after removing itself from the voter set.
    const removedLeader = p.leaderEpoch === this.state.epoch && p.leaderId >= 0 && p.leaderId === this.state.leaderId;
    const err = removedLeader ? ErrorCode.NONE : this.validateVoterOnlyRequest(p.leaderId, p.leaderEpoch);
    if (err !== ErrorCode.NONE) return respond(err);
    this.maybeTransition(p.leaderId, p.leaderEpoch);
    const s = this.state;
    if (s.name === 'Follower' && s.leaderId === p.leaderId) {
      // The most caught up successor runs first; the others wait exponentially longer.
      const successors = p.preferredCandidates.length ? p.preferredCandidates.map((c) => c.candidateId) : p.preferredSuccessors;
      let position = successors.indexOf(this.nodeId);
      if (position < 0) position = successors.length;
      const backoff = this.strictExponentialElectionBackoffMs(position, successors.length);
      s.fetchDeadline = Math.min(s.fetchDeadline, this.clock.now() + backoff);
    }
    return respond(ErrorCode.NONE);
  }

  /** Returns the response, or null when the Fetch is parked until data arrives or maxWaitMs passes. */
  private handleFetchRequest(request: FetchRequest): FetchResponse | null {
    if (!this.hasValidClusterId(request.clusterId)) return fetchResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const t = request.topics;
    const ours = t.length === 1 && (t[0].topic === METADATA_TOPIC || t[0].topicId === METADATA_TOPIC_ID);
    if (!ours || t[0].partitions.length !== 1 || t[0].partitions[0].partition !== METADATA_PARTITION) return fetchResponse(ErrorCode.INVALID_REQUEST);
    const p = t[0].partitions[0];
    if (request.maxWaitMs < 0 || p.fetchOffset < 0n || p.lastFetchedEpoch < 0 || p.lastFetchedEpoch > p.currentLeaderEpoch) {
      return this.emptyFetchResponse(ErrorCode.INVALID_REQUEST, null);
    }
    const response = this.tryCompleteFetchRequest(request);
    const part = response.responses[0]?.partitions[0];
    const immediate =
      !part ||
      part.errorCode !== ErrorCode.NONE ||
      (part.records !== null && part.records.length > 0) ||
      request.maxWaitMs === 0 ||
      part.divergingEpoch.epoch >= 0 ||
      part.snapshotId.epoch >= 0;
    return immediate ? response : null;
  }

  private emptyFetchResponse(errorCode: number, highWatermark: bigint | null): FetchResponse {
    return fetchResponse(
      ErrorCode.NONE,
      {
        errorCode,
        highWatermark: highWatermark ?? -1n,
        logStartOffset: this.log.startOffset(),
        leaderId: this.state.leaderId,
        leaderEpoch: this.state.epoch,
        records: null,
      },
      this.leaderEndpoints(),
    );
  }

  /** The known leader's endpoint for a Fetch response's NodeEndpoints (Kafka's leaderEndpoints). */
  private leaderEndpoints(): FetchResponseNodeEndpoint[] {
    const leaderId = this.state.leaderId;
    if (leaderId < 0) return [];
    const own = leaderId === this.nodeId ? this.localListeners.find((l) => l.name === this.listenerName) : undefined;
    const e = own ?? this.endpointOf(leaderId);
    return e ? [{ nodeId: leaderId, host: e.host, port: e.port, rack: null }] : [];
  }

  private tryCompleteFetchRequest(request: FetchRequest): FetchResponse {
    const p = request.topics[0].partitions[0];
    const err = this.validateLeaderOnlyRequest(p.currentLeaderEpoch);
    if (err !== ErrorCode.NONE) return this.emptyFetchResponse(err, null);
    const s = this.state as LeaderState;
    const replicaId = fetchReplicaId(request);
    const latestSnapshot = this.log.latestSnapshotId();
    let valid: ValidOffsetAndEpoch;
    if (p.fetchOffset === 0n && latestSnapshot && !(latestSnapshot.offset === 0n && latestSnapshot.epoch === 0)) {
      // An empty follower is better served by the snapshot than by the whole log.
      valid = { kind: 'SNAPSHOT', offsetAndEpoch: latestSnapshot };
    } else {
      valid = validateOffsetAndEpoch(this.log, p.fetchOffset, p.lastFetchedEpoch);
    }
    let records: Buffer | null = null;
    if (valid.kind === 'VALID') {
      records = this.log.read(p.fetchOffset, Math.min(request.maxBytes, p.partitionMaxBytes > 0 ? p.partitionMaxBytes : request.maxBytes));
      if (replicaId >= 0 && replicaId !== this.nodeId) {
        if (s.updateReplicaState(replicaId, this.clock.now(), p.fetchOffset, this.log.endOffset().offset, p.replicaDirectoryId ?? NO_DIRECTORY_ID)) {
          this.log.updateHighWatermark(s.highWatermark!);
          this.listener.onHighWatermark?.(s.highWatermark!);
          this.maybeCompleteVoterChange(s);
          // Other parked fetches learn the new high watermark (not recursive: this one is not parked).
          this.pendingHighWatermarkCompletion = true;
        }
      }
    }
    return fetchResponse(
      ErrorCode.NONE,
      {
        errorCode: ErrorCode.NONE,
        highWatermark: s.highWatermark ?? -1n,
        logStartOffset: this.log.startOffset(),
        leaderId: this.nodeId,
        leaderEpoch: s.epoch,
        divergingEpoch: valid.kind === 'DIVERGING' ? valid.offsetAndEpoch : undefined,
        snapshotId: valid.kind === 'SNAPSHOT' ? valid.offsetAndEpoch : undefined,
        records,
      },
      this.leaderEndpoints(),
    );
  }

  private pendingHighWatermarkCompletion = false;
  private completingParked = false;

  /** Answers parked fetches that now have something to say (all of them when `all`). */
  private completeParkedFetches(all: boolean): void {
    if (this.completingParked) {
      this.pendingHighWatermarkCompletion = true;
      return;
    }
    this.completingParked = true;
    try {
      do {
        const forceAll = all || this.pendingHighWatermarkCompletion;
        this.pendingHighWatermarkCompletion = false;
        all = false;
        for (let i = 0; i < this.parkedFetches.length; ) {
          const f = this.parkedFetches[i];
          const response = this.tryCompleteFetchRequest(f.request);
          const part = response.responses[0].partitions[0];
          const hasData = part.records !== null && part.records.length > 0;
          if (forceAll || hasData || part.errorCode !== ErrorCode.NONE || part.divergingEpoch.epoch >= 0 || part.snapshotId.epoch >= 0) {
            this.parkedFetches.splice(i, 1);
            this.sink.sendResponse(f.source, f.correlationId, { apiKey: 'FETCH', data: response });
          } else i++;
        }
      } while (this.pendingHighWatermarkCompletion);
    } finally {
      this.completingParked = false;
    }
  }

  private expireParkedFetches(now: number): number {
    let wake = Infinity;
    for (let i = 0; i < this.parkedFetches.length; ) {
      const f = this.parkedFetches[i];
      if (now >= f.deadline) {
        this.parkedFetches.splice(i, 1);
        this.sink.sendResponse(f.source, f.correlationId, { apiKey: 'FETCH', data: this.tryCompleteFetchRequest(f.request) });
      } else {
        wake = Math.min(wake, f.deadline);
        i++;
      }
    }
    if (this.pendingHighWatermarkCompletion) this.completeParkedFetches(false);
    return wake;
  }

  private handleFetchSnapshotRequest(request: FetchSnapshotRequest): FetchSnapshotResponse {
    if (!this.hasValidClusterId(request.clusterId)) return fetchSnapshotResponse(ErrorCode.INCONSISTENT_CLUSTER_ID);
    const t = request.topics;
    if (t.length !== 1 || t[0].partitions.length !== 1) return fetchSnapshotResponse(ErrorCode.INVALID_REQUEST);
    const p = t[0].partitions[0];
    const s = this.state;
    const base = {
      snapshotId: { endOffset: p.snapshotId.endOffset, epoch: p.snapshotId.epoch },
      currentLeader: { leaderId: s.leaderId, leaderEpoch: s.epoch },
      size: -1n,
      position: -1n,
      unalignedRecords: Buffer.alloc(0),
    };
    if (t[0].name !== METADATA_TOPIC || p.partition !== METADATA_PARTITION) return fetchSnapshotResponse(ErrorCode.NONE, { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    const err = this.validateLeaderOnlyRequest(p.currentLeaderEpoch);
    if (err !== ErrorCode.NONE) return fetchSnapshotResponse(ErrorCode.NONE, { ...base, errorCode: err });
    const data = this.log.readSnapshot({ offset: p.snapshotId.endOffset, epoch: p.snapshotId.epoch });
    if (!data) return fetchSnapshotResponse(ErrorCode.NONE, { ...base, errorCode: ErrorCode.SNAPSHOT_NOT_FOUND });
    const size = BigInt(data.length);
    if (p.position < 0n || p.position >= size) return fetchSnapshotResponse(ErrorCode.NONE, { ...base, errorCode: ErrorCode.POSITION_OUT_OF_RANGE });
    const leader = s as LeaderState;
    const replicaId = request.replicaId;
    if (replicaId >= 0) leader.recordVoterContact(replicaId, this.clock.now());
    const start = Number(p.position);
    const maxBytes = Math.max(1, Math.min(request.maxBytes, this.fetchMaxBytes));
    const chunk = data.subarray(start, Math.min(data.length, start + maxBytes));
    return fetchSnapshotResponse(ErrorCode.NONE, { ...base, errorCode: ErrorCode.NONE, size, position: p.position, unalignedRecords: Buffer.from(chunk) });
  }

  private handleDescribeQuorumRequest(request: DescribeQuorumRequest): DescribeQuorumResponse {
    const t = request.topics;
    if (t.length !== 1 || t[0].topicName !== METADATA_TOPIC || t[0].partitions.length !== 1 || t[0].partitions[0].partitionIndex !== METADATA_PARTITION) {
      return describeQuorumResponse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
    }
    const s = this.state;
    if (s.name !== 'Leader') return describeQuorumResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, null);
    const now = this.clock.now();
    const describe = (r: ReplicaState): DescribeQuorumResponseReplicaState => {
      const self = r.replicaId === this.nodeId;
      return {
        replicaId: r.replicaId,
        replicaDirectoryId: self ? this.localKey.directoryId : (this.control.lastVoterSet().get(r.replicaId)?.key.directoryId ?? r.directoryId ?? NO_DIRECTORY_ID),
        logEndOffset: self ? this.log.endOffset().offset : (r.endOffset ?? -1n),
        lastFetchTimestamp: BigInt(self ? now : r.lastFetchTimestamp),
        lastCaughtUpTimestamp: BigInt(self ? now : r.lastCaughtUpTimestamp),
      };
    };
    return describeQuorumResponse(ErrorCode.NONE, null, {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      leaderId: this.nodeId,
      leaderEpoch: s.epoch,
      highWatermark: s.highWatermark ?? -1n,
      currentVoters: [...s.voterStates.values()].map(describe),
      observers: [...s.observerStates.values()].map(describe),
    }, this.control.lastVoterSet().nodes().map((v) => ({ nodeId: v.key.id, listeners: v.endpoints.map((e) => ({ name: e.name, host: e.host, port: e.port })) })));
  }

  // ---------------------------------------------------------------- inbound responses

  /** A follower voter whose entry in the voter set (kraft.version 1) differs from its own listeners or versions. */
  private needsVoterUpdate(s: FollowerState): boolean {
    if (this.localListeners.length === 0 || this.localKey.directoryId === NO_DIRECTORY_ID) return false;
    if (!s.hasFetchedFromLeader || s.fetchingSnapshot || this.voterUpdatedInEpoch === s.epoch || this.clock.now() < this.updateVoterAt) return false;
    if (this.control.lastKraftVersion() < KRAFT_VERSION_1) return false;
    const me = this.control.lastVoterSet().get(this.nodeId);
    if (!me || me.key.directoryId !== this.localKey.directoryId) return false;
    const same =
      me.kraftVersion.min === SUPPORTED_KRAFT_VERSIONS.min &&
      me.kraftVersion.max === SUPPORTED_KRAFT_VERSIONS.max &&
      me.endpoints.length === this.localListeners.length &&
      me.endpoints.every((e, i) => e.name === this.localListeners[i].name && e.host === this.localListeners[i].host && e.port === this.localListeners[i].port);
    if (same) this.voterUpdatedInEpoch = s.epoch;
    return !same;
  }

  /** Handles a response to a request this replica sent; unknown or stale correlation ids are dropped. */
  handleResponse(source: number, correlationId: number, response: RaftResponse): void {
    const f = this.inFlight.get(correlationId);
    if (!f || f.destination !== source || f.apiKey !== response.apiKey) return;
    this.inFlight.delete(correlationId);
    this.inFlightByDestination.delete(source);
    this.syncVoters();
    let ok: boolean;
    switch (response.apiKey) {
      case 'VOTE':
        ok = this.handleVoteResponse(source, f, response.data);
        break;
      case 'BEGIN_QUORUM_EPOCH':
        ok = this.handleBeginQuorumEpochResponse(source, response.data);
        break;
      case 'END_QUORUM_EPOCH':
        ok = this.handleEndQuorumEpochResponse(source, response.data);
        break;
      case 'FETCH':
        ok = this.handleFetchResponse(response.data);
        break;
      case 'FETCH_SNAPSHOT':
        ok = this.handleFetchSnapshotResponse(response.data);
        break;
      case 'UPDATE_RAFT_VOTER': {
        const d = response.data;
        // Only what it says about the leader is common handling; any other refusal (INVALID_REQUEST,
        // VOTER_NOT_FOUND, REQUEST_TIMED_OUT, ...) is retried after the update period.
        const leaderNews = d.errorCode === ErrorCode.FENCED_LEADER_EPOCH || d.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || d.errorCode === ErrorCode.UNKNOWN_LEADER_EPOCH;
        const handled = leaderNews ? this.maybeHandleCommonResponse(d.errorCode, d.currentLeader.leaderId, d.currentLeader.leaderEpoch) : null;
        ok = handled ?? d.errorCode === ErrorCode.NONE;
        if (d.errorCode === ErrorCode.NONE && d.currentLeader.leaderEpoch === this.state.epoch) this.voterUpdatedInEpoch = this.state.epoch;
        break;
      }
      default:
        ok = false;
    }
    if (!ok) this.backoffUntil.set(source, this.clock.now() + this.config.retryBackoffMs);
  }

  /**
   * Kafka's maybeHandleCommonResponse: true/false when the response was dealt with here (false:
   * back off before retrying), null when the API's own handling should continue.
   */
  private maybeHandleCommonResponse(error: number, leaderId: number, epoch: number): boolean | null {
    const s = this.state;
    if (epoch < s.epoch || error === ErrorCode.UNKNOWN_LEADER_EPOCH) return true;
    if (epoch > s.epoch || error === ErrorCode.FENCED_LEADER_EPOCH || error === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
      this.maybeTransition(leaderId, epoch);
      // Nothing new learned (e.g. fetching from a leader that just resigned): back off, do not spin.
      return this.state !== s;
    }
    if (epoch === s.epoch && leaderId >= 0 && leaderId !== this.nodeId && s.leaderId < 0) {
      this.transitionToFollower(epoch, leaderId);
      return error === ErrorCode.NONE ? null : true;
    }
    if (error === ErrorCode.BROKER_NOT_AVAILABLE) return false;
    if (error === ErrorCode.INVALID_VOTER_KEY || error === ErrorCode.INCONSISTENT_VOTER_SET) return false;
    if (error === ErrorCode.INVALID_REQUEST) throw new Error(`replica ${this.nodeId} received an INVALID_REQUEST error: a bug in the request it sent`);
    return null;
  }

  private handleVoteResponse(source: number, f: InFlight, response: VoteResponse): boolean {
    if (response.errorCode !== ErrorCode.NONE) {
      // KIP-996: a voter that does not know pre-vote (Vote < v2) answers UNSUPPORTED_VERSION; count it as granted.
      if (response.errorCode === ErrorCode.UNSUPPORTED_VERSION && f.preVote) return this.recordPreVote(source, f, true);
      return false;
    }
    const t = response.topics;
    if (t.length !== 1 || t[0].partitions.length !== 1) return false;
    const p = t[0].partitions[0];
    if (f.preVote && p.errorCode === ErrorCode.NONE && p.leaderEpoch <= this.state.epoch) {
      // A pre-vote answer binds nothing, so one from a voter still in an older epoch counts too. A
      // rejection naming the leader of our epoch means that voter still follows it: follow it again.
      const s = this.state;
      if (!p.voteGranted && p.leaderEpoch === s.epoch && p.leaderId >= 0 && p.leaderId !== this.nodeId && s.name === 'Prospective' && s.epoch === f.epoch) {
        this.transitionToFollower(s.epoch, p.leaderId);
        return true;
      }
      return this.recordPreVote(source, f, p.voteGranted);
    }
    const handled = this.maybeHandleCommonResponse(p.errorCode, p.leaderId, p.leaderEpoch);
    if (handled !== null) return handled;
    if (p.errorCode !== ErrorCode.NONE) return false;
    if (f.preVote) return this.recordPreVote(source, f, p.voteGranted);
    const s = this.state;
    if (s.name === 'Candidate' && s.epoch === f.epoch) {
      s.tally.record(source, p.voteGranted);
      if (s.tally.isGranted()) this.transitionToLeader();
      else if (s.tally.isRejected() && s.backoffUntil === null) {
        // No majority left: back off at once instead of waiting out the election timeout.
        s.backoffUntil = this.clock.now() + this.binaryExponentialElectionBackoffMs(s.retries);
      }
    }
    return true;
  }

  private recordPreVote(source: number, f: InFlight, granted: boolean): boolean {
    const s = this.state;
    if (s.name !== 'Prospective' || s.epoch !== f.epoch) return true;
    s.tally.record(source, granted);
    if (s.tally.isGranted()) this.transitionToCandidate(s.retries);
    else if (s.tally.isRejected()) this.prospectiveLost();
    return true;
  }

  private handleBeginQuorumEpochResponse(source: number, response: BeginQuorumEpochResponse): boolean {
    return this.handleQuorumEpochResponse(response, () => {
      const s = this.state;
      if (s.name === 'Leader') s.addAcknowledgementFrom(source);
    });
  }

  private handleEndQuorumEpochResponse(source: number, response: EndQuorumEpochResponse): boolean {
    return this.handleQuorumEpochResponse(response, () => {
      const s = this.state;
      if (s.name === 'Resigned') s.acknowledgeResignation(source);
    });
  }

  /**
   * A BeginQuorumEpoch or EndQuorumEpoch answer: its one partition, the common error / leader
   * handling, then `acknowledged` when the voter accepted it.
   */
  private handleQuorumEpochResponse(response: BeginQuorumEpochResponse | EndQuorumEpochResponse, acknowledged: () => void): boolean {
    if (response.errorCode !== ErrorCode.NONE) return false;
    const t = response.topics;
    if (t.length !== 1 || t[0].partitions.length !== 1) return false;
    const p = t[0].partitions[0];
    const handled = this.maybeHandleCommonResponse(p.errorCode, p.leaderId, p.leaderEpoch);
    if (handled !== null) return handled;
    if (p.errorCode !== ErrorCode.NONE) return false;
    acknowledged();
    return true;
  }

  private handleFetchResponse(response: FetchResponse): boolean {
    // KIP-853: the leader names its endpoint, which an observer that found it through a bootstrap
    // server (or a replica whose voter set does not name it yet) connects to.
    for (const e of response.nodeEndpoints ?? []) if (e.nodeId >= 0 && e.nodeId !== this.nodeId) this.learnedEndpoints.set(e.nodeId, { host: e.host, port: e.port });
    if (response.errorCode !== ErrorCode.NONE) return false;
    const t = response.responses;
    if (t.length !== 1 || t[0].partitions.length !== 1) return false;
    const p = t[0].partitions[0];
    const handled = this.maybeHandleCommonResponse(p.errorCode, p.currentLeader.leaderId, p.currentLeader.leaderEpoch);
    if (handled !== null) return handled;
    const s = this.state;
    if (s.name !== 'Follower') return true;
    if (p.errorCode !== ErrorCode.NONE) return false;
    if (p.divergingEpoch.epoch >= 0) {
      const diverging = { offset: p.divergingEpoch.endOffset, epoch: p.divergingEpoch.epoch };
      if (diverging.offset < this.log.highWatermark()) {
        throw new Error(`replica ${this.nodeId}: the leader asked for truncation to ${diverging.offset}, below the high watermark ${this.log.highWatermark()}`);
      }
      this.log.truncateToEndOffset(diverging);
      this.syncVoters();
    } else if (p.snapshotId.epoch >= 0 || p.snapshotId.endOffset >= 0n) {
      if (p.snapshotId.epoch < 0 || p.snapshotId.endOffset < 0n) return false;
      const id = { offset: p.snapshotId.endOffset, epoch: p.snapshotId.epoch };
      if (!this.log.readSnapshot(id)) s.fetchingSnapshot = { id, position: 0n, size: null, chunks: [] };
      else this.log.truncateToLatestSnapshot();
      this.syncVoters();
    } else {
      if (p.records && p.records.length > 0) {
        const first = splitBatches(p.records)[0];
        // Only whole batches continuing the log (a late response for an older position is dropped).
        if (!first || first.baseOffset !== this.log.endOffset().offset) return false;
        this.log.appendAsFollower(p.records);
        // Voters make a fetched append durable before the next Fetch reports it.
        this.log.flush();
        // The fetched batches feed the control-record state directly (no read back).
        this.control.observe(p.records);
        this.syncVoters();
      }
      this.updateFollowerHighWatermark(s, p.highWatermark);
    }
    s.hasFetchedFromLeader = true;
    s.fetchDeadline = this.clock.now() + this.config.fetchTimeoutMs;
    return true;
  }

  private updateFollowerHighWatermark(s: FollowerState, highWatermark: bigint): void {
    if (highWatermark < 0n) return;
    if (s.highWatermark !== null && highWatermark < s.highWatermark) return;
    s.highWatermark = highWatermark;
    const before = this.log.highWatermark();
    this.log.updateHighWatermark(highWatermark);
    if (this.log.highWatermark() !== before) this.listener.onHighWatermark?.(this.log.highWatermark());
  }

  private handleFetchSnapshotResponse(response: FetchSnapshotResponse): boolean {
    if (response.errorCode !== ErrorCode.NONE) return false;
    const t = response.topics;
    if (t.length !== 1 || t[0].partitions.length !== 1) return false;
    const p = t[0].partitions[0];
    const handled = this.maybeHandleCommonResponse(p.errorCode, p.currentLeader.leaderId, p.currentLeader.leaderEpoch);
    if (handled !== null) return handled;
    const s = this.state;
    if (s.name !== 'Follower' || !s.fetchingSnapshot) return true;
    const fs = s.fetchingSnapshot;
    if (p.errorCode === ErrorCode.SNAPSHOT_NOT_FOUND || p.errorCode === ErrorCode.POSITION_OUT_OF_RANGE) {
      // The leader no longer has it (or we asked wrongly): start again from a Fetch.
      s.fetchingSnapshot = null;
      return true;
    }
    if (p.errorCode !== ErrorCode.NONE) return false;
    if (p.snapshotId.endOffset !== fs.id.offset || p.snapshotId.epoch !== fs.id.epoch || p.position !== fs.position) return false;
    if (fs.size !== null && fs.size !== p.size) {
      s.fetchingSnapshot = null;
      return false;
    }
    fs.size = p.size;
    fs.chunks.push(Buffer.from(p.unalignedRecords));
    fs.position += BigInt(p.unalignedRecords.length);
    if (fs.position >= fs.size) {
      this.log.storeFetchedSnapshot(fs.id, Buffer.concat(fs.chunks));
      this.log.truncateToLatestSnapshot();
      this.syncVoters();
      s.fetchingSnapshot = null;
      this.updateFollowerHighWatermark(s, fs.id.offset);
    }
    s.hasFetchedFromLeader = true;
    s.fetchDeadline = this.clock.now() + this.config.fetchTimeoutMs;
    return true;
  }
}
