/**
 * A krill cluster of separate processes, started exactly as a user would across machines:
 *
 *   krill --process-roles controller --port P --data-dir D/controller
 *   krill --node-id N --controller HOST:P --port Q --data-dir D/broker-N      (N = 0..n-1)
 *
 * Each process is `node bin/krill.js` (the built CLI in dist/), ready once it prints its ready
 * line; ports are chosen by the OS on the first start and kept across restarts. kill9() is a real
 * SIGKILL. Every child is killed when the test process exits (stdin watchdog, as in
 * compat-tests/helpers/brokers.ts); every wait is bounded. NodeProcess, one such process, is also
 * what quorum-processes.ts runs its `krill --config FILE` controllers as.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO_ROOT, 'bin', 'krill.js');
const EXIT_WITH_PARENT = path.join(REPO_ROOT, 'compat-tests', 'helpers', 'exit-with-parent.js');
const READY_TIMEOUT_MS = 20_000;
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export function cliBuilt(): boolean {
  return fs.existsSync(path.join(REPO_ROOT, 'dist', 'broker', 'cli.js'));
}

export class NodeProcess {
  child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  port = 0;
  host = '127.0.0.1';
  private stderr: string[] = [];

  constructor(
    private readonly argsFor: (port: number) => string[],
    private readonly ready: RegExp,
  ) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  async start(): Promise<RegExpExecArray> {
    if (this.child) throw new Error('already running');
    const child = spawn(process.execPath, ['-r', EXIT_WITH_PARENT, CLI, ...this.argsFor(this.port)], {
      cwd: REPO_ROOT,
      env: { ...process.env, KRILL_LOG_LEVEL: process.env.KRILL_LOG_LEVEL ?? 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    live.add(child);
    child.stdin!.on('error', () => undefined);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => {
      live.delete(child);
      resolve();
    }));
    this.stderr = [];
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      this.stderr.push(...s.split('\n').filter(Boolean));
      if (this.stderr.length > 40) this.stderr.splice(0, this.stderr.length - 40);
    });
    try {
      const m = await new Promise<RegExpExecArray>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no ready line within ${READY_TIMEOUT_MS} ms\n${this.stderr.join('\n')}`)), READY_TIMEOUT_MS);
        child.stdout!.setEncoding('utf8');
        child.stdout!.on('data', (s: string) => {
          out += s;
          const nl = out.indexOf('\n');
          if (nl < 0) return;
          clearTimeout(timer);
          const line = out.slice(0, nl);
          const m = this.ready.exec(line);
          if (m) resolve(m);
          else reject(new Error(`unexpected first line: ${line}`));
        });
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`exited (${code}, ${signal}) before it was ready\n${this.stderr.join('\n')}`));
        });
      });
      this.host = m[1];
      this.port = Number(m[2]);
      return m;
    } catch (err) {
      child.kill('SIGKILL');
      await this.exited;
      this.child = undefined;
      throw err;
    }
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const r = await Promise.race([this.exited!.then(() => 'exited' as const), timedOut]);
    clearTimeout(timer);
    if (r === 'timeout') {
      child.kill('SIGKILL');
      await this.exited;
    }
    this.child = undefined;
  }
}

/** One `krill` process with these arguments, ready once its first stdout line matches `ready`. */
export async function spawnKrill(args: string[], ready: RegExp): Promise<{ match: RegExpExecArray; stop(signal?: NodeJS.Signals): Promise<void> }> {
  const p = new NodeProcess(() => args, ready);
  const match = await p.start();
  return { match, stop: (signal = 'SIGTERM') => p.stop(signal) };
}

export interface ProcessCluster {
  readonly dataDir: string;
  readonly controllerAddress: string;
  bootstrapServers(): string[];
  running(id: number): boolean;
  /** SIGKILL, then wait for the process to be gone. */
  kill9(id: number): Promise<void>;
  /** SIGTERM (controlled shutdown). */
  stop(id: number): Promise<void>;
  start(id: number): Promise<void>;
  close(): Promise<void>;
}

export async function startProcessCluster(brokers: number, overrides: Record<string, string>): Promise<ProcessCluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-procs-'));
  const ov = Object.entries(overrides).flatMap(([k, v]) => ['--override', `${k}=${v}`]);
  const controller = new NodeProcess(
    (port) => ['--process-roles', 'controller', '--host', '127.0.0.1', '--port', String(port), '--data-dir', path.join(dataDir, 'controller'), ...ov],
    /^krill controller ready: CONTROLLER:\/\/([^\s:]+):(\d+) node (\d+) cluster (\S+) data (.+)$/,
  );
  const nodes: NodeProcess[] = [];
  const close = async () => {
    await Promise.all(nodes.map((n) => n.stop('SIGKILL')));
    await controller.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await controller.start();
    const controllerAddress = `${controller.host}:${controller.port}`;
    for (let id = 0; id < brokers; id++) {
      nodes.push(
        new NodeProcess(
          (port) => ['--node-id', String(id), '--controller', controllerAddress, '--host', '127.0.0.1', '--port', String(port), '--data-dir', path.join(dataDir, `broker-${id}`), ...ov],
          /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+) node (\d+) data (.+)$/,
        ),
      );
    }
    await Promise.all(nodes.map((n) => n.start()));
    return {
      dataDir,
      controllerAddress,
      bootstrapServers: () => nodes.map((n) => `${n.host}:${n.port}`),
      running: (id) => nodes[id].running,
      kill9: (id) => nodes[id].stop('SIGKILL'),
      stop: (id) => nodes[id].stop('SIGTERM'),
      start: async (id) => {
        await nodes[id].start();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
