/**
 * InitProducerId (22), v0-5.
 * transactional_id null (idempotent producers): a fresh producer id from this broker's block
 * (allocated by the controller, AllocateProducerIds, 1000 ids per block) with epoch 0, whatever
 * producer id/epoch the request carries (Kafka does the same: an idempotent producer bumps its
 * epoch itself and asks for a new id only when the epoch would overflow).
 * transactional_id set: the transaction coordinator of the id (NOT_COORDINATOR on other brokers,
 * COORDINATOR_LOAD_IN_PROGRESS while its partition loads) bumps the epoch (fencing older producers),
 * rotates the producer id when the epoch is exhausted, aborts an open transaction first (answering
 * CONCURRENT_TRANSACTIONS so the client retries), and lets a producer that sends its id and epoch
 * (v3+, KIP-360) resume unless another took over. transaction_timeout_ms must be in
 * (0, transaction.max.timeout.ms] (INVALID_TRANSACTION_TIMEOUT); an empty transactional id is
 * INVALID_REQUEST; producer_id and producer_epoch must be both set or both unset (-1), else
 * INVALID_REQUEST, as Kafka checks.
 * Version notes: v0-3 get INVALID_PRODUCER_EPOCH where Kafka would say PRODUCER_FENCED (added in
 * v4), as Kafka maps it.
 * Authorization (KafkaApis.handleInitProducerIdRequest), checked first: with a transactional_id,
 * WRITE on that TRANSACTIONAL_ID, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; without one
 * (idempotent producer), IDEMPOTENT_WRITE on the CLUSTER (a denial not logged) or WRITE on at least
 * one TOPIC (authorizeByResourceType), else CLUSTER_AUTHORIZATION_FAILED. Both with producer id and
 * epoch -1.
 */
import { ErrorCode } from '../../protocol/errors';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../protocol/generated/init-producer-id';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const initProducerIdHandler = defineHandler<InitProducerIdRequest, InitProducerIdResponse>({
  apiKey: ApiKey.InitProducerId,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    if (req.transactionalId !== null) {
      if (!auth.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
        return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
      }
    } else if (
      !auth.authorizeCluster(AclOperation.IDEMPOTENT_WRITE, { logIfAllowed: true, logIfDenied: false }) &&
      !auth.authorizeByResourceType(AclOperation.WRITE, ResourceType.TOPIC)
    ) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    }
    const pidSet = v >= 3 && req.producerId !== -1n;
    const epochSet = v >= 3 && req.producerEpoch !== -1;
    if (pidSet !== epochSet) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 };
    const r = await broker.transactionCoordinator.handleInitProducerId(
      req.transactionalId,
      req.transactionTimeoutMs,
      pidSet ? { producerId: req.producerId, producerEpoch: req.producerEpoch } : undefined,
    );
    const errorCode = r.errorCode === ErrorCode.PRODUCER_FENCED && v < 4 ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode;
    return { throttleTimeMs: 0, errorCode, producerId: r.producerId, producerEpoch: r.producerEpoch };
  },
});
