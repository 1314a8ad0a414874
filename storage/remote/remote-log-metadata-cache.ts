/**
 * The in-memory remote log metadata of user partitions (Kafka's RemoteLogMetadataCache with its
 * RemoteLogLeaderEpochState, and RemotePartitionMetadataStore over them): what a
 * RemoteLogMetadataManager answers its lookups from, whatever it keeps the events in.
 *
 * Owns:
 * - RemoteLogMetadataCache: one partition's segments by id and, per leader epoch of their
 *   lineage, an EpochState: the offset -> segment map of the COPY_SEGMENT_FINISHED segments
 *   (keyed by the offset at which that epoch starts in the segment), the unreferenced segments
 *   (still copying, being deleted, or replaced by an overlapping later upload) and the highest
 *   offset a finished segment holds for the epoch. The lookups, listings and remoteLogSize.
 * - RemotePartitionMetadataStore: the caches of the partitions this broker has loaded, whether
 *   each is initialized (its metadata partition read up to where it was when loading started),
 *   and the partitions' remote delete states.
 *
 * Invariants:
 * - A segment is in the cache from its COPY_SEGMENT_STARTED event until its
 *   DELETE_SEGMENT_FINISHED event, which removes every trace of it.
 * - Every cached segment is, for each epoch of its lineage, either in that epoch's offset map (only
 *   when COPY_SEGMENT_FINISHED) or in its unreferenced set, never both. A finished upload that
 *   covers the offsets of the epoch's last mapped segments (an unclean election let another leader
 *   upload the same range again) pushes those segments to unreferenced, so reads find the newer one
 *   and the older one is still listed for cleanup.
 * - A read lookup (remoteLogSegmentMetadata, highestOffsetForEpoch) sees only
 *   COPY_SEGMENT_FINISHED segments; the listings and remoteLogSize see every state but
 *   DELETE_SEGMENT_FINISHED. highestOffsetForEpoch only grows (Kafka keeps it when segments go).
 * - An event whose transition isValidSegmentTransition refuses, a COPY_SEGMENT_STARTED update,
 *   an add in another state or an event of another partition throws and changes nothing. An update
 *   for an unknown segment throws RemoteResourceNotFoundError once the cache is initialized; before
 *   that it is dropped (the segment's earlier events were already cleaned up), as Kafka does.
 * - Store lookups of a partition not loaded throw RemoteResourceNotFoundError, of a loaded partition
 *   not initialized yet RemoteLogMetadataNotReadyError (Kafka's retriable ReplicaNotAvailable):
 *   never an empty answer.
 * - Partition delete states move only along isValidPartitionDeleteTransition;
 *   DELETE_PARTITION_FINISHED drops the partition's cache and delete state.
 */
import {
  isValidPartitionDeleteTransition,
  isValidSegmentTransition,
  RemoteLogSegmentState,
  RemotePartitionDeleteState,
  applySegmentUpdate,
  topicIdPartitionString,
  type RemoteLogSegmentMetadata,
  type RemoteLogSegmentMetadataUpdate,
  type RemotePartitionDeleteMetadata,
  type TopicIdPartition,
} from './remote-log-segment-metadata';
import { RemoteResourceNotFoundError, RemoteStorageError } from './remote-storage-manager';

/** A partition whose remote log metadata is still being loaded (Kafka answers ReplicaNotAvailableException, retriable). */
export class RemoteLogMetadataNotReadyError extends RemoteStorageError {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteLogMetadataNotReadyError';
  }
}

/** An event the state machine refuses: it was not applied. */
export class InvalidRemoteLogMetadataError extends RemoteStorageError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRemoteLogMetadataError';
  }
}

function sameTopicIdPartition(a: TopicIdPartition, b: TopicIdPartition): boolean {
  return a.topicId === b.topicId && a.partition === b.partition && a.topic === b.topic;
}

/** The last offset `epoch` holds in the segment: the next epoch's start - 1, or the segment's end. */
function epochEndOffsetIn(m: RemoteLogSegmentMetadata, epoch: number): bigint {
  for (const e of m.segmentLeaderEpochs) if (e.epoch > epoch) return e.startOffset - 1n;
  return m.endOffset;
}

function byStartOffset(a: RemoteLogSegmentMetadata, b: RemoteLogSegmentMetadata): number {
  return a.startOffset < b.startOffset ? -1 : a.startOffset > b.startOffset ? 1 : 0;
}

/** One leader epoch's segments within a partition (Kafka's RemoteLogLeaderEpochState). */
export class RemoteLogLeaderEpochState {
  /** Finished segments by the offset where this epoch starts in them, ascending. */
  private readonly offsetToId: { offset: bigint; id: string }[] = [];
  private readonly unreferenced = new Set<string>();
  private highest: bigint | null = null;

  /** Index of the last entry with offset <= `offset`, or -1. */
  private floorIndex(offset: bigint): number {
    let lo = 0;
    let hi = this.offsetToId.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.offsetToId[mid].offset <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** The finished segment mapped at the greatest offset <= `offset`. */
  floorSegmentId(offset: bigint): string | null {
    const i = this.floorIndex(offset);
    return i < 0 ? null : this.offsetToId[i].id;
  }

  get highestLogOffset(): bigint | null {
    return this.highest;
  }

  referencedSegmentIds(): string[] {
    return this.offsetToId.map((e) => e.id);
  }

  unreferencedSegmentIds(): string[] {
    return [...this.unreferenced];
  }

  get isEmpty(): boolean {
    return this.offsetToId.length === 0 && this.unreferenced.size === 0;
  }

  segmentIds(): string[] {
    return [...this.referencedSegmentIds(), ...this.unreferenced];
  }

  onCopyStarted(id: string): void {
    this.unreferenced.add(id);
  }

  /**
   * The segment is readable from `startOffset` (this epoch's first offset in it) to `epochEndOffset`.
   * Mapped segments at or after `startOffset` are superseded when this one reaches at least as far
   * as everything mapped so far (the new leader uploaded a superset of what the old one had).
   */
  onCopyFinished(startOffset: bigint, id: string, epochEndOffset: bigint): void {
    while (this.offsetToId.length > 0) {
      const last = this.offsetToId[this.offsetToId.length - 1];
      if (last.offset < startOffset || this.highest === null || this.highest > epochEndOffset) break;
      this.offsetToId.pop();
      this.unreferenced.add(last.id);
    }
    const i = this.floorIndex(startOffset);
    if (i >= 0 && this.offsetToId[i].offset === startOffset) {
      // Kafka's map put drops the replaced segment from the epoch altogether; it stays listed here so it can be cleaned up.
      if (this.offsetToId[i].id !== id) this.unreferenced.add(this.offsetToId[i].id);
      this.offsetToId[i] = { offset: startOffset, id };
    } else this.offsetToId.splice(i + 1, 0, { offset: startOffset, id });
    this.unreferenced.delete(id);
    if (this.highest === null || epochEndOffset > this.highest) this.highest = epochEndOffset;
  }

  onDeleteStarted(startOffset: bigint, id: string): void {
    const i = this.floorIndex(startOffset);
    if (i >= 0 && this.offsetToId[i].offset === startOffset && this.offsetToId[i].id === id) this.offsetToId.splice(i, 1);
    this.unreferenced.add(id);
  }

  onDeleteFinished(id: string): void {
    this.unreferenced.delete(id);
  }

  /** Drops every trace of the segment (a re-added COPY_SEGMENT_STARTED replacing its lineage). */
  forget(id: string): void {
    const i = this.offsetToId.findIndex((e) => e.id === id);
    if (i >= 0) this.offsetToId.splice(i, 1);
    this.unreferenced.delete(id);
  }
}

/** The remote log metadata of one user partition (Kafka's RemoteLogMetadataCache). */
export class RemoteLogMetadataCache {
  /** Every segment not yet DELETE_SEGMENT_FINISHED, in the order first added. */
  private readonly segments = new Map<string, RemoteLogSegmentMetadata>();
  private readonly epochs = new Map<number, RemoteLogLeaderEpochState>();
  private initialized = false;

  constructor(readonly topicIdPartition: TopicIdPartition) {}

  markInitialized(): void {
    this.initialized = true;
  }

  isInitialized(): boolean {
    return this.initialized;
  }

  private epochState(epoch: number): RemoteLogLeaderEpochState {
    let s = this.epochs.get(epoch);
    if (!s) {
      s = new RemoteLogLeaderEpochState();
      this.epochs.set(epoch, s);
    }
    return s;
  }

  /** The epoch states of a leader epoch (for tests and diagnostics), or undefined. */
  leaderEpochState(epoch: number): RemoteLogLeaderEpochState | undefined {
    return this.epochs.get(epoch);
  }

  private checkPartition(tp: TopicIdPartition, what: string): void {
    if (!sameTopicIdPartition(tp, this.topicIdPartition)) {
      throw new InvalidRemoteLogMetadataError(`${what} of ${topicIdPartitionString(tp)} given to the cache of ${topicIdPartitionString(this.topicIdPartition)}`);
    }
  }

  /** A segment in COPY_SEGMENT_STARTED: listed, not readable (Kafka's addCopyInProgressSegment). */
  addCopyInProgressSegment(m: RemoteLogSegmentMetadata): void {
    this.checkPartition(m.remoteLogSegmentId.topicIdPartition, 'segment');
    if (m.state !== RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
      throw new InvalidRemoteLogMetadataError(
        `remote segment ${m.remoteLogSegmentId.id} must be added in COPY_SEGMENT_STARTED, not ${RemoteLogSegmentState[m.state]}`,
      );
    }
    if (m.segmentLeaderEpochs.length === 0) throw new InvalidRemoteLogMetadataError(`remote segment ${m.remoteLogSegmentId.id} has no leader epochs`);
    const id = m.remoteLogSegmentId.id;
    const existing = this.segments.get(id);
    if (!isValidSegmentTransition(existing?.state, m.state)) {
      throw new InvalidRemoteLogMetadataError(
        `remote segment ${id}: invalid state transition ${existing ? RemoteLogSegmentState[existing.state] : 'none'} -> ${RemoteLogSegmentState[m.state]}`,
      );
    }
    if (existing) for (const e of existing.segmentLeaderEpochs) this.epochs.get(e.epoch)?.forget(id);
    for (const e of m.segmentLeaderEpochs) this.epochState(e.epoch).onCopyStarted(id);
    this.segments.set(id, m);
  }

  /**
   * Applies a state change. Returns false when the update was dropped because the segment is
   * unknown and the cache is still loading; throws when it is refused.
   */
  updateRemoteLogSegmentMetadata(u: RemoteLogSegmentMetadataUpdate): boolean {
    this.checkPartition(u.remoteLogSegmentId.topicIdPartition, 'segment update');
    const id = u.remoteLogSegmentId.id;
    const existing = this.segments.get(id);
    if (!existing) {
      if (!this.initialized) return false;
      throw new RemoteResourceNotFoundError(`no remote log segment metadata found for ${id} of ${topicIdPartitionString(this.topicIdPartition)}`);
    }
    if (u.state === RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
      throw new InvalidRemoteLogMetadataError(`remote segment ${id}: COPY_SEGMENT_STARTED is added with the segment's metadata, not by an update`);
    }
    if (!isValidSegmentTransition(existing.state, u.state)) {
      throw new InvalidRemoteLogMetadataError(
        `remote segment ${id}: invalid state transition ${RemoteLogSegmentState[existing.state]} -> ${RemoteLogSegmentState[u.state]}`,
      );
    }
    const updated = applySegmentUpdate(existing, u);
    switch (u.state) {
      case RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
        for (const e of updated.segmentLeaderEpochs) this.epochState(e.epoch).onCopyFinished(e.startOffset, id, epochEndOffsetIn(updated, e.epoch));
        this.segments.set(id, updated);
        break;
      case RemoteLogSegmentState.DELETE_SEGMENT_STARTED:
        for (const e of updated.segmentLeaderEpochs) this.epochState(e.epoch).onDeleteStarted(e.startOffset, id);
        this.segments.set(id, updated);
        break;
      case RemoteLogSegmentState.DELETE_SEGMENT_FINISHED:
        for (const e of updated.segmentLeaderEpochs) this.epochState(e.epoch).onDeleteFinished(id);
        this.segments.delete(id);
        break;
    }
    return true;
  }

  /** The segment's current metadata, if it is still tracked. */
  segment(id: string): RemoteLogSegmentMetadata | undefined {
    return this.segments.get(id);
  }

  /**
   * The COPY_SEGMENT_FINISHED segment that holds `offset` for `leaderEpoch`: the one mapped at the
   * greatest offset <= `offset` in that epoch, provided the epoch still covers `offset` inside it
   * (up to the next epoch's start in the segment's lineage, or the segment's end).
   */
  remoteLogSegmentMetadata(leaderEpoch: number, offset: bigint): RemoteLogSegmentMetadata | null {
    const state = this.epochs.get(leaderEpoch);
    if (!state) return null;
    const id = state.floorSegmentId(offset);
    if (id === null) return null;
    const m = this.segments.get(id);
    if (!m) return null;
    return offset > epochEndOffsetIn(m, leaderEpoch) ? null : m;
  }

  /** The highest offset finished segments have held for `leaderEpoch`, or null. */
  highestOffsetForEpoch(leaderEpoch: number): bigint | null {
    return this.epochs.get(leaderEpoch)?.highestLogOffset ?? null;
  }

  /** Every tracked segment, in every state but DELETE_SEGMENT_FINISHED, by start offset. */
  listAllRemoteLogSegments(): RemoteLogSegmentMetadata[] {
    return [...this.segments.values()].sort(byStartOffset);
  }

  /** The tracked segments with `leaderEpoch` in their lineage, by start offset (on a tie the epoch's readable one first). */
  listRemoteLogSegments(leaderEpoch: number): RemoteLogSegmentMetadata[] {
    const state = this.epochs.get(leaderEpoch);
    if (!state) return [];
    const out: RemoteLogSegmentMetadata[] = [];
    for (const id of state.segmentIds()) {
      const m = this.segments.get(id);
      if (!m) throw new RemoteResourceNotFoundError(`no remote log segment metadata found for ${id} of ${topicIdPartitionString(this.topicIdPartition)}`);
      out.push(m);
    }
    return out.sort(byStartOffset);
  }

  /** Bytes of the tracked segments with `leaderEpoch` in their lineage (Kafka's remoteLogSize). */
  remoteLogSize(leaderEpoch: number): bigint {
    let size = 0n;
    for (const m of this.listRemoteLogSegments(leaderEpoch)) size += BigInt(m.segmentSizeInBytes);
    return size;
  }
}

/** The caches of the partitions a broker has loaded, and their delete states (Kafka's RemotePartitionMetadataStore). */
export class RemotePartitionMetadataStore {
  private readonly caches = new Map<string, RemoteLogMetadataCache>();
  private readonly deletes = new Map<string, RemotePartitionDeleteMetadata>();

  /** Starts tracking the partition (a no-op when it already is). */
  maybeLoadPartition(tp: TopicIdPartition): RemoteLogMetadataCache {
    const key = topicIdPartitionString(tp);
    let c = this.caches.get(key);
    if (!c) {
      c = new RemoteLogMetadataCache(tp);
      this.caches.set(key, c);
    }
    return c;
  }

  markInitialized(tp: TopicIdPartition): void {
    const c = this.caches.get(topicIdPartitionString(tp));
    if (!c) throw new RemoteResourceNotFoundError(`remote log metadata of ${topicIdPartitionString(tp)} is not loaded`);
    c.markInitialized();
  }

  isLoaded(tp: TopicIdPartition): boolean {
    return this.caches.has(topicIdPartitionString(tp));
  }

  isInitialized(tp: TopicIdPartition): boolean {
    return this.caches.get(topicIdPartitionString(tp))?.isInitialized() ?? false;
  }

  clearTopicPartition(tp: TopicIdPartition): void {
    this.caches.delete(topicIdPartitionString(tp));
  }

  /** The loaded partitions. */
  partitions(): TopicIdPartition[] {
    return [...this.caches.values()].map((c) => c.topicIdPartition);
  }

  private loadedCache(tp: TopicIdPartition): RemoteLogMetadataCache {
    const c = this.caches.get(topicIdPartitionString(tp));
    if (!c) throw new InvalidRemoteLogMetadataError(`no remote log metadata loaded for ${topicIdPartitionString(tp)}`);
    return c;
  }

  handleRemoteLogSegmentMetadata(m: RemoteLogSegmentMetadata): void {
    this.loadedCache(m.remoteLogSegmentId.topicIdPartition).addCopyInProgressSegment(m);
  }

  /** False when the update was dropped (unknown segment while loading). */
  handleRemoteLogSegmentMetadataUpdate(u: RemoteLogSegmentMetadataUpdate): boolean {
    return this.loadedCache(u.remoteLogSegmentId.topicIdPartition).updateRemoteLogSegmentMetadata(u);
  }

  handleRemotePartitionDeleteMetadata(m: RemotePartitionDeleteMetadata): void {
    const key = topicIdPartitionString(m.topicIdPartition);
    const existing = this.deletes.get(key);
    if (!isValidPartitionDeleteTransition(existing?.state, m.state)) {
      throw new InvalidRemoteLogMetadataError(
        `${key}: invalid partition delete transition ${existing ? RemotePartitionDeleteState[existing.state] : 'none'} -> ${RemotePartitionDeleteState[m.state]}`,
      );
    }
    if (m.state === RemotePartitionDeleteState.DELETE_PARTITION_FINISHED) {
      this.caches.delete(key);
      this.deletes.delete(key);
    } else this.deletes.set(key, m);
  }

  /** The partition's latest delete event, while the delete is not finished. */
  remotePartitionDeleteMetadata(tp: TopicIdPartition): RemotePartitionDeleteMetadata | undefined {
    return this.deletes.get(topicIdPartitionString(tp));
  }

  /** The partition's cache, ready for lookups; throws when not loaded or not initialized. */
  readyCache(tp: TopicIdPartition): RemoteLogMetadataCache {
    const c = this.caches.get(topicIdPartitionString(tp));
    if (!c) throw new RemoteResourceNotFoundError(`no remote log metadata for partition ${topicIdPartitionString(tp)}`);
    if (!c.isInitialized()) throw new RemoteLogMetadataNotReadyError(`remote log metadata cache is not initialized for partition ${topicIdPartitionString(tp)}`);
    return c;
  }

  /** The cache, if the partition is loaded, whether or not it is initialized. */
  cache(tp: TopicIdPartition): RemoteLogMetadataCache | undefined {
    return this.caches.get(topicIdPartitionString(tp));
  }

  remoteLogSegmentMetadata(tp: TopicIdPartition, epochForOffset: number, offset: bigint): RemoteLogSegmentMetadata | null {
    return this.readyCache(tp).remoteLogSegmentMetadata(epochForOffset, offset);
  }

  highestOffsetForEpoch(tp: TopicIdPartition, leaderEpoch: number): bigint | null {
    return this.readyCache(tp).highestOffsetForEpoch(leaderEpoch);
  }

  listRemoteLogSegments(tp: TopicIdPartition): RemoteLogSegmentMetadata[] {
    return this.readyCache(tp).listAllRemoteLogSegments();
  }

  listRemoteLogSegmentsForEpoch(tp: TopicIdPartition, leaderEpoch: number): RemoteLogSegmentMetadata[] {
    return this.readyCache(tp).listRemoteLogSegments(leaderEpoch);
  }

  remoteLogSize(tp: TopicIdPartition, leaderEpoch: number): bigint {
    return this.readyCache(tp).remoteLogSize(leaderEpoch);
  }

  clear(): void {
    this.caches.clear();
    this.deletes.clear();
  }
}
