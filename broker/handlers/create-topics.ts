/**
 * CreateTopics (19), v0-7.
 * Validates and creates topics through the controller: name rules and '.'/'_' collisions
 * (INVALID_TOPIC_EXCEPTION), TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR
 * (more replicas than registered brokers), INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, duplicate
 * names in one request (INVALID_REQUEST); -1 partitions / replication factor take the broker
 * defaults (v4+). validate_only (v1+) checks everything and creates nothing. v5+ returns the new
 * topic's id (v7), partition count, replication factor and its effective configs.
 */
import { ErrorCode } from '../../protocol/errors';
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../protocol/generated/create-topics';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import type { CreateTopicSpec } from '../../metadata/controller/controller';

/** The controller's view of a CreateTopics request (shared with the controller listener's handler). */
export function createTopicSpecs(req: CreateTopicsRequest): CreateTopicSpec[] {
  return req.topics.map((t) => ({
    name: t.name,
    numPartitions: t.numPartitions,
    replicationFactor: t.replicationFactor,
    assignments: t.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
    configs: t.configs.map((c) => ({ name: c.name, value: c.value })),
  }));
}

export const createTopicsHandler = defineHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const results = await broker.controller.createTopics(createTopicSpecs(req), req.validateOnly);
    return {
      topics: results.map((r, i) => {
        const ok = r.errorCode === ErrorCode.NONE;
        let configs = null;
        if (ok && v >= 5) {
          const overrides = new Map<string, string>();
          for (const c of req.topics[i].configs) if (c.value !== null) overrides.set(c.name, c.value);
          configs = broker
            .topicConfigWith(overrides)
            .describe()
            .map((e) => ({
              name: e.name,
              value: e.value,
              readOnly: e.readOnly,
              configSource: e.source,
              isSensitive: e.isSensitive,
            }));
        }
        return {
          name: r.name,
          topicId: r.topicId || undefined,
          errorCode: r.errorCode,
          errorMessage: ok ? null : r.errorMessage,
          numPartitions: ok ? r.numPartitions : -1,
          replicationFactor: ok ? r.replicationFactor : -1,
          configs,
        };
      }),
    };
  },
});
