/**
 * KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe) over the groups this
 * broker coordinates, following Kafka's GroupMetadataManager: request validation with Kafka's
 * messages, joining (member epoch 0), heartbeats that bump the group epoch when a subscription or
 * the subscribed topics change, target assignments recomputed by the server-side assignor when the
 * group epoch is ahead of the assignment epoch, per-member reconciliation (revocations before
 * assignments), leaving (-1), static members' temporary leave (-2) and replacement, session and
 * rebalance timeouts that fence members, group.consumer.max.size. A group's dynamic configs
 * (consumer.session.timeout.ms, consumer.heartbeat.interval.ms; ConsumerGroupSettings.groupConfig)
 * override the broker's session timeout and heartbeat interval, read at each heartbeat.
 *
 * Owns the in-memory consumer groups. Every method runs on the group's serial queue (the
 * GroupCoordinator guarantees it). A heartbeat computes the records of its change first
 * (consumer/consumer-group-records.ts), appends them to __consumer_offsets, and only once they are
 * committed replays them into the group: the in-memory group is always what a reload of the
 * partition would rebuild, and a failed append changes nothing. A group id names either a classic
 * group (GroupMetadataManager) or a consumer group, never both; an Empty classic group is deleted
 * (tombstone) when a consumer member joins under its id, as Kafka does.
 *
 * Classic members in consumer groups (KIP-848's online migration, `group.consumer.migration.policy`):
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup to a consumer group with members are served here
 * (classicJoin, classicSync, classicHeartbeat, classicLeave): such a member is a consumer group
 * member with classic member metadata, assigned by the server like the others, its generation being
 * its member epoch, told to rejoin (REBALANCE_IN_PROGRESS) when it must revoke or may take more. A
 * consumer-protocol member joining a classic group converts it (upgrade); the last consumer-protocol
 * member leaving a group of classic members converts it back (downgrade). Both conversions are one
 * batch (the old group's tombstones and the new group's records) and swap the in-memory group only
 * once it is committed.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import type { ConsumerGroupHeartbeatRequest } from '../../protocol/generated/consumer-group-heartbeat';
import type { ConsumerGroupDescribeResponseDescribedGroup, ConsumerGroupDescribeResponseMember } from '../../protocol/generated/consumer-group-describe';
import { randomUuid } from '../../protocol/primitives/uuid';
import type { Logger } from '../../common/logger';
import { groupMetadataRecord, groupMetadataTombstone, type CoordinatorRecord } from './coordinator-records';
import type { CoordinatorContext, GroupMetadataManager, JoinGroupParams, LeaveMemberResult, SyncGroupParams } from './group-metadata-manager';
import { appendErrorToResponseError } from './group-metadata-manager';
import { CONSUMER_PROTOCOL_TYPE, joinError, syncError, type ClassicGroup, type JoinResult, type SyncResult } from './classic-group';
import { classicGroupFromConsumer, consumerGroupRecordsFromClassic, isDowngradeEnabled, isUpgradeEnabled, type ConsumerGroupMigrationPolicy } from './consumer-group-migration';
import { MalformedConsumerProtocol, consumerProtocolVersion, deserializeSubscription, ownedTopicPartitions, serializeAssignment } from './consumer/consumer-protocol';
import {
  EMPTY_ASSIGNMENT,
  PartitionAssignorError,
  assignmentsEqual,
  toTopicPartitions,
  type Assignment,
  type PartitionAssignor,
  type TopicMetadata,
} from './consumer/assignor';
import { ConsumerGroup, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, compileTopicRegex, TopicRegexSyntaxError, type TopicsView } from './consumer/consumer-group';
import { MemberState, isReconciledTo, membersEqual, newConsumerGroupMember, updateMember, usesClassicProtocol, type ConsumerGroupMember } from './consumer/consumer-group-member';
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
  /** group.consumer.migration.policy */
  migrationPolicy: ConsumerGroupMigrationPolicy;
  /**
   * The group's dynamic overrides of sessionTimeoutMs / heartbeatIntervalMs (Kafka's
   * GroupConfigManager.groupConfig), looked up whenever one is used; absent: none.
   */
  groupConfig?: (groupId: string) => { sessionTimeoutMs?: number; heartbeatIntervalMs?: number };
}

/** A ConsumerGroupHeartbeat request as the handler decoded it, with who sent it and at which version. */
export type ConsumerGroupHeartbeatParams = Omit<ConsumerGroupHeartbeatRequest, '_unknownTaggedFields' | 'topicPartitions'> & {
  topicPartitions: OwnedTopicPartitions[] | null;
  clientId: string;
  clientHost: string;
  apiVersion: number;
};

export interface ConsumerGroupHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

/** A member as ConsumerGroupDescribe shows it (memberType, v1+: 0 classic, 1 consumer). */
export type DescribedConsumerGroupMember = Omit<ConsumerGroupDescribeResponseMember, '_unknownTaggedFields'>;

/** A group as ConsumerGroupDescribe shows it; the handler adds the authorized operations. */
export type DescribedConsumerGroup = Omit<ConsumerGroupDescribeResponseDescribedGroup, '_unknownTaggedFields' | 'authorizedOperations' | 'members'> & {
  members: DescribedConsumerGroupMember[];
};

export function heartbeatError(errorCode: number, errorMessage: string | null = null): ConsumerGroupHeartbeatResult {
  return { errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

const sessionKey = (groupId: string, memberId: string): string => `consumer-session:${groupId}:${memberId}`;
const rebalanceKey = (groupId: string, memberId: string): string => `consumer-rebalance:${groupId}:${memberId}`;
const joinKey = (groupId: string, memberId: string): string => `consumer-join:${groupId}:${memberId}`;
const syncKey = (groupId: string, memberId: string): string => `consumer-sync:${groupId}:${memberId}`;

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
      if (!(err instanceof TopicRegexSyntaxError)) throw err;
      throw new KafkaError(
        ErrorCode.INVALID_REGULAR_EXPRESSION,
        `SubscribedTopicRegex \`${p.subscribedTopicRegex}\` is not a valid regular expression: ${err.description}.`,
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

/**
 * Kafka's validateMemberEpoch for offsets: STALE_MEMBER_EPOCH for a consumer-protocol member,
 * ILLEGAL_GENERATION for a classic one (its generation id is its member epoch).
 */
function validateReceivedMemberEpoch(member: ConsumerGroupMember, received: number): void {
  if (received === member.memberEpoch) return;
  if (usesClassicProtocol(member)) {
    throw new KafkaError(ErrorCode.ILLEGAL_GENERATION, `The received generation id ${received} does not match the expected member epoch ${member.memberEpoch}.`);
  }
  throw new KafkaError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${received} does not match the expected member epoch ${member.memberEpoch}.`);
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

  /** Kafka's throwIfConsumerGroupIsFull. */
  private throwIfGroupIsFull(group: ConsumerGroup, memberId: string): void {
    if (group.members.size >= this.settings.maxSize && (memberId === '' || !group.members.has(memberId))) {
      throw new KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.settings.maxSize} members.`);
    }
  }

  /**
   * The group a ConsumerGroupHeartbeat works on (Kafka's getOrMaybeCreateConsumerGroup): the
   * consumer group, or for a joining member a new one, replacing an Empty classic group (its
   * tombstone is written first) or converting a non-empty classic group whose members use the
   * consumer embedded protocol (the online upgrade: its tombstone, then the records of the consumer
   * group it becomes, already replayed into the returned group, which is installed only once they
   * are committed). GROUP_ID_NOT_FOUND otherwise.
   */
  private groupForHeartbeat(groupId: string, joining: boolean): { group: ConsumerGroup; isNew: boolean; preRecords: CoordinatorRecord[]; classic: ClassicGroup | null } {
    const existing = this.groups.get(groupId);
    if (existing !== undefined) return { group: existing, isNew: false, preRecords: [], classic: null };
    const classic = this.classic.group(groupId) ?? null;
    if (classic === null) {
      if (!joining) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`);
      return { group: new ConsumerGroup(groupId), isNew: true, preRecords: [], classic: null };
    }
    if (joining && classic.is('Empty') && classic.numPendingJoinMembers === 0) {
      return { group: new ConsumerGroup(groupId), isNew: true, preRecords: [groupMetadataTombstone(groupId)], classic };
    }
    if (!joining || !this.validateOnlineUpgrade(classic)) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
    let conversion: ConsumerGroupRecord[];
    try {
      conversion = consumerGroupRecordsFromClassic(classic, this.topics);
    } catch (err) {
      if (!(err instanceof MalformedConsumerProtocol)) throw err;
      this.log.warn(`cannot upgrade classic group ${groupId} to a consumer group: ${err.message}`);
      throw new KafkaError(
        ErrorCode.GROUP_ID_NOT_FOUND,
        `Cannot upgrade the classic group ${groupId} to consumer group because the embedded consumer protocol is malformed.`,
      );
    }
    const group = new ConsumerGroup(groupId);
    for (const r of conversion) group.replay(r);
    return { group, isNew: true, preRecords: [groupMetadataTombstone(groupId), ...conversion.map(serializeConsumerGroupRecord)], classic };
  }

  /** Kafka's validateOnlineUpgrade. */
  private validateOnlineUpgrade(classic: ClassicGroup): boolean {
    const g = classic.groupId;
    if (!isUpgradeEnabled(this.settings.migrationPolicy)) {
      this.log.info(`cannot upgrade classic group ${g} to consumer group because the online upgrade is disabled`);
      return false;
    }
    if (!classic.usesConsumerProtocol) {
      this.log.info(`cannot upgrade classic group ${g} to consumer group because the group does not use the consumer embedded protocol`);
      return false;
    }
    if (classic.size > this.settings.maxSize) {
      this.log.info(`cannot upgrade classic group ${g} to consumer group because the group size exceeds the consumer group maximum size`);
      return false;
    }
    return true;
  }

  /**
   * A static member's new incarnation (Kafka's replaceMember): the predecessor's records go, the new
   * member id gets its subscription, target assignment and current assignment, at epoch 0.
   */
  private replaceStaticMember(group: ConsumerGroup, existing: ConsumerGroupMember, memberId: string, records: ConsumerGroupRecord[]): ConsumerGroupMember {
    const groupId = group.groupId;
    const member = { ...existing, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
    records.push(
      ...memberTombstones(groupId, existing.memberId),
      memberSubscriptionRecord(groupId, member),
      targetAssignmentRecord(groupId, memberId, group.targetAssignmentOf(existing.memberId, null)),
      currentAssignmentRecord(groupId, member),
    );
    return member;
  }

  /**
   * Steps 1-3 of a heartbeat or a classic member's JoinGroup (Kafka's consumerGroupHeartbeat and
   * classicGroupJoinToConsumerGroup share them): the member's subscription record when it changed,
   * the subscription metadata and the group epoch when the subscriptions or the subscribed topics
   * changed, a new target assignment when the group epoch is ahead of it, then the member's
   * reconciliation towards its target. Pushes the records; changes nothing in memory.
   */
  private updateAndReconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    updatedIn: ConsumerGroupMember,
    replaced: ConsumerGroupMember | null,
    owned: OwnedTopicPartitions[] | null,
    records: ConsumerGroupRecord[],
  ): { updated: ConsumerGroupMember; beforeReconcile: ConsumerGroupMember; refreshMetadata: boolean } {
    const groupId = group.groupId;
    let updated = updatedIn;
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

    // A new target assignment when the group epoch is ahead of the assignment's.
    let targetAssignmentEpoch: number;
    let targetAssignment: Assignment;
    if (groupEpoch > group.assignmentEpoch) {
      const assignorName = group.preferredServerAssignor(membersAfter) ?? this.defaultAssignor.name();
      const assignor = this.settings.assignors.get(assignorName) ?? this.defaultAssignor;
      const effective = (m: ConsumerGroupMember): TargetAssignmentMember => ({
        instanceId: m.instanceId,
        rackId: m.rackId,
        subscribedTopicNames: group.effectiveSubscription(m, this.topics),
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

    // Reconciliation of the member towards the target.
    const beforeReconcile = updated;
    if (!isReconciledTo(updated, targetAssignmentEpoch)) {
      updated = new CurrentAssignmentBuilder(updated)
        .withTargetAssignment(targetAssignmentEpoch, targetAssignment)
        .withCurrentPartitionEpoch((topicId, partition) => group.currentPartitionEpoch(topicId, partition))
        .withOwnedTopicPartitions(owned)
        .build();
      if (!membersEqual(updated, beforeReconcile)) records.push(currentAssignmentRecord(groupId, updated));
    }
    return { updated, beforeReconcile, refreshMetadata };
  }

  private async joinOrHeartbeat(p: ConsumerGroupHeartbeatParams): Promise<ConsumerGroupHeartbeatResult> {
    const { groupId } = p;
    const records: ConsumerGroupRecord[] = [];
    const joining = p.memberEpoch === 0;
    const { group, isNew, preRecords, classic } = this.groupForHeartbeat(groupId, joining);
    this.throwIfGroupIsFull(group, p.memberId);
    const memberId = p.memberId === '' ? randomUuid() : p.memberId;

    // The member: existing, new, or a static member replacing its previous incarnation.
    let member: ConsumerGroupMember;
    let replaced: ConsumerGroupMember | null = null;
    if (p.instanceId === null) {
      const existing = group.member(memberId);
      if (existing === undefined) {
        if (!joining) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${groupId}.`);
        member = newConsumerGroupMember(memberId);
        this.log.info(`member ${memberId} joins consumer group ${groupId} using the consumer protocol`);
      } else {
        member = existing;
      }
      validateMemberEpoch(member, p.memberEpoch, p.topicPartitions);
    } else {
      const existingStatic = group.staticMember(p.instanceId);
      if (joining) {
        if (existingStatic === undefined) {
          member = group.member(memberId) ?? newConsumerGroupMember(memberId);
          this.log.info(`static member ${memberId} with instance id ${p.instanceId} joins consumer group ${groupId} using the consumer protocol`);
        } else {
          // Replacing a member on the consumer protocol needs its temporary leave first; a
          // classic predecessor cannot send one, so it is replaced as it is (Kafka).
          if (existingStatic.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH && !usesClassicProtocol(existingStatic)) {
            throw new KafkaError(
              ErrorCode.UNRELEASED_INSTANCE_ID,
              `Static member ${memberId} with instance id ${p.instanceId} cannot join the group because the instance id is owned by ${existingStatic.memberId} member.`,
            );
          }
          // The new incarnation starts from its predecessor's subscription and assignment.
          member = this.replaceStaticMember(group, existingStatic, memberId, records);
          replaced = existingStatic;
          this.log.info(`static member with instance id ${p.instanceId} rejoins consumer group ${groupId} using the consumer protocol: ${memberId} replaces ${existingStatic.memberId}`);
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

    const step = this.updateAndReconcile(
      group,
      member,
      updateMember(member, {
        instanceId: p.instanceId ?? member.instanceId,
        rackId: p.rackId ?? member.rackId,
        rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
        serverAssignorName: p.serverAssignor ?? member.serverAssignorName,
        subscribedTopicNames: p.subscribedTopicNames !== null ? new Set(p.subscribedTopicNames) : member.subscribedTopicNames,
        subscribedTopicRegex: p.subscribedTopicRegex !== null ? p.subscribedTopicRegex : member.subscribedTopicRegex,
        clientId: p.clientId,
        clientHost: p.clientHost,
        classicMemberMetadata: null,
      }),
      replaced,
      p.topicPartitions,
      records,
    );
    const { updated, beforeReconcile } = step;

    // Persist, then apply.
    if (records.length > 0 || preRecords.length > 0) {
      const err = await this.ctx.append(groupId, [...preRecords, ...records.map(serializeConsumerGroupRecord)]);
      if (err !== ErrorCode.NONE) return heartbeatError(appendErrorToResponseError(err));
      if (classic !== null) {
        const upgraded = classic.size > 0;
        this.classic.retire(classic);
        if (upgraded) this.log.info(`upgraded classic group ${groupId} with ${group.members.size} members to a consumer group`);
      }
      if (isNew) {
        this.groups.set(groupId, group);
        // Members converted from the classic group keep their classic session timeouts.
        for (const m of group.members.values()) this.scheduleSessionTimeout(groupId, m.memberId, this.sessionTimeoutOf(groupId, m));
      }
      for (const r of records) group.replay(r);
    }
    if (step.refreshMetadata) group.metadataRefreshRequested = false;
    if (replaced !== null) this.cancelTimers(groupId, replaced.memberId);
    if (!membersEqual(updated, beforeReconcile)) {
      if (updated.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(groupId, updated.memberId, updated.memberEpoch, updated.rebalanceTimeoutMs);
      else this.ctx.timer.cancel(rebalanceKey(groupId, updated.memberId));
    }
    this.scheduleSessionTimeout(groupId, updated.memberId, this.groupSessionTimeoutMs(groupId));

    const isFullRequest =
      p.memberEpoch === 0 ||
      (p.rebalanceTimeoutMs !== -1 && (p.subscribedTopicNames !== null || p.subscribedTopicRegex !== null) && p.topicPartitions !== null);
    const assignmentChanged = !assignmentsEqual(member.assignedPartitions, updated.assignedPartitions);
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: updated.memberId,
      memberEpoch: updated.memberEpoch,
      heartbeatIntervalMs: this.groupHeartbeatIntervalMs(groupId),
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
   * Kafka's consumerGroupFenceMember: when the member was the last one on the consumer protocol and
   * the policy allows it, the group becomes a classic group (online downgrade); otherwise the
   * member is removed (removeMembers).
   */
  private async fenceMember(group: ConsumerGroup, member: ConsumerGroupMember): Promise<number> {
    if (this.validateOnlineDowngradeWithFencedMember(group, member.memberId)) {
      const converted = await this.convertToClassicGroup(group, member.memberId, null, []);
      if (converted !== null) return converted;
    }
    return this.removeMembers(group, [member.memberId]);
  }

  /**
   * Kafka's removeMember for each of `memberIds`, then the subscription metadata without them (when
   * that changes) and the next group epoch, in one batch; once committed, their timers go.
   */
  private async removeMembers(group: ConsumerGroup, memberIds: readonly string[]): Promise<number> {
    const groupId = group.groupId;
    const records: ConsumerGroupRecord[] = memberIds.flatMap((id) => memberTombstones(groupId, id));
    const metadata = group.computeSubscriptionMetadata(group.membersWith(memberIds, null), this.topics);
    if (!metadataEqual(metadata, group.subscriptionMetadata)) records.push(subscriptionMetadataRecord(groupId, metadata));
    records.push(groupEpochRecord(groupId, group.groupEpoch + 1));
    const err = await this.ctx.append(groupId, records.map(serializeConsumerGroupRecord));
    if (err !== ErrorCode.NONE) return err;
    for (const r of records) group.replay(r);
    for (const id of memberIds) this.cancelTimers(groupId, id);
    return ErrorCode.NONE;
  }

  /** Kafka's validateOnlineDowngradeWithFencedMember. */
  private validateOnlineDowngradeWithFencedMember(group: ConsumerGroup, fencedMemberId: string): boolean {
    const g = group.groupId;
    if (!group.allMembersUseClassicProtocolExcept(fencedMemberId)) return false;
    if (group.members.size <= 1) return false;
    if (!isDowngradeEnabled(this.settings.migrationPolicy)) {
      this.log.info(`cannot downgrade consumer group ${g} to classic group because the online downgrade is disabled`);
      return false;
    }
    if (group.members.size - 1 > this.ctx.config.maxSize) {
      this.log.info(`cannot downgrade consumer group ${g} to classic group because its group size is greater than classic group max size`);
      return false;
    }
    return true;
  }

  /** Kafka's validateOnlineDowngradeWithReplacedMemberId. */
  private validateOnlineDowngradeWithReplacedMemberId(group: ConsumerGroup, replacedMemberId: string): boolean {
    const g = group.groupId;
    if (!group.allMembersUseClassicProtocolExcept(replacedMemberId)) return false;
    if (!isDowngradeEnabled(this.settings.migrationPolicy)) {
      this.log.info(`cannot downgrade consumer group ${g} to classic group because the online downgrade is disabled`);
      return false;
    }
    if (group.members.size > this.ctx.config.maxSize) {
      this.log.info(`cannot downgrade consumer group ${g} to classic group because its group size is greater than classic group max size`);
      return false;
    }
    return true;
  }

  /**
   * Kafka's convertToClassicGroup: `records` (this request's own), the consumer group's tombstones
   * (for a replaced static member, the joining member's records are the ones removed) and the
   * GroupMetadata record of the classic group it becomes, in one batch; once committed the classic
   * group replaces it, its members' heartbeats are scheduled, and, when a member left, a rebalance
   * starts. Resolves the append's error code, or null (with nothing written) when the members'
   * embedded protocol does not decode, so the caller goes on without the downgrade.
   */
  private async convertToClassicGroup(
    group: ConsumerGroup,
    leavingMemberId: string,
    joiningMember: ConsumerGroupMember | null,
    records: ConsumerGroupRecord[],
  ): Promise<number | null> {
    const groupId = group.groupId;
    let classic: ClassicGroup;
    try {
      classic = classicGroupFromConsumer(group, leavingMemberId, joiningMember, this.topics, () => this.ctx.now());
    } catch (err) {
      if (!(err instanceof MalformedConsumerProtocol)) throw err;
      this.log.warn(`cannot downgrade consumer group ${groupId} to a classic group: ${err.message}`);
      return null;
    }
    const tombstones = joiningMember === null ? this.groupTombstones(group) : this.groupTombstones(group, leavingMemberId, joiningMember.memberId);
    const err = await this.ctx.append(groupId, [
      ...records.map(serializeConsumerGroupRecord),
      ...tombstones,
      groupMetadataRecord(groupId, classic.toRecordValue(classic.groupAssignment())),
    ]);
    if (err !== ErrorCode.NONE) return err;
    this.remove(group);
    this.log.info(`downgraded consumer group ${groupId} to a classic group with ${classic.size} members at generation ${classic.generationId}`);
    this.classic.adopt(classic, joiningMember === null ? `Downgrade group ${groupId} from consumer to classic.` : null);
    return ErrorCode.NONE;
  }

  // ---- the classic protocol in a consumer group -----------------------------------------------

  /**
   * Kafka's validateConsumerGroupMember plus throwIfMemberDoesNotUseClassicProtocol: the member by
   * id, or by instance id for a static one (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), speaking the
   * classic protocol (UNKNOWN_MEMBER_ID otherwise).
   */
  private classicMember(group: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerGroupMember {
    let member: ConsumerGroupMember | undefined;
    if (instanceId === null) {
      member = group.member(memberId);
      if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
    } else {
      member = group.staticMember(instanceId);
      if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member with instance id ${instanceId} is not a member of group ${group.groupId}.`);
      if (member.memberId !== memberId) {
        throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${instanceId} was fenced by member ${member.memberId}.`);
      }
    }
    if (!usesClassicProtocol(member)) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${member.memberId} does not use the classic protocol.`);
    return member;
  }

  private static throwIfGenerationIdUnmatched(member: ConsumerGroupMember, generationId: number): void {
    if (member.memberEpoch !== generationId) {
      throw new KafkaError(
        ErrorCode.ILLEGAL_GENERATION,
        `The request generation id ${generationId} is not equal to the member epoch ${member.memberEpoch} of member ${member.memberId}.`,
      );
    }
  }

  /**
   * Kafka's classicGroupJoinToConsumerGroup: a JoinGroup to a consumer group with members. The
   * member joins (or rejoins) the consumer group keeping the classic protocol: the server computes
   * its assignment (the uniform or range assignor, like every member's), the response makes nobody
   * the leader, and its generation is the member epoch; SyncGroup then hands out the assignment.
   */
  async classicJoin(p: JoinGroupParams): Promise<JoinResult> {
    try {
      return await this.doClassicJoin(p);
    } catch (err) {
      if (err instanceof KafkaError) {
        if (err.code !== ErrorCode.UNKNOWN_SERVER_ERROR) this.log.debug(`JoinGroup to consumer group ${p.groupId} failed: ${err.message}`);
        return joinError(p.memberId, err.code);
      }
      throw err;
    }
  }

  private async doClassicJoin(p: JoinGroupParams): Promise<JoinResult> {
    const groupId = p.groupId;
    const group = this.consumerGroup(groupId);
    const isUnknownMember = p.memberId === '';
    const memberId = isUnknownMember ? randomUuid() : p.memberId;
    this.throwIfGroupIsFull(group, memberId);
    if (!group.supportsClassicProtocols(p.protocolType, p.protocols.map((x) => x.name))) {
      throw new KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Member ${memberId}'s protocols are not supported.`);
    }
    if (p.requireKnownMemberId && isUnknownMember && p.groupInstanceId === null) {
      this.log.info(`dynamic member with unknown member id joins consumer group ${groupId}: created member id ${memberId}, asking it to rejoin with it`);
      return joinError(memberId, ErrorCode.MEMBER_ID_REQUIRED);
    }
    let subscription;
    try {
      subscription = deserializeSubscription(p.protocols[0].metadata);
    } catch (err) {
      if (!(err instanceof MalformedConsumerProtocol)) throw err;
      throw new KafkaError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Member ${memberId}'s embedded consumer protocol is malformed: ${err.message}.`);
    }

    const records: ConsumerGroupRecord[] = [];
    let member: ConsumerGroupMember;
    let replaced: ConsumerGroupMember | null = null;
    const instanceId = p.groupInstanceId;
    if (instanceId === null) {
      const existing = group.member(memberId);
      member = existing ?? newConsumerGroupMember(memberId);
      if (existing === undefined) this.log.info(`member ${memberId} joins consumer group ${groupId} using the classic protocol`);
    } else {
      const existingStatic = group.staticMember(instanceId);
      if (isUnknownMember) {
        if (existingStatic === undefined) {
          member = group.member(memberId) ?? newConsumerGroupMember(memberId);
          this.log.info(`static member ${memberId} with instance id ${instanceId} joins consumer group ${groupId} using the classic protocol`);
        } else {
          member = this.replaceStaticMember(group, existingStatic, memberId, records);
          replaced = existingStatic;
          this.log.info(`static member with instance id ${instanceId} rejoins consumer group ${groupId} using the classic protocol: ${memberId} replaces ${existingStatic.memberId}`);
        }
      } else {
        if (existingStatic === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${instanceId} is unknown.`);
        if (existingStatic.memberId !== memberId) {
          throw new KafkaError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${instanceId} was fenced by member ${existingStatic.memberId}.`);
        }
        member = existingStatic;
      }
    }

    const { updated } = this.updateAndReconcile(
      group,
      member,
      updateMember(member, {
        instanceId: instanceId ?? member.instanceId,
        rackId: subscription.rackId ?? member.rackId,
        rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
        subscribedTopicNames: new Set(subscription.topics),
        clientId: p.clientId,
        clientHost: p.clientHost,
        classicMemberMetadata: {
          sessionTimeoutMs: p.sessionTimeoutMs,
          supportedProtocols: p.protocols.map((x) => ({ name: x.name, metadata: Buffer.from(x.metadata) })),
        },
      }),
      replaced,
      ownedTopicPartitions(subscription, this.topics),
      records,
    );

    // A static member on the classic protocol replacing the last member on the consumer protocol
    // turns the group back into a classic group (the replaced member's slot and assignment go to it).
    const existingStaticId = instanceId !== null ? group.staticMembers.get(instanceId) : undefined;
    if (existingStaticId !== undefined && this.validateOnlineDowngradeWithReplacedMemberId(group, existingStaticId)) {
      const err = await this.convertToClassicGroup(group, existingStaticId, updated, records);
      if (err !== null) {
        if (err !== ErrorCode.NONE) return joinError(memberId, appendErrorToResponseError(err));
        const classic = this.classic.group(groupId)!;
        return {
          errorCode: ErrorCode.NONE,
          memberId: updated.memberId,
          generationId: classic.generationId,
          protocolType: CONSUMER_PROTOCOL_TYPE,
          protocolName: classic.protocolName,
          leader: '',
          skipAssignment: false,
          members: [],
        };
      }
    }

    if (records.length > 0) {
      const err = await this.ctx.append(groupId, records.map(serializeConsumerGroupRecord));
      if (err !== ErrorCode.NONE) return joinError(memberId, appendErrorToResponseError(err));
      for (const r of records) group.replay(r);
    }
    if (replaced !== null) this.cancelTimers(groupId, replaced.memberId);
    this.ctx.timer.cancel(joinKey(groupId, updated.memberId));
    this.scheduleSessionTimeout(groupId, updated.memberId, p.sessionTimeoutMs);
    this.scheduleSyncTimeout(groupId, updated.memberId, p.rebalanceTimeoutMs);
    return {
      errorCode: ErrorCode.NONE,
      memberId: updated.memberId,
      generationId: updated.memberEpoch,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: p.protocols[0].name,
      leader: '',
      skipAssignment: false,
      members: [],
    };
  }

  /**
   * Kafka's classicGroupSyncToConsumerGroup: the member's current assignment, serialized at the
   * version of its subscription; REBALANCE_IN_PROGRESS when the group moved on and the member must
   * rejoin first (unless it is revoking, which its next join completes).
   */
  classicSync(p: SyncGroupParams): SyncResult {
    try {
      const group = this.consumerGroup(p.groupId);
      const member = this.classicMember(group, p.memberId, p.groupInstanceId);
      ConsumerGroupManager.throwIfGenerationIdUnmatched(member, p.generationId);
      const protocols = member.classicMemberMetadata!.supportedProtocols;
      const protocolName = protocols[0].name;
      if (p.protocolType !== null && p.protocolType !== CONSUMER_PROTOCOL_TYPE) {
        throw new KafkaError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `The protocol type ${p.protocolType} from member ${member.memberId} request is not equal to the group protocol type ${CONSUMER_PROTOCOL_TYPE}.`,
        );
      }
      if (p.protocolName !== null && p.protocolName !== protocolName) {
        throw new KafkaError(
          ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
          `The protocol name ${p.protocolName} from member ${member.memberId} request is not equal to the protocol name ${protocolName} returned in the join response.`,
        );
      }
      this.throwIfRebalanceInProgress(group, member);
      const assignment = serializeAssignment(member.assignedPartitions, this.topics, consumerProtocolVersion(protocols[0].metadata));
      this.ctx.timer.cancel(syncKey(p.groupId, member.memberId));
      this.scheduleSessionTimeout(p.groupId, member.memberId, this.sessionTimeoutOf(p.groupId, member));
      return { errorCode: ErrorCode.NONE, protocolType: p.protocolType, protocolName: p.protocolName, assignment };
    } catch (err) {
      if (err instanceof KafkaError) return syncError(err.code);
      if (err instanceof MalformedConsumerProtocol) return syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      throw err;
    }
  }

  /** Kafka's throwIfRebalanceInProgress. */
  private throwIfRebalanceInProgress(group: ConsumerGroup, member: ConsumerGroupMember): void {
    if (group.groupEpoch > member.memberEpoch && member.state !== MemberState.UNREVOKED_PARTITIONS) {
      this.scheduleJoinTimeoutIfAbsent(group.groupId, member.memberId, member.rebalanceTimeoutMs);
      throw new KafkaError(
        ErrorCode.REBALANCE_IN_PROGRESS,
        `A new rebalance is triggered in group ${group.groupId} and member ${member.memberId} should rejoin to catch up.`,
      );
    }
  }

  /**
   * Kafka's classicGroupHeartbeatToConsumerGroup: the session goes on; REBALANCE_IN_PROGRESS asks the
   * member to rejoin when the group epoch moved past it, it has partitions to revoke, or the
   * partitions it waited for are free now.
   */
  classicHeartbeat(groupId: string, memberId: string, instanceId: string | null, generationId: number): number {
    try {
      const group = this.consumerGroup(groupId);
      const member = this.classicMember(group, memberId, instanceId);
      ConsumerGroupManager.throwIfGenerationIdUnmatched(member, generationId);
      this.scheduleSessionTimeout(groupId, member.memberId, this.sessionTimeoutOf(groupId, member));
      if (
        member.memberEpoch < group.groupEpoch ||
        member.state === MemberState.UNREVOKED_PARTITIONS ||
        (member.state === MemberState.UNRELEASED_PARTITIONS && !group.waitingOnUnreleasedPartition(member))
      ) {
        this.scheduleJoinTimeoutIfAbsent(groupId, member.memberId, member.rebalanceTimeoutMs);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      }
      return ErrorCode.NONE;
    } catch (err) {
      if (err instanceof KafkaError) return err.code;
      throw err;
    }
  }

  /**
   * Kafka's classicGroupLeaveToConsumerGroup: each classic member named leaves (dynamic by member id,
   * static by instance id, where an empty member id is an administrative removal); one batch removes
   * them, updates the subscription metadata and bumps the group epoch.
   */
  async classicLeave(
    groupId: string,
    members: { memberId: string; groupInstanceId: string | null; reason: string | null }[],
  ): Promise<{ errorCode: number; members: LeaveMemberResult[] }> {
    const group = this.consumerGroup(groupId);
    const results: LeaveMemberResult[] = [];
    const leaving: ConsumerGroupMember[] = [];
    for (const m of members) {
      try {
        let member: ConsumerGroupMember;
        if (m.groupInstanceId === null) {
          member = this.classicMember(group, m.memberId, null);
        } else {
          const s = group.staticMember(m.groupInstanceId);
          if (s === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${m.groupInstanceId} is unknown.`);
          member = this.classicMember(group, m.memberId === '' ? s.memberId : m.memberId, m.groupInstanceId);
        }
        if (leaving.some((x) => x.memberId === member.memberId)) {
          results.push({ memberId: member.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.NONE });
          continue;
        }
        this.log.info(`member ${member.memberId} left consumer group ${groupId} through an explicit LeaveGroup request`, { reason: m.reason ?? 'not provided' });
        leaving.push(member);
        results.push({ memberId: member.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.NONE });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        results.push({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: err.code });
      }
    }
    if (leaving.length > 0) {
      const err = await this.removeMembers(group, leaving.map((m) => m.memberId));
      if (err !== ErrorCode.NONE) return { errorCode: appendErrorToResponseError(err), members: [] };
    }
    return { errorCode: ErrorCode.NONE, members: results };
  }

  // ---- timers ---------------------------------------------------------------------------------

  /** The member's session timeout: its JoinGroup's for a classic member, the group's (groupSessionTimeoutMs) otherwise. */
  private sessionTimeoutOf(groupId: string, m: ConsumerGroupMember): number {
    return m.classicMemberMetadata?.sessionTimeoutMs ?? this.groupSessionTimeoutMs(groupId);
  }

  /** The group's consumer.session.timeout.ms, else group.consumer.session.timeout.ms. */
  private groupSessionTimeoutMs(groupId: string): number {
    return this.settings.groupConfig?.(groupId).sessionTimeoutMs ?? this.settings.sessionTimeoutMs;
  }

  /** The group's consumer.heartbeat.interval.ms, else group.consumer.heartbeat.interval.ms. */
  private groupHeartbeatIntervalMs(groupId: string): number {
    return this.settings.groupConfig?.(groupId).heartbeatIntervalMs ?? this.settings.heartbeatIntervalMs;
  }

  private scheduleSessionTimeout(groupId: string, memberId: string, timeoutMs: number): void {
    this.ctx.timer.schedule(groupId, sessionKey(groupId, memberId), timeoutMs, () =>
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

  /** A classic member asked to rejoin must do so within its rebalance timeout. */
  private scheduleJoinTimeoutIfAbsent(groupId: string, memberId: string, rebalanceTimeoutMs: number): void {
    if (this.ctx.timer.isScheduled(joinKey(groupId, memberId))) return;
    this.ctx.timer.schedule(groupId, joinKey(groupId, memberId), rebalanceTimeoutMs, () =>
      this.fenceOperation(groupId, memberId, 'the classic member failed to join within the rebalance timeout'),
    );
  }

  /** A classic member that joined must send its SyncGroup within its rebalance timeout. */
  private scheduleSyncTimeout(groupId: string, memberId: string, rebalanceTimeoutMs: number): void {
    this.ctx.timer.schedule(groupId, syncKey(groupId, memberId), rebalanceTimeoutMs, () =>
      this.fenceOperation(groupId, memberId, 'the member failed to sync within timeout'),
    );
  }

  private cancelTimers(groupId: string, memberId: string): void {
    this.ctx.timer.cancel(sessionKey(groupId, memberId));
    this.ctx.timer.cancel(rebalanceKey(groupId, memberId));
    this.ctx.timer.cancel(joinKey(groupId, memberId));
    this.ctx.timer.cancel(syncKey(groupId, memberId));
  }

  private async fenceOperation(groupId: string, memberId: string, reason: string): Promise<void> {
    const group = this.groups.get(groupId);
    const member = group?.member(memberId);
    if (group === undefined || member === undefined) return;
    this.log.info(`member ${memberId} fenced from consumer group ${groupId} because ${reason}`);
    const err = await this.fenceMember(group, member);
    if (err !== ErrorCode.NONE) {
      this.log.warn(`could not fence member ${memberId} of consumer group ${groupId}; retrying at its next session timeout`, { error: err });
      this.scheduleSessionTimeout(groupId, memberId, this.sessionTimeoutOf(groupId, member));
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
        memberType: usesClassicProtocol(m) ? 0 : 1,
        assignment: named(m.assignedPartitions),
        targetAssignment: named(group.targetAssignment.get(m.memberId) ?? EMPTY_ASSIGNMENT),
      })),
    };
  }

  // ---- offsets, deletion ----------------------------------------------------------------------

  /**
   * Kafka's ConsumerGroup.validateOffsetCommit: an empty group takes commits with a negative
   * epoch (admin client, consumers without group management); otherwise the member must exist,
   * commit with OffsetCommit v9+ when it speaks the consumer protocol (unless transactional), at its
   * current member epoch (a classic member's generation is its member epoch).
   */
  validateOffsetCommit(group: ConsumerGroup, memberId: string, memberEpoch: number, isTransactional: boolean, apiVersion: number): void {
    if (memberEpoch < 0 && group.isEmpty()) return;
    const member = group.member(memberId);
    if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
    if (!isTransactional && !usesClassicProtocol(member) && apiVersion < 9) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'OffsetCommit version 9 or above must be used by members using the modern group protocol');
    }
    validateReceivedMemberEpoch(member, memberEpoch);
  }

  /** Kafka's ConsumerGroup.validateOffsetFetch: no member id and a negative epoch always pass. */
  validateOffsetFetch(group: ConsumerGroup, memberId: string | null, memberEpoch: number): void {
    if (memberId === null && memberEpoch < 0) return;
    const member = memberId === null ? undefined : group.member(memberId);
    if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`);
    validateReceivedMemberEpoch(member, memberEpoch);
  }

  /**
   * Kafka's createGroupTombstoneRecords: every record of the group, members first. With
   * `leavingMemberId` and `joiningMemberId` (createGroupTombstoneRecordsWithReplacedMember): the
   * joining member's records, written in the same batch, are removed instead of the leaving one's.
   */
  groupTombstones(group: ConsumerGroup, leavingMemberId?: string, joiningMemberId?: string): CoordinatorRecord[] {
    const g = group.groupId;
    const ids = [...group.members.keys()].map((id) => (id === leavingMemberId && joiningMemberId !== undefined ? joiningMemberId : id));
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
      this.scheduleSessionTimeout(group.groupId, m.memberId, this.sessionTimeoutOf(group.groupId, m));
      if (m.state === MemberState.UNREVOKED_PARTITIONS && !usesClassicProtocol(m)) {
        this.scheduleRebalanceTimeout(group.groupId, m.memberId, m.memberEpoch, m.rebalanceTimeoutMs);
      }
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
