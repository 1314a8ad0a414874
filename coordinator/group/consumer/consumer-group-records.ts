/**
 * The __consumer_offsets records the KIP-848 assignment and reconciliation steps produce, first as
 * plain values (what the builders return and tests compare), then serialized in Kafka's own format
 * (Kafka's GroupCoordinatorRecordHelpers) so that Kafka's tools read them:
 *   key v6 ConsumerGroupTargetAssignmentMetadataKey -> value v0 ConsumerGroupTargetAssignmentMetadataValue
 *   key v7 ConsumerGroupTargetAssignmentMemberKey   -> value v0 ConsumerGroupTargetAssignmentMemberValue
 *   key v8 ConsumerGroupCurrentMemberAssignmentKey  -> value v0 ConsumerGroupCurrentMemberAssignmentValue
 * The key version is the record type, as for every __consumer_offsets record. Partitions are
 * written in ascending order, topics in the assignment's order. Tombstones (member removal) and
 * loading these records back into a group are the heartbeat handler's step, not this file's yet.
 */
import { Writer } from '../../../protocol/primitives/writer';
import { writeConsumerGroupCurrentMemberAssignmentKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-key';
import { writeConsumerGroupCurrentMemberAssignmentValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-value';
import { writeConsumerGroupTargetAssignmentMemberKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-key';
import { writeConsumerGroupTargetAssignmentMemberValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-value';
import { writeConsumerGroupTargetAssignmentMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-key';
import { writeConsumerGroupTargetAssignmentMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-value';
import type { CoordinatorRecord } from '../coordinator-records';
import { toTopicPartitions, type Assignment } from './assignor';
import type { ConsumerGroupMember } from './consumer-group-member';

export const TARGET_ASSIGNMENT_METADATA_KEY_VERSION = 6;
export const TARGET_ASSIGNMENT_MEMBER_KEY_VERSION = 7;
export const CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION = 8;

export type ConsumerGroupRecord =
  | { readonly type: 'targetAssignmentMember'; readonly groupId: string; readonly memberId: string; readonly partitions: Assignment }
  | { readonly type: 'targetAssignmentEpoch'; readonly groupId: string; readonly assignmentEpoch: number }
  | { readonly type: 'currentAssignment'; readonly groupId: string; readonly member: ConsumerGroupMember };

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
    case 'targetAssignmentMember':
      return {
        key: versioned(TARGET_ASSIGNMENT_MEMBER_KEY_VERSION, (w) =>
          writeConsumerGroupTargetAssignmentMemberKey(w, TARGET_ASSIGNMENT_MEMBER_KEY_VERSION, { groupId: r.groupId, memberId: r.memberId }),
        ),
        value: versioned(0, (w) => writeConsumerGroupTargetAssignmentMemberValue(w, 0, { topicPartitions: toTopicPartitions(r.partitions) })),
      };
    case 'targetAssignmentEpoch':
      return {
        key: versioned(TARGET_ASSIGNMENT_METADATA_KEY_VERSION, (w) =>
          writeConsumerGroupTargetAssignmentMetadataKey(w, TARGET_ASSIGNMENT_METADATA_KEY_VERSION, { groupId: r.groupId }),
        ),
        value: versioned(0, (w) => writeConsumerGroupTargetAssignmentMetadataValue(w, 0, { assignmentEpoch: r.assignmentEpoch })),
      };
    case 'currentAssignment':
      return {
        key: versioned(CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION, (w) =>
          writeConsumerGroupCurrentMemberAssignmentKey(w, CURRENT_MEMBER_ASSIGNMENT_KEY_VERSION, { groupId: r.groupId, memberId: r.member.memberId }),
        ),
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
