/**
 * ListGroups (16), v0-5.
 * The groups this broker coordinates (group id and protocol type). v4+ states_filter and group
 * state; v5+ types_filter and group type. Filters are case-insensitive. Classic groups are of type
 * "classic" (protocol type as they joined); KIP-848 consumer groups of type "consumer", protocol
 * type "consumer", states Empty / Assigning / Reconciling / Stable. COORDINATOR_LOAD_IN_PROGRESS
 * while an __consumer_offsets partition is still loading (the groups already loaded are listed).
 * Authorization (KafkaApis.handleListGroupsRequest): DESCRIBE on the CLUSTER lists every group;
 * without it only the groups the principal may DESCRIBE are listed (neither denial is logged).
 */
import type { ListGroupsRequest, ListGroupsResponse } from '../../protocol/generated/list-groups';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const listGroupsHandler = defineHandler<ListGroupsRequest, ListGroupsResponse>({
  apiKey: ApiKey.ListGroups,
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 5,
  handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    const hasClusterDescribe = auth.authorizeCluster(AclOperation.DESCRIBE, { logIfDenied: false });
    const r = broker.groupCoordinator.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
    const groups = hasClusterDescribe
      ? r.groups
      : r.groups.filter((g) => auth.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId, { logIfDenied: false }));
    return {
      errorCode: r.errorCode,
      groups: groups.map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType,
        groupState: v >= 4 ? g.groupState : undefined,
        groupType: v >= 5 ? g.groupType : undefined,
      })),
    };
  },
});
