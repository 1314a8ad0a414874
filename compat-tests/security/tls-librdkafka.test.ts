/**
 * librdkafka 2.12 (node-rdkafka, built with OpenSSL) against an SSL listener with mutual TLS
 * (ssl.client.auth=required): security.protocol=ssl with ssl.ca.location, ssl.certificate.location
 * and ssl.key.location (librdkafka verifies the broker's host name by default); a producer with
 * acks=all and a consumer read every message back, as User:CN=client,OU=test,O=krill. A client
 * without a certificate gets a transport error and never a request served.
 */
import { createTestCertificates, type TestCertificates } from '../../broker';
import { startTlsBroker, type TlsBroker } from './tls-helpers';
import { rdkafkaConsumeValues, rdkafkaProduce } from '../helpers/rdkafka';
import { rdkafkaRefusal } from './rdkafka-helpers';

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

test('librdkafka over mutual TLS: acks=all produce and consume, as the certificate subject', async () => {
  const count = 200;
  const producer = { ...sslConfig(true), 'client.id': 'rdkafka-tls-producer', acks: -1, 'linger.ms': 5 };
  const delivered = await rdkafkaProduce(producer, 'rdk-tls', count, (i) => ({ partition: null, value: Buffer.from(`tls-${i}`), key: `key-${i}` }));
  expect(delivered).toHaveLength(count);
  const values = await rdkafkaConsumeValues({ ...sslConfig(true), 'client.id': 'rdkafka-tls-consumer', 'group.id': 'rdkafka-tls' }, 'rdk-tls', 3, count);
  expect(values.sort()).toEqual(Array.from({ length: count }, (_, i) => `tls-${i}`).sort());
  const principals = new Set(b.callers.filter((c) => c.clientId?.startsWith('rdkafka-tls')).map((c) => `${c.principal} ${c.securityProtocol}`));
  expect(principals).toEqual(new Set(['User:CN=client,OU=test,O=krill SSL']));
});

test('librdkafka without a client certificate: the broker refuses the TLS handshake, nothing is served', async () => {
  // librdkafka logs transport failures from its broker thread.
  const refusal = await rdkafkaRefusal(
    { ...sslConfig(false), 'client.id': 'rdkafka-tls-nocert', event_cb: true },
    (l) => /SSL|TLS/.test(l.message) && /certificate required|handshake failed|alert|peer did not return/i.test(l.message),
  );
  expect(refusal.logged).toMatch(/certificate required|alert/i);
  expect(refusal.connectError).not.toBeNull();
  expect(refusal.ready).toBe(false);
  expect(b.callers.some((c) => c.clientId === 'rdkafka-tls-nocert')).toBe(false);
});
