/**
 * A broker bounce with tiered data: after a clean restart (and after a SIGKILL-free stop of the
 * embedded broker) a tiered log reloads with its log start offset below its first local segment,
 * the metadata manager reloads `__remote_log_metadata`, the leader finds its highest copied offset
 * again instead of copying anything twice, consumers read everything from offset 0, and copying
 * carries on with new data.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { connect, fetchAll, produce } from '../../client/network-client';
import { createTieredTopic, removeRemoteDirs, tieredConfig, waitUntilTiered } from './helpers';
import { waitFor } from '../replication/helpers';

jest.setTimeout(60_000);

const TOPIC = 'tiered-bounce';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-tiered-bounce-'));
const config = tieredConfig();
let broker: RunningBroker | undefined;

afterAll(async () => {
  await broker?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  removeRemoteDirs();
});

const start = (): Promise<RunningBroker> => startBroker({ logLevel: 'warn', dataDir, keepDataDir: true, config });
const value = (i: number): string => `b${i}-${'e'.repeat(100)}`;

function remoteStarts(): string[] {
  const root = path.join(String(config['rsm.config.dir']), 'kafka-tiered-storage');
  const dir = fs.readdirSync(root).find((d) => d.startsWith(`${TOPIC}-0-`));
  return dir ? fs.readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.log')).map((f) => f.split('-')[0]) : [];
}

async function write(b: RunningBroker, from: number, n: number): Promise<void> {
  const conn = await connect(b.host, b.port);
  try {
    for (let i = from; i < from + n; i += 5) await produce(conn, TOPIC, 0, Array.from({ length: 5 }, (_, j) => ({ value: value(i + j) })), { acks: -1 });
  } finally {
    await conn.close();
  }
}

async function readAll(b: RunningBroker): Promise<string[]> {
  const conn = await connect(b.host, b.port);
  try {
    return (await fetchAll(conn, TOPIC, 0, 0n)).records.map((r) => r.value!.toString());
  } finally {
    await conn.close();
  }
}

test('a tiered partition survives a broker restart: same offsets, nothing copied twice, copying carries on', async () => {
  broker = await start();
  await createTieredTopic(broker, TOPIC);
  await write(broker, 0, 150);
  let log = broker.server.logManager.getLog(TOPIC, 0)!;
  await waitUntilTiered(broker, TOPIC, 0, log.activeSegment.baseOffset);
  const localStart = log.localLogStartOffset;
  const copied = remoteStarts();
  await broker.close();

  broker = await start();
  log = await waitFor('the log loaded', () => broker!.server.logManager.getLog(TOPIC, 0));
  expect(log.logStartOffset).toBe(0n);
  expect(log.localLogStartOffset).toBe(localStart);
  // the leader task finds the highest copied offset from the reloaded metadata
  await waitFor('the highest remote offset found again', () => log.highestOffsetInRemoteStorage >= localStart - 1n, 20_000, 50);
  expect(await readAll(broker)).toEqual(Array.from({ length: 150 }, (_, i) => value(i)));
  await write(broker, 150, 100);
  await waitUntilTiered(broker, TOPIC, 0, log.activeSegment.baseOffset);
  const after = remoteStarts();
  expect(new Set(after).size).toBe(after.length);
  expect(after.length).toBeGreaterThan(copied.length);
  for (const s of copied) expect(after).toContain(s);
  expect(await readAll(broker)).toEqual(Array.from({ length: 250 }, (_, i) => value(i)));
});
