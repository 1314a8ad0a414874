/**
 * Creating an internal topic on first use (__consumer_offsets by FindCoordinator for a group,
 * __transaction_state by FindCoordinator for a transactional id), through the controller, with the
 * settings Kafka gives it (KafkaConfig.internalTopicSpec: partitions, replication factor capped by
 * the live brokers, compaction, compression, segment size, min ISR for the transaction log).
 * Another request creating it first is success.
 */
import { ErrorCode } from '../protocol/errors';
import type { ControllerApi } from '../metadata/controller/controller';
import type { MetadataCache } from '../metadata/metadata-cache';
import { OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, type KafkaConfig } from '../config/kafka-config';

export function internalTopicCreator(
  controller: ControllerApi,
  config: KafkaConfig,
  metadata: MetadataCache,
  topic: typeof OFFSETS_TOPIC | typeof TRANSACTION_STATE_TOPIC,
): () => Promise<number> {
  return async () => {
    const spec = config.internalTopicSpec(topic, Math.max(1, metadata.aliveBrokers().length));
    const [r] = await controller.createTopics(
      [
        {
          name: spec.name,
          numPartitions: spec.numPartitions,
          replicationFactor: spec.replicationFactor,
          assignments: [],
          configs: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
        },
      ],
      false,
    );
    return r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? ErrorCode.NONE : r.errorCode;
  };
}
