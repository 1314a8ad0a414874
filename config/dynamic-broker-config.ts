/**
 * Dynamic broker configs (KIP-226, Kafka's DynamicBrokerConfig): which broker configs may be
 * changed at run time, the checks an alteration of a BROKER resource must pass before it is
 * written to the metadata log, and the effective KafkaConfig a broker runs with once its dynamic
 * layers (per-broker, cluster-wide default) are applied over its static config.
 *
 * Rules (DynamicBrokerConfig.validateConfigs, in Kafka's order, each an INVALID_REQUEST with
 * Kafka's message and the offending names as Scala prints a Set, "Set(a, b)"):
 * 1. a known config whose update mode is read-only: "Cannot update these configs dynamically";
 * 2. an SSL store setting without a listener prefix: "These security configs can be dynamically
 *    updated only per-listener using the listener prefix";
 * 3. krill's own: a dynamically updatable config that no krill component re-reads at run time
 *    (KRILL_APPLIED below lists the ones that are) or a `listener.name.<l>.*` key other than the
 *    SSL store settings is refused, with "krill cannot update these configs without a restart",
 *    rather than stored and ignored;
 * 4. each value must parse and pass its validator (the message of the ConfigException);
 * 5. at the cluster default (resource name ""), per-broker configs (listener overrides among them)
 *    are refused: "Cannot update these configs at default cluster level, broker id must be specified".
 * Keys krill does not know at all are accepted and stored, as Kafka keeps custom configs; they
 * change nothing.
 *
 * What is applied at run time (KRILL_APPLIED): every broker synonym that backs a topic config
 * (DynamicLogConfig.ReconfigurableConfigs: message.max.bytes, log.retention.ms, log.segment.bytes,
 * log.cleanup.policy, log.cleaner.delete.retention.ms, min.insync.replicas, compression.type ...),
 * which feed every topic without its own override; max.connections and max.connections.per.ip
 * (connection quotas); transaction.partition.verification.enable; the log cleaner's
 * (LogCleaner.ReconfigurableConfigs: log.cleaner.threads, dedupe / I/O buffers, the I/O throttle,
 * the backoff; the cleaner's loops restart with them, the thread count at most halved or doubled
 * at once, broker/handlers/broker-config-preprocess.ts); per broker,
 * `listener.name.<l>.ssl.keystore.*` / `ssl.truststore.*` / `ssl.key.password` of an SSL or
 * SASL_SSL listener (new TLS contexts for new connections; the broker checks that the stores load,
 * broker/handlers/broker-config-preprocess.ts); leader.replication.throttled.rate and
 * follower.replication.throttled.rate (dynamic only, config-def.ts DYNAMIC_ONLY_BROKER_CONFIG_DEFS:
 * a LONG of at least 0, validated as rule 4), the bounds of the replication quota managers
 * (replication/replication-quota-manager.ts); the remote log manager's copy and fetch byte rates
 * and the remote index cache's size (broker/tiered-storage.ts).
 *
 * Invariant: effectiveBrokerConfig never throws for what is in the metadata log; a stored value
 * that no longer validates is dropped with an error log (Kafka's removeInvalidConfigs), and the
 * broker keeps running on the rest.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import type { Logger } from '../common/logger';
import { brokerConfigDef, effectiveBrokerDefault } from './config-def';
import { ConfigException, REQUIRED } from './config-types';
import { isDynamicLayerKey, LISTENER_RELOADABLE_SSL_CONFIGS, type KafkaConfig } from './kafka-config';
import { TOPIC_CONFIG_SYNONYMS } from './topic-config-synonyms';

/** SslConfigs.RECONFIGURABLE_CONFIGS: only per listener (listener.name.<l>.<config>). */
export const DYNAMIC_SECURITY_CONFIGS: ReadonlySet<string> = LISTENER_RELOADABLE_SSL_CONFIGS;

/** The dynamic broker configs krill's components re-read when they change (see the header). */
export const KRILL_APPLIED: ReadonlySet<string> = new Set([
  ...[...TOPIC_CONFIG_SYNONYMS.values()].map((syns) => syns[0].name).filter((n) => (brokerConfigDef(n)?.updateMode ?? 'read-only') !== 'read-only'),
  'max.connections',
  'max.connections.per.ip',
  'transaction.partition.verification.enable',
  // LogCleaner.ReconfigurableConfigs (the cleaner's loops restart with them; message.max.bytes is above)
  'log.cleaner.threads',
  'log.cleaner.dedupe.buffer.size',
  'log.cleaner.io.buffer.load.factor',
  'log.cleaner.io.buffer.size',
  'log.cleaner.io.max.bytes.per.second',
  'log.cleaner.backoff.ms',
  // DynamicConfig.Broker's quota configs (dynamic only): the replication quota managers' bounds
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  // RemoteLogManager's reconfigurable configs (broker/tiered-storage.ts reconfigure)
  'remote.log.manager.copy.max.bytes.per.second',
  'remote.log.manager.fetch.max.bytes.per.second',
  'remote.log.index.file.cache.total.size.bytes',
  'remote.fetch.max.wait.ms',
]);

const LISTENER_PREFIXED = /^listener\.name\.[^.]*\./;
const isReloadableListenerKey = (n: string): boolean => LISTENER_PREFIXED.test(n) && LISTENER_RELOADABLE_SSL_CONFIGS.has(n.replace(LISTENER_PREFIXED, ''));

/**
 * A broker config's default, which APPEND / SUBTRACT on a BROKER resource start from when the
 * resource has no value (Kafka's prepareIncrementalConfigs); the broker and the controller both use it.
 */
export function brokerListDefault(name: string): string | null {
  const d = brokerConfigDef(name);
  if (!d) return null;
  const v = effectiveBrokerDefault(d);
  return v === REQUIRED ? null : v;
}

/** Scala's Set.toString, which Kafka's messages show. */
const scalaSet = (names: readonly string[]): string => `Set(${names.join(', ')})`;

function refuse(names: string[], message: string): void {
  if (names.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `${message}: ${scalaSet(names)}`);
}

/** The layers a KafkaConfig can hold: known, dynamically updatable keys (and per broker the listeners' SSL stores). */
function applicable(props: ReadonlyMap<string, string>, perBroker: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of props) if (isDynamicLayerKey(k, perBroker)) out[k] = v;
  return out;
}

/**
 * Checks the dynamic config a BROKER resource would have after an alteration (`props`: the
 * resource's whole set, as Kafka validates it), against this broker's static config and the other
 * layer's current values. Throws KafkaError(INVALID_REQUEST) with Kafka's message; returns the
 * config the broker would run with (the caller checks what needs more than parsing, such as a
 * listener's new key store).
 */
export function validateDynamicBrokerConfigs(
  staticConfig: KafkaConfig,
  props: ReadonlyMap<string, string>,
  perBroker: boolean,
  otherLayer: ReadonlyMap<string, string>,
): KafkaConfig {
  const names = [...props.keys()];
  refuse(names.filter((n) => brokerConfigDef(n)?.updateMode === 'read-only'), 'Cannot update these configs dynamically');
  refuse(names.filter((n) => DYNAMIC_SECURITY_CONFIGS.has(n)), 'These security configs can be dynamically updated only per-listener using the listener prefix');
  refuse(
    names.filter((n) => (LISTENER_PREFIXED.test(n) && !isReloadableListenerKey(n)) || (brokerConfigDef(n) !== undefined && !KRILL_APPLIED.has(n))),
    'krill cannot update these configs without a restart',
  );
  const layer = applicable(props, perBroker);
  const other = applicable(otherLayer, !perBroker);
  let candidate: KafkaConfig;
  try {
    candidate = staticConfig.withDynamicConfigs(perBroker ? { perBroker: layer, clusterDefault: other } : { perBroker: other, clusterDefault: layer });
  } catch (err) {
    if (err instanceof ConfigException) throw new KafkaError(ErrorCode.INVALID_REQUEST, err.message);
    throw err;
  }
  if (!perBroker) {
    refuse(
      names.filter((n) => brokerConfigDef(n)?.updateMode === 'per-broker' || LISTENER_PREFIXED.test(n)),
      'Cannot update these configs at default cluster level, broker id must be specified',
    );
  }
  return candidate;
}

/**
 * The config a broker runs with: `staticConfig` under its cluster-default and per-broker dynamic
 * layers (from the metadata image). Values that do not validate are dropped one by one and logged.
 */
export function effectiveBrokerConfig(
  staticConfig: KafkaConfig,
  perBrokerProps: ReadonlyMap<string, string>,
  clusterDefaultProps: ReadonlyMap<string, string>,
  logger: Logger,
): KafkaConfig {
  const perBroker = applicable(perBrokerProps, true);
  const clusterDefault = applicable(clusterDefaultProps, false);
  try {
    return staticConfig.withDynamicConfigs({ perBroker, clusterDefault });
  } catch {
    // Find the values that fail on their own and ignore them, as Kafka does.
    for (const [source, layer] of [['broker', perBroker], ['default cluster', clusterDefault]] as const) {
      for (const [k, v] of Object.entries(layer)) {
        try {
          staticConfig.withDynamicConfigs(source === 'broker' ? { perBroker: { [k]: v } } : { clusterDefault: { [k]: v } });
        } catch (err) {
          delete layer[k];
          logger.error(`Dynamic ${source} config contains an invalid value for ${k}; it is ignored`, { err });
        }
      }
    }
    try {
      return staticConfig.withDynamicConfigs({ perBroker, clusterDefault });
    } catch (err) {
      // Valid one by one but not together (a cross-config rule): run on the static config.
      logger.error('Dynamic broker configs are inconsistent together; running with the static config', { err });
      return staticConfig;
    }
  }
}
