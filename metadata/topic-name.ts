/**
 * Kafka's topic name rules: 1..249 characters from [a-zA-Z0-9._-], not "." or "..". Names that
 * differ only by '.' vs '_' collide (their metric names would be identical), and Kafka refuses the
 * second one. Also which topics are internal (__consumer_offsets, __transaction_state), and the
 * metadata topic, which no request may create (Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME).
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import { METADATA_TOPIC_NAME } from '../storage/log-manager';

/** KRaft's metadata log: a valid topic name that CreateTopics (and auto-creation) must refuse. */
export const CLUSTER_METADATA_TOPIC = METADATA_TOPIC_NAME;

export const MAX_TOPIC_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

export function validateTopicName(name: string): void {
  if (name.length === 0) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name is illegal, it can\'t be empty');
  if (name === '.' || name === '..') {
    throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic name cannot be "." or ".."`);
  }
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    throw new KafkaError(
      ErrorCode.INVALID_TOPIC_EXCEPTION,
      `Topic name is too long, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`,
    );
  }
  if (!LEGAL.test(name)) {
    throw new KafkaError(
      ErrorCode.INVALID_TOPIC_EXCEPTION,
      `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`,
    );
  }
}

/** The key under which '.' and '_' collide. */
export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, '_');
}

export function isInternalTopic(name: string): boolean {
  return name === '__consumer_offsets' || name === '__transaction_state';
}
