'use strict';
/**
 * Loads krill's CLI module for bin/krill.js: the single-file bundle dist/krill.bundle.js (built by
 * scripts/bundle.mjs, with its V8 code cache) when it is fresh, the plain dist/broker/cli.js
 * otherwise. Both export the same `main`; the bundle only saves the start-up's module resolution,
 * file reads and compilation (see the README's performance section).
 *
 * Invariants:
 * - The bundle runs only while every dist/ file it was made of still has the size and mtime its
 *   manifest (dist/krill.bundle.json) recorded, and the bundle its own: after a `tsc` that changed
 *   anything, or a partial build, krill runs dist/ (never stale code). The inputs are stat'ed on
 *   the thread pool while the bundle compiles, and nothing of the bundle runs before they all match.
 * - The code cache is used only when the manifest says it was made from this very bundle (size and
 *   mtime); V8 rejects it by itself for another V8 version or other flags, and then compiles.
 * - Inside the bundle, `require` resolves from dist/ (packages from node_modules, as for dist/), and
 *   the bundle is a module of its own in require.cache, so lazy requires work as in dist/.
 * - One instance of each krill module per process: once the bundle runs, require.cache maps each
 *   dist/ file the bundle holds to the bundle's (lazily evaluated) instance of it, so code outside
 *   the bundle that requires dist/ files (a remote storage manager extending LocalTieredStorage,
 *   'krill' itself, and the generated codecs, which the bundle leaves in dist/ and requires on
 *   first use) shares the broker's classes, as with the plain dist/.
 * - Nothing the loader holds outlives the start-up: the code cache buffer is dropped as soon as
 *   the bundle is compiled, and no per-module work (paths) is done for modules not yet used.
 * - KRILL_BUNDLE=0 in the environment forces the plain dist/; KRILL_BUNDLE=1 makes a bundle that
 *   cannot be used an error (tests and the bench use it to know what they measure).
 */
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const vm = require('node:vm');

const DIST = path.join(__dirname, '..', 'dist');
const BUNDLE = path.join(DIST, 'krill.bundle.js');
const MANIFEST = path.join(DIST, 'krill.bundle.json');
const CACHE = path.join(DIST, 'krill.bundle.cache');

function plainCli() {
  return require('../dist/broker/cli.js');
}

/** The manifest format scripts/bundle.mjs writes (the bundle is the module wrapper function). */
const MANIFEST_FORMAT = 'krill-bundle-1';

/**
 * Compiles the bundle (with `cachedData`, a V8 code cache, when given); runs nothing. The file is
 * already the module wrapper function expression, so its string is compiled as it is (wrapping it
 * here would keep a second, concatenated copy of the source in the heap).
 */
function compileBundle(file, cachedData) {
  return new vm.Script(fs.readFileSync(file, 'utf8'), { filename: file, cachedData });
}

/**
 * Runs a compiled bundle as the CommonJS module `file`, makes each dist/ module it holds what
 * `require` of that dist/ file returns (installModules), and returns the CLI module's exports.
 */
function runBundle(script, file) {
  const dir = path.dirname(file);
  const m = new Module(file, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(dir);
  Module._cache[file] = m;
  try {
    script.runInThisContext().call(m.exports, m.exports, Module.createRequire(file), m, file, dir);
  } catch (err) {
    delete Module._cache[file];
    throw err;
  }
  m.loaded = true;
  installModules(m.exports.modules, dir);
  return require(path.join(dir, 'broker', 'cli.js'));
}

/**
 * `modules` maps dist/-relative paths to the bundle's lazy initialisers of those modules. Each
 * becomes a loaded entry of require.cache whose `exports` runs the initialiser on first use, so a
 * `require` of any of those dist/ files (krill's own lazy requires go through the bundle; this is
 * for code outside it: a plug-in module naming dist/ files or 'krill') gets the bundle's instance,
 * and nothing is evaluated before it is needed. A file already loaded from dist/ is left alone.
 */
function installModules(modules, dir) {
  if (typeof modules !== 'object' || modules === null) throw new Error('the bundle does not export its module map');
  for (const rel of Object.keys(modules)) {
    const file = dir + path.sep + (path.sep === '/' ? rel : rel.split('/').join(path.sep));
    if (Module._cache[file] === undefined) Module._cache[file] = bundledModule(file, modules[rel]);
  }
}

const INIT = Symbol('init');
const VALUE = Symbol('value');
/**
 * A require.cache entry for a module of the bundle: a Module (prototype) whose `exports` runs the
 * bundle's initialiser on first read. `path` and `paths` are derived on demand: nothing requires
 * through these entries (the bundle's code uses the bundle's require), and computing them for
 * hundreds of modules at start-up is enough calls to get node's path helpers optimised (TurboFan's
 * code pages are ~3 MB of RSS an idle broker otherwise never touches).
 */
const bundledModuleProto = Object.create(Module.prototype, {
  exports: {
    configurable: true,
    enumerable: true,
    get() {
      if (this[INIT] !== null) {
        const init = this[INIT];
        this[INIT] = null;
        this[VALUE] = init();
      }
      return this[VALUE];
    },
    set(v) {
      this[INIT] = null;
      this[VALUE] = v;
    },
  },
  path: { configurable: true, get() { return path.dirname(this.filename); } },
  paths: { configurable: true, get() { return Module._nodeModulePaths(path.dirname(this.filename)); } },
});

function bundledModule(file, init) {
  const m = Object.create(bundledModuleProto);
  m.id = file;
  m.filename = file;
  m.loaded = true;
  m.children = [];
  m[INIT] = init;
  m[VALUE] = undefined;
  return m;
}

/** Whether each file in `inputs` ({ relative path: [size, mtimeMs] }) still matches; stats in parallel. */
function inputsMatch(inputs) {
  const names = Object.keys(inputs);
  return new Promise((resolve) => {
    let pending = names.length;
    let ok = true;
    if (pending === 0) resolve(false);
    for (const name of names) {
      fs.stat(DIST + path.sep + (path.sep === '/' ? name : name.split('/').join(path.sep)), (err, st) => {
        if (err || st.size !== inputs[name][0] || st.mtimeMs !== inputs[name][1]) ok = false;
        if (--pending === 0) resolve(ok);
      });
    }
  });
}

/**
 * The code cache when the manifest says it was made from this bundle, else undefined. Only the
 * compiled Script keeps what it needs: the caller passes the buffer straight to compileBundle and
 * holds no reference to it, so its 1.3 MB go at the next scavenge instead of being promoted to
 * the old generation and held until a full GC (idle RSS).
 */
function readCodeCache(c, bundleStat) {
  if (!Array.isArray(c) || c[2] !== bundleStat.size || c[3] !== bundleStat.mtimeMs) return undefined;
  try {
    const data = fs.readFileSync(CACHE);
    return data.length === c[0] ? data : undefined;
  } catch {
    return undefined; // no cache: compile
  }
}

function matches(st, entry) {
  return Array.isArray(entry) && st.size === entry[0] && st.mtimeMs === entry[1];
}

/**
 * Resolves to { cli, bundled, reason }: the CLI module, whether it is the bundle, and when it is
 * not, why (no bundle, stale, KRILL_BUNDLE=0). KRILL_BUNDLE=1 requires the bundle: a reason to fall
 * back is an error instead.
 */
async function loadCli() {
  const mode = process.env.KRILL_BUNDLE;
  const plain = (reason) => {
    if (mode === '1') throw new Error(`KRILL_BUNDLE=1 but dist/krill.bundle.js cannot be used: ${reason} (npm run build makes it)`);
    return { cli: plainCli(), bundled: false, reason };
  };
  if (mode === '0') return plain('KRILL_BUNDLE=0');
  let manifest;
  let bundleStat;
  try {
    manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
    bundleStat = fs.statSync(BUNDLE);
  } catch (err) {
    return plain(`no complete bundle (${err.code || err.message})`);
  }
  if (manifest.format !== MANIFEST_FORMAT || !matches(bundleStat, manifest.bundle) || typeof manifest.inputs !== 'object' || manifest.inputs === null) {
    return plain('the manifest does not describe this bundle');
  }
  const fresh = inputsMatch(manifest.inputs);
  const script = compileBundle(BUNDLE, readCodeCache(manifest.cache, bundleStat));
  if (!(await fresh)) return plain('dist/ changed since the bundle was built');
  return { cli: runBundle(script, BUNDLE), bundled: true, reason: null };
}

module.exports = { loadCli, compileBundle, runBundle };
