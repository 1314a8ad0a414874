/**
 * ListClientMetricsResources (74), v0 (KIP-714).
 * The names of the client-metrics subscriptions (CLIENT_METRICS config resources with at least one
 * config) in this broker's metadata image.
 * Authorization (KafkaApis.handleListClientMetricsResources): DESCRIBE_CONFIGS on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED and no resources.
 */
import { ErrorCode } from '../../protocol/errors';
import type { ListClientMetricsResourcesRequest, ListClientMetricsResourcesResponse } from '../../protocol/generated/list-client-metrics-resources';
import { ApiKey } from '../../protocol/generated';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';

export const listClientMetricsResourcesHandler = defineHandler<ListClientMetricsResourcesRequest, ListClientMetricsResourcesResponse>({
  apiKey: ApiKey.ListClientMetricsResources,
  name: 'ListClientMetricsResources',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx) {
    if (!authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE_CONFIGS)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, clientMetricsResources: [] };
    }
    return { errorCode: ErrorCode.NONE, clientMetricsResources: broker.clientMetrics.listClientMetricsResources().map((name) => ({ name })) };
  },
});
