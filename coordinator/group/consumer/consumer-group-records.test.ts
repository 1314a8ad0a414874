/**
 * The KIP-848 assignment records in Kafka's format: key versions 6/7/8 (the record types), value
 * version 0, read back with the generated readers; the classic loader recognises them as KIP-848
 * records (and skips them for now).
 */
import { Reader } from '../../../protocol/primitives/reader';
import { readConsumerGroupCurrentMemberAssignmentKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-key';
import { readConsumerGroupCurrentMemberAssignmentValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-current-member-assignment-value';
import { readConsumerGroupTargetAssignmentMemberKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-key';
import { readConsumerGroupTargetAssignmentMemberValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-member-value';
import { readConsumerGroupTargetAssignmentMetadataKey } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-key';
import { readConsumerGroupTargetAssignmentMetadataValue } from '../../../protocol/generated/records/group-coordinator/consumer-group-target-assignment-metadata-value';
import { parseCoordinatorRecord } from '../coordinator-records';
import { assignmentOf } from './assignor';
import { MemberState, newConsumerGroupMember } from './consumer-group-member';
import { currentAssignmentRecord, serializeConsumerGroupRecord, targetAssignmentEpochRecord, targetAssignmentRecord } from './consumer-group-records';

const FOO = 'AAAAAAAAAAAAAAAAAAAAAQ';
const BAR = 'AAAAAAAAAAAAAAAAAAAAAg';

function open(buf: Buffer): { version: number; r: Reader } {
  const r = new Reader(buf);
  return { version: r.int16(), r };
}

test('target assignment member record: key v7, value v0, partitions ascending', () => {
  const rec = serializeConsumerGroupRecord(targetAssignmentRecord('g', 'm1', assignmentOf([FOO, [3, 1, 2]], [BAR, [0]])));
  const k = open(rec.key);
  expect(k.version).toBe(7);
  expect(readConsumerGroupTargetAssignmentMemberKey(k.r, 7)).toEqual({ groupId: 'g', memberId: 'm1' });
  const v = open(rec.value!);
  expect(v.version).toBe(0);
  expect(readConsumerGroupTargetAssignmentMemberValue(v.r, 0)).toEqual({
    topicPartitions: [
      { topicId: FOO, partitions: [1, 2, 3] },
      { topicId: BAR, partitions: [0] },
    ],
  });
  expect(parseCoordinatorRecord(rec.key, rec.value)).toEqual({ type: 'unsupported', keyVersion: 7 });
});

test('target assignment epoch record: key v6, value v0', () => {
  const rec = serializeConsumerGroupRecord(targetAssignmentEpochRecord('g', 42));
  const k = open(rec.key);
  expect(k.version).toBe(6);
  expect(readConsumerGroupTargetAssignmentMetadataKey(k.r, 6)).toEqual({ groupId: 'g' });
  const v = open(rec.value!);
  expect(v.version).toBe(0);
  expect(readConsumerGroupTargetAssignmentMetadataValue(v.r, 0)).toEqual({ assignmentEpoch: 42 });
});

test('current member assignment record: key v8, value v0 with the epochs, the state byte and both partition sets', () => {
  const member = newConsumerGroupMember('m1', {
    memberEpoch: 11,
    previousMemberEpoch: 10,
    state: MemberState.UNREVOKED_PARTITIONS,
    assignedPartitions: assignmentOf([FOO, [2, 3]]),
    partitionsPendingRevocation: assignmentOf([FOO, [1]], [BAR, [4]]),
  });
  const rec = serializeConsumerGroupRecord(currentAssignmentRecord('g', member));
  const k = open(rec.key);
  expect(k.version).toBe(8);
  expect(readConsumerGroupCurrentMemberAssignmentKey(k.r, 8)).toEqual({ groupId: 'g', memberId: 'm1' });
  const v = open(rec.value!);
  expect(v.version).toBe(0);
  expect(readConsumerGroupCurrentMemberAssignmentValue(v.r, 0)).toEqual({
    memberEpoch: 11,
    previousMemberEpoch: 10,
    state: 1,
    assignedPartitions: [{ topicId: FOO, partitions: [2, 3] }],
    partitionsPendingRevocation: [
      { topicId: FOO, partitions: [1] },
      { topicId: BAR, partitions: [4] },
    ],
  });
});
