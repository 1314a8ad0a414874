/**
 * LeaveGroup (13), v0-5.
 * Removes members from a classic group; the others rebalance. Each member is identified by its
 * member id, or (administrative removal, v3+) by group_instance_id with an empty member id.
 * Per-member errors: UNKNOWN_MEMBER_ID (also for every member of an unknown group),
 * FENCED_INSTANCE_ID. Group-level: INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS.
 * Version notes: v0-2 carry one member id and one error code (the group's error, else the
 * member's); v3+ batch members with per-member results; v5+ reason (logged).
 * Authorization (KafkaApis.handleLeaveGroupRequest): READ on the GROUP, else
 * GROUP_AUTHORIZATION_FAILED (top level, no members) and nobody leaves.
 */
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../protocol/generated/leave-group';
import { ErrorCode } from '../../protocol/errors';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const leaveGroupHandler = defineHandler<LeaveGroupRequest, LeaveGroupResponse>({
  apiKey: ApiKey.LeaveGroup,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    }
    const members =
      v >= 3
        ? req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, reason: v >= 5 ? m.reason : null }))
        : [{ memberId: req.memberId, groupInstanceId: null, reason: null }];
    const r = await broker.groupCoordinator.leaveGroup(req.groupId, members);
    if (v < 3) {
      const memberError = r.members.find((m) => m.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
      return { errorCode: r.errorCode !== ErrorCode.NONE ? r.errorCode : memberError };
    }
    return { errorCode: r.errorCode, members: r.members };
  },
});
