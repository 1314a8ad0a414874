/**
 * The controller: the single writer of the cluster metadata log. Every change to topics,
 * partitions, configs and broker registrations is validated here, written to the metadata log as
 * one atomic batch of KRaft-shaped records, applied to the controller's own image, and then
 * published to the brokers, which apply the same records in the same order. Operations run one
 * at a time through a queue so that validation and the append see the same state.
 *
 * For now the controller runs in the broker's process (a combined KRaft node); replication adds
 * broker heartbeats/fencing, AlterPartition and leader election on top of the same log.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { randomUuid } from '../../protocol/primitives/uuid';
import type { Logger } from '../../broker/logger';
import { MetadataCache } from '../metadata-cache';
import {
  ConfigResourceType,
  type MetadataRecord,
  type RegisterBrokerEndpoint,
} from '../metadata-records';
import { SerialQueue } from '../serial-queue';
import type { MetadataLog } from './metadata-log';
import { isInternalTopic, unifyCollisionChars, validateTopicName } from './topic-name';

export interface ControllerOptions {
  nodeId: number;
  clusterId: string;
  log: MetadataLog;
  logger: Logger;
  defaultNumPartitions: () => number;
  defaultReplicationFactor: () => number;
  /** Throws KafkaError(INVALID_CONFIG) for an unknown topic config key or a bad value. */
  validateTopicConfig: (name: string, value: string | null) => void;
  /** A topic config's own default (not the broker's), which APPEND/SUBTRACT start from when unset. */
  topicConfigDefault?: (name: string) => string | null;
}

export interface CreateTopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

export interface CreateTopicResult {
  name: string;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
  numPartitions: number;
  replicationFactor: number;
}

export interface DeleteTopicResult {
  name: string | null;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface CreatePartitionsSpec {
  name: string;
  count: number;
  assignments: { brokerIds: number[] }[] | null;
}

export interface AlterConfigOp {
  name: string;
  /** 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (IncrementalAlterConfigs op types). */
  op: number;
  value: string | null;
}

export interface BrokerRegistration {
  brokerId: number;
  incarnationId: string;
  endpoints: RegisterBrokerEndpoint[];
  rack: string | null;
  logDirs: string[];
}

export type MetadataListener = (records: MetadataRecord[], lastOffset: bigint) => void;

export class Controller {
  readonly image: MetadataCache;
  private readonly queue = new SerialQueue();
  private readonly listeners: MetadataListener[] = [];
  private nextBrokerEpoch = 1n;
  private readonly log: Logger;

  constructor(private readonly opts: ControllerOptions) {
    this.image = new MetadataCache(opts.clusterId);
    this.log = opts.logger;
    for (const batch of opts.log.readAll()) {
      this.image.apply(batch.records, batch.lastOffset);
      for (const r of batch.records) {
        if (r.type === 'RegisterBrokerRecord' && r.data.brokerEpoch >= this.nextBrokerEpoch) {
          this.nextBrokerEpoch = r.data.brokerEpoch + 1n;
        }
      }
    }
  }

  /** Replays the whole log to the listener, then keeps it informed of every new batch. */
  subscribe(listener: MetadataListener): void {
    for (const batch of this.opts.log.readAll()) listener(batch.records, batch.lastOffset);
    this.listeners.push(listener);
  }

  private commit(records: MetadataRecord[]): bigint {
    if (records.length === 0) return this.image.lastAppliedOffset;
    const lastOffset = this.opts.log.append(records);
    this.image.apply(records, lastOffset);
    for (const l of this.listeners) {
      try {
        l(records, lastOffset);
      } catch (err) {
        this.log.error('metadata listener failed', { err, lastOffset });
      }
    }
    return lastOffset;
  }

  registerBroker(reg: BrokerRegistration): Promise<bigint> {
    return this.queue.run(() => {
      const brokerEpoch = this.nextBrokerEpoch++;
      this.commit([
        {
          type: 'RegisterBrokerRecord',
          data: {
            brokerId: reg.brokerId,
            isMigratingZkBroker: false,
            incarnationId: reg.incarnationId,
            brokerEpoch,
            endPoints: reg.endpoints,
            features: [],
            rack: reg.rack,
            fenced: false,
            inControlledShutdown: false,
            logDirs: reg.logDirs,
          },
        },
      ]);
      return brokerEpoch;
    });
  }

  createTopics(specs: CreateTopicSpec[], validateOnly: boolean): Promise<CreateTopicResult[]> {
    return this.queue.run(() => {
      const records: MetadataRecord[] = [];
      const results: CreateTopicResult[] = [];
      const seen = new Map<string, number>();
      for (const s of specs) seen.set(s.name, (seen.get(s.name) ?? 0) + 1);
      const claimed = new Set<string>();
      for (const spec of specs) {
        const result: CreateTopicResult = {
          name: spec.name,
          topicId: '',
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          numPartitions: -1,
          replicationFactor: -1,
        };
        results.push(result);
        try {
          if (seen.get(spec.name)! > 1) {
            throw new KafkaError(ErrorCode.INVALID_REQUEST, `Found multiple entries for topic ${spec.name}.`);
          }
          const created = this.planTopic(spec, claimed);
          result.topicId = created.topicId;
          result.numPartitions = created.numPartitions;
          result.replicationFactor = created.replicationFactor;
          if (!validateOnly) records.push(...created.records);
        } catch (err) {
          result.errorCode = toErrorCode(err);
          result.errorMessage = (err as Error).message;
          if (!(err instanceof KafkaError)) this.log.error('createTopics failed', { topic: spec.name, err });
        }
      }
      this.commit(records);
      return results;
    });
  }

  private planTopic(
    spec: CreateTopicSpec,
    claimed: Set<string>,
  ): { topicId: string; numPartitions: number; replicationFactor: number; records: MetadataRecord[] } {
    validateTopicName(spec.name);
    if (this.image.topic(spec.name)) {
      throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${spec.name}' already exists.`);
    }
    const unified = unifyCollisionChars(spec.name);
    for (const t of this.image.topics()) {
      if (unifyCollisionChars(t.name) === unified) {
        throw new KafkaError(
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          `Topic '${spec.name}' collides with existing topic: ${t.name}`,
        );
      }
    }
    if (claimed.has(unified)) {
      throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${spec.name}' collides with another topic in this request`);
    }
    for (const c of spec.configs) this.opts.validateTopicConfig(c.name, c.value);

    const alive = this.image.aliveBrokers().map((b) => b.id);
    let assignment: number[][];
    if (spec.assignments.length > 0) {
      if (spec.numPartitions !== -1 || spec.replicationFactor !== -1) {
        throw new KafkaError(
          ErrorCode.INVALID_REQUEST,
          'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.',
        );
      }
      assignment = this.checkManualAssignment(spec.assignments, alive);
    } else {
      const numPartitions = spec.numPartitions === -1 ? this.opts.defaultNumPartitions() : spec.numPartitions;
      const rf = spec.replicationFactor === -1 ? this.opts.defaultReplicationFactor() : spec.replicationFactor;
      if (numPartitions <= 0) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Number of partitions was set to an invalid non-positive value.`);
      }
      if (rf <= 0) {
        throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor must be larger than 0, or -1 to use the default value.`);
      }
      if (rf > alive.length) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} cannot be reached because only ${alive.length} broker(s) are registered.`,
        );
      }
      assignment = assignReplicas(alive, numPartitions, rf, 0);
    }
    claimed.add(unified);
    const topicId = randomUuid();
    const records: MetadataRecord[] = [{ type: 'TopicRecord', data: { name: spec.name, topicId } }];
    for (const c of spec.configs) {
      if (c.value === null) continue;
      records.push({
        type: 'ConfigRecord',
        data: { resourceType: ConfigResourceType.TOPIC, resourceName: spec.name, name: c.name, value: c.value },
      });
    }
    assignment.forEach((replicas, partitionId) => records.push(this.partitionRecord(topicId, partitionId, replicas)));
    return { topicId, numPartitions: assignment.length, replicationFactor: assignment[0]?.length ?? 0, records };
  }

  private checkManualAssignment(assignments: CreateTopicSpec['assignments'], alive: number[]): number[][] {
    const out: number[][] = [];
    const sorted = [...assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
    sorted.forEach((a, i) => {
      if (a.partitionIndex !== i) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partitions should be a consecutive 0-based integer sequence`);
      }
      if (a.brokerIds.length === 0) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes an empty replica list.`);
      }
      if (new Set(a.brokerIds).size !== a.brokerIds.length) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes duplicate replicas.`);
      }
      for (const id of a.brokerIds) {
        if (!alive.includes(id)) {
          throw new KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `The manual partition assignment includes broker ${id}, but no such broker is registered.`,
          );
        }
      }
      if (out.length > 0 && a.brokerIds.length !== out[0].length) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `All partitions must have the same number of replicas.`);
      }
      out.push([...a.brokerIds]);
    });
    return out;
  }

  private partitionRecord(topicId: string, partitionId: number, replicas: number[]): MetadataRecord {
    const alive = new Set(this.image.aliveBrokers().map((b) => b.id));
    const isr = replicas.filter((r) => alive.has(r));
    return {
      type: 'PartitionRecord',
      data: {
        partitionId,
        topicId,
        replicas,
        isr,
        removingReplicas: [],
        addingReplicas: [],
        leader: isr[0] ?? -1,
        leaderRecoveryState: 0,
        leaderEpoch: 0,
        partitionEpoch: 0,
        directories: [],
        eligibleLeaderReplicas: null,
        lastKnownElr: null,
      },
    };
  }

  deleteTopics(targets: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]> {
    return this.queue.run(() => {
      const records: MetadataRecord[] = [];
      const removed = new Set<string>();
      const results = targets.map((t) => {
        const topic = t.name !== null ? this.image.topic(t.name) : this.image.topicById(t.topicId ?? '');
        if (!topic || removed.has(topic.topicId)) {
          return {
            name: t.name,
            topicId: t.topicId ?? '',
            errorCode: t.name !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID,
            errorMessage: t.name !== null ? 'This server does not host this topic-partition.' : 'This server does not host this topic ID.',
          };
        }
        removed.add(topic.topicId);
        records.push({ type: 'RemoveTopicRecord', data: { topicId: topic.topicId } });
        return { name: topic.name, topicId: topic.topicId, errorCode: ErrorCode.NONE, errorMessage: null };
      });
      this.commit(records);
      return results;
    });
  }

  createPartitions(specs: CreatePartitionsSpec[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    return this.queue.run(() => {
      const records: MetadataRecord[] = [];
      const results = specs.map((s) => {
        try {
          const topic = this.image.topic(s.name);
          if (!topic) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${s.name}' does not exist.`);
          const current = topic.partitions.size;
          if (s.count < current) {
            throw new KafkaError(
              ErrorCode.INVALID_PARTITIONS,
              `The topic ${s.name} currently has ${current} partition(s); ${s.count} would not be an increase.`,
            );
          }
          if (s.count === current) {
            throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`);
          }
          const add = s.count - current;
          const rf = topic.partitions.get(0)?.replicas.length ?? 1;
          const alive = this.image.aliveBrokers().map((b) => b.id);
          let assignment: number[][];
          if (s.assignments) {
            if (s.assignments.length !== add) {
              throw new KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                `Attempted to add ${add} additional partition(s), but only ${s.assignments.length} assignment(s) were specified.`,
              );
            }
            assignment = this.checkManualAssignment(
              s.assignments.map((a, i) => ({ partitionIndex: i, brokerIds: a.brokerIds })),
              alive,
            );
          } else {
            if (rf > alive.length) {
              throw new KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                `Unable to replicate the partition ${rf} time(s): only ${alive.length} broker(s) are registered.`,
              );
            }
            assignment = assignReplicas(alive, add, rf, current);
          }
          if (!validateOnly) {
            assignment.forEach((replicas, i) => records.push(this.partitionRecord(topic.topicId, current + i, replicas)));
          }
          return { name: s.name, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          return { name: s.name, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      this.commit(records);
      return results;
    });
  }

  /**
   * Topic config changes. `incremental` ops follow IncrementalAlterConfigs (SET/DELETE/APPEND/SUBTRACT);
   * a non-incremental AlterConfigs replaces the whole override set.
   */
  alterTopicConfigs(
    changes: { topic: string; ops: AlterConfigOp[]; incremental: boolean }[],
    validateOnly: boolean,
  ): Promise<{ topic: string; errorCode: number; errorMessage: string | null }[]> {
    return this.queue.run(() => {
      const records: MetadataRecord[] = [];
      const results = changes.map((c) => {
        try {
          if (!this.image.topic(c.topic)) {
            throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${c.topic} does not exist.`);
          }
          const current = this.image.topicConfig(c.topic);
          const next = c.incremental ? new Map(current) : new Map<string, string>();
          for (const op of c.ops) {
            switch (op.op) {
              case 0:
                if (op.value === null) next.delete(op.name);
                else next.set(op.name, op.value);
                break;
              case 1:
                next.delete(op.name);
                break;
              case 2:
              case 3: {
                // Like Kafka, a list config without an override starts from its default value.
                const current = next.get(op.name) ?? this.opts.topicConfigDefault?.(op.name) ?? '';
                const items = current.split(',').filter((x) => x !== '');
                const given = (op.value ?? '').split(',').filter((x) => x !== '');
                const merged = op.op === 2 ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
                if (merged.length === 0) next.delete(op.name);
                else next.set(op.name, merged.join(','));
                break;
              }
              default:
                throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation ${op.op}`);
            }
          }
          for (const [k, v] of next) this.opts.validateTopicConfig(k, v);
          if (!validateOnly) {
            const keys = new Set([...current.keys(), ...next.keys()]);
            for (const k of keys) {
              const before = current.get(k) ?? null;
              const after = next.get(k) ?? null;
              if (before === after) continue;
              records.push({
                type: 'ConfigRecord',
                data: { resourceType: ConfigResourceType.TOPIC, resourceName: c.topic, name: k, value: after },
              });
            }
          }
          return { topic: c.topic, errorCode: ErrorCode.NONE, errorMessage: null };
        } catch (err) {
          return { topic: c.topic, errorCode: toErrorCode(err), errorMessage: (err as Error).message };
        }
      });
      this.commit(records);
      return results;
    });
  }

  /** Hands out a block of producer ids (KIP-730's AllocateProducerIds, used by InitProducerId). */
  allocateProducerIds(brokerId: number, brokerEpoch: bigint, blockSize: number): Promise<{ first: bigint; size: number }> {
    return this.queue.run(() => {
      const first = this.image.nextProducerId;
      this.commit([
        { type: 'ProducerIdsRecord', data: { brokerId, brokerEpoch, nextProducerId: first + BigInt(blockSize) } },
      ]);
      return { first, size: blockSize };
    });
  }

  isInternal(topic: string): boolean {
    return isInternalTopic(topic);
  }

  async close(): Promise<void> {
    await this.queue.drain();
    this.opts.log.close();
  }
}

/**
 * Round-robin replica placement without racks: partition p's first replica is broker
 * (start + p) mod n, and the followers are shifted by a per-round step so that leaders and
 * followers both spread evenly (the scheme Kafka's rack-unaware assignment uses).
 */
export function assignReplicas(brokers: number[], numPartitions: number, rf: number, firstPartition: number): number[][] {
  const n = brokers.length;
  const out: number[][] = [];
  for (let i = 0; i < numPartitions; i++) {
    const p = firstPartition + i;
    const nextReplicaShift = Math.floor(p / n);
    const firstIndex = p % n;
    const replicas = [brokers[firstIndex]];
    for (let j = 0; j < rf - 1; j++) {
      const shift = 1 + ((nextReplicaShift + j) % (n - 1));
      replicas.push(brokers[(firstIndex + shift) % n]);
    }
    out.push(replicas);
  }
  return out;
}
