/**
 * librdkafka 2.12 (node-rdkafka, built with OpenSSL) against an SSL listener with mutual TLS
 * (ssl.client.auth=required): security.protocol=ssl with ssl.ca.location, ssl.certificate.location
 * and ssl.key.location (librdkafka verifies the broker's host name by default); a producer with
 * acks=all and a consumer read every message back, as User:CN=client,OU=test,O=krill. A client
 * without a certificate gets a transport error and never a request served.
 */
import { createTestCertificates, type TestCertificates } from '../../broker';
import { startTlsBroker, type TlsBroker } from './tls-helpers';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Kafka = require('node-rdkafka');

jest.setTimeout(60_000);

let certs: TestCertificates;
let b: TlsBroker;

beforeAll(async () => {
  certs = createTestCertificates();
  b = await startTlsBroker(certs, { 'num.partitions': '3' }, { clientAuth: 'required' });
});

afterAll(async () => {
  await b?.close();
  certs?.cleanup();
});

function sslConfig(withCertificate: boolean): Record<string, string> {
  return {
    'metadata.broker.list': b.broker.bootstrapServers.join(','),
    'security.protocol': 'ssl',
    'ssl.ca.location': certs.ca.certFile,
    ...(withCertificate ? { 'ssl.certificate.location': certs.client.certFile, 'ssl.key.location': certs.client.keyFile } : {}),
  };
}

function produceAll(topic: string, count: number): Promise<{ partition: number; offset: number }[]> {
  return new Promise((resolve, reject) => {
    const producer = new Kafka.Producer({ ...sslConfig(true), 'client.id': 'rdkafka-tls-producer', dr_cb: true, acks: -1, 'linger.ms': 5 });
    const delivered: { partition: number; offset: number }[] = [];
    const timer = setTimeout(() => {
      producer.disconnect();
      reject(new Error(`timed out with ${delivered.length}/${count} delivered`));
    }, 30_000);
    producer.on('delivery-report', (err: Error | null, report: { partition: number; offset: number }) => {
      if (err) {
        clearTimeout(timer);
        producer.disconnect();
        reject(err);
        return;
      }
      delivered.push({ partition: report.partition, offset: report.offset });
      if (delivered.length === count) {
        clearTimeout(timer);
        producer.disconnect(() => resolve(delivered));
      }
    });
    producer.on('event.error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) producer.produce(topic, null, Buffer.from(`tls-${i}`), `key-${i}`);
    });
    producer.connect();
  });
}

function consumeAll(topic: string, partitions: number, expected: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const consumer = new Kafka.KafkaConsumer(
      { ...sslConfig(true), 'client.id': 'rdkafka-tls-consumer', 'group.id': 'rdkafka-tls', 'enable.auto.commit': false },
      { 'auto.offset.reset': 'earliest' },
    );
    const got: string[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      consumer.disconnect(() => (err ? reject(err) : resolve(got)));
    };
    const timer = setTimeout(() => finish(new Error(`timed out with ${got.length}/${expected} consumed`)), 30_000);
    consumer.on('ready', () => {
      consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
      const loop = () => {
        if (done) return;
        consumer.consume(500, (err: Error | null, messages: { value: Buffer }[]) => {
          if (err) return finish(err);
          got.push(...messages.map((m) => m.value.toString()));
          if (got.length >= expected) return finish();
          setImmediate(loop);
        });
      };
      loop();
    });
    consumer.connect();
  });
}

test('librdkafka over mutual TLS: acks=all produce and consume, as the certificate subject', async () => {
  const count = 200;
  const delivered = await produceAll('rdk-tls', count);
  expect(delivered).toHaveLength(count);
  const values = await consumeAll('rdk-tls', 3, count);
  expect(values.sort()).toEqual(Array.from({ length: count }, (_, i) => `tls-${i}`).sort());
  const principals = new Set(b.callers.filter((c) => c.clientId?.startsWith('rdkafka-tls')).map((c) => `${c.principal} ${c.securityProtocol}`));
  expect(principals).toEqual(new Set(['User:CN=client,OU=test,O=krill SSL']));
});

test('librdkafka without a client certificate: the broker refuses the TLS handshake, nothing is served', async () => {
  const producer = new Kafka.Producer({ ...sslConfig(false), 'client.id': 'rdkafka-tls-nocert', event_cb: true });
  let ready = false;
  producer.on('ready', () => (ready = true));
  // librdkafka logs transport failures from its broker thread.
  const failure = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no TLS failure logged within 15 s')), 15_000);
    producer.on('event.log', (l: { message: string }) => {
      if (/SSL|TLS/.test(l.message) && /certificate required|handshake failed|alert|peer did not return/i.test(l.message)) {
        clearTimeout(timer);
        resolve(l.message);
      }
    });
  });
  const connected = new Promise<Error | null>((resolve) => producer.connect({ timeout: 3_000 }, (err: Error | null) => resolve(err)));
  try {
    expect(await failure).toMatch(/certificate required|alert/i);
    expect(await connected).not.toBeNull();
    expect(ready).toBe(false);
    expect(b.callers.some((c) => c.clientId === 'rdkafka-tls-nocert')).toBe(false);
  } finally {
    if (producer.isConnected()) await new Promise((r) => producer.disconnect(r));
  }
});
