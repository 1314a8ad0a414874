/**
 * DescribeAcls (29), v0-3: the ACLs matching one filter, from this node's authorizer (the ACLs of
 * its metadata image), grouped by resource pattern. Served locally, as Kafka's brokers serve it.
 *
 * Kafka's handling (DescribeAclsRequest, AclApis.handleDescribeAcls), in its order:
 * - a filter with an UNKNOWN (0) resource type, pattern type, operation or permission type is a
 *   request Kafka cannot parse: the connection is closed (v0 has no pattern field: LITERAL, and
 *   Kafka would read an ANY there as LITERAL);
 * - DESCRIBE on the CLUSTER resource, else error_code CLUSTER_AUTHORIZATION_FAILED "Request ...
 *   is not authorized." and no resources;
 * - no authorizer configured: SECURITY_DISABLED "No Authorizer is configured on the broker";
 * - otherwise the matching ACLs: ANY / null parts match everything, MATCH the ACLs that apply to
 *   the named resource (its LITERAL name, the `*` wildcard, PREFIXED prefixes). A code Kafka does
 *   not define reads as UNKNOWN and matches nothing.
 * Resources come in the authorizer's order (type, then name reversed, then pattern); Kafka groups
 * them through a HashMap, whose order is unspecified.
 */
import { ErrorCode } from '../../protocol/errors';
import type { DescribeAclsRequest, DescribeAclsResponse } from '../../protocol/generated/describe-acls';
import { ApiKey } from '../../protocol/generated';
import { AclOperation, AclPermissionType, PatternType, ResourceType, type AclBinding, type AclBindingFilter, type Authorizer } from '../../metadata/authorizer/authorizer';
import { normalizeFilter } from '../../metadata/authorizer/acl';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { CloseConnection, defineHandler } from './define-handler';

/** A request's filter fields, as DescribeAcls and DeleteAcls carry them. */
export interface WireAclFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

/** Whether Kafka's request parsing refuses the filter: an UNKNOWN (0) code in it. */
export function hasUnknownFilterElement(f: WireAclFilter): boolean {
  return (
    f.patternTypeFilter === PatternType.UNKNOWN ||
    f.resourceTypeFilter === ResourceType.UNKNOWN ||
    f.operation === AclOperation.UNKNOWN ||
    f.permissionType === AclPermissionType.UNKNOWN
  );
}

/**
 * The request's filter with its codes as sent (a forwarding broker passes them on; matching reads
 * them as Kafka's fromCode does); at v0 an ANY pattern type is LITERAL, and any other non-LITERAL
 * one closes the connection (Kafka's request parsing).
 */
export function aclFilterOf(f: WireAclFilter, version: number): AclBindingFilter {
  let patternType = f.patternTypeFilter;
  if (version === 0) {
    if (patternType === PatternType.ANY) patternType = PatternType.LITERAL;
    else if (patternType !== PatternType.LITERAL) throw new CloseConnection('Version 0 only supports literal resource pattern types');
  }
  return {
    resourceType: f.resourceTypeFilter,
    resourceName: f.resourceNameFilter,
    patternType,
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: f.operation,
    permissionType: f.permissionType,
  };
}

/** DescribeAclsResponse.aclsResources: one resource per distinct pattern, its distinct entries. */
export function aclsResources(acls: readonly AclBinding[]): DescribeAclsResponse['resources'] {
  const byPattern = new Map<string, { resource: DescribeAclsResponse['resources'][number]; entries: Set<string> }>();
  for (const a of acls) {
    const key = JSON.stringify([a.resourceType, a.resourceName, a.patternType]);
    let g = byPattern.get(key);
    if (!g) byPattern.set(key, (g = { resource: { resourceType: a.resourceType, resourceName: a.resourceName, patternType: a.patternType, acls: [] }, entries: new Set() }));
    const entryKey = JSON.stringify([a.principal, a.host, a.operation, a.permissionType]);
    if (g.entries.has(entryKey)) continue;
    g.entries.add(entryKey);
    g.resource.acls.push({ principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType });
  }
  return [...byPattern.values()].map((g) => g.resource);
}

/** The DescribeAcls answer of a node (broker or controller listener) with this authorizer. */
export function describeAclsResponse(
  authorizer: Authorizer,
  ctx: RequestContext,
  req: DescribeAclsRequest,
): { errorCode: number; errorMessage: string | null; resources: DescribeAclsResponse['resources'] } {
  if (hasUnknownFilterElement(req)) throw new CloseConnection('DescribeAclsRequest contains UNKNOWN elements');
  const filter = aclFilterOf(req, ctx.apiVersion);
  const auth = authHelper(authorizer, ctx);
  if (!auth.authorizeCluster(AclOperation.DESCRIBE)) {
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: requestNotAuthorizedMessage(ctx), resources: [] };
  }
  if (!auth.enabled || !authorizer.acls) {
    return { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker', resources: [] };
  }
  return { errorCode: ErrorCode.NONE, errorMessage: null, resources: aclsResources(authorizer.acls(normalizeFilter(filter))) };
}

export const describeAclsHandler = defineHandler<DescribeAclsRequest, DescribeAclsResponse>({
  apiKey: ApiKey.DescribeAcls,
  name: 'DescribeAcls',
  minVersion: 0,
  maxVersion: 3,
  handle(broker, ctx, req) {
    return describeAclsResponse(broker.authorizer, ctx, req);
  },
});
