/**
 * Shared pieces of the TLS compatibility tests: throwaway certificates (the embedding API's
 * createTestCertificates), embedded brokers with SSL listeners, a record of who each request came
 * from (principal, listener, security protocol) taken by a pass-through dispatcher interceptor, and
 * a KafkaJS produce-then-consume round trip. Every wait is bounded.
 */
import { Kafka, logLevel, type KafkaConfig as KafkaJsConfig } from 'kafkajs';
import { startBroker, type RunningBroker, type StartBrokerOptions } from '../../broker';
import { principalToString } from '../../common/kafka-principal';
import { Logger } from '../../common/logger';
import type { TestCertificates } from '../../broker/testing/certificates';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

export interface Caller {
  apiKey: number;
  principal: string;
  listener: string;
  securityProtocol: string;
  clientId: string | null;
}

/** A logger that keeps every line (info and up) and lets a test wait for lines to appear. */
export class WatchedLogger extends Logger {
  readonly lines: string[];
  private readonly waiters: (() => void)[];
  constructor() {
    const lines: string[] = [];
    const waiters: (() => void)[] = [];
    super('test', 'info', (line) => {
      lines.push(line);
      for (const w of waiters.splice(0)) w();
    });
    this.lines = lines;
    this.waiters = waiters;
  }

  matching(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l));
  }

  /** Resolves once `count` lines match `re`; fails after `timeoutMs`. */
  waitFor(re: RegExp, count = 1, timeoutMs = 5_000): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${count} log line(s) matching ${re}`)), timeoutMs);
      const check = () => {
        const m = this.matching(re);
        if (m.length >= count) {
          clearTimeout(timer);
          resolve(m);
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }
}

export interface TlsBroker {
  broker: RunningBroker;
  /** Every request served, in order: who sent it and where. */
  callers: Caller[];
  log: WatchedLogger;
  close(): Promise<void>;
}

/** An embedded broker with `listeners` (e.g. SSL://127.0.0.1:0), the test certificates' TLS settings and `config` over them. */
export async function startTlsBroker(
  certs: TestCertificates,
  config: Record<string, string | null>,
  sslOpts: Parameters<TestCertificates['brokerSsl']>[0] = {},
  opts: Omit<StartBrokerOptions, 'config'> = {},
): Promise<TlsBroker> {
  const log = new WatchedLogger();
  const broker = await startBroker({
    logger: log,
    ...opts,
    config: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL', ...certs.brokerSsl(sslOpts), ...config },
  });
  const callers: Caller[] = [];
  broker.server.dispatcherInterceptors.push({
    intercept(ctx) {
      callers.push({
        apiKey: ctx.apiKey,
        principal: principalToString(ctx.principal),
        listener: ctx.connection.listenerName,
        securityProtocol: ctx.connection.securityProtocol,
        clientId: ctx.clientId,
      });
      return undefined;
    },
  });
  return { broker, callers, log, close: () => broker.close() };
}

/** A quiet KafkaJS client with bounded timeouts and no retries to speak of. */
export function kafkaJs(brokers: string[], clientId: string, extra: Partial<KafkaJsConfig> = {}): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 15_000,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
    ...extra,
  });
}

/** Creates `topic`, produces `count` values with one client and consumes them in a group with another (the same by default). */
export async function produceAndConsume(producerKafka: Kafka, topic: string, count: number, consumerKafka: Kafka = producerKafka): Promise<string[]> {
  const admin = producerKafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = producerKafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  } finally {
    await producer.disconnect();
  }
  const consumer = consumerKafka.consumer({ groupId: `${topic}-group`, sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  const seen: string[] = [];
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${seen.length} of ${count}`)), 30_000);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString());
            if (seen.length === count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return seen.sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

export const values = (n: number): string[] => Array.from({ length: n }, (_, i) => `v${i}`);

/** The error `p` rejects with (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
