/**
 * Kafka's TargetAssignmentBuilder: computes a consumer group's new target assignment for a group
 * epoch and the records that persist it. Pure: the caller passes the group's members, its current
 * target assignment, the subscription metadata and the assignor; nothing is written here.
 *
 * - The assignor sees every member of `withMembers`, with `addOrUpdateMember` applied on top
 *   (members not yet materialised in the group) and `removeMember` taking members out. Each member
 *   is described with its rack, instance id, its subscribed topic names resolved to ids (names that
 *   resolve to nothing are left out, as Kafka's TopicIds does) and its current target assignment.
 * - A static member that joins under a new member id (its instance id maps, in `withStaticMembers`,
 *   to another member id) starts from the target assignment of that previous member id, so the
 *   replacement inherits its partitions; the caller removes the previous member id.
 * - The topics the assignor may use are the subscription metadata (topic name -> id and partition
 *   count). Subscribed names resolve through `withTopicResolver`, by default through that metadata.
 * - The subscription type is `withSubscriptionType` when given, else computed from the members'
 *   subscribed topic names (Kafka's ModernGroup.subscriptionType).
 * - Records: one ConsumerGroupTargetAssignmentMember record for every member whose new target
 *   differs from its previous one (or which had none), in member order, then always the
 *   ConsumerGroupTargetAssignmentMetadata record with the group epoch as the assignment epoch. A
 *   member whose target did not change produces no record. Removed members get no tombstone here:
 *   removing a member deletes its records separately, as in Kafka.
 * - `isPartitionAssigned` (the homogeneous assignor's "already owned" test) is answered from the
 *   members the assignor sees, so partitions of removed members count as free.
 */
import {
  EMPTY_ASSIGNMENT,
  GroupSpecImpl,
  SubscribedTopicDescriberImpl,
  assignmentsEqual,
  subscriptionTypeOf,
  type Assignment,
  type MemberSubscriptionAndAssignment,
  type PartitionAssignor,
  type SubscriptionType,
  type TopicId,
  type TopicMetadata,
} from './assignor';
import type { ConsumerGroupMember } from './consumer-group-member';
import { targetAssignmentEpochRecord, targetAssignmentRecord, type ConsumerGroupRecord } from './consumer-group-records';

export interface TargetAssignmentResult {
  /** The records to append to __consumer_offsets, the epoch record last. */
  readonly records: ConsumerGroupRecord[];
  /** Member id -> new target assignment (members the assignor gave nothing may be absent). */
  readonly targetAssignment: ReadonlyMap<string, Assignment>;
}

/** Topic name -> topic id, undefined when the topic does not exist. */
export type TopicResolver = (topicName: string) => TopicId | undefined;

/** The member fields the builder reads (a ConsumerGroupMember has them all). */
export type TargetAssignmentMember = Pick<ConsumerGroupMember, 'instanceId' | 'rackId' | 'subscribedTopicNames'>;

export class TargetAssignmentBuilder {
  private members: ReadonlyMap<string, TargetAssignmentMember> = new Map();
  private staticMembers: ReadonlyMap<string, string> = new Map();
  private subscriptionMetadata: ReadonlyMap<string, TopicMetadata> = new Map();
  private subscriptionType: SubscriptionType | null = null;
  private targetAssignment: ReadonlyMap<string, Assignment> = new Map();
  private topicResolver: TopicResolver | null = null;
  /** Updated members; null marks a removed one. */
  private readonly updatedMembers = new Map<string, TargetAssignmentMember | null>();

  constructor(
    private readonly groupId: string,
    private readonly groupEpoch: number,
    private readonly assignor: PartitionAssignor,
  ) {}

  withMembers(members: ReadonlyMap<string, TargetAssignmentMember>): this {
    this.members = members;
    return this;
  }

  /** group.instance.id -> the member id that holds it in the group. */
  withStaticMembers(staticMembers: ReadonlyMap<string, string>): this {
    this.staticMembers = staticMembers;
    return this;
  }

  /** Topic name -> its metadata, for the topics the group subscribes to. */
  withSubscriptionMetadata(subscriptionMetadata: ReadonlyMap<string, TopicMetadata>): this {
    this.subscriptionMetadata = subscriptionMetadata;
    return this;
  }

  withSubscriptionType(subscriptionType: SubscriptionType): this {
    this.subscriptionType = subscriptionType;
    return this;
  }

  /** Member id -> its current target assignment. */
  withTargetAssignment(targetAssignment: ReadonlyMap<string, Assignment>): this {
    this.targetAssignment = targetAssignment;
    return this;
  }

  withTopicResolver(resolver: TopicResolver): this {
    this.topicResolver = resolver;
    return this;
  }

  addOrUpdateMember(memberId: string, member: TargetAssignmentMember): this {
    this.updatedMembers.set(memberId, member);
    return this;
  }

  removeMember(memberId: string): this {
    this.updatedMembers.set(memberId, null);
    return this;
  }

  /** Throws PartitionAssignorError when the assignor cannot compute an assignment. */
  build(): TargetAssignmentResult {
    const resolve = this.resolver();
    const specs = new Map<string, MemberSubscriptionAndAssignment>();
    const finalMembers = new Map<string, TargetAssignmentMember>();
    for (const [memberId, member] of this.members) {
      specs.set(memberId, this.describe(member, this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT, resolve));
      finalMembers.set(memberId, member);
    }
    for (const [memberId, member] of this.updatedMembers) {
      if (member === null) {
        specs.delete(memberId);
        finalMembers.delete(memberId);
        continue;
      }
      let assignment = this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT;
      if (member.instanceId !== null) {
        const previous = this.staticMembers.get(member.instanceId);
        if (previous !== undefined && previous !== memberId) assignment = this.targetAssignment.get(previous) ?? EMPTY_ASSIGNMENT;
      }
      specs.set(memberId, this.describe(member, assignment, resolve));
      finalMembers.set(memberId, member);
    }

    const topics = new Map<TopicId, TopicMetadata>();
    for (const t of this.subscriptionMetadata.values()) topics.set(t.id, t);
    const type = this.subscriptionType ?? subscriptionTypeOf(subscriberCounts(finalMembers.values()), finalMembers.size);

    const assignment = this.assignor.assign(new GroupSpecImpl(specs, type), new SubscribedTopicDescriberImpl(topics));

    const records: ConsumerGroupRecord[] = [];
    for (const memberId of specs.keys()) {
      const before = this.targetAssignment.get(memberId);
      const after = assignment.members.get(memberId) ?? EMPTY_ASSIGNMENT;
      if (before === undefined || !assignmentsEqual(before, after)) records.push(targetAssignmentRecord(this.groupId, memberId, after));
    }
    records.push(targetAssignmentEpochRecord(this.groupId, this.groupEpoch));
    return { records, targetAssignment: assignment.members };
  }

  private resolver(): TopicResolver {
    if (this.topicResolver !== null) return this.topicResolver;
    return (name) => this.subscriptionMetadata.get(name)?.id;
  }

  private describe(member: TargetAssignmentMember, assignment: Assignment, resolve: TopicResolver): MemberSubscriptionAndAssignment {
    const ids = new Set<TopicId>();
    for (const name of member.subscribedTopicNames) {
      const id = resolve(name);
      if (id !== undefined) ids.add(id);
    }
    return { rackId: member.rackId, instanceId: member.instanceId, subscribedTopicIds: ids, assignment };
  }
}

/** Subscribed topic name -> number of members subscribing to it. */
export function subscriberCounts(members: Iterable<Pick<ConsumerGroupMember, 'subscribedTopicNames'>>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of members) for (const name of m.subscribedTopicNames) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}
