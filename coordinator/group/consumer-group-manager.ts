/**
 * KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe) over the groups this
 * broker coordinates, following Kafka's GroupMetadataManager: request validation with Kafka's
 * messages, joining (member epoch 0), heartbeats that bump the group epoch when a subscription or
 * the subscribed topics change, target assignments recomputed by the server-side assignor when the
 * group epoch is ahead of the assignment epoch, per-member reconciliation (revocations before
 * assignments), leaving (-1), static members' temporary leave (-2) and replacement, session and
 * rebalance timeouts that fence members, group.consumer.max.size.
 *
 * Owns the in-memory consumer groups. Every method runs on the group's serial queue (the
 * GroupCoordinator guarantees it). A heartbeat computes the records of its change first
 * (consumer/consumer-group-records.ts), appends them to __consumer_offsets, and only once they are
 * committed replays them into the group: the in-memory group is always what a reload of the
 * partition would rebuild, and a failed append changes nothing. A group id names either a classic
 * group (GroupMetadataManager) or a consumer group, never both; an Empty classic group is deleted
 * (tombstone) when a consumer member joins under its id, as Kafka does.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { randomUuid } from '../../protocol/primitives/uuid';
import type { Logger } from '../../common/logger';
import { groupMetadataTombstone, type CoordinatorRecord } from './coordinator-records';
import type { CoordinatorContext, GroupMetadataManager } from './group-metadata-manager';
import { appendErrorToResponseError } from './group-metadata-manager';
import {
  EMPTY_ASSIGNMENT,
  PartitionAssignorError,
  assignmentsEqual,
  toTopicPartitions,
  type Assignment,
  type PartitionAssignor,
  type TopicMetadata,
} from './consumer/assignor';
import { ConsumerGroup, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, compileTopicRegex, type TopicsView } from './consumer/consumer-group';
import { MemberState, isReconciledTo, membersEqual, newConsumerGroupMember, updateMember, type ConsumerGroupMember } from './consumer/consumer-group-member';
import { CurrentAssignmentBuilder, validateMemberEpoch, type OwnedTopicPartitions } from './consumer/current-assignment-builder';
import { TargetAssignmentBuilder, type TargetAssignmentMember } from './consumer/target-assignment-builder';
import {
  GROUP_METADATA_KEY_VERSION,
  PARTITION_METADATA_KEY_VERSION,
  TARGET_ASSIGNMENT_METADATA_KEY_VERSION,
  currentAssignmentRecord,
  groupEpochRecord,
  memberSubscriptionRecord,
  memberTombstones,
  serializeConsumerGroupRecord,
  subscriptionMetadataRecord,
  targetAssignmentRecord,
  tombstoneRecord,
  type ConsumerGroupRecord,
} from './consumer/consumer-group-records';

/** group.consumer.* settings the manager applies. */
export interface ConsumerGroupSettings {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  maxSize: number;
  /** group.consumer.assignors resolved, in config order: the first is the default. */
  assignors: ReadonlyMap<string, PartitionAssignor>;
}

export interface ConsumerGroupHeartbeatParams {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: OwnedTopicPartitions[] | null;
  clientId: string;
  clientHost: string;
  apiVersion: number;
}

export interface ConsumerGroupHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

export interface DescribedConsumerGroupMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  memberEpoch: number;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  assignment: { topicPartitions: { topicId: string; topicName: string; partitions: number[] }[] };
  targetAssignment: { topicPartitions: { topicId: string; topicName: string; partitions: number[] }[] };
}

export interface DescribedConsumerGroup {
  groupId: string;
  errorCode: number;
  errorMessage: string | null;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: DescribedConsumerGroupMember[];
}

export function heartbeatError(errorCode: number, errorMessage: string | null = null): ConsumerGroupHeartbeatResult {
  return { errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

const sessionKey = (groupId: string, memberId: string): string => `consumer-session:${groupId}:${memberId}`;
const rebalanceKey = (groupId: string, memberId: string): string => `consumer-rebalance:${groupId}:${memberId}`;

const invalid = (message: string): KafkaError => new KafkaError(ErrorCode.INVALID_REQUEST, message);

function metadataEqual(a: ReadonlyMap<string, TopicMetadata>, b: ReadonlyMap<string, TopicMetadata>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const u = b.get(name);
    if (u === undefined || u.id !== t.id || u.numPartitions !== t.numPartitions) return false;
  }
  return true;
}

function setsEqual(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid (4.0, with KIP-1082's client-generated member ids from v1). */
export function validateHeartbeatRequest(p: ConsumerGroupHeartbeatParams, assignors: ReadonlyMap<string, PartitionAssignor>): void {
  if (p.groupId === '') throw invalid("GroupId can't be empty.");
  if (p.instanceId === '') throw invalid("InstanceId can't be empty.");
  if (p.rackId === '') throw invalid("RackId can't be empty.");
  if (p.apiVersion >= 1 || p.memberEpoch > 0 || p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    if (p.memberId === '') throw invalid("MemberId can't be empty.");
  }
  if (p.memberEpoch === 0) {
    if (p.rebalanceTimeoutMs === -1) throw invalid('RebalanceTimeoutMs must be provided in first request.');
    if (p.topicPartitions === null || p.topicPartitions.length > 0) throw invalid('TopicPartitions must be empty when (re-)joining.');
    if (p.subscribedTopicNames === null && p.subscribedTopicRegex === null) {
      throw invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
    }
  } else if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    if (p.instanceId === null) throw invalid("InstanceId can't be null.");
  } else if (p.memberEpoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
    throw invalid('MemberEpoch is invalid.');
  }
  if (p.subscribedTopicRegex !== null && p.subscribedTopicRegex !== '') {
    try {
      compileTopicRegex(p.subscribedTopicRegex);
    } catch (err) {
      throw new KafkaError(
        ErrorCode.INVALID_REGULAR_EXPRESSION,
        `SubscribedTopicRegex \`${p.subscribedTopicRegex}\` is not a valid regular expression: ${(err as Error).message}.`,
      );
    }
  }
  if (p.serverAssignor !== null && !assignors.has(p.serverAssignor)) {
    throw new KafkaError(
      ErrorCode.UNSUPPORTED_ASSIGNOR,
      `ServerAssignor ${p.serverAssignor} is not supported. Supported assignors: ${[...assignors.keys()].join(', ')}.`,
    );
  }
}

/** A ConsumerGroupDescribe answer for a group that is not described (an error, no members). */
export function describedConsumerGroupError(groupId: string, errorCode: number, errorMessage: string | null = null): DescribedConsumerGroup {
  return { groupId, errorCode, errorMessage, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
}

export class ConsumerGroupManager {
  readonly groups = new Map<string, ConsumerGroup>();
  private readonly log: Logger;

  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly settings: ConsumerGroupSettings,
    private readonly classic: GroupMetadataManager,
    private readonly topics: TopicsView,
  ) {
    this.log = ctx.log;
  }

  group(groupId: string): ConsumerGroup | undefined {
    return this.groups.get(groupId);
  }

  private get defaultAssignor(): PartitionAssignor {
    return this.settings.assignors.values().next().value as PartitionAssignor;
  }

  /** The consumer group, or GROUP_ID_NOT_FOUND with Kafka's messages. */
  private consumerGroup(groupId: string): ConsumerGroup {
    const g = this.groups.get(groupId);
    if (g !== undefined) return g;
    if (this.classic.group(groupId) !== undefined) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
    throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`);
  }

  // ---- ConsumerGroupHeartbeat -----------------------------------------------------------------

  /** Throws INVALID_REQUEST, INVALID_REGULAR_EXPRESSION or UNSUPPORTED_ASSIGNOR for a malformed request. */
  validateRequest(p: ConsumerGroupHeartbeatParams): void {
    validateHeartbeatRequest(p, this.settings.assignors);
  }

  async heartbeat(p: ConsumerGroupHeartbeatParams): Promise<ConsumerGroupHeartbeatResult> {
    try {
      validateHeartbeatRequest(p, this.settings.assignors);
      if (p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return await this.leave(p);
      return await this.joinOrHeartbeat(p);
    } catch (err) {
      // Kafka's handleOperationException: an unexpected error is answered without its message.
      if (err instanceof KafkaError) return heartbeatError(err.code, err.code === ErrorCode.UNKNOWN_SERVER_ERROR ? null : err.message);
      throw err;
    }
  }

  private async joinOrHeartbeat(p: ConsumerGroupHeartbeatParams): Promise<ConsumerGroupHeartbeatResult> {
    const { groupId } = p;
    const records: ConsumerGroupRecord[] = [];
    const classicTombstones: CoordinatorRecord[] = [];
    const joining = p.memberEpoch === 0;

    // The group: existing, or new for a joining member (an Empty classic group under the id is deleted).
    let group = this.groups.get(groupId);
    let isNewGroup = false;
    let replacedClassic = false;
    if (group === undefined) {
      const classicGroup = this.classic.group(groupId);
      if (classicGroup !== undefined) {
        if (!joining || !classicGroup.is('Empty') || classicGroup.numPendingJoinMembers > 0) {
          throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
        }
        classicTombstones.push(groupMetadataTombstone(groupId));
        replacedClassic = true;
      } else if (!joining) {
        throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`);
      }
      group = new ConsumerGroup(groupId);
      isNewGroup = true;
    }

    if (group.members.size >= this.settings.maxSize && (p.memberId === '' || !group.members.has(p.memberId))) {
      throw new KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.settings.maxSize} members.`);
    }
    const memberId = p.memberId === '' ? randomUuid() : p.memberId;

    // The member: existing, new, or a static member replacing its previous incarnation.
    let member: ConsumerGroupMember;
    let replaced: ConsumerGroupMember | null = null;
    if (p.instanceId === null) {
      const existing = group.member(memberId);
      if (existing === undefined) {
        if (!joining) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${groupId}.`);
        member = newConsumerGroupMember(memberId);
        this.log.info(`member ${memberId} joins consumer group ${groupId}`);
      } else {
        member = existing;
      }
      validateMemberEpoch(member, p.memberEpoch, p.topicPartitions);
    } else {
      const existingStatic = group.staticMember(p.instanceId);
      if (joining) {
        if (existingStatic === undefined) {
          member = group.member(memberId) ?? newConsumerGroupMember(memberId);
          this.log.info(`static member ${memberId} with instance id ${p.instanceId} joins consumer group ${groupId}`);
        } else {
          if (existingStatic.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            throw new KafkaError(
              ErrorCode.UNRELEASED_INSTANCE_ID,
              `Static member ${memberId} with instance id ${p.instanceId} cannot join the group because the instance id is owned by ${existingStatic.memberId} member.`,
            );
          }
          // The new incarnation starts from its predecessor's subscription and assignment.
          member = { ...existingStatic, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
          replaced = existingStatic;
          records.push(
            ...memberTombstones(groupId, existingStatic.memberId),
            memberSubscriptionRecord(groupId, member),
            targetAssignmentRecord(groupId, memberId, group.targetAssignmentOf(existingStatic.memberId, null)),
            currentAssignmentRecord(groupId, member),
          );
          this.log.info(`static member with instance id ${p.instanceId} rejoins consumer group ${groupId}: ${memberId} replaces ${existingStatic.memberId}`);
        }
      } else {
        if (existingStatic === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`);
        if (existingStatic.memberId !== memberId) {
          throw new KafkaError(
            ErrorCode.FENCED_INSTANCE_ID,
            `Static member ${memberId} with instance id ${p.instanceId} was fenced by member ${existingStatic.memberId}.`,
          );
        }
        validateMemberEpoch(existingStatic, p.memberEpoch, p.topicPartitions);
        member = existingStatic;
      }
    }

    // 1. The member's subscription; the group epoch moves when it or the subscribed topics changed.
    let updated = updateMember(member, {
      instanceId: p.instanceId ?? member.instanceId,
      rackId: p.rackId ?? member.rackId,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignorName: p.serverAssignor ?? member.serverAssignorName,
      subscribedTopicNames: p.subscribedTopicNames !== null ? new Set(p.subscribedTopicNames) : member.subscribedTopicNames,
      subscribedTopicRegex: p.subscribedTopicRegex !== null ? p.subscribedTopicRegex : member.subscribedTopicRegex,
      clientId: p.clientId,
      clientHost: p.clientHost,
    });
    let bumpGroupEpoch = false;
    if (!membersEqual(updated, member)) {
      records.push(memberSubscriptionRecord(groupId, updated));
      bumpGroupEpoch =
        !setsEqual(updated.subscribedTopicNames, member.subscribedTopicNames) || updated.subscribedTopicRegex !== member.subscribedTopicRegex;
    }
    const removedIds = replaced !== null ? [replaced.memberId] : [];
    const membersAfter = group.membersWith(removedIds, updated);
    let groupEpoch = group.groupEpoch;
    let subscriptionMetadata = group.subscriptionMetadata;
    const refreshMetadata = bumpGroupEpoch || group.metadataRefreshRequested;
    if (refreshMetadata) {
      subscriptionMetadata = group.computeSubscriptionMetadata(membersAfter, this.topics);
      if (!metadataEqual(subscriptionMetadata, group.subscriptionMetadata)) {
        bumpGroupEpoch = true;
        records.push(subscriptionMetadataRecord(groupId, subscriptionMetadata));
      }
      if (bumpGroupEpoch) {
        groupEpoch += 1;
        records.push(groupEpochRecord(groupId, groupEpoch));
        this.log.info(`consumer group ${groupId} bumped its epoch to ${groupEpoch}`);
      }
    }

    // 2. A new target assignment when the group epoch is ahead of the assignment's.
    let targetAssignmentEpoch: number;
    let targetAssignment: Assignment;
    if (groupEpoch > group.assignmentEpoch) {
      const assignorName = group.preferredServerAssignor(membersAfter) ?? this.defaultAssignor.name();
      const assignor = this.settings.assignors.get(assignorName) ?? this.defaultAssignor;
      const effective = (m: ConsumerGroupMember): TargetAssignmentMember => ({
        instanceId: m.instanceId,
        rackId: m.rackId,
        subscribedTopicNames: group!.effectiveSubscription(m, this.topics),
      });
      const members = new Map<string, TargetAssignmentMember>();
      for (const [id, m] of group.members) members.set(id, effective(m));
      const builder = new TargetAssignmentBuilder(groupId, groupEpoch, assignor)
        .withMembers(members)
        .withStaticMembers(group.staticMembers)
        .withSubscriptionMetadata(subscriptionMetadata)
        .withTargetAssignment(group.targetAssignment)
        .addOrUpdateMember(updated.memberId, effective(updated));
      if (replaced !== null) builder.removeMember(replaced.memberId);
      let result;
      try {
        result = builder.build();
      } catch (err) {
        if (!(err instanceof PartitionAssignorError)) throw err;
        const msg = `Failed to compute a new target assignment for epoch ${groupEpoch}: ${err.message}`;
        this.log.error(`consumer group ${groupId}: ${msg}`);
        throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, msg);
      }
      this.log.info(`consumer group ${groupId} computed a new target assignment for epoch ${groupEpoch} with the ${assignorName} assignor`);
      records.push(...result.records);
      targetAssignment = result.targetAssignment.get(updated.memberId) ?? EMPTY_ASSIGNMENT;
      targetAssignmentEpoch = groupEpoch;
    } else {
      targetAssignmentEpoch = group.assignmentEpoch;
      targetAssignment = group.targetAssignmentOf(updated.memberId, updated.instanceId);
    }

    // 3. Reconciliation of the member towards the target.
    const beforeReconcile = updated;
    if (!isReconciledTo(updated, targetAssignmentEpoch)) {
      updated = new CurrentAssignmentBuilder(updated)
        .withTargetAssignment(targetAssignmentEpoch, targetAssignment)
        .withCurrentPartitionEpoch((topicId, partition) => group!.currentPartitionEpoch(topicId, partition))
        .withOwnedTopicPartitions(p.topicPartitions)
        .build();
      if (!membersEqual(updated, beforeReconcile)) records.push(currentAssignmentRecord(groupId, updated));
    }

    // Persist, then apply.
    if (records.length > 0 || classicTombstones.length > 0) {
      const err = await this.ctx.append(groupId, [...classicTombstones, ...records.map(serializeConsumerGroupRecord)]);
      if (err !== ErrorCode.NONE) return heartbeatError(appendErrorToResponseError(err));
      if (replacedClassic) {
        const classicGroup = this.classic.group(groupId);
        if (classicGroup !== undefined) {
          classicGroup.transitionTo('Dead');
          this.classic.groups.delete(groupId);
        }
      }
      if (isNewGroup) this.groups.set(groupId, group);
      for (const r of records) group.replay(r);
    }
    if (refreshMetadata) group.metadataRefreshRequested = false;
    if (replaced !== null) this.cancelTimers(groupId, replaced.memberId);
    if (!membersEqual(updated, beforeReconcile)) {
      if (updated.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(groupId, updated.memberId, updated.memberEpoch, updated.rebalanceTimeoutMs);
      else this.ctx.timer.cancel(rebalanceKey(groupId, updated.memberId));
    }
    this.scheduleSessionTimeout(groupId, updated.memberId);

    const isFullRequest =
      p.memberEpoch === 0 ||
      (p.rebalanceTimeoutMs !== -1 && (p.subscribedTopicNames !== null || p.subscribedTopicRegex !== null) && p.topicPartitions !== null);
    const assignmentChanged = !assignmentsEqual(member.assignedPartitions, updated.assignedPartitions);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: updated.memberId,
      memberEpoch: updated.memberEpoch,
      heartbeatIntervalMs: this.settings.heartbeatIntervalMs,
      assignment: isFullRequest || assignmentChanged ? { topicPartitions: toTopicPartitions(updated.assignedPartitions) } : null,
    };
  }

  private async leave(p: ConsumerGroupHeartbeatParams): Promise<ConsumerGroupHeartbeatResult> {
    const group = this.consumerGroup(p.groupId);
    const response: ConsumerGroupHeartbeatResult = {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: p.memberId,
      memberEpoch: p.memberEpoch,
      heartbeatIntervalMs: 0,
      assignment: null,
    };
    let member: ConsumerGroupMember;
    if (p.instanceId === null) {
      const m = group.member(p.memberId);
      if (m === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${p.groupId}.`);
      member = m;
      this.log.info(`member ${member.memberId} left consumer group ${p.groupId}`);
    } else {
      const m = group.staticMember(p.instanceId);
      if (m === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`);
      if (m.memberId !== p.memberId) {
        throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${p.memberId} with instance id ${p.instanceId} was fenced by member ${m.memberId}.`);
      }
      member = m;
      if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
        // A temporary leave: the member keeps its partitions (and its session timeout) until it rejoins.
        const leaving = updateMember(member, { memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitionsPendingRevocation: EMPTY_ASSIGNMENT });
        const record = currentAssignmentRecord(p.groupId, leaving);
        const err = await this.ctx.append(p.groupId, [serializeConsumerGroupRecord(record)]);
        if (err !== ErrorCode.NONE) return heartbeatError(appendErrorToResponseError(err));
        group.replay(record);
        this.log.info(`static member ${member.memberId} with instance id ${p.instanceId} temporarily left consumer group ${p.groupId}`);
        return { ...response, memberId: member.memberId };
      }
      this.log.info(`static member ${member.memberId} with instance id ${p.instanceId} left consumer group ${p.groupId}`);
    }
    const err = await this.fenceMember(group, member);
    if (err !== ErrorCode.NONE) return heartbeatError(appendErrorToResponseError(err));
    return response;
  }

  /**
   * Kafka's consumerGroupFenceMember: the member's tombstones, the subscription metadata without
   * it (when that changes) and the next group epoch, then its timers go.
   */
  private async fenceMember(group: ConsumerGroup, member: ConsumerGroupMember): Promise<number> {
    const groupId = group.groupId;
    const records: ConsumerGroupRecord[] = memberTombstones(groupId, member.memberId);
    const metadata = group.computeSubscriptionMetadata(group.membersWith([member.memberId], null), this.topics);
    if (!metadataEqual(metadata, group.subscriptionMetadata)) records.push(subscriptionMetadataRecord(groupId, metadata));
    records.push(groupEpochRecord(groupId, group.groupEpoch + 1));
    const err = await this.ctx.append(groupId, records.map(serializeConsumerGroupRecord));
    if (err !== ErrorCode.NONE) return err;
    for (const r of records) group.replay(r);
    this.cancelTimers(groupId, member.memberId);
    return ErrorCode.NONE;
  }

  // ---- timers ---------------------------------------------------------------------------------

  private scheduleSessionTimeout(groupId: string, memberId: string): void {
    this.ctx.timer.schedule(groupId, sessionKey(groupId, memberId), this.settings.sessionTimeoutMs, () =>
      this.fenceOperation(groupId, memberId, 'the member session expired'),
    );
  }

  private scheduleRebalanceTimeout(groupId: string, memberId: string, memberEpoch: number, rebalanceTimeoutMs: number): void {
    this.ctx.timer.schedule(groupId, rebalanceKey(groupId, memberId), rebalanceTimeoutMs, async () => {
      const member = this.groups.get(groupId)?.member(memberId);
      if (member === undefined || member.memberEpoch !== memberEpoch) return;
      await this.fenceOperation(groupId, memberId, `it failed to transition from epoch ${memberEpoch} within ${rebalanceTimeoutMs}ms`);
    });
  }

  private cancelTimers(groupId: string, memberId: string): void {
    this.ctx.timer.cancel(sessionKey(groupId, memberId));
    this.ctx.timer.cancel(rebalanceKey(groupId, memberId));
  }

  private async fenceOperation(groupId: string, memberId: string, reason: string): Promise<void> {
    const group = this.groups.get(groupId);
    const member = group?.member(memberId);
    if (group === undefined || member === undefined) return;
    this.log.info(`member ${memberId} fenced from consumer group ${groupId} because ${reason}`);
    const err = await this.fenceMember(group, member);
    if (err !== ErrorCode.NONE) {
      this.log.warn(`could not fence member ${memberId} of consumer group ${groupId}; retrying at its next session timeout`, { error: err });
      this.scheduleSessionTimeout(groupId, memberId);
    }
  }

  // ---- ConsumerGroupDescribe ------------------------------------------------------------------

  describe(groupId: string): DescribedConsumerGroup {
    const none = (errorCode: number, errorMessage: string | null): DescribedConsumerGroup => describedConsumerGroupError(groupId, errorCode, errorMessage);
    let group: ConsumerGroup;
    try {
      group = this.consumerGroup(groupId);
    } catch (err) {
      return none((err as KafkaError).code, (err as KafkaError).message);
    }
    const named = (a: Assignment) => ({
      topicPartitions: toTopicPartitions(a).flatMap((t) => {
        const topic = this.topics.topicById(t.topicId);
        return topic === undefined ? [] : [{ topicId: t.topicId, topicName: topic.name, partitions: t.partitions }];
      }),
    });
    return {
      groupId,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupState: group.state,
      groupEpoch: group.groupEpoch,
      assignmentEpoch: group.assignmentEpoch,
      assignorName: group.preferredServerAssignor() ?? this.defaultAssignor.name(),
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames].sort(),
        subscribedTopicRegex: m.subscribedTopicRegex === '' ? null : m.subscribedTopicRegex,
        assignment: named(m.assignedPartitions),
        targetAssignment: named(group.targetAssignment.get(m.memberId) ?? EMPTY_ASSIGNMENT),
      })),
    };
  }

  // ---- offsets, deletion ----------------------------------------------------------------------

  /**
   * Kafka's ConsumerGroup.validateOffsetCommit: an empty group takes commits with a negative
   * epoch (admin client, consumers without group management); otherwise the member must exist,
   * commit with OffsetCommit v9+ (unless transactional), at its current member epoch.
   */
  validateOffsetCommit(group: ConsumerGroup, memberId: string, memberEpoch: number, isTransactional: boolean, apiVersion: number): void {
    if (memberEpoch < 0 && group.isEmpty()) return;
    const member = group.member(memberId);
    if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
    if (!isTransactional && apiVersion < 9) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'OffsetCommit version 9 or above must be used by members using the modern group protocol');
    }
    if (memberEpoch !== member.memberEpoch) {
      throw new KafkaError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`);
    }
  }

  /** Kafka's ConsumerGroup.validateOffsetFetch: no member id and a negative epoch always pass. */
  validateOffsetFetch(group: ConsumerGroup, memberId: string | null, memberEpoch: number): void {
    if (memberId === null && memberEpoch < 0) return;
    const member = memberId === null ? undefined : group.member(memberId);
    if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
    if (memberEpoch !== member.memberEpoch) {
      throw new KafkaError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`);
    }
  }

  /** Kafka's createGroupTombstoneRecords: every record of the group, members first. */
  groupTombstones(group: ConsumerGroup): CoordinatorRecord[] {
    const g = group.groupId;
    const ids = [...group.members.keys()];
    const records: ConsumerGroupRecord[] = [
      ...ids.map((id) => tombstoneRecord(8, g, id)),
      ...ids.map((id) => tombstoneRecord(7, g, id)),
      tombstoneRecord(TARGET_ASSIGNMENT_METADATA_KEY_VERSION, g),
      ...ids.map((id) => tombstoneRecord(5, g, id)),
      tombstoneRecord(PARTITION_METADATA_KEY_VERSION, g),
      tombstoneRecord(GROUP_METADATA_KEY_VERSION, g),
    ];
    return records.map(serializeConsumerGroupRecord);
  }

  /** Forgets a deleted (or unloaded) group; its timers go with it. */
  remove(group: ConsumerGroup): void {
    group.dead = true;
    for (const id of group.members.keys()) this.cancelTimers(group.groupId, id);
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  // ---- loading and metadata -------------------------------------------------------------------

  /** One record read back from __consumer_offsets while loading a partition. */
  replay(r: ConsumerGroupRecord): void {
    let group = this.groups.get(r.groupId);
    if (r.type === 'tombstone') {
      if (group === undefined) return;
      group.replay(r);
      if (r.keyVersion === GROUP_METADATA_KEY_VERSION) this.groups.delete(r.groupId);
      return;
    }
    if (group === undefined) this.groups.set(r.groupId, (group = new ConsumerGroup(r.groupId)));
    group.replay(r);
  }

  /** A loaded group: every member's session starts now, revocations get their rebalance timeout. */
  onLoaded(group: ConsumerGroup): void {
    group.metadataRefreshRequested = true;
    for (const m of group.members.values()) {
      this.scheduleSessionTimeout(group.groupId, m.memberId);
      if (m.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(group.groupId, m.memberId, m.memberEpoch, m.rebalanceTimeoutMs);
    }
  }

  /**
   * Topics were created, deleted or repartitioned: the groups that subscribe to them (by name or
   * regex) recompute their subscription metadata at their next heartbeat (Kafka's
   * onNewMetadataImage requesting a metadata refresh).
   */
  onTopicsChanged(changed: ReadonlySet<string>): void {
    for (const g of this.groups.values()) {
      if (g.metadataRefreshRequested) continue;
      for (const name of changed) {
        if (g.subscriptionMetadata.has(name) || g.isSubscribedToTopic(name)) {
          g.metadataRefreshRequested = true;
          break;
        }
      }
    }
  }
}
