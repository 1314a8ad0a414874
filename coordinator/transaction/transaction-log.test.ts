/**
 * The __transaction_state record codec against Kafka's TransactionLog format: a version-prefixed
 * TransactionLogKey (v0) and TransactionLogValue (v0 classic, v1 flexible with tagged fields). The
 * expected bytes are built here by hand from the schemas in kafka-protocol/transaction-coordinator/
 * (not with the generated codec), so a change in the codec or in the generator shows up.
 */
import { Writer } from '../../protocol/primitives/writer';
import { Reader } from '../../protocol/primitives/reader';
import { readTransactionLogValue, writeTransactionLogValue } from '../../protocol/generated/records/transaction-coordinator/transaction-log-value';
import { readTransactionLogKeyId, readTransactionLogMetadata, transactionLogKey, transactionLogValue, transactionLogValueVersion } from './transaction-log';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, type TxnTransitMetadata } from './transaction-metadata';
import { TransactionState } from './transaction-state';

/** Big-endian fields and Kafka's length encodings, for writing the expected bytes by hand. */
const be = {
  i8: (v: number) => Buffer.from([v & 0xff]),
  i16: (v: number) => {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    return b;
  },
  i32: (v: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return b;
  },
  i64: (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    return b;
  },
  /** Unsigned varints below 128 are one byte (all this test needs). */
  uvarint: (v: number) => {
    if (v < 0 || v > 127) throw new Error('test helper: one-byte varints only');
    return Buffer.from([v]);
  },
  str: (s: string) => Buffer.concat([be.i16(Buffer.byteLength(s)), Buffer.from(s, 'utf8')]),
  compactStr: (s: string) => Buffer.concat([be.uvarint(Buffer.byteLength(s) + 1), Buffer.from(s, 'utf8')]),
};

function transit(over: Partial<TxnTransitMetadata> = {}): TxnTransitMetadata {
  return {
    producerId: 1234n,
    lastProducerId: 1200n,
    nextProducerId: -1n,
    nextProducerEpoch: -1,
    clientTransactionVersion: 0,
    producerEpoch: 7,
    lastProducerEpoch: 6,
    txnTimeoutMs: 60_000,
    txnState: TransactionState.PrepareCommit,
    topicPartitions: [
      { topic: 'b', partition: 0 },
      { topic: 'a', partition: 2 },
      { topic: 'a', partition: 1 },
    ],
    txnStartTimestamp: 1_700_000_000_000,
    txnLastUpdateTimestamp: 1_700_000_000_500,
    ...over,
  };
}

describe('TransactionLog key', () => {
  test('int16 version 0, then TransactionLogKey v0 (a classic string); reads back', () => {
    const key = transactionLogKey('my-txn');
    expect(key).toEqual(Buffer.concat([be.i16(0), be.str('my-txn')]));
    expect(readTransactionLogKeyId(key)).toBe('my-txn');
    const utf8 = transactionLogKey('txn-é✓');
    expect(utf8).toEqual(Buffer.concat([be.i16(0), be.str('txn-é✓')]));
    expect(readTransactionLogKeyId(utf8)).toBe('txn-é✓');
  });

  test('a key version this broker does not know is skipped (undefined), as Kafka’s UnknownKey', () => {
    expect(readTransactionLogKeyId(Buffer.concat([be.i16(1), be.str('my-txn')]))).toBeUndefined();
    expect(readTransactionLogKeyId(Buffer.concat([be.i16(-1), be.str('my-txn')]))).toBeUndefined();
    // A truncated key is an error for the loader to report.
    expect(() => readTransactionLogKeyId(Buffer.concat([be.i16(0), be.i16(10), Buffer.from('abc')]))).toThrow();
  });
});

describe('TransactionLog value', () => {
  test('v1 (flexible) bytes match the schema, with PreviousProducerId as tagged field 0', () => {
    const value = transactionLogValue(transit());
    const expected = Buffer.concat([
      be.i16(1), // value version
      be.i64(1234n), // ProducerId
      be.i16(7), // ProducerEpoch
      be.i32(60_000), // TransactionTimeoutMs
      be.i8(TransactionState.PrepareCommit), // TransactionStatus
      be.uvarint(2 + 1), // TransactionPartitions: compact array of 2 topics, in first-seen order
      be.compactStr('b'),
      be.uvarint(1 + 1),
      be.i32(0),
      be.uvarint(0), // PartitionsSchema tagged fields
      be.compactStr('a'),
      be.uvarint(2 + 1),
      be.i32(1), // partition ids sorted
      be.i32(2),
      be.uvarint(0),
      be.i64(1_700_000_000_500n), // TransactionLastUpdateTimestampMs
      be.i64(1_700_000_000_000n), // TransactionStartTimestampMs
      be.uvarint(1), // one tagged field
      be.uvarint(0), // tag 0: PreviousProducerId
      be.uvarint(8),
      be.i64(1200n),
    ]);
    expect(value.toString('hex')).toBe(expected.toString('hex'));
  });

  test('defaults are not written as tagged fields (PreviousProducerId -1, NextProducerId -1, ClientTransactionVersion 0)', () => {
    const value = transactionLogValue(transit({ lastProducerId: NO_PRODUCER_ID, topicPartitions: [{ topic: 't', partition: 3 }] }));
    expect(value.subarray(value.length - 1)).toEqual(be.uvarint(0));
    expect(value.length).toBe(2 + 8 + 2 + 4 + 1 + (1 + 2 + 1 + 4 + 1) + 8 + 8 + 1);
  });

  test('round trip: every field the coordinator keeps comes back; the last epoch is not stored', () => {
    const md = readTransactionLogMetadata('my-txn', transactionLogValue(transit()))!;
    expect(md.transactionalId).toBe('my-txn');
    expect(md.producerId).toBe(1234n);
    expect(md.lastProducerId).toBe(1200n);
    expect(md.producerEpoch).toBe(7);
    expect(md.lastProducerEpoch).toBe(NO_PRODUCER_EPOCH);
    expect(md.txnTimeoutMs).toBe(60_000);
    expect(md.state).toBe(TransactionState.PrepareCommit);
    expect(md.partitionList().map((p) => `${p.topic}-${p.partition}`).sort()).toEqual(['a-1', 'a-2', 'b-0']);
    expect(md.txnStartTimestamp).toBe(1_700_000_000_000);
    expect(md.txnLastUpdateTimestamp).toBe(1_700_000_000_500);
    expect(md.pendingState).toBeNull();
    expect(md.hasFailedEpochFence).toBe(false);
  });

  test.each([
    ['Ongoing', TransactionState.Ongoing],
    ['PrepareAbort', TransactionState.PrepareAbort],
    ['CompleteCommit', TransactionState.CompleteCommit],
    ['CompleteAbort', TransactionState.CompleteAbort],
  ])('%s round-trips', (_name, txnState) => {
    const partitions = txnState === TransactionState.CompleteCommit || txnState === TransactionState.CompleteAbort ? [] : [{ topic: 'x', partition: 0 }];
    const md = readTransactionLogMetadata('t', transactionLogValue(transit({ txnState, topicPartitions: partitions })))!;
    expect(md.state).toBe(txnState);
    expect(md.partitionList()).toEqual(partitions);
  });

  test('Empty writes a null partition list (Kafka’s format) and reads back with none', () => {
    const value = transactionLogValue(transit({ txnState: TransactionState.Empty, topicPartitions: [], txnStartTimestamp: -1 }));
    const expected = Buffer.concat([
      be.i16(1),
      be.i64(1234n),
      be.i16(7),
      be.i32(60_000),
      be.i8(TransactionState.Empty),
      be.uvarint(0), // compact null array
      be.i64(1_700_000_000_500n),
      be.i64(-1n),
      be.uvarint(1),
      be.uvarint(0),
      be.uvarint(8),
      be.i64(1200n),
    ]);
    expect(value.toString('hex')).toBe(expected.toString('hex'));
    const md = readTransactionLogMetadata('t', value)!;
    expect(md.state).toBe(TransactionState.Empty);
    expect(md.topicPartitions.size).toBe(0);
    expect(md.txnStartTimestamp).toBe(-1);
  });

  test('an Empty record with partitions is refused (Kafka throws IllegalStateException)', () => {
    expect(() => transactionLogValue(transit({ txnState: TransactionState.Empty }))).toThrow(/cannot carry partitions/);
  });

  test('a v0 value (classic encoding, no tagged fields) written by an older Kafka reads back', () => {
    const w = new Writer();
    w.int16(0);
    writeTransactionLogValue(w, 0, {
      producerId: 77n,
      producerEpoch: 3,
      transactionTimeoutMs: 15_000,
      transactionStatus: TransactionState.Ongoing,
      transactionPartitions: [{ topic: 'orders', partitionIds: [4, 0] }],
      transactionLastUpdateTimestampMs: 2000n,
      transactionStartTimestampMs: 1000n,
    });
    const v0 = w.toBuffer();
    // The schema's v0 layout: int16 array length, int16-length strings, no tagged-field sections.
    const expected = Buffer.concat([
      be.i16(0),
      be.i64(77n),
      be.i16(3),
      be.i32(15_000),
      be.i8(TransactionState.Ongoing),
      be.i32(1),
      be.str('orders'),
      be.i32(2),
      be.i32(4),
      be.i32(0),
      be.i64(2000n),
      be.i64(1000n),
    ]);
    expect(v0.toString('hex')).toBe(expected.toString('hex'));

    const md = readTransactionLogMetadata('old', v0)!;
    expect(md.producerId).toBe(77n);
    expect(md.lastProducerId).toBe(NO_PRODUCER_ID); // PreviousProducerId defaults to -1
    expect(md.producerEpoch).toBe(3);
    expect(md.txnTimeoutMs).toBe(15_000);
    expect(md.state).toBe(TransactionState.Ongoing);
    expect(md.partitionList().map((p) => p.partition).sort()).toEqual([0, 4]);
    expect([md.txnStartTimestamp, md.txnLastUpdateTimestamp]).toEqual([1000, 2000]);
  });

  test('a v0 Empty value with a null partition list reads back', () => {
    const v0 = Buffer.concat([be.i16(0), be.i64(5n), be.i16(0), be.i32(1000), be.i8(TransactionState.Empty), be.i32(-1), be.i64(9n), be.i64(-1n)]);
    const md = readTransactionLogMetadata('e', v0)!;
    expect([md.state, md.producerId, md.producerEpoch, md.topicPartitions.size]).toEqual([TransactionState.Empty, 5n, 0, 0]);
  });

  test('a tombstone (null value) is null: the transactional id expired', () => {
    expect(readTransactionLogMetadata('gone', null)).toBeNull();
  });

  test('an unknown status byte throws (Kafka’s TransactionState.fromId)', () => {
    for (const status of [8, 42, -1]) {
      const w = new Writer();
      w.int16(1);
      writeTransactionLogValue(w, 1, {
        producerId: 1n,
        producerEpoch: 0,
        transactionTimeoutMs: 1000,
        transactionStatus: status,
        transactionPartitions: [],
        transactionLastUpdateTimestampMs: 0n,
        transactionStartTimestampMs: 0n,
      });
      expect(() => readTransactionLogMetadata('bad', w.toBuffer())).toThrow(/unknown transaction status/);
    }
  });

  test('transaction.version picks the value version: 1 from level 1, else 0 (which has no previous producer id)', () => {
    expect([0, 1, 2].map(transactionLogValueVersion)).toEqual([0, 1, 1]);
    const t = transit({ lastProducerId: 41n });
    const v0 = transactionLogValue(t, 0);
    expect(v0.readInt16BE(0)).toBe(0);
    const v1 = transactionLogValue(t, 1);
    expect(v1.readInt16BE(0)).toBe(1);
    const fromV0 = readTransactionLogMetadata('my-txn', v0)!;
    const fromV1 = readTransactionLogMetadata('my-txn', v1)!;
    expect(fromV1.lastProducerId).toBe(41n);
    expect(fromV0.lastProducerId).toBe(NO_PRODUCER_ID);
    expect({ ...fromV0, lastProducerId: 41n }).toEqual(fromV1);
  });

  test('an unknown value version or a truncated value throws', () => {
    const v1 = transactionLogValue(transit());
    const v2 = Buffer.from(v1);
    v2.writeInt16BE(2, 0);
    expect(() => readTransactionLogMetadata('t', v2)).toThrow();
    expect(() => readTransactionLogMetadata('t', v1.subarray(0, v1.length - 4))).toThrow();
    expect(() => readTransactionLogMetadata('t', Buffer.alloc(1))).toThrow();
  });

  test('unknown tagged fields from a newer writer are skipped', () => {
    const w = new Writer();
    w.int16(1);
    writeTransactionLogValue(w, 1, {
      producerId: 9n,
      previousProducerId: 8n,
      nextProducerId: 10n, // tag 1, written by KIP-890 part 2 brokers
      producerEpoch: 2,
      transactionTimeoutMs: 1000,
      transactionStatus: TransactionState.CompleteAbort,
      transactionPartitions: [],
      transactionLastUpdateTimestampMs: 5n,
      transactionStartTimestampMs: 4n,
      clientTransactionVersion: 2, // tag 2
      _unknownTaggedFields: [{ tag: 9, data: Buffer.from([1, 2, 3]) }],
    });
    const md = readTransactionLogMetadata('t', w.toBuffer())!;
    expect([md.producerId, md.lastProducerId, md.producerEpoch, md.state]).toEqual([9n, 8n, 2, TransactionState.CompleteAbort]);
    // Kafka 4.0 writes NextProducerId without NextProducerEpoch: a next id always starts at epoch 0.
    expect([md.nextProducerId, md.nextProducerEpoch, md.clientTransactionVersion]).toEqual([10n, 0, 2]);
  });

  test('transaction.version 2 fields: NextProducerId (tag 1), NextProducerEpoch (tag 3), ClientTransactionVersion (tag 2) round-trip in v1; v0 and older v1 records read as -1 / -1 / 0', () => {
    const t = transit({ producerEpoch: 32767, lastProducerEpoch: 32766, nextProducerId: 5000n, nextProducerEpoch: 0, clientTransactionVersion: 2 });
    const v1 = transactionLogValue(t, 1);
    const r = new Reader(v1);
    expect(r.int16()).toBe(1);
    expect(readTransactionLogValue(r, 1)).toMatchObject({ producerId: 1234n, previousProducerId: 1200n, nextProducerId: 5000n, nextProducerEpoch: 0, clientTransactionVersion: 2, producerEpoch: 32767 });
    const md = readTransactionLogMetadata('my-txn', v1)!;
    expect([md.nextProducerId, md.nextProducerEpoch, md.clientTransactionVersion, md.producerEpoch]).toEqual([5000n, 0, 2, 32767]);
    // Without a next producer id, none of the three tags is written (their defaults): the record is what transaction.version 1 wrote.
    const plain = transit();
    expect(transactionLogValue({ ...plain, clientTransactionVersion: 0 }, 1)).toEqual(transactionLogValue(plain, 1));
    const oldV1 = readTransactionLogMetadata('my-txn', transactionLogValue(plain, 1))!;
    expect([oldV1.nextProducerId, oldV1.nextProducerEpoch, oldV1.clientTransactionVersion]).toEqual([NO_PRODUCER_ID, -1, 0]);
    const fromV0 = readTransactionLogMetadata('my-txn', transactionLogValue(t, 0))!;
    expect([fromV0.nextProducerId, fromV0.nextProducerEpoch, fromV0.clientTransactionVersion, fromV0.producerEpoch]).toEqual([NO_PRODUCER_ID, -1, 0, 32767]);
  });
});
