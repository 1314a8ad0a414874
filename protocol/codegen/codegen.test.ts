/**
 * The generator's own pieces: schema parsing (comments, version ranges, defaults), naming, version
 * condition folding, and the write/--check cycle. The "committed output is current" test needs
 * ../shared/kafka-protocol and is skipped without it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cond, MessageEmitter } from './emit';
import { kebab, renderAll } from './layout';
import { diffDirs, main, writeOutput } from './main';
import { camelCase, loadSchemas, parseMessage, parseRange, stripComments } from './schema';
import { applySchemaUpdates, SCHEMA_UPDATES } from './schema-updates';

const SCHEMAS = path.resolve(__dirname, '..', '..', '..', 'shared', 'kafka-protocol');
const GENERATED = path.resolve(__dirname, '..', 'generated');
const haveSchemas = fs.existsSync(path.join(SCHEMAS, 'message'));

describe('schema parsing', () => {
  test('version ranges', () => {
    expect(parseRange('none', 'x')).toEqual({ lo: 0, hi: -1 });
    expect(parseRange('3+', 'x')).toEqual({ lo: 3, hi: Infinity });
    expect(parseRange('0-7', 'x')).toEqual({ lo: 0, hi: 7 });
    expect(parseRange('5', 'x')).toEqual({ lo: 5, hi: 5 });
    expect(() => parseRange('7-3', 'x')).toThrow();
    expect(() => parseRange('v1', 'x')).toThrow();
  });

  test('comments are stripped outside strings only', () => {
    const text = '// header\n{ "a": "http://x//y", // trailing\n "b": "q\\"//" }';
    expect(JSON.parse(stripComments(text))).toEqual({ a: 'http://x//y', b: 'q"//' });
  });

  test('names', () => {
    expect(camelCase('TopicData')).toBe('topicData');
    expect(camelCase('ApiKeys')).toBe('apiKeys');
    expect(camelCase('timeoutMs')).toBe('timeoutMs');
    expect(kebab('AddPartitionsToTxn')).toBe('add-partitions-to-txn');
    expect(kebab('KRaftVersionRecord')).toBe('kraft-version-record');
    expect(kebab('DescribeUserScramCredentials')).toBe('describe-user-scram-credentials');
  });

  test('defaults, struct names and contexts', () => {
    const m = parseMessage(
      `// c
      { "apiKey": 99, "type": "request", "name": "FooRequest", "validVersions": "0-4", "flexibleVersions": "3+",
        "fields": [
          { "name": "A", "type": "int32", "versions": "0+", "default": "0x7fffffff" },
          { "name": "B", "type": "int64", "versions": "1+", "default": -1 },
          { "name": "C", "type": "string", "versions": "2+", "nullableVersions": "2+", "default": "null" },
          { "name": "Items", "type": "[]Item", "versions": "2+", "fields": [
            { "name": "X", "type": "uuid", "versions": "0+" },
            { "name": "FooRequestNested", "type": "FooRequestNested", "versions": "4+", "fields": [] }
          ]},
          { "name": "T", "type": "bool", "versions": "3+", "taggedVersions": "3+", "tag": 0, "default": "true" }
        ] }`,
      'message/FooRequest.json',
    );
    const [a, b, c, items, t] = m.root.fields;
    expect(a.def).toEqual({ k: 'num', v: 0x7fffffff });
    expect(b.def).toEqual({ k: 'big', v: -1n });
    expect(c.def).toEqual({ k: 'null' });
    expect(t.def).toEqual({ k: 'bool', v: true });
    expect(items.struct!.tsName).toBe('FooRequestItem');
    expect(items.struct!.ctx).toEqual({ lo: 2, hi: 4 });
    expect(m.structs.map((s) => s.tsName)).toEqual(['FooRequest', 'FooRequestItem', 'FooRequestNested']);
    expect(m.structs[2].ctx).toEqual({ lo: 4, hi: 4 });
    // Within the item struct (versions 2-4), "0+" is always true and "4+" is a test.
    expect(cond(items.struct!.fields[0].versions, items.struct!.ctx)).toBe('true');
    expect(cond(items.struct!.fields[1].versions, items.struct!.ctx)).toBe('version >= 4');
    expect(cond({ lo: 8, hi: 10 }, { lo: 0, hi: 12 })).toBe('version >= 8 && version <= 10');
    expect(cond({ lo: 13, hi: Infinity }, { lo: 0, hi: 12 })).toBe('false');
    const code = new MessageEmitter(m).emit().lines.join('\n');
    expect(code).toContain('export function readFooRequest(r: Reader, version: number): FooRequest {');
    expect(code).toContain('if (version < 0 || version > 4) throw badVersion');
  });

  test('schema errors are reported with the file', () => {
    const bad = (fields: string): (() => unknown) => () =>
      parseMessage(`{ "type": "data", "name": "X", "validVersions": "0", "flexibleVersions": "none", "fields": [${fields}] }`, 'x/X.json');
    expect(bad('{ "name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+" }')).toThrow(/cannot be nullable/);
    expect(bad('{ "name": "A", "type": "Missing", "versions": "0+" }')).toThrow(/not a commonStruct/);
    expect(bad('{ "name": "A", "type": "int8", "versions": "0+", "default": "300" }')).toThrow(/out of range/);
    expect(bad('{ "name": "A", "type": "string", "versions": "0+", "default": "null" }')).toThrow(/not nullable/);
    expect(bad('{ "name": "A", "type": "int8", "versions": "0+", "tag": 0, "taggedVersions": "0+" }')).toThrow(/tagged outside flexible/);
  });
});

(haveSchemas ? describe : describe.skip)('against ../shared/kafka-protocol', () => {
  test('the committed protocol/generated is what the generator produces', () => {
    const files = renderAll(loadSchemas(SCHEMAS));
    const stale: string[] = [];
    for (const [rel, content] of files) {
      const p = path.join(GENERATED, rel);
      if (!fs.existsSync(p) || fs.readFileSync(p, 'utf8') !== content) stale.push(rel);
    }
    const listed = new Set<string>();
    const walk = (dir: string, prefix: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isDirectory()) walk(path.join(dir, e.name), rel);
        else listed.add(rel);
      }
    };
    walk(GENERATED, '');
    for (const rel of listed) if (!files.has(rel)) stale.push(`extra ${rel}`);
    expect(stale).toEqual([]);
  });

  test('every file starts with the DO NOT EDIT header; no documentation text is copied', () => {
    const files = renderAll(loadSchemas(SCHEMAS));
    for (const [rel, content] of files) {
      expect([rel, content.split('\n')[0]]).toEqual([
        rel,
        "// DO NOT EDIT: generated by protocol/codegen from Apache Kafka's message schemas (Apache-2.0)",
      ]);
    }
    // a few distinctive `about` strings of the schemas
    const all = [...files.values()].join('\n');
    expect(all).not.toContain('The topic name');
    expect(all).not.toContain('acknowledgments');
    expect(all).not.toMatch(/Licensed to the Apache Software Foundation/);
  });

  test('no generated path is ignored by git (a `data/` rule once hid a folder)', () => {
    const files = [...renderAll(loadSchemas(SCHEMAS)).keys()].map((rel) => path.join('protocol', 'generated', rel));
    const root = path.resolve(__dirname, '..', '..');
    const res = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], { cwd: root, input: files.join('\n'), encoding: 'utf8' });
    if (res.error) return; // no git here
    expect(res.stdout.trim()).toBe('');
  });

  test('write, --check, stale and extra files', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-test-'));
    const log = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(main(['--schemas', SCHEMAS, '--out', out])).toBe(0);
      expect(main(['--schemas', SCHEMAS, '--out', out, '--check'])).toBe(0);
      fs.appendFileSync(path.join(out, 'produce.ts'), '// edited\n');
      fs.writeFileSync(path.join(out, 'records', 'stale.ts'), 'x');
      expect(main(['--schemas', SCHEMAS, '--out', out, '--check'])).toBe(1);
      const complaint = err.mock.calls.map((c) => String(c[0])).join('');
      expect(complaint).toContain('differs: produce.ts');
      expect(complaint).toContain('not generated by any schema: records/stale.ts');
      // Regenerating repairs the edit and deletes what no schema produced.
      expect(main(['--schemas', SCHEMAS, '--out', out])).toBe(0);
      expect(fs.existsSync(path.join(out, 'records', 'stale.ts'))).toBe(false);
      expect(main(['--schemas', SCHEMAS, '--out', out, '--check'])).toBe(0);
      expect(main(['--bogus'])).toBe(2);
    } finally {
      log.mockRestore();
      err.mockRestore();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

test('writeOutput / diffDirs on a small tree', () => {
  const a = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-a-'));
  const b = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-b-'));
  try {
    fs.mkdirSync(path.join(a, 'old', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(a, 'old', 'deep', 'gone.ts'), 'x');
    const files = new Map([
      ['x.ts', 'one\n'],
      ['sub/y.ts', 'two\n'],
    ]);
    expect(writeOutput(a, files)).toEqual({ written: 2, deleted: 1 });
    expect(fs.existsSync(path.join(a, 'old'))).toBe(false);
    expect(writeOutput(a, files)).toEqual({ written: 0, deleted: 0 });
    writeOutput(b, new Map([['x.ts', 'one\nthree\n']]));
    expect(diffDirs(a, b)).toEqual(['missing: sub/y.ts', 'differs: x.ts (first at line 2)']);
  } finally {
    fs.rmSync(a, { recursive: true, force: true });
    fs.rmSync(b, { recursive: true, force: true });
  }
});

describe('schema updates for Kafka 4.x versions (schema-updates.ts)', () => {
  const base = '{ "name": "XRequest", "type": "request", "apiKey": 99, "validVersions": "0-3", "flexibleVersions": "2+", "latestVersionUnstable": true, "fields": [ { "name": "A", "type": "int32", "versions": "0+" } ] }';
  test('widen the range, end the unstable flag and append fields of the new versions only', () => {
    const raw = applySchemaUpdates('message/XRequest.json', JSON.parse(base), [
      { file: 'message/XRequest.json', release: '4.0', kip: 'KIP-0', validVersions: '0-4', stable: true, appendFields: [{ name: 'B', type: 'int16', versions: '4+', ignorable: true }] },
      { file: 'message/Other.json', release: '4.0', kip: 'KIP-0', validVersions: '0-9' },
    ]);
    const m = parseMessage(JSON.stringify(raw), 'message/XRequest.json');
    expect([m.valid.lo, m.valid.hi, m.latestVersionUnstable]).toEqual([0, 4, false]);
    expect(m.root.fields.map((f) => [f.name, f.versions.lo])).toEqual([['A', 0], ['B', 4]]);
  });
  test('a field appended to a nested struct', () => {
    const nested = '{ "name": "XResponse", "type": "response", "apiKey": 99, "validVersions": "0", "flexibleVersions": "0+", "fields": [ { "name": "Groups", "type": "[]Group", "versions": "0+", "fields": [ { "name": "Members", "type": "[]Member", "versions": "0+", "fields": [ { "name": "Id", "type": "string", "versions": "0+" } ] } ] } ] }';
    const raw = applySchemaUpdates('message/XResponse.json', JSON.parse(nested), [
      { file: 'message/XResponse.json', release: '4.0', kip: 'KIP-0', validVersions: '0-1', appendFields: [{ name: 'Kind', type: 'int8', versions: '1+', default: -1, in: 'Groups.Members' }] },
    ]);
    expect(raw.fields[0]).toMatchObject({ fields: [{ fields: [{ name: 'Id' }, { name: 'Kind', versions: '1+', default: -1 }] }] });
    expect(() =>
      applySchemaUpdates('message/XResponse.json', JSON.parse(nested), [{ file: 'message/XResponse.json', release: '4.0', kip: 'KIP-0', appendFields: [{ name: 'K', type: 'int8', versions: '0+', in: 'Groups.Nope' }] }]),
    ).toThrow(/no struct field Nope/);
  });
  test('an update may not move the lowest version', () => {
    expect(() => applySchemaUpdates('message/XRequest.json', JSON.parse(base), [{ file: 'message/XRequest.json', release: '4.0', kip: 'KIP-0', validVersions: '1-4' }])).toThrow(/lowest version/);
  });
  test('the committed updates name the Kafka 4.0 versions krill generates', () => {
    const byFile = new Map(SCHEMA_UPDATES.map((u) => [u.file, u]));
    expect(byFile.get('message/MetadataResponse.json')?.validVersions).toBe('0-13');
    expect(byFile.get('message/ProduceRequest.json')?.validVersions).toBe('0-12');
    expect(byFile.get('message/TxnOffsetCommitRequest.json')?.validVersions).toBe('0-5');
    expect(byFile.get('message/EndTxnRequest.json')?.stable).toBe(true);
  });
});
