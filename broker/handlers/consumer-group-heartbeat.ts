/**
 * ConsumerGroupHeartbeat (68), v0-1.
 * The KIP-848 consumer group protocol (GroupCoordinator.consumerGroupHeartbeat over
 * ConsumerGroupManager): a member joins with epoch 0, heartbeats with its epoch, and gets back its
 * member epoch, the heartbeat interval (group.consumer.heartbeat.interval.ms) and, when it sent a
 * full request or its assignment changed, the partitions it owns now (revocations come first: a
 * member keeps its epoch until it reports the revoked partitions gone). Epoch -1 leaves; -2 is a
 * static member's temporary leave.
 * Errors as Kafka: INVALID_REQUEST with Kafka's messages (empty group id / instance id / rack id /
 * member id, missing RebalanceTimeoutMs, non-empty TopicPartitions or no subscription on a join,
 * -2 without an instance id, an epoch below -2), INVALID_REGULAR_EXPRESSION, UNSUPPORTED_ASSIGNOR,
 * GROUP_ID_NOT_FOUND (unknown group, or a classic group under the id), UNKNOWN_MEMBER_ID,
 * FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
 * COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS; errors carry Kafka's
 * message and leave the member id null.
 * Version notes: v1 (KIP-1082, stable in Kafka 4.0, the version librdkafka 2.12 sends) adds
 * SubscribedTopicRegex and requires the client to generate its member id; v0 lets the coordinator
 * generate it on the first join.
 * Not enabled (group.version 0, or `consumer` missing from group.coordinator.rebalance.protocols):
 * UNSUPPORTED_VERSION, before authorization, as Kafka.
 * Authorization (KafkaApis.handleConsumerGroupHeartbeatRequest): READ on the GROUP, else
 * GROUP_AUTHORIZATION_FAILED; then DESCRIBE on every subscribed topic name, else
 * TOPIC_AUTHORIZATION_FAILED (nothing is changed in the group).
 */
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../protocol/generated/consumer-group-heartbeat';
import { ApiKey } from '../../protocol/generated';
import { clientHost } from './client-host';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { consumerGroupProtocolEnabled } from './consumer-group-protocol';

export const consumerGroupHeartbeatHandler = defineHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse>({
  apiKey: ApiKey.ConsumerGroupHeartbeat,
  name: 'ConsumerGroupHeartbeat',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, ctx, req) {
    if (!consumerGroupProtocolEnabled(broker)) {
      return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: null, memberId: null, assignment: null };
    }
    const auth = authHelper(broker.authorizer, ctx);
    if (!auth.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: null, memberId: null, assignment: null };
    }
    const names = req.subscribedTopicNames;
    if (names !== null && names.length > 0) {
      const authorized = auth.filterByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names, (n) => n);
      if (authorized.size < new Set(names).size) {
        return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, memberId: null, assignment: null };
      }
    }
    const r = await broker.groupCoordinator.consumerGroupHeartbeat({
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      instanceId: req.instanceId,
      rackId: req.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: names,
      subscribedTopicRegex: ctx.apiVersion >= 1 ? req.subscribedTopicRegex : null,
      serverAssignor: req.serverAssignor,
      topicPartitions: req.topicPartitions === null ? null : req.topicPartitions.map((t) => ({ topicId: t.topicId, partitions: t.partitions })),
      clientId: ctx.clientId ?? '',
      clientHost: clientHost(ctx),
      apiVersion: ctx.apiVersion,
    });
    return r;
  },
});
