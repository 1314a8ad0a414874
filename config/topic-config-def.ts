/**
 * The table of topic-level configs (Kafka 4.0's LogConfig definitions and generated topic config
 * documentation): names, types, defaults, valid values, with our own descriptions. These are the
 * only keys CreateTopics and AlterConfigs accept for a topic; DescribeConfigs reports every one.
 *
 * The defaults here apply only when neither the topic nor a broker synonym sets a value
 * (topic-config-synonyms.ts says which broker configs stand behind each topic config).
 *
 * Kafka 4.0 removed message.format.version, message.downconversion.enable and
 * message.timestamp.difference.max.ms, so they are unknown topic configs here too.
 * Note the topic floor of segment.bytes is still 14 bytes in 4.0 while the broker's
 * log.segment.bytes floor became 1 MiB (KIP-1030).
 */
import {
  atLeast,
  between,
  ConfigDataType,
  ConfigKeyDef,
  gzipLevel,
  listOf,
  oneOf,
  throttledReplicaList,
  Validator,
} from './config-types';

function topic(name: string, type: ConfigDataType, dflt: string, validator: Validator | undefined, doc: string): ConfigKeyDef {
  return { name, type, default: dflt, importance: 'medium', validator, doc };
}

const LONG_MAX = '9223372036854775807';

export const TOPIC_CONFIG_DEFS: readonly ConfigKeyDef[] = [
  topic('cleanup.policy', 'list', 'delete', listOf('compact', 'delete'),
    'What happens to old segments: delete them, compact them by key, or both.'),
  topic('compression.gzip.level', 'int', '-1', gzipLevel, 'gzip level used when compression.type is gzip.'),
  topic('compression.lz4.level', 'int', '9', between(1, 17), 'lz4 level used when compression.type is lz4.'),
  topic('compression.type', 'string', 'producer', oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'),
    'Codec batches are stored with; producer keeps what the producer sent.'),
  topic('compression.zstd.level', 'int', '3', between(-131072, 22), 'zstd level used when compression.type is zstd.'),
  topic('delete.retention.ms', 'long', '86400000', atLeast(0), 'How long tombstones survive in a compacted topic.'),
  topic('file.delete.delay.ms', 'long', '60000', atLeast(0), 'Delay between dropping a segment from the log and deleting its files.'),
  topic('flush.messages', 'long', LONG_MAX, atLeast(1), 'Messages written between forced fsyncs.'),
  topic('flush.ms', 'long', LONG_MAX, atLeast(0), 'Time between forced fsyncs.'),
  topic('follower.replication.throttled.replicas', 'list', '', throttledReplicaList,
    'Replicas (partition:broker, or *) whose replication is throttled on the follower side.'),
  topic('index.interval.bytes', 'int', '4096', atLeast(0), 'Bytes of log between offset index entries.'),
  topic('leader.replication.throttled.replicas', 'list', '', throttledReplicaList,
    'Replicas (partition:broker, or *) whose replication is throttled on the leader side.'),
  topic('local.retention.bytes', 'long', '-2', atLeast(-2), 'Local size limit of a tiered topic; -2 means retention.bytes.'),
  topic('local.retention.ms', 'long', '-2', atLeast(-2), 'Local time limit of a tiered topic; -2 means retention.ms.'),
  topic('max.compaction.lag.ms', 'long', LONG_MAX, atLeast(1), 'Longest a record may stay uncompacted.'),
  topic('max.message.bytes', 'int', '1048588', atLeast(0), 'Largest record batch accepted, after compression.'),
  topic('message.timestamp.after.max.ms', 'long', '3600000', atLeast(0),
    'How far in the future a CreateTime timestamp may be before the batch is rejected.'),
  topic('message.timestamp.before.max.ms', 'long', LONG_MAX, atLeast(0),
    'How far in the past a CreateTime timestamp may be before the batch is rejected.'),
  topic('message.timestamp.type', 'string', 'CreateTime', oneOf('CreateTime', 'LogAppendTime'),
    'Whether stored timestamps are the producer\'s CreateTime or the broker\'s LogAppendTime.'),
  topic('min.cleanable.dirty.ratio', 'double', '0.5', between(0, 1), 'Dirty share of the log that makes it eligible for compaction.'),
  topic('min.compaction.lag.ms', 'long', '0', atLeast(0), 'Shortest time a record stays uncompacted.'),
  topic('min.insync.replicas', 'int', '1', atLeast(1), 'In-sync replicas required for an acks=all write to succeed.'),
  topic('preallocate', 'boolean', 'false', undefined, 'Preallocate segment files when they are created.'),
  topic('remote.log.copy.disable', 'boolean', 'false', undefined, 'Stop copying segments of this tiered topic to remote storage.'),
  topic('remote.log.delete.on.disable', 'boolean', 'false', undefined,
    'Delete remote data when tiered storage is turned off for this topic.'),
  topic('remote.storage.enable', 'boolean', 'false', undefined, 'Use tiered storage for this topic.'),
  topic('retention.bytes', 'long', '-1', undefined, 'Size a partition may reach before old segments are deleted; -1 for no limit.'),
  topic('retention.ms', 'long', '604800000', atLeast(-1), 'How long data is kept before old segments are deleted; -1 for ever.'),
  topic('segment.bytes', 'int', '1073741824', atLeast(14), 'Size at which a segment file is closed and a new one started.'),
  topic('segment.index.bytes', 'int', '10485760', atLeast(4), 'Largest offset index file per segment.'),
  topic('segment.jitter.ms', 'long', '0', atLeast(0), 'Random jitter subtracted from the roll time, to spread rolls out.'),
  topic('segment.ms', 'long', '604800000', atLeast(1), 'Segment age that forces a roll even if the segment is not full.'),
  topic('unclean.leader.election.enable', 'boolean', 'false', undefined,
    'Allow a replica outside the ISR to become leader, at the risk of losing data.'),
];

const BY_NAME = new Map<string, ConfigKeyDef>(TOPIC_CONFIG_DEFS.map((d) => [d.name, d]));

/** The definition of a topic config, or undefined if Kafka 4.0 has no such topic config. */
export function topicConfigDef(name: string): ConfigKeyDef | undefined {
  return BY_NAME.get(name);
}

/** Every topic config name, sorted (LogConfig.configNames). */
export const TOPIC_CONFIG_NAMES: readonly string[] = TOPIC_CONFIG_DEFS.map((d) => d.name).sort();
