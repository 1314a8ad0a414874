/**
 * Online migration of a group between the classic and the consumer protocol (KIP-848's upgrade and
 * downgrade paths, Kafka's ConsumerGroup.fromClassicGroup / ClassicGroup.fromConsumerGroup and
 * `group.consumer.migration.policy`). Pure: it turns one group into the records or the object of
 * the other type; the ConsumerGroupManager decides when, appends and installs.
 *
 * Invariants:
 * - Upgrade: every classic member becomes a consumer group member that keeps speaking the classic
 *   protocol (its classic member metadata holds its session timeout and JoinGroup protocols), at
 *   member epoch = the classic generation, STABLE, with its last classic assignment as both its
 *   current and its target assignment; the group epoch and the target assignment epoch are the
 *   generation. The records are Kafka's createConsumerGroupRecords (subscriptions, group epoch,
 *   target assignment members, target assignment epoch, current assignments).
 * - Downgrade: the remaining members (all classic; a joining static member takes the leaving
 *   member's place and target assignment) form a Stable classic group at generation = the group
 *   epoch, each with its target assignment serialized at the version of its own subscription.
 * - Embedded protocol bytes that do not decode make the conversion fail as a whole
 *   (MalformedConsumerProtocol): the group stays what it was.
 */
import { ClassicGroup, ClassicGroupMember, CONSUMER_PROTOCOL_TYPE } from './classic-group';
import { EMPTY_ASSIGNMENT } from './consumer/assignor';
import type { ConsumerGroup } from './consumer/consumer-group';
import { MemberState, newConsumerGroupMember, type ConsumerGroupMember } from './consumer/consumer-group-member';
import {
  currentAssignmentRecord,
  groupEpochRecord,
  memberSubscriptionRecord,
  targetAssignmentEpochRecord,
  targetAssignmentRecord,
  type ConsumerGroupRecord,
} from './consumer/consumer-group-records';
import { consumerProtocolVersion, deserializeAssignment, deserializeSubscription, serializeAssignment, toAssignment, type TopicNames } from './consumer/consumer-protocol';

/** `group.consumer.migration.policy` (Kafka's ConsumerGroupMigrationPolicy). */
export type ConsumerGroupMigrationPolicy = 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional';

export function parseMigrationPolicy(value: string): ConsumerGroupMigrationPolicy {
  const v = value.toLowerCase();
  if (v === 'disabled' || v === 'upgrade' || v === 'downgrade' || v === 'bidirectional') return v;
  throw new Error(`Invalid value ${value} for configuration group.consumer.migration.policy: String must be one of: DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL`);
}

export function isUpgradeEnabled(p: ConsumerGroupMigrationPolicy): boolean {
  return p === 'upgrade' || p === 'bidirectional';
}

export function isDowngradeEnabled(p: ConsumerGroupMigrationPolicy): boolean {
  return p === 'downgrade' || p === 'bidirectional';
}

/** The consumer group member a classic member becomes. */
function memberFromClassic(classic: ClassicGroup, m: ClassicGroupMember, topics: TopicNames): ConsumerGroupMember {
  const protocolName = classic.protocolName ?? m.protocols[0]?.name ?? null;
  const subscription = deserializeSubscription(m.metadata(protocolName));
  return newConsumerGroupMember(m.memberId, {
    memberEpoch: classic.generationId,
    previousMemberEpoch: classic.generationId,
    state: MemberState.STABLE,
    instanceId: m.groupInstanceId,
    rackId: subscription.rackId,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    clientId: m.clientId,
    clientHost: m.clientHost,
    subscribedTopicNames: new Set(subscription.topics),
    assignedPartitions: toAssignment(deserializeAssignment(m.assignment), topics),
    classicMemberMetadata: {
      sessionTimeoutMs: m.sessionTimeoutMs,
      supportedProtocols: m.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
    },
  });
}

/**
 * The records that create, under the classic group's id, the consumer group it becomes (the caller
 * writes the classic group's tombstone before them). Throws MalformedConsumerProtocol.
 */
export function consumerGroupRecordsFromClassic(classic: ClassicGroup, topics: TopicNames): ConsumerGroupRecord[] {
  const g = classic.groupId;
  const members = classic.allMembers().map((m) => memberFromClassic(classic, m, topics));
  return [
    ...members.map((m) => memberSubscriptionRecord(g, m)),
    groupEpochRecord(g, classic.generationId),
    ...members.map((m) => targetAssignmentRecord(g, m.memberId, m.assignedPartitions)),
    targetAssignmentEpochRecord(g, classic.generationId),
    ...members.map((m) => currentAssignmentRecord(g, m)),
  ];
}

/**
 * The classic group `group` becomes when `leavingMemberId` (the last member on the consumer
 * protocol) leaves, or is replaced by `joiningMember` (a static member rejoining with the classic
 * protocol). Throws MalformedConsumerProtocol.
 */
export function classicGroupFromConsumer(
  group: ConsumerGroup,
  leavingMemberId: string,
  joiningMember: ConsumerGroupMember | null,
  topics: TopicNames,
  now: () => number,
): ClassicGroup {
  const classic = new ClassicGroup(group.groupId, 'Stable', now, { generationId: group.groupEpoch, protocolType: CONSUMER_PROTOCOL_TYPE });
  const members: { member: ConsumerGroupMember; assignmentOf: string }[] = [];
  for (const m of group.members.values()) if (m.memberId !== leavingMemberId) members.push({ member: m, assignmentOf: m.memberId });
  if (joiningMember !== null) members.push({ member: joiningMember, assignmentOf: leavingMemberId });
  for (const { member } of members) {
    const meta = member.classicMemberMetadata;
    if (meta === null) throw new Error(`member ${member.memberId} of group ${group.groupId} does not speak the classic protocol`);
    classic.add(
      new ClassicGroupMember(
        member.memberId,
        member.instanceId,
        member.clientId,
        member.clientHost,
        member.rebalanceTimeoutMs,
        meta.sessionTimeoutMs,
        CONSUMER_PROTOCOL_TYPE,
        meta.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      ),
    );
  }
  classic.protocolName = classic.selectProtocol();
  classic.subscribedTopics = classic.computeSubscribedTopics();
  for (const { member, assignmentOf } of members) {
    const cm = classic.member(member.memberId)!;
    const version = consumerProtocolVersion(cm.metadata(classic.protocolName));
    cm.assignment = serializeAssignment(group.targetAssignment.get(assignmentOf) ?? EMPTY_ASSIGNMENT, topics, version);
  }
  return classic;
}
