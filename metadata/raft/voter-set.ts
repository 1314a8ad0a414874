/**
 * The KRaft voter set (KIP-853; Kafka's VoterSet, ReplicaKey and KRaftVersion) and its control
 * records: `VotersRecord` (control type 6) and `KRaftVersionRecord` (control type 5), as they go in
 * the metadata log and in snapshots right after the SnapshotHeader.
 *
 * A voter is a replica key (node id + directory id; NO_DIRECTORY_ID when the voter set is static)
 * with its endpoints (listener name, host, port) and the kraft.version range it supports.
 *
 * kraft.version 0: the voters are the static `controller.quorum.voters` and never change; no
 * VotersRecord is ever written. kraft.version 1: the voter set lives in the log; the latest
 * VotersRecord (committed or not) is the set in force, and truncation reverts to the one before.
 *
 * Invariants: ids are unique; a VoterSet is immutable (add/remove/update return new sets, or null
 * when the change does not apply); encoding then decoding a set gives it back; `isVoter` matches
 * the id, and the directory id when the voter has one (Kafka's rule for static sets).
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { controlRecordKey, ControlRecordType, parseControlRecordType } from '../../protocol/records/control-record';
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { writeSnapshotHeaderRecord } from '../../protocol/generated/message-data/snapshot-header-record';
import { writeSnapshotFooterRecord } from '../../protocol/generated/message-data/snapshot-footer-record';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { readVotersRecord, writeVotersRecord, type VotersRecord } from '../../protocol/generated/message-data/voters-record';
import { readKRaftVersionRecord, writeKRaftVersionRecord } from '../../protocol/generated/message-data/kraft-version-record';
import { NO_DIRECTORY_ID } from './quorum-state-store';
import type { VoterEndpoint } from './quorum-config';

/** Kafka's KRaftVersion.FEATURE_NAME. */
export const KRAFT_VERSION_FEATURE = 'kraft.version';
/** KRaftVersion.KRAFT_VERSION_0 (static voters) and KRAFT_VERSION_1 (KIP-853 reconfiguration). */
export const KRAFT_VERSION_0 = 0;
export const KRAFT_VERSION_1 = 1;
/** The kraft.version range this node supports (Kafka 4.0: 0-1). */
export const SUPPORTED_KRAFT_VERSIONS = { min: KRAFT_VERSION_0, max: KRAFT_VERSION_1 } as const;
/** Kafka's default controller listener name, for endpoints of a static voter set. */
export const DEFAULT_CONTROLLER_LISTENER = 'CONTROLLER';

export interface ReplicaKey {
  id: number;
  /** NO_DIRECTORY_ID when unknown. */
  directoryId: string;
}

export function replicaKeyString(k: ReplicaKey): string {
  return k.directoryId === NO_DIRECTORY_ID ? `${k.id}` : `${k.id}/${k.directoryId}`;
}

export interface Endpoint {
  name: string;
  host: string;
  port: number;
}

export interface VoterNode {
  key: ReplicaKey;
  endpoints: readonly Endpoint[];
  kraftVersion: { min: number; max: number };
}

export class VoterSet {
  private readonly byId: ReadonlyMap<number, VoterNode>;

  constructor(voters: Iterable<VoterNode>) {
    const m = new Map<number, VoterNode>();
    for (const v of voters) {
      if (m.has(v.key.id)) throw new Error(`duplicate voter id ${v.key.id}`);
      m.set(v.key.id, v);
    }
    this.byId = m;
  }

  /** The static voter set of `controller.quorum.voters` (no directory ids; kraft.version 0). */
  static fromStatic(voters: ReadonlyMap<number, VoterEndpoint>, listenerName = DEFAULT_CONTROLLER_LISTENER): VoterSet {
    return new VoterSet(
      [...voters.values()].map((v) => ({
        key: { id: v.id, directoryId: NO_DIRECTORY_ID },
        endpoints: [{ name: listenerName, host: v.host, port: v.port }],
        kraftVersion: { min: KRAFT_VERSION_0, max: KRAFT_VERSION_0 },
      })),
    );
  }

  static fromRecord(r: VotersRecord): VoterSet {
    return new VoterSet(
      r.voters.map((v) => ({
        key: { id: v.voterId, directoryId: v.voterDirectoryId },
        endpoints: v.endpoints.map((e) => ({ name: e.name, host: e.host, port: e.port })),
        kraftVersion: { min: v.kRaftVersionFeature.minSupportedVersion, max: v.kRaftVersionFeature.maxSupportedVersion },
      })),
    );
  }

  toRecord(): VotersRecord {
    return {
      version: 0,
      voters: [...this.byId.values()].map((v) => ({
        voterId: v.key.id,
        voterDirectoryId: v.key.directoryId,
        endpoints: v.endpoints.map((e) => ({ ...e })),
        kRaftVersionFeature: { minSupportedVersion: v.kraftVersion.min, maxSupportedVersion: v.kraftVersion.max },
      })),
    };
  }

  get size(): number {
    return this.byId.size;
  }
  ids(): Set<number> {
    return new Set(this.byId.keys());
  }
  nodes(): VoterNode[] {
    return [...this.byId.values()];
  }
  keys(): ReplicaKey[] {
    return this.nodes().map((v) => v.key);
  }
  get(id: number): VoterNode | undefined {
    return this.byId.get(id);
  }
  hasId(id: number): boolean {
    return this.byId.has(id);
  }
  /**
   * Kafka's VoterSet.isVoter: the same id, and the same directory id unless the voter has none
   * (a static voter set names ids only, so any directory of that id is the voter).
   */
  isVoter(key: ReplicaKey): boolean {
    const v = this.byId.get(key.id);
    if (v === undefined) return false;
    return v.key.directoryId === NO_DIRECTORY_ID || v.key.directoryId === key.directoryId;
  }
  /** Kafka's isOnlyVoter. */
  isOnlyVoter(key: ReplicaKey): boolean {
    return this.size === 1 && this.isVoter(key);
  }
  majoritySize(): number {
    return Math.floor(this.size / 2) + 1;
  }
  /** The endpoint of `id` on `listenerName` (the first endpoint when no name is given or none matches). */
  endpoint(id: number, listenerName?: string): Endpoint | null {
    const v = this.byId.get(id);
    if (!v || v.endpoints.length === 0) return null;
    return (listenerName ? v.endpoints.find((e) => e.name === listenerName) : undefined) ?? v.endpoints[0];
  }

  /** A new set with `voter` added, or null when its id is already a voter. */
  addVoter(voter: VoterNode): VoterSet | null {
    if (this.byId.has(voter.key.id)) return null;
    return new VoterSet([...this.byId.values(), voter]);
  }
  /** A new set without `key`, or null when it is not a voter (id and directory id) or is the only one. */
  removeVoter(key: ReplicaKey): VoterSet | null {
    if (!this.isVoter(key) || this.size === 1) return null;
    return new VoterSet([...this.byId.values()].filter((v) => v.key.id !== key.id));
  }
  /** A new set with the voter `voter.key` replaced (endpoints, versions), or null when it is not a voter. */
  updateVoter(voter: VoterNode): VoterSet | null {
    if (!this.isVoter(voter.key)) return null;
    return new VoterSet([...this.byId.values()].map((v) => (v.key.id === voter.key.id ? voter : v)));
  }

  equals(other: VoterSet): boolean {
    return JSON.stringify(this.toRecord()) === JSON.stringify(other.toRecord());
  }

  toString(): string {
    return `[${this.keys().map(replicaKeyString).join(', ')}]`;
  }
}

/** The VotersRecord control record for `voters`. */
export function votersControlRecord(voters: VoterSet): SimpleRecord {
  const w = new Writer(128);
  writeVotersRecord(w, 0, voters.toRecord());
  return { key: controlRecordKey(ControlRecordType.KRAFT_VOTERS), value: w.toBuffer(), timestamp: 0 };
}

/** The KRaftVersionRecord control record for `kraftVersion`. */
export function kraftVersionControlRecord(kraftVersion: number): SimpleRecord {
  const w = new Writer(16);
  writeKRaftVersionRecord(w, 0, { version: 0, kRaftVersion: kraftVersion });
  return { key: controlRecordKey(ControlRecordType.KRAFT_VERSION), value: w.toBuffer(), timestamp: 0 };
}

/**
 * What a snapshot holds right after its SnapshotHeader (Kafka's RecordsSnapshotWriter with
 * setKraftVersion / setVoterSet): with kraft.version 1, a KRaftVersionRecord and a VotersRecord
 * (in the header's control batch); with kraft.version 0, nothing. The controller's snapshot
 * writer puts these records there; `readSnapshotControlState` reads them back.
 */
export function snapshotControlRecords(kraftVersion: number, voters: VoterSet | null): SimpleRecord[] {
  if (kraftVersion < KRAFT_VERSION_1 || !voters) return [];
  return [kraftVersionControlRecord(kraftVersion), votersControlRecord(voters)];
}

export type KRaftControlRecord = { type: 'KRAFT_VERSION'; kraftVersion: number } | { type: 'VOTERS'; voters: VoterSet };

/** Decodes one control record if it is a KRaftVersion or Voters record (null for any other type). */
export function decodeKRaftControlRecord(key: Buffer | null, value: Buffer | null): KRaftControlRecord | null {
  const type = parseControlRecordType(key);
  if (type !== ControlRecordType.KRAFT_VERSION && type !== ControlRecordType.KRAFT_VOTERS) return null;
  if (value === null) throw new Error(`control record ${ControlRecordType[type]} without a value`);
  const r = new Reader(value);
  if (type === ControlRecordType.KRAFT_VERSION) return { type: 'KRAFT_VERSION', kraftVersion: readKRaftVersionRecord(r, 0).kRaftVersion };
  return { type: 'VOTERS', voters: VoterSet.fromRecord(readVotersRecord(r, 0)) };
}

/** The control records of kraft type in record batches, with their offsets, in order. */
export function kraftControlRecordsIn(batches: Buffer): { offset: bigint; record: KRaftControlRecord }[] {
  const out: { offset: bigint; record: KRaftControlRecord }[] = [];
  for (const b of splitBatches(batches)) {
    if (!b.isControlBatch) continue;
    for (const r of readRecords(b)) {
      const c = decodeKRaftControlRecord(r.key, r.value);
      if (c) out.push({ offset: r.offset, record: c });
    }
  }
  return out;
}

/**
 * The kraft.version and voter set a snapshot carries (the last of each in it), or nulls when it
 * has none or is not in Kafka's record-batch format.
 */
export function readSnapshotControlState(data: Buffer): { kraftVersion: number | null; voters: VoterSet | null } {
  let kraftVersion: number | null = null;
  let voters: VoterSet | null = null;
  let records: { offset: bigint; record: KRaftControlRecord }[];
  try {
    records = kraftControlRecordsIn(data);
  } catch {
    return { kraftVersion: null, voters: null };
  }
  for (const { record } of records) {
    if (record.type === 'KRAFT_VERSION') kraftVersion = record.kraftVersion;
    else voters = record.voters;
  }
  return { kraftVersion, voters };
}

/** Parses `--initial-controllers` / bootstrap entries `id@host:port:directoryId` (Kafka's DynamicVoter). */
export function parseDynamicVoter(entry: string, listenerName = DEFAULT_CONTROLLER_LISTENER): VoterNode {
  const s = entry.trim();
  const at = s.indexOf('@');
  if (at <= 0) throw new Error(`No @ found in dynamic voter string ${s}`);
  const idText = s.slice(0, at);
  if (!/^\d+$/.test(idText)) throw new Error(`Failed to parse node id in dynamic voter string ${s}`);
  const id = Number(idText);
  const rest = s.slice(at + 1);
  let host: string;
  let after: string;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) throw new Error(`Hostname began with left bracket, but no right bracket was found in dynamic voter string ${s}`);
    host = rest.slice(1, close);
    after = rest.slice(close + 1);
    if (!after.startsWith(':')) throw new Error(`No colon following hostname could be found in dynamic voter string ${s}`);
    after = after.slice(1);
  } else {
    const colon = rest.indexOf(':');
    if (colon < 0) throw new Error(`No colon following hostname could be found in dynamic voter string ${s}`);
    host = rest.slice(0, colon);
    after = rest.slice(colon + 1);
  }
  const colon = after.indexOf(':');
  if (colon < 0) throw new Error(`No colon following port could be found in dynamic voter string ${s}`);
  const portText = after.slice(0, colon);
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) throw new Error(`Failed to parse port in dynamic voter string ${s}`);
  const directoryId = after.slice(colon + 1);
  if (!/^[A-Za-z0-9_-]{22}$/.test(directoryId) || directoryId === NO_DIRECTORY_ID) throw new Error(`Failed to parse directory ID in dynamic voter string ${s}`);
  return { key: { id, directoryId }, endpoints: [{ name: listenerName, host, port: Number(portText) }], kraftVersion: { ...SUPPORTED_KRAFT_VERSIONS } };
}

/**
 * The bootstrap checkpoint `00000000000000000000-0000000000.checkpoint` that `kafka-storage.sh
 * format --standalone / --initial-controllers` writes (Kafka's Formatter, RecordsSnapshotWriter):
 * one control batch with the SnapshotHeader, the KRaftVersionRecord (1) and the VotersRecord,
 * then a control batch with the SnapshotFooter; snapshot id (0, 0).
 */
export function bootstrapCheckpoint(voters: VoterSet, now = Date.now()): Buffer {
  const header = new Writer(16);
  writeSnapshotHeaderRecord(header, 0, { version: 0, lastContainedLogTimestamp: BigInt(now) });
  const footer = new Writer(8);
  writeSnapshotFooterRecord(footer, 0, { version: 0 });
  const first = buildRecordBatch(
    [{ key: controlRecordKey(ControlRecordType.SNAPSHOT_HEADER), value: header.toBuffer(), timestamp: now }, ...snapshotControlRecords(KRAFT_VERSION_1, voters).map((r) => ({ ...r, timestamp: now }))],
    { baseOffset: 0n, isControlBatch: true, partitionLeaderEpoch: 0, now },
  );
  const last = buildRecordBatch([{ key: controlRecordKey(ControlRecordType.SNAPSHOT_FOOTER), value: footer.toBuffer(), timestamp: now }], {
    baseOffset: 3n,
    isControlBatch: true,
    partitionLeaderEpoch: 0,
    now,
  });
  return Buffer.concat([first, last]);
}
