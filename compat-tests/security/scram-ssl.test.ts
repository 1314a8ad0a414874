/**
 * SASL/SCRAM-SHA-512 over TLS: an embedded combined node whose only listener is SASL_SSL (the test
 * CA's broker certificate; inter-broker traffic on the same listener as the --add-scram admin), and
 * node-rdkafka (librdkafka 2.12) with security.protocol=sasl_ssl verifying the broker against the CA:
 * a producer with acks=all and a manually assigned consumer as an --add-scram user, and a wrong
 * password reported as the broker's SASL_AUTHENTICATION_FAILED message.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { createTestCertificates, type TestCertificates } from '../../broker/testing/certificates';
import { ADMIN, SCRAM_LOGIN_MODULE } from './scram-helpers';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

const TIMEOUT_MS = 20_000;

let certs: TestCertificates;
let broker: RunningBroker;

beforeAll(async () => {
  certs = createTestCertificates();
  broker = await startBroker({
    logLevel: 'warn',
    overrides: ['listeners=SASL_SSL://127.0.0.1:0'],
    config: {
      ...certs.brokerSsl(),
      'inter.broker.listener.name': 'SASL_SSL',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': `${SCRAM_LOGIN_MODULE} required username="${ADMIN.username}" password="${ADMIN.password}";`,
    },
    scramCredentials: [`SCRAM-SHA-512=[name=${ADMIN.username},password=${ADMIN.password}]`, 'SCRAM-SHA-512=[name=alice,password=alice-secret]'],
  });
});

afterAll(async () => {
  await broker?.close();
  certs?.cleanup();
});

const rdConfig = (password: string) => ({
  'metadata.broker.list': broker.bootstrapServers.join(','),
  'security.protocol': 'sasl_ssl',
  'ssl.ca.location': certs.ca.certFile,
  'sasl.mechanisms': 'SCRAM-SHA-512',
  'sasl.username': 'alice',
  'sasl.password': password,
});

test('the broker listens on SASL_SSL only', () => {
  expect(broker.server.advertisedEndpoints.map((e) => e.securityProtocol)).toEqual(['SASL_SSL']);
});

test('node-rdkafka produces and reads back over SASL_SSL with SCRAM-SHA-512', async () => {
  const count = 20;
  const delivered = await new Promise<number>((resolve, reject) => {
    const producer = new RdKafka.Producer({ ...rdConfig('alice-secret'), dr_cb: true, acks: -1, 'allow.auto.create.topics': true });
    let n = 0;
    const timer = setTimeout(() => producer.disconnect(() => reject(new Error(`delivered ${n}/${count}`))), TIMEOUT_MS);
    producer.on('delivery-report', (err: Error | null) => {
      if (err) {
        clearTimeout(timer);
        producer.disconnect(() => reject(err));
      } else if (++n === count) {
        clearTimeout(timer);
        producer.disconnect(() => resolve(n));
      }
    });
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) producer.produce('scram-ssl', 0, Buffer.from(`tls-${i}`), `k${i}`);
    });
    producer.connect();
  });
  expect(delivered).toBe(count);

  const values = await new Promise<string[]>((resolve, reject) => {
    const consumer = new RdKafka.KafkaConsumer({ ...rdConfig('alice-secret'), 'group.id': 'scram-ssl', 'enable.auto.commit': false }, { 'auto.offset.reset': 'earliest' });
    const got: string[] = [];
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      consumer.disconnect(() => (err ? reject(err) : resolve(got)));
    };
    const timer = setTimeout(() => finish(new Error(`consumed ${got.length}/${count}`)), TIMEOUT_MS);
    consumer.on('ready', () => {
      consumer.assign([{ topic: 'scram-ssl', partition: 0, offset: 0 }]);
      const loop = () => {
        if (done) return;
        consumer.consume(200, (err: Error | null, messages: any[]) => {
          if (err) return finish(err);
          got.push(...messages.map((m) => m.value.toString()));
          if (got.length >= count) return finish();
          setImmediate(loop);
        });
      };
      loop();
    });
    consumer.connect();
  });
  expect(values.sort()).toEqual(Array.from({ length: count }, (_, i) => `tls-${i}`).sort());
});

test('a wrong password over SASL_SSL: the broker\'s SASL_AUTHENTICATION_FAILED message, no connection', async () => {
  const failures: string[] = [];
  const connectError = await new Promise<any>((resolve) => {
    const producer = new RdKafka.Producer(rdConfig('wrong'));
    producer.on('event.log', (l: any) => {
      if (l.severity <= 3 && /SASL authentication error/.test(l.message)) failures.push(l.message);
    });
    producer.connect({ timeout: 5_000 }, (e: any) => resolve(e));
  });
  expect(connectError).toBeTruthy();
  expect(failures[0]).toMatch(/Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512/);
});
