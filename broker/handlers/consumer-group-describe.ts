/**
 * ConsumerGroupDescribe (69), v0-1.
 * KIP-848 consumer groups as Kafka's ConsumerGroup.asDescribedGroup shows them: state (Empty,
 * Assigning, Reconciling, Stable), group epoch, target assignment epoch, the assignor in use (the
 * one most members asked for, else the first of group.consumer.assignors), and every member with
 * its instance id, rack, epoch, client id and host, subscribed topic names (sorted) and regex, its
 * current assignment and its target assignment (topic id, name and partitions; topics that no
 * longer exist are left out). One answer per group id asked, in request order after the denied ones.
 * Errors per group as Kafka: GROUP_ID_NOT_FOUND (unknown, or a classic group: "Group <id> is not a
 * consumer group."), INVALID_GROUP_ID (empty id), COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS.
 * Authorization (KafkaApis.handleConsumerGroupDescribe): DESCRIBE on each GROUP, else that group is
 * GROUP_AUTHORIZATION_FAILED; a described group whose members subscribe to or are assigned topics
 * the principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED with Kafka's message. With
 * include_authorized_operations the groups described without error carry the principal's
 * operations on them (else Kafka's "not requested" value).
 * Version notes: v1 (KIP-1099, Kafka 4.0) adds each member's type: 0 for a member speaking the
 * classic protocol inside the consumer group, 1 for the consumer protocol.
 */
import type { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse } from '../../protocol/generated/consumer-group-describe';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { AUTHORIZED_OPERATIONS_OMITTED, authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { defineHandler } from './define-handler';
import { describedConsumerGroupError } from '../../coordinator/group/consumer-group-manager';
import { consumerGroupProtocolEnabled } from './consumer-group-protocol';

const denied = (groupId: string, errorCode: number, errorMessage: string | null = null) => ({
  ...describedConsumerGroupError(groupId, errorCode, errorMessage),
  authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
});

export const consumerGroupDescribeHandler = defineHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse>({
  apiKey: ApiKey.ConsumerGroupDescribe,
  name: 'ConsumerGroupDescribe',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, ctx, req) {
    // Not enabled (group.version 0, ...): every group UNSUPPORTED_VERSION, as Kafka.
    if (!consumerGroupProtocolEnabled(broker)) return { groups: req.groupIds.map((g) => denied(g, ErrorCode.UNSUPPORTED_VERSION)) };
    const auth = authHelper(broker.authorizer, ctx);
    const [describable, notAllowed] = auth.partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.GROUP, req.groupIds, (g) => g);
    const described = await Promise.all(describable.map((g) => broker.groupCoordinator.consumerGroupDescribe(g)));
    return {
      groups: [
        ...notAllowed.map((g) => denied(g, ErrorCode.GROUP_AUTHORIZATION_FAILED)),
        ...described.map((g) => {
          if (g.errorCode !== ErrorCode.NONE) return { ...g, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
          const topics = new Set<string>();
          for (const m of g.members) {
            for (const t of m.subscribedTopicNames) topics.add(t);
            for (const a of [m.assignment, m.targetAssignment]) for (const t of a.topicPartitions) topics.add(t.topicName);
          }
          const allowed = auth.filterByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, topics, (t) => t);
          if (allowed.size < topics.size) {
            return denied(g.groupId, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The described group uses topics that the client is not authorized to describe.');
          }
          return {
            ...g,
            members: g.members.map((m) => ({ ...m, memberType: ctx.apiVersion >= 1 ? m.memberType : undefined })),
            authorizedOperations: req.includeAuthorizedOperations ? auth.authorizedOperations(ResourceType.GROUP, g.groupId) : AUTHORIZED_OPERATIONS_OMITTED,
          };
        }),
      ],
    };
  },
});
