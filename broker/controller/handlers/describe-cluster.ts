/**
 * DescribeCluster (60), v1, on the controller listener. With endpoint type 2 (controllers) it names
 * this controller and the cluster id (a starting broker learns the cluster id this way); asking a
 * controller for brokers (type 1) is MISMATCHED_ENDPOINT_TYPE, as in Kafka. v0 (which can only ask
 * for brokers) is not offered here.
 * Authorization (ControllerApis.handleDescribeCluster): unlike on a broker, ALTER on the CLUSTER
 * is required (checked first), else CLUSTER_AUTHORIZATION_FAILED with Kafka's "Request ... is not
 * authorized." message and nothing else; cluster_authorized_operations as on a broker.
 */
import { ErrorCode } from '../../../protocol/errors';
import type { DescribeClusterRequest, DescribeClusterResponse } from '../../../protocol/generated/describe-cluster';
import { ApiKey } from '../../../protocol/generated';
import { authHelper, requestNotAuthorizedMessage } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { clusterAuthorizedOperations } from '../../handlers/describe-cluster';
import { defineControllerHandler } from './define';

export const controllerDescribeClusterHandler = defineControllerHandler<DescribeClusterRequest, DescribeClusterResponse>({
  apiKey: ApiKey.DescribeCluster,
  name: 'DescribeCluster',
  minVersion: 1,
  maxVersion: 1,
  handle(node, ctx, req) {
    const auth = authHelper(node.authorizer, ctx);
    if (!auth.authorizeCluster(AclOperation.ALTER)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: requestNotAuthorizedMessage(ctx) };
    }
    if (req.endpointType !== 2) {
      return {
        errorCode: req.endpointType === 1 ? ErrorCode.MISMATCHED_ENDPOINT_TYPE : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: `The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type ${req.endpointType === 1 ? 'BROKER' : 'UNKNOWN'}`,
        endpointType: 2,
        clusterId: node.clusterId,
      };
    }
    return {
      errorCode: ErrorCode.NONE,
      endpointType: 2,
      clusterId: node.clusterId,
      controllerId: node.nodeId,
      brokers: [{ brokerId: node.nodeId, host: node.endpoint.host, port: node.endpoint.port, rack: null }],
      clusterAuthorizedOperations: clusterAuthorizedOperations(auth, req.includeClusterAuthorizedOperations),
    };
  },
});
