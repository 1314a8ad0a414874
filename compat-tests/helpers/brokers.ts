/**
 * Test brokers for the compatibility suites, started one of two ways behind one interface:
 * - 'embedded': startBroker() in this process (the embedding API);
 * - 'cli': `node bin/krill.js` as a child process (the built CLI in dist/), ready once it prints
 *   its one `krill ready: ...` line on stdout.
 * Both use port 0 on the first start, a temp data dir owned by the TestBroker, and keep their port
 * across restarts so that clients can reconnect where they were. Every wait is bounded; every child
 * process is killed when this process exits, whatever happened to the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';

export type BrokerKind = 'embedded' | 'cli';

export interface TestBrokerOptions {
  /** Kafka config properties (applied as --override for the CLI). */
  config?: Record<string, string | number | boolean>;
  /** Embedded only: receives every log line (default: only warnings and errors, to stderr). */
  logSink?: (line: string) => void;
}

export interface TestBroker {
  readonly kind: BrokerKind;
  readonly host: string;
  /** Current port (the same across restarts). */
  readonly port: number;
  /** `host:port`, as clients take it. */
  readonly bootstrap: string;
  readonly dataDir: string;
  /** The embedded server (undefined for the CLI). */
  readonly embedded: RunningBroker | undefined;
  /** Process id of the CLI broker (undefined when embedded). */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Clean shutdown (SIGTERM for the CLI). */
  stop(): Promise<void>;
  /** Starts again on the same data dir and port. */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** CLI only: kill -9, then wait for the process to be gone. */
  kill9(): Promise<void>;
  /** Stops (if running) and removes the data dir. */
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 10_000;
const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO_ROOT, 'bin', 'krill.js');
/** Preloaded into the CLI broker: it exits when our end of its stdin closes (we died). */
const EXIT_WITH_PARENT = path.join(__dirname, 'exit-with-parent.js');
const READY_LINE = /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+) node (\d+) data (.+)$/;

/** CLI brokers alive right now: killed when this process exits, even after a failed test. */
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of liveChildren) c.kill('SIGKILL');
});

export async function startTestBroker(kind: BrokerKind, opts: TestBrokerOptions = {}): Promise<TestBroker> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `krill-compat-${kind}-`));
  const b = kind === 'embedded' ? new EmbeddedTestBroker(dataDir, opts) : new CliTestBroker(dataDir, opts);
  try {
    await b.start();
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return b;
}

abstract class BaseTestBroker implements TestBroker {
  abstract readonly kind: BrokerKind;
  host = '127.0.0.1';
  port = 0;
  private removed = false;

  constructor(
    readonly dataDir: string,
    protected readonly opts: TestBrokerOptions,
  ) {}

  get bootstrap(): string {
    return `${this.host}:${this.port}`;
  }
  get embedded(): RunningBroker | undefined {
    return undefined;
  }
  get pid(): number | undefined {
    return undefined;
  }
  abstract readonly running: boolean;
  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async kill9(): Promise<void> {
    throw new Error(`kill -9 needs a broker process; this one is ${this.kind}`);
  }

  async close(): Promise<void> {
    try {
      if (this.running) await this.stop();
    } finally {
      if (!this.removed) {
        this.removed = true;
        fs.rmSync(this.dataDir, { recursive: true, force: true });
      }
    }
  }
}

class EmbeddedTestBroker extends BaseTestBroker {
  readonly kind = 'embedded' as const;
  private broker: RunningBroker | undefined;

  override get embedded(): RunningBroker | undefined {
    return this.broker;
  }
  get running(): boolean {
    return this.broker !== undefined;
  }

  async start(): Promise<void> {
    if (this.broker) throw new Error('broker already running');
    const sink = this.opts.logSink;
    const logger = sink ? new Logger('krill[1]', 'info', sink) : new Logger('krill[1]', 'warn');
    this.broker = await startBroker({ port: this.port, dataDir: this.dataDir, config: this.opts.config, logger });
    this.host = this.broker.host;
    this.port = this.broker.port;
  }

  async stop(): Promise<void> {
    const b = this.broker;
    this.broker = undefined;
    if (b) await b.close();
  }
}

class CliTestBroker extends BaseTestBroker {
  readonly kind = 'cli' as const;
  private child: ChildProcess | undefined;
  private exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  /** Last lines of the broker's stderr, for failure messages. */
  private stderrTail: string[] = [];

  override get pid(): number | undefined {
    return this.child?.pid;
  }
  get running(): boolean {
    return this.child !== undefined;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('broker already running');
    checkBuilt();
    const args = ['-r', EXIT_WITH_PARENT, CLI, '--port', String(this.port), '--host', this.host, '--data-dir', this.dataDir];
    for (const [k, v] of Object.entries(this.opts.config ?? {})) args.push('--override', `${k}=${String(v)}`);
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, KRILL_LOG_LEVEL: process.env.KRILL_LOG_LEVEL ?? 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    liveChildren.add(child);
    child.stdin!.on('error', () => undefined); // EPIPE once the broker is gone
    this.child = child;
    this.stderrTail = [];
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        liveChildren.delete(child);
        resolve({ code, signal });
      });
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      this.stderrTail.push(...s.split('\n').filter((l) => l.length > 0));
      if (this.stderrTail.length > 40) this.stderrTail.splice(0, this.stderrTail.length - 40);
    });
    try {
      const m = await this.waitForReady(child);
      this.host = m[1];
      this.port = Number(m[2]);
    } catch (err) {
      child.kill('SIGKILL');
      await this.exited;
      this.child = undefined;
      throw err;
    }
  }

  private waitForReady(child: ChildProcess): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => finish(new Error(`krill CLI printed no ready line within ${READY_TIMEOUT_MS} ms${this.diagnostics()}`)), READY_TIMEOUT_MS);
      const onData = (s: string) => {
        out += s;
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        const line = out.slice(0, nl);
        const m = READY_LINE.exec(line);
        finish(new Error(`unexpected first line on the CLI's stdout: ${JSON.stringify(line)}`), m ?? undefined);
      };
      const onExit = (code: number | null, signal: string | null) =>
        finish(new Error(`krill CLI exited (code ${code}, signal ${signal}) before it was ready${this.diagnostics()}`));
      const finish = (err: Error, m?: RegExpExecArray) => {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.off('exit', onExit);
        if (m) resolve(m);
        else reject(err);
      };
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', onData);
      child.once('exit', onExit);
    });
  }

  private diagnostics(): string {
    return this.stderrTail.length ? `\n--- broker stderr (last lines) ---\n${this.stderrTail.join('\n')}` : '';
  }

  async stop(): Promise<void> {
    await this.terminate('SIGTERM');
  }

  override async kill9(): Promise<void> {
    await this.terminate('SIGKILL');
  }

  private async terminate(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    const exited = this.exited!;
    if (!child) return;
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), EXIT_TIMEOUT_MS)));
    const r = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    this.child = undefined;
    if (r === 'timeout') {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`krill CLI did not exit within ${EXIT_TIMEOUT_MS} ms of ${signal}${this.diagnostics()}`);
    }
    if (signal === 'SIGTERM' && r.code !== 0) {
      throw new Error(`krill CLI exited with code ${r.code} (signal ${r.signal}) after SIGTERM${this.diagnostics()}`);
    }
  }
}

let builtChecked = false;

/** The CLI runs dist/: fail with a clear message when it is missing, warn once when it looks stale. */
function checkBuilt(): void {
  if (builtChecked) return;
  const entry = path.join(REPO_ROOT, 'dist', 'broker', 'cli.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` (npm ci does it) before the CLI compat tests`);
  builtChecked = true;
  const builtAt = fs.statSync(entry).mtimeMs;
  const stale: string[] = [];
  for (const dir of ['broker', 'protocol', 'storage', 'replication']) {
    for (const f of walk(path.join(REPO_ROOT, dir))) {
      if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
      const out = path.join(REPO_ROOT, 'dist', path.relative(REPO_ROOT, f)).replace(/\.ts$/, '.js');
      const outAt = fs.existsSync(out) ? fs.statSync(out).mtimeMs : 0;
      if (fs.statSync(f).mtimeMs > Math.max(outAt, builtAt)) stale.push(path.relative(REPO_ROOT, f));
    }
  }
  if (stale.length) {
    process.stderr.write(`compat-tests: dist/ is older than ${stale.length} source file(s) (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}); the CLI broker runs the old build. Run \`npm run build\`.\n`);
  }
}

function* walk(dir: string): Generator<string> {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else yield p;
  }
}
