/**
 * DescribeCluster (60), v0-1.
 * The live brokers at their advertised address for the request's listener, the cluster id, and a
 * controller id that is one of those brokers (as KRaft brokers report). endpoint_type (v1) 1 =
 * brokers; asking for controllers (2) from a broker gives MISMATCHED_ENDPOINT_TYPE, as in Kafka.
 * Authorization (AuthHelper.computeDescribeClusterResponse): nothing is required; when asked,
 * cluster_authorized_operations is the bit field of the principal's operations on the CLUSTER if it
 * may DESCRIBE it, else 0.
 */
import { ErrorCode } from '../../protocol/errors';
import type { DescribeClusterRequest, DescribeClusterResponse } from '../../protocol/generated/describe-cluster';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { AUTHORIZED_OPERATIONS_OMITTED, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/authorizer/authorizer';

/** cluster_authorized_operations: the CLUSTER's bit field with DESCRIBE on it, 0 without, "not requested" if not asked. */
export function clusterAuthorizedOperations(auth: AuthHelper, requested: boolean): number {
  if (!requested) return AUTHORIZED_OPERATIONS_OMITTED;
  return auth.authorizeCluster(AclOperation.DESCRIBE) ? auth.authorizedOperations(ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME) : 0;
}

export const describeClusterHandler = defineHandler<DescribeClusterRequest, DescribeClusterResponse>({
  apiKey: ApiKey.DescribeCluster,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 1,
  handle(broker, ctx, req) {
    if (ctx.apiVersion >= 1 && req.endpointType !== 1) {
      return {
        errorCode: req.endpointType === 2 ? ErrorCode.MISMATCHED_ENDPOINT_TYPE : ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: `The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type ${req.endpointType === 2 ? 'CONTROLLER' : 'UNKNOWN'}`,
        endpointType: 1,
        clusterId: broker.clusterId,
      };
    }
    const brokers = broker.metadata.aliveBrokers().flatMap((b) => {
      const ep = b.endpoints.find((e) => e.name === ctx.connection.listenerName);
      return ep ? [{ brokerId: b.id, host: ep.host, port: ep.port, rack: b.rack }] : [];
    });
    return {
      errorCode: ErrorCode.NONE,
      endpointType: 1,
      clusterId: broker.clusterId,
      controllerId: brokers[0]?.brokerId ?? -1,
      brokers,
      clusterAuthorizedOperations: clusterAuthorizedOperations(authHelper(broker.authorizer, ctx), req.includeClusterAuthorizedOperations),
    };
  },
});
