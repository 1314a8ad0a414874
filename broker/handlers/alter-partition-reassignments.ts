/**
 * AlterPartitionReassignments (45), v0 (KIP-455).
 * Forwarded to the controller (metadata/controller/partition-reassignment.ts): each partition's
 * target replicas start a reassignment (the new replicas are added, catch up through replication
 * and join the ISR; then leadership leaves the removed replicas and they are dropped, their logs
 * deleted by their brokers), null replicas cancel one (NO_REASSIGNMENT_IN_PROGRESS when there is
 * none). Bad targets: INVALID_REPLICA_ASSIGNMENT; unknown topic or partition:
 * UNKNOWN_TOPIC_OR_PARTITION; each with Kafka's message, per partition. The answer comes once the
 * controller has committed the records (and, on a cluster broker, this broker has applied them);
 * timeout_ms is not waited on, as Kafka's controller answers once the records are committed too.
 * Authorization (ControllerApis.handleAlterPartitionReassignments): ALTER on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED at the top level and on every partition, with Kafka's
 * "Request ... is not authorized." message (AlterPartitionReassignmentsRequest.getErrorResponse).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse } from '../../protocol/generated/alter-partition-reassignments';
import { ApiKey } from '../../protocol/generated';
import type { Input } from '../../protocol/primitives/input';
import { AclOperation, type Authorizer } from '../../metadata/authorizer/authorizer';
import type { ControllerApi } from '../../metadata/controller/controller';
import type { Logger } from '../../common/logger';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { defineHandler } from './define-handler';

/** What the broker's and the controller listener's AlterPartitionReassignments share. */
export async function alterPartitionReassignmentsAnswer(
  controller: Pick<ControllerApi, 'alterPartitionReassignments'>,
  authorizer: Authorizer,
  logger: Logger,
  ctx: RequestContext,
  req: AlterPartitionReassignmentsRequest,
): Promise<Input<AlterPartitionReassignmentsResponse>> {
  const everyPartition = (errorCode: number, errorMessage: string | null): Input<AlterPartitionReassignmentsResponse> => ({
    errorCode,
    errorMessage,
    responses: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage })) })),
  });
  if (!authHelper(authorizer, ctx).authorizeCluster(AclOperation.ALTER)) {
    return everyPartition(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, requestNotAuthorizedMessage(ctx));
  }
  try {
    const responses = await controller.alterPartitionReassignments(req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, replicas: p.replicas })) })));
    return { errorCode: ErrorCode.NONE, errorMessage: null, responses };
  } catch (err) {
    if (!(err instanceof KafkaError)) logger.error('AlterPartitionReassignments failed', { err });
    return everyPartition(toErrorCode(err), (err as Error).message);
  }
}

export const alterPartitionReassignmentsHandler = defineHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse>({
  apiKey: ApiKey.AlterPartitionReassignments,
  name: 'AlterPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  handle: (broker, ctx, req) => alterPartitionReassignmentsAnswer(broker.controller, broker.authorizer, broker.logger, ctx, req),
});
