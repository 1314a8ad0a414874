'use strict';
/**
 * Trains the bundle's V8 code cache (run by scripts/bundle.mjs): compiles BUNDLE without a cache,
 * starts a broker from it as `krill` starts by default (a free port, a temp data dir, the default
 * log level), and at its ready line writes
 * script.createCachedData() (everything compiled so far: the module graph and the start-up path)
 * to CACHE, then stops the broker with SIGTERM as a user would; exits 0 only when the cache is
 * written and the broker shut down cleanly.
 *
 *   node scripts/train-code-cache.cjs BUNDLE CACHE
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { compileBundle, runBundle } = require('../bin/load-cli.js');

const [bundleFile, cacheFile] = process.argv.slice(2);
if (!bundleFile || !cacheFile) {
  process.stderr.write('usage: train-code-cache.cjs BUNDLE CACHE\n');
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-code-cache-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const script = compileBundle(bundleFile, undefined);
const cli = runBundle(script, bundleFile);
let written = false;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (!written && String(chunk).startsWith('krill ready')) {
    written = true;
    fs.writeFileSync(cacheFile, script.createCachedData());
    write(`trained: ${chunk}`);
    process.kill(process.pid, 'SIGTERM');
    return true;
  }
  return write(chunk, ...rest);
};
cli.main(['--port', '0', '--data-dir', dir]).catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
