/**
 * BrokerHeartbeat (63), v0-1.
 * Keeps a broker's session alive and moves it through Kafka's states: fenced until it has caught
 * up with its own registration, unfenced, controlled shutdown (its leaderships move at once), and
 * shut down (fenced, should_shut_down). Unknown broker: BROKER_ID_NOT_REGISTERED; an old broker
 * epoch: STALE_BROKER_EPOCH. offline_log_dirs (v1) is accepted and not used yet.
 * Authorization (ControllerApis.handleBrokerHeartBeatRequest): CLUSTER_ACTION on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED (the other fields at their defaults: fenced) and the session is not
 * renewed.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../../protocol/errors';
import type { BrokerHeartbeatRequest, BrokerHeartbeatResponse } from '../../../protocol/generated/broker-heartbeat';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { authHelper } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';

export const brokerHeartbeatHandler = defineControllerHandler<BrokerHeartbeatRequest, BrokerHeartbeatResponse>({
  apiKey: ApiKey.BrokerHeartbeat,
  name: 'BrokerHeartbeat',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, ctx, req) {
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.CLUSTER_ACTION)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    try {
      const r = await node.controller.heartbeat({
        brokerId: req.brokerId,
        brokerEpoch: req.brokerEpoch,
        currentMetadataOffset: req.currentMetadataOffset,
        wantFence: req.wantFence,
        wantShutDown: req.wantShutDown,
      });
      return { errorCode: ErrorCode.NONE, isCaughtUp: r.isCaughtUp, isFenced: r.isFenced, shouldShutDown: r.shouldShutDown };
    } catch (err) {
      if (!(err instanceof KafkaError)) node.logger.error('broker heartbeat failed', { brokerId: req.brokerId, err });
      return { errorCode: toErrorCode(err), isCaughtUp: false, isFenced: true, shouldShutDown: false };
    }
  },
});
