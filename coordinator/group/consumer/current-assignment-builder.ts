/**
 * The per-member reconciliation engine of KIP-848 (Kafka's CurrentAssignmentBuilder), and the
 * member epoch check every ConsumerGroupHeartbeat passes first (Kafka's
 * throwIfConsumerGroupMemberEpochIsInvalid). Pure: the caller supplies the member, the target
 * assignment and its epoch, who currently owns each partition, and what the member reported owning.
 *
 * The state machine, from the member's current state:
 * - STABLE: at the target epoch, nothing to do; otherwise reconcile towards the target.
 * - UNREVOKED_PARTITIONS: while the member still reports owning a partition pending revocation (or
 *   reports nothing: null owned partitions), it stays as it is. Once they are all gone it moves to
 *   epoch + 1 and reconciles towards the target from there.
 * - UNRELEASED_PARTITIONS: reconcile again, which picks up partitions released meanwhile.
 * - UNKNOWN: FENCED_MEMBER_EPOCH unless the member reports owning nothing (an empty, non-null list);
 *   then reconcile at the target epoch.
 *
 * Reconciling (per topic of the target or of the current assignment):
 *   kept      = current ∩ target
 *   revoking  = current − kept
 *   incoming  = target − kept, minus partitions another member still owns (a current partition
 *               epoch other than -1): those are unreleased and withheld.
 * - Something to revoke that the member still owns (null owned partitions count as owning
 *   everything): UNREVOKED_PARTITIONS at the member's epoch (it does not advance yet), assigned =
 *   kept, pending revocation = revoking.
 * - Else, the member moves to the target epoch with kept + incoming assigned, nothing pending, and
 *   is UNRELEASED_PARTITIONS if anything was withheld, STABLE otherwise.
 * Moving to an epoch records the old one as the previous member epoch. The builder returns the
 * input object itself when nothing changed, so `result !== member` means a
 * ConsumerGroupCurrentMemberAssignment record must be written.
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors';
import { EMPTY_ASSIGNMENT, type Assignment, type TopicId } from './assignor';
import { MemberState, membersEqual, updateMember, withMemberEpoch, type ConsumerGroupMember } from './consumer-group-member';

/** A topic's partitions as ConsumerGroupHeartbeat reports them (its TopicPartitions). */
export interface OwnedTopicPartitions {
  readonly topicId: TopicId;
  readonly partitions: readonly number[];
}

/** The epoch of the member that currently owns a partition, or -1 when nobody owns it. */
export type CurrentPartitionEpoch = (topicId: TopicId, partition: number) => number;

export function fencedMemberEpoch(message: string): KafkaError {
  return new KafkaError(ErrorCode.FENCED_MEMBER_EPOCH, message);
}

export class CurrentAssignmentBuilder {
  private targetAssignmentEpoch = 0;
  private targetAssignment: Assignment = EMPTY_ASSIGNMENT;
  private currentPartitionEpoch: CurrentPartitionEpoch = () => -1;
  private ownedTopicPartitions: readonly OwnedTopicPartitions[] | null = null;

  constructor(private readonly member: ConsumerGroupMember) {}

  withTargetAssignment(targetAssignmentEpoch: number, targetAssignment: Assignment): this {
    this.targetAssignmentEpoch = targetAssignmentEpoch;
    this.targetAssignment = targetAssignment;
    return this;
  }

  withCurrentPartitionEpoch(fn: CurrentPartitionEpoch): this {
    this.currentPartitionEpoch = fn;
    return this;
  }

  /** What the member's heartbeat reported owning; null when the heartbeat did not say. */
  withOwnedTopicPartitions(owned: readonly OwnedTopicPartitions[] | null): this {
    this.ownedTopicPartitions = owned;
    return this;
  }

  build(): ConsumerGroupMember {
    const m = this.member;
    switch (m.state) {
      case MemberState.STABLE:
        return m.memberEpoch !== this.targetAssignmentEpoch ? this.next(m.memberEpoch, m.assignedPartitions) : m;
      case MemberState.UNREVOKED_PARTITIONS:
        if (this.ownsAnyOf(m.partitionsPendingRevocation)) return m;
        return this.next(m.memberEpoch + 1, m.assignedPartitions);
      case MemberState.UNRELEASED_PARTITIONS:
        return this.next(m.memberEpoch, m.assignedPartitions);
      case MemberState.UNKNOWN:
      default:
        if (this.ownedTopicPartitions === null || this.ownedTopicPartitions.length > 0) {
          throw fencedMemberEpoch('The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.');
        }
        return this.next(this.targetAssignmentEpoch, m.assignedPartitions);
    }
  }

  /** Whether the reported owned partitions include any of `partitions` (null reports: yes). */
  private ownsAnyOf(partitions: Assignment): boolean {
    if (this.ownedTopicPartitions === null) return true;
    for (const t of this.ownedTopicPartitions) {
      const s = partitions.get(t.topicId);
      if (s === undefined) continue;
      for (const p of t.partitions) if (s.has(p)) return true;
    }
    return false;
  }

  /** Reconciles towards the target from `memberEpoch` and the given current partitions. */
  private next(memberEpoch: number, current: Assignment): ConsumerGroupMember {
    let unreleased = false;
    const assigned = new Map<TopicId, Set<number>>();
    const revoking = new Map<TopicId, Set<number>>();
    const incoming = new Map<TopicId, Set<number>>();
    const topics = new Set<TopicId>([...this.targetAssignment.keys(), ...current.keys()]);
    for (const topicId of topics) {
      const target = this.targetAssignment.get(topicId);
      const mine = current.get(topicId);
      const kept = new Set<number>();
      const out = new Set<number>();
      if (mine !== undefined) for (const p of mine) (target?.has(p) ? kept : out).add(p);
      const add = new Set<number>();
      if (target !== undefined) {
        for (const p of target) {
          if (kept.has(p)) continue;
          if (this.currentPartitionEpoch(topicId, p) !== -1) unreleased = true;
          else add.add(p);
        }
      }
      if (kept.size > 0) assigned.set(topicId, kept);
      if (out.size > 0) revoking.set(topicId, out);
      if (add.size > 0) incoming.set(topicId, add);
    }

    let result: ConsumerGroupMember;
    if (revoking.size > 0 && this.ownsAnyOf(revoking)) {
      result = updateMember(this.member, {
        state: MemberState.UNREVOKED_PARTITIONS,
        ...withMemberEpoch(this.member, memberEpoch),
        assignedPartitions: assigned,
        partitionsPendingRevocation: revoking,
      });
    } else {
      for (const [topicId, partitions] of incoming) {
        let s = assigned.get(topicId);
        if (s === undefined) assigned.set(topicId, (s = new Set()));
        for (const p of partitions) s.add(p);
      }
      result = updateMember(this.member, {
        state: unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE,
        ...withMemberEpoch(this.member, this.targetAssignmentEpoch),
        assignedPartitions: assigned,
        partitionsPendingRevocation: EMPTY_ASSIGNMENT,
      });
    }
    return membersEqual(result, this.member) ? this.member : result;
  }
}

/**
 * Kafka's throwIfConsumerGroupMemberEpochIsInvalid: FENCED_MEMBER_EPOCH when the heartbeat's epoch
 * is ahead of the coordinator's, or behind it unless it is exactly the previous epoch and the member
 * owns nothing outside its current assignment (the response that bumped its epoch was lost).
 */
export function validateMemberEpoch(member: ConsumerGroupMember, receivedMemberEpoch: number, owned: readonly OwnedTopicPartitions[] | null): void {
  if (receivedMemberEpoch > member.memberEpoch) {
    throw fencedMemberEpoch(
      `The consumer group member has a greater member epoch (${receivedMemberEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    );
  }
  if (receivedMemberEpoch < member.memberEpoch) {
    if (receivedMemberEpoch !== member.previousMemberEpoch || !isSubset(owned, member.assignedPartitions)) {
      throw fencedMemberEpoch(
        `The consumer group member has a smaller member epoch (${receivedMemberEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
  }
}

/** Kafka's isSubset: every reported partition is in `assignment`; a null report is not a subset. */
function isSubset(owned: readonly OwnedTopicPartitions[] | null, assignment: Assignment): boolean {
  if (owned === null) return false;
  for (const t of owned) {
    const s = assignment.get(t.topicId);
    if (s === undefined) return false;
    for (const p of t.partitions) if (!s.has(p)) return false;
  }
  return true;
}
