/**
 * Client-metrics subscriptions (KIP-714): the configs of a CLIENT_METRICS (16) config resource,
 * named by the subscription, with Kafka's keys and validation (ClientMetricsConfigs):
 *   metrics      list of metric name prefixes ("*" = all; empty = none), default empty
 *   interval.ms  push interval, int in [100, 3600000], default 300000
 *   match        list of `selector=regex`, selectors client_instance_id, client_id,
 *                client_software_name, client_software_version, client_source_address,
 *                client_source_port; a client matches when every regex matches its value whole
 *
 * Errors, as Kafka's controller answers them: an empty subscription name or an unknown key
 * INVALID_REQUEST; an interval out of range INVALID_REQUEST; an interval that is not an int
 * INVALID_CONFIG (a ConfigException); a malformed match pattern INVALID_CONFIG.
 * Regexes are JavaScript's, anchored at both ends (Java's Matcher.matches()).
 *
 * Invariant: parseSubscription only returns subscriptions that validateClientMetricsConfigs accepts.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';

export const SUBSCRIPTION_METRICS = 'metrics';
export const PUSH_INTERVAL_MS = 'interval.ms';
export const CLIENT_MATCH_PATTERN = 'match';

export const CLIENT_INSTANCE_ID = 'client_instance_id';
export const CLIENT_ID = 'client_id';
export const CLIENT_SOFTWARE_NAME = 'client_software_name';
export const CLIENT_SOFTWARE_VERSION = 'client_software_version';
export const CLIENT_SOURCE_ADDRESS = 'client_source_address';
export const CLIENT_SOURCE_PORT = 'client_source_port';

/** A subscription's `metrics` entry that subscribes to every metric. */
export const ALL_SUBSCRIBED_METRICS = '*';

export const DEFAULT_INTERVAL_MS = 5 * 60 * 1000;
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 3_600_000;

/** The keys a CLIENT_METRICS resource may have. */
export const CLIENT_METRICS_CONFIG_NAMES: readonly string[] = [SUBSCRIPTION_METRICS, PUSH_INTERVAL_MS, CLIENT_MATCH_PATTERN];

const MATCH_SELECTORS = new Set([
  CLIENT_INSTANCE_ID,
  CLIENT_ID,
  CLIENT_SOFTWARE_NAME,
  CLIENT_SOFTWARE_VERSION,
  CLIENT_SOURCE_ADDRESS,
  CLIENT_SOURCE_PORT,
]);

export interface ClientMetricsSubscription {
  name: string;
  /** Metric name prefixes, as configured (deduplicated). */
  metrics: ReadonlySet<string>;
  intervalMs: number;
  /** selector -> anchored regex; empty matches every client. */
  match: ReadonlyMap<string, RegExp>;
}

/** ConfigDef's LIST parsing: trimmed, split on commas with the whitespace around them; "" is empty. */
function parseList(value: string): string[] {
  const trimmed = value.trim();
  return trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
}

/** ConfigDef's INT parsing (Integer.parseInt of the trimmed value), as a ConfigException. */
function parseInt32(name: string, value: string): number {
  const t = value.trim();
  const n = /^[+-]?\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${value} for configuration ${name}: Not a number of type INT`);
  }
  return n;
}

/** Java's String.split("="): trailing empty strings dropped. */
function splitOnEquals(s: string): string[] {
  const parts = s.split('=');
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Parses `match` entries (ClientMetricsConfigs.parseMatchingPatterns); INVALID_CONFIG on a bad one. */
export function parseMatchingPatterns(patterns: readonly string[]): Map<string, RegExp> {
  const out = new Map<string, RegExp>();
  for (const pattern of patterns) {
    const illegal = (): KafkaError => new KafkaError(ErrorCode.INVALID_CONFIG, `Illegal client matching pattern: ${pattern}`);
    const pair = splitOnEquals(pattern);
    if (pair.length !== 2) throw illegal();
    const selector = pair[0].trim();
    if (!MATCH_SELECTORS.has(selector)) throw illegal();
    try {
      out.set(selector, new RegExp(`^(?:${pair[1].trim()})$`));
    } catch {
      throw illegal();
    }
  }
  return out;
}

/**
 * Validates a subscription's complete config set (what it would be after a change), as Kafka's
 * controller does before writing ConfigRecords. Throws KafkaError (see the header for the codes).
 */
export function validateClientMetricsConfigs(subscriptionName: string, configs: ReadonlyMap<string, string>): void {
  parseSubscription(subscriptionName, configs);
}

/** The subscription a validated config set describes; throws as validateClientMetricsConfigs. */
export function parseSubscription(subscriptionName: string, configs: ReadonlyMap<string, string>): ClientMetricsSubscription {
  if (subscriptionName === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty");
  for (const key of configs.keys()) {
    if (!CLIENT_METRICS_CONFIG_NAMES.includes(key)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown client metrics configuration: ${key}`);
    }
  }
  const metricsValue = configs.get(SUBSCRIPTION_METRICS);
  const intervalValue = configs.get(PUSH_INTERVAL_MS);
  const matchValue = configs.get(CLIENT_MATCH_PATTERN);
  const metrics = new Set(metricsValue === undefined ? [] : parseList(metricsValue));
  const intervalMs = intervalValue === undefined ? DEFAULT_INTERVAL_MS : parseInt32(PUSH_INTERVAL_MS, intervalValue);
  if (intervalValue !== undefined && (intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS)) {
    throw new KafkaError(
      ErrorCode.INVALID_REQUEST,
      `Invalid value ${intervalMs} for ${PUSH_INTERVAL_MS}, interval must be between ${MIN_INTERVAL_MS} and ${MAX_INTERVAL_MS} (1 hour)`,
    );
  }
  const match = parseMatchingPatterns(matchValue === undefined ? [] : parseList(matchValue));
  return { name: subscriptionName, metrics, intervalMs, match };
}
