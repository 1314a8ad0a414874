/**
 * A GroupCoordinator for unit tests: an in-memory __consumer_offsets-0 (FakeOffsetsLog, which a
 * second coordinator can load to check a reload), a fake metadata cache whose topics tests add and
 * remove (FakeMetadata), Kafka-like defaults (CONFIG), dynamic group configs a test may change at
 * any time (`groupConfigs`: group id -> config name -> value, as the metadata cache holds GROUP
 * ConfigRecords), and request builders for consumer group heartbeats. Test-only: nothing outside
 * *.test.ts imports it.
 */
import { ErrorCode } from '../../../protocol/errors';
import { RecordBatch } from '../../../protocol/records/record-batch';
import { CompressionType } from '../../../protocol/records/record-batch';
import type { MetadataCache, MetadataDelta, PartitionState, TopicState } from '../../../metadata/metadata-cache';
import type { Partition } from '../../../replication/partition';
import { Logger } from '../../../common/logger';
import { GroupCoordinator } from '../group-coordinator';
import type { GroupCoordinatorConfig } from '../group-coordinator-config';
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult } from '../consumer-group-manager';

export const FOO = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const BAR = 'AAAAAAAAAAAAAAAAAAAAAg';
export const FOO2 = 'AAAAAAAAAAAAAAAAAAAAAw';

export class FakeOffsetsLog {
  batches: Buffer[] = [];
  next = 0n;
  append(records: Buffer): number {
    const b = Buffer.from(records);
    const batch = new RecordBatch(b);
    batch.baseOffset = this.next;
    this.next = batch.nextOffset;
    this.batches.push(b);
    return ErrorCode.NONE;
  }
  get logStartOffset(): bigint {
    return 0n;
  }
  get logEndOffset(): bigint {
    return this.next;
  }
  read(offset: bigint) {
    const records = this.batches.filter((b) => new RecordBatch(b).lastOffset >= offset);
    return { records, sizeInBytes: records.reduce((n, b) => n + b.length, 0), firstEntryIncomplete: false, fetchOffsetMetadata: undefined };
  }
}

export const partitionState = (topic: string, topicId: string, partition: number): PartitionState => ({
  topicId,
  topic,
  partition,
  replicas: [1],
  isr: [1],
  leader: 1,
  leaderEpoch: 0,
  partitionEpoch: 0,
  leaderRecoveryState: 0,
  addingReplicas: [],
  removingReplicas: [],
});

/** The metadata cache calls the coordinator makes, over a mutable set of topics. */
export class FakeMetadata {
  readonly byName = new Map<string, TopicState>();
  constructor(offsetsPartitions = 1) {
    this.add('__consumer_offsets', 'AAAAAAAAAAAAAAAAAAAAAA', offsetsPartitions);
  }
  add(name: string, topicId: string, partitions: number): PartitionState[] {
    const parts = new Map<number, PartitionState>();
    for (let p = 0; p < partitions; p++) parts.set(p, partitionState(name, topicId, p));
    this.byName.set(name, { name, topicId, partitions: parts });
    return [...parts.values()];
  }
  cache(): MetadataCache {
    return {
      topic: (n: string) => this.byName.get(n),
      topics: () => this.byName.values(),
      topicById: (id: string) => [...this.byName.values()].find((t) => t.topicId === id),
    } as unknown as MetadataCache;
  }
}

export const delta = (changedPartitions: PartitionState[], removedTopics: MetadataDelta['removedTopics'] = []): MetadataDelta => ({
  changedPartitions,
  removedTopics,
  changedTopicConfigs: new Set(),
  changedBrokers: new Set(),
});

export const CONFIG: GroupCoordinatorConfig = {
  offsetsTopicNumPartitions: 1,
  minSessionTimeoutMs: 10,
  maxSessionTimeoutMs: 60_000,
  maxSize: 100,
  initialRebalanceDelayMs: 0,
  newMemberJoinTimeoutMs: 300_000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 60_000,
  offsetsRetentionCheckIntervalMs: 3_600_000,
  offsetCommitTimeoutMs: 5000,
  compression: CompressionType.NONE,
  loadBufferSize: 1 << 20,
  consumer: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5_000, maxSize: 100, assignors: ['uniform', 'range'], migrationPolicy: 'bidirectional' },
};

export const running: GroupCoordinator[] = [];

export async function start(
  opts: {
    log?: FakeOffsetsLog;
    metadata?: FakeMetadata;
    consumer?: Partial<NonNullable<GroupCoordinatorConfig['consumer']>>;
    clock?: { now: number };
    groupConfigs?: Map<string, Map<string, string>>;
  } = {},
) {
  const log = opts.log ?? new FakeOffsetsLog();
  const metadata = opts.metadata ?? new FakeMetadata();
  const groupConfigs = opts.groupConfigs ?? new Map<string, Map<string, string>>();
  const c = new GroupCoordinator({
    nodeId: 1,
    config: { ...CONFIG, consumer: { ...CONFIG.consumer!, ...opts.consumer } },
    logger: new Logger('test', 'error'),
    replicaManager: {
      getPartition: () => ({ log }) as unknown as Partition,
      appendRecords: async ({ entries }) =>
        entries.map((e) => ({
          topic: e.topic,
          partition: e.partition,
          errorCode: log.append(e.records),
          errorMessage: null,
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: 0n,
          recordErrors: [],
        })),
    },
    metadata: metadata.cache(),
    createOffsetsTopic: async () => ErrorCode.NONE,
    groupConfig: (groupId) => groupConfigs.get(groupId) ?? new Map(),
    ...(opts.clock ? { now: () => opts.clock!.now } : {}),
  });
  running.push(c);
  c.startup();
  c.onMetadataDelta(delta([partitionState('__consumer_offsets', 'AAAAAAAAAAAAAAAAAAAAAA', 0)]));
  await waitFor(() => c.groupStatus('any') === ErrorCode.NONE);
  return { c, log, metadata, groupConfigs };
}

/** Shuts down every coordinator `start` made (call from afterEach). */
export async function stopAll(): Promise<void> {
  for (const c of running.splice(0)) await c.shutdown();
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function hb(groupId: string, memberId: string, memberEpoch: number, over: Partial<ConsumerGroupHeartbeatParams> = {}): ConsumerGroupHeartbeatParams {
  return {
    groupId,
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
    subscribedTopicNames: memberEpoch === 0 ? ['foo'] : null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: memberEpoch === 0 ? [] : null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    apiVersion: 1,
    ...over,
  };
}

/** The partitions of the response's assignment, as "topicId:p" strings. */
export function owned(r: ConsumerGroupHeartbeatResult): string[] {
  return (r.assignment?.topicPartitions ?? []).flatMap((t) => t.partitions.map((p) => `${t.topicId}:${p}`)).sort();
}

export function ownedList(r: ConsumerGroupHeartbeatResult) {
  return r.assignment!.topicPartitions.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] }));
}
