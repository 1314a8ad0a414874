/**
 * AlterPartitionReassignments (45), v0, on the controller listener: what brokers forward (and
 * admin clients with --bootstrap-controller send), answered by the controller itself; the rules
 * and authorization (ALTER on the CLUSTER) are broker/handlers/alter-partition-reassignments.ts's.
 */
import type { AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse } from '../../../protocol/generated/alter-partition-reassignments';
import { ApiKey } from '../../../protocol/generated';
import { alterPartitionReassignmentsAnswer } from '../../handlers/alter-partition-reassignments';
import { defineControllerHandler } from './define';

export const controllerAlterPartitionReassignmentsHandler = defineControllerHandler<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse>({
  apiKey: ApiKey.AlterPartitionReassignments,
  name: 'AlterPartitionReassignments',
  minVersion: 0,
  maxVersion: 0,
  handle: (node, ctx, req) => alterPartitionReassignmentsAnswer(node.controller, node.authorizer, node.logger, ctx, req),
});
