/**
 * Delivers COMMIT/ABORT markers to the leaders of a transaction's partitions (Kafka's
 * TransactionMarkerChannelManager and TransactionMarkerRequestCompletionHandler), then writes the
 * CompleteCommit/CompleteAbort record.
 *
 * Markers go out as WriteTxnMarkers requests over the Kafka protocol, one request in flight per
 * destination broker carrying every marker queued for it, even when the destination is this broker
 * (the same path, the same errors). Per partition answer:
 * - NONE: the partition no longer waits for a marker;
 * - UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
 *   REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR: sent again (to the partition's leader of the moment) after
 *   a short backoff, for as long as this broker coordinates the transaction;
 * - INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED: a newer producer or coordinator owns the
 *   partition's state, so this transaction's markers are given up;
 * - UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION: the partition is dropped from the wait;
 * - anything else: logged as an internal error and retried.
 * A partition whose topic no longer exists is dropped from the wait; one without a leader waits
 * until the metadata names one. A request that fails (connection refused or lost, timeout) sends
 * its markers again after the backoff. When no partition waits any more, the Complete* record is
 * appended (retried while the log answers COORDINATOR_NOT_AVAILABLE).
 *
 * Everything is keyed by the coordinator epoch the markers were prepared under: a transaction whose
 * coordinator epoch changed (this broker lost and regained the partition, which reloads it) is
 * dropped here, and the load that follows resends what is still needed.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/generated/write-txn-markers';
import type { MetadataCache } from '../../metadata/metadata-cache';
import type { Logger } from '../../common/logger';
import { partitionsByTopic, type TransactionMetadata, type TopicPartition, type TxnTransitMetadata } from './transaction-metadata';
import type { TransactionStateManager } from './transaction-state-manager';
import { transactionStateName } from './transaction-state';
import { topicPartitionKey } from '../../common/topic-partition';

/** Sends one WriteTxnMarkers request to a broker and returns its answer (throws on a transport failure). */
export interface MarkerTransport {
  send(brokerId: number, request: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse>;
  close(): void;
}

interface PendingCompleteTxn {
  transactionalId: string;
  coordinatorEpoch: number;
  metadata: TransactionMetadata;
  completeTransit: TxnTransitMetadata;
}

interface MarkerEntry {
  pending: PendingCompleteTxn;
  producerId: bigint;
  producerEpoch: number;
  commit: boolean;
  partitions: TopicPartition[];
  /** The __transaction_state partition of the transactional id. */
  txnPartition: number;
}

const RETRIABLE = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

export interface TransactionMarkerChannelManagerOptions {
  stateManager: TransactionStateManager;
  metadata: MetadataCache;
  logger: Logger;
  transport: MarkerTransport;
  retryBackoffMs: number;
  now?: () => number;
}

export class TransactionMarkerChannelManager {
  private readonly log: Logger;
  private readonly now: () => number;
  /** Transactions whose markers are being delivered, by transactional id. */
  private readonly pendingTxns = new Map<string, PendingCompleteTxn>();
  private readonly queues = new Map<number, MarkerEntry[]>();
  private readonly inFlight = new Set<number>();
  /** Partitions whose leader is unknown for now: retried on metadata changes and after the backoff. */
  private unknownLeader: MarkerEntry[] = [];
  /** Entries to requeue (leaders looked up again) once the backoff passes. */
  private retries: MarkerEntry[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  /** Complete* appends that met COORDINATOR_NOT_AVAILABLE. */
  private appendRetries: PendingCompleteTxn[] = [];
  private started = false;
  private stopped = false;
  private readonly inFlightWork = new Set<Promise<void>>();

  constructor(private readonly opts: TransactionMarkerChannelManagerOptions) {
    this.log = opts.logger;
    this.now = opts.now ?? Date.now;
  }

  /** Starts sending (the broker's listeners are up, so markers for this broker can arrive). */
  start(): void {
    if (this.stopped) return;
    this.started = true;
    for (const id of this.queues.keys()) this.drain(id);
    this.scheduleRetry();
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.opts.transport.close();
    await Promise.all([...this.inFlightWork]);
    this.queues.clear();
    this.pendingTxns.clear();
    this.unknownLeader = [];
    this.retries = [];
    this.appendRetries = [];
  }

  get numTxnsWithPendingMarkers(): number {
    return this.pendingTxns.size;
  }

  /** Markers for `metadata`'s partitions; `completeTransit` is written once every one is delivered. */
  addTxnMarkersToSend(coordinatorEpoch: number, commit: boolean, metadata: TransactionMetadata, completeTransit: TxnTransitMetadata): void {
    const pending: PendingCompleteTxn = { transactionalId: metadata.transactionalId, coordinatorEpoch, metadata, completeTransit };
    const prev = this.pendingTxns.get(pending.transactionalId);
    if (prev) this.log.info(`replacing the pending completion of ${pending.transactionalId} (coordinator epoch ${prev.coordinatorEpoch})`);
    this.pendingTxns.set(pending.transactionalId, pending);
    this.log.debug(`sending ${commit ? 'COMMIT' : 'ABORT'} markers for ${metadata.describe()} to ${metadata.topicPartitions.size} partitions`);
    this.addToBrokerQueues({
      pending,
      producerId: metadata.producerId,
      producerEpoch: metadata.producerEpoch,
      commit,
      partitions: metadata.partitionList(),
      txnPartition: this.opts.stateManager.partitionFor(pending.transactionalId),
    });
    this.maybeWriteTxnCompletion(pending.transactionalId);
  }

  /** A __transaction_state partition was lost or is reloaded: its transactions' markers stop here. */
  removeMarkersForTxnTopicPartition(txnPartition: number): void {
    const drop = (list: MarkerEntry[]) => list.filter((e) => e.txnPartition !== txnPartition);
    for (const [id, q] of this.queues) this.queues.set(id, drop(q));
    this.unknownLeader = drop(this.unknownLeader);
    this.retries = drop(this.retries);
    this.appendRetries = this.appendRetries.filter((p) => this.opts.stateManager.partitionFor(p.transactionalId) !== txnPartition);
    for (const [txnId, p] of this.pendingTxns) {
      if (this.opts.stateManager.partitionFor(txnId) === txnPartition) this.pendingTxns.delete(p.transactionalId);
    }
  }

  /** Leaders or brokers changed: markers waiting for a leader may have one now. */
  onMetadataChanged(): void {
    if (this.unknownLeader.length === 0) return;
    const waiting = this.unknownLeader;
    this.unknownLeader = [];
    for (const e of waiting) this.addToBrokerQueues(e);
  }

  // ---- queueing -------------------------------------------------------------------------------

  /** Whether `entry`'s transaction is still the one this broker is completing. */
  private isCurrent(entry: { pending: PendingCompleteTxn }): boolean {
    const p = entry.pending;
    if (this.pendingTxns.get(p.transactionalId) !== p) return false;
    const st = this.opts.stateManager.getTransactionState(p.transactionalId);
    return st.errorCode === ErrorCode.NONE && st.coordinatorEpoch === p.coordinatorEpoch && st.metadata === p.metadata;
  }

  private addToBrokerQueues(entry: MarkerEntry): void {
    if (this.stopped || !this.isCurrent(entry)) {
      this.forget(entry.pending);
      return;
    }
    const byLeader = new Map<number, TopicPartition[]>();
    const gone: TopicPartition[] = [];
    const noLeader: TopicPartition[] = [];
    for (const tp of entry.partitions) {
      const state = this.opts.metadata.partition(tp.topic, tp.partition);
      if (!state) gone.push(tp);
      else if (state.leader < 0 || !this.opts.metadata.broker(state.leader) || this.opts.metadata.broker(state.leader)!.fenced) noLeader.push(tp);
      else {
        let list = byLeader.get(state.leader);
        if (!list) byLeader.set(state.leader, (list = []));
        list.push(tp);
      }
    }
    if (gone.length > 0) {
      // The topic was deleted: nothing can hold data of this transaction any more.
      this.log.info(`${entry.pending.transactionalId}: skipping markers for partitions that no longer exist: ${gone.map((t) => `${t.topic}-${t.partition}`).join(', ')}`);
      for (const tp of gone) if (entry.pending.metadata.containsPartition(tp.topic, tp.partition)) entry.pending.metadata.removePartition(tp.topic, tp.partition);
    }
    if (noLeader.length > 0) this.unknownLeader.push({ ...entry, partitions: noLeader });
    for (const [broker, partitions] of byLeader) {
      let q = this.queues.get(broker);
      if (!q) this.queues.set(broker, (q = []));
      q.push({ ...entry, partitions });
      this.drain(broker);
    }
    if (noLeader.length > 0) this.scheduleRetry();
    if (gone.length > 0) this.maybeWriteTxnCompletion(entry.pending.transactionalId);
  }

  private forget(p: PendingCompleteTxn): void {
    if (this.pendingTxns.get(p.transactionalId) === p) this.pendingTxns.delete(p.transactionalId);
  }

  private retryLater(entry: MarkerEntry): void {
    this.retries.push(entry);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.stopped || !this.started) return;
    if (this.retries.length === 0 && this.unknownLeader.length === 0 && this.appendRetries.length === 0) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      const retries = this.retries;
      this.retries = [];
      for (const e of retries) this.addToBrokerQueues(e);
      this.onMetadataChanged();
      const appends = this.appendRetries;
      this.appendRetries = [];
      for (const p of appends) this.tryAppendToLog(p);
      this.scheduleRetry();
    }, this.opts.retryBackoffMs);
    this.retryTimer.unref();
  }

  // ---- sending --------------------------------------------------------------------------------

  private drain(broker: number): void {
    if (!this.started || this.stopped || this.inFlight.has(broker)) return;
    const q = this.queues.get(broker);
    if (!q || q.length === 0) return;
    this.queues.set(broker, []);
    const entries = q.filter((e) => {
      if (this.isCurrent(e)) return true;
      this.forget(e.pending);
      return false;
    });
    if (entries.length === 0) return;
    this.inFlight.add(broker);
    const work = this.send(broker, entries).finally(() => {
      this.inFlight.delete(broker);
      this.inFlightWork.delete(work);
      this.drain(broker);
    });
    this.inFlightWork.add(work);
  }

  private async send(broker: number, entries: MarkerEntry[]): Promise<void> {
    const request: WriteTxnMarkersRequest = {
      markers: entries.map((e) => {
        const byTopic = partitionsByTopic(e.partitions);
        return {
          producerId: e.producerId,
          producerEpoch: e.producerEpoch,
          transactionResult: e.commit,
          coordinatorEpoch: e.pending.coordinatorEpoch,
          topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        };
      }),
    };
    let response: WriteTxnMarkersResponse;
    try {
      response = await this.opts.transport.send(broker, request);
    } catch (err) {
      if (this.stopped) return;
      this.log.info(`WriteTxnMarkers to broker ${broker} failed (${err instanceof Error ? err.message : String(err)}); sending again after ${this.opts.retryBackoffMs} ms`);
      for (const e of entries) this.retryLater(e);
      return;
    }
    if (this.stopped) return;
    for (let i = 0; i < entries.length; i++) this.onMarkerResult(broker, entries[i], response);
  }

  private onMarkerResult(broker: number, entry: MarkerEntry, response: WriteTxnMarkersResponse): void {
    const p = entry.pending;
    if (!this.isCurrent(entry)) {
      this.log.info(`${p.transactionalId}: no longer completing this transaction here (coordinator epoch ${p.coordinatorEpoch}); dropping its markers`);
      this.forget(p);
      return;
    }
    // One request may carry several entries of the same producer (retries of one transaction queued
    // for the same broker), and the answer has one result per request marker (Kafka's broker merges
    // them per producer id instead): take this producer's partitions from every result.
    const errors = new Map<string, number>();
    for (const result of response.markers) {
      if (result.producerId !== entry.producerId) continue;
      for (const t of result.topics) for (const part of t.partitions) errors.set(topicPartitionKey(t.name, part.partitionIndex), part.errorCode);
    }
    const retry: TopicPartition[] = [];
    const md = p.metadata;
    for (const tp of entry.partitions) {
      const code = errors.get(topicPartitionKey(tp.topic, tp.partition));
      if (code === undefined) {
        this.log.warn(`WriteTxnMarkers response from broker ${broker} has no result for ${tp.topic}-${tp.partition} of producer ${entry.producerId}; sending again`);
        retry.push(tp);
      } else if (code === ErrorCode.NONE) {
        if (md.containsPartition(tp.topic, tp.partition)) md.removePartition(tp.topic, tp.partition);
      } else if (RETRIABLE.has(code)) {
        this.log.info(`${p.transactionalId}: the ${entry.commit ? 'COMMIT' : 'ABORT'} marker for ${tp.topic}-${tp.partition} failed with ${errorName(code)}; retrying`);
        retry.push(tp);
      } else if (code === ErrorCode.INVALID_PRODUCER_EPOCH || code === ErrorCode.TRANSACTION_COORDINATOR_FENCED) {
        this.log.info(`${p.transactionalId}: the marker for ${tp.topic}-${tp.partition} failed for good with ${errorName(code)}; no more markers are sent for this transaction`);
        this.forget(p);
        return;
      } else if (code === ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT || code === ErrorCode.UNSUPPORTED_VERSION) {
        this.log.info(`${p.transactionalId}: ${tp.topic}-${tp.partition} cannot take a marker (${errorName(code)}); it no longer waits for one`);
        if (md.containsPartition(tp.topic, tp.partition)) md.removePartition(tp.topic, tp.partition);
      } else {
        this.log.error(`${p.transactionalId}: unexpected ${errorName(code)} writing the marker for ${tp.topic}-${tp.partition}; retrying`);
        retry.push(tp);
      }
    }
    if (retry.length > 0) this.retryLater({ ...entry, partitions: retry });
    else this.maybeWriteTxnCompletion(p.transactionalId);
  }

  // ---- completion -----------------------------------------------------------------------------

  private maybeWriteTxnCompletion(transactionalId: string): void {
    const p = this.pendingTxns.get(transactionalId);
    if (!p || p.metadata.topicPartitions.size > 0) return;
    this.pendingTxns.delete(transactionalId);
    const st = this.opts.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE || st.coordinatorEpoch !== p.coordinatorEpoch || st.metadata !== p.metadata) {
      this.log.info(`${transactionalId}: not appending ${transactionStateName(p.completeTransit.txnState)}: the coordinator changed (${errorName(st.errorCode)})`);
      return;
    }
    this.tryAppendToLog(p);
  }

  /** Not awaited by shutdown: an acks=-1 append waits in the produce purgatory, which shutdown completes later. */
  private tryAppendToLog(p: PendingCompleteTxn): void {
    if (this.stopped) return;
    void this.opts.stateManager
      .appendTransactionToLog(p.transactionalId, p.coordinatorEpoch, p.completeTransit, (code) => code === ErrorCode.COORDINATOR_NOT_AVAILABLE)
      .then((err) => {
        switch (err) {
          case ErrorCode.NONE:
            this.log.debug(`completed the transaction of ${p.metadata.describe()}`);
            return;
          case ErrorCode.COORDINATOR_NOT_AVAILABLE:
            this.log.info(`${p.transactionalId}: appending the completed transaction failed with COORDINATOR_NOT_AVAILABLE; retrying`);
            this.appendRetries.push(p);
            this.scheduleRetry();
            return;
          case ErrorCode.NOT_COORDINATOR:
          case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            // Another coordinator (or the load of this partition) finishes the transaction.
            this.log.info(`${p.transactionalId}: no longer the coordinator while completing the transaction (${errorName(err)})`);
            return;
          default:
            this.log.error(`${p.transactionalId}: appending the completed transaction failed with ${errorName(err)}`);
        }
      })
      .catch((err) => this.log.error(`${p.transactionalId}: appending the completed transaction failed`, { err }));
  }
}
