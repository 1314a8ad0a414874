/**
 * Per-log configuration with Kafka's topic-level semantics and defaults. config/ owns the config
 * tables (property names, synonyms such as log.segment.bytes <-> segment.bytes, sources for
 * DescribeConfigs, user-facing validation); config/log-config-from.ts resolves broker defaults plus
 * topic overrides into a structural superset of LogConfig, which the broker hands storage as is.
 * `fromTopicProperties` parses Kafka's topic property names straight into a LogConfig, for code
 * that has no KafkaConfig (tests).
 *
 * Java longs become JS numbers: every value here is a duration in ms or a byte count far below 2^53,
 * except "unbounded" which Kafka spells Long.MAX_VALUE; `LONG_MAX` (2^63 as a double) stands for it and
 * compares correctly against any real value.
 */

export const LONG_MAX = 2 ** 63;

export type TimestampTypeName = 'CreateTime' | 'LogAppendTime';
export type CleanupPolicy = 'delete' | 'compact';

export interface LogConfig {
  /** segment.bytes: roll when the active segment would exceed this. */
  segmentBytes: number;
  /** segment.ms: roll when the segment's first batch is this old (by record timestamps, else wall clock). */
  segmentMs: number;
  /** segment.jitter.ms: a random amount up to this is subtracted from segment.ms per segment. */
  segmentJitterMs: number;
  /** segment.index.bytes: cap on each index file; a full index forces a roll. */
  segmentIndexBytes: number;
  /** index.interval.bytes: log bytes between sparse offset/time index entries. */
  indexIntervalBytes: number;
  /** retention.ms: segments whose largest timestamp is older are deleted; -1 = forever. */
  retentionMs: number;
  /** retention.bytes: oldest segments are deleted while the log exceeds this; -1 = unbounded. */
  retentionBytes: number;
  /** max.message.bytes: the largest record batch (after compression) accepted. */
  maxMessageBytes: number;
  /** message.timestamp.type */
  messageTimestampType: TimestampTypeName;
  /** message.timestamp.before.max.ms: how far in the past a CreateTime timestamp may be. */
  messageTimestampBeforeMaxMs: number;
  /** message.timestamp.after.max.ms: how far in the future a CreateTime timestamp may be. */
  messageTimestampAfterMaxMs: number;
  /** file.delete.delay.ms: how long a deleted segment stays on disk as *.deleted. */
  fileDeleteDelayMs: number;
  /** flush.messages: fsync after this many unflushed messages (LONG_MAX = leave it to the page cache). */
  flushMessages: number;
  /** flush.ms: fsync when the last flush is older than this (checked by the log manager's flusher). */
  flushMs: number;
  /** cleanup.policy: 'delete' enables retention; 'compact' requires keys and allows offset gaps, but krill has no log cleaner. */
  cleanupPolicy: CleanupPolicy[];
  /** compression.type: 'producer' keeps batches as received; a codec re-encodes client batches that use another (log-validator.ts). */
  compressionType: string;
  /** min.insync.replicas (read by the replication layer, kept here as Kafka does). */
  minInSyncReplicas: number;
  /** unclean.leader.election.enable (the controller reads it from the topic's config; kept here as Kafka does). */
  uncleanLeaderElectionEnable: boolean;
  /** preallocate: accepted and ignored; see docs/storage.md (no mmap, no preallocation). */
  preallocate: boolean;
  /** delete.retention.ms, min/max.compaction.lag.ms, min.cleanable.dirty.ratio: compaction settings, kept but unused (no log cleaner). */
  deleteRetentionMs: number;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
  minCleanableDirtyRatio: number;
  /**
   * remote.storage.enable: the topic uses tiered storage (KIP-405). The log is tiered only when the
   * broker's remote.log.storage.system.enable is on too and the topic is not internal
   * (UnifiedLogParams.remoteStorageSystemEnable, UnifiedLog.remoteLogEnabled).
   */
  remoteStorageEnable: boolean;
  /** remote.log.copy.disable: a tiered topic whose segments are no longer copied (read-only remote data; local retention falls back to retention.*). */
  remoteLogCopyDisable: boolean;
  /** remote.log.delete.on.disable: turning remote.storage.enable off deletes the topic's remote data (Kafka requires it to be true to turn it off). */
  remoteLogDeleteOnDisable: boolean;
  /** local.retention.ms of a tiered topic; -2 = retention.ms (config/ resolves it; localRetentionMsOf resolves it again). */
  localRetentionMs: number;
  /** local.retention.bytes of a tiered topic; -2 = retention.bytes. */
  localRetentionBytes: number;
}

/** Kafka 4.x defaults (message.timestamp.after.max.ms became one hour in 4.0). */
export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentJitterMs: 0,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  maxMessageBytes: 1024 * 1024 + 12,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: LONG_MAX,
  messageTimestampAfterMaxMs: 60 * 60 * 1000,
  fileDeleteDelayMs: 60_000,
  flushMessages: LONG_MAX,
  flushMs: LONG_MAX,
  cleanupPolicy: ['delete'],
  compressionType: 'producer',
  minInSyncReplicas: 1,
  uncleanLeaderElectionEnable: false,
  preallocate: false,
  deleteRetentionMs: 24 * 60 * 60 * 1000,
  minCompactionLagMs: 0,
  maxCompactionLagMs: LONG_MAX,
  minCleanableDirtyRatio: 0.5,
  remoteStorageEnable: false,
  remoteLogCopyDisable: false,
  remoteLogDeleteOnDisable: false,
  localRetentionMs: -2,
  localRetentionBytes: -2,
} as LogConfig);

export class InvalidLogConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidLogConfigError';
  }
}

/** Defaults overlaid with `overrides`, validated. */
export function logConfig(overrides: Partial<LogConfig> = {}, base: Readonly<LogConfig> = DEFAULT_LOG_CONFIG): LogConfig {
  const c: LogConfig = { ...base, ...overrides, cleanupPolicy: [...(overrides.cleanupPolicy ?? base.cleanupPolicy)] };
  validateLogConfig(c);
  return c;
}

/**
 * Storage-level sanity only. Kafka's own lower bounds (log.segment.bytes >= 1 MiB) are config/'s
 * to enforce for user input; storage accepts smaller segments because tests and
 * internal.segment.bytes need them.
 */
export function validateLogConfig(c: LogConfig): void {
  const atLeast = (name: string, v: number, min: number) => {
    if (!Number.isFinite(v) && v !== Infinity) throw new InvalidLogConfigError(`${name} must be a number`);
    if (v < min) throw new InvalidLogConfigError(`${name} must be at least ${min}, got ${v}`);
  };
  atLeast('segment.bytes', c.segmentBytes, 14);
  if (c.segmentBytes > 0x7fffffff) throw new InvalidLogConfigError('segment.bytes must fit in an int32');
  atLeast('segment.ms', c.segmentMs, 1);
  atLeast('segment.jitter.ms', c.segmentJitterMs, 0);
  atLeast('segment.index.bytes', c.segmentIndexBytes, 4);
  atLeast('index.interval.bytes', c.indexIntervalBytes, 0);
  atLeast('retention.ms', c.retentionMs, -1);
  atLeast('max.message.bytes', c.maxMessageBytes, 0);
  atLeast('message.timestamp.before.max.ms', c.messageTimestampBeforeMaxMs, 0);
  atLeast('message.timestamp.after.max.ms', c.messageTimestampAfterMaxMs, 0);
  atLeast('file.delete.delay.ms', c.fileDeleteDelayMs, 0);
  atLeast('flush.messages', c.flushMessages, 1);
  atLeast('flush.ms', c.flushMs, 0);
  atLeast('local.retention.ms', c.localRetentionMs, -2);
  atLeast('local.retention.bytes', c.localRetentionBytes, -2);
  if (c.messageTimestampType !== 'CreateTime' && c.messageTimestampType !== 'LogAppendTime') {
    throw new InvalidLogConfigError(`message.timestamp.type must be CreateTime or LogAppendTime`);
  }
  for (const p of c.cleanupPolicy) {
    if (p !== 'delete' && p !== 'compact') throw new InvalidLogConfigError(`unknown cleanup.policy ${p}`);
  }
}

/** The local retention time of a tiered log: local.retention.ms, -2 meaning retention.ms. */
export function localRetentionMsOf(c: LogConfig): number {
  return c.localRetentionMs === -2 ? c.retentionMs : c.localRetentionMs;
}

/** The local retention size of a tiered log: local.retention.bytes, -2 meaning retention.bytes. */
export function localRetentionBytesOf(c: LogConfig): number {
  return c.localRetentionBytes === -2 ? c.retentionBytes : c.localRetentionBytes;
}

/** Kafka's LogConfig.randomSegmentJitter: uniform in [0, min(jitter, segment.ms)). */
export function randomSegmentJitter(c: LogConfig, random: () => number = Math.random): number {
  if (c.segmentJitterMs === 0) return 0;
  return Math.floor(random() * Math.min(c.segmentJitterMs, c.segmentMs));
}

export function deleteEnabled(c: LogConfig): boolean {
  return c.cleanupPolicy.includes('delete');
}

export function compactEnabled(c: LogConfig): boolean {
  return c.cleanupPolicy.includes('compact');
}

type Parser = (v: string, key: string) => Partial<LogConfig>;

function num(field: keyof LogConfig, integer = true): Parser {
  return (v, key) => {
    const s = v.trim();
    const n = Number(s);
    if (s === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      throw new InvalidLogConfigError(`invalid value ${JSON.stringify(v)} for ${key}`);
    }
    return { [field]: n } as Partial<LogConfig>;
  };
}

function bool(field: keyof LogConfig): Parser {
  return (v, key) => {
    const s = v.trim().toLowerCase();
    if (s !== 'true' && s !== 'false') throw new InvalidLogConfigError(`invalid value ${JSON.stringify(v)} for ${key}`);
    return { [field]: s === 'true' } as Partial<LogConfig>;
  };
}

/** Kafka's topic-level property names (TopicConfig) mapped onto LogConfig fields. */
export const TOPIC_CONFIG_PARSERS: Readonly<Record<string, Parser>> = {
  'segment.bytes': num('segmentBytes'),
  'segment.ms': num('segmentMs'),
  'segment.jitter.ms': num('segmentJitterMs'),
  'segment.index.bytes': num('segmentIndexBytes'),
  'index.interval.bytes': num('indexIntervalBytes'),
  'retention.ms': num('retentionMs'),
  'retention.bytes': num('retentionBytes'),
  'max.message.bytes': num('maxMessageBytes'),
  'message.timestamp.type': (v, key) => {
    if (v !== 'CreateTime' && v !== 'LogAppendTime') throw new InvalidLogConfigError(`invalid value ${v} for ${key}`);
    return { messageTimestampType: v };
  },
  'message.timestamp.before.max.ms': num('messageTimestampBeforeMaxMs'),
  'message.timestamp.after.max.ms': num('messageTimestampAfterMaxMs'),
  'file.delete.delay.ms': num('fileDeleteDelayMs'),
  'flush.messages': num('flushMessages'),
  'flush.ms': num('flushMs'),
  'cleanup.policy': (v) => ({
    cleanupPolicy: v
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s.length > 0) as CleanupPolicy[],
  }),
  'compression.type': (v) => ({ compressionType: v.trim().toLowerCase() }),
  'min.insync.replicas': num('minInSyncReplicas'),
  'unclean.leader.election.enable': bool('uncleanLeaderElectionEnable'),
  preallocate: bool('preallocate'),
  'delete.retention.ms': num('deleteRetentionMs'),
  'min.compaction.lag.ms': num('minCompactionLagMs'),
  'max.compaction.lag.ms': num('maxCompactionLagMs'),
  'min.cleanable.dirty.ratio': num('minCleanableDirtyRatio', false),
  'remote.storage.enable': bool('remoteStorageEnable'),
  'remote.log.copy.disable': bool('remoteLogCopyDisable'),
  'remote.log.delete.on.disable': bool('remoteLogDeleteOnDisable'),
  'local.retention.ms': num('localRetentionMs'),
  'local.retention.bytes': num('localRetentionBytes'),
};

/**
 * Builds a LogConfig from Kafka topic properties (`{'segment.bytes': '1048576', ...}`) over `base`
 * (default: Kafka's defaults). Keys storage does not model are ignored; a malformed value of a
 * known key throws InvalidLogConfigError.
 */
export function fromTopicProperties(props: Readonly<Record<string, string>>, base: Readonly<LogConfig> = DEFAULT_LOG_CONFIG): LogConfig {
  let overrides: Partial<LogConfig> = {};
  for (const [k, v] of Object.entries(props)) {
    const p = TOPIC_CONFIG_PARSERS[k];
    if (p) overrides = { ...overrides, ...p(v, k) };
  }
  return logConfig(overrides, base);
}
