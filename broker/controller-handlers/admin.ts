/**
 * The admin APIs brokers forward to the controller (Kafka's brokers forward them too): each decodes
 * the request, calls the Controller, and answers in the request's version. Validation and the
 * error codes are the Controller's (see controller.ts); the broker-side handlers add what only a
 * broker knows (effective topic configs in CreateTopics v5+, delete.topic.enable).
 *
 * CreateTopics (19) v2-7, DeleteTopics (20) v1-6, CreatePartitions (37) v0-3, AlterConfigs (33)
 * v0-2 and IncrementalAlterConfigs (44) v0-1 (topic resources; others INVALID_REQUEST),
 * ElectLeaders (43) v0-2 (v0 is always a preferred election), AllocateProducerIds (67) v0.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { AllocateProducerIdsRequest, AllocateProducerIdsResponse } from '../../protocol/generated/allocate-producer-ids';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/generated/alter-configs';
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../protocol/generated/create-partitions';
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../protocol/generated/create-topics';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../protocol/generated/delete-topics';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../protocol/generated/elect-leaders';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../protocol/generated/incremental-alter-configs';
import { ConfigResourceType } from '../../replication/metadata-records';
import { ElectionType } from '../../replication/controller/controller';
import { defineControllerHandler } from './define';

export const controllerCreateTopicsHandler = defineControllerHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: 19,
  name: 'CreateTopics',
  minVersion: 2,
  maxVersion: 7,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    const results = await node.controller.createTopics(
      req.topics.map((t) => ({
        name: t.name,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor,
        assignments: t.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
        configs: t.configs.map((c) => ({ name: c.name, value: c.value })),
      })),
      req.validateOnly,
    );
    return {
      topics: results.map((r) => {
        const ok = r.errorCode === ErrorCode.NONE;
        return {
          name: r.name,
          topicId: v >= 7 ? r.topicId || ZERO_UUID : undefined,
          errorCode: r.errorCode,
          errorMessage: ok ? null : r.errorMessage,
          numPartitions: v >= 5 ? (ok ? r.numPartitions : -1) : undefined,
          replicationFactor: v >= 5 ? (ok ? r.replicationFactor : -1) : undefined,
          configs: v >= 5 ? [] : undefined,
        };
      }),
    };
  },
});

export const controllerDeleteTopicsHandler = defineControllerHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: 20,
  name: 'DeleteTopics',
  minVersion: 1,
  maxVersion: 6,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    const targets = v >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId === ZERO_UUID ? null : t.topicId })) : req.topicNames.map((name) => ({ name, topicId: null as string | null }));
    const results = await node.controller.deleteTopics(targets);
    return {
      responses: results.map((r) => ({
        name: r.name,
        topicId: v >= 6 ? r.topicId || ZERO_UUID : undefined,
        errorCode: r.errorCode,
        errorMessage: v >= 5 ? r.errorMessage : undefined,
      })),
    };
  },
});

export const controllerCreatePartitionsHandler = defineControllerHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: 37,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, _ctx, req) {
    const results = await node.controller.createPartitions(
      req.topics.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments ? t.assignments.map((a) => ({ brokerIds: a.brokerIds })) : null })),
      req.validateOnly,
    );
    return { results: results.map((r) => ({ name: r.name, errorCode: r.errorCode, errorMessage: r.errorMessage })) };
  },
});

const notTopic = (resourceType: number, resourceName: string) => ({
  errorCode: ErrorCode.INVALID_REQUEST,
  errorMessage: 'the controller only alters topic configs',
  resourceType,
  resourceName,
});

export const controllerAlterConfigsHandler = defineControllerHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: 33,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, _ctx, req) {
    const topics = req.resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    let next = 0;
    return {
      responses: req.resources.map((r) => {
        if (r.resourceType !== ConfigResourceType.TOPIC) return notTopic(r.resourceType, r.resourceName);
        const res = results[next++];
        return { errorCode: res.errorCode, errorMessage: res.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
      }),
    };
  },
});

export const controllerIncrementalAlterConfigsHandler = defineControllerHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, _ctx, req) {
    const topics = req.resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    let next = 0;
    return {
      responses: req.resources.map((r) => {
        if (r.resourceType !== ConfigResourceType.TOPIC) return notTopic(r.resourceType, r.resourceName);
        const res = results[next++];
        return { errorCode: res.errorCode, errorMessage: res.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
      }),
    };
  },
});

export const controllerElectLeadersHandler = defineControllerHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: 43,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    const type = v >= 1 ? req.electionType : ElectionType.PREFERRED;
    try {
      const results = await node.controller.electLeaders(type, req.topicPartitions);
      return { errorCode: v >= 1 ? ErrorCode.NONE : undefined, replicaElectionResults: results };
    } catch (err) {
      if (!(err instanceof KafkaError)) node.logger.error('ElectLeaders failed', { err });
      if (v >= 1) return { errorCode: toErrorCode(err), replicaElectionResults: [] };
      // v0 has no top-level error: report it on every partition asked about.
      return {
        replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: toErrorCode(err), errorMessage: (err as Error).message })),
        })),
      };
    }
  },
});

export const controllerAllocateProducerIdsHandler = defineControllerHandler<AllocateProducerIdsRequest, AllocateProducerIdsResponse>({
  apiKey: 67,
  name: 'AllocateProducerIds',
  minVersion: 0,
  maxVersion: 0,
  async handle(node, _ctx, req) {
    try {
      const r = await node.controller.allocateProducerIds(req.brokerId, req.brokerEpoch, 1000);
      return { errorCode: ErrorCode.NONE, producerIdStart: r.first, producerIdLen: r.size };
    } catch (err) {
      return { errorCode: toErrorCode(err), producerIdStart: -1n, producerIdLen: 0 };
    }
  },
});
