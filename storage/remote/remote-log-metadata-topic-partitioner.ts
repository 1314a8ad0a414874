/**
 * Which `__remote_log_metadata` partition holds a user partition's remote log metadata events
 * (Kafka's RemoteLogMetadataTopicPartitioner). Every broker and every Kafka version must agree on
 * it, because a partition's events are read back only from that one metadata partition.
 *
 * The choice, as Kafka makes it: the Java `Objects.hash(topicId.leastSignificantBits,
 * topicId.mostSignificantBits, partition)` (31-based, over Long.hashCode of each half and the int
 * partition), written as 4 big-endian bytes, hashed with murmur2, made positive by clearing the sign
 * bit and taken modulo `remote.log.metadata.topic.num.partitions`. The topic name plays no part.
 *
 * Invariant: metadataPartition is a pure function of (topic id, partition, partition count), in
 * [0, numMetadataTopicPartitions).
 */
import { murmur2, toPositive } from '../../common/murmur2';
import { uuidToBuffer } from '../../protocol/primitives/uuid';
import type { TopicIdPartition } from './remote-log-segment-metadata';

/** Kafka's remote.log.metadata.topic.num.partitions default. */
export const DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS = 50;

/** Java's Long.hashCode of the 8 big-endian bytes at `offset`: the two halves xor-ed, as an int. */
function longHashCode(b: Buffer, offset: number): number {
  return (b.readInt32BE(offset) ^ b.readInt32BE(offset + 4)) | 0;
}

/** The int Kafka hashes for the partition: Objects.hash(lsb, msb, partition). */
export function topicIdPartitionHash(tp: Pick<TopicIdPartition, 'topicId' | 'partition'>): number {
  const id = uuidToBuffer(tp.topicId);
  let h = 1;
  h = (Math.imul(31, h) + longHashCode(id, 8)) | 0;
  h = (Math.imul(31, h) + longHashCode(id, 0)) | 0;
  h = (Math.imul(31, h) + tp.partition) | 0;
  return h;
}

export class RemoteLogMetadataTopicPartitioner {
  constructor(readonly numMetadataTopicPartitions: number = DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS) {
    if (!Number.isInteger(numMetadataTopicPartitions) || numMetadataTopicPartitions <= 0) {
      throw new Error(`the remote log metadata topic needs a positive partition count, not ${numMetadataTopicPartitions}`);
    }
  }

  metadataPartition(tp: Pick<TopicIdPartition, 'topicId' | 'partition'>): number {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(topicIdPartitionHash(tp));
    return toPositive(murmur2(bytes)) % this.numMetadataTopicPartitions;
  }
}
