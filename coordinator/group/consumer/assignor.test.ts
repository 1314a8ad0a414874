/**
 * The shared pieces of the assignor contract: Java's Uuid order on topic ids, assignment equality
 * and conversions, the subscription type rule, and GroupSpecImpl's answers.
 */
import {
  EMPTY_ASSIGNMENT,
  GroupSpecImpl,
  SubscribedTopicDescriberImpl,
  SubscriptionType,
  assignmentOf,
  assignmentsEqual,
  compareTopicIds,
  fromTopicPartitions,
  subscriptionTypeOf,
  toTopicPartitions,
} from './assignor';

test('topic ids compare as Java Uuids: signed most significant bits, then signed least significant bits', () => {
  const one = Buffer.from('00000000000000000000000000000001', 'hex').toString('base64url');
  const two = Buffer.from('00000000000000000000000000000002', 'hex').toString('base64url');
  const negLow = Buffer.from('0000000000000000ffffffffffffffff', 'hex').toString('base64url');
  const negHigh = Buffer.from('80000000000000000000000000000000', 'hex').toString('base64url');
  const high = Buffer.from('00000000000000010000000000000000', 'hex').toString('base64url');
  expect(compareTopicIds(one, two)).toBeLessThan(0);
  expect(compareTopicIds(two, one)).toBeGreaterThan(0);
  expect(compareTopicIds(one, one)).toBe(0);
  // -1 as the least significant long sorts below 1.
  expect(compareTopicIds(negLow, one)).toBeLessThan(0);
  // A negative most significant long sorts below everything with a non-negative one.
  expect(compareTopicIds(negHigh, one)).toBeLessThan(0);
  expect(compareTopicIds(high, negLow)).toBeGreaterThan(0);
  expect([high, one, negHigh, two, negLow].sort(compareTopicIds)).toEqual([negHigh, negLow, one, two, high]);
});

test('assignment equality ignores order and empty topics', () => {
  const a = assignmentOf(['x', [1, 2]], ['y', [3]]);
  const b = new Map([['y', new Set([3])], ['x', new Set([2, 1])], ['z', new Set<number>()]]);
  expect(assignmentsEqual(a, b)).toBe(true);
  expect(assignmentsEqual(a, assignmentOf(['x', [1, 2]]))).toBe(false);
  expect(assignmentsEqual(a, assignmentOf(['x', [1, 2]], ['y', [4]]))).toBe(false);
  expect(assignmentsEqual(EMPTY_ASSIGNMENT, new Map([['z', new Set<number>()]]))).toBe(true);
});

test('topic partition lists: sorted partitions, empty topics left out, and back', () => {
  const a = new Map([['x', new Set([5, 1, 3])], ['y', new Set<number>()]]);
  expect(toTopicPartitions(a)).toEqual([{ topicId: 'x', partitions: [1, 3, 5] }]);
  expect(assignmentsEqual(fromTopicPartitions(toTopicPartitions(a)), a)).toBe(true);
});

test('subscription type: homogeneous when every subscribed topic has every member', () => {
  expect(subscriptionTypeOf(new Map(), 3)).toBe(SubscriptionType.HOMOGENEOUS);
  expect(subscriptionTypeOf(new Map([['a', 2], ['b', 2]]), 2)).toBe(SubscriptionType.HOMOGENEOUS);
  expect(subscriptionTypeOf(new Map([['a', 2], ['b', 1]]), 2)).toBe(SubscriptionType.HETEROGENEOUS);
});

test('GroupSpecImpl: member order, assigned partitions from the members, unknown members', () => {
  const spec = new GroupSpecImpl(
    new Map([
      ['b', { rackId: null, instanceId: null, subscribedTopicIds: new Set(['x']), assignment: assignmentOf(['x', [0]]) }],
      ['a', { rackId: 'r1', instanceId: 'i', subscribedTopicIds: new Set(['x']), assignment: EMPTY_ASSIGNMENT }],
    ]),
    SubscriptionType.HOMOGENEOUS,
  );
  expect(spec.memberIds()).toEqual(['b', 'a']);
  expect(spec.isPartitionAssigned('x', 0)).toBe(true);
  expect(spec.isPartitionAssigned('x', 1)).toBe(false);
  expect(spec.memberAssignment('nobody')).toBe(EMPTY_ASSIGNMENT);
  expect(() => spec.memberSubscription('nobody')).toThrow(/not found/);
  const describer = new SubscribedTopicDescriberImpl(new Map([['x', { id: 'x', name: 'foo', numPartitions: 2, partitionRacks: new Map([[0, new Set(['r1'])]]) }]]));
  expect(describer.numPartitions('x')).toBe(2);
  expect(describer.numPartitions('y')).toBe(-1);
  expect([...describer.racksForPartition('x', 0)]).toEqual(['r1']);
  expect(describer.racksForPartition('x', 1).size).toBe(0);
});
