/**
 * The data model of tiered storage (KIP-405), as Kafka's storage API defines it: which topic
 * partition a remote segment belongs to, its id, offsets, leader-epoch lineage and size, and the
 * lifecycle states of a remote segment and of a partition's remote data.
 *
 * Owns: the state enums with Kafka's wire ids and their allowed transitions, and applying an
 * update to a segment's metadata. Holds no I/O.
 *
 * Invariants: a RemoteLogSegmentMetadata is immutable (updates produce a new object);
 * segmentLeaderEpochs is sorted by epoch, its offsets ascending, its first offset is the
 * segment's startOffset and every offset is <= endOffset; startOffset <= endOffset. State ids are
 * Kafka's (they are written in `__remote_log_metadata` records), and only the transitions of
 * Kafka's RemoteLogSegmentState / RemotePartitionDeleteState are accepted.
 */

/** A topic partition together with its topic id (Kafka's TopicIdPartition). */
export interface TopicIdPartition {
  /** The topic id in Kafka's base64 form, as everywhere in krill. */
  readonly topicId: string;
  readonly topic: string;
  readonly partition: number;
}

/** A remote segment's identity: its partition and a fresh random uuid (Kafka's RemoteLogSegmentId). */
export interface RemoteLogSegmentId {
  readonly topicIdPartition: TopicIdPartition;
  /** The segment's uuid, base64 like topic ids. */
  readonly id: string;
}

/** Kafka's RemoteLogSegmentState, with its ids. */
export enum RemoteLogSegmentState {
  COPY_SEGMENT_STARTED = 0,
  COPY_SEGMENT_FINISHED = 1,
  DELETE_SEGMENT_STARTED = 2,
  DELETE_SEGMENT_FINISHED = 3,
}

/** Kafka's RemotePartitionDeleteState, with its ids. */
export enum RemotePartitionDeleteState {
  DELETE_PARTITION_MARKED = 0,
  DELETE_PARTITION_STARTED = 1,
  DELETE_PARTITION_FINISHED = 2,
}

/** One entry of a segment's leader-epoch lineage: the epoch and the first offset it wrote here. */
export interface SegmentLeaderEpoch {
  readonly epoch: number;
  readonly startOffset: bigint;
}

export interface RemoteLogSegmentMetadata {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly startOffset: bigint;
  /** The last offset in the segment (inclusive). */
  readonly endOffset: bigint;
  /** The broker that wrote this state. */
  readonly brokerId: number;
  readonly maxTimestampMs: bigint;
  /** When this state was produced. */
  readonly eventTimestampMs: bigint;
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
  readonly segmentSizeInBytes: number;
  /** What the storage manager returned from copyLogSegmentData, if anything. */
  readonly customMetadata: Buffer | null;
  readonly state: RemoteLogSegmentState;
}

export interface RemoteLogSegmentMetadataUpdate {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly eventTimestampMs: bigint;
  readonly customMetadata: Buffer | null;
  readonly state: RemoteLogSegmentState;
  readonly brokerId: number;
}

export interface RemotePartitionDeleteMetadata {
  readonly topicIdPartition: TopicIdPartition;
  readonly state: RemotePartitionDeleteState;
  readonly eventTimestampMs: bigint;
  readonly brokerId: number;
}

/**
 * Kafka's RemoteLogSegmentState.isValidTransition: STARTED -> FINISHED -> DELETE_STARTED ->
 * DELETE_FINISHED, an unfinished copy may go straight to DELETE_STARTED, and a state may repeat
 * (a retried or replayed event).
 */
export function isValidSegmentTransition(from: RemoteLogSegmentState | undefined, to: RemoteLogSegmentState): boolean {
  if (from === undefined) return to === RemoteLogSegmentState.COPY_SEGMENT_STARTED;
  if (from === to) return true;
  switch (from) {
    case RemoteLogSegmentState.COPY_SEGMENT_STARTED:
      return to === RemoteLogSegmentState.COPY_SEGMENT_FINISHED || to === RemoteLogSegmentState.DELETE_SEGMENT_STARTED;
    case RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
      return to === RemoteLogSegmentState.DELETE_SEGMENT_STARTED;
    case RemoteLogSegmentState.DELETE_SEGMENT_STARTED:
      return to === RemoteLogSegmentState.DELETE_SEGMENT_FINISHED;
    case RemoteLogSegmentState.DELETE_SEGMENT_FINISHED:
      return false;
  }
}

/** Kafka's RemotePartitionDeleteState.isValidTransition: MARKED -> STARTED -> FINISHED, a state may repeat (a retried or replayed event). */
export function isValidPartitionDeleteTransition(from: RemotePartitionDeleteState | undefined, to: RemotePartitionDeleteState): boolean {
  if (from === undefined) return to === RemotePartitionDeleteState.DELETE_PARTITION_MARKED;
  if (from === to) return true;
  return to === from + 1;
}

/** The segment's metadata with an update applied; throws on another segment's update or a transition Kafka forbids. */
export function applySegmentUpdate(m: RemoteLogSegmentMetadata, u: RemoteLogSegmentMetadataUpdate): RemoteLogSegmentMetadata {
  if (u.remoteLogSegmentId.id !== m.remoteLogSegmentId.id) {
    throw new Error(`update for remote segment ${u.remoteLogSegmentId.id} applied to ${m.remoteLogSegmentId.id}`);
  }
  if (!isValidSegmentTransition(m.state, u.state)) {
    throw new Error(`remote segment ${m.remoteLogSegmentId.id}: invalid state transition ${RemoteLogSegmentState[m.state]} -> ${RemoteLogSegmentState[u.state]}`);
  }
  return { ...m, state: u.state, eventTimestampMs: u.eventTimestampMs, brokerId: u.brokerId, customMetadata: u.customMetadata ?? m.customMetadata };
}

/** `topic-partition` with the topic id, for log lines and keys. */
export function topicIdPartitionString(tp: TopicIdPartition): string {
  return `${tp.topicId}:${tp.topic}-${tp.partition}`;
}
