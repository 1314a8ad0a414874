/**
 * SASL/PLAIN as Kafka's PlainSaslServer and PlainServerCallbackHandler: the RFC 4616 message, the
 * users of the JAAS entry, Kafka's checks and messages in its order, and the client's message.
 */
import { parseJaasConfig } from './jaas';
import { SaslAuthenticationError } from './mechanism';
import { PlainSaslClient, PlainServerMechanism } from './plain';

const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule';
const mechanism = new PlainServerMechanism(parseJaasConfig(`${PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_eve="";`));
const msg = (s: string) => Buffer.from(s, 'utf8');

function refusal(token: string): string {
  const server = mechanism.newServer('SASL_PLAINTEXT');
  try {
    server.evaluateResponse(msg(token));
  } catch (err) {
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(server.complete).toBe(false);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

test('a valid message completes at once with an empty server token; the principal is the user', () => {
  const server = mechanism.newServer('SASL_PLAINTEXT');
  expect(server.evaluateResponse(msg('\u0000alice\u0000alice-secret'))).toEqual(Buffer.alloc(0));
  expect(server.complete).toBe(true);
  expect(server.authorizationId()).toBe('alice');
  const withAuthzid = mechanism.newServer('SASL_PLAINTEXT');
  withAuthzid.evaluateResponse(msg('admin\u0000admin\u0000admin-secret'));
  expect(withAuthzid.authorizationId()).toBe('admin');
});

test("Kafka's refusals, in its order", () => {
  expect(refusal('alice')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 1');
  expect(refusal('\u0000alice')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 2');
  expect(refusal('\u0000alice\u0000x\u0000y')).toBe('Invalid SASL/PLAIN response: expected 3 tokens, got 4');
  expect(refusal('\u0000\u0000alice-secret')).toBe('Authentication failed: username not specified');
  expect(refusal('\u0000alice\u0000')).toBe('Authentication failed: password not specified');
  expect(refusal('\u0000alice\u0000wrong')).toBe('Authentication failed: Invalid username or password');
  expect(refusal('\u0000alice\u0000alice-secre')).toBe('Authentication failed: Invalid username or password');
  expect(refusal('\u0000mallory\u0000x')).toBe('Authentication failed: Invalid username or password');
  // The broker's own `username`/`password` options are not a user.
  expect(refusal('\u0000username\u0000admin')).toBe('Authentication failed: Invalid username or password');
  expect(refusal('bob\u0000alice\u0000alice-secret')).toBe('Authentication failed: Client requested an authorization id that is different from username');
  // The password is checked before the authorization id.
  expect(refusal('bob\u0000alice\u0000wrong')).toBe('Authentication failed: Invalid username or password');
});

test('users come only from a PlainLoginModule entry', () => {
  const other = new PlainServerMechanism(parseJaasConfig('com.example.Other required user_alice="alice-secret";'));
  expect(() => other.newServer('L').evaluateResponse(msg('\u0000alice\u0000alice-secret'))).toThrow('Authentication failed: Invalid username or password');
});

test('UTF-8 names and passwords', () => {
  const m = new PlainServerMechanism(parseJaasConfig(`${PLAIN} required user_zoë="pässwörd";`));
  const server = m.newServer('L');
  server.evaluateResponse(msg('\u0000zoë\u0000pässwörd'));
  expect(server.authorizationId()).toBe('zoë');
});

test('the client sends [authzid] NUL user NUL password and is then complete', () => {
  const c = new PlainSaslClient('admin', 'admin-secret');
  expect(c.complete).toBe(false);
  const token = c.initialResponse();
  expect(token.toString('utf8')).toBe('\u0000admin\u0000admin-secret');
  expect(c.complete).toBe(true);
  expect(c.evaluateChallenge(Buffer.alloc(0))).toBeNull();
  const server = mechanism.newServer('L');
  server.evaluateResponse(token);
  expect(server.authorizationId()).toBe('admin');
});
