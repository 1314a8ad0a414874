/** Test support: temporary directories, removed after each test file. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const created: string[] = [];

export function tempDir(prefix = 'krill-storage-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(d);
  return d;
}

export function removeTempDirs(): void {
  while (created.length > 0) fs.rmSync(created.pop() as string, { recursive: true, force: true });
}
