/**
 * A listener's SSL key and trust stores replaced as a dynamic broker config (KIP-226,
 * listener.name.<l>.ssl.*), through IncrementalAlterConfigs on the PLAINTEXT listener: new TLS
 * connections get the new certificate at once (a client that trusts only the new CA connects, one
 * that trusts only the old CA no longer does), without a restart. Stores that do not load, a
 * listener that is not SSL and the cluster-wide default are refused with INVALID_REQUEST;
 * DescribeConfigs shows the listener overrides with their source, passwords hidden; after a
 * restart the listener starts with the dynamic stores.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { createTestCertificates, startBroker, type RunningBroker, type TestCertificates } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { connect, metadata, type BrokerConnection } from '../../client/network-client';
import { ConfigSource } from '../../config/config-types';

const E = ErrorCode;
const BROKER = 4;
const SET = 0;

let certsA: TestCertificates;
let certsB: TestCertificates;
let broker: RunningBroker;
let admin: BrokerConnection;
let dataDir: string;

async function start(): Promise<void> {
  broker = await startBroker({
    logLevel: 'error',
    dataDir,
    config: { listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', 'inter.broker.listener.name': 'PLAINTEXT', ...certsA.brokerSsl({ listener: 'SSL' }) },
  });
  const { host, port } = hostPort(broker.listeners.PLAINTEXT);
  admin = await connect(host, port, { clientId: 'tls-reload-admin' });
}

const hostPort = (s: string) => {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
};

/** Whether a TLS client trusting only `ca` can read metadata from the SSL listener. */
async function tlsWorksWith(ca: string): Promise<boolean> {
  const { host, port } = hostPort(broker.listeners.SSL);
  let conn: BrokerConnection | undefined;
  try {
    conn = await connect(host, port, { clientId: 'tls-reload', timeoutMs: 3_000, tls: { secureContext: tls.createSecureContext({ ca }), verifyHostname: false } });
    await metadata(conn, null);
    return true;
  } catch {
    return false;
  } finally {
    await conn?.close().catch(() => undefined);
  }
}

async function alter(resourceName: string, configs: Record<string, string>) {
  const res = await admin.send('IncrementalAlterConfigs', 1, {
    resources: [{ resourceType: BROKER, resourceName, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: SET, value })) }],
    validateOnly: false,
  });
  return { errorCode: res.responses[0].errorCode, errorMessage: res.responses[0].errorMessage };
}

beforeAll(async () => {
  certsA = createTestCertificates();
  certsB = createTestCertificates();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-tls-reload-'));
  await start();
});
afterAll(async () => {
  await admin?.close();
  await broker?.close();
  certsA?.cleanup();
  certsB?.cleanup();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test('new key and trust stores apply to new TLS connections without a restart', async () => {
  expect(await tlsWorksWith(certsA.ca.cert)).toBe(true);
  expect(await tlsWorksWith(certsB.ca.cert)).toBe(false);
  expect(await alter(String(broker.nodeId), certsB.brokerSsl({ listener: 'SSL', format: 'PKCS12' }))).toEqual({ errorCode: E.NONE, errorMessage: null });
  expect(await tlsWorksWith(certsB.ca.cert)).toBe(true);
  expect(await tlsWorksWith(certsA.ca.cert)).toBe(false);

  const res = await admin.send('DescribeConfigs', 4, {
    resources: [{ resourceType: BROKER, resourceName: String(broker.nodeId), configurationKeys: ['listener.name.ssl.ssl.keystore.location', 'listener.name.ssl.ssl.keystore.password'] }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  const byName = new Map(res.results[0].configs.map((c) => [c.name, c]));
  expect(byName.get('listener.name.ssl.ssl.keystore.location')).toMatchObject({ value: certsB.broker.pkcs12File, configSource: ConfigSource.DYNAMIC_BROKER_CONFIG, isSensitive: false, readOnly: false });
  expect(byName.get('listener.name.ssl.ssl.keystore.password')).toMatchObject({ value: null, configSource: ConfigSource.DYNAMIC_BROKER_CONFIG, isSensitive: true });
  expect(byName.get('listener.name.ssl.ssl.keystore.location')!.synonyms.map((s) => [s.name, s.source])).toEqual([
    ['listener.name.ssl.ssl.keystore.location', ConfigSource.DYNAMIC_BROKER_CONFIG],
    ['listener.name.ssl.ssl.keystore.location', ConfigSource.STATIC_BROKER_CONFIG],
  ]);
});

test('stores that do not load, a listener that is not SSL, the cluster default: INVALID_REQUEST, and the listener keeps its stores', async () => {
  const bad = await alter(String(broker.nodeId), { 'listener.name.ssl.ssl.keystore.location': '/nonexistent/keystore.p12' });
  expect(bad.errorCode).toBe(E.INVALID_REQUEST);
  expect(bad.errorMessage).toMatch(/^Validation of dynamic config update of SSLFactory failed: /);
  expect(await alter(String(broker.nodeId), { 'listener.name.plaintext.ssl.keystore.location': certsA.broker.pkcs12File })).toEqual({
    errorCode: E.INVALID_REQUEST,
    errorMessage: `Listener plaintext is not an SSL or SASL_SSL listener of broker ${broker.nodeId}`,
  });
  expect(await alter('', { 'listener.name.ssl.ssl.keystore.location': certsA.broker.pkcs12File })).toEqual({
    errorCode: E.INVALID_REQUEST,
    errorMessage: 'Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.ssl.ssl.keystore.location)',
  });
  expect(await alter(String(broker.nodeId), { 'listener.name.ssl.ssl.client.auth': 'required' })).toEqual({
    errorCode: E.INVALID_REQUEST,
    errorMessage: 'krill cannot update these configs without a restart: Set(listener.name.ssl.ssl.client.auth)',
  });
  expect(await tlsWorksWith(certsB.ca.cert)).toBe(true);
});

test('after a restart the listener starts with the dynamic stores from the metadata log, not the static ones', async () => {
  await admin.close();
  await broker.close();
  await start();
  expect(await tlsWorksWith(certsB.ca.cert)).toBe(true);
  expect(await tlsWorksWith(certsA.ca.cert)).toBe(false);
});
