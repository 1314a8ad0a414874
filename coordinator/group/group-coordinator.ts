/**
 * GroupCoordinator: the group coordinator of one broker (Kafka's GroupCoordinatorService with its
 * shards folded into one object). Handlers call it; it decides whether this broker coordinates a
 * group, queues the request on the group, and delegates to GroupMetadataManager (classic groups:
 * membership, rebalances), ConsumerGroupManager (KIP-848 consumer groups: ConsumerGroupHeartbeat,
 * ConsumerGroupDescribe) and OffsetMetadataManager (offsets). A group id is a classic group or a
 * consumer group, never both at once. A consumer group's dynamic configs (GROUP config resources,
 * `groupConfig`: the broker's metadata cache) override its session timeout and heartbeat interval.
 *
 * Ownership follows __consumer_offsets leadership: a group belongs to partition
 * `abs(hash(groupId)) % partitions`, and this broker coordinates it while it leads that partition.
 * On becoming leader (a metadata delta) the partition's log is replayed into memory, during which
 * its groups answer COORDINATOR_LOAD_IN_PROGRESS; on losing it the groups are dropped and parked
 * requests answered NOT_COORDINATOR. Groups of partitions this broker does not lead get
 * NOT_COORDINATOR, and everything gets COORDINATOR_NOT_AVAILABLE before startup / after shutdown.
 *
 * TxnOffsetCommit v5 (KIP-890 part 2): the producer sent no AddOffsetsToTxn, so before the offsets
 * are written the group's __consumer_offsets partition is added to its transaction through the
 * TransactionVerifier (AddPartitionsToTxn v5 to the transaction coordinator, outside the group's
 * queue), with Kafka's error mapping (GroupMetadataManager.maybeConvertOffsetCommitError).
 *
 * Concurrency: every operation and timer task on a group runs on that group's SerialQueue, so a
 * group's state changes one operation at a time, including across the awaits of a log append.
 * Appends check, after the write, that the partition is still led by this broker with the same
 * loading epoch; otherwise the result is NOT_COORDINATOR and nothing is applied in memory.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control-record';
import { SerialQueue } from '../../common/serial-queue';
import type { MetadataCache, MetadataDelta } from '../../metadata/metadata-cache';
import type { ProducePartitionRequest, ProducePartitionResult, TransactionVerifier } from '../../replication/replica-manager';
import type { Partition } from '../../replication/partition';
import type { Logger } from '../../common/logger';
import { OFFSETS_TOPIC } from '../../config/kafka-config';
import { coordinatorAppendError } from '../coordinator-append-error';
import { consumerGroupOverrides } from '../../config/group-configs';
import { topicPartitionKey } from '../../common/topic-partition';
import { ClassicGroup, joinError, syncError, type JoinResult, type SyncResult } from './classic-group';
import { CoordinatorTimer } from './coordinator-timer';
import {
  groupMetadataTombstone,
  parseCoordinatorRecord,
  type CoordinatorRecord,
  type OffsetAndMetadata,
} from './coordinator-records';
import type { GroupCoordinatorConfig } from './group-coordinator-config';
import { partitionForGroup } from './group-partition';
import {
  appendErrorToResponseError,
  GroupMetadataManager,
  type CoordinatorContext,
  type JoinGroupParams,
  type LeaveMemberResult,
  type SyncGroupParams,
  type TransactionalProducer,
} from './group-metadata-manager';
import {
  OffsetMetadataManager,
  type CommitParams,
  type TxnCommitParams,
  type FetchedTopic,
  type TopicPartitionErrors,
} from './offset-metadata-manager';
import type { GroupMetadataValue } from '../../protocol/generated/records/group-coordinator/group-metadata-value';
import { ConsumerGroupManager, describedConsumerGroupError, heartbeatError, type ConsumerGroupHeartbeatParams, type ConsumerGroupHeartbeatResult, type DescribedConsumerGroup } from './consumer-group-manager';
import { resolveConsumerGroupAssignors } from './consumer/assignors';
import { DEFAULT_CONSUMER_GROUP_CONFIG } from './group-coordinator-config';
import type { TopicsView } from './consumer/consumer-group';

/** What the coordinator needs of the replica manager (a narrow seam for tests). */
export interface CoordinatorReplicaManager {
  getPartition(topic: string, partition: number): Partition | undefined;
  appendRecords(opts: {
    timeoutMs: number;
    requiredAcks: number;
    entries: ProducePartitionRequest[];
    internalTopicsAllowed: boolean;
  }): Promise<ProducePartitionResult[]>;
}

export interface GroupCoordinatorOptions {
  nodeId: number;
  config: GroupCoordinatorConfig;
  logger: Logger;
  replicaManager: CoordinatorReplicaManager;
  metadata: MetadataCache;
  /** Creates __consumer_offsets (with Kafka's internal topic settings); resolves NONE if it exists. */
  createOffsetsTopic(): Promise<number>;
  /**
   * A group's dynamic configs (the ConfigRecords of its GROUP resource, as the metadata cache holds
   * them); their consumer.* values override the group.consumer.* settings. Absent: none.
   */
  groupConfig?: (groupId: string) => ReadonlyMap<string, string>;
  /** Adds the offsets partition to a TxnOffsetCommit v5 producer's transaction (absent: those commits fail). */
  transactionVerifier?: TransactionVerifier;
  now?: () => number;
}

/**
 * A failed addition of the offsets partition to the transaction as TxnOffsetCommit answers it: the
 * AddPartitionsToTxnManager's mapping (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH) and then Kafka's
 * maybeConvertOffsetCommitError (NETWORK_EXCEPTION, which older clients may not retry, becomes
 * COORDINATOR_LOAD_IN_PROGRESS; the append errors their coordinator equivalents).
 */
export function txnOffsetCommitVerificationError(code: number): number {
  if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (code === ErrorCode.NETWORK_EXCEPTION) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  return coordinatorAppendError(code, ErrorCode.INVALID_COMMIT_OFFSET_SIZE);
}

export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  memberMetadata: Buffer;
  memberAssignment: Buffer;
}

export interface DescribedGroup {
  groupId: string;
  errorCode: number;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: DescribedMember[];
}

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: string;
  groupType: string;
}

/** Coordinator key types (FindCoordinator). */
export const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;

interface PartitionState {
  state: 'loading' | 'loaded';
  leaderEpoch: number;
}

export class GroupCoordinator {
  private readonly log: Logger;
  private readonly config: GroupCoordinatorConfig;
  private readonly now: () => number;
  readonly timer: CoordinatorTimer;
  readonly groupManager: GroupMetadataManager;
  readonly offsetManager: OffsetMetadataManager;
  readonly consumerGroups: ConsumerGroupManager;
  private readonly partitions = new Map<number, PartitionState>();
  private readonly queues = new Map<string, SerialQueue>();
  private readonly loads = new Set<Promise<void>>();
  private active = false;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: GroupCoordinatorOptions) {
    this.log = opts.logger;
    this.config = opts.config;
    this.now = opts.now ?? Date.now;
    this.timer = new CoordinatorTimer((groupId, task) => {
      void this.inGroupQueue(groupId, async () => {
        if (this.groupStatus(groupId) !== ErrorCode.NONE) return;
        await task();
      }).catch((err) => this.log.error('coordinator timer task failed', { groupId, err }));
    });
    const ctx: CoordinatorContext = {
      config: this.config,
      log: this.log,
      timer: this.timer,
      now: () => this.now(),
      append: (groupId, records) => this.append(groupId, records),
      appendWithOffset: (groupId, records, txn) => this.appendWithOffset(groupId, records, txn),
    };
    this.groupManager = new GroupMetadataManager(ctx);
    this.offsetManager = new OffsetMetadataManager(ctx, this.groupManager);
    const consumer = this.config.consumer ?? DEFAULT_CONSUMER_GROUP_CONFIG;
    const metadata = opts.metadata;
    const topics: TopicsView = {
      *topics() {
        for (const t of metadata.topics()) yield { name: t.name, id: t.topicId, numPartitions: t.partitions.size };
      },
      topic: (name) => {
        const t = metadata.topic(name);
        return t === undefined ? undefined : { id: t.topicId, numPartitions: t.partitions.size };
      },
      topicById: (id) => metadata.topicById(id),
    };
    this.consumerGroups = new ConsumerGroupManager(
      ctx,
      {
        sessionTimeoutMs: consumer.sessionTimeoutMs,
        heartbeatIntervalMs: consumer.heartbeatIntervalMs,
        maxSize: consumer.maxSize,
        assignors: new Map(resolveConsumerGroupAssignors(consumer.assignors).map((a) => [a.name(), a])),
        migrationPolicy: consumer.migrationPolicy,
        groupConfig: opts.groupConfig ? (groupId) => consumerGroupOverrides(opts.groupConfig!(groupId)) : undefined,
      },
      this.groupManager,
      topics,
    );
    this.offsetManager.attachConsumerGroups(this.consumerGroups);
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  startup(): void {
    this.active = true;
    this.expiryTimer = setInterval(() => {
      void this.expireOffsets().catch((err) => this.log.error('offset expiration failed', { err }));
    }, this.config.offsetsRetentionCheckIntervalMs);
    this.expiryTimer.unref();
  }

  /** Stops timers, answers parked requests, and waits for in-flight group operations. */
  async shutdown(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.timer.cancelAll();
    for (const p of [...this.partitions.keys()]) this.unloadPartition(p);
    await Promise.all([...this.loads]);
    await Promise.all([...this.queues.values()].map((q) => q.drain()));
    this.timer.cancelAll();
  }

  get isActive(): boolean {
    return this.active;
  }

  // ---- ownership ------------------------------------------------------------------------------

  /** __consumer_offsets' partition count: the topic's real count once it exists. */
  numPartitions(): number {
    return this.opts.metadata.topic(OFFSETS_TOPIC)?.partitions.size || this.config.offsetsTopicNumPartitions;
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.numPartitions());
  }

  /** How many __consumer_offsets partitions this broker coordinates, by state (metrics). */
  partitionStates(): { loading: number; active: number } {
    let loading = 0;
    for (const st of this.partitions.values()) if (st.state === 'loading') loading++;
    return { loading, active: this.partitions.size - loading };
  }

  /** NONE if this broker serves the group now, else why not. */
  groupStatus(groupId: string): number {
    if (!this.active) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const st = this.partitions.get(this.partitionFor(groupId));
    if (!st) return ErrorCode.NOT_COORDINATOR;
    return st.state === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
  }

  /** Reacts to __consumer_offsets leadership changes and to deleted topics. */
  onMetadataDelta(delta: MetadataDelta): void {
    for (const p of delta.changedPartitions) {
      if (p.topic !== OFFSETS_TOPIC) continue;
      if (p.leader === this.opts.nodeId) this.onElection(p.partition, p.leaderEpoch);
      else if (this.partitions.has(p.partition)) this.onResignation(p.partition);
    }
    const deleted = new Set<string>();
    for (const t of delta.removedTopics) {
      if (t.name === OFFSETS_TOPIC) {
        for (const p of [...this.partitions.keys()]) this.onResignation(p);
      } else {
        deleted.add(t.name);
      }
    }
    if (deleted.size > 0) this.onTopicsDeleted(deleted);
    const changed = new Set(deleted);
    for (const p of delta.changedPartitions) if (p.topic !== OFFSETS_TOPIC) changed.add(p.topic);
    if (changed.size > 0) this.consumerGroups.onTopicsChanged(changed);
  }

  private onElection(partition: number, leaderEpoch: number): void {
    const current = this.partitions.get(partition);
    if (current && current.leaderEpoch === leaderEpoch) return;
    if (current) this.unloadPartition(partition);
    this.log.info(`elected group coordinator for ${OFFSETS_TOPIC}-${partition} (leader epoch ${leaderEpoch}); loading`);
    const st: PartitionState = { state: 'loading', leaderEpoch };
    this.partitions.set(partition, st);
    const load = this.loadPartition(partition, st).finally(() => this.loads.delete(load));
    this.loads.add(load);
  }

  private onResignation(partition: number): void {
    this.log.info(`resigned as group coordinator for ${OFFSETS_TOPIC}-${partition}`);
    this.unloadPartition(partition);
  }

  private groupsOfPartition(partition: number): Set<string> {
    const ids = new Set<string>();
    for (const id of this.groupManager.groups.keys()) if (this.partitionFor(id) === partition) ids.add(id);
    for (const id of this.offsetManager.groupIds()) if (this.partitionFor(id) === partition) ids.add(id);
    for (const id of this.consumerGroups.groups.keys()) if (this.partitionFor(id) === partition) ids.add(id);
    return ids;
  }

  private unloadPartition(partition: number): void {
    if (!this.partitions.delete(partition)) return;
    const ids = this.groupsOfPartition(partition);
    this.timer.cancelGroups(ids);
    for (const id of ids) {
      const g = this.groupManager.group(id);
      if (g) this.groupManager.onUnloaded(g);
      const cg = this.consumerGroups.group(id);
      if (cg) this.consumerGroups.remove(cg);
      this.offsetManager.forgetGroup(id);
    }
  }

  /**
   * Replays the partition's log (log start to log end) into memory: offset commits and tombstones,
   * classic group metadata and tombstones, KIP-848 consumer group records (key versions 3-8, replayed
   * in log order into ConsumerGroupManager); transactional offset commits count once their COMMIT
   * marker is read. Yields to the event loop between reads so a long log does not stall the broker.
   */
  private async loadPartition(partition: number, st: PartitionState): Promise<void> {
    const t0 = Date.now();
    const stillCurrent = () => this.partitions.get(partition) === st;
    const groupValues = new Map<string, GroupMetadataValue | null>();
    let records = 0;
    try {
      const p = this.opts.replicaManager.getPartition(OFFSETS_TOPIC, partition);
      if (!p) throw new Error(`no local replica of ${OFFSETS_TOPIC}-${partition}`);
      // p.log is read at each step: a replica move (AlterReplicaLogDirs) may swap the log between reads.
      let offset = p.log.logStartOffset;
      const end = p.log.logEndOffset;
      while (offset < end) {
        if (!stillCurrent()) return;
        const info = p.log.read(offset, this.config.loadBufferSize, { isolation: 'LOG_END', minOneMessage: true });
        if (info.sizeInBytes === 0) break;
        let next = offset;
        for (const chunk of info.records) {
          for (const batch of splitBatches(chunk)) {
            next = batch.nextOffset;
            if (batch.isControlBatch) {
              const marker = readRecords(batch)[0];
              const type = marker ? parseControlRecordType(marker.key) : ControlRecordType.UNKNOWN;
              if (type !== ControlRecordType.COMMIT && type !== ControlRecordType.ABORT) continue;
              for (const groupId of this.offsetManager.groupsWithPendingTransaction(batch.producerId)) {
                if (this.partitionFor(groupId) === partition) this.offsetManager.completeTransaction(batch.producerId, groupId, type === ControlRecordType.COMMIT);
              }
              continue;
            }
            for (const rec of readRecords(batch)) {
              records++;
              let parsed;
              try {
                parsed = parseCoordinatorRecord(rec.key, rec.value);
              } catch (err) {
                this.log.warn(`skipping an unreadable record at ${OFFSETS_TOPIC}-${partition}@${rec.offset}`, { err: (err as Error).message });
                continue;
              }
              if (parsed.type === 'offset') {
                const { group, topic, partition: part } = parsed.key;
                const value = parsed.value === null ? null : { ...parsed.value, recordOffset: rec.offset };
                if (batch.isTransactional && value !== null) {
                  this.offsetManager.replayTransactional(batch.producerId, group, topic, part, value);
                } else {
                  this.offsetManager.replay(group, topic, part, value, rec.offset);
                }
              } else if (parsed.type === 'group') {
                groupValues.set(parsed.groupId, parsed.value);
              } else if (parsed.type === 'consumer') {
                this.consumerGroups.replay(parsed.record);
              }
            }
          }
        }
        if (next <= offset) break;
        offset = next;
        await yieldToEventLoop();
      }
      if (!stillCurrent()) return;
      // Groups with a metadata record, then groups that only have offsets (simple consumers).
      const now = () => this.now();
      for (const [groupId, value] of groupValues) {
        if (value === null) continue;
        this.groupManager.groups.set(groupId, ClassicGroup.fromRecord(groupId, value, now));
      }
      for (const groupId of this.offsetManager.groupIds()) {
        if (this.partitionFor(groupId) !== partition || this.groupManager.groups.has(groupId) || this.consumerGroups.groups.has(groupId)) continue;
        this.groupManager.groups.set(groupId, new ClassicGroup(groupId, 'Empty', now, { currentStateTimestamp: null }));
      }
      for (const [groupId, value] of groupValues) {
        const g = value !== null ? this.groupManager.group(groupId) : undefined;
        if (g) this.groupManager.onLoaded(g);
      }
      let consumerGroups = 0;
      for (const cg of this.consumerGroups.groups.values()) {
        if (this.partitionFor(cg.groupId) !== partition) continue;
        this.consumerGroups.onLoaded(cg);
        consumerGroups++;
      }
      st.state = 'loaded';
      this.log.info(`loaded ${OFFSETS_TOPIC}-${partition} in ${Date.now() - t0} ms`, {
        records,
        groups: [...groupValues.values()].filter((v) => v !== null).length,
        consumerGroups,
      });
    } catch (err) {
      this.log.error(`failed to load ${OFFSETS_TOPIC}-${partition}; its groups stay unavailable here`, { err });
      if (stillCurrent()) this.unloadPartition(partition);
    }
  }

  // ---- plumbing -------------------------------------------------------------------------------

  private inGroupQueue<T>(groupId: string, task: () => Promise<T> | T): Promise<T> {
    let q = this.queues.get(groupId);
    if (!q) this.queues.set(groupId, (q = new SerialQueue()));
    const queue = q;
    return queue.run(task).finally(() => {
      if (queue.pending === 0 && this.queues.get(groupId) === queue) this.queues.delete(groupId);
    });
  }

  /** Runs `task` on the group's queue once this broker is known to serve the group. */
  private withGroup<T>(groupId: string, onError: (errorCode: number) => T, task: () => Promise<T> | T): Promise<T> {
    return this.inGroupQueue(groupId, () => {
      const status = this.groupStatus(groupId);
      return status !== ErrorCode.NONE ? onError(status) : task();
    });
  }

  private async append(groupId: string, records: CoordinatorRecord[]): Promise<number> {
    return (await this.appendWithOffset(groupId, records)).errorCode;
  }

  /** Appends to the group's partition (acks=-1); `txn`: as a transactional batch of that producer. */
  private async appendWithOffset(groupId: string, records: CoordinatorRecord[], txn?: TransactionalProducer): Promise<{ errorCode: number; baseOffset: bigint }> {
    const partition = this.partitionFor(groupId);
    const st = this.partitions.get(partition);
    if (!st || st.state !== 'loaded' || !this.active) return { errorCode: ErrorCode.NOT_COORDINATOR, baseOffset: -1n };
    const batch = buildRecordBatch(
      records.map((r) => ({ key: r.key, value: r.value })),
      txn
        ? { compression: this.config.compression, producerId: txn.producerId, producerEpoch: txn.producerEpoch, isTransactional: true }
        : { compression: this.config.compression },
    );
    const [res] = await this.opts.replicaManager.appendRecords({
      timeoutMs: this.config.offsetCommitTimeoutMs,
      requiredAcks: -1,
      entries: [{ topic: OFFSETS_TOPIC, partition, records: batch }],
      internalTopicsAllowed: true,
    });
    if (this.partitions.get(partition) !== st) return { errorCode: ErrorCode.NOT_COORDINATOR, baseOffset: -1n };
    if (res.errorCode !== ErrorCode.NONE) {
      this.log.warn(`append to ${OFFSETS_TOPIC}-${partition} failed`, { groupId, error: res.errorCode, message: res.errorMessage });
    }
    return { errorCode: res.errorCode, baseOffset: res.baseOffset };
  }

  // ---- FindCoordinator ------------------------------------------------------------------------

  /**
   * The coordinator of a group: the leader of its __consumer_offsets partition. The topic is
   * created on first use (Kafka answers COORDINATOR_NOT_AVAILABLE while it creates it; krill creates
   * it through the controller, waits until this broker's metadata has it, and answers at once).
   */
  async findGroupCoordinator(groupId: string): Promise<{ errorCode: number; errorMessage: string | null; nodeId: number }> {
    const none = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, nodeId: -1 });
    if (!this.active) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
    if (!this.opts.metadata.topic(OFFSETS_TOPIC)) {
      const err = await this.opts.createOffsetsTopic();
      if (err !== ErrorCode.NONE) {
        this.log.warn(`could not create ${OFFSETS_TOPIC}`, { error: err });
        return none(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
      }
    }
    const topic = this.opts.metadata.topic(OFFSETS_TOPIC);
    const p = topic?.partitions.get(this.partitionFor(groupId));
    if (!p || p.leader < 0) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
    return { errorCode: ErrorCode.NONE, errorMessage: null, nodeId: p.leader };
  }

  // ---- group membership -----------------------------------------------------------------------

  async joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    if (!this.active) return joinError(p.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (p.groupId === '') return joinError(p.memberId, ErrorCode.INVALID_GROUP_ID);
    if (p.sessionTimeoutMs < this.config.minSessionTimeoutMs || p.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return joinError(p.memberId, ErrorCode.INVALID_SESSION_TIMEOUT);
    }
    const pending = await this.withGroup(
      p.groupId,
      (code) => ({ response: Promise.resolve(joinError(p.memberId, code)) }),
      async () => {
        const cg = this.consumerGroups.group(p.groupId);
        if (cg) {
          // A consumer group with members takes the classic member in (Kafka's
          // classicGroupJoinToConsumerGroup); an empty one gives way to a classic group.
          if (!cg.isEmpty()) return { response: Promise.resolve(await this.consumerGroups.classicJoin(p)) };
          const err = await this.append(p.groupId, this.consumerGroups.groupTombstones(cg));
          if (err !== ErrorCode.NONE) return { response: Promise.resolve(joinError(p.memberId, appendErrorToResponseError(err))) };
          this.consumerGroups.remove(cg);
          this.log.info(`deleted the empty consumer group ${p.groupId}: a classic member joins under its id`);
        }
        return this.groupManager.joinGroup(p, this.offsetManager.hasOffsets(p.groupId));
      },
    );
    return pending.response;
  }

  // ---- KIP-848 consumer groups ----------------------------------------------------------------

  consumerGroupHeartbeat(p: ConsumerGroupHeartbeatParams): Promise<ConsumerGroupHeartbeatResult> {
    if (!this.active) return Promise.resolve(heartbeatError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    try {
      this.consumerGroups.validateRequest(p);
    } catch (err) {
      if (err instanceof KafkaError) return Promise.resolve(heartbeatError(err.code, err.message));
      throw err;
    }
    return this.withGroup(p.groupId, (code) => heartbeatError(code), () => this.consumerGroups.heartbeat(p));
  }

  consumerGroupDescribe(groupId: string): Promise<DescribedConsumerGroup> {
    const fail = (errorCode: number, errorMessage: string | null = null): DescribedConsumerGroup => describedConsumerGroupError(groupId, errorCode, errorMessage);
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (groupId === '') return Promise.resolve(fail(ErrorCode.INVALID_GROUP_ID));
    return this.withGroup(groupId, (code) => fail(code), () => this.consumerGroups.describe(groupId));
  }

  async syncGroup(p: SyncGroupParams): Promise<SyncResult> {
    if (!this.active) return syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (p.groupId === '') return syncError(ErrorCode.INVALID_GROUP_ID);
    const pending = await this.withGroup(
      p.groupId,
      // A loading coordinator has lost the rebalance in progress: rejoin (older clients do not
      // know COORDINATOR_LOAD_IN_PROGRESS here).
      (code) => ({ response: Promise.resolve(syncError(code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.REBALANCE_IN_PROGRESS : code)) }),
      () => {
        if (this.consumerGroups.group(p.groupId)) return { response: Promise.resolve(this.consumerGroups.classicSync(p)) };
        return this.groupManager.syncGroup(p);
      },
    );
    return pending.response;
  }

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): Promise<number> {
    if (!this.active) return Promise.resolve(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (groupId === '') return Promise.resolve(ErrorCode.INVALID_GROUP_ID);
    return this.withGroup(
      groupId,
      // Still loading: the member cannot be checked yet, so it is not failed either.
      (code) => (code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.NONE : code),
      () =>
        this.consumerGroups.group(groupId)
          ? this.consumerGroups.classicHeartbeat(groupId, memberId, groupInstanceId, generationId)
          : this.groupManager.heartbeat(groupId, memberId, groupInstanceId, generationId),
    );
  }

  leaveGroup(
    groupId: string,
    members: { memberId: string; groupInstanceId: string | null; reason: string | null }[],
  ): Promise<{ errorCode: number; members: LeaveMemberResult[] }> {
    const fail = (errorCode: number) => ({ errorCode, members: [] as LeaveMemberResult[] });
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (groupId === '') return Promise.resolve(fail(ErrorCode.INVALID_GROUP_ID));
    return this.withGroup(groupId, fail, () =>
      this.consumerGroups.group(groupId) ? this.consumerGroups.classicLeave(groupId, members) : this.groupManager.leaveGroup(groupId, members),
    );
  }

  // ---- offsets --------------------------------------------------------------------------------

  /** Commits offsets; the caller has already answered partitions of unknown topics. */
  commitOffsets(p: CommitParams): Promise<TopicPartitionErrors[]> {
    const fail = (errorCode: number): TopicPartitionErrors[] =>
      p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode })) }));
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    return this.withGroup(p.groupId, fail, () => this.offsetManager.commitOffsets(p));
  }

  /**
   * TxnOffsetCommit: offsets written as part of the producer's transaction. `addToTransaction`
   * (v5): the producer's transactional id; the group's offsets partition joins its transaction
   * first (the group's status is checked before, and again when the offsets are written).
   */
  async commitTransactionalOffsets(p: TxnCommitParams, addToTransaction?: string): Promise<TopicPartitionErrors[]> {
    const fail = (errorCode: number): TopicPartitionErrors[] =>
      p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode })) }));
    if (!this.active) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (p.groupId === '') return fail(ErrorCode.INVALID_GROUP_ID);
    if (addToTransaction !== undefined) {
      const status = this.groupStatus(p.groupId);
      if (status !== ErrorCode.NONE) return fail(status);
      const tp = { topic: OFFSETS_TOPIC, partition: this.partitionFor(p.groupId) };
      const verifier = this.opts.transactionVerifier;
      const answers = verifier ? await verifier.verify(addToTransaction, p.producerId, p.producerEpoch, [tp], true) : new Map<string, number>();
      const code = answers.get(topicPartitionKey(tp.topic, tp.partition)) ?? ErrorCode.NETWORK_EXCEPTION;
      if (code !== ErrorCode.NONE) {
        this.log.debug(`could not add ${tp.topic}-${tp.partition} to the transaction of ${addToTransaction} for group ${p.groupId}: ${errorName(code)}`);
        return fail(txnOffsetCommitVerificationError(code));
      }
    }
    return this.withGroup(p.groupId, fail, () => this.offsetManager.commitTransactionalOffsets(p));
  }

  /**
   * WriteTxnMarkers for a __consumer_offsets partition (Kafka 4 routes these through the group
   * coordinator): appends the marker, then the producer's pending transactional offsets in the
   * partition's groups are committed or dropped. A partition this broker does not serve yet (not
   * led, still loading) answers NOT_LEADER_OR_FOLLOWER, which the transaction coordinator retries;
   * its load will apply the marker from the log.
   */
  async completeTransaction(partition: number, marker: Buffer, producerId: bigint, commit: boolean, timeoutMs: number): Promise<number> {
    const st = this.partitions.get(partition);
    if (!this.active || !st || st.state !== 'loaded') return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const [res] = await this.opts.replicaManager.appendRecords({
      timeoutMs,
      requiredAcks: -1,
      entries: [{ topic: OFFSETS_TOPIC, partition, records: marker }],
      internalTopicsAllowed: true,
    });
    if (res.errorCode !== ErrorCode.NONE) return res.errorCode;
    if (this.partitions.get(partition) !== st) return ErrorCode.NONE; // a reload reads the marker from the log
    let completed = 0;
    for (const groupId of this.offsetManager.groupsWithPendingTransaction(producerId)) {
      if (this.partitionFor(groupId) === partition) completed += this.offsetManager.completeTransaction(producerId, groupId, commit);
    }
    if (completed > 0) this.log.debug(`${commit ? 'committed' : 'aborted'} ${completed} transactional offsets of producer ${producerId} in ${OFFSETS_TOPIC}-${partition}`);
    return ErrorCode.NONE;
  }

  /**
   * OffsetFetch. `member` (v9+): the member id (null when not given) and epoch a consumer group
   * member fetches with, validated against the consumer group (STALE_MEMBER_EPOCH,
   * UNKNOWN_MEMBER_ID); classic groups do not check them, as Kafka.
   */
  fetchOffsets(
    groupId: string,
    topics: { name: string; partitionIndexes: number[] }[] | null,
    requireStable: boolean,
    member: { memberId: string | null; memberEpoch: number } = { memberId: null, memberEpoch: -1 },
  ): Promise<{ errorCode: number; topics: FetchedTopic[] }> {
    const fail = (errorCode: number) => ({ errorCode, topics: [] as FetchedTopic[] });
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    return this.withGroup(groupId, fail, () => {
      const cg = this.consumerGroups.group(groupId);
      if (cg) {
        try {
          this.consumerGroups.validateOffsetFetch(cg, member.memberId, member.memberEpoch);
        } catch (err) {
          return fail((err as KafkaError).code);
        }
      }
      return { errorCode: ErrorCode.NONE, topics: this.offsetManager.fetchOffsets(groupId, topics, requireStable) };
    });
  }

  deleteOffsets(
    groupId: string,
    topics: { name: string; partitions: { partitionIndex: number }[] }[],
  ): Promise<{ errorCode: number; topics: TopicPartitionErrors[] }> {
    const fail = (errorCode: number) => ({ errorCode, topics: [] as TopicPartitionErrors[] });
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (groupId === '') return Promise.resolve(fail(ErrorCode.INVALID_GROUP_ID));
    return this.withGroup(groupId, fail, () => this.offsetManager.deleteOffsets(groupId, topics));
  }

  // ---- admin ----------------------------------------------------------------------------------

  describeGroup(groupId: string): Promise<DescribedGroup> {
    const fail = (errorCode: number): DescribedGroup => ({
      groupId,
      errorCode,
      groupState: '',
      protocolType: '',
      protocolData: '',
      members: [],
    });
    if (!this.active) return Promise.resolve(fail(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    return this.withGroup(groupId, fail, () => {
      const cg = this.consumerGroups.group(groupId);
      if (cg) {
        // DescribeGroups v0-5 on a consumer group (Kafka 4.0): protocol type "consumer", its state,
        // its members without classic metadata or assignment.
        return {
          groupId,
          errorCode: ErrorCode.NONE,
          groupState: cg.state,
          protocolType: 'consumer',
          protocolData: '',
          members: [...cg.members.values()].map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.instanceId,
            clientId: m.clientId,
            clientHost: m.clientHost,
            memberMetadata: Buffer.alloc(0),
            memberAssignment: Buffer.alloc(0),
          })),
        };
      }
      const g = this.groupManager.group(groupId);
      if (!g) return { ...fail(ErrorCode.NONE), groupState: 'Dead' };
      // Member metadata and assignments are shown only for a Stable group (they are in flux otherwise).
      const stable = g.is('Stable');
      return {
        groupId,
        errorCode: ErrorCode.NONE,
        groupState: g.state,
        protocolType: g.protocolType ?? '',
        protocolData: g.protocolName ?? '',
        members: g.allMembers().map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: stable ? m.metadata(g.protocolName) : Buffer.alloc(0),
          memberAssignment: stable ? m.assignment : Buffer.alloc(0),
        })),
      };
    });
  }

  /** Groups of the partitions this broker has loaded, filtered by state and type (case-insensitive). */
  listGroups(statesFilter: readonly string[], typesFilter: readonly string[]): { errorCode: number; groups: ListedGroup[] } {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const states = new Set(statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(typesFilter.map((s) => s.toLowerCase()));
    const loading = [...this.partitions.values()].some((p) => p.state === 'loading');
    const groups: ListedGroup[] = [];
    for (const g of this.groupManager.groups.values()) {
      if (this.groupStatus(g.groupId) !== ErrorCode.NONE) continue;
      if (states.size > 0 && !states.has(g.state.toLowerCase())) continue;
      if (types.size > 0 && !types.has('classic')) continue;
      groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
    }
    for (const g of this.consumerGroups.groups.values()) {
      if (this.groupStatus(g.groupId) !== ErrorCode.NONE) continue;
      const state = g.state;
      if (states.size > 0 && !states.has(state.toLowerCase())) continue;
      if (types.size > 0 && !types.has('consumer')) continue;
      groups.push({ groupId: g.groupId, protocolType: 'consumer', groupState: state, groupType: 'consumer' });
    }
    return { errorCode: loading ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, groups };
  }

  /** Deletes Empty groups with their offsets: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP or NONE each. */
  deleteGroup(groupId: string): Promise<number> {
    if (!this.active) return Promise.resolve(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return this.withGroup(
      groupId,
      (code) => code,
      async () => {
        const cg = this.consumerGroups.group(groupId);
        if (cg) {
          if (!cg.isEmpty()) return ErrorCode.NON_EMPTY_GROUP;
          const err = await this.append(groupId, [...this.offsetManager.tombstonesForGroup(groupId), ...this.consumerGroups.groupTombstones(cg)]);
          if (err !== ErrorCode.NONE) return appendErrorToResponseError(err);
          this.consumerGroups.remove(cg);
          this.offsetManager.forgetGroup(groupId);
          this.log.info(`deleted consumer group ${groupId}`);
          return ErrorCode.NONE;
        }
        const g = this.groupManager.group(groupId);
        if (!g || g.is('Dead')) return ErrorCode.GROUP_ID_NOT_FOUND;
        if (!g.is('Empty')) return ErrorCode.NON_EMPTY_GROUP;
        const err = await this.append(groupId, [...this.offsetManager.tombstonesForGroup(groupId), groupMetadataTombstone(groupId)]);
        if (err !== ErrorCode.NONE) return appendErrorToResponseError(err);
        this.removeGroup(g);
        this.log.info(`deleted group ${groupId}`);
        return ErrorCode.NONE;
      },
    );
  }

  private removeGroup(g: ClassicGroup): void {
    g.transitionTo('Dead');
    if (this.groupManager.groups.get(g.groupId) === g) this.groupManager.groups.delete(g.groupId);
    this.offsetManager.forgetGroup(g.groupId);
  }

  // ---- housekeeping ---------------------------------------------------------------------------

  /**
   * offsets.retention.minutes: writes tombstones for expired offsets, and deletes Empty groups
   * left with no offsets. Runs every offsets.retention.check.interval.ms (tests call it directly).
   */
  async expireOffsets(): Promise<number> {
    if (!this.active) return 0;
    let expired = 0;
    const ids = new Set([...this.groupManager.groups.keys(), ...this.offsetManager.groupIds(), ...this.consumerGroups.groups.keys()]);
    await Promise.all(
      [...ids].map((groupId) =>
        this.withGroup(
          groupId,
          () => undefined,
          async () => {
            const cg = this.consumerGroups.group(groupId);
            if (cg) {
              const { records, allExpired, apply } = this.offsetManager.expiredConsumerGroupOffsets(cg, this.now());
              const deleteGroup = allExpired && cg.isEmpty();
              const offsets = records.length;
              if (deleteGroup) records.push(...this.consumerGroups.groupTombstones(cg));
              if (records.length === 0) return;
              if ((await this.append(groupId, records)) !== ErrorCode.NONE) return;
              apply();
              expired += offsets;
              if (deleteGroup && this.consumerGroups.group(groupId) === cg && cg.isEmpty()) {
                this.consumerGroups.remove(cg);
                this.log.info(`consumer group ${groupId} expired (no members, no offsets left)`);
              }
              return;
            }
            const g = this.groupManager.group(groupId);
            if (!g) return;
            const { records, allExpired, apply } = this.offsetManager.expiredOffsets(g, this.now());
            const deleteGroup = allExpired && g.is('Empty') && g.numPendingJoinMembers === 0;
            if (deleteGroup) records.push(groupMetadataTombstone(groupId));
            if (records.length === 0) return;
            const err = await this.append(groupId, records);
            if (err !== ErrorCode.NONE) return;
            apply();
            expired += records.length - (deleteGroup ? 1 : 0);
            if (deleteGroup && this.groupManager.group(groupId) === g) {
              this.removeGroup(g);
              this.log.info(`group ${groupId} expired (no members, no offsets left)`);
            }
          },
        ),
      ),
    );
    if (expired > 0) this.log.info(`removed ${expired} expired offsets`);
    return expired;
  }

  /** Deleted topics: their committed offsets go too (tombstones, as Kafka writes them). */
  private onTopicsDeleted(topics: ReadonlySet<string>): void {
    for (const groupId of this.offsetManager.groupIds()) {
      void this.withGroup(
        groupId,
        () => undefined,
        async () => {
          const { records, apply } = this.offsetManager.tombstonesForTopics(groupId, topics);
          if (records.length === 0) return;
          if ((await this.append(groupId, records)) === ErrorCode.NONE) apply();
        },
      ).catch((err) => this.log.error('removing offsets of deleted topics failed', { groupId, err }));
    }
  }
}
