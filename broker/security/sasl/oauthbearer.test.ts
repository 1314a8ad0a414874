/**
 * SASL/OAUTHBEARER with Kafka's unsecured tokens: the client's first message (RFC 7628 GS2 header
 * and key/value pairs), OAuthBearerUnsecuredJws's structure checks and the validator's claim checks
 * in Kafka's order, the JSON error challenge answered with %x01, the session's credential expiry,
 * the validator options of the JAAS entry, and the client side (an unsecured login token).
 */
import { parseJaasConfig } from './jaas';
import { SaslAuthenticationError, SaslException } from './mechanism';
import {
  formatClientInitialResponse,
  IllegalTokenError,
  OAuthBearerSaslClient,
  OAuthBearerServerMechanism,
  parseClientInitialResponse,
  parseUnsecuredJws,
  unsecuredLoginToken,
  unsecuredValidatorOptions,
  validateUnsecuredToken,
} from './oauthbearer';

const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
const NOW = 1_700_000_000_000;
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64').replace(/=+$/, '');
const jws = (claims: unknown, header: unknown = { alg: 'none' }, sig = '') => `${b64(header)}.${b64(claims)}.${sig}`;
const good = (extra: Record<string, unknown> = {}) => jws({ sub: 'alice', iat: NOW / 1000, exp: NOW / 1000 + 60, ...extra });
const DEFAULTS = unsecuredValidatorOptions(parseJaasConfig(`${MODULE} required;`)[0]);

function refusal(token: string, opts = DEFAULTS, now = NOW): string {
  try {
    validateUnsecuredToken(token, opts, now);
  } catch (err) {
    if (!(err instanceof IllegalTokenError)) throw err;
    return err.message;
  }
  throw new Error('accepted');
}

describe('the client first message', () => {
  test('parsed: authzid, token, extensions', () => {
    const m = parseClientInitialResponse(Buffer.from('n,a=alice,\u0001auth=Bearer abc.def.\u0001traceId=42\u0001\u0001'));
    expect(m).toEqual({ tokenValue: 'abc.def.', authorizationId: 'alice', extensions: new Map([['traceId', '42']]) });
    expect(parseClientInitialResponse(Buffer.from('n,,\u0001auth=bearer tok\u0001\u0001')).authorizationId).toBe('');
  });

  test('formatted as Kafka formats it, and read back', () => {
    const bytes = formatClientInitialResponse('t.o.k', '', new Map([['a', 'b']]));
    expect(bytes.toString()).toBe('n,,\u0001auth=Bearer t.o.k\u0001a=b\u0001\u0001');
    expect(parseClientInitialResponse(bytes).tokenValue).toBe('t.o.k');
  });

  test("malformed messages are SaslExceptions with Kafka's text", () => {
    const bad = (s: string) => () => parseClientInitialResponse(Buffer.from(s));
    expect(bad('y,,\u0001auth=Bearer t\u0001\u0001')).toThrow(new SaslException('Invalid OAUTHBEARER client first message'));
    expect(bad('n,,\u0001auth=Bearer t\u0001')).toThrow('Invalid OAUTHBEARER client first message');
    expect(bad('n,,\u0001x=y\u0001\u0001')).toThrow("Invalid OAUTHBEARER client first message: 'auth' not specified");
    expect(bad('n,,\u0001auth=Bearer\u0001\u0001')).toThrow("Invalid OAUTHBEARER client first message: invalid 'auth' format");
    expect(bad('n,,\u0001auth=Bearer a b\u0001\u0001')).toThrow("invalid 'auth' format");
    // A scheme other than Bearer escapes Kafka as a non-SASL error (the connection is closed).
    let err: unknown;
    try {
      bad('n,,\u0001auth=Basic abc\u0001\u0001')();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(SaslException);
  });
});

describe('unsecured JWS and its validation', () => {
  test('a valid token: principal, lifetime, start time, scope', () => {
    const t = validateUnsecuredToken(good({ scope: ['a', ' b ', ''] }), DEFAULTS, NOW);
    expect(t.principalName).toBe('alice');
    expect(t.lifetimeMs).toBe(NOW + 60_000);
    expect(t.startTimeMs).toBe(NOW);
    expect([...t.scope]).toEqual(['a', 'b']);
    expect([...parseUnsecuredJws(good({ scope: ' one ' }), 'sub', 'scope').scope]).toEqual(['one']);
  });

  test("structure checks, in Kafka's order", () => {
    expect(refusal('a..b')).toBe("Malformed compact serialization contains '..'");
    expect(refusal(`${b64({ alg: 'none' })}.${b64({})}`)).toBe('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values');
    expect(refusal(`${good()}s.x`)).toBe('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values');
    expect(refusal(`${b64({ alg: 'none' })}.@@@.`)).toBe('malformed Base64 URL encoded value');
    // Kafka decodes with java.util.Base64's basic alphabet: '-' and '_' are refused.
    expect(refusal(`${b64({ alg: 'none' })}.ab-_.`)).toBe('malformed Base64 URL encoded value');
    expect(refusal(`${b64({ alg: 'none' })}.${Buffer.from('{nope').toString('base64')}.`)).toBe('malformed JSON');
    expect(refusal(jws({ sub: 'a', exp: 1 }, { alg: 'HS256' }))).toBe("Unsecured JWS must have 'none' for an algorithm");
    expect(refusal(jws({ sub: 'a', exp: 1 }, { alg: 'none' }, 'c2ln'))).toBe('Unsecured JWS must not contain a digital signature');
    expect(refusal(jws({ sub: 'a', exp: NOW, scope: 5 }))).toBe("The 'scope' claim was not of type List: Integer");
    expect(refusal(jws({ sub: 'a' }))).toBe('No expiration time in JWT');
    expect(refusal(jws({ sub: 'a', exp: 'soon' }))).toBe("The 'exp' claim was not of type Number: String");
    expect(refusal(jws({ exp: NOW }))).toBe('No principal name in JWT claim: sub');
    expect(refusal(jws({ sub: '  ', exp: NOW }))).toBe('No principal name in JWT claim: sub');
    expect(refusal(jws({ sub: 42, exp: NOW }))).toBe("The 'sub' claim was not of type String: Integer");
    expect(refusal(jws({ sub: 'a', exp: NOW, iat: 'x' }))).toBe("The 'iat' claim was not of type Number: String");
  });

  test('a JWS header without alg is not a token error (Kafka closes the connection)', () => {
    expect(() => validateUnsecuredToken(jws({ sub: 'a', exp: NOW }, {}), DEFAULTS, NOW)).toThrow('JWS header must have an Algorithm value');
    expect(() => validateUnsecuredToken(jws({ sub: 'a', exp: NOW }, {}), DEFAULTS, NOW)).not.toThrow(IllegalTokenError);
  });

  test('time checks with the allowable clock skew', () => {
    const s = NOW / 1000;
    expect(refusal(jws({ sub: 'a', iat: s + 10, exp: s + 60 }))).toMatch(/^The Issued At value \(1700000010\.000000 seconds\) was after the indicated time \(1700000000000 ms\) plus allowable clock skew \(0 ms\)$/);
    expect(refusal(jws({ sub: 'a', iat: s - 60, exp: s }))).toBe(
      'The indicated time (1700000000000 ms) minus allowable clock skew (0 ms) was on or after the Expiration Time value (1700000000.000000 seconds)',
    );
    expect(refusal(jws({ sub: 'a', iat: s - 10, exp: s - 20 }), { ...DEFAULTS, allowableClockSkewMs: 60_000 })).toBe(
      'The Expiration Time time (1699999980.000000 seconds) was not after the Issued At time (1699999990.000000 seconds)',
    );
    const skewed = { ...DEFAULTS, allowableClockSkewMs: 30_000 };
    expect(validateUnsecuredToken(jws({ sub: 'a', iat: s + 10, exp: s - 5 + 60 }), skewed, NOW).principalName).toBe('a');
    expect(validateUnsecuredToken(jws({ sub: 'a', exp: s - 5 }), skewed, NOW).principalName).toBe('a');
  });

  test('required scope; custom principal and scope claims', () => {
    const opts = unsecuredValidatorOptions(
      parseJaasConfig(`${MODULE} required unsecuredValidatorPrincipalClaimName="user" unsecuredValidatorScopeClaimName="roles" unsecuredValidatorRequiredScope="read write";`)[0],
    );
    const s = NOW / 1000;
    expect(validateUnsecuredToken(jws({ user: 'bob', exp: s + 5, roles: ['write', 'read'] }), opts, NOW).principalName).toBe('bob');
    let err: IllegalTokenError | undefined;
    try {
      validateUnsecuredToken(jws({ user: 'bob', exp: s + 5, roles: 'read' }), opts, NOW);
    } catch (e) {
      err = e as IllegalTokenError;
    }
    expect(err?.failureScope).toBe('[read, write]');
    expect(err?.message).toBe('The provided scope ([read]) was missing a required scope (write).  All required scope elements: [read, write]');
  });

  test('validator options are checked', () => {
    const opts = (o: string) => () => unsecuredValidatorOptions(parseJaasConfig(`${MODULE} required ${o};`)[0]);
    expect(opts('unsecuredValidatorAllowableClockSkewMs="-1"')).toThrow('Allowable clock skew millis must not be negative: -1');
    expect(opts('unsecuredValidatorAllowableClockSkewMs="soon"')).toThrow('For input string: "soon"');
    expect(opts('unsecuredValidatorRequiredScope="ok bad\\\\scope"')).toThrow('Invalid scope value: bad\\scope');
    expect(unsecuredValidatorOptions(parseJaasConfig(`${MODULE} required unsecuredValidatorAllowableClockSkewMs=" 250 ";`)[0]).allowableClockSkewMs).toBe(250);
  });
});

describe('the server exchange', () => {
  const first = (token: string, authzid = '') => formatClientInitialResponse(token, authzid);
  const mechanism = (opts = DEFAULTS) => new OAuthBearerServerMechanism(opts, () => NOW);

  test('a valid token completes with an empty server token; the credential expires at exp', () => {
    const server = mechanism().newServer('L');
    expect(server.evaluateResponse(first(good()))).toEqual(Buffer.alloc(0));
    expect(server.complete).toBe(true);
    expect(server.authorizationId()).toBe('alice');
    expect(server.credentialExpiryMs!()).toBe(NOW + 60_000);
  });

  test('an invalid token: the JSON error as a challenge, then SASL_AUTHENTICATION_FAILED with it after %x01', async () => {
    const server = mechanism().newServer('L');
    const challenge = server.evaluateResponse(first(jws({ sub: 'alice', exp: NOW / 1000 - 1 }))) as Buffer;
    expect(challenge.toString()).toBe('{"status":"invalid_token"}');
    expect(server.complete).toBe(false);
    expect(() => server.evaluateResponse(Buffer.from([1]))).toThrow(new SaslAuthenticationError('{"status":"invalid_token"}'));
  });

  test('insufficient scope names the required scope', () => {
    const opts = { ...DEFAULTS, requiredScope: ['kafka'] };
    const server = mechanism(opts).newServer('L');
    expect((server.evaluateResponse(first(good({ scope: 'x' }))) as Buffer).toString()).toBe('{"status":"insufficient_scope", "scope":"[kafka]"}');
  });

  test('%x01 without a prior error is an invalid first message; a new first message after an error is evaluated again', () => {
    const server = mechanism().newServer('L');
    expect(() => server.evaluateResponse(Buffer.from([1]))).toThrow(SaslException);
    const again = mechanism().newServer('L');
    again.evaluateResponse(first(jws({ sub: 'a', exp: 1 })));
    expect(again.evaluateResponse(first(good()))).toEqual(Buffer.alloc(0));
    expect(again.authorizationId()).toBe('alice');
  });

  test('an authorization id must be the principal', () => {
    const server = mechanism().newServer('L');
    expect(() => server.evaluateResponse(first(good(), 'bob'))).toThrow(
      "Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)",
    );
    expect(mechanism().newServer('L').evaluateResponse(first(good(), 'alice'))).toEqual(Buffer.alloc(0));
  });
});

describe('the client side', () => {
  test("an unsecured login token from the JAAS options passes Kafka's validator", () => {
    const entry = parseJaasConfig(`${MODULE} required unsecuredLoginStringClaim_sub="admin" unsecuredLoginListClaim_scope=",a,b" unsecuredLoginLifetimeSeconds="120";`)[0];
    const token = unsecuredLoginToken(entry, NOW);
    const t = validateUnsecuredToken(token, { ...DEFAULTS, requiredScope: ['a', 'b'] }, NOW);
    expect(t.principalName).toBe('admin');
    expect(t.lifetimeMs).toBe(NOW + 120_000);
    expect(() => unsecuredLoginToken(parseJaasConfig(`${MODULE} required unsecuredLoginStringClaim_exp="1";`)[0], NOW)).toThrow("Cannot explicitly set the 'exp' claim");
    expect(() => unsecuredLoginToken(parseJaasConfig(`${MODULE} required;`)[0], NOW)).toThrow('No principal name in JWT claim: sub');
  });

  test('the client completes on an empty answer and answers an error with %x01', () => {
    const ok = new OAuthBearerSaslClient(() => 'tok');
    expect(ok.initialResponse().toString()).toBe('n,,\u0001auth=Bearer tok\u0001\u0001');
    expect(ok.evaluateChallenge(Buffer.alloc(0))).toBeNull();
    expect(ok.complete).toBe(true);
    const failing = new OAuthBearerSaslClient(() => 'tok');
    failing.initialResponse();
    expect(failing.evaluateChallenge(Buffer.from('{"status":"invalid_token"}'))).toEqual(Buffer.from([1]));
    expect(failing.complete).toBe(false);
  });
});
