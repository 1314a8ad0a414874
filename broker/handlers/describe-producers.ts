/**
 * DescribeProducers (61), v0.
 * The active producers of each partition from the local replica's producer state (Kafka answers
 * from any replica that hosts the partition): producer id and epoch, the last sequence written, the
 * timestamp of its last batch, the coordinator epoch of its last marker, and the first offset of
 * its open transaction (-1 if none). As KafkaApis.handleDescribeProducersRequest: an invalid topic
 * name gets INVALID_TOPIC_EXCEPTION and an unknown topic UNKNOWN_TOPIC_OR_PARTITION on every
 * partition asked (with the error's message); then per partition, without a message:
 * UNKNOWN_TOPIC_OR_PARTITION (negative index, past the count), NOT_LEADER_OR_FOLLOWER (not hosted
 * here), KAFKA_STORAGE_ERROR (its log is offline). Every listing is answered, duplicates included.
 * Authorization: READ on each TOPIC (after the name check, before the existence check), else
 * TOPIC_AUTHORIZATION_FAILED "Topic authorization failed." on every partition asked.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { DescribeProducersRequest, DescribeProducersResponse } from '../../protocol/generated/describe-producers';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { validateTopicName } from '../../metadata/topic-name';
import type { Broker } from '../broker';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** The topic-level error of a DescribeProducers topic, or null. */
function topicError(broker: Broker, auth: AuthHelper, name: string): KafkaError | null {
  try {
    validateTopicName(name);
  } catch (err) {
    return err as KafkaError;
  }
  if (!auth.authorize(AclOperation.READ, ResourceType.TOPIC, name)) {
    return new KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, AUTHORIZATION_ERROR_MESSAGE[ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
  }
  if (!broker.metadata.topic(name)) return new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
  return null;
}

export const describeProducersHandler = defineHandler<DescribeProducersRequest, DescribeProducersResponse>({
  apiKey: ApiKey.DescribeProducers,
  name: 'DescribeProducers',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    const auth = authHelper(broker.authorizer, ctx);
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => {
        const failed = topicError(broker, auth, t.name);
        return {
          name: t.name,
          partitions: t.partitionIndexes.map((partitionIndex) => {
            if (failed) return { partitionIndex, errorCode: failed.code, errorMessage: failed.message, activeProducers: [] };
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
              return { partitionIndex, errorCode: toErrorCode(err), errorMessage: null, activeProducers: [] };
            }
          }),
        };
      }),
    };
  },
});
