/**
 * The registry of SASL mechanisms: which mechanisms a listener enables and how each is built
 * (server side), and the credentials krill's own connections present to a SASL listener (client
 * side). Everything is resolved and validated once at startup, so a listener krill cannot serve
 * stops the broker with a clear error instead of failing its clients later.
 *
 * Per listener, with Kafka's precedence (SaslChannelBuilder, KafkaConfig, `listener.name.<l>.`
 * being the lower-cased listener prefix):
 * - enabled mechanisms: `listener.name.<l>.sasl.enabled.mechanisms`, else `sasl.enabled.mechanisms`
 *   (Kafka's default GSSAPI). Kerberos (GSSAPI) and any mechanism not in IMPLEMENTED_MECHANISMS are
 *   refused; an empty list is "No SASL mechanisms are enabled".
 * - each mechanism's JAAS entry: `listener.name.<l>.<mechanism>.sasl.jaas.config` (jaas.ts).
 * - `connections.max.reauth.ms` (KIP-368): `listener.name.<l>.<mechanism>.connections.max.reauth.ms`,
 *   else `listener.name.<l>.connections.max.reauth.ms`, else the broker-wide value.
 * - `sasl.server.max.receive.size`: `listener.name.<l>.sasl.server.max.receive.size`, else broker-wide.
 * - `listener.name.<l>.<mechanism>.sasl.server.callback.handler.class` may only name Kafka's
 *   default handler of that mechanism (krill runs no Java classes).
 *
 * Mechanisms: PLAIN (plain.ts) and OAUTHBEARER with unsecured tokens (oauthbearer.ts) are built
 * here. SCRAM-SHA-256 / SCRAM-SHA-512 are engineer C's (scram*.ts, over the SCRAM credential store):
 * they come in through SaslMechanismDeps.scramServer / scramClient, which KafkaServer fills in;
 * without them a listener enabling SCRAM is refused at startup as "not available".
 */
import type { KafkaConfig } from '../../../config/kafka-config';
import { listenerPrefix } from '../../../config/kafka-config';
import { ConfigException, parseAndValidate } from '../../../config/config-types';
import { brokerConfigDef } from '../../../config/config-def';
import { parseCsvList, normaliseListenerName } from '../../../config/listeners';
import { Logger } from '../../../common/logger';
import { SystemTime, type Time } from '../../../common/time';
import type { SaslClient, SaslClientConfig, SaslServerMechanism } from './mechanism';
import { loadServerJaas, serverJaasConfigKey, type JaasEntry } from './jaas';
import { PLAIN_LOGIN_MODULE, PLAIN_MECHANISM, PlainSaslClient, PlainServerMechanism } from './plain';
import {
  OAUTHBEARER_LOGIN_MODULE,
  OAUTHBEARER_MECHANISM,
  OAuthBearerSaslClient,
  OAuthBearerServerMechanism,
  unsecuredLoginExtensions,
  unsecuredLoginToken,
  unsecuredValidatorOptions,
} from './oauthbearer';

export const SCRAM_SHA_256 = 'SCRAM-SHA-256';
export const SCRAM_SHA_512 = 'SCRAM-SHA-512';
export const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';
export const GSSAPI_MECHANISM = 'GSSAPI';

/** The mechanisms krill implements (SCRAM once its deps are given). */
export const IMPLEMENTED_MECHANISMS: readonly string[] = [PLAIN_MECHANISM, SCRAM_SHA_256, SCRAM_SHA_512, OAUTHBEARER_MECHANISM];

/** Kafka's login module for each mechanism: the JAAS entry must name it. */
const LOGIN_MODULES: Record<string, string> = {
  [PLAIN_MECHANISM]: PLAIN_LOGIN_MODULE,
  [SCRAM_SHA_256]: SCRAM_LOGIN_MODULE,
  [SCRAM_SHA_512]: SCRAM_LOGIN_MODULE,
  [OAUTHBEARER_MECHANISM]: OAUTHBEARER_LOGIN_MODULE,
};

/** Kafka's default server callback handler of each mechanism (SaslChannelBuilder.createServerCallbackHandlers). */
const DEFAULT_SERVER_CALLBACK_HANDLERS: Record<string, string> = {
  [PLAIN_MECHANISM]: 'org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler',
  [SCRAM_SHA_256]: 'org.apache.kafka.common.security.scram.internals.ScramServerCallbackHandler',
  [SCRAM_SHA_512]: 'org.apache.kafka.common.security.scram.internals.ScramServerCallbackHandler',
  [OAUTHBEARER_MECHANISM]: 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler',
};

/** What a mechanism is built from, for one listener. */
export interface MechanismContext {
  readonly config: KafkaConfig;
  readonly listenerName: string;
  readonly mechanism: string;
  /** The listener's JAAS entry for this mechanism. */
  readonly jaas: JaasEntry;
  readonly logger: Logger;
  readonly time: Time;
}

/**
 * What the registry needs from outside broker/security/sasl/ itself. The SCRAM slots are engineer
 * C's: `scramServer` builds SCRAM-SHA-256 / SCRAM-SHA-512 for a listener (ctx.mechanism says which),
 * `scramClient` the client side for krill's own connections.
 */
export interface SaslMechanismDeps {
  scramServer?: (ctx: MechanismContext) => SaslServerMechanism;
  scramClient?: (config: SaslClientConfig) => SaslClient;
  logger?: Logger;
  time?: Time;
}

/** Everything the authenticator of one SASL listener uses. */
export interface ListenerSaslSettings {
  readonly listenerName: string;
  /** In the order Kafka's SaslHandshake response lists them. */
  readonly enabledMechanisms: readonly string[];
  readonly mechanisms: ReadonlyMap<string, SaslServerMechanism>;
  /** `sasl.server.max.receive.size`: the largest frame read while (re-)authenticating. */
  readonly maxReceiveSize: number;
  /** `connections.max.reauth.ms` by mechanism; 0 = no limit. */
  readonly connectionsMaxReauthMs: ReadonlyMap<string, number>;
}

// ---------------------------------------------------------------------------------------------
// Java's HashSet order (SaslServerAuthenticator lists `new ArrayList<>(new HashSet<>(enabled))`)

function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** The iteration order of `new HashSet<>(list)` in Java (HashMap buckets, insertion order within one). */
export function javaHashSetOrder(list: readonly string[]): string[] {
  const unique = [...new Set(list)];
  let capacity = 1;
  const wanted = Math.max(Math.floor(unique.length / 0.75) + 1, 16);
  while (capacity < wanted) capacity *= 2;
  const buckets: string[][] = Array.from({ length: capacity }, () => []);
  for (const s of unique) {
    const h = javaStringHash(s);
    buckets[(h ^ (h >>> 16)) & (capacity - 1)].push(s);
  }
  return buckets.flat();
}

// ---------------------------------------------------------------------------------------------
// Server side

/** A listener's own value of `key`, else the broker-wide one, typed by the broker's definition of `key`. */
function listenerValue(config: KafkaConfig, listenerName: string, key: string, mechanism?: string): unknown {
  const def = brokerConfigDef(key)!;
  const keys = mechanism ? [`${mechanism.toLowerCase()}.${key}`, key] : [key];
  for (const k of keys) {
    const raw = config.listenerOverride(listenerName, k);
    if (raw !== null) {
      try {
        return parseAndValidate({ ...def, name: listenerPrefix(listenerName) + k }, raw);
      } catch (err) {
        if (err instanceof ConfigException) throw err;
        throw ConfigException.invalid(listenerPrefix(listenerName) + k, raw, (err as Error).message);
      }
    }
  }
  return config.get(key);
}

/** `listener.name.<l>.sasl.enabled.mechanisms`, else `sasl.enabled.mechanisms`, as given. */
export function enabledSaslMechanisms(config: KafkaConfig, listenerName: string): string[] {
  const v = listenerValue(config, listenerName, 'sasl.enabled.mechanisms') as string[] | null;
  return v ?? [];
}

function checkEnabled(listenerName: string, enabled: readonly string[], deps: SaslMechanismDeps): void {
  const key = `${listenerPrefix(listenerName)}sasl.enabled.mechanisms`;
  if (enabled.length === 0) throw new ConfigException(`No SASL mechanisms are enabled on listener ${listenerName} (sasl.enabled.mechanisms / ${key})`, key);
  if (enabled.includes(GSSAPI_MECHANISM)) {
    const only = enabled.length === 1 ? ` (sasl.enabled.mechanisms defaults to GSSAPI in Kafka; set it or ${key})` : '';
    throw new ConfigException(
      `Listener ${listenerName} enables SASL mechanism GSSAPI (Kerberos), which krill does not implement${only}. ` +
        `Supported mechanisms: ${IMPLEMENTED_MECHANISMS.join(', ')}`,
      key,
    );
  }
  for (const m of enabled) {
    if (!IMPLEMENTED_MECHANISMS.includes(m)) {
      throw new ConfigException(`Listener ${listenerName} enables SASL mechanism ${m}, which krill does not implement. Supported mechanisms: ${IMPLEMENTED_MECHANISMS.join(', ')}`, key);
    }
    if ((m === SCRAM_SHA_256 || m === SCRAM_SHA_512) && !deps.scramServer) {
      throw new ConfigException(`Listener ${listenerName} enables SASL mechanism ${m}, which is not available in this broker (no SCRAM credential store)`, key);
    }
  }
}

function checkLoginModule(jaas: JaasEntry, listenerName: string, mechanism: string): void {
  const expected = LOGIN_MODULES[mechanism];
  if (jaas.loginModule !== expected) {
    throw new ConfigException(
      `${serverJaasConfigKey(listenerName, mechanism)} names login module ${jaas.loginModule}; krill's ${mechanism} uses ${expected}`,
      serverJaasConfigKey(listenerName, mechanism),
    );
  }
}

/** Builds the server side of every mechanism `listenerName` enables; throws ConfigException on anything krill cannot serve. */
export function saslServerMechanisms(config: KafkaConfig, listenerName: string, deps: SaslMechanismDeps = {}): Map<string, SaslServerMechanism> {
  const enabled = enabledSaslMechanisms(config, listenerName);
  checkEnabled(listenerName, enabled, deps);
  const logger = deps.logger;
  const time = deps.time ?? SystemTime;
  const out = new Map<string, SaslServerMechanism>();
  for (const mechanism of enabled) {
    if (out.has(mechanism)) continue;
    const handlerKey = `${mechanism.toLowerCase()}.sasl.server.callback.handler.class`;
    const handler = config.listenerOverride(listenerName, handlerKey);
    if (handler !== null && handler.trim() !== DEFAULT_SERVER_CALLBACK_HANDLERS[mechanism]) {
      throw new ConfigException(
        `${listenerPrefix(listenerName)}${handlerKey}=${handler.trim()}: krill runs no custom SASL callback handlers (only ${DEFAULT_SERVER_CALLBACK_HANDLERS[mechanism]})`,
        listenerPrefix(listenerName) + handlerKey,
      );
    }
    const jaas = loadServerJaas(config, listenerName, mechanism, logger);
    checkLoginModule(jaas, listenerName, mechanism);
    const log = logger?.child(`sasl-${mechanism.toLowerCase()}`);
    switch (mechanism) {
      case PLAIN_MECHANISM:
        out.set(mechanism, new PlainServerMechanism([jaas]));
        break;
      case OAUTHBEARER_MECHANISM: {
        const key = serverJaasConfigKey(listenerName, mechanism);
        // Kafka logs the broker in with the same entry at startup (OAuthBearerUnsecuredLoginCallbackHandler):
        // options other than none must make a token, so a login Kafka refuses is refused here too.
        if (jaas.options.size > 0) {
          if ([...jaas.options.keys()].every((k) => k.startsWith('unsecuredLoginExtension_'))) {
            throw new ConfigException(`Invalid ${key}: Extensions provided in login context without a token`, key);
          }
          try {
            unsecuredLoginToken(jaas, time.milliseconds());
          } catch (err) {
            throw new ConfigException(`Invalid ${key}: ${(err as Error).message}`, key);
          }
        }
        let opts;
        try {
          opts = unsecuredValidatorOptions(jaas);
        } catch (err) {
          throw new ConfigException(`Invalid ${key}: ${(err as Error).message}`, key);
        }
        out.set(mechanism, new OAuthBearerServerMechanism(opts, () => time.milliseconds(), (reason) => log?.debug(`OAUTHBEARER token rejected: ${reason}`)));
        break;
      }
      default: {
        // SCRAM-SHA-256 / SCRAM-SHA-512 (checkEnabled made sure the slot is filled).
        const m = deps.scramServer!({ config, listenerName, mechanism, jaas, logger: log ?? Logger.silent(), time });
        if (m.name !== mechanism) throw new Error(`the SCRAM factory built ${m.name} for ${mechanism}`);
        out.set(mechanism, m);
      }
    }
  }
  return out;
}

/** Everything the authenticator of `listenerName` needs, validated. */
export function listenerSaslSettings(config: KafkaConfig, listenerName: string, deps: SaslMechanismDeps = {}): ListenerSaslSettings {
  const mechanisms = saslServerMechanisms(config, listenerName, deps);
  const reauth = new Map<string, number>();
  for (const m of mechanisms.keys()) {
    const v = listenerValue(config, listenerName, 'connections.max.reauth.ms', m) as bigint | null;
    reauth.set(m, v === null ? 0 : Number(v));
  }
  return {
    listenerName,
    enabledMechanisms: javaHashSetOrder(enabledSaslMechanisms(config, listenerName)),
    mechanisms,
    maxReceiveSize: listenerValue(config, listenerName, 'sasl.server.max.receive.size') as number,
    connectionsMaxReauthMs: reauth,
  };
}

// ---------------------------------------------------------------------------------------------
// Client side: krill's own connections to a SASL listener

/** What client/network-client.ts takes (its ClientSaslOptions): a mechanism and fresh exchanges. */
export interface ClientSasl {
  readonly mechanism: string;
  newClient(): SaslClient;
}

/** A client for `config` (PLAIN here; SCRAM through deps.scramClient). */
export function saslClientFor(config: SaslClientConfig, deps: SaslMechanismDeps = {}): SaslClient {
  switch (config.mechanism) {
    case PLAIN_MECHANISM:
      return new PlainSaslClient(config.username, config.password);
    case SCRAM_SHA_256:
    case SCRAM_SHA_512:
      if (!deps.scramClient) throw new Error(`SASL mechanism ${config.mechanism} is not available to krill's client (no SCRAM client)`);
      return deps.scramClient(config);
    default:
      throw new Error(`krill's client does not implement SASL mechanism ${config.mechanism}`);
  }
}

/**
 * The SASL credentials a broker uses towards `listenerName` with `mechanism`, from that listener's
 * JAAS entry (Kafka's brokers take `username` / `password` of the PlainLoginModule / ScramLoginModule
 * entry, and OAUTHBEARER's unsecured login token options). Throws ConfigException when they are missing.
 */
export function brokerClientSasl(config: KafkaConfig, listenerName: string, mechanism: string, mechanismConfig: string, deps: SaslMechanismDeps = {}): ClientSasl {
  if (mechanism === GSSAPI_MECHANISM || !IMPLEMENTED_MECHANISMS.includes(mechanism)) {
    throw new ConfigException(
      `${mechanismConfig}=${mechanism}: krill's own connections implement ${IMPLEMENTED_MECHANISMS.join(', ')}${mechanism === GSSAPI_MECHANISM ? ' (GSSAPI is Kafka\'s default; set it)' : ''}`,
      mechanismConfig,
    );
  }
  const jaas = loadServerJaas(config, listenerName, mechanism, deps.logger);
  checkLoginModule(jaas, listenerName, mechanism);
  const key = serverJaasConfigKey(listenerName, mechanism);
  if (mechanism === OAUTHBEARER_MECHANISM) {
    const time = deps.time ?? SystemTime;
    try {
      unsecuredLoginToken(jaas, time.milliseconds());
    } catch (err) {
      throw new ConfigException(`Invalid ${key} for the broker's own connections: ${(err as Error).message}`, key);
    }
    const extensions = unsecuredLoginExtensions(jaas);
    return { mechanism, newClient: () => new OAuthBearerSaslClient(() => unsecuredLoginToken(jaas, time.milliseconds()), extensions) };
  }
  const username = jaas.options.get('username');
  const password = jaas.options.get('password');
  if (username === undefined || password === undefined) {
    throw new ConfigException(`${key} needs username and password options: the broker authenticates with them to listener ${listenerName}`, key);
  }
  const clientConfig: SaslClientConfig = { mechanism, username, password };
  saslClientFor(clientConfig, deps); // fails now, not on the first connection, when unavailable
  return { mechanism, newClient: () => saslClientFor(clientConfig, deps) };
}

/** The credentials for the inter-broker listener, when it is SASL_PLAINTEXT or SASL_SSL. */
export function interBrokerClientSasl(config: KafkaConfig, deps: SaslMechanismDeps = {}): ClientSasl | undefined {
  const protocol = config.interBrokerSecurityProtocol();
  if (protocol !== 'SASL_PLAINTEXT' && protocol !== 'SASL_SSL') return undefined;
  const mechanism = config.getString('sasl.mechanism.inter.broker.protocol')!;
  return brokerClientSasl(config, config.interBrokerListenerName(), mechanism, 'sasl.mechanism.inter.broker.protocol', deps);
}

/**
 * The credentials for the controller listener (the first of `controller.listener.names`), when
 * its protocol in `listener.security.protocol.map` is SASL, with `sasl.mechanism.controller.protocol`.
 */
export function controllerClientSasl(config: KafkaConfig, deps: SaslMechanismDeps = {}): ClientSasl | undefined {
  const name = parseCsvList(config.getString('controller.listener.names')).map(normaliseListenerName)[0];
  if (name === undefined) return undefined;
  const protocol = config.listenerSecurityProtocolMap().get(name);
  if (protocol !== 'SASL_PLAINTEXT' && protocol !== 'SASL_SSL') return undefined;
  const mechanism = config.getString('sasl.mechanism.controller.protocol')!;
  return brokerClientSasl(config, name, mechanism, 'sasl.mechanism.controller.protocol', deps);
}
