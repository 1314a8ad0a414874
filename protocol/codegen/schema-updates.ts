/**
 * Kafka 4.x message versions (and record fields) that the schema snapshot in ../shared/kafka-protocol predates.
 *
 * The snapshot is apache/kafka trunk of 2024-10-25; Kafka 4.0 (2025) added versions to a few
 * messages. Each entry below names one schema file, the Kafka release and KIP that changed it, and
 * the change as an edit of the schema's JSON: a new `validVersions`, the end of
 * `latestVersionUnstable`, and fields appended to the top-level struct. The generator applies the
 * edits to the parsed schema before building its model (schema.ts loadSchemas), so
 * protocol/generated/ is what Kafka 4.x's own schemas would give for these messages. Fields may
 * also go at the end of a nested struct, named by the path of its fields (`in: 'Groups.Members'`).
 *
 * Invariants: an entry only widens a schema (a version range whose low end is unchanged, fields
 * that exist only in the new versions, or tagged fields, which readers that do not know them
 * skip); an entry for a file that is missing from the schema root
 * is an error, so a renamed schema cannot silently drop an update. When the snapshot in
 * ../shared is refreshed past a release, its entries here become no-ops and are removed.
 */

export interface SchemaField {
  name: string;
  type: string;
  /** Absent for a field that is only ever tagged. */
  versions?: string;
  taggedVersions?: string;
  tag?: number;
  nullableVersions?: string;
  default?: string | number | boolean;
  ignorable?: boolean;
  /** The nested struct the field is appended to: its field names from the top level, dot-separated. */
  in?: string;
}

export interface SchemaUpdate {
  /** The schema file, relative to the schema root (`message/ProduceRequest.json`). */
  file: string;
  /** The Kafka release and the KIP that made the change. */
  release: string;
  kip: string;
  validVersions?: string;
  /** The highest version became stable (advertised without unstable.api.versions.enable). */
  stable?: true;
  /** Fields added at the end of the message's top-level struct (or of the struct named by `in`). */
  appendFields?: SchemaField[];
}

export const SCHEMA_UPDATES: readonly SchemaUpdate[] = [
  // KIP-890 part 2: v12 means the producer relies on the partition leader to add the partition to
  // the transaction (no AddPartitionsToTxn of its own); the wire format is v11's.
  { file: 'message/ProduceRequest.json', release: '4.0', kip: 'KIP-890', validVersions: '0-12' },
  { file: 'message/ProduceResponse.json', release: '4.0', kip: 'KIP-890', validVersions: '0-12' },
  // KIP-890 part 2: v5 means the group coordinator adds the offsets partition to the transaction
  // (no AddOffsetsToTxn of the producer's own); the wire format is v4's.
  { file: 'message/TxnOffsetCommitRequest.json', release: '4.0', kip: 'KIP-890', validVersions: '0-5' },
  { file: 'message/TxnOffsetCommitResponse.json', release: '4.0', kip: 'KIP-890', validVersions: '0-5' },
  // KIP-890 part 2: EndTxn v5 (the bumped producer id and epoch in the response) became stable.
  { file: 'message/EndTxnRequest.json', release: '4.0', kip: 'KIP-890', stable: true },
  // KIP-890 part 2 / KIP-939: the epoch that goes with NextProducerId (tag 3 of the flexible v1
  // value; -1 when there is none), in Kafka's TransactionLogValue since 4.1.
  {
    file: 'transaction-coordinator/TransactionLogValue.json',
    release: '4.1',
    kip: 'KIP-890',
    appendFields: [{ name: 'NextProducerEpoch', type: 'int16', taggedVersions: '1+', tag: 3, default: -1, ignorable: true }],
  },
  // KIP-1082: ConsumerGroupHeartbeat v1 (the client generates its member id; SubscribedTopicRegex)
  // became stable, the version librdkafka 2.12 and the Java consumer of 4.0 send.
  { file: 'message/ConsumerGroupHeartbeatRequest.json', release: '4.0', kip: 'KIP-1082', stable: true },
  // KIP-1099: ConsumerGroupDescribe v1 adds each member's type (0 classic, 1 consumer, -1 unknown).
  { file: 'message/ConsumerGroupDescribeRequest.json', release: '4.0', kip: 'KIP-1099', validVersions: '0-1' },
  {
    file: 'message/ConsumerGroupDescribeResponse.json',
    release: '4.0',
    kip: 'KIP-1099',
    validVersions: '0-1',
    appendFields: [{ name: 'MemberType', type: 'int8', versions: '1+', default: -1, ignorable: true, in: 'Groups.Members' }],
  },
  // KIP-1102: Metadata v13 adds a top-level error code (REBOOTSTRAP_REQUIRED) after the topics.
  { file: 'message/MetadataRequest.json', release: '4.0', kip: 'KIP-1102', validVersions: '0-13' },
  {
    file: 'message/MetadataResponse.json',
    release: '4.0',
    kip: 'KIP-1102',
    validVersions: '0-13',
    appendFields: [{ name: 'ErrorCode', type: 'int16', versions: '13+', ignorable: true }],
  },
  // KIP-996: Vote v2 is the pre-vote (PreVote: the candidate asks whether it would win, for epoch
  // + 1, without anyone bumping the epoch or persisting a vote). The response's wire format is v1's.
  {
    file: 'message/VoteRequest.json',
    release: '4.0',
    kip: 'KIP-996',
    validVersions: '0-2',
    appendFields: [{ name: 'PreVote', type: 'bool', versions: '2+', in: 'Topics.Partitions' }],
  },
  { file: 'message/VoteResponse.json', release: '4.0', kip: 'KIP-996', validVersions: '0-2' },
];

/** The raw schema object with the updates for `file` applied (the object is edited in place). */
export function applySchemaUpdates<T extends { validVersions: string; latestVersionUnstable?: boolean; fields: unknown[] }>(file: string, raw: T, updates: readonly SchemaUpdate[] = SCHEMA_UPDATES): T {
  for (const u of updates) {
    if (u.file !== file) continue;
    if (u.validVersions !== undefined) {
      const lo = (s: string): string => s.split('-')[0];
      if (lo(u.validVersions) !== lo(raw.validVersions)) throw new Error(`${file}: a schema update may not change the lowest version (${raw.validVersions} -> ${u.validVersions})`);
      raw.validVersions = u.validVersions;
    }
    if (u.stable) delete raw.latestVersionUnstable;
    for (const { in: path, ...f } of u.appendFields ?? []) structFields(file, raw.fields, path).push({ ...f });
  }
  return raw;
}

/** The field list of the struct at `path` (dot-separated field names; the top level when absent). */
function structFields(file: string, fields: unknown[], path: string | undefined): unknown[] {
  let list = fields;
  for (const name of path === undefined ? [] : path.split('.')) {
    const f = list.find((x) => (x as { name?: string }).name === name) as { fields?: unknown[] } | undefined;
    if (f?.fields === undefined) throw new Error(`${file}: no struct field ${name} in the path ${path}`);
    list = f.fields;
  }
  return list;
}
