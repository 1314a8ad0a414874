/**
 * JoinGroup (11), v0-9.
 * The classic rebalance protocol's join phase (GroupCoordinator.joinGroup): a new member of an
 * Empty group starts a rebalance (after group.initial.rebalance.delay.ms, extended while members
 * keep arriving); the request is parked until every known member has rejoined or the rebalance
 * timeout ends, then every member gets the new generation, the selected protocol (the one all
 * members support with the most first-choice votes) and the leader, and the leader also gets every
 * member's metadata.
 * Errors as Kafka: INVALID_GROUP_ID (empty id), INVALID_SESSION_TIMEOUT (outside
 * group.min/max.session.timeout.ms), UNKNOWN_MEMBER_ID, INCONSISTENT_GROUP_PROTOCOL (empty protocol
 * type or no protocols for a new group; a different type or no common protocol for an existing
 * one), GROUP_MAX_SIZE_REACHED, FENCED_INSTANCE_ID, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS.
 * Version notes: v0 has no rebalance timeout (the session timeout is used). v0-3 assign the member
 * id in the first response; v4+ answer a new dynamic member MEMBER_ID_REQUIRED with its id first.
 * v5+ group_instance_id (static membership: a known instance rejoining a Stable group takes over
 * its member id without a rebalance). v7+ protocol type in the response (null protocol name on
 * errors; "" before v7). v8+ reason (logged). v9+ skip_assignment for a rejoining static leader.
 * Authorization (KafkaApis.handleJoinGroupRequest): READ on the GROUP, checked first, else
 * GROUP_AUTHORIZATION_FAILED with generation -1, empty member and leader ids, no members, and a
 * null protocol name (v7+; "" before).
 */
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/generated/join-group';
import { ApiKey } from '../../protocol/generated';
import { clientHost } from './client-host';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const joinGroupHandler = defineHandler<JoinGroupRequest, JoinGroupResponse>({
  apiKey: ApiKey.JoinGroup,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 9,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      // JoinGroupRequest.getErrorResponse.
      return {
        errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
        generationId: -1,
        protocolName: v >= 7 ? null : '',
        leader: '',
        memberId: '',
        members: [],
      };
    }
    const pending = broker.groupCoordinator.joinGroup({
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: v >= 5 ? req.groupInstanceId : null,
      protocolType: req.protocolType,
      // Copies: the group keeps them long after this request's buffer is gone.
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: v >= 1 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      clientId: ctx.clientId ?? '',
      clientHost: clientHost(ctx),
      requireKnownMemberId: v >= 4,
      supportSkippingAssignment: v >= 9,
      reason: v >= 8 ? req.reason : null,
    });
    // The member now waits for the rebalance: it gives back its queued.max.requests slot.
    ctx.parked();
    const r = await pending;
    return {
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: v >= 7 ? r.protocolType : undefined,
      protocolName: v >= 7 ? r.protocolName : (r.protocolName ?? ''),
      leader: r.leader,
      skipAssignment: v >= 9 ? r.skipAssignment : undefined,
      memberId: r.memberId,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
    };
  },
});
