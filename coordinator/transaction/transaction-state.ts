/**
 * The states of a transactional id on its coordinator (Kafka's TransactionState), with the byte
 * each is stored as in __transaction_state (TransactionLogValue.TransactionStatus) and the name
 * DescribeTransactions / ListTransactions report.
 *
 *   Empty -----------> Ongoing -----> PrepareCommit -----> CompleteCommit
 *     ^  (AddPartitions)   |  (EndTxn)                (markers written)   |
 *     |                    +--------> PrepareAbort ------> CompleteAbort   |
 *     |                    |            ^                                  |
 *     |                    +-> PrepareEpochFence (InitProducerId or a timeout fences an open one)
 *     +---------------------- InitProducerId (epoch bump) -----------------+
 *   Dead: the transactional id expired (transactional.id.expiration.ms); it is about to be removed.
 *
 * PrepareEpochFence is never written to the log: it only marks, in memory, that the epoch is being
 * bumped so the abort that follows carries the new epoch.
 */

export enum TransactionState {
  Empty = 0,
  Ongoing = 1,
  PrepareCommit = 2,
  PrepareAbort = 3,
  CompleteCommit = 4,
  CompleteAbort = 5,
  Dead = 6,
  PrepareEpochFence = 7,
}

const NAMES: Record<TransactionState, string> = {
  [TransactionState.Empty]: 'Empty',
  [TransactionState.Ongoing]: 'Ongoing',
  [TransactionState.PrepareCommit]: 'PrepareCommit',
  [TransactionState.PrepareAbort]: 'PrepareAbort',
  [TransactionState.CompleteCommit]: 'CompleteCommit',
  [TransactionState.CompleteAbort]: 'CompleteAbort',
  [TransactionState.Dead]: 'Dead',
  [TransactionState.PrepareEpochFence]: 'PrepareEpochFence',
};

const S = TransactionState;

/** The states a transition into each state may start from. */
const VALID_PREVIOUS: Record<TransactionState, readonly TransactionState[]> = {
  [S.Empty]: [S.Empty, S.CompleteCommit, S.CompleteAbort],
  [S.Ongoing]: [S.Ongoing, S.Empty, S.CompleteCommit, S.CompleteAbort],
  [S.PrepareCommit]: [S.Ongoing],
  [S.PrepareAbort]: [S.Ongoing, S.PrepareEpochFence],
  [S.CompleteCommit]: [S.PrepareCommit],
  [S.CompleteAbort]: [S.PrepareAbort],
  [S.Dead]: [S.Empty, S.CompleteAbort, S.CompleteCommit],
  [S.PrepareEpochFence]: [S.Ongoing],
};

export function transactionStateName(s: TransactionState): string {
  return NAMES[s];
}

/** The state a ListTransactions filter names (exact, case-sensitive, as Kafka's fromName). */
export function transactionStateFromName(name: string): TransactionState | undefined {
  for (const [k, v] of Object.entries(NAMES)) if (v === name) return Number(k) as TransactionState;
  return undefined;
}

/** The state stored as `id` in a TransactionLogValue; undefined for an id Kafka does not define. */
export function transactionStateFromId(id: number): TransactionState | undefined {
  return id >= S.Empty && id <= S.PrepareEpochFence ? (id as TransactionState) : undefined;
}

export function isValidTransition(from: TransactionState, to: TransactionState): boolean {
  return VALID_PREVIOUS[to].includes(from);
}

/** Transactional ids in these states may expire (transactional.id.expiration.ms). */
export function isExpirationAllowed(s: TransactionState): boolean {
  return s === S.Empty || s === S.CompleteCommit || s === S.CompleteAbort;
}
