/**
 * One transactional id's state on its coordinator (Kafka's TransactionMetadata) and the transitions
 * between states (TxnTransitMetadata).
 *
 * A transition is two-phase, as in Kafka: `prepare*` checks that the move is legal, sets
 * `pendingState` and returns the target as a TxnTransitMetadata; the caller writes that target to
 * __transaction_state and, once the record is committed, calls `completeTransitionTo`, which checks
 * the target against the current state once more and applies it. While a transition is pending, no
 * other may start (callers answer CONCURRENT_TRANSACTIONS): this is what serialises concurrent
 * requests for one transactional id across the awaits of the log append. A failed append clears
 * `pendingState` (the state machine stays where it was).
 *
 * transaction.version 2 (KIP-890 part 2): a transaction ended by a client that sent EndTxn v5 (its
 * `clientTransactionVersion` is 2) gets the epoch bumped by Prepare* (epoch + 1, the previous one
 * kept as `lastProducerEpoch`); when the current epoch is exhausted (32766), Prepare* also records
 * the producer id the transaction rolls over to (`nextProducerId`, at `nextProducerEpoch` 0) and
 * Complete* makes it the producer id at epoch 0, with the old one as `lastProducerId` (Kafka's
 * previousProducerId). Complete* carries the client version of its Prepare*; every other
 * transition carries client version 0, as Kafka's do.
 *
 * Invariants: the producer epoch only grows (or restarts at 0 with a new producer id); the partition
 * set only grows while Ongoing and is emptied by the Complete* transitions; `nextProducerId` is set
 * only between a transaction.version 2 Prepare* at an exhausted epoch and its Complete*; an illegal
 * transition throws IllegalTransactionStateError, an internal error (the coordinator never answers
 * a client with a half-applied state).
 */
import { TransactionState, isValidTransition, transactionStateName } from './transaction-state';
import { topicPartitionKey } from '../../common/topic-partition';
import { supportsEpochBump } from '../../metadata/features';

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
const INT16_MAX = 0x7fff;

export interface TopicPartition {
  topic: string;
  partition: number;
}


/** Partition numbers by topic, in first-seen order: the shape of every transaction request and record. */
export function partitionsByTopic(partitions: Iterable<TopicPartition>): Map<string, number[]> {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) {
    let list = byTopic.get(tp.topic);
    if (!list) byTopic.set(tp.topic, (list = []));
    list.push(tp.partition);
  }
  return byTopic;
}

/** The target of a transition (Kafka's TxnTransitMetadata); also what the log record holds. */
export interface TxnTransitMetadata {
  producerId: bigint;
  /** The producer id before this transition (Kafka's prevProducerId). */
  lastProducerId: bigint;
  /** TV2: the producer id a Prepare* at an exhausted epoch rolls over to; -1 otherwise. */
  nextProducerId: bigint;
  /** The epoch that goes with nextProducerId (0), -1 without one. */
  nextProducerEpoch: number;
  producerEpoch: number;
  lastProducerEpoch: number;
  /** The transaction.version the client used (2: EndTxn v5); 0 for transitions not made by EndTxn. */
  clientTransactionVersion: number;
  txnTimeoutMs: number;
  txnState: TransactionState;
  topicPartitions: TopicPartition[];
  txnStartTimestamp: number;
  txnLastUpdateTimestamp: number;
}

export class IllegalTransactionStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IllegalTransactionStateError';
  }
}

/** An epoch at which no further bump is allowed (the coordinator keeps Short.MaxValue to fence with). */
export function isEpochExhausted(epoch: number): boolean {
  return epoch >= INT16_MAX - 1;
}

export class TransactionMetadata {
  /** The state a transition in progress is heading for. */
  pendingState: TransactionState | null = null;
  /** An epoch fence whose log write failed: the epoch was already bumped in memory, do not bump again. */
  hasFailedEpochFence = false;
  readonly topicPartitions = new Map<string, TopicPartition>();

  constructor(
    readonly transactionalId: string,
    public producerId: bigint,
    public lastProducerId: bigint,
    public producerEpoch: number,
    public lastProducerEpoch: number,
    public txnTimeoutMs: number,
    public state: TransactionState,
    partitions: readonly TopicPartition[],
    public txnStartTimestamp: number,
    public txnLastUpdateTimestamp: number,
    public nextProducerId: bigint = NO_PRODUCER_ID,
    public nextProducerEpoch: number = NO_PRODUCER_EPOCH,
    /** The transaction.version of the client's last transition (Kafka's clientTransactionVersion). */
    public clientTransactionVersion = 0,
  ) {
    for (const tp of partitions) this.topicPartitions.set(topicPartitionKey(tp.topic, tp.partition), tp);
  }

  get pendingTransitionInProgress(): boolean {
    return this.pendingState !== null;
  }

  get isProducerEpochExhausted(): boolean {
    return isEpochExhausted(this.producerEpoch);
  }

  /** Ongoing, or on its way to being committed or aborted. */
  get hasPendingTransaction(): boolean {
    return this.state === TransactionState.Ongoing || this.state === TransactionState.PrepareAbort || this.state === TransactionState.PrepareCommit;
  }

  partitionList(): TopicPartition[] {
    return [...this.topicPartitions.values()];
  }

  containsPartition(topic: string, partition: number): boolean {
    return this.topicPartitions.has(topicPartitionKey(topic, partition));
  }

  /** A partition's marker was written (or the partition is gone): it no longer waits for one. */
  removePartition(topic: string, partition: number): void {
    if (this.state !== TransactionState.PrepareCommit && this.state !== TransactionState.PrepareAbort) {
      throw new IllegalTransactionStateError(
        `${this.describe()}: removing partition ${topic}-${partition} whose marker was written, outside PrepareCommit/PrepareAbort`,
      );
    }
    this.topicPartitions.delete(topicPartitionKey(topic, partition));
  }

  // ---- transitions ----------------------------------------------------------------------------

  /** Fence the current producer: the epoch goes up by one (unless a previous fence's write failed). */
  prepareFenceProducerEpoch(): TxnTransitMetadata {
    if (this.producerEpoch === INT16_MAX) {
      throw new IllegalTransactionStateError(`cannot fence producer ${this.producerId} of ${this.transactionalId}: its epoch is already ${INT16_MAX}`);
    }
    const bumped = this.hasFailedEpochFence ? this.producerEpoch : this.producerEpoch + 1;
    return this.prepareTransitionTo(
      TransactionState.PrepareEpochFence,
      this.producerId,
      bumped,
      NO_PRODUCER_EPOCH,
      this.txnTimeoutMs,
      this.partitionList(),
      this.txnStartTimestamp,
      this.txnLastUpdateTimestamp,
    );
  }

  /**
   * InitProducerId on an idle transactional id: the next epoch (KIP-360: a producer that sends its
   * current id and epoch to recover gets the bump; a retry of a bump it missed gets the current
   * epoch again; anyone else is fenced). Returns the error code PRODUCER_FENCED as `{ error }`.
   */
  prepareIncrementProducerEpoch(newTxnTimeoutMs: number, expectedEpoch: number | undefined, now: number): TxnTransitMetadata | { error: 'PRODUCER_FENCED' } {
    if (this.isProducerEpochExhausted) {
      throw new IllegalTransactionStateError(`cannot allocate any more producer epochs for producer ${this.producerId} of ${this.transactionalId}`);
    }
    const bumped = this.producerEpoch + 1;
    let next: number;
    let last: number;
    if (expectedEpoch === undefined) {
      next = bumped;
      last = NO_PRODUCER_EPOCH;
    } else if (this.producerEpoch === NO_PRODUCER_EPOCH || expectedEpoch === this.producerEpoch) {
      next = bumped;
      last = this.producerEpoch;
    } else if (expectedEpoch === this.lastProducerEpoch) {
      next = this.producerEpoch;
      last = this.lastProducerEpoch;
    } else {
      return { error: 'PRODUCER_FENCED' };
    }
    return this.prepareTransitionTo(TransactionState.Empty, this.producerId, next, last, newTxnTimeoutMs, [], -1, now);
  }

  /** InitProducerId when the epoch is exhausted: a new producer id at epoch 0. */
  prepareProducerIdRotation(newProducerId: bigint, newTxnTimeoutMs: number, now: number, recordLastEpoch: boolean): TxnTransitMetadata {
    if (this.hasPendingTransaction) {
      throw new IllegalTransactionStateError(`cannot rotate the producer id of ${this.transactionalId} while a transaction is pending`);
    }
    return this.prepareTransitionTo(
      TransactionState.Empty,
      newProducerId,
      0,
      recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH,
      newTxnTimeoutMs,
      [],
      -1,
      now,
    );
  }

  /** AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with the partitions added (the start time set by the first). */
  prepareAddPartitions(added: readonly TopicPartition[], now: number): TxnTransitMetadata {
    const starts = this.state === TransactionState.Empty || this.state === TransactionState.CompleteAbort || this.state === TransactionState.CompleteCommit;
    const all = new Map(this.topicPartitions);
    for (const tp of added) all.set(topicPartitionKey(tp.topic, tp.partition), tp);
    return this.prepareTransitionTo(
      TransactionState.Ongoing,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      [...all.values()],
      starts ? now : this.txnStartTimestamp,
      now,
    );
  }

  /**
   * EndTxn: PrepareCommit or PrepareAbort with the transaction's partitions. With client
   * transaction.version 2 the epoch goes up by one (the caller made sure it cannot overflow) and
   * `nextProducerId` (a new id when the current epoch is exhausted, else -1) is recorded.
   */
  prepareAbortOrCommit(
    newState: TransactionState.PrepareCommit | TransactionState.PrepareAbort,
    now: number,
    clientTransactionVersion = 0,
    nextProducerId: bigint = NO_PRODUCER_ID,
  ): TxnTransitMetadata {
    const bump = supportsEpochBump(clientTransactionVersion);
    if (bump && this.producerEpoch >= INT16_MAX) {
      throw new IllegalTransactionStateError(`cannot bump the epoch of producer ${this.producerId} of ${this.transactionalId}: it is already ${INT16_MAX}`);
    }
    return this.prepareTransitionTo(
      newState,
      this.producerId,
      bump ? this.producerEpoch + 1 : this.producerEpoch,
      bump ? this.producerEpoch : this.lastProducerEpoch,
      this.txnTimeoutMs,
      this.partitionList(),
      this.txnStartTimestamp,
      now,
      { nextProducerId, nextProducerEpoch: nextProducerId >= 0n ? 0 : NO_PRODUCER_EPOCH, clientTransactionVersion },
    );
  }

  /**
   * Every marker is written: CompleteCommit / CompleteAbort, no partitions left. A transaction.version
   * 2 transaction that recorded a next producer id moves to it, at epoch 0.
   */
  prepareComplete(now: number): TxnTransitMetadata {
    const newState = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort;
    // The Prepare* record is in the log, so an earlier failed fence is now settled.
    this.hasFailedEpochFence = false;
    const rollOver = supportsEpochBump(this.clientTransactionVersion) && this.nextProducerId >= 0n;
    return this.prepareTransitionTo(
      newState,
      rollOver ? this.nextProducerId : this.producerId,
      rollOver ? 0 : this.producerEpoch,
      this.producerEpoch,
      this.txnTimeoutMs,
      [],
      this.txnStartTimestamp,
      now,
      { clientTransactionVersion: this.clientTransactionVersion },
    );
  }

  /** transactional.id.expiration.ms: about to be removed (a tombstone is written). */
  prepareDead(): TxnTransitMetadata {
    return this.prepareTransitionTo(
      TransactionState.Dead,
      this.producerId,
      this.producerEpoch,
      this.lastProducerEpoch,
      this.txnTimeoutMs,
      [],
      this.txnStartTimestamp,
      this.txnLastUpdateTimestamp,
    );
  }

  private prepareTransitionTo(
    newState: TransactionState,
    newProducerId: bigint,
    newEpoch: number,
    newLastEpoch: number,
    newTxnTimeoutMs: number,
    newPartitions: TopicPartition[],
    newTxnStartTimestamp: number,
    updateTimestamp: number,
    v2: { nextProducerId?: bigint; nextProducerEpoch?: number; clientTransactionVersion?: number } = {},
  ): TxnTransitMetadata {
    if (this.pendingState !== null) {
      throw new IllegalTransactionStateError(
        `${this.describe()}: preparing a transition to ${transactionStateName(newState)} while ${transactionStateName(this.pendingState)} is pending`,
      );
    }
    if (newProducerId < 0n) throw new IllegalTransactionStateError(`illegal new producer id ${newProducerId} for ${this.transactionalId}`);
    if (newState !== TransactionState.Dead && newEpoch < 0) {
      throw new IllegalTransactionStateError(`illegal new producer epoch ${newEpoch} for ${this.transactionalId}`);
    }
    if (!isValidTransition(this.state, newState)) {
      throw new IllegalTransactionStateError(`${this.describe()}: ${transactionStateName(newState)} cannot follow ${transactionStateName(this.state)}`);
    }
    this.pendingState = newState;
    return {
      producerId: newProducerId,
      lastProducerId: this.producerId,
      nextProducerId: v2.nextProducerId ?? NO_PRODUCER_ID,
      nextProducerEpoch: v2.nextProducerEpoch ?? NO_PRODUCER_EPOCH,
      producerEpoch: newEpoch,
      lastProducerEpoch: newLastEpoch,
      clientTransactionVersion: v2.clientTransactionVersion ?? 0,
      txnTimeoutMs: newTxnTimeoutMs,
      txnState: newState,
      topicPartitions: newPartitions,
      txnStartTimestamp: newTxnStartTimestamp,
      txnLastUpdateTimestamp: updateTimestamp,
    };
  }

  /**
   * Applies a transition whose record is committed. Checks what Kafka checks (the pending state
   * matches; the epoch is the same, or +1 / a new producer id at 0 for Empty; a transaction.version
   * 2 Prepare* was prepared from the current epoch, its Complete* from the current id and epoch or
   * from the id it rolls over from; partitions only grow while Ongoing and are unchanged by
   * Prepare*; the timestamps are consistent).
   */
  completeTransitionTo(t: TxnTransitMetadata): void {
    const to = this.pendingState;
    if (to === null) throw new IllegalTransactionStateError(`${this.describe()}: completing a transition with none pending`);
    if (to !== t.txnState) this.transitionFailure(t);
    // Kafka's validProducerEpoch: the id and epoch the transition was prepared from.
    const v2 = supportsEpochBump(t.clientTransactionVersion);
    const isComplete = to === TransactionState.CompleteCommit || to === TransactionState.CompleteAbort;
    const overflowComplete = v2 && isComplete && t.producerEpoch === 0;
    const fromEpoch = overflowComplete || (v2 && (to === TransactionState.PrepareCommit || to === TransactionState.PrepareAbort)) ? t.lastProducerEpoch : t.producerEpoch;
    const fromProducerId = overflowComplete ? t.lastProducerId : t.producerId;
    const sameEpoch = fromEpoch === this.producerEpoch && fromProducerId === this.producerId;
    switch (to) {
      case TransactionState.Empty: {
        const bump = t.producerEpoch === this.producerEpoch + 1 || (t.producerEpoch === 0 && t.producerId !== this.producerId);
        if ((this.producerEpoch !== t.producerEpoch && !bump) || t.topicPartitions.length > 0 || t.txnStartTimestamp !== -1) this.transitionFailure(t);
        this.txnTimeoutMs = t.txnTimeoutMs;
        this.producerEpoch = t.producerEpoch;
        this.lastProducerEpoch = t.lastProducerEpoch;
        this.producerId = t.producerId;
        this.lastProducerId = t.lastProducerId;
        break;
      }
      case TransactionState.Ongoing: {
        const keys = new Set(t.topicPartitions.map((tp) => topicPartitionKey(tp.topic, tp.partition)));
        if (!sameEpoch || [...this.topicPartitions.keys()].some((k) => !keys.has(k)) || this.txnTimeoutMs !== t.txnTimeoutMs) this.transitionFailure(t);
        this.txnStartTimestamp = t.txnStartTimestamp;
        for (const tp of t.topicPartitions) this.topicPartitions.set(topicPartitionKey(tp.topic, tp.partition), tp);
        break;
      }
      case TransactionState.PrepareAbort:
      case TransactionState.PrepareCommit: {
        const keys = new Set(t.topicPartitions.map((tp) => topicPartitionKey(tp.topic, tp.partition)));
        const same = keys.size === this.topicPartitions.size && [...this.topicPartitions.keys()].every((k) => keys.has(k));
        if (!sameEpoch || !same || this.txnTimeoutMs !== t.txnTimeoutMs || this.txnStartTimestamp !== t.txnStartTimestamp) this.transitionFailure(t);
        if (v2) {
          this.producerEpoch = t.producerEpoch;
          this.lastProducerEpoch = t.lastProducerEpoch;
          this.nextProducerId = t.nextProducerId;
          this.nextProducerEpoch = t.nextProducerEpoch;
        }
        break;
      }
      case TransactionState.CompleteAbort:
      case TransactionState.CompleteCommit:
        if (!sameEpoch || this.txnTimeoutMs !== t.txnTimeoutMs || t.txnStartTimestamp === -1) this.transitionFailure(t);
        this.txnStartTimestamp = t.txnStartTimestamp;
        this.topicPartitions.clear();
        if (v2) {
          this.producerEpoch = t.producerEpoch;
          this.lastProducerEpoch = t.lastProducerEpoch;
          this.lastProducerId = t.lastProducerId;
          this.producerId = t.producerId;
          this.nextProducerId = t.nextProducerId;
          this.nextProducerEpoch = t.nextProducerEpoch;
        }
        break;
      case TransactionState.PrepareEpochFence:
      case TransactionState.Dead:
        // Neither is ever completed: a fence turns into PrepareAbort, and Dead ends in removal.
        this.transitionFailure(t);
    }
    this.clientTransactionVersion = t.clientTransactionVersion;
    this.txnLastUpdateTimestamp = t.txnLastUpdateTimestamp;
    this.pendingState = null;
    this.state = to;
  }

  private transitionFailure(t: TxnTransitMetadata): never {
    throw new IllegalTransactionStateError(`${this.describe()}: unexpected transition to ${transactionStateName(t.txnState)} (producer ${t.producerId} epoch ${t.producerEpoch})`);
  }

  describe(): string {
    return (
      `transactional id ${this.transactionalId} (producer ${this.producerId} epoch ${this.producerEpoch}, ${transactionStateName(this.state)}` +
      `${this.pendingState !== null ? ` -> ${transactionStateName(this.pendingState)}` : ''})`
    );
  }
}
