import {
  buildEndTxnMarkerBatch,
  controlRecordKey,
  ControlRecordType,
  endTxnMarkerValue,
  parseControlRecordType,
  parseEndTxnMarker,
  readEndTxnMarker,
} from './control-record';
import { buildRecordBatch } from './memory-records-builder';
import { readRecords } from './record';
import { checkBatch, CompressionType, RecordBatch } from './record-batch';
import { ErrorCode, expectKafkaError, rawBatch } from '../testing/records-test-util';

describe('control record key and marker value layout', () => {
  it('key: int16 version 0, int16 type (ABORT 0, COMMIT 1)', () => {
    expect(controlRecordKey(ControlRecordType.ABORT).toString('hex')).toBe('00000000');
    expect(controlRecordKey(ControlRecordType.COMMIT).toString('hex')).toBe('00000001');
    expect(() => controlRecordKey(ControlRecordType.UNKNOWN)).toThrow();
  });

  it('value: int16 version 0, int32 coordinator epoch', () => {
    expect(endTxnMarkerValue(7).toString('hex')).toBe('000000000007');
    expect(endTxnMarkerValue(-1).toString('hex')).toBe('0000ffffffff');
  });

  it('parses keys with Kafka tolerance', () => {
    expect(parseControlRecordType(Buffer.from('0000000100', 'hex'))).toBe(ControlRecordType.COMMIT); // extra bytes ignored
    expect(parseControlRecordType(Buffer.from('00050000', 'hex'))).toBe(ControlRecordType.ABORT); // newer version read as v0
    expect(parseControlRecordType(Buffer.from('00000006', 'hex'))).toBe(ControlRecordType.KRAFT_VOTERS);
    expect(parseControlRecordType(Buffer.from('00000063', 'hex'))).toBe(ControlRecordType.UNKNOWN);
    expectKafkaError(() => parseControlRecordType(Buffer.from('000000', 'hex')), ErrorCode.INVALID_RECORD);
    expectKafkaError(() => parseControlRecordType(null), ErrorCode.INVALID_RECORD);
    expectKafkaError(() => parseControlRecordType(Buffer.from('ffff0000', 'hex')), ErrorCode.INVALID_RECORD);
  });

  it('parses marker values with Kafka tolerance', () => {
    const commit = controlRecordKey(ControlRecordType.COMMIT);
    expect(parseEndTxnMarker(commit, Buffer.from('00000000002a', 'hex'))).toEqual({
      type: ControlRecordType.COMMIT,
      coordinatorEpoch: 42,
    });
    expect(parseEndTxnMarker(commit, Buffer.from('00010000002aff', 'hex')).coordinatorEpoch).toBe(42);
    expectKafkaError(() => parseEndTxnMarker(commit, Buffer.from('0000000000', 'hex')), ErrorCode.INVALID_RECORD);
    expectKafkaError(() => parseEndTxnMarker(commit, null), ErrorCode.INVALID_RECORD);
    expectKafkaError(() => parseEndTxnMarker(commit, Buffer.from('80000000002a', 'hex')), ErrorCode.INVALID_RECORD);
    const leaderChange = controlRecordKey(ControlRecordType.LEADER_CHANGE);
    expectKafkaError(() => parseEndTxnMarker(leaderChange, endTxnMarkerValue(1)), ErrorCode.INVALID_RECORD);
  });
});

describe('end transaction marker batches', () => {
  for (const type of [ControlRecordType.COMMIT, ControlRecordType.ABORT] as const) {
    it(`${ControlRecordType[type]} round trip`, () => {
      const buf = buildEndTxnMarkerBatch({
        type,
        producerId: 1234n,
        producerEpoch: 5,
        coordinatorEpoch: 17,
        timestamp: 1_700_000_000_123n,
        baseOffset: 99n,
        partitionLeaderEpoch: 3,
      });
      const batch = checkBatch(buf, 0);
      expect(batch.isControlBatch).toBe(true);
      expect(batch.isTransactional).toBe(true);
      expect(batch.compressionType).toBe(CompressionType.NONE);
      expect(batch.producerId).toBe(1234n);
      expect(batch.producerEpoch).toBe(5);
      expect(batch.baseSequence).toBe(-1);
      expect(batch.baseOffset).toBe(99n);
      expect(batch.lastOffset).toBe(99n); // one offset per marker
      expect(batch.recordsCount).toBe(1);
      expect(batch.partitionLeaderEpoch).toBe(3);
      expect(batch.maxTimestamp).toBe(1_700_000_000_123n);
      expect(readEndTxnMarker(batch)).toEqual({ type, coordinatorEpoch: 17, timestamp: 1_700_000_000_123n });
      const [rec] = readRecords(batch);
      expect(rec.key!.length).toBe(4);
      expect(rec.value!.length).toBe(6);
      expect(rec.headers).toEqual([]);
    });
  }

  it('an emptied control batch has no marker', () => {
    const empty = rawBatch(Buffer.alloc(0), { count: 0, lastOffsetDelta: 0, attributes: 0x30, producerId: 1n });
    expect(readEndTxnMarker(new RecordBatch(empty))).toBeNull();
  });

  it('a data batch is not a marker', () => {
    expectKafkaError(() => readEndTxnMarker(new RecordBatch(buildRecordBatch([{ value: 'x' }]))), ErrorCode.INVALID_RECORD);
  });
});
