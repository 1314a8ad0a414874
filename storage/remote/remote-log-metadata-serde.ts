/**
 * The bytes of a `__remote_log_metadata` record value (Kafka's RemoteLogMetadataSerde over
 * BytesApiMessageSerde), to and from the tiered-storage contract types, and the segment snapshot
 * Kafka's file-based metadata snapshots hold (RemoteLogSegmentMetadataSnapshot).
 *
 * Layout, as Kafka's AbstractApiMessageSerde writes it: unsigned varint frame version (1),
 * unsigned varint api key (the record type: 0 RemoteLogSegmentMetadataRecord, 1
 * RemoteLogSegmentMetadataUpdateRecord, 2 RemotePartitionDeleteMetadataRecord, 3
 * RemoteLogSegmentMetadataSnapshotRecord), unsigned varint record version, then the record in its
 * (flexible) schema encoding, and nothing after it. Records are written at the highest version the
 * generated schemas know (0 for all four, as Kafka does).
 *
 * Owns: the mapping between the generated records (protocol/generated/records/storage/) and the
 * contract types, and the snapshot type. Holds no state, no I/O.
 *
 * Invariants: serialize(deserialize(b)) === b for every value Kafka writes; deserialize rejects,
 * with RemoteLogMetadataFormatError and a message naming what is wrong, a frame version other
 * than 1, an unknown record type, a version the schema does not have, unknown state ids, an empty
 * leader-epoch lineage, offsets Kafka's constructors refuse, a truncated record and trailing bytes.
 * Decoded lineages are sorted by epoch (Kafka reads them into a sorted map).
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { remoteLogMetadataRecordByType } from '../../protocol/generated/records';
import {
  REMOTE_LOG_SEGMENT_METADATA_RECORD_TYPE,
  type RemoteLogSegmentMetadataRecord,
} from '../../protocol/generated/records/storage/remote-log-segment-metadata-record';
import {
  REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD_TYPE,
  type RemoteLogSegmentMetadataUpdateRecord,
} from '../../protocol/generated/records/storage/remote-log-segment-metadata-update-record';
import {
  REMOTE_PARTITION_DELETE_METADATA_RECORD_TYPE,
  type RemotePartitionDeleteMetadataRecord,
} from '../../protocol/generated/records/storage/remote-partition-delete-metadata-record';
import {
  REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD_TYPE,
  type RemoteLogSegmentMetadataSnapshotRecord,
} from '../../protocol/generated/records/storage/remote-log-segment-metadata-snapshot-record';
import {
  RemoteLogSegmentState,
  RemotePartitionDeleteState,
  type RemoteLogSegmentMetadata,
  type RemoteLogSegmentMetadataUpdate,
  type RemotePartitionDeleteMetadata,
  type SegmentLeaderEpoch,
  type TopicIdPartition,
} from './remote-log-segment-metadata';

/** AbstractApiMessageSerde's DEFAULT_FRAME_VERSION. */
export const REMOTE_LOG_METADATA_FRAME_VERSION = 1;

/** A segment's metadata without its partition, as file-based snapshots keep it (Kafka's RemoteLogSegmentMetadataSnapshot). */
export interface RemoteLogSegmentMetadataSnapshot {
  readonly segmentId: string;
  readonly startOffset: bigint;
  readonly endOffset: bigint;
  readonly maxTimestampMs: bigint;
  readonly brokerId: number;
  readonly eventTimestampMs: bigint;
  readonly segmentSizeInBytes: number;
  readonly customMetadata: Buffer | null;
  readonly state: RemoteLogSegmentState;
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
}

/** One value of `__remote_log_metadata` (Kafka's RemoteLogMetadata subclasses). */
export type RemoteLogMetadata =
  | { readonly kind: 'segment'; readonly metadata: RemoteLogSegmentMetadata }
  | { readonly kind: 'segmentUpdate'; readonly update: RemoteLogSegmentMetadataUpdate }
  | { readonly kind: 'partitionDelete'; readonly metadata: RemotePartitionDeleteMetadata }
  | { readonly kind: 'snapshot'; readonly snapshot: RemoteLogSegmentMetadataSnapshot };

/** A value that is not a remote log metadata record krill can read. */
export class RemoteLogMetadataFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteLogMetadataFormatError';
  }
}

export function snapshotOf(m: RemoteLogSegmentMetadata): RemoteLogSegmentMetadataSnapshot {
  return {
    segmentId: m.remoteLogSegmentId.id,
    startOffset: m.startOffset,
    endOffset: m.endOffset,
    maxTimestampMs: m.maxTimestampMs,
    brokerId: m.brokerId,
    eventTimestampMs: m.eventTimestampMs,
    segmentSizeInBytes: m.segmentSizeInBytes,
    customMetadata: m.customMetadata,
    state: m.state,
    segmentLeaderEpochs: m.segmentLeaderEpochs,
  };
}

/** The snapshot's segment, in the partition the snapshot file belongs to. */
export function metadataFromSnapshot(s: RemoteLogSegmentMetadataSnapshot, topicIdPartition: TopicIdPartition): RemoteLogSegmentMetadata {
  return {
    remoteLogSegmentId: { topicIdPartition, id: s.segmentId },
    startOffset: s.startOffset,
    endOffset: s.endOffset,
    brokerId: s.brokerId,
    maxTimestampMs: s.maxTimestampMs,
    eventTimestampMs: s.eventTimestampMs,
    segmentLeaderEpochs: s.segmentLeaderEpochs,
    segmentSizeInBytes: s.segmentSizeInBytes,
    customMetadata: s.customMetadata,
    state: s.state,
  };
}

/** The user partition an event is about; a snapshot names none (Kafka throws UnsupportedOperationException too). */
export function remoteLogMetadataTopicIdPartition(e: RemoteLogMetadata): TopicIdPartition {
  switch (e.kind) {
    case 'segment':
      return e.metadata.remoteLogSegmentId.topicIdPartition;
    case 'segmentUpdate':
      return e.update.remoteLogSegmentId.topicIdPartition;
    case 'partitionDelete':
      return e.metadata.topicIdPartition;
    case 'snapshot':
      throw new Error('a remote log segment metadata snapshot has no topic partition');
  }
}

function tipEntry(tp: TopicIdPartition) {
  return { name: tp.topic, id: tp.topicId, partition: tp.partition };
}

function tipOf(e: { name: string; id: string; partition: number }): TopicIdPartition {
  return { topicId: e.id, topic: e.name, partition: e.partition };
}

function epochEntries(epochs: readonly SegmentLeaderEpoch[]) {
  return [...epochs].sort((a, b) => a.epoch - b.epoch).map((e) => ({ leaderEpoch: e.epoch, offset: e.startOffset }));
}

function segmentState(id: number): RemoteLogSegmentState {
  if (RemoteLogSegmentState[id] === undefined) throw new RemoteLogMetadataFormatError(`unknown remote log segment state id ${id}`);
  return id;
}

function partitionDeleteState(id: number): RemotePartitionDeleteState {
  if (RemotePartitionDeleteState[id] === undefined) throw new RemoteLogMetadataFormatError(`unknown remote partition delete state id ${id}`);
  return id;
}

/** The lineage sorted by epoch (a repeated epoch keeps its last offset, as a map would), checked as Kafka's constructors check it. */
function lineage(entries: readonly { leaderEpoch: number; offset: bigint }[], startOffset: bigint, endOffset: bigint, what: string): SegmentLeaderEpoch[] {
  if (startOffset < 0n) throw new RemoteLogMetadataFormatError(`${what}: negative start offset ${startOffset}`);
  if (endOffset < startOffset) throw new RemoteLogMetadataFormatError(`${what}: end offset ${endOffset} is below start offset ${startOffset}`);
  const byEpoch = new Map<number, bigint>();
  for (const e of entries) byEpoch.set(e.leaderEpoch, e.offset);
  if (byEpoch.size === 0) throw new RemoteLogMetadataFormatError(`${what}: empty segment leader epochs`);
  return [...byEpoch.entries()].sort((a, b) => a[0] - b[0]).map(([epoch, startOffset]) => ({ epoch, startOffset }));
}

/** The record type and record of an event, as Kafka's transforms build them. */
function toRecord(e: RemoteLogMetadata): { type: number; record: unknown } {
  switch (e.kind) {
    case 'segment': {
      const m = e.metadata;
      const r: RemoteLogSegmentMetadataRecord = {
        remoteLogSegmentId: { topicIdPartition: tipEntry(m.remoteLogSegmentId.topicIdPartition), id: m.remoteLogSegmentId.id },
        startOffset: m.startOffset,
        endOffset: m.endOffset,
        brokerId: m.brokerId,
        maxTimestampMs: m.maxTimestampMs,
        eventTimestampMs: m.eventTimestampMs,
        segmentLeaderEpochs: epochEntries(m.segmentLeaderEpochs),
        segmentSizeInBytes: m.segmentSizeInBytes,
        customMetadata: m.customMetadata,
        remoteLogSegmentState: m.state,
      };
      return { type: REMOTE_LOG_SEGMENT_METADATA_RECORD_TYPE, record: r };
    }
    case 'segmentUpdate': {
      const u = e.update;
      const r: RemoteLogSegmentMetadataUpdateRecord = {
        remoteLogSegmentId: { topicIdPartition: tipEntry(u.remoteLogSegmentId.topicIdPartition), id: u.remoteLogSegmentId.id },
        brokerId: u.brokerId,
        eventTimestampMs: u.eventTimestampMs,
        customMetadata: u.customMetadata,
        remoteLogSegmentState: u.state,
      };
      return { type: REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD_TYPE, record: r };
    }
    case 'partitionDelete': {
      const m = e.metadata;
      const r: RemotePartitionDeleteMetadataRecord = {
        topicIdPartition: tipEntry(m.topicIdPartition),
        brokerId: m.brokerId,
        eventTimestampMs: m.eventTimestampMs,
        remotePartitionDeleteState: m.state,
      };
      return { type: REMOTE_PARTITION_DELETE_METADATA_RECORD_TYPE, record: r };
    }
    case 'snapshot': {
      const s = e.snapshot;
      const r: RemoteLogSegmentMetadataSnapshotRecord = {
        segmentId: s.segmentId,
        startOffset: s.startOffset,
        endOffset: s.endOffset,
        brokerId: s.brokerId,
        maxTimestampMs: s.maxTimestampMs,
        eventTimestampMs: s.eventTimestampMs,
        segmentLeaderEpochs: epochEntries(s.segmentLeaderEpochs),
        segmentSizeInBytes: s.segmentSizeInBytes,
        customMetadata: s.customMetadata,
        remoteLogSegmentState: s.state,
      };
      return { type: REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD_TYPE, record: r };
    }
  }
}

function fromRecord(type: number, rec: unknown): RemoteLogMetadata {
  switch (type) {
    case REMOTE_LOG_SEGMENT_METADATA_RECORD_TYPE: {
      const r = rec as RemoteLogSegmentMetadataRecord;
      return {
        kind: 'segment',
        metadata: {
          remoteLogSegmentId: { topicIdPartition: tipOf(r.remoteLogSegmentId.topicIdPartition), id: r.remoteLogSegmentId.id },
          startOffset: r.startOffset,
          endOffset: r.endOffset,
          brokerId: r.brokerId,
          maxTimestampMs: r.maxTimestampMs,
          eventTimestampMs: r.eventTimestampMs,
          segmentLeaderEpochs: lineage(r.segmentLeaderEpochs, r.startOffset, r.endOffset, `remote segment ${r.remoteLogSegmentId.id}`),
          segmentSizeInBytes: r.segmentSizeInBytes,
          customMetadata: r.customMetadata,
          state: segmentState(r.remoteLogSegmentState),
        },
      };
    }
    case REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD_TYPE: {
      const r = rec as RemoteLogSegmentMetadataUpdateRecord;
      return {
        kind: 'segmentUpdate',
        update: {
          remoteLogSegmentId: { topicIdPartition: tipOf(r.remoteLogSegmentId.topicIdPartition), id: r.remoteLogSegmentId.id },
          eventTimestampMs: r.eventTimestampMs,
          customMetadata: r.customMetadata,
          state: segmentState(r.remoteLogSegmentState),
          brokerId: r.brokerId,
        },
      };
    }
    case REMOTE_PARTITION_DELETE_METADATA_RECORD_TYPE: {
      const r = rec as RemotePartitionDeleteMetadataRecord;
      return {
        kind: 'partitionDelete',
        metadata: {
          topicIdPartition: tipOf(r.topicIdPartition),
          state: partitionDeleteState(r.remotePartitionDeleteState),
          eventTimestampMs: r.eventTimestampMs,
          brokerId: r.brokerId,
        },
      };
    }
    case REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD_TYPE: {
      const r = rec as RemoteLogSegmentMetadataSnapshotRecord;
      return {
        kind: 'snapshot',
        snapshot: {
          segmentId: r.segmentId,
          startOffset: r.startOffset,
          endOffset: r.endOffset,
          maxTimestampMs: r.maxTimestampMs,
          brokerId: r.brokerId,
          eventTimestampMs: r.eventTimestampMs,
          segmentSizeInBytes: r.segmentSizeInBytes,
          customMetadata: r.customMetadata,
          state: segmentState(r.remoteLogSegmentState),
          segmentLeaderEpochs: lineage(r.segmentLeaderEpochs, r.startOffset, r.endOffset, `remote segment snapshot ${r.segmentId}`),
        },
      };
    }
    default:
      throw new RemoteLogMetadataFormatError(`unknown remote log metadata record type ${type}`);
  }
}

/** The record value Kafka's RemoteLogMetadataSerde.serialize writes for the event. */
export function serializeRemoteLogMetadata(e: RemoteLogMetadata): Buffer {
  const { type, record } = toRecord(e);
  const info = remoteLogMetadataRecordByType(type)!;
  const w = new Writer(128);
  w.unsignedVarint(REMOTE_LOG_METADATA_FRAME_VERSION).unsignedVarint(type).unsignedVarint(info.maxVersion);
  info.write(w, info.maxVersion, record as never);
  return w.toBuffer();
}

/** Reads a record value (Kafka's RemoteLogMetadataSerde.deserialize); throws RemoteLogMetadataFormatError on anything else. */
export function deserializeRemoteLogMetadata(value: Buffer): RemoteLogMetadata {
  const r = new Reader(value);
  const header = (what: string): number => {
    try {
      const v = r.unsignedVarint();
      if (v > 0x7fff) throw new RemoteLogMetadataFormatError(`remote log metadata ${what} ${v} is too large`);
      return v;
    } catch (err) {
      if (err instanceof RemoteLogMetadataFormatError) throw err;
      throw new RemoteLogMetadataFormatError(`cannot read the remote log metadata ${what}`, { cause: err });
    }
  };
  const frame = header('frame version');
  if (frame !== REMOTE_LOG_METADATA_FRAME_VERSION) {
    throw new RemoteLogMetadataFormatError(`unknown remote log metadata frame version ${frame} (only ${REMOTE_LOG_METADATA_FRAME_VERSION} is supported)`);
  }
  const type = header('record type');
  const version = header('record version');
  const info = remoteLogMetadataRecordByType(type);
  if (!info) throw new RemoteLogMetadataFormatError(`unknown remote log metadata record type ${type}`);
  if (version < info.minVersion || version > info.maxVersion) {
    throw new RemoteLogMetadataFormatError(`unsupported version ${version} of ${info.name} (versions ${info.minVersion}-${info.maxVersion})`);
  }
  let rec: unknown;
  try {
    rec = info.read(r, version);
  } catch (err) {
    throw new RemoteLogMetadataFormatError(`cannot read ${info.name} v${version}: ${(err as Error).message}`, { cause: err });
  }
  if (r.remaining > 0) throw new RemoteLogMetadataFormatError(`${r.remaining} byte(s) after ${info.name}`);
  return fromRecord(type, rec);
}
