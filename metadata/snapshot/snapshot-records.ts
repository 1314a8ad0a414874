/**
 * A KRaft metadata snapshot's bytes (Kafka's RecordsSnapshotWriter / RecordsSnapshotReader): v2
 * record batches whose offsets start at 0 and whose partitionLeaderEpoch is the snapshot id's
 * epoch. First a control batch holding the SnapshotHeaderRecord (control type SNAPSHOT_HEADER,
 * version 0, lastContainedLogTimestamp); then the image's metadata records (metadata-log-store's
 * framing, encodeMetadataRecord) in batches of about `maxBatchBytes`; last a control batch holding
 * the SnapshotFooterRecord (SNAPSHOT_FOOTER, version 0). The id (end offset, epoch) is not in the
 * bytes: it is the file name (`%020d-%010d.checkpoint`) / the FetchSnapshot snapshot id.
 *
 * Voters hook: with kraft.version >= 1 Kafka puts a KRaftVersionRecord and a VotersRecord in the
 * header batch, after the SnapshotHeaderRecord. `extraHeaderControlRecords` is where a writer
 * passes them (control records, key from controlRecordKey) and `headerControlRecords` is where a
 * reader gets them back; nothing here interprets them (KIP-853 dynamic voters own that).
 *
 * Invariants of what `readSnapshotRecords` accepts (else CorruptSnapshotError): at least two
 * batches, the first a control batch starting with a SNAPSHOT_HEADER record, the last a control
 * batch holding a SNAPSHOT_FOOTER record, data batches only in between, offsets contiguous from 0,
 * every batch's CRC valid. Records of metadata types krill does not know are skipped (as the log's
 * reader skips them).
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { ControlRecordType, controlRecordKey, parseControlRecordType } from '../../protocol/records/control-record';
import { readSnapshotHeaderRecord, writeSnapshotHeaderRecord } from '../../protocol/generated/message-data/snapshot-header-record';
import { readSnapshotFooterRecord, writeSnapshotFooterRecord } from '../../protocol/generated/message-data/snapshot-footer-record';
import { decodeMetadataRecord, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';

/** Kafka's snapshot writer default batch size is 8 KiB of records per batch up to MAX_BATCH_SIZE; krill: 1 MiB. */
export const DEFAULT_SNAPSHOT_BATCH_BYTES = 1024 * 1024;

export class CorruptSnapshotError extends Error {}

export interface SnapshotWriteOptions {
  /** The snapshot id's epoch: every batch's partitionLeaderEpoch. */
  epoch: number;
  /** Timestamp (ms) of the last batch the snapshot covers; Kafka's retention by time reads it. */
  lastContainedLogTimestamp: bigint | number;
  /** Records per data batch: a batch is closed once it reaches this many bytes. */
  maxBatchBytes?: number;
  /** The batches' timestamps (default Date.now()). */
  now?: number;
  /** Control records after the SnapshotHeaderRecord in the header batch (KRaftVersionRecord, VotersRecord). */
  extraHeaderControlRecords?: readonly SimpleRecord[];
}

export interface SnapshotContent {
  lastContainedLogTimestamp: bigint;
  /** The control records of the header batch after the SnapshotHeaderRecord (see the voters hook). */
  headerControlRecords: { key: Buffer; value: Buffer | null }[];
  records: MetadataRecord[];
}

/** The snapshot's bytes: header batch, the records in batches, footer batch. */
export function writeSnapshotRecords(records: readonly MetadataRecord[], opts: SnapshotWriteOptions): Buffer {
  const now = opts.now ?? Date.now();
  const maxBatchBytes = Math.max(1, opts.maxBatchBytes ?? DEFAULT_SNAPSHOT_BATCH_BYTES);
  const batches: Buffer[] = [];
  let offset = 0n;
  const push = (recs: readonly SimpleRecord[], control: boolean): void => {
    batches.push(buildRecordBatch(recs, { baseOffset: offset, partitionLeaderEpoch: opts.epoch, isControlBatch: control, now }));
    offset += BigInt(recs.length);
  };
  const hw = new Writer(16);
  writeSnapshotHeaderRecord(hw, 0, { version: 0, lastContainedLogTimestamp: BigInt(opts.lastContainedLogTimestamp) });
  push([{ key: controlRecordKey(ControlRecordType.SNAPSHOT_HEADER), value: hw.toBuffer(), timestamp: now }, ...(opts.extraHeaderControlRecords ?? [])], true);
  let pending: SimpleRecord[] = [];
  let size = 0;
  for (const r of records) {
    const value = encodeMetadataRecord(r);
    pending.push({ value, timestamp: now });
    size += value.length;
    if (size >= maxBatchBytes) {
      push(pending, false);
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) push(pending, false);
  const fw = new Writer(8);
  writeSnapshotFooterRecord(fw, 0, { version: 0 });
  push([{ key: controlRecordKey(ControlRecordType.SNAPSHOT_FOOTER), value: fw.toBuffer(), timestamp: now }], true);
  return Buffer.concat(batches);
}

/** Decodes and checks a snapshot's bytes (Kafka's RecordsSnapshotReader with CRC validation). */
export function readSnapshotRecords(buf: Buffer): SnapshotContent {
  let batches;
  try {
    batches = splitBatches(buf);
  } catch (err) {
    throw new CorruptSnapshotError(`snapshot batches do not parse: ${(err as Error).message}`);
  }
  if (batches.length < 2) throw new CorruptSnapshotError(`a snapshot has at least a header and a footer batch, found ${batches.length} batch(es)`);
  let expected = 0n;
  let header: bigint | null = null;
  let footer = false;
  const headerControlRecords: { key: Buffer; value: Buffer | null }[] = [];
  const records: MetadataRecord[] = [];
  batches.forEach((b, i) => {
    if (footer) throw new CorruptSnapshotError(`batch ${i} follows the snapshot footer`);
    if (b.baseOffset !== expected) throw new CorruptSnapshotError(`batch ${i} starts at offset ${b.baseOffset}, expected ${expected}`);
    if (!b.isValidCrc()) throw new CorruptSnapshotError(`batch ${i} (offset ${b.baseOffset}) fails its CRC check`);
    expected = b.lastOffset + 1n;
    const recs = readRecords(b);
    if (i === 0) {
      if (!b.isControlBatch) throw new CorruptSnapshotError('the first batch of a snapshot is not a control batch');
      recs.forEach((r, j) => {
        const type = parseControlRecordType(r.key);
        if (j === 0) {
          if (type !== ControlRecordType.SNAPSHOT_HEADER || r.value === null) throw new CorruptSnapshotError('a snapshot does not start with a SnapshotHeaderRecord');
          const h = readSnapshotHeaderRecord(new Reader(r.value), 0);
          header = h.lastContainedLogTimestamp;
        } else {
          headerControlRecords.push({ key: Buffer.from(r.key!), value: r.value === null ? null : Buffer.from(r.value) });
        }
      });
      if (recs.length === 0) throw new CorruptSnapshotError('the header batch of a snapshot is empty');
      return;
    }
    if (b.isControlBatch) {
      if (i !== batches.length - 1 || recs.length !== 1 || parseControlRecordType(recs[0].key) !== ControlRecordType.SNAPSHOT_FOOTER || recs[0].value === null) {
        throw new CorruptSnapshotError(`control batch ${i} of a snapshot is not its SnapshotFooterRecord`);
      }
      readSnapshotFooterRecord(new Reader(recs[0].value), 0);
      footer = true;
      return;
    }
    for (const r of recs) {
      if (r.value === null) continue;
      const rec = decodeMetadataRecord(r.value);
      if (rec) records.push(rec);
    }
  });
  if (!footer) throw new CorruptSnapshotError('a snapshot does not end with a SnapshotFooterRecord');
  return { lastContainedLogTimestamp: header!, headerControlRecords, records };
}

/** The SnapshotHeaderRecord's lastContainedLogTimestamp, reading only the first batch (retention by time). */
export function readSnapshotTimestamp(buf: Buffer): bigint | null {
  try {
    const first = splitBatches(buf)[0];
    if (!first || !first.isControlBatch) return null;
    const r = readRecords(first)[0];
    if (!r || parseControlRecordType(r.key) !== ControlRecordType.SNAPSHOT_HEADER || r.value === null) return null;
    return readSnapshotHeaderRecord(new Reader(r.value), 0).lastContainedLogTimestamp;
  } catch {
    return null;
  }
}
