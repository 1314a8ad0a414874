/**
 * CreateAcls (30), DescribeAcls (29) and DeleteAcls (31) at every advertised version, through the
 * real dispatcher of a broker with the StandardAuthorizer (super user User:ANONYMOUS), of one
 * without an authorizer, and of a controller node: Kafka's answers for each case (success and
 * de-duplication, the handler's own INVALID_REQUEST checks, the controller's, bindings Kafka cannot
 * build (UNKNOWN_SERVER_ERROR for the whole request), UNKNOWN codes closing the connection,
 * CLUSTER_AUTHORIZATION_FAILED for a principal without ALTER / DESCRIBE on the cluster,
 * SECURITY_DISABLED without an authorizer), and responses that encode at each version (v0 carries no
 * pattern type: only LITERAL ACLs are seen there).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '..';
import type { ControllerServer } from '../controller/controller-server';
import { ErrorCode } from '../../protocol/errors';
import { ANONYMOUS, userPrincipal } from '../../common/kafka-principal';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';
import { startTestController } from '../testing/controller-node';
import { CONTROLLER_HANDLERS } from '../controller/handlers';
import { AclOperation as Op, AclPermissionType as Perm, PatternType as Pat, ResourceType as Res } from '../../metadata/authorizer/authorizer';

const STANDARD = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

const creation = (over: Record<string, unknown> = {}) => ({
  resourceType: Res.TOPIC,
  resourceName: 'orders',
  resourcePatternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: Op.READ,
  permissionType: Perm.ALLOW,
  ...over,
});
const describeAll = { resourceTypeFilter: Res.ANY, resourceNameFilter: null, patternTypeFilter: Pat.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY };
const filterOf = (over: Record<string, unknown> = {}) => ({ ...describeAll, ...over });
const OK = { errorCode: ErrorCode.NONE, errorMessage: null };
/** v0 has no pattern type field (it is LITERAL there): a filter as a v0 request can carry it. */
const at = (v: number, f: Record<string, unknown>) => (v === 0 ? { ...f, patternTypeFilter: Pat.LITERAL } : f);

/** A dispatch client whose connection is `user`'s (null: ANONYMOUS). */
function clientAs(server: () => RunningBroker['server'] | ControllerServer, user: string | null, listener = 'PLAINTEXT'): DispatchClient {
  return new DispatchClient(server, 'acl-handlers-test', listener, user === null ? ANONYMOUS : userPrincipal(user));
}

describe('a broker with the StandardAuthorizer, super.users=User:ANONYMOUS', () => {
  let broker: RunningBroker;
  const admin = clientAs(() => broker.server, null);
  const alice = clientAs(() => broker.server, 'alice');

  beforeAll(async () => {
    broker = await startBroker({ logLevel: 'error', config: { 'authorizer.class.name': STANDARD, 'super.users': 'User:ANONYMOUS' } });
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('CreateAcls, DescribeAcls, DeleteAcls at every version', async () => {
    for (const v of versions(30)) {
      const name = `orders-v${v}`;
      const res = await admin.call(30, v, {
        creations: [
          creation({ resourceName: name }),
          creation({ resourceName: name }),
          creation({ resourceType: Res.CLUSTER, resourceName: 'other', operation: Op.ALTER }),
          creation({ resourceName: '' }),
          creation({ resourceName: name, operation: 42 }),
          creation({ resourceName: name, permissionType: 9 }),
          ...(v >= 1 ? [creation({ resourceName: `${name}-`, resourcePatternType: Pat.PREFIXED, principal: 'User:bob' })] : []),
        ],
      });
      expect([v, res.results]).toEqual([
        v,
        [
          OK,
          OK,
          { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'The only valid name for the CLUSTER resource is kafka-cluster' },
          { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid empty resource name' },
          { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid operation UNKNOWN' },
          { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid permissionType UNKNOWN' },
          ...(v >= 1 ? [OK] : []),
        ],
      ]);
    }
    expect(broker.server.metadata.aclCount).toBe(4 + 3);

    for (const v of versions(29)) {
      const res = await admin.call(29, v, at(v, describeAll));
      expect(res.errorCode).toBe(ErrorCode.NONE);
      const keys = res.resources.map((r: any) => `${r.resourceName}:${r.patternType}:${r.acls.length}`).sort();
      // v0 has no pattern type field: its filter is LITERAL, so PREFIXED ACLs are not listed.
      const literal = ['orders-v0:3:1', 'orders-v1:3:1', 'orders-v2:3:1', 'orders-v3:3:1'];
      expect([v, keys]).toEqual([v, v === 0 ? literal : [...literal, 'orders-v1-:4:1', 'orders-v2-:4:1', 'orders-v3-:4:1'].sort()]);
      const matched = await admin.call(29, v, filterOf({ resourceTypeFilter: Res.TOPIC, resourceNameFilter: 'orders-v2-x', patternTypeFilter: v === 0 ? Pat.LITERAL : Pat.MATCH }));
      expect([v, matched.resources]).toEqual([
        v,
        v === 0
          ? []
          : [{ resourceType: Res.TOPIC, resourceName: 'orders-v2-', patternType: Pat.PREFIXED, acls: [{ principal: 'User:bob', host: '*', operation: Op.READ, permissionType: Perm.ALLOW }] }],
      ]);
      const none = await admin.call(29, v, at(v, filterOf({ operation: 77 })));
      expect([v, none.errorCode, none.resources]).toEqual([v, 0, []]);
    }

    for (const v of versions(31)) {
      const res = await admin.call(31, v, {
        filters: [filterOf({ resourceTypeFilter: Res.TOPIC, resourceNameFilter: `orders-v${v}`, patternTypeFilter: Pat.LITERAL }), at(v, filterOf({ operation: 99 })), at(v, filterOf({ resourceTypeFilter: Res.GROUP }))],
      });
      expect([v, res.filterResults]).toEqual([
        v,
        [
          {
            errorCode: 0,
            errorMessage: null,
            matchingAcls: [
              { errorCode: 0, errorMessage: null, resourceType: Res.TOPIC, resourceName: `orders-v${v}`, patternType: Pat.LITERAL, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: Perm.ALLOW },
            ],
          },
          { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown entryFilter.', matchingAcls: [] },
          { errorCode: 0, errorMessage: null, matchingAcls: [] },
        ],
      ]);
    }
    // v0 deletes only LITERAL ACLs: the PREFIXED ones are left for a later version.
    const rest = await admin.call(31, 3, { filters: [describeAll] });
    expect(rest.filterResults[0].matchingAcls.map((m: any) => m.resourceName).sort()).toEqual(['orders-v1-', 'orders-v2-', 'orders-v3-']);
    expect(broker.server.metadata.aclCount).toBe(0);
  });

  test('bindings Kafka cannot build fail the whole request with UNKNOWN_SERVER_ERROR', async () => {
    for (const bad of [{ resourceType: Res.ANY }, { resourcePatternType: Pat.MATCH }, { resourcePatternType: Pat.ANY }, { operation: Op.ANY }, { permissionType: Perm.ANY }]) {
      const res = await admin.call(30, 3, { creations: [creation(), creation(bad)] });
      expect(res.results).toEqual([
        { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
        { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
      ]);
    }
    expect(broker.server.metadata.aclCount).toBe(0);
  });

  test('UNKNOWN (0) codes are requests Kafka cannot parse: the connection is closed', async () => {
    for (const bad of [{ resourceType: 0 }, { resourcePatternType: 0 }, { operation: 0 }, { permissionType: 0 }]) {
      await expect(admin.call(30, 2, { creations: [creation(bad)] })).rejects.toThrow('connection closed: CreatableAcls contain unknown elements');
    }
    for (const bad of [{ resourceTypeFilter: 0 }, { patternTypeFilter: 0 }, { operation: 0 }, { permissionType: 0 }]) {
      await expect(admin.call(29, 1, filterOf(bad))).rejects.toThrow('connection closed: DescribeAclsRequest contains UNKNOWN elements');
      await expect(admin.call(31, 1, { filters: [filterOf(bad)] })).rejects.toThrow('connection closed: Filters contain UNKNOWN elements');
    }
  });

  test('a principal without ALTER / DESCRIBE on the cluster: CLUSTER_AUTHORIZATION_FAILED at every version, until an ACL grants it', async () => {
    const notAuthorized = expect.stringMatching(/^Request\(apiKey=\d+, .*principal=User:alice, .*\) is not authorized\.$/);
    for (const v of versions(30)) {
      const res = await alice.call(30, v, { creations: [creation(), creation({ resourceName: 'x' })] });
      expect(res.results).toEqual([
        { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: notAuthorized },
        { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: notAuthorized },
      ]);
    }
    for (const v of versions(29)) {
      expect(await alice.call(29, v, at(v, describeAll))).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: notAuthorized, resources: [] });
    }
    for (const v of versions(31)) {
      const res = await alice.call(31, v, { filters: [at(v, describeAll)] });
      expect(res.filterResults).toEqual([{ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: notAuthorized, matchingAcls: [] }]);
    }
    expect(broker.server.metadata.aclCount).toBe(0);
    // ALTER on the cluster implies DESCRIBE: alice may now use all three.
    expect((await admin.call(30, 3, { creations: [creation({ resourceType: Res.CLUSTER, resourceName: 'kafka-cluster', operation: Op.ALTER })] })).results).toEqual([OK]);
    expect((await alice.call(30, 3, { creations: [creation()] })).results).toEqual([OK]);
    expect((await alice.call(29, 3, describeAll)).resources).toHaveLength(2);
    expect((await alice.call(31, 3, { filters: [describeAll] })).filterResults[0].matchingAcls).toHaveLength(2);
    // Having deleted its own grant, alice is refused again.
    expect((await alice.call(29, 3, describeAll)).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});

describe('a broker without an authorizer', () => {
  let broker: RunningBroker;
  const client = clientAs(() => broker.server, null);

  beforeAll(async () => {
    broker = await startBroker({ logLevel: 'error' });
  });
  afterAll(async () => {
    await broker?.close();
  });

  test('SECURITY_DISABLED at every version, with Kafka\'s messages', async () => {
    for (const v of versions(30)) {
      expect((await client.call(30, v, { creations: [creation(), creation()] })).results).toEqual([
        { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' },
        { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' },
      ]);
    }
    for (const v of versions(29)) {
      expect(await client.call(29, v, at(v, describeAll))).toMatchObject({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker', resources: [] });
    }
    for (const v of versions(31)) {
      expect((await client.call(31, v, { filters: [at(v, describeAll)] })).filterResults).toEqual([{ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.', matchingAcls: [] }]);
    }
    expect(broker.server.metadata.aclCount).toBe(0);
  });
});

describe('the controller listener', () => {
  let dir: string;
  let controller: ControllerServer;
  let bare: ControllerServer;
  const admin = clientAs(() => controller, null, 'CONTROLLER');
  const bob = clientAs(() => controller, 'bob', 'CONTROLLER');
  const noAuthorizer = clientAs(() => bare, null, 'CONTROLLER');

  const start = (sub: string, props: Record<string, string>) => startTestController(path.join(dir, sub), { props });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-acl-ctl-'));
    controller = await start('a', { 'authorizer.class.name': STANDARD, 'super.users': 'User:ANONYMOUS' });
    bare = await start('b', {});
  });
  afterAll(async () => {
    await controller?.shutdown();
    await bare?.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('serves CreateAcls, DescribeAcls and DeleteAcls at every version from its own image', async () => {
    const h = (key: number) => CONTROLLER_HANDLERS.find((x) => x.apiKey === key)!;
    // One range for the three APIs on the controller listener too.
    expect([29, 30, 31].map((k) => [h(k).minVersion, h(k).maxVersion])).toEqual([29, 30, 31].map((k) => [versions(k)[0], versions(k).at(-1)]));
    for (const v of versions(30)) {
      const name = `ctl-${v}`;
      expect((await admin.call(30, v, { creations: [creation({ resourceName: name }), creation({ resourceName: name, resourceType: 99 })] })).results).toEqual([
        OK,
        { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid resourceType UNKNOWN' },
      ]);
      expect(controller.controller.image.aclCount).toBe(1);
      expect(controller.authorizer.authorize(
        { principal: userPrincipal('alice'), clientAddress: '127.0.0.1', listenerName: 'CONTROLLER', securityProtocol: 'PLAINTEXT', clientId: null, requestType: 0, requestVersion: 0, correlationId: 0 },
        [{ operation: Op.READ, resourceType: Res.TOPIC, resourceName: name }],
      )).toEqual(['ALLOWED']);
      const described = await admin.call(29, v, filterOf({ resourceNameFilter: name, patternTypeFilter: Pat.LITERAL }));
      expect(described.resources.map((r: any) => r.resourceName)).toEqual([name]);
      expect((await bob.call(29, v, at(v, describeAll))).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      expect((await bob.call(30, v, { creations: [creation()] })).results[0].errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      expect((await bob.call(31, v, { filters: [at(v, describeAll)] })).filterResults[0].errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const deleted = await admin.call(31, v, { filters: [filterOf({ patternTypeFilter: Pat.LITERAL })] });
      expect(deleted.filterResults[0].matchingAcls.map((m: any) => m.resourceName)).toEqual([name]);
      expect(controller.controller.image.aclCount).toBe(0);

      expect((await noAuthorizer.call(30, v, { creations: [creation()] })).results).toEqual([{ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' }]);
      expect((await noAuthorizer.call(29, v, at(v, describeAll))).errorCode).toBe(ErrorCode.SECURITY_DISABLED);
      expect((await noAuthorizer.call(31, v, { filters: [at(v, describeAll)] })).filterResults[0].errorCode).toBe(ErrorCode.SECURITY_DISABLED);
    }
  });
});
