/**
 * `krill quorum` against real controllers over their listeners: a dynamic quorum (KIP-853) of a
 * controller formatted --standalone and one formatted --no-initial-controllers that joins as an
 * observer; add-controller makes it a voter (describe --status / --replication show it),
 * DUPLICATE_VOTER when it already is one, remove-controller takes it out, VOTER_NOT_FOUND after;
 * a static quorum (controller.quorum.voters, kraft.version 0) answers add-controller with
 * UNSUPPORTED_VERSION, also through a broker of that quorum, which forwards DescribeQuorum (its
 * --describe --status lists the 3 voters and the broker as an observer) and AddRaftVoter to the
 * active controller; option errors as MetadataQuorumCommand's. The --replication table layout.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ControllerServer } from '../controller/controller-server';
import { startCluster } from '../cluster';
import { readMetaProperties } from '../../storage/meta-properties';
import { nodeFs } from '../../storage/fs';
import { adminMain } from './admin-main';
import { formatQuorumReplication } from './quorum-command';
import { CollectedOutput } from './tool-output';

jest.setTimeout(60_000);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-quorum-tool-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(command: 'quorum' | 'storage', ...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain(command, argv, o);
  return { code, out: o.out, err: o.err };
}

function file(name: string, props: Record<string, string>): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  return f;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs `krill quorum ...` until `done` holds for its result (bounded). */
async function until(done: (r: { code: number; out: string[]; err: string[] }) => boolean, ...argv: string[]) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await run('quorum', ...argv);
    if (done(r) || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const CLUSTER = 'MkU3OEVBNTcwNTJENDM2Qg';

test('add-controller and remove-controller on a dynamic quorum, over --bootstrap-controller', async () => {
  const [p1, p2] = [await freePort(), await freePort()];
  const common = {
    'process.roles': 'controller',
    'controller.listener.names': 'CONTROLLER',
    'controller.quorum.bootstrap.servers': `127.0.0.1:${p1}`,
    'controller.quorum.election.timeout.ms': '200',
    'controller.quorum.fetch.timeout.ms': '1000',
  };
  const f1 = file('first.properties', { ...common, 'node.id': '1', listeners: `CONTROLLER://127.0.0.1:${p1}`, 'log.dirs': path.join(dir, 'c1') });
  const f2 = file('second.properties', { ...common, 'node.id': '2', listeners: `CONTROLLER://127.0.0.1:${p2}`, 'log.dirs': path.join(dir, 'c2') });
  expect(await run('storage', 'format', '-t', CLUSTER, '-c', f1, '--standalone')).toMatchObject({ code: 0 });
  expect(await run('storage', 'format', '-t', CLUSTER, '-c', f2, '--no-initial-controllers')).toMatchObject({ code: 0 });
  const dir1 = readMetaProperties(nodeFs, path.join(dir, 'c1'))!.directoryId;
  const dir2 = readMetaProperties(nodeFs, path.join(dir, 'c2'))!.directoryId;
  const c1 = await ControllerServer.start({ file: f1, logLevel: 'error' });
  const c2 = await ControllerServer.start({ file: f2, logLevel: 'error' }).catch(async (err) => {
    await c1.shutdown();
    throw err;
  });
  const bootstrap = ['--bootstrap-controller', `127.0.0.1:${p2},127.0.0.1:${p1}`];
  try {
    // Controller 2 fetches from the leader as an observer.
    const before = await until((r) => r.code === 0 && r.out.some((l) => l.startsWith('CurrentObservers:') && l.includes('"id": 2')), ...bootstrap, 'describe', '--status');
    expect(before.code).toBe(0);
    expect(before.out[0]).toBe(`ClusterId:              ${CLUSTER}`);
    expect(before.out[1]).toBe('LeaderId:               1');
    expect(before.out[6]).toBe(`CurrentVoters:          [{"id": 1, "directoryId": "${dir1}", "endpoints": ["CONTROLLER://127.0.0.1:${p1}"]}]`);
    expect(before.out[7]).toContain(`{"id": 2, "directoryId": "${dir2}"`);

    // add-controller: REQUEST_TIMED_OUT while it still lags, then added.
    const added = await until((r) => r.code === 0 || !r.err.join('\n').includes('TimeoutException'), ...bootstrap, 'add-controller', '--command-config', f2);
    expect(added).toEqual({ code: 0, out: [`Added controller 2 with directory id ${dir2} and endpoints: CONTROLLER://127.0.0.1:${p2}`], err: [] });
    const status = await until((r) => r.out.some((l) => l.startsWith('CurrentVoters:') && l.includes('"id": 2')), ...bootstrap, 'describe', '--status');
    expect(status.out[6]).toBe(
      `CurrentVoters:          [{"id": 1, "directoryId": "${dir1}", "endpoints": ["CONTROLLER://127.0.0.1:${p1}"]}, {"id": 2, "directoryId": "${dir2}", "endpoints": ["CONTROLLER://127.0.0.1:${p2}"]}]`,
    );
    expect(status.out[7]).toBe('CurrentObservers:       []');
    const replication = await run('quorum', ...bootstrap, 'describe', '--replication');
    expect(replication.code).toBe(0);
    expect(replication.out[0].split('\t').map((c) => c.trim())).toEqual(['NodeId', 'DirectoryId', 'LogEndOffset', 'Lag', 'LastFetchTimestamp', 'LastCaughtUpTimestamp', 'Status', '']);
    const rows = replication.out.slice(1).map((l) => l.split('\t').map((c) => c.trim()));
    expect(rows.map((r) => [r[0], r[1], r[6]])).toEqual([
      ['1', dir1, 'Leader'],
      ['2', dir2, 'Follower'],
    ]);
    const human = await run('quorum', ...bootstrap, 'describe', '--replication', '--human-readable');
    expect(human.out[2]).toMatch(/\d+ ms ago/);

    // Already a voter: DUPLICATE_VOTER, as Kafka's admin client reports it.
    const dup = await run('quorum', ...bootstrap, 'add-controller', '--command-config', f2);
    expect(dup.code).toBe(1);
    expect(dup.err.join('\n')).toContain('org.apache.kafka.common.errors.DuplicateVoterException');

    const removed = await until((r) => r.code === 0 || !r.err.join('\n').includes('TimeoutException'), ...bootstrap, 'remove-controller', '--controller-id', '2', '--controller-directory-id', dir2);
    expect(removed).toEqual({ code: 0, out: [`Removed  KRaft controller 2 with directory id ${dir2}`], err: [] });
    const after = await until((r) => r.out.some((l) => l.startsWith('CurrentVoters:') && !l.includes('"id": 2')), ...bootstrap, 'describe', '--status');
    expect(after.out[6]).toBe(`CurrentVoters:          [{"id": 1, "directoryId": "${dir1}", "endpoints": ["CONTROLLER://127.0.0.1:${p1}"]}]`);
    const gone = await run('quorum', ...bootstrap, 'remove-controller', '-i', '2', '-d', dir2);
    expect(gone.code).toBe(1);
    expect(gone.err.join('\n')).toContain('org.apache.kafka.common.errors.VoterNotFoundException');
  } finally {
    await c2.shutdown();
    await c1.shutdown();
  }
});

test('a static quorum: add-controller is UNSUPPORTED_VERSION (exit 1), over --bootstrap-controller and through a broker, which forwards DescribeQuorum (3 voters, the broker an observer)', async () => {
  const cluster = await startCluster({ brokers: 1, controllers: 3, dataDir: path.join(dir, 'cluster'), config: { 'controller.quorum.election.timeout.ms': '300', 'controller.quorum.fetch.timeout.ms': '800' }, logLevel: 'error' });
  try {
    const f = file('new.properties', { 'process.roles': 'controller', 'node.id': '3004', 'controller.listener.names': 'CONTROLLER', listeners: 'CONTROLLER://127.0.0.1:9999', 'log.dirs': path.join(dir, 'new') });
    expect(await run('storage', 'format', '-t', CLUSTER, '-c', f, '--no-initial-controllers')).toMatchObject({ code: 0 });
    const r = await until((x) => !x.err.join('\n').includes('NotLeaderOrFollower'), '--bootstrap-controller', cluster.controllerAddress, 'add-controller', '--command-config', f);
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err.join('\n')).toContain('org.apache.kafka.common.errors.UnsupportedVersionException');

    // Through the broker: it forwards DescribeQuorum and AddRaftVoter to the active controller.
    const broker = cluster.broker(0);
    const controllerIds = [...cluster.controllers.keys()].sort((a, b) => a - b);
    const status = await until(
      (x) => x.code === 0 && x.out.some((l) => l.startsWith('CurrentObservers:') && l.includes(`"id": ${broker.nodeId}`)),
      '--bootstrap-server',
      `${broker.host}:${broker.port}`,
      '--describe',
      '--status',
    );
    expect(status.code).toBe(0);
    expect(status.out[0]).toBe(`ClusterId:              ${cluster.clusterId}`);
    const voterIds = [...status.out[6].matchAll(/"id": (\d+)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
    expect(voterIds).toEqual(controllerIds);
    expect([...status.out[7].matchAll(/"id": (\d+)/g)].map((m) => Number(m[1]))).toEqual([broker.nodeId]);
    const viaBroker = await run('quorum', '--bootstrap-server', `${broker.host}:${broker.port}`, 'add-controller', '--command-config', f);
    expect(viaBroker.code).toBe(1);
    expect(viaBroker.err.join('\n')).toContain("org.apache.kafka.common.errors.UnsupportedVersionException: Cluster doesn't support adding voter because the kraft.version feature is 0");
  } finally {
    await cluster.close();
  }
});

test("option errors are MetadataQuorumCommand's", async () => {
  expect(await run('quorum', 'describe', '--status')).toMatchObject({ code: 1, err: [expect.stringContaining('one of the arguments --bootstrap-server --bootstrap-controller is required')] });
  expect(await run('quorum', '--bootstrap-server', 'a:1', '--bootstrap-controller', 'b:1', 'describe', '--status')).toMatchObject({
    code: 1,
    err: [expect.stringContaining('argument --bootstrap-controller: not allowed with argument --bootstrap-server')],
  });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'describe', '--status', '--replication')).toMatchObject({ err: [expect.stringContaining('Only one of --status or --replication should be specified')] });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'describe', '--status', '--human-readable')).toMatchObject({ err: [expect.stringContaining('only supported along with --replication')] });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'add-controller')).toMatchObject({ err: [expect.stringContaining('You must supply the configuration file of the controller')] });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'remove-controller', '-i', '-3', '-d', 'x')).toMatchObject({ err: [expect.stringContaining('Invalid negative --controller-id: -3')] });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'remove-controller', '-i', '3', '-d', 'x', '--dry-run')).toMatchObject({ err: [expect.stringContaining('Failed to parse --controller-directory-id')] });
  expect(await run('quorum', '--bootstrap-controller', 'b:1', 'remove-controller', '-i', '3', '-d', 'AAAAAAAAAAAAAAAAAAAAAQ', '--dry-run')).toEqual({ code: 0, out: ['DRY RUN of removing  KRaft controller 3 with directory id AAAAAAAAAAAAAAAAAAAAAQ'], err: [] });
});

test('the --replication table: leader, followers, observers; lag against the leader; padded columns, each followed by a tab', () => {
  const replica = (replicaId: number, logEndOffset: bigint, ts: bigint) => ({ replicaId, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAQ', logEndOffset, lastFetchTimestamp: ts, lastCaughtUpTimestamp: ts });
  const res = {
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0, errorCode: 0, errorMessage: null, leaderId: 2, leaderEpoch: 3, highWatermark: 10n, currentVoters: [replica(1, 8n, 900n), replica(2, 10n, 1000n)], observers: [replica(7, 5n, -1n)] }] }],
    nodes: [],
  };
  expect(formatQuorumReplication(res as never, false, 2000)).toEqual([
    'NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t',
    '2     \tAAAAAAAAAAAAAAAAAAAAAQ\t10          \t0  \t1000              \t1000                 \tLeader  \t',
    '1     \tAAAAAAAAAAAAAAAAAAAAAQ\t8           \t2  \t900               \t900                  \tFollower\t',
    '7     \tAAAAAAAAAAAAAAAAAAAAAQ\t5           \t5  \t-1                \t-1                   \tObserver\t',
  ]);
  expect(formatQuorumReplication(res as never, true, 2000)[1]).toContain('1000 ms ago');
});
