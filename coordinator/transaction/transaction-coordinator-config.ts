/**
 * The transaction coordinator's settings, read once from the broker config (Kafka's
 * TransactionConfig / TransactionStateManagerConfig). Plain values so the coordinator can be built
 * and tested without a KafkaConfig.
 */
import type { KafkaConfig } from '../../config/kafka-config';

export interface TransactionCoordinatorConfig {
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.max.timeout.ms */
  transactionMaxTimeoutMs: number;
  /** transaction.state.log.num.partitions: used until __transaction_state exists (then its real count is). */
  transactionLogNumPartitions: number;
  /** transaction.state.log.load.buffer.size */
  loadBufferSize: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
  /** request.timeout.ms: WriteTxnMarkers requests and tombstone appends. */
  requestTimeoutMs: number;
  /** Wait before a marker that failed with a retriable error is sent again (Kafka: the sender's poll cadence). */
  markerRetryBackoffMs: number;
}

export function transactionCoordinatorConfig(c: KafkaConfig): TransactionCoordinatorConfig {
  return {
    transactionalIdExpirationMs: c.getInt('transactional.id.expiration.ms'),
    transactionMaxTimeoutMs: c.getInt('transaction.max.timeout.ms'),
    transactionLogNumPartitions: c.getInt('transaction.state.log.num.partitions'),
    loadBufferSize: c.getInt('transaction.state.log.load.buffer.size'),
    abortTimedOutTransactionsIntervalMs: c.getInt('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    removeExpiredTransactionalIdsIntervalMs: c.getInt('transaction.remove.expired.transaction.cleanup.interval.ms'),
    requestTimeoutMs: c.getInt('request.timeout.ms'),
    markerRetryBackoffMs: 100,
  };
}
