/**
 * SaslHandshake (17) and SaslAuthenticate (36) at every advertised version, through the real
 * dispatcher of a running broker (and of a controller node), on a connection of a SASL_PLAINTEXT
 * listener and on a PLAINTEXT one: requests encoded with the generated codecs, responses decoded at
 * the same version with no bytes left. Covers the SaslHandshake v0 raw-token frame and the
 * dispatcher's SASL gate (what is not served before authentication).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '..';
import type { ControllerServer } from '../controller/controller-server';
import { CONTROLLER_HANDLERS } from '../controller/handlers';
import { ErrorCode } from '../../protocol/errors';
import { apiByKey, ApiKey, responseHeaderVersion } from '../../protocol/generated';
import { readResponseHeader, writeRequestHeader } from '../../protocol/header';
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { ANONYMOUS } from '../../common/kafka-principal';
import type { ConnectionInfo, FrameProcessor, ProcessResult } from '../network/connection';
import { advertisedVersions } from '../testing/dispatch-client';
import { startTestController } from '../testing/controller-node';
import { HANDLERS } from './';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';
const SASL = {
  'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT',
  'sasl.enabled.mechanisms': 'PLAIN',
  'connection.failed.authentication.delay.ms': '0',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
  'listener.name.controller.plain.sasl.jaas.config': JAAS,
};

let broker: RunningBroker;
let dir: string;
let controller: ControllerServer;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', config: SASL, overrides: ['listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0'] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-sasl-handlers-'));
  controller = await startTestController(dir, { props: SASL });
});

afterAll(async () => {
  await broker?.close();
  await controller?.shutdown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

let nextConn = 1000;
function connection(listenerName: string, securityProtocol: string): ConnectionInfo {
  return { id: nextConn++, remoteAddress: '127.0.0.1', remotePort: 1, localPort: 1, listenerName, securityProtocol, principal: ANONYMOUS, attributes: new Map() };
}

/** One request through `dispatcher` on `conn`; the decoded response, or the ProcessResult when it is not an answer. */
async function call(dispatcher: FrameProcessor, conn: ConnectionInfo, apiKey: number, version: number, body: object): Promise<any> {
  const api = apiByKey(apiKey)!;
  const w = new Writer();
  writeRequestHeader(w, apiKey, version, 42, 'sasl-handlers');
  api.writeRequest(w, version, body as never);
  const res = await dispatcher.process(w.toBuffer(), conn, { parked: () => {} });
  if (res.kind !== 'respond' || res.closeAfterSend !== undefined) return res;
  const r = new Reader(Buffer.concat(res.chunks), 4);
  expect(readResponseHeader(r, responseHeaderVersion(apiKey, version)).correlationId).toBe(42);
  const decoded = api.readResponse(r, version);
  expect(r.remaining).toBe(0);
  return decoded;
}

const plain = (user: string, pw: string) => Buffer.from(`\u0000${user}\u0000${pw}`);

describe.each([
  ['broker', () => broker.server.dispatcher as FrameProcessor, 'SASL_PLAINTEXT'],
  ['controller', () => controller.dispatcher as FrameProcessor, 'CONTROLLER'],
] as const)('%s listener', (_name, dispatcher, listener) => {
  test('SaslHandshake at every version: the enabled mechanisms; UNSUPPORTED_SASL_MECHANISM for another', async () => {
    for (const v of advertisedVersions(ApiKey.SaslHandshake)) {
      expect(await call(dispatcher(), connection(listener, 'SASL_PLAINTEXT'), ApiKey.SaslHandshake, v, { mechanism: 'PLAIN' })).toEqual({ errorCode: ErrorCode.NONE, mechanisms: ['PLAIN'] });
      const failed: ProcessResult = await call(dispatcher(), connection(listener, 'SASL_PLAINTEXT'), ApiKey.SaslHandshake, v, { mechanism: 'SCRAM-SHA-256' });
      // The answer is written, then the connection closes.
      expect(failed).toMatchObject({ kind: 'respond', closeAfterSend: expect.stringContaining('Unsupported SASL mechanism SCRAM-SHA-256') });
    }
  });

  test('SaslAuthenticate at every version after SaslHandshake v1; then other requests are served', async () => {
    for (const v of advertisedVersions(ApiKey.SaslAuthenticate)) {
      const conn = connection(listener, 'SASL_PLAINTEXT');
      await call(dispatcher(), conn, ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
      const res = await call(dispatcher(), conn, ApiKey.SaslAuthenticate, v, { authBytes: plain('alice', 'alice-secret') });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.errorMessage).toBe('');
      expect(res.sessionLifetimeMs).toBe(0n);
      expect(conn.principal).toEqual({ principalType: 'User', name: 'alice' });
      const av = await call(dispatcher(), conn, ApiKey.ApiVersions, 3, { clientSoftwareName: 'x', clientSoftwareVersion: '1' });
      expect(av.errorCode).toBe(ErrorCode.NONE);

      const denied = connection(listener, 'SASL_PLAINTEXT');
      await call(dispatcher(), denied, ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
      expect(await call(dispatcher(), denied, ApiKey.SaslAuthenticate, v, { authBytes: plain('alice', 'x') })).toMatchObject({
        kind: 'respond',
        closeAfterSend: 'SASL authentication failed: Authentication failed: Invalid username or password',
      });
    }
  });

  test('SaslHandshake v0: the next frame is a raw token, answered with a raw token', async () => {
    const conn = connection(listener, 'SASL_PLAINTEXT');
    await call(dispatcher(), conn, ApiKey.SaslHandshake, 0, { mechanism: 'PLAIN' });
    const res = await dispatcher().process(plain('admin', 'admin-secret'), conn, { parked: () => {} });
    expect(res).toEqual({ kind: 'respond', chunks: [Buffer.from([0, 0, 0, 0])] });
    expect(conn.principal.name).toBe('admin');
  });

  test('before authentication nothing else is served', async () => {
    const res = await call(dispatcher(), connection(listener, 'SASL_PLAINTEXT'), ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false });
    expect(res).toEqual({ kind: 'close', reason: 'SASL authentication failed: Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL handshake.' });
  });
});

describe('on a PLAINTEXT listener (KafkaApis)', () => {
  test('SaslHandshake and SaslAuthenticate at every version are ILLEGAL_SASL_STATE', async () => {
    const d = broker.server.dispatcher;
    for (const v of advertisedVersions(ApiKey.SaslHandshake)) {
      expect(await call(d, connection('PLAINTEXT', 'PLAINTEXT'), ApiKey.SaslHandshake, v, { mechanism: 'PLAIN' })).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    }
    for (const v of advertisedVersions(ApiKey.SaslAuthenticate)) {
      const res = await call(d, connection('PLAINTEXT', 'PLAINTEXT'), ApiKey.SaslAuthenticate, v, { authBytes: plain('alice', 'alice-secret') });
      expect(res.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
      expect(res.errorMessage).toBe('SaslAuthenticate request received after successful authentication');
    }
  });
});

test('both registries serve SaslHandshake v0-1 and SaslAuthenticate v0-2', () => {
  for (const registry of [HANDLERS, CONTROLLER_HANDLERS]) {
    expect(registry.find((h) => h.apiKey === ApiKey.SaslHandshake)).toMatchObject({ minVersion: 0, maxVersion: 1 });
    expect(registry.find((h) => h.apiKey === ApiKey.SaslAuthenticate)).toMatchObject({ minVersion: 0, maxVersion: 2 });
  }
});
