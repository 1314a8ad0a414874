/**
 * Loading a snapshot into an image that already has state (Kafka's MetadataLoader with
 * MetadataDelta.finishSnapshot): a broker (or a controller) whose image is at some offset receives
 * a snapshot and must end with exactly the snapshot's image. Rather than swapping the image object
 * (which every listener of the broker holds), `snapshotDelta` computes the metadata records that,
 * applied to the current image with MetadataCache.apply, turn it into the snapshot's image: first
 * the removals of whatever the snapshot no longer has (RemoveTopicRecord, UnregisterBrokerRecord,
 * FeatureLevelRecord level 0, ConfigRecord with a null value, ClientQuotaRecord remove,
 * RemoveAccessControlEntryRecord, RemoveUserScramCredentialRecord), then the snapshot's records
 * whose state differs from the current image's, in the snapshot's order. Applying them produces an
 * ordinary MetadataDelta, so the replica manager, the authorizer, quotas and SCRAM see only what
 * changed.
 *
 * `loadSnapshot` is the whole step for a broker that fetched a snapshot's bytes (decode, delta,
 * apply at the snapshot's last offset).
 *
 * Invariants: after `image.apply(snapshotDelta(image, records), snapshotEndOffset - 1n)` the image
 * holds the same state as an empty image that applied `records` (up to iteration order for entries
 * both had); nothing equal in both is re-emitted; a topic whose id is kept but whose partitions are
 * not a superset of the current ones (never in a valid history) is removed and written whole.
 */
import { MetadataCache, type MetadataDelta } from '../metadata-cache';
import { ConfigResourceType, type MetadataRecord } from '../metadata-records';
import type { OffsetAndEpoch } from '../raft/raft-log';
import { readSnapshotRecords } from './snapshot-records';

/** What identifies the state a record of an image (MetadataCache.imageRecords) sets. */
function keyOf(r: MetadataRecord): string {
  switch (r.type) {
    case 'FeatureLevelRecord':
      return `feature/${r.data.name}`;
    case 'RegisterBrokerRecord':
      return `broker/${r.data.brokerId}`;
    case 'TopicRecord':
      return `topic/${r.data.topicId}`;
    case 'PartitionRecord':
      return `partition/${r.data.topicId}/${r.data.partitionId}`;
    case 'ConfigRecord':
      return `config/${r.data.resourceType}/${JSON.stringify([r.data.resourceName, r.data.name])}`;
    case 'ClientQuotaRecord':
      return `quota/${JSON.stringify([entityKey(r.data.entity), r.data.key])}`;
    case 'ProducerIdsRecord':
      return 'producerIds';
    case 'AccessControlEntryRecord':
      return `acl/${r.data.id}`;
    case 'UserScramCredentialRecord':
      return `scram/${r.data.mechanism}/${r.data.name}`;
    default:
      throw new Error(`${r.type} is not a record of an image`);
  }
}

function entityKey(entity: readonly { entityType: string; entityName: string | null }[]): string {
  return JSON.stringify([...entity].sort((a, b) => (a.entityType < b.entityType ? -1 : a.entityType > b.entityType ? 1 : 0)).map((e) => [e.entityType, e.entityName]));
}

/** Each record's key, or null when a record is not an image record or a key repeats. */
function imageKeys(records: readonly MetadataRecord[]): Map<string, MetadataRecord> | null {
  const out = new Map<string, MetadataRecord>();
  const topics = new Set<string>();
  for (const r of records) {
    if (!IMAGE_TYPES.has(r.type)) return null;
    // A PartitionRecord must follow its topic's TopicRecord to be an image's.
    if (r.type === 'TopicRecord') topics.add(r.data.topicId);
    else if (r.type === 'PartitionRecord' && !topics.has(r.data.topicId)) return null;
    const k = keyOf(r);
    if (out.has(k)) return null;
    out.set(k, r);
  }
  return out;
}

const IMAGE_TYPES = new Set<string>(['FeatureLevelRecord', 'RegisterBrokerRecord', 'TopicRecord', 'PartitionRecord', 'ConfigRecord', 'ClientQuotaRecord', 'ProducerIdsRecord', 'AccessControlEntryRecord', 'UserScramCredentialRecord']);

/** Deep equality of two records' data (numbers, strings, bigints, booleans, null, arrays, buffers, plain objects). */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}

/** The removal that takes the state `r` sets out of an image. */
function removal(r: MetadataRecord): MetadataRecord | null {
  switch (r.type) {
    case 'FeatureLevelRecord':
      return { type: 'FeatureLevelRecord', data: { name: r.data.name, featureLevel: 0 } };
    case 'RegisterBrokerRecord':
      return { type: 'UnregisterBrokerRecord', data: { brokerId: r.data.brokerId, brokerEpoch: r.data.brokerEpoch } };
    case 'TopicRecord':
      return { type: 'RemoveTopicRecord', data: { topicId: r.data.topicId } };
    case 'ConfigRecord':
      return { type: 'ConfigRecord', data: { ...r.data, value: null } };
    case 'ClientQuotaRecord':
      return { type: 'ClientQuotaRecord', data: { ...r.data, value: 0, remove: true } };
    case 'ProducerIdsRecord':
      return { type: 'ProducerIdsRecord', data: { brokerId: -1, brokerEpoch: -1n, nextProducerId: 0n } };
    case 'AccessControlEntryRecord':
      return { type: 'RemoveAccessControlEntryRecord', data: { id: r.data.id } };
    case 'UserScramCredentialRecord':
      return { type: 'RemoveUserScramCredentialRecord', data: { name: r.data.name, mechanism: r.data.mechanism } };
    default:
      // Partitions go with their topic (a partition cannot be removed alone).
      return null;
  }
}

/**
 * The records that turn `current` into the image `snapshotRecords` rebuild (see the header).
 * `snapshotRecords` are a snapshot's records (readSnapshotRecords), replayable on an empty image.
 */
export function snapshotDelta(current: MetadataCache, snapshotRecords: readonly MetadataRecord[]): MetadataRecord[] {
  const currentRecords = current.imageRecords();
  // An empty image (a controller or broker starting): the snapshot's records are the delta.
  if (currentRecords.length === 0) return [...snapshotRecords];
  // The snapshot's records as they are when each sets its own piece of state once (what
  // imageRecords writes); otherwise normalized through an image of their own first.
  let wanted: readonly MetadataRecord[] = snapshotRecords;
  let wantedKeys = imageKeys(snapshotRecords);
  if (wantedKeys === null) {
    const target = new MetadataCache(current.clusterId);
    target.apply(snapshotRecords);
    wanted = target.imageRecords();
    wantedKeys = imageKeys(wanted)!;
  }
  const have = new Map<string, MetadataRecord>();
  for (const r of currentRecords) have.set(keyOf(r), r);

  // Topics to drop: gone, renamed (never happens), or with a partition the snapshot does not have.
  const droppedTopics = new Set<string>();
  for (const [key, r] of have) {
    if (r.type === 'TopicRecord') {
      const w = wantedKeys.get(key);
      if (!w || w.type !== 'TopicRecord' || w.data.name !== r.data.name) droppedTopics.add(r.data.topicId);
    } else if (r.type === 'PartitionRecord' && !wantedKeys.has(key)) droppedTopics.add(r.data.topicId);
  }
  // A name held by another id now: the old topic goes first (RemoveTopicRecord also drops the
  // topic configs under that name, which are then absent from what the image has).
  const droppedNames = new Set<string>();
  for (const r of have.values()) if (r.type === 'TopicRecord' && droppedTopics.has(r.data.topicId)) droppedNames.add(r.data.name);

  const out: MetadataRecord[] = [];
  for (const [key, r] of have) {
    if (r.type === 'TopicRecord') {
      if (droppedTopics.has(r.data.topicId)) out.push(removal(r)!);
      continue;
    }
    if (r.type === 'PartitionRecord') continue;
    if (r.type === 'ConfigRecord' && r.data.resourceType === ConfigResourceType.TOPIC && droppedNames.has(r.data.resourceName)) {
      have.delete(key);
      continue;
    }
    if (!wantedKeys.has(key)) {
      const rm = removal(r);
      if (rm) out.push(rm);
    }
  }
  for (const r of wanted) {
    const key = keyOf(r);
    const h = have.get(key);
    const topicId = r.type === 'TopicRecord' || r.type === 'PartitionRecord' ? r.data.topicId : null;
    if (topicId !== null && droppedTopics.has(topicId)) {
      out.push(r);
      continue;
    }
    if (h && sameData(h.data, r.data)) continue;
    out.push(r);
  }
  return out;
}

/**
 * What a broker (or any holder of an image) does with a snapshot it fetched (FetchSnapshot's bytes
 * for snapshot `id`): decodes it (CorruptSnapshotError if it is not a whole, valid snapshot),
 * applies snapshotDelta as one batch at the snapshot's last offset, and returns the MetadataDelta
 * (for the replica manager and the other delta consumers) and the records applied. Fetching then
 * continues at `id.offset`.
 */
export function loadSnapshot(image: MetadataCache, id: OffsetAndEpoch, data: Buffer): { delta: MetadataDelta; records: MetadataRecord[] } {
  const { records: snapshotRecords } = readSnapshotRecords(data);
  const records = snapshotDelta(image, snapshotRecords);
  const delta = image.apply(records, id.offset - 1n);
  return { delta, records };
}
