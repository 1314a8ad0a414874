import { topicPartitionKey, tpString } from './topic-partition';

describe('topicPartitionKey', () => {
  test('pairs that a "-" separator would merge get distinct keys', () => {
    expect(topicPartitionKey('a', -1)).not.toBe(topicPartitionKey('a-', 1));
    expect(topicPartitionKey('a-1', 2)).not.toBe(topicPartitionKey('a', 12));
    expect(topicPartitionKey('a-1', 2)).not.toBe(topicPartitionKey('a-12', 0));
  });

  test('is injective over awkward topic names, including ones holding NUL, "-" and digits', () => {
    const topics = ['', 'a', 'a-', 'a--', '-', '-1', 'a\0', 'a\u00001', '\0', 'a\0-1', '1', '12'];
    const partitions = [-2147483648, -12, -2, -1, 0, 1, 2, 12, 2147483647];
    const seen = new Map<string, string>();
    for (const t of topics) {
      for (const p of partitions) {
        const k = topicPartitionKey(t, p);
        const pair = JSON.stringify([t, p]);
        expect(seen.get(k) ?? pair).toBe(pair);
        seen.set(k, pair);
      }
    }
    expect(seen.size).toBe(topics.length * partitions.length);
  });

  test('tpString is Kafka\'s TopicPartition.toString, for display only', () => {
    expect(tpString({ topic: 'orders', partition: 3 })).toBe('orders-3');
  });
});
