/**
 * Creating __consumer_offsets on first use (FindCoordinator for a group), through the controller,
 * with the settings Kafka gives it (KafkaConfig.internalTopicSpec: offsets.topic.num.partitions,
 * offsets.topic.replication.factor capped by the live brokers, compact, producer compression,
 * offsets.topic.segment.bytes). Another request creating it first is success.
 */
import { ErrorCode } from '../../../protocol/errors';
import type { ControllerApi } from '../../../replication/controller/controller';
import type { MetadataCache } from '../../../replication/metadata-cache';
import { OFFSETS_TOPIC, type KafkaConfig } from '../../config/kafka-config';

export function offsetsTopicCreator(controller: ControllerApi, config: KafkaConfig, metadata: MetadataCache): () => Promise<number> {
  return async () => {
    const spec = config.internalTopicSpec(OFFSETS_TOPIC, Math.max(1, metadata.aliveBrokers().length));
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
