/**
 * ScramControlManager and the SCRAM half of the image: Kafka's validation table
 * (AlterUserScramCredentialsRequestTest's cases: nothing, the same user twice, an empty user,
 * unknown mechanisms, too few / too many iterations, deleting what does not exist) with its exact
 * codes and messages, the records (StoredKey / ServerKey derived from the salted password), the
 * Controller committing them as one batch, the image's apply / remove / describe view and listener,
 * the log encoding (types 11 and 22), a restart replaying the log from disk, and bootstrap records
 * written only to a fresh log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import { MetadataCache, type ScramCredentialChange } from '../metadata-cache';
import { InMemoryMetadataLog } from '../metadata-log';
import { MetadataLogStore, decodeMetadataBatches, encodeMetadataBatch, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord, UserScramCredentialRecordData } from '../metadata-records';
import { followingImage, testController } from '../testing/test-controller';
import {
  SCRAM_SHA_256,
  SCRAM_SHA_512,
  ScramControlManager,
  clientKey,
  saltedPassword,
  scramCredentialRecord,
  scramMechanismByName,
  scramMechanismByType,
  serverKey,
  storedKey,
  type ScramCredentialDeletion,
  type ScramCredentialUpsertion,
} from './scram-control-manager';

const SALT = Buffer.from('salt');
const SALTED = Buffer.from('saltedPassword');
const del = (name: string, mechanism = 1): ScramCredentialDeletion => ({ name, mechanism });
const up = (name: string, mechanism = 1, iterations = 4096, saltedPassword = SALTED): ScramCredentialUpsertion => ({ name, mechanism, iterations, salt: SALT, saltedPassword });

/** A manager over a real image: planned records are applied, as the Controller commits them. */
function harness() {
  const image = new MetadataCache('c');
  const m = new ScramControlManager({ exists: (u, mech) => image.scramCredential(u, mech) !== undefined });
  const run = (deletions: ScramCredentialDeletion[], upsertions: ScramCredentialUpsertion[]) => {
    const out = m.alterCredentials(deletions, upsertions);
    if (out.records.length > 0) image.apply(out.records);
    return out;
  };
  return { image, run };
}

const errorsOf = (results: { user: string; errorCode: number; errorMessage: string | null }[]) => results.map((r) => [r.user, r.errorCode, r.errorMessage]);

describe('mechanisms', () => {
  test("Kafka's type bytes, names and iteration bounds", () => {
    expect([SCRAM_SHA_256, SCRAM_SHA_512].map((m) => [m.mechanismName, m.type, m.keyLength, m.minIterations, m.maxIterations])).toEqual([
      ['SCRAM-SHA-256', 1, 32, 4096, 16384],
      ['SCRAM-SHA-512', 2, 64, 4096, 16384],
    ]);
    expect(scramMechanismByType(0)).toBeUndefined();
    expect(scramMechanismByType(10)).toBeUndefined();
    expect(scramMechanismByName('SCRAM-SHA-1')).toBeUndefined();
  });

  test('RFC 7677: the salted password and keys of user/pencil', () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const salted = saltedPassword(SCRAM_SHA_256, 'pencil', salt, 4096);
    expect(salted.toString('hex')).toBe('c4a49510323ab4f952cac1fa99441939e78ea74d6be81ddf7096e87513dc615d');
    const rec = scramCredentialRecord(SCRAM_SHA_256, 'user', salt, salted, 4096);
    expect(rec.storedKey).toEqual(storedKey(SCRAM_SHA_256, clientKey(SCRAM_SHA_256, salted)));
    expect(rec.serverKey).toEqual(serverKey(SCRAM_SHA_256, salted));
    expect(rec.storedKey).toHaveLength(32);
  });
});

describe("Kafka's validation table", () => {
  test('nothing to alter: no records, no results', () => {
    expect(harness().run([], [])).toEqual({ records: [], results: [] });
  });

  test('the same user twice in one request: DUPLICATE_RESOURCE for it, nothing written for it', () => {
    const h = harness();
    expect(errorsOf(h.run([], [up('user1'), up('user2')]).results)).toEqual([
      ['user1', 0, null],
      ['user2', 0, null],
    ]);
    const dup = 'A user credential cannot be altered twice in the same request';
    for (const [deletions, upsertions] of [
      [[del('user1'), del('user1')], [up('user2'), up('user2')]],
      [[del('user1'), del('user2')], [up('user1'), up('user2')]],
      // Per user, whatever the mechanisms.
      [[del('user1', 1)], [up('user1', 2), up('user2', 1), up('user2', 2, 8192)]],
    ] as const) {
      const out = h.run([...deletions], [...upsertions]);
      expect(out.records).toEqual([]);
      expect(errorsOf(out.results)).toEqual([
        ['user1', ErrorCode.DUPLICATE_RESOURCE, dup],
        ['user2', ErrorCode.DUPLICATE_RESOURCE, dup],
      ]);
    }
    expect([h.image.scramCredential('user1', 1), h.image.scramCredential('user2', 1)].every((c) => c !== undefined)).toBe(true);
    // A third entry for a failed user changes nothing: still one result.
    expect(errorsOf(h.run([], [up('x'), up('x'), up('x')]).results)).toEqual([['x', ErrorCode.DUPLICATE_RESOURCE, dup]]);
  });

  test('an empty user name: UNACCEPTABLE_CREDENTIAL, one result', () => {
    const h = harness();
    const cases: [ScramCredentialDeletion[], ScramCredentialUpsertion[]][] = [
      [[del('')], []],
      [[], [up('')]],
      [[del(''), del('')], [up('')]],
    ];
    for (const [d, u] of cases) {
      expect(errorsOf(h.run(d, u).results)).toEqual([['', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty']]);
    }
  });

  test('unknown mechanisms: UNSUPPORTED_SASL_MECHANISM; the first error of a user stands', () => {
    const out = harness().run([del('user1', 0), del('user1', 1), del('user2', 10)], [up('user4', 0, 8192), up('user4', 1, 8192), up('user5', 10, 8192), up('user6', 0, 8192)]);
    expect(out.records).toEqual([]);
    expect(errorsOf(out.results)).toEqual(['user1', 'user2', 'user4', 'user5', 'user6'].map((u) => [u, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism']));
  });

  test('too few and too many iterations: UNACCEPTABLE_CREDENTIAL', () => {
    const h = harness();
    expect(errorsOf(h.run([], [up('a', 1, 1), up('b', 2, 4095), up('c', 1, 2147483647), up('d', 2, 16385), up('e', 1, 4096), up('f', 2, 16384)]).results)).toEqual([
      ['e', 0, null],
      ['f', 0, null],
      ['a', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
      ['b', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
      ['c', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations'],
      ['d', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations'],
    ]);
  });

  test('deleting a credential that does not exist: RESOURCE_NOT_FOUND (also another mechanism of an existing user)', () => {
    const h = harness();
    h.run([], [up('alice', 1)]);
    expect(errorsOf(h.run([del('bob'), del('alice', 2)], []).results)).toEqual([
      ['bob', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
      ['alice', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
    ]);
    // The failed deletion takes the user: a later upsertion of it in the same request is not done.
    const out = h.run([del('bob')], [up('bob')]);
    expect(out.records).toEqual([]);
    expect(errorsOf(out.results)).toEqual([['bob', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']]);
  });

  test('an empty salted password fails as in Kafka (UNKNOWN_SERVER_ERROR, no message)', () => {
    const out = harness().run([], [up('a', 1, 4096, Buffer.alloc(0)), up('b')]);
    expect(out.records.map((r) => (r.data as { name: string }).name)).toEqual(['b']);
    expect(errorsOf(out.results)).toEqual([
      ['b', 0, null],
      ['a', ErrorCode.UNKNOWN_SERVER_ERROR, null],
    ]);
  });

  test('good users are written beside failed ones; deletions, then upsertions, then errors', () => {
    const h = harness();
    h.run([], [up('old', 2)]);
    const out = h.run([del('old', 2), del('missing')], [up('new', 1, 8192), up('', 1)]);
    expect(errorsOf(out.results)).toEqual([
      ['old', 0, null],
      ['new', 0, null],
      ['missing', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
      ['', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'],
    ]);
    expect(out.records).toEqual([
      { type: 'RemoveUserScramCredentialRecord', data: { name: 'old', mechanism: 2 } },
      {
        type: 'UserScramCredentialRecord',
        data: { name: 'new', mechanism: 1, salt: SALT, storedKey: storedKey(SCRAM_SHA_256, clientKey(SCRAM_SHA_256, SALTED)), serverKey: serverKey(SCRAM_SHA_256, SALTED), iterations: 8192 },
      },
    ]);
    expect(h.image.scramCredential('old', 2)).toBeUndefined();
    expect(h.image.scramCredential('new', 1)?.iterations).toBe(8192);
  });
});

describe('the image (MetadataCache)', () => {
  const cred = (name: string, mechanism: number, iterations = 4096): MetadataRecord => ({
    type: 'UserScramCredentialRecord',
    data: scramCredentialRecord(mechanism === 1 ? SCRAM_SHA_256 : SCRAM_SHA_512, name, SALT, SALTED, iterations),
  });
  const remove = (name: string, mechanism: number): MetadataRecord => ({ type: 'RemoveUserScramCredentialRecord', data: { name, mechanism } });

  test('set, replace, remove; the describe view has mechanisms and iterations only; listeners see each batch', () => {
    const image = new MetadataCache('c');
    const seen: ScramCredentialChange[][] = [];
    const unsubscribe = image.subscribeScramCredentials((c) => seen.push([...c]));
    image.apply([cred('alice', 2, 8192), cred('alice', 1), cred('bob', 2)], 2n);
    expect(image.scramCredentialInfos()).toEqual(
      new Map([
        ['alice', [{ mechanism: 1, iterations: 4096 }, { mechanism: 2, iterations: 8192 }]],
        ['bob', [{ mechanism: 2, iterations: 4096 }]],
      ]),
    );
    const stored = image.scramCredential('alice', 1)!;
    expect(stored).toEqual({ salt: SALT, storedKey: (cred('alice', 1).data as UserScramCredentialRecordData).storedKey, serverKey: serverKey(SCRAM_SHA_256, SALTED), iterations: 4096 });
    expect(seen).toHaveLength(1);
    expect(seen[0].map((c) => [c.user, c.mechanism, c.credential?.iterations])).toEqual([
      ['alice', 2, 8192],
      ['alice', 1, 4096],
      ['bob', 2, 4096],
    ]);

    image.apply([cred('alice', 2, 12000), remove('bob', 2), remove('nobody', 1)], 5n);
    expect(image.scramCredential('alice', 2)?.iterations).toBe(12000);
    expect(image.scramCredential('bob', 2)).toBeUndefined();
    expect([...image.scramCredentialInfos().keys()]).toEqual(['alice']);
    // A removal of what is not there is no change.
    expect(seen[1].map((c) => [c.user, c.mechanism, c.credential === null])).toEqual([
      ['alice', 2, false],
      ['bob', 2, true],
    ]);

    image.apply([{ type: 'TopicRecord', data: { name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' } }], 6n);
    expect(seen).toHaveLength(2);
    unsubscribe();
    image.apply([remove('alice', 1), remove('alice', 2)], 8n);
    expect(seen).toHaveLength(2);
    expect(image.scramCredentialInfos()).toEqual(new Map());
  });

  test('the image keeps its own copy of the bytes (records decoded from a fetched chunk are views)', () => {
    const image = new MetadataCache('c');
    const r = cred('alice', 1);
    image.apply([r]);
    (r.data as UserScramCredentialRecordData).salt.fill(0);
    expect(image.scramCredential('alice', 1)!.salt).toEqual(SALT);
  });

  test('both records round-trip through the metadata log encoding (types 11 and 22)', () => {
    const records = [cred('alice', 2, 8192), remove('bob', 1)];
    expect([...encodeMetadataRecord(records[0]).subarray(0, 3)]).toEqual([1, 11, 0]);
    expect([...encodeMetadataRecord(records[1]).subarray(0, 3)]).toEqual([1, 22, 0]);
    const [batch] = decodeMetadataBatches(encodeMetadataBatch(records, 3n));
    expect(batch.lastOffset).toBe(4n);
    const strip = (r: MetadataRecord) => ({ type: r.type, data: { ...(r.data as object), _unknownTaggedFields: undefined } });
    expect(batch.records.map(strip)).toEqual(records.map(strip));
  });
});

describe('through the Controller', () => {
  test('one batch per request; brokers apply it; a restarted controller replays it from the log on disk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-scram-'));
    try {
      const c = testController(new MetadataLogStore(dir));
      const { image: broker, batches } = followingImage(c);
      const before = batches.length;
      const results = await c.alterUserScramCredentials([], [up('alice', 1), up('alice2', 2, 8192), up('', 1)]);
      expect(errorsOf(results)).toEqual([
        ['alice', 0, null],
        ['alice2', 0, null],
        ['', ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'],
      ]);
      expect(batches.length - before).toBe(1);
      expect(broker.scramCredentialInfos()).toEqual(c.image.scramCredentialInfos());
      // Nothing valid: nothing written.
      expect(errorsOf(await c.alterUserScramCredentials([del('ghost')], []))).toEqual([['ghost', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist']]);
      expect(batches.length - before).toBe(1);
      expect(errorsOf(await c.alterUserScramCredentials([del('alice2', 2)], []))).toEqual([['alice2', 0, null]]);
      await c.close();

      const again = testController(new MetadataLogStore(dir));
      expect(again.image.scramCredentialInfos()).toEqual(new Map([['alice', [{ mechanism: 1, iterations: 4096 }]]]));
      expect(again.image.scramCredential('alice', 1)?.storedKey).toEqual(storedKey(SCRAM_SHA_256, clientKey(SCRAM_SHA_256, SALTED)));
      await again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bootstrap records go into a fresh log only', async () => {
    const log = new InMemoryMetadataLog();
    const boot: MetadataRecord[] = [{ type: 'UserScramCredentialRecord', data: scramCredentialRecord(SCRAM_SHA_512, 'admin', SALT, SALTED, 4096) }];
    const c = testController(log, { bootstrapRecords: boot });
    // The finalized features come first, then the bootstrap records, in one batch.
    const features: MetadataRecord[] = [
      { type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: 25 } },
      { type: 'FeatureLevelRecord', data: { name: 'transaction.version', featureLevel: 2 } },
      { type: 'FeatureLevelRecord', data: { name: 'group.version', featureLevel: 1 } },
    ];
    expect(log.readAll()).toEqual([{ records: [...features, ...boot], lastOffset: 3n }]);
    expect(c.image.scramCredential('admin', 2)?.iterations).toBe(4096);
    await c.close();
    const other: MetadataRecord[] = [{ type: 'UserScramCredentialRecord', data: scramCredentialRecord(SCRAM_SHA_512, 'other', SALT, SALTED, 4096) }];
    const again = testController(log, { bootstrapRecords: other });
    expect(log.logEndOffset).toBe(4n);
    expect(again.image.scramCredential('other', 2)).toBeUndefined();
    expect(again.image.scramCredential('admin', 2)).toBeDefined();
    await again.close();
  });
});
