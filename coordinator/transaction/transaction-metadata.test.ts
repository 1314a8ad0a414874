/**
 * TransactionMetadata's two-phase transitions against Kafka's TransactionMetadata: which state may
 * follow which, what each prepare* produces, what completeTransitionTo accepts and applies, the
 * KIP-360 epoch rules of InitProducerId, epoch exhaustion, producer id rotation and epoch fencing.
 */
import {
  IllegalTransactionStateError,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  TransactionMetadata,
  isEpochExhausted,
  type TopicPartition,
  type TxnTransitMetadata,
} from './transaction-metadata';
import { TransactionState, isExpirationAllowed, isValidTransition, transactionStateFromId, transactionStateFromName, transactionStateName } from './transaction-state';

const S = TransactionState;
const ALL_STATES = [S.Empty, S.Ongoing, S.PrepareCommit, S.PrepareAbort, S.CompleteCommit, S.CompleteAbort, S.Dead, S.PrepareEpochFence];
const T0 = 1_000_000;
const tp = (topic: string, partition: number): TopicPartition => ({ topic, partition });

function md(
  state: TransactionState,
  o: { producerId?: bigint; lastProducerId?: bigint; epoch?: number; lastEpoch?: number; timeoutMs?: number; partitions?: TopicPartition[]; start?: number; update?: number } = {},
): TransactionMetadata {
  const hasTxn = state !== S.Empty;
  return new TransactionMetadata(
    'txn',
    o.producerId ?? 42n,
    o.lastProducerId ?? NO_PRODUCER_ID,
    o.epoch ?? 3,
    o.lastEpoch ?? NO_PRODUCER_EPOCH,
    o.timeoutMs ?? 60_000,
    state,
    o.partitions ?? (hasTxn && state !== S.CompleteCommit && state !== S.CompleteAbort ? [tp('a', 0), tp('b', 1)] : []),
    o.start ?? (hasTxn ? T0 : -1),
    o.update ?? T0,
  );
}

const keys = (ps: readonly TopicPartition[]) => ps.map((p) => `${p.topic}-${p.partition}`).sort();

/** Every way into a state, with the prepare call that asks for it. */
const PREPARES: { to: TransactionState; name: string; run: (m: TransactionMetadata) => unknown }[] = [
  { to: S.Ongoing, name: 'prepareAddPartitions', run: (m) => m.prepareAddPartitions([tp('c', 0)], T0 + 1) },
  { to: S.PrepareCommit, name: 'prepareAbortOrCommit(PrepareCommit)', run: (m) => m.prepareAbortOrCommit(S.PrepareCommit, T0 + 1) },
  { to: S.PrepareAbort, name: 'prepareAbortOrCommit(PrepareAbort)', run: (m) => m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1) },
  { to: S.Dead, name: 'prepareDead', run: (m) => m.prepareDead() },
  { to: S.PrepareEpochFence, name: 'prepareFenceProducerEpoch', run: (m) => m.prepareFenceProducerEpoch() },
  { to: S.Empty, name: 'prepareIncrementProducerEpoch', run: (m) => m.prepareIncrementProducerEpoch(30_000, undefined, T0 + 1) },
];

describe('TransactionState', () => {
  test('the transition table is Kafka’s validPreviousStates', () => {
    const legal: [TransactionState, TransactionState][] = [
      [S.Empty, S.Empty],
      [S.CompleteCommit, S.Empty],
      [S.CompleteAbort, S.Empty],
      [S.Ongoing, S.Ongoing],
      [S.Empty, S.Ongoing],
      [S.CompleteCommit, S.Ongoing],
      [S.CompleteAbort, S.Ongoing],
      [S.Ongoing, S.PrepareCommit],
      [S.Ongoing, S.PrepareAbort],
      [S.PrepareEpochFence, S.PrepareAbort],
      [S.PrepareCommit, S.CompleteCommit],
      [S.PrepareAbort, S.CompleteAbort],
      [S.Empty, S.Dead],
      [S.CompleteAbort, S.Dead],
      [S.CompleteCommit, S.Dead],
      [S.Ongoing, S.PrepareEpochFence],
    ];
    const isLegal = (from: TransactionState, to: TransactionState) => legal.some(([f, t]) => f === from && t === to);
    for (const from of ALL_STATES) for (const to of ALL_STATES) expect([from, to, isValidTransition(from, to)]).toEqual([from, to, isLegal(from, to)]);
  });

  test('ids and names are Kafka’s; only Empty and Complete* may expire', () => {
    expect(ALL_STATES.map((s) => [s, transactionStateName(s)])).toEqual([
      [0, 'Empty'],
      [1, 'Ongoing'],
      [2, 'PrepareCommit'],
      [3, 'PrepareAbort'],
      [4, 'CompleteCommit'],
      [5, 'CompleteAbort'],
      [6, 'Dead'],
      [7, 'PrepareEpochFence'],
    ]);
    for (const s of ALL_STATES) {
      expect(transactionStateFromName(transactionStateName(s))).toBe(s);
      expect(transactionStateFromId(s)).toBe(s);
    }
    expect(transactionStateFromName('ongoing')).toBeUndefined(); // case-sensitive, as Kafka's fromName
    expect(transactionStateFromId(8)).toBeUndefined();
    expect(transactionStateFromId(-1)).toBeUndefined();
    expect(ALL_STATES.filter(isExpirationAllowed)).toEqual([S.Empty, S.CompleteCommit, S.CompleteAbort]);
  });
});

describe('TransactionMetadata', () => {
  describe('every prepare* is legal exactly from the states Kafka allows', () => {
    for (const p of PREPARES) {
      for (const from of ALL_STATES) {
        const legal = isValidTransition(from, p.to);
        test(`${p.name} from ${transactionStateName(from)}: ${legal ? 'legal' : 'IllegalTransactionStateError'}`, () => {
          const m = md(from);
          if (legal) {
            const t = p.run(m) as TxnTransitMetadata;
            expect(t.txnState).toBe(p.to);
            expect(m.pendingState).toBe(p.to);
            expect(m.state).toBe(from); // nothing applied before the record is committed
          } else {
            expect(() => p.run(m)).toThrow(IllegalTransactionStateError);
            expect(m.pendingState).toBeNull();
            expect(m.state).toBe(from);
          }
        });
      }
    }
  });

  test('prepareComplete picks CompleteCommit after PrepareCommit, CompleteAbort after PrepareAbort, and nothing else', () => {
    expect(md(S.PrepareCommit).prepareComplete(T0 + 5).txnState).toBe(S.CompleteCommit);
    expect(md(S.PrepareAbort).prepareComplete(T0 + 5).txnState).toBe(S.CompleteAbort);
    for (const from of ALL_STATES.filter((s) => s !== S.PrepareCommit && s !== S.PrepareAbort)) {
      const m = md(from);
      expect(() => m.prepareComplete(T0 + 5)).toThrow(IllegalTransactionStateError);
      expect(m.pendingState).toBeNull();
    }
  });

  test('a pending transition blocks a second prepare until it completes or is cleared', () => {
    const m = md(S.Empty);
    const add = m.prepareAddPartitions([tp('a', 0)], T0 + 1);
    expect(m.pendingTransitionInProgress).toBe(true);
    expect(() => m.prepareAddPartitions([tp('a', 1)], T0 + 2)).toThrow(/while Ongoing is pending/);
    expect(() => m.prepareDead()).toThrow(IllegalTransactionStateError);
    expect(() => m.prepareIncrementProducerEpoch(1000, undefined, T0 + 2)).toThrow(IllegalTransactionStateError);
    m.completeTransitionTo(add);
    expect(m.pendingState).toBeNull();
    expect(m.state).toBe(S.Ongoing);
    // A failed append clears the pending state: the machine stays where it was and may move again.
    m.prepareAbortOrCommit(S.PrepareCommit, T0 + 3);
    m.pendingState = null;
    expect(m.state).toBe(S.Ongoing);
    expect(m.prepareAbortOrCommit(S.PrepareAbort, T0 + 4).txnState).toBe(S.PrepareAbort);
  });

  test('a whole transaction: Empty -> Ongoing (twice) -> PrepareCommit -> CompleteCommit -> Empty', () => {
    const m = md(S.Empty, { epoch: 0, start: -1, partitions: [] });
    const first = m.prepareAddPartitions([tp('a', 0)], T0 + 10);
    expect(first).toEqual({
      producerId: 42n,
      lastProducerId: 42n,
      nextProducerId: NO_PRODUCER_ID,
        nextProducerEpoch: NO_PRODUCER_EPOCH,
        clientTransactionVersion: 0,
      producerEpoch: 0,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      txnTimeoutMs: 60_000,
      txnState: S.Ongoing,
      topicPartitions: [tp('a', 0)],
      txnStartTimestamp: T0 + 10, // the first partition starts the transaction
      txnLastUpdateTimestamp: T0 + 10,
    });
    m.completeTransitionTo(first);
    expect(m.txnStartTimestamp).toBe(T0 + 10);

    const second = m.prepareAddPartitions([tp('a', 0), tp('b', 2)], T0 + 20);
    expect(keys(second.topicPartitions)).toEqual(['a-0', 'b-2']);
    expect(second.txnStartTimestamp).toBe(T0 + 10); // not restarted by later partitions
    m.completeTransitionTo(second);
    expect(keys(m.partitionList())).toEqual(['a-0', 'b-2']);
    expect(m.txnLastUpdateTimestamp).toBe(T0 + 20);
    expect(m.hasPendingTransaction).toBe(true);

    const prepare = m.prepareAbortOrCommit(S.PrepareCommit, T0 + 30);
    expect(keys(prepare.topicPartitions)).toEqual(['a-0', 'b-2']);
    m.completeTransitionTo(prepare);
    expect(m.state).toBe(S.PrepareCommit);
    expect(keys(m.partitionList())).toEqual(['a-0', 'b-2']); // kept until every marker is written

    const complete = m.prepareComplete(T0 + 40);
    expect(complete.topicPartitions).toEqual([]);
    expect(complete.txnStartTimestamp).toBe(T0 + 10);
    m.completeTransitionTo(complete);
    expect(m.state).toBe(S.CompleteCommit);
    expect(m.topicPartitions.size).toBe(0);
    expect(m.hasPendingTransaction).toBe(false);

    // The next transaction restarts the clock.
    const next = m.prepareAddPartitions([tp('c', 0)], T0 + 50);
    expect(next.txnStartTimestamp).toBe(T0 + 50);
    expect(next.topicPartitions).toEqual([tp('c', 0)]);
  });

  test('prepareComplete clears the partitions even when markers did not remove them, and resets hasFailedEpochFence', () => {
    const m = md(S.PrepareAbort, { partitions: [tp('a', 0), tp('a', 1)] });
    m.hasFailedEpochFence = true;
    const t = m.prepareComplete(T0 + 1);
    expect(m.hasFailedEpochFence).toBe(false);
    expect(m.partitionList()).toHaveLength(2); // untouched until completion
    m.completeTransitionTo(t);
    expect(m.state).toBe(S.CompleteAbort);
    expect(m.partitionList()).toEqual([]);
  });

  describe('completeTransitionTo checks what Kafka checks', () => {
    test('nothing pending, or a different target state', () => {
      const m = md(S.Ongoing);
      const t = md(S.Ongoing).prepareAbortOrCommit(S.PrepareCommit, T0 + 1);
      expect(() => m.completeTransitionTo(t)).toThrow(/none pending/);
      m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1);
      expect(() => m.completeTransitionTo(t)).toThrow(IllegalTransactionStateError);
      expect(m.state).toBe(S.Ongoing);
    });

    test('Empty: the same epoch, +1, or 0 with a new producer id; no partitions; no start time', () => {
      const transit = (over: Partial<TxnTransitMetadata>) => {
        const m = md(S.CompleteCommit, { epoch: 5 });
        const t = m.prepareIncrementProducerEpoch(60_000, undefined, T0 + 1) as TxnTransitMetadata;
        return { m, t: { ...t, ...over } };
      };
      for (const ok of [{ producerEpoch: 5 }, { producerEpoch: 6 }, { producerEpoch: 0, producerId: 43n }]) {
        const { m, t } = transit(ok);
        m.completeTransitionTo(t);
        expect([m.state, m.producerEpoch, m.producerId]).toEqual([S.Empty, t.producerEpoch, t.producerId]);
      }
      for (const bad of [{ producerEpoch: 7 }, { producerEpoch: 0 }, { topicPartitions: [tp('a', 0)] }, { txnStartTimestamp: T0 }]) {
        const { m, t } = transit(bad);
        expect(() => m.completeTransitionTo(t)).toThrow(IllegalTransactionStateError);
        expect([m.state, m.producerEpoch]).toEqual([S.CompleteCommit, 5]);
      }
    });

    test('Ongoing: same producer id and epoch, the partitions only grow, the timeout does not change', () => {
      const bads: Partial<TxnTransitMetadata>[] = [{ producerEpoch: 4 }, { producerId: 7n }, { topicPartitions: [tp('c', 0)] }, { txnTimeoutMs: 1 }];
      for (const bad of bads) {
        const m = md(S.Ongoing);
        const t = m.prepareAddPartitions([tp('c', 0)], T0 + 1);
        expect(() => m.completeTransitionTo({ ...t, ...bad })).toThrow(IllegalTransactionStateError);
        expect(keys(m.partitionList())).toEqual(['a-0', 'b-1']);
      }
    });

    test('Prepare*: same epoch, exactly the same partitions, same timeout and start time', () => {
      const bads: Partial<TxnTransitMetadata>[] = [
        { producerEpoch: 4 },
        { topicPartitions: [tp('a', 0)] },
        { topicPartitions: [tp('a', 0), tp('b', 1), tp('c', 0)] },
        { txnTimeoutMs: 1 },
        { txnStartTimestamp: T0 + 1 },
      ];
      for (const bad of bads) {
        const m = md(S.Ongoing);
        const t = m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1);
        expect(() => m.completeTransitionTo({ ...t, ...bad })).toThrow(IllegalTransactionStateError);
        expect(m.state).toBe(S.Ongoing);
      }
    });

    test('Complete*: same epoch and timeout, and a real start time', () => {
      for (const bad of [{ producerEpoch: 9 }, { txnTimeoutMs: 1 }, { txnStartTimestamp: -1 }] as Partial<TxnTransitMetadata>[]) {
        const m = md(S.PrepareCommit);
        const t = m.prepareComplete(T0 + 1);
        expect(() => m.completeTransitionTo({ ...t, ...bad })).toThrow(IllegalTransactionStateError);
        expect(m.state).toBe(S.PrepareCommit);
        expect(m.partitionList()).toHaveLength(2);
      }
    });

    test('PrepareEpochFence and Dead are never completed', () => {
      const fence = md(S.Ongoing);
      expect(() => fence.completeTransitionTo(fence.prepareFenceProducerEpoch())).toThrow(IllegalTransactionStateError);
      const dead = md(S.Empty);
      expect(() => dead.completeTransitionTo(dead.prepareDead())).toThrow(IllegalTransactionStateError);
      expect(dead.state).toBe(S.Empty);
    });
  });

  describe('prepareIncrementProducerEpoch (InitProducerId, KIP-360)', () => {
    test('no expected epoch: bump, and forget the last epoch', () => {
      const m = md(S.CompleteAbort, { epoch: 3, lastEpoch: 2 });
      const t = m.prepareIncrementProducerEpoch(10_000, undefined, T0 + 7) as TxnTransitMetadata;
      expect(t).toEqual({
        producerId: 42n,
        lastProducerId: 42n,
        nextProducerId: NO_PRODUCER_ID,
        nextProducerEpoch: NO_PRODUCER_EPOCH,
        clientTransactionVersion: 0,
        producerEpoch: 4,
        lastProducerEpoch: NO_PRODUCER_EPOCH,
        txnTimeoutMs: 10_000,
        txnState: S.Empty,
        topicPartitions: [],
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: T0 + 7,
      });
      m.completeTransitionTo(t);
      expect([m.producerEpoch, m.lastProducerEpoch, m.txnTimeoutMs, m.state]).toEqual([4, NO_PRODUCER_EPOCH, 10_000, S.Empty]);
    });

    test('a brand-new id (epoch -1) starts at 0 whatever was expected', () => {
      const m = md(S.Empty, { epoch: NO_PRODUCER_EPOCH });
      expect(m.prepareIncrementProducerEpoch(1000, undefined, T0)).toMatchObject({ producerEpoch: 0, lastProducerEpoch: NO_PRODUCER_EPOCH });
      const n = md(S.Empty, { epoch: NO_PRODUCER_EPOCH });
      expect(n.prepareIncrementProducerEpoch(1000, 17, T0)).toMatchObject({ producerEpoch: 0, lastProducerEpoch: NO_PRODUCER_EPOCH });
    });

    test('expected == current: the producer recovers; bump and remember the epoch it had', () => {
      const m = md(S.Empty, { epoch: 3 });
      const t = m.prepareIncrementProducerEpoch(1000, 3, T0) as TxnTransitMetadata;
      expect([t.producerEpoch, t.lastProducerEpoch]).toEqual([4, 3]);
      m.completeTransitionTo(t);
      // The retry of that bump (the producer missed the answer) gets the same epoch again.
      const retry = m.prepareIncrementProducerEpoch(1000, 3, T0 + 1) as TxnTransitMetadata;
      expect([retry.producerEpoch, retry.lastProducerEpoch]).toEqual([4, 3]);
      m.completeTransitionTo(retry);
      expect(m.producerEpoch).toBe(4);
    });

    test('expected == last (not current): a retry of a bump that succeeded, no new bump', () => {
      const m = md(S.CompleteCommit, { epoch: 8, lastEpoch: 7 });
      expect(m.prepareIncrementProducerEpoch(1000, 7, T0)).toMatchObject({ producerEpoch: 8, lastProducerEpoch: 7, txnState: S.Empty });
    });

    test('any other expected epoch is PRODUCER_FENCED and prepares nothing', () => {
      const m = md(S.Empty, { epoch: 8, lastEpoch: 7 });
      expect(m.prepareIncrementProducerEpoch(1000, 6, T0)).toEqual({ error: 'PRODUCER_FENCED' });
      expect(m.prepareIncrementProducerEpoch(1000, 9, T0)).toEqual({ error: 'PRODUCER_FENCED' });
      expect(m.pendingState).toBeNull();
    });

    test('an exhausted epoch (Short.MaxValue - 1 and above) cannot be bumped', () => {
      expect([32764, 32765, 32766, 32767].map(isEpochExhausted)).toEqual([false, false, true, true]);
      const last = md(S.Empty, { epoch: 32765 });
      expect(last.isProducerEpochExhausted).toBe(false);
      expect(last.prepareIncrementProducerEpoch(1000, undefined, T0)).toMatchObject({ producerEpoch: 32766 });
      const m = md(S.Empty, { epoch: 32766 });
      expect(m.isProducerEpochExhausted).toBe(true);
      expect(() => m.prepareIncrementProducerEpoch(1000, undefined, T0)).toThrow(/cannot allocate any more producer epochs/);
      expect(m.pendingState).toBeNull();
    });
  });

  describe('prepareProducerIdRotation', () => {
    test('a new producer id at epoch 0; the old id becomes the last one; the old epoch kept only when asked', () => {
      const m = md(S.CompleteCommit, { producerId: 42n, epoch: 32766 });
      const t = m.prepareProducerIdRotation(99n, 5000, T0 + 3, true);
      expect(t).toEqual({
        producerId: 99n,
        lastProducerId: 42n,
        nextProducerId: NO_PRODUCER_ID,
        nextProducerEpoch: NO_PRODUCER_EPOCH,
        clientTransactionVersion: 0,
        producerEpoch: 0,
        lastProducerEpoch: 32766,
        txnTimeoutMs: 5000,
        txnState: S.Empty,
        topicPartitions: [],
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: T0 + 3,
      });
      m.completeTransitionTo(t);
      expect([m.producerId, m.lastProducerId, m.producerEpoch, m.lastProducerEpoch]).toEqual([99n, 42n, 0, 32766]);
      expect(md(S.Empty, { epoch: 32766 }).prepareProducerIdRotation(99n, 5000, T0, false).lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
    });

    test('not while a transaction is pending (Ongoing, PrepareCommit, PrepareAbort), nor to a negative id', () => {
      for (const s of [S.Ongoing, S.PrepareCommit, S.PrepareAbort]) {
        const m = md(s, { epoch: 32766 });
        expect(() => m.prepareProducerIdRotation(99n, 5000, T0, false)).toThrow(/while a transaction is pending/);
        expect(m.pendingState).toBeNull();
      }
      expect(() => md(S.Empty).prepareProducerIdRotation(-5n, 5000, T0, false)).toThrow(/illegal new producer id/);
    });
  });

  describe('prepareFenceProducerEpoch', () => {
    test('bumps the epoch by one, forgets the last epoch, keeps the transaction', () => {
      const m = md(S.Ongoing, { epoch: 5, lastEpoch: 4 });
      const t = m.prepareFenceProducerEpoch();
      expect(t).toEqual({
        producerId: 42n,
        lastProducerId: 42n,
        nextProducerId: NO_PRODUCER_ID,
        nextProducerEpoch: NO_PRODUCER_EPOCH,
        clientTransactionVersion: 0,
        producerEpoch: 6,
        lastProducerEpoch: NO_PRODUCER_EPOCH,
        txnTimeoutMs: 60_000,
        txnState: S.PrepareEpochFence,
        topicPartitions: [tp('a', 0), tp('b', 1)],
        txnStartTimestamp: T0,
        txnLastUpdateTimestamp: T0,
      });
      expect(m.producerEpoch).toBe(5); // the bump is applied by the abort that follows, not here
      expect(m.pendingState).toBe(S.PrepareEpochFence);
      // The abort that follows may start from the fence (Kafka's PrepareAbort.validPreviousStates).
      expect(isValidTransition(S.PrepareEpochFence, S.PrepareAbort)).toBe(true);
    });

    test('after a failed fence write the epoch is not bumped again', () => {
      const m = md(S.Ongoing, { epoch: 6 });
      m.hasFailedEpochFence = true;
      expect(m.prepareFenceProducerEpoch().producerEpoch).toBe(6);
    });

    test('may reach Short.MaxValue (so an exhausted producer can still be fenced) but never overflow it', () => {
      expect(md(S.Ongoing, { epoch: 32766 }).prepareFenceProducerEpoch().producerEpoch).toBe(32767);
      const m = md(S.Ongoing, { epoch: 32767 });
      expect(() => m.prepareFenceProducerEpoch()).toThrow(/already 32767/);
      expect(m.pendingState).toBeNull();
      const failed = md(S.Ongoing, { epoch: 32767 });
      failed.hasFailedEpochFence = true;
      expect(() => failed.prepareFenceProducerEpoch()).toThrow(IllegalTransactionStateError);
    });
  });

  test('prepareDead keeps the timestamps (the tombstone’s record) and may carry the initial epoch -1', () => {
    const m = md(S.Empty, { epoch: NO_PRODUCER_EPOCH, update: T0 - 5 });
    expect(m.prepareDead()).toMatchObject({ txnState: S.Dead, producerEpoch: NO_PRODUCER_EPOCH, txnLastUpdateTimestamp: T0 - 5, topicPartitions: [] });
    // Any other transition needs a real epoch.
    const n = md(S.Empty, { epoch: NO_PRODUCER_EPOCH });
    expect(() => n.prepareAddPartitions([tp('a', 0)], T0)).toThrow(/illegal new producer epoch/);
  });

  test('removePartition only while the markers of PrepareCommit/PrepareAbort are written', () => {
    for (const s of [S.PrepareCommit, S.PrepareAbort]) {
      const m = md(s);
      m.removePartition('a', 0);
      expect(keys(m.partitionList())).toEqual(['b-1']);
      expect(m.containsPartition('a', 0)).toBe(false);
      m.removePartition('a', 7); // not there: nothing to do
      expect(m.partitionList()).toHaveLength(1);
    }
    for (const s of [S.Empty, S.Ongoing, S.CompleteCommit, S.CompleteAbort, S.Dead, S.PrepareEpochFence]) {
      const m = md(s, { partitions: [tp('a', 0)] });
      expect(() => m.removePartition('a', 0)).toThrow(IllegalTransactionStateError);
      expect(m.containsPartition('a', 0)).toBe(true);
    }
  });

  test('partitions are a set: the same partition added twice is kept once', () => {
    const m = md(S.Ongoing, { partitions: [tp('a', 0)] });
    const t = m.prepareAddPartitions([tp('a', 0), tp('a', 0), tp('a', 1)], T0 + 1);
    expect(keys(t.topicPartitions)).toEqual(['a-0', 'a-1']);
    m.completeTransitionTo(t);
    expect(keys(m.partitionList())).toEqual(['a-0', 'a-1']);
    // A topic whose name looks like another's with a partition suffix stays distinct.
    const n = md(S.Ongoing, { partitions: [tp('a-1', 0), tp('a', 10)] });
    expect(n.containsPartition('a', 10)).toBe(true);
    expect(n.containsPartition('a-1', 0)).toBe(true);
    expect(n.containsPartition('a-10', 0)).toBe(false);
  });
});

describe('TransactionMetadata at transaction.version 2 (KIP-890 part 2)', () => {
  test('Prepare* of a version 2 client bumps the epoch (the old one kept as last); Complete* keeps the bumped epoch and the client version', () => {
    const m = md(S.Ongoing, { epoch: 7, lastEpoch: 6 });
    const prepare = m.prepareAbortOrCommit(S.PrepareCommit, T0 + 1, 2);
    expect(prepare).toMatchObject({ producerId: 42n, producerEpoch: 8, lastProducerEpoch: 7, nextProducerId: NO_PRODUCER_ID, nextProducerEpoch: NO_PRODUCER_EPOCH, clientTransactionVersion: 2 });
    expect(m.producerEpoch).toBe(7); // applied only once written
    m.completeTransitionTo(prepare);
    expect([m.producerEpoch, m.lastProducerEpoch, m.clientTransactionVersion, m.state]).toEqual([8, 7, 2, S.PrepareCommit]);
    const complete = m.prepareComplete(T0 + 2);
    expect(complete).toMatchObject({ producerId: 42n, lastProducerId: 42n, producerEpoch: 8, lastProducerEpoch: 8, clientTransactionVersion: 2, topicPartitions: [] });
    m.completeTransitionTo(complete);
    expect([m.producerId, m.producerEpoch, m.clientTransactionVersion, m.state, m.partitionList().length]).toEqual([42n, 8, 2, S.CompleteCommit, 0]);
    // The next transaction's AddPartitions is a transition of client version 0, on the bumped epoch.
    const add = m.prepareAddPartitions([tp('a', 0)], T0 + 3);
    expect(add).toMatchObject({ producerEpoch: 8, clientTransactionVersion: 0 });
    m.completeTransitionTo(add);
    expect(m.clientTransactionVersion).toBe(0);
  });

  test('a client of version 0 keeps the epoch, whatever the cluster', () => {
    const m = md(S.Ongoing, { epoch: 7, lastEpoch: 6 });
    expect(m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1)).toMatchObject({ producerEpoch: 7, lastProducerEpoch: 6, clientTransactionVersion: 0 });
  });

  test('at an exhausted epoch: Prepare* at Short.MAX_VALUE records the next producer id; Complete* moves to it at epoch 0', () => {
    const m = md(S.Ongoing, { epoch: 32766 });
    const prepare = m.prepareAbortOrCommit(S.PrepareAbort, T0 + 1, 2, 77n);
    expect(prepare).toMatchObject({ producerId: 42n, producerEpoch: 32767, lastProducerEpoch: 32766, nextProducerId: 77n, nextProducerEpoch: 0 });
    m.completeTransitionTo(prepare);
    expect([m.producerId, m.producerEpoch, m.nextProducerId, m.nextProducerEpoch]).toEqual([42n, 32767, 77n, 0]);
    const complete = m.prepareComplete(T0 + 2);
    expect(complete).toMatchObject({ producerId: 77n, lastProducerId: 42n, producerEpoch: 0, lastProducerEpoch: 32767, nextProducerId: NO_PRODUCER_ID });
    m.completeTransitionTo(complete);
    expect([m.producerId, m.lastProducerId, m.producerEpoch, m.lastProducerEpoch, m.nextProducerId, m.state]).toEqual([77n, 42n, 0, 32767, NO_PRODUCER_ID, S.CompleteAbort]);
    // No epoch above Short.MAX_VALUE.
    expect(() => md(S.Ongoing, { epoch: 32767 }).prepareAbortOrCommit(S.PrepareCommit, T0, 2)).toThrow(IllegalTransactionStateError);
  });

  test('completeTransitionTo checks what the version 2 transition was prepared from (Kafka’s validProducerEpoch)', () => {
    const m = md(S.Ongoing, { epoch: 7 });
    const prepare = m.prepareAbortOrCommit(S.PrepareCommit, T0 + 1, 2);
    // Prepared from epoch 7: a Prepare* claiming another starting epoch is refused.
    expect(() => m.completeTransitionTo({ ...prepare, lastProducerEpoch: 5 })).toThrow(IllegalTransactionStateError);
    m.completeTransitionTo(prepare);
    const complete = m.prepareComplete(T0 + 2);
    expect(() => m.completeTransitionTo({ ...complete, producerEpoch: 9 })).toThrow(IllegalTransactionStateError);
    // A roll-over Complete* must come from the current id.
    expect(() => m.completeTransitionTo({ ...complete, producerId: 77n, lastProducerId: 41n, producerEpoch: 0 })).toThrow(IllegalTransactionStateError);
    m.completeTransitionTo(complete);
    expect(m.state).toBe(S.CompleteCommit);
  });
});
