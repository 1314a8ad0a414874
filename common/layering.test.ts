/**
 * The tree's layering (docs/architecture.md): every relative import in a top-level folder points
 * into the same folder or one of the folders below it. Tests are held to the same rule, so a test
 * that needs a whole broker lives in broker/ or compat-tests/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');

/** Each folder and what it may import, lowest first. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  common: [],
  protocol: ['common'],
  storage: ['common', 'protocol'],
  config: ['common', 'protocol'],
  client: ['common', 'protocol'],
  metadata: ['common', 'protocol', 'storage', 'config', 'client'],
  replication: ['common', 'protocol', 'storage', 'config', 'client', 'metadata'],
  coordinator: ['common', 'protocol', 'storage', 'config', 'client', 'metadata', 'replication'],
  broker: ['common', 'protocol', 'storage', 'config', 'client', 'metadata', 'replication', 'coordinator'],
};

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The relative module names a file imports (import, export ... from, import(), require()), as the compiler reads them. */
function relativeImports(src: string): string[] {
  return ts.preProcessFile(src, true, true).importedFiles.map((f) => f.fileName).filter((n) => n.startsWith('./') || n.startsWith('../'));
}

test('calls go downward only: no folder imports a folder above it', () => {
  const violations: string[] = [];
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    for (const file of sources(path.join(ROOT, folder))) {
      const src = fs.readFileSync(file, 'utf8');
      for (const spec of relativeImports(src)) {
        const target = path.relative(ROOT, path.resolve(path.dirname(file), spec));
        const top = target.split(path.sep)[0];
        if (top !== folder && !allowed.includes(top)) violations.push(`${path.relative(ROOT, file)} imports ${target}`);
      }
    }
  }
  expect(violations).toEqual([]);
});

test('every top-level source folder has a place in the layering', () => {
  const skip = new Set(['node_modules', 'dist', 'bin', 'docs', 'compat-tests', 'bench']);
  const folders = fs
    .readdirSync(ROOT, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !skip.has(e.name))
    .map((e) => e.name)
    .filter((d) => sources(path.join(ROOT, d)).length > 0);
  expect(folders.sort()).toEqual(Object.keys(MAY_IMPORT).sort());
});
