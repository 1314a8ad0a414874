/**
 * Metadata snapshots on disk: three ControllerServers (a KRaft controller quorum in one process,
 * formatted by `krill storage format`) with a small metadata.log.max.record.bytes.between.snapshots,
 * metadata.max.retention.bytes=0 and small metadata.log.segment.bytes. After a run of topic
 * operations (creates, and deletes of most of them) every controller has `%020d-%010d.checkpoint`
 * files, only the latest is kept, the segments below it are deleted, and a standby restarted on its
 * directory loads the latest snapshot plus the log after it and has the active controller's image.
 *
 * Measurement (opt-in): KRILL_SNAPSHOT_RESTART_OPS=20000 runs that many operations twice, with
 * snapshots (KRILL_SNAPSHOT_BYTES between them, default 4 KiB) and without (the threshold above the
 * log's size), and prints the restart time of a standby (ControllerServer.start until its image
 * has the active's last committed offset) and the directory sizes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ControllerServer } from '../../broker/controller/controller-server';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { randomUuid } from '../../protocol/primitives/uuid';
import { ErrorCode } from '../../protocol/errors';
import { imageState } from '../../metadata/snapshot/testing/random-metadata';
import type { CommittedMetadataLog } from '../../metadata/controller/quorum-log';
import { freePort, waitFor } from './helpers';

const BENCH_OPS = Number(process.env.KRILL_SNAPSHOT_RESTART_OPS ?? 0);
const OPS = BENCH_OPS > 0 ? BENCH_OPS : 200;
jest.setTimeout(BENCH_OPS > 0 ? 3_600_000 : 60_000);

const CLUSTER = 'MkU3OEVBNTcwNTJENDM2Qg';
const IDS = [1, 2, 3];

interface Run {
  dir: string;
  files: Map<number, string>;
  servers: Map<number, ControllerServer>;
}

async function setupRun(snapshotBytes: number): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-controller-snapshots-'));
  const ports = new Map<number, number>();
  for (const id of IDS) ports.set(id, await freePort());
  const voters = IDS.map((id) => `${id}@127.0.0.1:${ports.get(id)}`).join(',');
  const files = new Map<number, string>();
  for (const id of IDS) {
    const props: Record<string, string | number> = {
      'process.roles': 'controller',
      'node.id': id,
      listeners: `CONTROLLER://127.0.0.1:${ports.get(id)}`,
      'controller.listener.names': 'CONTROLLER',
      'controller.quorum.voters': voters,
      'controller.quorum.election.timeout.ms': 300,
      'controller.quorum.fetch.timeout.ms': 800,
      'controller.quorum.election.backoff.max.ms': 300,
      'controller.quorum.request.timeout.ms': 2_000,
      'broker.session.timeout.ms': 3_600_000,
      'metadata.log.max.record.bytes.between.snapshots': snapshotBytes,
      'metadata.max.retention.bytes': 0,
      'metadata.log.segment.bytes': 64 * 1024,
      'log.dirs': path.join(dir, `controller-${id}`),
    };
    const f = path.join(dir, `controller-${id}.properties`);
    fs.writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    files.set(id, f);
    expect(await adminMain('storage', ['format', '-t', CLUSTER, '-c', f], new CollectedOutput())).toBe(0);
  }
  const servers = new Map<number, ControllerServer>();
  await Promise.all(IDS.map(async (id) => servers.set(id, await ControllerServer.start({ file: files.get(id)!, logLevel: 'error' }))));
  return { dir, files, servers };
}

async function teardown(run: Run): Promise<void> {
  for (const s of run.servers.values()) await s.shutdown({ graceful: false });
  fs.rmSync(run.dir, { recursive: true, force: true });
}

function active(run: Run): ControllerServer | null {
  const a = [...run.servers.values()].filter((s) => s.controller.isActiveController);
  return a.length === 1 ? a[0] : null;
}

function partitionDir(run: Run, id: number): string {
  return path.join(run.dir, `controller-${id}`, '__cluster_metadata-0');
}

function dirBytes(d: string): number {
  return fs.readdirSync(d).reduce((n, f) => n + fs.statSync(path.join(d, f)).size, 0);
}

/** `ops` topic operations on the active controller: op 2k creates t<k>, op 2k+1 deletes it unless k % 4 == 0. */
async function topicOperations(run: Run, ops: number, from = 0): Promise<void> {
  const a = await waitFor('an active controller', () => active(run), 10_000, 10);
  if (from > 0) return runOps(run, a, from, from + ops);
  const epoch = await a.controller.registerBroker({ brokerId: 0, incarnationId: randomUuid(), endpoints: [{ name: 'PLAINTEXT', host: 'localhost', port: 9092, securityProtocol: 0 }], rack: null, logDirs: [] });
  await waitFor('broker 0 unfenced', async () => {
    const hb = await a.controller.heartbeat({ brokerId: 0, brokerEpoch: epoch, currentMetadataOffset: a.controller.lastCommittedOffset, wantFence: false, wantShutDown: false });
    return !hb.isFenced;
  }, 5_000, 20);
  await runOps(run, a, 0, ops);
}

async function runOps(_run: Run, a: ControllerServer, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    const k = i >> 1;
    if (i % 2 === 0) {
      const [r] = await a.controller.createTopics([{ name: `topic-${k}`, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: String(1000 + k) }] }], false);
      expect(r.errorCode).toBe(ErrorCode.NONE);
    } else if (k % 4 !== 0) {
      const [r] = await a.controller.deleteTopics([{ name: `topic-${k}`, topicId: null }]);
      expect(r.errorCode).toBe(ErrorCode.NONE);
    }
  }
}

/** Restarts standby `id` on its directory; resolves with the ms until its image has the active's last committed offset. */
async function restartStandby(run: Run, id: number): Promise<{ ms: number; server: ControllerServer }> {
  const target = active(run)!.controller.lastCommittedOffset;
  await run.servers.get(id)?.shutdown();
  run.servers.delete(id);
  const started = Date.now();
  const server = await ControllerServer.start({ file: run.files.get(id)!, logLevel: 'error' });
  run.servers.set(id, server);
  await waitFor('the restarted controller caught up', () => server.controller.lastCommittedOffset >= target, 600_000, 1);
  return { ms: Date.now() - started, server };
}

test(`snapshots on disk: taken by every controller, the log trimmed below the latest, a restarted controller loads snapshot + log (${OPS} topic operations)`, async () => {
  const run = await setupRun(Number(process.env.KRILL_SNAPSHOT_BYTES ?? 4096));
  try {
    const t0 = Date.now();
    await topicOperations(run, OPS);
    const writeMs = Date.now() - t0;
    const a = active(run)!;
    await waitFor('the standbys caught up', () => [...run.servers.values()].every((s) => s.controller.lastCommittedOffset === a.controller.lastCommittedOffset), 30_000, 10);
    for (const id of IDS) {
      const files = fs.readdirSync(partitionDir(run, id));
      const snapshots = files.filter((f) => /^\d{20}-\d{10}\.checkpoint$/.test(f));
      expect(snapshots).toHaveLength(1);
      expect(files).not.toContain('00000000000000000000.log');
      const log = run.servers.get(id)!.controller.metadataLog as CommittedMetadataLog;
      expect(log.logStartOffset).toBeGreaterThan(0n);
      expect(log.batchCount).toBeLessThan(OPS / 4);
      expect(run.servers.get(id)!.controller.snapshotsTaken).toBeGreaterThan(0);
    }
    const standby = IDS.find((id) => id !== a.nodeId)!;
    const { ms, server } = await restartStandby(run, standby);
    expect(imageState(server.controller.image)).toEqual(imageState(a.controller.image));
    expect((server.controller.metadataLog as CommittedMetadataLog).logStartOffset).toBeGreaterThan(0n);
    if (BENCH_OPS > 0) console.log(`with snapshots: ${OPS} ops written in ${writeMs} ms; restart ${ms} ms; ${a.controller.lastCommittedOffset + 1n} offsets, metadata dir ${dirBytes(partitionDir(run, standby))} bytes`);
    expect([...server.controller.image.allBrokers()].map((b) => b.id)).toEqual([0]);

    // A standby down while the others' logs moved past its end: it downloads the leader's snapshot
    // (FetchSnapshot) and its controller loads it.
    const down = IDS.find((id) => id !== a.nodeId && id !== standby)!;
    const downEnd = a.controller.lastCommittedOffset;
    await run.servers.get(down)!.shutdown({ graceful: false });
    run.servers.delete(down);
    // Operations until the active's log (trimmed to its latest snapshot) starts past the stopped one's end.
    let done = OPS;
    while ((a.controller.metadataLog as CommittedMetadataLog).logStartOffset <= downEnd + 1n) {
      expect(done).toBeLessThan(OPS + 2000);
      await topicOperations(run, 20, done);
      done += 20;
    }
    const back = await restartStandby(run, down);
    expect(imageState(back.server.controller.image)).toEqual(imageState(a.controller.image));
    expect(fs.readdirSync(partitionDir(run, down)).filter((f) => /^\d{20}-\d{10}\.checkpoint$/.test(f)).map((f) => BigInt(f.slice(0, 20)))).toEqual([
      (back.server.controller.metadataLog as CommittedMetadataLog).logStartOffset,
    ]);
  } finally {
    await teardown(run);
  }
});

(BENCH_OPS > 0 ? test : test.skip)(`measurement: restart without snapshots (${OPS} topic operations)`, async () => {
  const run = await setupRun(2 ** 40);
  try {
    const t0 = Date.now();
    await topicOperations(run, OPS);
    const writeMs = Date.now() - t0;
    const a = active(run)!;
    await waitFor('the standbys caught up', () => [...run.servers.values()].every((s) => s.controller.lastCommittedOffset === a.controller.lastCommittedOffset), 60_000, 10);
    const standby = IDS.find((id) => id !== a.nodeId)!;
    const { ms, server } = await restartStandby(run, standby);
    expect(imageState(server.controller.image)).toEqual(imageState(a.controller.image));
    console.log(`without snapshots: ${OPS} ops written in ${writeMs} ms; restart ${ms} ms; ${a.controller.lastCommittedOffset + 1n} offsets, metadata dir ${dirBytes(partitionDir(run, standby))} bytes`);
  } finally {
    await teardown(run);
  }
});
