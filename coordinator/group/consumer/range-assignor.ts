/**
 * Kafka's server-side RangeAssignor ("range") as Kafka 4.0 has it after its rewrite (KAFKA-16944):
 * every assignment is recomputed from scratch; it does not try to keep current partitions.
 *
 * - Members are ordered with static members first, by group.instance.id, then the others by member
 *   id (string order). That order is its stickiness rule: a static member that rejoins under a new
 *   member id keeps its place, hence its ranges, as long as the members, their subscriptions and
 *   the partition counts stay the same.
 * - Per topic, with N partitions and S subscribers: each subscriber, in that order, gets the next
 *   contiguous range of floor(N / S) partitions, one more for the first N % S of them. Members with
 *   the same subscriptions therefore get the same partition numbers of equally partitioned topics
 *   (co-partitioning, what stream joins need).
 * - Every member of the spec gets an entry, empty when it has nothing (unlike the uniform
 *   assignor); a subscribed topic unknown to the describer throws PartitionAssignorError.
 */
import {
  PartitionAssignorError,
  RANGE_ASSIGNOR_NAME,
  SubscriptionType,
  type Assignment,
  type GroupAssignment,
  type GroupSpec,
  type PartitionAssignor,
  type SubscribedTopicDescriber,
  type TopicId,
} from './assignor';

/** One topic's running state while its ranges are handed out. */
interface TopicRanges {
  readonly topicId: TopicId;
  readonly numPartitions: number;
  subscribers: number;
  minQuota: number;
  extra: number;
  next: number;
}

export class RangeAssignor implements PartitionAssignor {
  name(): string {
    return RANGE_ASSIGNOR_NAME;
  }

  assign(groupSpec: GroupSpec, describer: SubscribedTopicDescriber): GroupAssignment {
    if (groupSpec.memberIds().length === 0) return { members: new Map() };
    const memberIds = sortMembers(groupSpec);
    const topics = new Map<TopicId, TopicRanges>();
    const topicOf = (topicId: TopicId): TopicRanges => {
      let t = topics.get(topicId);
      if (t === undefined) {
        const n = describer.numPartitions(topicId);
        if (n === -1) throw new PartitionAssignorError('Member is subscribed to a non-existent topic');
        topics.set(topicId, (t = { topicId, numPartitions: n, subscribers: 0, minQuota: -1, extra: -1, next: 0 }));
      }
      return t;
    };

    if (groupSpec.subscriptionType() === SubscriptionType.HOMOGENEOUS) {
      for (const topicId of groupSpec.memberSubscription(memberIds[0]).subscribedTopicIds) topicOf(topicId).subscribers = memberIds.length;
    } else {
      for (const memberId of memberIds) {
        for (const topicId of groupSpec.memberSubscription(memberId).subscribedTopicIds) topicOf(topicId).subscribers++;
      }
    }

    const homogeneous = groupSpec.subscriptionType() === SubscriptionType.HOMOGENEOUS;
    const out = new Map<string, Assignment>();
    for (const memberId of memberIds) {
      const assignment = new Map<TopicId, Set<number>>();
      const subscribed = homogeneous ? topics.keys() : groupSpec.memberSubscription(memberId).subscribedTopicIds;
      for (const topicId of subscribed) addRange(topics.get(topicId)!, assignment);
      out.set(memberId, assignment);
    }
    return { members: out };
  }
}

/** Static members first (by instance id), then dynamic members (by member id). */
function sortMembers(groupSpec: GroupSpec): string[] {
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return [...groupSpec.memberIds()].sort((m1, m2) => {
    const i1 = groupSpec.memberSubscription(m1).instanceId;
    const i2 = groupSpec.memberSubscription(m2).instanceId;
    if (i1 !== null && i2 !== null) return cmp(i1, i2);
    if (i1 !== null) return -1;
    if (i2 !== null) return 1;
    return cmp(m1, m2);
  });
}

function addRange(t: TopicRanges, assignment: Map<TopicId, Set<number>>): void {
  if (t.minQuota === -1) {
    t.minQuota = Math.floor(t.numPartitions / t.subscribers);
    t.extra = t.numPartitions % t.subscribers;
  }
  let quota = t.minQuota;
  if (t.extra > 0) {
    quota++;
    t.extra--;
  }
  const start = t.next;
  const end = Math.min(start + quota, t.numPartitions);
  t.next = end;
  if (start < end) {
    const s = new Set<number>();
    for (let p = start; p < end; p++) s.add(p);
    assignment.set(t.topicId, s);
  }
}
