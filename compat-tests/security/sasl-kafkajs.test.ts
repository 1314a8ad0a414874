/**
 * KafkaJS 2.2.4 against a broker whose only listener is SASL_PLAINTEXT: PLAIN and OAUTHBEARER
 * (unsecured tokens from an oauthBearerProvider) produce and consume; a wrong password is refused
 * with SASL_AUTHENTICATION_FAILED and Kafka's message, an unknown mechanism with
 * UNSUPPORTED_SASL_MECHANISM; a token without the required scope, or expired, gets nothing served;
 * with a small connections.max.reauth.ms, KafkaJS re-authenticates (reauthenticationThreshold) and
 * keeps producing on the same connections.
 */
import type { RunningBroker } from '../../broker';
import { ALICE, kafkaJs, saslBrokerConfig, startSaslBroker, tokenFor } from './sasl-helpers';
import { produceAndConsume, values } from './kafkajs-helpers';
import { SaslServerAuthenticator } from '../../broker/security/sasl/authenticator';
import type { Kafka } from 'kafkajs';

jest.setTimeout(60_000);

/** What a client gets past authentication: 'served' when it lists topics, else the error's message. */
async function listTopicsOutcome(kafka: Kafka): Promise<string> {
  const admin = kafka.admin({ retry: { retries: 0 } });
  const res = await admin.connect().then(
    async () => admin.listTopics().then(() => 'served', (e: Error) => e.message),
    (e: Error) => e.message,
  );
  await admin.disconnect().catch(() => undefined);
  return res;
}

describe('KafkaJS with SASL/PLAIN', () => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await startSaslBroker();
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('produces and consumes as alice', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', ...ALICE });
    expect(await produceAndConsume(kafka, 'plain-topic', values(20), { partitions: 1 })).toEqual(values(20));
  });

  test('a wrong password is SASL_AUTHENTICATION_FAILED with Kafka\'s message', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', username: 'alice', password: 'wrong' });
    const admin = kafka.admin({ retry: { retries: 0 } });
    const err = await admin.connect().then(
      () => null,
      (e: Error) => e,
    );
    await admin.disconnect().catch(() => undefined);
    expect(err).not.toBeNull();
    expect(err!.name).toBe('KafkaJSSASLAuthenticationError');
    expect(err!.message).toBe('SASL PLAIN authentication failed: Authentication failed: Invalid username or password');
  });

  test('an unknown user is refused the same way', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', username: 'mallory', password: 'x' });
    const admin = kafka.admin({ retry: { retries: 0 } });
    await expect(admin.connect()).rejects.toThrow('Authentication failed: Invalid username or password');
    await admin.disconnect().catch(() => undefined);
  });

  test('a mechanism the listener does not enable is UNSUPPORTED_SASL_MECHANISM', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, { mechanism: 'scram-sha-256', ...ALICE });
    const admin = kafka.admin({ retry: { retries: 0 } });
    const err = (await admin.connect().then(
      () => null,
      (e: unknown) => e,
    )) as { type?: string } | null;
    await admin.disconnect().catch(() => undefined);
    expect(err?.type).toBe('UNSUPPORTED_SASL_MECHANISM');
  });
});

describe('KafkaJS with SASL/OAUTHBEARER (unsecured tokens)', () => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await startSaslBroker(
      saslBrokerConfig(['PLAIN', 'OAUTHBEARER'], {
        'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config':
          'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";',
      }),
    );
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('produces and consumes with a token carrying the required scope; the principal is its sub', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => ({ value: tokenFor('carol', 3600, { scope: ['kafka', 'other'] }) }),
    });
    expect(await produceAndConsume(kafka, 'oauth-topic', values(10), { partitions: 1 })).toEqual(values(10));
  });

  test('a token without the required scope gets nothing served', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => ({ value: tokenFor('carol', 3600, { scope: 'other' }) }),
    });
    // KafkaJS sends the token once and does not answer the broker's JSON error challenge with
    // %x01 (sasl-raw.test.ts checks that exchange on the wire): it takes itself for authenticated,
    // and its next request, not a SaslAuthenticate, fails the exchange and closes the connection.
    expect(await listTopicsOutcome(kafka)).not.toBe('served');
  });

  test('an expired token is refused', async () => {
    const kafka = kafkaJs(broker.bootstrapServers, {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => ({ value: unsecuredExpired() }),
    });
    expect(await listTopicsOutcome(kafka)).not.toBe('served');
  });
});

function unsecuredExpired(): string {
  const now = Date.now() / 1000;
  return tokenFor('carol', -10, { iat: now - 100, scope: 'kafka' });
}

describe('KafkaJS re-authentication (KIP-368)', () => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await startSaslBroker(saslBrokerConfig(['PLAIN'], { 'connections.max.reauth.ms': '2500' }));
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('session_lifetime_ms is given; KafkaJS re-authenticates on the same connection and keeps producing', async () => {
    // Re-authentication is observed on the broker: the authenticators of its connections.
    const authenticators = new Set<SaslServerAuthenticator>();
    const reauths: string[] = [];
    const orig = SaslServerAuthenticator.prototype.handshake;
    const spy = jest.spyOn(SaslServerAuthenticator.prototype, 'handshake').mockImplementation(function (this: SaslServerAuthenticator, mechanism: string, version: number) {
      authenticators.add(this);
      if (this.state === 'REAUTH_PROCESS_HANDSHAKE') reauths.push(mechanism);
      return orig.call(this, mechanism, version);
    });
    try {
      const kafka = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', ...ALICE }, { reauthenticationThreshold: 1500 });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'reauth', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      await admin.disconnect();
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      const deadline = Date.now() + 6_000;
      let sent = 0;
      while (Date.now() < deadline) {
        await producer.send({ topic: 'reauth', messages: [{ value: `m${sent}` }] });
        sent++;
        await new Promise((r) => setTimeout(r, 100));
      }
      await producer.disconnect();
      expect(reauths.length).toBeGreaterThan(0);
      expect(reauths.every((m) => m === 'PLAIN')).toBe(true);
      const offsets = await kafka.admin();
      await offsets.connect();
      const [p] = await offsets.fetchTopicOffsets('reauth');
      await offsets.disconnect();
      expect(Number(p.offset)).toBe(sent);
      for (const a of authenticators) expect(a.connectedClientSupportsReauthentication).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });
});
