/**
 * `npm run build`'s second step (after tsc): bundles the compiled CLI (dist/broker/cli.js and every
 * krill module it can reach, eager or lazily required) into one file, dist/krill.bundle.js, and
 * trains a V8 code cache for it, dist/krill.bundle.cache. The bundle is not a module to `require`:
 * it is a function expression (CommonJS's module wrapper) that bin/load-cli.js compiles and calls. bin/krill.js runs the bundle when it is
 * fresh (bin/load-cli.js), the plain dist/ otherwise.
 *
 * Invariants:
 * - The bundle is built from tsc's output, never from the TypeScript sources, so it runs exactly
 *   the code dist/ holds. Every package under node_modules stays external (required at run time
 *   from node_modules as before): the native ones (fast-crc32c, sse4_crc32, snappy, zstd-napi,
 *   lz4-napi) cannot be bundled, and the large lazily used ones (@aws-sdk/client-s3, node-forge,
 *   prom-client, re2js) would only make the bundle bigger to parse. So do the generated codecs
 *   (codecsFromDist below): they load from dist/ on first use, sharing the bundle's modules.
 * - The bundle's entry exports `modules`: every dist/ module of the bundle by its dist/-relative
 *   path, as the bundle's lazy initialiser of it (bin/load-cli.js installs them in require.cache).
 * - dist/krill.bundle.json (the manifest) names every dist/ file the bundle was made of with its
 *   size and mtime, and the bundle's own; the loader uses the bundle only while all of them match,
 *   so a later `tsc` (which rewrites changed outputs only) makes it fall back to dist/ instead of
 *   running stale code. The manifest is written last: a bundle without a manifest is never used.
 * - The code cache is an optimisation only. It is trained by a real start-up (a broker on a free
 *   port and a temp data dir, until its ready line) so it holds the functions start-up compiles;
 *   it records the bundle's size and mtime, and V8 itself rejects it for another V8 version or
 *   other flags. If training fails the build still succeeds, without a cache (a warning says why).
 * - Without esbuild (a production install) this step does nothing: bin/krill.js runs dist/.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const bundleFile = path.join(dist, 'krill.bundle.js');
const manifestFile = path.join(dist, 'krill.bundle.json');
const cacheFile = path.join(dist, 'krill.bundle.cache');
const TRAIN_TIMEOUT_MS = 60000;
/** bin/load-cli.js uses a manifest of this format only. */
const MANIFEST_FORMAT = 'krill-bundle-1';

function warn(msg) {
  process.stderr.write(`bundle: ${msg}\n`);
}

/**
 * The generated request/response codecs (dist/protocol/generated/<api>.js, ~90 of them, ~0.6 MB)
 * that only protocol/generated/index.js requires stay out of the bundle: it requires each lazily, on the first message of
 * its API, and so they load from dist/ then, as without the bundle, instead of taking space in the
 * bundle's source and code cache from the start. Their own requires (codec-support, the primitives)
 * resolve to the bundle's instances through require.cache (bin/load-cli.js), so every krill module
 * still exists once per process: either in the bundle or loaded from dist/, never both.
 * descriptors.js (0.2 MB, for fault injection only) likewise.
 */
const generated = path.join(dist, 'protocol', 'generated');
const codecsFromDist = {
  name: 'codecs-from-dist',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      // Only index.js's lazy requires: a codec another module imports outright (api-versions, for
      // the request dispatcher) is bundled, and index.js's require of it then finds the bundle's.
      const target = path.resolve(args.resolveDir, args.path);
      const file = target.endsWith('.js') ? target : `${target}.js`;
      if (args.importer !== path.join(generated, 'index.js') && file !== path.join(generated, 'descriptors.js')) return undefined;
      // Only files directly in generated/ (not index.js, not the records/ and message-data/ dirs).
      if (path.dirname(file) !== generated || path.basename(file) === 'index.js' || !fs.existsSync(file)) return undefined;
      return { path: `./${path.relative(dist, file).split(path.sep).join('/')}`, external: true };
    });
  },
};

const COMMON = { absWorkingDir: root, bundle: true, platform: 'node', format: 'cjs', target: 'node20', packages: 'external', plugins: [codecsFromDist] };

async function main() {
  let esbuild;
  try {
    esbuild = createRequire(path.join(root, 'package.json'))('esbuild');
  } catch {
    warn('esbuild is not installed; bin/krill.js will run the plain dist/');
    return;
  }
  const entry = path.join(dist, 'broker', 'cli.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run tsc -p tsconfig.build.json first`);
  // A previous bundle stops being used the moment we start (no manifest), whatever happens next.
  for (const f of [manifestFile, cacheFile]) fs.rmSync(f, { force: true });
  const t0 = Date.now();
  // Pass 1: the module graph the CLI reaches (eager and lazy requires alike).
  const graph = await esbuild.build({ ...COMMON, entryPoints: [entry], write: false, metafile: true, logLevel: 'silent' });
  const modules = Object.keys(graph.metafile.inputs).map((rel) => {
    const abs = path.resolve(root, rel);
    if (!abs.startsWith(dist + path.sep)) throw new Error(`bundle input outside dist/: ${rel}`);
    return path.relative(dist, abs).split(path.sep).join('/');
  });
  // Pass 2: the bundle proper. Its entry maps each of those modules' dist/ paths to the bundle's
  // lazy initialiser of it, so the loader can make the bundle's instances what `require` of a
  // dist/ file returns (a plug-in module that requires krill's classes gets the broker's own).
  const entrySource = `exports.modules = {\n${modules.map((m) => `  ${JSON.stringify(m)}: () => require(${JSON.stringify(`./${m}`)}),`).join('\n')}\n};\n`;
  const result = await esbuild.build({
    ...COMMON,
    stdin: { contents: entrySource, resolveDir: dist, sourcefile: 'krill-bundle-entry.js', loader: 'js' },
    outfile: bundleFile,
    // Whitespace only: identifiers and syntax stay as tsc wrote them (names in stack traces and
    // logs unchanged); the source map (composed with tsc's) maps back to the TypeScript.
    minifyWhitespace: true,
    sourcemap: 'linked',
    // The file is one function expression, CommonJS's module wrapper around the bundle: the loader
    // compiles the file's own string as it is (no wrapped copy of 2.8 MB beside it), and calls it.
    banner: { js: `(function (exports, require, module, __filename, __dirname) {` },
    footer: { js: '})' },
    metafile: true,
    logLevel: 'warning',
  });
  const inputs = {};
  for (const rel of Object.keys(result.metafile.inputs)) {
    if (rel === '<stdin>' || rel.endsWith('krill-bundle-entry.js')) continue;
    const abs = path.resolve(root, rel);
    if (!abs.startsWith(dist + path.sep)) throw new Error(`bundle input outside dist/: ${rel}`);
    const st = fs.statSync(abs);
    inputs[path.relative(dist, abs).split(path.sep).join('/')] = [st.size, st.mtimeMs];
  }
  if (Object.keys(inputs).length !== modules.length) throw new Error(`the bundle has ${Object.keys(inputs).length} modules, its entry names ${modules.length}`);
  const bst = fs.statSync(bundleFile);
  const cache = await trainCodeCache(bst);
  const manifest = { format: MANIFEST_FORMAT, bundle: [bst.size, bst.mtimeMs], cache, inputs };
  fs.writeFileSync(manifestFile, JSON.stringify(manifest));
  process.stdout.write(
    `bundle: dist/krill.bundle.js ${(bst.size / 1048576).toFixed(1)} MB from ${Object.keys(inputs).length} modules` +
      (cache ? `, code cache ${(cache[0] / 1048576).toFixed(1)} MB` : ', no code cache') +
      ` (${Date.now() - t0} ms)\n`,
  );
}

/** Runs scripts/train-code-cache.cjs; resolves to the cache's manifest entry, or null (warned). */
function trainCodeCache(bundleStat) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'train-code-cache.cjs'), bundleFile, cacheFile], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), TRAIN_TIMEOUT_MS);
    const fail = (why) => {
      fs.rmSync(cacheFile, { force: true });
      warn(`no code cache (${why}); bin/krill.js compiles the bundle at each start\n${out.trim()}`);
      resolve(null);
    };
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(err.message);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return fail(`training exited with ${signal ?? code}`);
      let st;
      try {
        st = fs.statSync(cacheFile);
      } catch {
        return fail('training wrote no cache');
      }
      const now = fs.statSync(bundleFile);
      if (now.size !== bundleStat.size || now.mtimeMs !== bundleStat.mtimeMs) return fail('the bundle changed during training');
      resolve([st.size, st.mtimeMs, bundleStat.size, bundleStat.mtimeMs]);
    });
  });
}

main().catch((err) => {
  process.stderr.write(`bundle: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
