/**
 * CreateAcls (30), v0-3, on the controller listener (Kafka's ControllerApis -> AclApis): brokers
 * forward their clients' CreateAcls here, and admin clients may send it directly. The rules are
 * those of broker/handlers/create-acls.ts, with this node's authorizer deciding ALTER on the
 * CLUSTER for the principal of this connection (a forwarding broker's, so brokers' principals are
 * normally super users, as Kafka requires of them for its controller APIs), SECURITY_DISABLED when
 * the controller has no authorizer, and the Controller writing the AccessControlEntryRecords.
 */
import type { CreateAclsRequest, CreateAclsResponse } from '../../../protocol/generated/create-acls';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { createAclsResults } from '../../handlers/create-acls';

export const controllerCreateAclsHandler = defineControllerHandler<CreateAclsRequest, CreateAclsResponse>({
  apiKey: ApiKey.CreateAcls,
  name: 'CreateAcls',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, ctx, req) {
    return { results: await createAclsResults(node.authorizer, ctx, node.controller, req) };
  },
});
