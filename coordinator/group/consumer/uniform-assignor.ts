/**
 * Kafka's UniformAssignor ("uniform", the default server-side assignor of KIP-848 consumer groups)
 * with its two builders, chosen by the group's subscription type:
 *
 * - Homogeneous (every member subscribes to the same topics; Kafka's
 *   UniformHomogeneousAssignmentBuilder). With T partitions over M members each member's quota is
 *   floor(T / M), and the first T % M members (in the spec's member order) get one more. Each member
 *   keeps what it owns of subscribed topics up to its quota (topics in the order of its assignment,
 *   partitions of a topic in ascending order); the rest is revoked. The pool of partitions to hand
 *   out is every partition no member currently holds (topics in the subscription's order, partitions
 *   ascending), followed by the revoked ones in revocation order; members still under quota take
 *   from it in member order until full.
 *
 * - Heterogeneous (Kafka's UniformHeterogeneousAssignmentBuilder). Members keep everything they own
 *   of topics they still subscribe to. Unowned partitions go, topic by topic, to the topic's least
 *   loaded subscriber (fewest partitions in total, ties to the earlier member). Topics are visited
 *   in descending partitions-per-subscriber, then ascending subscriber count, then ascending topic
 *   id (Java Uuid order). Then the balancing loop: for each topic with two or more subscribers whose
 *   subscribers' totals differ by more than one, partitions move from the most to the least loaded
 *   subscribers (a giver gives up its highest-numbered partition of the topic) until the difference
 *   is at most one or no loaded subscriber holds a partition of the topic; the loop goes round the
 *   topics until a full round moves nothing, at most 16 rounds.
 *
 * Both: balance before stickiness; every partition of every subscribed topic is assigned exactly
 * once; a member only gets partitions of topics it subscribes to; an empty subscription set gives
 * an empty GroupAssignment. Partitions at or beyond a topic's partition count (a topic recreated
 * smaller under the same id cannot happen in Kafka) are dropped from current assignments instead of
 * being kept. Racks are not used, as in Kafka 4.0.
 */
import {
  EMPTY_ASSIGNMENT,
  PartitionAssignorError,
  SubscriptionType,
  UNIFORM_ASSIGNOR_NAME,
  compareTopicIds,
  copyAssignment,
  type Assignment,
  type GroupAssignment,
  type GroupSpec,
  type PartitionAssignor,
  type SubscribedTopicDescriber,
  type TopicId,
} from './assignor';

export class UniformAssignor implements PartitionAssignor {
  name(): string {
    return UNIFORM_ASSIGNOR_NAME;
  }

  assign(groupSpec: GroupSpec, describer: SubscribedTopicDescriber): GroupAssignment {
    if (groupSpec.memberIds().length === 0) return { members: new Map() };
    if (groupSpec.subscriptionType() === SubscriptionType.HOMOGENEOUS) {
      return new UniformHomogeneousAssignmentBuilder(groupSpec, describer).build();
    }
    return new UniformHeterogeneousAssignmentBuilder(groupSpec, describer).build();
  }
}

function unknownTopic(topicId: TopicId): PartitionAssignorError {
  return new PartitionAssignorError(`Members are subscribed to topic ${topicId} which doesn't exist in the topic metadata.`);
}

/** True when every partition number is within the topic's partition count. */
function inRange(partitions: ReadonlySet<number>, numPartitions: number): boolean {
  for (const p of partitions) if (p < 0 || p >= numPartitions) return false;
  return true;
}

// ---- homogeneous ------------------------------------------------------------------------------

export class UniformHomogeneousAssignmentBuilder {
  private readonly subscribedTopicIds: readonly TopicId[];
  private readonly target = new Map<string, Assignment>();
  private readonly unassigned: [TopicId, number][] = [];
  private readonly unfilled: { memberId: string; remaining: number }[] = [];

  constructor(
    private readonly groupSpec: GroupSpec,
    private readonly describer: SubscribedTopicDescriber,
  ) {
    const first = groupSpec.memberIds()[0];
    this.subscribedTopicIds = first === undefined ? [] : [...groupSpec.memberSubscription(first).subscribedTopicIds];
  }

  build(): GroupAssignment {
    if (this.subscribedTopicIds.length === 0) return { members: new Map() };

    let total = 0;
    for (const topicId of this.subscribedTopicIds) {
      const n = this.describer.numPartitions(topicId);
      if (n === -1) throw unknownTopic(topicId);
      for (let p = 0; p < n; p++) if (!this.groupSpec.isPartitionAssigned(topicId, p)) this.unassigned.push([topicId, p]);
      total += n;
    }
    const memberIds = this.groupSpec.memberIds();
    const minQuota = Math.floor(total / memberIds.length);
    let extra = total % memberIds.length;

    const subscribed = new Set(this.subscribedTopicIds);
    for (const memberId of memberIds) {
      const old = this.groupSpec.memberAssignment(memberId);
      let quota = minQuota;
      if (extra > 0) {
        quota++;
        extra--;
      }
      let copy: Map<TopicId, Set<number>> | null = null;
      const mutable = (): Map<TopicId, Set<number>> => (copy ??= copyAssignment(old));
      for (const [topicId, partitions] of old) {
        if (!subscribed.has(topicId)) {
          mutable().delete(topicId);
          continue;
        }
        const n = this.describer.numPartitions(topicId);
        let owned: ReadonlySet<number> = partitions;
        if (!inRange(partitions, n)) {
          owned = new Set([...partitions].filter((p) => p >= 0 && p < n));
          if (owned.size === 0) mutable().delete(topicId);
          else mutable().set(topicId, new Set(owned));
        }
        if (owned.size <= quota) {
          quota -= owned.size;
          continue;
        }
        for (const p of [...owned].sort((a, b) => a - b)) {
          if (quota > 0) {
            quota--;
            continue;
          }
          const m = mutable();
          const set = m.get(topicId)!;
          set.delete(p);
          if (set.size === 0) m.delete(topicId);
          this.unassigned.push([topicId, p]);
        }
      }
      if (quota > 0) this.unfilled.push({ memberId, remaining: quota });
      this.target.set(memberId, copy ?? old);
    }

    let next = 0;
    for (const { memberId, remaining } of this.unfilled) {
      if (next >= this.unassigned.length) break;
      const a = copyAssignment(this.target.get(memberId) ?? EMPTY_ASSIGNMENT);
      for (let i = 0; i < remaining && next < this.unassigned.length; i++) {
        const [topicId, p] = this.unassigned[next++];
        let s = a.get(topicId);
        if (s === undefined) a.set(topicId, (s = new Set()));
        s.add(p);
      }
      this.target.set(memberId, a);
    }
    if (next < this.unassigned.length) throw new PartitionAssignorError('Partitions were left unassigned');
    return { members: this.target };
  }
}

// ---- heterogeneous ----------------------------------------------------------------------------

/** Rounds of the final balancing loop (Kafka's MAX_ITERATION_COUNT). */
const MAX_BALANCE_ROUNDS = 16;

export class UniformHeterogeneousAssignmentBuilder {
  private readonly memberIds: readonly string[];
  private readonly memberIndex = new Map<string, number>();
  /** Subscribers of each topic, as member indexes in ascending order. */
  private readonly topicSubscribers = new Map<TopicId, number[]>();
  private readonly subscribedTopicIds: TopicId[] = [];
  /** Partitions per member in the target being built (indexes as memberIds). */
  private readonly sizes: Int32Array;
  /** Owner (member index, -1 none) of every partition of every subscribed topic. */
  private readonly owners = new Map<TopicId, Int32Array>();
  /** The target being built; a member's entry is copied before its first change. */
  private readonly target = new Map<string, Assignment>();
  private readonly copied = new Set<string>();

  constructor(
    private readonly groupSpec: GroupSpec,
    private readonly describer: SubscribedTopicDescriber,
  ) {
    this.memberIds = [...groupSpec.memberIds()];
    this.memberIds.forEach((id, i) => this.memberIndex.set(id, i));
    this.sizes = new Int32Array(this.memberIds.length);
    this.memberIds.forEach((memberId, i) => {
      for (const topicId of groupSpec.memberSubscription(memberId).subscribedTopicIds) {
        const n = describer.numPartitions(topicId);
        if (n === -1) throw unknownTopic(topicId);
        let subs = this.topicSubscribers.get(topicId);
        if (subs === undefined) {
          this.topicSubscribers.set(topicId, (subs = []));
          this.subscribedTopicIds.push(topicId);
          this.owners.set(topicId, new Int32Array(n).fill(-1));
        }
        subs.push(i);
      }
    });
  }

  build(): GroupAssignment {
    if (this.subscribedTopicIds.length === 0) return { members: new Map() };
    this.keepSubscribedPartitions();
    this.assignUnowned();
    this.balance();
    return { members: this.target };
  }

  private readonly topicOrder = (a: TopicId, b: TopicId): number => {
    const na = this.describer.numPartitions(a);
    const nb = this.describer.numPartitions(b);
    const sa = this.topicSubscribers.get(a)!.length;
    const sb = this.topicSubscribers.get(b)!.length;
    const byRatio = nb / sb - na / sa;
    if (byRatio !== 0) return byRatio < 0 ? -1 : 1;
    if (sa !== sb) return sa - sb;
    return compareTopicIds(a, b);
  };

  private readonly memberOrder = (a: number, b: number): number => this.sizes[a] - this.sizes[b] || a - b;

  /** Members keep what they own of topics they still subscribe to; the rest of their assignment goes. */
  private keepSubscribedPartitions(): void {
    this.memberIds.forEach((memberId, i) => {
      const old = this.groupSpec.memberAssignment(memberId);
      const subscribed = this.groupSpec.memberSubscription(memberId).subscribedTopicIds;
      let copy: Map<TopicId, Set<number>> | null = null;
      for (const [topicId, partitions] of old) {
        const owners = subscribed.has(topicId) ? this.owners.get(topicId) : undefined;
        if (owners === undefined) {
          (copy ??= copyAssignment(old)).delete(topicId);
          continue;
        }
        for (const p of partitions) {
          if (p >= 0 && p < owners.length) {
            owners[p] = i;
            this.sizes[i]++;
          } else {
            const s = (copy ??= copyAssignment(old)).get(topicId)!;
            s.delete(p);
            if (s.size === 0) copy.delete(topicId);
          }
        }
      }
      if (copy !== null) this.copied.add(memberId);
      this.target.set(memberId, copy ?? old);
    });
  }

  private assignUnowned(): void {
    const unowned = new Map<TopicId, number[]>();
    for (const topicId of this.subscribedTopicIds) {
      const owners = this.owners.get(topicId)!;
      const free: number[] = [];
      for (let p = 0; p < owners.length; p++) if (owners[p] === -1) free.push(p);
      if (free.length > 0) unowned.set(topicId, free);
    }
    const balancer = new MemberLoadBalancer(this.sizes, this.memberOrder);
    for (const topicId of [...unowned.keys()].sort(this.topicOrder)) {
      balancer.initialize(this.topicSubscribers.get(topicId)!);
      for (const p of unowned.get(topicId)!) this.assignPartition(topicId, p, balancer.nextLeastLoaded());
    }
  }

  private balance(): void {
    const topics = this.subscribedTopicIds.filter((t) => this.topicSubscribers.get(t)!.length >= 2).sort(this.topicOrder);
    if (topics.length === 0) return;
    const balancer = new MemberLoadBalancer(this.sizes, this.memberOrder);
    let lastMoved = -1;
    for (let round = 0; round < MAX_BALANCE_ROUNDS; round++) {
      for (let t = 0; t < topics.length; t++) {
        // A whole round since the last topic that moved anything: nothing more can move.
        if (t === lastMoved) return;
        const moved = this.balanceTopic(topics[t], balancer);
        if (moved > 0 || lastMoved === -1) lastMoved = t;
      }
    }
  }

  /** Moves partitions of one topic from its most to its least loaded subscribers; returns how many moved. */
  private balanceTopic(topicId: TopicId, balancer: MemberLoadBalancer): number {
    if (balancer.initialize(this.topicSubscribers.get(topicId)!) <= 1) return 0;
    const owners = this.owners.get(topicId)!;
    // The topic's partitions grouped by owner, so each owner's partitions are one range of the list.
    const partitions = Array.from({ length: owners.length }, (_, p) => p).sort((a, b) => owners[a] - owners[b] || a - b);
    const start = new Map<number, number>();
    const end = new Map<number, number>();
    partitions.forEach((p, i) => {
      if (!start.has(owners[p])) start.set(owners[p], i);
      end.set(owners[p], i + 1);
    });

    let moved = 0;
    while (!balancer.isBalanced()) {
      let giver = -1;
      for (;;) {
        giver = balancer.nextMostLoaded();
        if (giver === -1) break;
        const e = end.get(giver);
        if (e === undefined || e - start.get(giver)! <= 0) {
          balancer.excludeMostLoaded();
          continue;
        }
        break;
      }
      if (giver === -1) break;
      const e = end.get(giver)! - 1;
      end.set(giver, e);
      const taker = balancer.nextLeastLoaded();
      if (balancer.isBalanced()) break;
      this.assignPartition(topicId, partitions[e], taker);
      moved++;
    }
    return moved;
  }

  private mutableTarget(memberIdx: number): Map<TopicId, Set<number>> {
    const memberId = this.memberIds[memberIdx];
    const current = this.target.get(memberId)!;
    if (this.copied.has(memberId)) return current as Map<TopicId, Set<number>>;
    const copy = copyAssignment(current);
    this.target.set(memberId, copy);
    this.copied.add(memberId);
    return copy;
  }

  private assignPartition(topicId: TopicId, partition: number, memberIdx: number): void {
    const owners = this.owners.get(topicId)!;
    const previous = owners[partition];
    if (previous !== -1) {
      const a = this.mutableTarget(previous);
      const s = a.get(topicId);
      if (s !== undefined) {
        s.delete(partition);
        if (s.size === 0) a.delete(topicId);
      }
      owners[partition] = -1;
      this.sizes[previous]--;
    }
    const a = this.mutableTarget(memberIdx);
    let s = a.get(topicId);
    if (s === undefined) a.set(topicId, (s = new Set()));
    s.add(partition);
    owners[partition] = memberIdx;
    this.sizes[memberIdx]++;
  }
}

/**
 * The state of one topic's balancing step (Kafka's MemberAssignmentBalancer). The topic's
 * subscribers are sorted by load; a least loaded range grows rightwards from the start and a most
 * loaded range grows leftwards from the end. Takers are handed out round-robin within the least
 * loaded range, whose level rises by one per full pass (then it absorbs the members at that level);
 * givers likewise within the most loaded range, whose level falls by one per pass. The topic is
 * balanced once the two levels differ by at most one. A giver without partitions of the topic is
 * swapped to the end of the most loaded range and cut off.
 */
class MemberLoadBalancer {
  private sorted: number[] = [];
  private leastEnd = 0; // exclusive
  private leastLevel = -1;
  private nextLeast = 0;
  private mostStart = 0; // inclusive
  private mostEnd = 0; // exclusive
  private mostLevel = 1;
  private nextMost = -1;

  constructor(
    private readonly sizes: Int32Array,
    private readonly order: (a: number, b: number) => number,
  ) {}

  /** Starts over for these members; returns the load difference between the most and least loaded. */
  initialize(members: readonly number[]): number {
    if (members.length === 0) throw new Error('Cannot balance an empty subscriber list.');
    this.sorted = [...members].sort(this.order);
    const first = this.sizes[this.sorted[0]];
    const last = this.sizes[this.sorted[this.sorted.length - 1]];
    this.leastEnd = 0;
    this.leastLevel = first - 1;
    this.nextLeast = 0;
    this.mostStart = this.sorted.length;
    this.mostEnd = this.sorted.length;
    this.mostLevel = last + 1;
    this.nextMost = this.sorted.length - 1;
    return last - first;
  }

  /** The member to give the next partition to (assumes it gets one). */
  nextLeastLoaded(): number {
    if (this.nextLeast >= this.leastEnd) {
      this.leastLevel++;
      while (this.leastEnd < this.sorted.length && this.sizes[this.sorted[this.leastEnd]] === this.leastLevel) this.leastEnd++;
      this.nextLeast = 0;
    }
    return this.sorted[this.nextLeast++];
  }

  /** The member to take the next partition from (assumes it gives one), or -1 when none is left. */
  nextMostLoaded(): number {
    if (this.nextMost < this.mostStart) {
      if (this.mostEnd <= this.mostStart && this.mostStart > 0) {
        // Every member of the range was cut off: restart the level at the next member down so
        // the range is sure to grow.
        this.mostLevel = this.sizes[this.sorted[this.mostStart - 1]];
      } else {
        this.mostLevel--;
      }
      while (this.mostStart > 0 && this.sizes[this.sorted[this.mostStart - 1]] === this.mostLevel) this.mostStart--;
      this.nextMost = this.mostEnd - 1;
    }
    if (this.nextMost < 0) return -1;
    return this.sorted[this.nextMost--];
  }

  /** Cuts the member last returned by nextMostLoaded out of the most loaded range. */
  excludeMostLoaded(): void {
    const i = this.nextMost + 1;
    const m = this.sorted[i];
    this.sorted[i] = this.sorted[this.mostEnd - 1];
    this.sorted[this.mostEnd - 1] = m;
    this.mostEnd--;
  }

  isBalanced(): boolean {
    return this.mostLevel - this.leastLevel <= 1;
  }
}
