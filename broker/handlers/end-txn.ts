/**
 * EndTxn (26), v0-4.
 * Commits or aborts the producer's ongoing transaction on its coordinator: answered once
 * PrepareCommit / PrepareAbort is committed to __transaction_state; the COMMIT/ABORT markers are
 * then written to every partition of the transaction (WriteTxnMarkers), after which the
 * transaction is CompleteCommit / CompleteAbort and the producer may begin the next one (until
 * then AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS). A retry of a completed EndTxn is NONE,
 * of one still writing markers CONCURRENT_TRANSACTIONS; the other result (abort after commit), or
 * EndTxn with no transaction, INVALID_TXN_STATE. Also NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
 * before v2), INVALID_REQUEST (empty transactional id).
 * Not advertised: v5 (KIP-890 part 2, an epoch bump per transaction; unstable in the schemas).
 * Authorization (KafkaApis.handleEndTxnRequest): WRITE on the TRANSACTIONAL_ID, else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED and the transaction is left as it is.
 */
import { ErrorCode } from '../../protocol/errors';
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/generated/end-txn';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const endTxnHandler = defineHandler<EndTxnRequest, EndTxnResponse>({
  apiKey: ApiKey.EndTxn,
  name: 'EndTxn',
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, ctx, req) {
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    }
    const err = await broker.transactionCoordinator.handleEndTransaction(req.transactionalId, req.producerId, req.producerEpoch, req.committed);
    return { throttleTimeMs: 0, errorCode: err === ErrorCode.PRODUCER_FENCED && ctx.apiVersion < 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : err };
  },
});
