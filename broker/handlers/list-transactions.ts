/**
 * ListTransactions (66), v0-1.
 * The transactional ids this broker coordinates, with producer id and state, filtered by state
 * names (names Kafka does not know come back in unknown_state_filters), by producer ids, and (v1,
 * duration_filter >= 0) to transactions running longer than that many milliseconds. Dead ids (being
 * expired) are left out. While one of its __transaction_state partitions loads the broker answers
 * COORDINATOR_LOAD_IN_PROGRESS with no states; before startup COORDINATOR_NOT_AVAILABLE.
 * Authorization (KafkaApis.handleListTransactionsRequest): only the transactional ids the
 * principal may DESCRIBE are listed.
 */
import type { ListTransactionsRequest, ListTransactionsResponse } from '../../protocol/generated/list-transactions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const listTransactionsHandler = defineHandler<ListTransactionsRequest, ListTransactionsResponse>({
  apiKey: ApiKey.ListTransactions,
  name: 'ListTransactions',
  minVersion: 0,
  maxVersion: 1,
  handle(broker, ctx, req) {
    const r = broker.transactionCoordinator.handleListTransactions(req.producerIdFilters, req.stateFilters, ctx.apiVersion >= 1 ? req.durationFilter : -1n);
    const auth = authHelper(broker.authorizer, ctx);
    const transactionStates = r.transactionStates.filter((t) => auth.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactionalId));
    return { throttleTimeMs: 0, errorCode: r.errorCode, unknownStateFilters: r.unknownStateFilters, transactionStates };
  },
});
