/**
 * The __consumer_offsets records of a KIP-848 consumer group, first as plain values (what the
 * builders and the heartbeat return, what the group replays, what tests compare), then serialized
 * in Kafka's own format (Kafka's GroupCoordinatorRecordHelpers) so that Kafka's tools read them,
 * and parsed back when the coordinator loads a partition:
 *   key v3 ConsumerGroupMetadataKey                 -> value v0 ConsumerGroupMetadataValue (group epoch)
 *   key v4 ConsumerGroupPartitionMetadataKey        -> value v0 ConsumerGroupPartitionMetadataValue (subscription metadata)
 *   key v5 ConsumerGroupMemberMetadataKey           -> value v0 ConsumerGroupMemberMetadataValue (member subscription)
 *   key v6 ConsumerGroupTargetAssignmentMetadataKey -> value v0 ConsumerGroupTargetAssignmentMetadataValue
 *   key v7 ConsumerGroupTargetAssignmentMemberKey   -> value v0 ConsumerGroupTargetAssignmentMemberValue
 *   key v8 ConsumerGroupCurrentMemberAssignmentKey  -> value v0 ConsumerGroupCurrentMemberAssignmentValue
 * The key version is the record type, as for every __consumer_offsets record; a null value is a
 * tombstone (a member leaving: v8, v7, v5 in that order; a deleted group: every record type). A
 * member that speaks the classic protocol has its ClassicMemberMetadata (tagged field 0 of the
 * member metadata value: session timeout, JoinGroup protocols).
 * Partitions are written in ascending order, topics in the assignment's order. Invariant: for every
 * record r, parseConsumerGroupRecord(serializeConsumerGroupRecord(r)) describes the same change
 * (a member subscription or current assignment record carries only its own fields of the member).
 */
import { Reader } from '../../../protocol/primitives/reader';
import { readConsumerGroupMetadataKey, writeConsumerGroupMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-metadata-key';
import { readConsumerGroupMetadataValue, writeConsumerGroupMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-metadata-value';
import { readConsumerGroupPartitionMetadataKey, writeConsumerGroupPartitionMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-partition-metadata-key';
import { readConsumerGroupPartitionMetadataValue, writeConsumerGroupPartitionMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-partition-metadata-value';
import { readConsumerGroupMemberMetadataKey, writeConsumerGroupMemberMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-member-metadata-key';
import { readConsumerGroupMemberMetadataValue, writeConsumerGroupMemberMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-member-metadata-value';
import { readConsumerGroupCurrentMemberAssignmentKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-key';
import { readConsumerGroupCurrentMemberAssignmentValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-value';
import { readConsumerGroupTargetAssignmentMemberKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-key';
import { readConsumerGroupTargetAssignmentMemberValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-value';
import { readConsumerGroupTargetAssignmentMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-key';
import { readConsumerGroupTargetAssignmentMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-value';
import { Writer } from '../../../protocol/primitives/writer';
import { writeConsumerGroupCurrentMemberAssignmentKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-key';
import { writeConsumerGroupCurrentMemberAssignmentValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-value';
import { writeConsumerGroupTargetAssignmentMemberKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-key';
import { writeConsumerGroupTargetAssignmentMemberValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-value';
import { writeConsumerGroupTargetAssignmentMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-key';
import { writeConsumerGroupTargetAssignmentMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-value';
import type { CoordinatorRecord } from '../coordinator-records';
import { fromTopicPartitions, toTopicPartitions, type Assignment, type TopicMetadata } from './assignor';
import { memberStateFromValue, newConsumerGroupMember, type ConsumerGroupMember } from './consumer-group-member';

export const GROUP_METADATA_KEY_VERSION = 3;
export const PARTITION_METADATA_KEY_VERSION = 4;
export const MEMBER_METADATA_KEY_VERSION = 5;
export const TARGET_ASSIGNMENT_METADATA_KEY_VERSION = 6;
export const TARGET_ASSIGNMENT_MEMBER_KEY_VERSION = 7;
export const CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION = 8;

/** The fields of a member that its ConsumerGroupMemberMetadata record carries. */
export type MemberSubscription = Pick<
  ConsumerGroupMember,
  | 'instanceId'
  | 'rackId'
  | 'clientId'
  | 'clientHost'
  | 'subscribedTopicNames'
  | 'subscribedTopicRegex'
  | 'rebalanceTimeoutMs'
  | 'serverAssignorName'
  | 'classicMemberMetadata'
>;

/** Record types by key version (the tombstone of each names its key only). */
export type ConsumerGroupRecordKeyVersion = 3 | 4 | 5 | 6 | 7 | 8;

export type ConsumerGroupRecord =
  | { readonly type: 'groupEpoch'; readonly groupId: string; readonly epoch: number }
  | { readonly type: 'subscriptionMetadata'; readonly groupId: string; readonly topics: ReadonlyMap<string, TopicMetadata> }
  | { readonly type: 'memberSubscription'; readonly groupId: string; readonly memberId: string; readonly subscription: MemberSubscription }
  | { readonly type: 'tombstone'; readonly keyVersion: ConsumerGroupRecordKeyVersion; readonly groupId: string; readonly memberId: string | null }
  | { readonly type: 'targetAssignmentMember'; readonly groupId: string; readonly memberId: string; readonly partitions: Assignment }
  | { readonly type: 'targetAssignmentEpoch'; readonly groupId: string; readonly assignmentEpoch: number }
  | { readonly type: 'currentAssignment'; readonly groupId: string; readonly member: ConsumerGroupMember };

export function groupEpochRecord(groupId: string, epoch: number): ConsumerGroupRecord {
  return { type: 'groupEpoch', groupId, epoch };
}

/** Topic name -> metadata of the topics the group subscribes to. */
export function subscriptionMetadataRecord(groupId: string, topics: ReadonlyMap<string, TopicMetadata>): ConsumerGroupRecord {
  return { type: 'subscriptionMetadata', groupId, topics };
}

export function memberSubscriptionRecord(groupId: string, member: ConsumerGroupMember): ConsumerGroupRecord {
  const { instanceId, rackId, clientId, clientHost, subscribedTopicNames, subscribedTopicRegex, rebalanceTimeoutMs, serverAssignorName, classicMemberMetadata } = member;
  return {
    type: 'memberSubscription',
    groupId,
    memberId: member.memberId,
    subscription: {
      instanceId,
      rackId,
      clientId,
      clientHost,
      subscribedTopicNames,
      subscribedTopicRegex,
      rebalanceTimeoutMs,
      serverAssignorName,
      classicMemberMetadata,
    },
  };
}

export function tombstoneRecord(keyVersion: ConsumerGroupRecordKeyVersion, groupId: string, memberId: string | null = null): ConsumerGroupRecord {
  return { type: 'tombstone', keyVersion, groupId, memberId };
}

/** Kafka's removeMember: the member's current assignment, target assignment and subscription, in that order. */
export function memberTombstones(groupId: string, memberId: string): ConsumerGroupRecord[] {
  return [
    tombstoneRecord(CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION, groupId, memberId),
    tombstoneRecord(TARGET_ASSIGNMENT_MEMBER_KEY_VERSION, groupId, memberId),
    tombstoneRecord(MEMBER_METADATA_KEY_VERSION, groupId, memberId),
  ];
}

export function targetAssignmentRecord(groupId: string, memberId: string, partitions: Assignment): ConsumerGroupRecord {
  return { type: 'targetAssignmentMember', groupId, memberId, partitions };
}

export function targetAssignmentEpochRecord(groupId: string, assignmentEpoch: number): ConsumerGroupRecord {
  return { type: 'targetAssignmentEpoch', groupId, assignmentEpoch };
}

export function currentAssignmentRecord(groupId: string, member: ConsumerGroupMember): ConsumerGroupRecord {
  return { type: 'currentAssignment', groupId, member };
}

function versioned(version: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  w.int16(version);
  write(w);
  return w.toBuffer();
}

/** The record's key and value bytes as they go into __consumer_offsets. */
export function serializeConsumerGroupRecord(r: ConsumerGroupRecord): CoordinatorRecord {
  switch (r.type) {
    case 'groupEpoch':
      return { key: recordKey(GROUP_METADATA_KEY_VERSION, r.groupId, null), value: versioned(0, (w) => writeConsumerGroupMetadataValue(w, 0, { epoch: r.epoch })) };
    case 'subscriptionMetadata':
      return {
        key: recordKey(PARTITION_METADATA_KEY_VERSION, r.groupId, null),
        value: versioned(0, (w) =>
          writeConsumerGroupPartitionMetadataValue(w, 0, {
            topics: [...r.topics.values()].map((t) => ({
              topicId: t.id,
              topicName: t.name,
              numPartitions: t.numPartitions,
              partitionMetadata: [...(t.partitionRacks ?? new Map<number, ReadonlySet<string>>())].map(([partition, racks]) => ({ partition, racks: [...racks] })),
            })),
          }),
        ),
      };
    case 'memberSubscription': {
      const m = r.subscription;
      return {
        key: recordKey(MEMBER_METADATA_KEY_VERSION, r.groupId, r.memberId),
        value: versioned(0, (w) =>
          writeConsumerGroupMemberMetadataValue(w, 0, {
            instanceId: m.instanceId,
            rackId: m.rackId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            subscribedTopicNames: [...m.subscribedTopicNames].sort(),
            subscribedTopicRegex: m.subscribedTopicRegex,
            rebalanceTimeoutMs: m.rebalanceTimeoutMs,
            serverAssignor: m.serverAssignorName,
            classicMemberMetadata:
              m.classicMemberMetadata === null
                ? null
                : {
                    sessionTimeoutMs: m.classicMemberMetadata.sessionTimeoutMs,
                    supportedProtocols: m.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
                  },
          }),
        ),
      };
    }
    case 'tombstone':
      return { key: recordKey(r.keyVersion, r.groupId, r.memberId), value: null };
    case 'targetAssignmentMember':
      return {
        key: recordKey(TARGET_ASSIGNMENT_MEMBER_KEY_VERSION, r.groupId, r.memberId),
        value: versioned(0, (w) => writeConsumerGroupTargetAssignmentMemberValue(w, 0, { topicPartitions: toTopicPartitions(r.partitions) })),
      };
    case 'targetAssignmentEpoch':
      return {
        key: recordKey(TARGET_ASSIGNMENT_METADATA_KEY_VERSION, r.groupId, null),
        value: versioned(0, (w) => writeConsumerGroupTargetAssignmentMetadataValue(w, 0, { assignmentEpoch: r.assignmentEpoch })),
      };
    case 'currentAssignment':
      return {
        key: recordKey(CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION, r.groupId, r.member.memberId),
        value: versioned(0, (w) =>
          writeConsumerGroupCurrentMemberAssignmentValue(w, 0, {
            memberEpoch: r.member.memberEpoch,
            previousMemberEpoch: r.member.previousMemberEpoch,
            state: r.member.state,
            assignedPartitions: toTopicPartitions(r.member.assignedPartitions),
            partitionsPendingRevocation: toTopicPartitions(r.member.partitionsPendingRevocation),
          }),
        ),
      };
  }
}

/** The key of a record type: the group id, plus the member id for key versions 5, 7 and 8. */
function recordKey(keyVersion: ConsumerGroupRecordKeyVersion, groupId: string, memberId: string | null): Buffer {
  return versioned(keyVersion, (w) => {
    switch (keyVersion) {
      case GROUP_METADATA_KEY_VERSION:
        return writeConsumerGroupMetadataKey(w, keyVersion, { groupId });
      case PARTITION_METADATA_KEY_VERSION:
        return writeConsumerGroupPartitionMetadataKey(w, keyVersion, { groupId });
      case MEMBER_METADATA_KEY_VERSION:
        return writeConsumerGroupMemberMetadataKey(w, keyVersion, { groupId, memberId: memberId ?? '' });
      case TARGET_ASSIGNMENT_METADATA_KEY_VERSION:
        return writeConsumerGroupTargetAssignmentMetadataKey(w, keyVersion, { groupId });
      case TARGET_ASSIGNMENT_MEMBER_KEY_VERSION:
        return writeConsumerGroupTargetAssignmentMemberKey(w, keyVersion, { groupId, memberId: memberId ?? '' });
      case CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION:
        return writeConsumerGroupCurrentMemberAssignmentKey(w, keyVersion, { groupId, memberId: memberId ?? '' });
    }
  });
}

export function isConsumerGroupKeyVersion(v: number): v is ConsumerGroupRecordKeyVersion {
  return v >= GROUP_METADATA_KEY_VERSION && v <= CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION;
}

/**
 * Parses a consumer group record whose key (after the int16 version, already read from `kr`) has
 * version `keyVersion` (3-8). Throws on bytes that do not decode.
 */
export function parseConsumerGroupRecord(keyVersion: ConsumerGroupRecordKeyVersion, kr: Reader, value: Buffer | null): ConsumerGroupRecord {
  let groupId: string;
  let memberId: string | null = null;
  switch (keyVersion) {
    case GROUP_METADATA_KEY_VERSION:
      groupId = readConsumerGroupMetadataKey(kr, keyVersion).groupId;
      break;
    case PARTITION_METADATA_KEY_VERSION:
      groupId = readConsumerGroupPartitionMetadataKey(kr, keyVersion).groupId;
      break;
    case MEMBER_METADATA_KEY_VERSION:
      ({ groupId, memberId } = readConsumerGroupMemberMetadataKey(kr, keyVersion));
      break;
    case TARGET_ASSIGNMENT_METADATA_KEY_VERSION:
      groupId = readConsumerGroupTargetAssignmentMetadataKey(kr, keyVersion).groupId;
      break;
    case TARGET_ASSIGNMENT_MEMBER_KEY_VERSION:
      ({ groupId, memberId } = readConsumerGroupTargetAssignmentMemberKey(kr, keyVersion));
      break;
    case CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION:
      ({ groupId, memberId } = readConsumerGroupCurrentMemberAssignmentKey(kr, keyVersion));
      break;
  }
  if (value === null) return tombstoneRecord(keyVersion, groupId, memberId);
  const vr = new Reader(value);
  const vv = vr.int16();
  switch (keyVersion) {
    case GROUP_METADATA_KEY_VERSION:
      return groupEpochRecord(groupId, readConsumerGroupMetadataValue(vr, vv).epoch);
    case PARTITION_METADATA_KEY_VERSION: {
      const topics = new Map<string, TopicMetadata>();
      for (const t of readConsumerGroupPartitionMetadataValue(vr, vv).topics) {
        const racks = new Map<number, ReadonlySet<string>>(t.partitionMetadata.map((p) => [p.partition, new Set(p.racks)]));
        topics.set(t.topicName, { id: t.topicId, name: t.topicName, numPartitions: t.numPartitions, ...(racks.size > 0 ? { partitionRacks: racks } : {}) });
      }
      return subscriptionMetadataRecord(groupId, topics);
    }
    case MEMBER_METADATA_KEY_VERSION: {
      const v = readConsumerGroupMemberMetadataValue(vr, vv);
      return {
        type: 'memberSubscription',
        groupId,
        memberId: memberId!,
        subscription: {
          instanceId: v.instanceId,
          rackId: v.rackId,
          clientId: v.clientId,
          clientHost: v.clientHost,
          subscribedTopicNames: new Set(v.subscribedTopicNames),
          subscribedTopicRegex: v.subscribedTopicRegex ?? '',
          rebalanceTimeoutMs: v.rebalanceTimeoutMs,
          serverAssignorName: v.serverAssignor,
          classicMemberMetadata:
            v.classicMemberMetadata === null
              ? null
              : {
                  sessionTimeoutMs: v.classicMemberMetadata.sessionTimeoutMs,
                  supportedProtocols: v.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
                },
        },
      };
    }
    case TARGET_ASSIGNMENT_METADATA_KEY_VERSION:
      return targetAssignmentEpochRecord(groupId, readConsumerGroupTargetAssignmentMetadataValue(vr, vv).assignmentEpoch);
    case TARGET_ASSIGNMENT_MEMBER_KEY_VERSION:
      return targetAssignmentRecord(groupId, memberId!, fromTopicPartitions(readConsumerGroupTargetAssignmentMemberValue(vr, vv).topicPartitions));
    case CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION: {
      const v = readConsumerGroupCurrentMemberAssignmentValue(vr, vv);
      return currentAssignmentRecord(
        groupId,
        newConsumerGroupMember(memberId!, {
          memberEpoch: v.memberEpoch,
          previousMemberEpoch: v.previousMemberEpoch,
          state: memberStateFromValue(v.state),
          assignedPartitions: fromTopicPartitions(v.assignedPartitions),
          partitionsPendingRevocation: fromTopicPartitions(v.partitionsPendingRevocation),
        }),
      );
    }
  }
}
