/**
 * Broker processes under measurement: spawn, wait for the ready line, read CPU time and memory from
 * /proc, stop. Every process and temp dir the bench creates is registered here and removed on exit,
 * whether the bench finishes, throws, or is interrupted (SIGINT/SIGTERM); if the bench itself is
 * killed outright, bench/reaper (a separate process told about each of them) removes them.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type { Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let hooksInstalled = false;
let reaper: ChildProcess | null = null;

function tellReaper(line: string): void {
  if (reaper?.stdin?.writable) reaper.stdin.write(`${line}\n`);
}

function cleanupSync(): void {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  children.clear();
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  reaper = spawn(process.execPath, [path.resolve(__dirname, 'reaper.js')], { stdio: ['pipe', 'ignore', 'inherit'] });
  reaper.on('error', () => undefined);
  reaper.stdin!.on('error', () => undefined);
  // Neither the reaper nor its pipe may keep the bench alive.
  reaper.unref();
  (reaper.stdin as unknown as Socket).unref();
  process.on('exit', cleanupSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      cleanupSync();
      process.exit(130);
    });
  }
}

export function makeTempDir(prefix: string): string {
  installHooks();
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(d);
  tellReaper(`dir ${d}`);
  return d;
}

export function removeTempDir(d: string): void {
  fs.rmSync(d, { recursive: true, force: true });
  tempDirs.delete(d);
  tellReaper(`-dir ${d}`);
}

let clockTicks = 0;
function clkTck(): number {
  if (clockTicks === 0) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime of a process, in seconds (clock-tick resolution, usually 10 ms). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name (which may contain spaces).
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state); utime is field 14, stime field 15.
  return (Number(rest[11]) + Number(rest[12])) / clkTck();
}

/**
 * Scheduler accounting of a process's main thread (/proc/<pid>/schedstat): seconds on a CPU and
 * seconds runnable but waiting for one. The wait shows CPU contention (other processes, or the
 * client on a 2-core machine) as opposed to the broker idling for the network or the disk.
 */
export function schedSeconds(pid: number): { run: number; wait: number } {
  try {
    const [run, wait] = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { run: run / 1e9, wait: wait / 1e9 };
  } catch {
    return { run: NaN, wait: NaN };
  }
}

/** VmRSS and VmHWM (peak RSS) in MB. */
export function memoryMB(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  };
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets VmHWM to the current RSS (Linux >= 4.0, own processes), so the next peak is per workload. */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface BrokerProcess {
  readonly name: string;
  readonly pid: number;
  readonly host: string;
  readonly port: number;
  /** Spawn to the ready line, in ms. */
  readonly readyMs: number;
  /** The ready line's match (further groups of the pattern, e.g. a second listener's port). */
  readonly readyMatch: RegExpExecArray;
  readonly spawnedAt: bigint;
  /** Whatever the process wrote to stderr (last 64 KB), for error reports. */
  stderrTail(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  args: string[];
  /** Recognises the ready line and extracts host:port from it. */
  readyPattern: RegExp;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Called right after spawn, before the ready line (e.g. to probe Metadata). */
  onSpawn?: (child: ChildProcess, spawnedAt: bigint) => void;
}

export function spawnBroker(opts: SpawnOptions): Promise<BrokerProcess> {
  installHooks();
  const spawnedAt = process.hrtime.bigint();
  const child = spawn(process.execPath, opts.args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: opts.env ?? process.env,
  });
  children.add(child);
  tellReaper(`pid ${child.pid}`);
  opts.onSpawn?.(child, spawnedAt);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-65536);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(() => {
    children.delete(child);
    tellReaper(`-pid ${child.pid}`);
  });

  return new Promise((resolve, reject) => {
    let out = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${opts.name} not ready within ${opts.timeoutMs ?? 10000} ms\n${stderr}`)), opts.timeoutMs ?? 10000);
    const finish = (err: Error | null, bp?: BrokerProcess): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else resolve(bp!);
    };
    child.once('exit', (code, sig) => finish(new Error(`${opts.name} exited (${code ?? sig}) before ready\n${stderr}`)));
    child.stdout!.on('data', (d: Buffer) => {
      if (done) return;
      out += d.toString();
      const m = opts.readyPattern.exec(out);
      if (!m) return;
      const readyMs = Number(process.hrtime.bigint() - spawnedAt) / 1e6;
      finish(null, {
        name: opts.name,
        pid: child.pid!,
        host: m[1],
        port: Number(m[2]),
        readyMs,
        readyMatch: m,
        spawnedAt,
        stderrTail: () => stderr,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(t);
        },
      });
    });
  });
}

export const KRILL_READY = /krill ready: PLAINTEXT:\/\/([^:\s]+):(\d+)/;
export const NULL_READY = /null-broker ready: PLAINTEXT:\/\/([^:\s]+):(\d+)/;

/** Paths of the two broker entry points, relative to this compiled file (dist/bench/). */
export const KRILL_BIN = path.resolve(__dirname, '../../bin/krill.js');
export const NULL_BROKER_JS = path.resolve(__dirname, 'null-broker.js');
