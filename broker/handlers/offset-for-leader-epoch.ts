/**
 * OffsetForLeaderEpoch (23), v0-4.
 * For each partition this broker leads: the end offset of the requested leader epoch in its log
 * (the LEO for the current epoch, else the start offset of the next higher epoch) and the largest
 * epoch <= the requested one (v1+); -1 / -1 when the log cannot tell. Followers ask this before
 * fetching from a new leader and truncate to the answer; consumers use it to validate positions
 * after a leader change (KIP-320).
 * Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH /
 * UNKNOWN_LEADER_EPOCH (current_leader_epoch, v2+), KAFKA_STORAGE_ERROR.
 * Version notes: leader_epoch in the response from v1, current_leader_epoch v2+, replica_id v3+.
 * Authorization (KafkaApis.handleOffsetForLeaderEpochRequest): CLUSTER_ACTION on the CLUSTER
 * (brokers; asked without logging a denial) allows every topic; otherwise DESCRIBE on each TOPIC
 * (consumers, KIP-320), every partition of a topic without it TOPIC_AUTHORIZATION_FAILED (leader
 * epoch and end offset -1), answered after the authorized topics.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from '../../protocol/generated/offset-for-leader-epoch';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const offsetForLeaderEpochHandler = defineHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>({
  apiKey: ApiKey.OffsetForLeaderEpoch,
  name: 'OffsetForLeaderEpoch',
  minVersion: 0,
  maxVersion: 4,
  handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    const [allowed, denied] = auth.authorizeCluster(AclOperation.CLUSTER_ACTION, { logIfDenied: false })
      ? [req.topics, []]
      : auth.partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, req.topics, (t) => t.topic);
    const unauthorized = denied.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => ({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition: p.partition, leaderEpoch: v >= 1 ? -1 : undefined, endOffset: -1n })),
    }));
    const answered = allowed.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => {
        try {
          const r = broker.replicaManager.lastOffsetForLeaderEpoch(t.topic, p.partition, v >= 2 ? p.currentLeaderEpoch : -1, p.leaderEpoch);
          return { errorCode: ErrorCode.NONE, partition: p.partition, leaderEpoch: v >= 1 ? r.leaderEpoch : undefined, endOffset: r.endOffset };
        } catch (err) {
          if (!(err instanceof KafkaError)) broker.logger.error('OffsetForLeaderEpoch failed', { topic: t.topic, partition: p.partition, err });
          return { errorCode: toErrorCode(err), partition: p.partition, leaderEpoch: v >= 1 ? -1 : undefined, endOffset: -1n };
        }
      }),
    }));
    return { topics: [...answered, ...unauthorized] };
  },
});
