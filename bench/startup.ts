/**
 * Start-up measurements: time from spawning the process to its ready line, and to the first
 * answered Metadata request (probed independently of the ready line: the broker is given a port
 * picked beforehand and the probe keeps connecting from the moment of spawn), the main thread's CPU
 * time at the ready line (/proc/<pid>/schedstat: unlike wall time, barely moved by other load on
 * the machine), and the idle RSS once it serves. 'krill' is bin/krill.js as users run it (the
 * bundle, bin/load-cli.js, required: KRILL_BUNDLE=1), 'krill-dist' the same on the plain dist/
 * (KRILL_BUNDLE=0), so one run compares both.
 */
import { spawnSync } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { memoryMB, schedSeconds, spawnBroker, makeTempDir, removeTempDir, KRILL_BIN, KRILL_READY, NULL_BROKER_JS, NULL_READY } from './proc';
import { WireClient } from './wire-client';

export interface StartupSample {
  readyMs: number;
  /** Main-thread CPU time from spawn to the ready line. */
  readyCpuMs: number;
  metadataMs: number;
  idleRssMB: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Connects (retrying every ms until `deadline`) and sends Metadata v1 for no topics; resolves at the answer. */
async function probeMetadata(port: number, spawnedAt: bigint, deadline: number): Promise<number> {
  for (;;) {
    let client: WireClient;
    try {
      client = await WireClient.connect('127.0.0.1', port);
    } catch {
      if (Date.now() > deadline) throw new Error('metadata probe: broker never accepted a connection');
      await sleep(1);
      continue;
    }
    try {
      const res = await client.request('Metadata', 1, { topics: [] });
      if (res.brokers.length === 0) throw new Error('metadata probe: no brokers in the answer');
      return Number(process.hrtime.bigint() - spawnedAt) / 1e6;
    } catch (err) {
      // A connection accepted before the broker serves may be closed on us: retry.
      if (Date.now() > deadline) throw err;
      await sleep(1);
    } finally {
      client.close();
    }
  }
}

/** One cold start of krill (fresh data dir; bundled, or the plain dist/) or the null sink. */
export async function startupSample(kind: 'krill' | 'krill-dist' | 'null', settleMs: number): Promise<StartupSample> {
  const port = await freePort();
  const isKrill = kind !== 'null';
  const dir = isKrill ? makeTempDir('krill-bench-start-') : null;
  let probe: Promise<number> | null = null;
  const bp = await spawnBroker({
    name: kind,
    args: isKrill ? [KRILL_BIN, '--port', String(port), '--data-dir', dir!] : [NULL_BROKER_JS, '--port', String(port)],
    readyPattern: isKrill ? KRILL_READY : NULL_READY,
    env: isKrill ? { ...process.env, KRILL_BUNDLE: kind === 'krill' ? '1' : '0' } : process.env,
    onSpawn: (_child, spawnedAt) => {
      probe = probeMetadata(port, spawnedAt, Date.now() + 10000);
      probe.catch(() => undefined);
    },
  });
  const readyCpuMs = schedSeconds(bp.pid).run * 1000;
  try {
    const metadataMs = await probe!;
    await sleep(settleMs);
    const idleRssMB = memoryMB(bp.pid).rss;
    return { readyMs: bp.readyMs, readyCpuMs, metadataMs, idleRssMB };
  } finally {
    await bp.stop();
    if (dir) removeTempDir(dir);
  }
}

/**
 * Module loading alone, on the plain dist/: a fresh node process requiring krill's CLI module
 * (everything the broker loads before it starts), timed inside that process, and the number of
 * modules it loaded.
 */
export function requireCliSample(): { ms: number; modules: number; rssMB: number } {
  const cli = path.resolve(__dirname, '../broker/cli.js');
  const code =
    'const t=process.hrtime.bigint();require(process.argv[1]);const ms=Number(process.hrtime.bigint()-t)/1e6;' +
    'setTimeout(()=>process.stdout.write(JSON.stringify({ms,modules:Object.keys(require.cache).length,rssMB:process.memoryUsage().rss/1048576})),100)';
  const r = spawnSync(process.execPath, ['-e', code, cli], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`requiring ${cli} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { ms: number; modules: number; rssMB: number };
}

/** `node -e` with an empty program: spawn-to-exit time and RSS, the floor of any Node process here. */
export function nodeBaseline(): { ms: number; rssMB: number } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.memoryUsage().rss/1048576))'], { encoding: 'utf8' });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, rssMB: Number(r.stdout) };
}
