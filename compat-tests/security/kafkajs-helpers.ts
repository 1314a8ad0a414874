/**
 * KafkaJS 2.2.4 in the security suites: a quiet client with bounded timeouts and few retries (the
 * TLS, SASL and SCRAM helpers' kafkaJs() build on it), a produce-then-consume round trip through a
 * new topic and a consumer group, a bounded read of a topic in a group, test values, and the error
 * a promise rejects with. Every wait is bounded.
 */
import { Kafka, logLevel, Partitioners, type KafkaConfig } from 'kafkajs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

/** A quiet KafkaJS client (no logs, 3 s connect, 15 s requests, 2 short retries); `config` goes over that. */
export function quietKafka(brokers: string | string[], config: Omit<KafkaConfig, 'brokers'>): Kafka {
  return new Kafka({
    brokers: Array.isArray(brokers) ? brokers : [brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
    ...config,
  });
}

/** `v0` .. `v<n-1>`. */
export const values = (n: number): string[] => Array.from({ length: n }, (_, i) => `v${i}`);

/** A sorted copy, for comparing what came back from several partitions with what was sent. */
export const sorted = (xs: readonly string[]): string[] => [...xs].sort();

export interface ConsumeOptions {
  /** Default `<topic>-group`. */
  groupId?: string;
  timeoutMs?: number;
  /** Count distinct values only (a value delivered again does not count twice). */
  distinct?: boolean;
}

/** Reads `topic` from the beginning in a consumer group until `count` values came; the values in the order consumed (each once with `distinct`). */
export async function consumeValues(kafka: Kafka, topic: string, count: number, opts: ConsumeOptions = {}): Promise<string[]> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const consumer = kafka.consumer({ groupId: opts.groupId ?? `${topic}-group`, sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  const got: string[] = [];
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${count} within ${timeoutMs} ms`)), timeoutMs);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const value = message.value!.toString();
            if (!opts.distinct || !got.includes(value)) got.push(value);
            if (got.length === count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch((err) => {
          clearTimeout(timer);
          reject(err);
        });
    });
  } finally {
    await consumer.disconnect();
  }
  return got;
}

export interface RoundTripOptions {
  /** Partitions of the new topic (default 2; replication factor 1). */
  partitions?: number;
  /** The client that consumes (default: the producing one). */
  consumer?: Kafka;
}

/**
 * Creates `topic`, produces `sent` (keys k0, k1, ...; acks=all) with `kafka` and consumes it back
 * in a group with `opts.consumer`; the values in the order consumed.
 */
export async function produceAndConsume(kafka: Kafka, topic: string, sent: readonly string[], opts: RoundTripOptions = {}): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: opts.partitions ?? 2, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: sent.map((value, i) => ({ key: `k${i}`, value })) });
  } finally {
    await producer.disconnect();
  }
  return consumeValues(opts.consumer ?? kafka, topic, sent.length);
}

/** The error `p` rejects with (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
