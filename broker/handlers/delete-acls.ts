/**
 * DeleteAcls (31), v0-3: removes every ACL each filter matches, through the controller
 * (metadata/controller/acl-control-manager.ts writes the RemoveAccessControlEntryRecords). A
 * combined node calls its in-process controller; a cluster broker forwards the filters to the
 * controller listener (RemoteController) and relays its answer, as a KRaft broker forwards
 * DeleteAcls.
 *
 * Kafka's handling (DeleteAclsRequest, AclApis.handleDeleteAcls), in its order:
 * - a filter with an UNKNOWN (0) resource type, pattern type, operation or permission type is a
 *   request Kafka cannot parse: the connection is closed (v0 has no pattern field: LITERAL);
 * - ALTER on the CLUSTER resource, else every filter result CLUSTER_AUTHORIZATION_FAILED
 *   "Request ... is not authorized.";
 * - no authorizer configured: every filter result SECURITY_DISABLED "No Authorizer is configured.";
 * - otherwise the controller's results, one per filter in order: INVALID_REQUEST "Unknown
 *   patternFilter." / "Unknown entryFilter." for a filter with a code Kafka does not define, else
 *   the ACLs it matched (each with error code NONE); an ACL two filters match is listed by both.
 * The same difference from Kafka as CreateAcls: a broker without an authorizer answers
 * SECURITY_DISABLED itself instead of forwarding.
 */
import { ErrorCode } from '../../protocol/errors';
import type { DeleteAclsRequest, DeleteAclsResponse } from '../../protocol/generated/delete-acls';
import { ApiKey } from '../../protocol/generated';
import { AclOperation, type Authorizer } from '../../metadata/authorizer/authorizer';
import type { ControllerApi } from '../../metadata/controller/controller';
import type { AclDeleteResult } from '../../metadata/controller/acl-control-manager';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { CloseConnection, defineHandler } from './define-handler';
import { NO_AUTHORIZER_MESSAGE } from './create-acls';
import { aclFilterOf, hasUnknownFilterElement } from './describe-acls';

/** The results of a DeleteAcls request, one per filter in order (broker and controller listener alike). */
export async function deleteAclsResults(
  authorizer: Authorizer,
  ctx: RequestContext,
  controller: Pick<ControllerApi, 'deleteAcls'>,
  req: DeleteAclsRequest,
): Promise<AclDeleteResult[]> {
  if (req.filters.some(hasUnknownFilterElement)) throw new CloseConnection('Filters contain UNKNOWN elements');
  const filters = req.filters.map((f) => aclFilterOf(f, ctx.apiVersion));
  const all = (errorCode: number, errorMessage: string): AclDeleteResult[] => filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] }));
  const auth = authHelper(authorizer, ctx);
  if (!auth.authorizeCluster(AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, requestNotAuthorizedMessage(ctx));
  if (!auth.enabled) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
  return filters.length > 0 ? controller.deleteAcls(filters) : [];
}

/** DeleteAclsResponse.filterResult for each result. */
export function deleteAclsResponse(results: readonly AclDeleteResult[]): { filterResults: DeleteAclsResponse['filterResults'] } {
  return {
    filterResults: results.map((r) => ({
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      matchingAcls: r.matchingAcls.map((m) => ({
        errorCode: m.errorCode,
        errorMessage: m.errorMessage,
        resourceType: m.acl.resourceType,
        resourceName: m.acl.resourceName,
        patternType: m.acl.patternType,
        principal: m.acl.principal,
        host: m.acl.host,
        operation: m.acl.operation,
        permissionType: m.acl.permissionType,
      })),
    })),
  };
}

export const deleteAclsHandler = defineHandler<DeleteAclsRequest, DeleteAclsResponse>({
  apiKey: ApiKey.DeleteAcls,
  name: 'DeleteAcls',
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, ctx, req) {
    return deleteAclsResponse(await deleteAclsResults(broker.authorizer, ctx, broker.controller, req));
  },
});
