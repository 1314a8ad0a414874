/**
 * DeleteRecords (21), v0-2.
 * Moves each partition's log start offset (low watermark) up to the given offset (-1 = the high
 * watermark); past the high watermark: OFFSET_OUT_OF_RANGE; a compact-only topic:
 * POLICY_VIOLATION; unknown partition UNKNOWN_TOPIC_OR_PARTITION; not the leader
 * NOT_LEADER_OR_FOLLOWER. Segments wholly below the new start are deleted by the retention task.
 */
import { KafkaError, ErrorCode, toErrorCode } from '../../protocol/errors';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../../protocol/generated/delete-records';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const deleteRecordsHandler = defineHandler<DeleteRecordsRequest, DeleteRecordsResponse>({
  apiKey: ApiKey.DeleteRecords,
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  handle(broker, _ctx, req) {
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          try {
            const part = broker.replicaManager.leaderPartitionOrThrow(t.name, p.partitionIndex);
            const lowWatermark = part.log.deleteRecordsBefore(p.offset);
            return { partitionIndex: p.partitionIndex, lowWatermark, errorCode: ErrorCode.NONE };
          } catch (err) {
            if (!(err instanceof KafkaError)) broker.logger.error('DeleteRecords failed', { topic: t.name, partition: p.partitionIndex, err });
            return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: toErrorCode(err) };
          }
        }),
      })),
    };
  },
});
