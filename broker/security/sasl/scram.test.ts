/**
 * SASL/SCRAM server and client mechanisms (scram-server.ts, scram-client.ts, scram-messages.ts):
 * the RFC 7677 SCRAM-SHA-256 example byte for byte in both directions, Kafka's ScramSaslServerTest
 * and ScramMessagesTest cases, round trips for both mechanisms, and every failure with the error
 * class (SaslException: generic text to the client; SaslAuthenticationError: Kafka's own text) and
 * message Kafka gives.
 */
import { SaslAuthenticationError, SaslException } from './mechanism';
import { ScramSaslServer, ScramServerMechanism, scramServerMechanisms, type ScramCredentialStore } from './scram-server';
import { ScramSaslClient, createScramClient, isScramMechanism } from './scram-client';
import {
  ScramFormatError,
  parseClientFinal,
  parseClientFirst,
  parseServerFinal,
  parseServerFirst,
  saslName,
  usernameOf,
} from './scram-messages';
import {
  SCRAM_SHA_256,
  SCRAM_SHA_512,
  saltedPassword,
  scramCredentialRecord,
  secureRandomString,
  type ScramMechanismInfo,
} from '../../../metadata/controller/scram-control-manager';
import type { ScramCredential } from '../../../metadata/metadata-cache';

/** A store of credentials made from passwords, as the controller would store them. */
function store(entries: { user: string; password: string; mechanism?: ScramMechanismInfo; iterations?: number; salt?: Buffer }[]): ScramCredentialStore & { lookups: string[] } {
  const map = new Map<string, ScramCredential>();
  for (const e of entries) {
    const m = e.mechanism ?? SCRAM_SHA_256;
    const salt = e.salt ?? Buffer.from(secureRandomString());
    const iterations = e.iterations ?? 4096;
    const rec = scramCredentialRecord(m, e.user, salt, saltedPassword(m, e.password, salt, iterations), iterations);
    map.set(`${m.type}:${e.user}`, { salt: rec.salt, storedKey: rec.storedKey, serverKey: rec.serverKey, iterations });
  }
  const lookups: string[] = [];
  return {
    lookups,
    scramCredential(user, mechanism) {
      lookups.push(`${mechanism}:${user}`);
      return map.get(`${mechanism}:${user}`);
    },
  };
}

/** Runs a whole exchange; returns the server (complete or not) and the client. */
function exchange(server: ScramSaslServer, client: ScramSaslClient): void {
  const serverFirst = server.evaluateResponse(client.initialResponse());
  const clientFinal = client.evaluateChallenge(serverFirst)!;
  const serverFinal = server.evaluateResponse(clientFinal);
  expect(client.evaluateChallenge(serverFinal)).toBeNull();
}

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('RFC 7677 SCRAM-SHA-256 example', () => {
  const c1 = 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO';
  const s1 = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
  const c2 = 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=';
  const s2 = 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=';
  const credentials = () => store([{ user: 'user', password: 'pencil', salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64') }]);

  test('the server answers the example messages exactly', () => {
    const server = new ScramServerMechanism(SCRAM_SHA_256, credentials(), { nonce: () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0' }).newServer('SASL_PLAINTEXT');
    expect(server.evaluateResponse(Buffer.from(c1)).toString()).toBe(s1);
    expect(server.complete).toBe(false);
    expect(() => server.authorizationId()).toThrow('Authentication exchange has not completed');
    expect(server.evaluateResponse(Buffer.from(c2)).toString()).toBe(s2);
    expect(server.complete).toBe(true);
    expect(server.authorizationId()).toBe('user');
    expect(server.credentialExpiryMs()).toBeUndefined();
  });

  test('the client sends the example messages exactly and verifies the server signature', () => {
    const client = new ScramSaslClient(SCRAM_SHA_256, 'user', 'pencil', { nonce: () => 'rOprNGfwEbeRWgbNEkqO' });
    expect(client.initialResponse().toString()).toBe(c1);
    expect(client.evaluateChallenge(Buffer.from(s1))!.toString()).toBe(c2);
    expect(client.complete).toBe(false);
    expect(client.evaluateChallenge(Buffer.from(s2))).toBeNull();
    expect(client.complete).toBe(true);
  });

  test('the example messages parse as Kafka parses them', () => {
    const first = parseClientFirst(Buffer.from(c1));
    expect(first).toEqual({ authorizationId: '', saslName: 'user', nonce: 'rOprNGfwEbeRWgbNEkqO', extensions: new Map() });
    const sf = parseServerFirst(Buffer.from(s1));
    expect(sf.nonce.slice(first.nonce.length)).toBe('%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
    expect(sf.salt).toEqual(Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'));
    expect(sf.iterations).toBe(4096);
    expect(parseClientFinal(Buffer.from(c2)).channelBinding.toString()).toBe('n,,');
    expect(parseServerFinal(Buffer.from(s2)).serverSignature).toEqual(Buffer.from('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=', 'base64'));
  });
});

describe.each([SCRAM_SHA_256, SCRAM_SHA_512])('%s round trips', (m) => {
  test.each(['alice', 'a,b=c', '=', ',=', 'user 1'])('user %j with the right password authenticates', (user) => {
    const creds = store([{ user, password: 'secret', mechanism: m, iterations: 8192 }]);
    const server = new ScramServerMechanism(m, creds).newServer('L');
    const client = createScramClient({ mechanism: m.mechanismName, username: user, password: 'secret' });
    const first = client.initialResponse();
    const serverFirst = server.evaluateResponse(first);
    // The server uses the stored iteration count and salt.
    expect(parseServerFirst(serverFirst).iterations).toBe(8192);
    const serverFinal = server.evaluateResponse(client.evaluateChallenge(serverFirst)!);
    expect(client.evaluateChallenge(serverFinal)).toBeNull();
    expect([server.complete, client.complete, server.authorizationId()]).toEqual([true, true, user]);
    expect(creds.lookups).toEqual([`${m.type}:${user}`]);
  });

  test('a wrong password fails at client-final, an unknown user at client-first, alike for the client', () => {
    const creds = store([{ user: 'alice', password: 'secret', mechanism: m }]);
    const server = new ScramServerMechanism(m, creds).newServer('L');
    const client = createScramClient({ mechanism: m.mechanismName, username: 'alice', password: 'wrong' });
    const clientFinal = client.evaluateChallenge(server.evaluateResponse(client.initialResponse()))!;
    const wrong = thrown(() => server.evaluateResponse(clientFinal));
    expect(wrong).toBeInstanceOf(SaslException);
    expect(wrong.message).toBe('Invalid client credentials');
    expect(server.complete).toBe(false);

    const unknown = thrown(() =>
      new ScramServerMechanism(m, creds).newServer('L').evaluateResponse(createScramClient({ mechanism: m.mechanismName, username: 'bob', password: 'secret' }).initialResponse()),
    );
    expect(unknown).toBeInstanceOf(SaslException);
    expect(unknown.message).toBe('Authentication failed: Invalid user credentials');
  });

  test('a credential of the other mechanism does not authenticate', () => {
    const other = m === SCRAM_SHA_256 ? SCRAM_SHA_512 : SCRAM_SHA_256;
    const creds = store([{ user: 'alice', password: 'secret', mechanism: other }]);
    const err = thrown(() => new ScramServerMechanism(m, creds).newServer('L').evaluateResponse(createScramClient({ mechanism: m.mechanismName, username: 'alice', password: 'secret' }).initialResponse()));
    expect(err).toBeInstanceOf(SaslException);
  });
});

describe("Kafka's ScramSaslServerTest", () => {
  const creds = store([
    { user: 'userA', password: 'passwordA' },
    { user: 'userB', password: 'passwordB' },
  ]);
  const newServer = () => new ScramServerMechanism(SCRAM_SHA_256, creds).newServer('L');
  const clientFirst = (user: string, authzid: string | null) => Buffer.from(`n,${authzid !== null ? `a=${authzid}` : ''},n=${user},r=${secureRandomString()}`);

  test('noAuthorizationIdSpecified', () => {
    expect(newServer().evaluateResponse(clientFirst('userA', null)).length).toBeGreaterThan(0);
  });

  test('authorizationIdEqualsAuthenticationId', () => {
    expect(newServer().evaluateResponse(clientFirst('userA', 'userA')).length).toBeGreaterThan(0);
  });

  test('authorizationIdNotEqualsAuthenticationId: an authentication error with its own message', () => {
    const err = thrown(() => newServer().evaluateResponse(clientFirst('userA', 'userB')));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err).not.toBeInstanceOf(SaslException);
    expect(err.message).toBe('Authentication failed: Client requested an authorization id that is different from username');
  });

  test('validateNonceExchange: the server nonce starts with the client nonce; the right final message completes', () => {
    const client = new ScramSaslClient(SCRAM_SHA_256, 'userA', 'passwordA');
    const server = newServer();
    const first = client.initialResponse();
    const serverFirst = server.evaluateResponse(first);
    expect(parseServerFirst(serverFirst).nonce.startsWith(parseClientFirst(first).nonce)).toBe(true);
    expect(parseServerFinal(server.evaluateResponse(client.evaluateChallenge(serverFirst)!)).error).toBeNull();
  });

  test('validateFailedNonceExchange', () => {
    const server = newServer();
    server.evaluateResponse(clientFirst('userA', 'userA'));
    const b64 = () => Buffer.from(secureRandomString()).toString('base64');
    const err = thrown(() => server.evaluateResponse(Buffer.from(`c=${b64()},r=${secureRandomString()},p=${b64()}`)));
    expect(err).toBeInstanceOf(SaslException);
    expect(err.message).toBe('Invalid client nonce in the final client message.');
  });
});

describe('server failures', () => {
  const creds = store([
    { user: 'alice', password: 'secret' },
    { user: 'weak', password: 'secret', iterations: 1024 },
  ]);
  const newServer = () => new ScramServerMechanism(SCRAM_SHA_256, creds).newServer('L');

  test.each([
    ['y,,n=alice,r=abc', 'Invalid SCRAM client first message format: y,,n=alice,r=abc'],
    ['p=tls-unique,,n=alice,r=abc', 'Invalid SCRAM client first message format: p=tls-unique,,n=alice,r=abc'],
    ['n,,n=alice', 'Invalid SCRAM client first message format: n,,n=alice'],
    ['n,,n=ali=ce,r=abc', 'Invalid SCRAM client first message format: n,,n=ali=ce,r=abc'],
    ['n,,n=alice,r=abc,tokenauth=true', 'Token Authentication failed: Invalid tokenId : alice'],
    ['n,,n=alice,r=abc,tokenauth=TRUE', 'Token Authentication failed: Invalid tokenId : alice'],
    ['n,,n=weak,r=abc', 'Iterations 1024 is less than the minimum 4096 for SCRAM_SHA_256'],
    ['n,,n=nobody,r=abc', 'Authentication failed: Invalid user credentials'],
  ])('client-first %j: SaslException %j', (msg, reason) => {
    const server = newServer();
    const err = thrown(() => server.evaluateResponse(Buffer.from(msg)));
    expect(err).toBeInstanceOf(SaslException);
    expect(err.message).toBe(reason);
    // A failed server takes nothing more.
    expect(() => server.evaluateResponse(Buffer.from('n,,n=alice,r=abc'))).toThrow('Unexpected challenge in Sasl server state FAILED');
  });

  test('extensions other than tokenauth are ignored, and tokenauth=false is not token authentication', () => {
    expect(newServer().evaluateResponse(Buffer.from('n,,n=alice,r=abc,tokenauth=false,other=x')).toString()).toMatch(/^r=abc[0-9a-z]+,s=[A-Za-z0-9+/=]+,i=4096$/);
  });

  test('a malformed, short or wrong proof is a SaslException', () => {
    for (const proof of ['p=123', 'p=AAAA', `p=${Buffer.alloc(32).toString('base64')}`]) {
      const server = newServer();
      const nonce = parseServerFirst(server.evaluateResponse(Buffer.from('n,,n=alice,r=abc'))).nonce;
      const err = thrown(() => server.evaluateResponse(Buffer.from(`c=biws,r=${nonce},${proof}`)));
      expect(err).toBeInstanceOf(SaslException);
      expect(err.message).toBe(proof === 'p=123' ? `Invalid SCRAM client final message format: c=biws,r=${nonce},p=123` : 'Invalid client credentials');
    }
  });

  test('a completed server takes no more tokens (an extra one fails it, as in Kafka)', () => {
    const server = newServer();
    exchange(server, new ScramSaslClient(SCRAM_SHA_256, 'alice', 'secret'));
    expect(server.authorizationId()).toBe('alice');
    expect(() => server.evaluateResponse(Buffer.from('n,,n=alice,r=abc'))).toThrow('Unexpected challenge in Sasl server state COMPLETE');
    expect(server.complete).toBe(false);
    expect(() => server.authorizationId()).toThrow('Authentication exchange has not completed');
  });

  test('the credential is read when client-first arrives (a credential added later is used)', () => {
    let current: ScramCredential | undefined;
    const late: ScramCredentialStore = { scramCredential: () => current };
    const mech = new ScramServerMechanism(SCRAM_SHA_512, late);
    expect(() => mech.newServer('L').evaluateResponse(createScramClient({ mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' }).initialResponse())).toThrow(SaslException);
    const salt = Buffer.from('salt');
    const rec = scramCredentialRecord(SCRAM_SHA_512, 'u', salt, saltedPassword(SCRAM_SHA_512, 'p', salt, 4096), 4096);
    current = rec;
    const server = mech.newServer('L');
    exchange(server, createScramClient({ mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' }));
    expect(server.complete).toBe(true);
  });

  test('both mechanisms are offered under their SASL names', () => {
    expect(scramServerMechanisms(creds).map((m) => m.name)).toEqual(['SCRAM-SHA-256', 'SCRAM-SHA-512']);
  });
});

describe('client failures', () => {
  const client = () => new ScramSaslClient(SCRAM_SHA_256, 'alice', 'secret', { nonce: () => 'cnonce' });

  test.each([
    ['r=other,s=c2FsdA==,i=4096', 'Invalid server nonce: does not start with client nonce'],
    ['r=cnonceS,s=c2FsdA==,i=4095', 'Requested iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256'],
    ['r=cnonceS,s=c2FsdA==,i=0', 'Invalid SCRAM server first message format: invalid iterations 0'],
    ['r=cnonceS,s=c2FsdA==,i=99999999999', 'Invalid SCRAM server first message format: invalid iterations'],
    ['r=cnonceS,s==123,i=4096', 'Invalid SCRAM server first message format: r=cnonceS,s==123,i=4096'],
  ])('server-first %j: %j', (msg, message) => {
    const c = client();
    c.initialResponse();
    const err = thrown(() => c.evaluateChallenge(Buffer.from(msg)));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe(message);
    expect(c.complete).toBe(false);
    expect(() => c.evaluateChallenge(Buffer.from(msg))).toThrow('Unexpected challenge in Sasl client state FAILED');
  });

  test.each([
    ['e=unknown-user', 'Sasl authentication using SCRAM_SHA_256 failed with error: unknown-user'],
    [`v=${Buffer.alloc(32).toString('base64')}`, 'Invalid server signature in server final message'],
    ['v=1=23', 'Invalid SCRAM server final message format: v=1=23'],
  ])('server-final %j: %j', (msg, message) => {
    const c = client();
    c.initialResponse();
    c.evaluateChallenge(Buffer.from('r=cnonceS,s=c2FsdA==,i=4096'));
    const err = thrown(() => c.evaluateChallenge(Buffer.from(msg)));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe(message);
    expect(c.complete).toBe(false);
  });

  test('the client-first message is sent once', () => {
    const c = client();
    expect(c.initialResponse().toString()).toBe('n,,n=alice,r=cnonce');
    expect(() => c.initialResponse()).toThrow(SaslAuthenticationError);
  });

  test('only SCRAM mechanisms make a SCRAM client', () => {
    expect(isScramMechanism('SCRAM-SHA-512')).toBe(true);
    expect(isScramMechanism('PLAIN')).toBe(false);
    expect(() => createScramClient({ mechanism: 'PLAIN', username: 'a', password: 'b' })).toThrow(
      "Requested mechanisms '[PLAIN]' not supported. Supported mechanisms are '[SCRAM-SHA-256, SCRAM-SHA-512]'.",
    );
    expect(createScramClient({ mechanism: 'SCRAM-SHA-512', username: 'a', password: 'b' }).mechanism).toBe(SCRAM_SHA_512);
  });
});

describe("Kafka's ScramMessagesTest and ScramFormatterTest", () => {
  const VALID_EXTENSIONS = ['ext=val1', 'anotherext=name1=value1 name2=another test value "\'!$[]()', 'first=val1,second=name1 = value ,third=123'];
  const INVALID_EXTENSIONS = ['ext1=value', 'ext', 'ext=value1,value2', 'ext=,', 'ext =value'];
  const VALID_RESERVED = ['m=reserved-value', 'm=name1=value1 name2=another test value "\'!$[]()'];
  const INVALID_RESERVED = ['m', 'm=name,value', 'm=,'];
  const nonce = secureRandomString();
  const b64 = Buffer.from(secureRandomString()).toString('base64');
  const ok = (f: (b: Buffer) => unknown, s: string) => f(Buffer.from(s));
  const bad = (f: (b: Buffer) => unknown, s: string) => expect(() => f(Buffer.from(s))).toThrow(ScramFormatError);

  test('client-first', () => {
    expect(ok(parseClientFirst, `n,,n=testuser,r=${nonce}`)).toMatchObject({ saslName: 'testuser', nonce, authorizationId: '' });
    expect(usernameOf(parseClientFirst(Buffer.from(`n,,n=test=2Cuser,r=${nonce}`)).saslName)).toBe('test,user');
    expect(usernameOf(parseClientFirst(Buffer.from(`n,,n=test=3Duser,r=${nonce}`)).saslName)).toBe('test=user');
    expect(ok(parseClientFirst, `n,a=testauthzid,n=testuser,r=${nonce}`)).toMatchObject({ authorizationId: 'testauthzid' });
    for (const r of VALID_RESERVED) expect(ok(parseClientFirst, `n,,${r},n=testuser,r=${nonce}`)).toMatchObject({ saslName: 'testuser', nonce });
    for (const e of VALID_EXTENSIONS) expect(ok(parseClientFirst, `n,,n=testuser,r=${nonce},${e}`)).toMatchObject({ saslName: 'testuser', nonce });
    expect(parseClientFirst(Buffer.from(`n,,n=testuser,r=${nonce},tokenauth=true`)).extensions.get('tokenauth')).toBe('true');
    bad(parseClientFirst, `n,x=something,n=testuser,r=${nonce}`);
    for (const r of INVALID_RESERVED) bad(parseClientFirst, `n,,${r},n=testuser,r=${nonce}`);
    for (const e of INVALID_EXTENSIONS) bad(parseClientFirst, `n,,n=testuser,r=${nonce},${e}`);
    // Kafka's patterns are 7-bit: a non-ASCII user name is not a SCRAM name.
    bad(parseClientFirst, `n,,n=jürgen,r=${nonce}`);
  });

  test('server-first', () => {
    expect(ok(parseServerFirst, `r=${nonce},s=${b64},i=4096`)).toEqual({ nonce, salt: Buffer.from(b64, 'base64'), iterations: 4096 });
    for (const r of VALID_RESERVED) expect(ok(parseServerFirst, `${r},r=${nonce},s=${b64},i=4096`)).toMatchObject({ nonce, iterations: 4096 });
    for (const e of VALID_EXTENSIONS) expect(ok(parseServerFirst, `r=${nonce},s=${b64},i=4096,${e}`)).toMatchObject({ nonce, iterations: 4096 });
    bad(parseServerFirst, `r=${nonce},s=${b64},i=0`);
    bad(parseServerFirst, `r=${nonce},s==123,i=4096`);
    bad(parseServerFirst, `r=${nonce},invalid,s=${b64},i=4096`);
    for (const r of INVALID_RESERVED) bad(parseServerFirst, `${r},r=${nonce},s=${b64},i=4096`);
    for (const e of INVALID_EXTENSIONS) bad(parseServerFirst, `r=${nonce},s=${b64},i=4096,${e}`);
  });

  test('client-final', () => {
    expect(ok(parseClientFinal, `c=${b64},r=${nonce},p=${b64}`)).toEqual({ channelBinding: Buffer.from(b64, 'base64'), nonce, proof: Buffer.from(b64, 'base64') });
    for (const e of VALID_EXTENSIONS) expect(ok(parseClientFinal, `c=${b64},r=${nonce},${e},p=${b64}`)).toMatchObject({ nonce });
    bad(parseClientFinal, `c=ab,r=${nonce},p=${b64}`);
    bad(parseClientFinal, `c=${b64},r=${nonce},p=123`);
    for (const e of INVALID_EXTENSIONS) bad(parseClientFinal, `c=${b64},r=${nonce},${e},p=${b64}`);
  });

  test('server-final', () => {
    expect(ok(parseServerFinal, `v=${b64}`)).toEqual({ error: null, serverSignature: Buffer.from(b64, 'base64') });
    expect(ok(parseServerFinal, 'e=other-error')).toEqual({ error: 'other-error', serverSignature: null });
    for (const e of VALID_EXTENSIONS) expect(ok(parseServerFinal, `v=${b64},${e}`)).toMatchObject({ error: null });
    bad(parseServerFinal, 'e=error1,error2');
    bad(parseServerFinal, 'v=1=23');
    for (const e of INVALID_EXTENSIONS) bad(parseServerFinal, `v=${b64},${e}`);
  });

  test('saslName escapes , and = and round-trips', () => {
    for (const u of ['user1', '123', '1,2', 'user=A', 'user==B', 'user,1', 'user 1', ',', '=', ',=', '==']) {
      const s = saslName(u);
      expect(s.includes(',')).toBe(false);
      expect(s.replace(/=2C/g, '').replace(/=3D/g, '').includes('=')).toBe(false);
      expect(usernameOf(s)).toBe(u);
    }
    expect(() => usernameOf('a=b')).toThrow('Invalid username: a=b');
  });

  test('secure random strings are base 36 of at most 130 bits', () => {
    for (let i = 0; i < 50; i++) {
      const s = secureRandomString();
      expect(s).toMatch(/^[0-9a-z]+$/);
      expect([...s].reduce((acc, ch) => acc * 36n + BigInt(parseInt(ch, 36)), 0n) < 2n ** 130n).toBe(true);
    }
  });
});
