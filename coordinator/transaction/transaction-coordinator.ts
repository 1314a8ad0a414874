/**
 * TransactionCoordinator: the transactional producer's side of the broker (Kafka's
 * TransactionCoordinator). Handlers call it for FindCoordinator(TRANSACTION), InitProducerId (a
 * fresh producer id from ProducerIdManager without a transactional id; the rules below with one),
 * AddPartitionsToTxn / AddOffsetsToTxn, EndTxn, the brokers' verify-only AddPartitionsToTxn,
 * DescribeTransactions and ListTransactions; it owns the transaction timeout and the
 * transactional id expiry tasks.
 *
 * The rules are Kafka's; those of transaction.version 2 (KIP-890 part 2) are at EndTxn below:
 * - InitProducerId: a new transactional id gets a producer id at epoch 0; an idle one (Empty or
 *   Complete*) gets its epoch bumped (a new producer id once the epoch is exhausted), which fences
 *   older producers; one with an open transaction gets that transaction aborted under a bumped
 *   epoch first and CONCURRENT_TRANSACTIONS (the client retries, and the retry bumps again).
 *   KIP-360: a producer that sends its id and epoch may resume (bump) unless another producer took
 *   over (PRODUCER_FENCED).
 * - Every request names producer id and epoch: another id is INVALID_PRODUCER_ID_MAPPING, another
 *   epoch PRODUCER_FENCED; while a transition is being written, CONCURRENT_TRANSACTIONS; while
 *   markers are being written (Prepare*), CONCURRENT_TRANSACTIONS too.
 * - EndTxn is answered once PrepareCommit/PrepareAbort is committed to __transaction_state; the
 *   markers are then written by the TransactionMarkerChannelManager, and finally CompleteCommit /
 *   CompleteAbort. A retried EndTxn of a completed transaction is NONE, of one still completing
 *   CONCURRENT_TRANSACTIONS; the wrong result (abort after commit) is INVALID_TXN_STATE.
 * - transaction.version 2, EndTxn v5 (client version 2): Prepare* bumps the epoch and the markers
 *   carry the bumped one; at an exhausted epoch (32766) a new producer id is allocated first and
 *   the transaction ends on it (NextProducerId, epoch 0 from Complete* on). The answer is the id and
 *   epoch the producer continues with. The coordinator's own aborts (fences, timeouts) are made at
 *   the finalized level, so at 2 they bump once more after the fence's bump, unless the fence took
 *   the last epoch (Short.MAX_VALUE), where the abort keeps it.
 * - transaction.timeout.ms: an Ongoing transaction older than its timeout is aborted under a
 *   bumped epoch (the producer is fenced), checked every
 *   transaction.abort.timed.out.transaction.cleanup.interval.ms.
 */
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors';
import type { MetadataCache, MetadataDelta } from '../../metadata/metadata-cache';
import { TRANSACTION_STATE_TOPIC } from '../../config/kafka-config';
import type { Logger } from '../../common/logger';
import type { CoordinatorReplicaManager } from '../group/group-coordinator';
import type { ProducerIdManager } from '../producer/producer-id-manager';
import type { TransactionCoordinatorConfig } from './transaction-coordinator-config';
import { TransactionMarkerChannelManager, type MarkerTransport } from './transaction-marker-channel-manager';
import {
  IllegalTransactionStateError,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TransactionMetadata,
  isEpochExhausted,
  partitionsByTopic,
  type TopicPartition,
  type TxnTransitMetadata,
} from './transaction-metadata';
import { TransactionState, transactionStateName } from './transaction-state';
import { supportsEpochBump } from '../../metadata/features';
import { TransactionStateManager, type ListedTransaction } from './transaction-state-manager';

export interface InitProducerIdResult {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

export interface DescribedTransaction {
  transactionalId: string;
  errorCode: number;
  transactionState: string;
  transactionTimeoutMs: number;
  transactionStartTimeMs: bigint;
  producerId: bigint;
  producerEpoch: number;
  topics: { topic: string; partitions: number[] }[];
}

export interface TransactionCoordinatorOptions {
  nodeId: number;
  config: TransactionCoordinatorConfig;
  logger: Logger;
  replicaManager: CoordinatorReplicaManager;
  metadata: MetadataCache;
  producerIds: ProducerIdManager;
  markerTransport: MarkerTransport;
  /** Creates __transaction_state (with Kafka's internal topic settings); resolves NONE if it exists. */
  createTransactionTopic(): Promise<number>;
  now?: () => number;
}

const initError = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });

/** EndTxn's answer: the producer id and epoch are -1 unless it succeeded (EndTxn v5 returns them). */
export interface EndTxnResult {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

const endTxnError = (errorCode: number): EndTxnResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
const INT16_MAX = 0x7fff;

type Prepared = { errorCode: number } | { coordinatorEpoch: number; transit: TxnTransitMetadata } | { needsProducerId: true };

export class TransactionCoordinator {
  private readonly log: Logger;
  private readonly now: () => number;
  readonly stateManager: TransactionStateManager;
  readonly markerManager: TransactionMarkerChannelManager;
  private active = false;
  private abortTimer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  /** __transaction_state partitions led here, by leader epoch: guards against replayed deltas. */
  private readonly elected = new Map<number, number>();

  constructor(private readonly opts: TransactionCoordinatorOptions) {
    this.log = opts.logger;
    this.now = opts.now ?? Date.now;
    this.stateManager = new TransactionStateManager({
      config: opts.config,
      logger: opts.logger,
      replicaManager: opts.replicaManager,
      metadata: opts.metadata,
      now: this.now,
    });
    this.markerManager = new TransactionMarkerChannelManager({
      stateManager: this.stateManager,
      metadata: opts.metadata,
      logger: opts.logger.child('markers'),
      transport: opts.markerTransport,
      retryBackoffMs: opts.config.markerRetryBackoffMs,
      now: this.now,
    });
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Accepts requests; loads of __transaction_state partitions may already have started. */
  startup(): void {
    if (this.active) return;
    this.active = true;
    this.stateManager.startup();
    this.abortTimer = setInterval(() => {
      void this.abortTimedOutTransactions().catch((err) => this.log.error('aborting timed-out transactions failed', { err }));
    }, this.opts.config.abortTimedOutTransactionsIntervalMs);
    this.abortTimer.unref();
    this.expiryTimer = setInterval(() => {
      void this.stateManager.removeExpiredTransactionalIds().catch((err) => this.log.error('removing expired transactional ids failed', { err }));
    }, this.opts.config.removeExpiredTransactionalIdsIntervalMs);
    this.expiryTimer.unref();
  }

  /** The listeners are bound: markers (to this broker too) can be delivered from now on. */
  startMarkerDelivery(): void {
    this.markerManager.start();
  }

  async shutdown(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    if (this.abortTimer) clearInterval(this.abortTimer);
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    await this.markerManager.shutdown();
    await this.stateManager.shutdown();
    this.elected.clear();
  }

  get isActive(): boolean {
    return this.active;
  }

  partitionFor(transactionalId: string): number {
    return this.stateManager.partitionFor(transactionalId);
  }

  // ---- ownership ------------------------------------------------------------------------------

  /** Follows __transaction_state leadership (election loads a partition, resignation drops it). */
  onMetadataDelta(delta: MetadataDelta): void {
    for (const p of delta.changedPartitions) {
      if (p.topic !== TRANSACTION_STATE_TOPIC) continue;
      if (p.leader === this.opts.nodeId) this.onElection(p.partition, p.leaderEpoch);
      else if (this.elected.has(p.partition)) this.onResignation(p.partition);
    }
    for (const t of delta.removedTopics) {
      if (t.name === TRANSACTION_STATE_TOPIC) for (const p of [...this.elected.keys()]) this.onResignation(p);
    }
    if (delta.changedPartitions.length > 0 || delta.changedBrokers.size > 0) this.markerManager.onMetadataChanged();
  }

  private onElection(partition: number, coordinatorEpoch: number): void {
    if (this.elected.get(partition) === coordinatorEpoch) return;
    this.elected.set(partition, coordinatorEpoch);
    this.log.info(`elected transaction coordinator for ${TRANSACTION_STATE_TOPIC}-${partition} at coordinator epoch ${coordinatorEpoch}; loading`);
    // Whatever an earlier term of this partition left queued is stale: the load decides again.
    this.markerManager.removeMarkersForTxnTopicPartition(partition);
    void this.stateManager.loadPartition(partition, coordinatorEpoch).then((pending) => {
      for (const p of pending) this.markerManager.addTxnMarkersToSend(p.coordinatorEpoch, p.commit, p.metadata, p.completeTransit);
    });
  }

  private onResignation(partition: number): void {
    this.elected.delete(partition);
    this.log.info(`resigned as transaction coordinator for ${TRANSACTION_STATE_TOPIC}-${partition}`);
    this.stateManager.removePartition(partition);
    this.markerManager.removeMarkersForTxnTopicPartition(partition);
  }

  /**
   * FindCoordinator(TRANSACTION): the leader of the id's __transaction_state partition. The topic is
   * created on first use (Kafka answers COORDINATOR_NOT_AVAILABLE while it does; krill creates it
   * through the controller and answers at once).
   */
  async findCoordinator(transactionalId: string): Promise<{ errorCode: number; errorMessage: string | null; nodeId: number }> {
    const none = (errorCode: number) => ({ errorCode, errorMessage: 'The coordinator is not available.', nodeId: -1 });
    if (!this.active) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (!this.opts.metadata.topic(TRANSACTION_STATE_TOPIC)) {
      const err = await this.opts.createTransactionTopic();
      if (err !== ErrorCode.NONE) {
        this.log.warn(`could not create ${TRANSACTION_STATE_TOPIC}`, { error: errorName(err) });
        return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
    }
    const p = this.opts.metadata.topic(TRANSACTION_STATE_TOPIC)?.partitions.get(this.partitionFor(transactionalId));
    if (!p || p.leader < 0) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return { errorCode: ErrorCode.NONE, errorMessage: null, nodeId: p.leader };
  }

  // ---- InitProducerId -------------------------------------------------------------------------

  async handleInitProducerId(
    transactionalId: string | null,
    transactionTimeoutMs: number,
    expected?: { producerId: bigint; producerEpoch: number },
  ): Promise<InitProducerIdResult> {
    if (transactionalId === null) {
      // No transactional id: a fresh producer id, whatever was sent (KIP-360 epoch bumps are the
      // idempotent producer's own business).
      const pid = await this.generateProducerId();
      return typeof pid === 'number' ? initError(pid) : { errorCode: ErrorCode.NONE, producerId: pid, producerEpoch: 0 };
    }
    if (transactionalId === '') return initError(ErrorCode.INVALID_REQUEST);
    if (!this.stateManager.validateTransactionTimeoutMs(transactionTimeoutMs)) return initError(ErrorCode.INVALID_TRANSACTION_TIMEOUT);

    let st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return initError(st.errorCode);
    if (!st.metadata) {
      const pid = await this.generateProducerId();
      if (typeof pid === 'number') return initError(pid);
      const created = new TransactionMetadata(transactionalId, pid, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH, transactionTimeoutMs, TransactionState.Empty, [], -1, this.now());
      // Another InitProducerId may have created it while the id was being allocated: that one wins.
      st = this.stateManager.putTransactionStateIfNotExists(created);
      if (st.errorCode !== ErrorCode.NONE) return initError(st.errorCode);
    }
    let prepared = this.prepareInitProducerIdTransit(transactionalId, transactionTimeoutMs, expected, undefined);
    if ('needsProducerId' in prepared) {
      const pid = await this.generateProducerId();
      if (typeof pid === 'number') return initError(pid);
      prepared = this.prepareInitProducerIdTransit(transactionalId, transactionTimeoutMs, expected, pid);
    }
    if ('errorCode' in prepared) return initError(prepared.errorCode);
    if ('needsProducerId' in prepared) return initError(ErrorCode.CONCURRENT_TRANSACTIONS);
    const { coordinatorEpoch, transit } = prepared;
    if (transit.txnState === TransactionState.PrepareEpochFence) {
      // Abort the open transaction under the bumped epoch; the client retries and then gets its own bump.
      const { errorCode } = await this.endTransaction(transactionalId, transit.producerId, transit.producerEpoch, false, false, this.stateManager.transactionVersionLevel());
      return initError(errorCode === ErrorCode.NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : errorCode);
    }
    const err = await this.stateManager.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    if (err !== ErrorCode.NONE) {
      this.log.info(`answering ${errorName(err)} to InitProducerId of ${transactionalId}`);
      return initError(err);
    }
    this.log.info(`initialized transactional id ${transactionalId} with producer id ${transit.producerId} and epoch ${transit.producerEpoch} on ${TRANSACTION_STATE_TOPIC}-${this.partitionFor(transactionalId)}`);
    return { errorCode: ErrorCode.NONE, producerId: transit.producerId, producerEpoch: transit.producerEpoch };
  }

  /** A producer id from this broker's block, or the error code a client gets when none can be had. */
  private async generateProducerId(): Promise<bigint | number> {
    try {
      return await this.opts.producerIds.generateProducerId();
    } catch (err) {
      this.log.warn('producer id allocation failed', { err });
      // Kafka's RPCProducerIdManager answers a missing block with a retriable error.
      return err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER ? ErrorCode.NOT_CONTROLLER : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    }
  }

  private prepareInitProducerIdTransit(
    transactionalId: string,
    transactionTimeoutMs: number,
    expected: { producerId: bigint; producerEpoch: number } | undefined,
    newProducerId: bigint | undefined,
  ): Prepared {
    const st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return { errorCode: st.errorCode };
    const md = st.metadata;
    if (!md) return { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
    if (md.pendingTransitionInProgress) return { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
    // KIP-360: an id and epoch sent by the producer must still be its own (or a retry of a bump it
    // missed, or this id was just created).
    const validProducerId =
      expected === undefined ||
      md.producerEpoch === NO_PRODUCER_EPOCH ||
      expected.producerId === md.producerId ||
      (expected.producerId === md.lastProducerId && isEpochExhausted(expected.producerEpoch));
    if (!validProducerId) return { errorCode: ErrorCode.PRODUCER_FENCED };
    try {
      switch (md.state) {
        case TransactionState.PrepareAbort:
        case TransactionState.PrepareCommit:
          return { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS };
        case TransactionState.CompleteAbort:
        case TransactionState.CompleteCommit:
        case TransactionState.Empty: {
          if (md.isProducerEpochExhausted && (expected === undefined || expected.producerEpoch === md.producerEpoch)) {
            if (newProducerId === undefined) return { needsProducerId: true };
            return { coordinatorEpoch: st.coordinatorEpoch, transit: md.prepareProducerIdRotation(newProducerId, transactionTimeoutMs, this.now(), expected !== undefined) };
          }
          const t = md.prepareIncrementProducerEpoch(transactionTimeoutMs, expected?.producerEpoch, this.now());
          if ('error' in t) return { errorCode: ErrorCode.PRODUCER_FENCED };
          return { coordinatorEpoch: st.coordinatorEpoch, transit: t };
        }
        case TransactionState.Ongoing:
          // The epoch bumped here is never returned to a client: the abort uses it, and the retry
          // that CONCURRENT_TRANSACTIONS provokes bumps again (or rotates the id if exhausted).
          return { coordinatorEpoch: st.coordinatorEpoch, transit: md.prepareFenceProducerEpoch() };
        default:
          throw new IllegalTransactionStateError(`${md.describe()}: InitProducerId found a state it should never see`);
      }
    } catch (err) {
      if (!(err instanceof IllegalTransactionStateError)) throw err;
      this.log.error(`InitProducerId of ${transactionalId}: ${err.message}`);
      return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    }
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------

  async handleAddPartitionsToTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartition[]): Promise<number> {
    if (!this.active) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return st.errorCode;
    const md = st.metadata;
    if (!md) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (md.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (md.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    if (md.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (md.state === TransactionState.PrepareCommit || md.state === TransactionState.PrepareAbort) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (md.state === TransactionState.Ongoing && partitions.every((tp) => md.containsPartition(tp.topic, tp.partition))) return ErrorCode.NONE;
    let transit: TxnTransitMetadata;
    try {
      transit = md.prepareAddPartitions(partitions, this.now());
    } catch (err) {
      if (!(err instanceof IllegalTransactionStateError)) throw err;
      this.log.error(`AddPartitionsToTxn of ${transactionalId}: ${err.message}`);
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    return this.stateManager.appendTransactionToLog(transactionalId, st.coordinatorEpoch, transit);
  }

  /**
   * The brokers' verify-only AddPartitionsToTxn (KIP-890): whether each partition is part of the
   * producer's ongoing transaction (NONE) or not (TRANSACTION_ABORTABLE). Pending transitions are
   * not checked: the partition leader's append re-checks with its verification guard.
   */
  handleVerifyPartitionsInTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartition[]): Map<TopicPartition, number> {
    const all = (code: number) => new Map(partitions.map((tp) => [tp, code]));
    if (!this.active) return all(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (transactionalId === '') return all(ErrorCode.INVALID_REQUEST);
    const st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return all(st.errorCode);
    const md = st.metadata;
    if (!md || md.producerId !== producerId) return all(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (md.producerEpoch !== producerEpoch) return all(ErrorCode.PRODUCER_FENCED);
    if (md.state === TransactionState.PrepareCommit || md.state === TransactionState.PrepareAbort) return all(ErrorCode.CONCURRENT_TRANSACTIONS);
    return new Map(partitions.map((tp) => [tp, md.containsPartition(tp.topic, tp.partition) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE]));
  }

  // ---- EndTxn ---------------------------------------------------------------------------------

  /**
   * EndTxn from a client. `clientTransactionVersion` is 2 for EndTxn v5 at a finalized
   * transaction.version of 2 or more (the epoch is bumped by this transaction's end), else 0.
   * Resolves the error and, on success, the producer id and epoch the client continues with.
   */
  handleEndTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean, clientTransactionVersion = 0): Promise<EndTxnResult> {
    if (!this.active) return Promise.resolve(endTxnError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    return this.endTransaction(transactionalId, producerId, producerEpoch, commit, true, clientTransactionVersion);
  }

  /**
   * Moves an Ongoing transaction to PrepareCommit/PrepareAbort, answers once that is committed,
   * then hands the markers to the marker manager. `isFromClient` false: the coordinator itself
   * aborts (a fence by InitProducerId or a timeout), with an epoch one above the current, and the
   * finalized transaction.version as the client version (Kafka's "server TV").
   *
   * transaction.version 2 (Kafka's handleEndTransaction): the epoch check depends on the state the
   * transaction's last EndTxn left. Ongoing (and Empty) need the current epoch; Prepare* and
   * Complete* written by a v2 EndTxn carry the bumped epoch, so only the epoch before the bump is a
   * retry of that EndTxn (Complete*: NONE with the current id and epoch, Prepare*:
   * CONCURRENT_TRANSACTIONS; the other result INVALID_TXN_STATE), as is, after a roll-over to a new
   * producer id, the old id at the exhausted epoch; any other epoch is PRODUCER_FENCED.
   */
  private async endTransaction(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    commit: boolean,
    isFromClient: boolean,
    clientTransactionVersion: number,
  ): Promise<EndTxnResult> {
    if (transactionalId === '') return endTxnError(ErrorCode.INVALID_REQUEST);
    const st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return endTxnError(st.errorCode);
    const md = st.metadata;
    if (!md) return endTxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const coordinatorEpoch = st.coordinatorEpoch;
    let isEpochFence = false;
    let transit: TxnTransitMetadata;
    const invalid = (): EndTxnResult => {
      this.log.info(`${transactionalId} is ${transactionStateName(md.state)} but was asked to ${commit ? 'commit' : 'abort'}`);
      return endTxnError(ErrorCode.INVALID_TXN_STATE);
    };
    const fencing = md.pendingState === TransactionState.PrepareEpochFence;
    const currentIsV2 = !fencing && supportsEpochBump(md.clientTransactionVersion);
    // A v2 retry of an EndTxn whose bump is in the metadata already (Kafka's endTxnEpochBumped).
    const retryOnEpochBump = currentIsV2 && md.producerEpoch === producerEpoch + 1;
    // A v2 retry of an EndTxn that rolled the producer over to a new id at epoch 0.
    const retryOnOverflow = currentIsV2 && md.lastProducerId === producerId && producerEpoch === INT16_MAX - 1 && md.producerEpoch === 0;
    let validEpoch: boolean;
    if (currentIsV2) {
      switch (md.state) {
        case TransactionState.PrepareCommit:
        case TransactionState.PrepareAbort:
          validEpoch = retryOnEpochBump;
          break;
        case TransactionState.CompleteCommit:
        case TransactionState.CompleteAbort:
          validEpoch = retryOnEpochBump || retryOnOverflow;
          break;
        default:
          validEpoch = producerEpoch === md.producerEpoch;
      }
    } else {
      // A client must send the current epoch; the coordinator's own abort may carry a higher one.
      validEpoch = (!isFromClient || producerEpoch === md.producerEpoch) && producerEpoch >= md.producerEpoch;
    }
    if (md.producerId !== producerId && !retryOnOverflow) return endTxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (!validEpoch) return endTxnError(ErrorCode.PRODUCER_FENCED);
    if (md.pendingTransitionInProgress && !fencing) return endTxnError(ErrorCode.CONCURRENT_TRANSACTIONS);
    const idempotent = (): EndTxnResult => ({ errorCode: ErrorCode.NONE, producerId: md.producerId, producerEpoch: md.producerEpoch });
    try {
      switch (md.state) {
        case TransactionState.Ongoing: {
          const next = commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort;
          let bumpVersion = clientTransactionVersion;
          let nextProducerId = NO_PRODUCER_ID;
          if (supportsEpochBump(clientTransactionVersion) && !fencing && md.isProducerEpochExhausted) {
            // The bump takes the last epoch (Short.MAX_VALUE): the transaction ends on a new producer id.
            const pid = await this.generateProducerId();
            if (typeof pid === 'number') return endTxnError(pid);
            // The await let other requests in: check again that nothing moved.
            const again = this.stateManager.getTransactionState(transactionalId);
            if (again.errorCode !== ErrorCode.NONE) return endTxnError(again.errorCode);
            if (again.metadata !== md || again.coordinatorEpoch !== coordinatorEpoch) return endTxnError(ErrorCode.NOT_COORDINATOR);
            if (md.pendingTransitionInProgress) return endTxnError(ErrorCode.CONCURRENT_TRANSACTIONS);
            if (md.state !== TransactionState.Ongoing || md.producerId !== producerId || md.producerEpoch !== producerEpoch) return endTxnError(ErrorCode.PRODUCER_FENCED);
            nextProducerId = pid;
          }
          if (next === TransactionState.PrepareAbort && fencing) {
            // The fence becomes the abort: the bumped epoch goes into the PrepareAbort record.
            isEpochFence = true;
            md.pendingState = null;
            md.producerEpoch = producerEpoch;
            md.lastProducerEpoch = NO_PRODUCER_EPOCH;
            // transaction.version 2 bumps once more for the abort itself (Kafka's server TV), unless
            // the fence took the last epoch: then the abort keeps it, and the next InitProducerId
            // moves to a new producer id.
            if (md.producerEpoch >= INT16_MAX) bumpVersion = 0;
          }
          transit = md.prepareAbortOrCommit(next, this.now(), bumpVersion, nextProducerId);
          break;
        }
        case TransactionState.CompleteCommit:
          return commit ? idempotent() : invalid();
        case TransactionState.CompleteAbort:
          return commit ? invalid() : idempotent();
        case TransactionState.PrepareCommit:
          return commit ? endTxnError(ErrorCode.CONCURRENT_TRANSACTIONS) : invalid();
        case TransactionState.PrepareAbort:
          return commit ? invalid() : endTxnError(ErrorCode.CONCURRENT_TRANSACTIONS);
        case TransactionState.Empty:
          return invalid();
        default:
          throw new IllegalTransactionStateError(`${md.describe()}: EndTxn found a state it should never see`);
      }
    } catch (err) {
      if (!(err instanceof IllegalTransactionStateError)) throw err;
      this.log.error(`EndTxn of ${transactionalId}: ${err.message}`);
      return endTxnError(ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    const err = await this.stateManager.appendTransactionToLog(transactionalId, coordinatorEpoch, transit);
    if (err !== ErrorCode.NONE) {
      this.log.info(`not sending ${commit ? 'COMMIT' : 'ABORT'} markers for ${transactionalId}: writing ${transactionStateName(transit.txnState)} failed with ${errorName(err)}`);
      if (isEpochFence) {
        const now = this.stateManager.getTransactionState(transactionalId);
        if (now.errorCode === ErrorCode.NONE && now.coordinatorEpoch === coordinatorEpoch && now.metadata) {
          // The epoch was raised in memory but never written or returned: do not raise it again.
          now.metadata.hasFailedEpochFence = true;
          this.log.warn(`the epoch fence of ${transactionalId} was not written (${errorName(err)}); its epoch stays ${now.metadata.producerEpoch}`);
        }
      }
      return endTxnError(err);
    }
    const after = this.stateManager.getTransactionState(transactionalId);
    if (after.errorCode !== ErrorCode.NONE) return endTxnError(after.errorCode);
    if (after.coordinatorEpoch !== coordinatorEpoch || !after.metadata) return endTxnError(ErrorCode.NOT_COORDINATOR);
    const m = after.metadata;
    const bumped = supportsEpochBump(m.clientTransactionVersion) && m.producerEpoch === producerEpoch + 1;
    if (m.producerId !== producerId) return endTxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    if (m.producerEpoch !== producerEpoch && !bumped) return endTxnError(ErrorCode.PRODUCER_FENCED);
    if (m.pendingTransitionInProgress) return endTxnError(ErrorCode.CONCURRENT_TRANSACTIONS);
    const expected = commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort;
    if (m.state !== expected) return invalid();
    let complete: TxnTransitMetadata;
    try {
      complete = m.prepareComplete(this.now());
    } catch (e) {
      if (!(e instanceof IllegalTransactionStateError)) throw e;
      this.log.error(`EndTxn of ${transactionalId}: ${e.message}`);
      return endTxnError(ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    this.markerManager.addTxnMarkersToSend(coordinatorEpoch, commit, m, complete);
    // What the producer continues with: the bumped epoch, or the next producer id at epoch 0.
    return { errorCode: ErrorCode.NONE, producerId: complete.producerId, producerEpoch: complete.producerEpoch };
  }

  // ---- timeouts -------------------------------------------------------------------------------

  /** Aborts (and fences) every Ongoing transaction older than its timeout. Returns how many were started. */
  async abortTimedOutTransactions(): Promise<number> {
    if (!this.active) return 0;
    const work: Promise<void>[] = [];
    for (const t of this.stateManager.timedOutTransactions(this.now())) {
      const st = this.stateManager.getTransactionState(t.transactionalId);
      if (st.errorCode !== ErrorCode.NONE || !st.metadata) continue;
      const md = st.metadata;
      if (md.producerId !== t.producerId || md.pendingTransitionInProgress) continue;
      let fence: TxnTransitMetadata;
      try {
        fence = md.prepareFenceProducerEpoch();
      } catch (err) {
        if (!(err instanceof IllegalTransactionStateError)) throw err;
        this.log.error(`timing out ${t.transactionalId}: ${err.message}`);
        continue;
      }
      this.log.info(`aborting the transaction of ${t.transactionalId} (producer ${t.producerId} epoch ${t.producerEpoch}): it exceeded its timeout of ${md.txnTimeoutMs} ms`);
      work.push(
        this.endTransaction(t.transactionalId, fence.producerId, fence.producerEpoch, false, false, this.stateManager.transactionVersionLevel()).then(({ errorCode: err }) => {
          if (err === ErrorCode.NONE) this.log.info(`rolled back the timed-out transaction of ${t.transactionalId}`);
          else if (err === ErrorCode.INVALID_PRODUCER_ID_MAPPING || err === ErrorCode.PRODUCER_FENCED || err === ErrorCode.CONCURRENT_TRANSACTIONS) {
            this.log.debug(`rollback of ${t.transactionalId} cancelled: ${errorName(err)}`);
          } else this.log.warn(`rollback of the timed-out transaction of ${t.transactionalId} failed: ${errorName(err)}`);
        }),
      );
    }
    await Promise.all(work);
    return work.length;
  }

  // ---- admin ----------------------------------------------------------------------------------

  handleDescribeTransaction(transactionalId: string): DescribedTransaction {
    const base: DescribedTransaction = {
      transactionalId,
      errorCode: ErrorCode.NONE,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: -1n,
      producerId: -1n,
      producerEpoch: -1,
      topics: [],
    };
    if (!this.active) return { ...base, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
    if (transactionalId === '') return { ...base, errorCode: ErrorCode.INVALID_REQUEST };
    const st = this.stateManager.getTransactionState(transactionalId);
    if (st.errorCode !== ErrorCode.NONE) return { ...base, errorCode: st.errorCode };
    const md = st.metadata;
    // A Dead id is being expired.
    if (!md || md.state === TransactionState.Dead) return { ...base, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
    const byTopic = partitionsByTopic(md.topicPartitions.values());
    return {
      ...base,
      transactionState: transactionStateName(md.state),
      transactionTimeoutMs: md.txnTimeoutMs,
      transactionStartTimeMs: BigInt(md.txnStartTimestamp),
      producerId: md.producerId,
      producerEpoch: md.producerEpoch,
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    };
  }

  handleListTransactions(
    producerIds: readonly bigint[],
    states: readonly string[],
    durationFilterMs: bigint,
  ): { errorCode: number; unknownStateFilters: string[]; transactionStates: ListedTransaction[] } {
    if (!this.active) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, unknownStateFilters: [], transactionStates: [] };
    return this.stateManager.listTransactionStates(producerIds, states, durationFilterMs);
  }
}
