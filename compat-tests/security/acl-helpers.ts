/**
 * Shared pieces of the ACL suites (acls*.test.ts): KafkaJS' ACL constants and a filter matching
 * every ACL, a bounded wait for a node's metadata image to reach some ACL state (through the
 * image's ACL listener: no polling), an AuthorizableRequestContext for asking a node's authorizer
 * directly, and the protocol error type a KafkaJS admin call fails with.
 */
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from 'kafkajs';
import type { MetadataCache } from '../../metadata/metadata-cache';
import type { AclBinding, AuthorizableRequestContext } from '../../metadata/authorizer/authorizer';
import { userPrincipal } from '../../common/kafka-principal';
import { ApiKey } from '../../protocol/generated';

export { AclOperationTypes as Op, AclPermissionTypes as Perm, AclResourceTypes as Res, ResourcePatternTypes as Pat };

/** A KafkaJS ACL filter that matches every ACL. */
export const anyFilter = { resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY };

/** The protocol error type (e.g. CLUSTER_AUTHORIZATION_FAILED) `p` rejects with; fails if it resolves. */
export async function errorType(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { type?: string }).type ?? String(e);
  }
  throw new Error('expected the call to fail');
}

/** Resolves once `predicate` holds for the image's ACLs (checked now and after every ACL change); rejects after `timeoutMs`. */
export function aclsReach(image: MetadataCache, what: string, predicate: (acls: AclBinding[]) => boolean, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    let unsubscribe: (() => void) | null = null;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      queueMicrotask(() => unsubscribe?.());
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
    unsubscribe = image.subscribeAcls(() => {
      if (predicate([...image.acls().values()])) finish();
    });
    if (done) unsubscribe();
  });
}

/** A request context as a client `user` connected from `host` would have it. */
export function contextOf(user: string, host = '127.0.0.1', requestType: number = ApiKey.Produce): AuthorizableRequestContext {
  return {
    principal: userPrincipal(user),
    clientAddress: host,
    listenerName: 'PLAINTEXT',
    securityProtocol: 'PLAINTEXT',
    clientId: 'acl-test',
    requestType,
    requestVersion: 0,
    correlationId: 0,
  };
}
