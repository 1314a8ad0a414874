/**
 * The broker's view of the cluster metadata, built only by applying metadata records in log order
 * (as a KRaft broker builds its MetadataImage); the controller keeps its own image, with the next
 * producer id to hand out, in one too. Handlers read topics, partitions, brokers and configs from
 * here; the replica manager and the coordinators learn what changed from the delta each batch of
 * records produces. Nothing else mutates this state, so a broker's view is always some prefix of
 * the controller's log.
 *
 * Client quotas (KIP-546, ClientQuotaRecord) are kept per entity: entity -> { quota key -> value }.
 * An entity is a `ClientQuotaEntity`, `{ user?, clientId?, ip? }`: a key that is absent is not part
 * of the entity, a key whose value is null is that type's default entity (Kafka's null entity name,
 * shown as `<default>` by its tools), so `{ user: null, clientId: 'app' }` is "the default user with
 * client-id app" and `{ user: 'alice' }` is "user alice, any client-id". Maps of entities are keyed
 * only by `clientQuotaEntityKey`. Invariants: an entity in the image has at least one key (removing
 * its last key removes it, as Kafka's ClientQuotasDelta does); values are the doubles the controller
 * validated (ClientQuotaControlManager). Readers: `clientQuotas()` (everything, DescribeClientQuotas),
 * `clientQuota(entity)` (one entity), and for enforcement the changes, both in each batch's
 * `MetadataDelta.changedClientQuotas` and through `subscribeClientQuotas`, which is called after
 * every applied batch that changed a quota (the startup replay included), so nothing needs to poll.
 *
 * SCRAM credentials (UserScramCredentialRecord / RemoveUserScramCredentialRecord, Kafka's
 * ScramImage) are kept per mechanism type and user: { salt, storedKey, serverKey, iterations }, never
 * a password. A record replaces the user's credential for that mechanism; a removal drops it (a
 * removal of a credential that is not there changes nothing). The SCRAM server mechanism reads
 * `scramCredential(user, mechanism)` at each authentication; DescribeUserScramCredentials reads
 * `scramCredentialInfos()` (mechanisms and iterations only); `subscribeScramCredentials` is told
 * after every batch that changed one.
 *
 * Finalized features (FeatureLevelRecord, Kafka's FeaturesImage): feature name -> level; a record
 * with level 0 removes the feature, so no level 0 is ever listed. `finalizedFeatures()` and
 * `featureLevel(name)` read them; ApiVersions reports them with the image's `lastAppliedOffset` as
 * finalized_features_epoch, as a KRaft broker does. Brokers keep the feature ranges they registered
 * with (`BrokerState.supportedFeatures`), which UpdateFeatures checks.
 *
 * ACLs (AccessControlEntryRecord / RemoveAccessControlEntryRecord, Kafka's AclsImage) are kept by
 * id in an AclsImage (authorizer/acls-image.ts): `acls()` / `acl(id)` read them, each batch's
 * changes are in `MetadataDelta.changedAcls`, and `subscribeAcls` (the StandardAuthorizer, the
 * controller's AclControlManager) is called after every batch that changed one, in log order.
 *
 * Client-metrics subscriptions (KIP-714) are ConfigRecords of resource type CLIENT_METRICS, kept
 * with the other configs: `clientMetricsConfig(name)`, `clientMetricsConfigs()` (those with at
 * least one key), and `clientMetricsConfigVersion`, which every such record bumps so that the
 * broker's ClientMetricsManager knows when to re-read them.
 *
 * Snapshots: `imageRecords()` is Kafka's MetadataImage.write, the records that rebuild exactly this
 * image on an empty one (metadata/snapshot/ writes them as a KRaft snapshot and computes, with
 * snapshotDelta, what an image that has state must apply to become a snapshot's); for that the
 * image also applies UnregisterBrokerRecord (the registration goes, whatever its epoch).
 *
 * Dynamic group configs are ConfigRecords of resource type GROUP (name = the group id), kept the
 * same way: `groupConfig(groupId)` (empty when the group has none), which the group coordinator
 * reads at each consumer group heartbeat and DescribeConfigs reports. DeleteGroups leaves them, as
 * Kafka does.
 */
import type {
  ClientQuotaRecordData,
  ConfigRecordData,
  MetadataRecord,
  PartitionChangeRecordData,
  PartitionRecordData,
  RegisterBrokerRecordData,
  UserScramCredentialRecordData,
} from './metadata-records';
import { ConfigResourceType, ControlledShutdownChange, FencingChange } from './metadata-records';
import type { AclBinding } from './authorizer/authorizer';
import { AclsImage, type AclChange, type AclListener } from './authorizer/acls-image';

export interface PartitionState {
  topicId: string;
  topic: string;
  partition: number;
  replicas: number[];
  isr: number[];
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  leaderRecoveryState: number;
  addingReplicas: number[];
  removingReplicas: number[];
}

export interface TopicState {
  name: string;
  topicId: string;
  partitions: Map<number, PartitionState>;
}

export interface BrokerState {
  id: number;
  epoch: bigint;
  incarnationId: string;
  rack: string | null;
  fenced: boolean;
  inControlledShutdown: boolean;
  endpoints: { name: string; host: string; port: number; securityProtocol: number }[];
  /** The feature ranges the broker registered with (feature -> supported min and max). */
  supportedFeatures: Map<string, { min: number; max: number }>;
}

/** Kafka's client quota entity types (ClientQuotaEntity.USER / CLIENT_ID / IP). */
export const ClientQuotaEntityType = { USER: 'user', CLIENT_ID: 'client-id', IP: 'ip' } as const;

/**
 * A client quota entity: which user, client-id and/or ip it names. Absent key: not part of the
 * entity; null: the default entity of that type. The controller admits only user, client-id,
 * user + client-id, and ip alone.
 */
export interface ClientQuotaEntity {
  user?: string | null;
  clientId?: string | null;
  ip?: string | null;
}

/** The wire / record form of an entity: one (type, name) pair per part. */
export interface ClientQuotaEntityData {
  entityType: string;
  entityName: string | null;
}

const partKey = (v: string | null | undefined): string | number => (v === undefined ? 0 : v === null ? 1 : v);

/** The one key for maps of entities: equal entities (same parts, same names or defaults) have equal keys. */
export function clientQuotaEntityKey(e: ClientQuotaEntity): string {
  return JSON.stringify([partKey(e.user), partKey(e.clientId), partKey(e.ip)]);
}

/**
 * The entity as records and responses carry it, in the order Kafka's HashMap iteration gives these
 * types (client-id, user, ip).
 */
export function clientQuotaEntityToData(e: ClientQuotaEntity): ClientQuotaEntityData[] {
  const out: ClientQuotaEntityData[] = [];
  if (e.clientId !== undefined) out.push({ entityType: ClientQuotaEntityType.CLIENT_ID, entityName: e.clientId });
  if (e.user !== undefined) out.push({ entityType: ClientQuotaEntityType.USER, entityName: e.user });
  if (e.ip !== undefined) out.push({ entityType: ClientQuotaEntityType.IP, entityName: e.ip });
  return out;
}

/**
 * The entity a record's (type, name) list names, or null when it has no parts or a type other than
 * user / client-id / ip. A repeated type keeps its last name (Kafka builds a map from the list).
 */
export function clientQuotaEntityFromData(data: readonly ClientQuotaEntityData[]): ClientQuotaEntity | null {
  if (data.length === 0) return null;
  const e: ClientQuotaEntity = {};
  for (const d of data) {
    if (d.entityType === ClientQuotaEntityType.USER) e.user = d.entityName;
    else if (d.entityType === ClientQuotaEntityType.CLIENT_ID) e.clientId = d.entityName;
    else if (d.entityType === ClientQuotaEntityType.IP) e.ip = d.entityName;
    else return null;
  }
  return e;
}

/** One entity's quotas in the image. */
export interface ClientQuotaEntry {
  entity: ClientQuotaEntity;
  /** quota key (producer_byte_rate, ...) -> value; never empty. */
  quotas: ReadonlyMap<string, number>;
}

/** What one batch did to one entity's quotas. */
export interface ClientQuotaChange {
  entity: ClientQuotaEntity;
  /** Each key the batch touched: its new value, or null when it was removed. */
  changes: ReadonlyMap<string, number | null>;
  /** All of the entity's quotas after the batch (empty: the entity has none left). */
  quotas: ReadonlyMap<string, number>;
}

/** Called with the quota changes of one applied batch and that batch's last offset (-1 if unknown). */
export type ClientQuotaListener = (changes: readonly ClientQuotaChange[], lastAppliedOffset: bigint) => void;

/** A user's SCRAM credential for one mechanism (what the server side of SCRAM verifies a client with). */
export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/** One credential a batch set (credential) or removed (null). */
export interface ScramCredentialChange {
  user: string;
  mechanism: number;
  credential: ScramCredential | null;
}

/** What one batch of applied records changed, for the replica manager and coordinators. */
export interface MetadataDelta {
  changedPartitions: PartitionState[];
  /** Topics removed in this delta, with the partitions they had. */
  removedTopics: { name: string; topicId: string; partitions: number[] }[];
  changedTopicConfigs: Set<string>;
  changedBrokers: Set<number>;
  /**
   * Client quota changes, one per entity touched (always set by `apply`; optional only so that
   * deltas built by hand, such as the startup partition delta, need not name it).
   */
  changedClientQuotas?: ClientQuotaChange[];
  /** ACLs added (acl) or removed (null) by this batch, in order (set by `apply`). */
  changedAcls?: AclChange[];
  /** Dynamic broker config resources (a broker id, or "" for the cluster default) this batch changed (set by `apply`). */
  changedBrokerConfigs?: Set<string>;
}

export class MetadataCache {
  private topicsByName = new Map<string, TopicState>();
  private topicsById = new Map<string, TopicState>();
  private brokers = new Map<number, BrokerState>();
  /** resourceType -> resourceName -> config name -> value */
  private configs = new Map<number, Map<string, Map<string, string>>>();
  private clientMetricsVersion = 0;
  /** clientQuotaEntityKey -> the entity and its quotas (never empty). */
  private quotas = new Map<string, { entity: ClientQuotaEntity; quotas: Map<string, number> }>();
  private readonly quotaListeners: { listener: ClientQuotaListener; onError: (err: unknown) => void }[] = [];
  /** SCRAM mechanism type -> user -> credential (a mechanism with no users is dropped). */
  private scram = new Map<number, Map<string, ScramCredential>>();
  private readonly scramListeners: ((changes: readonly ScramCredentialChange[]) => void)[] = [];
  /** ACL id -> ACL. */
  private readonly aclsImage = new AclsImage();
  /** Finalized feature levels (FeatureLevelRecord), never a level of 0. */
  private readonly features = new Map<string, number>();
  /** Offset of the last metadata record applied. */
  lastAppliedOffset = -1n;
  nextProducerId = 0n;

  constructor(readonly clusterId: string) {}

  apply(records: readonly MetadataRecord[], lastOffset?: bigint): MetadataDelta {
    const delta: MetadataDelta = {
      changedPartitions: [],
      removedTopics: [],
      changedTopicConfigs: new Set(),
      changedBrokers: new Set(),
      changedClientQuotas: [],
      changedBrokerConfigs: new Set(),
    };
    const changed = new Map<string, PartitionState>();
    const quotaChanges = new Map<string, { entity: ClientQuotaEntity; changes: Map<string, number | null> }>();
    const scramChanges: ScramCredentialChange[] = [];
    const aclsDelta = this.aclsImage.delta();
    for (const rec of records) {
      switch (rec.type) {
        case 'TopicRecord': {
          const t: TopicState = { name: rec.data.name, topicId: rec.data.topicId, partitions: new Map() };
          this.topicsByName.set(t.name, t);
          this.topicsById.set(t.topicId, t);
          break;
        }
        case 'PartitionRecord': {
          const p = this.applyPartitionRecord(rec.data);
          if (p) changed.set(`${p.topicId}:${p.partition}`, p);
          break;
        }
        case 'PartitionChangeRecord': {
          const p = this.applyPartitionChange(rec.data);
          if (p) changed.set(`${p.topicId}:${p.partition}`, p);
          break;
        }
        case 'RemoveTopicRecord': {
          const t = this.topicsById.get(rec.data.topicId);
          if (!t) break;
          this.topicsById.delete(t.topicId);
          this.topicsByName.delete(t.name);
          this.configs.get(ConfigResourceType.TOPIC)?.delete(t.name);
          for (const key of [...changed.keys()]) if (key.startsWith(`${t.topicId}:`)) changed.delete(key);
          delta.removedTopics.push({ name: t.name, topicId: t.topicId, partitions: [...t.partitions.keys()] });
          break;
        }
        case 'ConfigRecord':
          this.applyConfig(rec.data);
          if (rec.data.resourceType === ConfigResourceType.TOPIC) delta.changedTopicConfigs.add(rec.data.resourceName);
          else if (rec.data.resourceType === ConfigResourceType.BROKER) delta.changedBrokerConfigs!.add(rec.data.resourceName);
          break;
        case 'RegisterBrokerRecord':
          this.applyBroker(rec.data);
          delta.changedBrokers.add(rec.data.brokerId);
          break;
        case 'UnregisterBrokerRecord':
          // Kafka's ClusterDelta: the registration goes whatever its epoch (the controller writes
          // none today; a broker replacing its image by a snapshot's may need one).
          if (this.brokers.delete(rec.data.brokerId)) delta.changedBrokers.add(rec.data.brokerId);
          break;
        case 'BrokerRegistrationChangeRecord': {
          const b = this.brokers.get(rec.data.brokerId);
          if (!b || b.epoch !== rec.data.brokerEpoch) break;
          const next = { ...b };
          if (rec.data.fenced === FencingChange.FENCE) next.fenced = true;
          else if (rec.data.fenced === FencingChange.UNFENCE) next.fenced = false;
          if (rec.data.inControlledShutdown === ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN) next.inControlledShutdown = true;
          this.brokers.set(b.id, next);
          delta.changedBrokers.add(b.id);
          break;
        }
        case 'FenceBrokerRecord':
        case 'UnfenceBrokerRecord': {
          const b = this.brokers.get(rec.data.id);
          if (!b || b.epoch !== rec.data.epoch) break;
          this.brokers.set(b.id, { ...b, fenced: rec.type === 'FenceBrokerRecord' });
          delta.changedBrokers.add(b.id);
          break;
        }
        case 'ProducerIdsRecord':
          this.nextProducerId = rec.data.nextProducerId;
          break;
        case 'FeatureLevelRecord':
          // Kafka's FeaturesDelta: level 0 takes the feature out (metadata.version is never 0).
          if (rec.data.featureLevel === 0) this.features.delete(rec.data.name);
          else this.features.set(rec.data.name, rec.data.featureLevel);
          break;
        case 'ClientQuotaRecord':
          this.applyClientQuota(rec.data, quotaChanges);
          break;
        case 'UserScramCredentialRecord':
          scramChanges.push(this.applyScramCredential(rec.data));
          break;
        case 'AccessControlEntryRecord':
          aclsDelta.replay(rec.data);
          break;
        case 'RemoveAccessControlEntryRecord':
          aclsDelta.replayRemove(rec.data.id);
          break;
        case 'RemoveUserScramCredentialRecord': {
          const users = this.scram.get(rec.data.mechanism);
          if (!users?.delete(rec.data.name)) break;
          if (users.size === 0) this.scram.delete(rec.data.mechanism);
          scramChanges.push({ user: rec.data.name, mechanism: rec.data.mechanism, credential: null });
          break;
        }
      }
    }
    delta.changedPartitions = [...changed.values()];
    if (lastOffset !== undefined) this.lastAppliedOffset = lastOffset;
    if (quotaChanges.size > 0) {
      const out: ClientQuotaChange[] = [...quotaChanges].map(([key, c]) => ({
        entity: { ...c.entity },
        changes: c.changes,
        quotas: new Map(this.quotas.get(key)?.quotas ?? []),
      }));
      delta.changedClientQuotas = out;
      this.notifyQuotaListeners(this.quotaListeners, out);
    }
    delta.changedAcls = aclsDelta.finish();
    if (scramChanges.length > 0) {
      for (const l of [...this.scramListeners]) {
        try {
          l(scramChanges);
        } catch (err) {
          process.emitWarning(`SCRAM credential listener failed: ${(err as Error)?.stack ?? String(err)}`);
        }
      }
    }
    return delta;
  }

  /**
   * Kafka's MetadataImage.write: the records that rebuild exactly this image when applied to an
   * empty one (a metadata snapshot's content, metadata/snapshot/). Order: the finalized features
   * (metadata.version first), the brokers, each topic followed by its partitions, the configs, the
   * client quotas, the producer id state, the ACLs, the SCRAM credentials; within each, this image's
   * own iteration order, so the rebuilt image iterates alike. Not written (not part of the state):
   * `clientMetricsConfigVersion` (a change counter the replay bumps again), empty config resources,
   * and `lastAppliedOffset` (the snapshot id carries it).
   */
  imageRecords(): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    const mv = this.features.get('metadata.version');
    if (mv !== undefined) out.push({ type: 'FeatureLevelRecord', data: { name: 'metadata.version', featureLevel: mv } });
    for (const [name, featureLevel] of this.features) if (name !== 'metadata.version') out.push({ type: 'FeatureLevelRecord', data: { name, featureLevel } });
    for (const b of this.brokers.values()) {
      out.push({
        type: 'RegisterBrokerRecord',
        data: {
          brokerId: b.id,
          isMigratingZkBroker: false,
          incarnationId: b.incarnationId,
          brokerEpoch: b.epoch,
          endPoints: b.endpoints.map((e) => ({ ...e })),
          features: [...b.supportedFeatures].map(([name, r]) => ({ name, minSupportedVersion: r.min, maxSupportedVersion: r.max })),
          rack: b.rack,
          fenced: b.fenced,
          inControlledShutdown: b.inControlledShutdown,
          logDirs: [],
        },
      });
    }
    for (const t of this.topicsByName.values()) {
      out.push({ type: 'TopicRecord', data: { name: t.name, topicId: t.topicId } });
      for (const p of t.partitions.values()) {
        out.push({
          type: 'PartitionRecord',
          data: {
            partitionId: p.partition,
            topicId: p.topicId,
            replicas: [...p.replicas],
            isr: [...p.isr],
            removingReplicas: [...p.removingReplicas],
            addingReplicas: [...p.addingReplicas],
            leader: p.leader,
            leaderRecoveryState: p.leaderRecoveryState,
            leaderEpoch: p.leaderEpoch,
            partitionEpoch: p.partitionEpoch,
            directories: [],
            eligibleLeaderReplicas: null,
            lastKnownElr: null,
          },
        });
      }
    }
    for (const [resourceType, byName] of this.configs) {
      for (const [resourceName, kv] of byName) {
        for (const [name, value] of kv) out.push({ type: 'ConfigRecord', data: { resourceType, resourceName, name, value } });
      }
    }
    for (const q of this.quotas.values()) {
      const entity = clientQuotaEntityToData(q.entity);
      for (const [key, value] of q.quotas) out.push({ type: 'ClientQuotaRecord', data: { entity: entity.map((e) => ({ ...e })), key, value, remove: false } });
    }
    if (this.nextProducerId !== 0n) out.push({ type: 'ProducerIdsRecord', data: { brokerId: -1, brokerEpoch: -1n, nextProducerId: this.nextProducerId } });
    for (const [id, acl] of this.aclsImage.acls()) out.push({ type: 'AccessControlEntryRecord', data: { id, ...acl } });
    for (const [mechanism, users] of this.scram) {
      for (const [name, c] of users) {
        out.push({
          type: 'UserScramCredentialRecord',
          data: { name, mechanism, salt: Buffer.from(c.salt), storedKey: Buffer.from(c.storedKey), serverKey: Buffer.from(c.serverKey), iterations: c.iterations },
        });
      }
    }
    return out;
  }

  /** Copies the byte fields: a decoded record's buffers are views of a whole fetched chunk. */
  private applyScramCredential(d: UserScramCredentialRecordData): ScramCredentialChange {
    const credential: ScramCredential = {
      salt: Buffer.from(d.salt),
      storedKey: Buffer.from(d.storedKey),
      serverKey: Buffer.from(d.serverKey),
      iterations: d.iterations,
    };
    let users = this.scram.get(d.mechanism);
    if (!users) this.scram.set(d.mechanism, (users = new Map()));
    users.set(d.name, credential);
    return { user: d.name, mechanism: d.mechanism, credential };
  }

  /** Kafka's ClientQuotaDelta: set or remove one key; an entity whose last key goes is dropped. */
  private applyClientQuota(
    d: ClientQuotaRecordData,
    changes: Map<string, { entity: ClientQuotaEntity; changes: Map<string, number | null> }>,
  ): void {
    // The controller writes only user / client-id / ip entities; anything else is not ours to enforce.
    const entity = clientQuotaEntityFromData(d.entity);
    if (!entity) return;
    const key = clientQuotaEntityKey(entity);
    let current = this.quotas.get(key);
    if (d.remove) {
      current?.quotas.delete(d.key);
      if (current && current.quotas.size === 0) this.quotas.delete(key);
    } else {
      if (!current) this.quotas.set(key, (current = { entity, quotas: new Map() }));
      current.quotas.set(d.key, d.value);
    }
    let c = changes.get(key);
    if (!c) changes.set(key, (c = { entity, changes: new Map() }));
    c.changes.set(d.key, d.remove ? null : d.value);
  }

  private notifyQuotaListeners(listeners: readonly { listener: ClientQuotaListener; onError: (err: unknown) => void }[], changes: readonly ClientQuotaChange[]): void {
    // A copy: a listener may unsubscribe (itself or another) while being called.
    for (const l of [...listeners]) {
      try {
        l.listener(changes, this.lastAppliedOffset);
      } catch (err) {
        l.onError(err);
      }
    }
  }

  private applyPartitionRecord(d: PartitionRecordData): PartitionState | undefined {
    const t = this.topicsById.get(d.topicId);
    if (!t) return undefined;
    const p: PartitionState = {
      topicId: d.topicId,
      topic: t.name,
      partition: d.partitionId,
      replicas: [...d.replicas],
      isr: [...d.isr],
      leader: d.leader,
      leaderEpoch: d.leaderEpoch,
      partitionEpoch: d.partitionEpoch,
      leaderRecoveryState: d.leaderRecoveryState,
      addingReplicas: [...d.addingReplicas],
      removingReplicas: [...d.removingReplicas],
    };
    t.partitions.set(p.partition, p);
    return p;
  }

  /** Kafka's PartitionChangeRecord semantics: leader changes bump the leader epoch; every change bumps the partition epoch. */
  private applyPartitionChange(d: PartitionChangeRecordData): PartitionState | undefined {
    const p = this.topicsById.get(d.topicId)?.partitions.get(d.partitionId);
    if (!p) return undefined;
    const next: PartitionState = { ...p };
    if (d.isr) next.isr = [...d.isr];
    if (d.replicas) next.replicas = [...d.replicas];
    if (d.addingReplicas) next.addingReplicas = [...d.addingReplicas];
    if (d.removingReplicas) next.removingReplicas = [...d.removingReplicas];
    if (d.leaderRecoveryState !== -1) next.leaderRecoveryState = d.leaderRecoveryState;
    if (d.leader !== -2) {
      next.leader = d.leader;
      next.leaderEpoch = p.leaderEpoch + 1;
    }
    next.partitionEpoch = p.partitionEpoch + 1;
    this.topicsById.get(d.topicId)!.partitions.set(d.partitionId, next);
    return next;
  }

  private applyConfig(d: ConfigRecordData): void {
    if (d.resourceType === ConfigResourceType.CLIENT_METRICS) this.clientMetricsVersion++;
    let byName = this.configs.get(d.resourceType);
    if (!byName) this.configs.set(d.resourceType, (byName = new Map()));
    let kv = byName.get(d.resourceName);
    if (!kv) byName.set(d.resourceName, (kv = new Map()));
    if (d.value === null) kv.delete(d.name);
    else kv.set(d.name, d.value);
  }

  private applyBroker(d: RegisterBrokerRecordData): void {
    this.brokers.set(d.brokerId, {
      id: d.brokerId,
      epoch: d.brokerEpoch,
      incarnationId: d.incarnationId,
      rack: d.rack,
      fenced: d.fenced,
      inControlledShutdown: d.inControlledShutdown,
      endpoints: d.endPoints.map((e) => ({ ...e })),
      supportedFeatures: new Map(d.features.map((f) => [f.name, { min: f.minSupportedVersion, max: f.maxSupportedVersion }])),
    });
  }

  /** The finalized feature levels (features at level 0 are not listed). */
  finalizedFeatures(): Map<string, number> {
    return new Map(this.features);
  }

  /** A feature's finalized level, 0 when it is not finalized. */
  featureLevel(name: string): number {
    return this.features.get(name) ?? 0;
  }

  topic(name: string): TopicState | undefined {
    return this.topicsByName.get(name);
  }

  topicById(id: string): TopicState | undefined {
    return this.topicsById.get(id);
  }

  topics(): IterableIterator<TopicState> {
    return this.topicsByName.values();
  }

  partition(topic: string, partition: number): PartitionState | undefined {
    return this.topicsByName.get(topic)?.partitions.get(partition);
  }

  broker(id: number): BrokerState | undefined {
    return this.brokers.get(id);
  }

  /** Registered, not fenced and not in controlled shutdown: may lead partitions and join ISRs. */
  isActive(id: number): boolean {
    const b = this.brokers.get(id);
    return b !== undefined && !b.fenced && !b.inControlledShutdown;
  }

  aliveBrokers(): BrokerState[] {
    return [...this.brokers.values()].filter((b) => !b.fenced).sort((a, b) => a.id - b.id);
  }

  allBrokers(): BrokerState[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id);
  }

  /** Topic-level overrides (only what was set explicitly). */
  topicConfig(topic: string): Map<string, string> {
    return new Map(this.configs.get(ConfigResourceType.TOPIC)?.get(topic) ?? []);
  }

  /** A client-metrics subscription's configs (CLIENT_METRICS resource; empty when there is none). */
  clientMetricsConfig(name: string): Map<string, string> {
    return new Map(this.configs.get(ConfigResourceType.CLIENT_METRICS)?.get(name) ?? []);
  }

  /** A group's dynamic configs (GROUP resource, name = the group id; empty when it has none). */
  groupConfig(groupId: string): Map<string, string> {
    return new Map(this.configs.get(ConfigResourceType.GROUP)?.get(groupId) ?? []);
  }

  /** Every client-metrics subscription with at least one config: name -> a copy of its configs. */
  clientMetricsConfigs(): Map<string, Map<string, string>> {
    const out = new Map<string, Map<string, string>>();
    for (const [name, kv] of this.configs.get(ConfigResourceType.CLIENT_METRICS) ?? []) if (kv.size > 0) out.set(name, new Map(kv));
    return out;
  }

  /**
   * Bumped by every applied CLIENT_METRICS ConfigRecord: a reader that caches subscriptions
   * rebuilds them when it changes (the broker's ClientMetricsManager), with no listener to keep.
   */
  get clientMetricsConfigVersion(): number {
    return this.clientMetricsVersion;
  }

  /** Cluster-wide ('' resource name) or per-broker dynamic broker configs. */
  brokerConfig(resourceName: string): Map<string, string> {
    return new Map(this.configs.get(ConfigResourceType.BROKER)?.get(resourceName) ?? []);
  }

  /** Every entity that has client quotas, with a copy of its quotas (DescribeClientQuotas). */
  clientQuotas(): ClientQuotaEntry[] {
    return [...this.quotas.values()].map((q) => ({ entity: { ...q.entity }, quotas: new Map(q.quotas) }));
  }

  /** One entity's quotas (a copy; empty if it has none). Only this exact entity: no default fallback. */
  clientQuota(entity: ClientQuotaEntity): Map<string, number> {
    return new Map(this.quotas.get(clientQuotaEntityKey(entity))?.quotas ?? []);
  }

  /** `user`'s SCRAM credential for a mechanism type (ScramMechanismType), if it has one. */
  scramCredential(user: string, mechanism: number): ScramCredential | undefined {
    return this.scram.get(mechanism)?.get(user);
  }

  /**
   * Every user with a SCRAM credential and, per user, its mechanisms (ascending type) and
   * iteration counts: what DescribeUserScramCredentials may tell (no salt, no keys).
   */
  scramCredentialInfos(): Map<string, { mechanism: number; iterations: number }[]> {
    const out = new Map<string, { mechanism: number; iterations: number }[]>();
    for (const mechanism of [...this.scram.keys()].sort((a, b) => a - b)) {
      for (const [user, c] of this.scram.get(mechanism)!) {
        let infos = out.get(user);
        if (!infos) out.set(user, (infos = []));
        infos.push({ mechanism, iterations: c.iterations });
      }
    }
    return out;
  }

  /** Every ACL by id, in the order they were created (copies). */
  acls(): Map<string, AclBinding> {
    return this.aclsImage.acls();
  }

  acl(id: string): AclBinding | undefined {
    return this.aclsImage.acl(id);
  }

  get aclCount(): number {
    return this.aclsImage.size;
  }

  /**
   * Calls `listener` (synchronously) after every applied batch that added or removed ACLs, with
   * that batch's changes in order; with `replay` (the default) first once with every current ACL as
   * a snapshot. Returns the unsubscribe function.
   */
  subscribeAcls(listener: AclListener, opts: { replay?: boolean; onError?: (err: unknown) => void } = {}): () => void {
    return this.aclsImage.subscribe(listener, opts);
  }

  /** Calls `listener` (synchronously) after every applied batch that set or removed SCRAM credentials. Returns the unsubscribe function. */
  subscribeScramCredentials(listener: (changes: readonly ScramCredentialChange[]) => void): () => void {
    this.scramListeners.push(listener);
    return () => {
      const i = this.scramListeners.indexOf(listener);
      if (i >= 0) this.scramListeners.splice(i, 1);
    };
  }

  /**
   * Calls `listener` after every applied batch that changed client quotas, synchronously, once the
   * whole batch is in the image. With `replay` (the default) it is first called once with every
   * current entity as a change (each key set to its value), so a subscriber sees the whole state
   * however late it subscribes. A listener that throws does not stop the others or the metadata:
   * its error goes to `onError` (default: a process warning). Returns the unsubscribe function.
   */
  subscribeClientQuotas(listener: ClientQuotaListener, opts: { replay?: boolean; onError?: (err: unknown) => void } = {}): () => void {
    const entry = {
      listener,
      onError: opts.onError ?? ((err: unknown) => process.emitWarning(`client quota listener failed: ${(err as Error)?.stack ?? String(err)}`)),
    };
    if (opts.replay ?? true) {
      const now: ClientQuotaChange[] = [...this.quotas.values()].map((q) => ({ entity: { ...q.entity }, changes: new Map(q.quotas), quotas: new Map(q.quotas) }));
      if (now.length > 0) this.notifyQuotaListeners([entry], now);
    }
    this.quotaListeners.push(entry);
    return () => {
      const i = this.quotaListeners.indexOf(entry);
      if (i >= 0) this.quotaListeners.splice(i, 1);
    };
  }
}
