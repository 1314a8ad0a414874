/**
 * DescribeProducers (61), v0.
 * The active producers of each partition from the local replica's producer state (Kafka answers
 * from any replica that hosts the partition): producer id and epoch, the last sequence written, the
 * timestamp of its last batch, the coordinator epoch of its last marker, and the first offset of
 * its open transaction (-1 if none). Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION,
 * NOT_LEADER_OR_FOLLOWER (not hosted here), KAFKA_STORAGE_ERROR (its log is offline).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { DescribeProducersRequest, DescribeProducersResponse } from '../../protocol/generated/describe-producers';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const describeProducersHandler = defineHandler<DescribeProducersRequest, DescribeProducersResponse>({
  apiKey: ApiKey.DescribeProducers,
  name: 'DescribeProducers',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, _ctx, req) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => {
          try {
            const p = broker.replicaManager.hostedPartitionOrThrow(t.name, partitionIndex);
            return {
              partitionIndex,
              errorCode: ErrorCode.NONE,
              errorMessage: null,
              activeProducers: p.log.producerState.activeProducers().map((e) => {
                const last = e.batches[e.batches.length - 1];
                return {
                  producerId: e.producerId,
                  producerEpoch: e.producerEpoch,
                  lastSequence: last ? last.lastSeq : -1,
                  lastTimestamp: e.lastTimestamp,
                  coordinatorEpoch: e.coordinatorEpoch,
                  currentTxnStartOffset: e.currentTxnFirstOffset,
                };
              }),
            };
          } catch (err) {
            if (!(err instanceof KafkaError)) broker.logger.error('DescribeProducers failed', { topic: t.name, partition: partitionIndex, err });
            return { partitionIndex, errorCode: toErrorCode(err), errorMessage: err instanceof KafkaError ? err.message : null, activeProducers: [] };
          }
        }),
      })),
    };
  },
});
