/**
 * CreatePartitions (37), v0-3.
 * Grows a topic's partition count through the controller (Kafka's ReplicationControlManager): a
 * request that would add more than 10,000 partitions in all is refused before anything is
 * allocated, validate_only or not (POLICY_VIOLATION "Excessively large number of partitions per
 * request." on every topic listed, KAFKA-19673); then per topic: unknown topic
 * UNKNOWN_TOPIC_OR_PARTITION, not an increase INVALID_PARTITIONS, assignments that do not match the
 * number of new partitions, repeat a broker, name an unregistered one or differ in length from the
 * topic's replication factor INVALID_REPLICA_ASSIGNMENT, too few brokers INVALID_REPLICATION_FACTOR.
 * A topic named twice is answered once with INVALID_REQUEST "Duplicate topic name." and not
 * grown (Kafka's ControllerApis). validate_only creates nothing.
 * Controller mutation quotas (KIP-599, strict from v3): each growth takes its new partitions from
 * the client's controller_mutation_rate; one over it gets THROTTLING_QUOTA_EXCEEDED, and the
 * response carries the throttle time.
 * Authorization (ControllerApis.createPartitions, which KRaft brokers forward to): ALTER on each
 * TOPIC (after the duplicate check); a topic without it is TOPIC_AUTHORIZATION_FAILED, with no
 * message, and is neither grown nor counted against the quota.
 */
import { ErrorCode } from '../../protocol/errors';
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../protocol/generated/create-partitions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ControllerMutationQuota } from '../quota/controller-mutation-quota';
import { DUPLICATE_TOPIC_NAME, EXCESSIVE_PARTITIONS_MESSAGE, type ControllerApi } from '../../metadata/controller/controller';
import { authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** The topics among `names` the requester may grow: ALTER on the topic (ControllerApis.handleCreatePartitions). */
export function alterableTopics(auth: AuthHelper): (names: readonly string[]) => Set<string> {
  return (names) => auth.filterByAuthorized(AclOperation.ALTER, ResourceType.TOPIC, names, (n) => n);
}

/**
 * What the broker's and the controller listener's CreatePartitions share: one answer per topic
 * name in order of first listing, or, when the controller refused the request as a whole, one per
 * listing (Kafka's error response).
 */
export async function createPartitionsAnswers(
  controller: ControllerApi,
  req: CreatePartitionsRequest,
  /** The client's controller mutation quota and the topics' current counts (the broker listener only). */
  quota?: { mutation: ControllerMutationQuota; currentCount: (topic: string) => number | undefined },
  /** The names the requester may grow (ALTER on the topic); all when absent. */
  alterable: (names: readonly string[]) => Set<string> = (names) => new Set(names),
): Promise<{ name: string; errorCode: number; errorMessage: string | null }[]> {
  const counts = new Map<string, number>();
  for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const authorized = alterable([...counts].filter(([, n]) => n === 1).map(([name]) => name));
  let unique = req.topics.filter((t) => counts.get(t.name) === 1 && authorized.has(t.name));
  const throttled = new Set<string>();
  if (quota?.mutation.bounded && unique.length > 0) {
    // KIP-599: the controller validates first; each growth that would happen takes its new
    // partitions from the quota, in request order; over it, THROTTLING_QUOTA_EXCEEDED.
    const checked = await controller.createPartitions(
      unique.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments ? t.assignments.map((a) => ({ brokerIds: a.brokerIds })) : null })),
      true,
    );
    checked.forEach((r, i) => {
      const t = unique[i];
      if (r.errorCode === ErrorCode.NONE && !quota.mutation.tryRecord(Math.max(0, t.count - (quota.currentCount(t.name) ?? t.count)))) throttled.add(t.name);
    });
    unique = unique.filter((t) => !throttled.has(t.name));
  }
  const results =
    unique.length > 0
      ? await controller.createPartitions(
          unique.map((t) => ({ name: t.name, count: t.count, assignments: t.assignments ? t.assignments.map((a) => ({ brokerIds: a.brokerIds })) : null })),
          req.validateOnly,
        )
      : [];
  if (results.length > 0 && results.every((r) => r.errorCode === ErrorCode.POLICY_VIOLATION && r.errorMessage === EXCESSIVE_PARTITIONS_MESSAGE)) {
    return req.topics.map((t) => ({ name: t.name, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_PARTITIONS_MESSAGE }));
  }
  const byName = new Map(results.map((r, i) => [unique[i].name, r]));
  const answered = new Set<string>();
  const out: { name: string; errorCode: number; errorMessage: string | null }[] = [];
  for (const t of req.topics) {
    if (answered.has(t.name)) continue;
    answered.add(t.name);
    const r = byName.get(t.name);
    if (throttled.has(t.name)) {
      out.push({ name: t.name, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE });
      continue;
    }
    if (counts.get(t.name) === 1 && !authorized.has(t.name)) {
      out.push({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null });
      continue;
    }
    out.push(r ? { name: t.name, errorCode: r.errorCode, errorMessage: r.errorMessage } : { name: t.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: DUPLICATE_TOPIC_NAME });
  }
  return out;
}

export const createPartitionsHandler = defineHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle(broker, ctx, req) {
    const mutation = broker.quotas.controllerMutation.newQuotaFor(ctx.principal.name, ctx.clientId ?? '', ctx.apiVersion >= 3);
    const results = await createPartitionsAnswers(
      broker.controller,
      req,
      { mutation, currentCount: (topic) => broker.metadata.topic(topic)?.partitions.size },
      alterableTopics(authHelper(broker.authorizer, ctx)),
    );
    ctx.throttle(mutation.throttleTimeMs());
    return { results };
  },
});
