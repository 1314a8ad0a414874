/**
 * @platformatic/kafka 1.x with its `sasl` option (PLAIN) against a broker whose only listener is
 * SASL_PLAINTEXT: its Admin creates a topic, its Producer writes (acks -1) and its Consumer reads back
 * through a group, every connection authenticated with SaslHandshake v1 + SaslAuthenticate v2 (the
 * client sends no ApiVersions first). A wrong password fails with the broker's message. The client
 * is ESM only, so it runs in a child process (sasl-platformatic.mjs).
 */
import * as path from 'node:path';
import type { RunningBroker } from '../../broker';
import { ALICE, startSaslBroker } from './sasl-helpers';
import { lastJsonLine, runNodeScript } from '../helpers/node-script';

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

/** Runs sasl-platformatic.mjs; its report (the last line it prints). */
const run = async (args: string[]): Promise<any> => lastJsonLine(await runNodeScript(SCRIPT, args, RUN_TIMEOUT_MS));

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
