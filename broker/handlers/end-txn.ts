/**
 * EndTxn (26), v0-5.
 * Commits or aborts the producer's ongoing transaction on its coordinator: answered once
 * PrepareCommit / PrepareAbort is committed to __transaction_state; the COMMIT/ABORT markers are
 * then written to every partition of the transaction (WriteTxnMarkers), after which the
 * transaction is CompleteCommit / CompleteAbort and the producer may begin the next one (until
 * then AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS). A retry of a completed EndTxn is NONE,
 * of one still writing markers CONCURRENT_TRANSACTIONS; the other result (abort after commit), or
 * EndTxn with no transaction, INVALID_TXN_STATE. Also NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
 * before v2), INVALID_REQUEST (empty transactional id).
 * v5 (KIP-890 part 2): with transaction.version 2 or more finalized, the transaction's end bumps the
 * producer epoch (a new producer id at epoch 0 once the epoch is exhausted), the markers carry the
 * bumped epoch, and the response's producer_id / producer_epoch are what the producer continues
 * with (a retry of a completed EndTxn with the epoch before the bump gets NONE and the current id
 * and epoch). Below transaction.version 2 a v5 request is handled as v4 (no bump; the id and epoch
 * it returns are the unchanged ones), since the v0 transaction log value of transaction.version 0
 * could not record a bump. Errors answer -1 / -1, as every version below 5 has no such fields.
 * Authorization (KafkaApis.handleEndTxnRequest): WRITE on the TRANSACTIONAL_ID, else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED and the transaction is left as it is.
 */
import { ErrorCode } from '../../protocol/errors';
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/generated/end-txn';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { FeatureName, supportsEpochBump } from '../../metadata/features';

export const endTxnHandler = defineHandler<EndTxnRequest, EndTxnResponse>({
  apiKey: ApiKey.EndTxn,
  name: 'EndTxn',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const ids = (r: { producerId: bigint; producerEpoch: number }) => (v >= 5 ? { producerId: r.producerId, producerEpoch: r.producerEpoch } : {});
    if (!authHelper(broker.authorizer, ctx).authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ...ids({ producerId: -1n, producerEpoch: -1 }) };
    }
    const clientTransactionVersion = v >= 5 && supportsEpochBump(broker.metadata.featureLevel(FeatureName.TRANSACTION_VERSION)) ? 2 : 0;
    const r = await broker.transactionCoordinator.handleEndTransaction(req.transactionalId, req.producerId, req.producerEpoch, req.committed, clientTransactionVersion);
    const errorCode = r.errorCode === ErrorCode.PRODUCER_FENCED && v < 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode;
    return { throttleTimeMs: 0, errorCode, ...ids(r) };
  },
});
