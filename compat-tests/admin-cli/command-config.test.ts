/**
 * The admin CLI's --command-config against a broker whose only listener is SASL_SSL with
 * SCRAM-SHA-512 (the test CA's broker certificate): `krill topics --list` and `krill groups --list`
 * with a PEM and a PKCS12 trust store agree with KafkaJS 2.2.4's admin over the same listener;
 * a wrong password fails with the broker's SASL_AUTHENTICATION_FAILED message, printed as
 * kafka-topics.sh / kafka-consumer-groups.sh print it, exit code 1; against a second broker whose
 * SSL listener requires client certificates, a PKCS12 or PEM key store (ssl.keystore.*) gets in
 * and no key store does not; `krill topics --list` of the
 * binary (dist/, run `npx tsc -p tsconfig.build.json` first) reads the same file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { createTestCertificates, type TestCertificates } from '../../broker/testing/certificates';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { ADMIN, SCRAM_LOGIN_MODULE } from '../security/scram-helpers';
import { runNodeScript } from '../helpers/node-script';
import { waitFor } from '../replication/helpers';

const CLI = path.resolve(__dirname, '..', '..', 'bin', 'krill.js');
const AUTH_FAILED = 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512';

let certs: TestCertificates;
let broker: RunningBroker;
let dir: string;
let admin: Admin;
let bootstrap: string;

function commandConfig(name: string, lines: string[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const jaas = (password: string) => `sasl.jaas.config=${SCRAM_LOGIN_MODULE} required username="alice" password="${password}";`;
const pemConfig = (password: string) => ['security.protocol=SASL_SSL', 'sasl.mechanism=SCRAM-SHA-512', jaas(password), 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.ca.certFile}`];

async function run(command: string, ...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain(command, ['--bootstrap-server', bootstrap, ...argv], o);
  return { code, out: o.out, err: o.err };
}

beforeAll(async () => {
  certs = createTestCertificates();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cli-cc-'));
  broker = await startBroker({
    logLevel: 'error',
    overrides: ['listeners=SASL_SSL://127.0.0.1:0'],
    config: {
      ...certs.brokerSsl(),
      'inter.broker.listener.name': 'SASL_SSL',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': `${SCRAM_LOGIN_MODULE} required username="${ADMIN.username}" password="${ADMIN.password}";`,
      'offsets.topic.replication.factor': '1',
      'group.initial.rebalance.delay.ms': '0',
    },
    scramCredentials: [`SCRAM-SHA-512=[name=${ADMIN.username},password=${ADMIN.password}]`, 'SCRAM-SHA-512=[name=alice,password=alice-secret]'],
  });
  bootstrap = broker.bootstrapServers.join(',');
  const kafka = new Kafka({
    clientId: 'cli-command-config',
    brokers: broker.bootstrapServers,
    ssl: { ca: [certs.ca.cert] },
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' },
    logLevel: logLevel.NOTHING,
    retry: { retries: 8, initialRetryTime: 50, maxRetryTime: 500 },
  });
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'cc-orders', numPartitions: 2 }, { topic: 'cc-audit', numPartitions: 1 }] });
  await admin.setOffsets({ groupId: 'cc-billing', topic: 'cc-orders', partitions: [{ partition: 0, offset: '0' }] });
}, 60_000);

afterAll(async () => {
  await admin?.disconnect();
  await broker?.close();
  certs?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('krill topics --list over SASL_SSL (PEM trust store) lists what KafkaJS lists', async () => {
  const file = commandConfig('pem.properties', pemConfig('alice-secret'));
  const listed = await run('topics', '--list', '--command-config', file);
  expect(listed.err).toEqual([]);
  expect(listed.code).toBe(0);
  expect(listed.out).toEqual(expect.arrayContaining(['cc-audit', 'cc-orders']));
  expect(listed.out).toEqual([...(await admin.listTopics())].sort());
}, 30_000);

test('krill groups --list over SASL_SSL (PKCS12 trust store) lists what KafkaJS lists', async () => {
  const file = commandConfig('p12.properties', [
    'security.protocol=SASL_SSL',
    'sasl.mechanism=SCRAM-SHA-512',
    jaas('alice-secret'),
    'ssl.truststore.type=PKCS12',
    `ssl.truststore.location=${certs.ca.pkcs12TruststoreFile}`,
    `ssl.truststore.password=${certs.password}`,
    'ssl.endpoint.identification.algorithm=https',
  ]);
  const kafkaJsGroups = await waitFor('KafkaJS lists cc-billing', async () => {
    const { groups } = await admin.listGroups();
    return groups.some((g) => g.groupId === 'cc-billing') ? groups : undefined;
  });
  const listed = await run('groups', '--list', '--command-config', file);
  expect(listed).toEqual({ code: 0, out: kafkaJsGroups.filter((g) => g.protocolType === 'consumer' || g.protocolType === '').map((g) => g.groupId).sort(), err: [] });
  expect(listed.out).toContain('cc-billing');
}, 30_000);

test('a wrong password: the broker\'s message as kafka-topics.sh and kafka-consumer-groups.sh print it, exit 1', async () => {
  const file = commandConfig('wrong.properties', pemConfig('not-the-password'));
  expect(await run('topics', '--list', '--command-config', file)).toEqual({ code: 1, out: [`Error while executing topic command : ${AUTH_FAILED}`], err: [] });
  expect(await run('groups', '--list', '--command-config', file)).toEqual({
    code: 1,
    out: [],
    err: [`Error: Executing consumer group command failed due to org.apache.kafka.common.errors.SaslAuthenticationException: ${AUTH_FAILED}`],
  });
}, 30_000);

test('without --command-config, or with a file that does not trust the CA, the SASL_SSL listener cannot be reached (exit 1)', async () => {
  const plain = await run('topics', '--list');
  expect(plain.code).toBe(1);
  expect(plain.out).toEqual([expect.stringMatching(/^Error while executing topic command : cannot reach any bootstrap server/)]);
  const noTrust = commandConfig('no-trust.properties', ['security.protocol=SASL_SSL', 'sasl.mechanism=SCRAM-SHA-512', jaas('alice-secret')]);
  const untrusted = await run('topics', '--list', '--command-config', noTrust);
  expect(untrusted.code).toBe(1);
  expect(untrusted.out).toEqual([expect.stringMatching(/^Error while executing topic command : cannot reach any bootstrap server .*TLS connection to .* failed/)]);
  const badMechanism = commandConfig('gssapi.properties', ['security.protocol=SASL_SSL', `ssl.truststore.location=${certs.ca.certFile}`, 'ssl.truststore.type=PEM']);
  expect(await run('topics', '--list', '--command-config', badMechanism)).toEqual({
    code: 1,
    out: ["Error while executing topic command : sasl.mechanism=GSSAPI: krill's admin client implements PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"],
    err: [],
  });
}, 30_000);

describe('mutual TLS (ssl.client.auth=required)', () => {
  let mtls: RunningBroker;
  let mtlsBootstrap: string;

  beforeAll(async () => {
    mtls = await startBroker({ logLevel: 'error', overrides: ['listeners=SSL://127.0.0.1:0'], config: { ...certs.brokerSsl({ clientAuth: 'required' }), 'inter.broker.listener.name': 'SSL' } });
    mtlsBootstrap = mtls.bootstrapServers.join(',');
  }, 60_000);

  afterAll(async () => {
    await mtls?.close();
  });

  const list = async (file: string) => {
    const o = new CollectedOutput();
    const code = await adminMain('topics', ['--bootstrap-server', mtlsBootstrap, '--list', '--command-config', file], o);
    return { code, out: o.out, err: o.err };
  };

  test('a PKCS12 or a PEM key store gets in; no key store does not', async () => {
    const trust = ['security.protocol=SSL', 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.ca.certFile}`];
    const p12 = commandConfig('mtls-p12.properties', [...trust, 'ssl.keystore.type=PKCS12', `ssl.keystore.location=${certs.client.pkcs12File}`, `ssl.keystore.password=${certs.password}`]);
    const pem = commandConfig('mtls-pem.properties', [...trust, 'ssl.keystore.type=PEM', `ssl.keystore.location=${certs.client.pemKeystoreFile}`]);
    expect(await list(p12)).toEqual({ code: 0, out: [], err: [] });
    expect(await list(pem)).toEqual({ code: 0, out: [], err: [] });
    const none = await list(commandConfig('mtls-none.properties', trust));
    expect(none.code).toBe(1);
    expect(none.out).toEqual([expect.stringMatching(/^Error while executing topic command : cannot reach any bootstrap server/)]);
    const wrongStorePassword = await list(commandConfig('mtls-bad.properties', [...trust, 'ssl.keystore.type=PKCS12', `ssl.keystore.location=${certs.client.pkcs12File}`, 'ssl.keystore.password=nope']));
    expect(wrongStorePassword.code).toBe(1);
    expect(wrongStorePassword.out).toEqual([expect.stringMatching(/^Error while executing topic command : ssl\.keystore\.password \(--command-config .*\): /)]);
  }, 30_000);
});

test('the krill binary reads --command-config', async () => {
  const file = commandConfig('bin.properties', pemConfig('alice-secret'));
  const stdout = await runNodeScript(CLI, ['topics', '--bootstrap-server', bootstrap, '--list', '--command-config', file], 20_000);
  expect(stdout.trim().split('\n')).toEqual((await run('topics', '--list', '--command-config', file)).out);
}, 30_000);
