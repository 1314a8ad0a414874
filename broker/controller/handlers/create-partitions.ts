/**
 * CreatePartitions (37), v0-3, on the controller listener: grows topics (INVALID_PARTITIONS when
 * not an increase, INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR), validate_only.
 */
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../../protocol/generated/create-partitions';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';

export const controllerCreatePartitionsHandler = defineControllerHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, _ctx, req) {
    const results = await node.controller.createPartitions(
      req.topics.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments ? t.assignments.map((a) => ({ brokerIds: a.brokerIds })) : null })),
      req.validateOnly,
    );
    return { results: results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.errorMessage })) };
  },
});
