/**
 * DescribeGroups (15), v0-5.
 * Per group: state (Empty, PreparingRebalance, CompletingRebalance, Stable; "Dead" for a group
 * that does not exist), protocol type, selected protocol, and members (member id, client id,
 * client host as "/address"); member metadata and assignment only while the group is Stable.
 * A KIP-848 consumer group is answered as Kafka 4.0 answers DescribeGroups v0-5 for it: protocol
 * type "consumer", its state (Empty, Assigning, Reconciling, Stable), no protocol, its members with
 * empty metadata and assignment (Kafka answers GROUP_ID_NOT_FOUND only from v6, which krill does
 * not advertise).
 * Group-level errors per group: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS.
 * Version notes: v3+ authorized operations (when asked: the bit field of the principal's
 * operations on each group answered without an error; else Kafka's "not requested" value); v4+
 * group_instance_id of static members.
 * Authorization (KafkaApis.handleDescribeGroupsRequest): DESCRIBE on each GROUP; a group without
 * it is GROUP_AUTHORIZATION_FAILED with an empty state, protocol type and protocol, no members and
 * no authorized operations, listed before the described groups, as Kafka answers.
 */
import type { DescribeGroupsRequest, DescribeGroupsResponse } from '../../protocol/generated/describe-groups';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { AUTHORIZED_OPERATIONS_OMITTED, authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { defineHandler } from './define-handler';

export const describeGroupsHandler = defineHandler<DescribeGroupsRequest, DescribeGroupsResponse>({
  apiKey: ApiKey.DescribeGroups,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    const [describable, denied] = auth.partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.GROUP, req.groups, (g) => g);
    const described = await Promise.all(describable.map((g) => broker.groupCoordinator.describeGroup(g)));
    const includeOps = v >= 3 && req.includeAuthorizedOperations;
    return {
      groups: [
        // DescribeGroupsResponse.groupError.
        ...denied.map((groupId) => ({
          groupId,
          errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
          groupState: '',
          protocolType: '',
          protocolData: '',
          members: [],
          authorizedOperations: v >= 3 ? AUTHORIZED_OPERATIONS_OMITTED : undefined,
        })),
        ...described.map((g) => ({
          ...g,
          authorizedOperations:
            v >= 3 ? (includeOps && g.errorCode === ErrorCode.NONE ? auth.authorizedOperations(ResourceType.GROUP, g.groupId) : AUTHORIZED_OPERATIONS_OMITTED) : undefined,
        })),
      ],
    };
  },
});
