/**
 * StandardAuthorizer against Kafka's StandardAuthorizerTest and AuthorizerTest / BaseAuthorizerTest
 * cases (the KRaft runs of the old AclAuthorizer suite): configuration parsing, the matching table
 * (LITERAL vs PREFIXED vs the `*` wildcard, `User:*`, hosts), DENY over ALLOW, implied operations,
 * super users, allow.everyone.if.no.acl.found, the initial load, the audit log lines, ACL listing
 * with filters, authorizeByResourceType, and following a MetadataCache's ACL records.
 */
import { CapturingLogger } from '../../common/testing/mock-time';
import { userPrincipal, type KafkaPrincipal } from '../../common/kafka-principal';
import { ApiKey } from '../../protocol/generated';
import { MetadataCache } from '../metadata-cache';
import {
  AclOperation as Op,
  AclPermissionType as Perm,
  PatternType as Pat,
  ResourceType as Res,
  type AclBinding,
  type AclBindingFilter,
  type Action,
  type AuthorizableRequestContext,
} from './authorizer';
import { ANY_FILTER, aclToString, bindingToFilter, compareAcls } from './acl';
import {
  ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG,
  AuthorizerNotReadyError,
  StandardAuthorizer,
  SUPER_USERS_CONFIG,
  findResult,
  getConfiguredSuperUsers,
  getDefaultResult,
} from './standard-authorizer';

const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS, ALL } = Op;
const { ALLOW, DENY } = Perm;
const { LITERAL, PREFIXED } = Pat;
const { TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID } = Res;
const LOCALHOST = '127.0.0.1';

const acl = (resourceType: number, resourceName: string, patternType: number, principal: string, host: string, operation: number, permissionType: number): AclBinding => ({
  resourceType,
  resourceName,
  patternType,
  principal,
  host,
  operation,
  permissionType,
});

const ctx = (principal: KafkaPrincipal | string, clientAddress = LOCALHOST, requestType: number = ApiKey.Fetch): AuthorizableRequestContext => ({
  principal: typeof principal === 'string' ? userPrincipal(principal) : principal,
  clientAddress,
  listenerName: 'PLAINTEXT',
  securityProtocol: 'PLAINTEXT',
  clientId: 'test',
  requestType,
  requestVersion: 17,
  correlationId: 1,
});

const action = (operation: number, resourceType: number, resourceName: string, extra: Partial<Action> = {}): Action =>
  ({ operation, resourceType, resourceName, ...extra }) as Action;

let nextId = 0;
function withAcls(authorizer: StandardAuthorizer, ...acls: AclBinding[]): string[] {
  return acls.map((a) => {
    const id = `acl-${nextId++}`;
    authorizer.addAcl(id, a);
    return id;
  });
}

/** Kafka's createAndInitializeStandardAuthorizer: super user User:superman, loaded. */
function loaded(opts: ConstructorParameters<typeof StandardAuthorizer>[0] = {}): StandardAuthorizer {
  const a = new StandardAuthorizer({ superUsers: ['User:superman'], ...opts });
  a.completeInitialLoad();
  return a;
}

/** AuthorizerTest's setup: super users superuser1 and superuser2, loaded. */
function authorizerTestAuthorizer(originals: Record<string, string> = {}): StandardAuthorizer {
  const a = StandardAuthorizer.configure(new Map(Object.entries({ [SUPER_USERS_CONFIG]: 'User:superuser1; User:superuser2', ...originals })));
  a.completeInitialLoad();
  return a;
}

const allowed = (a: StandardAuthorizer, c: AuthorizableRequestContext, op: number, type: number, name: string): boolean =>
  a.authorize(c, [action(op, type, name, { logIfAllowed: true, logIfDenied: true })])[0] === 'ALLOWED';

const byType = (a: StandardAuthorizer, c: AuthorizableRequestContext, op: number, type: number): boolean =>
  a.authorizeByResourceType(c, op as never, type as never) === 'ALLOWED';

describe('configuration', () => {
  test('super.users: semicolons, whitespace, and a principal without a type refused (testGetConfiguredSuperUsers)', () => {
    expect(getConfiguredSuperUsers(undefined)).toEqual(new Set());
    expect(getConfiguredSuperUsers(' ')).toEqual(new Set());
    expect(getConfiguredSuperUsers('User:bob;User:alice ')).toEqual(new Set(['User:bob', 'User:alice']));
    expect(getConfiguredSuperUsers(';  User:bob  ;  User:alice ')).toEqual(new Set(['User:bob', 'User:alice']));
    expect(() => getConfiguredSuperUsers('bob;:alice')).toThrow('expected a string in format principalType:principalName but got bob');
  });

  test('allow.everyone.if.no.acl.found (testGetDefaultResult, testAclConfigWithWhitespace)', () => {
    expect(getDefaultResult(undefined)).toBe('DENIED');
    expect(getDefaultResult('true')).toBe('ALLOWED');
    expect(getDefaultResult(' true ')).toBe('ALLOWED');
    expect(getDefaultResult('TRUE')).toBe('ALLOWED');
    expect(getDefaultResult('false')).toBe('DENIED');
    expect(getDefaultResult('yes')).toBe('DENIED');
  });

  test('configure reads both from the original config (testConfigure)', () => {
    const a = StandardAuthorizer.configure(new Map([[SUPER_USERS_CONFIG, 'User:alice;User:chris'], [ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, 'true']]));
    a.completeInitialLoad();
    expect(allowed(a, ctx('alice'), WRITE, TOPIC, 't')).toBe(true);
    expect(allowed(a, ctx('chris'), WRITE, TOPIC, 't')).toBe(true);
    // Default ALLOWED: a resource without ACLs is open to anyone.
    expect(allowed(a, ctx('bob'), WRITE, TOPIC, 't')).toBe(true);
  });
});

describe('initial load', () => {
  test('before completeInitialLoad only super users are authorized; others get AuthorizerNotReadyError for the whole call', () => {
    const a = new StandardAuthorizer({ superUsers: ['User:superman'] });
    expect(() => a.authorize(ctx('bob'), [action(READ, TOPIC, 'green1'), action(READ, TOPIC, 'green2')])).toThrow(AuthorizerNotReadyError);
    expect(a.authorize(ctx('superman'), [action(READ, TOPIC, 'green1'), action(WRITE, GROUP, 'wheel')])).toEqual(['ALLOWED', 'ALLOWED']);
  });

  test('initialLoad() resolves on completion, rejects on a failed load (testCompleteInitialLoad, ...WithException)', async () => {
    const a = new StandardAuthorizer();
    const waiting = a.initialLoad();
    expect(a.isLoaded).toBe(false);
    a.completeInitialLoad();
    await expect(waiting).resolves.toBeUndefined();
    expect(a.isLoaded).toBe(true);
    const b = new StandardAuthorizer();
    const failing = b.initialLoad();
    b.completeInitialLoad(new Error('timed out'));
    await expect(failing).rejects.toThrow('timed out');
    expect(b.isLoaded).toBe(false);
  });
});

describe('allow.everyone.if.no.acl.found', () => {
  test('enabled: a resource with ACLs for someone else is denied, one without ACLs allowed', () => {
    const a = loaded({ superUsers: ['User:alice', 'User:chris'], defaultResult: 'ALLOWED' });
    withAcls(a, acl(TOPIC, 'topic1', LITERAL, 'User:Alice', '*', READ, ALLOW));
    expect(a.authorize(ctx('Bob'), [action(READ, TOPIC, 'topic1')])).toEqual(['DENIED']);
    expect(a.authorize(ctx('Bob'), [action(READ, TOPIC, 'topic2')])).toEqual(['ALLOWED']);
  });

  test('disabled (the default): both denied', () => {
    const a = loaded({ superUsers: ['User:alice', 'User:chris'], defaultResult: 'DENIED' });
    withAcls(a, acl(TOPIC, 'topic1', LITERAL, 'User:Alice', '*', READ, ALLOW));
    expect(a.authorize(ctx('Bob'), [action(READ, TOPIC, 'topic1')])).toEqual(['DENIED']);
    expect(a.authorize(ctx('Bob'), [action(READ, TOPIC, 'topic2')])).toEqual(['DENIED']);
  });

  test('no ACLs at all: denied by default, allowed with the override (testNoAclFound, testNoAclFoundOverride)', () => {
    expect(allowed(authorizerTestAuthorizer(), ctx('alice', '192.168.0.1'), READ, TOPIC, 'foo')).toBe(false);
    expect(allowed(authorizerTestAuthorizer({ [ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG]: ' true ' }), ctx('alice', '192.168.0.1'), READ, TOPIC, 'foo')).toBe(true);
  });
});

describe('findResult', () => {
  const fooAcl = (op: number, perm: number) => acl(TOPIC, 'foo_', PREFIXED, 'User:bob', '*', op, perm);
  const bob = { principalType: 'User', name: 'bob', host: LOCALHOST };
  const alice = { principalType: 'User', name: 'alice', host: LOCALHOST };

  test('implication: READ, WRITE, DELETE, ALTER (and DESCRIBE) ALLOW imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; DENY implies nothing', () => {
    for (const op of [DESCRIBE, READ, WRITE, DELETE, ALTER]) expect(findResult(DESCRIBE, bob, fooAcl(op, ALLOW))).toBe('ALLOWED');
    expect(findResult(DESCRIBE, bob, fooAcl(CREATE, ALLOW))).toBeNull();
    for (const op of [READ, WRITE, DELETE, ALTER]) expect(findResult(DESCRIBE, bob, fooAcl(op, DENY))).toBeNull();
    expect(findResult(DESCRIBE, bob, fooAcl(DESCRIBE, DENY))).toBe('DENIED');
    for (const op of [DESCRIBE_CONFIGS, ALTER_CONFIGS]) expect(findResult(DESCRIBE_CONFIGS, bob, fooAcl(op, ALLOW))).toBe('ALLOWED');
    expect(findResult(DESCRIBE_CONFIGS, bob, fooAcl(ALTER_CONFIGS, DENY))).toBeNull();
    expect(findResult(ALTER_CONFIGS, bob, fooAcl(ALTER_CONFIGS, DENY))).toBe('DENIED');
  });

  test('principal matching: exact (type and name) or User:*', () => {
    expect(findResult(READ, bob, fooAcl(READ, ALLOW))).toBe('ALLOWED');
    expect(findResult(READ, alice, fooAcl(READ, ALLOW))).toBeNull();
    expect(findResult(READ, alice, acl(GROUP, 'bar', LITERAL, 'User:*', '*', READ, DENY))).toBe('DENIED');
    expect(findResult(READ, { ...bob, principalType: 'Group' }, fooAcl(READ, ALLOW))).toBeNull();
    // Group:* is not a wildcard; an ACL principal without ':' matches nobody.
    expect(findResult(READ, bob, acl(TOPIC, 'x', LITERAL, 'Group:*', '*', READ, ALLOW))).toBeNull();
    expect(findResult(READ, bob, acl(TOPIC, 'x', LITERAL, 'bob', '*', READ, ALLOW))).toBeNull();
  });
});

describe('authorize (StandardAuthorizerTest)', () => {
  test('simple authorizations', () => {
    const a = loaded();
    withAcls(
      a,
      acl(TOPIC, 'foo_', PREFIXED, 'User:bob', '*', READ, ALLOW),
      acl(TOPIC, 'foo_', PREFIXED, 'User:bob', '*', WRITE, ALLOW),
      acl(GROUP, 'bar', LITERAL, 'User:*', '*', DESCRIBE_CONFIGS, ALLOW),
      acl(GROUP, 'bar', LITERAL, 'User:*', '*', ALTER_CONFIGS, ALLOW),
    );
    expect(a.authorize(ctx('bob'), [action(READ, TOPIC, 'foo_')])).toEqual(['ALLOWED']);
    expect(a.authorize(ctx('fred'), [action(ALTER_CONFIGS, GROUP, 'bar')])).toEqual(['ALLOWED']);
  });

  test('DENY ALL takes precedence (testDenyPrecedenceWithOperationAll)', () => {
    const a = loaded();
    withAcls(
      a,
      acl(TOPIC, 'foo', LITERAL, 'User:alice', '*', ALL, DENY),
      acl(TOPIC, 'foo', PREFIXED, 'User:alice', '*', READ, ALLOW),
      acl(TOPIC, 'foo', LITERAL, 'User:*', '*', ALL, DENY),
      acl(TOPIC, 'foo', PREFIXED, 'User:*', '*', DESCRIBE, ALLOW),
    );
    expect(a.authorize(ctx('alice'), [action(WRITE, TOPIC, 'foo'), action(READ, TOPIC, 'foo'), action(DESCRIBE, TOPIC, 'foo'), action(READ, TOPIC, 'foobar')])).toEqual([
      'DENIED',
      'DENIED',
      'DENIED',
      'ALLOWED',
    ]);
    expect(
      a.authorize(ctx('bob'), [action(DESCRIBE, TOPIC, 'foo'), action(READ, TOPIC, 'foo'), action(WRITE, TOPIC, 'foo'), action(DESCRIBE, TOPIC, 'foobaz'), action(READ, TOPIC, 'foobaz')]),
    ).toEqual(['DENIED', 'DENIED', 'DENIED', 'ALLOWED', 'DENIED']);
  });

  test('ALL ALLOW on LITERAL, PREFIXED and for User:* (testTopicAclWithOperationAll)', () => {
    const a = loaded();
    withAcls(a, acl(TOPIC, 'foo', LITERAL, 'User:*', '*', ALL, ALLOW), acl(TOPIC, 'bar', PREFIXED, 'User:alice', '*', ALL, ALLOW), acl(TOPIC, 'baz', LITERAL, 'User:bob', '*', ALL, ALLOW));
    expect(a.authorize(ctx('alice'), [action(WRITE, TOPIC, 'foo'), action(DESCRIBE_CONFIGS, TOPIC, 'bar'), action(DESCRIBE, TOPIC, 'baz')])).toEqual(['ALLOWED', 'ALLOWED', 'DENIED']);
    expect(a.authorize(ctx('bob'), [action(WRITE, TOPIC, 'foo'), action(READ, TOPIC, 'bar'), action(DESCRIBE, TOPIC, 'baz')])).toEqual(['ALLOWED', 'DENIED', 'ALLOWED']);
    expect(a.authorize(ctx('malory'), [action(DESCRIBE, TOPIC, 'foo'), action(WRITE, TOPIC, 'bar'), action(READ, TOPIC, 'baz')])).toEqual(['ALLOWED', 'DENIED', 'DENIED']);
  });

  test('hosts: "*" or the exact address (testHostAddressAclValidation)', () => {
    const host1 = '192.168.1.1';
    const host2 = '192.168.1.2';
    const a = loaded();
    withAcls(
      a,
      acl(TOPIC, 'foo', LITERAL, 'User:alice', host1, READ, DENY),
      acl(TOPIC, 'foo', LITERAL, 'User:alice', '*', READ, ALLOW),
      acl(TOPIC, 'bar', LITERAL, 'User:bob', host2, READ, ALLOW),
      acl(TOPIC, 'bar', LITERAL, 'User:*', LOCALHOST, DESCRIBE, ALLOW),
    );
    const actions = [action(READ, TOPIC, 'foo'), action(READ, TOPIC, 'bar'), action(DESCRIBE, TOPIC, 'bar')];
    expect(a.authorize(ctx('alice', LOCALHOST), actions)).toEqual(['ALLOWED', 'DENIED', 'ALLOWED']);
    expect(a.authorize(ctx('alice', host1), actions)).toEqual(['DENIED', 'DENIED', 'DENIED']);
    expect(a.authorize(ctx('alice', host2), actions)).toEqual(['ALLOWED', 'DENIED', 'DENIED']);
    expect(a.authorize(ctx('bob', LOCALHOST), actions)).toEqual(['DENIED', 'DENIED', 'ALLOWED']);
    expect(a.authorize(ctx('bob', host1), actions)).toEqual(['DENIED', 'DENIED', 'DENIED']);
    expect(a.authorize(ctx('bob', host2), actions)).toEqual(['DENIED', 'ALLOWED', 'ALLOWED']);
  });

  const manyAcls = [
    acl(TOPIC, 'green2', LITERAL, 'User:*', '*', READ, ALLOW),
    acl(TOPIC, 'green', PREFIXED, 'User:bob', '*', READ, ALLOW),
    acl(TOPIC, 'betamax4', LITERAL, 'User:bob', '*', READ, ALLOW),
    acl(TOPIC, 'betamax', LITERAL, 'User:bob', '*', READ, ALLOW),
    acl(TOPIC, 'beta', PREFIXED, 'User:*', '*', READ, ALLOW),
    acl(TOPIC, 'alpha', PREFIXED, 'User:*', '*', READ, ALLOW),
    acl(TOPIC, 'alp', PREFIXED, 'User:bob', '*', READ, DENY),
    acl(GROUP, '*', LITERAL, 'User:bob', '*', WRITE, ALLOW),
    acl(GROUP, 'wheel', LITERAL, 'User:*', '*', WRITE, DENY),
  ];

  test('many ACLs: prefixes, literals, the group wildcard (testAuthorizationWithManyAcls)', () => {
    const a = loaded();
    withAcls(a, ...manyAcls);
    expect(a.authorize(ctx('bob'), [action(READ, TOPIC, 'green1'), action(WRITE, GROUP, 'wheel')])).toEqual(['ALLOWED', 'DENIED']);
    expect(a.authorize(ctx('bob'), [action(READ, TOPIC, 'alpha'), action(WRITE, GROUP, 'arbitrary'), action(READ, TOPIC, 'ala')])).toEqual(['DENIED', 'ALLOWED', 'DENIED']);
  });

  test('PREFIXED and LITERAL neighbours (testPrefixAcls)', () => {
    const a = loaded();
    withAcls(a, acl(TOPIC, 'fooa', PREFIXED, 'User:alice', '*', ALL, ALLOW), acl(TOPIC, 'foobar', LITERAL, 'User:bob', '*', ALL, ALLOW), acl(TOPIC, 'f', PREFIXED, 'User:bob', '*', ALL, ALLOW));
    expect(a.authorize(ctx('bob'), [action(WRITE, TOPIC, 'foobarr'), action(READ, TOPIC, 'goobar'), action(READ, TOPIC, 'fooa')])).toEqual(['ALLOWED', 'DENIED', 'ALLOWED']);
    expect(a.authorize(ctx('alice'), [action(DESCRIBE, TOPIC, 'fooa'), action(WRITE, TOPIC, 'bar'), action(READ, TOPIC, 'baz')])).toEqual(['ALLOWED', 'DENIED', 'DENIED']);
  });

  /** The audit log (at trace) once bob, from localhost, was decided READ on `topic` under manyAcls, with `expected`. */
  function auditOfRead(topic: string, flags: { logIfAllowed: boolean; logIfDenied: boolean }, expected: 'ALLOWED' | 'DENIED') {
    const audit = new CapturingLogger();
    audit.setLevel('trace');
    const a = loaded({ auditLogger: audit });
    withAcls(a, ...manyAcls);
    expect(a.authorize(ctx('bob', LOCALHOST), [action(READ, TOPIC, topic, { resourceReferenceCount: 1, ...flags })])).toEqual([expected]);
    return audit.lines;
  }

  test('the audit log: a denial at info (logIfDenied) or trace, with the DENY rule (testDenyAuditLogging)', () => {
    for (const logIfDenied of [true, false]) {
      expect(auditOfRead('alpha', { logIfAllowed: false, logIfDenied }, 'DENIED')).toEqual([
        {
          level: logIfDenied ? 'info' : 'trace',
          msg:
            'Principal = User:bob is Denied operation = READ from host = 127.0.0.1 on resource = Topic:LITERAL:alpha for request = Fetch ' +
            'with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=alp, patternType=PREFIXED, ' +
            'principal=User:bob, host=*, operation=READ, permissionType=DENY))',
        },
      ]);
    }
  });

  test('the audit log: an allowed action at debug (logIfAllowed) or trace, with the ALLOW rule (testAllowAuditLogging)', () => {
    for (const logIfAllowed of [true, false]) {
      expect(auditOfRead('green1', { logIfAllowed, logIfDenied: false }, 'ALLOWED')).toEqual([
        {
          level: logIfAllowed ? 'debug' : 'trace',
          msg:
            'Principal = User:bob is Allowed operation = READ from host = 127.0.0.1 on resource = Topic:LITERAL:green1 for request = Fetch ' +
            'with resourceRefCount = 1 based on rule MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=green, patternType=PREFIXED, ' +
            'principal=User:bob, host=*, operation=READ, permissionType=ALLOW))',
        },
      ]);
    }
  });

  test('the audit log names SuperUser, DefaultDeny / DefaultAllow, and logs nothing below its level', () => {
    const audit = new CapturingLogger();
    audit.setLevel('debug');
    const a = loaded({ auditLogger: audit });
    withAcls(a, acl(TRANSACTIONAL_ID, 'tx', LITERAL, 'User:other', '*', WRITE, ALLOW));
    a.authorize(ctx('superman', '10.0.0.1', ApiKey.Produce), [action(WRITE, TRANSACTIONAL_ID, 'tx', { resourceReferenceCount: 2 })]);
    a.authorize(ctx('bob'), [action(WRITE, TRANSACTIONAL_ID, 'tx')]);
    a.authorize(ctx('bob'), [action(WRITE, TRANSACTIONAL_ID, 'no-acls')]);
    a.authorize(ctx('bob'), [action(WRITE, TRANSACTIONAL_ID, 'quiet', { logIfDenied: false })]);
    expect(audit.lines.map((l) => [l.level, l.msg.replace(/^.* on resource = /, '')])).toEqual([
      ['debug', 'TransactionalId:LITERAL:tx for request = Produce with resourceRefCount = 2 based on rule SuperUser'],
      ['info', 'TransactionalId:LITERAL:tx for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny'],
      ['info', 'TransactionalId:LITERAL:no-acls for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny'],
    ]);
    const open = loaded({ auditLogger: audit, defaultResult: 'ALLOWED' });
    audit.lines.length = 0;
    open.authorize(ctx('bob'), [action(READ, GROUP, 'g')]);
    expect(audit.lines.map((l) => l.msg.replace(/^.* based on rule /, ''))).toEqual(['DefaultAllow']);
  });

  test('resource names that sort before the wildcard are scanned to an end', () => {
    const a = loaded();
    withAcls(a, acl(GROUP, '(abx', PREFIXED, 'User:bob', '*', READ, ALLOW), acl(GROUP, '(a', PREFIXED, 'User:bob', '*', READ, ALLOW), acl(GROUP, '*', LITERAL, 'User:alice', '*', READ, ALLOW));
    expect(a.authorize(ctx('bob'), [action(READ, GROUP, '(abc')])).toEqual(['ALLOWED']);
    expect(a.authorize(ctx('carol'), [action(READ, GROUP, '(abc')])).toEqual(['DENIED']);
    expect(a.authorize(ctx('alice'), [action(READ, GROUP, '!x')])).toEqual(['ALLOWED']);
  });
});

describe('authorize (AuthorizerTest)', () => {
  const username = 'alice';
  const resource = 'foo-6f1b2d4e';
  const allowRead = (host = '*') => ({ principal: 'User:alice', host, operation: READ, permissionType: ALLOW });
  const on = (type: number, name: string, pattern: number, e: { principal: string; host: string; operation: number; permissionType: number }) =>
    acl(type, name, pattern, e.principal, e.host, e.operation, e.permissionType);

  test('an empty resource name is denied until a wildcard ACL allows it (testAuthorizeWithEmptyResourceName)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(username, '192.168.0.1');
    expect(allowed(a, c, READ, GROUP, '')).toBe(false);
    withAcls(a, on(GROUP, '*', LITERAL, allowRead()));
    expect(allowed(a, c, READ, GROUP, '')).toBe(true);
  });

  test('topic ACLs per user and host (testTopicAcl)', () => {
    const a = authorizerTestAuthorizer();
    const host1 = '192.168.1.1';
    const host2 = '192.168.1.2';
    withAcls(
      a,
      acl(TOPIC, resource, LITERAL, 'User:alice', host1, READ, ALLOW),
      acl(TOPIC, resource, LITERAL, 'User:alice', host2, READ, ALLOW),
      acl(TOPIC, resource, LITERAL, 'User:alice', host1, READ, DENY),
      acl(TOPIC, resource, LITERAL, 'User:alice', host1, WRITE, ALLOW),
      acl(TOPIC, resource, LITERAL, 'User:alice', '*', DESCRIBE, ALLOW),
      acl(TOPIC, resource, LITERAL, 'User:rob', '*', READ, ALLOW),
      acl(TOPIC, resource, LITERAL, 'User:batman', '*', WRITE, ALLOW),
    );
    expect(allowed(a, ctx('alice', host2), READ, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('alice', host1), READ, TOPIC, resource)).toBe(false);
    expect(allowed(a, ctx('alice', host1), WRITE, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('alice', host2), WRITE, TOPIC, resource)).toBe(false);
    expect(allowed(a, ctx('alice', host1), DESCRIBE, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('alice', host2), DESCRIBE, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('alice', host1), ALTER, TOPIC, resource)).toBe(false);
    expect(allowed(a, ctx('alice', host2), ALTER, TOPIC, resource)).toBe(false);
    expect(allowed(a, ctx('rob', host1), DESCRIBE, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('batman', host1), DESCRIBE, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('rob', host1), READ, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx('batman', host1), WRITE, TOPIC, resource)).toBe(true);
  });

  test('a principal of another principal class is compared by type and name (testAllowAccessWithCustomPrincipal)', () => {
    const a = authorizerTestAuthorizer();
    withAcls(a, acl(TOPIC, resource, LITERAL, 'User:alice', '192.168.1.1', READ, DENY), acl(TOPIC, resource, LITERAL, 'User:alice', '192.168.1.2', READ, ALLOW));
    const custom = { principalType: 'User', name: 'alice', tokenAuthenticated: false } as KafkaPrincipal;
    expect(allowed(a, ctx(custom, '192.168.1.2'), READ, TOPIC, resource)).toBe(true);
    expect(allowed(a, ctx(custom, '192.168.1.1'), READ, TOPIC, resource)).toBe(false);
  });

  test('deny over allow, allow all, super users (testDenyTakesPrecedence, testAllowAllAccess, testSuperUserHasAccess)', () => {
    const a = authorizerTestAuthorizer();
    withAcls(a, acl(TOPIC, resource, LITERAL, 'User:*', '*', ALL, ALLOW), acl(TOPIC, resource, LITERAL, 'User:alice', '192.168.2.1', ALL, DENY));
    expect(allowed(a, ctx('alice', '192.168.2.1'), READ, TOPIC, resource)).toBe(false);
    expect(allowed(a, ctx('random', '192.0.4.4'), READ, TOPIC, resource)).toBe(true);
    const b = authorizerTestAuthorizer();
    withAcls(b, acl(TOPIC, resource, LITERAL, 'User:*', '*', ALL, DENY));
    expect(allowed(b, ctx('superuser1', '192.0.4.4'), READ, TOPIC, resource)).toBe(true);
    expect(allowed(b, ctx('superuser2', '192.0.4.4'), READ, TOPIC, resource)).toBe(true);
    expect(allowed(b, ctx('alice', '192.0.4.4'), READ, TOPIC, resource)).toBe(false);
  });

  test('wildcard resource ACLs (testWildCardAcls)', () => {
    const a = authorizerTestAuthorizer();
    const host1 = '192.168.3.1';
    expect(allowed(a, ctx('alice', host1), READ, TOPIC, resource)).toBe(false);
    withAcls(a, acl(TOPIC, '*', LITERAL, 'User:alice', host1, READ, ALLOW));
    expect(allowed(a, ctx('alice', host1), READ, TOPIC, resource)).toBe(true);
    withAcls(a, acl(TOPIC, resource, LITERAL, 'User:alice', host1, WRITE, ALLOW));
    expect(allowed(a, ctx('alice', host1), WRITE, TOPIC, resource)).toBe(true);
    withAcls(a, acl(TOPIC, '*', LITERAL, 'User:alice', host1, WRITE, DENY));
    expect(allowed(a, ctx('alice', host1), WRITE, TOPIC, resource)).toBe(false);
  });

  test('inheritance of ALLOW and DENY on the cluster (testAclInheritance)', () => {
    const host = '192.168.3.1';
    const valid = Object.values(Op).filter((op) => op !== Op.ANY && op !== Op.UNKNOWN);
    const implicationsOfAllow = (parent: number, implied: number[]) => {
      const a = authorizerTestAuthorizer();
      withAcls(a, acl(CLUSTER, 'kafka-cluster', LITERAL, 'User:alice', '*', parent, ALLOW));
      for (const op of valid) expect([op, allowed(a, ctx('alice', host), op, CLUSTER, 'kafka-cluster')]).toEqual([op, implied.includes(op) || op === parent]);
    };
    const implicationsOfDeny = (parent: number, denied: number[]) => {
      const a = authorizerTestAuthorizer();
      withAcls(a, acl(CLUSTER, 'kafka-cluster', LITERAL, 'User:alice', '*', parent, DENY), acl(CLUSTER, 'kafka-cluster', LITERAL, 'User:alice', '*', ALL, ALLOW));
      for (const op of valid) expect([op, allowed(a, ctx('alice', host), op, CLUSTER, 'kafka-cluster')]).toEqual([op, !(denied.includes(op) || op === parent)]);
    };
    const everything = [READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS];
    implicationsOfAllow(ALL, [...everything, Op.TWO_PHASE_COMMIT]);
    implicationsOfDeny(ALL, [...everything, Op.TWO_PHASE_COMMIT]);
    implicationsOfAllow(READ, [DESCRIBE]);
    implicationsOfAllow(WRITE, [DESCRIBE]);
    implicationsOfAllow(DELETE, [DESCRIBE]);
    implicationsOfAllow(ALTER, [DESCRIBE]);
    implicationsOfDeny(DESCRIBE, []);
    implicationsOfAllow(ALTER_CONFIGS, [DESCRIBE_CONFIGS]);
    implicationsOfDeny(DESCRIBE_CONFIGS, []);
  });

  test('an ALLOW on the wildcard or on a prefix grants access (testAccessAllowedIfAllowAclExistsOn{Wildcard,Prefixed}Resource)', () => {
    const a = authorizerTestAuthorizer();
    withAcls(a, on(TOPIC, '*', LITERAL, allowRead()));
    expect(allowed(a, ctx('alice', '192.168.0.1'), READ, TOPIC, resource)).toBe(true);
    const b = authorizerTestAuthorizer();
    withAcls(b, on(TOPIC, 'foo', PREFIXED, allowRead()));
    expect(allowed(b, ctx('alice', '192.168.0.1'), READ, TOPIC, resource)).toBe(true);
  });

  test('unrelated DENY prefixes and literals do not hide the matching prefix (testAuthorizeWithPrefixedResource)', () => {
    const a = authorizerTestAuthorizer();
    const denyRead = { principal: 'User:alice', host: '*', operation: READ, permissionType: DENY };
    for (const [name, pattern] of [
      ['a_other', LITERAL],
      ['a_other', PREFIXED],
      ['foo-1f7c0b3a', PREFIXED],
      ['foo-9e8d7c6b', PREFIXED],
      ['foo-1a2b3c4d-zzz', PREFIXED],
      ['fooo-5e6f7a8b', PREFIXED],
      ['fo-9c8b7a6d', PREFIXED],
      ['fop-4d3c2b1a', PREFIXED],
      ['fon-0a1b2c3d', PREFIXED],
      ['fon-', PREFIXED],
      ['z_other', PREFIXED],
      ['z_other', LITERAL],
    ] as const) {
      withAcls(a, on(TOPIC, name, pattern, denyRead));
    }
    withAcls(a, on(TOPIC, 'foo', PREFIXED, allowRead()));
    expect(allowed(a, ctx('alice', '192.168.0.1'), READ, TOPIC, resource)).toBe(true);
  });

  test('single-character names (testSingleCharacterResourceAcls)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx('alice', '192.168.0.1');
    withAcls(a, on(TOPIC, 'f', LITERAL, allowRead()));
    expect(allowed(a, c, READ, TOPIC, 'f')).toBe(true);
    expect(allowed(a, c, READ, TOPIC, 'foo')).toBe(false);
    withAcls(a, on(TOPIC, '_', PREFIXED, allowRead()));
    expect(allowed(a, c, READ, TOPIC, '_foo')).toBe(true);
    expect(allowed(a, c, READ, TOPIC, '_')).toBe(true);
    expect(allowed(a, c, READ, TOPIC, 'foo_')).toBe(false);
  });
});

describe('acls(filter)', () => {
  const filter = (f: Partial<AclBindingFilter>): AclBindingFilter => ({ ...ANY_FILTER, ...f });

  test('listing in StandardAcl order, after a removal, by resource type (testListAcls)', () => {
    const a = loaded();
    const foo = [acl(TOPIC, 'foo_', PREFIXED, 'User:bob', '*', READ, ALLOW), acl(TOPIC, 'foo_', PREFIXED, 'User:bob', '*', WRITE, ALLOW)];
    const bar = [acl(GROUP, 'bar', LITERAL, 'User:*', '*', DESCRIBE_CONFIGS, DENY), acl(GROUP, 'bar', LITERAL, 'User:*', '*', ALTER_CONFIGS, DENY)];
    const ids = withAcls(a, bar[1], foo[1], bar[0], foo[0]);
    expect(a.acls(ANY_FILTER)).toEqual([foo[0], foo[1], bar[0], bar[1]]);
    a.removeAcl(ids[1]);
    expect(a.acls(ANY_FILTER)).toEqual([foo[0], bar[0], bar[1]]);
    expect(a.acls(filter({ resourceType: TOPIC }))).toEqual([foo[0]]);
    expect(a.aclCount()).toBe(3);
  });

  test('principal filters are exact strings (testGetAclsPrincipal)', () => {
    const a = authorizerTestAuthorizer();
    withAcls(a, acl(TOPIC, 'r', LITERAL, 'User:alice', '*', WRITE, ALLOW));
    expect(a.acls(filter({ principal: 'User:*' }))).toHaveLength(0);
    expect(a.acls(filter({ principal: 'User:alice' }))).toHaveLength(1);
    const b = authorizerTestAuthorizer();
    withAcls(b, acl(TOPIC, 'r', LITERAL, 'User:*', '*', WRITE, ALLOW));
    expect(b.acls(filter({ principal: 'User:*' }))).toHaveLength(1);
    expect(b.acls(filter({ principal: 'User:alice' }))).toHaveLength(0);
  });

  test('LITERAL, PREFIXED, ANY and MATCH pattern filters (testAclsFilter)', () => {
    const a = authorizerTestAuthorizer();
    const acl1 = acl(TOPIC, 'foo-1', LITERAL, 'User:alice', '*', READ, ALLOW);
    const acl2 = acl(TOPIC, 'foo-1', LITERAL, 'User:alice', '192.168.0.1', WRITE, ALLOW);
    const acl3 = acl(TOPIC, 'bar-2', LITERAL, 'User:alice', '*', DESCRIBE, ALLOW);
    const acl4 = acl(TOPIC, 'bar-', PREFIXED, 'User:*', '*', READ, ALLOW);
    const wild = acl(TOPIC, '*', LITERAL, 'User:bob', '*', READ, ALLOW);
    withAcls(a, acl1, acl2, acl3, acl4);
    const set = (xs: AclBinding[]) => new Set(xs.map((x) => aclToString(x)));
    expect(set(a.acls(ANY_FILTER))).toEqual(set([acl1, acl2, acl3, acl4]));
    expect(set(a.acls(filter({ resourceType: TOPIC, resourceName: 'foo-1', patternType: LITERAL })))).toEqual(set([acl1, acl2]));
    expect(set(a.acls(filter({ resourceType: TOPIC, resourceName: 'bar-', patternType: PREFIXED })))).toEqual(set([acl4]));
    expect(set(a.acls(filter({ resourceName: 'bar-2', patternType: Pat.MATCH })))).toEqual(set([acl3, acl4]));
    expect(a.acls(filter({ resourceType: TOPIC, resourceName: 'baz', patternType: Pat.ANY }))).toEqual([]);
    withAcls(a, wild);
    expect(set(a.acls(filter({ resourceName: 'bar-2', patternType: Pat.MATCH })))).toEqual(set([acl3, acl4, wild]));
    expect(set(a.acls(filter({ resourceName: '*', patternType: Pat.ANY })))).toEqual(set([wild]));
    expect(a.acls(bindingToFilter(acl2))).toEqual([acl2]);
    // Codes Kafka does not define read as UNKNOWN and match nothing.
    expect(a.acls(filter({ resourceType: 99 }))).toEqual([]);
    expect(a.acls(filter({ operation: 42 }))).toEqual([]);
  });
});

describe('authorizeByResourceType (BaseAuthorizerTest)', () => {
  const user1 = 'user1';
  const host1 = '192.168.1.1';
  const host2 = '192.168.1.2';

  test('argument checks', () => {
    const a = authorizerTestAuthorizer();
    expect(() => a.authorizeByResourceType(ctx(user1), READ, Res.ANY)).toThrow('Must specify a non-filter resource type for authorizeByResourceType');
    expect(() => a.authorizeByResourceType(ctx(user1), READ, Res.UNKNOWN)).toThrow('Unknown resource type');
    expect(() => a.authorizeByResourceType(ctx(user1), Op.ANY, TOPIC)).toThrow('Must specify a non-filter operation type for authorizeByResourceType');
    expect(() => a.authorizeByResourceType(ctx(user1), Op.UNKNOWN, TOPIC)).toThrow('Unknown operation type');
  });

  test('repeated adds and removals (testAuthorizeByResourceTypeMultipleAddAndRemove)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(user1, host1);
    for (let i = 0; i < 3; i++) {
      expect(byType(a, c, READ, TOPIC)).toBe(false);
      const [allowId] = withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, READ, ALLOW));
      expect(byType(a, c, READ, TOPIC)).toBe(true);
      for (let j = 0; j < 3; j++) {
        const [denyId] = withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, READ, DENY));
        expect(byType(a, c, READ, TOPIC)).toBe(false);
        a.removeAcl(denyId);
        expect(byType(a, c, READ, TOPIC)).toBe(true);
      }
      a.removeAcl(allowId);
      expect(byType(a, c, READ, TOPIC)).toBe(false);
    }
  });

  test('unrelated DENYs do not dominate an ALLOW (testAuthorizeByResourceTypeIsolationUnrelatedDenyWontDominateAllow)', () => {
    const a = authorizerTestAuthorizer();
    withAcls(
      a,
      acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, READ, DENY),
      acl(TOPIC, 'sb1', LITERAL, 'User:user2', host1, READ, DENY),
      acl(TOPIC, 'sb1', LITERAL, 'User:user1', host2, WRITE, DENY),
      acl(TOPIC, 'sb1', LITERAL, 'User:user2', host2, READ, DENY),
      acl(TOPIC, 'sb1', LITERAL, 'User:user1', host2, READ, ALLOW),
      acl(TOPIC, 'sb2', LITERAL, 'User:user1', host2, READ, DENY),
      acl(GROUP, 's', PREFIXED, 'User:user1', host2, READ, DENY),
    );
    const u1h1 = ctx(user1, host1);
    const u1h2 = ctx(user1, host2);
    expect(byType(a, u1h1, READ, TOPIC)).toBe(false);
    expect(byType(a, u1h1, READ, GROUP)).toBe(false);
    expect(byType(a, u1h1, READ, TRANSACTIONAL_ID)).toBe(false);
    expect(byType(a, u1h1, READ, CLUSTER)).toBe(false);
    expect(byType(a, u1h2, READ, TOPIC)).toBe(true);
  });

  test('DENY on the same literal takes precedence (testAuthorizeByResourceTypeDenyTakesPrecedence)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(user1, host1);
    withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, WRITE, ALLOW));
    expect(byType(a, c, WRITE, TOPIC)).toBe(true);
    withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, WRITE, DENY));
    expect(byType(a, c, WRITE, TOPIC)).toBe(false);
  });

  test('a PREFIXED DENY dominates the ALLOWs it is a prefix of (testAuthorizeByResourceTypePrefixedResourceDenyDominate)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(user1, host1);
    const allowP = (n: string) => acl(GROUP, n, PREFIXED, 'User:user1', host1, READ, ALLOW);
    const denyP = (n: string) => acl(GROUP, n, PREFIXED, 'User:user1', host1, READ, DENY);
    withAcls(a, allowP('abcde'));
    expect(byType(a, c, READ, GROUP)).toBe(true);
    withAcls(a, denyP('abcd'));
    expect(byType(a, c, READ, GROUP)).toBe(false);
    withAcls(a, allowP('abc'));
    expect(byType(a, c, READ, GROUP)).toBe(true);
    withAcls(a, denyP('a'));
    expect(byType(a, c, READ, GROUP)).toBe(false);
    withAcls(a, allowP('ab'));
    expect(byType(a, c, READ, GROUP)).toBe(false);
  });

  test('a LITERAL * DENY dominates everything (testAuthorizeByResourceTypeWildcardResourceDenyDominate)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(user1, host1);
    const e = (name: string, pattern: number, perm: number) => acl(GROUP, name, pattern, 'User:user1', host1, WRITE, perm);
    withAcls(a, e('hello', PREFIXED, ALLOW));
    expect(byType(a, c, WRITE, GROUP)).toBe(true);
    withAcls(a, e('*', LITERAL, DENY));
    expect(byType(a, c, WRITE, GROUP)).toBe(false);
    withAcls(a, e('*', LITERAL, ALLOW));
    expect(byType(a, c, WRITE, GROUP)).toBe(false);
    withAcls(a, e('aloha', LITERAL, ALLOW));
    expect(byType(a, c, WRITE, GROUP)).toBe(false);
  });

  test('ALL operation entries (testAuthorizeByResourceTypeWithAllOperationAce)', () => {
    const a = authorizerTestAuthorizer();
    const c = ctx(user1, host1);
    expect(byType(a, c, READ, TOPIC)).toBe(false);
    withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, WRITE, DENY), acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, ALL, ALLOW));
    expect(byType(a, c, READ, TOPIC)).toBe(true);
    withAcls(a, acl(TOPIC, 'sb1', LITERAL, 'User:user1', host1, ALL, DENY));
    expect(byType(a, c, READ, TOPIC)).toBe(false);
  });

  test('wildcard hosts (testAuthorizeByResourceTypeWithAllHostAce)', () => {
    const a = authorizerTestAuthorizer();
    const u1h1 = ctx(user1, host1);
    const u1h2 = ctx(user1, host2);
    const e = (name: string, host: string, perm: number) => acl(TOPIC, name, LITERAL, 'User:user1', host, READ, perm);
    expect(byType(a, u1h1, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb1', host1, ALLOW));
    expect(byType(a, u1h1, READ, TOPIC)).toBe(true);
    withAcls(a, e('sb1', '*', DENY));
    expect(byType(a, u1h1, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb2', host1, DENY));
    expect(byType(a, u1h1, READ, TOPIC)).toBe(false);
    expect(byType(a, u1h2, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb2', '*', ALLOW));
    expect(byType(a, u1h2, READ, TOPIC)).toBe(true);
    withAcls(a, e('sb2', '*', DENY));
    expect(byType(a, u1h2, READ, TOPIC)).toBe(false);
  });

  test('wildcard principals (testAuthorizeByResourceTypeWithAllPrincipalAce)', () => {
    const a = authorizerTestAuthorizer();
    const u1 = ctx(user1, host1);
    const u2 = ctx('user2', host1);
    const e = (name: string, principal: string, perm: number) => acl(TOPIC, name, LITERAL, principal, host1, READ, perm);
    expect(byType(a, u1, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb1', 'User:user1', ALLOW));
    expect(byType(a, u1, READ, TOPIC)).toBe(true);
    withAcls(a, e('sb1', 'User:*', DENY));
    expect(byType(a, u1, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb2', 'User:user1', DENY));
    expect(byType(a, u1, READ, TOPIC)).toBe(false);
    expect(byType(a, u2, READ, TOPIC)).toBe(false);
    withAcls(a, e('sb2', 'User:*', ALLOW));
    expect(byType(a, u2, READ, TOPIC)).toBe(true);
    withAcls(a, e('sb2', 'User:*', DENY));
    expect(byType(a, u2, READ, TOPIC)).toBe(false);
  });

  test('super users and allow.everyone.if.no.acl.found pass (testAuthorizeByResourceTypeSuperUserHasAccess, ...NoAclFoundOverride)', () => {
    const a = authorizerTestAuthorizer();
    for (const type of [TOPIC, CLUSTER, GROUP, TRANSACTIONAL_ID]) withAcls(a, acl(type, '*', LITERAL, 'User:*', '*', ALL, DENY));
    for (const type of [TOPIC, CLUSTER, GROUP, TRANSACTIONAL_ID]) expect(byType(a, ctx('superuser1', '192.0.4.4'), READ, type)).toBe(true);
    const open = authorizerTestAuthorizer({ [ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG]: 'true' });
    expect(byType(open, ctx('alice', '192.168.0.1'), READ, TOPIC)).toBe(true);
    expect(byType(open, ctx('alice', '192.168.0.1'), WRITE, TOPIC)).toBe(true);
  });
});

describe('following the metadata image', () => {
  const record = (id: string, a: AclBinding) => ({ type: 'AccessControlEntryRecord' as const, data: { id, ...a } });
  const removal = (id: string) => ({ type: 'RemoveAccessControlEntryRecord' as const, data: { id } });

  test('records applied to the MetadataCache reach the authorizer in order; a late follower gets a snapshot', () => {
    const image = new MetadataCache('c');
    const early = loaded();
    early.follow(image);
    const allowBob = acl(TOPIC, 't', LITERAL, 'User:bob', '*', READ, ALLOW);
    const denyAll = acl(TOPIC, 't', LITERAL, 'User:*', '*', ALL, DENY);
    const delta = image.apply([record('AAAAAAAAAAAAAAAAAAAAAQ', allowBob), record('AAAAAAAAAAAAAAAAAAAAAg', denyAll)], 0n);
    expect(delta.changedAcls).toEqual([
      { id: 'AAAAAAAAAAAAAAAAAAAAAQ', acl: allowBob },
      { id: 'AAAAAAAAAAAAAAAAAAAAAg', acl: denyAll },
    ]);
    expect(allowed(early, ctx('bob'), READ, TOPIC, 't')).toBe(false);
    image.apply([removal('AAAAAAAAAAAAAAAAAAAAAg')], 1n);
    expect(allowed(early, ctx('bob'), READ, TOPIC, 't')).toBe(true);
    const late = loaded();
    late.follow(image);
    expect(late.acls(ANY_FILTER)).toEqual([allowBob]);
    expect(allowed(late, ctx('bob'), READ, TOPIC, 't')).toBe(true);
    // An id added and removed in one batch is no change; a removal of an unknown id changes nothing.
    const d2 = image.apply([record('AAAAAAAAAAAAAAAAAAAAAw', denyAll), removal('AAAAAAAAAAAAAAAAAAAAAw'), removal('AAAAAAAAAAAAAAAAAAAABA')], 2n);
    expect(d2.changedAcls).toEqual([]);
    expect(early.aclCount()).toBe(1);
    expect(image.acls()).toEqual(new Map([['AAAAAAAAAAAAAAAAAAAAAQ', allowBob]]));
  });

  test('StandardAcl order: type, name reversed, pattern, operation, principal, host, permission', () => {
    const sorted = [
      acl(TOPIC, 'foobar', PREFIXED, 'User:a', '*', READ, ALLOW),
      acl(TOPIC, 'foob', LITERAL, 'User:a', '*', READ, ALLOW),
      acl(TOPIC, 'foo', LITERAL, 'User:a', '*', READ, ALLOW),
      acl(TOPIC, 'foo', PREFIXED, 'User:a', '*', READ, ALLOW),
      acl(TOPIC, 'foo', PREFIXED, 'User:a', '*', WRITE, ALLOW),
      acl(TOPIC, 'foo', PREFIXED, 'User:b', '*', WRITE, ALLOW),
      acl(TOPIC, 'foo', PREFIXED, 'User:b', 'h', WRITE, DENY),
      acl(TOPIC, 'foo', PREFIXED, 'User:b', 'h', WRITE, ALLOW),
      acl(GROUP, 'a', LITERAL, 'User:a', '*', READ, ALLOW),
    ];
    expect([...sorted].reverse().sort(compareAcls)).toEqual(sorted);
  });
});
