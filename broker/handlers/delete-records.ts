/**
 * DeleteRecords (21), v0-2.
 * Moves each partition's log start offset (low watermark) up to the given offset (-1 = the high
 * watermark) on the leader, then waits up to timeout_ms until every alive replica's log start
 * offset has reached it (Kafka's DelayedDeleteRecords; REQUEST_TIMED_OUT with the low watermark
 * of the moment otherwise). Per partition, in Kafka's order (KafkaApis.handleDeleteRecordsRequest,
 * ReplicaManager.deleteRecordsOnLocalLog): a partition the metadata does not have (negative index,
 * past the count) UNKNOWN_TOPIC_OR_PARTITION; an internal topic INVALID_TOPIC_EXCEPTION; not the
 * leader NOT_LEADER_OR_FOLLOWER; a topic without cleanup.policy=delete POLICY_VIOLATION; past the
 * high watermark OFFSET_OUT_OF_RANGE. A partition listed twice is one partition (its last offset),
 * answered once; the response groups partitions by topic in order of first appearance. Segments
 * wholly below the new start are deleted by the retention task.
 * Authorization (KafkaApis.handleDeleteRecordsRequest): DELETE on each TOPIC; a partition of a
 * topic without it is TOPIC_AUTHORIZATION_FAILED (low watermark -1), before it is looked up.
 */
import { ErrorCode } from '../../protocol/errors';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../../protocol/generated/delete-records';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { PartitionMap, groupByTopic } from './request-partitions';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const deleteRecordsHandler = defineHandler<DeleteRecordsRequest, DeleteRecordsResponse>({
  apiKey: ApiKey.DeleteRecords,
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, ctx, req) {
    const asked = new PartitionMap<bigint>();
    for (const t of req.topics) for (const p of t.partitions) asked.set(t.name, p.partitionIndex, p.offset);
    const deletable = authHelper(broker.authorizer, ctx).filterByAuthorized(AclOperation.DELETE, ResourceType.TOPIC, req.topics, (t) => t.name);
    const known = asked.values().filter((e) => deletable.has(e.topic) && broker.metadata.partition(e.topic, e.partition) !== undefined);
    const deleting = broker.replicaManager.deleteRecords(
      req.timeoutMs,
      known.map((e) => ({ topic: e.topic, partition: e.partition, offset: e.value })),
    );
    // What is left is waiting for the replicas' low watermark.
    ctx.parked();
    const results = await deleting;
    const answers = new PartitionMap<{ errorCode: number; lowWatermark: bigint }>();
    for (const r of results) answers.set(r.topic, r.partition, r);
    return {
      topics: groupByTopic(asked.values(), (e) => e.topic).map(([name, partitions]) => ({
        name,
        partitions: partitions.map((p) => {
          const r = !deletable.has(name)
            ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, lowWatermark: -1n }
            : (answers.get(name, p.partition) ?? { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n });
          return { partitionIndex: p.partition, lowWatermark: r.lowWatermark, errorCode: r.errorCode };
        }),
      })),
    };
  },
});
