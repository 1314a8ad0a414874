/**
 * ACLs in a 3-broker cluster with the StandardAuthorizer on every node (brokers and controller,
 * `super.users=User:ANONYMOUS`, PLAINTEXT):
 * - CreateAcls sent to one broker (KafkaJS' admin, and krill's own client at every version to a
 *   chosen broker) is forwarded to the controller, which writes AccessControlEntryRecords; every
 *   broker's metadata image and authorizer, and the controller's, then have the ACL (awaited through
 *   each image's ACL listener), and every broker and the controller listener describe it alike;
 * - DeleteAcls through another broker removes it everywhere;
 * - a restarted broker and a restarted controller replay the ACLs from the metadata log.
 */
import type { Admin } from 'kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import { connect, type BrokerConnection } from '../../client/network-client';
import type { RunningCluster } from '../../broker/cluster';
import { fastCluster } from '../replication/helpers';
import { Op, Pat, Perm, Res, aclsReach, contextOf } from './acl-helpers';
import type { AclBinding } from '../../metadata/authorizer/authorizer';
import { advertisedVersions } from '../../broker/testing/dispatch-client';

const CONFIG = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' };
const anyFilter = { resourceType: Res.ANY, resourcePatternType: Pat.ANY, operation: Op.ANY, permissionType: Perm.ANY };

let cluster: RunningCluster;
let admin: Admin;
const conns: BrokerConnection[] = [];

async function connTo(hostPort: string): Promise<BrokerConnection> {
  const [host, port] = hostPort.split(':');
  const c = await connect(host, Number(port), { clientId: 'acl-cluster-test' });
  conns.push(c);
  return c;
}

/** Every node's image (brokers 0-2 and the controller) has an ACL matching `pred` (or none does). */
async function everywhere(what: string, pred: (a: AclBinding) => boolean, present = true): Promise<void> {
  const images = [...[0, 1, 2].map((id) => cluster.broker(id).server.metadata), cluster.controller.controller.image];
  await Promise.all(images.map((img, i) => aclsReach(img, `${what} on node ${i}`, (acls) => acls.some(pred) === present)));
}

const decideEverywhere = (user: string, operation: number, resourceType: number, resourceName: string) =>
  [...[0, 1, 2].map((id) => cluster.broker(id).server.authorizer), cluster.controller.authorizer].map(
    (a) => a.authorize(contextOf(user), [{ operation: operation as never, resourceType: resourceType as never, resourceName }])[0],
  );

beforeAll(async () => {
  cluster = await fastCluster({ config: CONFIG });
  admin = new Kafka({ clientId: 'acl-admin', brokers: [cluster.bootstrapServers[1]], logLevel: logLevel.NOTHING, connectionTimeout: 3_000, requestTimeout: 15_000, retry: { retries: 3 } }).admin();
  await admin.connect();
});

afterAll(async () => {
  await admin?.disconnect();
  await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  await cluster?.close();
});

test('an ACL created through one broker reaches every broker and the controller, and is deleted through another', async () => {
  expect(
    await admin.createAcls({
      acl: [{ resourceType: Res.TOPIC, resourceName: 'payments-', resourcePatternType: Pat.PREFIXED, principal: 'User:alice', host: '*', operation: Op.WRITE, permissionType: Perm.ALLOW }],
    }),
  ).toBe(true);
  const isAlice = (a: AclBinding) => a.principal === 'User:alice' && a.resourceName === 'payments-';
  await everywhere('the alice ACL', isAlice);
  expect(decideEverywhere('alice', Op.WRITE, Res.TOPIC, 'payments-eu')).toEqual(['ALLOWED', 'ALLOWED', 'ALLOWED', 'ALLOWED']);
  expect(decideEverywhere('alice', Op.WRITE, Res.TOPIC, 'refunds')).toEqual(['DENIED', 'DENIED', 'DENIED', 'DENIED']);
  expect(decideEverywhere('bob', Op.WRITE, Res.TOPIC, 'payments-eu')).toEqual(['DENIED', 'DENIED', 'DENIED', 'DENIED']);

  // Every broker and the controller listener describe it alike.
  for (const address of [...cluster.bootstrapServers, cluster.controllerAddress]) {
    const c = await connTo(address);
    const res = await c.send('DescribeAcls', 3, {
      resourceTypeFilter: Res.TOPIC,
      resourceNameFilter: 'payments-eu',
      patternTypeFilter: Pat.MATCH,
      principalFilter: null,
      hostFilter: null,
      operation: Op.ANY,
      permissionType: Perm.ANY,
    });
    expect([address, res.errorCode, res.resources]).toEqual([
      address,
      0,
      [{ resourceType: Res.TOPIC, resourceName: 'payments-', patternType: Pat.PREFIXED, acls: [{ principal: 'User:alice', host: '*', operation: Op.WRITE, permissionType: Perm.ALLOW }] }],
    ]);
  }

  // Deleted through broker 2 (krill's client, so the request goes to that broker).
  const c2 = await connTo(cluster.bootstrapServers[2]);
  const del = await c2.send('DeleteAcls', 2, {
    filters: [{ resourceTypeFilter: Res.TOPIC, resourceNameFilter: null, patternTypeFilter: Pat.ANY, principalFilter: 'User:alice', hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY }],
  });
  expect(del.filterResults.map((f) => [f.errorCode, f.matchingAcls.map((m) => [m.resourceName, m.patternType, m.principal, m.operation])])).toEqual([[0, [['payments-', Pat.PREFIXED, 'User:alice', Op.WRITE]]]]);
  await everywhere('no alice ACL', isAlice, false);
  expect(decideEverywhere('alice', Op.WRITE, Res.TOPIC, 'payments-eu')).toEqual(['DENIED', 'DENIED', 'DENIED', 'DENIED']);
});

test('CreateAcls and DeleteAcls forwarded at every version, each through a different broker', async () => {
  for (const v of advertisedVersions(30)) {
    const via = cluster.bootstrapServers[v % 3];
    const c = await connTo(via);
    const name = `v${v}-topic`;
    const created = await c.send('CreateAcls', v, {
      creations: [
        { resourceType: Res.TOPIC, resourceName: name, resourcePatternType: Pat.LITERAL, principal: 'User:carol', host: '*', operation: Op.READ, permissionType: Perm.ALLOW },
        { resourceType: Res.CLUSTER, resourceName: 'not-the-cluster', resourcePatternType: Pat.LITERAL, principal: 'User:carol', host: '*', operation: Op.ALTER, permissionType: Perm.ALLOW },
        { resourceType: 99, resourceName: name, resourcePatternType: Pat.LITERAL, principal: 'User:carol', host: '*', operation: Op.READ, permissionType: Perm.ALLOW },
      ],
    });
    expect([via, created.results]).toEqual([
      via,
      [
        { errorCode: 0, errorMessage: null },
        { errorCode: 42, errorMessage: 'The only valid name for the CLUSTER resource is kafka-cluster' },
        { errorCode: 42, errorMessage: 'Invalid resourceType UNKNOWN' },
      ],
    ]);
    // The forwarding broker has applied the write when it answers.
    expect(cluster.broker(v % 3).server.authorizer.authorize(contextOf('carol'), [{ operation: Op.READ as never, resourceType: Res.TOPIC as never, resourceName: name }])).toEqual(['ALLOWED']);
    await everywhere(`carol's ${name} ACL`, (a) => a.resourceName === name);
    const other = await connTo(cluster.bootstrapServers[(v + 1) % 3]);
    const deleted = await other.send('DeleteAcls', v, {
      filters: [
        { resourceTypeFilter: Res.TOPIC, resourceNameFilter: name, patternTypeFilter: Pat.LITERAL, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY },
        { resourceTypeFilter: 77, resourceNameFilter: null, patternTypeFilter: Pat.LITERAL, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: Perm.ANY },
      ],
    });
    expect(deleted.filterResults.map((f) => [f.errorCode, f.errorMessage, f.matchingAcls.length])).toEqual([
      [0, null, 1],
      [42, 'Unknown patternFilter.', 0],
    ]);
    await everywhere(`no ${name} ACL`, (a) => a.resourceName === name, false);
  }
});

test('a restarted broker and a restarted controller replay the ACLs', async () => {
  expect(
    await admin.createAcls({
      acl: [{ resourceType: Res.GROUP, resourceName: '*', resourcePatternType: Pat.LITERAL, principal: 'User:*', host: '*', operation: Op.READ, permissionType: Perm.ALLOW }],
    }),
  ).toBe(true);
  const wildcardGroup = (a: AclBinding) => a.resourceType === Res.GROUP && a.resourceName === '*';
  await everywhere('the group wildcard ACL', wildcardGroup);
  await cluster.stopBroker(0);
  const restarted = await cluster.startBroker(0);
  // The broker replayed its metadata before it serves: the ACL is in its image and authorizer at once.
  expect([...restarted.server.metadata.acls().values()].some(wildcardGroup)).toBe(true);
  expect(restarted.server.authorizer.authorize(contextOf('dave'), [{ operation: Op.READ as never, resourceType: Res.GROUP as never, resourceName: 'any-group' }])).toEqual(['ALLOWED']);
  await cluster.restartController();
  expect([...cluster.controller.controller.image.acls().values()].some(wildcardGroup)).toBe(true);
  expect(decideEverywhere('dave', Op.READ, Res.GROUP, 'g')).toEqual(['ALLOWED', 'ALLOWED', 'ALLOWED', 'ALLOWED']);
  // And the restarted controller still writes: the ACL goes away everywhere.
  const { filterResponses } = await admin.deleteAcls({ filters: [anyFilter] });
  expect(filterResponses[0].matchingAcls).toHaveLength(1);
  await everywhere('no group wildcard ACL', wildcardGroup, false);
});
