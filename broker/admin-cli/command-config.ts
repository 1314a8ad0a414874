/**
 * `--command-config FILE` of every admin subcommand: a Kafka client properties file turned into
 * the TLS and SASL settings of krill's own client (client/network-client.ts ClientSecurity), with
 * the same code the broker uses for its inter-broker connections:
 *
 * - `security.protocol`: PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL;
 * - `ssl.*` (trust store, key store for mutual TLS, PEM / PKCS12 as broker/security/ssl/key-stores
 *   reads them, `ssl.endpoint.identification.algorithm`, protocols, cipher suites):
 *   broker/security/ssl/ssl-settings clientTlsOptions, fed with the file's ssl.* keys only;
 * - `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; Kafka's default GSSAPI is refused) and
 *   `sasl.jaas.config` (one PlainLoginModule / ScramLoginModule entry with username and password):
 *   broker/security/sasl's client mechanisms;
 * - `client.id`, `request.timeout.ms`.
 *
 * openAdmin() opens a subcommand's AdminConnection from its --bootstrap-server and
 * --command-config. Other keys are accepted and ignored, as an admin client ignores configs it does not use. A
 * setting that cannot be honoured is a ToolError naming the key.
 */
import type { ClientSecurity } from '../../client/network-client';
import { KafkaConfig } from '../../config/kafka-config';
import { loadPropertiesFile } from '../../config/properties';
import { clientTlsOptions } from '../security/ssl/ssl-settings';
import { loadJaasProperty } from '../security/sasl/jaas';
import { saslClientFor, SCRAM_LOGIN_MODULE, SCRAM_SHA_256, SCRAM_SHA_512 } from '../security/sasl/registry';
import { PLAIN_LOGIN_MODULE, PLAIN_MECHANISM } from '../security/sasl/plain';
import { createScramClient } from '../security/sasl/scram-client';
import type { SaslClientConfig } from '../security/sasl/mechanism';
import { AdminConnection, parseBootstrapServers, ToolError } from './admin-connection';
import type { ParsedArgs } from './tool-args';

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];
const LOGIN_MODULES: Readonly<Record<string, string>> = { [PLAIN_MECHANISM]: PLAIN_LOGIN_MODULE, [SCRAM_SHA_256]: SCRAM_LOGIN_MODULE, [SCRAM_SHA_512]: SCRAM_LOGIN_MODULE };

export interface CommandConfig {
  security: ClientSecurity;
  clientId?: string;
  requestTimeoutMs?: number;
}

/** The subcommand's connection: --bootstrap-server, secured as --command-config says. */
export function openAdmin(args: ParsedArgs): Promise<AdminConnection> {
  const bootstrapServers = parseBootstrapServers(args.need('--bootstrap-server', 'to reach the cluster'));
  const config = loadCommandConfig(args.get('--command-config'));
  return AdminConnection.open({ bootstrapServers, ...config });
}

/** The client settings of a --command-config file (none: PLAINTEXT, no SASL). */
export function loadCommandConfig(file: string | undefined): CommandConfig {
  if (file === undefined) return { security: {} };
  let props: Map<string, string>;
  try {
    props = loadPropertiesFile(file);
  } catch (err) {
    throw new ToolError(`cannot read --command-config ${file}: ${(err as Error).message}`);
  }
  return commandConfigOf(props, `--command-config ${file}`);
}

export function commandConfigOf(props: ReadonlyMap<string, string>, context: string): CommandConfig {
  const protocol = (props.get('security.protocol') ?? 'PLAINTEXT').trim().toUpperCase();
  if (!PROTOCOLS.includes(protocol)) throw new ToolError(`Invalid value ${props.get('security.protocol')} for configuration security.protocol: String must be one of: ${PROTOCOLS.join(', ')}`);
  const out: CommandConfig = { security: {} };
  const clientId = props.get('client.id');
  if (clientId !== undefined && clientId !== '') out.clientId = clientId;
  const timeout = props.get('request.timeout.ms');
  if (timeout !== undefined) {
    if (!/^\d+$/.test(timeout.trim()) || Number(timeout) <= 0) throw new ToolError(`Invalid value ${timeout} for configuration request.timeout.ms: Expected a positive integer`);
    out.requestTimeoutMs = Number(timeout);
  }
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const ssl: Record<string, string> = {};
    for (const [k, v] of props) if (k.startsWith('ssl.')) ssl[k] = v;
    try {
      out.security.tls = clientTlsOptions(KafkaConfig.load({ props: ssl }), 'ADMIN_CLIENT', protocol, context);
    } catch (err) {
      throw new ToolError((err as Error).message);
    }
  }
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') out.security.sasl = saslOf(props);
  return out;
}

function saslOf(props: ReadonlyMap<string, string>): NonNullable<ClientSecurity['sasl']> {
  const mechanism = (props.get('sasl.mechanism') ?? 'GSSAPI').trim();
  const module = LOGIN_MODULES[mechanism];
  if (module === undefined) throw new ToolError(`sasl.mechanism=${mechanism}: krill's admin client implements ${Object.keys(LOGIN_MODULES).join(', ')}`);
  const jaasText = props.get('sasl.jaas.config');
  if (jaasText === undefined) throw new ToolError(`Could not find a 'KafkaClient' entry in the JAAS configuration: set sasl.jaas.config (${module} required username="..." password="...";)`);
  let entry;
  try {
    entry = loadJaasProperty(jaasText);
  } catch (err) {
    throw new ToolError(`Invalid sasl.jaas.config: ${(err as Error).message}`);
  }
  if (entry.loginModule !== module) throw new ToolError(`sasl.jaas.config: sasl.mechanism=${mechanism} needs ${module}, not ${entry.loginModule}`);
  const username = entry.options.get('username');
  const password = entry.options.get('password');
  if (username === undefined || password === undefined) throw new ToolError('sasl.jaas.config needs username and password options');
  const config: SaslClientConfig = { mechanism, username, password };
  const deps = { scramClient: (c: SaslClientConfig) => createScramClient(c) };
  return { mechanism, newClient: () => saslClientFor(config, deps) };
}
