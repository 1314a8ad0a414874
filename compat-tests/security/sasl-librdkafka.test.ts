/**
 * librdkafka 2.12 (node-rdkafka) with security.protocol=SASL_PLAINTEXT, sasl.mechanisms=PLAIN against
 * a broker whose only listener is SASL_PLAINTEXT: librdkafka does ApiVersions, SaslHandshake v1 and
 * SaslAuthenticate itself; a producer (acks=all) writes and a manually assigned consumer reads every
 * message back. A wrong password: librdkafka logs the broker's SASL_AUTHENTICATION_FAILED message
 * and the client never gets ready.
 */
import type { RunningBroker } from '../../broker';
import { ALICE, startSaslBroker } from './sasl-helpers';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Kafka = require('node-rdkafka');

jest.setTimeout(60_000);

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startSaslBroker();
});

afterAll(async () => {
  await broker?.close();
});

const sasl = (user: { username: string; password: string }) => ({
  'security.protocol': 'sasl_plaintext',
  'sasl.mechanisms': 'PLAIN',
  'sasl.username': user.username,
  'sasl.password': user.password,
});

/** Disconnects a node-rdkafka client that may not have finished connecting. */
function stop(client: any): void {
  if (client.isConnected()) client.disconnect();
}

function produce(topic: string, count: number, user: { username: string; password: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const producer = new Kafka.Producer({
      'metadata.broker.list': broker.bootstrapServers.join(','),
      'client.id': 'rdkafka-sasl',
      dr_cb: true,
      acks: -1,
      'linger.ms': 5,
      'allow.auto.create.topics': true,
      ...sasl(user),
    });
    let delivered = 0;
    const timer = setTimeout(() => {
      stop(producer);
      reject(new Error(`timed out with ${delivered}/${count} delivered`));
    }, 30_000);
    producer.on('delivery-report', (err: Error | null) => {
      if (err) {
        clearTimeout(timer);
        stop(producer);
        reject(err);
        return;
      }
      if (++delivered === count) {
        clearTimeout(timer);
        producer.disconnect(() => resolve(delivered));
      }
    });
    producer.on('event.error', (err: Error) => {
      clearTimeout(timer);
      stop(producer);
      reject(err);
    });
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) producer.produce(topic, 0, Buffer.from(`value-${i}`), `key-${i}`);
    });
    producer.connect();
  });
}

function consume(topic: string, expected: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const consumer = new Kafka.KafkaConsumer(
      {
        'group.id': 'rdkafka-sasl-reader',
        'metadata.broker.list': broker.bootstrapServers.join(','),
        'enable.auto.commit': false,
        ...sasl(ALICE),
      },
      { 'auto.offset.reset': 'earliest' },
    );
    const values: string[] = [];
    const timer = setTimeout(() => {
      stop(consumer);
      reject(new Error(`timed out with ${values.length}/${expected} consumed`));
    }, 30_000);
    consumer.on('event.error', (err: Error) => {
      clearTimeout(timer);
      stop(consumer);
      reject(err);
    });
    consumer.on('ready', () => {
      consumer.assign([{ topic, partition: 0, offset: 0 }]);
      const poll = () =>
        consumer.consume(100, (err: Error | null, messages: any[]) => {
          if (err && (err as { code?: number }).code !== Kafka.CODES.ERRORS.ERR__TIMED_OUT) {
            clearTimeout(timer);
            stop(consumer);
            reject(err);
            return;
          }
          for (const m of messages ?? []) values.push(m.value.toString());
          if (values.length >= expected) {
            clearTimeout(timer);
            consumer.disconnect(() => resolve(values));
          } else {
            setImmediate(poll);
          }
        });
      poll();
    });
    consumer.connect();
  });
}

test('SASL_PLAINTEXT PLAIN: produce (acks=all) and consume back', async () => {
  expect(await produce('rdkafka-sasl', 50, ALICE)).toBe(50);
  const values = await consume('rdkafka-sasl', 50);
  expect(values).toEqual(Array.from({ length: 50 }, (_, i) => `value-${i}`));
});

test('a wrong password: librdkafka reports the broker\'s SASL_AUTHENTICATION_FAILED message and never gets ready', async () => {
  const producer = new Kafka.Producer({
    'metadata.broker.list': broker.bootstrapServers.join(','),
    'client.id': 'rdkafka-sasl-denied',
    event_cb: true,
    ...sasl({ username: 'alice', password: 'wrong' }),
  });
  let ready = false;
  producer.on('ready', () => (ready = true));
  // librdkafka logs the failure from its broker thread; errors proper only come with polling.
  const failure = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no SASL authentication error logged within 15 s')), 15_000);
    producer.on('event.log', (l: { message: string }) => {
      const m = /SASL authentication error: (.*?) \(after/.exec(l.message);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  const connected = new Promise<Error | null>((resolve) => producer.connect({ timeout: 3_000 }, (err: Error | null) => resolve(err)));
  try {
    expect(await failure).toBe('Authentication failed: Invalid username or password');
    expect(await connected).not.toBeNull();
    expect(ready).toBe(false);
  } finally {
    if (producer.isConnected()) await new Promise((r) => producer.disconnect(r));
  }
});
