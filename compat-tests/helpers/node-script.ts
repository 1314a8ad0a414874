/**
 * Running a Node script to completion in a child process, for clients that cannot be loaded into
 * jest (ESM-only @platformatic/kafka): `node <script> <args>` from the repository root, bounded in
 * time (killed with SIGKILL past the bound), resolving with its stdout when it exits 0 and
 * failing with its stderr otherwise.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

export function runNodeScript(script: string, args: readonly string[], timeoutMs: number): Promise<string> {
  const name = path.basename(script);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not finish within ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${name} exited with ${code}\n${out}\n${err}`));
    });
  });
}

/** The last line a script printed, parsed as JSON (its report). */
export function lastJsonLine(stdout: string): any {
  return JSON.parse(stdout.trim().split('\n').pop()!);
}
