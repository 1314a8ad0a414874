/**
 * The contract of a server-side partition assignor for KIP-848 consumer groups, shaped as Kafka's
 * PartitionAssignor / GroupSpec / SubscribedTopicDescriber / GroupAssignment, and the plain
 * implementations of the spec and the describer that the target assignment builder hands to it.
 * Pure and I/O-free: an assignor is a function of (group spec, topic describer).
 *
 * Shapes and invariants:
 * - A topic id is krill's Uuid string (22 characters of base64url); partitions are numbers.
 * - An `Assignment` maps topic id -> partition numbers. Assignments handed to an assignor are never
 *   mutated by it: an assignor that changes a member's partitions builds new maps (copy on write).
 *   An assignment never holds a topic with an empty partition set.
 * - `GroupSpec.memberIds()` lists members in one fixed order (the order they were given in). Kafka
 *   iterates a HashMap there; krill's order is deterministic, so the same group always gets the
 *   same assignment.
 * - `numPartitions` answers -1 for a topic the describer does not know; an assignor whose members
 *   subscribe to such a topic throws PartitionAssignorError (Kafka's PartitionAssignorException).
 * - The assignor output has an entry per member that received anything; a member missing from it
 *   has the empty assignment (Kafka: GroupAssignment.members().get(id) == null -> Assignment.EMPTY).
 *
 * Which names `group.consumer.assignors` accepts, and the default list, are defined here; resolving
 * them to instances is `assignors.ts` (it imports the assignors, which import this file).
 */

export type TopicId = string;

/** Partitions per topic id. Treat as immutable once handed to an assignor or builder. */
export type Assignment = ReadonlyMap<TopicId, ReadonlySet<number>>;

export const EMPTY_ASSIGNMENT: Assignment = new Map();

/** Kafka's SubscriptionType. */
export enum SubscriptionType {
  /** Every member subscribes to the same set of topics. */
  HOMOGENEOUS = 'Homogeneous',
  /** Not every member subscribes to the same set of topics. */
  HETEROGENEOUS = 'Heterogeneous',
}

/** Kafka's PartitionAssignorException: the assignment cannot be computed (internal, never on the wire as such). */
export class PartitionAssignorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PartitionAssignorError';
  }
}

/** What an assignor knows of one member (Kafka's MemberSubscription). */
export interface MemberSubscription {
  readonly rackId: string | null;
  readonly instanceId: string | null;
  readonly subscribedTopicIds: ReadonlySet<TopicId>;
}

/** A member as the target assignment builder describes it: subscription plus current target assignment. */
export interface MemberSubscriptionAndAssignment extends MemberSubscription {
  readonly assignment: Assignment;
}

/** Kafka's GroupSpec. */
export interface GroupSpec {
  memberIds(): readonly string[];
  subscriptionType(): SubscriptionType;
  /** True when the partition is in some member's current (target) assignment. */
  isPartitionAssigned(topicId: TopicId, partition: number): boolean;
  /** Throws for an unknown member (Kafka: IllegalArgumentException). */
  memberSubscription(memberId: string): MemberSubscription;
  /** The member's current assignment; empty for an unknown member. */
  memberAssignment(memberId: string): Assignment;
}

/** Kafka's SubscribedTopicDescriber. */
export interface SubscribedTopicDescriber {
  /** -1 when the topic id is unknown. */
  numPartitions(topicId: TopicId): number;
  /** The racks of the partition's replicas; empty when unknown. */
  racksForPartition(topicId: TopicId, partition: number): ReadonlySet<string>;
}

/** Kafka's GroupAssignment: member id -> its new assignment. */
export interface GroupAssignment {
  readonly members: ReadonlyMap<string, Assignment>;
}

/** Kafka's (ConsumerGroup)PartitionAssignor. */
export interface PartitionAssignor {
  /** The unique short name a consumer asks for in ConsumerGroupHeartbeat.server_assignor. */
  name(): string;
  assign(groupSpec: GroupSpec, describer: SubscribedTopicDescriber): GroupAssignment;
}

/** One topic of the group's subscription metadata (Kafka's modern TopicMetadata). */
export interface TopicMetadata {
  readonly id: TopicId;
  readonly name: string;
  readonly numPartitions: number;
  /** Racks of each partition's replicas, when known (Kafka 4.0's describer answers none). */
  readonly partitionRacks?: ReadonlyMap<number, ReadonlySet<string>>;
}

// ---- group.consumer.assignors ------------------------------------------------------------------

export const CONSUMER_GROUP_ASSIGNORS_CONFIG = 'group.consumer.assignors';
export const UNIFORM_ASSIGNOR_NAME = 'uniform';
export const RANGE_ASSIGNOR_NAME = 'range';
/** The Java class names Kafka's config lists; krill maps them to its own built-in assignors. */
export const UNIFORM_ASSIGNOR_CLASS = 'org.apache.kafka.coordinator.group.assignor.UniformAssignor';
export const RANGE_ASSIGNOR_CLASS = 'org.apache.kafka.coordinator.group.assignor.RangeAssignor';
/** Kafka 4.0's default: uniform first (the default for members that name none), then range. */
export const CONSUMER_GROUP_ASSIGNORS_DEFAULT: readonly string[] = [UNIFORM_ASSIGNOR_NAME, RANGE_ASSIGNOR_NAME];

// ---- implementations of the spec and the describer ------------------------------------------

/**
 * Kafka's GroupSpecImpl. `isPartitionAssigned` answers from `assigned` when given (Kafka's inverted
 * target assignment), else from the members' own assignments, which is the same set whenever the
 * members are the ones the target assignment was computed for.
 */
export class GroupSpecImpl implements GroupSpec {
  private readonly ids: readonly string[];
  private readonly assigned: ReadonlyMap<TopicId, ReadonlySet<number>>;

  constructor(
    private readonly members: ReadonlyMap<string, MemberSubscriptionAndAssignment>,
    private readonly type: SubscriptionType,
    assigned?: ReadonlyMap<TopicId, ReadonlySet<number>>,
  ) {
    this.ids = [...members.keys()];
    if (assigned !== undefined) {
      this.assigned = assigned;
    } else {
      const a = new Map<TopicId, Set<number>>();
      for (const m of members.values()) {
        for (const [topicId, partitions] of m.assignment) {
          let s = a.get(topicId);
          if (s === undefined) a.set(topicId, (s = new Set()));
          for (const p of partitions) s.add(p);
        }
      }
      this.assigned = a;
    }
  }

  memberIds(): readonly string[] {
    return this.ids;
  }

  subscriptionType(): SubscriptionType {
    return this.type;
  }

  isPartitionAssigned(topicId: TopicId, partition: number): boolean {
    return this.assigned.get(topicId)?.has(partition) ?? false;
  }

  memberSubscription(memberId: string): MemberSubscription {
    const m = this.members.get(memberId);
    if (m === undefined) throw new Error(`Member Id ${memberId} not found.`);
    return m;
  }

  memberAssignment(memberId: string): Assignment {
    return this.members.get(memberId)?.assignment ?? EMPTY_ASSIGNMENT;
  }
}

const NO_RACKS: ReadonlySet<string> = new Set();

/** Kafka's SubscribedTopicDescriberImpl over the group's subscription metadata, keyed by topic id. */
export class SubscribedTopicDescriberImpl implements SubscribedTopicDescriber {
  constructor(readonly topics: ReadonlyMap<TopicId, TopicMetadata>) {}

  numPartitions(topicId: TopicId): number {
    return this.topics.get(topicId)?.numPartitions ?? -1;
  }

  racksForPartition(topicId: TopicId, partition: number): ReadonlySet<string> {
    return this.topics.get(topicId)?.partitionRacks?.get(partition) ?? NO_RACKS;
  }
}

// ---- helpers shared by the assignors and builders --------------------------------------------

/**
 * Kafka's ModernGroup.subscriptionType: homogeneous when no topic is subscribed, or when every
 * subscribed topic name has all members as subscribers.
 */
export function subscriptionTypeOf(subscriberCountByTopicName: ReadonlyMap<string, number>, numberOfMembers: number): SubscriptionType {
  for (const count of subscriberCountByTopicName.values()) {
    if (count !== numberOfMembers) return SubscriptionType.HETEROGENEOUS;
  }
  return SubscriptionType.HOMOGENEOUS;
}

/**
 * Java's Uuid.compareTo on krill's topic id strings: the most significant 64 bits, then the least
 * significant, each compared as a signed long. The heterogeneous assignor breaks ties with it.
 */
export function compareTopicIds(a: TopicId, b: TopicId): number {
  if (a === b) return 0;
  const x = Buffer.from(a, 'base64url');
  const y = Buffer.from(b, 'base64url');
  if (x.length !== 16 || y.length !== 16) return a < b ? -1 : 1;
  const hx = x.readBigInt64BE(0);
  const hy = y.readBigInt64BE(0);
  if (hx !== hy) return hx < hy ? -1 : 1;
  const lx = x.readBigInt64BE(8);
  const ly = y.readBigInt64BE(8);
  if (lx !== ly) return lx < ly ? -1 : 1;
  return 0;
}

/** Structural equality of two assignments (empty partition sets count as absent). */
export function assignmentsEqual(a: Assignment, b: Assignment): boolean {
  if (a === b) return true;
  let na = 0;
  for (const [topicId, pa] of a) {
    if (pa.size === 0) continue;
    na++;
    const pb = b.get(topicId);
    if (pb === undefined || pb.size !== pa.size) return false;
    for (const p of pa) if (!pb.has(p)) return false;
  }
  let nb = 0;
  for (const pb of b.values()) if (pb.size > 0) nb++;
  return na === nb;
}

/** A mutable deep copy. */
export function copyAssignment(a: Assignment): Map<TopicId, Set<number>> {
  const out = new Map<TopicId, Set<number>>();
  for (const [topicId, partitions] of a) out.set(topicId, new Set(partitions));
  return out;
}

/** Builds an assignment from [topicId, partitions] pairs, leaving out empty ones (tests and records). */
export function assignmentOf(...entries: readonly (readonly [TopicId, readonly number[]])[]): Assignment {
  const out = new Map<TopicId, Set<number>>();
  for (const [topicId, partitions] of entries) {
    if (partitions.length === 0) continue;
    let s = out.get(topicId);
    if (s === undefined) out.set(topicId, (s = new Set()));
    for (const p of partitions) s.add(p);
  }
  return out;
}

/** The number of partitions in an assignment. */
export function assignmentSize(a: Assignment): number {
  let n = 0;
  for (const s of a.values()) n += s.size;
  return n;
}

/** [topicId, sorted partitions] pairs in the assignment's topic order: the shape records and responses carry. */
export function toTopicPartitions(a: Assignment): { topicId: TopicId; partitions: number[] }[] {
  const out: { topicId: TopicId; partitions: number[] }[] = [];
  for (const [topicId, partitions] of a) {
    if (partitions.size === 0) continue;
    out.push({ topicId, partitions: [...partitions].sort((x, y) => x - y) });
  }
  return out;
}

/** The inverse of toTopicPartitions (a record's or a heartbeat's list to an assignment). */
export function fromTopicPartitions(list: readonly { topicId: TopicId; partitions: readonly number[] }[]): Assignment {
  return assignmentOf(...list.map((t) => [t.topicId, t.partitions] as const));
}
