/**
 * AuthHelper on its own: the context the authorizer reads, one action per distinct name with its
 * reference count and Kafka's log flags, request order kept when splitting, the KIP-430 bit fields
 * (Utils.to32BitField of the allowed supported operations, asked without logging), and no call at
 * all without an authorizer.
 */
import { AuthHelper, AUTHORIZED_OPERATIONS_OMITTED, SUPPORTED_OPERATIONS, authorizableContext, clientAddress, requestNotAuthorizedMessage, to32BitField } from './authorize';
import { ScriptedAuthorizer } from './testing/scripted-authorizer';
import { ALLOW_ALL, AclOperation, ResourceType, type Action, type Authorizer } from '../../metadata/authorizer/authorizer';
import { userPrincipal } from '../../common/kafka-principal';
import type { RequestContext } from '../network/request-context';

function context(remoteAddress = '127.0.0.1'): RequestContext {
  return {
    apiKey: 3,
    apiVersion: 12,
    correlationId: 42,
    clientId: 'app',
    connection: { id: 7, remoteAddress, remotePort: 5555, localPort: 9092, listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT', principal: userPrincipal('alice'), attributes: new Map() },
    receivedAtMs: 0,
    requestBytes: 10,
    onResponseSent: () => {},
    parked: () => {},
    principal: userPrincipal('alice'),
    throttle: () => {},
    requestThrottleMs: () => 0,
  };
}

describe('AuthHelper', () => {
  test('the authorizable context carries the principal, the client address, the listener and the request header', () => {
    expect(authorizableContext(context('::ffff:10.0.0.5'))).toEqual({
      principal: { principalType: 'User', name: 'alice' },
      clientAddress: '10.0.0.5',
      listenerName: 'SASL_PLAINTEXT',
      securityProtocol: 'SASL_PLAINTEXT',
      clientId: 'app',
      requestType: 3,
      requestVersion: 12,
      correlationId: 42,
    });
    expect(clientAddress('::1')).toBe('0:0:0:0:0:0:0:1'); // Java's getHostAddress form, as ACL hosts are written
    expect(requestNotAuthorizedMessage(context())).toMatch(/^Request\(apiKey=3, apiVersion=12, correlationId=42, clientId=app, principal=User:alice, .*\) is not authorized\.$/);
  });

  test('authorize and authorizeCluster ask one LITERAL action with Kafka log flags', () => {
    const authz = new ScriptedAuthorizer().allow(AclOperation.READ, ResourceType.TOPIC, 'a').allow(AclOperation.DESCRIBE, ResourceType.CLUSTER, 'kafka-cluster');
    const auth = new AuthHelper(authz, context());
    expect(auth.authorize(AclOperation.READ, ResourceType.TOPIC, 'a')).toBe(true);
    expect(auth.authorize(AclOperation.READ, ResourceType.TOPIC, 'b', { logIfDenied: false })).toBe(false);
    expect(auth.authorizeCluster(AclOperation.DESCRIBE)).toBe(true);
    expect(auth.authorizeCluster(AclOperation.ALTER)).toBe(false);
    expect(authz.asked).toEqual([
      { operation: AclOperation.READ, resourceType: ResourceType.TOPIC, resourceName: 'a', logIfAllowed: true, logIfDenied: true, principal: 'User:alice' },
      { operation: AclOperation.READ, resourceType: ResourceType.TOPIC, resourceName: 'b', logIfAllowed: true, logIfDenied: false, principal: 'User:alice' },
      { operation: AclOperation.DESCRIBE, resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', logIfAllowed: true, logIfDenied: true, principal: 'User:alice' },
      { operation: AclOperation.ALTER, resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', logIfAllowed: true, logIfDenied: true, principal: 'User:alice' },
    ]);
  });

  test('filterByAuthorized asks each name once with its reference count, in one call', () => {
    const calls: (readonly Action[])[] = [];
    const authz: Authorizer = {
      authorize: (_ctx, actions) => {
        calls.push(actions);
        return actions.map((a) => (a.resourceName === 'x' ? 'ALLOWED' : 'DENIED'));
      },
      authorizeByResourceType: () => 'DENIED',
    };
    const auth = new AuthHelper(authz, context());
    const topics = [{ name: 'x' }, { name: 'y' }, { name: 'x' }, { name: 'x' }];
    expect([...auth.filterByAuthorized(AclOperation.WRITE, ResourceType.TOPIC, topics, (t) => t.name, { logIfAllowed: false })]).toEqual(['x']);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toEqual([
      { operation: AclOperation.WRITE, resourceType: ResourceType.TOPIC, resourceName: 'x', logIfAllowed: false, logIfDenied: true, resourceReferenceCount: 3 },
      { operation: AclOperation.WRITE, resourceType: ResourceType.TOPIC, resourceName: 'y', logIfAllowed: false, logIfDenied: true, resourceReferenceCount: 1 },
    ]);
    expect(auth.filterByAuthorized(AclOperation.WRITE, ResourceType.TOPIC, [], (t: { name: string }) => t.name).size).toBe(0);
    expect(calls).toHaveLength(1);
    const [yes, no] = auth.partitionByAuthorized(AclOperation.WRITE, ResourceType.TOPIC, topics, (t) => t.name);
    expect(yes).toEqual([topics[0], topics[2], topics[3]]);
    expect(no).toEqual([topics[1]]);
  });

  test('authorizeByResourceType goes to the authorizer', () => {
    const authz = new ScriptedAuthorizer().allow(AclOperation.WRITE, ResourceType.TOPIC, 'only-this');
    const auth = new AuthHelper(authz, context());
    expect(auth.authorizeByResourceType(AclOperation.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(auth.authorizeByResourceType(AclOperation.READ, ResourceType.TOPIC)).toBe(false);
    expect(authz.askedByResourceType).toEqual([
      { operation: AclOperation.WRITE, resourceType: ResourceType.TOPIC },
      { operation: AclOperation.READ, resourceType: ResourceType.TOPIC },
    ]);
  });

  test('authorizedOperations is the bit field of the allowed supported operations, asked without logging', () => {
    expect(to32BitField([3, 6, 8])).toBe(0b1_0100_1000);
    expect(() => to32BitField([32])).toThrow(RangeError);
    expect(AUTHORIZED_OPERATIONS_OMITTED).toBe(-(2 ** 31));
    const authz = new ScriptedAuthorizer().allow(AclOperation.READ, ResourceType.TOPIC, 't').allow(AclOperation.DESCRIBE, ResourceType.TOPIC, 't').allow(AclOperation.READ, ResourceType.TOPIC, 'other');
    const auth = new AuthHelper(authz, context());
    expect(auth.authorizedOperations(ResourceType.TOPIC, 't')).toBe((1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE));
    expect(authz.asked.map((a) => a.operation)).toEqual([...SUPPORTED_OPERATIONS.get(ResourceType.TOPIC)!]);
    expect(authz.asked.every((a) => a.logIfAllowed === false && a.logIfDenied === false && a.resourceName === 't')).toBe(true);
    expect(auth.authorizedOperations(ResourceType.GROUP, 'g')).toBe(0);
    expect(() => auth.authorizedOperations(ResourceType.ANY, 'x')).toThrow();
  });

  test('without an authorizer every check passes and the supported operations are reported, as Kafka with authorizer = None', () => {
    const auth = new AuthHelper(ALLOW_ALL, context());
    expect(auth.enabled).toBe(false);
    expect(auth.authorize(AclOperation.ALTER, ResourceType.CLUSTER, 'kafka-cluster')).toBe(true);
    expect(auth.authorizeByResourceType(AclOperation.WRITE, ResourceType.TOPIC)).toBe(true);
    expect([...auth.filterByAuthorized(AclOperation.READ, ResourceType.TOPIC, ['a', 'b', 'a'], (n) => n)]).toEqual(['a', 'b']);
    expect(auth.authorizedOperations(ResourceType.CLUSTER, 'kafka-cluster')).toBe(to32BitField([5, 7, 8, 9, 10, 11, 12]));
    expect(auth.authorizedOperations(ResourceType.GROUP, 'g')).toBe(to32BitField([3, 6, 8, 10, 11]));
    expect(auth.authorizedOperations(ResourceType.TOPIC, 't')).toBe(to32BitField([3, 4, 5, 6, 7, 8, 10, 11]));
    expect(auth.authorizedOperations(ResourceType.TRANSACTIONAL_ID, 'x')).toBe(to32BitField([4, 8]));
  });
});

describe('clientAddress: Java InetAddress.getHostAddress forms', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.0.0.7', '10.0.0.7'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['::', '0:0:0:0:0:0:0:0'],
    ['fe80::1%eth0', 'fe80:0:0:0:0:0:0:1%eth0'],
    ['2001:db8::0042:8329', '2001:db8:0:0:0:0:42:8329'],
    ['2001:0db8:0000:0000:0000:ff00:0042:8329', '2001:db8:0:0:0:ff00:42:8329'],
    ['::1.2.3.4', '0:0:0:0:0:0:102:304'],
  ])('%s -> %s', (input, expected) => {
    expect(clientAddress(input)).toBe(expected);
  });
});
