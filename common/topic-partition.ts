/**
 * A (topic, partition) pair, its one map key and its display form.
 *
 * Invariant: topicPartitionKey is the only way a (topic, partition) pair becomes a map key, and
 * distinct pairs never share a key. It is the topic, NUL, then the partition number; a number's
 * text never contains NUL, so the last NUL splits any key back into its pair, whatever bytes a
 * client put in the topic name. (With a '-' separator, topic "a" partition -1 and topic "a-"
 * partition 1 were both "a--1".)
 * tpString is Kafka's TopicPartition.toString ("topic-partition"), for log lines and directory
 * names only, never for keys.
 */
export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** The map key of a (topic, partition) pair: never the same for two distinct pairs (see above). */
export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}

/** "topic-partition", as Kafka prints a TopicPartition. */
export function tpString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}
