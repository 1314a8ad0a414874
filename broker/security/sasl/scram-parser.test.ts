/**
 * `--add-scram` arguments (scram-parser.ts): Kafka's ScramParserTest cases with its exact messages,
 * the records they make (a user authenticates with the credential the record carries), and the
 * CLI's option (broker/cli.ts parseArgs).
 */
import { ScramArgumentError, parseScramArgument, scramCredentialRecords } from './scram-parser';
import { ScramServerMechanism } from './scram-server';
import { createScramClient } from './scram-client';
import { SCRAM_SHA_256, SCRAM_SHA_512, clientKey, serverKey, storedKey } from '../../../metadata/controller/scram-control-manager';
import type { UserScramCredentialRecordData } from '../../../metadata/metadata-records';
import { parseArgs } from '../../cli';

const TEST_SALT = Buffer.from([49, 108, 118, 52, 112, 100, 110, 119, 52, 102, 119, 113, 55, 110, 111, 116, 99, 120, 109, 48, 121, 121, 49, 107, 55, 113]);
const TEST_SALTED_PASSWORD = Buffer.from(
  [-103, 61, 50, -55, 69, 49, -98, 82, 90, 11, -33, 71, 94, 4, 83, 73, -119, 91, -70, -90, -72, 21, 33, -83, 36, 34, 95, 76, -53, -29, 96, 33].map((b) => b & 0xff),
);

const failure = (arg: string): string => {
  try {
    parseScramArgument(arg);
  } catch (err) {
    expect(err).toBeInstanceOf(ScramArgumentError);
    return (err as Error).message;
  }
  throw new Error(`${arg} parsed`);
};

test.each([
  ['SCRAM-SHA-512', "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-512'"],
  ['SCRAM-SHA-UNSUPPORTED=[name=scram-admin,password=scram-user-secret]', 'The add-scram mechanism SCRAM-SHA-UNSUPPORTED is not supported.'],
  ['SCRAM-SHA-256=name=scram-admin,password=scram-user-secret', 'Expected configuration string to start with ['],
  ['SCRAM-SHA-256=[name=scram-admin,password=scram-user-secret', 'Expected configuration string to end with ]'],
  ['SCRAM-SHA-256=[password=mypass]', "You must supply 'name' to add-scram"],
  ['SCRAM-SHA-256=[name=bar]', "You must supply one of 'password' or 'saltedpassword' to add-scram"],
  ['SCRAM-SHA-256=[name=bob,password=mypass,unknown=something,unknown2=somethingelse]', 'Unknown SCRAM configurations: unknown, unknown2'],
  ['SCRAM-SHA-256=[name=alice,saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE="]', "You must supply 'salt' with 'saltedpassword' to add-scram"],
  ['SCRAM-SHA-256=[name]', 'No equals sign found in SCRAM component: name'],
  ['SCRAM-SHA-256=[]', 'No equals sign found in SCRAM component: '],
  ['SCRAM-SHA-256=[name=a,,password=b]', 'No equals sign found in SCRAM component: '],
  ['SCRAM-SHA-256=[name=a,password=b,salt=!!]', 'Failed to decode given salt: !!'],
  ['SCRAM-SHA-256=[name=a,salt=c2FsdA==,saltedpassword=*]', 'Failed to decode given saltedPassword: *'],
  ['SCRAM-SHA-256=[name=a,password=b,iterations=many]', 'Failed to parse iterations count: many'],
  ['SCRAM-SHA-256=[name=a,password=b,iterations=4095]', "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"],
  ['SCRAM-SHA-512=[name=a,password=b,iterations=16385]', "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512"],
])('%s: %s', (arg, message) => {
  expect(failure(arg)).toBe(message);
});

test('name, password, iterations, salt (quoted values lose their quotes), defaults', () => {
  expect(parseScramArgument('SCRAM-SHA-512=[name=scram-admin,password=scram-user-secret]')).toEqual({
    mechanism: SCRAM_SHA_512,
    name: 'scram-admin',
    salt: null,
    iterations: 4096,
    password: 'scram-user-secret',
    saltedPassword: null,
  });
  expect(parseScramArgument('  SCRAM-SHA-256=[name=bob,password=my pass,iterations=8192,salt="MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E="]  ')).toEqual({
    mechanism: SCRAM_SHA_256,
    name: 'bob',
    salt: TEST_SALT,
    iterations: 8192,
    password: 'my pass',
    saltedPassword: null,
  });
  expect(parseScramArgument('SCRAM-SHA-256=[name=alice,salt="MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=",saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE="]')).toMatchObject({
    name: 'alice',
    salt: TEST_SALT,
    password: null,
    saltedPassword: TEST_SALTED_PASSWORD,
  });
  // A key given twice keeps its last value; a trailing comma is nothing (Java's split).
  expect(parseScramArgument('SCRAM-SHA-256=[name=a,name=b,password=p,]')).toMatchObject({ name: 'b', password: 'p' });
  expect(parseScramArgument('SCRAM-SHA-256=[name="",password=""]')).toMatchObject({ name: '', password: '' });
});

test("a salted password record is Kafka's (testPerMechanismDataToRecord)", () => {
  const [rec] = scramCredentialRecords(['SCRAM-SHA-512=[name=alice,salt="MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=",saltedpassword="mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE="]']);
  expect(rec).toEqual({
    type: 'UserScramCredentialRecord',
    data: {
      name: 'alice',
      mechanism: 2,
      salt: TEST_SALT,
      storedKey: storedKey(SCRAM_SHA_512, clientKey(SCRAM_SHA_512, TEST_SALTED_PASSWORD)),
      serverKey: serverKey(SCRAM_SHA_512, TEST_SALTED_PASSWORD),
      iterations: 4096,
    },
  });
});

test('password records get a random salt each and authenticate their user', () => {
  const recs = scramCredentialRecords(['SCRAM-SHA-256=[name=alice,password=alice-secret]', 'SCRAM-SHA-256=[name=alice,password=alice-secret]', 'SCRAM-SHA-512=[name=bob,password=b,iterations=8192]']);
  const [a1, a2, b] = recs.map((r) => r.data as UserScramCredentialRecordData);
  expect(a1.salt).not.toEqual(a2.salt);
  expect(a1.salt.toString()).toMatch(/^[0-9a-z]+$/);
  expect([b.mechanism, b.iterations]).toEqual([2, 8192]);
  for (const [rec, password, ok] of [
    [a1, 'alice-secret', true],
    [b, 'b', true],
    [a1, 'nope', false],
  ] as const) {
    const m = rec.mechanism === 1 ? SCRAM_SHA_256 : SCRAM_SHA_512;
    const server = new ScramServerMechanism(m, { scramCredential: (u, t) => (u === rec.name && t === rec.mechanism ? rec : undefined) }).newServer('L');
    const client = createScramClient({ mechanism: m.mechanismName, username: rec.name, password });
    const final = client.evaluateChallenge(server.evaluateResponse(client.initialResponse()))!;
    if (ok) {
      client.evaluateChallenge(server.evaluateResponse(final));
      expect(client.complete && server.complete).toBe(true);
    } else {
      expect(() => server.evaluateResponse(final)).toThrow('Invalid client credentials');
    }
  }
});

test('an empty salted password is refused as Kafka refuses it', () => {
  expect(failure('SCRAM-SHA-256=[name=a,salt=c2FsdA==,saltedpassword=""]')).toBe('Empty key');
});

test('the CLI takes --add-scram (repeatable, also -S and --add-scram=...) and refuses a bad one before starting', () => {
  const a = 'SCRAM-SHA-256=[name=alice,password=alice-secret]';
  const b = 'SCRAM-SHA-512=[name=bob,iterations=8192,salt="N3E=",saltedpassword="YCE="]';
  expect(parseArgs(['--add-scram', a, '-S', b, `--add-scram=${a}`]).scramCredentials).toEqual([a, b, a]);
  expect(parseArgs(['--port', '0']).scramCredentials).toBeUndefined();
  expect(() => parseArgs(['--add-scram', 'SCRAM-SHA-1=[name=x,password=y]'])).toThrow('--add-scram: The add-scram mechanism SCRAM-SHA-1 is not supported.');
  expect(() => parseArgs(['--add-scram'])).toThrow('--add-scram needs a value');
});
