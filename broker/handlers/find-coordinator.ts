/**
 * FindCoordinator (10), v0-6.
 * Key type GROUP (0; v0 has no key type): the coordinator is the leader of the group's
 * __consumer_offsets partition (abs(hash(groupId)) % partitions), answered with its endpoint on the
 * listener the request came in on. __consumer_offsets is created on first use with Kafka's internal
 * topic settings (partitions offsets.topic.num.partitions, replication capped by live brokers);
 * Kafka answers COORDINATOR_NOT_AVAILABLE while it creates the topic, krill creates it through the
 * controller (a remote one answers once this broker's metadata has the topic) and answers at once.
 * No leader, or a leader that is fenced or has no endpoint on this listener:
 * COORDINATOR_NOT_AVAILABLE.
 * v4+: batched coordinator_keys, one result (with its own error) per key; v0-3: one key, top-level
 * fields (error_message v1+).
 * Key type TRANSACTION (1): the leader of the transactional id's __transaction_state partition
 * (the same hash), the topic created on first use with transaction.state.log.* settings.
 * Share (2) and unknown key types: INVALID_REQUEST.
 * Authorization (KafkaApis.getCoordinator): DESCRIBE on the GROUP (key type GROUP) or on the
 * TRANSACTIONAL_ID (TRANSACTION), checked before the coordinator is looked up (nor its topic
 * created), else GROUP_AUTHORIZATION_FAILED / TRANSACTIONAL_ID_AUTHORIZATION_FAILED with no node
 * (-1, "", -1): v4+ per key without a message, v0-3 with the error's default message (v1+). A SHARE
 * key at v6 needs CLUSTER_ACTION on the CLUSTER first (else every key CLUSTER_AUTHORIZATION_FAILED
 * with the default message), then is INVALID_REQUEST as before.
 * Not implemented: share coordinators (KIP-932).
 */
import { ErrorCode } from '../../protocol/errors';
import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../../protocol/generated/find-coordinator';
import { ApiKey } from '../../protocol/generated';
import { CoordinatorType } from '../../coordinator/group/group-coordinator';
import type { Broker } from '../broker';
import type { RequestContext } from '../network/request-context';
import { defineHandler } from './define-handler';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

interface Found {
  key: string;
  errorCode: number;
  errorMessage: string | null;
  nodeId: number;
  host: string;
  port: number;
}

async function findOne(broker: Broker, ctx: RequestContext, auth: AuthHelper, key: string, keyType: number): Promise<Found> {
  const fail = (errorCode: number, errorMessage: string | null): Found => ({ key, errorCode, errorMessage, nodeId: -1, host: '', port: -1 });
  // Kafka's getCoordinator answers authorization failures with no message; v0-3 add the default one.
  if (keyType === CoordinatorType.GROUP && !auth.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key)) {
    return fail(ErrorCode.GROUP_AUTHORIZATION_FAILED, null);
  }
  if (keyType === CoordinatorType.TRANSACTION && !auth.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) {
    return fail(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null);
  }
  if (keyType !== CoordinatorType.GROUP && keyType !== CoordinatorType.TRANSACTION) {
    return fail(ErrorCode.INVALID_REQUEST, `Unsupported coordinator key type ${keyType}`);
  }
  const found =
    keyType === CoordinatorType.TRANSACTION
      ? await broker.transactionCoordinator.findCoordinator(key)
      : await broker.groupCoordinator.findGroupCoordinator(key);
  if (found.errorCode !== ErrorCode.NONE) return fail(found.errorCode, found.errorMessage ?? 'The coordinator is not available.');
  const node = broker.metadata.broker(found.nodeId);
  const ep = node && !node.fenced ? node.endpoints.find((e) => e.name === ctx.connection.listenerName) : undefined;
  if (!ep) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
  return { key, errorCode: ErrorCode.NONE, errorMessage: null, nodeId: found.nodeId, host: ep.host, port: ep.port };
}

export const findCoordinatorHandler = defineHandler<FindCoordinatorRequest, FindCoordinatorResponse>({
  apiKey: ApiKey.FindCoordinator,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 6,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const keyType = v >= 1 ? req.keyType : CoordinatorType.GROUP;
    const auth = authHelper(broker.authorizer, ctx);
    if (v >= 4) {
      if (keyType === CoordinatorType.SHARE && v >= 6 && !auth.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
        // authorizeClusterOperation throws: FindCoordinatorResponse.prepareErrorResponse for every key.
        const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
        return { coordinators: req.coordinatorKeys.map((key) => ({ key, errorCode, errorMessage: AUTHORIZATION_ERROR_MESSAGE[errorCode], nodeId: -1, host: '', port: -1 })) };
      }
      const coordinators = await Promise.all(req.coordinatorKeys.map((k) => findOne(broker, ctx, auth, k, keyType)));
      return { coordinators };
    }
    const r = await findOne(broker, ctx, auth, req.key, keyType);
    const denied = r.errorCode === ErrorCode.GROUP_AUTHORIZATION_FAILED || r.errorCode === ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    return {
      errorCode: r.errorCode,
      errorMessage: v >= 1 ? (denied ? AUTHORIZATION_ERROR_MESSAGE[r.errorCode] : r.errorMessage) : undefined,
      nodeId: r.nodeId,
      host: r.host,
      port: r.port,
    };
  },
});
