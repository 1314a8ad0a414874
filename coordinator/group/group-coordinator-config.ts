/**
 * The group coordinator's settings, read once from the broker config (Kafka's GroupCoordinatorConfig):
 * the classic group.* and offsets.* settings, and the group.consumer.* ones of KIP-848 consumer
 * groups (their bounds are checked by KafkaConfig). Plain values so the coordinator can be built
 * and tested without a KafkaConfig.
 */
import type { KafkaConfig } from '../../config/kafka-config';
import { CompressionType } from '../../protocol/records/record-batch';
import { CONSUMER_GROUP_ASSIGNORS_DEFAULT } from './consumer/assignor';
import { parseMigrationPolicy, type ConsumerGroupMigrationPolicy } from './consumer-group-migration';

/** The group.consumer.* settings of KIP-848 consumer groups. */
export interface ConsumerGroupConfig {
  /** group.consumer.session.timeout.ms */
  sessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms, returned to every member. */
  heartbeatIntervalMs: number;
  /** group.consumer.max.size */
  maxSize: number;
  /** group.consumer.assignors, in config order (the first is the default). */
  assignors: readonly string[];
  /** group.consumer.migration.policy */
  migrationPolicy: ConsumerGroupMigrationPolicy;
}

/** Kafka's defaults (for coordinators built without a KafkaConfig). */
export const DEFAULT_CONSUMER_GROUP_CONFIG: ConsumerGroupConfig = {
  sessionTimeoutMs: 45_000,
  heartbeatIntervalMs: 5_000,
  maxSize: 2_147_483_647,
  assignors: CONSUMER_GROUP_ASSIGNORS_DEFAULT,
  migrationPolicy: 'bidirectional',
};

export interface GroupCoordinatorConfig {
  /** offsets.topic.num.partitions: used until __consumer_offsets exists (then its real count is). */
  offsetsTopicNumPartitions: number;
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  maxSize: number;
  initialRebalanceDelayMs: number;
  /** How long a brand-new member may wait in its first JoinGroup (Kafka: 5 minutes, fixed). */
  newMemberJoinTimeoutMs: number;
  offsetMetadataMaxBytes: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
  offsetCommitTimeoutMs: number;
  compression: CompressionType;
  loadBufferSize: number;
  /** KIP-848 consumer groups; absent: Kafka's defaults. */
  consumer?: ConsumerGroupConfig;
}

export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export function groupCoordinatorConfig(c: KafkaConfig): GroupCoordinatorConfig {
  const codec = c.getInt('offsets.topic.compression.codec');
  return {
    offsetsTopicNumPartitions: c.getInt('offsets.topic.num.partitions'),
    minSessionTimeoutMs: c.getInt('group.min.session.timeout.ms'),
    maxSessionTimeoutMs: c.getInt('group.max.session.timeout.ms'),
    maxSize: c.getInt('group.max.size'),
    initialRebalanceDelayMs: c.getInt('group.initial.rebalance.delay.ms'),
    newMemberJoinTimeoutMs: NEW_MEMBER_JOIN_TIMEOUT_MS,
    offsetMetadataMaxBytes: c.getInt('offset.metadata.max.bytes'),
    offsetsRetentionMs: c.getInt('offsets.retention.minutes') * 60_000,
    offsetsRetentionCheckIntervalMs: Number(c.getLong('offsets.retention.check.interval.ms')),
    offsetCommitTimeoutMs: c.getInt('offsets.commit.timeout.ms'),
    compression: codec >= 0 && codec <= 4 ? (codec as CompressionType) : CompressionType.NONE,
    loadBufferSize: c.getInt('offsets.load.buffer.size'),
    consumer: {
      sessionTimeoutMs: c.getInt('group.consumer.session.timeout.ms'),
      heartbeatIntervalMs: c.getInt('group.consumer.heartbeat.interval.ms'),
      maxSize: c.getInt('group.consumer.max.size'),
      assignors: c.getList('group.consumer.assignors') ?? CONSUMER_GROUP_ASSIGNORS_DEFAULT,
      migrationPolicy: parseMigrationPolicy(c.getString('group.consumer.migration.policy') ?? 'bidirectional'),
    },
  };
}
