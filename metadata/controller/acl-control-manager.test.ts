/**
 * AclControlManager and the ACL half of the metadata image: Kafka's validateNewAcl and
 * validateFilter table with its messages, de-duplication against existing ACLs and within a
 * request, fresh unique Uuids, the 10000-record bound for creations and deletions, delete filters
 * (LITERAL, PREFIXED, MATCH, ANY; an ACL matched twice removed once), the records round trip
 * through the metadata log codec, and ACLs surviving a controller restart on a real metadata log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import { isUuid } from '../../protocol/primitives/uuid';
import { MetadataCache } from '../metadata-cache';
import { MetadataLogStore, decodeMetadataRecord, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';
import { AclOperation as Op, AclPermissionType as Perm, PatternType as Pat, ResourceType as Res, type AclBinding, type AclBindingFilter } from '../authorizer/authorizer';
import { ANY_FILTER } from '../authorizer/acl';
import { testController } from '../testing/test-controller';
import { AclControlManager, EXCESSIVE_BATCH_MESSAGE, MAX_RECORDS_PER_USER_OP } from './acl-control-manager';

const acl = (over: Partial<AclBinding> = {}): AclBinding => ({
  resourceType: Res.TOPIC,
  resourceName: 'foo',
  patternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: Op.READ,
  permissionType: Perm.ALLOW,
  ...over,
});
const filter = (over: Partial<AclBindingFilter> = {}): AclBindingFilter => ({ ...ANY_FILTER, ...over });
const OK = { errorCode: ErrorCode.NONE, errorMessage: null };
const invalid = (errorMessage: string) => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });

/** A manager over a real image: planned records are applied, as the Controller commits them. */
function harness(newId?: () => string) {
  const image = new MetadataCache('c');
  const m = new AclControlManager(newId);
  image.subscribeAcls((changes, snapshot) => m.replay(changes, snapshot));
  const apply = <T extends { records: MetadataRecord[] }>(out: T): T => {
    if (out.records.length > 0) image.apply(out.records);
    return out;
  };
  return { image, m, create: (bs: AclBinding[]) => apply(m.createAcls(bs)), del: (fs: AclBindingFilter[]) => apply(m.deleteAcls(fs)) };
}

describe('createAcls (validateNewAcl)', () => {
  test.each([
    ['resource type UNKNOWN', acl({ resourceType: Res.UNKNOWN }), invalid('Invalid resourceType UNKNOWN')],
    ['resource type ANY', acl({ resourceType: Res.ANY }), invalid('Invalid resourceType ANY')],
    ['an undefined resource type code reads as UNKNOWN', acl({ resourceType: 99 }), invalid('Invalid resourceType UNKNOWN')],
    ['pattern type ANY', acl({ patternType: Pat.ANY }), invalid('Invalid patternType ANY')],
    ['pattern type MATCH', acl({ patternType: Pat.MATCH }), invalid('Invalid patternType MATCH')],
    ['pattern type UNKNOWN', acl({ patternType: 7 }), invalid('Invalid patternType UNKNOWN')],
    ['operation ANY', acl({ operation: Op.ANY }), invalid('Invalid operation ANY')],
    ['operation UNKNOWN', acl({ operation: -3 }), invalid('Invalid operation UNKNOWN')],
    ['permission ANY', acl({ permissionType: Perm.ANY }), invalid('Invalid permissionType ANY')],
    ['permission UNKNOWN', acl({ permissionType: 4 }), invalid('Invalid permissionType UNKNOWN')],
    ['empty name', acl({ resourceName: '' }), invalid('Resource name should not be empty')],
    ['the first problem wins', acl({ resourceType: Res.ANY, resourceName: '' }), invalid('Invalid resourceType ANY')],
    ['a LITERAL topic', acl(), OK],
    ['a PREFIXED group DENY', acl({ resourceType: Res.GROUP, patternType: Pat.PREFIXED, permissionType: Perm.DENY }), OK],
    ['ALL on the cluster', acl({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', operation: Op.ALL }), OK],
    ['TWO_PHASE_COMMIT on a transactional id', acl({ resourceType: Res.TRANSACTIONAL_ID, operation: Op.TWO_PHASE_COMMIT }), OK],
    ['CREATE_TOKENS on a user', acl({ resourceType: Res.USER, resourceName: 'User:bob', operation: Op.CREATE_TOKENS }), OK],
    ['a delegation token', acl({ resourceType: Res.DELEGATION_TOKEN, resourceName: 'token', operation: Op.DESCRIBE }), OK],
    // Kafka's controller does not check principals or hosts.
    ['a principal without a type', acl({ principal: 'alice' }), OK],
  ])('%s', (_name, binding, expected) => {
    const { m } = harness();
    const out = m.createAcls([binding]);
    expect(out.results).toEqual([expected]);
    expect(out.records).toHaveLength(expected.errorCode === ErrorCode.NONE ? 1 : 0);
  });

  test('records carry a fresh Uuid and the binding; existing ACLs and repeats in a request succeed without records', () => {
    const { image, create } = harness();
    const first = create([acl(), acl({ operation: Op.WRITE }), acl()]);
    expect(first.results).toEqual([OK, OK, OK]);
    expect(first.records).toHaveLength(2);
    const ids = first.records.map((r) => (r.data as { id: string }).id);
    expect(ids.every(isUuid)).toBe(true);
    expect(new Set(ids).size).toBe(2);
    expect(first.records[0]).toEqual({ type: 'AccessControlEntryRecord', data: { id: ids[0], ...acl() } });
    expect(image.aclCount).toBe(2);
    const again = create([acl({ operation: Op.WRITE }), acl({ host: '10.0.0.1' }), acl({ resourceType: Res.ANY })]);
    expect(again.results).toEqual([OK, OK, invalid('Invalid resourceType ANY')]);
    expect(again.records.map((r) => (r.data as AclBinding).host)).toEqual(['10.0.0.1']);
    expect(image.aclCount).toBe(3);
  });

  test('a Uuid already in use is never handed out again (newAclId)', () => {
    const queue = ['AAAAAAAAAAAAAAAAAAAAAQ', 'AAAAAAAAAAAAAAAAAAAAAQ', 'AAAAAAAAAAAAAAAAAAAAAg', 'AAAAAAAAAAAAAAAAAAAAAg', 'AAAAAAAAAAAAAAAAAAAAAw'];
    const { create } = harness(() => queue.shift()!);
    expect(create([acl()]).records.map((r) => (r.data as { id: string }).id)).toEqual(['AAAAAAAAAAAAAAAAAAAAAQ']);
    // The next candidate is taken by the image, then by this very request.
    expect(create([acl({ operation: Op.WRITE }), acl({ operation: Op.ALTER })]).records.map((r) => (r.data as { id: string }).id)).toEqual([
      'AAAAAAAAAAAAAAAAAAAAAg',
      'AAAAAAAAAAAAAAAAAAAAAw',
    ]);
  });

  test(`at most ${MAX_RECORDS_PER_USER_OP} new ACLs per request: more fail every binding with POLICY_VIOLATION and write nothing`, () => {
    const { m, create } = harness();
    const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => acl({ resourceName: `${prefix}${i}` }));
    const ok = create(many(MAX_RECORDS_PER_USER_OP, 'a'));
    expect(ok.records).toHaveLength(MAX_RECORDS_PER_USER_OP);
    // Existing ACLs and invalid bindings do not count; one more new one is too many.
    const tooMany = create([...many(MAX_RECORDS_PER_USER_OP, 'a'), acl({ resourceName: '' }), ...many(MAX_RECORDS_PER_USER_OP + 1, 'b')]);
    expect(tooMany.records).toEqual([]);
    expect(new Set(tooMany.results.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE })]));
    expect(tooMany.results).toHaveLength(2 * MAX_RECORDS_PER_USER_OP + 2);
    expect(m.aclCount).toBe(MAX_RECORDS_PER_USER_OP);
  });
});

describe('deleteAcls', () => {
  const seeded = () => {
    const h = harness();
    h.create([
      acl({ resourceName: 'foo-1' }),
      acl({ resourceName: 'foo-1', host: '192.168.0.1', operation: Op.WRITE }),
      acl({ resourceName: 'bar-2', operation: Op.DESCRIBE }),
      acl({ resourceName: 'bar-', patternType: Pat.PREFIXED, principal: 'User:*' }),
      acl({ resourceType: Res.GROUP, resourceName: '*', principal: 'User:bob' }),
    ]);
    return h;
  };
  const names = (r: { matchingAcls: { acl: AclBinding }[] }) => r.matchingAcls.map((m) => `${m.acl.resourceType}:${m.acl.resourceName}:${m.acl.patternType}:${m.acl.operation}`);

  test.each([
    ['resource type UNKNOWN', filter({ resourceType: Res.UNKNOWN }), 'Unknown patternFilter.'],
    ['an undefined resource type code', filter({ resourceType: 42 }), 'Unknown patternFilter.'],
    ['pattern type UNKNOWN', filter({ patternType: Pat.UNKNOWN }), 'Unknown patternFilter.'],
    ['operation UNKNOWN', filter({ operation: 99 }), 'Unknown entryFilter.'],
    ['permission UNKNOWN', filter({ permissionType: Perm.UNKNOWN }), 'Unknown entryFilter.'],
  ])('validateFilter: %s', (_n, f, message) => {
    const { del, image } = seeded();
    expect(del([f]).results).toEqual([{ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: message, matchingAcls: [] }]);
    expect(image.aclCount).toBe(5);
  });

  test('filters match as Kafka matches; an ACL two filters match is listed by both and removed once (testAclsFilter)', () => {
    const { del, image } = seeded();
    const out = del([
      filter({ resourceName: 'bar-2', patternType: Pat.MATCH }),
      filter({ resourceType: Res.TOPIC, resourceName: 'foo-1', patternType: Pat.LITERAL, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: Perm.ALLOW }),
      filter({ resourceType: Res.TOPIC, resourceName: 'bar-2', patternType: Pat.LITERAL }),
      filter({ resourceType: Res.TOPIC, resourceName: 'baz', patternType: Pat.ANY }),
    ]);
    expect(out.results.map((r) => r.errorCode)).toEqual([0, 0, 0, 0]);
    // MATCH on any resource type also finds the group wildcard.
    expect(out.results.map(names)).toEqual([['2:bar-2:3:8', '2:bar-:4:3', '3:*:3:3'], ['2:foo-1:3:3'], ['2:bar-2:3:8'], []]);
    expect(out.records).toHaveLength(4);
    expect([...image.acls().values()].map((a) => `${a.resourceName}:${a.operation}`)).toEqual(['foo-1:4']);
    // Everything else, by ANY.
    const rest = del([ANY_FILTER]);
    expect(rest.results[0].matchingAcls).toHaveLength(1);
    expect(image.aclCount).toBe(0);
    expect(del([ANY_FILTER]).results).toEqual([{ errorCode: 0, errorMessage: null, matchingAcls: [] }]);
  });

  test('MATCH finds the LITERAL wildcard; PREFIXED filters are exact names', () => {
    const { del } = seeded();
    const out = del([filter({ resourceType: Res.GROUP, resourceName: 'any-group', patternType: Pat.MATCH }), filter({ resourceName: 'bar', patternType: Pat.PREFIXED })]);
    expect(out.results.map(names)).toEqual([['3:*:3:3'], []]);
  });

  test(`removing more than ${MAX_RECORDS_PER_USER_OP} ACLs fails every filter with UNKNOWN_SERVER_ERROR and removes nothing`, () => {
    const { create, del, image } = harness();
    create(Array.from({ length: MAX_RECORDS_PER_USER_OP }, (_, i) => acl({ resourceName: `t${i}` })));
    create([acl({ resourceType: Res.GROUP, resourceName: 'g' })]);
    const out = del([filter({ resourceType: Res.GROUP }), filter({ resourceType: Res.TOPIC })]);
    expect(out.records).toEqual([]);
    expect(out.results).toEqual([
      { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, matchingAcls: [] },
      { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, matchingAcls: [] },
    ]);
    expect(image.aclCount).toBe(MAX_RECORDS_PER_USER_OP + 1);
    // Exactly the bound is fine.
    const exact = del([filter({ resourceType: Res.TOPIC })]);
    expect(exact.results[0].matchingAcls).toHaveLength(MAX_RECORDS_PER_USER_OP);
    expect(image.aclCount).toBe(1);
  });
});

describe('records, the Controller and restarts', () => {
  test('AccessControlEntryRecord and RemoveAccessControlEntryRecord round-trip through the metadata log codec (types 18 and 19)', () => {
    const add: MetadataRecord = { type: 'AccessControlEntryRecord', data: { id: 'AAAAAAAAAAAAAAAAAAAAAQ', ...acl({ patternType: Pat.PREFIXED, host: '10.1.2.3' }) } };
    const remove: MetadataRecord = { type: 'RemoveAccessControlEntryRecord', data: { id: 'AAAAAAAAAAAAAAAAAAAAAQ' } };
    for (const r of [add, remove]) {
      const buf = encodeMetadataRecord(r);
      expect(buf[1]).toBe(r.type === 'AccessControlEntryRecord' ? 18 : 19);
      expect(decodeMetadataRecord(buf)).toEqual(r);
    }
  });

  test('the Controller commits one batch per request; the image and a restarted controller have the ACLs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-acl-'));
    try {
      const c = testController(new MetadataLogStore(dir));
      const before = c.lastCommittedOffset;
      expect(await c.createAcls([acl(), acl({ operation: Op.WRITE }), acl({ resourceName: '' })])).toEqual([OK, OK, invalid('Resource name should not be empty')]);
      expect(c.lastCommittedOffset).toBe(before + 2n);
      expect(await c.createAcls([acl()])).toEqual([OK]);
      expect(c.lastCommittedOffset).toBe(before + 2n);
      const deleted = await c.deleteAcls([filter({ operation: Op.WRITE })]);
      expect(deleted[0].matchingAcls.map((m) => m.acl)).toEqual([acl({ operation: Op.WRITE })]);
      expect([...c.image.acls().values()]).toEqual([acl()]);
      await c.close();

      const again = testController(new MetadataLogStore(dir));
      expect([...again.image.acls().values()]).toEqual([acl()]);
      // The restarted controller's manager knows the ACL: creating it again writes nothing.
      const offset = again.lastCommittedOffset;
      expect(await again.createAcls([acl()])).toEqual([OK]);
      expect(again.lastCommittedOffset).toBe(offset);
      expect((await again.deleteAcls([ANY_FILTER]))[0].matchingAcls).toHaveLength(1);
      expect(again.image.aclCount).toBe(0);
      await again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
