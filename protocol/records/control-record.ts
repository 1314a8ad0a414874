/**
 * Control records: the records of a control batch (attributes bit 5). Kafka writes them for
 * transaction markers and, in KRaft logs, for quorum bookkeeping.
 *
 *   key:   version int16 (0) | type int16       (ABORT 0, COMMIT 1, LEADER_CHANGE 2, SNAPSHOT_HEADER 3,
 *                                                SNAPSHOT_FOOTER 4, KRAFT_VERSION 5, KRAFT_VOTERS 6)
 *   value of an end-transaction marker (ABORT/COMMIT): version int16 (0) | coordinatorEpoch int32
 *
 * Parsing follows Kafka's tolerance rules: a key shorter than 4 bytes or with a negative version,
 * or a marker value shorter than 6 bytes or with a negative version, is INVALID_RECORD; a higher
 * version is read as version 0 (later versions may only append fields); an unknown type is
 * UNKNOWN, which readers skip.
 *
 * A marker batch (Kafka's MemoryRecords.withEndTransactionMarker) is a transactional control batch
 * with one record, uncompressed, CreateTime, no base sequence, carrying the producer id/epoch of
 * the transaction it ends. It takes one offset in the partition.
 */
import { ErrorCode, KafkaError } from '../errors';
import { buildRecordBatch } from './memory-records-builder';
import { RecordIterator } from './record';
import { CompressionType, NO_SEQUENCE, RecordBatch, TimestampType } from './record-batch';

export enum ControlRecordType {
  ABORT = 0,
  COMMIT = 1,
  LEADER_CHANGE = 2,
  SNAPSHOT_HEADER = 3,
  SNAPSHOT_FOOTER = 4,
  KRAFT_VERSION = 5,
  KRAFT_VOTERS = 6,
  UNKNOWN = -1,
}

export const CONTROL_RECORD_KEY_SIZE = 4;
export const CONTROL_RECORD_KEY_VERSION = 0;
export const END_TXN_MARKER_VALUE_SIZE = 6;
export const END_TXN_MARKER_VERSION = 0;

function invalid(msg: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, msg);
}

export function controlRecordKey(type: ControlRecordType): Buffer {
  if (type === ControlRecordType.UNKNOWN) throw new Error('cannot write an UNKNOWN control record type');
  const b = Buffer.allocUnsafe(CONTROL_RECORD_KEY_SIZE);
  b.writeInt16BE(CONTROL_RECORD_KEY_VERSION, 0);
  b.writeInt16BE(type, 2);
  return b;
}

/** The type named by a control record key; UNKNOWN for types this broker does not know. */
export function parseControlRecordType(key: Buffer | null): ControlRecordType {
  if (key === null || key.length < CONTROL_RECORD_KEY_SIZE) {
    throw invalid(`control record key must have at least ${CONTROL_RECORD_KEY_SIZE} bytes, found ${key?.length ?? 'null'}`);
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw invalid(`invalid control record key version ${version}`);
  const type = key.readInt16BE(2);
  return type >= ControlRecordType.ABORT && type <= ControlRecordType.KRAFT_VOTERS ? type : ControlRecordType.UNKNOWN;
}

export interface EndTransactionMarker {
  type: ControlRecordType.ABORT | ControlRecordType.COMMIT;
  coordinatorEpoch: number;
}

export function endTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const b = Buffer.allocUnsafe(END_TXN_MARKER_VALUE_SIZE);
  b.writeInt16BE(END_TXN_MARKER_VERSION, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}

/** Decodes a marker from a control record's key and value. */
export function parseEndTxnMarker(key: Buffer | null, value: Buffer | null): EndTransactionMarker {
  const type = parseControlRecordType(key);
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) {
    throw invalid(`control record type ${ControlRecordType[type]} is not an end-transaction marker`);
  }
  if (value === null || value.length < END_TXN_MARKER_VALUE_SIZE) {
    throw invalid(
      `end transaction marker value must have at least ${END_TXN_MARKER_VALUE_SIZE} bytes, found ${value?.length ?? 'null'}`,
    );
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw invalid(`invalid end transaction marker version ${version}`);
  return { type, coordinatorEpoch: value.readInt32BE(2) };
}

export interface EndTxnMarkerBatchOptions {
  type: ControlRecordType.ABORT | ControlRecordType.COMMIT;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** Epoch ms of the marker record. */
  timestamp: bigint | number;
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
}

/** A complete control batch holding one end-transaction marker. */
export function buildEndTxnMarkerBatch(opts: EndTxnMarkerBatchOptions): Buffer {
  if (opts.type !== ControlRecordType.ABORT && opts.type !== ControlRecordType.COMMIT) {
    throw new Error(`not an end-transaction marker type: ${opts.type}`);
  }
  return buildRecordBatch(
    [{ key: controlRecordKey(opts.type), value: endTxnMarkerValue(opts.coordinatorEpoch), timestamp: opts.timestamp }],
    {
      baseOffset: opts.baseOffset,
      compression: CompressionType.NONE,
      timestampType: TimestampType.CREATE_TIME,
      producerId: opts.producerId,
      producerEpoch: opts.producerEpoch,
      baseSequence: NO_SEQUENCE,
      isTransactional: true,
      isControlBatch: true,
      partitionLeaderEpoch: opts.partitionLeaderEpoch,
    },
  );
}

/**
 * The marker in a control batch, or null when the batch is empty (the cleaner removed its
 * record but kept the header). INVALID_RECORD when the batch is not a control batch or its first
 * record is not a marker; Kafka reads only the first record of a marker batch, and so do we.
 */
export function readEndTxnMarker(batch: RecordBatch): (EndTransactionMarker & { timestamp: bigint }) | null {
  if (!batch.isControlBatch) throw invalid('not a control batch');
  const it = new RecordIterator(batch);
  if (!it.next()) return null;
  return { ...parseEndTxnMarker(it.key, it.value), timestamp: it.timestamp };
}
