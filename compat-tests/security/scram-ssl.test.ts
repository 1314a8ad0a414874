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
import { rdkafkaConsumeValues, rdkafkaProduce } from '../helpers/rdkafka';
import { rdkafkaRefusal, saslAuthenticationError } from './rdkafka-helpers';

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
  const producer = { ...rdConfig('alice-secret'), acks: -1, 'allow.auto.create.topics': true };
  const delivered = await rdkafkaProduce(producer, 'scram-ssl', count, (i) => ({ partition: 0, value: Buffer.from(`tls-${i}`), key: `k${i}` }), TIMEOUT_MS);
  expect(delivered).toHaveLength(count);
  const values = await rdkafkaConsumeValues({ ...rdConfig('alice-secret'), 'group.id': 'scram-ssl' }, 'scram-ssl', 1, count, TIMEOUT_MS);
  expect(values.sort()).toEqual(Array.from({ length: count }, (_, i) => `tls-${i}`).sort());
});

test('a wrong password over SASL_SSL: the broker\'s SASL_AUTHENTICATION_FAILED message, no connection', async () => {
  const refusal = await rdkafkaRefusal(rdConfig('wrong'), saslAuthenticationError, { connectTimeoutMs: 5_000 });
  expect(refusal.connectError).toBeTruthy();
  expect(refusal.logged).toMatch(/Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512/);
});
