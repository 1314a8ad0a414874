/**
 * The target assignment builder through the scenarios of Kafka's TargetAssignmentBuilderTest: the
 * assignor is a recording one that answers a prepared assignment and keeps the spec it was given
 * (Kafka's test mocks the assignor and verifies the spec), then the same builder with the real
 * uniform and range assignors end to end.
 */
import {
  EMPTY_ASSIGNMENT,
  SubscriptionType,
  assignmentOf,
  type Assignment,
  type GroupAssignment,
  type GroupSpec,
  type PartitionAssignor,
  type SubscribedTopicDescriber,
  type TopicMetadata,
} from './assignor';
import { newConsumerGroupMember, type ConsumerGroupMember } from './consumer-group-member';
import { targetAssignmentEpochRecord, targetAssignmentRecord, type ConsumerGroupRecord } from './consumer-group-records';
import { RangeAssignor } from './range-assignor';
import { TargetAssignmentBuilder } from './target-assignment-builder';
import { plain, plainAssignment } from './testing';
import { UniformAssignor } from './uniform-assignor';

const FOO = 'AAAAAAAAAAAAAAAAAAAAAQ';
const BAR = 'AAAAAAAAAAAAAAAAAAAAAg';

/** Answers `prepared`; remembers what it was asked. */
class RecordingAssignor implements PartitionAssignor {
  spec: GroupSpec | null = null;
  describer: SubscribedTopicDescriber | null = null;
  calls = 0;
  constructor(private readonly prepared: ReadonlyMap<string, Assignment>) {}
  name(): string {
    return 'recording';
  }
  assign(spec: GroupSpec, describer: SubscribedTopicDescriber): GroupAssignment {
    this.calls++;
    this.spec = spec;
    this.describer = describer;
    return { members: this.prepared };
  }
}

interface Ctx {
  members: Map<string, ConsumerGroupMember>;
  target: Map<string, Assignment>;
  staticMembers: Map<string, string>;
  metadata: Map<string, TopicMetadata>;
}

function context(): Ctx {
  const metadata = new Map<string, TopicMetadata>([
    ['foo', { id: FOO, name: 'foo', numPartitions: 6 }],
    ['bar', { id: BAR, name: 'bar', numPartitions: 6 }],
  ]);
  return { members: new Map(), target: new Map(), staticMembers: new Map(), metadata };
}

function addMember(c: Ctx, memberId: string, topics: string[], target: Assignment, instanceId: string | null = null): void {
  c.members.set(memberId, newConsumerGroupMember(memberId, { subscribedTopicNames: new Set(topics), instanceId }));
  if (instanceId !== null) c.staticMembers.set(instanceId, memberId);
  c.target.set(memberId, target);
}

function builder(c: Ctx, assignor: PartitionAssignor, epoch = 20): TargetAssignmentBuilder {
  return new TargetAssignmentBuilder('my-group', epoch, assignor)
    .withMembers(c.members)
    .withStaticMembers(c.staticMembers)
    .withSubscriptionMetadata(c.metadata)
    .withSubscriptionType(SubscriptionType.HOMOGENEOUS)
    .withTargetAssignment(c.target);
}

const fb = (foo: number[], bar: number[]): Assignment => assignmentOf([FOO, foo], [BAR, bar]);

/** Records as comparable data. */
function recs(records: readonly ConsumerGroupRecord[]): unknown[] {
  return records.map((r) => (r.type === 'targetAssignmentMember' ? { ...r, partitions: plainAssignment(r.partitions) } : r));
}

/** What the assignor was told about each member. */
function specView(spec: GroupSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const id of spec.memberIds()) {
    const s = spec.memberSubscription(id);
    out[id] = { topics: [...s.subscribedTopicIds].sort(), rack: s.rackId, instance: s.instanceId, assignment: plainAssignment(spec.memberAssignment(id)) };
  }
  return out;
}

test('an empty group: only the epoch record', () => {
  const c = context();
  c.metadata.clear();
  const a = new RecordingAssignor(new Map());
  const result = builder(c, a).build();
  expect(recs(result.records)).toEqual([targetAssignmentEpochRecord('my-group', 20)]);
  expect(result.targetAssignment.size).toBe(0);
  expect(a.calls).toBe(1);
});

test('the member spec: names resolved to topic ids (unknown names left out), rack, instance id, current target', () => {
  const c = context();
  c.members.set('member-id', newConsumerGroupMember('member-id', { subscribedTopicNames: new Set(['foo', 'bar', 'zar']), rackId: 'rackId', instanceId: 'instanceId' }));
  c.target.set('member-id', fb([1, 2, 3], [1, 2, 3]));
  const a = new RecordingAssignor(new Map([['member-id', fb([1, 2, 3], [1, 2, 3])]]));
  builder(c, a).build();
  expect(specView(a.spec!)).toEqual({
    'member-id': { topics: [FOO, BAR].sort(), rack: 'rackId', instance: 'instanceId', assignment: { [FOO]: [1, 2, 3], [BAR]: [1, 2, 3] } },
  });
  expect(a.describer!.numPartitions(FOO)).toBe(6);
  expect(a.describer!.numPartitions('AAAAAAAAAAAAAAAAAAAAAw')).toBe(-1);
});

test('unchanged assignments produce no member record', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2, 3], [1, 2, 3]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([4, 5, 6], [4, 5, 6]));
  const result = builder(c, new RecordingAssignor(new Map([['member-1', fb([1, 2, 3], [1, 2, 3])], ['member-2', fb([4, 5, 6], [4, 5, 6])]]))).build();
  expect(recs(result.records)).toEqual([targetAssignmentEpochRecord('my-group', 20)]);
  expect(plain(result.targetAssignment)).toEqual({ 'member-1': { [FOO]: [1, 2, 3], [BAR]: [1, 2, 3] }, 'member-2': { [FOO]: [4, 5, 6], [BAR]: [4, 5, 6] } });
});

test('swapped assignments: a record per member, then the epoch', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2, 3], [1, 2, 3]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([4, 5, 6], [4, 5, 6]));
  const result = builder(c, new RecordingAssignor(new Map([['member-2', fb([1, 2, 3], [1, 2, 3])], ['member-1', fb([4, 5, 6], [4, 5, 6])]]))).build();
  expect(recs(result.records)).toEqual(
    recs([
      targetAssignmentRecord('my-group', 'member-1', fb([4, 5, 6], [4, 5, 6])),
      targetAssignmentRecord('my-group', 'member-2', fb([1, 2, 3], [1, 2, 3])),
      targetAssignmentEpochRecord('my-group', 20),
    ]),
  );
});

test('a new member is added to the spec and gets a record, as do the members whose target changed', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2, 3], [1, 2, 3]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([4, 5, 6], [4, 5, 6]));
  const a = new RecordingAssignor(new Map([['member-1', fb([1, 2], [1, 2])], ['member-2', fb([3, 4], [3, 4])], ['member-3', fb([5, 6], [5, 6])]]));
  const result = builder(c, a)
    .addOrUpdateMember('member-3', newConsumerGroupMember('member-3', { subscribedTopicNames: new Set(['foo', 'bar', 'zar']) }))
    .build();
  expect(a.spec!.memberIds()).toEqual(['member-1', 'member-2', 'member-3']);
  expect(a.spec!.memberAssignment('member-3')).toBe(EMPTY_ASSIGNMENT);
  expect(recs(result.records)).toEqual(
    recs([
      targetAssignmentRecord('my-group', 'member-1', fb([1, 2], [1, 2])),
      targetAssignmentRecord('my-group', 'member-2', fb([3, 4], [3, 4])),
      targetAssignmentRecord('my-group', 'member-3', fb([5, 6], [5, 6])),
      targetAssignmentEpochRecord('my-group', 20),
    ]),
  );
});

test('an updated member is described with its new subscription, instance id and rack', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2, 3], [1, 2]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([4, 5, 6], [3, 4]));
  addMember(c, 'member-3', ['bar', 'zar'], assignmentOf([BAR, [5, 6]]));
  const a = new RecordingAssignor(new Map([['member-1', fb([1, 2], [1, 2])], ['member-2', fb([3, 4], [3, 4])], ['member-3', fb([5, 6], [5, 6])]]));
  const updated = newConsumerGroupMember('member-3', { subscribedTopicNames: new Set(['foo', 'bar', 'zar']), instanceId: 'instance-id-3', rackId: 'rack-0' });
  const result = builder(c, a).addOrUpdateMember('member-3', updated).build();
  expect(specView(a.spec!)['member-3']).toEqual({ topics: [FOO, BAR].sort(), rack: 'rack-0', instance: 'instance-id-3', assignment: { [BAR]: [5, 6] } });
  expect(result.records.map((r) => (r.type === 'targetAssignmentMember' ? r.memberId : r.type))).toEqual(['member-1', 'member-2', 'member-3', 'targetAssignmentEpoch']);
});

test('a partial update: only the members whose target changed get records', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2], [1, 2]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([3, 4], [3, 4]));
  addMember(c, 'member-3', ['bar', 'zar'], fb([5, 6], [5, 6]));
  const result = builder(c, new RecordingAssignor(new Map([['member-1', fb([1, 2], [1, 2])], ['member-2', fb([3, 4, 5], [3, 4, 5])], ['member-3', fb([6], [6])]]))).build();
  expect(recs(result.records)).toEqual(
    recs([
      targetAssignmentRecord('my-group', 'member-2', fb([3, 4, 5], [3, 4, 5])),
      targetAssignmentRecord('my-group', 'member-3', fb([6], [6])),
      targetAssignmentEpochRecord('my-group', 20),
    ]),
  );
});

test('a removed member leaves the spec and gets no record (its records are deleted with it)', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2], [1, 2]));
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([3, 4], [3, 4]));
  addMember(c, 'member-3', ['foo', 'bar', 'zar'], fb([5, 6], [5, 6]));
  const a = new RecordingAssignor(new Map([['member-1', fb([1, 2, 3], [1, 2, 3])], ['member-2', fb([4, 5, 6], [4, 5, 6])]]));
  const result = builder(c, a).removeMember('member-3').build();
  expect(a.spec!.memberIds()).toEqual(['member-1', 'member-2']);
  // Its partitions count as free for the assignor.
  expect(a.spec!.isPartitionAssigned(FOO, 5)).toBe(false);
  expect(a.spec!.isPartitionAssigned(FOO, 1)).toBe(true);
  expect(recs(result.records)).toEqual(
    recs([
      targetAssignmentRecord('my-group', 'member-1', fb([1, 2, 3], [1, 2, 3])),
      targetAssignmentRecord('my-group', 'member-2', fb([4, 5, 6], [4, 5, 6])),
      targetAssignmentEpochRecord('my-group', 20),
    ]),
  );
});

test('a static member replacing its previous incarnation starts from the previous target', () => {
  const c = context();
  addMember(c, 'member-1', ['foo', 'bar', 'zar'], fb([1, 2], [1, 2]), 'instance-member-1');
  addMember(c, 'member-2', ['foo', 'bar', 'zar'], fb([3, 4], [3, 4]), 'instance-member-2');
  addMember(c, 'member-3', ['foo', 'bar', 'zar'], fb([5, 6], [5, 6]), 'instance-member-3');
  const a = new RecordingAssignor(new Map([['member-1', fb([1, 2], [1, 2])], ['member-2', fb([3, 4], [3, 4])], ['member-3-a', fb([5, 6], [5, 6])]]));
  const result = builder(c, a)
    .removeMember('member-3')
    .addOrUpdateMember('member-3-a', newConsumerGroupMember('member-3-a', { subscribedTopicNames: new Set(['foo', 'bar', 'zar']), instanceId: 'instance-member-3' }))
    .build();
  expect(plainAssignment(a.spec!.memberAssignment('member-3-a'))).toEqual({ [FOO]: [5, 6], [BAR]: [5, 6] });
  expect(a.spec!.memberIds()).toEqual(['member-1', 'member-2', 'member-3-a']);
  // The new member id had no target yet: one record for it, none for the others.
  expect(recs(result.records)).toEqual(recs([targetAssignmentRecord('my-group', 'member-3-a', fb([5, 6], [5, 6])), targetAssignmentEpochRecord('my-group', 20)]));
});

test('without an explicit subscription type it is computed from the subscribed names', () => {
  const c = context();
  addMember(c, 'm1', ['foo'], EMPTY_ASSIGNMENT);
  addMember(c, 'm2', ['foo', 'bar'], EMPTY_ASSIGNMENT);
  const a = new RecordingAssignor(new Map());
  new TargetAssignmentBuilder('g', 1, a).withMembers(c.members).withSubscriptionMetadata(c.metadata).build();
  expect(a.spec!.subscriptionType()).toBe(SubscriptionType.HETEROGENEOUS);
  const b = new RecordingAssignor(new Map());
  new TargetAssignmentBuilder('g', 1, b).withMembers(c.members).withSubscriptionMetadata(c.metadata).removeMember('m2').build();
  expect(b.spec!.subscriptionType()).toBe(SubscriptionType.HOMOGENEOUS);
});

describe('with the real assignors', () => {
  test('uniform: a member joining takes partitions from the others; the members that keep theirs get no record', () => {
    const c = context();
    addMember(c, 'm1', ['foo'], assignmentOf([FOO, [0, 1, 2]]));
    addMember(c, 'm2', ['foo'], assignmentOf([FOO, [3, 4, 5]]));
    const result = builder(c, new UniformAssignor(), 5)
      .addOrUpdateMember('m3', newConsumerGroupMember('m3', { subscribedTopicNames: new Set(['foo']) }))
      .build();
    expect(plain(result.targetAssignment)).toEqual({ m1: { [FOO]: [0, 1] }, m2: { [FOO]: [3, 4] }, m3: { [FOO]: [2, 5] } });
    expect(result.records.map((r) => (r.type === 'targetAssignmentMember' ? r.memberId : r.type))).toEqual(['m1', 'm2', 'm3', 'targetAssignmentEpoch']);

    // Epoch 6, nothing changed: only the epoch record.
    const again = builder({ ...c, target: new Map(result.targetAssignment), members: new Map([...c.members, ['m3', newConsumerGroupMember('m3', { subscribedTopicNames: new Set(['foo']) })]]) }, new UniformAssignor(), 6).build();
    expect(recs(again.records)).toEqual([targetAssignmentEpochRecord('my-group', 6)]);
  });

  test('uniform: a removed member\'s partitions go to the others; a static replacement keeps its predecessor\'s', () => {
    const c = context();
    addMember(c, 'm1', ['foo'], assignmentOf([FOO, [0, 1]]), 'i1');
    addMember(c, 'm2', ['foo'], assignmentOf([FOO, [2, 3]]), 'i2');
    addMember(c, 'm3', ['foo'], assignmentOf([FOO, [4, 5]]));
    const result = builder(c, new UniformAssignor(), 7)
      .removeMember('m3')
      .removeMember('m2')
      .addOrUpdateMember('m2-new', newConsumerGroupMember('m2-new', { subscribedTopicNames: new Set(['foo']), instanceId: 'i2' }))
      .build();
    const t = plain(result.targetAssignment);
    expect(t.m1[FOO]).toEqual(expect.arrayContaining([0, 1]));
    expect(t['m2-new'][FOO]).toEqual(expect.arrayContaining([2, 3]));
    expect([...t.m1[FOO], ...t['m2-new'][FOO]].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(t.m1[FOO].length).toBe(3);
  });

  test('range: co-partitioned ranges for the whole group', () => {
    const c = context();
    addMember(c, 'b', ['foo', 'bar'], EMPTY_ASSIGNMENT);
    addMember(c, 'a', ['foo', 'bar'], EMPTY_ASSIGNMENT);
    const result = builder(c, new RangeAssignor(), 1).build();
    expect(plain(result.targetAssignment)).toEqual({ a: { [FOO]: [0, 1, 2], [BAR]: [0, 1, 2] }, b: { [FOO]: [3, 4, 5], [BAR]: [3, 4, 5] } });
  });
});
