/**
 * DeleteTopics (20), v0-6.
 * Deletes topics by name (topic_names, v0-5; topics[].name, v6+) or by topic id (v6+), with Kafka's
 * answers (ControllerApis.deleteTopics, which a KRaft broker forwards to):
 * - delete.topic.enable=false: every listing gets TOPIC_DELETION_DISABLED (INVALID_REQUEST before
 *   v3), without a message, and nothing is deleted;
 * - a v6 entry with both a name and an id: INVALID_REQUEST "You may not specify both topic name and
 *   topic id."; with neither: "Neither topic name nor id were specified.";
 * - a name or an id listed twice: one INVALID_REQUEST "Duplicate topic name." / "Duplicate topic
 *   id.", and that topic is not deleted; a name that resolves to an id also listed:
 *   "The provided topic name maps to an ID that was already supplied.";
 * - an unknown name UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID.
 * Internal topics (__consumer_offsets, __transaction_state) can be deleted: Kafka's brokers and
 * controller do not refuse it (only its admin tools do); the coordinators resign their partitions
 * and FindCoordinator creates the topic again with its own specs.
 * Controller mutation quotas (KIP-599, strict from v5): a deletion takes its topic's partitions
 * from the client's controller_mutation_rate; one over it gets THROTTLING_QUOTA_EXCEEDED, and the
 * response carries the throttle time.
 * Each partition's log directory is renamed with a -delete suffix and removed in the background,
 * as Kafka does.
 * Authorization (ControllerApis.deleteTopics, which KRaft brokers forward to): DELETE on the
 * CLUSTER (denial not logged) allows every topic; otherwise DESCRIBE and DELETE on each TOPIC. A
 * topic named without DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether it exists or not; with
 * DESCRIBE but not DELETE, an unknown name is UNKNOWN_TOPIC_OR_PARTITION and a known one
 * TOPIC_AUTHORIZATION_FAILED. An unknown id is UNKNOWN_TOPIC_ID (ids are not secret); a known id
 * without DELETE is TOPIC_AUTHORIZATION_FAILED, with the topic's name only when it may be
 * described. Authorization failures carry Kafka's "Topic authorization failed.".
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../protocol/generated/delete-topics';
import { ApiKey } from '../../protocol/generated';
import type { ControllerApi } from '../../metadata/controller/controller';
import { DUPLICATE_TOPIC_NAME } from '../../metadata/controller/controller';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { defineHandler } from './define-handler';
import { THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ControllerMutationQuota } from '../quota/controller-mutation-quota';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** What DeleteTopics may do for the requester (ControllerApis.deleteTopics' inputs). */
export interface DeleteTopicsAuthorization {
  /** [describable, deletable] among the names. */
  check(names: readonly string[]): [Set<string>, Set<string>];
}

/** The requester's DeleteTopics permissions, as ControllerApis.handleDeleteTopics asks them. */
export function deleteTopicsAuthorization(auth: AuthHelper): DeleteTopicsAuthorization {
  return {
    check: (names) => {
      if (auth.authorizeCluster(AclOperation.DELETE, { logIfDenied: false })) return [new Set(names), new Set(names)];
      return [
        auth.filterByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names, (n) => n),
        auth.filterByAuthorized(AclOperation.DELETE, ResourceType.TOPIC, names, (n) => n),
      ];
    },
  };
}

const UNRESTRICTED: DeleteTopicsAuthorization = { check: (names) => [new Set(names), new Set(names)] };
const TOPIC_AUTHORIZATION_FAILED_MESSAGE = AUTHORIZATION_ERROR_MESSAGE[ErrorCode.TOPIC_AUTHORIZATION_FAILED];

export interface DeleteTopicAnswer {
  name: string | null;
  /** ZERO_UUID when not known. */
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

/**
 * What the broker's and the controller listener's DeleteTopics share: the request's listings as
 * (name, id) pairs, then the answers in order of the listings they answer (Kafka shuffles them;
 * clients match by name or id).
 */
export async function deleteTopicsAnswers(
  controller: ControllerApi,
  metadata: Pick<MetadataCache, 'topic' | 'topicById'>,
  deletionEnabled: boolean,
  version: number,
  req: DeleteTopicsRequest,
  /** The client's controller mutation quota (the broker listener; the controller listener has none). */
  quota?: ControllerMutationQuota,
  authorization: DeleteTopicsAuthorization = UNRESTRICTED,
): Promise<DeleteTopicAnswer[]> {
  const listings: { name: string | null; topicId: string }[] =
    version >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId })) : req.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  if (!deletionEnabled) {
    const errorCode = version < 3 ? ErrorCode.INVALID_REQUEST : ErrorCode.TOPIC_DELETION_DISABLED;
    return listings.map((l) => ({ name: l.name, topicId: l.topicId, errorCode, errorMessage: null }));
  }
  const fail = (name: string | null, topicId: string, errorCode: number, errorMessage: string | null): DeleteTopicAnswer => ({ name, topicId, errorCode, errorMessage });
  const nameCounts = new Map<string, number>();
  const idCounts = new Map<string, number>();
  for (const l of listings) {
    if (l.name !== null && l.topicId === ZERO_UUID) nameCounts.set(l.name, (nameCounts.get(l.name) ?? 0) + 1);
    if (l.name === null && l.topicId !== ZERO_UUID) idCounts.set(l.topicId, (idCounts.get(l.topicId) ?? 0) + 1);
  }
  // One slot per listing; a listing whose answer is another's stays empty.
  const slots: (DeleteTopicAnswer | null)[] = listings.map(() => null);
  const answeredDuplicates = new Set<string>();
  const byName: { slot: number; name: string }[] = [];
  const byId = new Map<string, number>(); // topic id -> slot
  listings.forEach((l, slot) => {
    if (l.name === null && l.topicId === ZERO_UUID) {
      slots[slot] = fail(null, ZERO_UUID, ErrorCode.INVALID_REQUEST, 'Neither topic name nor id were specified.');
    } else if (l.name !== null && l.topicId !== ZERO_UUID) {
      slots[slot] = fail(l.name, l.topicId, ErrorCode.INVALID_REQUEST, 'You may not specify both topic name and topic id.');
    } else if (l.name !== null) {
      if (nameCounts.get(l.name)! === 1) byName.push({ slot, name: l.name });
      else if (!answeredDuplicates.has(`n:${l.name}`)) {
        answeredDuplicates.add(`n:${l.name}`);
        slots[slot] = fail(l.name, ZERO_UUID, ErrorCode.INVALID_REQUEST, DUPLICATE_TOPIC_NAME);
      }
    } else if (idCounts.get(l.topicId)! === 1) {
      byId.set(l.topicId, slot);
    } else if (!answeredDuplicates.has(`i:${l.topicId}`)) {
      answeredDuplicates.add(`i:${l.topicId}`);
      slots[slot] = fail(null, l.topicId, ErrorCode.INVALID_REQUEST, 'Duplicate topic id.');
    }
  });
  // Ids first (findTopicNames), then names (findTopicIds), as ControllerApis resolves them.
  for (const [id, slot] of [...byId]) {
    if (!metadata.topicById(id)) {
      slots[slot] = fail(null, id, ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.');
      byId.delete(id);
    }
  }
  // The authorizer needs names: those given, and those the known ids resolve to.
  const idNames = new Map<string, string>();
  for (const id of byId.keys()) idNames.set(id, metadata.topicById(id)!.name);
  const [describable, deletable] = authorization.check([...new Set([...byName.map((n) => n.name), ...idNames.values()])]);
  for (const [id, name] of idNames) {
    if (deletable.has(name)) continue;
    slots[byId.get(id)!] = fail(describable.has(name) ? name : null, id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED_MESSAGE);
    byId.delete(id);
  }
  const names: { slot: number; name: string }[] = [];
  for (const n of byName) {
    const t = metadata.topic(n.name);
    if (!describable.has(n.name)) {
      slots[n.slot] = fail(n.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED_MESSAGE);
    } else if (!t) {
      slots[n.slot] = fail(n.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    } else if (!deletable.has(n.name)) {
      slots[n.slot] = fail(n.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED_MESSAGE);
    } else if (byId.has(t.topicId) || idCounts.has(t.topicId)) {
      byId.delete(t.topicId);
      slots[n.slot] = fail(n.name, t.topicId, ErrorCode.INVALID_REQUEST, 'The provided topic name maps to an ID that was already supplied.');
    } else {
      names.push(n);
    }
  }
  let targets = [
    ...names.map((n) => ({ slot: n.slot, target: { name: n.name as string | null, topicId: null as string | null } })),
    ...[...byId].map(([topicId, slot]) => ({ slot, target: { name: null as string | null, topicId: topicId as string | null } })),
  ];
  if (quota?.bounded) {
    // KIP-599: each deletion takes its topic's partitions from the quota; over it, THROTTLING_QUOTA_EXCEEDED.
    targets = targets.filter((t) => {
      const topic = t.target.name !== null ? metadata.topic(t.target.name) : metadata.topicById(t.target.topicId!);
      if (quota.tryRecord(topic?.partitions.size ?? 0)) return true;
      slots[t.slot] = fail(t.target.name, topic?.topicId ?? t.target.topicId ?? ZERO_UUID, ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE);
      return false;
    });
  }
  if (targets.length > 0) {
    const results = await controller.deleteTopics(targets.map((t) => t.target));
    results.forEach((r, i) => {
      // A controller reached at a newer version says TOPIC_DELETION_DISABLED; a client before v3 does not know it.
      const errorCode = r.errorCode === ErrorCode.TOPIC_DELETION_DISABLED && version < 3 ? ErrorCode.INVALID_REQUEST : r.errorCode;
      slots[targets[i].slot] = { name: r.name, topicId: r.topicId || ZERO_UUID, errorCode, errorMessage: r.errorMessage };
    });
  }
  return slots.filter((s): s is DeleteTopicAnswer => s !== null);
}

export const deleteTopicsHandler = defineHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const quota = broker.quotas.controllerMutation.newQuotaFor(ctx.principal.name, ctx.clientId ?? '', v >= 5);
    const answers = await deleteTopicsAnswers(
      broker.controller,
      broker.metadata,
      broker.config.getBoolean('delete.topic.enable'),
      v,
      req,
      quota,
      deleteTopicsAuthorization(authHelper(broker.authorizer, ctx)),
    );
    ctx.throttle(quota.throttleTimeMs());
    return {
      responses: answers.map((a) => ({
        name: a.name,
        topicId: v >= 6 ? a.topicId : undefined,
        errorCode: a.errorCode,
        errorMessage: v >= 5 ? a.errorMessage : undefined,
      })),
    };
  },
});
