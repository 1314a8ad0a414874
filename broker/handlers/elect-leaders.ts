/**
 * ElectLeaders (43), v0-2.
 * Forwarded to the controller: PREFERRED (0; always, in v0) moves leadership to the first replica
 * when it is in the ISR and alive (ELECTION_NOT_NEEDED if it already leads,
 * PREFERRED_LEADER_NOT_AVAILABLE if it cannot); UNCLEAN (1) elects a leader for a partition that
 * has none, from outside the ISR if need be (ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is
 * alive). A null topic list means every partition, and only those that needed an election are
 * reported. Unknown topics and partitions (a negative index, one past the count):
 * UNKNOWN_TOPIC_OR_PARTITION. A partition listed twice is answered at each listing, as Kafka's
 * controller does, and elected once. An unknown election type is INVALID_REQUEST (top level, v1+).
 * Not implemented: waiting up to timeout_ms for the new leaders to be live on every broker (the
 * answer comes once the controller committed the change and this broker has applied it).
 * Authorization (ControllerApis.handleElectLeaders, which KRaft brokers forward to): ALTER on
 * the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level (v1+) and on every partition
 * asked, with Kafka's "Request ... is not authorized." message (ElectLeadersRequest.getErrorResponse).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../protocol/generated/elect-leaders';
import { ApiKey } from '../../protocol/generated';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { ElectionType } from '../../metadata/controller/controller';
import { defineHandler } from './define-handler';

export const electLeadersHandler = defineHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const type = v >= 1 ? req.electionType : ElectionType.PREFERRED;
    if (!authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.ALTER)) {
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
      const results = await broker.controller.electLeaders(type, req.topicPartitions);
      return { errorCode: v >= 1 ? ErrorCode.NONE : undefined, replicaElectionResults: results };
    } catch (err) {
      if (!(err instanceof KafkaError)) broker.logger.error('ElectLeaders failed', { err });
      const code = toErrorCode(err);
      if (v >= 1) return { errorCode: code, replicaElectionResults: [] };
      return {
        replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: code, errorMessage: (err as Error).message })),
        })),
      };
    }
  },
});
