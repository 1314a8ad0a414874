/**
 * The plugin interface that moves segment data to and from a remote store (Kafka's
 * RemoteStorageManager, KIP-405), and what a copy hands it (Kafka's LogSegmentData).
 *
 * Owns: the contract only. Implementations: local-tiered-storage.ts (a directory, what Kafka's
 * `org.apache.kafka.server.log.remote.storage.LocalTieredStorage` test plugin does),
 * s3-remote-storage-manager.ts (any S3-compatible object store), or a JS module named by
 * `remote.log.storage.manager.class.name` (remote-storage-manager-loader.ts).
 *
 * Invariants every implementation keeps:
 * - copyLogSegmentData stores the segment and all its indexes under the segment's id, so that a
 *   copy retried with a new id never collides with an abandoned one; it either completes or
 *   throws (a partial copy is cleaned up by deleteLogSegmentData of the same metadata).
 * - fetchLogSegment returns exactly bytes [startPosition, endPosition] (inclusive, clamped to the
 *   segment's size) of the `.log` file; fetchIndex returns the whole index file.
 * - deleteLogSegmentData is idempotent: deleting what is already gone succeeds.
 * - A missing segment or index throws RemoteResourceNotFoundError; any other failure of the store
 *   throws RemoteStorageError. Nothing else escapes.
 */
import type { RemoteLogSegmentMetadata } from './remote-log-segment-metadata';

/** Kafka's RemoteStorageManager.IndexType. */
export enum IndexType {
  OFFSET = 'OFFSET',
  TIMESTAMP = 'TIMESTAMP',
  PRODUCER_SNAPSHOT = 'PRODUCER_SNAPSHOT',
  TRANSACTION = 'TRANSACTION',
  LEADER_EPOCH = 'LEADER_EPOCH',
}

/** The files of one rolled segment, as the RemoteLogManager hands them to a copy (Kafka's LogSegmentData). */
export interface LogSegmentData {
  /** Path of the `.log` file. */
  readonly logSegment: string;
  readonly offsetIndex: string;
  readonly timeIndex: string;
  /** Path of the `.txnindex` file, when the segment has one. */
  readonly transactionIndex: string | null;
  /** Path of the producer snapshot taken at the segment's end (`<next base offset>.snapshot`). */
  readonly producerSnapshotIndex: string;
  /** The leader-epoch checkpoint up to the segment's end, in the leader-epoch-checkpoint file format. */
  readonly leaderEpochIndex: Buffer;
}

/** A remote store failure (Kafka's RemoteStorageException). */
export class RemoteStorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteStorageError';
  }
}

/** A remote segment or index that does not exist (Kafka's RemoteResourceNotFoundException). */
export class RemoteResourceNotFoundError extends RemoteStorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteResourceNotFoundError';
  }
}

export interface RemoteStorageManager {
  /** The `rsm.config.*`-stripped plugin properties, Kafka's Configurable.configure. Called once before any other method. */
  configure(configs: Readonly<Record<string, string>>): Promise<void> | void;
  /** Copies the segment and its indexes; returns custom metadata to keep with the segment, or null. */
  copyLogSegmentData(metadata: RemoteLogSegmentMetadata, data: LogSegmentData): Promise<Buffer | null>;
  /** Bytes startPosition..endPosition (inclusive; endPosition omitted = to the end) of the segment's `.log`. */
  fetchLogSegment(metadata: RemoteLogSegmentMetadata, startPosition: number, endPosition?: number): Promise<Buffer>;
  /** One whole index of the segment. TRANSACTION on a segment without a transaction index throws RemoteResourceNotFoundError. */
  fetchIndex(metadata: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer>;
  /** Deletes the segment and all its indexes; succeeds when they are already gone. */
  deleteLogSegmentData(metadata: RemoteLogSegmentMetadata): Promise<void>;
  close(): Promise<void>;
}
