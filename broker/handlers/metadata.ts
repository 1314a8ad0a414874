/**
 * Metadata (3), v0-12.
 * Brokers at their advertised address for the listener the request arrived on, the cluster id, a
 * controller id that is one of the listed brokers (KRaft brokers report a live broker: clients send
 * admin requests there), and per topic its id (v10+), partitions with leader, leader epoch (v7+),
 * replicas, ISR and offline replicas (v5+).
 * Topics: null = all (v1+; in v0 an empty list means all); by name or, v10+, by topic id (unknown id:
 * UNKNOWN_TOPIC_ID). Unknown names are created when auto.create.topics.enable is on and the request
 * allows it (always in v0-3, allow_auto_topic_creation in v4+); an invalid name is reported as
 * INVALID_TOPIC_EXCEPTION. As Kafka's AutoTopicCreationManager: __consumer_offsets and
 * __transaction_state are created with their own specs (coordinator/internal-topic.ts), never as
 * ordinary topics with the broker defaults; __cluster_metadata is never created (its creation is
 * prohibited: UNKNOWN_TOPIC_OR_PARTITION). A name (or id) listed twice is answered once, as Kafka
 * reads them into a set. Authorized operations: all operations when asked (no ACLs yet), else
 * Kafka's "not requested" value.
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { Input } from '../../protocol/primitives/input';
import type { MetadataRequest, MetadataResponse, MetadataResponseTopic } from '../../protocol/generated/metadata';
import { ApiKey } from '../../protocol/generated';
import { CLUSTER_METADATA_TOPIC, isInternalTopic, validateTopicName } from '../../metadata/topic-name';
import { createInternalTopics, isInternalTopicName } from '../../coordinator/internal-topic';
import type { Broker } from '../broker';
import { defineHandler } from './define-handler';
import { AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_ALL_OPERATIONS, TOPIC_ALL_OPERATIONS } from './acl-operations';

export const metadataHandler = defineHandler<MetadataRequest, MetadataResponse>({
  apiKey: ApiKey.Metadata,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 12,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const md = broker.metadata;
    const allTopics = req.topics === null || (v === 0 && req.topics.length === 0);
    const topics: Input<MetadataResponseTopic>[] = [];

    if (allTopics) {
      for (const t of md.topics()) topics.push(describeTopic(broker, t.name, req.includeTopicAuthorizedOperations));
    } else {
      const autoCreate = (v < 4 || req.allowAutoTopicCreation) && broker.config.getBoolean('auto.create.topics.enable');
      const missing = new Set<string>();
      for (const t of req.topics!) {
        if (t.name === null) continue;
        if (!md.topic(t.name)) missing.add(t.name);
      }
      const created = new Map<string, number>();
      if (autoCreate && missing.size > 0) {
        const internal = [...missing].filter(isInternalTopicName);
        const ordinary = [...missing].filter((n) => !isInternalTopicName(n) && n !== CLUSTER_METADATA_TOPIC);
        const [a, b] = await Promise.all([
          createInternalTopics(broker.controller, broker.config, md, internal),
          ordinary.length > 0 ? broker.autoCreateTopics(ordinary) : new Map<string, number>(),
        ]);
        for (const [k, code] of [...a, ...b]) created.set(k, code);
      }
      const answered = new Set<string>();
      for (const t of req.topics!) {
        const once = t.name === null ? `id:${t.topicId}` : `name:${t.name}`;
        if (answered.has(once)) continue;
        answered.add(once);
        if (t.name === null) {
          const byId = md.topicById(t.topicId);
          if (!byId) {
            topics.push({ errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId: t.topicId, partitions: [] });
          } else {
            topics.push(describeTopic(broker, byId.name, req.includeTopicAuthorizedOperations));
          }
          continue;
        }
        if (md.topic(t.name)) {
          topics.push(describeTopic(broker, t.name, req.includeTopicAuthorizedOperations));
          continue;
        }
        let errorCode: number = created.get(t.name) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        try {
          validateTopicName(t.name);
        } catch {
          errorCode = ErrorCode.INVALID_TOPIC_EXCEPTION;
        }
        if (errorCode === ErrorCode.NONE) errorCode = ErrorCode.LEADER_NOT_AVAILABLE;
        topics.push({ errorCode, name: t.name, topicId: ZERO_UUID, isInternal: isInternalTopic(t.name), partitions: [] });
      }
    }

    const brokers = md.aliveBrokers().flatMap((b) => {
      const ep = b.endpoints.find((e) => e.name === ctx.connection.listenerName);
      return ep ? [{ nodeId: b.id, host: ep.host, port: ep.port, rack: b.rack }] : [];
    });
    return {
      brokers,
      clusterId: broker.clusterId,
      controllerId: brokers[0]?.nodeId ?? -1,
      topics,
            // Only v8-10 carry it (v11+ moved it to DescribeCluster).
      clusterAuthorizedOperations:
        v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations ? CLUSTER_ALL_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
    };
  },
});

function describeTopic(broker: Broker, name: string, includeOps: boolean): Input<MetadataResponseTopic> {
  const t = broker.metadata.topic(name)!;
  const alive = new Set(broker.metadata.aliveBrokers().map((b) => b.id));
  const partitions = [...t.partitions.values()]
    .sort((a, b) => a.partition - b.partition)
    .map((p) => ({
      errorCode: p.leader === -1 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      partitionIndex: p.partition,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: p.replicas,
      isrNodes: p.isr,
      offlineReplicas: p.replicas.filter((r) => !alive.has(r)),
    }));
  return {
    errorCode: ErrorCode.NONE,
    name,
    topicId: t.topicId,
    isInternal: isInternalTopic(name),
    partitions,
    topicAuthorizedOperations: includeOps ? TOPIC_ALL_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
  };
}
