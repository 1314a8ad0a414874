/**
 * DescribeTransactions (65), v0.
 * The state of each transactional id this broker coordinates: state name (Empty, Ongoing,
 * PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence), timeout, start
 * time (-1 when no transaction has started), producer id and epoch, and the partitions of the
 * transaction. Per id: NOT_COORDINATOR (another broker coordinates it),
 * COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, TRANSACTIONAL_ID_NOT_FOUND (unknown or
 * expiring), INVALID_REQUEST (empty id).
 * Authorization (KafkaApis.handleDescribeTransactionsRequest): DESCRIBE on each TRANSACTIONAL_ID,
 * else TRANSACTIONAL_ID_AUTHORIZATION_FAILED with every other field at its default; and the
 * partitions of a transaction are listed only for topics the principal may DESCRIBE.
 */
import type { DescribeTransactionsRequest, DescribeTransactionsResponse } from '../../protocol/generated/describe-transactions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const describeTransactionsHandler = defineHandler<DescribeTransactionsRequest, DescribeTransactionsResponse>({
  apiKey: ApiKey.DescribeTransactions,
  name: 'DescribeTransactions',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    const auth = authHelper(broker.authorizer, ctx);
    return {
      throttleTimeMs: 0,
      transactionStates: req.transactionalIds.map((transactionalId) => {
        if (!auth.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
          return { transactionalId, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, topics: [] };
        }
        const state = broker.transactionCoordinator.handleDescribeTransaction(transactionalId);
        return { ...state, topics: state.topics.filter((t) => auth.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic)) };
      }),
    };
  },
});
