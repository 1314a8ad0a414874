/**
 * ListPartitionReassignments (46), v0 (KIP-455).
 * The reassignments in progress: every partition with replicas being added or removed (topics
 * null), or those among the listed partitions; unknown topics and partitions are left out, as
 * Kafka's controller leaves them out. Each with its full replica list (target first, then the
 * replicas being removed), adding_replicas and removing_replicas. A broker answers from its
 * metadata image (which an AlterPartitionReassignments through it has reached before it answered);
 * the controller listener from the controller's.
 * Authorization (ControllerApis.handleListPartitionReassignments): DESCRIBE on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED at the top level with Kafka's "Request ... is not authorized." message.
 */
import { ErrorCode } from '../../protocol/errors';
import type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse } from '../../protocol/generated/list-partition-reassignments';
import { ApiKey } from '../../protocol/generated';
import type { Input } from '../../protocol/primitives/input';
import { AclOperation, type Authorizer } from '../../metadata/authorizer/authorizer';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { ongoingReassignments } from '../../metadata/controller/partition-reassignment';
import type { RequestContext } from '../network/request-context';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import { defineHandler } from './define-handler';

/** What the broker's and the controller listener's ListPartitionReassignments share. */
export function listPartitionReassignmentsAnswer(
  image: MetadataCache,
  authorizer: Authorizer,
  ctx: RequestContext,
  req: ListPartitionReassignmentsRequest,
): Input<ListPartitionReassignmentsResponse> {
  if (!authHelper(authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE)) {
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: requestNotAuthorizedMessage(ctx), topics: [] };
  }
  return { errorCode: ErrorCode.NONE, errorMessage: null, topics: ongoingReassignments(image, req.topics) };
}

export const listPartitionReassignmentsHandler = defineHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse>({
  apiKey: ApiKey.ListPartitionReassignments,
  name: 'ListPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  handle: (broker, ctx, req) => listPartitionReassignmentsAnswer(broker.metadata, broker.authorizer, ctx, req),
});
