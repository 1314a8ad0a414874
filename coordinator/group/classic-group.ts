/**
 * A classic (JoinGroup/SyncGroup) group as the coordinator holds it in memory: its state, generation,
 * protocol type and selected protocol, leader, members with the responses they are parked on, and
 * the bookkeeping the rebalance protocol needs (members still to join, members still to sync,
 * static instance ids). Kafka's ClassicGroup is the model; the protocol logic that drives these
 * transitions lives in GroupMetadataManager.
 *
 * States and the only transitions allowed (anything else is a bug and throws):
 *   Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
 *   CompletingRebalance --leader's SyncGroup persisted--> Stable
 *   Stable | CompletingRebalance --member change--> PreparingRebalance
 *   PreparingRebalance --nobody left--> Empty;  any --unloaded/deleted--> Dead
 *
 * Invariants:
 * - `numMembersAwaitingJoin` equals the number of members whose `awaitingJoin` is set; only `add`,
 *   `remove`, `updateMember` and `completeJoin` change either.
 * - A protocol is a candidate iff every member supports it (`supportedProtocols` counts members per
 *   protocol name).
 * - `staticMembers` maps each group.instance.id to the one member id that currently owns it.
 * - Byte fields (protocol metadata, assignments) are private copies, never views of a request frame.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { Reader } from '../../protocol/primitives/reader';
import type { Input } from '../../protocol/primitives/input';
import type { GroupMetadataValue } from '../../protocol/generated/records/group-coordinator/group-metadata-value';

export type ClassicGroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

const VALID_PREVIOUS: Record<ClassicGroupState, readonly ClassicGroupState[]> = {
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  Empty: ['PreparingRebalance'],
};

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
export const EMPTY_ASSIGNMENT: Buffer = Buffer.alloc(0);

export interface JoinGroupProtocol {
  name: string;
  metadata: Buffer;
}

/** What a parked (or immediate) JoinGroup gets; the handler shapes it for the request version. */
export interface JoinResult {
  errorCode: number;
  memberId: string;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export function joinError(memberId: string, errorCode: number): JoinResult {
  return { errorCode, memberId, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, members: [] };
}

export function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY_ASSIGNMENT };
}

/** A response a request handler waits for while the group decides. */
export class Deferred<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  constructor() {
    this.promise = new Promise<T>((resolve) => (this.resolve = resolve));
  }
}

export class ClassicGroupMember {
  awaitingJoin: Deferred<JoinResult> | null = null;
  awaitingSync: Deferred<SyncResult> | null = null;
  /** Joined for the first time and has not yet received a JoinGroup response. */
  isNew = false;

  constructor(
    readonly memberId: string,
    readonly groupInstanceId: string | null,
    public clientId: string,
    public clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public protocols: JoinGroupProtocol[],
    public assignment: Buffer = EMPTY_ASSIGNMENT,
  ) {}

  get isStatic(): boolean {
    return this.groupInstanceId !== null;
  }

  get isAwaitingJoin(): boolean {
    return this.awaitingJoin !== null;
  }

  get isAwaitingSync(): boolean {
    return this.awaitingSync !== null;
  }

  /**
   * Whether a session-timeout expiry should spare this member: members parked in a rebalance have
   * nothing to heartbeat with (their connection is busy), except brand-new members, which are
   * timed out if their first join takes too long.
   */
  hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return false;
    return this.isAwaitingJoin || this.isAwaitingSync;
  }

  /** The member's metadata for a protocol (empty if it does not support it). */
  metadata(protocolName: string | null): Buffer {
    return this.protocols.find((p) => p.name === protocolName)?.metadata ?? EMPTY_ASSIGNMENT;
  }

  /** The member's first choice among the candidates. */
  vote(candidates: ReadonlySet<string>): string {
    const p = this.protocols.find((x) => candidates.has(x.name));
    if (!p) throw new Error(`member ${this.memberId} does not support any of the candidate protocols`);
    return p.name;
  }

  /** Same protocols, same order, same metadata. */
  matches(protocols: readonly JoinGroupProtocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    for (let i = 0; i < protocols.length; i++) {
      if (protocols[i].name !== this.protocols[i].name || !protocols[i].metadata.equals(this.protocols[i].metadata)) return false;
    }
    return true;
  }
}

export interface ClassicGroupInit {
  generationId?: number;
  protocolType?: string | null;
  protocolName?: string | null;
  leaderId?: string | null;
  currentStateTimestamp?: number | null;
}

export class ClassicGroup {
  private _state: ClassicGroupState;
  private _previousState: ClassicGroupState = 'Dead';
  currentStateTimestamp: number | null;
  protocolType: string | null;
  protocolName: string | null;
  generationId: number;
  leaderId: string | null;
  /** Topics the members subscribe to (consumer protocol); null when unknown. */
  subscribedTopics: Set<string> | null = null;
  /** A member joined during the initial delay: extend it (group.initial.rebalance.delay.ms). */
  newMemberAdded = false;

  private readonly members = new Map<string, ClassicGroupMember>();
  private readonly staticMembers = new Map<string, string>();
  private readonly pendingJoinMembers = new Set<string>();
  private readonly pendingSyncMembers = new Set<string>();
  private readonly supportedProtocols = new Map<string, number>();
  private numMembersAwaitingJoin = 0;

  constructor(
    readonly groupId: string,
    initialState: ClassicGroupState,
    private readonly now: () => number,
    init: ClassicGroupInit = {},
  ) {
    this._state = initialState;
    this.generationId = init.generationId ?? 0;
    this.protocolType = init.protocolType ?? null;
    this.protocolName = init.protocolName ?? null;
    this.leaderId = init.leaderId ?? null;
    this.currentStateTimestamp = init.currentStateTimestamp === undefined ? now() : init.currentStateTimestamp;
  }

  /** A group rebuilt from its GroupMetadataValue record (loading __consumer_offsets). */
  static fromRecord(groupId: string, value: GroupMetadataValue, now: () => number): ClassicGroup {
    const protocolType = value.protocolType === '' ? null : value.protocolType;
    const g = new ClassicGroup(groupId, value.members.length === 0 ? 'Empty' : 'Stable', now, {
      generationId: value.generation,
      protocolType,
      protocolName: value.protocol,
      leaderId: value.leader,
      currentStateTimestamp: value.currentStateTimestamp === -1n ? null : Number(value.currentStateTimestamp),
    });
    for (const m of value.members) {
      g.add(
        new ClassicGroupMember(
          m.memberId,
          m.groupInstanceId,
          m.clientId,
          m.clientHost,
          m.rebalanceTimeout === -1 ? m.sessionTimeout : m.rebalanceTimeout,
          m.sessionTimeout,
          value.protocolType,
          [{ name: value.protocol ?? '', metadata: Buffer.from(m.subscription) }],
          Buffer.from(m.assignment),
        ),
      );
    }
    g.subscribedTopics = g.computeSubscribedTopics();
    return g;
  }

  get state(): ClassicGroupState {
    return this._state;
  }

  get previousState(): ClassicGroupState {
    return this._previousState;
  }

  is(state: ClassicGroupState): boolean {
    return this._state === state;
  }

  get size(): number {
    return this.members.size;
  }

  get isEmpty(): boolean {
    return this._state === 'Empty';
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  member(memberId: string): ClassicGroupMember | undefined {
    return this.members.get(memberId);
  }

  allMembers(): ClassicGroupMember[] {
    return [...this.members.values()];
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  get usesConsumerProtocol(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE;
  }

  canRebalance(): boolean {
    return VALID_PREVIOUS.PreparingRebalance.includes(this._state);
  }

  transitionTo(target: ClassicGroupState): void {
    if (!VALID_PREVIOUS[target].includes(this._state)) {
      throw new Error(`group ${this.groupId} cannot move from ${this._state} to ${target}`);
    }
    this._previousState = this._state;
    this._state = target;
    this.currentStateTimestamp = this.now();
  }

  /** Largest rebalance timeout among the members (how long a join phase may take). */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  generateMemberId(clientId: string, groupInstanceId: string | null): string {
    return `${groupInstanceId ?? clientId}-${randomUUID()}`;
  }

  add(member: ClassicGroupMember, joinFuture: Deferred<JoinResult> | null = null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) {
        throw new Error(`static member ${member.groupInstanceId} is already in group ${this.groupId}`);
      }
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.protocolType !== member.protocolType) throw new Error('the group and member protocol types differ');
    if (!this.supportsProtocols(member.protocolType, member.protocols.map((p) => p.name))) {
      throw new Error(`none of member ${member.memberId}'s protocols is supported by group ${this.groupId}`);
    }
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.countProtocols(member, 1);
    member.awaitingJoin = joinFuture;
    if (joinFuture) this.numMembersAwaitingJoin++;
    this.pendingJoinMembers.delete(member.memberId);
  }

  remove(memberId: string): void {
    const m = this.members.get(memberId);
    if (m) {
      // Callers answer a parked request before removing its member; this only makes sure no
      // request is ever left waiting.
      this.completeJoin(m, joinError('', ErrorCode.UNKNOWN_MEMBER_ID));
      this.completeSync(m, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
      this.members.delete(memberId);
      this.countProtocols(m, -1);
      if (m.groupInstanceId !== null) this.staticMembers.delete(m.groupInstanceId);
    }
    if (this.leaderId === memberId) {
      const next = this.members.keys().next();
      this.leaderId = next.done ? null : next.value;
    }
    this.pendingJoinMembers.delete(memberId);
    this.pendingSyncMembers.delete(memberId);
  }

  private countProtocols(member: ClassicGroupMember, delta: number): void {
    for (const p of member.protocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) + delta);
  }

  /**
   * An Empty group takes any non-empty protocol type with at least one protocol; otherwise the type
   * must match and at least one protocol must be supported by every current member.
   */
  supportsProtocols(protocolType: string, protocolNames: readonly string[]): boolean {
    if (this._state === 'Empty') return protocolType !== '' && protocolNames.length > 0;
    if (this.protocolType !== protocolType) return false;
    return protocolNames.some((n) => (this.supportedProtocols.get(n) ?? 0) === this.members.size);
  }

  private candidateProtocols(): Set<string> {
    const out = new Set<string>();
    for (const [name, count] of this.supportedProtocols) if (count === this.members.size) out.add(name);
    return out;
  }

  /** Each member votes for its preferred candidate; the most votes wins. */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error(`cannot select a protocol for empty group ${this.groupId}`);
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const v = m.vote(candidates);
      votes.set(v, (votes.get(v) ?? 0) + 1);
    }
    let best = '';
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best;
  }

  /** If the leader did not rejoin, the first member that did becomes leader. False if nobody rejoined. */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const leader = this.members.get(this.leaderId);
    if (leader?.isAwaitingJoin) return true;
    for (const m of this.members.values()) {
      if (m.isAwaitingJoin) {
        this.leaderId = m.memberId;
        return true;
      }
    }
    return false;
  }

  /** Static membership: the instance id moves to a new member id; the old one is fenced. */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): ClassicGroupMember {
    const old = this.members.get(oldMemberId);
    if (!old) throw new Error(`cannot replace unknown member ${oldMemberId}`);
    // A duplicate instance may still be parked on the old id: fence it now (while it is still a
    // member, so the count of parked joins stays right).
    this.completeJoin(old, joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    this.completeSync(old, syncError(ErrorCode.FENCED_INSTANCE_ID));
    this.members.delete(oldMemberId);
    const m = new ClassicGroupMember(
      newMemberId,
      old.groupInstanceId,
      old.clientId,
      old.clientHost,
      old.rebalanceTimeoutMs,
      old.sessionTimeoutMs,
      old.protocolType,
      old.protocols,
      old.assignment,
    );
    this.members.set(newMemberId, m);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    this.staticMembers.set(groupInstanceId, newMemberId);
    return m;
  }

  isPendingMember(memberId: string): boolean {
    return this.pendingJoinMembers.has(memberId);
  }

  addPendingMember(memberId: string): void {
    if (this.members.has(memberId)) throw new Error(`${memberId} is already a member of ${this.groupId}`);
    this.pendingJoinMembers.add(memberId);
  }

  get numPendingJoinMembers(): number {
    return this.pendingJoinMembers.size;
  }

  addPendingSyncMember(memberId: string): void {
    this.pendingSyncMembers.add(memberId);
  }

  removePendingSyncMember(memberId: string): void {
    this.pendingSyncMembers.delete(memberId);
  }

  hasReceivedSyncFromAllMembers(): boolean {
    return this.pendingSyncMembers.size === 0;
  }

  allPendingSyncMembers(): string[] {
    return [...this.pendingSyncMembers];
  }

  clearPendingSyncMembers(): void {
    this.pendingSyncMembers.clear();
  }

  hasStaticMember(groupInstanceId: string): boolean {
    return this.staticMembers.has(groupInstanceId);
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  numStaticMembers(): number {
    return this.staticMembers.size;
  }

  notYetRejoinedMembers(): ClassicGroupMember[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numMembersAwaitingJoin && this.pendingJoinMembers.size === 0;
  }

  get numAwaitingJoinResponse(): number {
    return this.numMembersAwaitingJoin;
  }

  /**
   * Checks that the member exists and, for a static member, that the instance id maps to this
   * member id: UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID otherwise.
   */
  validateMember(memberId: string, groupInstanceId: string | null): void {
    if (groupInstanceId !== null) {
      const existing = this.staticMembers.get(groupInstanceId);
      if (existing === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID);
      if (existing !== memberId) throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID);
    }
    if (!this.members.has(memberId)) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID);
  }

  isStaticMemberFenced(groupInstanceId: string, memberId: string): boolean {
    const existing = this.staticMembers.get(groupInstanceId);
    return existing !== undefined && existing !== memberId;
  }

  updateMember(
    member: ClassicGroupMember,
    protocols: JoinGroupProtocol[],
    rebalanceTimeoutMs: number,
    sessionTimeoutMs: number,
    joinFuture: Deferred<JoinResult> | null,
  ): void {
    this.countProtocols(member, -1);
    member.protocols = protocols;
    this.countProtocols(member, 1);
    member.rebalanceTimeoutMs = rebalanceTimeoutMs;
    member.sessionTimeoutMs = sessionTimeoutMs;
    if (joinFuture && !member.isAwaitingJoin) this.numMembersAwaitingJoin++;
    else if (!joinFuture && member.isAwaitingJoin) this.numMembersAwaitingJoin--;
    member.awaitingJoin = joinFuture;
  }

  /** Answers the member's parked JoinGroup, if any. */
  completeJoin(member: ClassicGroupMember, result: JoinResult): boolean {
    if (!member.awaitingJoin) return false;
    const d = member.awaitingJoin;
    member.awaitingJoin = null;
    if (this.members.get(member.memberId) === member) this.numMembersAwaitingJoin--;
    d.resolve(result);
    return true;
  }

  /** Answers the member's parked SyncGroup, if any. */
  completeSync(member: ClassicGroupMember, result: SyncResult): boolean {
    if (!member.awaitingSync) return false;
    const d = member.awaitingSync;
    member.awaitingSync = null;
    d.resolve(result);
    return true;
  }

  /** The next generation: CompletingRebalance with a selected protocol, or Empty. */
  initNextGeneration(): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo('CompletingRebalance');
    } else {
      this.protocolName = null;
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo('Empty');
    }
    this.clearPendingSyncMembers();
  }

  /** Members as the leader's JoinGroup response lists them. */
  currentMemberMetadata(): JoinResult['members'] {
    if (this._state === 'Dead' || this._state === 'PreparingRebalance') {
      throw new Error(`cannot list member metadata of group ${this.groupId} in state ${this._state}`);
    }
    return [...this.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadata(this.protocolName),
    }));
  }

  groupAssignment(): Map<string, Buffer> {
    return new Map([...this.members.values()].map((m) => [m.memberId, m.assignment]));
  }

  /** The GroupMetadataValue that persists this group with the given assignment. */
  toRecordValue(assignment: ReadonlyMap<string, Buffer>): Input<GroupMetadataValue> {
    return {
      protocolType: this.protocolType ?? '',
      generation: this.generationId,
      protocol: this.protocolName,
      leader: this.leaderId,
      currentStateTimestamp: BigInt(this.currentStateTimestamp ?? -1),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: m.metadata(this.protocolName),
        assignment: assignment.get(m.memberId) ?? EMPTY_ASSIGNMENT,
      })),
    };
  }

  /**
   * Whether the group consumes a topic (OffsetDelete refuses those, expiry spares them). Unknown
   * subscriptions count as subscribed for consumer-protocol groups.
   */
  isSubscribedToTopic(topic: string): boolean {
    if (this.subscribedTopics) return this.subscribedTopics.has(topic);
    return this.usesConsumerProtocol;
  }

  /**
   * The union of the members' subscribed topics for a "consumer" group, parsed with the v0 prefix
   * every ConsumerProtocolSubscription version starts with; null when it cannot be known.
   */
  computeSubscribedTopics(): Set<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null;
    if (this.members.size === 0) return new Set();
    if (this.protocolName === null) return null;
    const topics = new Set<string>();
    try {
      for (const m of this.members.values()) {
        const r = new Reader(m.metadata(this.protocolName));
        const version = r.int16();
        if (version < 0) return null;
        const n = r.arrayLength(2);
        for (let i = 0; i < n; i++) topics.add(r.string());
      }
    } catch {
      return null;
    }
    return topics;
  }
}
