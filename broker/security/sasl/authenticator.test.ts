/**
 * The per-connection SASL state machine (Kafka's SaslServerAuthenticator with KafkaChannel's and
 * SocketServer's parts), driven directly with a mock clock: what is admitted in each state, the
 * handshake and authenticate answers, the SaslHandshake v0 raw-token flow, failures and their
 * pending close, the receive bound, session lifetimes, re-authentication (KIP-368) and expiry.
 */
import { ApiKey } from '../../../protocol/generated';
import { ErrorCode } from '../../../protocol/errors';
import { ANONYMOUS } from '../../../common/kafka-principal';
import { MockTime } from '../../../common/testing/mock-time';
import { KafkaConfig } from '../../../config/kafka-config';
import type { ConnectionInfo } from '../../network/connection';
import { parseJaasConfig } from './jaas';
import { SaslException, type SaslServerMechanism } from './mechanism';
import { PlainServerMechanism } from './plain';
import { OAuthBearerServerMechanism, formatClientInitialResponse, unsecuredValidatorOptions } from './oauthbearer';
import { SaslGate, SaslServerAuthenticator, saslAuthenticatorOf } from './authenticator';
import type { ListenerSaslSettings } from './registry';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';
const time = new MockTime();

function conn(securityProtocol = 'SASL_PLAINTEXT'): ConnectionInfo {
  return { id: 7, remoteAddress: '127.0.0.1', remotePort: 5000, localPort: 9092, listenerName: 'SASL_PLAINTEXT', securityProtocol, principal: ANONYMOUS, attributes: new Map() };
}

/** A mechanism whose server fails in a chosen way (for the SaslException and internal-error paths). */
function failing(name: string, err: Error): SaslServerMechanism {
  return { name, newServer: () => ({ complete: false, evaluateResponse: () => { throw err; }, authorizationId: () => '' }) };
}

function settings(reauthMs = 0, extra: SaslServerMechanism[] = []): ListenerSaslSettings {
  const oauth = new OAuthBearerServerMechanism(unsecuredValidatorOptions(parseJaasConfig('x.Y required;')[0]), () => time.milliseconds());
  const mechanisms = new Map<string, SaslServerMechanism>([
    ['PLAIN', new PlainServerMechanism(parseJaasConfig(PLAIN_JAAS))],
    ['OAUTHBEARER', oauth],
    ...extra.map((m) => [m.name, m] as [string, SaslServerMechanism]),
  ]);
  return {
    listenerName: 'SASL_PLAINTEXT',
    enabledMechanisms: [...mechanisms.keys()],
    mechanisms,
    maxReceiveSize: 1000,
    connectionsMaxReauthMs: new Map([...mechanisms.keys()].map((m) => [m, reauthMs])),
  };
}

function authenticator(s = settings(), c = conn()): { a: SaslServerAuthenticator; c: ConnectionInfo } {
  return { a: new SaslServerAuthenticator(c, { settings: s, failedAuthenticationDelayMs: 100, time }), c };
}

const plainToken = (user = 'alice', pw = `${user}-secret`) => Buffer.from(`\u0000${user}\u0000${pw}`);

async function login(a: SaslServerAuthenticator, version = 2, user = 'alice'): Promise<any> {
  expect(a.admit(ApiKey.SaslHandshake)).toEqual({ kind: 'serve', authenticating: true });
  expect(a.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.NONE);
  expect(a.admit(ApiKey.SaslAuthenticate)).toEqual({ kind: 'serve', authenticating: true });
  return a.authenticate(plainToken(user), version);
}

describe('before the handshake', () => {
  test('any other request fails the authentication with Kafka\'s message', () => {
    const { a } = authenticator();
    expect(a.admit(ApiKey.Metadata)).toEqual({ kind: 'fail', reason: 'Unexpected Kafka request of type METADATA during SASL handshake.' });
    expect(a.takeFailure()).toBe('Unexpected Kafka request of type METADATA during SASL handshake.');
    expect(a.takeFailure()).toBeNull();
    expect(a.state).toBe('FAILED');
    expect(authenticator().a.admit(ApiKey.FindCoordinator)).toMatchObject({ reason: 'Unexpected Kafka request of type FIND_COORDINATOR during SASL handshake.' });
  });

  test('ApiVersions once; a second one closes at once', () => {
    const { a } = authenticator();
    expect(a.admit(ApiKey.ApiVersions)).toEqual({ kind: 'serve', authenticating: true });
    a.apiVersionsAnswered(ErrorCode.UNSUPPORTED_VERSION);
    expect(a.state).toBe('HANDSHAKE_OR_VERSIONS_REQUEST');
    expect(a.admit(ApiKey.ApiVersions).kind).toBe('serve');
    a.apiVersionsAnswered(ErrorCode.NONE);
    expect(a.state).toBe('HANDSHAKE_REQUEST');
    expect(a.admit(ApiKey.ApiVersions)).toEqual({ kind: 'close', reason: 'Unexpected ApiVersions request received during SASL authentication state HANDSHAKE_REQUEST' });
  });

  test('an unknown API key or an undecodable header: a failed first packet, later a plain close', () => {
    expect(authenticator().a.admit(999).kind).toBe('fail');
    expect(authenticator().a.undecodableHeader('short').kind).toBe('fail');
    const { a } = authenticator();
    a.admit(ApiKey.ApiVersions);
    expect(a.admit(999).kind).toBe('close');
    const { a: b } = authenticator();
    b.admit(ApiKey.ApiVersions);
    expect(b.undecodableHeader('short').kind).toBe('close');
  });

  test('frames are bounded by sasl.server.max.receive.size until authenticated', async () => {
    const { a } = authenticator();
    expect(a.receiveLimit()).toBe(1000);
    expect(a.invalidReceive(5000)).toMatchObject({ kind: 'fail', reason: expect.stringContaining('Failing SASL authentication due to invalid receive size') });
    const { a: b } = authenticator();
    await login(b);
    expect(b.receiveLimit()).toBeUndefined();
  });
});

describe('SaslHandshake and SaslAuthenticate', () => {
  test('an unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list, and a pending failure', () => {
    const { a } = authenticator();
    expect(a.handshake('GSSAPI', 1)).toEqual({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'OAUTHBEARER'] });
    expect(a.takeFailure()).toBe('Unsupported SASL mechanism GSSAPI');
  });

  test('success at each SaslAuthenticate version; session_lifetime_ms only from v1; the principal is the user', async () => {
    for (const v of [0, 1, 2]) {
      const { a, c } = authenticator();
      const res = await login(a, v);
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.authBytes).toEqual(Buffer.alloc(0));
      expect('sessionLifetimeMs' in res).toBe(v >= 1);
      expect(a.complete).toBe(true);
      expect(c.principal).toEqual({ principalType: 'User', name: 'alice' });
      expect(a.connectedClientSupportsReauthentication).toBe(v > 0);
      expect(a.sessionExpiresAtMs).toBeNull();
      expect(a.admit(ApiKey.Metadata)).toEqual({ kind: 'serve', authenticating: false });
    }
  });

  test('a wrong password: SASL_AUTHENTICATION_FAILED with the mechanism\'s message; the principal stays ANONYMOUS', async () => {
    const { a, c } = authenticator();
    a.handshake('PLAIN', 1);
    const res = await a.authenticate(plainToken('alice', 'nope'), 2);
    expect(res).toEqual({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Authentication failed: Invalid username or password' });
    expect(a.takeFailure()).toBe('Authentication failed: Invalid username or password');
    expect(c.principal).toBe(ANONYMOUS);
    expect(a.admit(ApiKey.Metadata).kind).toBe('close');
  });

  test('a SaslException: Kafka\'s fixed text; another error escapes (the connection is closed at once)', async () => {
    const { a } = authenticator(settings(0, [failing('X-SASLEXC', new SaslException('user bob exists'))]));
    a.handshake('X-SASLEXC', 1);
    expect(await a.authenticate(Buffer.from('t'), 1)).toEqual({
      errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED,
      errorMessage: 'Authentication failed during authentication due to invalid credentials with SASL mechanism X-SASLEXC',
    });
    const { a: b } = authenticator(settings(0, [failing('X-BROKEN', new TypeError('bug'))]));
    b.handshake('X-BROKEN', 1);
    await expect(b.authenticate(Buffer.from('t'), 1)).rejects.toThrow('bug');
  });

  test('after a v1 handshake only SaslAuthenticate is admitted', () => {
    const { a } = authenticator();
    a.handshake('PLAIN', 1);
    expect(a.expectsRawToken).toBe(false);
    expect(a.admit(ApiKey.Metadata)).toEqual({ kind: 'fail', reason: 'Unexpected Kafka request of type METADATA during SASL authentication.' });
  });

  test('once authenticated, SaslHandshake and SaslAuthenticate are ILLEGAL_SASL_STATE (no session lifetime)', async () => {
    const { a } = authenticator();
    await login(a);
    expect(a.admit(ApiKey.SaslHandshake)).toEqual({ kind: 'serve', authenticating: false });
    expect(a.handshake('PLAIN', 1)).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    expect(await a.authenticate(plainToken(), 2)).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication' });
  });
});

describe('SaslHandshake v0: raw tokens', () => {
  test('the token is answered raw; then Kafka requests are served', async () => {
    const { a, c } = authenticator();
    a.handshake('PLAIN', 0);
    expect(a.expectsRawToken).toBe(true);
    expect(await a.rawToken(plainToken('bob'))).toEqual({ kind: 'respond', token: Buffer.alloc(0) });
    expect(a.expectsRawToken).toBe(false);
    expect(c.principal.name).toBe('bob');
    expect(a.admit(ApiKey.Produce).kind).toBe('serve');
  });

  test('bad credentials fail (closed after the delay, no answer); a SaslException closes at once', async () => {
    const { a } = authenticator();
    a.handshake('PLAIN', 0);
    expect(await a.rawToken(plainToken('bob', 'x'))).toEqual({ kind: 'fail', reason: 'Authentication failed: Invalid username or password' });
    const { a: b } = authenticator(settings(0, [failing('X-SASLEXC', new SaslException('nope'))]));
    b.handshake('X-SASLEXC', 0);
    expect((await b.rawToken(Buffer.from('t'))).kind).toBe('close');
  });
});

describe('session lifetime, expiry and re-authentication (KIP-368)', () => {
  test('connections.max.reauth.ms is the session lifetime; a request after it closes the connection', async () => {
    const { a } = authenticator(settings(1000));
    const res = await login(a);
    expect(res.sessionLifetimeMs).toBe(1000n);
    expect(a.sessionExpiresAtMs).toBe(time.milliseconds() + 1000);
    expect(a.admit(ApiKey.Metadata, time.milliseconds() + 1000).kind).toBe('serve');
    expect(a.admit(ApiKey.Metadata, time.milliseconds() + 1001)).toMatchObject({ kind: 'close', reason: expect.stringContaining('expired') });
  });

  test('OAUTHBEARER: the earlier of the token\'s exp and connections.max.reauth.ms', async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64').replace(/=+$/, '');
    const token = (expInS: number) => formatClientInitialResponse(`${b64({ alg: 'none' })}.${b64({ sub: 'carol', exp: time.milliseconds() / 1000 + expInS })}.`);
    for (const [reauthMs, expS, lifetime] of [
      [0, 30, 30_000n],
      [10_000, 30, 10_000n],
      [60_000, 30, 30_000n],
    ] as const) {
      const { a, c } = authenticator(settings(reauthMs));
      a.handshake('OAUTHBEARER', 1);
      const res = await a.authenticate(token(expS), 2);
      expect(res.sessionLifetimeMs).toBe(lifetime);
      expect(c.principal.name).toBe('carol');
    }
  });

  test('SaslHandshake on an authenticated connection with a lifetime starts re-authentication; the session is renewed', async () => {
    const { a, c } = authenticator(settings(1000));
    await login(a);
    time.sleep(800);
    expect(a.admit(ApiKey.SaslHandshake)).toEqual({ kind: 'serve', authenticating: true });
    expect(a.state).toBe('REAUTH_PROCESS_HANDSHAKE');
    expect(a.receiveLimit()).toBe(1000);
    expect(a.handshake('PLAIN', 1).errorCode).toBe(ErrorCode.NONE);
    // During re-authentication only SaslAuthenticate; the old principal is kept meanwhile.
    expect(c.principal.name).toBe('alice');
    const res = await a.authenticate(plainToken(), 2);
    expect(res.sessionLifetimeMs).toBe(1000n);
    expect(a.sessionExpiresAtMs).toBe(time.milliseconds() + 1000);
    // Within a second of the last re-authentication's start: no new one (KafkaApis answers).
    time.sleep(500);
    expect(a.admit(ApiKey.SaslHandshake)).toEqual({ kind: 'serve', authenticating: false });
    time.sleep(600);
    // A second after the last one started: re-authentication may start again (even once expired).
    expect(a.admit(ApiKey.SaslHandshake)).toEqual({ kind: 'serve', authenticating: true });
  });

  test('re-authentication with another mechanism, or as another user, fails', async () => {
    const { a } = authenticator(settings(1000));
    await login(a);
    a.admit(ApiKey.SaslHandshake);
    expect(a.handshake('OAUTHBEARER', 1).errorCode).toBe(ErrorCode.NONE);
    expect(a.state).toBe('REAUTH_BAD_MECHANISM');
    expect(a.admit(ApiKey.SaslAuthenticate)).toEqual({
      kind: 'fail',
      reason: "SASL mechanism 'OAUTHBEARER' requested by client is not supported for re-authentication of mechanism 'PLAIN'",
    });
    const { a: b, c } = authenticator(settings(1000));
    await login(b);
    b.admit(ApiKey.SaslHandshake);
    b.handshake('PLAIN', 1);
    expect(await b.authenticate(plainToken('bob'), 2)).toEqual({
      errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED,
      errorMessage: 'Cannot change principals during re-authentication from User.alice: User.bob',
    });
    expect(c.principal.name).toBe('alice');
    expect(b.takeFailure()).not.toBeNull();
  });

  test('a SaslException during re-authentication: the text says re-authentication', async () => {
    let servers = 0;
    const once: SaslServerMechanism = {
      name: 'X-ONCE',
      newServer: () => {
        const first = servers++ === 0;
        let done = false;
        return {
          get complete() {
            return done;
          },
          evaluateResponse: () => {
            if (!first) throw new SaslException('expired credential');
            done = true;
            return Buffer.alloc(0);
          },
          authorizationId: () => 'alice',
        };
      },
    };
    const { a } = authenticator(settings(1000, [once]));
    a.handshake('X-ONCE', 1);
    expect((await a.authenticate(Buffer.from('t'), 2)).errorCode).toBe(ErrorCode.NONE);
    expect(a.admit(ApiKey.SaslHandshake).kind).toBe('serve');
    a.handshake('X-ONCE', 1);
    expect((await a.authenticate(Buffer.from('t'), 2)).errorMessage).toBe(
      'Authentication failed during re-authentication due to invalid credentials with SASL mechanism X-ONCE',
    );
  });
});

describe('SaslGate', () => {
  const c = new KafkaConfig({
    listeners: 'PLAINTEXT://:9092,SASL_PLAINTEXT://:9093',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'connection.failed.authentication.delay.ms': '250',
  });

  test('one authenticator per connection of a SASL listener, none elsewhere', () => {
    const gate = SaslGate.forListeners(c, c.listeners())!;
    expect(gate.settings('PLAINTEXT')).toBeUndefined();
    const sasl = conn();
    const a = gate.authenticatorFor(sasl)!;
    expect(gate.authenticatorFor(sasl)).toBe(a);
    expect(saslAuthenticatorOf(sasl)).toBe(a);
    expect(a.failedAuthenticationDelayMs).toBe(250);
    expect(gate.authenticatorFor(conn('PLAINTEXT'))).toBeUndefined();
    expect(SaslGate.forListeners(c, c.listeners().filter((l) => l.securityProtocol === 'PLAINTEXT'))).toBeUndefined();
  });
});
