/**
 * A KIP-848 consumer group member as the coordinator holds it (Kafka's ConsumerGroupMember): what
 * the member subscribed to and its reconciliation state. Immutable: every change makes a new
 * object (`updateMember`), so a builder can compare before and after and write a record only when
 * something changed.
 *
 * Invariants:
 * - `state` is one of Kafka's MemberState values, with Kafka's byte values (they are persisted in
 *   ConsumerGroupCurrentMemberAssignmentValue.state); a byte krill does not know reads as UNKNOWN.
 * - `partitionsPendingRevocation` is empty unless `state` is UNREVOKED_PARTITIONS (or UNKNOWN as
 *   read back from a newer version).
 * - `assignedPartitions` and `partitionsPendingRevocation` are disjoint.
 * - A new member starts at epoch 0 with previous epoch -1, STABLE, nothing assigned (Kafka's
 *   Builder defaults); `withMemberEpoch` moves the old epoch into `previousMemberEpoch`.
 * - `classicMemberMetadata` is non-null exactly for a member that speaks the classic protocol
 *   (JoinGroup / SyncGroup / Heartbeat) inside a consumer group: its session timeout and the
 *   protocols (assignor name + ConsumerProtocolSubscription bytes) of its last JoinGroup, in order.
 */
import { EMPTY_ASSIGNMENT, assignmentsEqual, type Assignment } from './assignor';

/** Kafka's MemberState and its persisted byte values. */
export enum MemberState {
  /** Reconciled with the target assignment of its epoch. */
  STABLE = 0,
  /** Must revoke partitions before it may move to the next epoch. */
  UNREVOKED_PARTITIONS = 1,
  /** At the target epoch, waiting for partitions their previous owners have not released yet. */
  UNRELEASED_PARTITIONS = 2,
  /** A state written by a newer version; such a member is fenced and reconciled from scratch. */
  UNKNOWN = 127,
}

export function memberStateFromValue(value: number): MemberState {
  switch (value) {
    case MemberState.STABLE:
    case MemberState.UNREVOKED_PARTITIONS:
    case MemberState.UNRELEASED_PARTITIONS:
      return value;
    default:
      return MemberState.UNKNOWN;
  }
}

/** A classic protocol a member of a consumer group supports (a JoinGroup protocol). */
export interface ClassicProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

/** Kafka's ConsumerGroupMemberMetadataValue.ClassicMemberMetadata. */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number;
  readonly supportedProtocols: readonly ClassicProtocol[];
}

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: ReadonlySet<string>;
  readonly subscribedTopicRegex: string;
  readonly serverAssignorName: string | null;
  readonly assignedPartitions: Assignment;
  readonly partitionsPendingRevocation: Assignment;
  readonly classicMemberMetadata: ClassicMemberMetadata | null;
}

const NO_TOPICS: ReadonlySet<string> = new Set();

/** A member with Kafka's defaults, overridden by `fields`. */
export function newConsumerGroupMember(memberId: string, fields: Partial<Omit<ConsumerGroupMember, 'memberId'>> = {}): ConsumerGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: -1,
    state: MemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: NO_TOPICS,
    subscribedTopicRegex: '',
    serverAssignorName: null,
    assignedPartitions: EMPTY_ASSIGNMENT,
    partitionsPendingRevocation: EMPTY_ASSIGNMENT,
    classicMemberMetadata: null,
    ...fields,
  };
}

/** A copy of `member` with `fields` changed. */
export function updateMember(member: ConsumerGroupMember, fields: Partial<Omit<ConsumerGroupMember, 'memberId'>>): ConsumerGroupMember {
  return { ...member, ...fields };
}

/** Kafka's Builder.updateMemberEpoch: the new epoch, the current one becoming the previous. */
export function withMemberEpoch(member: ConsumerGroupMember, memberEpoch: number): { memberEpoch: number; previousMemberEpoch: number } {
  return { memberEpoch, previousMemberEpoch: member.memberEpoch };
}

/** Kafka's isReconciledTo: STABLE at the target assignment epoch. */
export function isReconciledTo(member: ConsumerGroupMember, targetAssignmentEpoch: number): boolean {
  return member.state === MemberState.STABLE && member.memberEpoch === targetAssignmentEpoch;
}

/** Whether the member speaks the classic protocol (Kafka's useClassicProtocol). */
export function usesClassicProtocol(member: Pick<ConsumerGroupMember, 'classicMemberMetadata'>): boolean {
  return member.classicMemberMetadata !== null;
}

function classicMetadataEqual(a: ClassicMemberMetadata | null, b: ClassicMemberMetadata | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (a.sessionTimeoutMs !== b.sessionTimeoutMs || a.supportedProtocols.length !== b.supportedProtocols.length) return false;
  return a.supportedProtocols.every((p, i) => p.name === b.supportedProtocols[i].name && p.metadata.equals(b.supportedProtocols[i].metadata));
}

function setsEqual(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** Field-by-field equality (Kafka's ConsumerGroupMember.equals). */
export function membersEqual(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a === b ||
    (a.memberId === b.memberId &&
      a.memberEpoch === b.memberEpoch &&
      a.previousMemberEpoch === b.previousMemberEpoch &&
      a.state === b.state &&
      a.instanceId === b.instanceId &&
      a.rackId === b.rackId &&
      a.rebalanceTimeoutMs === b.rebalanceTimeoutMs &&
      a.clientId === b.clientId &&
      a.clientHost === b.clientHost &&
      setsEqual(a.subscribedTopicNames, b.subscribedTopicNames) &&
      a.subscribedTopicRegex === b.subscribedTopicRegex &&
      a.serverAssignorName === b.serverAssignorName &&
      assignmentsEqual(a.assignedPartitions, b.assignedPartitions) &&
      assignmentsEqual(a.partitionsPendingRevocation, b.partitionsPendingRevocation) &&
      classicMetadataEqual(a.classicMemberMetadata, b.classicMemberMetadata))
  );
}
