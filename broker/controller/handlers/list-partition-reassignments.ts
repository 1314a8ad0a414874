/**
 * ListPartitionReassignments (46), v0, on the controller listener: what brokers forward (and admin
 * clients with --bootstrap-controller send), answered from the controller's image; rules and
 * authorization (DESCRIBE on the CLUSTER) are broker/handlers/list-partition-reassignments.ts's.
 */
import type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse } from '../../../protocol/generated/list-partition-reassignments';
import { ApiKey } from '../../../protocol/generated';
import { listPartitionReassignmentsAnswer } from '../../handlers/list-partition-reassignments';
import { defineControllerHandler } from './define';

export const controllerListPartitionReassignmentsHandler = defineControllerHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse>({
  apiKey: ApiKey.ListPartitionReassignments,
  name: 'ListPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  handle: (node, ctx, req) => listPartitionReassignmentsAnswer(node.controller, node.authorizer, node.logger, ctx, req),
});
