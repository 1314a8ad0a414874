/**
 * node-rdkafka (librdkafka 2.12) in the security suites: a producer the broker is expected to
 * refuse (no client certificate, a wrong password), watched for the log line where librdkafka
 * reports why (it logs TLS and SASL failures from its broker thread; error events only come with
 * polling, which starts once connected), with what connect() ended with and whether the client
 * ever got ready; the test for librdkafka's SASL failure line. Produce and consume helpers are in
 * ../helpers/rdkafka.ts.
 */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

export interface RdLogLine {
  severity: number;
  message: string;
}

export interface Refusal {
  /** The first log line `isFailure` picked. */
  logged: string;
  /** What connect() called back with (null: it connected). */
  connectError: Error | null;
  ready: boolean;
}

/**
 * Connects a producer with `config`; resolves once a log line satisfies `isFailure` (within
 * `timeoutMs`) and connect() has called back (within `connectTimeoutMs`). The producer is
 * disconnected afterwards if it connected after all.
 */
export async function rdkafkaRefusal(
  config: Record<string, unknown>,
  isFailure: (line: RdLogLine) => boolean,
  { connectTimeoutMs = 3_000, timeoutMs = 15_000 }: { connectTimeoutMs?: number; timeoutMs?: number } = {},
): Promise<Refusal> {
  const producer = new RdKafka.Producer(config);
  let ready = false;
  producer.on('ready', () => (ready = true));
  const failure = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no failure logged within ${timeoutMs} ms`)), timeoutMs);
    producer.on('event.log', (l: RdLogLine) => {
      if (isFailure(l)) {
        clearTimeout(timer);
        resolve(l.message);
      }
    });
  });
  const connected = new Promise<Error | null>((resolve) => producer.connect({ timeout: connectTimeoutMs }, (err: Error | null) => resolve(err)));
  try {
    const logged = await failure;
    const connectError = await connected;
    return { logged, connectError, ready };
  } finally {
    if (producer.isConnected()) await new Promise((r) => producer.disconnect(r));
  }
}

/** An error-level log line reporting a failed SaslAuthenticate (it carries the broker's message). */
export const saslAuthenticationError = (l: RdLogLine): boolean => l.severity <= 3 && /SASL authentication error/.test(l.message);
