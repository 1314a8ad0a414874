/**
 * AlterPartition (56), v0-3.
 * A partition leader asks to change its ISR. Validated as Kafka's controller does (see
 * Controller.alterPartition): FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, NOT_CONTROLLER (epochs
 * newer than ours), INVALID_REQUEST (not the leader, bad ISR), INELIGIBLE_REPLICA (fenced,
 * shutting down or stale-epoch members; OPERATION_NOT_ATTEMPTED for v0-1), UNKNOWN_TOPIC_ID (v2+)
 * / UNKNOWN_TOPIC_OR_PARTITION, STALE_BROKER_EPOCH for the sender (top level). Accepted changes are
 * committed together; each answer carries the new ISR and partition epoch.
 * Version notes: topics by name v0-1, by id v2+; leader_recovery_state v1+; new_isr_with_epochs v3
 * (member broker epochs are checked), new_isr before that.
 * Authorization (ControllerApis.handleAlterPartitionRequest): CLUSTER_ACTION on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED at the top level with no topics, and no ISR changes.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../../protocol/errors';
import type { AlterPartitionRequest, AlterPartitionResponse } from '../../../protocol/generated/alter-partition';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { authHelper } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';

export const alterPartitionHandler = defineControllerHandler<AlterPartitionRequest, AlterPartitionResponse>({
  apiKey: ApiKey.AlterPartition,
  name: 'AlterPartition',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.CLUSTER_ACTION)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, topics: [] };
    try {
      const r = await node.controller.alterPartition(
        {
          brokerId: req.brokerId,
          brokerEpoch: req.brokerEpoch,
          topics: req.topics.map((t) => ({
            topicName: v < 2 ? t.topicName : null,
            topicId: v >= 2 ? t.topicId : null,
            partitions: t.partitions.map((p) => ({
              partitionIndex: p.partitionIndex,
              leaderEpoch: p.leaderEpoch,
              partitionEpoch: p.partitionEpoch,
              leaderRecoveryState: p.leaderRecoveryState,
              newIsrWithEpochs: v >= 3 ? p.newIsrWithEpochs : p.newIsr.map((id) => ({ brokerId: id, brokerEpoch: -1n })),
            })),
          })),
        },
        v,
      );
      return {
        errorCode: r.errorCode,
        topics: r.topics.map((t) => ({
          topicName: v < 2 ? t.topicName : undefined,
          topicId: v >= 2 ? t.topicId : undefined,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: p.errorCode,
            leaderId: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            isr: p.isr,
            leaderRecoveryState: v >= 1 ? p.leaderRecoveryState : undefined,
            partitionEpoch: p.partitionEpoch,
          })),
        })),
      };
    } catch (err) {
      if (!(err instanceof KafkaError)) node.logger.error('AlterPartition failed', { brokerId: req.brokerId, err });
      return { errorCode: toErrorCode(err), topics: [] };
    }
  },
});
