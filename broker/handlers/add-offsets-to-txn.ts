/**
 * AddOffsetsToTxn (25), v0-4.
 * The consumer group's __consumer_offsets partition (abs(hash(group_id)) % partitions) joins the
 * producer's transaction, so that a TxnOffsetCommit to the group coordinator can follow and its
 * offsets commit or abort with the transaction (consume-transform-produce). Errors as for
 * AddPartitionsToTxn on the transaction coordinator: NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, INVALID_PRODUCER_ID_MAPPING,
 * PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS, INVALID_REQUEST.
 * An empty group id is INVALID_GROUP_ID.
 * Authorization (KafkaApis.handleAddOffsetsToTxnRequest), checked first: WRITE on the
 * TRANSACTIONAL_ID (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the GROUP (else
 * GROUP_AUTHORIZATION_FAILED); nothing joins the transaction when refused.
 */
import { ErrorCode } from '../../protocol/errors';
import type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse } from '../../protocol/generated/add-offsets-to-txn';
import { ApiKey } from '../../protocol/generated';
import { OFFSETS_TOPIC } from '../../config/kafka-config';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const addOffsetsToTxnHandler = defineHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse>({
  apiKey: ApiKey.AddOffsetsToTxn,
  name: 'AddOffsetsToTxn',
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, ctx, req) {
    const auth = authHelper(broker.authorizer, ctx);
    if (!auth.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    }
    if (!auth.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    if (req.groupId === '') return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID };
    const partition = broker.groupCoordinator.partitionFor(req.groupId);
    const err = await broker.transactionCoordinator.handleAddPartitionsToTransaction(req.transactionalId, req.producerId, req.producerEpoch, [
      { topic: OFFSETS_TOPIC, partition },
    ]);
    return { throttleTimeMs: 0, errorCode: err === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : err };
  },
});
