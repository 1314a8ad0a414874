/**
 * Which broker configs stand behind each topic config, in Kafka's order of precedence
 * (ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS, Kafka 4.0), and the broker-side synonym
 * groups DescribeConfigs lists (DynamicBrokerConfig.brokerConfigSynonyms).
 *
 * For a topic config, the first broker synonym that is set wins; some are in other units
 * (log.retention.hours) and are converted to milliseconds. Topic configs with no entry here
 * (the throttled replica lists, remote.storage.enable, remote.log.*) have no broker default and
 * take the topic table's default.
 */

export type SynonymUnit = 'ms' | 'minutes' | 'hours';

export interface ConfigSynonym {
  /** The broker config name. */
  readonly name: string;
  /** Unit of the broker config; the topic config is always in the topic config's own unit. */
  readonly unit?: SynonymUnit;
}

const s = (name: string, unit?: SynonymUnit): ConfigSynonym => (unit ? { name, unit } : { name });

/** topic config -> broker synonyms, first wins. message.format.version is gone in Kafka 4.0. */
export const TOPIC_CONFIG_SYNONYMS: ReadonlyMap<string, readonly ConfigSynonym[]> = new Map<string, ConfigSynonym[]>([
  ['segment.bytes', [s('log.segment.bytes')]],
  ['segment.ms', [s('log.roll.ms'), s('log.roll.hours', 'hours')]],
  ['segment.jitter.ms', [s('log.roll.jitter.ms'), s('log.roll.jitter.hours', 'hours')]],
  ['segment.index.bytes', [s('log.index.size.max.bytes')]],
  ['flush.messages', [s('log.flush.interval.messages')]],
  ['flush.ms', [s('log.flush.interval.ms'), s('log.flush.scheduler.interval.ms')]],
  ['retention.bytes', [s('log.retention.bytes')]],
  ['retention.ms', [s('log.retention.ms'), s('log.retention.minutes', 'minutes'), s('log.retention.hours', 'hours')]],
  ['max.message.bytes', [s('message.max.bytes')]],
  ['index.interval.bytes', [s('log.index.interval.bytes')]],
  ['delete.retention.ms', [s('log.cleaner.delete.retention.ms')]],
  ['min.compaction.lag.ms', [s('log.cleaner.min.compaction.lag.ms')]],
  ['max.compaction.lag.ms', [s('log.cleaner.max.compaction.lag.ms')]],
  ['file.delete.delay.ms', [s('log.segment.delete.delay.ms')]],
  ['min.cleanable.dirty.ratio', [s('log.cleaner.min.cleanable.ratio')]],
  ['cleanup.policy', [s('log.cleanup.policy')]],
  ['unclean.leader.election.enable', [s('unclean.leader.election.enable')]],
  ['min.insync.replicas', [s('min.insync.replicas')]],
  ['compression.type', [s('compression.type')]],
  ['compression.gzip.level', [s('compression.gzip.level')]],
  ['compression.lz4.level', [s('compression.lz4.level')]],
  ['compression.zstd.level', [s('compression.zstd.level')]],
  ['preallocate', [s('log.preallocate')]],
  ['message.timestamp.type', [s('log.message.timestamp.type')]],
  ['message.timestamp.before.max.ms', [s('log.message.timestamp.before.max.ms')]],
  ['message.timestamp.after.max.ms', [s('log.message.timestamp.after.max.ms')]],
  ['local.retention.ms', [s('log.local.retention.ms')]],
  ['local.retention.bytes', [s('log.local.retention.bytes')]],
]);

/** The broker config with the highest precedence for a topic config (TOPIC_CONFIG_SYNONYMS in Kafka). */
export function serverSynonym(topicConfig: string): string | undefined {
  return TOPIC_CONFIG_SYNONYMS.get(topicConfig)?.[0].name;
}

const LOG_ROLL = ['log.roll.ms', 'log.roll.hours'];
const LOG_ROLL_JITTER = ['log.roll.jitter.ms', 'log.roll.jitter.hours'];
const LOG_FLUSH = ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'];
const LOG_RETENTION = ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'];
const LISTENER_OVERRIDE = /^listener\.name\.[^.]*\.(.*)$/;

/**
 * The broker configs that together decide one broker config's value, most specific first
 * (DynamicBrokerConfig.brokerConfigSynonyms). With matchListenerOverride, a
 * `listener.name.<listener>.<config>` key has `<config>` as its fallback.
 */
export function brokerConfigSynonyms(name: string, matchListenerOverride: boolean): string[] {
  for (const group of [LOG_ROLL, LOG_ROLL_JITTER, LOG_RETENTION]) if (group.includes(name)) return [...group];
  if (name === LOG_FLUSH[0]) return [...LOG_FLUSH];
  if (matchListenerOverride) {
    const m = LISTENER_OVERRIDE.exec(name);
    if (m) return [name, m[1]];
  }
  return [name];
}

const MS_PER: Record<SynonymUnit, bigint> = { ms: 1n, minutes: 60_000n, hours: 3_600_000n };

/** Converts a broker synonym's value to the topic config's milliseconds (Kafka's ConfigSynonym converters). */
export function synonymToMillis(value: bigint | number, unit: SynonymUnit | undefined): bigint {
  return BigInt(value) * MS_PER[unit ?? 'ms'];
}
