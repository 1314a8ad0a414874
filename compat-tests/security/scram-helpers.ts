/**
 * Shared setup of the SCRAM compatibility suites (scram.test.ts, scram-cluster.test.ts): the config
 * of a node with a PLAINTEXT listener (for bootstrapping users with raw requests) and a
 * SASL_PLAINTEXT listener offering SCRAM-SHA-256 and SCRAM-SHA-512 whose inter-broker side uses
 * SCRAM-SHA-512 as `admin`; AlterUserScramCredentials / DescribeUserScramCredentials sent with krill's
 * own client, the password salted with PBKDF2 as a client does; KafkaJS clients with SCRAM; and
 * bounded waits for a credential to reach, or leave, a broker's image (its listener, not polling).
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import type { Kafka, SASLOptions } from 'kafkajs';
import { connect, type BrokerConnection, type ConnectOptions } from '../../client/network-client';
import type { KafkaServer } from '../../broker/server';
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanismInfo } from '../../metadata/controller/scram-control-manager';
import { createScramClient } from '../../broker/security/sasl/scram-client';
import { quietKafka } from './kafkajs-helpers';

export const ADMIN = { username: 'admin', password: 'admin-secret' };
export const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';

/** Broker config: SASL_PLAINTEXT with both SCRAM mechanisms, inter-broker SCRAM-SHA-512 as admin. */
export function scramBrokerConfig(): Record<string, string> {
  return {
    'inter.broker.listener.name': 'SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
    'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': `${SCRAM_LOGIN_MODULE} required;`,
    'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config': `${SCRAM_LOGIN_MODULE} required username="${ADMIN.username}" password="${ADMIN.password}";`,
  };
}

/** The `listeners` value: both listeners on the given ports (0: free ports). */
export function scramListeners(plainPort = 0, saslPort = 0): string {
  return `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`;
}

/** `listeners=` override: both listeners on the given ports (0: free ports). */
export function listenersOverride(plainPort = 0, saslPort = 0): string {
  return `listeners=${scramListeners(plainPort, saslPort)}`;
}

export function endpointOf(server: KafkaServer, listener: 'PLAINTEXT' | 'SASL_PLAINTEXT'): { host: string; port: number; bootstrap: string } {
  const e = server.advertisedEndpoint(listener);
  if (!e) throw new Error(`no ${listener} listener`);
  return { host: e.host, port: e.port, bootstrap: `${e.host}:${e.port}` };
}

export function mechanismInfo(name: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'): ScramMechanismInfo {
  return name === 'SCRAM-SHA-256' ? SCRAM_SHA_256 : SCRAM_SHA_512;
}

/** An upsertion as Kafka's admin client builds it: a random salt and the PBKDF2-salted password. */
export function upsertion(name: string, password: string, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', iterations = 4096) {
  const m = mechanismInfo(mechanism);
  const salt = randomBytes(24);
  return { name, mechanism: m.type, iterations, salt, saltedPassword: pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, m.keyLength, m.hash) };
}

/** krill's client to a listener; with `sasl`, authenticated with SCRAM first. */
export function krillClient(host: string, port: number, sasl?: { mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string }): Promise<BrokerConnection> {
  const opts: ConnectOptions = { clientId: 'scram-compat', timeoutMs: 10_000, requestTimeoutMs: 15_000 };
  if (sasl) opts.sasl = { mechanism: sasl.mechanism, newClient: () => createScramClient(sasl) };
  return connect(host, port, opts);
}

export async function alterScram(conn: BrokerConnection, upsertions: ReturnType<typeof upsertion>[], deletions: { name: string; mechanism: number }[] = []) {
  const res = await conn.send('AlterUserScramCredentials', undefined, { deletions, upsertions });
  return res.results.map((r) => [r.user, r.errorCode, r.errorMessage]);
}

/** A quiet KafkaJS client (kafkajs-helpers' quietKafka) authenticating with `sasl`. */
export function kafkaJs(bootstrap: string | string[], sasl: SASLOptions | undefined, clientId = 'scram-compat'): Kafka {
  return quietKafka(bootstrap, { clientId, sasl });
}

/** Resolves once `server`'s image has `user`'s credential for `mechanism` (at once if it has it); bounded. */
export function credentialApplied(server: KafkaServer, user: string, mechanism: ScramMechanismInfo, timeoutMs = 10_000): Promise<void> {
  return credentialReaches(server, user, mechanism, true, timeoutMs);
}

/** Resolves once `server`'s image no longer has `user`'s credential for `mechanism` (at once if it has none); bounded. */
export function credentialRemoved(server: KafkaServer, user: string, mechanism: ScramMechanismInfo, timeoutMs = 10_000): Promise<void> {
  return credentialReaches(server, user, mechanism, false, timeoutMs);
}

function credentialReaches(server: KafkaServer, user: string, mechanism: ScramMechanismInfo, present: boolean, timeoutMs: number): Promise<void> {
  const reached = () => (server.metadata.scramCredential(user, mechanism.type) !== undefined) === present;
  if (reached()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`broker ${server.nodeId} did not ${present ? 'apply' : 'remove'} ${user}'s ${mechanism.mechanismName} credential within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = server.metadata.subscribeScramCredentials(() => {
      if (!reached()) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}
