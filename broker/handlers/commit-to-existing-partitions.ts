/**
 * What OffsetCommit and TxnOffsetCommit share: offsets for topics the requester may not READ are
 * never stored (TOPIC_AUTHORIZATION_FAILED on every partition of the topic, checked first, as
 * KafkaApis does), nor those for partitions that do not exist (UNKNOWN_TOPIC_OR_PARTITION); the
 * others go to the group coordinator in one call, and every partition asked gets an answer, in the
 * order asked.
 */
import { ErrorCode } from '../../protocol/errors';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { topicPartitionKey } from '../../common/topic-partition';
import type { TopicPartitionErrors } from '../../coordinator/group/offset-metadata-manager';

export async function commitToExistingPartitions<In extends { partitionIndex: number }, Out>(
  metadata: MetadataCache,
  topics: readonly { name: string; partitions: readonly In[] }[],
  toCommit: (p: In) => Out,
  commit: (topics: { name: string; partitions: Out[] }[]) => Promise<TopicPartitionErrors[]>,
  /** The topics the requester may READ (all when absent). */
  readable?: ReadonlySet<string>,
): Promise<TopicPartitionErrors[]> {
  const errors = new Map<string, number>();
  const valid: { name: string; partitions: Out[] }[] = [];
  for (const t of topics) {
    if (readable && !readable.has(t.name)) {
      for (const p of t.partitions) errors.set(topicPartitionKey(t.name, p.partitionIndex), ErrorCode.TOPIC_AUTHORIZATION_FAILED);
      continue;
    }
    const known = metadata.topic(t.name) !== undefined;
    const partitions: Out[] = [];
    for (const p of t.partitions) {
      if (!known || !metadata.partition(t.name, p.partitionIndex)) {
        errors.set(topicPartitionKey(t.name, p.partitionIndex), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      partitions.push(toCommit(p));
    }
    if (partitions.length > 0) valid.push({ name: t.name, partitions });
  }
  if (valid.length > 0) {
    for (const t of await commit(valid)) for (const p of t.partitions) errors.set(topicPartitionKey(t.name, p.partitionIndex), p.errorCode);
  }
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      errorCode: errors.get(topicPartitionKey(t.name, p.partitionIndex)) ?? ErrorCode.UNKNOWN_SERVER_ERROR,
    })),
  }));
}
