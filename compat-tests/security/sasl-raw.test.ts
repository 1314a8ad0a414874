/**
 * The SASL exchange on the wire, byte for byte, against a SASL_PLAINTEXT broker: what Kafka's
 * SaslServerAuthenticator answers (or does not) at each step. A raw client that sends Metadata
 * before authenticating is closed without an answer, after connection.failed.authentication.delay.ms;
 * ApiVersions, SaslHandshake v0/v1 and SaslAuthenticate v0-v2 drive the exchange; the legacy v0 flow
 * carries raw SASL tokens; failures carry Kafka's codes and messages and close the connection;
 * frames before authentication are bounded by sasl.server.max.receive.size; an expired session is
 * closed at its next request, and re-authentication (KIP-368) renews it.
 */
import type { RunningBroker } from '../../broker';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { sizePrefixed } from '../helpers/raw-socket';
import { ALICE, RawSocket, rawCall, rawPlainLogin, requestFrame, saslBrokerConfig, startSaslBroker, tokenFor } from './sasl-helpers';

jest.setTimeout(30_000);

const FAIL_DELAY_MS = 300;
let broker: RunningBroker;
const sockets: RawSocket[] = [];

async function open(): Promise<RawSocket> {
  const s = await RawSocket.connect(broker.host, broker.port);
  sockets.push(s);
  return s;
}

const METADATA = { topics: null, allowAutoTopicCreation: false };

beforeAll(async () => {
  broker = await startSaslBroker(
    saslBrokerConfig(['PLAIN', 'OAUTHBEARER'], {
      'connection.failed.authentication.delay.ms': String(FAIL_DELAY_MS),
      'sasl.server.max.receive.size': '4096',
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config':
        'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";',
    }),
  );
});

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

afterAll(async () => {
  await broker?.close();
});

describe('before authentication', () => {
  test('Metadata as the first request: no answer, the connection closes after the failure delay', async () => {
    const s = await open();
    const t0 = Date.now();
    await s.write(requestFrame(ApiKey.Metadata, 12, 1, METADATA));
    await s.waitForClose();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(FAIL_DELAY_MS - 20);
    expect(s.bufferedFrames).toBe(0);
  });

  test('ApiVersions is answered, then Metadata is still refused unanswered', async () => {
    const s = await open();
    const av = await rawCall(s, ApiKey.ApiVersions, 3, 1, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });
    expect(av.errorCode).toBe(ErrorCode.NONE);
    expect(av.apiKeys.map((k: { apiKey: number }) => k.apiKey)).toEqual(expect.arrayContaining([ApiKey.SaslHandshake, ApiKey.SaslAuthenticate]));
    await s.write(requestFrame(ApiKey.Metadata, 12, 2, METADATA));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });

  test('a second ApiVersions closes the connection', async () => {
    const s = await open();
    await rawCall(s, ApiKey.ApiVersions, 3, 1, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });
    await s.write(requestFrame(ApiKey.ApiVersions, 3, 2, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });

  test('an unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then closed', async () => {
    const s = await open();
    const t0 = Date.now();
    const hs = await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'GSSAPI' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(FAIL_DELAY_MS - 20);
    expect(hs.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    expect([...hs.mechanisms].sort()).toEqual(['OAUTHBEARER', 'PLAIN']);
    await s.waitForClose();
  });

  test('SaslAuthenticate before SaslHandshake: closed without an answer', async () => {
    const s = await open();
    await s.write(requestFrame(ApiKey.SaslAuthenticate, 2, 1, { authBytes: Buffer.from('\u0000alice\u0000alice-secret') }));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });

  test('a frame above sasl.server.max.receive.size closes the connection', async () => {
    const s = await open();
    await s.write(sizePrefixed(Buffer.alloc(16), 5000));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });

  test('a garbage first frame closes the connection', async () => {
    const s = await open();
    await s.write(sizePrefixed(Buffer.from([0x60, 0x01, 0x02])));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });
});

describe('SaslHandshake v1 + SaslAuthenticate', () => {
  test.each([0, 1, 2])('PLAIN with SaslAuthenticate v%i, then Metadata is served', async (v) => {
    const s = await open();
    const hs = await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'PLAIN' });
    expect(hs.errorCode).toBe(ErrorCode.NONE);
    const res = await rawCall(s, ApiKey.SaslAuthenticate, v, 2, { authBytes: Buffer.from(`\u0000${ALICE.username}\u0000${ALICE.password}`) });
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(res.authBytes).toEqual(Buffer.alloc(0));
    if (v >= 1) expect(res.sessionLifetimeMs).toBe(0n);
    const md = await rawCall(s, ApiKey.Metadata, 12, 3, METADATA);
    expect(md.brokers.map((b: { port: number }) => b.port)).toEqual([broker.port]);
  });

  test('a wrong password: SASL_AUTHENTICATION_FAILED with Kafka\'s message, after the delay, then closed', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'PLAIN' });
    const t0 = Date.now();
    const res = await rawCall(s, ApiKey.SaslAuthenticate, 2, 2, { authBytes: Buffer.from('\u0000alice\u0000nope') });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(FAIL_DELAY_MS - 20);
    expect(res.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(res.errorMessage).toBe('Authentication failed: Invalid username or password');
    await s.waitForClose();
  });

  test('an authorization id other than the user is refused', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'PLAIN' });
    const res = await rawCall(s, ApiKey.SaslAuthenticate, 1, 2, { authBytes: Buffer.from('admin\u0000alice\u0000alice-secret') });
    expect(res.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(res.errorMessage).toBe('Authentication failed: Client requested an authorization id that is different from username');
    await s.waitForClose();
  });

  test('after success, SaslHandshake and SaslAuthenticate are ILLEGAL_SASL_STATE (no session lifetime: no re-authentication)', async () => {
    const s = await open();
    expect((await rawPlainLogin(s, ALICE)).errorCode).toBe(ErrorCode.NONE);
    const hs = await rawCall(s, ApiKey.SaslHandshake, 1, 3, { mechanism: 'PLAIN' });
    expect(hs).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    const au = await rawCall(s, ApiKey.SaslAuthenticate, 2, 4, { authBytes: Buffer.alloc(0) });
    expect(au.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(au.errorMessage).toBe('SaslAuthenticate request received after successful authentication');
    expect((await rawCall(s, ApiKey.Metadata, 12, 5, METADATA)).brokers).toHaveLength(1);
  });

  test('Metadata between SaslHandshake and SaslAuthenticate: closed without an answer', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'PLAIN' });
    await s.write(requestFrame(ApiKey.Metadata, 12, 2, METADATA));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });
});

describe('SaslHandshake v0: raw SASL tokens (KIP-43)', () => {
  test('a raw PLAIN token is answered with an empty raw token; then requests are served', async () => {
    const s = await open();
    const hs = await rawCall(s, ApiKey.SaslHandshake, 0, 1, { mechanism: 'PLAIN' });
    expect(hs.errorCode).toBe(ErrorCode.NONE);
    await s.write(sizePrefixed(Buffer.from(`\u0000${ALICE.username}\u0000${ALICE.password}`)));
    expect(await s.nextFrame()).toEqual(Buffer.alloc(0));
    expect((await rawCall(s, ApiKey.Metadata, 12, 2, METADATA)).brokers).toHaveLength(1);
  });

  test('a wrong password in a raw token: closed without an answer', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 0, 1, { mechanism: 'PLAIN' });
    await s.write(sizePrefixed(Buffer.from('\u0000alice\u0000bad')));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });
});

describe('OAUTHBEARER on the wire', () => {
  const first = (token: string) => Buffer.from(`n,,\u0001auth=Bearer ${token}\u0001\u0001`);

  test('a valid token with the required scope authenticates; session_lifetime_ms follows exp', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'OAUTHBEARER' });
    const res = await rawCall(s, ApiKey.SaslAuthenticate, 2, 2, { authBytes: first(tokenFor('carol', 60, { scope: 'kafka' })) });
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(Number(res.sessionLifetimeMs)).toBeGreaterThan(55_000);
    expect(Number(res.sessionLifetimeMs)).toBeLessThanOrEqual(60_000);
  });

  test('insufficient scope: Kafka\'s JSON as the challenge, then SASL_AUTHENTICATION_FAILED carrying it after %x01', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'OAUTHBEARER' });
    const challenge = await rawCall(s, ApiKey.SaslAuthenticate, 2, 2, { authBytes: first(tokenFor('carol', 60, { scope: 'other' })) });
    expect(challenge.errorCode).toBe(ErrorCode.NONE);
    expect(challenge.authBytes.toString()).toBe('{"status":"insufficient_scope", "scope":"[kafka]"}');
    const res = await rawCall(s, ApiKey.SaslAuthenticate, 2, 3, { authBytes: Buffer.from([1]) });
    expect(res.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(res.errorMessage).toBe('{"status":"insufficient_scope", "scope":"[kafka]"}');
    await s.waitForClose();
  });

  test('an expired token: {"status":"invalid_token"}', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'OAUTHBEARER' });
    const now = Date.now() / 1000;
    const challenge = await rawCall(s, ApiKey.SaslAuthenticate, 2, 2, { authBytes: first(tokenFor('carol', -5, { iat: now - 60, scope: 'kafka' })) });
    expect(challenge.authBytes.toString()).toBe('{"status":"invalid_token"}');
  });

  test('a malformed first message: Kafka\'s generic text for invalid credentials', async () => {
    const s = await open();
    await rawCall(s, ApiKey.SaslHandshake, 1, 1, { mechanism: 'OAUTHBEARER' });
    const res = await rawCall(s, ApiKey.SaslAuthenticate, 2, 2, { authBytes: Buffer.from('not a gs2 header') });
    expect(res.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(res.errorMessage).toBe('Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER');
    await s.waitForClose();
  });
});

describe('session lifetime and re-authentication (KIP-368)', () => {
  let reauthBroker: RunningBroker;
  beforeAll(async () => {
    reauthBroker = await startSaslBroker(saslBrokerConfig(['PLAIN'], { 'connections.max.reauth.ms': '1500', 'connection.failed.authentication.delay.ms': '0' }));
  });
  afterAll(async () => {
    await reauthBroker?.close();
  });
  const openHere = async () => {
    const s = await RawSocket.connect(reauthBroker.host, reauthBroker.port);
    sockets.push(s);
    return s;
  };

  test('session_lifetime_ms is connections.max.reauth.ms; a request after it closes the connection unanswered', async () => {
    const s = await openHere();
    const res = await rawPlainLogin(s, ALICE);
    expect(res.sessionLifetimeMs).toBe(1500n);
    const t0 = Date.now();
    expect((await rawCall(s, ApiKey.Metadata, 12, 3, METADATA)).brokers).toHaveLength(1);
    // The session ends 1.5 s after authentication: wait it out (the broker has no event to await).
    await new Promise((r) => setTimeout(r, 1600 - (Date.now() - t0)));
    await s.write(requestFrame(ApiKey.Metadata, 12, 4, METADATA));
    await s.waitForClose();
    expect(s.bufferedFrames).toBe(0);
  });

  test('SaslHandshake + SaslAuthenticate again renew the session; not twice within a second', async () => {
    const s = await openHere();
    expect((await rawPlainLogin(s, ALICE)).errorCode).toBe(ErrorCode.NONE);
    const hs = await rawCall(s, ApiKey.SaslHandshake, 1, 3, { mechanism: 'PLAIN' });
    expect(hs.errorCode).toBe(ErrorCode.NONE);
    const au = await rawCall(s, ApiKey.SaslAuthenticate, 2, 4, { authBytes: Buffer.from(`\u0000${ALICE.username}\u0000${ALICE.password}`) });
    expect(au.errorCode).toBe(ErrorCode.NONE);
    expect(au.sessionLifetimeMs).toBe(1500n);
    // Within a second of the last re-authentication: not another one (ILLEGAL_SASL_STATE).
    const again = await rawCall(s, ApiKey.SaslHandshake, 1, 5, { mechanism: 'PLAIN' });
    expect(again.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect((await rawCall(s, ApiKey.Metadata, 12, 6, METADATA)).brokers).toHaveLength(1);
  });

  test('re-authenticating as another user: SASL_AUTHENTICATION_FAILED, then closed', async () => {
    const s = await openHere();
    expect((await rawPlainLogin(s, ALICE)).errorCode).toBe(ErrorCode.NONE);
    await rawCall(s, ApiKey.SaslHandshake, 1, 3, { mechanism: 'PLAIN' });
    const au = await rawCall(s, ApiKey.SaslAuthenticate, 2, 4, { authBytes: Buffer.from('\u0000admin\u0000admin-secret') });
    expect(au.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(au.errorMessage).toBe('Cannot change principals during re-authentication from User.alice: User.admin');
    await s.waitForClose();
  });
});
