/**
 * RemoteController: the ControllerApi of a broker whose controller runs elsewhere. Each call is
 * the matching Kafka request to the controller listener (CreateTopics, DeleteTopics,
 * CreatePartitions, IncrementalAlterConfigs / AlterConfigs (topic, broker, CLIENT_METRICS and GROUP resources), ElectLeaders, AllocateProducerIds,
 * AlterClientQuotas, AlterUserScramCredentials, CreateAcls, DeleteAcls, UpdateFeatures, AlterPartitionReassignments, ListPartitionReassignments), as
 * Kafka's brokers forward admin requests. After a successful write it waits until this broker's
 * metadata includes it, so a client that created a topic through this broker sees it at once.
 * ListPartitionReassignments is a read answered from the controller's image, not this broker's.
 *
 * Under a KRaft controller quorum the channel is a ControllerChannel (controller-channel.ts): it
 * sends to the active controller and resends on NOT_CONTROLLER or a lost connection within the
 * request's timeout, so this class never sees a standby's answer.
 *
 * A controller that cannot be reached (after the channel's own connect/request timeouts) fails
 * every item of an admin call (topics, partitions, configs, quota entities, SCRAM users, ACL bindings and filters; UpdateFeatures as a whole) with REQUEST_TIMED_OUT, which clients
 * retry; AllocateProducerIds and ElectLeaders throw instead (their callers map the error).
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import { ZERO_UUID } from '../protocol/primitives/uuid';
import type { Logger } from '../common/logger';
import type { ControllerRequestChannel } from './controller-channel';
import type {
  AlterConfigOp,
  BrokerConfigChange,
  ControllerApi,
  CreatePartitionsSpec,
  CreateTopicResult,
  CreateTopicSpec,
  DeleteTopicResult,
  ElectLeadersResult,
} from './controller/controller';
import { isInternalTopic } from './topic-name';
import type { ClientQuotaAlteration, ClientQuotaAlterationResult } from './controller/client-quota-control-manager';
import type { ScramAlterationResult, ScramCredentialDeletion, ScramCredentialUpsertion } from './controller/scram-control-manager';
import type { AclCreateResult, AclDeleteResult } from './controller/acl-control-manager';
import type { ListReassignmentsResult, ReassignmentRequestTopic, ReassignmentResultTopic } from './controller/partition-reassignment';
import type { AclBinding, AclBindingFilter } from './authorizer/authorizer';
import type { FeatureUpdate } from './controller/feature-control-manager';
import type { ClientMetricsConfigChange } from './controller/client-metrics-config-control';
import type { GroupConfigChange } from './controller/group-config-control';

const TOPIC_RESOURCE = 2;
const CLIENT_METRICS_RESOURCE = 16;
const BROKER_RESOURCE = 4;
const GROUP_RESOURCE = 32;

export interface RemoteControllerOptions {
  /** To the controller (a NodeChannel) or, under a quorum, the active controller (ControllerChannel). */
  channel: ControllerRequestChannel;
  logger: Logger;
  /** Waits until this broker has applied everything the controller committed so far. */
  awaitMetadata: () => Promise<void>;
  requestTimeoutMs?: number;
}

export class RemoteController implements ControllerApi {
  constructor(private readonly opts: RemoteControllerOptions) {}

  private unreachable(err: unknown): string {
    this.opts.logger.warn(`the controller could not be reached: ${(err as Error).message}`);
    return `The controller is not available: ${(err as Error).message}`;
  }

  private async settle(): Promise<void> {
    try {
      await this.opts.awaitMetadata();
    } catch (err) {
      this.opts.logger.warn(`metadata did not catch up after a controller write: ${(err as Error).message}`);
    }
  }

  async createTopics(specs: CreateTopicSpec[], validateOnly: boolean): Promise<CreateTopicResult[]> {
    try {
      const res = await this.opts.channel.send('CreateTopics', {
        topics: specs.map((s) => ({
          name: s.name,
          numPartitions: s.numPartitions,
          replicationFactor: s.replicationFactor,
          assignments: s.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
          configs: s.configs.map((c) => ({ name: c.name, value: c.value })),
        })),
        timeoutMs: this.opts.requestTimeoutMs ?? 30_000,
        validateOnly,
      });
      if (!validateOnly && res.topics.some((t) => t.errorCode === ErrorCode.NONE)) await this.settle();
      return specs.map((s, i) => {
        const t = res.topics.find((x) => x.name === s.name) ?? res.topics[i];
        return {
          name: s.name,
          topicId: t && t.topicId !== ZERO_UUID ? t.topicId : '',
          errorCode: t?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR,
          errorMessage: t?.errorMessage ?? null,
          numPartitions: t?.numPartitions ?? -1,
          replicationFactor: t?.replicationFactor ?? -1,
        };
      });
    } catch (err) {
      const msg = this.unreachable(err);
      return specs.map((s) => ({ name: s.name, topicId: '', errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg, numPartitions: -1, replicationFactor: -1 }));
    }
  }

  async deleteTopics(targets: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]> {
    try {
      const version = Math.max(await this.opts.channel.versionFor('DeleteTopics'), 0);
      const byId = targets.some((t) => t.topicId !== null);
      if (byId && version < 6) throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, 'the controller cannot delete topics by id');
      const res = await this.opts.channel.send(
        'DeleteTopics',
        version >= 6
          ? { topics: targets.map((t) => ({ name: t.name, topicId: t.topicId ?? ZERO_UUID })), timeoutMs: 30_000 }
          : { topicNames: targets.map((t) => t.name ?? ''), timeoutMs: 30_000 },
        { version },
      );
      if (res.responses.some((r) => r.errorCode === ErrorCode.NONE)) await this.settle();
      return targets.map((t, i) => {
        const r = res.responses[i];
        return { name: r?.name ?? t.name, topicId: r && r.topicId !== ZERO_UUID ? r.topicId : (t.topicId ?? ''), errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r?.errorMessage ?? null };
      });
    } catch (err) {
      const msg = this.unreachable(err);
      return targets.map((t) => ({ name: t.name, topicId: t.topicId ?? '', errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg }));
    }
  }

  async createPartitions(specs: CreatePartitionsSpec[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    try {
      const res = await this.opts.channel.send('CreatePartitions', {
        topics: specs.map((s) => ({ name: s.name, count: s.count, assignments: s.assignments ? s.assignments.map((a) => ({ brokerIds: a.brokerIds })) : null })),
        timeoutMs: 30_000,
        validateOnly,
      });
      if (!validateOnly && res.results.some((r) => r.errorCode === ErrorCode.NONE)) await this.settle();
      return specs.map((s, i) => {
        const r = res.results[i];
        return { name: s.name, errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r?.errorMessage ?? null };
      });
    } catch (err) {
      const msg = this.unreachable(err);
      return specs.map((s) => ({ name: s.name, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg }));
    }
  }

  async alterTopicConfigs(
    changes: { topic: string; ops: AlterConfigOp[]; incremental: boolean }[],
    validateOnly: boolean,
  ): Promise<{ topic: string; errorCode: number; errorMessage: string | null }[]> {
    const results = await this.forwardConfigChanges(TOPIC_RESOURCE, changes.map((c) => ({ ...c, resourceName: c.topic })), validateOnly);
    return results.map((r, i) => ({ topic: changes[i].topic, errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  /** As alterTopicConfigs, with CLIENT_METRICS resources. */
  async alterClientMetricsConfigs(
    changes: ClientMetricsConfigChange[],
    validateOnly: boolean,
  ): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    const results = await this.forwardConfigChanges(CLIENT_METRICS_RESOURCE, changes.map((c) => ({ ...c, resourceName: c.name })), validateOnly);
    return results.map((r, i) => ({ name: changes[i].name, errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  /** As alterTopicConfigs, with GROUP resources. */
  async alterGroupConfigs(changes: GroupConfigChange[], validateOnly: boolean): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
    const results = await this.forwardConfigChanges(GROUP_RESOURCE, changes.map((c) => ({ ...c, resourceName: c.name })), validateOnly);
    return results.map((r, i) => ({ name: changes[i].name, errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  /** As alterTopicConfigs, with BROKER resources (a broker id, or "" for the cluster default). */
  async alterBrokerConfigs(changes: BrokerConfigChange[], validateOnly: boolean): Promise<{ resourceName: string; errorCode: number; errorMessage: string | null }[]> {
    const results = await this.forwardConfigChanges(BROKER_RESOURCE, changes, validateOnly);
    return results.map((r, i) => ({ resourceName: changes[i].resourceName, errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  /**
   * Config changes of one resource type, forwarded in one IncrementalAlterConfigs for the
   * incremental ones and one AlterConfigs for the others; one result per change, in order (an
   * unreachable controller: REQUEST_TIMED_OUT). Waits for this broker's image to catch up when
   * something was written.
   */
  private async forwardConfigChanges(
    resourceType: number,
    changes: readonly { resourceName: string; incremental: boolean; ops: readonly { name: string; op: number; value: string | null }[] }[],
    validateOnly: boolean,
  ): Promise<{ errorCode: number; errorMessage: string | null }[]> {
    const out = new Map<number, { errorCode: number; errorMessage: string | null }>();
    let wrote = false;
    for (const incremental of [true, false]) {
      const group = changes.map((c, index) => ({ c, index })).filter((g) => g.c.incremental === incremental);
      if (group.length === 0) continue;
      try {
        const res = incremental
          ? await this.opts.channel.send('IncrementalAlterConfigs', {
              resources: group.map(({ c }) => ({
                resourceType,
                resourceName: c.resourceName,
                configs: c.ops.map((o) => ({ name: o.name, configOperation: o.op, value: o.value })),
              })),
              validateOnly,
            })
          : await this.opts.channel.send('AlterConfigs', {
              resources: group.map(({ c }) => ({ resourceType, resourceName: c.resourceName, configs: c.ops.map((o) => ({ name: o.name, value: o.value })) })),
              validateOnly,
            });
        group.forEach(({ index }, i) => {
          const r = res.responses[i];
          if (r?.errorCode === ErrorCode.NONE) wrote = true;
          out.set(index, { errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r?.errorMessage ?? null });
        });
      } catch (err) {
        const msg = this.unreachable(err);
        for (const { index } of group) out.set(index, { errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg });
      }
    }
    if (wrote && !validateOnly) await this.settle();
    return changes.map((_, i) => out.get(i)!);
  }

  async allocateProducerIds(brokerId: number, brokerEpoch: bigint, _blockSize: number): Promise<{ first: bigint; size: number }> {
    const res = await this.opts.channel.send('AllocateProducerIds', { brokerId, brokerEpoch });
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, 'the controller refused to allocate producer ids');
    return { first: res.producerIdStart, size: res.producerIdLen };
  }

  async electLeaders(electionType: number, topicPartitions: { topic: string; partitions: number[] }[] | null): Promise<ElectLeadersResult[]> {
    const res = await this.opts.channel.send('ElectLeaders', { electionType, topicPartitions, timeoutMs: 30_000 });
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, 'ElectLeaders failed on the controller');
    if (res.replicaElectionResults.some((t) => t.partitionResult.some((p) => p.errorCode === ErrorCode.NONE))) await this.settle();
    return res.replicaElectionResults.map((t) => ({ topic: t.topic, partitionResult: t.partitionResult.map((p) => ({ partitionId: p.partitionId, errorCode: p.errorCode, errorMessage: p.errorMessage })) }));
  }

  /** The controller's top-level answer (Kafka's brokers forward UpdateFeatures and relay the response). */
  async updateFeatures(updates: FeatureUpdate[], validateOnly: boolean): Promise<{ errorCode: number; errorMessage: string | null }> {
    try {
      const res = await this.opts.channel.send('UpdateFeatures', {
        timeoutMs: this.opts.requestTimeoutMs ?? 30_000,
        featureUpdates: updates.map((u) => ({ feature: u.feature, maxVersionLevel: u.level, upgradeType: u.upgradeType })),
        validateOnly,
      });
      if (!validateOnly && res.errorCode === ErrorCode.NONE && updates.length > 0) await this.settle();
      return { errorCode: res.errorCode, errorMessage: res.errorMessage };
    } catch (err) {
      return { errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: this.unreachable(err) };
    }
  }

  /** The controller's answer as it gave it (Kafka's brokers forward AlterClientQuotas and relay the response). */
  async alterClientQuotas(alterations: ClientQuotaAlteration[], validateOnly: boolean): Promise<ClientQuotaAlterationResult[]> {
    try {
      const res = await this.opts.channel.send('AlterClientQuotas', {
        entries: alterations.map((a) => ({
          entity: a.entity.map((e) => ({ entityType: e.entityType, entityName: e.entityName })),
          ops: a.ops.map((o) => ({ key: o.key, value: o.value ?? 0, remove: o.value === null })),
        })),
        validateOnly,
      });
      if (!validateOnly && res.entries.some((e) => e.errorCode === ErrorCode.NONE)) await this.settle();
      return res.entries.map((e) => ({
        entity: e.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })),
        errorCode: e.errorCode,
        errorMessage: e.errorMessage,
      }));
    } catch (err) {
      const msg = this.unreachable(err);
      return alterations.map((a) => ({ entity: a.entity.map((e) => ({ ...e })), errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg }));
    }
  }

  /**
   * The controller's answer as it gave it. Unreachable: every distinct user, sorted, with
   * REQUEST_TIMED_OUT (the shape of Kafka's AlterUserScramCredentialsRequest.getErrorResponse).
   */
  async alterUserScramCredentials(deletions: ScramCredentialDeletion[], upsertions: ScramCredentialUpsertion[]): Promise<ScramAlterationResult[]> {
    try {
      const res = await this.opts.channel.send('AlterUserScramCredentials', {
        deletions: deletions.map((d) => ({ name: d.name, mechanism: d.mechanism })),
        upsertions: upsertions.map((u) => ({ name: u.name, mechanism: u.mechanism, iterations: u.iterations, salt: u.salt, saltedPassword: u.saltedPassword })),
      });
      if (res.results.some((r) => r.errorCode === ErrorCode.NONE)) await this.settle();
      return res.results.map((r) => ({ user: r.user, errorCode: r.errorCode, errorMessage: r.errorMessage }));
    } catch (err) {
      const msg = this.unreachable(err);
      const users = [...new Set([...deletions.map((d) => d.name), ...upsertions.map((u) => u.name)])].sort();
      return users.map((user) => ({ user, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg }));
    }
  }

  /** CreateAcls as the controller answers it, one result per binding (Kafka's brokers forward it). */
  async createAcls(bindings: AclBinding[]): Promise<AclCreateResult[]> {
    if (bindings.length === 0) return [];
    try {
      const res = await this.opts.channel.send('CreateAcls', {
        creations: bindings.map((b) => ({
          resourceType: b.resourceType,
          resourceName: b.resourceName,
          resourcePatternType: b.patternType,
          principal: b.principal,
          host: b.host,
          operation: b.operation,
          permissionType: b.permissionType,
        })),
      });
      if (res.results.some((r) => r.errorCode === ErrorCode.NONE)) await this.settle();
      return bindings.map((_, i) => {
        const r = res.results[i];
        return { errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r?.errorMessage ?? null };
      });
    } catch (err) {
      const msg = this.unreachable(err);
      return bindings.map(() => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg }));
    }
  }

  /** AlterPartitionReassignments, forwarded as is; a top-level error (or no answer) fails every partition. */
  async alterPartitionReassignments(topics: ReassignmentRequestTopic[]): Promise<ReassignmentResultTopic[]> {
    const failAll = (errorCode: number, errorMessage: string | null): ReassignmentResultTopic[] =>
      topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage })) }));
    if (topics.length === 0) return [];
    try {
      const res = await this.opts.channel.send('AlterPartitionReassignments', { timeoutMs: 30_000, topics });
      if (res.errorCode !== ErrorCode.NONE) return failAll(res.errorCode, res.errorMessage);
      if (res.responses.some((t) => t.partitions.some((p) => p.errorCode === ErrorCode.NONE))) await this.settle();
      return topics.map((t, i) => ({
        name: t.name,
        partitions: t.partitions.map((p, j) => {
          const r = res.responses[i]?.partitions[j];
          return { partitionIndex: p.partitionIndex, errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: r?.errorMessage ?? null };
        }),
      }));
    } catch (err) {
      return failAll(ErrorCode.REQUEST_TIMED_OUT, this.unreachable(err));
    }
  }

  /**
   * ListPartitionReassignments, forwarded as Kafka's brokers forward it: the controller's image is
   * the one that has every reassignment it accepted, before this broker's metadata catches up. The
   * controller's top-level error is relayed; an unreachable one is REQUEST_TIMED_OUT.
   */
  async listPartitionReassignments(topics: readonly { name: string; partitionIndexes: number[] }[] | null): Promise<ListReassignmentsResult> {
    try {
      const res = await this.opts.channel.send('ListPartitionReassignments', {
        timeoutMs: this.opts.requestTimeoutMs ?? 30_000,
        topics: topics === null ? null : topics.map((t) => ({ name: t.name, partitionIndexes: [...t.partitionIndexes] })),
      });
      return {
        errorCode: res.errorCode,
        errorMessage: res.errorMessage,
        topics: res.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, replicas: [...p.replicas], addingReplicas: [...p.addingReplicas], removingReplicas: [...p.removingReplicas] })),
        })),
      };
    } catch (err) {
      return { errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: this.unreachable(err), topics: [] };
    }
  }

  /** DeleteAcls as the controller answers it, one result per filter with the ACLs it removed. */
  async deleteAcls(filters: AclBindingFilter[]): Promise<AclDeleteResult[]> {
    if (filters.length === 0) return [];
    try {
      const res = await this.opts.channel.send('DeleteAcls', {
        filters: filters.map((f) => ({
          resourceTypeFilter: f.resourceType,
          resourceNameFilter: f.resourceName,
          patternTypeFilter: f.patternType,
          principalFilter: f.principal,
          hostFilter: f.host,
          operation: f.operation,
          permissionType: f.permissionType,
        })),
      });
      if (res.filterResults.some((r) => r.matchingAcls.length > 0)) await this.settle();
      return filters.map((_, i) => {
        const r = res.filterResults[i];
        if (!r) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, matchingAcls: [] };
        return {
          errorCode: r.errorCode,
          errorMessage: r.errorMessage,
          matchingAcls: r.matchingAcls.map((m) => ({
            acl: {
              resourceType: m.resourceType,
              resourceName: m.resourceName,
              patternType: m.patternType,
              principal: m.principal,
              host: m.host,
              operation: m.operation,
              permissionType: m.permissionType,
            },
            errorCode: m.errorCode,
            errorMessage: m.errorMessage,
          })),
        };
      });
    } catch (err) {
      const msg = this.unreachable(err);
      return filters.map(() => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: msg, matchingAcls: [] }));
    }
  }

  isInternal(topic: string): boolean {
    return isInternalTopic(topic);
  }
}
