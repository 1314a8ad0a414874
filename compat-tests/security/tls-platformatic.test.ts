/**
 * @platformatic/kafka over TLS: its `tls` option (node:tls connect options with the test CA and a
 * client certificate) against an SSL listener with ssl.client.auth=required. The Admin, Producer
 * and Consumer run in a child process (the library is ESM only: tls-platformatic.mjs); the broker
 * sees every request as the certificate's principal, over SSL.
 */
import * as path from 'node:path';
import { createTestCertificates, type TestCertificates } from '../../broker';
import { startTlsBroker, type TlsBroker } from './tls-helpers';
import { runNodeScript } from '../helpers/node-script';

jest.setTimeout(60_000);

const SCRIPT = path.join(__dirname, 'tls-platformatic.mjs');
const RUN_TIMEOUT_MS = 40_000;

let certs: TestCertificates;
let b: TlsBroker;

beforeAll(async () => {
  certs = createTestCertificates();
  b = await startTlsBroker(certs, {}, { clientAuth: 'required' });
});

afterAll(async () => {
  await b?.close();
  certs?.cleanup();
});

const run = (args: string[]): Promise<string> => runNodeScript(SCRIPT, args, RUN_TIMEOUT_MS);

test('platformatic Admin, Producer and Consumer over mutual TLS', async () => {
  const out = await run([b.broker.bootstrapServers[0], certs.ca.certFile, certs.client.certFile, certs.client.keyFile, 'plat-tls', '40']);
  const [status, json] = out.trim().split('\n');
  expect(status).toBe('ok 40 40');
  expect((JSON.parse(json) as string[]).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`).sort());
  const seen = new Set(b.callers.filter((c) => c.clientId?.startsWith('plat-tls')).map((c) => `${c.principal} ${c.securityProtocol}`));
  expect(seen).toEqual(new Set(['User:CN=client,OU=test,O=krill SSL']));
});
