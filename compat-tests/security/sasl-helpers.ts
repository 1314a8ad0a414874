/**
 * Shared setup of the SASL compatibility suites (sasl-*.test.ts): JAAS config text as a Kafka
 * server.properties carries it, embedded brokers whose only listener is SASL_PLAINTEXT (PLAIN and/or
 * OAUTHBEARER, the inter-broker side PLAIN as `admin`), Kafka's unsecured OAUTHBEARER tokens, KafkaJS
 * clients with SASL, and raw SASL requests for the tests that must see exactly what the broker answers.
 * Every broker uses port 0 and a temp dir removed by close(); every wait is bounded.
 */
import type { Kafka, SASLOptions } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { requestFrame, RawSocket } from '../helpers/raw-socket';
import { apiByKey, ApiKey } from '../../protocol/generated';
import { Reader } from '../../protocol/primitives/reader';
import { readResponseHeader } from '../../protocol/header';
import { responseHeaderVersion } from '../../protocol/generated';
import { quietKafka } from './kafkajs-helpers';

export const ADMIN = { username: 'admin', password: 'admin-secret' };
export const ALICE = { username: 'alice', password: 'alice-secret' };
export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
export const OAUTH_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';

/** Kafka's PLAIN JAAS line: the broker's own credentials and its users. */
export function plainJaas(users: Record<string, string> = { [ADMIN.username]: ADMIN.password, [ALICE.username]: ALICE.password }): string {
  const u = Object.entries(users)
    .map(([name, pw]) => `user_${name}="${pw}"`)
    .join(' ');
  return `${PLAIN_LOGIN_MODULE} required username="${ADMIN.username}" password="${ADMIN.password}" ${u};`;
}

/** server.properties of a node whose one listener is SASL_PLAINTEXT (inter-broker PLAIN as admin). */
export function saslBrokerConfig(mechanisms: string[] = ['PLAIN'], extra: Record<string, string> = {}): Record<string, string> {
  const c: Record<string, string> = {
    'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT',
    'security.inter.broker.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'sasl.enabled.mechanisms': mechanisms.join(','),
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas(),
    'num.partitions': '1',
    'offsets.topic.num.partitions': '1',
    'log.initial.task.delay.ms': '0',
  };
  if (mechanisms.includes('OAUTHBEARER')) {
    c['listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config'] = `${OAUTH_LOGIN_MODULE} required unsecuredLoginStringClaim_sub="${ADMIN.username}";`;
  }
  return { ...c, ...extra };
}

/** An embedded broker listening on SASL_PLAINTEXT only (port 0). */
export function startSaslBroker(config: Record<string, string> = saslBrokerConfig()): Promise<RunningBroker> {
  return startBroker({ logLevel: (process.env.KRILL_LOG_LEVEL as 'info' | undefined) ?? 'error', config, overrides: ['listeners=SASL_PLAINTEXT://127.0.0.1:0'] });
}

/** Kafka's unsecured JWS (`alg: none`, no signature), Base64 as OAuthBearerUnsecuredJws decodes it. */
export function unsecuredToken(claims: Record<string, unknown>): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64').replace(/=+$/, '');
  return `${b64({ alg: 'none' })}.${b64(claims)}.`;
}

/** A token for `sub` issued now, expiring in `lifetimeS` seconds. */
export function tokenFor(sub: string, lifetimeS = 3600, extra: Record<string, unknown> = {}): string {
  const now = Date.now() / 1000;
  return unsecuredToken({ sub, iat: now, exp: now + lifetimeS, ...extra });
}

/** A quiet KafkaJS client (kafkajs-helpers' quietKafka) authenticating with `sasl`. */
export function kafkaJs(bootstrap: string | string[], sasl: SASLOptions | undefined, opts: { clientId?: string; reauthenticationThreshold?: number } = {}): Kafka {
  return quietKafka(bootstrap, {
    clientId: opts.clientId ?? 'sasl-compat',
    sasl,
    authenticationTimeout: 5_000,
    reauthenticationThreshold: opts.reauthenticationThreshold,
  });
}

/** One raw request on `sock` and its decoded response (header checked). */
export async function rawCall(sock: RawSocket, apiKey: number, version: number, correlationId: number, body: object): Promise<any> {
  await sock.write(requestFrame(apiKey, version, correlationId, body));
  const frame = await sock.nextFrame();
  const r = new Reader(frame);
  const h = readResponseHeader(r, responseHeaderVersion(apiKey, version));
  if (h.correlationId !== correlationId) throw new Error(`correlation id ${h.correlationId}, expected ${correlationId}`);
  return apiByKey(apiKey)!.readResponse(r, version);
}

/** SaslHandshake v1 + SaslAuthenticate v2 with PLAIN over a raw socket. */
export async function rawPlainLogin(sock: RawSocket, user: { username: string; password: string }): Promise<any> {
  const hs = await rawCall(sock, ApiKey.SaslHandshake, 1, 1, { mechanism: 'PLAIN' });
  if (hs.errorCode !== 0) throw new Error(`SaslHandshake error ${hs.errorCode}`);
  return rawCall(sock, ApiKey.SaslAuthenticate, 2, 2, { authBytes: Buffer.from(`\u0000${user.username}\u0000${user.password}`) });
}

export { RawSocket, requestFrame };
