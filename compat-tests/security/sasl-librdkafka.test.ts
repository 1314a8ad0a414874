/**
 * librdkafka 2.12 (node-rdkafka) with security.protocol=SASL_PLAINTEXT, sasl.mechanisms=PLAIN against
 * a broker whose only listener is SASL_PLAINTEXT: librdkafka does ApiVersions, SaslHandshake v1 and
 * SaslAuthenticate itself; a producer (acks=all) writes and a manually assigned consumer reads every
 * message back. A wrong password: librdkafka logs the broker's SASL_AUTHENTICATION_FAILED message
 * and the client never gets ready.
 */
import type { RunningBroker } from '../../broker';
import { ALICE, startSaslBroker } from './sasl-helpers';
import { rdkafkaConsumeValues, rdkafkaProduce, type RdDelivery } from '../helpers/rdkafka';
import { rdkafkaRefusal } from './rdkafka-helpers';

jest.setTimeout(60_000);

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startSaslBroker();
});

afterAll(async () => {
  await broker?.close();
});

/** librdkafka's log line for a failed SaslAuthenticate, with the broker's message. */
const SASL_ERROR = /SASL authentication error: (.*?) \(after/;

const sasl = (user: { username: string; password: string }) => ({
  'security.protocol': 'sasl_plaintext',
  'sasl.mechanisms': 'PLAIN',
  'sasl.username': user.username,
  'sasl.password': user.password,
});

const brokerList = () => broker.bootstrapServers.join(',');

function produce(topic: string, count: number, user: { username: string; password: string }): Promise<RdDelivery[]> {
  const config = { 'metadata.broker.list': brokerList(), 'client.id': 'rdkafka-sasl', acks: -1, 'linger.ms': 5, 'allow.auto.create.topics': true, ...sasl(user) };
  return rdkafkaProduce(config, topic, count, (i) => ({ partition: 0, value: Buffer.from(`value-${i}`), key: `key-${i}` }));
}

function consume(topic: string, expected: number): Promise<string[]> {
  return rdkafkaConsumeValues({ 'group.id': 'rdkafka-sasl-reader', 'metadata.broker.list': brokerList(), ...sasl(ALICE) }, topic, 1, expected);
}

test('SASL_PLAINTEXT PLAIN: produce (acks=all) and consume back', async () => {
  expect(await produce('rdkafka-sasl', 50, ALICE)).toHaveLength(50);
  const values = await consume('rdkafka-sasl', 50);
  expect(values).toEqual(Array.from({ length: 50 }, (_, i) => `value-${i}`));
});

test('a wrong password: librdkafka reports the broker\'s SASL_AUTHENTICATION_FAILED message and never gets ready', async () => {
  // librdkafka logs the failure from its broker thread; errors proper only come with polling.
  const refusal = await rdkafkaRefusal(
    { 'metadata.broker.list': brokerList(), 'client.id': 'rdkafka-sasl-denied', event_cb: true, ...sasl({ username: 'alice', password: 'wrong' }) },
    (l) => SASL_ERROR.test(l.message),
  );
  expect(SASL_ERROR.exec(refusal.logged)![1]).toBe('Authentication failed: Invalid username or password');
  expect(refusal.connectError).not.toBeNull();
  expect(refusal.ready).toBe(false);
});
