import { MetadataCache } from '../metadata-cache';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { ControlRecordType, controlRecordKey } from '../../protocol/records/control-record';
import { CorruptSnapshotError, readSnapshotRecords, readSnapshotTimestamp, writeSnapshotRecords } from './snapshot-records';
import { loadSnapshot, snapshotDelta } from './snapshot-delta';
import { imageOf, imageState, randomMetadataBatches } from './testing/random-metadata';

const SEEDS = Number(process.env.KRILL_SNAPSHOT_SEEDS ?? 12);

describe('image -> records -> image', () => {
  test(`replayed image A, A's records replayed into B: A equals B (${SEEDS} random streams)`, () => {
    let records = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const a = imageOf(randomMetadataBatches(seed, 150));
      const written = a.imageRecords();
      records += written.length;
      const b = new MetadataCache('c');
      b.apply(written);
      expect(imageState(b)).toEqual(imageState(a));
      // The same through the snapshot's bytes, in small batches.
      const bytes = writeSnapshotRecords(written, { epoch: 3, lastContainedLogTimestamp: 1234, maxBatchBytes: 200 });
      const read = readSnapshotRecords(bytes);
      expect(read.lastContainedLogTimestamp).toBe(1234n);
      const c = new MetadataCache('c');
      c.apply(read.records);
      expect(imageState(c)).toEqual(imageState(a));
      // And writing B again gives the same records: nothing is lost or invented.
      expect(b.imageRecords()).toEqual(written);
    }
    expect(records).toBeGreaterThan(SEEDS * 10);
  });

  test('the streams exercise every kind of state', () => {
    const a = imageOf(randomMetadataBatches(7, 400));
    const types = new Set(a.imageRecords().map((r) => r.type));
    expect([...types].sort()).toEqual(
      ['AccessControlEntryRecord', 'ClientQuotaRecord', 'ConfigRecord', 'FeatureLevelRecord', 'PartitionRecord', 'ProducerIdsRecord', 'RegisterBrokerRecord', 'TopicRecord', 'UserScramCredentialRecord'].sort(),
    );
    const written = a.imageRecords();
    expect(written[0]).toEqual({ type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: a.featureLevel('metadata.version') } });
    // Fenced, unfenced, and changed partitions are all there.
    expect(a.allBrokers().some((b) => b.fenced)).toBe(true);
    expect(a.allBrokers().some((b) => !b.fenced)).toBe(true);
    expect([...a.topics()].some((t) => [...t.partitions.values()].some((p) => p.partitionEpoch > 2))).toBe(true);
  });
});

describe('snapshot bytes', () => {
  const records = imageOf(randomMetadataBatches(3, 50)).imageRecords();

  test('header batch, data batches, footer batch; offsets from 0 at the snapshot epoch', () => {
    const bytes = writeSnapshotRecords(records, { epoch: 9, lastContainedLogTimestamp: 77, maxBatchBytes: 100 });
    const { splitBatches } = jest.requireActual('../../protocol/records/record-batch') as typeof import('../../protocol/records/record-batch');
    const batches = splitBatches(bytes);
    expect(batches.length).toBeGreaterThan(3);
    expect(batches[0].isControlBatch).toBe(true);
    expect(batches[batches.length - 1].isControlBatch).toBe(true);
    expect(batches.slice(1, -1).every((b) => !b.isControlBatch)).toBe(true);
    expect(batches[0].baseOffset).toBe(0n);
    expect(batches.every((b) => b.partitionLeaderEpoch === 9)).toBe(true);
    expect(readSnapshotTimestamp(bytes)).toBe(77n);
    expect(readSnapshotRecords(bytes).records).toEqual(records);
  });

  test('the voters hook: extra control records of the header batch come back', () => {
    const extra = [{ key: controlRecordKey(ControlRecordType.KRAFT_VERSION), value: Buffer.from([0, 0, 0, 1]) }];
    const read = readSnapshotRecords(writeSnapshotRecords(records, { epoch: 1, lastContainedLogTimestamp: 0, extraHeaderControlRecords: extra }));
    expect(read.headerControlRecords).toEqual([{ key: controlRecordKey(ControlRecordType.KRAFT_VERSION), value: Buffer.from([0, 0, 0, 1]) }]);
    expect(read.records).toEqual(records);
  });

  test('an empty image is a header and a footer', () => {
    const read = readSnapshotRecords(writeSnapshotRecords([], { epoch: 1, lastContainedLogTimestamp: 5 }));
    expect(read.records).toEqual([]);
  });

  test('corrupt snapshots are refused', () => {
    const bytes = writeSnapshotRecords(records, { epoch: 1, lastContainedLogTimestamp: 0, maxBatchBytes: 100 });
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 30] ^= 0xff;
    expect(() => readSnapshotRecords(flipped)).toThrow(CorruptSnapshotError);
    // Without its footer batch.
    const { splitBatches } = jest.requireActual('../../protocol/records/record-batch') as typeof import('../../protocol/records/record-batch');
    const batches = splitBatches(bytes);
    const last = batches[batches.length - 1];
    expect(() => readSnapshotRecords(bytes.subarray(0, last.offset))).toThrow(/SnapshotFooterRecord/);
    // Without its header batch (offsets then start past 0).
    expect(() => readSnapshotRecords(bytes.subarray(batches[1].offset))).toThrow(CorruptSnapshotError);
    // A data batch first.
    const data = buildRecordBatch([{ value: Buffer.from([1, 2, 3]) }], { baseOffset: 0n });
    expect(() => readSnapshotRecords(Buffer.concat([data, bytes.subarray(batches[1].offset)]))).toThrow(/not a control batch|starts at offset/);
  });
});

describe('snapshotDelta: an image brought to a snapshot', () => {
  test(`a prefix image plus the delta equals the snapshot's image (${SEEDS} streams, and unrelated images)`, () => {
    let removals = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const batches = randomMetadataBatches(seed, 150);
      const target = imageOf(batches);
      const snap = target.imageRecords();
      const cut = 1 + ((seed * 37) % (batches.length - 1));
      for (const current of [imageOf(batches.slice(0, cut)), imageOf(randomMetadataBatches(seed + 1000, 80)), new MetadataCache('c')]) {
        const delta = snapshotDelta(current, snap);
        removals += delta.filter((r) => r.type.startsWith('Remove') || r.type === 'UnregisterBrokerRecord' || (r.type === 'ConfigRecord' && r.data.value === null)).length;
        current.apply(delta, 1000n);
        expect(imageState(current, true)).toEqual(imageState(target, true));
        expect(current.lastAppliedOffset).toBe(1000n);
        // Loaded already: nothing more to do.
        expect(snapshotDelta(current, snap)).toEqual([]);
      }
      // Records that are not an image's (the raw stream: removals, repeated keys) are normalized first.
      const raw = imageOf(batches.slice(0, cut));
      raw.apply(snapshotDelta(raw, batches.flat()));
      expect(imageState(raw, true)).toEqual(imageState(target, true));
    }
    expect(removals).toBeGreaterThan(SEEDS);
  });

  test('only what differs is emitted, removals first; the delta is an ordinary MetadataDelta', () => {
    const before = new MetadataCache('c');
    const t1 = { name: 't1', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' };
    const t2 = { name: 't2', topicId: 'AAAAAAAAAAAAAAAAAAAAAg' };
    const part = (topicId: string, leader: number) => ({
      type: 'PartitionRecord' as const,
      data: { partitionId: 0, topicId, replicas: [1, 2], isr: [1, 2], removingReplicas: [], addingReplicas: [], leader, leaderRecoveryState: 0, leaderEpoch: 0, partitionEpoch: 0, directories: [], eligibleLeaderReplicas: null, lastKnownElr: null },
    });
    before.apply([{ type: 'TopicRecord', data: t1 }, part(t1.topicId, 1), { type: 'TopicRecord', data: t2 }, part(t2.topicId, 1)]);
    const after = new MetadataCache('c');
    after.apply([{ type: 'TopicRecord', data: t1 }, part(t1.topicId, 2)]);
    const delta = snapshotDelta(before, after.imageRecords());
    expect(delta).toEqual([{ type: 'RemoveTopicRecord', data: { topicId: t2.topicId } }, part(t1.topicId, 2)]);
    const applied = before.apply(delta);
    expect(applied.removedTopics.map((t) => t.name)).toEqual(['t2']);
    expect(applied.changedPartitions.map((p) => `${p.topic}-${p.partition}@${p.leader}`)).toEqual(['t1-0@2']);
  });

  test('a topic re-created under its name gets its new id and configs', () => {
    const before = new MetadataCache('c');
    before.apply([
      { type: 'TopicRecord', data: { name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' } },
      { type: 'ConfigRecord', data: { resourceType: 2, resourceName: 't', name: 'retention.ms', value: '5' } },
    ]);
    const after = new MetadataCache('c');
    after.apply([
      { type: 'TopicRecord', data: { name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAg' } },
      { type: 'ConfigRecord', data: { resourceType: 2, resourceName: 't', name: 'retention.ms', value: '5' } },
    ]);
    before.apply(snapshotDelta(before, after.imageRecords()));
    expect(before.topic('t')?.topicId).toBe('AAAAAAAAAAAAAAAAAAAAAg');
    expect(before.topicById('AAAAAAAAAAAAAAAAAAAAAQ')).toBeUndefined();
    expect(before.topicConfig('t').get('retention.ms')).toBe('5');
  });
});

test('loadSnapshot: a broker image brought to a fetched snapshot, with the delta for its consumers', () => {
  const batches = randomMetadataBatches(42, 120);
  const target = imageOf(batches);
  const broker = imageOf(batches.slice(0, 30));
  const bytes = writeSnapshotRecords(target.imageRecords(), { epoch: 4, lastContainedLogTimestamp: 0 });
  const { delta, records } = loadSnapshot(broker, { offset: 5000n, epoch: 4 }, bytes);
  expect(imageState(broker, true)).toEqual(imageState(target, true));
  expect(broker.lastAppliedOffset).toBe(4999n);
  expect(records.length).toBeGreaterThan(0);
  expect(delta.changedPartitions.length + delta.removedTopics.length).toBeGreaterThan(0);
  expect(() => loadSnapshot(broker, { offset: 6000n, epoch: 4 }, bytes.subarray(0, bytes.length - 10))).toThrow(CorruptSnapshotError);
  expect(broker.lastAppliedOffset).toBe(4999n);
});
