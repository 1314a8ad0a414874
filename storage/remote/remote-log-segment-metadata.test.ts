import {
  applySegmentUpdate,
  isValidPartitionDeleteTransition,
  isValidSegmentTransition,
  RemoteLogSegmentMetadata,
  RemoteLogSegmentState as S,
  RemotePartitionDeleteState as P,
} from './remote-log-segment-metadata';

const tp = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 't', partition: 0 };
const seg = (state: S): RemoteLogSegmentMetadata => ({
  remoteLogSegmentId: { topicIdPartition: tp, id: 'AAAAAAAAAAAAAAAAAAAAAg' },
  startOffset: 0n,
  endOffset: 99n,
  brokerId: 1,
  maxTimestampMs: 5n,
  eventTimestampMs: 1n,
  segmentLeaderEpochs: [{ epoch: 0, startOffset: 0n }],
  segmentSizeInBytes: 1000,
  customMetadata: null,
  state,
});

test("segment states follow Kafka's transitions, repeats allowed", () => {
  expect(isValidSegmentTransition(undefined, S.COPY_SEGMENT_STARTED)).toBe(true);
  expect(isValidSegmentTransition(undefined, S.COPY_SEGMENT_FINISHED)).toBe(false);
  expect(isValidSegmentTransition(S.COPY_SEGMENT_STARTED, S.COPY_SEGMENT_FINISHED)).toBe(true);
  expect(isValidSegmentTransition(S.COPY_SEGMENT_STARTED, S.DELETE_SEGMENT_STARTED)).toBe(true);
  expect(isValidSegmentTransition(S.COPY_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED)).toBe(false);
  expect(isValidSegmentTransition(S.COPY_SEGMENT_FINISHED, S.COPY_SEGMENT_STARTED)).toBe(false);
  expect(isValidSegmentTransition(S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED)).toBe(true);
  expect(isValidSegmentTransition(S.DELETE_SEGMENT_FINISHED, S.DELETE_SEGMENT_FINISHED)).toBe(true);
  expect(isValidSegmentTransition(S.DELETE_SEGMENT_FINISHED, S.COPY_SEGMENT_STARTED)).toBe(false);
});

test("partition delete states follow Kafka's transitions", () => {
  expect(isValidPartitionDeleteTransition(undefined, P.DELETE_PARTITION_MARKED)).toBe(true);
  expect(isValidPartitionDeleteTransition(undefined, P.DELETE_PARTITION_STARTED)).toBe(false);
  expect(isValidPartitionDeleteTransition(P.DELETE_PARTITION_MARKED, P.DELETE_PARTITION_STARTED)).toBe(true);
  expect(isValidPartitionDeleteTransition(P.DELETE_PARTITION_MARKED, P.DELETE_PARTITION_FINISHED)).toBe(false);
  expect(isValidPartitionDeleteTransition(P.DELETE_PARTITION_STARTED, P.DELETE_PARTITION_FINISHED)).toBe(true);
  expect(isValidPartitionDeleteTransition(P.DELETE_PARTITION_FINISHED, P.DELETE_PARTITION_MARKED)).toBe(false);
});

test('an update yields new metadata and rejects a forbidden transition or another segment', () => {
  const m = seg(S.COPY_SEGMENT_STARTED);
  const u = applySegmentUpdate(m, { remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: 7n, customMetadata: Buffer.from('x'), state: S.COPY_SEGMENT_FINISHED, brokerId: 2 });
  expect([u.state, u.eventTimestampMs, u.brokerId, u.customMetadata?.toString(), m.state]).toEqual([S.COPY_SEGMENT_FINISHED, 7n, 2, 'x', S.COPY_SEGMENT_STARTED]);
  expect(() => applySegmentUpdate(u, { remoteLogSegmentId: m.remoteLogSegmentId, eventTimestampMs: 8n, customMetadata: null, state: S.COPY_SEGMENT_STARTED, brokerId: 2 })).toThrow(/invalid state transition/);
  expect(() => applySegmentUpdate(u, { remoteLogSegmentId: { topicIdPartition: tp, id: 'other' }, eventTimestampMs: 8n, customMetadata: null, state: S.DELETE_SEGMENT_STARTED, brokerId: 2 })).toThrow(/applied to/);
});
