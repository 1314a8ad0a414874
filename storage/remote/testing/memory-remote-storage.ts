/**
 * Test doubles for the remote log manager's unit tests: a RemoteStorageManager that keeps each
 * segment's files in memory, with switches to fail copies, fetches and deletes; and a
 * RemoteLogMetadataManager that keeps every segment's latest state in a list and answers the
 * lookups by scanning it, validating transitions as the contract requires.
 *
 * Invariants: both keep the contracts of remote-storage-manager.ts / remote-log-metadata-manager.ts
 * (a missing segment or index is RemoteResourceNotFoundError, deletes are idempotent, reads see
 * only COPY_SEGMENT_FINISHED segments); they are simple on purpose (linear scans), so a test's
 * expectations never depend on the production cache they stand in for.
 */
import * as fs from 'node:fs';
import {
  applySegmentUpdate,
  isValidSegmentTransition,
  RemoteLogSegmentMetadata,
  RemoteLogSegmentMetadataUpdate,
  RemoteLogSegmentState,
  RemotePartitionDeleteMetadata,
  TopicIdPartition,
  topicIdPartitionString,
} from '../remote-log-segment-metadata';
import type { RemoteLogMetadataManager } from '../remote-log-metadata-manager';
import { IndexType, LogSegmentData, RemoteResourceNotFoundError, RemoteStorageError, RemoteStorageManager } from '../remote-storage-manager';

export class MemoryRemoteStorageManager implements RemoteStorageManager {
  readonly segments = new Map<string, Map<IndexType | 'LOG', Buffer>>();
  failCopies = false;
  failFetches = false;
  failDeletes = false;
  copies = 0;
  configure(): void {}
  async copyLogSegmentData(m: RemoteLogSegmentMetadata, d: LogSegmentData): Promise<Buffer | null> {
    await Promise.resolve();
    if (this.failCopies) throw new RemoteStorageError('remote store unavailable (copy)');
    const files = new Map<IndexType | 'LOG', Buffer>([
      ['LOG', fs.readFileSync(d.logSegment)],
      [IndexType.OFFSET, fs.readFileSync(d.offsetIndex)],
      [IndexType.TIMESTAMP, fs.readFileSync(d.timeIndex)],
      [IndexType.PRODUCER_SNAPSHOT, fs.readFileSync(d.producerSnapshotIndex)],
      [IndexType.LEADER_EPOCH, d.leaderEpochIndex],
    ]);
    if (d.transactionIndex) files.set(IndexType.TRANSACTION, fs.readFileSync(d.transactionIndex));
    this.segments.set(m.remoteLogSegmentId.id, files);
    this.copies++;
    return null;
  }
  async fetchLogSegment(m: RemoteLogSegmentMetadata, start: number, end?: number): Promise<Buffer> {
    await Promise.resolve();
    if (this.failFetches) throw new RemoteStorageError('remote store unavailable (fetch)');
    const log = this.segments.get(m.remoteLogSegmentId.id)?.get('LOG');
    if (!log) throw new RemoteResourceNotFoundError(`no segment ${m.remoteLogSegmentId.id}`);
    return log.subarray(start, end === undefined ? log.length : Math.min(end + 1, log.length));
  }
  async fetchIndex(m: RemoteLogSegmentMetadata, t: IndexType): Promise<Buffer> {
    await Promise.resolve();
    const b = this.segments.get(m.remoteLogSegmentId.id)?.get(t);
    if (!b) throw new RemoteResourceNotFoundError(`no ${t} index for ${m.remoteLogSegmentId.id}`);
    return b;
  }
  async deleteLogSegmentData(m: RemoteLogSegmentMetadata): Promise<void> {
    await Promise.resolve();
    if (this.failDeletes) throw new RemoteStorageError('remote store unavailable (delete)');
    this.segments.delete(m.remoteLogSegmentId.id);
  }
  async close(): Promise<void> {}
}

export class MemoryRemoteLogMetadataManager implements RemoteLogMetadataManager {
  readonly segments = new Map<string, RemoteLogSegmentMetadata>();
  readonly partitionDeletes: RemotePartitionDeleteMetadata[] = [];
  readonly events: { id: string; state: RemoteLogSegmentState }[] = [];
  notReady = new Set<string>();
  configure(): void {}
  async addRemoteLogSegmentMetadata(m: RemoteLogSegmentMetadata): Promise<void> {
    await Promise.resolve();
    if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_STARTED) throw new Error('a new segment must be COPY_SEGMENT_STARTED');
    this.segments.set(m.remoteLogSegmentId.id, m);
    this.events.push({ id: m.remoteLogSegmentId.id, state: m.state });
  }
  async updateRemoteLogSegmentMetadata(u: RemoteLogSegmentMetadataUpdate): Promise<void> {
    await Promise.resolve();
    const m = this.segments.get(u.remoteLogSegmentId.id);
    if (!m) throw new RemoteResourceNotFoundError(`no segment ${u.remoteLogSegmentId.id}`);
    if (!isValidSegmentTransition(m.state, u.state)) throw new Error(`invalid transition ${m.state} -> ${u.state}`);
    if (u.state === RemoteLogSegmentState.DELETE_SEGMENT_FINISHED) this.segments.delete(m.remoteLogSegmentId.id);
    else this.segments.set(m.remoteLogSegmentId.id, applySegmentUpdate(m, u));
    this.events.push({ id: u.remoteLogSegmentId.id, state: u.state });
  }
  private of(tp: TopicIdPartition): RemoteLogSegmentMetadata[] {
    const key = topicIdPartitionString(tp);
    return [...this.segments.values()].filter((m) => topicIdPartitionString(m.remoteLogSegmentId.topicIdPartition) === key).sort((a, b) => (a.startOffset < b.startOffset ? -1 : a.startOffset > b.startOffset ? 1 : 0));
  }
  private static epochEnd(m: RemoteLogSegmentMetadata, i: number): bigint {
    const next = m.segmentLeaderEpochs[i + 1];
    return next ? next.startOffset - 1n : m.endOffset;
  }
  async remoteLogSegmentMetadata(tp: TopicIdPartition, epoch: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null> {
    await Promise.resolve();
    for (const m of this.of(tp)) {
      if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED) continue;
      const i = m.segmentLeaderEpochs.findIndex((e) => e.epoch === epoch);
      if (i < 0) continue;
      if (offset >= m.segmentLeaderEpochs[i].startOffset && offset <= MemoryRemoteLogMetadataManager.epochEnd(m, i)) return m;
    }
    return null;
  }
  async highestOffsetForEpoch(tp: TopicIdPartition, epoch: number): Promise<bigint | null> {
    await Promise.resolve();
    let best: bigint | null = null;
    for (const m of this.of(tp)) {
      if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_FINISHED) continue;
      const i = m.segmentLeaderEpochs.findIndex((e) => e.epoch === epoch);
      if (i < 0) continue;
      const end = MemoryRemoteLogMetadataManager.epochEnd(m, i);
      if (best === null || end > best) best = end;
    }
    return best;
  }
  async putRemotePartitionDeleteMetadata(m: RemotePartitionDeleteMetadata): Promise<void> {
    this.partitionDeletes.push(m);
  }
  async listRemoteLogSegments(tp: TopicIdPartition): Promise<RemoteLogSegmentMetadata[]> {
    return this.of(tp);
  }
  async listRemoteLogSegmentsForEpoch(tp: TopicIdPartition, epoch: number): Promise<RemoteLogSegmentMetadata[]> {
    return this.of(tp).filter((m) => m.segmentLeaderEpochs.some((e) => e.epoch === epoch));
  }
  onPartitionLeadershipChanges(): void {}
  onStopPartitions(): void {}
  async remoteLogSize(tp: TopicIdPartition, epoch: number): Promise<bigint> {
    let n = 0n;
    for (const m of await this.listRemoteLogSegmentsForEpoch(tp, epoch)) n += BigInt(m.segmentSizeInBytes);
    return n;
  }
  isReady(tp: TopicIdPartition): boolean {
    return !this.notReady.has(topicIdPartitionString(tp));
  }
  async close(): Promise<void> {}
}
