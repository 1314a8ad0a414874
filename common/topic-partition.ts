/**
 * A (topic, partition) pair, its one map key and its display form.
 *
 * Invariant: topicPartitionKey is the only way a (topic, partition) pair becomes a map key. It
 * joins the two with NUL, which never appears in a valid topic name, so distinct pairs never
 * share a key (with a '-' separator, topic "a" partition -1 and topic "a-" partition 1 would).
 * tpString is Kafka's TopicPartition.toString ("topic-partition"), for log lines and directory
 * names only, never for keys.
 */
export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** A map key for a (topic, partition) pair: NUL never appears in a topic name, so distinct pairs never collide. */
export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}

export function tpString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}
