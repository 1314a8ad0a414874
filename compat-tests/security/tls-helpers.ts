/**
 * Shared pieces of the TLS compatibility tests: throwaway certificates (the embedding API's
 * createTestCertificates), embedded brokers with SSL listeners, a record of who each request came
 * from (principal, listener, security protocol) taken by a pass-through dispatcher interceptor, and
 * KafkaJS clients for them (the round trip itself is in kafkajs-helpers.ts). Every wait is bounded.
 */
import type { Kafka, KafkaConfig as KafkaJsConfig } from 'kafkajs';
import { startBroker, type RunningBroker, type StartBrokerOptions } from '../../broker';
import { Logger } from '../../common/logger';
import type { TestCertificates } from '../../broker/testing/certificates';
import { quietKafka } from './kafkajs-helpers';

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
  readonly callers: readonly Caller[];
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
  const served = broker.control.record({}, { bodies: false });
  return {
    broker,
    get callers(): Caller[] {
      return served.requests.map((r) => ({ apiKey: r.apiKey, principal: r.principal, listener: r.listenerName, securityProtocol: r.securityProtocol, clientId: r.clientId }));
    },
    log,
    close: () => broker.close(),
  };
}

/** A quiet KafkaJS client (kafkajs-helpers' quietKafka) with `clientId` and `extra` (ssl, sasl, retry, ...) over it. */
export function kafkaJs(brokers: string[], clientId: string, extra: Partial<KafkaJsConfig> = {}): Kafka {
  return quietKafka(brokers, { clientId, ...extra });
}
