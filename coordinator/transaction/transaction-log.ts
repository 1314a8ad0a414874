/**
 * The records of __transaction_state in Kafka's own format (TransactionLog), so that Kafka's tools
 * and a Kafka broker read krill's log: the key is an int16 version (0) followed by
 * TransactionLogKey, the value an int16 version followed by TransactionLogValue, and a null value
 * is a tombstone (the transactional id expired).
 *
 * The value version follows the finalized transaction.version, as Kafka's
 * TransactionVersion.transactionLogValueVersion: 1 (flexible) from transaction.version 1, else 0;
 * both are read. v1's tagged fields carry what transaction.version 2 needs across a coordinator
 * move: PreviousProducerId (the id before the last transition), NextProducerId and
 * NextProducerEpoch (the id and epoch a transaction rolls over to when its epoch is exhausted, -1
 * when it does not) and ClientTransactionVersion (2 when the client ended the transaction with
 * EndTxn v5); v0 has none of them, and a record without them reads as -1 / 0. The last producer
 * epoch is not stored (Kafka does not store it either). The partition list is null in an Empty
 * record, as Kafka writes it. A key with a version other than 0 is skipped by the
 * loader (Kafka's UnknownKey), a value that does not decode is an error for the loader to report.
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { readTransactionLogKey, writeTransactionLogKey } from '../../protocol/generated/records/transaction-coordinator/transaction-log-key';
import { readTransactionLogValue, writeTransactionLogValue } from '../../protocol/generated/records/transaction-coordinator/transaction-log-value';
import { NO_PRODUCER_EPOCH, TransactionMetadata, partitionsByTopic, type TopicPartition, type TxnTransitMetadata } from './transaction-metadata';
import { TransactionState, transactionStateFromId } from './transaction-state';

export const TXN_KEY_VERSION = 0;
/** The value version krill writes at a finalized transaction.version level. */
export function transactionLogValueVersion(transactionVersion: number): number {
  return transactionVersion >= 1 ? 1 : 0;
}

export function transactionLogKey(transactionalId: string): Buffer {
  const w = new Writer(32 + transactionalId.length * 3);
  w.int16(TXN_KEY_VERSION);
  writeTransactionLogKey(w, TXN_KEY_VERSION, { transactionalId });
  return w.toBuffer();
}

export function transactionLogValue(t: TxnTransitMetadata, version = 1): Buffer {
  if (t.txnState === TransactionState.Empty && t.topicPartitions.length > 0) {
    throw new Error(`an Empty transaction record cannot carry partitions (${t.topicPartitions.length})`);
  }
  const byTopic = partitionsByTopic(t.topicPartitions);
  const w = new Writer(128);
  w.int16(version);
  writeTransactionLogValue(w, version, {
    producerId: t.producerId,
    previousProducerId: version >= 1 ? t.lastProducerId : -1n,
    nextProducerId: version >= 1 ? t.nextProducerId : -1n,
    nextProducerEpoch: version >= 1 ? t.nextProducerEpoch : -1,
    producerEpoch: t.producerEpoch,
    transactionTimeoutMs: t.txnTimeoutMs,
    transactionStatus: t.txnState,
    transactionPartitions:
      t.txnState === TransactionState.Empty ? null : [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds: partitionIds.sort((a, b) => a - b) })),
    transactionLastUpdateTimestampMs: BigInt(t.txnLastUpdateTimestamp),
    transactionStartTimestampMs: BigInt(t.txnStartTimestamp),
    clientTransactionVersion: version >= 1 ? t.clientTransactionVersion : 0,
  });
  return w.toBuffer();
}

/** The transactional id of a record key, or undefined for a key version this broker does not know. */
export function readTransactionLogKeyId(key: Buffer): string | undefined {
  const r = new Reader(key);
  const version = r.int16();
  if (version !== TXN_KEY_VERSION) return undefined;
  return readTransactionLogKey(r, version).transactionalId;
}

/** The metadata a record value describes (null for a tombstone). Throws on an unreadable value. */
export function readTransactionLogMetadata(transactionalId: string, value: Buffer | null): TransactionMetadata | null {
  if (value === null) return null;
  const r = new Reader(value);
  const version = r.int16();
  const v = readTransactionLogValue(r, version);
  const state = transactionStateFromId(v.transactionStatus);
  if (state === undefined) throw new Error(`unknown transaction status ${v.transactionStatus} for ${transactionalId}`);
  const partitions: TopicPartition[] = [];
  // An Empty transaction has no partitions, whatever the record lists (Kafka ignores them too).
  if (state !== TransactionState.Empty) for (const t of v.transactionPartitions ?? []) for (const p of t.partitionIds) partitions.push({ topic: t.topic, partition: p });
  return new TransactionMetadata(
    transactionalId,
    v.producerId,
    v.previousProducerId,
    v.producerEpoch,
    // The last epoch is not stored (Kafka does not either): a retry of an InitProducerId across a
    // coordinator move then fails with PRODUCER_FENCED, which Kafka accepts as rare.
    NO_PRODUCER_EPOCH,
    v.transactionTimeoutMs,
    state,
    partitions,
    Number(v.transactionStartTimestampMs),
    Number(v.transactionLastUpdateTimestampMs),
    v.nextProducerId,
    // A next producer id always starts at epoch 0; Kafka 4.0 writes it without NextProducerEpoch.
    v.nextProducerId >= 0n ? Math.max(v.nextProducerEpoch, 0) : NO_PRODUCER_EPOCH,
    v.clientTransactionVersion,
  );
}
