/**
 * The built CLI (dist/) with `--metrics-port 0 --log-format json`: every stderr line is one JSON
 * object with pino's fields; the metrics endpoints' address is in its log line; /ready and
 * /metrics answer once the ready line is printed; SIGTERM still shuts down cleanly. Bad values of
 * the two options are refused with exit code 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { httpStatus, scrape } from '../../broker/metrics/testing/scrape';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO_ROOT, 'bin', 'krill.js');
const EXIT_WITH_PARENT = path.join(__dirname, '..', 'helpers', 'exit-with-parent.js');
const TIMEOUT_MS = 20_000;

let dir: string;
let child: ChildProcess | undefined;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cli-metrics-'));
});

afterAll(() => {
  child?.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): { child: ChildProcess; stdout: string[]; stderr: string[]; exited: Promise<number | null> } {
  const c = spawn(process.execPath, ['-r', EXIT_WITH_PARENT, CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, KRILL_LOG_LEVEL: 'info' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const collect = (into: string[]) => {
    let rest = '';
    return (s: string) => {
      rest += s;
      const lines = rest.split('\n');
      rest = lines.pop()!;
      into.push(...lines);
    };
  };
  c.stdout!.setEncoding('utf8').on('data', collect(stdout));
  c.stderr!.setEncoding('utf8').on('data', collect(stderr));
  const exited = new Promise<number | null>((resolve) => c.on('exit', (code) => resolve(code)));
  return { child: c, stdout, stderr, exited };
}

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('--metrics-port 0 --log-format json: JSON log lines, endpoints on the logged address, clean SIGTERM', async () => {
  const r = run(['--port', '0', '--data-dir', dir, '--metrics-port', '0', '--log-format', 'json']);
  child = r.child;
  await until('the ready line', () => r.stdout.find((l) => l.startsWith('krill ready: ')));
  const records = r.stderr.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records.length).toBeGreaterThan(3);
  for (const rec of records) {
    expect(rec).toMatchObject({ pid: r.child.pid, hostname: os.hostname() });
    expect([10, 20, 30, 40, 50]).toContain(rec.level);
    expect(typeof rec.time).toBe('number');
    expect(typeof rec.msg).toBe('string');
    expect(String(rec.name)).toMatch(/^krill\[1\]/);
    expect(typeof rec.logger).toBe('string');
  }
  const started = records.find((rec) => String(rec.msg).startsWith('started in'))!;
  expect(started).toMatchObject({ level: 30, name: 'krill[1]', logger: 'root' });
  expect(Array.isArray(started.listeners)).toBe(true);
  const line = records.find((rec) => String(rec.msg).startsWith('metrics and health endpoints on'))!;
  expect(line).toMatchObject({ logger: 'krill.metrics.MetricsServer' });
  const m = /http:\/\/([^:]+):(\d+)/.exec(String(line.msg))!;
  const address = { host: m[1] === '0.0.0.0' ? '127.0.0.1' : m[1], port: Number(m[2]) };
  expect(await httpStatus(address, '/live')).toBe(200);
  expect(await httpStatus(address, '/ready')).toBe(200);
  const s = await scrape(address);
  expect(s.value('kafka_server_replicamanager_partitioncount')).toBe(0);
  expect(s.value('kafka_controller_kafkacontroller_activecontrollercount')).toBe(1);

  r.child.kill('SIGTERM');
  expect(await r.exited).toBe(0);
  child = undefined;
  const last = JSON.parse(r.stderr[r.stderr.length - 1]) as Record<string, unknown>;
  expect(last.msg).toBe('shut down cleanly');
}, 30_000);

test('bad --log-format and --metrics-port values exit with 2 and say why', async () => {
  for (const [args, why] of [
    [['--log-format', 'xml'], 'invalid --log-format xml (expected text or json)'],
    [['--metrics-port', 'x'], 'invalid --metrics-port x'],
    [['--metrics-port', '70000'], 'invalid --metrics-port 70000'],
  ] as const) {
    const r = run([...args, '--data-dir', dir]);
    expect(await r.exited).toBe(2);
    expect(r.stderr.join('\n')).toContain(why);
  }
});
