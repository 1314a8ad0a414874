/**
 * RemoteLogMetadataCache and RemotePartitionMetadataStore: the segment lifecycle, lookups across
 * epochs and at their boundaries, overlapping uploads after an unclean leader election, size
 * accounting in every state, refused events, and the not-loaded / not-initialized answers.
 */
import {
  InvalidRemoteLogMetadataError,
  RemoteLogMetadataCache,
  RemoteLogMetadataNotReadyError,
  RemotePartitionMetadataStore,
} from './remote-log-metadata-cache';
import {
  RemoteLogSegmentState as S,
  RemotePartitionDeleteState as P,
  type RemoteLogSegmentMetadata,
  type RemoteLogSegmentMetadataUpdate,
  type TopicIdPartition,
} from './remote-log-segment-metadata';
import { RemoteResourceNotFoundError } from './remote-storage-manager';

const tp: TopicIdPartition = { topicId: 'dGhpcy1pcy1hLXRvcGljMQ', topic: 'foo', partition: 0 };
const other: TopicIdPartition = { topicId: 'dGhpcy1pcy1hLXRvcGljMQ', topic: 'foo', partition: 1 };
let nextId = 1;

function segment(start: bigint, end: bigint, epochs: Record<number, bigint>, size = 1000, partition = tp): RemoteLogSegmentMetadata {
  const id = Buffer.alloc(16);
  id.writeUInt32BE(nextId++, 12);
  return {
    remoteLogSegmentId: { topicIdPartition: partition, id: id.toString('base64url') },
    startOffset: start,
    endOffset: end,
    brokerId: 0,
    maxTimestampMs: 100n,
    eventTimestampMs: 1n,
    segmentLeaderEpochs: Object.entries(epochs).map(([e, o]) => ({ epoch: Number(e), startOffset: o })),
    segmentSizeInBytes: size,
    customMetadata: null,
    state: S.COPY_SEGMENT_STARTED,
  };
}

function update(m: RemoteLogSegmentMetadata, state: S): RemoteLogSegmentMetadataUpdate {
  return { remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: 2n, customMetadata: null, state, brokerId: 1 };
}

function ready(): RemoteLogMetadataCache {
  const c = new RemoteLogMetadataCache(tp);
  c.markInitialized();
  return c;
}

/** Adds and finishes the segment. */
function copied(c: RemoteLogMetadataCache, m: RemoteLogSegmentMetadata): RemoteLogSegmentMetadata {
  c.addCopyInProgressSegment(m);
  c.updateRemoteLogSegmentMetadata(update(m, S.COPY_SEGMENT_FINISHED));
  return c.segment(m.remoteLogSegmentId.id)!;
}

const ids = (ms: readonly (RemoteLogSegmentMetadata | null)[]) => ms.map((m) => m?.remoteLogSegmentId.id ?? null);

test('one segment through its whole lifecycle: what reads, listings and sizes see in each state', () => {
  const c = ready();
  const m = segment(10n, 99n, { 5: 10n }, 4096);
  const look = () => ({
    read: c.remoteLogSegmentMetadata(5, 50n)?.state ?? null,
    highest: c.highestOffsetForEpoch(5),
    all: c.listAllRemoteLogSegments().map((x) => x.state),
    epoch: c.listRemoteLogSegments(5).map((x) => x.state),
    size: c.remoteLogSize(5),
  });
  expect(look()).toEqual({ read: null, highest: null, all: [], epoch: [], size: 0n });

  c.addCopyInProgressSegment(m);
  expect(look()).toEqual({ read: null, highest: null, all: [S.COPY_SEGMENT_STARTED], epoch: [S.COPY_SEGMENT_STARTED], size: 4096n });
  expect(c.leaderEpochState(5)!.unreferencedSegmentIds()).toEqual([m.remoteLogSegmentId.id]);

  c.updateRemoteLogSegmentMetadata(update(m, S.COPY_SEGMENT_FINISHED));
  expect(look()).toEqual({ read: S.COPY_SEGMENT_FINISHED, highest: 99n, all: [S.COPY_SEGMENT_FINISHED], epoch: [S.COPY_SEGMENT_FINISHED], size: 4096n });
  expect(c.leaderEpochState(5)!.referencedSegmentIds()).toEqual([m.remoteLogSegmentId.id]);
  expect(c.leaderEpochState(5)!.unreferencedSegmentIds()).toEqual([]);
  expect(c.segment(m.remoteLogSegmentId.id)).toMatchObject({ brokerId: 1, eventTimestampMs: 2n });

  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_STARTED));
  // No longer readable, still listed and counted so a retried delete finds it; the epoch's highest offset stays.
  expect(look()).toEqual({ read: null, highest: 99n, all: [S.DELETE_SEGMENT_STARTED], epoch: [S.DELETE_SEGMENT_STARTED], size: 4096n });

  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_FINISHED));
  expect(look()).toEqual({ read: null, highest: 99n, all: [], epoch: [], size: 0n });
  expect(c.segment(m.remoteLogSegmentId.id)).toBeUndefined();
  expect(c.leaderEpochState(5)!.isEmpty).toBe(true);
});

test('a copy abandoned before it finished can be deleted straight from COPY_SEGMENT_STARTED', () => {
  const c = ready();
  const m = segment(0n, 9n, { 0: 0n }, 10);
  c.addCopyInProgressSegment(m);
  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_STARTED));
  expect([c.listRemoteLogSegments(0).map((x) => x.state), c.remoteLogSegmentMetadata(0, 5n), c.highestOffsetForEpoch(0)]).toEqual([[S.DELETE_SEGMENT_STARTED], null, null]);
  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_FINISHED));
  expect(c.listAllRemoteLogSegments()).toEqual([]);
});

test('every transition Kafka forbids is refused and leaves the cache as it was; repeats are accepted', () => {
  const c = ready();
  const m = segment(10n, 100n, { 5: 10n });
  c.addCopyInProgressSegment(m);
  const snapshot = () => ({ all: c.listAllRemoteLogSegments(), epoch: c.listRemoteLogSegments(5), read: c.remoteLogSegmentMetadata(5, 20n), highest: c.highestOffsetForEpoch(5) });
  const refuse = (state: S) => {
    const before = snapshot();
    expect(() => c.updateRemoteLogSegmentMetadata(update(m, state))).toThrow(InvalidRemoteLogMetadataError);
    expect(snapshot()).toEqual(before);
  };
  refuse(S.DELETE_SEGMENT_FINISHED);
  refuse(S.COPY_SEGMENT_STARTED); // only addCopyInProgressSegment starts a copy
  c.updateRemoteLogSegmentMetadata(update(m, S.COPY_SEGMENT_FINISHED));
  c.updateRemoteLogSegmentMetadata(update(m, S.COPY_SEGMENT_FINISHED)); // a replayed event
  expect(c.leaderEpochState(5)!.referencedSegmentIds()).toEqual([m.remoteLogSegmentId.id]);
  refuse(S.DELETE_SEGMENT_FINISHED);
  refuse(S.COPY_SEGMENT_STARTED);
  expect(() => c.addCopyInProgressSegment(m)).toThrow(/COPY_SEGMENT_FINISHED -> COPY_SEGMENT_STARTED/);
  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_STARTED));
  refuse(S.COPY_SEGMENT_FINISHED);
  refuse(S.COPY_SEGMENT_STARTED);
  c.updateRemoteLogSegmentMetadata(update(m, S.DELETE_SEGMENT_FINISHED));
  expect(c.listAllRemoteLogSegments()).toEqual([]);
});

test('adds must be COPY_SEGMENT_STARTED, of this partition, with a lineage; a retried add replaces the in-progress metadata', () => {
  const c = ready();
  for (const state of [S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]) {
    expect(() => c.addCopyInProgressSegment({ ...segment(0n, 9n, { 0: 0n }), state })).toThrow(InvalidRemoteLogMetadataError);
  }
  expect(() => c.addCopyInProgressSegment(segment(0n, 9n, { 0: 0n }, 1, other))).toThrow(/foo-1 given to the cache of .*foo-0/);
  expect(() => c.addCopyInProgressSegment(segment(0n, 9n, {}))).toThrow(/no leader epochs/);
  expect(c.listAllRemoteLogSegments()).toEqual([]);

  const m = segment(0n, 9n, { 0: 0n }, 10);
  c.addCopyInProgressSegment(m);
  const retried = { ...m, segmentLeaderEpochs: [{ epoch: 1, startOffset: 0n }], eventTimestampMs: 9n };
  c.addCopyInProgressSegment(retried);
  expect([c.listRemoteLogSegments(0), c.listRemoteLogSegments(1)]).toEqual([[], [retried]]);
});

test('an update of an unknown segment is dropped while loading and RemoteResourceNotFoundError once initialized', () => {
  const c = new RemoteLogMetadataCache(tp);
  const m = segment(0n, 9n, { 0: 0n });
  for (const state of [S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]) {
    expect(c.updateRemoteLogSegmentMetadata(update(m, state))).toBe(false);
  }
  expect(c.listAllRemoteLogSegments()).toEqual([]);
  c.markInitialized();
  for (const state of [S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]) {
    expect(() => c.updateRemoteLogSegmentMetadata(update(m, state))).toThrow(RemoteResourceNotFoundError);
  }
  expect(() => c.updateRemoteLogSegmentMetadata(update(segment(0n, 9n, { 0: 0n }, 1, other), S.COPY_SEGMENT_FINISHED))).toThrow(InvalidRemoteLogMetadataError);
});

test('segments spanning several epochs: each offset is found only under the epoch its lineage gives it', () => {
  const c = ready();
  // A: offsets 0-99, epoch 0 from 0, epoch 1 from 50.  B: 100-199, epoch 1 from 100, epoch 3 from 150 (epoch 2 wrote nothing).
  const a = copied(c, segment(0n, 99n, { 0: 0n, 1: 50n }, 100));
  const b = copied(c, segment(100n, 199n, { 1: 100n, 3: 150n }, 200));
  const cases: [number, bigint, RemoteLogSegmentMetadata | null][] = [
    [0, 0n, a],
    [0, 49n, a], // last offset of epoch 0
    [0, 50n, null], // epoch 1 starts here
    [0, 120n, null],
    [1, 49n, null], // before epoch 1's first offset
    [1, 50n, a],
    [1, 99n, a], // A's last offset
    [1, 100n, b], // B's first offset
    [1, 149n, b],
    [1, 150n, null], // epoch 3 starts here
    [2, 150n, null], // an epoch with no records
    [3, 150n, b],
    [3, 199n, b],
    [3, 200n, null], // past the remote log
    [4, 199n, null],
  ];
  expect(cases.map(([e, o]) => c.remoteLogSegmentMetadata(e, o))).toEqual(cases.map(([, , m]) => m));
  expect([0, 1, 2, 3].map((e) => c.highestOffsetForEpoch(e))).toEqual([49n, 149n, null, 199n]);
  expect([0, 1, 2, 3].map((e) => ids(c.listRemoteLogSegments(e)))).toEqual([[a], [a, b], [], [b]].map(ids));
  expect([0, 1, 2, 3].map((e) => c.remoteLogSize(e))).toEqual([100n, 300n, 0n, 200n]);
  expect(ids(c.listAllRemoteLogSegments())).toEqual(ids([a, b]));
});

test('a new leader uploading a superset of the old leader\'s range supersedes it for reads; the old one stays listed', () => {
  const c = ready();
  // L0 uploaded 0-100 in epoch 0; after a failover L1 uploads 0-200 (epoch 0 to 149, then its epoch 1).
  const s0 = copied(c, segment(0n, 100n, { 0: 0n }, 10));
  const s1 = copied(c, segment(0n, 200n, { 0: 0n, 1: 150n }, 20));
  expect(ids([c.remoteLogSegmentMetadata(0, 50n), c.remoteLogSegmentMetadata(0, 149n), c.remoteLogSegmentMetadata(1, 150n)])).toEqual(ids([s1, s1, s1]));
  expect(c.leaderEpochState(0)!.referencedSegmentIds()).toEqual([s1.remoteLogSegmentId.id]);
  expect(c.leaderEpochState(0)!.unreferencedSegmentIds()).toEqual([s0.remoteLogSegmentId.id]);
  expect(ids(c.listRemoteLogSegments(0))).toEqual(ids([s1, s0])); // same start offset: the readable one first
  expect(c.remoteLogSize(0)).toBe(30n);
  expect(c.highestOffsetForEpoch(0)).toBe(149n);

  // The superseded segment is cleaned up like any other.
  c.updateRemoteLogSegmentMetadata(update(s0, S.DELETE_SEGMENT_STARTED));
  c.updateRemoteLogSegmentMetadata(update(s0, S.DELETE_SEGMENT_FINISHED));
  expect(ids(c.listRemoteLogSegments(0))).toEqual(ids([s1]));
  expect(c.remoteLogSegmentMetadata(0, 50n)).toEqual(s1);
});

test('overlapping uploads: a later segment starting earlier and reaching further replaces the mapped ones it covers', () => {
  const c = ready();
  const s0 = copied(c, segment(10n, 90n, { 0: 10n }));
  const s1 = copied(c, segment(5n, 100n, { 0: 5n }));
  const s2 = copied(c, segment(101n, 200n, { 0: 101n }));
  expect(ids([5n, 10n, 90n, 95n, 100n, 101n, 200n].map((o) => c.remoteLogSegmentMetadata(0, o)))).toEqual(ids([s1, s1, s1, s1, s1, s2, s2]));
  expect(c.remoteLogSegmentMetadata(0, 4n)).toBeNull();
  expect(ids(c.listRemoteLogSegments(0))).toEqual(ids([s1, s0, s2]));
  expect(c.leaderEpochState(0)!.unreferencedSegmentIds()).toEqual([s0.remoteLogSegmentId.id]);
});

test('unclean election: a replacement that ends epoch 0 earlier than the old upload leaves those offsets unreadable in epoch 0', () => {
  const c = ready();
  // The old leader's epoch 0 reached offset 100; the unclean new leader had epoch 0 only up to 60 and wrote epoch 1 from 61.
  const old = copied(c, segment(0n, 100n, { 0: 0n }));
  const replacement = copied(c, segment(0n, 120n, { 0: 0n, 1: 61n }));
  expect(ids([c.remoteLogSegmentMetadata(0, 60n), c.remoteLogSegmentMetadata(0, 80n), c.remoteLogSegmentMetadata(1, 80n)])).toEqual(ids([replacement, null, replacement]));
  // Both stay listed for epoch 0 (the replaced one for cleanup) and the epoch's highest offset stays the old leader's.
  expect(ids(c.listRemoteLogSegments(0)).sort()).toEqual(ids([old, replacement]).sort());
  expect(c.highestOffsetForEpoch(0)).toBe(100n);
  expect(c.highestOffsetForEpoch(1)).toBe(120n);
});

test('a segment that does not reach the epoch\'s highest offset does not push out the mapped one before it', () => {
  const c = ready();
  const s0 = copied(c, segment(0n, 100n, { 0: 0n }));
  const s1 = copied(c, segment(50n, 80n, { 0: 50n }));
  // Mapped at 0 and 50: offsets from 50 resolve to s1, and past its end nothing is found (Kafka's floor lookup).
  expect(ids([c.remoteLogSegmentMetadata(0, 49n), c.remoteLogSegmentMetadata(0, 70n), c.remoteLogSegmentMetadata(0, 90n)])).toEqual(ids([s0, s1, null]));
  expect(c.leaderEpochState(0)!.referencedSegmentIds()).toEqual([s0.remoteLogSegmentId.id, s1.remoteLogSegmentId.id]);
});

test('size accounting with several segments in different states at once', () => {
  const c = ready();
  const a = copied(c, segment(0n, 99n, { 0: 0n }, 1));
  const b = copied(c, segment(100n, 199n, { 0: 100n, 1: 150n }, 10));
  const d = segment(200n, 299n, { 1: 200n }, 100);
  c.addCopyInProgressSegment(d);
  expect([c.remoteLogSize(0), c.remoteLogSize(1)]).toEqual([11n, 110n]);
  c.updateRemoteLogSegmentMetadata(update(a, S.DELETE_SEGMENT_STARTED));
  expect([c.remoteLogSize(0), c.remoteLogSize(1)]).toEqual([11n, 110n]);
  c.updateRemoteLogSegmentMetadata(update(a, S.DELETE_SEGMENT_FINISHED));
  expect([c.remoteLogSize(0), c.remoteLogSize(1)]).toEqual([10n, 110n]);
  c.updateRemoteLogSegmentMetadata(update(d, S.COPY_SEGMENT_FINISHED));
  c.updateRemoteLogSegmentMetadata(update(b, S.DELETE_SEGMENT_STARTED));
  c.updateRemoteLogSegmentMetadata(update(b, S.DELETE_SEGMENT_FINISHED));
  expect([c.remoteLogSize(0), c.remoteLogSize(1)]).toEqual([0n, 100n]);
  expect(ids(c.listAllRemoteLogSegments())).toEqual(ids([d]));
});

test('listings are ordered by start offset whatever the order of events', () => {
  const c = ready();
  const late = segment(200n, 299n, { 0: 200n });
  const early = segment(0n, 99n, { 0: 0n });
  const mid = segment(100n, 199n, { 0: 100n });
  c.addCopyInProgressSegment(late);
  copied(c, early);
  c.addCopyInProgressSegment(mid);
  expect(ids(c.listAllRemoteLogSegments())).toEqual(ids([early, mid, late]));
  expect(ids(c.listRemoteLogSegments(0))).toEqual(ids([early, mid, late]));
});

describe('RemotePartitionMetadataStore', () => {
  test('a partition not loaded is RemoteResourceNotFoundError, one loading is RemoteLogMetadataNotReadyError, never empty', () => {
    const store = new RemotePartitionMetadataStore();
    const lookups = [
      () => store.listRemoteLogSegments(tp),
      () => store.listRemoteLogSegmentsForEpoch(tp, 0),
      () => store.remoteLogSegmentMetadata(tp, 0, 0n),
      () => store.highestOffsetForEpoch(tp, 0),
      () => store.remoteLogSize(tp, 0),
    ];
    for (const l of lookups) expect(l).toThrow(RemoteResourceNotFoundError);
    expect(() => store.handleRemoteLogSegmentMetadata(segment(0n, 9n, { 0: 0n }))).toThrow(/no remote log metadata loaded/);

    store.maybeLoadPartition(tp);
    expect([store.isLoaded(tp), store.isInitialized(tp)]).toEqual([true, false]);
    for (const l of lookups) expect(l).toThrow(RemoteLogMetadataNotReadyError);
    // Events are applied while loading.
    const m = segment(0n, 9n, { 0: 0n }, 7);
    store.handleRemoteLogSegmentMetadata(m);
    expect(store.handleRemoteLogSegmentMetadataUpdate(update(m, S.COPY_SEGMENT_FINISHED))).toBe(true);
    expect(store.handleRemoteLogSegmentMetadataUpdate(update(segment(0n, 1n, { 0: 0n }), S.DELETE_SEGMENT_STARTED))).toBe(false);

    store.markInitialized(tp);
    expect(store.maybeLoadPartition(tp).isInitialized()).toBe(true); // loading again keeps the state
    expect([store.listRemoteLogSegments(tp).length, store.remoteLogSegmentMetadata(tp, 0, 9n)?.segmentSizeInBytes, store.highestOffsetForEpoch(tp, 0), store.remoteLogSize(tp, 0)]).toEqual([1, 7, 9n, 7n]);
    expect(store.partitions()).toEqual([tp]);

    store.clearTopicPartition(tp);
    expect(() => store.listRemoteLogSegments(tp)).toThrow(RemoteResourceNotFoundError);
    expect(() => store.markInitialized(tp)).toThrow(RemoteResourceNotFoundError);
  });

  test('partition delete states follow Kafka\'s order and DELETE_PARTITION_FINISHED drops the partition', () => {
    const store = new RemotePartitionMetadataStore();
    store.maybeLoadPartition(tp).markInitialized();
    store.handleRemoteLogSegmentMetadata(segment(0n, 9n, { 0: 0n }));
    const del = (state: P) => ({ topicIdPartition: tp, state, eventTimestampMs: 3n, brokerId: 2 });
    expect(() => store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_STARTED))).toThrow(/none -> DELETE_PARTITION_STARTED/);
    expect(store.remotePartitionDeleteMetadata(tp)).toBeUndefined();
    store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_MARKED));
    store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_MARKED));
    expect(() => store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_FINISHED))).toThrow(/DELETE_PARTITION_MARKED -> DELETE_PARTITION_FINISHED/);
    store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_STARTED));
    expect(store.remotePartitionDeleteMetadata(tp)?.state).toBe(P.DELETE_PARTITION_STARTED);
    expect(store.listRemoteLogSegments(tp)).toHaveLength(1); // the segments are still there to delete
    store.handleRemotePartitionDeleteMetadata(del(P.DELETE_PARTITION_FINISHED));
    expect(store.remotePartitionDeleteMetadata(tp)).toBeUndefined();
    expect(store.isLoaded(tp)).toBe(false);
    expect(() => store.listRemoteLogSegments(tp)).toThrow(RemoteResourceNotFoundError);
  });
});
