/**
 * How handlers read the partitions a request names when Kafka reads them into a map keyed by
 * topic-partition (Produce, Fetch, ListOffsets, DeleteRecords, WriteTxnMarkers,
 * AddPartitionsToTxn): a partition listed twice is one entry, at the place of its first listing,
 * with the value of its last; and the response has one entry per partition, grouped by topic in
 * the order the topics first appear. The key is topicPartitionKey, so ("a", -1) never meets
 * ("a-", 1).
 *
 * APIs that Kafka answers per listing (OffsetCommit, TxnOffsetCommit, OffsetFetch,
 * OffsetForLeaderEpoch, ElectLeaders, DescribeProducers) do not use this.
 */
import { topicPartitionKey } from '../../common/topic-partition';

/** Partitions by key: the first listing's position, the last listing's value (Java's LinkedHashMap.put). */
export class PartitionMap<V> {
  private readonly entries = new Map<string, { topic: string; partition: number; value: V }>();

  set(topic: string, partition: number, value: V): void {
    const key = topicPartitionKey(topic, partition);
    const e = this.entries.get(key);
    if (e) e.value = value;
    else this.entries.set(key, { topic, partition, value });
  }

  get(topic: string, partition: number): V | undefined {
    return this.entries.get(topicPartitionKey(topic, partition))?.value;
  }

  has(topic: string, partition: number): boolean {
    return this.entries.has(topicPartitionKey(topic, partition));
  }

  get size(): number {
    return this.entries.size;
  }

  values(): { topic: string; partition: number; value: V }[] {
    return [...this.entries.values()];
  }
}

/** Items grouped by topic, topics in order of first appearance, items in their order. */
export function groupByTopic<T>(items: Iterable<T>, topicOf: (item: T) => string): [string, T[]][] {
  const byTopic = new Map<string, T[]>();
  for (const item of items) {
    const topic = topicOf(item);
    let list = byTopic.get(topic);
    if (!list) byTopic.set(topic, (list = []));
    list.push(item);
  }
  return [...byTopic];
}
