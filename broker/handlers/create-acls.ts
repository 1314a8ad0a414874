/**
 * CreateAcls (30), v0-3: adds ACLs through the controller, which validates them
 * (metadata/controller/acl-control-manager.ts) and writes AccessControlEntryRecords; every node's
 * StandardAuthorizer then applies them from its metadata image. A combined node calls its
 * in-process controller; a cluster broker forwards the bindings to the controller listener
 * (RemoteController) and relays its answer, as a KRaft broker forwards CreateAcls.
 *
 * Kafka's handling (CreateAclsRequest, AclApis.handleCreateAcls), in its order:
 * - a creation with an UNKNOWN (0) resource type, pattern type, operation or permission type is a
 *   request Kafka cannot parse: the connection is closed (so is a non-LITERAL pattern at v0, which
 *   cannot happen on the wire: v0 has no pattern field);
 * - ALTER on the CLUSTER resource, else every result CLUSTER_AUTHORIZATION_FAILED "Request ... is
 *   not authorized.";
 * - no authorizer configured: every result SECURITY_DISABLED "No Authorizer is configured.";
 * - a creation with resource type ANY, pattern type ANY or MATCH, operation ANY or permission type
 *   ANY cannot be made into an ACL binding (Kafka's constructors throw): every result of the
 *   request is UNKNOWN_SERVER_ERROR, without a message;
 * - per creation, INVALID_REQUEST "The only valid name for the CLUSTER resource is kafka-cluster"
 *   or "Invalid empty resource name"; the others go to the controller, whose results (the
 *   validateNewAcl errors, POLICY_VIOLATION over 10000 new ACLs, success for an ACL that exists)
 *   are answered in request order.
 * Codes Kafka does not define (a resource type 99) are UNKNOWN after decoding (fromCode) and fail
 * in the controller's validation ("Invalid resourceType UNKNOWN").
 *
 * Where krill differs: a Kafka broker forwards CreateAcls even when it has no authorizer of its
 * own and lets the controller decide; krill's broker answers SECURITY_DISABLED itself, since it is
 * the broker that authorizes its client (krill forwards without Kafka's envelope, so the controller
 * sees the broker, not the client).
 */
import { ErrorCode } from '../../protocol/errors';
import type { CreateAclsRequest, CreateAclsResponse } from '../../protocol/generated/create-acls';
import { ApiKey } from '../../protocol/generated';
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType, type AclBinding, type Authorizer } from '../../metadata/authorizer/authorizer';
import { normalizeBinding } from '../../metadata/authorizer/acl';
import type { ControllerApi } from '../../metadata/controller/controller';
import type { AclCreateResult } from '../../metadata/controller/acl-control-manager';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { CloseConnection, defineHandler } from './define-handler';

/** SecurityDisabledException's message where an ACL change finds no authorizer (AclApis). */
export const NO_AUTHORIZER_MESSAGE = 'No Authorizer is configured.';

/** CreateAclsRequest.validate: what Kafka refuses while parsing (it closes the connection). */
function validateCreateAclsRequest(req: CreateAclsRequest, version: number): void {
  if (version === 0 && req.creations.some((c) => c.resourcePatternType !== PatternType.LITERAL)) {
    throw new CloseConnection('CreateAcls v0 only supports literal resource pattern types');
  }
  const unknown = req.creations.some(
    (c) => c.resourcePatternType === PatternType.UNKNOWN || c.resourceType === ResourceType.UNKNOWN || c.permissionType === AclPermissionType.UNKNOWN || c.operation === AclOperation.UNKNOWN,
  );
  if (unknown) throw new CloseConnection('CreatableAcls contain unknown elements');
}

/** Whether Kafka's ResourcePattern / AccessControlEntry constructors refuse the binding (they throw). */
function notABinding(b: AclBinding): boolean {
  return (
    b.resourceType === ResourceType.ANY ||
    b.patternType === PatternType.ANY ||
    b.patternType === PatternType.MATCH ||
    b.operation === AclOperation.ANY ||
    b.permissionType === AclPermissionType.ANY
  );
}

/** AclApis.handleCreateAcls's own checks of one binding, before the controller's. */
function precheck(b: AclBinding): AclCreateResult | null {
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE_NAME) {
    return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `The only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE_NAME}` };
  }
  if (b.resourceName === '') return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Invalid empty resource name' };
  return null;
}

/**
 * The results of a CreateAcls request, one per creation in order, for the broker and the
 * controller listener alike: `authorizer` is the node's, `controller` the one that writes.
 */
export async function createAclsResults(
  authorizer: Authorizer,
  ctx: RequestContext,
  controller: Pick<ControllerApi, 'createAcls'>,
  req: CreateAclsRequest,
): Promise<AclCreateResult[]> {
  validateCreateAclsRequest(req, ctx.apiVersion);
  const all = (errorCode: number, errorMessage: string | null): AclCreateResult[] => req.creations.map(() => ({ errorCode, errorMessage }));
  const auth = authHelper(authorizer, ctx);
  if (!auth.authorizeCluster(AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, requestNotAuthorizedMessage(ctx));
  if (!auth.enabled) return all(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE);
  // The codes as sent: a forwarding broker passes on what its client wrote (Kafka forwards the
  // request itself); the checks here read them as Kafka's fromCode does.
  const bindings: AclBinding[] = req.creations.map((c) => ({
    resourceType: c.resourceType,
    resourceName: c.resourceName,
    patternType: c.resourcePatternType,
    principal: c.principal,
    host: c.host,
    operation: c.operation,
    permissionType: c.permissionType,
  }));
  const read = bindings.map(normalizeBinding);
  if (read.some(notABinding)) return all(ErrorCode.UNKNOWN_SERVER_ERROR, null);
  const errors = read.map(precheck);
  const valid = bindings.filter((_, i) => errors[i] === null);
  const created = valid.length > 0 ? await controller.createAcls(valid) : [];
  let next = 0;
  return errors.map((e) => e ?? created[next++] ?? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null });
}

export const createAclsHandler = defineHandler<CreateAclsRequest, CreateAclsResponse>({
  apiKey: ApiKey.CreateAcls,
  name: 'CreateAcls',
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, ctx, req) {
    return { results: await createAclsResults(broker.authorizer, ctx, broker.controller, req) };
  },
});
