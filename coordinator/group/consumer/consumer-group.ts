/**
 * A KIP-848 consumer group as the coordinator holds it (Kafka's ConsumerGroup): its members, the
 * group epoch, the subscription metadata, the target assignment and its epoch, and who currently
 * owns each partition. Pure and I/O-free.
 *
 * The state changes only through `replay` of the records in consumer-group-records.ts, both for
 * records the heartbeat just committed to __consumer_offsets and for records read back when a
 * partition loads, so a reloaded group is the group that was running (same epochs, members,
 * assignments). Invariants:
 * - `staticMembers` maps each instance id to the member id that holds it in `members`.
 * - `partitionEpochs` holds, for every partition in some member's assigned or pending-revocation
 *   partitions, that member's epoch; a partition is in at most one member's current assignment.
 * - `numClassicProtocolMembers` counts the members with classic member metadata, and
 *   `classicProtocolCounts` counts, per protocol name, the classic members that support it.
 * - The state is derived (Kafka's maybeUpdateGroupState): Empty without members, Assigning while
 *   the group epoch is ahead of the target assignment epoch, Reconciling while a member is not
 *   reconciled to the target assignment epoch, Stable otherwise.
 * - Regular expressions (SubscribedTopicRegex) are resolved against the topics of the cluster
 *   whenever the subscription metadata is computed; nothing about them is persisted beyond the
 *   member's regex (Kafka 4.0 also keeps the resolved topics in a record this snapshot has no schema
 *   for). They are RE2 syntax matched against the whole topic name, with re2js, the JavaScript port
 *   of the RE2/J engine Kafka uses (`Pattern.compile(regex).matcher(topic).matches()`), so the same
 *   patterns are refused (lookarounds, backreferences) and match the same topics.
 */
import { EMPTY_ASSIGNMENT, type Assignment, type TopicId, type TopicMetadata } from './assignor';
import { MemberState, isReconciledTo, newConsumerGroupMember, updateMember, type ConsumerGroupMember } from './consumer-group-member';
import type { ConsumerGroupRecord } from './consumer-group-records';

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable' | 'Dead';

/** The member epoch a static member has after a temporary leave (ConsumerGroupHeartbeat epoch -2). */
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;
export const LEAVE_GROUP_MEMBER_EPOCH = -1;

/** What the group needs to know of the cluster's topics. */
export interface TopicsView {
  /** Every topic name and id with its partition count. */
  topics(): Iterable<{ name: string; id: TopicId; numPartitions: number }>;
  topic(name: string): { id: TopicId; numPartitions: number } | undefined;
  topicById(id: TopicId): { name: string } | undefined;
}

/** A compiled subscription regex. */
export interface TopicRegex {
  /** Whether the whole topic name matches (RE2/J's `matches()`). */
  matches(topic: string): boolean;
}

/** RE2/J's PatternSyntaxException: `description` is its getDescription(). */
export class TopicRegexSyntaxError extends Error {
  constructor(readonly description: string) {
    super(description);
  }
}

/** Compiles a SubscribedTopicRegex as Kafka does (RE2/J syntax); throws TopicRegexSyntaxError. */
export function compileTopicRegex(regex: string): TopicRegex {
  try {
    // re2js is loaded with the first regex subscription, not at every broker's start-up.
    const { RE2JS } = require('re2js') as typeof import('re2js');
    return RE2JS.compile(regex);
  } catch (err) {
    const e = err as { name?: string; error?: string; message?: string };
    if (e.name === 'RE2JSSyntaxException' || e.error !== undefined) throw new TopicRegexSyntaxError(e.error ?? e.message ?? String(err));
    throw err;
  }
}

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ConsumerGroupMember>();
  readonly staticMembers = new Map<string, string>();
  readonly targetAssignment = new Map<string, Assignment>();
  subscriptionMetadata: ReadonlyMap<string, TopicMetadata> = new Map();
  private readonly partitionEpochs = new Map<TopicId, Map<number, number>>();
  /** Set when topics changed since the subscription metadata was computed (Kafka's refresh deadline). */
  metadataRefreshRequested = true;
  /** Gone (deleted, or its partition unloaded): operations queued behind that find nothing. */
  dead = false;
  private readonly regexCache = new Map<string, TopicRegex | null>();
  private classicMembers = 0;
  private readonly classicProtocolCounts = new Map<string, number>();

  constructor(readonly groupId: string) {}

  /** How many members speak the classic protocol. */
  get numClassicProtocolMembers(): number {
    return this.classicMembers;
  }

  /**
   * Kafka's supportsClassicProtocols: a classic member may join with protocol type "consumer" and
   * at least one protocol every classic member already supports (any, when none is classic yet).
   */
  supportsClassicProtocols(protocolType: string, protocolNames: readonly string[]): boolean {
    if (protocolType !== 'consumer') return false;
    if (this.classicMembers === 0) return protocolNames.length > 0;
    return protocolNames.some((n) => (this.classicProtocolCounts.get(n) ?? 0) === this.classicMembers);
  }

  /** Whether every member but `memberId`, which speaks the consumer protocol, speaks the classic one. */
  allMembersUseClassicProtocolExcept(memberId: string): boolean {
    const m = this.members.get(memberId);
    return m !== undefined && m.classicMemberMetadata === null && this.classicMembers === this.members.size - 1;
  }

  /**
   * Kafka's waitingOnUnreleasedPartition: the member waits for a partition of its target that its
   * previous owner has not released yet.
   */
  waitingOnUnreleasedPartition(member: ConsumerGroupMember): boolean {
    if (member.state !== MemberState.UNRELEASED_PARTITIONS) return false;
    for (const [topicId, partitions] of this.targetAssignment.get(member.memberId) ?? EMPTY_ASSIGNMENT) {
      const assigned = member.assignedPartitions.get(topicId);
      for (const p of partitions) if (!assigned?.has(p) && this.currentPartitionEpoch(topicId, p) !== -1) return true;
    }
    return false;
  }

  private countClassic(m: ConsumerGroupMember, delta: number): void {
    if (m.classicMemberMetadata === null) return;
    this.classicMembers += delta;
    for (const p of m.classicMemberMetadata.supportedProtocols) {
      const n = (this.classicProtocolCounts.get(p.name) ?? 0) + delta;
      if (n === 0) this.classicProtocolCounts.delete(p.name);
      else this.classicProtocolCounts.set(p.name, n);
    }
  }

  get state(): ConsumerGroupState {
    if (this.dead) return 'Dead';
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch > this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) if (!isReconciledTo(m, this.assignmentEpoch)) return 'Reconciling';
    return 'Stable';
  }

  is(state: ConsumerGroupState): boolean {
    return this.state === state;
  }

  /** Always: its members speak the consumer protocol or embed it in the classic one (what OffsetDelete asks of a classic group too). */
  get usesConsumerProtocol(): boolean {
    return true;
  }

  isEmpty(): boolean {
    return this.members.size === 0;
  }

  member(memberId: string): ConsumerGroupMember | undefined {
    return this.members.get(memberId);
  }

  staticMember(instanceId: string): ConsumerGroupMember | undefined {
    const id = this.staticMembers.get(instanceId);
    return id === undefined ? undefined : this.members.get(id);
  }

  /** The epoch of the member owning the partition, -1 when none does. */
  currentPartitionEpoch(topicId: TopicId, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  /** Kafka's targetAssignment(memberId, instanceId): a static member's replacement starts from its predecessor's. */
  targetAssignmentOf(memberId: string, instanceId: string | null): Assignment {
    const own = this.targetAssignment.get(memberId);
    if (own !== undefined) return own;
    if (instanceId !== null) {
      const previous = this.staticMembers.get(instanceId);
      if (previous !== undefined) return this.targetAssignment.get(previous) ?? EMPTY_ASSIGNMENT;
    }
    return EMPTY_ASSIGNMENT;
  }

  /** The regex compiled, null when it is not valid. */
  regex(source: string): TopicRegex | null {
    let re = this.regexCache.get(source);
    if (re === undefined) {
      try {
        re = compileTopicRegex(source);
      } catch {
        re = null;
      }
      this.regexCache.set(source, re);
    }
    return re;
  }

  /**
   * The topic names a member effectively subscribes to: its names plus the topics of the cluster
   * its regex matches (internal topics never match, as Kafka resolves regexes).
   */
  effectiveSubscription(member: Pick<ConsumerGroupMember, 'subscribedTopicNames' | 'subscribedTopicRegex'>, topics: TopicsView): ReadonlySet<string> {
    if (member.subscribedTopicRegex === '') return member.subscribedTopicNames;
    const re = this.regex(member.subscribedTopicRegex);
    if (re === null) return member.subscribedTopicNames;
    const out = new Set(member.subscribedTopicNames);
    for (const t of topics.topics()) if (!t.name.startsWith('__') && re.matches(t.name)) out.add(t.name);
    return out;
  }

  /**
   * Kafka's computeSubscribedTopicNames + computeSubscriptionMetadata: the metadata of every topic
   * one of `members` (the group with a change applied, see `membersWith`) subscribes to, in name
   * order. Topics that do not exist are left out.
   */
  computeSubscriptionMetadata(members: ReadonlyMap<string, ConsumerGroupMember>, topics: TopicsView): Map<string, TopicMetadata> {
    const names = new Set<string>();
    for (const m of members.values()) for (const n of this.effectiveSubscription(m, topics)) names.add(n);
    const out = new Map<string, TopicMetadata>();
    for (const name of [...names].sort()) {
      const t = topics.topic(name);
      if (t !== undefined) out.set(name, { id: t.id, name, numPartitions: t.numPartitions });
    }
    return out;
  }

  /** The members without `removed` and with `added` (new or updated), in member order. */
  membersWith(removed: readonly string[], added: ConsumerGroupMember | null): Map<string, ConsumerGroupMember> {
    const out = new Map(this.members);
    for (const id of removed) out.delete(id);
    if (added !== null) out.set(added.memberId, added);
    return out;
  }

  /**
   * Kafka's computePreferredServerAssignor: the server assignor most of `members` asked for, ties
   * to the name first met; undefined when none asked.
   */
  preferredServerAssignor(members: ReadonlyMap<string, ConsumerGroupMember> = this.members): string | undefined {
    const counts = new Map<string, number>();
    for (const m of members.values()) {
      if (m.serverAssignorName !== null) counts.set(m.serverAssignorName, (counts.get(m.serverAssignorName) ?? 0) + 1);
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [name, n] of counts) {
      if (n > bestCount) {
        best = name;
        bestCount = n;
      }
    }
    return best;
  }

  /** Whether any member subscribes to `topic` (by name, or through its regex). */
  isSubscribedToTopic(topic: string): boolean {
    for (const m of this.members.values()) {
      if (m.subscribedTopicNames.has(topic)) return true;
      if (m.subscribedTopicRegex !== '' && this.regex(m.subscribedTopicRegex)?.matches(topic)) return true;
    }
    return false;
  }

  hasRegexSubscriptions(): boolean {
    for (const m of this.members.values()) if (m.subscribedTopicRegex !== '') return true;
    return false;
  }

  // ---- replay ---------------------------------------------------------------------------------

  /** Applies one committed record of this group (Kafka's GroupMetadataManager.replay overloads). */
  replay(r: ConsumerGroupRecord): void {
    switch (r.type) {
      case 'groupEpoch':
        this.groupEpoch = r.epoch;
        return;
      case 'subscriptionMetadata':
        this.subscriptionMetadata = r.topics;
        return;
      case 'memberSubscription': {
        const old = this.members.get(r.memberId);
        const next = old === undefined ? newConsumerGroupMember(r.memberId, r.subscription) : updateMember(old, r.subscription);
        this.putMember(old, next);
        return;
      }
      case 'targetAssignmentEpoch':
        this.assignmentEpoch = r.assignmentEpoch;
        return;
      case 'targetAssignmentMember':
        this.targetAssignment.set(r.memberId, r.partitions);
        return;
      case 'currentAssignment': {
        const old = this.members.get(r.member.memberId) ?? newConsumerGroupMember(r.member.memberId);
        const next = updateMember(old, {
          memberEpoch: r.member.memberEpoch,
          previousMemberEpoch: r.member.previousMemberEpoch,
          state: r.member.state,
          assignedPartitions: r.member.assignedPartitions,
          partitionsPendingRevocation: r.member.partitionsPendingRevocation,
        });
        this.putMember(this.members.get(r.member.memberId), next);
        return;
      }
      case 'tombstone':
        this.replayTombstone(r.keyVersion, r.memberId);
        return;
    }
  }

  private replayTombstone(keyVersion: number, memberId: string | null): void {
    switch (keyVersion) {
      case 3:
        this.groupEpoch = 0;
        return;
      case 4:
        this.subscriptionMetadata = new Map();
        return;
      case 5: {
        const old = memberId === null ? undefined : this.members.get(memberId);
        if (old === undefined) return;
        this.removePartitionEpochs(old);
        this.countClassic(old, -1);
        this.members.delete(old.memberId);
        if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === old.memberId) this.staticMembers.delete(old.instanceId);
        return;
      }
      case 6:
        this.assignmentEpoch = 0;
        return;
      case 7:
        if (memberId !== null) this.targetAssignment.delete(memberId);
        return;
      case 8: {
        // The member's assignment is gone; the member record itself goes with the v5 tombstone.
        const old = memberId === null ? undefined : this.members.get(memberId);
        if (old === undefined) return;
        this.putMember(old, updateMember(old, {
          memberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
          previousMemberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
          assignedPartitions: EMPTY_ASSIGNMENT,
          partitionsPendingRevocation: EMPTY_ASSIGNMENT,
        }));
        return;
      }
    }
  }

  private putMember(old: ConsumerGroupMember | undefined, next: ConsumerGroupMember): void {
    if (old !== undefined) {
      this.removePartitionEpochs(old);
      this.countClassic(old, -1);
      if (old.instanceId !== null && old.instanceId !== next.instanceId && this.staticMembers.get(old.instanceId) === old.memberId) {
        this.staticMembers.delete(old.instanceId);
      }
    }
    this.members.set(next.memberId, next);
    if (next.instanceId !== null) this.staticMembers.set(next.instanceId, next.memberId);
    this.addPartitionEpochs(next);
    this.countClassic(next, 1);
  }

  private removePartitionEpochs(m: ConsumerGroupMember): void {
    for (const a of [m.assignedPartitions, m.partitionsPendingRevocation]) {
      for (const [topicId, partitions] of a) {
        const epochs = this.partitionEpochs.get(topicId);
        if (epochs === undefined) continue;
        for (const p of partitions) if (epochs.get(p) === m.memberEpoch) epochs.delete(p);
        if (epochs.size === 0) this.partitionEpochs.delete(topicId);
      }
    }
  }

  private addPartitionEpochs(m: ConsumerGroupMember): void {
    for (const a of [m.assignedPartitions, m.partitionsPendingRevocation]) {
      for (const [topicId, partitions] of a) {
        let epochs = this.partitionEpochs.get(topicId);
        if (epochs === undefined) this.partitionEpochs.set(topicId, (epochs = new Map()));
        for (const p of partitions) epochs.set(p, m.memberEpoch);
      }
    }
  }
}
