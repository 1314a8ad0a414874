/**
 * The effective config of one topic (Kafka's LogConfig.fromProps): the topic's own overrides,
 * validated against the topic table, layered over the broker's synonyms (extractLogConfigMap),
 * layered over the topic table's defaults. Also what DescribeConfigs reports for a topic.
 *
 * validateTopicConfig() is what CreateTopics and AlterConfigs call: every problem is a
 * KafkaError(INVALID_CONFIG) with Kafka's message, for the handler to put in the response.
 *
 * The typed result (TopicLogConfig) is config's own type, since config/ does not import storage/;
 * it uses numbers for ms and byte values (exact below 2^53; Long.MAX_VALUE "never" sentinels become
 * 2^63, see LONG_MAX_AS_NUMBER) and resolves local.retention.* = -2 to the retention values.
 * Invariant: it stays a structural superset of storage's LogConfig (storage/log-config.ts), so the
 * broker hands `effective.logConfig` to storage as is (the compiler checks it where it does).
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import {
  ConfigException,
  ConfigSource,
  configTypeId,
  ConfigValue,
  formatValue,
  parseAndValidate,
} from './config-types';
import { DescribeConfigEntry, DescribeOptions, KafkaConfig } from './kafka-config';
import { TOPIC_CONFIG_DEFS, TOPIC_CONFIG_NAMES, topicConfigDef } from './topic-config-def';
import { brokerConfigSynonyms, serverSynonym } from './topic-config-synonyms';

/** Topic overrides as CreateTopics / AlterConfigs carry them (a null value is refused, as in Kafka). */
export type TopicConfigOverrides = ReadonlyMap<string, string | null> | Readonly<Record<string, string | null>>;

export type CompressionTypeName = 'uncompressed' | 'zstd' | 'lz4' | 'snappy' | 'gzip' | 'producer';

/** Typed effective topic config: every field of storage's LogConfig, plus the ones storage does not model. */
export interface TopicLogConfig {
  segmentBytes: number;
  segmentMs: number;
  segmentJitterMs: number;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  retentionMs: number; // -1: for ever
  retentionBytes: number; // -1: no limit
  localRetentionMs: number; // local.retention.ms with -2 resolved to retentionMs
  localRetentionBytes: number; // local.retention.bytes with -2 resolved to retentionBytes
  maxMessageBytes: number;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  fileDeleteDelayMs: number;
  flushMessages: number;
  flushMs: number;
  cleanupPolicy: ('delete' | 'compact')[];
  compact: boolean;
  delete: boolean;
  deleteRetentionMs: number;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
  minCleanableDirtyRatio: number;
  minInSyncReplicas: number;
  uncleanLeaderElectionEnable: boolean;
  compressionType: CompressionTypeName;
  compressionGzipLevel: number;
  compressionLz4Level: number;
  compressionZstdLevel: number;
  preallocate: boolean;
  remoteStorageEnable: boolean;
  remoteLogCopyDisable: boolean;
  remoteLogDeleteOnDisable: boolean;
  leaderReplicationThrottledReplicas: string[];
  followerReplicationThrottledReplicas: string[];
}

function entries(o: TopicConfigOverrides): [string, string | null][] {
  return o instanceof Map ? [...o.entries()] : Object.entries(o);
}

const invalid = (message: string): KafkaError => new KafkaError(ErrorCode.INVALID_CONFIG, message);

/**
 * Parses topic overrides and checks them as Kafka's LogConfig.validate does: no null values, no
 * unknown names, every value of the right type and range (over the broker's values for the rest),
 * min.compaction.lag.ms <= max.compaction.lag.ms, and the tiered storage rules.
 * `overrides` is the topic's complete set of overrides after the change (for AlterConfigs: the
 * current overrides with the alterations applied); `existing` is the set before it, needed only
 * to refuse turning remote storage off without deleting remote data.
 * Returns the typed overrides. Throws KafkaError(INVALID_CONFIG).
 */
export function validateTopicConfig(
  broker: KafkaConfig,
  overrides: TopicConfigOverrides,
  existing: TopicConfigOverrides = {},
): Map<string, ConfigValue> {
  const list = entries(overrides);
  const nulls = list.filter(([, v]) => v === null).map(([k]) => k);
  if (nulls.length > 0) throw invalid(`Null value not supported for topic configs: ${nulls.join(',')}`);
  for (const [k] of list) if (!topicConfigDef(k)) throw invalid(`Unknown topic config name: ${k}`);

  const typed = new Map<string, ConfigValue>();
  try {
    for (const [k, v] of list) typed.set(k, parseAndValidate(topicConfigDef(k)!, v)!);
  } catch (e) {
    if (e instanceof ConfigException) throw invalid(e.message);
    throw e;
  }

  const all = combine(broker, typed);
  const minLag = all.get('min.compaction.lag.ms') as bigint;
  const maxLag = all.get('max.compaction.lag.ms') as bigint;
  if (minLag > maxLag) {
    throw invalid(`conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})`);
  }

  if (all.get('remote.storage.enable') === true) {
    if (!broker.getBoolean('remote.log.storage.system.enable')) {
      throw invalid('Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.');
    }
    if ((all.get('cleanup.policy') as string[]).some((p) => p.toLowerCase() === 'compact')) {
      throw invalid('Remote log storage only supports topics with cleanup.policy=delete');
    }
    checkLocalRetention(all, 'retention.bytes', 'local.retention.bytes');
    checkLocalRetention(all, 'retention.ms', 'local.retention.ms');
  } else {
    const before = new Map(entries(existing));
    const wasRemote = (before.get('remote.storage.enable') ?? '').trim().toLowerCase() === 'true';
    if (wasRemote && all.get('remote.log.delete.on.disable') !== true) {
      throw invalid(
        'It is invalid to disable remote storage without deleting remote data. If you want to keep the remote data and turn to read only, ' +
          'please set `remote.storage.enable=true,remote.log.copy.disable=true`. If you want to disable remote storage and delete all ' +
          'remote data, please set `remote.storage.enable=false,remote.log.delete.on.disable=true`.',
      );
    }
  }
  return typed;
}

/** LogConfig.validateRemoteStorageRetentionSize / Time. */
function checkLocalRetention(all: Map<string, ConfigValue>, totalName: string, localName: string): void {
  const total = all.get(totalName) as bigint;
  const local = all.get(localName) as bigint;
  if (total > -1n && local !== -2n) {
    if (local === -1n) throw invalid(`Invalid value -1 for configuration ${localName}: Value must not be -1 as ${totalName} value is set as ${total}.`);
    if (local > total) {
      throw invalid(`Invalid value ${local} for configuration ${localName}: Value must not be more than ${totalName} property value: ${total}`);
    }
  }
}

let topicDefaults: ReadonlyMap<string, ConfigValue> | undefined;

/** Topic defaults, then broker synonyms, then the typed overrides. */
function combine(broker: KafkaConfig, typed: ReadonlyMap<string, ConfigValue>): Map<string, ConfigValue> {
  topicDefaults ??= new Map(TOPIC_CONFIG_DEFS.map((d) => [d.name, parseAndValidate(d, d.default as string)!]));
  const all = new Map<string, ConfigValue>(topicDefaults);
  for (const [k, v] of broker.extractLogConfigMap()) all.set(k, v);
  for (const [k, v] of typed) all.set(k, v);
  return all;
}

/** One topic's effective config. */
export class EffectiveTopicConfig {
  /** Every topic config, typed (longs as bigint). */
  readonly values: ReadonlyMap<string, ConfigValue>;
  /** The topic's own overrides, as strings. */
  readonly overrides: ReadonlyMap<string, string>;
  readonly logConfig: TopicLogConfig;

  constructor(
    private readonly broker: KafkaConfig,
    overrides: ReadonlyMap<string, string>,
    typedOverrides: ReadonlyMap<string, ConfigValue>,
  ) {
    this.overrides = overrides;
    this.values = combine(broker, typedOverrides);
    this.logConfig = toTopicLogConfig(this.values);
  }

  /**
   * DescribeConfigs entries for the topic, sorted by name (ConfigHelper.createTopicConfigEntry):
   * an override has source DYNAMIC_TOPIC_CONFIG and is the first synonym; then come the broker
   * synonyms (Kafka's rules, see KafkaConfig.configSynonyms); with none, DEFAULT_CONFIG.
   * Topic configs are never read-only or sensitive.
   */
  describe(opts: DescribeOptions = {}): DescribeConfigEntry[] {
    const wanted = opts.names ? new Set(opts.names) : null;
    const out: DescribeConfigEntry[] = [];
    for (const name of TOPIC_CONFIG_NAMES) {
      if (wanted && !wanted.has(name)) continue;
      const d = topicConfigDef(name)!;
      const value = formatValue(d.type, this.values.get(name) ?? null);
      const server = serverSynonym(name);
      const synonyms = server ? this.broker.configSynonyms(server, brokerConfigSynonyms(server, true), false) : [];
      if (this.overrides.has(name)) synonyms.unshift({ name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
      const source = synonyms.length === 0 ? ConfigSource.DEFAULT_CONFIG : synonyms[0].source;
      out.push({
        name,
        value,
        readOnly: false,
        isDefault: source === ConfigSource.DEFAULT_CONFIG,
        source,
        isSensitive: false,
        synonyms: opts.includeSynonyms ? synonyms : [],
        configType: configTypeId(d.type),
        documentation: opts.includeDocumentation ? d.doc : null,
      });
    }
    return out;
  }
}

/**
 * Validates a topic's overrides and layers them over the broker's config. Throws
 * KafkaError(INVALID_CONFIG) on bad overrides (so it also serves CreateTopics validation).
 */
export function logConfigFrom(broker: KafkaConfig, overrides: TopicConfigOverrides = {}): EffectiveTopicConfig {
  const typed = validateTopicConfig(broker, overrides);
  const strings = new Map<string, string>();
  for (const [k, v] of entries(overrides)) strings.set(k, v as string);
  return new EffectiveTopicConfig(broker, strings, typed);
}

function toTopicLogConfig(v: ReadonlyMap<string, ConfigValue>): TopicLogConfig {
  const n = (k: string): number => Number(v.get(k) as number | bigint);
  const b = (k: string): boolean => v.get(k) as boolean;
  const l = (k: string): string[] => [...(v.get(k) as string[])];
  const cleanupPolicy = l('cleanup.policy') as TopicLogConfig['cleanupPolicy']; // validated: compact, delete
  const retentionMs = n('retention.ms');
  const retentionBytes = n('retention.bytes');
  const localMs = n('local.retention.ms');
  const localBytes = n('local.retention.bytes');
  return {
    segmentBytes: n('segment.bytes'),
    segmentMs: n('segment.ms'),
    segmentJitterMs: n('segment.jitter.ms'),
    segmentIndexBytes: n('segment.index.bytes'),
    indexIntervalBytes: n('index.interval.bytes'),
    retentionMs,
    retentionBytes,
    localRetentionMs: localMs === -2 ? retentionMs : localMs,
    localRetentionBytes: localBytes === -2 ? retentionBytes : localBytes,
    maxMessageBytes: n('max.message.bytes'),
    messageTimestampType: v.get('message.timestamp.type') as TopicLogConfig['messageTimestampType'],
    messageTimestampBeforeMaxMs: n('message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: n('message.timestamp.after.max.ms'),
    fileDeleteDelayMs: n('file.delete.delay.ms'),
    flushMessages: n('flush.messages'),
    flushMs: n('flush.ms'),
    cleanupPolicy,
    compact: cleanupPolicy.some((p) => p.toLowerCase() === 'compact'),
    delete: cleanupPolicy.some((p) => p.toLowerCase() === 'delete'),
    deleteRetentionMs: n('delete.retention.ms'),
    minCompactionLagMs: n('min.compaction.lag.ms'),
    maxCompactionLagMs: n('max.compaction.lag.ms'),
    minCleanableDirtyRatio: n('min.cleanable.dirty.ratio'),
    minInSyncReplicas: n('min.insync.replicas'),
    uncleanLeaderElectionEnable: b('unclean.leader.election.enable'),
    compressionType: v.get('compression.type') as CompressionTypeName,
    compressionGzipLevel: n('compression.gzip.level'),
    compressionLz4Level: n('compression.lz4.level'),
    compressionZstdLevel: n('compression.zstd.level'),
    preallocate: b('preallocate'),
    remoteStorageEnable: b('remote.storage.enable'),
    remoteLogCopyDisable: b('remote.log.copy.disable'),
    remoteLogDeleteOnDisable: b('remote.log.delete.on.disable'),
    leaderReplicationThrottledReplicas: l('leader.replication.throttled.replicas'),
    followerReplicationThrottledReplicas: l('follower.replication.throttled.replicas'),
  };
}
