/**
 * The health endpoints: /live answers while the broker loads its logs, /ready only once it has
 * loaded them and serves Metadata (503 before, and nothing listens once it has shut down). The
 * log loading is held open by a file system whose recovery reads wait for the test (the broker
 * recovers because its clean-shutdown marker and recovery points were removed, as after a crash;
 * the segment is over 1 MiB, the size from which recovery reads on the thread pool).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { nodeFs, type StorageFs } from '../../storage/fs';
import { CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT_FILE } from '../../storage/log-file-utils';
import { httpStatus, scrape } from '../../broker/metrics/testing/scrape';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

/** nodeFs whose thread-pool reads (log recovery's) wait until `release()`; `reached` resolves at the first. */
function gatedFs(): { fs: StorageFs; reached: Promise<void>; release(): void } {
  let open!: () => void;
  let reachedResolve!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reachedResolve = r));
  const gated: StorageFs = {
    ...nodeFs,
    read: (fd, buf, offset, length, position, cb) => {
      reachedResolve();
      void gate.then(() => nodeFs.read(fd, buf, offset, length, position, cb));
    },
  };
  return { fs: gated, reached, release: open };
}

const kafkaAt = (bootstrap: string[]) => new Kafka({ clientId: 'krill-compat-health', brokers: bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 2 } });

let dir: string;
let broker: RunningBroker | undefined;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-health-'));
});

afterAll(async () => {
  await broker?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('/ready is 503 while the logs load and 200 once the broker serves Metadata; /live is 200 throughout', async () => {
  // A broker with some data, stopped, then made to recover on its next start.
  const first = await startBroker({ dataDir: dir, keepDataDir: true, logLevel: 'warn' });
  const producer = kafkaAt(first.bootstrapServers).producer({ allowAutoTopicCreation: true });
  await producer.connect();
  const value = 'x'.repeat(1024);
  for (let s = 0; s < 3; s++) await producer.send({ topic: 'health', acks: -1, messages: Array.from({ length: 500 }, () => ({ value })) });
  await producer.disconnect();
  await first.close();
  fs.rmSync(path.join(dir, CLEAN_SHUTDOWN_FILE));
  fs.rmSync(path.join(dir, RECOVERY_POINT_CHECKPOINT_FILE));

  const gate = gatedFs();
  const listening = new Promise<{ host: string; port: number }>((resolve) => {
    const starting = startBroker({ dataDir: dir, keepDataDir: true, logLevel: 'warn', storageFs: gate.fs, metricsPort: 0, metricsListening: resolve });
    void starting.then((b) => (broker = b));
  });
  const address = await listening;
  await gate.reached; // recovery is reading the partition log now
  expect(await httpStatus(address, '/live')).toBe(200);
  expect(await httpStatus(address, '/ready')).toBe(503);
  expect(await httpStatus(address, '/ready')).toBe(503);
  // Metrics are served meanwhile: the directory's logs are still being recovered.
  const loading = await scrape(address);
  expect(loading.value('kafka_log_logmanager_remaininglogstorecover', { dir })).toBeGreaterThan(0);
  expect(loading.value('kafka_server_replicamanager_partitioncount')).toBe(0);
  expect(loading.value('kafka_server_kafkaserver_brokerstate')).toBe(2); // RECOVERY
  expect(broker).toBeUndefined();
  gate.release();

  // Ready flips by itself once startup completes; probe it as a wait strategy would.
  const deadline = Date.now() + 20_000;
  while ((await httpStatus(address, '/ready')) !== 200) {
    if (Date.now() > deadline) throw new Error('/ready never became 200');
    await new Promise((r) => setTimeout(r, 20));
  }
  // Ready means Metadata is served (and the recovered records are there).
  const admin = kafkaAt([`127.0.0.1:${(await waitForBroker()).port}`]).admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets('health');
  await admin.disconnect();
  expect(offsets.map((o) => o.high)).toEqual(['1500']);
  expect(broker!.metricsAddress).toEqual(address);
  const loaded = await scrape(address);
  expect(loaded.value('kafka_log_logmanager_remaininglogstorecover', { dir })).toBe(0);
  expect(loaded.value('kafka_server_replicamanager_partitioncount')).toBe(1);
  expect(loaded.value('kafka_server_kafkaserver_brokerstate')).toBe(3); // RUNNING
  expect(loaded.value('kafka_log_log_logendoffset', { topic: 'health', partition: '0' })).toBe(1500);

  await broker!.close();
  broker = undefined;
  expect(await refused(address.port)).toBe(true);
}, 30_000);

test('without a metrics port nothing listens and metricsAddress is null', async () => {
  const b = await startBroker({ logLevel: 'warn' });
  try {
    expect(b.metricsAddress).toBeNull();
    expect(b.server.metrics).toBeNull();
    expect(b.server.topicStats).toBeNull();
  } finally {
    await b.close();
  }
});

async function waitForBroker(): Promise<RunningBroker> {
  const deadline = Date.now() + 10_000;
  while (!broker) {
    if (Date.now() > deadline) throw new Error('startBroker never resolved');
    await new Promise((r) => setTimeout(r, 10));
  }
  return broker;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}
