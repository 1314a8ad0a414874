/**
 * ElectLeaders (43), v0-2, on the controller listener: PREFERRED (v0 always) or UNCLEAN elections
 * (see Controller.electLeaders for the error codes); an unknown election type is INVALID_REQUEST
 * (top level from v1, per partition in v0, which has no top-level error).
 * Authorization (ControllerApis.handleElectLeaders, this connection's principal): ALTER on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level (v1+) and on every partition asked,
 * with Kafka's "Request ... is not authorized." message (ElectLeadersRequest.getErrorResponse).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../../protocol/errors';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../../protocol/generated/elect-leaders';
import { ApiKey } from '../../../protocol/generated';
import { authHelper, requestNotAuthorizedMessage } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { ElectionType } from '../../../metadata/controller/controller';
import { defineControllerHandler } from './define';

export const controllerElectLeadersHandler = defineControllerHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    const type = v >= 1 ? req.electionType : ElectionType.PREFERRED;
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.ALTER)) {
      const errorMessage = requestNotAuthorizedMessage(ctx);
      return {
        errorCode: v >= 1 ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : undefined,
        replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage })),
        })),
      };
    }
    try {
      const results = await node.controller.electLeaders(type, req.topicPartitions);
      return { errorCode: v >= 1 ? ErrorCode.NONE : undefined, replicaElectionResults: results };
    } catch (err) {
      if (!(err instanceof KafkaError)) node.logger.error('ElectLeaders failed', { err });
      if (v >= 1) return { errorCode: toErrorCode(err), replicaElectionResults: [] };
      // v0 has no top-level error: report it on every partition asked about.
      return {
        replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: toErrorCode(err), errorMessage: (err as Error).message })),
        })),
      };
    }
  },
});
