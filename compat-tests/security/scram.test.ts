/**
 * SASL/SCRAM against one embedded combined node with a SASL_PLAINTEXT listener (SCRAM-SHA-256 and
 * SCRAM-SHA-512, inter-broker SCRAM-SHA-512 as admin) and a PLAINTEXT listener:
 * - users bootstrapped with `scramCredentials` (--add-scram) authenticate KafkaJS 2.2.4 with
 *   'scram-sha-256' and 'scram-sha-512', which produce and consume;
 * - a wrong password and an unknown user fail alike, with Kafka's message;
 * - users created with AlterUserScramCredentials (raw requests from krill's client, the password
 *   salted with PBKDF2 as clients do; over PLAINTEXT, and over SASL authenticated with krill's own
 *   SCRAM client) authenticate at once; DescribeUserScramCredentials lists them; deleted ones no
 *   longer authenticate;
 * - node-rdkafka (librdkafka 2.12) with security.protocol=sasl_plaintext and SCRAM-SHA-512 produces
 *   and reads back; a wrong password is an authentication failure;
 * - credentials survive a restart (the metadata log is replayed); --add-scram is not applied twice.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SASLOptions } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import {
  ADMIN,
  alterScram,
  credentialApplied,
  endpointOf,
  kafkaJs,
  krillClient,
  listenersOverride,
  mechanismInfo,
  scramBrokerConfig,
  upsertion,
} from './scram-helpers';
import { produceAndConsume, sorted } from './kafkajs-helpers';
import { rdkafkaConsumeValues, rdkafkaProduce } from '../helpers/rdkafka';
import { rdkafkaRefusal, saslAuthenticationError } from './rdkafka-helpers';

const RDKAFKA_TIMEOUT_MS = 20_000;

let dir: string;
let broker: RunningBroker;
let ports: { plain: number; sasl: number } = { plain: 0, sasl: 0 };

async function start(): Promise<void> {
  broker = await startBroker({
    dataDir: dir,
    keepDataDir: true,
    logLevel: 'warn',
    overrides: [listenersOverride(ports.plain, ports.sasl)],
    config: { ...scramBrokerConfig(), 'num.partitions': 2 },
    scramCredentials: [
      `SCRAM-SHA-512=[name=${ADMIN.username},password=${ADMIN.password}]`,
      'SCRAM-SHA-256=[name=alice,password=alice-secret]',
      'SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192]',
    ],
  });
  ports = { plain: endpointOf(broker.server, 'PLAINTEXT').port, sasl: endpointOf(broker.server, 'SASL_PLAINTEXT').port };
}

const sasl = () => endpointOf(broker.server, 'SASL_PLAINTEXT');
const plain = () => endpointOf(broker.server, 'PLAINTEXT');
const scram = (mechanism: 'scram-sha-256' | 'scram-sha-512', username: string, password: string): SASLOptions => ({ mechanism, username, password });

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-scram-'));
  await start();
});

afterAll(async () => {
  await broker?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether a KafkaJS client authenticates with these credentials (the error's message when not). */
async function kafkaJsAuth(options: SASLOptions): Promise<true | string> {
  const admin = kafkaJs(sasl().bootstrap, options, `auth-${options.mechanism}`).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

describe('KafkaJS 2.2.4', () => {
  test.each(['scram-sha-256', 'scram-sha-512'] as const)('%s: an --add-scram user produces and consumes', async (mechanism) => {
    const values = Array.from({ length: 20 }, (_, i) => `${mechanism}-${i}`);
    expect(sorted(await produceAndConsume(kafkaJs(sasl().bootstrap, scram(mechanism, 'alice', 'alice-secret')), `scram-${mechanism}`, values))).toEqual(sorted(values));
  });

  test.each([
    ['scram-sha-256', 'SCRAM SHA256', 'SCRAM-SHA-256'],
    ['scram-sha-512', 'SCRAM SHA512', 'SCRAM-SHA-512'],
  ] as const)('%s: a wrong password and an unknown user fail alike, with Kafka\'s message', async (mechanism, prefix, name) => {
    const expected = `KafkaJSSASLAuthenticationError: SASL ${prefix} authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism ${name}`;
    expect(await kafkaJsAuth(scram(mechanism, 'alice', 'not-her-password'))).toBe(expected);
    expect(await kafkaJsAuth(scram(mechanism, 'mallory', 'alice-secret'))).toBe(expected);
  });
});

describe('AlterUserScramCredentials / DescribeUserScramCredentials from a client', () => {
  test('a user created over PLAINTEXT authenticates at once; deleted, it no longer does', async () => {
    const conn = await krillClient(plain().host, plain().port);
    try {
      expect(await alterScram(conn, [upsertion('bob', 'bob-secret', 'SCRAM-SHA-512', 8192), upsertion('carol', 'carol-secret', 'SCRAM-SHA-256')])).toEqual([
        ['bob', ErrorCode.NONE, null],
        ['carol', ErrorCode.NONE, null],
      ]);
      expect(await kafkaJsAuth(scram('scram-sha-512', 'bob', 'bob-secret'))).toBe(true);
      expect(await kafkaJsAuth(scram('scram-sha-256', 'carol', 'carol-secret'))).toBe(true);
      // bob has no SCRAM-SHA-256 credential.
      expect(await kafkaJsAuth(scram('scram-sha-256', 'bob', 'bob-secret'))).toMatch(/invalid credentials with SASL mechanism SCRAM-SHA-256$/);

      const described = await conn.send('DescribeUserScramCredentials', undefined, { users: [{ name: 'bob' }, { name: 'alice' }, { name: 'nobody' }] });
      expect(described.results).toEqual([
        { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 8192 }] },
        { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }, { mechanism: 2, iterations: 8192 }] },
        { user: 'nobody', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: nobody', credentialInfos: [] },
      ]);

      expect(await alterScram(conn, [], [{ name: 'carol', mechanism: 1 }])).toEqual([['carol', ErrorCode.NONE, null]]);
      expect(await kafkaJsAuth(scram('scram-sha-256', 'carol', 'carol-secret'))).toMatch(/invalid credentials with SASL mechanism SCRAM-SHA-256$/);
    } finally {
      await conn.close();
    }
  });

  test("over SASL_PLAINTEXT, authenticated with krill's own SCRAM client as admin", async () => {
    const conn = await krillClient(sasl().host, sasl().port, { mechanism: 'SCRAM-SHA-512', ...ADMIN });
    try {
      expect(await alterScram(conn, [upsertion('dave', 'dave-secret', 'SCRAM-SHA-256')])).toEqual([['dave', ErrorCode.NONE, null]]);
      expect(await kafkaJsAuth(scram('scram-sha-256', 'dave', 'dave-secret'))).toBe(true);
    } finally {
      await conn.close();
    }
    await expect(krillClient(sasl().host, sasl().port, { mechanism: 'SCRAM-SHA-512', username: ADMIN.username, password: 'wrong' })).rejects.toThrow(
      /Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512/,
    );
  });
});

describe('node-rdkafka (librdkafka 2.12), security.protocol=sasl_plaintext, SCRAM-SHA-512', () => {
  const rdConfig = (password: string) => ({
    'metadata.broker.list': sasl().bootstrap,
    'security.protocol': 'sasl_plaintext',
    'sasl.mechanisms': 'SCRAM-SHA-512',
    'sasl.username': 'alice',
    'sasl.password': password,
  });

  test('produce and read back', async () => {
    const producer = { ...rdConfig('alice-secret'), acks: -1, 'allow.auto.create.topics': true };
    const delivered = await rdkafkaProduce(producer, 'rd-scram', 25, (i) => ({ partition: 0, value: Buffer.from(`rd-${i}`), key: `k${i}` }), RDKAFKA_TIMEOUT_MS);
    expect(delivered).toHaveLength(25);
    const consumer = { ...rdConfig('alice-secret'), 'group.id': 'rd-rd-scram' };
    expect((await rdkafkaConsumeValues(consumer, 'rd-scram', 1, 25, RDKAFKA_TIMEOUT_MS)).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `rd-${i}`).sort());
  });

  test('a wrong password is an authentication failure', async () => {
    // librdkafka reports the SaslAuthenticate error as an error-level log line (its error events
    // need polling, which node-rdkafka starts only once connected); connect() then fails.
    const refusal = await rdkafkaRefusal({ ...rdConfig('wrong'), 'socket.timeout.ms': 5_000 }, saslAuthenticationError, { connectTimeoutMs: 5_000 });
    expect(refusal.connectError).toBeTruthy();
    expect(refusal.logged).toMatch(/SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512/);
  });
});

describe('a restart', () => {
  test('credentials written by AlterUserScramCredentials and by --add-scram survive; --add-scram is not applied again', async () => {
    const conn = await krillClient(plain().host, plain().port);
    try {
      expect(await alterScram(conn, [upsertion('erin', 'erin-secret', 'SCRAM-SHA-256')])).toEqual([['erin', ErrorCode.NONE, null]]);
    } finally {
      await conn.close();
    }
    const aliceSalt = broker.server.metadata.scramCredential('alice', 1)!.salt;
    await broker.close();
    await start();
    expect(broker.server.metadata.scramCredential('alice', 1)!.salt).toEqual(aliceSalt);
    await credentialApplied(broker.server, 'erin', mechanismInfo('SCRAM-SHA-256'));
    expect(await kafkaJsAuth(scram('scram-sha-256', 'erin', 'erin-secret'))).toBe(true);
    expect(await kafkaJsAuth(scram('scram-sha-512', 'alice', 'alice-secret'))).toBe(true);
    expect(await kafkaJsAuth(scram('scram-sha-512', 'bob', 'bob-secret'))).toBe(true);
  });
});
