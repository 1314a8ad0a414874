/**
 * Heartbeat (12), v0-4.
 * Keeps a classic group member's session alive (each heartbeat restarts its session timeout) and
 * tells it when to rejoin: REBALANCE_IN_PROGRESS while the group prepares a rebalance.
 * Errors as Kafka: UNKNOWN_MEMBER_ID (unknown group or member, or an Empty group),
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION, INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE,
 * NOT_COORDINATOR; while the coordinator is loading the group the heartbeat is answered NONE.
 * Version notes: v3+ group_instance_id.
 * Authorization (KafkaApis.handleHeartbeatRequest): READ on the GROUP, else
 * GROUP_AUTHORIZATION_FAILED.
 */
import type { HeartbeatRequest, HeartbeatResponse } from '../../protocol/generated/heartbeat';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const heartbeatHandler = defineHandler<HeartbeatRequest, HeartbeatResponse>({
  apiKey: ApiKey.Heartbeat,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, ctx, req) {
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    }
    const errorCode = await broker.groupCoordinator.heartbeat(
      req.groupId,
      req.memberId,
      ctx.apiVersion >= 3 ? req.groupInstanceId : null,
      req.generationId,
    );
    return { errorCode };
  },
});
