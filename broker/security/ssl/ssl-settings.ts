/**
 * The TLS settings of one listener, or of krill's own client connections, from the broker's
 * KafkaConfig, as Kafka's SslFactory / DefaultSslEngineFactory configure an SSLEngine, turned into
 * node:tls secure context options.
 *
 * Precedence is Kafka's (ChannelBuilders.channelBuilderConfigs): `listener.name.<listener>.<key>`
 * over `<key>` over the default, for every ssl.* key. The client side of inter-broker connections
 * uses the inter-broker listener's settings, and a broker's connections to the controller use the
 * controller listener's (the first of controller.listener.names), as Kafka's do.
 *
 * What each key does here:
 * - key store / trust store: key-stores.ts; a listener must have a key store;
 * - `ssl.enabled.protocols` (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3): the range of versions offered;
 *   `ssl.protocol` caps what a client offers (TLSv1.2 there means no TLSv1.3), as Kafka documents;
 * - `ssl.cipher.suites`: Java (IANA) names, mapped to OpenSSL's (cipher-suites.ts); TLS 1.3 names
 *   pass as they are; empty means the platform's defaults;
 * - `ssl.client.auth` (none / requested / required): on SSL listeners; on SASL_SSL listeners only
 *   when listener-prefixed (Kafka's rule), otherwise none;
 * - `ssl.principal.mapping.rules`: the principal of a client certificate on SSL listeners;
 * - `ssl.endpoint.identification.algorithm`: https (the default) makes a client check that the
 *   server certificate names the host it connected to; empty turns the check off;
 * - `ssl.engine.factory.class`: Kafka's default factory (or its common-name-logging variant) only;
 *   a custom Java class cannot be loaded and stops startup. `ssl.provider`, `ssl.keymanager.algorithm`,
 *   `ssl.trustmanager.algorithm` and `ssl.secure.random.implementation` name Java providers; OpenSSL
 *   has one implementation, so they are accepted and have no effect.
 *
 * Invariants: everything is read and checked once, at startup; a setting that cannot be honoured
 * throws ConfigException naming its key (listener-prefixed when the value came from the prefix);
 * the secure contexts are built here, so a key that does not match its certificate fails startup.
 */
import type * as Tls from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import type { KafkaConfig } from '../../../config/kafka-config';
import { listenerPrefix } from '../../../config/kafka-config';
import { ConfigException } from '../../../config/config-types';
import type { ClientTlsOptions } from '../../../client/network-client';
import { OPENSSL_CIPHER_NAMES, TLS13_CIPHER_SUITES } from './cipher-suites';
import { loadKeyStore, loadTrustStore, type KeyMaterial, type StoreConfig } from './key-stores';
import { InvalidRuleError, SslPrincipalMapper } from './principal-mapper';

let tlsModule: typeof Tls | undefined;
/** node:tls, loaded on first use: only SSL listeners and clients need it. */
const tls = (): typeof Tls => (tlsModule ??= require('node:tls') as typeof Tls);

export type SslClientAuth = 'none' | 'requested' | 'required';

const LIST_KEYS = new Set(['ssl.cipher.suites', 'ssl.enabled.protocols']);
const PROTOCOL_VERSIONS: readonly Tls.SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
const KAFKA_ENGINE_FACTORIES = new Set([
  'org.apache.kafka.common.security.ssl.DefaultSslEngineFactory',
  'org.apache.kafka.common.security.ssl.CommonNameLoggingSslEngineFactory',
]);

/** The ssl.* values that apply to one listener name (null: the plain keys only). */
export class SslConfigView implements StoreConfig {
  constructor(
    private readonly config: KafkaConfig,
    readonly listenerName: string | null,
    readonly context: string,
  ) {}

  private override(key: string): string | null {
    return this.listenerName === null ? null : this.config.listenerOverride(this.listenerName, key);
  }

  /** True when `listener.name.<l>.<key>` is set. */
  isOverridden(key: string): boolean {
    return this.override(key) !== null;
  }

  source(key: string): string {
    return this.isOverridden(key) ? listenerPrefix(this.listenerName!) + key : key;
  }

  value(key: string): string | null {
    const o = this.override(key);
    if (o !== null) return o.trim();
    const v = LIST_KEYS.has(key) ? this.config.getList(key)?.join(',') ?? null : this.config.getString(key);
    return v;
  }

  list(key: string): string[] {
    return (this.value(key) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }

  fail(key: string, message: string): never {
    throw new ConfigException(`${this.source(key)} (${this.context}): ${message}`, this.source(key));
  }
}

function versionRange(v: SslConfigView, side: 'server' | 'client'): { minVersion: Tls.SecureVersion; maxVersion: Tls.SecureVersion } {
  const enabled = v.list('ssl.enabled.protocols');
  let indexes: number[];
  if (enabled.length === 0) {
    indexes = [2, 3];
  } else {
    indexes = enabled.map((p) => {
      const i = PROTOCOL_VERSIONS.indexOf(p as Tls.SecureVersion);
      if (i < 0) v.fail('ssl.enabled.protocols', `Unsupported protocol ${p} (krill supports ${PROTOCOL_VERSIONS.join(', ')})`);
      return i;
    });
  }
  indexes = [...new Set(indexes)].sort();
  if (indexes[indexes.length - 1] - indexes[0] + 1 !== indexes.length) {
    v.fail('ssl.enabled.protocols', `${enabled.join(',')}: krill can enable only a contiguous range of TLS versions`);
  }
  let max = indexes[indexes.length - 1];
  if (side === 'client') {
    const protocol = v.value('ssl.protocol') ?? 'TLSv1.3';
    const cap = protocol === 'TLS' || protocol === 'SSL' ? 3 : PROTOCOL_VERSIONS.indexOf(protocol as Tls.SecureVersion);
    if (cap < 0) v.fail('ssl.protocol', `${protocol} SSLContext not available`);
    max = Math.min(max, cap);
    if (max < indexes[0]) v.fail('ssl.protocol', `${protocol} allows none of ssl.enabled.protocols (${enabled.join(',')})`);
  }
  return { minVersion: PROTOCOL_VERSIONS[indexes[0]], maxVersion: PROTOCOL_VERSIONS[max] };
}

function cipherList(v: SslConfigView): string | undefined {
  const suites = v.list('ssl.cipher.suites');
  if (suites.length === 0) return undefined;
  const openssl = new Set(tls().getCiphers().map((c) => c.toUpperCase()));
  const out: string[] = [];
  for (const s of suites) {
    if (s === 'TLS_EMPTY_RENEGOTIATION_INFO_SCSV') continue; // a signal, not a suite; OpenSSL always sends it
    if (TLS13_CIPHER_SUITES.has(s)) out.push(s);
    else if (OPENSSL_CIPHER_NAMES[s]) out.push(OPENSSL_CIPHER_NAMES[s]);
    else if (openssl.has(s.toUpperCase())) out.push(s.toUpperCase());
    else v.fail('ssl.cipher.suites', `Unsupported CipherSuite: ${s}`);
  }
  if (out.length === 0) v.fail('ssl.cipher.suites', 'no usable cipher suite');
  return out.join(':');
}

function checkEngineFactory(v: SslConfigView): void {
  const factory = v.value('ssl.engine.factory.class');
  if (factory !== null && factory !== '' && !KAFKA_ENGINE_FACTORIES.has(factory)) {
    v.fail('ssl.engine.factory.class', `${factory}: krill cannot load a Java SslEngineFactory; remove the setting to use Kafka's default TLS behaviour`);
  }
}

const pem = (c: X509Certificate): string => c.toString();

/** Secure context options for one side, with the stores loaded. */
function contextOptions(v: SslConfigView, side: 'server' | 'client'): { options: Tls.SecureContextOptions; keyStore: KeyMaterial | null } {
  checkEngineFactory(v);
  const keyStore = loadKeyStore(v);
  const trustStore = loadTrustStore(v);
  const options: Tls.SecureContextOptions = { ...versionRange(v, side) };
  const ciphers = cipherList(v);
  if (ciphers !== undefined) options.ciphers = ciphers;
  if (keyStore) {
    options.key = keyStore.key.export({ format: 'pem', type: 'pkcs8' }) as string;
    options.cert = keyStore.chain.map(pem).join('');
  }
  if (trustStore) options.ca = trustStore.map(pem);
  return { options, keyStore };
}

function secureContext(v: SslConfigView, options: Tls.SecureContextOptions): Tls.SecureContext {
  try {
    return tls().createSecureContext(options);
  } catch (err) {
    const msg = (err as Error).message;
    v.fail(/key|certificate/i.test(msg) ? 'ssl.keystore.location' : 'ssl.enabled.protocols', `cannot set up TLS: ${msg}`);
  }
}

export interface ServerSslSettings {
  readonly listenerName: string;
  readonly securityProtocol: string;
  /** For tls.Server: key, chain, trust anchors, versions, ciphers. */
  readonly contextOptions: Tls.SecureContextOptions;
  readonly clientAuth: SslClientAuth;
  /** The principal mapping of client certificates (SSL listeners; null on SASL_SSL, where SASL names the principal). */
  readonly principalMapper: SslPrincipalMapper | null;
  /** Things worth a warning in the log (Kafka warns about the same). */
  readonly warnings: readonly string[];
  /** The client side of the same settings (for the inter-broker check that they can talk to each other). */
  clientContext(): Tls.SecureContext;
  /** The config key a setting of this listener comes from (listener-prefixed or plain). */
  sourceOf(key: string): string;
}

function clientAuthOf(v: SslConfigView, securityProtocol: string, warnings: string[]): SslClientAuth {
  const key = 'ssl.client.auth';
  if (securityProtocol === 'SASL_SSL' && !v.isOverridden(key)) {
    const plain = v.value(key);
    if (plain !== null && plain.toLowerCase() !== 'none') {
      warnings.push(
        "Broker configuration 'ssl.client.auth' is applied only to SSL listeners. Listener-prefixed configuration can be used to enable SSL client authentication for SASL_SSL listeners.",
      );
    }
    return 'none';
  }
  const value = v.value(key) ?? 'none';
  if (value !== 'none' && value !== 'requested' && value !== 'required') {
    throw ConfigException.invalid(v.source(key), value, 'String must be one of: required, requested, none');
  }
  return value;
}

/** The TLS settings of an SSL or SASL_SSL listener; throws ConfigException. */
export function serverSslSettings(config: KafkaConfig, listenerName: string, securityProtocol: string): ServerSslSettings {
  const v = new SslConfigView(config, listenerName, `listener ${listenerName}`);
  const warnings: string[] = [];
  const { options, keyStore } = contextOptions(v, 'server');
  if (!keyStore) {
    v.fail(
      'ssl.keystore.location',
      `the ${securityProtocol} listener ${listenerName} has no key store: set ssl.keystore.location (with ssl.keystore.type and ssl.keystore.password), or ssl.keystore.type=PEM with ssl.keystore.certificate.chain and ssl.keystore.key`,
    );
  }
  secureContext(v, options); // fails here, not at the first handshake, when the key does not match
  const clientAuth = clientAuthOf(v, securityProtocol, warnings);
  let principalMapper: SslPrincipalMapper | null = null;
  if (securityProtocol === 'SSL') {
    try {
      principalMapper = new SslPrincipalMapper(v.value('ssl.principal.mapping.rules'));
    } catch (err) {
      if (!(err instanceof InvalidRuleError)) throw err;
      v.fail('ssl.principal.mapping.rules', err.message);
    }
  }
  return {
    listenerName,
    securityProtocol,
    contextOptions: options,
    clientAuth,
    principalMapper,
    warnings,
    clientContext: () => secureContext(v, contextOptions(v, 'client').options),
    sourceOf: (key) => v.source(key),
  };
}

function endpointIdentification(v: SslConfigView): boolean {
  const alg = v.value('ssl.endpoint.identification.algorithm') ?? '';
  if (alg === '') return false;
  if (alg.toLowerCase() === 'https') return true;
  v.fail('ssl.endpoint.identification.algorithm', `Unsupported endpoint identification algorithm ${alg} (https, or empty for none)`);
}

/**
 * TLS options of krill's own connections to a listener with this security protocol (SSL,
 * SASL_SSL), with the ssl.* settings of `listenerName`; undefined for PLAINTEXT and SASL_PLAINTEXT.
 */
export function clientTlsOptions(config: KafkaConfig, listenerName: string, securityProtocol: string, context: string): ClientTlsOptions | undefined {
  if (securityProtocol !== 'SSL' && securityProtocol !== 'SASL_SSL') return undefined;
  const v = new SslConfigView(config, listenerName, context);
  const { options } = contextOptions(v, 'client');
  return { secureContext: secureContext(v, options), verifyHostname: endpointIdentification(v) };
}

/** krill's inter-broker client TLS (replication, WriteTxnMarkers, transaction verification). */
export function interBrokerClientTls(config: KafkaConfig): ClientTlsOptions | undefined {
  const name = config.interBrokerListenerName();
  return clientTlsOptions(config, name, config.interBrokerSecurityProtocol(), `inter-broker client, listener ${name}`);
}

/**
 * krill's client TLS towards the controller: the protocol and settings of the first of
 * controller.listener.names (PLAINTEXT when the broker names no controller listener).
 */
export function controllerClientTls(config: KafkaConfig): ClientTlsOptions | undefined {
  const name = config.controllerListenerNames()[0];
  if (name === undefined) return undefined;
  const protocol = config.listenerSecurityProtocolMap().get(name) ?? 'PLAINTEXT';
  return clientTlsOptions(config, name, protocol, `controller client, listener ${name}`);
}
