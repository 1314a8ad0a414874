/**
 * CreateTopics (19), v0-7.
 * Validates and creates topics through the controller, which answers as Kafka's
 * ReplicationControlManager does: a request that would create more than 10,000 partitions in all
 * is refused before anything is allocated, validate_only or not (POLICY_VIOLATION "Excessively
 * large number of partitions per request." on every topic listed, KAFKA-17870); then per topic:
 * name rules and '.'/'_' collisions (INVALID_TOPIC_EXCEPTION), TOPIC_ALREADY_EXISTS, INVALID_CONFIG,
 * INVALID_REPLICATION_FACTOR (0 or below -1, more replicas than brokers), INVALID_PARTITIONS (0 or
 * below -1), INVALID_REPLICA_ASSIGNMENT (duplicates, unknown brokers, uneven lengths, gaps); -1
 * partitions / replication factor take the broker defaults (v4+). As in Kafka's ControllerApis,
 * which the broker forwards to: a name listed twice is answered once with INVALID_REQUEST
 * "Duplicate topic name." and not created; __cluster_metadata gets INVALID_REQUEST. Internal
 * topics (__consumer_offsets, __transaction_state) may be created like any other, with the specs
 * asked, as Kafka allows. validate_only (v1+) checks everything and creates nothing. v5+ returns
 * the new topic's id (v7), partition count, replication factor and its effective configs.
 * Controller mutation quotas (KIP-599): see createWithinQuota; the response carries the quota's
 * throttle time and the connection is muted for it.
 * Authorization (ControllerApis.createTopics, which KRaft brokers forward to): CREATE on the
 * CLUSTER allows every topic, otherwise CREATE on each TOPIC (a denied topic is answered
 * TOPIC_AUTHORIZATION_FAILED "Authorization failed." and not created, nor counted against the
 * quota); DESCRIBE_CONFIGS on the TOPIC (denials not logged) lets a created topic's answer (v5+)
 * carry its configs, partition count and replication factor, else they are left out (-1, no
 * configs) and topic_config_error_code is TOPIC_AUTHORIZATION_FAILED. Duplicates and
 * __cluster_metadata are refused before authorization.
 */
import { ErrorCode } from '../../protocol/errors';
import type { CreateTopicsRequest, CreateTopicsRequestCreatableTopic, CreateTopicsResponse } from '../../protocol/generated/create-topics';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import {
  DUPLICATE_TOPIC_NAME,
  EXCESSIVE_PARTITIONS_MESSAGE,
  type ControllerApi,
  type CreateTopicResult,
  type CreateTopicSpec,
} from '../../metadata/controller/controller';
import { CLUSTER_METADATA_TOPIC } from '../../metadata/topic-name';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ControllerMutationQuota } from '../quota/controller-mutation-quota';
import { authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/**
 * What CreateTopics may do for the requester (ControllerApis.createTopics' inputs): create the
 * topics named (CREATE on the cluster, or on each topic) and see their configs (DESCRIBE_CONFIGS).
 */
export interface CreateTopicsAuthorization {
  creatable(names: readonly string[]): Set<string>;
  configsVisible(names: readonly string[]): Set<string>;
}

/** The requester's CreateTopics permissions, as ControllerApis.handleCreateTopics asks them. */
export function createTopicsAuthorization(auth: AuthHelper): CreateTopicsAuthorization {
  let clusterCreate: boolean | undefined;
  return {
    creatable: (names) => {
      clusterCreate ??= auth.authorizeCluster(AclOperation.CREATE, { logIfDenied: false });
      return clusterCreate ? new Set(names) : auth.filterByAuthorized(AclOperation.CREATE, ResourceType.TOPIC, names, (n) => n);
    },
    configsVisible: (names) => auth.filterByAuthorized(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, (n) => n, { logIfDenied: false }),
  };
}

/** Everything allowed (no authorizer). */
const UNRESTRICTED: CreateTopicsAuthorization = { creatable: (names) => new Set(names), configsVisible: (names) => new Set(names) };

/** The controller's view of CreateTopics topics. */
export function createTopicSpecs(topics: readonly CreateTopicsRequestCreatableTopic[]): CreateTopicSpec[] {
  return topics.map((t) => ({
    name: t.name,
    numPartitions: t.numPartitions,
    replicationFactor: t.replicationFactor,
    assignments: t.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
    configs: t.configs.map((c) => ({ name: c.name, value: c.value })),
  }));
}

const failed = (name: string, errorCode: number, errorMessage: string | null): CreateTopicResult => ({
  name,
  topicId: '',
  errorCode,
  errorMessage,
  numPartitions: -1,
  replicationFactor: -1,
});

/** One answer: the request topic it answers, the controller's result, whether its configs may be shown. */
export interface CreateTopicsAnswer {
  topic: CreateTopicsRequestCreatableTopic;
  result: CreateTopicResult;
  configsVisible: boolean;
}

/**
 * What the broker's and the controller listener's CreateTopics share (Kafka's
 * ControllerApis.createTopics): the answers, each with the request topic it answers. One answer per
 * name in order of first listing (a name listed twice: INVALID_REQUEST, not sent to the
 * controller; __cluster_metadata: INVALID_REQUEST; a topic `authorization` does not let the
 * requester create: TOPIC_AUTHORIZATION_FAILED), except that a request the controller refused as a
 * whole (too many partitions) is answered on every listing, as Kafka's error response is.
 */
export async function createTopicsAnswers(
  controller: ControllerApi,
  req: CreateTopicsRequest,
  authorization: CreateTopicsAuthorization = UNRESTRICTED,
): Promise<CreateTopicsAnswer[]> {
  const counts = new Map<string, number>();
  for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const allowedNames = [...counts].filter(([name, n]) => n === 1 && name !== CLUSTER_METADATA_TOPIC).map(([name]) => name);
  const creatable = authorization.creatable(allowedNames);
  const visible = authorization.configsVisible(allowedNames);
  const toCreate = req.topics.filter((t) => counts.get(t.name) === 1 && t.name !== CLUSTER_METADATA_TOPIC && creatable.has(t.name));
  const created = toCreate.length > 0 ? await controller.createTopics(createTopicSpecs(toCreate), req.validateOnly) : [];
  const refused = created.length > 0 && created.every((r) => r.errorCode === ErrorCode.POLICY_VIOLATION && r.errorMessage === EXCESSIVE_PARTITIONS_MESSAGE);
  if (refused) {
    return req.topics.map((topic) => ({ topic, result: failed(topic.name, ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE), configsVisible: true }));
  }
  const byName = new Map(created.map((r, i) => [toCreate[i].name, r]));
  const answered = new Set<string>();
  const out: CreateTopicsAnswer[] = [];
  for (const topic of req.topics) {
    if (answered.has(topic.name)) continue;
    answered.add(topic.name);
    let result = byName.get(topic.name);
    if (!result) {
      if (counts.get(topic.name)! > 1) result = failed(topic.name, ErrorCode.INVALID_REQUEST, DUPLICATE_TOPIC_NAME);
      else if (topic.name === CLUSTER_METADATA_TOPIC) {
        result = failed(topic.name, ErrorCode.INVALID_REQUEST, `Creation of internal topic ${CLUSTER_METADATA_TOPIC} is prohibited.`);
      } else result = failed(topic.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.');
    }
    out.push({ topic, result, configsVisible: visible.has(topic.name) });
  }
  return out;
}

/**
 * CreateTopics for a client with a controller_mutation_rate (KIP-599): the controller validates the
 * request first (validate_only), then each topic that would be created takes its partitions from
 * the quota in request order, and only those the quota admits are created; the others get
 * THROTTLING_QUOTA_EXCEEDED (strict quotas, v6+). As in Kafka, validate_only requests count too.
 */
async function createWithinQuota(
  controller: ControllerApi,
  req: CreateTopicsRequest,
  quota: ControllerMutationQuota,
  authorization: CreateTopicsAuthorization,
): Promise<CreateTopicsAnswer[]> {
  const checked = await createTopicsAnswers(controller, { ...req, validateOnly: true }, authorization);
  const throttled = new Set<string>();
  for (const a of checked) {
    if (a.result.errorCode === ErrorCode.NONE && !quota.tryRecord(a.result.numPartitions)) throttled.add(a.topic.name);
  }
  const admitted = req.topics.filter((t) => !throttled.has(t.name));
  const created = req.validateOnly || admitted.length === 0 ? checked : await createTopicsAnswers(controller, { ...req, topics: admitted }, authorization);
  const byName = new Map(created.map((a) => [a.topic.name, a]));
  return checked.map((a) =>
    throttled.has(a.topic.name)
      ? { topic: a.topic, result: failed(a.topic.name, ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE), configsVisible: a.configsVisible }
      : (byName.get(a.topic.name) ?? a),
  );
}

/**
 * A created topic whose configs the requester may not see (no DESCRIBE_CONFIGS, v5+):
 * ReplicationControlManager.createTopic leaves the counts at -1, lists no configs and sets
 * topic_config_error_code to TOPIC_AUTHORIZATION_FAILED.
 */
export function configsHidden(r: CreateTopicResult, topicId: string | undefined) {
  return {
    name: r.name,
    topicId,
    errorCode: r.errorCode,
    errorMessage: null,
    numPartitions: -1,
    replicationFactor: -1,
    configs: [],
    topicConfigErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  };
}

export const createTopicsHandler = defineHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const quota = broker.quotas.controllerMutation.newQuotaFor(ctx.principal.name, ctx.clientId ?? '', v >= 6);
    const authorization = createTopicsAuthorization(authHelper(broker.authorizer, ctx));
    const answers = quota.bounded
      ? await createWithinQuota(broker.controller, req, quota, authorization)
      : await createTopicsAnswers(broker.controller, req, authorization);
    ctx.throttle(quota.throttleTimeMs());
    return {
      topics: answers.map(({ topic, result: r, configsVisible }) => {
        const ok = r.errorCode === ErrorCode.NONE;
        if (ok && v >= 5 && !configsVisible) return configsHidden(r, r.topicId || undefined);
        let configs = null;
        if (ok && v >= 5) {
          const overrides = new Map<string, string>();
          for (const c of topic.configs) if (c.value !== null) overrides.set(c.name, c.value);
          configs = broker
            .topicConfigWith(overrides)
            .describe()
            .map((e) => ({
              name: e.name,
              value: e.value,
              readOnly: e.readOnly,
              configSource: e.source,
              isSensitive: e.isSensitive,
            }));
        }
        return {
          name: r.name,
          topicId: r.topicId || undefined,
          errorCode: r.errorCode,
          errorMessage: ok ? null : r.errorMessage,
          numPartitions: ok ? r.numPartitions : -1,
          replicationFactor: ok ? r.replicationFactor : -1,
          configs,
        };
      }),
    };
  },
});
