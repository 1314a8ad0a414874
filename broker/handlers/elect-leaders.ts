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
import { ElectionType, type ControllerApi } from '../../metadata/controller/controller';
import type { Authorizer } from '../../metadata/authorizer/authorizer';
import type { Logger } from '../../common/logger';
import type { Input } from '../../protocol/primitives/input';
import type { RequestContext } from '../network/request-context';
import { defineHandler } from './define-handler';

/**
 * What the broker's and the controller listener's ElectLeaders share: the authorization check, the
 * election through `controller`, and the answer at the request's version (v0 has no top-level
 * error: a failure is reported on every partition asked about).
 */
export async function electLeadersAnswer(
  controller: Pick<ControllerApi, 'electLeaders'>,
  authorizer: Authorizer,
  logger: Logger,
  ctx: RequestContext,
  req: ElectLeadersRequest,
): Promise<Input<ElectLeadersResponse>> {
  const v = ctx.apiVersion;
  const type = v >= 1 ? req.electionType : ElectionType.PREFERRED;
  const everyPartition = (errorCode: number, errorMessage: string | null) =>
    (req.topicPartitions ?? []).map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode, errorMessage })) }));
  if (!authHelper(authorizer, ctx).authorizeCluster(AclOperation.ALTER)) {
    return {
      errorCode: v >= 1 ? ErrorCode.CLUSTER_AUTHORIZATION_FAILED : undefined,
      replicaElectionResults: everyPartition(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, requestNotAuthorizedMessage(ctx)),
    };
  }
  try {
    const results = await controller.electLeaders(type, req.topicPartitions);
    return { errorCode: v >= 1 ? ErrorCode.NONE : undefined, replicaElectionResults: results };
  } catch (err) {
    if (!(err instanceof KafkaError)) logger.error('ElectLeaders failed', { err });
    if (v >= 1) return { errorCode: toErrorCode(err), replicaElectionResults: [] };
    return { replicaElectionResults: everyPartition(toErrorCode(err), (err as Error).message) };
  }
}

export const electLeadersHandler = defineHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  handle: (broker, ctx, req) => electLeadersAnswer(broker.controller, broker.authorizer, broker.logger, ctx, req),
});
