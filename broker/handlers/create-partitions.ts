/**
 * CreatePartitions (37), v0-3.
 * Grows a topic's partition count through the controller: fewer or equal partitions give
 * INVALID_PARTITIONS, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, assignments that do not match the
 * number of new partitions or name unknown brokers INVALID_REPLICA_ASSIGNMENT. validate_only
 * creates nothing. A topic named twice in one request gets INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/errors';
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../protocol/generated/create-partitions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const createPartitionsHandler = defineHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, _ctx, req) {
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const unique = req.topics.filter((t) => counts.get(t.name) === 1);
    const results = await broker.controller.createPartitions(
      unique.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments })),
      req.validateOnly,
    );
    const byName = new Map(results.map((r) => [r.name, r]));
    return {
      results: req.topics.map((t) =>
        counts.get(t.name)! > 1
          ? { name: t.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic in request.' }
          : byName.get(t.name)!,
      ),
    };
  },
});
