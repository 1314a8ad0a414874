/**
 * Committed offsets of the groups this broker coordinates (Kafka's OffsetMetadataManager): who may
 * commit (OffsetCommit / TxnOffsetCommit validation against the classic group, or against the
 * KIP-848 consumer group's member epochs), what is written to __consumer_offsets, OffsetFetch
 * answers, OffsetDelete, and offsets.retention.minutes expiry.
 *
 * Owns the offsets map: group -> topic -> partition -> OffsetAndMetadata. It changes only after the
 * records that describe the change are committed to the log (or while a partition loads), so what
 * OffsetFetch answers is always what a restarted broker would load back. Methods run on the
 * group's serial queue, like GroupMetadataManager's.
 *
 * Transactional offsets (TxnOffsetCommit) are written as a transactional batch of the producer and
 * kept apart, per producer id, until the transaction's marker reaches the partition: COMMIT makes
 * them the committed offsets, ABORT drops them. Of two values for one partition, the one with the
 * higher record offset wins, so the outcome is the log's order whatever order the in-memory
 * updates happen in. While a partition has a pending transactional offset, OffsetFetch with
 * require_stable answers it with UNSTABLE_OFFSET_COMMIT and retention does not expire it.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { coordinatorAppendError } from '../coordinator-append-error';
import type { ClassicGroup } from './classic-group';
import {
  offsetCommitRecord,
  offsetCommitTombstone,
  type CoordinatorRecord,
  type OffsetAndMetadata,
} from './coordinator-records';
import type { CoordinatorContext, GroupMetadataManager, TransactionalProducer } from './group-metadata-manager';
import type { ConsumerGroupManager } from './consumer-group-manager';
import type { ConsumerGroup } from './consumer/consumer-group';
import { topicPartitionKey } from '../../common/topic-partition';

export interface CommitPartition {
  partitionIndex: number;
  committedOffset: bigint;
  committedLeaderEpoch: number;
  /** OffsetCommit v1 only; -1 = now. */
  commitTimestamp: bigint;
  committedMetadata: string | null;
}

export interface CommitParams {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  generationId: number;
  /** OffsetCommit v2-4; -1 = the broker's offsets.retention.minutes. */
  retentionTimeMs: bigint;
  apiVersion: number;
  topics: { name: string; partitions: CommitPartition[] }[];
}

export interface TxnCommitParams {
  groupId: string;
  producerId: bigint;
  producerEpoch: number;
  /** TxnOffsetCommit v3+; -1 / '' / null before. */
  memberId: string;
  groupInstanceId: string | null;
  generationId: number;
  topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[] }[];
}

export interface PartitionError {
  partitionIndex: number;
  errorCode: number;
}

export interface TopicPartitionErrors {
  name: string;
  partitions: PartitionError[];
}

export interface FetchedPartition {
  partitionIndex: number;
  committedOffset: bigint;
  committedLeaderEpoch: number;
  metadata: string;
  errorCode: number;
}

export interface FetchedTopic {
  name: string;
  partitions: FetchedPartition[];
}

/** Errors of a failed offset commit append, as the client should see them. */
export function commitAppendErrorToResponseError(code: number): number {
  return coordinatorAppendError(code, ErrorCode.INVALID_COMMIT_OFFSET_SIZE);
}

function allPartitions(topics: { name: string; partitions: { partitionIndex: number }[] }[], errorCode: number): TopicPartitionErrors[] {
  return topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) }));
}

export class OffsetMetadataManager {
  private readonly offsets = new Map<string, Map<string, Map<number, OffsetAndMetadata>>>();
  /** Transactional offsets whose marker has not arrived: producer id -> group -> tp key -> offset. */
  private readonly pendingTxnOffsets = new Map<bigint, Map<string, Map<string, { topic: string; partition: number; value: OffsetAndMetadata }>>>();
  /** The same, indexed for OffsetFetch require_stable: group -> tp key -> producer ids. */
  private readonly pendingTransactional = new Map<string, Map<string, Set<bigint>>>();

  private consumerGroups: ConsumerGroupManager | null = null;

  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly groups: GroupMetadataManager,
  ) {}

  /** The KIP-848 groups whose members' epochs commits are validated against. */
  attachConsumerGroups(consumerGroups: ConsumerGroupManager): void {
    this.consumerGroups = consumerGroups;
  }

  private consumerGroup(groupId: string): ConsumerGroup | undefined {
    return this.consumerGroups?.group(groupId);
  }

  hasOffsets(groupId: string): boolean {
    return (this.offsets.get(groupId)?.size ?? 0) > 0;
  }

  get(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.offsets.get(groupId)?.get(topic)?.get(partition);
  }

  /**
   * Applies one offset record (commit or tombstone), from a committed append or the log on load.
   * A record older (lower record offset) than the value in place changes nothing.
   */
  replay(groupId: string, topic: string, partition: number, value: OffsetAndMetadata | null, recordOffset?: bigint): void {
    const existing = this.get(groupId, topic, partition);
    const incoming = value?.recordOffset ?? recordOffset;
    if (existing?.recordOffset !== undefined && incoming !== undefined && incoming < existing.recordOffset) return;
    let byTopic = this.offsets.get(groupId);
    if (value === null) {
      const parts = byTopic?.get(topic);
      if (!parts) return;
      parts.delete(partition);
      if (parts.size === 0) byTopic!.delete(topic);
      if (byTopic!.size === 0) this.offsets.delete(groupId);
      return;
    }
    if (!byTopic) this.offsets.set(groupId, (byTopic = new Map()));
    let parts = byTopic.get(topic);
    if (!parts) byTopic.set(topic, (parts = new Map()));
    parts.set(partition, value);
  }

  /** A transactional offset of `producerId`, written to the log, waiting for its transaction's marker. */
  replayTransactional(producerId: bigint, groupId: string, topic: string, partition: number, value: OffsetAndMetadata): void {
    let byGroup = this.pendingTxnOffsets.get(producerId);
    if (!byGroup) this.pendingTxnOffsets.set(producerId, (byGroup = new Map()));
    let parts = byGroup.get(groupId);
    if (!parts) byGroup.set(groupId, (parts = new Map()));
    const key = topicPartitionKey(topic, partition);
    parts.set(key, { topic, partition, value });
    let index = this.pendingTransactional.get(groupId);
    if (!index) this.pendingTransactional.set(groupId, (index = new Map()));
    let pids = index.get(key);
    if (!pids) index.set(key, (pids = new Set()));
    pids.add(producerId);
  }

  /**
   * The marker of `producerId`'s transaction reached the group's partition: its pending offsets of
   * `groupId` become committed (COMMIT) or are dropped (ABORT). Returns how many were pending.
   */
  completeTransaction(producerId: bigint, groupId: string, commit: boolean): number {
    const byGroup = this.pendingTxnOffsets.get(producerId);
    const parts = byGroup?.get(groupId);
    if (!byGroup || !parts) return 0;
    byGroup.delete(groupId);
    if (byGroup.size === 0) this.pendingTxnOffsets.delete(producerId);
    const index = this.pendingTransactional.get(groupId);
    for (const [key, o] of parts) {
      const pids = index?.get(key);
      pids?.delete(producerId);
      if (pids && pids.size === 0) index!.delete(key);
      if (commit) this.replay(groupId, o.topic, o.partition, o.value);
    }
    if (index && index.size === 0) this.pendingTransactional.delete(groupId);
    return parts.size;
  }

  /** Groups with transactional offsets of `producerId` waiting for a marker. */
  groupsWithPendingTransaction(producerId: bigint): string[] {
    return [...(this.pendingTxnOffsets.get(producerId)?.keys() ?? [])];
  }

  hasPendingTransactionalOffsets(groupId: string): boolean {
    return (this.pendingTransactional.get(groupId)?.size ?? 0) > 0;
  }

  /** Drops everything of a group (partition unloaded). */
  forgetGroup(groupId: string): void {
    this.offsets.delete(groupId);
    this.pendingTransactional.delete(groupId);
    for (const [pid, byGroup] of this.pendingTxnOffsets) {
      byGroup.delete(groupId);
      if (byGroup.size === 0) this.pendingTxnOffsets.delete(pid);
    }
  }

  /** Groups with committed or pending transactional offsets. */
  groupIds(): string[] {
    const ids = new Set(this.offsets.keys());
    for (const id of this.pendingTransactional.keys()) ids.add(id);
    return [...ids];
  }

  // ---- OffsetCommit ---------------------------------------------------------------------------

  async commitOffsets(p: CommitParams): Promise<TopicPartitionErrors[]> {
    const cg = this.consumerGroup(p.groupId);
    if (cg !== undefined) {
      try {
        this.consumerGroups!.validateOffsetCommit(cg, p.memberId, p.generationId, false, p.apiVersion);
      } catch (err) {
        return allPartitions(p.topics, (err as KafkaError).code);
      }
      return this.writeCommits(p);
    }
    let group = this.groups.group(p.groupId);
    let created = false;
    if (!group) {
      if (p.generationId >= 0) {
        // A generation for a group that does not exist: an old member. v9+ says so explicitly.
        return allPartitions(p.topics, p.apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION);
      }
      // Generation -1: the admin client or a consumer managing its own partitions ("simple group").
      group = this.groups.getOrCreateGroup(p.groupId);
      created = true;
    }
    try {
      this.validateOffsetCommit(group, p);
    } catch (err) {
      if (created) this.groups.dropIfUnused(group, this.hasOffsets(p.groupId));
      return allPartitions(p.topics, (err as KafkaError).code);
    }
    // A commit keeps a classic member's session alive while it consumes.
    if (group.is('Stable') || group.is('PreparingRebalance')) {
      const member = group.member(p.memberId);
      if (member) this.groups.rescheduleHeartbeat(group, member);
    }
    const result = await this.writeCommits(p);
    if (created) this.groups.dropIfUnused(group, this.hasOffsets(p.groupId));
    return result;
  }

  /** Writes a validated commit and applies it once committed. */
  private async writeCommits(p: CommitParams): Promise<TopicPartitionErrors[]> {
    const now = this.ctx.now();
    const expireTimestampMs = p.retentionTimeMs === -1n ? null : now + Number(p.retentionTimeMs);
    const { records, applied, result } = this.commitRecords(p.groupId, p.topics, (part) => ({
      commitTimestampMs: part.commitTimestamp === -1n ? now : Number(part.commitTimestamp),
      expireTimestampMs,
    }));
    if (records.length > 0) {
      const { errorCode: err, baseOffset } = await this.ctx.appendWithOffset(p.groupId, records);
      if (err !== ErrorCode.NONE) {
        const mapped = commitAppendErrorToResponseError(err);
        for (const t of result) for (const part of t.partitions) if (part.errorCode === ErrorCode.NONE) part.errorCode = mapped;
        return result;
      }
      applied.forEach((a, i) => this.replay(p.groupId, a.topic, a.partition, { ...a.value, recordOffset: baseOffset + BigInt(i) }));
    }
    return result;
  }

  /**
   * The offset commit records of a request and the per-partition answers: metadata longer than
   * offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE (not written), the rest NONE so far.
   */
  private commitRecords<P extends { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }>(
    groupId: string,
    topics: { name: string; partitions: P[] }[],
    timestamps: (part: P) => { commitTimestampMs: number; expireTimestampMs: number | null },
  ): { records: CoordinatorRecord[]; applied: { topic: string; partition: number; value: OffsetAndMetadata }[]; result: TopicPartitionErrors[] } {
    const records: CoordinatorRecord[] = [];
    const applied: { topic: string; partition: number; value: OffsetAndMetadata }[] = [];
    const result: TopicPartitionErrors[] = topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((part) => {
        const metadata = part.committedMetadata ?? '';
        if (metadata.length > this.ctx.config.offsetMetadataMaxBytes) {
          return { partitionIndex: part.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
        }
        const value: OffsetAndMetadata = { committedOffset: part.committedOffset, leaderEpoch: part.committedLeaderEpoch, metadata, ...timestamps(part) };
        records.push(offsetCommitRecord(groupId, t.name, part.partitionIndex, value));
        applied.push({ topic: t.name, partition: part.partitionIndex, value });
        return { partitionIndex: part.partitionIndex, errorCode: ErrorCode.NONE };
      }),
    }));
    return { records, applied, result };
  }

  /**
   * Who may commit to a classic group (Kafka's ClassicGroup.validateOffsetCommit). Transactional
   * commits may come without member and generation (TxnOffsetCommit before v3) whatever the group's
   * state, and are not held back by a rebalance.
   */
  private validateOffsetCommit(group: ClassicGroup, p: { memberId: string; groupInstanceId: string | null; generationId: number }, isTransactional = false): void {
    if (group.is('Dead')) throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    // Generation -1 on an Empty group: the admin client or a group-less consumer.
    if (p.generationId < 0 && group.is('Empty')) return;
    if (p.generationId >= 0 || p.memberId !== '' || p.groupInstanceId !== null) {
      group.validateMember(p.memberId, p.groupInstanceId);
      if (p.generationId !== group.generationId) throw new KafkaError(ErrorCode.ILLEGAL_GENERATION);
    } else if (!isTransactional && !group.is('Empty')) {
      // No member id and no generation (v0): only an empty group accepts it.
      throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID);
    }
    if (!isTransactional && group.is('CompletingRebalance')) {
      // The member has its new generation but not its assignment yet.
      throw new KafkaError(ErrorCode.REBALANCE_IN_PROGRESS);
    }
  }

  // ---- TxnOffsetCommit ------------------------------------------------------------------------

  /**
   * Writes offsets as part of a producer's transaction (Kafka's commitTransactionalOffset): they
   * count only once the transaction commits. A group that does not exist is created Empty for
   * generation -1 (a simple group), else ILLEGAL_GENERATION.
   */
  async commitTransactionalOffsets(p: TxnCommitParams): Promise<TopicPartitionErrors[]> {
    const cg = this.consumerGroup(p.groupId);
    if (cg !== undefined) {
      try {
        this.consumerGroups!.validateOffsetCommit(cg, p.memberId, p.generationId, true, 9);
      } catch (err) {
        return allPartitions(p.topics, (err as KafkaError).code);
      }
      return this.writeTransactionalCommits(p);
    }
    let group = this.groups.group(p.groupId);
    let created = false;
    if (!group) {
      if (p.generationId >= 0) return allPartitions(p.topics, ErrorCode.ILLEGAL_GENERATION);
      group = this.groups.getOrCreateGroup(p.groupId);
      created = true;
    }
    const dropIfUnused = () => this.groups.dropIfUnused(group, this.hasOffsets(p.groupId) || this.hasPendingTransactionalOffsets(p.groupId));
    try {
      this.validateOffsetCommit(group, p, true);
    } catch (err) {
      if (created) dropIfUnused();
      return allPartitions(p.topics, (err as KafkaError).code);
    }
    const result = await this.writeTransactionalCommits(p);
    if (created) dropIfUnused();
    return result;
  }

  private async writeTransactionalCommits(p: TxnCommitParams): Promise<TopicPartitionErrors[]> {
    const now = this.ctx.now();
    const { records, applied, result } = this.commitRecords(p.groupId, p.topics, () => ({ commitTimestampMs: now, expireTimestampMs: null }));
    if (records.length > 0) {
      const txn: TransactionalProducer = { producerId: p.producerId, producerEpoch: p.producerEpoch };
      const { errorCode: err, baseOffset } = await this.ctx.appendWithOffset(p.groupId, records, txn);
      if (err !== ErrorCode.NONE) {
        const mapped = commitAppendErrorToResponseError(err);
        for (const t of result) for (const part of t.partitions) if (part.errorCode === ErrorCode.NONE) part.errorCode = mapped;
        return result;
      }
      applied.forEach((a, i) => this.replayTransactional(p.producerId, p.groupId, a.topic, a.partition, { ...a.value, recordOffset: baseOffset + BigInt(i) }));
    }
    return result;
  }

  // ---- OffsetFetch ----------------------------------------------------------------------------

  /**
   * The committed offsets asked for (-1 and "" for partitions without one), or every committed
   * offset of the group when `topics` is null. An unknown group has none.
   */
  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, requireStable: boolean): FetchedTopic[] {
    const group = this.groups.group(groupId);
    const live = (group !== undefined && !group.is('Dead')) || this.consumerGroup(groupId) !== undefined;
    const byTopic = live ? this.offsets.get(groupId) : undefined;
    const pending = requireStable ? this.pendingTransactional.get(groupId) : undefined;
    const answer = (topic: string, partition: number): FetchedPartition => {
      if (pending?.has(topicPartitionKey(topic, partition))) {
        return { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
      }
      const o = byTopic?.get(topic)?.get(partition);
      if (!o) return { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE };
      return {
        partitionIndex: partition,
        committedOffset: o.committedOffset,
        committedLeaderEpoch: o.leaderEpoch,
        metadata: o.metadata,
        errorCode: ErrorCode.NONE,
      };
    };
    if (topics !== null) {
      return topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => answer(t.name, p)) }));
    }
    if (!byTopic) return [];
    return [...byTopic.keys()].sort().map((topic) => ({
      name: topic,
      partitions: [...byTopic.get(topic)!.keys()].sort((a, b) => a - b).map((p) => answer(topic, p)),
    }));
  }

  // ---- OffsetDelete ---------------------------------------------------------------------------

  async deleteOffsets(
    groupId: string,
    topics: { name: string; partitions: { partitionIndex: number }[] }[],
  ): Promise<{ errorCode: number; topics: TopicPartitionErrors[] }> {
    const group = this.groups.group(groupId) ?? this.consumerGroup(groupId);
    if (!group || group.is('Dead')) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] };
    if (!group.is('Empty') && !group.usesConsumerProtocol) return { errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] };
    const records: CoordinatorRecord[] = [];
    const removed: { topic: string; partition: number }[] = [];
    const result = topics.map((t) => {
      if (group.isSubscribedToTopic(t.name)) {
        // Still consumed: deleting its offsets would make the members start over.
        return { name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC })) };
      }
      for (const p of t.partitions) {
        if (this.get(groupId, t.name, p.partitionIndex)) {
          records.push(offsetCommitTombstone(groupId, t.name, p.partitionIndex));
          removed.push({ topic: t.name, partition: p.partitionIndex });
        }
      }
      return { name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE })) };
    });
    if (records.length > 0) {
      const { errorCode: err, baseOffset } = await this.ctx.appendWithOffset(groupId, records);
      if (err !== ErrorCode.NONE) return { errorCode: commitAppendErrorToResponseError(err), topics: [] };
      removed.forEach((r, i) => this.replay(groupId, r.topic, r.partition, null, baseOffset + BigInt(i)));
    }
    return { errorCode: ErrorCode.NONE, topics: result };
  }

  /** Tombstones for every committed offset of a group (DeleteGroups). */
  tombstonesForGroup(groupId: string): CoordinatorRecord[] {
    const out: CoordinatorRecord[] = [];
    for (const [topic, parts] of this.offsets.get(groupId) ?? []) {
      for (const partition of parts.keys()) out.push(offsetCommitTombstone(groupId, topic, partition));
    }
    return out;
  }

  /** Tombstones for a group's offsets of deleted topics, and how to apply them once written. */
  tombstonesForTopics(groupId: string, topics: ReadonlySet<string>): { records: CoordinatorRecord[]; apply: () => void } {
    const records: CoordinatorRecord[] = [];
    const removed: { topic: string; partition: number }[] = [];
    for (const [topic, parts] of this.offsets.get(groupId) ?? []) {
      if (!topics.has(topic)) continue;
      for (const partition of parts.keys()) {
        records.push(offsetCommitTombstone(groupId, topic, partition));
        removed.push({ topic, partition });
      }
    }
    return { records, apply: () => removed.forEach((r) => this.replay(groupId, r.topic, r.partition, null)) };
  }

  // ---- expiry ---------------------------------------------------------------------------------

  /**
   * Offsets past offsets.retention.minutes (Kafka's expiration conditions): for an Empty group,
   * counted from when it became Empty (or, for records without that timestamp, the commit); for a
   * group without protocol type (a simple consumer), from each commit; for a Stable consumer group
   * with known subscriptions, from each commit, only for topics it no longer consumes; never for
   * other groups. An explicit expire timestamp (OffsetCommit v2-4) always wins.
   * Returns the tombstones, whether every offset of the group expired, and how to apply them.
   */
  /**
   * A consumer group's expired offsets (Kafka's ConsumerGroup.offsetExpirationCondition): counted
   * from each commit, only for topics no member subscribes to (all of them once the group is Empty).
   */
  expiredConsumerGroupOffsets(group: ConsumerGroup, now: number): { records: CoordinatorRecord[]; allExpired: boolean; apply: () => void } {
    const byTopic = this.offsets.get(group.groupId);
    if (!byTopic) return { records: [], allExpired: true, apply: () => undefined };
    const retention = this.ctx.config.offsetsRetentionMs;
    const pending = this.pendingTransactional.get(group.groupId);
    const records: CoordinatorRecord[] = [];
    const removed: { topic: string; partition: number }[] = [];
    let allExpired = true;
    for (const [topic, parts] of byTopic) {
      if (group.isSubscribedToTopic(topic)) {
        allExpired = false;
        continue;
      }
      for (const [partition, o] of parts) {
        const expired = o.expireTimestampMs !== null ? now >= o.expireTimestampMs : now - o.commitTimestampMs >= retention;
        if (expired && !pending?.has(topicPartitionKey(topic, partition))) {
          records.push(offsetCommitTombstone(group.groupId, topic, partition));
          removed.push({ topic, partition });
        } else {
          allExpired = false;
        }
      }
    }
    return { records, allExpired, apply: () => removed.forEach((r) => this.replay(group.groupId, r.topic, r.partition, null)) };
  }

  expiredOffsets(group: ClassicGroup, now: number): { records: CoordinatorRecord[]; allExpired: boolean; apply: () => void } {
    const byTopic = this.offsets.get(group.groupId);
    if (!byTopic) return { records: [], allExpired: true, apply: () => undefined };
    let base: ((o: OffsetAndMetadata) => number) | null = null;
    if (group.protocolType !== null) {
      if (group.is('Empty')) {
        const since = group.currentStateTimestamp;
        base = (o) => since ?? o.commitTimestampMs;
      } else if (group.usesConsumerProtocol && group.subscribedTopics !== null && group.is('Stable')) {
        base = (o) => o.commitTimestampMs;
      }
    } else {
      base = (o) => o.commitTimestampMs;
    }
    if (base === null) return { records: [], allExpired: false, apply: () => undefined };
    const retention = this.ctx.config.offsetsRetentionMs;
    const pending = this.pendingTransactional.get(group.groupId);
    const records: CoordinatorRecord[] = [];
    const removed: { topic: string; partition: number }[] = [];
    let allExpired = true;
    for (const [topic, parts] of byTopic) {
      if (group.isSubscribedToTopic(topic) && !group.is('Empty')) {
        allExpired = false;
        continue;
      }
      for (const [partition, o] of parts) {
        const expired = o.expireTimestampMs !== null ? now >= o.expireTimestampMs : now - base(o) >= retention;
        if (expired && !pending?.has(topicPartitionKey(topic, partition))) {
          records.push(offsetCommitTombstone(group.groupId, topic, partition));
          removed.push({ topic, partition });
        } else {
          allExpired = false;
        }
      }
    }
    return { records, allExpired, apply: () => removed.forEach((r) => this.replay(group.groupId, r.topic, r.partition, null)) };
  }
}
