/**
 * SyncGroup (14), v0-5.
 * The classic rebalance protocol's sync phase: the leader sends every member's assignment; the
 * group is persisted to __consumer_offsets (GroupMetadataValue with the assignments), becomes
 * Stable and every parked SyncGroup gets its member's assignment (members the leader left out get
 * an empty one). Followers' SyncGroups are parked until then; in a Stable group a SyncGroup gets
 * the current assignment at once. Members that do not sync within the rebalance timeout are
 * removed and the group rebalances.
 * Errors as Kafka: UNKNOWN_MEMBER_ID (unknown group or member, or an Empty group),
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL (v5+ type/name that differ
 * from the group's), REBALANCE_IN_PROGRESS (a rebalance started, also while the coordinator
 * loads), INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
 * Version notes: v3+ group_instance_id; v5+ protocol type and name in request and response.
 * Authorization (KafkaApis.handleSyncGroupRequest): READ on the GROUP, else
 * GROUP_AUTHORIZATION_FAILED with an empty assignment.
 */
import type { SyncGroupRequest, SyncGroupResponse } from '../../protocol/generated/sync-group';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const syncGroupHandler = defineHandler<SyncGroupRequest, SyncGroupResponse>({
  apiKey: ApiKey.SyncGroup,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment: Buffer.alloc(0) };
    }
    const pending = broker.groupCoordinator.syncGroup({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: v >= 3 ? req.groupInstanceId : null,
      protocolType: v >= 5 ? req.protocolType : null,
      protocolName: v >= 5 ? req.protocolName : null,
      assignments: req.assignments.map((a) => ({ memberId: a.memberId, assignment: a.assignment })),
    });
    // The member now waits for the rebalance: it gives back its queued.max.requests slot.
    ctx.parked();
    const r = await pending;
    return {
      errorCode: r.errorCode,
      protocolType: v >= 5 ? r.protocolType : undefined,
      protocolName: v >= 5 ? r.protocolName : undefined,
      assignment: r.assignment,
    };
  },
});
