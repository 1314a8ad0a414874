/**
 * KafkaConfig: the broker's configuration, built from a server.properties file, programmatic
 * values (the embedding API) and `key=value` overrides (CLI `--override`), applied in that order,
 * later ones winning. All three are "static" config in Kafka's sense (STATIC_BROKER_CONFIG).
 *
 * Owns: the user's original strings (originals(), exactly as given), the typed value of every
 * known broker config, the values Kafka derives (retention and roll times from their ms /
 * minutes / hours synonyms, log.dirs vs log.dir, listeners and advertised listeners), and what
 * DescribeConfigs reports for the broker resource.
 *
 * Invariants: an instance is immutable and fully validated; constructing one either succeeds or
 * throws ConfigException naming the key. Unknown keys are accepted and kept (Kafka warns and
 * carries on); unknownKeys() lists them for the caller to log.
 *
 * Numbers: INT/SHORT/DOUBLE are JS numbers. LONG configs are held exactly as bigint
 * (getLongExact); getLong() returns a number, exact below 2^53, which covers every realistic
 * millisecond and byte value. Kafka's "never" sentinel Long.MAX_VALUE comes out as 2^63
 * (LONG_MAX_AS_NUMBER); compare with >=, never ===. DescribeConfigs strings always come from the
 * exact value.
 *
 * Dynamic broker config: value resolution and DescribeConfigs sources know its layers
 * (withDynamicConfigs): per-broker dynamic > cluster-wide dynamic default > static > default, for
 * configs whose update mode allows it, and per broker the listeners' SSL store overrides
 * (listener.name.<l>.ssl.keystore.* etc., which listenerOverride reads before the static ones). A
 * running broker builds them from the ConfigRecords of its metadata image
 * (config/dynamic-broker-config.ts, KafkaServer.applyDynamicConfig). The dynamic-only configs
 * (DYNAMIC_ONLY_BROKER_CONFIG_DEFS: the replication throttle rates) resolve from the two dynamic
 * layers and their default only; a static value of one is an unknown key, as in Kafka.
 */
import { brokerConfigDef, BROKER_CONFIG_DEFS, DYNAMIC_ONLY_BROKER_CONFIG_DEFS, dynamicOnlyBrokerConfigDef, effectiveBrokerDefault } from './config-def';
import {
  ConfigException,
  ConfigKeyDef,
  ConfigSource,
  ConfigSourceId,
  configTypeId,
  ConfigValue,
  formatValue,
  LONG_MAX,
  parseAndValidate,
  REQUIRED,
} from './config-types';
import { Endpoint, normaliseListenerName, parseCsvList, parseListeners, parseSecurityProtocol, parseSecurityProtocolMap, SecurityProtocol } from './listeners';
import { loadPropertiesFile, parseProperties } from './properties';
import { brokerConfigSynonyms, synonymToMillis, TOPIC_CONFIG_SYNONYMS } from './topic-config-synonyms';

/**
 * A programmatic config value; arrays are joined with commas, null/undefined mean "not set".
 * Pass Long.MAX_VALUE-sized longs as a string or bigint: a JS number that large is not exact.
 */
export type ConfigInput = string | number | bigint | boolean | readonly string[] | null | undefined;

export interface KafkaConfigInit {
  /** Path of a server.properties file. */
  file?: string;
  /** Text of a server.properties file (instead of, or after, `file`). */
  fileText?: string;
  /** Programmatic values, e.g. from startBroker({ config }). Applied over the file. */
  props?: Readonly<Record<string, ConfigInput>>;
  /** `key=value` strings, e.g. from `--override`. Applied last. */
  overrides?: readonly string[];
}

/** Dynamic broker config (AlterConfigs on BROKER resources, from the metadata log), as raw strings. */
export interface DynamicConfigLayers {
  /** DYNAMIC_BROKER_CONFIG: set for this broker. */
  perBroker?: Readonly<Record<string, string>>;
  /** DYNAMIC_DEFAULT_BROKER_CONFIG: set for all brokers (resource name ""). */
  clusterDefault?: Readonly<Record<string, string>>;
}

export interface ConfigSynonymEntry {
  name: string;
  value: string | null;
  source: ConfigSourceId;
}

/** One DescribeConfigs entry, ready for the response (v0 uses isDefault, v1+ source and synonyms). */
export interface DescribeConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  source: ConfigSourceId;
  isSensitive: boolean;
  synonyms: ConfigSynonymEntry[];
  configType: number;
  documentation: string | null;
}

export interface DescribeOptions {
  /** Only these names (DescribeConfigs ConfigurationKeys); null or undefined means all. */
  names?: readonly string[] | null;
  includeSynonyms?: boolean;
  includeDocumentation?: boolean;
}

/** What the coordinator needs to create an internal topic. */
export interface InternalTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

export const OFFSETS_TOPIC = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC = '__transaction_state';

/** The one `authorizer.class.name` krill provides (metadata/authorizer/standard-authorizer.ts). */
export const STANDARD_AUTHORIZER_CLASS_NAME = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';
/** Settings the StandardAuthorizer reads from the original config (not broker configs in Kafka either). */
const AUTHORIZER_CONFIG_KEYS: ReadonlySet<string> = new Set(['super.users', 'allow.everyone.if.no.acl.found']);

function inputToString(v: ConfigInput): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return v.join(',');
  return String(v);
}

function parseOverride(s: string): [string, string] {
  const eq = s.indexOf('=');
  if (eq <= 0) throw new ConfigException(`Invalid override '${s}': expected key=value`);
  return [s.slice(0, eq), s.slice(eq + 1)];
}

/** node.id and broker.id are one setting in KRaft: either fills in the other (KafkaConfig.populateSynonyms). */
function populateSynonyms(props: Map<string, string>): Map<string, string> {
  const out = new Map(props);
  const brokerId = out.get('broker.id');
  const nodeId = out.get('node.id');
  if (brokerId === undefined && nodeId !== undefined) out.set('broker.id', nodeId);
  else if (brokerId !== undefined && nodeId === undefined) out.set('node.id', brokerId);
  return out;
}

export class KafkaConfig {
  /** Exactly what the user set, in order. */
  readonly #originals: ReadonlyMap<string, string>;
  /** Static config as Kafka keeps it: originals with broker.id/node.id filled in from each other. */
  readonly #static: ReadonlyMap<string, string>;
  readonly #perBroker: ReadonlyMap<string, string>;
  readonly #clusterDefault: ReadonlyMap<string, string>;
  readonly #values = new Map<string, ConfigValue | null>();
  readonly #defaultStrings = new Map<string, string>();

  // Derived values, computed once at construction (which also validates them).
  readonly #listenerProtocols: ReadonlyMap<string, SecurityProtocol>;
  readonly #listeners: readonly Endpoint[];
  readonly #advertised: readonly Endpoint[];
  readonly #interBroker: { listenerName: string; securityProtocol: SecurityProtocol };

  /** Builds a config from a file, programmatic values and overrides (in that order of precedence, lowest first). */
  static load(init: KafkaConfigInit = {}): KafkaConfig {
    const props = new Map<string, string>();
    const put = (k: string, v: string) => {
      props.delete(k); // keep the order in which keys were last set
      props.set(k, v);
    };
    if (init.file !== undefined) for (const [k, v] of loadPropertiesFile(init.file)) put(k, v);
    if (init.fileText !== undefined) for (const [k, v] of parseProperties(init.fileText)) put(k, v);
    for (const [k, v] of Object.entries(init.props ?? {})) {
      const s = inputToString(v);
      if (s !== undefined) put(k, s);
    }
    for (const o of init.overrides ?? []) put(...parseOverride(o));
    return new KafkaConfig(props);
  }

  constructor(originals: ReadonlyMap<string, string> | Readonly<Record<string, string>> = {}, dynamic: DynamicConfigLayers = {}) {
    this.#originals = new Map(originals instanceof Map ? originals : Object.entries(originals));
    this.#static = populateSynonyms(new Map(this.#originals));
    this.#perBroker = new Map(Object.entries(dynamic.perBroker ?? {}));
    this.#clusterDefault = new Map(Object.entries(dynamic.clusterDefault ?? {}));
    for (const [layer, perBroker] of [[this.#perBroker, true], [this.#clusterDefault, false]] as const) {
      const notDynamic = [...layer.keys()].filter((k) => !isDynamicLayerKey(k, perBroker));
      if (notDynamic.length > 0) throw new ConfigException(`Cannot update these configs dynamically: ${notDynamic.join(', ')}`, notDynamic[0]);
    }

    for (const d of BROKER_CONFIG_DEFS) {
      const raw = this.#rawValue(d);
      if (raw === REQUIRED) throw ConfigException.missing(d.name);
      this.#values.set(d.name, parseAndValidate(d, raw));
      const dflt = effectiveBrokerDefault(d);
      if (dflt !== null && dflt !== REQUIRED) {
        const s = formatValue(d.type, parseAndValidate(d, dflt));
        if (s !== null) this.#defaultStrings.set(d.name, s);
      }
    }
    // Dynamic-only configs: the dynamic layers, else the default; never the static config.
    for (const d of DYNAMIC_ONLY_BROKER_CONFIG_DEFS) {
      const raw = this.#perBroker.get(d.name) ?? this.#clusterDefault.get(d.name) ?? (d.default as string);
      this.#values.set(d.name, parseAndValidate(d, raw));
      const s = formatValue(d.type, parseAndValidate(d, d.default as string));
      if (s !== null) this.#defaultStrings.set(d.name, s);
    }

    this.#listenerProtocols = this.#effectiveListenerSecurityProtocolMap();
    this.#listeners = parseListeners(this.getString('listeners'), this.#listenerProtocols, 'listeners', true);
    this.#interBroker = this.#interBrokerListener();
    const advertisedProp = this.getString('advertised.listeners');
    const advertised =
      advertisedProp !== null ? parseListeners(advertisedProp, this.#listenerProtocols, 'advertised.listeners', false) : this.#listeners;
    const controllerNames = new Set(this.controllerListenerNames());
    this.#advertised = advertised.filter((e) => !controllerNames.has(e.listenerName));
    this.#validateValues();
  }

  /** The same static config with new dynamic layers (config/dynamic-broker-config.ts). */
  withDynamicConfigs(dynamic: DynamicConfigLayers): KafkaConfig {
    return new KafkaConfig(this.#originals, dynamic);
  }

  #rawValue(d: ConfigKeyDef): string | null | typeof REQUIRED {
    if (d.updateMode === 'per-broker' || d.updateMode === 'cluster-wide') {
      const dyn = this.#perBroker.get(d.name) ?? this.#clusterDefault.get(d.name);
      if (dyn !== undefined) return dyn;
    }
    const s = this.#static.get(d.name);
    return s !== undefined ? s : effectiveBrokerDefault(d);
  }

  // ---------------------------------------------------------------------------------------------
  // Originals and typed access

  /** What the user set (file, programmatic, overrides), exactly as given, known keys or not. */
  originals(): ReadonlyMap<string, string> {
    return this.#originals;
  }

  /** True if the user set this key (static config). */
  isSet(name: string): boolean {
    return this.#originals.has(name);
  }

  /**
   * `max.connections.per.ip.overrides` as host -> limit (Kafka's Csv.parseCsvMap: entries split at
   * commas, each at its last ':').
   */
  maxConnectionsPerIpOverrides(): Map<string, number> {
    const raw = this.getString('max.connections.per.ip.overrides') ?? '';
    const out = new Map<string, number>();
    if (raw.trim() === '') return out;
    for (const entry of raw.split(/\s*,\s*/)) {
      const i = entry.lastIndexOf(':');
      const host = entry.slice(0, i).trim();
      const count = entry.slice(i + 1).trim();
      if (i < 0 || !/^\d+$/.test(count) || Number(count) > 0x7fffffff) {
        throw new ConfigException(`Error parsing configuration property 'max.connections.per.ip.overrides': invalid entry '${entry}'`, 'max.connections.per.ip.overrides');
      }
      out.set(host, Number(count));
    }
    return out;
  }

  /**
   * The raw value of `listener.name.<listener>.<key>` (Kafka's per-listener override), or null: a
   * per-broker dynamic value (KIP-226, e.g. a new key store) before the static one.
   */
  listenerOverride(listenerName: string, key: string): string | null {
    const name = listenerPrefix(listenerName) + key;
    return this.#perBroker.get(name) ?? this.#originals.get(name) ?? null;
  }

  /**
   * Keys the user set that krill's broker table does not know. Kafka logs these as a warning.
   * Keys under the tiered-storage plugin prefixes (remote.log.storage.manager.impl.prefix,
   * remote.log.metadata.manager.impl.prefix) are the plugins' own configs, not unknown.
   */
  unknownKeys(): string[] {
    const pluginPrefixes = ['remote.log.storage.manager.impl.prefix', 'remote.log.metadata.manager.impl.prefix'].map((n) => this.getString(n)).filter((p): p is string => p !== null && p !== '');
    return [...this.#originals.keys()].filter(
      (k) =>
        !AUTHORIZER_CONFIG_KEYS.has(k) &&
        !pluginPrefixes.some((p) => k.startsWith(p)) &&
        brokerConfigDef(k) === undefined &&
        brokerConfigDef(k.replace(/^listener\.name\.[^.]+\./, '')) === undefined &&
        // Kafka's valuesWithPrefixOverride also takes a second prefix: listener.name.<l>.<mechanism>.<key>.
        !(k.startsWith('listener.name.') && brokerConfigDef(k.replace(/^listener\.name\.[^.]+\.[^.]+\./, '')) !== undefined),
    );
  }

  /** The typed value of a known broker config (null when its default is null and it is unset). */
  get(name: string): ConfigValue | null {
    if (!this.#values.has(name)) throw new Error(`Unknown broker config ${name}`);
    return this.#values.get(name)!;
  }

  #typed(name: string, types: string[]): ConfigValue | null {
    const d = brokerConfigDef(name) ?? dynamicOnlyBrokerConfigDef(name);
    if (!d) throw new Error(`Unknown broker config ${name}`);
    if (!types.includes(d.type)) throw new Error(`Broker config ${name} is of type ${d.type}, not ${types.join('/')}`);
    return this.#values.get(name)!;
  }

  getInt(name: string): number {
    return this.#nonNull(name, this.#typed(name, ['int', 'short'])) as number;
  }
  /** Like getInt, but null stays null (for int configs whose default is null). */
  getIntOrNull(name: string): number | null {
    return this.#typed(name, ['int', 'short']) as number | null;
  }
  getShort(name: string): number {
    return this.#nonNull(name, this.#typed(name, ['short'])) as number;
  }
  /** A LONG config as a number: exact below 2^53; Long.MAX_VALUE becomes 2^63 (see the class comment). */
  getLong(name: string): number {
    return Number(this.#nonNull(name, this.#typed(name, ['long'])) as bigint);
  }
  getLongOrNull(name: string): number | null {
    const v = this.#typed(name, ['long']) as bigint | null;
    return v === null ? null : Number(v);
  }
  /** A LONG config exactly. */
  getLongExact(name: string): bigint {
    return this.#nonNull(name, this.#typed(name, ['long'])) as bigint;
  }
  /** A long rate or size bound where Long.MAX_VALUE is Kafka's "no limit": that value as Infinity, others as numbers. */
  getLongBound(name: string): number {
    const v = this.getLongExact(name);
    return v >= LONG_MAX ? Infinity : Number(v);
  }
  getDouble(name: string): number {
    return this.#nonNull(name, this.#typed(name, ['double'])) as number;
  }
  getBoolean(name: string): boolean {
    return this.#nonNull(name, this.#typed(name, ['boolean'])) as boolean;
  }
  /** A STRING, CLASS or PASSWORD config (trimmed, as Kafka trims); null when unset with a null default. */
  getString(name: string): string | null {
    return this.#typed(name, ['string', 'class', 'password']) as string | null;
  }
  getList(name: string): string[] | null {
    return this.#typed(name, ['list']) as string[] | null;
  }

  #nonNull(name: string, v: ConfigValue | null): ConfigValue {
    if (v === null) throw new Error(`Broker config ${name} has no value`);
    return v;
  }

  // ---------------------------------------------------------------------------------------------
  // Derived values (KafkaConfig.scala)

  get nodeId(): number {
    return this.getInt('node.id');
  }
  /** Always equal to nodeId (validated). */
  get brokerId(): number {
    return this.getInt('broker.id');
  }
  processRoles(): string[] {
    return this.getList('process.roles') ?? [];
  }
  hasBrokerRole(): boolean {
    return this.processRoles().includes('broker');
  }

  /** log.dirs if set, else log.dir, split on commas. */
  logDirs(): string[] {
    return parseCsvList(this.getString('log.dirs') ?? this.getString('log.dir'));
  }

  /** metadata.log.dir, or the first log dir. */
  metadataLogDir(): string {
    return this.getString('metadata.log.dir') ?? this.logDirs()[0];
  }

  /** log.retention.ms, else minutes, else hours, in ms; any negative value means -1 (keep for ever). */
  logRetentionTimeMillis(): number {
    return Number(this.#logRetentionTimeMillisExact());
  }
  #logRetentionTimeMillisExact(): bigint {
    const ms = this.get('log.retention.ms') as bigint | null;
    const minutes = this.get('log.retention.minutes') as number | null;
    const v = ms ?? (minutes !== null ? synonymToMillis(minutes, 'minutes') : synonymToMillis(this.getInt('log.retention.hours'), 'hours'));
    return v < 0n ? -1n : v;
  }

  /** log.roll.ms, else log.roll.hours in ms. */
  logRollTimeMillis(): number {
    return Number(this.#logRollExact());
  }
  #logRollExact(): bigint {
    return (this.get('log.roll.ms') as bigint | null) ?? synonymToMillis(this.getInt('log.roll.hours'), 'hours');
  }

  /** log.roll.jitter.ms, else log.roll.jitter.hours in ms. */
  logRollTimeJitterMillis(): number {
    return Number(this.#logRollJitterExact());
  }
  #logRollJitterExact(): bigint {
    return (this.get('log.roll.jitter.ms') as bigint | null) ?? synonymToMillis(this.getInt('log.roll.jitter.hours'), 'hours');
  }

  /** log.flush.interval.ms, else log.flush.scheduler.interval.ms. */
  logFlushIntervalMs(): number {
    return Number(this.#logFlushExact());
  }
  #logFlushExact(): bigint {
    return (this.get('log.flush.interval.ms') as bigint | null) ?? this.getLongExact('log.flush.scheduler.interval.ms');
  }

  controllerListenerNames(): string[] {
    return parseCsvList(this.getString('controller.listener.names')).map(normaliseListenerName);
  }

  /** listener name -> security protocol, with KRaft's implicit PLAINTEXT for controller listeners. */
  listenerSecurityProtocolMap(): ReadonlyMap<string, SecurityProtocol> {
    return this.#listenerProtocols;
  }

  /** Every listener to bind, controller listeners included. */
  listeners(): readonly Endpoint[] {
    return this.#listeners;
  }

  /** Listeners that serve clients (all but the controller listeners). */
  dataPlaneListeners(): Endpoint[] {
    const controller = new Set(this.controllerListenerNames());
    return this.#listeners.filter((e) => !controller.has(e.listenerName));
  }

  /**
   * The broker endpoints published in Metadata: advertised.listeners, or listeners when unset,
   * minus controller listeners. Hosts may still be null and ports 0; resolveAdvertisedEndpoints()
   * fills them in once the sockets are bound.
   */
  advertisedListeners(): readonly Endpoint[] {
    return this.#advertised;
  }

  interBrokerListenerName(): string {
    return this.#interBroker.listenerName;
  }
  interBrokerSecurityProtocol(): SecurityProtocol {
    return this.#interBroker.securityProtocol;
  }

  #effectiveListenerSecurityProtocolMap(): Map<string, SecurityProtocol> {
    const map = parseSecurityProtocolMap(this.getString('listener.security.protocol.map'));
    if (this.#static.has('listener.security.protocol.map') || this.#perBroker.has('listener.security.protocol.map')) return map;
    // Kafka adds PLAINTEXT for controller listeners only while nothing uses SSL or SASL.
    const sslOrSasl = (name: string) => ['SSL', 'SASL_SSL', 'SASL_PLAINTEXT'].includes(normaliseListenerName(name));
    const controller = this.controllerListenerNames();
    const listenerNames = parseCsvList(this.getString('listeners')).map((l) => l.split('://')[0]);
    if (controller.some(sslOrSasl) || listenerNames.some(sslOrSasl)) return map;
    for (const name of controller) if (name !== 'PLAINTEXT' && !map.has(name)) map.set(name, 'PLAINTEXT');
    return map;
  }

  #interBrokerListener(): { listenerName: string; securityProtocol: SecurityProtocol } {
    const name = this.getString('inter.broker.listener.name');
    if (name !== null) {
      if (this.#static.has('security.inter.broker.protocol')) {
        throw new ConfigException('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.', 'inter.broker.listener.name');
      }
      const listenerName = normaliseListenerName(name);
      const securityProtocol = this.#listenerProtocols.get(listenerName);
      if (securityProtocol === undefined) {
        throw new ConfigException(
          `Listener with name ${listenerName} defined in inter.broker.listener.name not found in listener.security.protocol.map.`,
          'inter.broker.listener.name',
        );
      }
      return { listenerName, securityProtocol };
    }
    const securityProtocol = parseSecurityProtocol(this.getString('security.inter.broker.protocol')!, 'security.inter.broker.protocol');
    return { listenerName: securityProtocol, securityProtocol };
  }

  /** Cross-key checks from KafkaConfig.validateValues and GroupCoordinatorConfig (KRaft quorum checks excepted, see below). */
  #validateValues(): void {
    const fail = (name: string, msg: string): never => {
      throw new ConfigException(msg, name);
    };
    if (this.getInt('node.id') !== this.getInt('broker.id')) fail('node.id', 'You must set `node.id` to the same value as `broker.id`.');

    const roles = this.processRoles();
    if (roles.length === 0) throw ConfigException.invalid('process.roles', '', 'at least one of broker, controller is required');
    if (new Set(roles).size !== roles.length) fail('process.roles', `Duplicate role names found in \`process.roles\`: ${roles.join(',')}`);

    if (this.#logRollExact() < 1n) fail('log.roll.ms', 'log.roll.ms must be greater than or equal to 1');
    if (this.#logRollJitterExact() < 0n) fail('log.roll.jitter.ms', 'log.roll.jitter.ms must be greater than or equal to 0');
    const retention = this.#logRetentionTimeMillisExact();
    if (retention < 1n && retention !== -1n) fail('log.retention.ms', 'log.retention.ms must be unlimited (-1) or, greater than or equal to 1');
    if (this.logDirs().length === 0) fail('log.dirs', 'At least one log directory must be defined via log.dirs or log.dir.');
    const cleanerThreads = this.getInt('log.cleaner.threads');
    if (cleanerThreads > 0 && this.getLongExact('log.cleaner.dedupe.buffer.size') / BigInt(cleanerThreads) <= 1024n * 1024n) {
      fail('log.cleaner.dedupe.buffer.size', 'log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.');
    }
    const fetchWait = this.getInt('replica.fetch.wait.max.ms');
    if (fetchWait > this.getInt('replica.socket.timeout.ms')) {
      fail('replica.socket.timeout.ms', 'replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary socket timeouts');
    }
    if (fetchWait > this.getLong('replica.lag.time.max.ms')) {
      fail('replica.fetch.wait.max.ms', 'replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent frequent changes in ISR');
    }

    // Listeners. Kafka's KRaft quorum rules (controller.quorum.voters / bootstrap.servers set,
    // controller listeners present in `listeners`) are not applied: a combined node runs its
    // controller in-process without a controller listener, and a broker of a cluster checks
    // controller.quorum.bootstrap.servers when it connects (metadata/cluster-link.ts).
    if (this.hasBrokerRole()) {
      const advertisedNames = new Set(this.#advertised.map((e) => e.listenerName));
      if (advertisedNames.size === 0) {
        const hint = ' Perhaps all listeners appear in controller.listener.names?';
        fail('advertised.listeners', `There must be at least one broker advertised listener.${hint}`);
      }
      if (!advertisedNames.has(this.#interBroker.listenerName)) {
        fail(
          'inter.broker.listener.name',
          `inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are ${[...advertisedNames].join(',')}`,
        );
      }
      const listenerNames = new Set(this.#listeners.map((e) => e.listenerName));
      if (![...advertisedNames].every((n) => listenerNames.has(n))) {
        fail(
          'advertised.listeners',
          `advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found ${[...advertisedNames].join(',')}. The valid options based on the current configuration are ${[...listenerNames].join(',')}`,
        );
      }
    }
    if (this.#advertised.some((e) => e.host === '0.0.0.0')) {
      fail('advertised.listeners', 'advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.');
    }

    const ibp = this.#interBroker.securityProtocol;
    // The inter-broker listener's own sasl.enabled.mechanisms, when it has one (KafkaConfig.saslEnabledMechanisms(listenerName)).
    const ibEnabled = this.listenerOverride(this.#interBroker.listenerName, 'sasl.enabled.mechanisms');
    const ibMechanisms = ibEnabled !== null ? parseCsvList(ibEnabled.trim()) : (this.getList('sasl.enabled.mechanisms') ?? []);
    if ((ibp === 'SASL_PLAINTEXT' || ibp === 'SASL_SSL') && !ibMechanisms.includes(this.getString('sasl.mechanism.inter.broker.protocol')!)) {
      fail('sasl.mechanism.inter.broker.protocol', 'sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used for inter-broker communication');
    }
    const queuedBytes = this.getLong('queued.max.request.bytes');
    if (queuedBytes > 0 && queuedBytes < this.getInt('socket.request.max.bytes')) {
      fail('queued.max.request.bytes', 'queued.max.request.bytes must be larger or equal to socket.request.max.bytes');
    }
    const overrides = this.maxConnectionsPerIpOverrides();
    if (this.getInt('max.connections.per.ip') === 0 && overrides.size === 0) {
      fail('max.connections.per.ip', 'max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.');
    }
    const invalidHosts = [...overrides.keys()].filter((h) => !/^[0-9a-zA-Z\-%._:]*$/.test(h));
    if (invalidHosts.length > 0) fail('max.connections.per.ip.overrides', `max.connections.per.ip.overrides contains invalid addresses : ${invalidHosts.join(',')}`);
    for (const l of this.#listeners) {
      for (const key of ['max.connections', 'max.connection.creation.rate']) {
        const v = this.listenerOverride(l.listenerName, key);
        if (v !== null && !/^\s*\d+\s*$/.test(v)) fail(listenerPrefix(l.listenerName) + key, `Invalid value ${v} for configuration ${listenerPrefix(l.listenerName) + key}: Not a number of type INT`);
      }
    }
    // The authorizer (Kafka instantiates the class at startup: an unknown one is a
    // ClassNotFoundException there; StandardAuthorizer.configure rejects a malformed super user).
    const authorizerClass = (this.getString('authorizer.class.name') ?? '').trim();
    if (authorizerClass !== '') {
      if (authorizerClass !== STANDARD_AUTHORIZER_CLASS_NAME) {
        const hint = authorizerClass === 'kafka.security.authorizer.AclAuthorizer' ? ' (AclAuthorizer was removed with ZooKeeper in Kafka 4.0)' : '';
        fail('authorizer.class.name', `Invalid value ${authorizerClass} for configuration authorizer.class.name: class not found${hint}; the authorizer krill provides is ${STANDARD_AUTHORIZER_CLASS_NAME}`);
      }
      for (const part of (this.#originals.get('super.users') ?? '').split(';')) {
        const v = part.trim();
        if (v !== '' && !v.includes(':')) fail('super.users', `expected a string in format principalType:principalName but got ${v}`);
      }
    }
    const idle = this.getLong('connections.max.idle.ms');
    const authDelay = this.getInt('connection.failed.authentication.delay.ms');
    if (idle >= 0 && authDelay >= idle) {
      fail(
        'connection.failed.authentication.delay.ms',
        `connection.failed.authentication.delay.ms=${authDelay} should always be less than connections.max.idle.ms=${idle} to prevent failed authentication responses from timing out`,
      );
    }

    // Group coordinator (GroupCoordinatorConfig).
    if (!(this.getList('group.coordinator.rebalance.protocols') ?? []).map((p) => p.toUpperCase()).includes('CLASSIC')) {
      fail('group.coordinator.rebalance.protocols', "Disabling the 'CLASSIC' protocol is not supported.");
    }
    const atLeastOther = (a: string, b: string) => {
      if (this.getInt(a) < this.getInt(b)) fail(a, `${a} must be greater than or equal to ${b}`);
    };
    const atMostOther = (a: string, b: string) => {
      if (this.getInt(a) > this.getInt(b)) fail(a, `${a} must be less than or equal to ${b}`);
    };
    atLeastOther('group.consumer.heartbeat.interval.ms', 'group.consumer.min.heartbeat.interval.ms');
    atMostOther('group.consumer.heartbeat.interval.ms', 'group.consumer.max.heartbeat.interval.ms');
    atLeastOther('group.consumer.session.timeout.ms', 'group.consumer.min.session.timeout.ms');
    atMostOther('group.consumer.session.timeout.ms', 'group.consumer.max.session.timeout.ms');
    if (this.getInt('group.consumer.heartbeat.interval.ms') >= this.getInt('group.consumer.session.timeout.ms')) {
      fail('group.consumer.heartbeat.interval.ms', 'group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms');
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Topic defaults and internal topics

  /**
   * The broker-side value behind every topic config that has a broker synonym (Kafka's
   * extractLogConfigMap), keyed by topic config name, typed as the topic config is.
   */
  extractLogConfigMap(): Map<string, ConfigValue> {
    const m = new Map<string, ConfigValue>();
    for (const [topicName, synonyms] of TOPIC_CONFIG_SYNONYMS) {
      switch (topicName) {
        case 'segment.ms':
          m.set(topicName, this.#logRollExact());
          break;
        case 'segment.jitter.ms':
          m.set(topicName, this.#logRollJitterExact());
          break;
        case 'flush.ms':
          m.set(topicName, this.#logFlushExact());
          break;
        case 'retention.ms':
          m.set(topicName, this.#logRetentionTimeMillisExact());
          break;
        default:
          m.set(topicName, this.get(synonyms[0].name)!);
      }
    }
    return m;
  }

  /**
   * Replication factor for an internal topic. A value the user set is used as is (Kafka: topic
   * creation then fails until that many brokers exist). Kafka's default of 3 is capped at the
   * number of live brokers, so that a one- or two-broker krill cluster works out of the box.
   */
  internalTopicReplicationFactor(key: 'offsets.topic.replication.factor' | 'transaction.state.log.replication.factor', liveBrokers: number): number {
    const v = this.getInt(key);
    return this.isSet(key) ? v : Math.max(1, Math.min(v, liveBrokers));
  }

  /** Partition count, replication factor and topic configs of __consumer_offsets or __transaction_state. */
  internalTopicSpec(topic: typeof OFFSETS_TOPIC | typeof TRANSACTION_STATE_TOPIC, liveBrokers: number): InternalTopicSpec {
    if (topic === OFFSETS_TOPIC) {
      // GroupCoordinatorConfig / GroupCoordinatorService.groupMetadataTopicConfigs
      return {
        name: topic,
        numPartitions: this.getInt('offsets.topic.num.partitions'),
        replicationFactor: this.internalTopicReplicationFactor('offsets.topic.replication.factor', liveBrokers),
        configs: {
          'cleanup.policy': 'compact',
          'compression.type': 'producer',
          'segment.bytes': String(this.getInt('offsets.topic.segment.bytes')),
        },
      };
    }
    // TransactionStateManager.transactionTopicConfigs. min.insync.replicas follows the capped
    // replication factor when the user left it at Kafka's default of 2.
    const rf = this.internalTopicReplicationFactor('transaction.state.log.replication.factor', liveBrokers);
    const minIsr = this.isSet('transaction.state.log.min.isr')
      ? this.getInt('transaction.state.log.min.isr')
      : Math.min(this.getInt('transaction.state.log.min.isr'), rf);
    return {
      name: topic,
      numPartitions: this.getInt('transaction.state.log.num.partitions'),
      replicationFactor: rf,
      configs: {
        'unclean.leader.election.enable': 'false',
        'compression.type': 'uncompressed',
        'cleanup.policy': 'compact',
        'min.insync.replicas': String(minIsr),
        'segment.bytes': String(this.getInt('transaction.state.log.segment.bytes')),
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  // DescribeConfigs

  /**
   * The synonyms of a broker config with their sources, most specific first, as Kafka's
   * ConfigHelper.configSynonyms builds them: every dynamic per-broker value among `synonymNames`,
   * then dynamic cluster defaults, then static values, then non-null defaults; finally everything
   * before the first entry named `name` is dropped. (So a topic's retention.ms lists nothing when
   * only log.retention.hours is set, exactly as Kafka reports it.)
   */
  configSynonyms(name: string, synonymNames: readonly string[], isSensitive: boolean): ConfigSynonymEntry[] {
    const all: ConfigSynonymEntry[] = [];
    const add = (layer: ReadonlyMap<string, string>, source: ConfigSourceId) => {
      for (const n of synonymNames) {
        const v = layer.get(n);
        if (v !== undefined) all.push({ name: n, value: isSensitive ? null : v, source });
      }
    };
    add(this.#perBroker, ConfigSource.DYNAMIC_BROKER_CONFIG);
    add(this.#clusterDefault, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    if (!dynamicOnlyBrokerConfigDef(name)) add(this.#static, ConfigSource.STATIC_BROKER_CONFIG);
    add(this.#defaultStrings, ConfigSource.DEFAULT_CONFIG);
    const first = all.findIndex((s) => s.name === name);
    return first < 0 ? [] : all.slice(first);
  }

  /**
   * DescribeConfigs for this broker (resource name = this node id): every non-internal broker
   * config plus every other key the user set (unknown keys are reported as sensitive, with a null
   * value, as Kafka does for keys it has no type for). Sorted by name.
   */
  describe(opts: DescribeOptions = {}): DescribeConfigEntry[] {
    const names = new Set<string>();
    for (const d of BROKER_CONFIG_DEFS) if (!d.internal) names.add(d.name);
    for (const k of this.#static.keys()) names.add(k);
    for (const k of this.#perBroker.keys()) names.add(k);
    // Dynamic-only configs are listed once set, in either dynamic layer.
    for (const k of this.#clusterDefault.keys()) if (dynamicOnlyBrokerConfigDef(k)) names.add(k);
    for (const k of this.#static.keys()) if (dynamicOnlyBrokerConfigDef(k) && !this.#perBroker.has(k) && !this.#clusterDefault.has(k)) names.delete(k);
    return this.#describeNames([...names].sort(), opts, true);
  }

  /**
   * DescribeConfigs for the cluster-wide default resource (resource name ""): only the dynamic
   * cluster defaults, each with its DYNAMIC_DEFAULT_BROKER_CONFIG synonyms.
   */
  describeClusterDefaults(opts: DescribeOptions = {}): DescribeConfigEntry[] {
    return this.#describeNames([...this.#clusterDefault.keys()].sort(), opts, false);
  }

  #describeNames(all: string[], opts: DescribeOptions, perBroker: boolean): DescribeConfigEntry[] {
    const wanted = opts.names ? new Set(opts.names) : null;
    const out: DescribeConfigEntry[] = [];
    for (const name of all) {
      if (wanted && !wanted.has(name)) continue;
      const own = brokerConfigDef(name) ?? dynamicOnlyBrokerConfigDef(name);
      // A listener override (listener.name.<l>.<key>) has its base config's type.
      const d = own ?? brokerConfigDef(name.replace(LISTENER_PREFIX, ''));
      const isSensitive = d === undefined || d.type === 'password';
      let value: string | null = null;
      if (!isSensitive) {
        if (!perBroker) value = this.#clusterDefault.get(name) ?? null;
        else if (own) value = formatValue(own.type, this.#values.get(name) ?? null);
        else value = this.#perBroker.get(name) ?? this.#static.get(name) ?? null;
      }
      const synonyms = this.configSynonyms(name, brokerConfigSynonyms(name, true), isSensitive).filter(
        (s) => perBroker || s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
      );
      const source = synonyms.length === 0 ? ConfigSource.DEFAULT_CONFIG : synonyms[0].source;
      out.push({
        name,
        value,
        readOnly: own ? own.updateMode === 'read-only' : !isDynamicLayerKey(name, true),
        isDefault: source === ConfigSource.DEFAULT_CONFIG,
        source,
        isSensitive,
        synonyms: opts.includeSynonyms ? synonyms : [],
        configType: configTypeId(d?.type),
        documentation: opts.includeDocumentation ? d?.doc ?? null : null,
      });
    }
    return out;
  }
}

const LISTENER_PREFIX = /^listener\.name\.[^.]+\./;

/**
 * Keys a dynamic layer may hold: known configs whose update mode is not read-only, and (per broker
 * only) listener overrides of the SSL key and trust store settings, which a listener reloads.
 */
export function isDynamicLayerKey(name: string, perBroker: boolean): boolean {
  const d = brokerConfigDef(name) ?? dynamicOnlyBrokerConfigDef(name);
  if (d) return d.updateMode !== 'read-only';
  return perBroker && LISTENER_PREFIX.test(name) && LISTENER_RELOADABLE_SSL_CONFIGS.has(name.replace(LISTENER_PREFIX, ''));
}

/** SslConfigs.RECONFIGURABLE_CONFIGS: what a listener's SSL factory reloads (only with a listener prefix). */
export const LISTENER_RELOADABLE_SSL_CONFIGS: ReadonlySet<string> = new Set([
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.keystore.certificate.chain',
  'ssl.keystore.key',
  'ssl.truststore.certificates',
]);

/** Kafka's ListenerName.configPrefix: `listener.name.<lower-cased name>.`. */
export function listenerPrefix(listenerName: string): string {
  return `listener.name.${listenerName.toLowerCase()}.`;
}
