/**
 * The bench's reaper: a tiny process that outlives the bench only to clean up after it. The bench
 * tells it, on its stdin, which broker processes and temp dirs it owns ("pid N", "dir PATH", and
 * "-pid N" / "-dir PATH" once it has released them itself). When its stdin closes (the bench exited,
 * crashed or was SIGKILLed), it kills the processes still listed and removes the directories still
 * listed. It keeps the brokers under measurement free of any watchdog code of the bench's own.
 */
import * as fs from 'node:fs';

const pids = new Set<number>();
const dirs = new Set<string>();
let buf = '';

function apply(line: string): void {
  const sp = line.indexOf(' ');
  if (sp < 0) return;
  const cmd = line.slice(0, sp);
  const arg = line.slice(sp + 1);
  if (cmd === 'pid') pids.add(Number(arg));
  else if (cmd === '-pid') pids.delete(Number(arg));
  else if (cmd === 'dir') dirs.add(arg);
  else if (cmd === '-dir') dirs.delete(arg);
}

function reap(): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  // Give the kernel a moment to release the killed brokers' files before removing their dirs.
  setTimeout(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    process.exit(0);
  }, pids.size ? 200 : 0);
}

// A terminal's Ctrl-C reaches the whole process group; the reaper's job starts when the bench is gone.
process.on('SIGINT', () => undefined);
process.on('SIGHUP', () => undefined);
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d: string) => {
  buf += d;
  let nl: number;
  while ((nl = buf.indexOf('\n')) >= 0) {
    apply(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
  }
});
process.stdin.on('end', reap);
process.stdin.on('error', reap);
