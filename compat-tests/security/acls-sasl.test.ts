/**
 * ACLs for real principals: one embedded broker whose only listener is SASL_PLAINTEXT (PLAIN, users
 * admin and alice), with the StandardAuthorizer and `super.users=User:admin`, driven by KafkaJS'
 * admin client as each user:
 * - alice may not describe or change ACLs (CLUSTER_AUTHORIZATION_FAILED) until admin grants her
 *   DESCRIBE, then ALTER, on the cluster (ALTER implies DESCRIBE); a DENY then takes ALTER away again
 *   whatever the ALLOW says;
 * - the authorizer log (`kafka.authorizer.logger`) has Kafka's line for alice's denied DescribeAcls.
 */
import type { Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ADMIN, ALICE, kafkaJs, saslBrokerConfig } from './sasl-helpers';
import { Op, Pat, Perm, Res, anyFilter, errorType } from './acl-helpers';

const CONFIG = saslBrokerConfig(['PLAIN'], { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:admin' });
const clusterAcl = (operation: number, permissionType: number = Perm.ALLOW) => ({
  resourceType: Res.CLUSTER,
  resourceName: 'kafka-cluster',
  resourcePatternType: Pat.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation,
  permissionType,
});
const topicAcl = { resourceType: Res.TOPIC, resourceName: 'alice-', resourcePatternType: Pat.PREFIXED, principal: 'User:alice', host: '*', operation: Op.WRITE, permissionType: Perm.ALLOW };

let broker: RunningBroker;
let admin: Admin;
let alice: Admin;
const auditLines: string[] = [];

beforeAll(async () => {
  // Warnings and up from everything, plus the authorizer log at its own level (info: denials).
  const sink = (line: string) => {
    if (line.includes('kafka.authorizer.logger:')) auditLines.push(line);
    else if (/\] (WARN|ERROR) /.test(line)) process.stderr.write(line + '\n');
  };
  broker = await startBroker({ config: CONFIG, overrides: ['listeners=SASL_PLAINTEXT://127.0.0.1:0'], logger: new Logger('krill[1]', 'info', sink) });
  admin = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', ...ADMIN }, { clientId: 'acl-admin' }).admin();
  alice = kafkaJs(broker.bootstrapServers, { mechanism: 'plain', ...ALICE }, { clientId: 'acl-alice' }).admin();
  await admin.connect();
  await alice.connect();
});

afterAll(async () => {
  await alice?.disconnect();
  await admin?.disconnect();
  await broker?.close();
});

test('alice needs DESCRIBE / ALTER on the cluster, granted by the super user; a DENY wins', async () => {
  expect(await errorType(alice.describeAcls(anyFilter))).toBe('CLUSTER_AUTHORIZATION_FAILED');
  expect(await errorType(alice.createAcls({ acl: [topicAcl] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
  expect(auditLines.some((l) =>
    l.includes(
      'INFO krill[1].kafka.authorizer.logger: Principal = User:alice is Denied operation = DESCRIBE from host = 127.0.0.1 on resource = Cluster:LITERAL:kafka-cluster for request = DescribeAcls with resourceRefCount = 1 based on rule DefaultDeny',
    ),
  )).toBe(true);

  expect(await admin.createAcls({ acl: [clusterAcl(Op.DESCRIBE)] })).toBe(true);
  const seen = await alice.describeAcls(anyFilter);
  expect(seen.resources.map((r: any) => [r.resourceType, r.resourceName, r.acls.map((a: any) => [a.principal, a.operation])])).toEqual([[Res.CLUSTER, 'kafka-cluster', [['User:alice', Op.DESCRIBE]]]]);
  // DESCRIBE does not imply ALTER.
  expect(await errorType(alice.createAcls({ acl: [topicAcl] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');

  expect(await admin.createAcls({ acl: [clusterAcl(Op.ALTER)] })).toBe(true);
  expect(await alice.createAcls({ acl: [topicAcl] })).toBe(true);
  const decide = (op: number, name: string) =>
    broker.server.authorizer.authorize(
      { principal: { principalType: 'User', name: 'alice' }, clientAddress: '127.0.0.1', listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT', clientId: null, requestType: 0, requestVersion: 0, correlationId: 0 },
      [{ operation: op as never, resourceType: Res.TOPIC as never, resourceName: name }],
    )[0];
  expect(decide(Op.WRITE, 'alice-events')).toBe('ALLOWED');
  expect(decide(Op.DESCRIBE, 'alice-events')).toBe('ALLOWED');
  expect(decide(Op.READ, 'alice-events')).toBe('DENIED');

  // A DENY beats her ALLOW: she may describe, but no longer change ACLs.
  expect(await admin.createAcls({ acl: [clusterAcl(Op.ALTER, Perm.DENY)] })).toBe(true);
  expect(await errorType(alice.deleteAcls({ filters: [anyFilter] }))).toBe('CLUSTER_AUTHORIZATION_FAILED');
  expect((await alice.describeAcls(anyFilter)).resources).toHaveLength(2);
  const { filterResponses } = await admin.deleteAcls({ filters: [anyFilter] });
  expect(filterResponses[0].matchingAcls).toHaveLength(4);
  expect(await errorType(alice.describeAcls(anyFilter))).toBe('CLUSTER_AUTHORIZATION_FAILED');
});
