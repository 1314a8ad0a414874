/**
 * Creating the internal topics (__consumer_offsets, __transaction_state), whatever path creates
 * them on first use: FindCoordinator for a group or a transactional id, and a Metadata request
 * that auto-creates topics (Kafka's AutoTopicCreationManager.creatableTopic). Always through the
 * controller, and always with the settings Kafka gives them (KafkaConfig.internalTopicSpec:
 * offsets.topic.* / transaction.state.log.* partitions, replication factor capped by the live
 * brokers unless set, cleanup.policy=compact, compression, segment size, min ISR for the
 * transaction log), never as an ordinary topic with the broker defaults. Another request creating
 * it first is success. (CreateTopics naming an internal topic is the client's own spec, as Kafka
 * allows; that path does not come here.)
 */
import { ErrorCode } from '../protocol/errors';
import type { ControllerApi, CreateTopicSpec } from '../metadata/controller/controller';
import type { MetadataCache } from '../metadata/metadata-cache';
import { OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, type KafkaConfig } from '../config/kafka-config';

export type InternalTopicName = typeof OFFSETS_TOPIC | typeof TRANSACTION_STATE_TOPIC;

export function isInternalTopicName(name: string): name is InternalTopicName {
  return name === OFFSETS_TOPIC || name === TRANSACTION_STATE_TOPIC;
}

/** The CreateTopics spec of an internal topic, from this broker's config and the live brokers. */
export function internalTopicCreateSpec(config: KafkaConfig, metadata: MetadataCache, topic: InternalTopicName): CreateTopicSpec {
  const spec = config.internalTopicSpec(topic, Math.max(1, metadata.aliveBrokers().length));
  return {
    name: spec.name,
    numPartitions: spec.numPartitions,
    replicationFactor: spec.replicationFactor,
    assignments: [],
    configs: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
  };
}

/** Creates internal topics with their specs; the error code per topic (NONE also when it already existed). */
export async function createInternalTopics(
  controller: ControllerApi,
  config: KafkaConfig,
  metadata: MetadataCache,
  topics: readonly InternalTopicName[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const unique = [...new Set(topics)];
  if (unique.length === 0) return out;
  const results = await controller.createTopics(
    unique.map((t) => internalTopicCreateSpec(config, metadata, t)),
    false,
  );
  results.forEach((r, i) => out.set(unique[i], r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? ErrorCode.NONE : r.errorCode));
  return out;
}

export function internalTopicCreator(controller: ControllerApi, config: KafkaConfig, metadata: MetadataCache, topic: InternalTopicName): () => Promise<number> {
  return async () => (await createInternalTopics(controller, config, metadata, [topic])).get(topic) ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}
