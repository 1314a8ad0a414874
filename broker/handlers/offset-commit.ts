/**
 * OffsetCommit (8), v0-9.
 * Stores committed offsets in __consumer_offsets (OffsetCommitKey/Value records, one batch per
 * request) and answers every partition asked. Partitions of topics or partitions that do not exist
 * get UNKNOWN_TOPIC_OR_PARTITION (never stored); metadata longer than offset.metadata.max.bytes gets
 * OFFSET_METADATA_TOO_LARGE. Who may commit follows Kafka's classic group rules: generation -1 with
 * no member id is accepted for an Empty or unknown group (admin client, consumers with assigned
 * partitions; an unknown group is created as a "simple" group), otherwise the member must belong
 * to the group (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) in the current generation
 * (ILLEGAL_GENERATION); a group completing a rebalance answers REBALANCE_IN_PROGRESS. A generation
 * for a group that does not exist: ILLEGAL_GENERATION (v9+: GROUP_ID_NOT_FOUND). A KIP-848
 * consumer group (ConsumerGroupManager.validateOffsetCommit) takes commits with a negative epoch only
 * while it has no members; otherwise the member must exist (UNKNOWN_MEMBER_ID), commit with v9+
 * (UNSUPPORTED_VERSION) and send its current member epoch in generation_id_or_member_epoch
 * (STALE_MEMBER_EPOCH). Group-level
 * errors (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) go to every
 * partition that exists.
 * Version notes: v0 has no generation/member (taken as -1/""); v1 per-partition commit timestamp;
 * v2-4 retention_time_ms (an explicit expiry, OffsetCommitValue v1); v6+ leader epoch; v7+
 * group_instance_id.
 * Authorization (KafkaApis.handleOffsetCommitRequest): READ on the GROUP, else every partition
 * asked is GROUP_AUTHORIZATION_FAILED and nothing is stored; then READ on each TOPIC, every
 * partition of a topic without it TOPIC_AUTHORIZATION_FAILED (before the existence checks).
 */
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../protocol/generated/offset-commit';
import { ApiKey } from '../../protocol/generated';
import { commitToExistingPartitions } from './commit-to-existing-partitions';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const offsetCommitHandler = defineHandler<OffsetCommitRequest, OffsetCommitResponse>({
  apiKey: ApiKey.OffsetCommit,
  name: 'OffsetCommit',
  minVersion: 0,
  maxVersion: 9,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    if (!auth.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      // OffsetCommitRequest.getErrorResponse: every partition asked.
      const errorCode = ErrorCode.GROUP_AUTHORIZATION_FAILED;
      return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })) };
    }
    const readable = auth.filterByAuthorized(AclOperation.READ, ResourceType.TOPIC, req.topics, (t) => t.name);
    const topics = await commitToExistingPartitions(
      broker.metadata,
      req.topics,
      (p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: p.committedOffset,
        committedLeaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
        commitTimestamp: v === 1 ? p.commitTimestamp : -1n,
        committedMetadata: p.committedMetadata,
      }),
      (valid) =>
        broker.groupCoordinator.commitOffsets({
          groupId: req.groupId,
          memberId: v >= 1 ? req.memberId : '',
          groupInstanceId: v >= 7 ? req.groupInstanceId : null,
          generationId: v >= 1 ? req.generationIdOrMemberEpoch : -1,
          retentionTimeMs: v >= 2 && v <= 4 ? req.retentionTimeMs : -1n,
          apiVersion: v,
          topics: valid,
        }),
      readable,
    );
    return { topics };
  },
});
