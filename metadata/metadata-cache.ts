/**
 * The broker's view of the cluster metadata, built only by applying metadata records in log order
 * (as a KRaft broker builds its MetadataImage); the controller keeps its own image, with the next
 * producer id to hand out, in one too. Handlers read topics, partitions, brokers and configs from
 * here; the replica manager and the coordinators learn what changed from the delta each batch of
 * records produces. Nothing else mutates this state, so a broker's view is always some prefix of
 * the controller's log.
 */
import type {
  ConfigRecordData,
  MetadataRecord,
  PartitionChangeRecordData,
  PartitionRecordData,
  RegisterBrokerRecordData,
} from './metadata-records';
import { ConfigResourceType, ControlledShutdownChange, FencingChange } from './metadata-records';

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
}

/** What one batch of applied records changed, for the replica manager and coordinators. */
export interface MetadataDelta {
  changedPartitions: PartitionState[];
  /** Topics removed in this delta, with the partitions they had. */
  removedTopics: { name: string; topicId: string; partitions: number[] }[];
  changedTopicConfigs: Set<string>;
  changedBrokers: Set<number>;
}

export class MetadataCache {
  private topicsByName = new Map<string, TopicState>();
  private topicsById = new Map<string, TopicState>();
  private brokers = new Map<number, BrokerState>();
  /** resourceType -> resourceName -> config name -> value */
  private configs = new Map<number, Map<string, Map<string, string>>>();
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
    };
    const changed = new Map<string, PartitionState>();
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
          break;
        case 'RegisterBrokerRecord':
          this.applyBroker(rec.data);
          delta.changedBrokers.add(rec.data.brokerId);
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
      }
    }
    delta.changedPartitions = [...changed.values()];
    if (lastOffset !== undefined) this.lastAppliedOffset = lastOffset;
    return delta;
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
    });
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

  /** Cluster-wide ('' resource name) or per-broker dynamic broker configs. */
  brokerConfig(resourceName: string): Map<string, string> {
    return new Map(this.configs.get(ConfigResourceType.BROKER)?.get(resourceName) ?? []);
  }
}
