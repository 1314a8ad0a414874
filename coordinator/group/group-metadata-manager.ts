/**
 * The classic rebalance protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) over the groups this
 * broker coordinates, following Kafka's GroupMetadataManager: which error each request gets in each
 * group state, when a rebalance starts and completes, the session/rebalance/sync deadlines, the
 * initial rebalance delay, static membership and group.max.size.
 *
 * Owns the in-memory groups. Every method runs on the group's serial queue (the GroupCoordinator
 * guarantees it), so a method sees the group unchanged except across its own `await`s, and those
 * only wait for __consumer_offsets appends. Requests that must wait for other members (JoinGroup,
 * SyncGroup) get a promise that is resolved later by another request or a timer; the queue is never
 * held while a request waits.
 *
 * What is persisted (GroupMetadataValue): the group after the leader's SyncGroup (with the
 * assignment), the group each time it becomes Empty, and a static member's new member id when it
 * rejoins a Stable group. A failed write of the assignment sends the members back to rebalance.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { coordinatorAppendError } from '../coordinator-append-error';
import type { Logger } from '../../common/logger';
import type { CoordinatorTimer } from './coordinator-timer';
import type { GroupCoordinatorConfig } from './group-coordinator-config';
import { groupMetadataRecord, type CoordinatorRecord } from './coordinator-records';
import {
  ClassicGroup,
  ClassicGroupMember,
  Deferred,
  EMPTY_ASSIGNMENT,
  joinError,
  syncError,
  type JoinGroupProtocol,
  type JoinResult,
  type SyncResult,
} from './classic-group';

/** What the managers need from the coordinator around them. */
export interface CoordinatorContext {
  readonly config: GroupCoordinatorConfig;
  readonly log: Logger;
  readonly timer: CoordinatorTimer;
  now(): number;
  /**
   * Appends records to the group's __consumer_offsets partition and waits until they are
   * committed. Resolves NONE, or the append's error code (NOT_COORDINATOR if this broker stopped
   * coordinating the group meanwhile).
   */
  append(groupId: string, records: CoordinatorRecord[]): Promise<number>;
  /**
   * `append` that also tells where the records went, and (TxnOffsetCommit) writes them as a
   * transactional batch of the given producer.
   */
  appendWithOffset(groupId: string, records: CoordinatorRecord[], txn?: TransactionalProducer): Promise<{ errorCode: number; baseOffset: bigint }>;
}

/** The producer a transactional offset commit is written for. */
export interface TransactionalProducer {
  producerId: bigint;
  producerEpoch: number;
}

export interface JoinGroupParams {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: JoinGroupProtocol[];
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  clientId: string;
  clientHost: string;
  /** JoinGroup v4+: a new dynamic member first gets MEMBER_ID_REQUIRED with its id. */
  requireKnownMemberId: boolean;
  /** JoinGroup v9+: a rejoining static leader may be told to skip the assignment. */
  supportSkippingAssignment: boolean;
  reason: string | null;
}

export interface SyncGroupParams {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface LeaveMemberResult {
  memberId: string;
  groupInstanceId: string | null;
  errorCode: number;
}

/**
 * A response that may come later. Wrapped in an object on purpose: returning the bare promise from
 * an async method would make the caller (and the group's queue) wait for it.
 */
export interface Pending<T> {
  readonly response: Promise<T>;
}

function answered<T>(value: T): Pending<T> {
  return { response: Promise.resolve(value) };
}

const heartbeatKey = (groupId: string, memberId: string): string => `heartbeat:${groupId}:${memberId}`;
const joinKey = (groupId: string): string => `join:${groupId}`;
const syncKey = (groupId: string): string => `sync:${groupId}`;

/**
 * Errors of a failed group metadata append, as the client should see them (Kafka's
 * appendGroupMetadataErrorToResponseError).
 */
export function appendErrorToResponseError(code: number): number {
  return coordinatorAppendError(code, ErrorCode.UNKNOWN_SERVER_ERROR);
}

export class GroupMetadataManager {
  readonly groups = new Map<string, ClassicGroup>();
  private readonly log: Logger;

  constructor(private readonly ctx: CoordinatorContext) {
    this.log = ctx.log;
  }

  group(groupId: string): ClassicGroup | undefined {
    return this.groups.get(groupId);
  }

  /** The group, created Empty when asked to (a first JoinGroup, a simple consumer's commit). */
  getOrCreateGroup(groupId: string): ClassicGroup {
    let g = this.groups.get(groupId);
    if (!g) {
      g = new ClassicGroup(groupId, 'Empty', () => this.ctx.now());
      this.groups.set(groupId, g);
    }
    return g;
  }

  /** Forgets a group that was created for a request that then failed (nothing was persisted). */
  dropIfUnused(group: ClassicGroup, hasOffsets: boolean): void {
    if (group.is('Empty') && group.size === 0 && group.numPendingJoinMembers === 0 && !hasOffsets && group.generationId === 0) {
      if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
    }
  }

  // ---- JoinGroup ------------------------------------------------------------------------------

  async joinGroup(p: JoinGroupParams, hasOffsets: boolean): Promise<Pending<JoinResult>> {
    const future = new Deferred<JoinResult>();
    const isUnknownMember = p.memberId === '';
    const existed = this.groups.get(p.groupId);
    if (!existed && !isUnknownMember) {
      // A member id for a group that does not exist: the member must start over.
      return answered(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
    const group = existed ?? this.getOrCreateGroup(p.groupId);
    if (!this.acceptJoiningMember(group, p.memberId)) {
      group.remove(p.memberId);
      future.resolve(joinError('', ErrorCode.GROUP_MAX_SIZE_REACHED));
    } else if (isUnknownMember) {
      await this.joinNewMember(group, p, future);
    } else {
      await this.joinExistingMember(group, p, future);
    }
    if (!existed) this.dropIfUnused(group, hasOffsets);
    return { response: future.promise };
  }

  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    switch (group.state) {
      case 'Empty':
      case 'Dead':
        return true;
      case 'PreparingRebalance':
        // Counting members already parked (not the group size, which may exceed a lowered limit)
        // lets the last ones to rejoin be the ones turned away.
        return (group.member(memberId)?.isAwaitingJoin ?? false) || group.numAwaitingJoinResponse < this.ctx.config.maxSize;
      case 'CompletingRebalance':
      case 'Stable':
        return group.has(memberId) || group.size < this.ctx.config.maxSize;
    }
  }

  private async joinNewMember(group: ClassicGroup, p: JoinGroupParams, future: Deferred<JoinResult>): Promise<void> {
    if (group.is('Dead')) {
      future.resolve(joinError('', ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return;
    }
    if (!group.supportsProtocols(p.protocolType, p.protocols.map((x) => x.name))) {
      future.resolve(joinError('', ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return;
    }
    const newMemberId = group.generateMemberId(p.clientId, p.groupInstanceId);
    if (p.groupInstanceId !== null) {
      const existing = group.staticMemberId(p.groupInstanceId);
      if (existing !== undefined) {
        this.log.info(`static member ${p.groupInstanceId} rejoins group ${group.groupId} in ${group.state}; ${existing} is replaced by ${newMemberId}`);
        await this.updateStaticMemberThenRebalanceOrCompleteJoin(group, p, existing, newMemberId, future);
      } else {
        this.addMemberThenRebalanceOrCompleteJoin(group, p, newMemberId, future);
      }
    } else if (p.requireKnownMemberId) {
      // The member gets its id and must come back with it; until then it counts as pending.
      group.addPendingMember(newMemberId);
      this.ctx.timer.schedule(group.groupId, heartbeatKey(group.groupId, newMemberId), p.sessionTimeoutMs, () =>
        this.expireHeartbeat(group.groupId, newMemberId),
      );
      future.resolve(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
    } else {
      this.addMemberThenRebalanceOrCompleteJoin(group, p, newMemberId, future);
    }
  }

  private async joinExistingMember(group: ClassicGroup, p: JoinGroupParams, future: Deferred<JoinResult>): Promise<void> {
    if (group.is('Dead')) {
      future.resolve(joinError(p.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return;
    }
    if (!group.supportsProtocols(p.protocolType, p.protocols.map((x) => x.name))) {
      future.resolve(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return;
    }
    if (group.isPendingMember(p.memberId)) {
      if (p.groupInstanceId !== null) {
        // Pending members are dynamic by construction; a client mixing the two must start over.
        future.resolve(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return;
      }
      this.addMemberThenRebalanceOrCompleteJoin(group, p, p.memberId, future);
      return;
    }
    try {
      group.validateMember(p.memberId, p.groupInstanceId);
    } catch (err) {
      future.resolve(joinError(p.memberId, (err as KafkaError).code));
      return;
    }
    const member = group.member(p.memberId)!;
    switch (group.state) {
      case 'PreparingRebalance':
        this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, future, 'member joining during PreparingRebalance');
        return;
      case 'CompletingRebalance':
        if (member.matches(p.protocols)) {
          // Same metadata (the member probably lost the JoinGroup response): the current generation.
          future.resolve(this.currentGenerationResult(group, member.memberId, group.isLeader(member.memberId), group.leaderId ?? ''));
        } else {
          this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, future, 'member metadata changed during CompletingRebalance');
        }
        return;
      case 'Stable':
        if (group.isLeader(member.memberId)) {
          // The leader rejoining forces a rebalance (lets it react to changes the members' metadata
          // does not show, such as new partitions).
          this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, future, 'leader rejoining a Stable group');
        } else if (!member.matches(p.protocols)) {
          this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, future, 'member metadata changed in a Stable group');
        } else {
          future.resolve(this.currentGenerationResult(group, member.memberId, false, group.leaderId ?? ''));
        }
        return;
      case 'Empty':
      case 'Dead':
        future.resolve(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return;
    }
  }

  private currentGenerationResult(group: ClassicGroup, memberId: string, withMembers: boolean, leader: string, skipAssignment = false): JoinResult {
    return {
      errorCode: ErrorCode.NONE,
      memberId,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader,
      skipAssignment,
      members: withMembers ? group.currentMemberMetadata() : [],
    };
  }

  private addMemberThenRebalanceOrCompleteJoin(group: ClassicGroup, p: JoinGroupParams, memberId: string, future: Deferred<JoinResult>): void {
    const member = new ClassicGroupMember(
      memberId,
      p.groupInstanceId,
      p.clientId,
      p.clientHost,
      p.rebalanceTimeoutMs,
      p.sessionTimeoutMs,
      p.protocolType,
      p.protocols,
    );
    member.isNew = true;
    // Members arriving during the initial delay extend it.
    if (group.is('PreparingRebalance') && group.previousState === 'Empty') group.newMemberAdded = true;
    group.add(member, future);
    // A new member cannot heartbeat while its JoinGroup is parked, and a client that gave up and
    // retried would leave it behind: bound the wait instead (it retries if still alive).
    this.rescheduleHeartbeat(group, member, this.ctx.config.newMemberJoinTimeoutMs);
    this.log.info(`member ${memberId} joins group ${group.groupId} in ${group.state}`, { groupInstanceId: p.groupInstanceId, reason: p.reason });
    this.maybePrepareRebalanceOrCompleteJoin(group, `new member ${memberId} joined`);
  }

  private updateMemberThenRebalanceOrCompleteJoin(
    group: ClassicGroup,
    member: ClassicGroupMember,
    p: JoinGroupParams,
    future: Deferred<JoinResult>,
    reason: string,
  ): void {
    // A second JoinGroup for the same member (a retry on another connection) replaces the first;
    // the first is told to rejoin rather than left waiting forever.
    group.completeJoin(member, joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
    group.updateMember(member, p.protocols, p.rebalanceTimeoutMs, p.sessionTimeoutMs, future);
    this.maybePrepareRebalanceOrCompleteJoin(group, reason);
  }

  private async updateStaticMemberThenRebalanceOrCompleteJoin(
    group: ClassicGroup,
    p: JoinGroupParams,
    oldMemberId: string,
    newMemberId: string,
    future: Deferred<JoinResult>,
  ): Promise<void> {
    const currentLeader = group.leaderId ?? '';
    const member = group.replaceStaticMember(p.groupInstanceId!, oldMemberId, newMemberId);
    this.ctx.timer.cancel(heartbeatKey(group.groupId, oldMemberId));
    this.rescheduleHeartbeat(group, member);
    const oldProtocols = member.protocols;
    const oldRebalanceTimeoutMs = member.rebalanceTimeoutMs;
    const oldSessionTimeoutMs = member.sessionTimeoutMs;
    group.updateMember(member, p.protocols, p.rebalanceTimeoutMs, p.sessionTimeoutMs, future);

    switch (group.state) {
      case 'Stable': {
        if (group.protocolName !== group.selectProtocol()) {
          this.maybePrepareRebalanceOrCompleteJoin(group, `static member ${p.groupInstanceId} rejoined with a change of protocol`);
          return;
        }
        // Nothing the assignment depends on changed: persist the new member id, no rebalance.
        const generation = group.generationId;
        const err = await this.storeGroup(group, group.groupAssignment());
        if (group.member(newMemberId) !== member || group.generationId !== generation) return; // superseded meanwhile
        if (err !== ErrorCode.NONE) {
          this.log.warn(`failed to persist static member ${p.groupInstanceId} of group ${group.groupId}`, { error: err });
          group.updateMember(member, oldProtocols, oldRebalanceTimeoutMs, oldSessionTimeoutMs, null);
          const old = group.replaceStaticMember(p.groupInstanceId!, newMemberId, oldMemberId);
          this.ctx.timer.cancel(heartbeatKey(group.groupId, newMemberId));
          this.rescheduleHeartbeat(group, old);
          future.resolve({
            errorCode: appendErrorToResponseError(err),
            memberId: '',
            generationId: group.generationId,
            protocolType: group.protocolType,
            protocolName: group.protocolName,
            leader: currentLeader,
            skipAssignment: false,
            members: [],
          });
        } else if (p.supportSkippingAssignment) {
          // v9+: a rejoining static leader learns it leads but must not reassign a Stable group.
          const isLeader = group.isLeader(newMemberId);
          group.completeJoin(member, this.currentGenerationResult(group, newMemberId, isLeader, group.leaderId ?? '', isLeader));
        } else {
          // Older clients: answer with the previous leader id so the rejoining member never thinks
          // it leads (its assignment would not be propagated by a Stable group).
          group.completeJoin(member, this.currentGenerationResult(group, newMemberId, false, currentLeader));
        }
        return;
      }
      case 'CompletingRebalance':
        // The leader may already be assigning with the old member id: rebalance again.
        this.prepareRebalance(group, `static member ${p.groupInstanceId} rejoined during CompletingRebalance`);
        return;
      case 'PreparingRebalance':
        this.maybeCompleteJoinPhase(group);
        return;
      default:
        throw new Error(`group ${group.groupId} in ${group.state} cannot have a rejoining static member`);
    }
  }

  // ---- rebalance machinery --------------------------------------------------------------------

  private maybePrepareRebalanceOrCompleteJoin(group: ClassicGroup, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(group, reason);
    else this.maybeCompleteJoinPhase(group);
  }

  prepareRebalance(group: ClassicGroup, reason: string): void {
    if (group.is('CompletingRebalance')) this.resetAndPropagateAssignmentWithError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    this.removeSyncExpiration(group);
    const initial = group.is('Empty');
    if (initial) {
      // A new group waits group.initial.rebalance.delay.ms for more members, extended (up to the
      // rebalance timeout) while members keep arriving.
      const delay = this.ctx.config.initialRebalanceDelayMs;
      const remaining = Math.max(group.rebalanceTimeoutMs() - delay, 0);
      this.ctx.timer.schedule(group.groupId, joinKey(group.groupId), delay, () =>
        this.tryCompleteInitialRebalanceElseSchedule(group.groupId, delay, remaining),
      );
    }
    group.transitionTo('PreparingRebalance');
    this.log.info(`preparing to rebalance group ${group.groupId} (generation ${group.generationId}): ${reason}`);
    if (!initial) this.maybeCompleteJoinElseSchedule(group);
  }

  private maybeCompleteJoinElseSchedule(group: ClassicGroup): void {
    if (group.is('PreparingRebalance') && group.hasAllMembersJoined()) {
      this.completeJoinPhase(group);
    } else {
      this.ctx.timer.schedule(group.groupId, joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinPhaseById(group.groupId));
    }
  }

  /** Completes the join phase early once every member is in, except during the initial delay. */
  private maybeCompleteJoinPhase(group: ClassicGroup): void {
    if (group.is('PreparingRebalance') && group.hasAllMembersJoined() && group.previousState !== 'Empty') {
      this.completeJoinPhase(group);
    }
  }

  private tryCompleteInitialRebalanceElseSchedule(groupId: string, delayMs: number, remainingMs: number): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    if (group.newMemberAdded && remainingMs !== 0) {
      group.newMemberAdded = false;
      const newDelay = Math.min(this.ctx.config.initialRebalanceDelayMs, remainingMs);
      const newRemaining = Math.max(remainingMs - delayMs, 0);
      this.ctx.timer.schedule(groupId, joinKey(groupId), newDelay, () => this.tryCompleteInitialRebalanceElseSchedule(groupId, newDelay, newRemaining));
    } else {
      this.completeJoinPhase(group);
    }
  }

  private completeJoinPhaseById(groupId: string): void {
    const group = this.groups.get(groupId);
    if (group) this.completeJoinPhase(group);
  }

  /**
   * End of the join phase: dynamic members that did not rejoin are dropped, the next generation
   * starts, and every parked JoinGroup is answered (the leader gets the members' metadata).
   */
  private completeJoinPhase(group: ClassicGroup): void {
    this.ctx.timer.cancel(joinKey(group.groupId));
    const dropped = group.notYetRejoinedMembers().filter((m) => !m.isStatic);
    for (const m of dropped) {
      group.remove(m.memberId);
      this.ctx.timer.cancel(heartbeatKey(group.groupId, m.memberId));
    }
    if (dropped.length > 0) {
      this.log.info(`group ${group.groupId} removed members that did not rejoin: ${dropped.map((m) => m.memberId).join(', ')}`);
    }
    if (group.is('Dead')) return;
    if (!group.maybeElectNewJoinedLeader() && group.size > 0) {
      // Only static members that have not rejoined are left: wait another rebalance timeout (their
      // session timeouts will remove them if they are gone).
      this.log.warn(`group ${group.groupId} could not complete its rebalance because no member rejoined`);
      this.ctx.timer.schedule(group.groupId, joinKey(group.groupId), group.rebalanceTimeoutMs(), () => this.completeJoinPhaseById(group.groupId));
      return;
    }
    group.initNextGeneration();
    if (group.is('Empty')) {
      this.log.info(`group ${group.groupId} with generation ${group.generationId} is now empty`);
      void this.storeGroup(group, new Map()).then((err) => {
        if (err !== ErrorCode.NONE) {
          // Harmless: an empty generation has no members that could act on the older record.
          this.log.warn(`failed to persist the empty group ${group.groupId}`, { error: err });
        }
      });
      return;
    }
    this.log.info(`stabilized group ${group.groupId} generation ${group.generationId} with ${group.size} members`, {
      protocol: group.protocolName,
      leader: group.leaderId,
    });
    for (const m of group.allMembers()) {
      group.completeJoin(m, this.currentGenerationResult(group, m.memberId, group.isLeader(m.memberId), group.leaderId ?? ''));
      this.rescheduleHeartbeat(group, m);
      m.isNew = false;
      group.addPendingSyncMember(m.memberId);
    }
    // Members that do not send SyncGroup within the rebalance timeout are removed.
    const generation = group.generationId;
    this.ctx.timer.schedule(group.groupId, syncKey(group.groupId), group.rebalanceTimeoutMs(), () =>
      this.expirePendingSync(group.groupId, generation),
    );
  }

  private expirePendingSync(groupId: string, generationId: number): void {
    const group = this.groups.get(groupId);
    if (!group || group.generationId !== generationId) return;
    if (!group.is('CompletingRebalance') && !group.is('Stable')) return;
    if (group.hasReceivedSyncFromAllMembers()) return;
    const pending = group.allPendingSyncMembers();
    for (const id of pending) {
      group.remove(id);
      this.ctx.timer.cancel(heartbeatKey(groupId, id));
    }
    this.prepareRebalance(group, `members ${pending.join(', ')} did not send SyncGroup in time`);
  }

  private removeSyncExpiration(group: ClassicGroup): void {
    group.clearPendingSyncMembers();
    this.ctx.timer.cancel(syncKey(group.groupId));
  }

  private removePendingSyncMember(group: ClassicGroup, memberId: string): void {
    group.removePendingSyncMember(memberId);
    if (group.hasReceivedSyncFromAllMembers()) this.ctx.timer.cancel(syncKey(group.groupId));
  }

  private resetAndPropagateAssignmentWithError(group: ClassicGroup, errorCode: number): void {
    for (const m of group.allMembers()) m.assignment = EMPTY_ASSIGNMENT;
    this.propagateAssignment(group, errorCode);
  }

  private propagateAssignment(group: ClassicGroup, errorCode: number): void {
    for (const m of group.allMembers()) {
      const ok = errorCode === ErrorCode.NONE;
      const answered = group.completeSync(m, {
        errorCode,
        protocolType: ok ? group.protocolType : null,
        protocolName: ok ? group.protocolName : null,
        assignment: m.assignment,
      });
      // A member whose session ran out while it waited for the assignment was spared; its session
      // starts again now.
      if (answered) this.rescheduleHeartbeat(group, m);
    }
  }

  rescheduleHeartbeat(group: ClassicGroup, member: ClassicGroupMember, timeoutMs = member.sessionTimeoutMs): void {
    const groupId = group.groupId;
    const memberId = member.memberId;
    this.ctx.timer.schedule(groupId, heartbeatKey(groupId, memberId), timeoutMs, () => this.expireHeartbeat(groupId, memberId));
  }

  private expireHeartbeat(groupId: string, memberId: string): void {
    const group = this.groups.get(groupId);
    if (!group || group.is('Dead')) return;
    if (group.isPendingMember(memberId)) {
      this.log.info(`pending member ${memberId} of group ${groupId} did not rejoin within its session timeout`);
      group.remove(memberId);
      if (group.is('PreparingRebalance') && group.hasAllMembersJoined()) this.completeJoinPhase(group);
      return;
    }
    const member = group.member(memberId);
    if (!member || member.hasSatisfiedHeartbeat()) return;
    this.log.info(`member ${memberId} of group ${groupId} failed (session timeout); removing it`);
    this.removeMemberAndUpdateGroup(group, member, `member ${memberId} session timeout`);
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, member: ClassicGroupMember, reason: string): void {
    // A new member may time out while parked in JoinGroup: tell it to start over.
    group.completeJoin(member, joinError('', ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(member.memberId);
    if (group.is('Stable') || group.is('CompletingRebalance')) this.maybePrepareRebalanceOrCompleteJoin(group, reason);
    else if (group.is('PreparingRebalance') && group.hasAllMembersJoined()) this.completeJoinPhase(group);
  }

  /** Group over the (possibly lowered) size limit after loading: rebalance to shed members. */
  onLoaded(group: ClassicGroup): void {
    for (const m of group.allMembers()) this.rescheduleHeartbeat(group, m);
    if (group.size > this.ctx.config.maxSize) {
      this.prepareRebalance(group, `loaded group is over capacity (group.max.size ${this.ctx.config.maxSize})`);
    }
  }

  /** Partition unloaded: parked requests learn that this broker no longer coordinates the group. */
  onUnloaded(group: ClassicGroup): void {
    const previous = group.state;
    this.drop(group, ErrorCode.NOT_COORDINATOR);
    if (previous !== 'Empty') this.log.info(`unloaded group ${group.groupId} (was ${previous})`);
  }

  /**
   * The group gave way to a consumer group (KIP-848's upgrade, committed): its parked JoinGroup and
   * SyncGroup requests are told to rejoin (Kafka's completeAllJoinFutures / completeAllSyncFutures
   * with REBALANCE_IN_PROGRESS), its timers go, and it is forgotten.
   */
  retire(group: ClassicGroup): void {
    this.drop(group, ErrorCode.REBALANCE_IN_PROGRESS);
    this.ctx.timer.cancelGroups(new Set([group.groupId]));
  }

  /**
   * A classic group a consumer group became (KIP-848's downgrade, committed): it is served from now
   * on, every member's session starts, and a rebalance starts when `rebalanceReason` says why.
   */
  adopt(group: ClassicGroup, rebalanceReason: string | null): void {
    this.groups.set(group.groupId, group);
    for (const m of group.allMembers()) this.rescheduleHeartbeat(group, m);
    if (rebalanceReason !== null) this.prepareRebalance(group, rebalanceReason);
  }

  /** Dead, every parked request answered with `errorCode`, forgotten. */
  private drop(group: ClassicGroup, errorCode: number): void {
    group.transitionTo('Dead');
    for (const m of group.allMembers()) {
      group.completeJoin(m, joinError(m.memberId, errorCode));
      group.completeSync(m, syncError(errorCode));
    }
    group.clearPendingSyncMembers();
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  /** Persists the group (GroupMetadataValue) with the given assignment. */
  storeGroup(group: ClassicGroup, assignment: ReadonlyMap<string, Buffer>): Promise<number> {
    return this.ctx.append(group.groupId, [groupMetadataRecord(group.groupId, group.toRecordValue(assignment))]);
  }

  // ---- SyncGroup ------------------------------------------------------------------------------

  async syncGroup(p: SyncGroupParams): Promise<Pending<SyncResult>> {
    const group = this.groups.get(p.groupId);
    if (!group) return answered(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    const err = this.validateSyncGroup(group, p);
    if (err !== ErrorCode.NONE) return answered(syncError(err));
    switch (group.state) {
      case 'Empty':
        return answered(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
      case 'PreparingRebalance':
        return answered(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case 'Stable': {
        this.removePendingSyncMember(group, p.memberId);
        const member = group.member(p.memberId)!;
        this.rescheduleHeartbeat(group, member);
        return answered({
          errorCode: ErrorCode.NONE,
          protocolType: group.protocolType,
          protocolName: group.protocolName,
          assignment: member.assignment,
        });
      }
      case 'CompletingRebalance': {
        const member = group.member(p.memberId)!;
        const future = new Deferred<SyncResult>();
        group.completeSync(member, syncError(ErrorCode.REBALANCE_IN_PROGRESS)); // an earlier duplicate
        member.awaitingSync = future;
        this.removePendingSyncMember(group, p.memberId);
        if (group.isLeader(p.memberId)) await this.completeSyncFromLeader(group, p);
        return { response: future.promise };
      }
      case 'Dead':
        return answered(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    }
  }

  private validateSyncGroup(group: ClassicGroup, p: SyncGroupParams): number {
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    try {
      group.validateMember(p.memberId, p.groupInstanceId);
    } catch (err) {
      return (err as KafkaError).code;
    }
    if (p.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (p.protocolType !== null && group.protocolType !== null && p.protocolType !== group.protocolType) {
      return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    }
    if (p.protocolName !== null && group.protocolName !== null && p.protocolName !== group.protocolName) {
      return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    }
    return ErrorCode.NONE;
  }

  /** The leader's assignment: persist it, then answer every parked SyncGroup and go Stable. */
  private async completeSyncFromLeader(group: ClassicGroup, p: SyncGroupParams): Promise<void> {
    const assignment = new Map<string, Buffer>();
    for (const a of p.assignments) {
      if (group.has(a.memberId)) assignment.set(a.memberId, Buffer.from(a.assignment));
    }
    const missing = group.allMembers().filter((m) => !assignment.has(m.memberId));
    for (const m of missing) assignment.set(m.memberId, EMPTY_ASSIGNMENT);
    if (missing.length > 0) {
      this.log.warn(`group ${group.groupId} generation ${group.generationId}: no assignment for ${missing.map((m) => m.memberId).join(', ')}`);
    }
    this.log.info(`assignment received from leader ${p.memberId} of group ${group.groupId} for generation ${group.generationId}`, {
      members: group.size,
      staticMembers: group.numStaticMembers(),
    });
    const err = await this.storeGroup(group, assignment);
    // Only act if nothing moved the group on while the record was written.
    if (!group.is('CompletingRebalance') || group.generationId !== p.generationId) return;
    if (err !== ErrorCode.NONE) {
      this.resetAndPropagateAssignmentWithError(group, appendErrorToResponseError(err));
      this.maybePrepareRebalanceOrCompleteJoin(group, `error ${err} storing the group assignment`);
      return;
    }
    for (const m of group.allMembers()) m.assignment = assignment.get(m.memberId) ?? EMPTY_ASSIGNMENT;
    this.propagateAssignment(group, ErrorCode.NONE);
    group.transitionTo('Stable');
  }

  // ---- Heartbeat ------------------------------------------------------------------------------

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    const group = this.groups.get(groupId);
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    try {
      group.validateMember(memberId, groupInstanceId);
    } catch (err) {
      return (err as KafkaError).code;
    }
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.member(memberId)!;
    switch (group.state) {
      case 'Empty':
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case 'PreparingRebalance':
        this.rescheduleHeartbeat(group, member);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      case 'CompletingRebalance':
      case 'Stable':
        // Heartbeats may start right after the JoinGroup response, before SyncGroup.
        this.rescheduleHeartbeat(group, member);
        return ErrorCode.NONE;
      default:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
  }

  // ---- LeaveGroup -----------------------------------------------------------------------------

  leaveGroup(
    groupId: string,
    members: { memberId: string; groupInstanceId: string | null; reason: string | null }[],
  ): { errorCode: number; members: LeaveMemberResult[] } {
    const group = this.groups.get(groupId);
    if (!group) {
      return {
        errorCode: ErrorCode.NONE,
        members: members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })),
      };
    }
    if (group.is('Dead')) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const results: LeaveMemberResult[] = [];
    let anyLeft = false;
    for (const m of members) {
      const out = (errorCode: number) => results.push({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode });
      if (m.memberId === '') {
        // Administrative removal by group.instance.id (the member id is not known to the caller).
        const current = m.groupInstanceId !== null ? group.staticMemberId(m.groupInstanceId) : undefined;
        if (current === undefined) {
          out(ErrorCode.UNKNOWN_MEMBER_ID);
        } else {
          this.removeCurrentMember(group, current, m.reason);
          anyLeft = true;
          out(ErrorCode.NONE);
        }
      } else if (group.isPendingMember(m.memberId)) {
        group.remove(m.memberId);
        this.ctx.timer.cancel(heartbeatKey(groupId, m.memberId));
        anyLeft = true;
        out(ErrorCode.NONE);
      } else {
        try {
          group.validateMember(m.memberId, m.groupInstanceId);
        } catch (err) {
          out((err as KafkaError).code);
          continue;
        }
        this.removeCurrentMember(group, m.memberId, m.reason);
        anyLeft = true;
        out(ErrorCode.NONE);
      }
    }
    if (anyLeft) {
      if (group.is('Stable') || group.is('CompletingRebalance')) {
        this.maybePrepareRebalanceOrCompleteJoin(group, 'members left the group');
      } else if (group.is('PreparingRebalance')) {
        this.maybeCompleteJoinPhase(group);
      }
    }
    return { errorCode: ErrorCode.NONE, members: results };
  }

  private removeCurrentMember(group: ClassicGroup, memberId: string, reason: string | null): void {
    const member = group.member(memberId)!;
    this.ctx.timer.cancel(heartbeatKey(group.groupId, memberId));
    this.log.info(`member ${memberId} leaves group ${group.groupId}`, { reason: reason ?? 'not provided' });
    group.completeJoin(member, joinError('', ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(memberId);
  }
}
