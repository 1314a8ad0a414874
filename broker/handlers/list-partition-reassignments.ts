/**
 * ListPartitionReassignments (46), v0 (KIP-455).
 * The reassignments in progress: every partition with replicas being added or removed (topics
 * null), or those among the listed partitions; unknown topics and partitions are left out, as
 * Kafka's controller leaves them out. Each with its full replica list (target first, then the
 * replicas being removed), adding_replicas and removing_replicas.
 * Answered by the controller, from the controller's image: a broker forwards the request
 * (ControllerApi.listPartitionReassignments: in-process on a combined node, RemoteController on a
 * cluster broker), as Kafka's brokers forward it, so a reassignment the controller has accepted is
 * listed even before this broker's metadata image has caught up; the controller listener answers
 * from its own image. A controller that cannot be reached: REQUEST_TIMED_OUT at the top level.
 * Authorization (ControllerApis.handleListPartitionReassignments): DESCRIBE on the CLUSTER, checked
 * where the request arrives, else CLUSTER_AUTHORIZATION_FAILED at the top level with Kafka's
 * "Request ... is not authorized." message (nothing is forwarded then).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse } from '../../protocol/generated/list-partition-reassignments';
import { ApiKey } from '../../protocol/generated';
import type { Input } from '../../protocol/primitives/input';
import { AclOperation, type Authorizer } from '../../metadata/authorizer/authorizer';
import type { ControllerApi } from '../../metadata/controller/controller';
import type { Logger } from '../../common/logger';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { defineHandler } from './define-handler';

/** What the broker's and the controller listener's ListPartitionReassignments share. */
export async function listPartitionReassignmentsAnswer(
  controller: Pick<ControllerApi, 'listPartitionReassignments'>,
  authorizer: Authorizer,
  logger: Logger,
  ctx: RequestContext,
  req: ListPartitionReassignmentsRequest,
): Promise<Input<ListPartitionReassignmentsResponse>> {
  if (!authHelper(authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE)) {
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: requestNotAuthorizedMessage(ctx), topics: [] };
  }
  try {
    return await controller.listPartitionReassignments(req.topics);
  } catch (err) {
    if (!(err instanceof KafkaError)) logger.error('ListPartitionReassignments failed', { err });
    return { errorCode: toErrorCode(err), errorMessage: (err as Error).message, topics: [] };
  }
}

export const listPartitionReassignmentsHandler = defineHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse>({
  apiKey: ApiKey.ListPartitionReassignments,
  name: 'ListPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  handle: (broker, ctx, req) => listPartitionReassignmentsAnswer(broker.controller, broker.authorizer, broker.logger, ctx, req),
});
