/**
 * Helpers for the assignor tests: a group spec and a topic describer from literals, and the
 * properties every uniform assignment must have (Kafka's checkValidityAndBalance), returned as a
 * list of violations so that tests assert it is empty. No jest here (tsconfig.build.json compiles
 * this file); callers assert.
 */
import {
  EMPTY_ASSIGNMENT,
  GroupSpecImpl,
  SubscribedTopicDescriberImpl,
  SubscriptionType,
  assignmentSize,
  type Assignment,
  type GroupAssignment,
  type MemberSubscriptionAndAssignment,
  type TopicId,
  type TopicMetadata,
} from './assignor';

export interface TestMember {
  readonly topics: readonly TopicId[];
  readonly assignment?: Assignment;
  readonly instanceId?: string;
  readonly rackId?: string;
}

/** Members in the order given; the subscription type as given (or computed from the topic sets). */
export function specOf(members: Readonly<Record<string, TestMember>> | ReadonlyMap<string, TestMember>, type?: SubscriptionType): GroupSpecImpl {
  const entries = members instanceof Map ? [...members.entries()] : Object.entries(members);
  const specs = new Map<string, MemberSubscriptionAndAssignment>();
  for (const [id, m] of entries) {
    specs.set(id, {
      rackId: m.rackId ?? null,
      instanceId: m.instanceId ?? null,
      subscribedTopicIds: new Set(m.topics),
      assignment: m.assignment ?? EMPTY_ASSIGNMENT,
    });
  }
  return new GroupSpecImpl(specs, type ?? subscriptionTypeOfSpecs([...specs.values()]));
}

function subscriptionTypeOfSpecs(specs: readonly MemberSubscriptionAndAssignment[]): SubscriptionType {
  const key = (s: MemberSubscriptionAndAssignment): string => [...s.subscribedTopicIds].sort().join(',');
  return specs.every((s) => key(s) === key(specs[0])) ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
}

/** A describer over topic id -> partition count. */
export function topicsOf(partitions: Readonly<Record<TopicId, number>>): SubscribedTopicDescriberImpl {
  const m = new Map<TopicId, TopicMetadata>();
  for (const [id, n] of Object.entries(partitions)) m.set(id, { id, name: `topic-${id}`, numPartitions: n });
  return new SubscribedTopicDescriberImpl(m);
}

/** The assignment as plain sorted data, for toEqual comparisons: member -> topic -> partitions. */
export function plain(result: GroupAssignment | ReadonlyMap<string, Assignment>): Record<string, Record<TopicId, number[]>> {
  const members = 'members' in result ? (result as GroupAssignment).members : (result as ReadonlyMap<string, Assignment>);
  const out: Record<string, Record<TopicId, number[]>> = {};
  for (const [memberId, a] of members) out[memberId] = plainAssignment(a);
  return out;
}

export function plainAssignment(a: Assignment): Record<TopicId, number[]> {
  const t: Record<TopicId, number[]> = {};
  for (const [topicId, ps] of a) if (ps.size > 0) t[topicId] = [...ps].sort((x, y) => x - y);
  return t;
}

/**
 * What is wrong with `result` for `spec` (empty when nothing): a partition assigned twice, a
 * partition of a subscribed topic left out, a partition outside the member's subscription or the
 * topic, and imbalance: a member holding a partition of a topic that another subscriber of that
 * topic with two or more fewer partitions could take (Kafka's balance definition). With
 * `strict`, also any two members differing by more than one partition (homogeneous groups).
 */
export function assignmentProblems(spec: GroupSpecImpl, describer: SubscribedTopicDescriberImpl, result: GroupAssignment, strict = false): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  const sizes = new Map<string, number>();
  for (const memberId of spec.memberIds()) sizes.set(memberId, assignmentSize(result.members.get(memberId) ?? EMPTY_ASSIGNMENT));
  for (const [memberId, a] of result.members) {
    if (!sizes.has(memberId)) problems.push(`${memberId} is not a member`);
    const subscribed = spec.memberSubscription(memberId).subscribedTopicIds;
    for (const [topicId, ps] of a) {
      if (!subscribed.has(topicId)) problems.push(`${memberId} got ${topicId} without subscribing to it`);
      for (const p of ps) {
        if (p < 0 || p >= describer.numPartitions(topicId)) problems.push(`${memberId} got ${topicId}-${p}, not a partition`);
        const k = `${topicId}-${p}`;
        const other = owner.get(k);
        if (other !== undefined) problems.push(`${k} assigned to ${other} and ${memberId}`);
        owner.set(k, memberId);
      }
    }
  }
  const subscribersOf = new Map<TopicId, string[]>();
  for (const memberId of spec.memberIds()) {
    for (const t of spec.memberSubscription(memberId).subscribedTopicIds) {
      const l = subscribersOf.get(t) ?? [];
      l.push(memberId);
      subscribersOf.set(t, l);
    }
  }
  for (const [topicId, subscribers] of subscribersOf) {
    const n = describer.numPartitions(topicId);
    for (let p = 0; p < n; p++) if (!owner.has(`${topicId}-${p}`)) problems.push(`${topicId}-${p} not assigned`);
    for (const giver of subscribers) {
      if ((result.members.get(giver)?.get(topicId)?.size ?? 0) === 0) continue;
      for (const taker of subscribers) {
        if (sizes.get(giver)! - sizes.get(taker)! >= 2) problems.push(`${giver} (${sizes.get(giver)}) could give ${topicId} to ${taker} (${sizes.get(taker)})`);
      }
    }
  }
  if (strict) {
    const all = [...sizes.values()];
    if (all.length > 0 && Math.max(...all) - Math.min(...all) > 1) problems.push(`sizes ${all.join(',')} differ by more than one`);
  }
  return problems;
}

/** How many partitions each member kept from its previous assignment. */
export function keptPartitions(spec: GroupSpecImpl, result: GroupAssignment): Map<string, number> {
  const kept = new Map<string, number>();
  for (const memberId of spec.memberIds()) {
    const before = spec.memberAssignment(memberId);
    const after = result.members.get(memberId) ?? EMPTY_ASSIGNMENT;
    let n = 0;
    for (const [t, ps] of before) for (const p of ps) if (after.get(t)?.has(p)) n++;
    kept.set(memberId, n);
  }
  return kept;
}
