/**
 * BrokerRegistration (62), v0-4.
 * A broker joins the cluster: another cluster's id is INCONSISTENT_CLUSTER_ID; an id whose
 * previous incarnation still holds a live session is DUPLICATE_BROKER_REGISTRATION (the broker
 * retries until that session expires). The new registration starts fenced; the answer carries the
 * broker epoch every later heartbeat, AlterPartition and follower fetch quotes.
 * Version notes: is_migrating_zk_broker v1+, log_dirs v2+, previous_broker_epoch v3+ (accepted,
 * not used: krill fences a restarted broker's old incarnation whether or not it shut down cleanly).
 * Authorization (ControllerApis.handleBrokerRegistration): CLUSTER_ACTION on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED and nothing is registered.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../../protocol/errors';
import type { BrokerRegistrationRequest, BrokerRegistrationResponse } from '../../../protocol/generated/broker-registration';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { authHelper } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';

export const brokerRegistrationHandler = defineControllerHandler<BrokerRegistrationRequest, BrokerRegistrationResponse>({
  apiKey: ApiKey.BrokerRegistration,
  name: 'BrokerRegistration',
  minVersion: 0,
  maxVersion: 4,
  async handle(node, ctx, req) {
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.CLUSTER_ACTION)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    try {
      if (req.clusterId !== node.clusterId) {
        throw new KafkaError(ErrorCode.INCONSISTENT_CLUSTER_ID, `Expected cluster ID ${node.clusterId}, but got cluster ID ${req.clusterId}`);
      }
      const brokerEpoch = await node.controller.registerBroker({
        brokerId: req.brokerId,
        incarnationId: req.incarnationId,
        endpoints: req.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
        rack: req.rack,
        logDirs: req.logDirs,
        features: req.features.map((f) => ({ name: f.name, minSupportedVersion: f.minSupportedVersion, maxSupportedVersion: f.maxSupportedVersion })),
      });
      return { errorCode: ErrorCode.NONE, brokerEpoch };
    } catch (err) {
      if (!(err instanceof KafkaError)) node.logger.error('broker registration failed', { brokerId: req.brokerId, err });
      return { errorCode: toErrorCode(err), brokerEpoch: -1n };
    }
  },
});
