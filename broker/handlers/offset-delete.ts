/**
 * OffsetDelete (47), v0.
 * Deletes committed offsets of a group (offset tombstones in __consumer_offsets). Group-level:
 * GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a non-Empty classic group that is not a "consumer" protocol
 * group; KIP-848 consumer groups never are),
 * INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS (then
 * no topics are returned). Per partition: GROUP_SUBSCRIBED_TO_TOPIC (the group's members consume
 * the topic, by name or, for a consumer group, through a regex), UNKNOWN_TOPIC_OR_PARTITION, else NONE (also when nothing was committed for it).
 * Authorization (KafkaApis.handleOffsetDeleteRequest): DELETE on the GROUP, else
 * GROUP_AUTHORIZATION_FAILED with no topics; then READ on each TOPIC, every partition of a topic
 * without it TOPIC_AUTHORIZATION_FAILED (before the existence checks) and its offsets kept.
 */
import { ErrorCode } from '../../protocol/errors';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../protocol/generated/offset-delete';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { topicPartitionKey } from '../../common/topic-partition';

export const offsetDeleteHandler = defineHandler<OffsetDeleteRequest, OffsetDeleteResponse>({
  apiKey: ApiKey.OffsetDelete,
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, ctx, req) {
    const md = broker.metadata;
    const auth = authHelper(broker.authorizer, ctx);
    if (!auth.authorize(AclOperation.DELETE, ResourceType.GROUP, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
    const readable = auth.filterByAuthorized(AclOperation.READ, ResourceType.TOPIC, req.topics, (t) => t.name);
    const errors = new Map<string, number>();
    const valid: { name: string; partitions: { partitionIndex: number }[] }[] = [];
    for (const t of req.topics) {
      if (!readable.has(t.name)) {
        for (const p of t.partitions) errors.set(topicPartitionKey(t.name, p.partitionIndex), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        continue;
      }
      const partitions = [];
      for (const p of t.partitions) {
        if (!md.partition(t.name, p.partitionIndex)) errors.set(topicPartitionKey(t.name, p.partitionIndex), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        else partitions.push({ partitionIndex: p.partitionIndex });
      }
      if (partitions.length > 0) valid.push({ name: t.name, partitions });
    }
    const r = await broker.groupCoordinator.deleteOffsets(req.groupId, valid);
    if (r.errorCode !== ErrorCode.NONE) return { errorCode: r.errorCode, topics: [] };
    for (const t of r.topics) for (const p of t.partitions) errors.set(topicPartitionKey(t.name, p.partitionIndex), p.errorCode);
    return {
      errorCode: ErrorCode.NONE,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(topicPartitionKey(t.name, p.partitionIndex)) ?? ErrorCode.NONE })),
      })),
    };
  },
});
