/**
 * node-rdkafka (librdkafka 2.12) clients in the compatibility suites: a producer that sends
 * `count` messages and waits for every delivery report, and a consumer with a manual assignment
 * (partitions 0..n-1 from offset 0, no group commits) that reads until it has what it expects.
 * The caller's config carries the broker list, security settings and client / group ids; both
 * wait a bounded time and disconnect the client however they end.
 */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

export type RdKafkaConfig = Record<string, unknown>;

/** One message as node-rdkafka's produce() takes it (a null partition: librdkafka's partitioner). */
export interface RdOutgoing {
  partition: number | null;
  /** null: a tombstone. */
  value: Buffer | null;
  key: string;
  timestamp?: number;
  headers?: Record<string, string>[];
}

export interface RdDelivery {
  topic: string;
  partition: number;
  offset: number;
  key: string;
}

/** A consumed message as node-rdkafka hands it over. */
export interface RdMessage {
  topic: string;
  partition: number;
  offset: number;
  key: Buffer | string | null;
  /** Buffer; null for a tombstone. */
  value: Buffer;
  timestamp: number;
  headers?: Record<string, Buffer>[];
}

/** Disconnects a node-rdkafka client that may not have finished connecting. */
function stop(client: { isConnected(): boolean; disconnect(): void }): void {
  if (client.isConnected()) client.disconnect();
}

/**
 * A producer with `config` (and delivery reports) sends message(0) .. message(count - 1) to
 * `topic`; resolves with every delivery once all are reported, rejects on the first delivery
 * error, client error or after `timeoutMs`.
 */
export function rdkafkaProduce(config: RdKafkaConfig, topic: string, count: number, message: (i: number) => RdOutgoing, timeoutMs = 30_000): Promise<RdDelivery[]> {
  return new Promise((resolve, reject) => {
    const producer = new RdKafka.Producer({ ...config, dr_cb: true });
    const delivered: RdDelivery[] = [];
    const fail = (err: Error) => {
      clearTimeout(timer);
      stop(producer);
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`timed out with ${delivered.length}/${count} delivered`)), timeoutMs);
    producer.on('delivery-report', (err: Error | null, report: { topic: string; partition: number; offset: number; key: unknown }) => {
      if (err) return fail(err);
      delivered.push({ topic: report.topic, partition: report.partition, offset: report.offset, key: String(report.key) });
      if (delivered.length === count) {
        clearTimeout(timer);
        producer.disconnect(() => resolve(delivered));
      }
    });
    producer.on('event.error', fail);
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) {
        const m = message(i);
        if (m.timestamp === undefined && m.headers === undefined) producer.produce(topic, m.partition, m.value, m.key);
        else producer.produce(topic, m.partition, m.value, m.key, m.timestamp, null, m.headers);
      }
    });
    producer.connect();
  });
}

/**
 * A consumer with `config` (no auto commit, earliest offsets) assigned partitions 0..partitions-1
 * of `topic` from offset 0 reads until it has `expected` messages; rejects on a consume error, a
 * client error or after `timeoutMs`.
 */
export function rdkafkaConsume(config: RdKafkaConfig, topic: string, partitions: number, expected: number, timeoutMs = 30_000): Promise<RdMessage[]> {
  return new Promise((resolve, reject) => {
    const consumer = new RdKafka.KafkaConsumer({ ...config, 'enable.auto.commit': false }, { 'auto.offset.reset': 'earliest' });
    const got: RdMessage[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        stop(consumer);
        reject(err);
      } else {
        consumer.disconnect(() => resolve(got));
      }
    };
    const timer = setTimeout(() => finish(new Error(`timed out with ${got.length}/${expected} consumed`)), timeoutMs);
    consumer.on('event.error', finish);
    consumer.on('ready', () => {
      consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
      const loop = () => {
        if (done) return;
        consumer.consume(500, (err: (Error & { code?: number }) | null, messages: RdMessage[]) => {
          if (err && err.code !== RdKafka.CODES.ERRORS.ERR__TIMED_OUT) return finish(err);
          got.push(...(messages ?? []));
          if (got.length >= expected) return finish();
          setImmediate(loop);
        });
      };
      loop();
    });
    consumer.connect();
  });
}

/** rdkafkaConsume's messages' values, as text. */
export async function rdkafkaConsumeValues(config: RdKafkaConfig, topic: string, partitions: number, expected: number, timeoutMs?: number): Promise<string[]> {
  return (await rdkafkaConsume(config, topic, partitions, expected, timeoutMs)).map((m) => m.value.toString());
}
