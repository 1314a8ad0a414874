/**
 * DescribeAcls (29), v0-3, on the controller listener (Kafka's ControllerApis serves it too): the
 * ACLs of the controller's own image, through the controller node's authorizer. The rules are
 * those of broker/handlers/describe-acls.ts (DESCRIBE on the CLUSTER for the principal of this
 * connection; SECURITY_DISABLED when the controller has no authorizer).
 */
import type { DescribeAclsRequest, DescribeAclsResponse } from '../../../protocol/generated/describe-acls';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { describeAclsResponse } from '../../handlers/describe-acls';

export const controllerDescribeAclsHandler = defineControllerHandler<DescribeAclsRequest, DescribeAclsResponse>({
  apiKey: ApiKey.DescribeAcls,
  name: 'DescribeAcls',
  minVersion: 0,
  maxVersion: 3,
  handle(node, ctx, req) {
    return describeAclsResponse(node.authorizer, ctx, req);
  },
});
