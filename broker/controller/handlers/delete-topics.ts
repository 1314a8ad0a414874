/**
 * DeleteTopics (20), v1-6, on the controller listener: by name (v1-5) or by name / topic id (v6);
 * UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID. delete.topic.enable is checked by the broker.
 */
import { ZERO_UUID } from '../../../protocol/primitives/uuid';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../../protocol/generated/delete-topics';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';

export const controllerDeleteTopicsHandler = defineControllerHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 1,
  maxVersion: 6,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    const targets = v >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId === ZERO_UUID ? null : t.topicId })) : req.topicNames.map((name) => ({ name, topicId: null as string | null }));
    const results = await node.controller.deleteTopics(targets);
    return {
      responses: results.map((r) => ({
        name: r.name,
        topicId: v >= 6 ? r.topicId || ZERO_UUID : undefined,
        errorCode: r.errorCode,
        errorMessage: v >= 5 ? r.errorMessage : undefined,
      })),
    };
  },
});
