/**
 * RemoteLogMetadataSerde's bytes: golden values laid out by hand from the record schemas
 * (frame version, api key, version, then the flexible-version fields and their tagged-field
 * counts), round trips of every kind, and the values that must be refused.
 */
import {
  deserializeRemoteLogMetadata,
  metadataFromSnapshot,
  RemoteLogMetadataFormatError,
  remoteLogMetadataTopicIdPartition,
  serializeRemoteLogMetadata,
  snapshotOf,
  type RemoteLogMetadata,
} from './remote-log-metadata-serde';
import {
  RemoteLogSegmentState as S,
  RemotePartitionDeleteState as P,
  type RemoteLogSegmentMetadata,
  type TopicIdPartition,
} from './remote-log-segment-metadata';

const TOPIC_ID_BYTES = [...Array(15).fill(0), 1];
const tp: TopicIdPartition = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 'foo', partition: 2 };
const SEGMENT_ID_BYTES = Array.from({ length: 16 }, (_, i) => i);
const segmentId = { topicIdPartition: tp, id: 'AAECAwQFBgcICQoLDA0ODw' };

const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const be64 = (n: bigint) => [...be32(Number((BigInt.asUintN(64, n) >> 32n) & 0xffffffffn)), ...be32(Number(BigInt.asUintN(64, n) & 0xffffffffn))];
/** TopicIdPartitionEntry: compact string name ("foo": length + 1 = 4), uuid, int32 partition, no tagged fields. */
const TOPIC_ID_PARTITION = [4, ...Buffer.from('foo'), ...TOPIC_ID_BYTES, ...be32(2), 0];
/** RemoteLogSegmentIdEntry: the partition, the segment uuid, no tagged fields. */
const SEGMENT_ID = [...TOPIC_ID_PARTITION, ...SEGMENT_ID_BYTES, 0];
const EVENT_TS = 1700000000000n;

const metadata: RemoteLogSegmentMetadata = {
  remoteLogSegmentId: segmentId,
  startOffset: 100n,
  endOffset: 199n,
  brokerId: 3,
  maxTimestampMs: 1699999999000n,
  eventTimestampMs: EVENT_TS,
  segmentLeaderEpochs: [
    { epoch: 4, startOffset: 100n },
    { epoch: 6, startOffset: 150n },
  ],
  segmentSizeInBytes: 1048576,
  customMetadata: null,
  state: S.COPY_SEGMENT_STARTED,
};
const METADATA_BYTES = Buffer.from([
  1, 0, 0, // frame version 1, api key 0, version 0
  ...SEGMENT_ID,
  ...be64(100n), // StartOffset
  ...be64(199n), // EndOffset
  ...be32(3), // BrokerId
  ...be64(1699999999000n), // MaxTimestampMs
  ...be64(EVENT_TS), // EventTimestampMs
  3, // SegmentLeaderEpochs: compact array of 2
  ...be32(4), ...be64(100n), 0,
  ...be32(6), ...be64(150n), 0,
  ...be32(1048576), // SegmentSizeInBytes
  0, // CustomMetadata: null
  0, // RemoteLogSegmentState COPY_SEGMENT_STARTED
  0, // no tagged fields
]);

const update = { remoteLogSegmentId: segmentId, eventTimestampMs: EVENT_TS, customMetadata: Buffer.from('abc'), state: S.COPY_SEGMENT_FINISHED, brokerId: 7 };
const UPDATE_BYTES = Buffer.from([
  1, 1, 0,
  ...SEGMENT_ID,
  ...be32(7), // BrokerId
  ...be64(EVENT_TS), // EventTimestampMs
  4, ...Buffer.from('abc'), // CustomMetadata: compact bytes, length + 1
  1, // COPY_SEGMENT_FINISHED
  0,
]);

const partitionDelete = { topicIdPartition: tp, state: P.DELETE_PARTITION_STARTED, eventTimestampMs: EVENT_TS, brokerId: 9 };
const DELETE_BYTES = Buffer.from([
  1, 2, 0,
  ...TOPIC_ID_PARTITION,
  ...be32(9),
  ...be64(EVENT_TS),
  1, // DELETE_PARTITION_STARTED
  0,
]);

const snapshot = snapshotOf({ ...metadata, state: S.DELETE_SEGMENT_STARTED, customMetadata: Buffer.from([0xca, 0xfe]) });
const SNAPSHOT_BYTES = Buffer.from([
  1, 3, 0,
  ...SEGMENT_ID_BYTES, // SegmentId
  ...be64(100n),
  ...be64(199n),
  ...be32(3),
  ...be64(1699999999000n),
  ...be64(EVENT_TS),
  3,
  ...be32(4), ...be64(100n), 0,
  ...be32(6), ...be64(150n), 0,
  ...be32(1048576),
  3, 0xca, 0xfe,
  2, // DELETE_SEGMENT_STARTED
  0,
]);

/** Where METADATA_BYTES' SegmentLeaderEpochs array length sits: after the header, the id, four int64s and an int32. Each entry is 13 bytes. */
const EPOCHS_AT = 3 + SEGMENT_ID.length + 4 * 8 + 4;

const golden: [string, RemoteLogMetadata, Buffer][] = [
  ['RemoteLogSegmentMetadataRecord', { kind: 'segment', metadata }, METADATA_BYTES],
  ['RemoteLogSegmentMetadataUpdateRecord', { kind: 'segmentUpdate', update }, UPDATE_BYTES],
  ['RemotePartitionDeleteMetadataRecord', { kind: 'partitionDelete', metadata: partitionDelete }, DELETE_BYTES],
  ['RemoteLogSegmentMetadataSnapshotRecord', { kind: 'snapshot', snapshot }, SNAPSHOT_BYTES],
];

test.each(golden)('%s: the bytes Kafka writes, both ways', (_name, event, bytes) => {
  expect(serializeRemoteLogMetadata(event).toString('hex')).toBe(bytes.toString('hex'));
  expect(deserializeRemoteLogMetadata(bytes)).toEqual(event);
});

test('round trips of every state, nullable and empty fields, extreme values', () => {
  const events: RemoteLogMetadata[] = [];
  for (const state of [S.COPY_SEGMENT_STARTED, S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]) {
    events.push({ kind: 'segment', metadata: { ...metadata, state, customMetadata: Buffer.alloc(0) } });
    events.push({ kind: 'segmentUpdate', update: { ...update, state, customMetadata: null } });
    events.push({ kind: 'snapshot', snapshot: { ...snapshot, state } });
  }
  for (const state of [P.DELETE_PARTITION_MARKED, P.DELETE_PARTITION_STARTED, P.DELETE_PARTITION_FINISHED]) {
    events.push({ kind: 'partitionDelete', metadata: { ...partitionDelete, state } });
  }
  const longName: TopicIdPartition = { topicId: '_____________________w', topic: 't'.repeat(249), partition: 2147483647 };
  events.push({
    kind: 'segment',
    metadata: {
      ...metadata,
      remoteLogSegmentId: { topicIdPartition: longName, id: '_____________________w' },
      startOffset: 0n,
      endOffset: 9223372036854775807n,
      maxTimestampMs: -1n,
      brokerId: -1,
      segmentLeaderEpochs: [{ epoch: 0, startOffset: 0n }, { epoch: 2147483647, startOffset: 9223372036854775807n }],
      segmentSizeInBytes: 2147483647,
      customMetadata: Buffer.alloc(300, 7),
    },
  });
  for (const e of events) {
    const b = serializeRemoteLogMetadata(e);
    expect(deserializeRemoteLogMetadata(b)).toEqual(e);
    expect(serializeRemoteLogMetadata(deserializeRemoteLogMetadata(b)).equals(b)).toBe(true);
  }
});

test('a lineage is written and read in epoch order', () => {
  const unsorted = { ...metadata, segmentLeaderEpochs: [metadata.segmentLeaderEpochs[1], metadata.segmentLeaderEpochs[0]] };
  expect(serializeRemoteLogMetadata({ kind: 'segment', metadata: unsorted }).equals(METADATA_BYTES)).toBe(true);
  const first = EPOCHS_AT + 1;
  const second = first + 13;
  const swapped = Buffer.concat([METADATA_BYTES.subarray(0, first), METADATA_BYTES.subarray(second, second + 13), METADATA_BYTES.subarray(first, second), METADATA_BYTES.subarray(second + 13)]);
  expect(swapped.length).toBe(METADATA_BYTES.length);
  expect(swapped.equals(METADATA_BYTES)).toBe(false);
  expect(deserializeRemoteLogMetadata(swapped)).toEqual({ kind: 'segment', metadata });
});

test('the event names its user partition; a snapshot carries none and takes its file\'s', () => {
  expect(golden.slice(0, 3).map(([, e]) => remoteLogMetadataTopicIdPartition(e))).toEqual([tp, tp, tp]);
  expect(() => remoteLogMetadataTopicIdPartition({ kind: 'snapshot', snapshot })).toThrow(/no topic partition/);
  expect(metadataFromSnapshot(snapshotOf(metadata), tp)).toEqual(metadata);
});

describe('refused values', () => {
  const refuse = (bytes: Buffer | number[], message: RegExp) => {
    const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
    expect(() => deserializeRemoteLogMetadata(b)).toThrow(RemoteLogMetadataFormatError);
    expect(() => deserializeRemoteLogMetadata(b)).toThrow(message);
  };
  const patched = (base: Buffer, at: number, value: number) => {
    const b = Buffer.from(base);
    b[at] = value;
    return b;
  };

  test('frame versions other than 1', () => {
    refuse(patched(UPDATE_BYTES, 0, 0), /frame version 0 \(only 1 is supported\)/);
    refuse(patched(UPDATE_BYTES, 0, 2), /frame version 2/);
    refuse([], /cannot read the remote log metadata frame version/);
  });

  test('unknown record types and versions', () => {
    refuse(patched(UPDATE_BYTES, 1, 4), /unknown remote log metadata record type 4/);
    refuse([1, 0x80, 0x80, 0x02, 0], /record type 32768 is too large/);
    refuse(patched(UPDATE_BYTES, 2, 1), /unsupported version 1 of RemoteLogSegmentMetadataUpdateRecord \(versions 0-0\)/);
    refuse([1, 1], /cannot read the remote log metadata record version/);
  });

  test('unknown state ids', () => {
    refuse(patched(UPDATE_BYTES, UPDATE_BYTES.length - 2, 4), /unknown remote log segment state id 4/);
    refuse(patched(METADATA_BYTES, METADATA_BYTES.length - 2, -1 & 0xff), /unknown remote log segment state id -1/);
    refuse(patched(DELETE_BYTES, DELETE_BYTES.length - 2, 3), /unknown remote partition delete state id 3/);
    refuse(patched(SNAPSHOT_BYTES, SNAPSHOT_BYTES.length - 2, 9), /unknown remote log segment state id 9/);
  });

  test('truncated records and trailing bytes', () => {
    refuse(UPDATE_BYTES.subarray(0, UPDATE_BYTES.length - 1), /cannot read RemoteLogSegmentMetadataUpdateRecord v0/);
    refuse(Buffer.concat([DELETE_BYTES, Buffer.from([0])]), /1 byte\(s\) after RemotePartitionDeleteMetadataRecord/);
  });

  test('lineages and offsets Kafka\'s constructors refuse', () => {
    expect(METADATA_BYTES[EPOCHS_AT]).toBe(3);
    const noLineage = Buffer.concat([METADATA_BYTES.subarray(0, EPOCHS_AT), Buffer.from([1]), METADATA_BYTES.subarray(EPOCHS_AT + 1 + 13 * 2)]);
    refuse(noLineage, /empty segment leader epochs/);
    const offsets = (start: bigint, end: bigint) => {
      const b = Buffer.from(METADATA_BYTES);
      b.writeBigInt64BE(start, 3 + SEGMENT_ID.length);
      b.writeBigInt64BE(end, 11 + SEGMENT_ID.length);
      return b;
    };
    expect(deserializeRemoteLogMetadata(offsets(5n, 5n)).kind).toBe('segment');
    refuse(offsets(5n, 4n), /end offset 4 is below start offset 5/);
    refuse(offsets(-1n, 4n), /negative start offset -1/);
  });
});
