/**
 * Dynamic group configs: the configs of a GROUP (32) config resource, named by the group id, as
 * Kafka 4.0 defines them (GroupConfig), with Kafka's names, types, bounds and messages:
 *   consumer.session.timeout.ms     int, at least 1, within group.consumer.{min,max}.session.timeout.ms
 *   consumer.heartbeat.interval.ms  int, at least 1, within group.consumer.{min,max}.heartbeat.interval.ms
 *   share.session.timeout.ms        int, at least 1, within group.share.{min,max}.session.timeout.ms
 *   share.heartbeat.interval.ms     int, at least 1, within group.share.{min,max}.heartbeat.interval.ms
 *   share.record.lock.duration.ms   int, at least 1000, within group.share.{min,max}.record.lock.duration.ms
 * and each session timeout greater than its heartbeat interval. The consumer.* ones override the
 * broker's group.consumer.session.timeout.ms / group.consumer.heartbeat.interval.ms for that
 * consumer group (the coordinator reads them at each heartbeat: consumerGroupOverrides). krill has
 * no share groups: the share.* names are accepted and validated as Kafka does, and have no effect.
 *
 * Validation (validateGroupConfigs) is Kafka's ControllerConfigurationValidator for GROUP, which
 * the controller runs on the group's whole config set after a change: an empty group name
 * INVALID_REQUEST "Default group resources are not allowed."; then, on that set laid over the
 * broker's consumer defaults (GroupConfigManager.validate), an unknown name INVALID_CONFIG "Unknown
 * group config name: x"; a value that is not an int or is below its ConfigDef bound INVALID_CONFIG
 * with ConfigDef's message; the cross-config bounds INVALID_CONFIG in GroupConfig.validateValues'
 * order and words ("consumer.session.timeout.ms must be less than or equal to
 * group.consumer.max.session.timeout.ms", ...).
 *
 * The group.share.* broker configs are not in krill's broker config table (config-def.ts), so their
 * bounds and the share defaults are Kafka 4.0's defaults (GROUP_CONFIG_BOUNDS_DEFAULTS); the
 * group.consumer.* ones are read from the broker config (groupConfigBounds).
 *
 * Invariant: consumerGroupOverrides only reads values validateGroupConfigs accepted (the metadata
 * log holds nothing else), and ignores anything it cannot parse rather than throwing.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import { atLeast, ConfigException, ConfigSource, configTypeId, formatValue, parseAndValidate, type ConfigKeyDef } from './config-types';
import type { DescribeConfigEntry, DescribeOptions, KafkaConfig } from './kafka-config';

export const CONSUMER_SESSION_TIMEOUT_MS = 'consumer.session.timeout.ms';
export const CONSUMER_HEARTBEAT_INTERVAL_MS = 'consumer.heartbeat.interval.ms';
export const SHARE_SESSION_TIMEOUT_MS = 'share.session.timeout.ms';
export const SHARE_HEARTBEAT_INTERVAL_MS = 'share.heartbeat.interval.ms';
export const SHARE_RECORD_LOCK_DURATION_MS = 'share.record.lock.duration.ms';

/** Kafka's GroupConfig ConfigDef (defaults are Kafka's static ones; describe uses the broker's, see groupConfigDefaults). */
export const GROUP_CONFIG_DEFS: readonly ConfigKeyDef[] = [
  { name: CONSUMER_SESSION_TIMEOUT_MS, type: 'int', default: '45000', validator: atLeast(1), importance: 'medium', doc: "Session timeout of this consumer group's members, overriding group.consumer.session.timeout.ms." },
  { name: CONSUMER_HEARTBEAT_INTERVAL_MS, type: 'int', default: '5000', validator: atLeast(1), importance: 'medium', doc: "Heartbeat interval given to this consumer group's members, overriding group.consumer.heartbeat.interval.ms." },
  { name: SHARE_SESSION_TIMEOUT_MS, type: 'int', default: '45000', validator: atLeast(1), importance: 'medium', doc: 'Session timeout of share group members (krill has no share groups: no effect).' },
  { name: SHARE_HEARTBEAT_INTERVAL_MS, type: 'int', default: '5000', validator: atLeast(1), importance: 'medium', doc: 'Heartbeat interval of share group members (krill has no share groups: no effect).' },
  { name: SHARE_RECORD_LOCK_DURATION_MS, type: 'int', default: '30000', validator: atLeast(1000), importance: 'medium', doc: 'How long a share group holds a record it delivered (krill has no share groups: no effect).' },
];

export const GROUP_CONFIG_NAMES: readonly string[] = GROUP_CONFIG_DEFS.map((d) => d.name);

/** The broker settings a group config is checked against and defaults to. */
export interface GroupConfigBounds {
  /** group.consumer.session.timeout.ms / group.consumer.heartbeat.interval.ms: the defaults. */
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerMinSessionTimeoutMs: number;
  consumerMaxSessionTimeoutMs: number;
  consumerMinHeartbeatIntervalMs: number;
  consumerMaxHeartbeatIntervalMs: number;
  shareMinSessionTimeoutMs: number;
  shareMaxSessionTimeoutMs: number;
  shareMinHeartbeatIntervalMs: number;
  shareMaxHeartbeatIntervalMs: number;
  /** group.share.record.lock.duration.ms: the default of share.record.lock.duration.ms. */
  shareRecordLockDurationMs: number;
  shareMinRecordLockDurationMs: number;
  shareMaxRecordLockDurationMs: number;
}

/** Kafka 4.0's defaults of every broker setting in GroupConfigBounds. */
export const GROUP_CONFIG_BOUNDS_DEFAULTS: GroupConfigBounds = {
  consumerSessionTimeoutMs: 45_000,
  consumerHeartbeatIntervalMs: 5_000,
  consumerMinSessionTimeoutMs: 45_000,
  consumerMaxSessionTimeoutMs: 60_000,
  consumerMinHeartbeatIntervalMs: 5_000,
  consumerMaxHeartbeatIntervalMs: 15_000,
  shareMinSessionTimeoutMs: 45_000,
  shareMaxSessionTimeoutMs: 60_000,
  shareMinHeartbeatIntervalMs: 5_000,
  shareMaxHeartbeatIntervalMs: 15_000,
  shareRecordLockDurationMs: 30_000,
  shareMinRecordLockDurationMs: 15_000,
  shareMaxRecordLockDurationMs: 60_000,
};

/** The bounds of a broker (or controller) config: group.consumer.* from it, group.share.* Kafka's defaults. */
export function groupConfigBounds(c: KafkaConfig): GroupConfigBounds {
  return {
    ...GROUP_CONFIG_BOUNDS_DEFAULTS,
    consumerSessionTimeoutMs: c.getInt('group.consumer.session.timeout.ms'),
    consumerHeartbeatIntervalMs: c.getInt('group.consumer.heartbeat.interval.ms'),
    consumerMinSessionTimeoutMs: c.getInt('group.consumer.min.session.timeout.ms'),
    consumerMaxSessionTimeoutMs: c.getInt('group.consumer.max.session.timeout.ms'),
    consumerMinHeartbeatIntervalMs: c.getInt('group.consumer.min.heartbeat.interval.ms'),
    consumerMaxHeartbeatIntervalMs: c.getInt('group.consumer.max.heartbeat.interval.ms'),
  };
}

/**
 * The value of every group config for a group without overrides, as Kafka's DescribeConfigs
 * reports them (GroupCoordinatorConfig.extractGroupConfigMap: the broker's consumer session timeout,
 * heartbeat interval and share record lock duration; GroupConfig's own defaults for the rest).
 */
export function groupConfigDefaults(b: GroupConfigBounds): Map<string, string> {
  return new Map([
    [CONSUMER_SESSION_TIMEOUT_MS, String(b.consumerSessionTimeoutMs)],
    [CONSUMER_HEARTBEAT_INTERVAL_MS, String(b.consumerHeartbeatIntervalMs)],
    [SHARE_SESSION_TIMEOUT_MS, '45000'],
    [SHARE_HEARTBEAT_INTERVAL_MS, '5000'],
    [SHARE_RECORD_LOCK_DURATION_MS, String(b.shareRecordLockDurationMs)],
  ]);
}

const invalid = (message: string): KafkaError => new KafkaError(ErrorCode.INVALID_CONFIG, message);

/** Parses one group config value (ConfigDef.parse with the key's bound); ConfigException -> INVALID_CONFIG. */
function parseGroupConfig(def: ConfigKeyDef, raw: string): number {
  try {
    return parseAndValidate(def, raw) as number;
  } catch (err) {
    if (err instanceof ConfigException) throw invalid(err.message);
    throw err;
  }
}

/**
 * Validates a group's whole config set (what it would be after the change), as Kafka's controller
 * does before writing its ConfigRecords. Throws KafkaError with Kafka's code and message.
 */
export function validateGroupConfigs(groupId: string, configs: ReadonlyMap<string, string>, b: GroupConfigBounds): void {
  if (groupId === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Default group resources are not allowed.');
  for (const name of configs.keys()) if (!GROUP_CONFIG_NAMES.includes(name)) throw invalid(`Unknown group config name: ${name}`);
  // GroupConfigManager.validate: the broker's consumer values under the group's; ConfigDef defaults for the rest.
  const combined = new Map([
    [CONSUMER_SESSION_TIMEOUT_MS, String(b.consumerSessionTimeoutMs)],
    [CONSUMER_HEARTBEAT_INTERVAL_MS, String(b.consumerHeartbeatIntervalMs)],
    ...configs,
  ]);
  const v = new Map(GROUP_CONFIG_DEFS.map((d) => [d.name, parseGroupConfig(d, combined.get(d.name) ?? (d.default as string))]));
  const get = (name: string): number => v.get(name)!;
  const atLeastOther = (name: string, value: number, bound: number, boundName: string): void => {
    if (value < bound) throw invalid(`${name} must be greater than or equal to ${boundName}`);
  };
  const atMostOther = (name: string, value: number, bound: number, boundName: string): void => {
    if (value > bound) throw invalid(`${name} must be less than or equal to ${boundName}`);
  };
  const hb = get(CONSUMER_HEARTBEAT_INTERVAL_MS);
  const session = get(CONSUMER_SESSION_TIMEOUT_MS);
  const shareHb = get(SHARE_HEARTBEAT_INTERVAL_MS);
  const shareSession = get(SHARE_SESSION_TIMEOUT_MS);
  const lock = get(SHARE_RECORD_LOCK_DURATION_MS);
  atLeastOther(CONSUMER_HEARTBEAT_INTERVAL_MS, hb, b.consumerMinHeartbeatIntervalMs, 'group.consumer.min.heartbeat.interval.ms');
  atMostOther(CONSUMER_HEARTBEAT_INTERVAL_MS, hb, b.consumerMaxHeartbeatIntervalMs, 'group.consumer.max.heartbeat.interval.ms');
  atLeastOther(CONSUMER_SESSION_TIMEOUT_MS, session, b.consumerMinSessionTimeoutMs, 'group.consumer.min.session.timeout.ms');
  atMostOther(CONSUMER_SESSION_TIMEOUT_MS, session, b.consumerMaxSessionTimeoutMs, 'group.consumer.max.session.timeout.ms');
  atLeastOther(SHARE_HEARTBEAT_INTERVAL_MS, shareHb, b.shareMinHeartbeatIntervalMs, 'group.share.min.heartbeat.interval.ms');
  atMostOther(SHARE_HEARTBEAT_INTERVAL_MS, shareHb, b.shareMaxHeartbeatIntervalMs, 'group.share.max.heartbeat.interval.ms');
  atLeastOther(SHARE_SESSION_TIMEOUT_MS, shareSession, b.shareMinSessionTimeoutMs, 'group.share.min.session.timeout.ms');
  atMostOther(SHARE_SESSION_TIMEOUT_MS, shareSession, b.shareMaxSessionTimeoutMs, 'group.share.max.session.timeout.ms');
  atLeastOther(SHARE_RECORD_LOCK_DURATION_MS, lock, b.shareMinRecordLockDurationMs, 'group.share.min.record.lock.duration.ms');
  atMostOther(SHARE_RECORD_LOCK_DURATION_MS, lock, b.shareMaxRecordLockDurationMs, 'group.share.max.record.lock.duration.ms');
  if (session <= hb) throw invalid(`${CONSUMER_SESSION_TIMEOUT_MS} must be greater than ${CONSUMER_HEARTBEAT_INTERVAL_MS}`);
  if (shareSession <= shareHb) throw invalid(`${SHARE_SESSION_TIMEOUT_MS} must be greater than ${SHARE_HEARTBEAT_INTERVAL_MS}`);
}

/** A consumer group's overrides of the broker's session timeout and heartbeat interval (absent: not set). */
export interface ConsumerGroupOverrides {
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
}

/** The consumer.* overrides in a group's stored configs (metadata cache), for the group coordinator. */
export function consumerGroupOverrides(configs: ReadonlyMap<string, string>): ConsumerGroupOverrides {
  const read = (name: string): number | undefined => {
    const raw = configs.get(name);
    if (raw === undefined) return undefined;
    const n = Number(raw.trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const out: ConsumerGroupOverrides = {};
  const session = read(CONSUMER_SESSION_TIMEOUT_MS);
  const hb = read(CONSUMER_HEARTBEAT_INTERVAL_MS);
  if (session !== undefined) out.sessionTimeoutMs = session;
  if (hb !== undefined) out.heartbeatIntervalMs = hb;
  return out;
}

/**
 * DescribeConfigs for a GROUP resource (Kafka's ConfigHelper.createGroupConfigEntry): every group
 * config (or those named), its value (the group's, else the default of groupConfigDefaults), source
 * DYNAMIC_GROUP_CONFIG when the group sets it and DEFAULT_CONFIG otherwise, one synonym (itself, with
 * that source) when synonyms are asked for, never read-only or sensitive, type INT.
 */
export function describeGroupConfigs(groupConfigs: ReadonlyMap<string, string>, b: GroupConfigBounds, opts: DescribeOptions = {}): DescribeConfigEntry[] {
  const defaults = groupConfigDefaults(b);
  const names = opts.names && opts.names.length > 0 ? opts.names : null;
  return GROUP_CONFIG_DEFS.filter((d) => names === null || names.includes(d.name)).map((d) => {
    const set = groupConfigs.get(d.name);
    const raw = set ?? defaults.get(d.name)!;
    let value: string | null;
    try {
      value = formatValue(d.type, parseAndValidate(d, raw));
    } catch {
      value = raw;
    }
    const source = set !== undefined ? ConfigSource.DYNAMIC_GROUP_CONFIG : ConfigSource.DEFAULT_CONFIG;
    return {
      name: d.name,
      value,
      readOnly: false,
      isDefault: set === undefined,
      source,
      isSensitive: false,
      synonyms: opts.includeSynonyms ? [{ name: d.name, value, source }] : [],
      configType: configTypeId(d.type),
      documentation: opts.includeDocumentation ? d.doc : null,
    };
  });
}
