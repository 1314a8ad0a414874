/**
 * Exactly-once producer workloads (KafkaJS 2.2.4):
 *  - produceIdempotent: producer({ idempotent: true, maxInFlightRequests: 1 }) sending batches of
 *    1,000 messages with acks=-1, one send() at a time (KafkaJS holds a per-broker lock around
 *    every idempotent produce request, so more send() calls outstanding would only queue on it);
 *  - produceTransactional: producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 }),
 *    each transaction sending `perTxn` batches of 1,000 messages and then committing, timed as a
 *    whole (AddPartitionsToTxn, produce, EndTxn), with every transaction.commit() timed apart.
 * Both make their own KafkaJS client per measurement, with retries (an idempotent producer must
 * allow them; the first FindCoordinator of a transactional id may meet COORDINATOR_NOT_AVAILABLE
 * while krill creates __transaction_state; an AddPartitionsToTxn sent right after a commit may meet
 * CONCURRENT_TRANSACTIONS while the markers are being written), and the error lines KafkaJS logs
 * during the timed window (each retried request logs one) are counted and returned, so that a retry,
 * which costs KafkaJS its backoff (about 300 ms for a first retry), is reported rather than hidden in the throughput.
 * The producer's connect() and InitProducerId are done before the timed window.
 * Also the checks run after each measurement (not timed): DescribeProducers on partition 0 (one
 * producer, last sequence = messages - 1, on krill and the null sink alike) and read_committed
 * ListOffsets (the last stable offset reaching the high watermark once the markers are written).
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { messagesOf, BATCH_MESSAGES, cpuNow, now, percentile, type ClientResult } from './workloads';
import { WireClient } from './wire-client';

/** A KafkaJS client whose error-level log lines are collected (everything else is dropped). */
function eosKafka(bootstrap: string, clientId: string): { kafka: Kafka; errors: string[] } {
  const errors: string[] = [];
  const kafka = new Kafka({
    clientId,
    brokers: [bootstrap],
    logLevel: logLevel.ERROR,
    logCreator:
      () =>
      ({ namespace, level, log }) => {
        if (level <= logLevel.ERROR) errors.push(`${namespace}: ${log.message}${(log as { error?: string }).error ? ` (${(log as { error?: string }).error})` : ''}`);
      },
  });
  return { kafka, errors };
}

/** Error lines KafkaJS logged during a measurement (a retried request logs one), and the first of them. */
export interface Retried {
  clientErrors: number;
  firstClientError: string | null;
}

const retried = (errors: string[]): Retried => ({ clientErrors: errors.length, firstClientError: errors[0] ?? null });

/** Retries for send(): enough for a transient error, bounded so a broker that keeps refusing fails the bench instead of hanging it. */
const SEND_RETRY = { retries: 5 };

/** `batches` batches of 1,000 `size`-byte messages from a fresh idempotent KafkaJS producer, acks=-1, one at a time. */
export async function produceIdempotent(bootstrap: string, topic: string, size: number, batches: number): Promise<ClientResult & Retried> {
  const { kafka, errors } = eosKafka(bootstrap, 'krill-bench-idempotent');
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, retry: SEND_RETRY });
  await producer.connect(); // includes InitProducerId
  try {
    errors.length = 0;
    const messages = messagesOf(size);
    const cpu0 = cpuNow();
    const t0 = now();
    for (let i = 0; i < batches; i++) await producer.send({ topic, acks: -1, timeout: 30000, messages });
    const seconds = Number(now() - t0) / 1e9;
    const clientCpu = cpuNow() - cpu0;
    return { seconds, messages: batches * BATCH_MESSAGES, payloadBytes: batches * BATCH_MESSAGES * size, clientCpu, ...retried(errors) };
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

export interface TxnResult extends ClientResult, Retried {
  transactions: number;
  batchesPerTransaction: number;
  /** Every transaction.commit() in ms, in order. */
  commitMs: number[];
  commitP50Ms: number;
  commitP99Ms: number;
  commitMaxMs: number;
}

let txnSeq = 0;

/**
 * `batches` / `perTxn` transactions of `perTxn` batches of 1,000 `size`-byte messages each
 * (acks=-1, one send() at a time), each ended by commit(). `batches` must be a multiple of `perTxn`.
 */
export async function produceTransactional(bootstrap: string, topic: string, size: number, batches: number, perTxn: number): Promise<TxnResult> {
  if (batches % perTxn !== 0) throw new Error(`${batches} batches are not a whole number of ${perTxn}-batch transactions`);
  const { kafka, errors } = eosKafka(bootstrap, 'krill-bench-txn');
  const producer: Producer = kafka.producer({
    transactionalId: `krill-bench-txn-${process.pid}-${++txnSeq}`,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    retry: SEND_RETRY,
  });
  await producer.connect();
  try {
    // The first transaction() finds the coordinator and sends InitProducerId; a transaction with
    // nothing in it ends without any request. Neither is timed.
    await (await producer.transaction()).commit();
    // Retries of FindCoordinator/InitProducerId while a fresh __transaction_state is created are expected here.
    errors.length = 0;
    const messages = messagesOf(size);
    const transactions = batches / perTxn;
    const commitMs: number[] = [];
    const cpu0 = cpuNow();
    const t0 = now();
    for (let t = 0; t < transactions; t++) {
      const txn = await producer.transaction();
      for (let i = 0; i < perTxn; i++) await txn.send({ topic, acks: -1, timeout: 30000, messages });
      const c0 = now();
      await txn.commit();
      commitMs.push(Number(now() - c0) / 1e6);
    }
    const seconds = Number(now() - t0) / 1e9;
    const clientCpu = cpuNow() - cpu0;
    const sorted = [...commitMs].sort((a, b) => a - b);
    return {
      seconds,
      messages: batches * BATCH_MESSAGES,
      payloadBytes: batches * BATCH_MESSAGES * size,
      clientCpu,
      ...retried(errors),
      transactions,
      batchesPerTransaction: perTxn,
      commitMs,
      commitP50Ms: percentile(sorted, 50),
      commitP99Ms: percentile(sorted, 99),
      commitMaxMs: sorted[sorted.length - 1],
    };
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

export interface ProducerSummary {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  currentTxnStartOffset: bigint;
}

/** DescribeProducers v0 for partition 0 of `topic`. */
export async function describeProducers(host: string, port: number, topic: string): Promise<ProducerSummary[]> {
  const client = await WireClient.connect(host, port);
  try {
    const res = await client.request('DescribeProducers', 0, { topics: [{ name: topic, partitionIndexes: [0] }] });
    const p = res.topics[0]?.partitions[0];
    if (!p || p.errorCode !== 0) throw new Error(`DescribeProducers ${topic}-0 failed: ${p?.errorCode} ${p?.errorMessage ?? ''}`);
    return p.activeProducers.map((a) => ({ producerId: a.producerId, producerEpoch: a.producerEpoch, lastSequence: a.lastSequence, currentTxnStartOffset: a.currentTxnStartOffset }));
  } finally {
    client.close();
  }
}

/** Checks that `topic`-0 saw one idempotent producer whose last sequence is `messages` - 1. */
export async function checkOneProducer(host: string, port: number, topic: string, messages: number, target: string): Promise<void> {
  const ps = await describeProducers(host, port, topic);
  if (ps.length !== 1 || ps[0].lastSequence !== messages - 1) {
    throw new Error(
      `${target}: ${topic}-0 after ${messages} idempotent messages: expected one producer with last sequence ${messages - 1}, DescribeProducers says ` +
        JSON.stringify(ps.map((p) => ({ ...p, producerId: String(p.producerId), currentTxnStartOffset: String(p.currentTxnStartOffset) }))),
    );
  }
}

/** High watermark and last stable offset of partition 0 (ListOffsets v5, latest, read_uncommitted and read_committed). */
export async function stableOffsets(host: string, port: number, topic: string): Promise<{ hwm: number; lso: number }> {
  const client = await WireClient.connect(host, port);
  try {
    const latest = async (isolationLevel: number): Promise<number> => {
      const res = await client.request('ListOffsets', 5, {
        replicaId: -1,
        isolationLevel,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
      });
      const p = res.topics[0]?.partitions[0];
      if (!p || p.errorCode !== 0) throw new Error(`ListOffsets ${topic}-0 (isolation ${isolationLevel}) failed: ${p?.errorCode}`);
      return Number(p.offset);
    };
    return { hwm: await latest(0), lso: await latest(1) };
  } finally {
    client.close();
  }
}

/**
 * After committed transactions: the high watermark is messages + one COMMIT marker per transaction,
 * and the last stable offset reaches it once the coordinator's markers are written (EndTxn returns
 * before that, so this polls every 20 ms, up to `waitMs`). Returns how many ListOffsets checks it
 * took (1: the markers were already written at the first) and the ms from the first to the last.
 */
export async function checkCommitted(
  host: string,
  port: number,
  topic: string,
  messages: number,
  transactions: number,
  waitMs = 10000,
): Promise<{ checks: number; ms: number }> {
  const expected = messages + transactions;
  let t0 = 0n;
  for (let checks = 1; ; checks++) {
    const { hwm, lso } = await stableOffsets(host, port, topic);
    if (checks === 1) t0 = now();
    if (hwm === expected && lso === expected) return { checks, ms: Number(now() - t0) / 1e6 };
    if (hwm > expected) throw new Error(`${topic}-0: high watermark ${hwm} after ${messages} messages in ${transactions} committed transactions (expected ${expected})`);
    if (Number(now() - t0) / 1e6 > waitMs) {
      throw new Error(`${topic}-0: high watermark ${hwm}, last stable offset ${lso} ${waitMs} ms after the last commit (expected both ${expected})`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
