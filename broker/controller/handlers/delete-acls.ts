/**
 * DeleteAcls (31), v0-3, on the controller listener (Kafka's ControllerApis -> AclApis): brokers
 * forward their clients' DeleteAcls here, and admin clients may send it directly. The rules are
 * those of broker/handlers/delete-acls.ts, with this node's authorizer deciding ALTER on the
 * CLUSTER for the principal of this connection, SECURITY_DISABLED when the controller has no
 * authorizer, and the Controller writing the RemoveAccessControlEntryRecords.
 */
import type { DeleteAclsRequest, DeleteAclsResponse } from '../../../protocol/generated/delete-acls';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { deleteAclsResponse, deleteAclsResults } from '../../handlers/delete-acls';

export const controllerDeleteAclsHandler = defineControllerHandler<DeleteAclsRequest, DeleteAclsResponse>({
  apiKey: ApiKey.DeleteAcls,
  name: 'DeleteAcls',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, ctx, req) {
    return deleteAclsResponse(await deleteAclsResults(node.authorizer, ctx, node.controller, req));
  },
});
