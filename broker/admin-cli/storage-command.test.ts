/**
 * `krill storage` (kafka-storage.sh): random-uuid, format (meta.properties in every directory of the
 * config, already-formatted directories refused unless -g, a controller without voters naming how
 * its quorum starts, a dynamic quorum's bootstrap checkpoint written, a static quorum's controller formatted), info, and
 * a controller started on a formatted directory keeping the formatted cluster id.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isUuid } from '../../protocol/primitives/uuid';
import { ControllerServer } from '../controller/controller-server';
import { adminMain } from './admin-main';
import { readSnapshotControlState } from '../../metadata/raft/voter-set';
import { CollectedOutput } from './tool-output';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-storage-tool-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain('storage', argv, o);
  return { code, out: o.out, err: o.err };
}

function file(name: string, props: Record<string, string>): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  return f;
}

const CLUSTER = 'MkU3OEVBNTcwNTJENDM2Qg';

test('random-uuid prints a Kafka UUID', async () => {
  const r = await run('random-uuid');
  expect(r.code).toBe(0);
  expect(isUuid(r.out[0])).toBe(true);
});

test('format writes meta.properties into every directory, refuses formatted ones unless -g, and info reads them', async () => {
  const logs = [path.join(dir, 'a'), path.join(dir, 'b')];
  const meta = path.join(dir, 'meta');
  const broker = file('broker.properties', {
    'process.roles': 'broker',
    'node.id': '4',
    'controller.quorum.voters': '3000@127.0.0.1:9093',
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    listeners: 'PLAINTEXT://127.0.0.1:9092',
    'log.dirs': logs.join(','),
    'metadata.log.dir': meta,
  });
  const r = await run('format', '-t', CLUSTER, '-c', broker);
  expect(r.code).toBe(0);
  expect(r.out).toEqual([
    `Formatting data directory ${logs[0]} with metadata.version 4.0-IV3.`,
    `Formatting data directory ${logs[1]} with metadata.version 4.0-IV3.`,
    `Formatting metadata directory ${meta} with metadata.version 4.0-IV3.`,
  ]);
  for (const d of [...logs, meta]) {
    const text = fs.readFileSync(path.join(d, 'meta.properties'), 'utf8');
    expect(text).toMatch(/^node\.id=4$/m);
    expect(text).toMatch(/^version=1$/m);
    expect(text).toMatch(new RegExp(`^cluster\\.id=${CLUSTER}$`, 'm'));
    expect(text).toMatch(/^directory\.id=[A-Za-z0-9_-]{22}$/m);
  }
  const again = await run('format', '-t', CLUSTER, '-c', broker);
  expect(again).toMatchObject({ code: 1, err: [`Log directory ${logs[0]} is already formatted. Use --ignore-formatted to ignore this directory and format the others.`] });
  expect(await run('format', '-t', CLUSTER, '-c', broker, '-g')).toMatchObject({ code: 0, out: ['All of the log directories are already formatted.'] });
  const info = await run('info', '-c', broker);
  expect(info.code).toBe(0);
  expect(info.out[0]).toBe(`Found log directories:\n  ${logs[0]}\n  ${logs[1]}\n  ${meta}\n`);
  expect(info.out[1]).toMatch(new RegExp(`^Found metadata: \\{cluster\\.id=${CLUSTER}, directory\\.id=\\S+, node\\.id=4, version=1\\}`));

  expect(await run('format', '-t', 'not-a-uuid', '-c', broker)).toMatchObject({ code: 1, err: ['Cluster ID string not-a-uuid does not appear to be a valid UUID'] });
  expect((await run('format', '-c', broker)).code).toBe(2);
  const fresh = file('fresh.properties', { 'process.roles': 'broker', 'node.id': '5', 'controller.quorum.voters': '3000@h:9093', 'log.dirs': path.join(dir, 'fresh') });
  const problems = await run('info', '-c', fresh);
  expect(problems.code).toBe(1);
  expect(problems.out).toEqual([`Found problem:\n  ${path.join(dir, 'fresh')} does not exist\n`]);
});

test("a controller's quorum: voters, --standalone or --initial-controllers (a bootstrap checkpoint, KIP-853); a static one formatted; the controller keeps the formatted cluster id", async () => {
  const props = { 'process.roles': 'controller', 'node.id': '1', listeners: 'CONTROLLER://127.0.0.1:0', 'controller.listener.names': 'CONTROLLER', 'log.dirs': path.join(dir, 'controller') };
  const noVoters = file('no-voters.properties', props);
  expect(await run('format', '-t', CLUSTER, '-c', noVoters)).toMatchObject({
    code: 1,
    err: ['Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.'],
  });
  // A dynamic quorum (KIP-853): the directory ids must be real, and this node one of the voters.
  const zero = await run('format', '-t', CLUSTER, '-c', noVoters, '--initial-controllers', '1@a:9093:AAAAAAAAAAAAAAAAAAAAAA,2@b:9093:AAAAAAAAAAAAAAAAAAAAAA');
  expect(zero.code).toBe(1);
  expect(zero.err[0]).toMatch(/Failed to parse directory ID/);
  const d1 = 'J8aAPcfLQt2bqs1JT_rMgQ';
  const d2 = 'bFmKtPCXSw2DHcK2Jw5Wqg';
  expect((await run('format', '-t', CLUSTER, '-c', noVoters, '--initial-controllers', `2@b:9093:${d2}`)).err[0]).toMatch(/does not name this node \(node.id 1\)/);
  const dynDir = path.join(dir, 'dynamic-1');
  const dynamic = file('dynamic.properties', { ...props, 'log.dirs': dynDir, 'controller.quorum.bootstrap.servers': 'a:9093,b:9093' });
  const formatted = await run('format', '-t', CLUSTER, '-c', dynamic, '--initial-controllers', `1@a:9093:${d1},2@b:9093:${d2}`);
  expect(formatted.code).toBe(0);
  expect(fs.readFileSync(path.join(dynDir, 'meta.properties'), 'utf8')).toMatch(new RegExp(`^directory\\.id=${d1}$`, 'm'));
  const checkpoint = path.join(dynDir, '__cluster_metadata-0', '00000000000000000000-0000000000.checkpoint');
  const state = readSnapshotControlState(fs.readFileSync(checkpoint));
  expect(state.kraftVersion).toBe(1);
  expect(state.voters!.keys()).toEqual([
    { id: 1, directoryId: d1 },
    { id: 2, directoryId: d2 },
  ]);
  expect(state.voters!.endpoint(2)).toEqual({ name: 'CONTROLLER', host: 'b', port: 9093 });
  const voterDir = path.join(dir, 'voter-1');
  const voters3 = file('voters3.properties', { ...props, 'log.dirs': voterDir, 'controller.quorum.voters': '1@a:9093,2@b:9093,3@c:9093' });
  expect(await run('format', '-t', CLUSTER, '-c', voters3)).toMatchObject({ code: 0 });
  expect(fs.readFileSync(path.join(voterDir, 'meta.properties'), 'utf8')).toMatch(new RegExp(`^cluster\\.id=${CLUSTER}$`, 'm'));
  expect(await run('format', '-t', CLUSTER, '-c', noVoters, '--standalone')).toMatchObject({ code: 0 });
  // --standalone: this controller alone, at its controller listener, under the directory id of its metadata directory.
  const standalone = readSnapshotControlState(fs.readFileSync(path.join(dir, 'controller', '__cluster_metadata-0', '00000000000000000000-0000000000.checkpoint')));
  const metaDirId = /^directory\.id=(.*)$/m.exec(fs.readFileSync(path.join(dir, 'controller', 'meta.properties'), 'utf8'))![1];
  expect(standalone.voters!.nodes()).toEqual([{ key: { id: 1, directoryId: metaDirId }, endpoints: [{ name: 'CONTROLLER', host: '127.0.0.1', port: 0 }], kraftVersion: { min: 0, max: 1 } }]);

  const controller = await ControllerServer.start({ file: noVoters, logLevel: 'error' });
  try {
    expect(controller.clusterId).toBe(CLUSTER);
  } finally {
    await controller.shutdown();
  }
});

test('a controller formatted --standalone with bootstrap servers runs a one-voter dynamic quorum (KIP-853) and becomes active', async () => {
  const props = {
    'process.roles': 'controller',
    'node.id': '1',
    listeners: 'CONTROLLER://127.0.0.1:0',
    'controller.listener.names': 'CONTROLLER',
    'controller.quorum.bootstrap.servers': '127.0.0.1:9093',
    'controller.quorum.election.timeout.ms': '200',
    'log.dirs': path.join(dir, 'standalone'),
  };
  const f = file('standalone.properties', props);
  const unformatted = ControllerServer.start({ file: f, logLevel: 'error' });
  await expect(unformatted).rejects.toThrow(/dynamic KRaft quorum .*must be formatted first/);
  expect(await run('format', '-t', CLUSTER, '-c', f, '--standalone')).toMatchObject({ code: 0 });
  const controller = await ControllerServer.start({ file: f, logLevel: 'error' });
  try {
    expect(controller.raftClient).toBeDefined();
    const started = Date.now();
    while (!controller.controller.isActiveController && Date.now() - started < 10_000) {
      await new Promise<void>((resolve) => {
        const off = controller.raftClient!.addListener({ onCommit: () => (off(), resolve()), onLeaderChange: () => (off(), resolve()) });
        setTimeout(() => (off(), resolve()), 200);
      });
    }
    expect(controller.controller.isActiveController).toBe(true);
    expect([...controller.raftClient!.voterSet!.ids()]).toEqual([1]);
  } finally {
    await controller.shutdown();
  }
});
