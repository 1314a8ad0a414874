/**
 * Metadata (3), v0-13.
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
 * reads them into a set.
 * Authorization (KafkaApis.handleTopicMetadataRequest): DESCRIBE on each TOPIC. An all-topics
 * request leaves out the topics without it (denials not logged); a topic named without it is
 * TOPIC_AUTHORIZATION_FAILED with a zero topic id and is_internal false, whether it exists or not
 * (its existence is not disclosed), and one asked by id TOPIC_AUTHORIZATION_FAILED with its id and
 * a null name (ids are not secret). Auto creation of a missing DESCRIBE-authorized topic needs
 * CREATE on the CLUSTER or on the TOPIC, else TOPIC_AUTHORIZATION_FAILED (zero id) and it is not
 * created. The unauthorized answers come after the others, those for CREATE first.
 * topic_authorized_operations (v8+, when asked) is the bit field of the principal's operations on
 * each topic answered (not on the unauthorized ones or unknown ids); cluster_authorized_operations
 * (v8-10, when asked) the CLUSTER's, or 0 without DESCRIBE on the CLUSTER; otherwise Kafka's "not
 * requested" value.
 * The top-level error_code (v13+, KIP-1102) is NONE, as Kafka 4.0's KafkaApis leaves it: a broker
 * answering normally never asks a client to rebootstrap. REBOOTSTRAP_REQUIRED (129) there tells the
 * client its metadata is stale and it should go back to its bootstrap servers; krill sends it only
 * when a test injects it (broker/fault-injection/error-responses.ts).
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
import { AUTHORIZED_OPERATIONS_OMITTED, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/authorizer/authorizer';

export const metadataHandler = defineHandler<MetadataRequest, MetadataResponse>({
  apiKey: ApiKey.Metadata,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 13,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const md = broker.metadata;
    const auth = authHelper(broker.authorizer, ctx);
    const allTopics = req.topics === null || (v === 0 && req.topics.length === 0);
    const includeOps = v >= 8 && req.includeTopicAuthorizedOperations;
    const topics: Input<MetadataResponseTopic>[] = [];
    const unauthorizedForCreate: Input<MetadataResponseTopic>[] = [];
    const unauthorizedForDescribe: Input<MetadataResponseTopic>[] = [];

    if (allTopics) {
      const all = [...md.topics()].map((t) => t.name);
      const describable = auth.filterByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, all, (n) => n, { logIfDenied: false });
      for (const name of all) if (describable.has(name)) topics.push(describeTopic(broker, auth, name, includeOps));
    } else {
      // The names to authorize: those asked by name, and those of the known ids asked.
      const named: string[] = [];
      for (const t of req.topics!) {
        const name = t.name ?? md.topicById(t.topicId)?.name;
        if (name !== undefined) named.push(name);
      }
      const describable = auth.filterByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, named, (n) => n);
      const autoCreate = (v < 4 || req.allowAutoTopicCreation) && broker.config.getBoolean('auto.create.topics.enable');
      const missing = new Set<string>();
      for (const t of req.topics!) {
        if (t.name === null || !describable.has(t.name)) continue;
        if (!md.topic(t.name)) missing.add(t.name);
      }
      // Creating a missing topic needs CREATE on the cluster or on the topic.
      const notCreatable = new Set<string>();
      if (autoCreate && missing.size > 0 && !auth.authorizeCluster(AclOperation.CREATE, { logIfDenied: false })) {
        const creatable = auth.filterByAuthorized(AclOperation.CREATE, ResourceType.TOPIC, missing, (n) => n);
        for (const n of missing) {
          if (creatable.has(n)) continue;
          notCreatable.add(n);
          missing.delete(n);
        }
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
          } else if (!describable.has(byId.name)) {
            unauthorizedForDescribe.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: null, topicId: t.topicId, isInternal: false, partitions: [] });
          } else {
            topics.push(describeTopic(broker, auth, byId.name, includeOps));
          }
          continue;
        }
        if (!describable.has(t.name)) {
          unauthorizedForDescribe.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: t.name, topicId: ZERO_UUID, isInternal: false, partitions: [] });
          continue;
        }
        if (notCreatable.has(t.name)) {
          unauthorizedForCreate.push({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: t.name, topicId: ZERO_UUID, isInternal: isInternalTopic(t.name), partitions: [] });
          continue;
        }
        if (md.topic(t.name)) {
          topics.push(describeTopic(broker, auth, t.name, includeOps));
          continue;
        }
        let errorCode: number = created.get(t.name) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        try {
          validateTopicName(t.name);
        } catch {
          errorCode = ErrorCode.INVALID_TOPIC_EXCEPTION;
        }
        if (errorCode === ErrorCode.NONE) errorCode = ErrorCode.LEADER_NOT_AVAILABLE;
        topics.push({
          errorCode,
          name: t.name,
          topicId: ZERO_UUID,
          isInternal: isInternalTopic(t.name),
          partitions: [],
          topicAuthorizedOperations: includeOps ? auth.authorizedOperations(ResourceType.TOPIC, t.name) : AUTHORIZED_OPERATIONS_OMITTED,
        });
      }
    }

    const brokers = md.aliveBrokers().flatMap((b) => {
      const ep = b.endpoints.find((e) => e.name === ctx.connection.listenerName);
      return ep ? [{ nodeId: b.id, host: ep.host, port: ep.port, rack: b.rack }] : [];
    });
    // Only v8-10 carry it (v11+ moved it to DescribeCluster); 0 without DESCRIBE on the cluster.
    let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED;
    if (v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations) {
      clusterAuthorizedOperations = auth.authorizeCluster(AclOperation.DESCRIBE) ? auth.authorizedOperations(ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME) : 0;
    }
    return {
      brokers,
      clusterId: broker.clusterId,
      controllerId: brokers[0]?.nodeId ?? -1,
      topics: [...topics, ...unauthorizedForCreate, ...unauthorizedForDescribe],
      clusterAuthorizedOperations,
      errorCode: ErrorCode.NONE,
    };
  },
});

function describeTopic(broker: Broker, auth: AuthHelper, name: string, includeOps: boolean): Input<MetadataResponseTopic> {
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
    topicAuthorizedOperations: includeOps ? auth.authorizedOperations(ResourceType.TOPIC, name) : AUTHORIZED_OPERATIONS_OMITTED,
  };
}
