/**
 * DescribeTransactions (65), v0.
 * The state of each transactional id this broker coordinates: state name (Empty, Ongoing,
 * PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence), timeout, start
 * time (-1 when no transaction has started), producer id and epoch, and the partitions of the
 * transaction. Per id: NOT_COORDINATOR (another broker coordinates it),
 * COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, TRANSACTIONAL_ID_NOT_FOUND (unknown or
 * expiring), INVALID_REQUEST (empty id).
 */
import type { DescribeTransactionsRequest, DescribeTransactionsResponse } from '../../protocol/generated/describe-transactions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const describeTransactionsHandler = defineHandler<DescribeTransactionsRequest, DescribeTransactionsResponse>({
  apiKey: ApiKey.DescribeTransactions,
  name: 'DescribeTransactions',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, _ctx, req) {
    return {
      throttleTimeMs: 0,
      transactionStates: req.transactionalIds.map((id) => broker.transactionCoordinator.handleDescribeTransaction(id)),
    };
  },
});
