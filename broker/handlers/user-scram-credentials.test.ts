/**
 * AlterUserScramCredentials (51) and DescribeUserScramCredentials (50) at every advertised version,
 * through the real dispatcher of a combined node started with `scramCredentials` (--add-scram):
 * Kafka's per-user results, codes and messages for both APIs, the image the SCRAM mechanism reads
 * (a credential written by Alter authenticates; a deleted one does not), answers that carry nothing
 * secret, the bootstrap credential surviving a restart while a second --add-scram is not added,
 * and Kafka's authorization answers (ALTER / DESCRIBE on the cluster).
 */
import { pbkdf2Sync } from 'node:crypto';
import * as fs from 'node:fs';
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { ApiKey } from '../../protocol/generated';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';
import { ScramServerMechanism } from '../security/sasl/scram-server';
import { createScramClient } from '../security/sasl/scram-client';
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanismInfo } from '../../metadata/controller/scram-control-manager';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { ScriptedAuthorizer } from '../security/testing/scripted-authorizer';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'scram-handlers-test');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);

const ALTER = ApiKey.AlterUserScramCredentials;
const DESCRIBE = ApiKey.DescribeUserScramCredentials;

/** An upsertion as a client makes it: the password salted with PBKDF2 (Kafka's admin client). */
function upsertion(name: string, password: string, m: ScramMechanismInfo = SCRAM_SHA_256, iterations = 4096) {
  const salt = Buffer.from(`salt-of-${name}`);
  return { name, mechanism: m.type, iterations, salt, saltedPassword: pbkdf2Sync(password, salt, iterations, m.keyLength, m.hash) };
}

/** Whether `user` / `password` authenticates against the broker's image right now. */
function authenticates(user: string, password: string, m: ScramMechanismInfo): boolean {
  const server = new ScramServerMechanism(m, broker.server.metadata).newServer('PLAINTEXT');
  const c = createScramClient({ mechanism: m.mechanismName, username: user, password });
  try {
    c.evaluateChallenge(server.evaluateResponse(c.evaluateChallenge(server.evaluateResponse(c.initialResponse()))!));
    return server.complete && c.complete;
  } catch {
    return false;
  }
}

const results = (res: any) => res.results.map((r: any) => [r.user, r.errorCode, r.errorMessage]);

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', keepDataDir: true, scramCredentials: ['SCRAM-SHA-512=[name=admin,password=admin-secret,iterations=8192]'] });
});

afterAll(async () => {
  await broker?.close();
  if (broker) fs.rmSync(broker.dataDir, { recursive: true, force: true });
});

test('both APIs are advertised at v0 (Kafka 4: v0 only)', () => {
  expect(versions(ALTER)).toEqual([0]);
  expect(versions(DESCRIBE)).toEqual([0]);
});

test('the --add-scram credential is in the image and authenticates', async () => {
  expect(authenticates('admin', 'admin-secret', SCRAM_SHA_512)).toBe(true);
  expect(authenticates('admin', 'wrong', SCRAM_SHA_512)).toBe(false);
  expect(authenticates('admin', 'admin-secret', SCRAM_SHA_256)).toBe(false);
  for (const v of versions(DESCRIBE)) {
    const res = await call(DESCRIBE, v, { users: [{ name: 'admin' }] });
    expect(res).toEqual({ throttleTimeMs: 0, errorCode: 0, errorMessage: null, results: [{ user: 'admin', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 8192 }] }] });
  }
});

test.each(versions(ALTER))('AlterUserScramCredentials v%i: per-user results; DescribeUserScramCredentials sees them', async (v) => {
  const [alice, bob, carol] = [`alice-${v}`, `bob-${v}`, `carol@${v}.example`];
  const dup = 'A user credential cannot be altered twice in the same request';
  const created = await call(ALTER, v, {
    deletions: [{ name: 'nobody', mechanism: 1 }],
    upsertions: [upsertion(alice, 'alice-secret'), upsertion(bob, 'bob-secret', SCRAM_SHA_512, 8192), upsertion(carol, 'c'), upsertion(carol, 'c2'), { ...upsertion('weak', 'w'), iterations: 1 }, { ...upsertion('odd', 'o'), mechanism: 7 }, upsertion('', 'e')],
  });
  expect(created.throttleTimeMs).toBe(0);
  expect(results(created)).toEqual([
    [alice, ErrorCode.NONE, null],
    [bob, ErrorCode.NONE, null],
    ['nobody', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
    [carol, ErrorCode.DUPLICATE_RESOURCE, dup],
    ['weak', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
    ['odd', ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism'],
    ['', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'],
  ]);
  expect(authenticates(alice, 'alice-secret', SCRAM_SHA_256)).toBe(true);
  expect(authenticates(bob, 'bob-secret', SCRAM_SHA_512)).toBe(true);
  expect(authenticates(carol, 'c', SCRAM_SHA_256)).toBe(false);

  // A second mechanism for alice (one alteration per user per request).
  expect(results(await call(ALTER, v, { deletions: [], upsertions: [upsertion(alice, 'alice-512', SCRAM_SHA_512, 16384)] }))).toEqual([[alice, 0, null]]);

  const described = await call(DESCRIBE, v, { users: [{ name: alice }, { name: 'ghost' }, { name: bob }, { name: bob }] });
  expect(described.errorCode).toBe(ErrorCode.NONE);
  expect(described.results).toEqual([
    { user: alice, errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }, { mechanism: 2, iterations: 16384 }] },
    { user: 'ghost', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: ghost', credentialInfos: [] },
    { user: bob, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${bob}`, credentialInfos: [] },
  ]);
  // null and empty both mean every user; nothing secret in any answer.
  for (const users of [null, []]) {
    const all = await call(DESCRIBE, v, { users });
    expect(all.results.map((r: any) => r.user)).toEqual(expect.arrayContaining(['admin', alice, bob]));
    for (const r of all.results) {
      expect(Object.keys(r).sort()).toEqual(['credentialInfos', 'errorCode', 'errorMessage', 'user']);
      for (const c of r.credentialInfos) expect(Object.keys(c).sort()).toEqual(['iterations', 'mechanism']);
    }
  }

  // Deletion: the credential no longer authenticates; the other mechanism still does.
  expect(results(await call(ALTER, v, { deletions: [{ name: alice, mechanism: 1 }, { name: bob, mechanism: 2 }], upsertions: [] }))).toEqual([
    [alice, 0, null],
    [bob, 0, null],
  ]);
  expect(authenticates(alice, 'alice-secret', SCRAM_SHA_256)).toBe(false);
  expect(authenticates(alice, 'alice-512', SCRAM_SHA_512)).toBe(true);
  expect((await call(DESCRIBE, v, { users: [{ name: bob }] })).results[0].errorCode).toBe(ErrorCode.RESOURCE_NOT_FOUND);
  expect(await call(ALTER, v, { deletions: [], upsertions: [] })).toEqual({ throttleTimeMs: 0, results: [] });
});

test('credentials survive a restart; --add-scram is written on the first start only', async () => {
  const dataDir = broker.dataDir;
  expect(results(await call(ALTER, 0, { deletions: [], upsertions: [upsertion('persisted', 'p', SCRAM_SHA_512)] }))).toEqual([['persisted', 0, null]]);
  await broker.close();
  broker = await startBroker({ logLevel: 'error', dataDir, keepDataDir: true, scramCredentials: ['SCRAM-SHA-256=[name=late,password=late]'] });
  expect(authenticates('persisted', 'p', SCRAM_SHA_512)).toBe(true);
  expect(authenticates('admin', 'admin-secret', SCRAM_SHA_512)).toBe(true);
  expect(authenticates('late', 'late', SCRAM_SHA_256)).toBe(false);
  expect((await call(DESCRIBE, 0, { users: [{ name: 'late' }] })).results[0].errorCode).toBe(ErrorCode.RESOURCE_NOT_FOUND);
});

test('a bad --add-scram argument stops startup before anything is written', async () => {
  await expect(startBroker({ logLevel: 'error', scramCredentials: ['SCRAM-SHA-256=[name=x,password=y,iterations=99]'] })).rejects.toThrow(
    "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
  );
});

describe('authorization (an authorizer that allows nothing until told)', () => {
  let secured: RunningBroker;
  const authorizer = new ScriptedAuthorizer();
  const securedClient = new DispatchClient(() => secured.server, 'scram-auth-test');

  beforeAll(async () => {
    secured = await startBroker({ logLevel: 'error', authorizer });
  });

  afterAll(async () => {
    await secured?.close();
  });

  test('AlterUserScramCredentials needs ALTER on the cluster: every distinct user, sorted, CLUSTER_AUTHORIZATION_FAILED', async () => {
    authorizer.reset();
    const res = await securedClient.call(ALTER, 0, { deletions: [{ name: 'zed', mechanism: 1 }], upsertions: [upsertion('amy', 'a'), upsertion('zed', 'z')] });
    expect(res.results.map((r: any) => [r.user, r.errorCode])).toEqual([
      ['amy', ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
      ['zed', ErrorCode.CLUSTER_AUTHORIZATION_FAILED],
    ]);
    expect(res.results[0].errorMessage).toMatch(/^Request\(apiKey=51, .*principal=User:ANONYMOUS, .*\) is not authorized\.$/);
    expect(secured.server.metadata.scramCredential('amy', 1)).toBeUndefined();
    expect(authorizer.asked).toEqual([expect.objectContaining({ operation: AclOperation.ALTER, resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster' })]);

    authorizer.allow(AclOperation.ALTER, ResourceType.CLUSTER);
    expect(results(await securedClient.call(ALTER, 0, { deletions: [], upsertions: [upsertion('amy', 'a')] }))).toEqual([['amy', 0, null]]);
    expect(secured.server.metadata.scramCredential('amy', 1)).toBeDefined();
  });

  test('DescribeUserScramCredentials needs DESCRIBE on the cluster: a top-level error and one result per named user, as Kafka builds them', async () => {
    authorizer.reset();
    const denied = await securedClient.call(DESCRIBE, 0, { users: [{ name: 'amy' }, { name: 'bob' }] });
    const failed = { user: '', errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, credentialInfos: [] };
    expect(denied).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, results: [failed, failed] });
    expect((await securedClient.call(DESCRIBE, 0, { users: null })).results).toEqual([]);
    authorizer.allow(AclOperation.DESCRIBE, ResourceType.CLUSTER);
    expect((await securedClient.call(DESCRIBE, 0, { users: [{ name: 'amy' }] })).results).toEqual([{ user: 'amy', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }] }]);
  });
});
