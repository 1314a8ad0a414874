/**
 * DescribeGroups (15), v0-5.
 * Per group: state (Empty, PreparingRebalance, CompletingRebalance, Stable; "Dead" for a group
 * that does not exist), protocol type, selected protocol, and members (member id, client id,
 * client host as "/address"); member metadata and assignment only while the group is Stable.
 * Group-level errors per group: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS.
 * Version notes: v3+ authorized operations (every group operation when asked: no ACLs yet);
 * v4+ group_instance_id of static members.
 */
import type { DescribeGroupsRequest, DescribeGroupsResponse } from '../../protocol/generated/describe-groups';
import { ApiKey } from '../../protocol/generated';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_ALL_OPERATIONS } from './acl-operations';
import { defineHandler } from './define-handler';

export const describeGroupsHandler = defineHandler<DescribeGroupsRequest, DescribeGroupsResponse>({
  apiKey: ApiKey.DescribeGroups,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const described = await Promise.all(req.groups.map((g) => broker.groupCoordinator.describeGroup(g)));
    return {
      groups: described.map((g) => ({
        ...g,
        authorizedOperations: v >= 3 ? (req.includeAuthorizedOperations ? GROUP_ALL_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED) : undefined,
      })),
    };
  },
});
