/**
 * Test support: a seeded generator of varied metadata record streams (creates, deletes, config
 * changes, ISR and leader changes, fencing, registrations, quotas, SCRAM, ACLs, features, producer
 * ids), and `imageState`, a plain rendering of every piece of state a MetadataCache holds (read
 * from its private fields on purpose, so that a field imageRecords forgets shows up as a
 * difference). Deterministic for a seed.
 */
import { MetadataCache } from '../../metadata-cache';
import { ConfigResourceType, ControlledShutdownChange, FencingChange, type MetadataRecord } from '../../metadata-records';

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    // mulberry32
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

function uuidFor(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(16).toString(16)).join('');
  return Buffer.from(hex, 'hex').toString('base64url');
}

/** Batches of records as a controller might write them (each batch applied at once). */
export function randomMetadataBatches(seed: number, batchCount: number): MetadataRecord[][] {
  const rng = new Rng(seed);
  const image = new MetadataCache('c');
  const batches: MetadataRecord[][] = [];
  const brokerIds = [1, 2, 3, 4, 5];
  let epoch = 1n;
  let nextPid = 0n;
  const names = ['a', 'b', 'c', 'orders', 'payments', 'x.y', 'logs'];
  const first: MetadataRecord[] = [
    { type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: 21 } },
    { type: 'FeatureLevelRecord', data: { name: 'transaction.version', featureLevel: 2 } },
  ];
  batches.push(first);
  image.apply(first);
  for (let i = 0; i < batchCount; i++) {
    const batch: MetadataRecord[] = [];
    const n = 1 + rng.int(4);
    for (let j = 0; j < n; j++) {
      const topics = [...image.topics()];
      const kind = rng.int(15);
      if (kind === 0 || (kind === 1 && image.allBrokers().length < 2)) {
        const id = rng.pick(brokerIds);
        batch.push({
          type: 'RegisterBrokerRecord',
          data: {
            brokerId: id,
            isMigratingZkBroker: false,
            incarnationId: uuidFor(rng),
            brokerEpoch: epoch++,
            endPoints: [{ name: 'PLAINTEXT', host: `h${id}`, port: 9000 + rng.int(100), securityProtocol: 0 }],
            features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 21 + rng.int(3) }],
            rack: rng.chance(0.5) ? `r${rng.int(3)}` : null,
            fenced: rng.chance(0.5),
            inControlledShutdown: false,
            logDirs: [],
          },
        });
      } else if (kind === 1) {
        const b = rng.pick(image.allBrokers());
        const what = rng.int(4);
        if (what === 0) batch.push({ type: 'BrokerRegistrationChangeRecord', data: { brokerId: b.id, brokerEpoch: b.epoch, fenced: rng.pick([FencingChange.FENCE, FencingChange.UNFENCE, FencingChange.NONE]), inControlledShutdown: rng.pick([ControlledShutdownChange.NONE, ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN]), logDirs: [] } });
        else if (what === 1) batch.push({ type: rng.chance(0.5) ? 'FenceBrokerRecord' : 'UnfenceBrokerRecord', data: { id: b.id, epoch: b.epoch } });
        else if (what === 2) batch.push({ type: 'UnregisterBrokerRecord', data: { brokerId: b.id, brokerEpoch: b.epoch } });
        else batch.push({ type: 'BrokerRegistrationChangeRecord', data: { brokerId: b.id, brokerEpoch: b.epoch + 100n, fenced: FencingChange.FENCE, inControlledShutdown: 0, logDirs: [] } });
      } else if (kind <= 3) {
        const name = `${rng.pick(names)}${rng.int(3)}`;
        if (image.topic(name) || batch.some((r) => r.type === 'TopicRecord' && r.data.name === name)) continue;
        const topicId = uuidFor(rng);
        batch.push({ type: 'TopicRecord', data: { name, topicId } });
        if (rng.chance(0.5)) batch.push({ type: 'ConfigRecord', data: { resourceType: ConfigResourceType.TOPIC, resourceName: name, name: 'retention.ms', value: String(rng.int(1e6)) } });
        const parts = 1 + rng.int(4);
        for (let p = 0; p < parts; p++) {
          const replicas = [...brokerIds].sort(() => rng.next() - 0.5).slice(0, 1 + rng.int(3));
          batch.push({
            type: 'PartitionRecord',
            data: {
              partitionId: p,
              topicId,
              replicas,
              isr: replicas.slice(0, 1 + rng.int(replicas.length)),
              removingReplicas: [],
              addingReplicas: rng.chance(0.1) ? [replicas[0]] : [],
              leader: replicas[0],
              leaderRecoveryState: 0,
              leaderEpoch: rng.int(3),
              partitionEpoch: rng.int(3),
              directories: [],
              eligibleLeaderReplicas: null,
              lastKnownElr: null,
            },
          });
        }
      } else if (kind === 4 && topics.length > 0) {
        batch.push({ type: 'RemoveTopicRecord', data: { topicId: rng.pick(topics).topicId } });
      } else if (kind <= 6 && topics.length > 0) {
        const t = rng.pick(topics);
        const p = rng.pick([...t.partitions.values()]);
        if (!p) continue;
        const isr = rng.chance(0.7) ? p.replicas.filter(() => rng.chance(0.6)) : null;
        batch.push({
          type: 'PartitionChangeRecord',
          data: {
            partitionId: p.partition,
            topicId: t.topicId,
            isr,
            leader: rng.chance(0.5) ? -2 : rng.chance(0.2) ? -1 : rng.pick(p.replicas),
            replicas: rng.chance(0.1) ? [...p.replicas].reverse() : null,
            removingReplicas: rng.chance(0.1) ? [] : null,
            addingReplicas: rng.chance(0.1) ? [] : null,
            leaderRecoveryState: rng.pick([-1, -1, 0, 1]),
            directories: null,
            eligibleLeaderReplicas: null,
            lastKnownElr: null,
          },
        });
      } else if (kind === 7) {
        const type = rng.pick([ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.CLIENT_METRICS, ConfigResourceType.GROUP]);
        const resourceName = type === ConfigResourceType.TOPIC ? (rng.chance(0.8) && topics.length ? rng.pick(topics).name : 'nope') : type === ConfigResourceType.BROKER ? rng.pick(['', '1', '2']) : rng.pick(['g1', 'g2', 'sub']);
        batch.push({ type: 'ConfigRecord', data: { resourceType: type, resourceName, name: rng.pick(['k1', 'k2', 'k3']), value: rng.chance(0.3) ? null : `v${rng.int(50)}` } });
      } else if (kind === 8) {
        const entity = rng.pick([
          [{ entityType: 'user', entityName: rng.pick(['alice', 'bob', null]) }],
          [{ entityType: 'client-id', entityName: rng.pick(['app', null]) }],
          [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: 'app' }],
          [{ entityType: 'ip', entityName: rng.pick(['10.0.0.1', null]) }],
        ]);
        batch.push({ type: 'ClientQuotaRecord', data: { entity, key: rng.pick(['producer_byte_rate', 'consumer_byte_rate', 'request_percentage']), value: rng.int(1e5) + 0.5, remove: rng.chance(0.3) } });
      } else if (kind === 9) {
        const name = rng.pick(['alice', 'bob', 'carol']);
        const mechanism = rng.pick([1, 2]);
        if (rng.chance(0.3)) batch.push({ type: 'RemoveUserScramCredentialRecord', data: { name, mechanism } });
        else batch.push({ type: 'UserScramCredentialRecord', data: { name, mechanism, salt: Buffer.from([rng.int(256), 1]), storedKey: Buffer.from([rng.int(256), 2]), serverKey: Buffer.from([rng.int(256), 3]), iterations: 4096 + rng.int(4) } });
      } else if (kind === 10) {
        const acls = [...image.acls().keys()];
        if (acls.length > 0 && rng.chance(0.3)) batch.push({ type: 'RemoveAccessControlEntryRecord', data: { id: rng.pick(acls) } });
        else batch.push({ type: 'AccessControlEntryRecord', data: { id: acls.length > 0 && rng.chance(0.1) ? rng.pick(acls) : uuidFor(rng), resourceType: 2, resourceName: rng.pick(['t1', 't2', '*']), patternType: 3, principal: `User:${rng.pick(['alice', 'bob'])}`, host: '*', operation: rng.pick([2, 3, 4]), permissionType: rng.pick([2, 3]) } });
      } else if (kind === 11) {
        nextPid += BigInt(1000 * (1 + rng.int(3)));
        batch.push({ type: 'ProducerIdsRecord', data: { brokerId: rng.pick(brokerIds), brokerEpoch: epoch, nextProducerId: nextPid } });
      } else if (kind === 12) {
        batch.push({ type: 'FeatureLevelRecord', data: { name: rng.pick(['group.version', 'transaction.version', 'kraft.version']), featureLevel: rng.int(3) } });
      } else if (kind === 13) {
        batch.push({ type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: 21 + rng.int(3) } });
      } else {
        // A record about something that does not exist: a no-op for the image.
        batch.push({ type: 'PartitionChangeRecord', data: { partitionId: 0, topicId: uuidFor(rng), isr: [1], leader: 1, replicas: null, removingReplicas: null, addingReplicas: null, leaderRecoveryState: -1, directories: null, eligibleLeaderReplicas: null, lastKnownElr: null } });
      }
    }
    if (batch.length === 0) continue;
    image.apply(batch);
    batches.push(batch);
  }
  return batches;
}

/** Replays the batches into a new image. */
export function imageOf(batches: readonly (readonly MetadataRecord[])[]): MetadataCache {
  const image = new MetadataCache('c');
  let offset = -1n;
  for (const b of batches) {
    offset += BigInt(b.length);
    image.apply(b, offset);
  }
  return image;
}

function plain(v: unknown, sorted: boolean): unknown {
  if (v instanceof Map) {
    const entries = [...v].map(([k, x]) => [plain(k, sorted), plain(x, sorted)] as [unknown, unknown]);
    if (sorted) entries.sort((a, b) => (JSON.stringify(a[0]) < JSON.stringify(b[0]) ? -1 : 1));
    return entries;
  }
  if (Buffer.isBuffer(v)) return `hex:${v.toString('hex')}`;
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return v.map((x) => plain(x, sorted));
  if (v && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = plain(x, sorted);
    return o;
  }
  return v;
}

/** Drops config resources with no key left and resource types with no resource (not state). */
function liveConfigs(configs: Map<number, Map<string, Map<string, string>>>): Map<number, Map<string, Map<string, string>>> {
  const out = new Map<number, Map<string, Map<string, string>>>();
  for (const [type, byName] of configs) {
    const kept = new Map([...byName].filter(([, kv]) => kv.size > 0));
    if (kept.size > 0) out.set(type, kept);
  }
  return out;
}

/**
 * Every piece of state of `image`, as plain data. `sorted`: map entries sorted by key (iteration
 * order ignored), for images reached by different paths. Feature order is never compared (the
 * snapshot writes metadata.version first, as Kafka does).
 */
export function imageState(image: MetadataCache, sorted = false): unknown {
  const p = image as unknown as {
    topicsByName: Map<string, unknown>;
    topicsById: Map<string, unknown>;
    brokers: Map<number, unknown>;
    configs: Map<number, Map<string, Map<string, string>>>;
    quotas: Map<string, unknown>;
    scram: Map<number, Map<string, unknown>>;
    aclsImage: { byId: Map<string, unknown> };
    features: Map<string, number>;
    nextProducerId: bigint;
  };
  return plain(
    {
      topicsByName: p.topicsByName,
      topicsById: p.topicsById,
      brokers: p.brokers,
      configs: liveConfigs(p.configs),
      quotas: p.quotas,
      scram: p.scram,
      acls: p.aclsImage.byId,
      features: [...p.features].sort(),
      nextProducerId: p.nextProducerId,
    },
    sorted,
  );
}
