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

/**
 * What the broker's and the controller listener's CreateTopics share (Kafka's
 * ControllerApis.createTopics): the answers, each with the request topic it answers. One answer per
 * name in order of first listing (a name listed twice: INVALID_REQUEST, not sent to the
 * controller; __cluster_metadata: INVALID_REQUEST), except that a request the controller refused
 * as a whole (too many partitions) is answered on every listing, as Kafka's error response is.
 */
export async function createTopicsAnswers(
  controller: ControllerApi,
  req: CreateTopicsRequest,
): Promise<{ topic: CreateTopicsRequestCreatableTopic; result: CreateTopicResult }[]> {
  const counts = new Map<string, number>();
  for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const toCreate = req.topics.filter((t) => counts.get(t.name) === 1 && t.name !== CLUSTER_METADATA_TOPIC);
  const created = toCreate.length > 0 ? await controller.createTopics(createTopicSpecs(toCreate), req.validateOnly) : [];
  const refused = created.length > 0 && created.every((r) => r.errorCode === ErrorCode.POLICY_VIOLATION && r.errorMessage === EXCESSIVE_PARTITIONS_MESSAGE);
  if (refused) return req.topics.map((topic) => ({ topic, result: failed(topic.name, ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE) }));
  const byName = new Map(created.map((r, i) => [toCreate[i].name, r]));
  const answered = new Set<string>();
  const out: { topic: CreateTopicsRequestCreatableTopic; result: CreateTopicResult }[] = [];
  for (const topic of req.topics) {
    if (answered.has(topic.name)) continue;
    answered.add(topic.name);
    let result = byName.get(topic.name);
    if (!result) {
      result =
        counts.get(topic.name)! > 1
          ? failed(topic.name, ErrorCode.INVALID_REQUEST, DUPLICATE_TOPIC_NAME)
          : failed(topic.name, ErrorCode.INVALID_REQUEST, `Creation of internal topic ${CLUSTER_METADATA_TOPIC} is prohibited.`);
    }
    out.push({ topic, result });
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
): Promise<{ topic: CreateTopicsRequestCreatableTopic; result: CreateTopicResult }[]> {
  const checked = await createTopicsAnswers(controller, { ...req, validateOnly: true });
  const throttled = new Set<string>();
  for (const a of checked) {
    if (a.result.errorCode === ErrorCode.NONE && !quota.tryRecord(a.result.numPartitions)) throttled.add(a.topic.name);
  }
  const admitted = req.topics.filter((t) => !throttled.has(t.name));
  const created = req.validateOnly || admitted.length === 0 ? checked : await createTopicsAnswers(controller, { ...req, topics: admitted });
  const byName = new Map(created.map((a) => [a.topic.name, a]));
  return checked.map((a) =>
    throttled.has(a.topic.name)
      ? { topic: a.topic, result: failed(a.topic.name, ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE) }
      : (byName.get(a.topic.name) ?? a),
  );
}

export const createTopicsHandler = defineHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const quota = broker.quotas.controllerMutation.newQuotaFor(ctx.principal.name, ctx.clientId ?? '', v >= 6);
    const answers = quota.bounded ? await createWithinQuota(broker.controller, req, quota) : await createTopicsAnswers(broker.controller, req);
    ctx.throttle(quota.throttleTimeMs());
    return {
      topics: answers.map(({ topic, result: r }) => {
        const ok = r.errorCode === ErrorCode.NONE;
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
