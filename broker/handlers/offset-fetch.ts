/**
 * OffsetFetch (9), v0-9.
 * Committed offsets of a group: exactly the partitions asked, in request order, with -1 (offset and
 * leader epoch) and "" metadata for a partition without a committed offset (also for unknown
 * topics, for partitions that do not exist, such as a negative index, which Kafka does not check
 * either, and for unknown groups); every listing is answered; every committed offset when topics
 * is null (v2+). require_stable (v7+): a partition with an open transactional commit gets
 * UNSTABLE_OFFSET_COMMIT.
 * Group-level errors (INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS): v0-1 put them on every partition asked; v2-7 in the top-level
 * error with no topics; v8+ per group.
 * Version notes: v5+ leader epoch; v8+ batched groups (each answered on its own); v9 member
 * id/epoch, validated for KIP-848 consumer groups (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID as a
 * group-level error; no member id with epoch -1, the admin client, always passes) and ignored for
 * classic groups, as in Kafka.
 * Authorization (KafkaApis.handleOffsetFetchRequest): DESCRIBE on each GROUP, else
 * GROUP_AUTHORIZATION_FAILED as a group-level error (placed per version as above) and nothing is
 * read; then DESCRIBE on each TOPIC: topics asked without it are answered after the others with
 * TOPIC_AUTHORIZATION_FAILED (offset -1) on each partition asked, and when all topics are asked
 * (null) the topics without it are left out.
 */
import { ErrorCode } from '../../protocol/errors';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../../protocol/generated/offset-fetch';
import { ApiKey } from '../../protocol/generated';
import type { FetchedTopic } from '../../coordinator/group/offset-metadata-manager';
import { defineHandler } from './define-handler';
import type { Broker } from '../broker';
import { authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** One group's committed offsets, as the requester may see them (fetchOffsetsForGroup / fetchAllOffsetsForGroup). */
async function fetchAuthorized(
  broker: Broker,
  auth: AuthHelper,
  groupId: string,
  topics: { name: string; partitionIndexes: number[] }[] | null,
  requireStable: boolean,
  member?: { memberId: string | null; memberEpoch: number },
): Promise<{ errorCode: number; topics: FetchedTopic[] }> {
  if (!auth.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  const coordinator = broker.groupCoordinator;
  if (topics === null) {
    const r = await coordinator.fetchOffsets(groupId, null, requireStable, member);
    if (r.errorCode !== ErrorCode.NONE) return r;
    const [visible] = auth.partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, r.topics, (t) => t.name);
    return { errorCode: ErrorCode.NONE, topics: visible };
  }
  const [describable, denied] = auth.partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, topics, (t) => t.name);
  const r = await coordinator.fetchOffsets(groupId, describable, requireStable, member);
  if (r.errorCode !== ErrorCode.NONE) return r;
  const unauthorized = denied.map((t) => ({
    name: t.name,
    partitions: t.partitionIndexes.map((partitionIndex) => ({
      partitionIndex,
      committedOffset: -1n,
      committedLeaderEpoch: -1,
      metadata: '',
      errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    })),
  }));
  return { errorCode: ErrorCode.NONE, topics: [...r.topics, ...unauthorized] };
}

function shape(topics: FetchedTopic[], v: number) {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      committedOffset: p.committedOffset,
      committedLeaderEpoch: v >= 5 ? p.committedLeaderEpoch : undefined,
      metadata: p.metadata,
      errorCode: p.errorCode,
    })),
  }));
}

export const offsetFetchHandler = defineHandler<OffsetFetchRequest, OffsetFetchResponse>({
  apiKey: ApiKey.OffsetFetch,
  name: 'OffsetFetch',
  minVersion: 0,
  maxVersion: 9,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    const requireStable = v >= 7 && req.requireStable;
    if (v >= 8) {
      const groups = await Promise.all(
        req.groups.map(async (g) => {
          const member = v >= 9 ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : undefined;
          const r = await fetchAuthorized(broker, auth, g.groupId, g.topics, requireStable, member);
          return { groupId: g.groupId, errorCode: r.errorCode, topics: shape(r.topics, v) };
        }),
      );
      return { groups };
    }
    const topics = v >= 2 ? req.topics : (req.topics ?? []);
    const r = await fetchAuthorized(broker, auth, req.groupId, topics, requireStable);
    if (r.errorCode !== ErrorCode.NONE) {
      if (v >= 2) return { errorCode: r.errorCode, topics: [] };
      // v0-1 have no top-level error: every partition asked carries it.
      return {
        topics: (topics ?? []).map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1n, metadata: '', errorCode: r.errorCode })),
        })),
      };
    }
    return { errorCode: v >= 2 ? ErrorCode.NONE : undefined, topics: shape(r.topics, v) };
  },
});
