/**
 * @platformatic/kafka 1.x with its `sasl` option (PLAIN) against a broker whose only listener is
 * SASL_PLAINTEXT: its Admin creates a topic, its Producer writes (acks -1) and its Consumer reads back
 * through a group, every connection authenticated with SaslHandshake v1 + SaslAuthenticate v2 (the
 * client sends no ApiVersions first). A wrong password fails with the broker's message. The client
 * is ESM only, so it runs in a child process (sasl-platformatic.mjs).
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { RunningBroker } from '../../broker';
import { ALICE, startSaslBroker } from './sasl-helpers';

jest.setTimeout(60_000);

const SCRIPT = path.join(__dirname, 'sasl-platformatic.mjs');
const RUN_TIMEOUT_MS = 40_000;
let broker: RunningBroker;

beforeAll(async () => {
  broker = await startSaslBroker();
});

afterAll(async () => {
  await broker?.close();
});

function run(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { cwd: path.resolve(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sasl-platformatic.mjs did not finish within ${RUN_TIMEOUT_MS} ms\n${err}`));
    }, RUN_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`sasl-platformatic.mjs exited with ${code}\n${err}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!));
    });
  });
}

test('PLAIN: Admin, Producer and Consumer all authenticate; every message comes back', async () => {
  const report = await run([broker.bootstrapServers[0], 'plat-sasl', 'PLAIN', ALICE.username, ALICE.password, '25']);
  expect(report.error).toBeUndefined();
  expect(report.created).toBe(true);
  expect(report.values).toEqual(Array.from({ length: 25 }, (_, i) => `v${i}`));
});

test('a wrong password: SASL_AUTHENTICATION_FAILED with Kafka\'s message', async () => {
  const report = await run([broker.bootstrapServers[0], 'plat-sasl-denied', 'PLAIN', ALICE.username, 'wrong', '1']);
  expect(report.error).toContain('SASL authentication failed');
  expect(report.errorCode).toBe(58);
  expect(report.errorMessage).toBe('Authentication failed: Invalid username or password');
});
