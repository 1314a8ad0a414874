/**
 * The ACL APIs (CreateAcls 30, DescribeAcls 29, DeleteAcls 31) and the StandardAuthorizer on one
 * combined embedded broker, driven by KafkaJS' admin client (v1 of each API) over PLAINTEXT, where
 * every client is User:ANONYMOUS:
 * - with `authorizer.class.name=...StandardAuthorizer` and `super.users=User:ANONYMOUS` the admin
 *   may do everything: ACLs created (LITERAL, PREFIXED, the `*` wildcard, ALLOW and DENY) are
 *   described back grouped by resource as Kafka groups them, with ANY / LITERAL / PREFIXED / MATCH
 *   filters; the broker's authorizer decides from them at once (asked directly for other users);
 *   invalid creations get Kafka's errors; deletions answer the ACLs each filter matched;
 * - the ACLs survive a restart (the broker replays its metadata log before it serves);
 * - without an authorizer the three APIs answer SECURITY_DISABLED;
 * - without super users, ANONYMOUS may not touch ACLs (CLUSTER_AUTHORIZATION_FAILED), unless
 *   allow.everyone.if.no.acl.found lets it, which holds only while the cluster has no ACL at all;
 * - an unknown authorizer class (Kafka 4's removed AclAuthorizer) stops startup with a clear error.
 */
import type { Admin } from 'kafkajs';
import { startBroker } from '../../broker';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { connectedAdmin, kafkaFor } from '../helpers/kafkajs';
import { Op, Pat, Perm, Res, aclsReach, anyFilter, contextOf, errorType } from './acl-helpers';

const STANDARD = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';
const AUTHORIZED = { 'authorizer.class.name': STANDARD, 'super.users': 'User:ANONYMOUS' };

type Acl = { resourceType: number; resourceName: string; resourcePatternType: number; principal: string; host: string; operation: number; permissionType: number };
const acl = (over: Partial<Acl>): Acl => ({
  resourceType: Res.TOPIC,
  resourceName: 'orders',
  resourcePatternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: Op.READ,
  permissionType: Perm.ALLOW,
  ...over,
});

/** DescribeAcls resources, order-free: "type:name:pattern" -> sorted "principal host op perm" entries. */
function described(resources: any[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of resources) out[`${r.resourceType}:${r.resourceName}:${r.resourcePatternType}`] = r.acls.map((a: any) => `${a.principal} ${a.host} ${a.operation} ${a.permissionType}`).sort();
  return out;
}

describe('ACLs on one broker, StandardAuthorizer with super.users=User:ANONYMOUS', () => {
  let broker: TestBroker;
  let admin: Admin;

  beforeAll(async () => {
    broker = await startTestBroker('embedded', { config: AUTHORIZED });
    admin = await connectedAdmin(kafkaFor(broker, 'acl-admin'));
  });

  afterAll(async () => {
    await admin?.disconnect();
    await broker?.close();
  });

  const authorizer = () => broker.embedded!.server.authorizer;
  const decide = (user: string, operation: number, resourceType: number, resourceName: string, host = '127.0.0.1') =>
    authorizer().authorize(contextOf(user, host), [{ operation: operation as never, resourceType: resourceType as never, resourceName }])[0];

  test('create, describe with filters, decide, delete; then a restart keeps what is left', async () => {
    const acls = [
      acl({}),
      acl({ operation: Op.WRITE, host: '10.0.0.7' }),
      acl({ resourceName: 'orders-', resourcePatternType: Pat.PREFIXED, principal: 'User:bob' }),
      acl({ resourceName: '*', principal: 'User:*', operation: Op.DESCRIBE }),
      acl({ resourceName: 'orders-secret', principal: 'User:bob', permissionType: Perm.DENY }),
      acl({ resourceType: Res.GROUP, resourceName: 'billing', principal: 'User:alice' }),
      acl({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', principal: 'User:ops', operation: Op.ALTER }),
    ];
    expect(await admin.createAcls({ acl: acls })).toBe(true);
    // Creating an ACL that exists already succeeds and adds nothing.
    expect(await admin.createAcls({ acl: [acls[0]] })).toBe(true);

    const all = await admin.describeAcls(anyFilter);
    expect(described(all.resources)).toEqual({
      '2:orders:3': ['User:alice * 3 3', 'User:alice 10.0.0.7 4 3'],
      '2:orders-:4': ['User:bob * 3 3'],
      '2:*:3': ['User:* * 8 3'],
      '2:orders-secret:3': ['User:bob * 3 2'],
      '3:billing:3': ['User:alice * 3 3'],
      '4:kafka-cluster:3': ['User:ops * 7 3'],
    });
    const prefixed = await admin.describeAcls({ ...anyFilter, resourceType: Res.TOPIC, resourcePatternType: Pat.PREFIXED });
    expect(described(prefixed.resources)).toEqual({ '2:orders-:4': ['User:bob * 3 3'] });
    const matching = await admin.describeAcls({ ...anyFilter, resourceType: Res.TOPIC, resourceName: 'orders-secret', resourcePatternType: Pat.MATCH });
    expect(described(matching.resources)).toEqual({ '2:orders-:4': ['User:bob * 3 3'], '2:*:3': ['User:* * 8 3'], '2:orders-secret:3': ['User:bob * 3 2'] });
    const bobs = await admin.describeAcls({ ...anyFilter, principal: 'User:bob', permissionType: Perm.DENY });
    expect(described(bobs.resources)).toEqual({ '2:orders-secret:3': ['User:bob * 3 2'] });

    // The broker's authorizer decides from them.
    expect(decide('alice', Op.READ, Res.TOPIC, 'orders')).toBe('ALLOWED');
    expect(decide('alice', Op.WRITE, Res.TOPIC, 'orders')).toBe('DENIED');
    expect(decide('alice', Op.WRITE, Res.TOPIC, 'orders', '10.0.0.7')).toBe('ALLOWED');
    expect(decide('alice', Op.DESCRIBE, Res.TOPIC, 'orders')).toBe('ALLOWED');
    expect(decide('bob', Op.READ, Res.TOPIC, 'orders-2024')).toBe('ALLOWED');
    expect(decide('bob', Op.READ, Res.TOPIC, 'orders-secret')).toBe('DENIED');
    expect(decide('carol', Op.DESCRIBE, Res.TOPIC, 'anything')).toBe('ALLOWED');
    expect(decide('carol', Op.READ, Res.TOPIC, 'anything')).toBe('DENIED');
    expect(decide('alice', Op.READ, Res.GROUP, 'billing')).toBe('ALLOWED');
    expect(decide('ops', Op.ALTER, Res.CLUSTER, 'kafka-cluster')).toBe('ALLOWED');
    expect(decide('ANONYMOUS', Op.ALL, Res.TOPIC, 'orders-secret')).toBe('ALLOWED');

    const { filterResponses } = await admin.deleteAcls({
      filters: [
        { ...anyFilter, resourceType: Res.TOPIC, resourceName: 'orders', resourcePatternType: Pat.LITERAL, principal: 'User:alice' },
        { ...anyFilter, resourceType: Res.TOPIC, resourceName: 'orders-', resourcePatternType: Pat.PREFIXED },
        { ...anyFilter, resourceType: Res.GROUP, resourceName: 'nothing-here', resourcePatternType: Pat.LITERAL },
      ],
    });
    expect(filterResponses.map((f: any) => [f.errorCode, f.matchingAcls.map((m: any) => `${m.resourceName} ${m.principal} ${m.host} ${m.operation}`).sort()])).toEqual([
      [0, ['orders User:alice * 3', 'orders User:alice 10.0.0.7 4']],
      [0, ['orders- User:bob * 3']],
      [0, []],
    ]);
    expect(decide('alice', Op.READ, Res.TOPIC, 'orders')).toBe('DENIED');
    expect(decide('bob', Op.READ, Res.TOPIC, 'orders-2024')).toBe('DENIED');

    await broker.restart();
    await admin.disconnect();
    admin = await connectedAdmin(kafkaFor(broker, 'acl-admin'));
    expect(described((await admin.describeAcls(anyFilter)).resources)).toEqual({
      '2:*:3': ['User:* * 8 3'],
      '2:orders-secret:3': ['User:bob * 3 2'],
      '3:billing:3': ['User:alice * 3 3'],
      '4:kafka-cluster:3': ['User:ops * 7 3'],
    });
    expect(decide('bob', Op.READ, Res.TOPIC, 'orders-secret')).toBe('DENIED');
    expect(decide('alice', Op.READ, Res.GROUP, 'billing')).toBe('ALLOWED');
    expect(broker.embedded!.server.metadata.aclCount).toBe(4);
    // Clean up for the next test.
    await admin.deleteAcls({ filters: [anyFilter] });
    await aclsReach(broker.embedded!.server.metadata, 'no ACLs left', (a) => a.length === 0);
  });

  test("invalid creations get Kafka's errors and create nothing", async () => {
    // A CLUSTER ACL must name kafka-cluster; an empty name is refused (INVALID_REQUEST).
    expect(await errorType(admin.createAcls({ acl: [acl({ resourceType: Res.CLUSTER, resourceName: 'my-cluster', operation: Op.ALTER })] }))).toBe('INVALID_REQUEST');
    expect(await errorType(admin.createAcls({ acl: [acl({ resourceName: '' })] }))).toBe('INVALID_REQUEST');
    expect(broker.embedded!.server.metadata.aclCount).toBe(0);
  });
});

describe('ACL APIs without an authorizer', () => {
  let broker: TestBroker;
  let admin: Admin;

  beforeAll(async () => {
    broker = await startTestBroker('embedded');
    admin = await connectedAdmin(kafkaFor(broker, 'acl-admin'));
  });

  afterAll(async () => {
    await admin?.disconnect();
    await broker?.close();
  });

  test('every API answers SECURITY_DISABLED', async () => {
    expect(await errorType(admin.createAcls({ acl: [acl({})] }))).toBe('SECURITY_DISABLED');
    expect(await errorType(admin.describeAcls(anyFilter))).toBe('SECURITY_DISABLED');
    expect(await errorType(admin.deleteAcls({ filters: [anyFilter] }))).toBe('SECURITY_DISABLED');
    expect(broker.embedded!.server.metadata.aclCount).toBe(0);
  });
});

describe('ACL APIs need ALTER / DESCRIBE on the cluster', () => {
  test('without super users ANONYMOUS is refused (CLUSTER_AUTHORIZATION_FAILED)', async () => {
    const broker = await startTestBroker('embedded', { config: { 'authorizer.class.name': STANDARD } });
    const admin = await connectedAdmin(kafkaFor(broker, 'acl-admin'));
    try {
      expect(await errorType(admin.createAcls({ acl: [acl({})] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
      expect(await errorType(admin.describeAcls(anyFilter))).toBe('CLUSTER_AUTHORIZATION_FAILED');
      expect(await errorType(admin.deleteAcls({ filters: [anyFilter] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
    } finally {
      await admin.disconnect();
      await broker.close();
    }
  });

  test('allow.everyone.if.no.acl.found lets ANONYMOUS in only while the cluster resource has no ACL', async () => {
    const broker = await startTestBroker('embedded', { config: { 'authorizer.class.name': STANDARD, 'allow.everyone.if.no.acl.found': 'true' } });
    const admin = await connectedAdmin(kafkaFor(broker, 'acl-admin'));
    try {
      expect(await admin.createAcls({ acl: [acl({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', principal: 'User:ANONYMOUS', operation: Op.DESCRIBE })] })).toBe(true);
      // The cluster now has an ACL: DESCRIBE is granted, ALTER no longer falls back to the default.
      expect(described((await admin.describeAcls(anyFilter)).resources)).toEqual({ '4:kafka-cluster:3': ['User:ANONYMOUS * 8 3'] });
      expect(await errorType(admin.createAcls({ acl: [acl({})] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
      expect(await errorType(admin.deleteAcls({ filters: [anyFilter] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
    } finally {
      await admin.disconnect();
      await broker.close();
    }
  });

  test('an unknown authorizer class stops startup with a clear error', async () => {
    await expect(startBroker({ config: { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' }, logLevel: 'error' })).rejects.toThrow(
      'Invalid value kafka.security.authorizer.AclAuthorizer for configuration authorizer.class.name: class not found (AclAuthorizer was removed with ZooKeeper in Kafka 4.0)',
    );
    await expect(startBroker({ config: { 'authorizer.class.name': STANDARD, 'super.users': 'admin' }, logLevel: 'error' })).rejects.toThrow(
      'expected a string in format principalType:principalName but got admin',
    );
  });
});
