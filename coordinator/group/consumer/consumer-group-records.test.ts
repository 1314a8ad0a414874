/**
 * The KIP-848 assignment records in Kafka's format: key versions 6/7/8 (the record types), value
 * version 0, read back with the generated readers and with the loader's parser (every record type,
 * tombstones included, round-trips).
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
import {
  currentAssignmentRecord,
  groupEpochRecord,
  memberSubscriptionRecord,
  memberTombstones,
  serializeConsumerGroupRecord,
  subscriptionMetadataRecord,
  targetAssignmentEpochRecord,
  targetAssignmentRecord,
  tombstoneRecord,
} from './consumer-group-records';

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
  expect(parseCoordinatorRecord(rec.key, rec.value)).toEqual({ type: 'consumer', record: targetAssignmentRecord('g', 'm1', assignmentOf([FOO, [1, 2, 3]], [BAR, [0]])) });
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

test('every record type and its tombstone round-trips through the loader parser (key versions 3-8)', () => {
  const member = newConsumerGroupMember('m1', {
    instanceId: 'i1',
    rackId: 'r1',
    clientId: 'c',
    clientHost: '/10.0.0.1',
    subscribedTopicNames: new Set(['foo', 'bar']),
    subscribedTopicRegex: 'ba.*',
    rebalanceTimeoutMs: 30000,
    serverAssignorName: 'range',
    memberEpoch: 5,
    previousMemberEpoch: 4,
    state: MemberState.UNRELEASED_PARTITIONS,
    assignedPartitions: assignmentOf([FOO, [0]]),
  });
  const records = [
    groupEpochRecord('g', 9),
    subscriptionMetadataRecord('g', new Map([['foo', { id: FOO, name: 'foo', numPartitions: 3 }]])),
    memberSubscriptionRecord('g', member),
    targetAssignmentEpochRecord('g', 9),
    targetAssignmentRecord('g', 'm1', assignmentOf([FOO, [0, 2]])),
    tombstoneRecord(3, 'g'),
    tombstoneRecord(4, 'g'),
    tombstoneRecord(6, 'g'),
    ...memberTombstones('g', 'm1'),
  ];
  for (const r of records) {
    const bytes = serializeConsumerGroupRecord(r);
    expect(open(bytes.key).version).toBe(r.type === 'tombstone' ? r.keyVersion : { groupEpoch: 3, subscriptionMetadata: 4, memberSubscription: 5, targetAssignmentEpoch: 6, targetAssignmentMember: 7 }[r.type as string]);
    expect(parseCoordinatorRecord(bytes.key, bytes.value)).toEqual({ type: 'consumer', record: r });
  }
  // A current assignment record carries the epochs, state and partitions only.
  const cur = serializeConsumerGroupRecord(currentAssignmentRecord('g', member));
  expect(parseCoordinatorRecord(cur.key, cur.value)).toEqual({
    type: 'consumer',
    record: currentAssignmentRecord(
      'g',
      newConsumerGroupMember('m1', { memberEpoch: 5, previousMemberEpoch: 4, state: MemberState.UNRELEASED_PARTITIONS, assignedPartitions: assignmentOf([FOO, [0]]) }),
    ),
  });
  expect(memberTombstones('g', 'm1').map((r) => (r.type === 'tombstone' ? r.keyVersion : 0))).toEqual([8, 7, 5]);
});

test("a classic member's metadata (session timeout, JoinGroup protocols) rides in tagged field 0 of the member metadata value", () => {
  const member = newConsumerGroupMember('c1', {
    clientId: 'kafkajs',
    clientHost: '/10.0.0.1',
    subscribedTopicNames: new Set(['foo']),
    rebalanceTimeoutMs: 60_000,
    classicMemberMetadata: {
      sessionTimeoutMs: 30_000,
      supportedProtocols: [
        { name: 'RoundRobinAssigner', metadata: Buffer.from([0, 0, 0, 0, 0, 1, 0, 3, 102, 111, 111, 0, 0, 0, 0]) },
        { name: 'range', metadata: Buffer.from([0, 1]) },
      ],
    },
  });
  const rec = serializeConsumerGroupRecord(memberSubscriptionRecord('g', member));
  const parsed = parseCoordinatorRecord(rec.key, rec.value);
  expect(parsed).toEqual({ type: 'consumer', record: memberSubscriptionRecord('g', member) });
  // A member on the consumer protocol writes no tagged field: its value is shorter by exactly it.
  const plain = serializeConsumerGroupRecord(memberSubscriptionRecord('g', { ...member, classicMemberMetadata: null }));
  expect(parseCoordinatorRecord(plain.key, plain.value)).toMatchObject({ record: { subscription: { classicMemberMetadata: null } } });
  expect(plain.value!.length).toBeLessThan(rec.value!.length);
});
