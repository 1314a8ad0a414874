/**
 * krill's own client (client/network-client.ts, what brokers use towards SASL inter-broker and
 * controller listeners) with the `sasl` option: ApiVersions, SaslHandshake v1 and SaslAuthenticate
 * with PLAIN and OAUTHBEARER; the broker's refusals surface as KafkaError with Kafka's code and
 * message; with a short connections.max.reauth.ms, one connection keeps serving requests well past
 * its session lifetime because the client re-authenticates on it (KIP-368).
 */
import type { RunningBroker } from '../../broker';
import { connect, type BrokerConnection, type ClientSaslOptions } from '../../client/network-client';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { PlainSaslClient } from '../../broker/security/sasl/plain';
import { OAuthBearerSaslClient } from '../../broker/security/sasl/oauthbearer';
import { SaslServerAuthenticator } from '../../broker/security/sasl/authenticator';
import { ADMIN, ALICE, saslBrokerConfig, startSaslBroker, tokenFor } from './sasl-helpers';

jest.setTimeout(30_000);

const plain = (user: { username: string; password: string }): ClientSaslOptions => ({ mechanism: 'PLAIN', newClient: () => new PlainSaslClient(user.username, user.password) });
const METADATA = { topics: null, allowAutoTopicCreation: false };

let broker: RunningBroker;
const open: BrokerConnection[] = [];

async function client(sasl: ClientSaslOptions, b = broker): Promise<BrokerConnection> {
  const c = await connect(b.host, b.port, { clientId: 'krill-sasl', sasl, timeoutMs: 5_000 });
  open.push(c);
  return c;
}

async function refusal(sasl: ClientSaslOptions): Promise<KafkaError> {
  const err = await client(sasl).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KafkaError);
  return err as KafkaError;
}

beforeAll(async () => {
  broker = await startSaslBroker(saslBrokerConfig(['PLAIN', 'OAUTHBEARER'], { 'connection.failed.authentication.delay.ms': '0' }));
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await broker?.close();
});

test('PLAIN: authenticated on connect, then requests are served', async () => {
  const c = await client(plain(ALICE));
  const md = await c.send('Metadata', undefined, METADATA);
  expect(md.brokers.map((b) => b.port)).toEqual([broker.port]);
});

test('OAUTHBEARER with an unsecured token', async () => {
  const c = await client({ mechanism: 'OAUTHBEARER', newClient: () => new OAuthBearerSaslClient(() => tokenFor('carol')) });
  expect((await c.send('Metadata', undefined, METADATA)).brokers).toHaveLength(1);
});

test("refusals are KafkaErrors with Kafka's codes and messages", async () => {
  const wrong = await refusal(plain({ username: 'alice', password: 'nope' }));
  expect(wrong.code).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
  expect(wrong.message).toBe('Authentication failed: Invalid username or password');
  const mech = await refusal({ mechanism: 'SCRAM-SHA-256', newClient: () => new PlainSaslClient('a', 'b') });
  expect(mech.code).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
  expect(mech.message).toBe("Client SASL mechanism 'SCRAM-SHA-256' not enabled in the server, enabled mechanisms are [PLAIN, OAUTHBEARER]");
  const expired = await refusal({ mechanism: 'OAUTHBEARER', newClient: () => new OAuthBearerSaslClient(() => tokenFor('carol', -5, { iat: Date.now() / 1000 - 60 })) });
  expect(expired.code).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
  expect(expired.message).toBe('{"status":"invalid_token"}');
});

describe('re-authentication', () => {
  let short: RunningBroker;
  beforeAll(async () => {
    short = await startSaslBroker(saslBrokerConfig(['PLAIN'], { 'connections.max.reauth.ms': '1200' }));
  });
  afterAll(async () => {
    await short?.close();
  });

  test('one connection outlives several session lifetimes: the client re-authenticates before they end', async () => {
    const reauths: number[] = [];
    const orig = SaslServerAuthenticator.prototype.handshake;
    const spy = jest.spyOn(SaslServerAuthenticator.prototype, 'handshake').mockImplementation(function (this: SaslServerAuthenticator, m: string, v: number) {
      if (this.state === 'REAUTH_PROCESS_HANDSHAKE') reauths.push(Date.now());
      return orig.call(this, m, v);
    });
    try {
      const c = await client(plain(ADMIN), short);
      const until = Date.now() + 4_000;
      let served = 0;
      // Requests keep coming on the same connection; every one must be answered.
      while (Date.now() < until) {
        expect((await c.send('Metadata', undefined, METADATA)).brokers).toHaveLength(1);
        served++;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(c.isClosed).toBe(false);
      expect(served).toBeGreaterThan(20);
      expect(reauths.length).toBeGreaterThanOrEqual(2);
    } finally {
      spy.mockRestore();
    }
  });
});
