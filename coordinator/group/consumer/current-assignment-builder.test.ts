/**
 * The KIP-848 reconciliation state machine through the transitions Kafka's
 * CurrentAssignmentBuilderTest covers (same scenarios, written for krill), plus the member epoch
 * check of every heartbeat (FENCED_MEMBER_EPOCH) and the member model's helpers.
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors';
import { assignmentOf, type Assignment } from './assignor';
import { MemberState, isReconciledTo, memberStateFromValue, membersEqual, newConsumerGroupMember, type ConsumerGroupMember } from './consumer-group-member';
import { CurrentAssignmentBuilder, validateMemberEpoch, type OwnedTopicPartitions } from './current-assignment-builder';
import { plainAssignment } from './testing';

const T1 = 'AAAAAAAAAAAAAAAAAAAAAQ';
const T2 = 'AAAAAAAAAAAAAAAAAAAAAg';

function member(state: MemberState, epoch: number, previous: number, assigned: Assignment, pending: Assignment = new Map()): ConsumerGroupMember {
  return newConsumerGroupMember('member', { state, memberEpoch: epoch, previousMemberEpoch: previous, assignedPartitions: assigned, partitionsPendingRevocation: pending });
}

/** The reconciliation-relevant view of a member, for toEqual. */
function view(m: ConsumerGroupMember): object {
  return {
    state: m.state,
    memberEpoch: m.memberEpoch,
    previousMemberEpoch: m.previousMemberEpoch,
    assigned: plainAssignment(m.assignedPartitions),
    pending: plainAssignment(m.partitionsPendingRevocation),
  };
}

function owned(...entries: [string, number[]][]): OwnedTopicPartitions[] {
  return entries.map(([topicId, partitions]) => ({ topicId, partitions }));
}

const ab = (a: number[], b: number[]): Assignment => assignmentOf([T1, a], [T2, b]);

describe('from STABLE', () => {
  test('to STABLE at the new epoch when the target is unchanged', () => {
    const m = member(MemberState.STABLE, 10, 10, ab([1, 2, 3], [4, 5, 6]));
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([1, 2, 3], [4, 5, 6])).withCurrentPartitionEpoch(() => 10).build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 11, previousMemberEpoch: 10, assigned: { [T1]: [1, 2, 3], [T2]: [4, 5, 6] }, pending: {} });
  });

  test('to STABLE with the new partitions when they are free', () => {
    const m = member(MemberState.STABLE, 10, 10, ab([1, 2, 3], [4, 5, 6]));
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([1, 2, 3, 4], [4, 5, 6, 7])).withCurrentPartitionEpoch(() => -1).build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 11, previousMemberEpoch: 10, assigned: { [T1]: [1, 2, 3, 4], [T2]: [4, 5, 6, 7] }, pending: {} });
  });

  test('to UNREVOKED_PARTITIONS at the same epoch when partitions must go first', () => {
    const m = member(MemberState.STABLE, 10, 10, ab([1, 2, 3], [4, 5, 6]));
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([2, 3, 4], [5, 6, 7])).withCurrentPartitionEpoch(() => -1).build();
    // The new partitions (T1-4, T2-7) are not given before the revocation is acknowledged.
    expect(view(next)).toEqual({
      state: MemberState.UNREVOKED_PARTITIONS,
      memberEpoch: 10,
      previousMemberEpoch: 10,
      assigned: { [T1]: [2, 3], [T2]: [5, 6] },
      pending: { [T1]: [1], [T2]: [4] },
    });
  });

  test('to UNRELEASED_PARTITIONS at the new epoch when the new partitions are still owned by others', () => {
    const m = member(MemberState.STABLE, 10, 10, ab([1, 2, 3], [4, 5, 6]));
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([1, 2, 3, 4], [4, 5, 6, 7])).withCurrentPartitionEpoch(() => 10).build();
    expect(view(next)).toEqual({ state: MemberState.UNRELEASED_PARTITIONS, memberEpoch: 11, previousMemberEpoch: 10, assigned: { [T1]: [1, 2, 3], [T2]: [4, 5, 6] }, pending: {} });
  });

  test('to UNRELEASED_PARTITIONS at once when the member already reports the revoked partition gone', () => {
    const m = member(MemberState.STABLE, 10, 10, ab([1, 2, 3], [4, 5, 6]));
    const next = new CurrentAssignmentBuilder(m)
      .withTargetAssignment(11, ab([1, 2, 3], [4, 5, 7]))
      .withCurrentPartitionEpoch((topicId) => (topicId === T2 ? 10 : -1))
      .withOwnedTopicPartitions([])
      .build();
    expect(view(next)).toEqual({ state: MemberState.UNRELEASED_PARTITIONS, memberEpoch: 11, previousMemberEpoch: 10, assigned: { [T1]: [1, 2, 3], [T2]: [4, 5] }, pending: {} });
  });

  test('a member reconciled to the target epoch is returned as is', () => {
    const m = member(MemberState.STABLE, 11, 10, ab([1], [2]));
    expect(new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([1, 2], [2])).build()).toBe(m);
    expect(isReconciledTo(m, 11)).toBe(true);
    expect(isReconciledTo(m, 12)).toBe(false);
  });
});

describe('from UNREVOKED_PARTITIONS', () => {
  const m = member(MemberState.UNREVOKED_PARTITIONS, 10, 10, ab([2, 3], [5, 6]), ab([1], [4]));

  test('to STABLE at epoch + 1 once the revoked partitions are no longer owned', () => {
    const next = new CurrentAssignmentBuilder(m)
      .withTargetAssignment(11, ab([2, 3], [5, 6]))
      .withCurrentPartitionEpoch(() => -1)
      .withOwnedTopicPartitions(owned([T1, [2, 3]], [T2, [5, 6]]))
      .build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 11, previousMemberEpoch: 10, assigned: { [T1]: [2, 3], [T2]: [5, 6] }, pending: {} });
  });

  test('stays while the member does not report, or still reports, a partition pending revocation', () => {
    const b = new CurrentAssignmentBuilder(m).withTargetAssignment(12, ab([3], [6])).withCurrentPartitionEpoch(() => -1);
    expect(b.withOwnedTopicPartitions(null).build()).toBe(m);
    expect(b.withOwnedTopicPartitions(owned([T1, [1, 2, 3]], [T2, [5, 6]])).build()).toBe(m);
    expect(b.withOwnedTopicPartitions(owned([T1, [2, 3]], [T2, [4, 5, 6]])).build()).toBe(m);
  });

  test('to UNREVOKED_PARTITIONS again at epoch + 1 when the newer target revokes more', () => {
    const next = new CurrentAssignmentBuilder(m)
      .withTargetAssignment(12, ab([3], [6]))
      .withCurrentPartitionEpoch(() => -1)
      .withOwnedTopicPartitions(owned([T1, [2, 3]], [T2, [5, 6]]))
      .build();
    expect(view(next)).toEqual({
      state: MemberState.UNREVOKED_PARTITIONS,
      memberEpoch: 11,
      previousMemberEpoch: 10,
      assigned: { [T1]: [3], [T2]: [6] },
      pending: { [T1]: [2], [T2]: [5] },
    });
  });

  test('to UNRELEASED_PARTITIONS when the incoming partitions are still owned by others', () => {
    const m2 = member(MemberState.UNREVOKED_PARTITIONS, 11, 10, ab([2, 3], [5, 6]));
    const next = new CurrentAssignmentBuilder(m2)
      .withTargetAssignment(11, ab([2, 3, 4], [5, 6, 7]))
      .withCurrentPartitionEpoch(() => 10)
      .withOwnedTopicPartitions(owned([T1, [2, 3]], [T2, [5, 6]]))
      .build();
    expect(view(next)).toEqual({ state: MemberState.UNRELEASED_PARTITIONS, memberEpoch: 11, previousMemberEpoch: 11, assigned: { [T1]: [2, 3], [T2]: [5, 6] }, pending: {} });
  });
});

describe('from UNRELEASED_PARTITIONS', () => {
  const m = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, ab([2, 3], [5, 6]));

  test('to STABLE at a newer epoch whose target it already has', () => {
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(12, ab([2, 3], [5, 6])).withCurrentPartitionEpoch(() => 10).build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 12, previousMemberEpoch: 11, assigned: { [T1]: [2, 3], [T2]: [5, 6] }, pending: {} });
  });

  test('to STABLE with the partitions once their previous owners released them', () => {
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([2, 3, 4], [5, 6, 7])).withCurrentPartitionEpoch(() => -1).build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 11, previousMemberEpoch: 11, assigned: { [T1]: [2, 3, 4], [T2]: [5, 6, 7] }, pending: {} });
  });

  test('stays, the same object, while the partitions are still owned', () => {
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(11, ab([2, 3, 4], [5, 6, 7])).withCurrentPartitionEpoch(() => 10).build();
    expect(next).toBe(m);
  });

  test('to UNREVOKED_PARTITIONS when a newer target takes partitions away', () => {
    const next = new CurrentAssignmentBuilder(m).withTargetAssignment(12, ab([3], [6])).withCurrentPartitionEpoch(() => 10).build();
    expect(view(next)).toEqual({
      state: MemberState.UNREVOKED_PARTITIONS,
      memberEpoch: 11,
      previousMemberEpoch: 11,
      assigned: { [T1]: [3], [T2]: [6] },
      pending: { [T1]: [2], [T2]: [5] },
    });
  });
});

describe('from UNKNOWN', () => {
  const m = member(MemberState.UNKNOWN, 11, 11, ab([3], [6]), ab([2], [5]));

  test('FENCED_MEMBER_EPOCH first, then a clean rejoin reconciles from scratch', () => {
    const b = () => new CurrentAssignmentBuilder(m).withTargetAssignment(12, ab([3], [6]));
    let err: unknown;
    try {
      b().withCurrentPartitionEpoch(() => 10).build();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KafkaError);
    expect((err as KafkaError).code).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect(() => b().withOwnedTopicPartitions(owned([T1, [3]])).build()).toThrow(KafkaError);

    const next = b().withCurrentPartitionEpoch(() => 11).withOwnedTopicPartitions([]).build();
    expect(view(next)).toEqual({ state: MemberState.STABLE, memberEpoch: 12, previousMemberEpoch: 11, assigned: { [T1]: [3], [T2]: [6] }, pending: {} });
  });

  test('an unknown persisted state byte reads as UNKNOWN', () => {
    expect(memberStateFromValue(0)).toBe(MemberState.STABLE);
    expect(memberStateFromValue(1)).toBe(MemberState.UNREVOKED_PARTITIONS);
    expect(memberStateFromValue(2)).toBe(MemberState.UNRELEASED_PARTITIONS);
    expect(memberStateFromValue(3)).toBe(MemberState.UNKNOWN);
    expect(memberStateFromValue(127)).toBe(MemberState.UNKNOWN);
  });
});

describe('a whole revocation round between two members', () => {
  test('the partition moves only after its owner acknowledged the revocation', () => {
    // Epoch 1: a owns T1-0 and T1-1. Epoch 2 (b joined): target a={0}, b={1}.
    let a = member(MemberState.STABLE, 1, 0, assignmentOf([T1, [0, 1]]));
    let b = newConsumerGroupMember('b');
    const targetA = assignmentOf([T1, [0]]);
    const targetB = assignmentOf([T1, [1]]);
    // The epoch of the current owner of a partition, -1 when free (what the group tracks).
    const ownerEpoch = (topicId: string, p: number): number => {
      for (const m of [a, b]) {
        if (m.assignedPartitions.get(topicId)?.has(p) || m.partitionsPendingRevocation.get(topicId)?.has(p)) return m.memberEpoch;
      }
      return -1;
    };
    const reconcile = (m: ConsumerGroupMember, target: Assignment, ownedNow: OwnedTopicPartitions[] | null): ConsumerGroupMember => {
      // A member's own partitions never count as unreleased: ask for the others only.
      const others = (t: string, p: number) => (m.assignedPartitions.get(t)?.has(p) ? -1 : ownerEpoch(t, p));
      return new CurrentAssignmentBuilder(m).withTargetAssignment(2, target).withCurrentPartitionEpoch(others).withOwnedTopicPartitions(ownedNow).build();
    };

    // Staying at epoch 1 still goes through Kafka's updateMemberEpoch: the previous epoch becomes 1.
    a = reconcile(a, targetA, owned([T1, [0, 1]]));
    expect(view(a)).toEqual({ state: MemberState.UNREVOKED_PARTITIONS, memberEpoch: 1, previousMemberEpoch: 1, assigned: { [T1]: [0] }, pending: { [T1]: [1] } });
    b = reconcile(b, targetB, []);
    expect(view(b)).toEqual({ state: MemberState.UNRELEASED_PARTITIONS, memberEpoch: 2, previousMemberEpoch: 0, assigned: {}, pending: {} });
    // a still reports T1-1: nothing moves.
    expect(reconcile(a, targetA, owned([T1, [0, 1]]))).toBe(a);
    // a acknowledges: it moves to epoch 2; then b gets T1-1.
    a = reconcile(a, targetA, owned([T1, [0]]));
    expect(view(a)).toEqual({ state: MemberState.STABLE, memberEpoch: 2, previousMemberEpoch: 1, assigned: { [T1]: [0] }, pending: {} });
    b = reconcile(b, targetB, []);
    expect(view(b)).toEqual({ state: MemberState.STABLE, memberEpoch: 2, previousMemberEpoch: 2, assigned: { [T1]: [1] }, pending: {} });
  });
});

describe('the member epoch check of a heartbeat', () => {
  const m = member(MemberState.STABLE, 11, 10, ab([1, 2], [3]));
  const fenced = (fn: () => void): number | undefined => {
    try {
      fn();
    } catch (e) {
      return e instanceof KafkaError ? e.code : undefined;
    }
    return ErrorCode.NONE;
  };

  test('the current epoch passes', () => {
    expect(fenced(() => validateMemberEpoch(m, 11, null))).toBe(ErrorCode.NONE);
  });

  test('an epoch ahead of the coordinator is fenced', () => {
    expect(fenced(() => validateMemberEpoch(m, 12, owned([T1, [1]])))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
  });

  test('the previous epoch passes when the member owns a subset of its assignment (the bump was lost)', () => {
    expect(fenced(() => validateMemberEpoch(m, 10, owned([T1, [1, 2]], [T2, [3]])))).toBe(ErrorCode.NONE);
    expect(fenced(() => validateMemberEpoch(m, 10, owned([T1, [2]])))).toBe(ErrorCode.NONE);
    expect(fenced(() => validateMemberEpoch(m, 10, []))).toBe(ErrorCode.NONE);
  });

  test('the previous epoch with partitions outside the assignment, or without owned partitions, is fenced', () => {
    expect(fenced(() => validateMemberEpoch(m, 10, owned([T1, [1, 4]])))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect(fenced(() => validateMemberEpoch(m, 10, owned(['AAAAAAAAAAAAAAAAAAAAAw', []])))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    expect(fenced(() => validateMemberEpoch(m, 10, null))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
  });

  test('an older epoch than the previous one is fenced', () => {
    expect(fenced(() => validateMemberEpoch(m, 9, owned([T1, [1]])))).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
  });
});

test('member equality compares every field, assignments by content', () => {
  const m = member(MemberState.STABLE, 3, 2, ab([1, 2], [3]));
  expect(membersEqual(m, { ...m, assignedPartitions: assignmentOf([T2, [3]], [T1, [2, 1]]) })).toBe(true);
  expect(membersEqual(m, { ...m, memberEpoch: 4 })).toBe(false);
  expect(membersEqual(m, { ...m, subscribedTopicNames: new Set(['x']) })).toBe(false);
  expect(newConsumerGroupMember('x')).toMatchObject({ memberEpoch: 0, previousMemberEpoch: -1, state: MemberState.STABLE, instanceId: null, rebalanceTimeoutMs: -1 });
});
