/**
 * The plugin interface that records where each remote segment is and what state it is in
 * (Kafka's RemoteLogMetadataManager, KIP-405).
 *
 * Owns: the contract only. Implementations: remote-log-metadata-cache.ts holds the state of one
 * partition in memory and answers the lookups; the default manager is topic based
 * (`__remote_log_metadata`, coordinator layer), and a JS module can be named by
 * `remote.log.metadata.manager.class.name`.
 *
 * Invariants every implementation keeps:
 * - add/update/putPartitionDelete resolve only once the event is durable and visible to this
 *   broker's own lookups (Kafka waits for the metadata record to be consumed back).
 * - A segment's states move only along isValidSegmentTransition; an invalid event is rejected
 *   with an error and changes nothing.
 * - Lookups see only COPY_SEGMENT_FINISHED segments for reads (remoteLogSegmentMetadata,
 *   highestOffsetForEpoch); listRemoteLogSegments lists every state, ordered by start offset.
 * - Lookups for a partition whose metadata is not loaded yet throw RemoteStorageError (Kafka's
 *   RemoteResourceNotFoundException / "not initialized" cases), never answer empty.
 */
import type {
  RemoteLogSegmentMetadata,
  RemoteLogSegmentMetadataUpdate,
  RemotePartitionDeleteMetadata,
  TopicIdPartition,
} from './remote-log-segment-metadata';

export interface RemoteLogMetadataManager {
  configure(configs: Readonly<Record<string, string>>): Promise<void> | void;
  /** Records a new segment, in COPY_SEGMENT_STARTED. */
  addRemoteLogSegmentMetadata(metadata: RemoteLogSegmentMetadata): Promise<void>;
  updateRemoteLogSegmentMetadata(update: RemoteLogSegmentMetadataUpdate): Promise<void>;
  /** The finished segment that holds `offset` in the lineage of `epochForOffset`, or null. */
  remoteLogSegmentMetadata(tp: TopicIdPartition, epochForOffset: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null>;
  /** The highest offset of a finished segment for `leaderEpoch`, or null. */
  highestOffsetForEpoch(tp: TopicIdPartition, leaderEpoch: number): Promise<bigint | null>;
  putRemotePartitionDeleteMetadata(metadata: RemotePartitionDeleteMetadata): Promise<void>;
  /** Every segment of the partition in every state, by start offset. */
  listRemoteLogSegments(tp: TopicIdPartition): Promise<RemoteLogSegmentMetadata[]>;
  /** The segments that carry `leaderEpoch` in their lineage, by start offset. */
  listRemoteLogSegmentsForEpoch(tp: TopicIdPartition, leaderEpoch: number): Promise<RemoteLogSegmentMetadata[]>;
  /** This broker became leader of / follower for these partitions: load their metadata. */
  onPartitionLeadershipChanges(leaders: readonly TopicIdPartition[], followers: readonly TopicIdPartition[]): void;
  /** This broker no longer hosts these partitions: drop their state. */
  onStopPartitions(partitions: readonly TopicIdPartition[]): void;
  /** Total bytes of the partition's remote segments with `leaderEpoch` in their lineage. */
  remoteLogSize(tp: TopicIdPartition, leaderEpoch: number): Promise<bigint>;
  /** Whether the partition's metadata is loaded, so lookups answer (Kafka's isReady). */
  isReady(tp: TopicIdPartition): boolean;
  close(): Promise<void>;
}
