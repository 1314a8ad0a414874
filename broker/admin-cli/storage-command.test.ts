/**
 * `krill storage` (kafka-storage.sh): random-uuid, format (meta.properties in every directory of the
 * config, already-formatted directories refused unless -g, a controller without voters naming how
 * its quorum starts, a dynamic quorum refused, a static quorum's controller formatted), info, and
 * a controller started on a formatted directory keeping the formatted cluster id.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isUuid } from '../../protocol/primitives/uuid';
import { ControllerServer } from '../controller/controller-server';
import { adminMain } from './admin-main';
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

test("a controller's quorum: voters or --standalone; a dynamic quorum is refused, a static one formatted; the controller keeps the formatted cluster id", async () => {
  const props = { 'process.roles': 'controller', 'node.id': '1', listeners: 'CONTROLLER://127.0.0.1:0', 'controller.listener.names': 'CONTROLLER', 'log.dirs': path.join(dir, 'controller') };
  const noVoters = file('no-voters.properties', props);
  expect(await run('format', '-t', CLUSTER, '-c', noVoters)).toMatchObject({
    code: 1,
    err: ['Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.'],
  });
  const quorum = await run('format', '-t', CLUSTER, '-c', noVoters, '--initial-controllers', '1@a:9093:AAAAAAAAAAAAAAAAAAAAAA,2@b:9093:AAAAAAAAAAAAAAAAAAAAAA');
  expect(quorum.code).toBe(1);
  expect(quorum.err[0]).toMatch(/describes a dynamic controller quorum \(KIP-853\): krill runs static controller quorums only/);
  const voterDir = path.join(dir, 'voter-1');
  const voters3 = file('voters3.properties', { ...props, 'log.dirs': voterDir, 'controller.quorum.voters': '1@a:9093,2@b:9093,3@c:9093' });
  expect(await run('format', '-t', CLUSTER, '-c', voters3)).toMatchObject({ code: 0 });
  expect(fs.readFileSync(path.join(voterDir, 'meta.properties'), 'utf8')).toMatch(new RegExp(`^cluster\\.id=${CLUSTER}$`, 'm'));
  expect(await run('format', '-t', CLUSTER, '-c', noVoters, '--standalone')).toMatchObject({ code: 0 });

  const controller = await ControllerServer.start({ file: noVoters, logLevel: 'error' });
  try {
    expect(controller.clusterId).toBe(CLUSTER);
  } finally {
    await controller.shutdown();
  }
});
