/**
 * The records the group coordinator keeps in __consumer_offsets, in Kafka's own format so that
 * Kafka's tools (and a Kafka broker) read krill's log: the record key is an int16 version followed
 * by the key schema, the value an int16 version followed by the value schema, and a null value is
 * a tombstone. The key version selects the record type:
 *   0, 1  OffsetCommitKey        -> OffsetCommitValue   (krill writes key v1, as Kafka does)
 *   2     GroupMetadataKey       -> GroupMetadataValue  (classic group state, written at v3)
 *   3..8  KIP-848 consumer group records (consumer/consumer-group-records.ts parses them)
 *   9..   share group records (read and skipped: krill does not run share groups)
 * OffsetCommitValue is written at v3 (leader epoch), or v1 when the commit carries an explicit
 * expire timestamp (OffsetCommit v2-4 retention_time_ms), which is what Kafka writes too.
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { consumerOffsetsRecordByKeyVersion } from '../../protocol/generated/records';
import {
  readOffsetCommitKey,
  writeOffsetCommitKey,
  type OffsetCommitKey,
} from '../../protocol/generated/records/group-coordinator/offset-commit-key';
import {
  readOffsetCommitValue,
  writeOffsetCommitValue,
} from '../../protocol/generated/records/group-coordinator/offset-commit-value';
import { readGroupMetadataKey, writeGroupMetadataKey } from '../../protocol/generated/records/group-coordinator/group-metadata-key';
import {
  readGroupMetadataValue,
  writeGroupMetadataValue,
  type GroupMetadataValue,
} from '../../protocol/generated/records/group-coordinator/group-metadata-value';
import type { Input } from '../../protocol/primitives/input';
import { isConsumerGroupKeyVersion, parseConsumerGroupRecord, type ConsumerGroupRecord } from './consumer/consumer-group-records';

export const OFFSET_COMMIT_KEY_VERSION = 1;
export const GROUP_METADATA_KEY_VERSION = 2;
export const GROUP_METADATA_VALUE_VERSION = 3;

/** A committed offset as the coordinator keeps it (Kafka's OffsetAndMetadata). */
export interface OffsetAndMetadata {
  committedOffset: bigint;
  /** -1 when unknown. */
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** Explicit expiry from OffsetCommit v2-4 retention_time_ms; null otherwise. */
  expireTimestampMs: number | null;
  /**
   * Offset of the record in __consumer_offsets, when known: of two values for one partition the
   * one written later wins (a transactional commit completed by its marker after a plain commit).
   */
  recordOffset?: bigint;
}

/** One record for __consumer_offsets: serialized key and value (null = tombstone). */
export interface CoordinatorRecord {
  key: Buffer;
  value: Buffer | null;
}

export type ParsedCoordinatorRecord =
  | { type: 'offset'; key: OffsetCommitKey; value: OffsetAndMetadata | null }
  | { type: 'group'; groupId: string; value: GroupMetadataValue | null }
  | { type: 'consumer'; record: ConsumerGroupRecord }
  | { type: 'unsupported'; keyVersion: number };

function versioned(version: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  w.int16(version);
  write(w);
  return w.toBuffer();
}

export function offsetCommitRecord(groupId: string, topic: string, partition: number, o: OffsetAndMetadata): CoordinatorRecord {
  const key = versioned(OFFSET_COMMIT_KEY_VERSION, (w) =>
    writeOffsetCommitKey(w, OFFSET_COMMIT_KEY_VERSION, { group: groupId, topic, partition }),
  );
  const valueVersion = o.expireTimestampMs !== null ? 1 : 3;
  const value = versioned(valueVersion, (w) =>
    writeOffsetCommitValue(w, valueVersion, {
      offset: o.committedOffset,
      leaderEpoch: o.leaderEpoch,
      metadata: o.metadata,
      commitTimestamp: BigInt(o.commitTimestampMs),
      expireTimestamp: BigInt(o.expireTimestampMs ?? -1),
    }),
  );
  return { key, value };
}

export function offsetCommitTombstone(groupId: string, topic: string, partition: number): CoordinatorRecord {
  const key = versioned(OFFSET_COMMIT_KEY_VERSION, (w) =>
    writeOffsetCommitKey(w, OFFSET_COMMIT_KEY_VERSION, { group: groupId, topic, partition }),
  );
  return { key, value: null };
}

export function groupMetadataRecord(groupId: string, value: Input<GroupMetadataValue>): CoordinatorRecord {
  const key = versioned(GROUP_METADATA_KEY_VERSION, (w) => writeGroupMetadataKey(w, GROUP_METADATA_KEY_VERSION, { group: groupId }));
  return { key, value: versioned(GROUP_METADATA_VALUE_VERSION, (w) => writeGroupMetadataValue(w, GROUP_METADATA_VALUE_VERSION, value)) };
}

export function groupMetadataTombstone(groupId: string): CoordinatorRecord {
  const key = versioned(GROUP_METADATA_KEY_VERSION, (w) => writeGroupMetadataKey(w, GROUP_METADATA_KEY_VERSION, { group: groupId }));
  return { key, value: null };
}

/**
 * Parses one __consumer_offsets record. Throws (DecodeError or a version error) on a record whose
 * key or value does not decode; the loader decides what to do with that.
 */
export function parseCoordinatorRecord(key: Buffer | null, value: Buffer | null): ParsedCoordinatorRecord {
  if (key === null || key.length < 2) throw new Error('coordinator record without a key');
  const kr = new Reader(key);
  const keyVersion = kr.int16();
  if (keyVersion === 0 || keyVersion === 1) {
    const k = readOffsetCommitKey(kr, keyVersion);
    if (value === null) return { type: 'offset', key: k, value: null };
    const vr = new Reader(value);
    const vv = vr.int16();
    const v = readOffsetCommitValue(vr, vv);
    return {
      type: 'offset',
      key: k,
      value: {
        committedOffset: v.offset,
        leaderEpoch: v.leaderEpoch,
        metadata: v.metadata,
        commitTimestampMs: Number(v.commitTimestamp),
        expireTimestampMs: v.expireTimestamp >= 0n ? Number(v.expireTimestamp) : null,
      },
    };
  }
  if (keyVersion === GROUP_METADATA_KEY_VERSION) {
    const k = readGroupMetadataKey(kr, keyVersion);
    if (value === null) return { type: 'group', groupId: k.group, value: null };
    const vr = new Reader(value);
    const vv = vr.int16();
    return { type: 'group', groupId: k.group, value: readGroupMetadataValue(vr, vv) };
  }
  if (isConsumerGroupKeyVersion(keyVersion)) return { type: 'consumer', record: parseConsumerGroupRecord(keyVersion, kr, value) };
  if (!consumerOffsetsRecordByKeyVersion(keyVersion)) throw new Error(`unknown __consumer_offsets record key version ${keyVersion}`);
  return { type: 'unsupported', keyVersion };
}
