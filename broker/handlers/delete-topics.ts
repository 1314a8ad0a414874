/**
 * DeleteTopics (20), v0-6.
 * Deletes topics by name (topic_names, v0-5; topics[].name, v6+) or by topic id (v6+). An unknown
 * name gets UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID; a v6 entry naming both a
 * name and an id gets INVALID_REQUEST; delete.topic.enable=false gives TOPIC_DELETION_DISABLED.
 * Each partition's log directory is renamed with a -delete suffix and removed in the background,
 * as Kafka does.
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../protocol/generated/delete-topics';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const deleteTopicsHandler = defineHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const targets =
      v >= 6
        ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId === ZERO_UUID ? null : t.topicId }))
        : req.topicNames.map((name) => ({ name, topicId: null as string | null }));
    if (!broker.config.getBoolean('delete.topic.enable')) {
      return {
        responses: targets.map((t) => ({
          name: t.name,
          topicId: t.topicId ?? ZERO_UUID,
          errorCode: ErrorCode.TOPIC_DELETION_DISABLED,
          errorMessage: 'Topic deletion is disabled.',
        })),
      };
    }
    const invalid = targets.map((t) => (t.name !== null && t.topicId !== null) || (t.name === null && t.topicId === null));
    const results = await broker.controller.deleteTopics(targets.filter((_, i) => !invalid[i]));
    let next = 0;
    return {
      responses: targets.map((t, i) => {
        if (invalid[i]) {
          return {
            name: t.name,
            topicId: t.topicId ?? ZERO_UUID,
            errorCode: ErrorCode.INVALID_REQUEST,
            errorMessage: 'Each topic must be named by exactly one of name or topic id.',
          };
        }
        const r = results[next++];
        // Results by id carry the resolved name (v6+); older versions only ever name topics.
        return { name: r.name, topicId: r.topicId || ZERO_UUID, errorCode: r.errorCode, errorMessage: r.errorMessage };
      }),
    };
  },
});
