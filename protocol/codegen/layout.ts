/**
 * Decides which generated module each schema lands in, and renders the modules, the registries
 * (index.ts for the APIs, records/index.ts for the log and file records) and the structural
 * descriptors (descriptors.ts) the tests use to build random messages.
 *
 * Layout of protocol/generated/:
 *   <api>.ts                       request + response of one API (produce.ts, list-offsets.ts, ...)
 *   request-header.ts, response-header.ts
 *   message-data/<name>.ts         the `data` schemas of message/ (consumer protocol, KRaft control records)
 *   records/<folder>/<name>.ts     group-coordinator, transaction-coordinator, metadata, storage, share-coordinator, raft
 *   index.ts, records/index.ts, descriptors.ts
 */
import * as path from 'node:path';
import { EmitResult, HEADER_LINE, MessageEmitter, quote } from './emit';
import { FieldModel, MessageModel, Range, isEmpty } from './schema';

export function kebab(name: string): string {
  return name
    .replace(/KRaft/g, 'Kraft')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

function constCase(name: string): string {
  return kebab(name).replace(/-/g, '_').toUpperCase();
}

export function apiName(m: MessageModel): string {
  return m.name.replace(/(Request|Response)$/, '');
}

interface Module {
  /** Path under protocol/generated/, e.g. `produce.ts`. */
  path: string;
  messages: MessageModel[];
}

/** Where each schema goes; request and response of an API share one module. */
function planModules(models: MessageModel[]): Module[] {
  const byPath = new Map<string, Module>();
  for (const m of models) {
    let p: string;
    if (m.dir === 'message') {
      if (m.type === 'request' || m.type === 'response') p = `${kebab(apiName(m))}.ts`;
      else if (m.type === 'header') p = `${kebab(m.name)}.ts`;
      else p = `message-data/${kebab(m.name)}.ts`;
    } else {
      p = `records/${m.dir}/${kebab(m.name)}.ts`;
    }
    let mod = byPath.get(p);
    if (!mod) {
      mod = { path: p, messages: [] };
      byPath.set(p, mod);
    }
    mod.messages.push(m);
  }
  const mods = [...byPath.values()];
  for (const mod of mods) {
    // request before response
    mod.messages.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'request' ? -1 : 1));
  }
  return mods.sort((a, b) => a.path.localeCompare(b.path));
}

/** Relative import prefix from a module under protocol/generated/ to protocol/. */
function toProtocol(modulePath: string): string {
  const depth = modulePath.split('/').length - 1;
  return '../'.repeat(depth + 1);
}

function renderModule(mod: Module): string {
  const results: EmitResult[] = mod.messages.map((m) => new MessageEmitter(m).emit());
  const support = new Set<string>();
  let writerValue = false;
  for (const r of results) {
    r.support.forEach((s) => support.add(s));
    writerValue = writerValue || r.writerValue;
  }
  const up = toProtocol(mod.path);
  const lines: string[] = [HEADER_LINE];
  lines.push(`// Source: ${mod.messages.map((m) => m.file).join(', ')}`);
  lines.push(`import type { Input } from '${up}primitives/input';`);
  lines.push(`import type { Reader } from '${up}primitives/reader';`);
  lines.push(`import ${writerValue ? '' : 'type '}{ Writer } from '${up}primitives/writer';`);
  const names = [...support].sort();
  if (names.length > 0) {
    const onlyTypes = names.every((n) => n === 'TaggedField');
    const list = names.map((n) => (n === 'TaggedField' && !onlyTypes ? 'type TaggedField' : n)).join(', ');
    lines.push(`import ${onlyTypes ? 'type ' : ''}{ ${list} } from '${up}primitives/codec-support';`);
  }
  lines.push('');
  for (const m of mod.messages) {
    if (m.type === 'metadata') {
      lines.push(`/** Record type id (apiKey) of ${m.name}. */`);
      lines.push(`export const ${constCase(m.name)}_TYPE = ${m.apiKey};`);
      lines.push('');
    }
  }
  for (const r of results) lines.push(...r.lines);
  while (lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n') + '\n';
}

/** Import specifier of generated module `p` from a module in folder `fromDir` (both under protocol/generated). */
function importPath(p: string, fromDir = ''): string {
  const rel = path.posix.relative(fromDir === '' ? '.' : fromDir, p.replace(/\.ts$/, ''));
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function flexLo(r: Range): string {
  return isEmpty(r) ? 'Infinity' : String(r.lo);
}

function renderApiIndex(models: MessageModel[], mods: Module[]): string {
  const moduleOf = new Map<MessageModel, Module>();
  for (const mod of mods) for (const m of mod.messages) moduleOf.set(m, mod);
  const reqs = models.filter((m) => m.dir === 'message' && m.type === 'request').sort((a, b) => a.apiKey! - b.apiKey!);
  const resps = new Map<number, MessageModel>();
  for (const m of models) if (m.dir === 'message' && m.type === 'response') resps.set(m.apiKey!, m);
  const alias = new Map<Module, string>();
  const lines: string[] = [HEADER_LINE];
  lines.push(`import type { Input } from '../primitives/input';`);
  lines.push(`import type { Reader } from '../primitives/reader';`);
  lines.push(`import type { Writer } from '../primitives/writer';`);
  // Type-only imports: each API's module is loaded on first use of its codecs (below), so a
  // process pays for the codecs it uses, not for all 88 at startup.
  reqs.forEach((q, i) => {
    const mod = moduleOf.get(q)!;
    alias.set(mod, `a${i}`);
    lines.push(`import type * as a${i} from '${importPath(mod.path)}';`);
  });
  lines.push('');
  // Headers are not re-exported: protocol/header.ts is the header API (it derives the version).
  // Only types are re-exported here; import codec functions from their own module.
  for (const mod of mods) {
    if (mod.path.startsWith('records/') || mod.messages.some((m) => m.type === 'header')) continue;
    lines.push(`export type * from '${importPath(mod.path)}';`);
  }
  lines.push('');
  lines.push(
    '/** Loads a module once, on first call. */',
    'function lazy<T>(load: () => T): () => T {',
    '  let m: T | undefined;',
    '  return () => (m ??= load());',
    '}',
    '',
  );
  reqs.forEach((q, i) => {
    const mod = moduleOf.get(q)!;
    lines.push(`const m${i} = lazy(() => require('${importPath(mod.path)}') as typeof a${i});`);
  });
  lines.push('');
  lines.push(
    '/** One API: versions from its request schema, listeners, and the codecs of its request and response bodies. */',
    'export interface ApiInfo<Req = unknown, Res = unknown> {',
    '  readonly apiKey: number;',
    "  /** e.g. 'Produce' */",
    '  readonly name: string;',
    '  readonly minVersion: number;',
    '  readonly maxVersion: number;',
    '  /** First flexible version; Infinity when the API is never flexible. */',
    '  readonly firstFlexibleVersion: number;',
    '  readonly latestVersionUnstable: boolean;',
    '  readonly deprecatedVersions?: { readonly min: number; readonly max: number };',
    "  /** Server roles that accept the API: 'broker', 'controller', 'zkBroker'. */",
    '  readonly listeners: readonly string[];',
    '  readRequest(r: Reader, version: number): Req;',
    '  writeRequest(w: Writer, version: number, m: Input<Req>): void;',
    '  readResponse(r: Reader, version: number): Res;',
    '  writeResponse(w: Writer, version: number, m: Input<Res>): void;',
    '}',
    '',
  );
  lines.push('export const ApiKey = {');
  for (const q of reqs) lines.push(`  ${apiName(q)}: ${q.apiKey},`);
  lines.push('} as const;', 'export type ApiName = keyof typeof ApiKey;', '');
  lines.push('/** Request and response body types of each API. */', 'export interface ApiMessages {');
  for (const q of reqs) {
    const a = alias.get(moduleOf.get(q)!)!;
    const p = resps.get(q.apiKey!);
    if (!p) throw new Error(`${q.name}: no response schema`);
    lines.push(`  ${apiName(q)}: { request: ${a}.${q.name}; response: ${a}.${p.name} };`);
  }
  lines.push('}', '');
  lines.push(
    "export const APIS: { readonly [K in ApiName]: ApiInfo<ApiMessages[K]['request'], ApiMessages[K]['response']> } = {",
  );
  for (const q of reqs) {
    const a = alias.get(moduleOf.get(q)!)!;
    const p = resps.get(q.apiKey!)!;
    if (p.valid.lo !== q.valid.lo || p.valid.hi !== q.valid.hi) throw new Error(`${q.name}: response versions differ`);
    if (p.flexible.lo !== q.flexible.lo) throw new Error(`${q.name}: response flexible versions differ`);
    if (q.valid.hi === Infinity) throw new Error(`${q.name}: open validVersions`);
    const parts = [
      `apiKey: ${q.apiKey}`,
      `name: ${quote(apiName(q))}`,
      `minVersion: ${q.valid.lo}`,
      `maxVersion: ${q.valid.hi}`,
      `firstFlexibleVersion: ${flexLo(q.flexible)}`,
      `latestVersionUnstable: ${q.latestVersionUnstable}`,
    ];
    if (q.deprecated && !isEmpty(q.deprecated)) {
      parts.push(`deprecatedVersions: { min: ${q.deprecated.lo}, max: ${Math.min(q.deprecated.hi, q.valid.hi)} }`);
    }
    parts.push(`listeners: [${(q.listeners ?? []).map(quote).join(', ')}]`);
    lines.push(`  ${apiName(q)}: {`);
    lines.push(`    ${parts.join(', ')},`);
    const m = a.replace(/^a/, 'm');
    lines.push(`    readRequest: (r, v) => ${m}().read${q.name}(r, v), writeRequest: (w, v, x) => ${m}().write${q.name}(w, v, x),`);
    lines.push(`    readResponse: (r, v) => ${m}().read${p.name}(r, v), writeResponse: (w, v, x) => ${m}().write${p.name}(w, v, x),`);
    lines.push('  },');
  }
  lines.push('};', '');
  lines.push(
    'const BY_KEY: (ApiInfo | undefined)[] = [];',
    'for (const api of Object.values(APIS) as ApiInfo[]) BY_KEY[api.apiKey] = api;',
    '',
    '/** Every API, by ascending key. */',
    'export const ALL_APIS: readonly ApiInfo[] = BY_KEY.filter((a): a is ApiInfo => a !== undefined);',
    '',
    'export function apiByKey(apiKey: number): ApiInfo | undefined {',
    '  return Number.isInteger(apiKey) && apiKey >= 0 ? BY_KEY[apiKey] : undefined;',
    '}',
    '',
    '/** Whether this version of the API uses the flexible (compact, tagged) encoding; false for an unknown API. */',
    'export function isFlexibleVersion(apiKey: number, apiVersion: number): boolean {',
    '  const api = apiByKey(apiKey);',
    '  return api !== undefined && apiVersion >= api.firstFlexibleVersion;',
    '}',
    '',
    '/** Request header version: 2 for flexible versions, else 1; ControlledShutdown v0 uses 0. */',
    'export function requestHeaderVersion(apiKey: number, apiVersion: number): number {',
    `  if (apiKey === ${findKey(reqs, 'ControlledShutdown')} && apiVersion === 0) return 0;`,
    '  return isFlexibleVersion(apiKey, apiVersion) ? 2 : 1;',
    '}',
    '',
    '/** Response header version: 1 for flexible versions, else 0; ApiVersions responses always use 0. */',
    'export function responseHeaderVersion(apiKey: number, apiVersion: number): number {',
    `  if (apiKey === ${findKey(reqs, 'ApiVersions')}) return 0;`,
    '  return isFlexibleVersion(apiKey, apiVersion) ? 1 : 0;',
    '}',
  );
  return lines.join('\n') + '\n';
}

function findKey(reqs: MessageModel[], name: string): number {
  const q = reqs.find((m) => apiName(m) === name);
  if (!q) throw new Error(`no ${name} request schema`);
  return q.apiKey!;
}

function renderRecordsIndex(models: MessageModel[], mods: Module[]): string {
  const recMods = mods.filter((m) => m.path.startsWith('records/'));
  const moduleOf = new Map<MessageModel, Module>();
  const alias = new Map<Module, string>();
  recMods.forEach((mod, i) => {
    alias.set(mod, `r${i}`);
    for (const m of mod.messages) moduleOf.set(m, mod);
  });
  const lines: string[] = [HEADER_LINE];
  lines.push(`import type { Input } from '../../primitives/input';`);
  lines.push(`import type { Reader } from '../../primitives/reader';`);
  lines.push(`import type { Writer } from '../../primitives/writer';`);
  for (const mod of recMods) lines.push(`import * as ${alias.get(mod)} from '${importPath(mod.path, 'records')}';`);
  lines.push('');
  for (const mod of recMods) lines.push(`export * from '${importPath(mod.path, 'records')}';`);
  lines.push('');
  lines.push(
    '/** One record schema: its versions and codecs. */',
    'export interface RecordSchemaInfo<T = unknown> {',
    '  readonly name: string;',
    '  readonly minVersion: number;',
    '  readonly maxVersion: number;',
    '  /** First flexible version; Infinity when never flexible. */',
    '  readonly firstFlexibleVersion: number;',
    '  read(r: Reader, version: number): T;',
    '  write(w: Writer, version: number, m: Input<T>): void;',
    '}',
    '',
    '/** A `metadata` schema: written after a varint frame version, record type and record version. */',
    'export interface MetadataRecordInfo<T = unknown> extends RecordSchemaInfo<T> {',
    '  readonly type: number;',
    '}',
    '',
    '/** A coordinator record type: the key version selects both the key and the value schema. */',
    'export interface CoordinatorRecordInfo {',
    '  readonly recordType: number;',
    '  readonly key: RecordSchemaInfo;',
    '  readonly value: RecordSchemaInfo;',
    '}',
    '',
  );
  const info = (m: MessageModel): string => {
    const a = alias.get(moduleOf.get(m)!)!;
    if (m.valid.hi === Infinity) throw new Error(`${m.name}: open validVersions`);
    return (
      `{ name: ${quote(m.name)}, minVersion: ${m.valid.lo}, maxVersion: ${m.valid.hi}, ` +
      `firstFlexibleVersion: ${flexLo(m.flexible)}, read: ${a}.read${m.name}, write: ${a}.write${m.name} }`
    );
  };
  const metadataList = (dir: string, constName: string, fnName: string, what: string): void => {
    const ms = models.filter((m) => m.dir === dir && m.type === 'metadata').sort((a, b) => a.apiKey! - b.apiKey!);
    const seen = new Set<number>();
    lines.push(`/** ${what}, by record type. */`);
    lines.push(`export const ${constName}: readonly MetadataRecordInfo[] = [`);
    for (const m of ms) {
      if (seen.has(m.apiKey!)) throw new Error(`${m.name}: duplicate record type ${m.apiKey}`);
      seen.add(m.apiKey!);
      lines.push(`  { type: ${m.apiKey}, ...${info(m)} },`);
    }
    lines.push('];');
    lines.push(`const ${constName}_BY_TYPE = new Map(${constName}.map((i) => [i.type, i]));`);
    lines.push(`export function ${fnName}(type: number): MetadataRecordInfo | undefined {`);
    lines.push(`  return ${constName}_BY_TYPE.get(type);`);
    lines.push('}', '');
  };
  metadataList('metadata', 'METADATA_RECORDS', 'metadataRecordByType', 'KRaft metadata log records (metadata/)');
  metadataList(
    'storage',
    'REMOTE_LOG_METADATA_RECORDS',
    'remoteLogMetadataRecordByType',
    'Remote-log (tiered storage) metadata records (storage/)',
  );
  const coordinator = (dir: string, constName: string, fnName: string, what: string): void => {
    const keys = models.filter((m) => m.dir === dir && m.name.endsWith('Key'));
    const entries: { type: number; line: string }[] = [];
    for (const k of keys) {
      const v = models.find((m) => m.dir === dir && m.name === k.name.replace(/Key$/, 'Value'));
      if (!v) throw new Error(`${k.name}: no value schema`);
      for (let t = k.valid.lo; t <= k.valid.hi; t++) {
        entries.push({ type: t, line: `  { recordType: ${t}, key: ${info(k)}, value: ${info(v)} },` });
      }
    }
    entries.sort((a, b) => a.type - b.type);
    for (let i = 1; i < entries.length; i++) {
      if (entries[i].type === entries[i - 1].type) throw new Error(`${dir}: duplicate key version ${entries[i].type}`);
    }
    lines.push(`/** ${what}: key version = record type. */`);
    lines.push(`export const ${constName}: readonly CoordinatorRecordInfo[] = [`);
    for (const e of entries) lines.push(e.line);
    lines.push('];');
    lines.push(`const ${constName}_BY_TYPE = new Map(${constName}.map((i) => [i.recordType, i]));`);
    lines.push(`export function ${fnName}(keyVersion: number): CoordinatorRecordInfo | undefined {`);
    lines.push(`  return ${constName}_BY_TYPE.get(keyVersion);`);
    lines.push('}', '');
  };
  coordinator(
    'group-coordinator',
    'CONSUMER_OFFSETS_RECORDS',
    'consumerOffsetsRecordByKeyVersion',
    '__consumer_offsets records (group-coordinator/)',
  );
  coordinator(
    'transaction-coordinator',
    'TRANSACTION_LOG_RECORDS',
    'transactionLogRecordByKeyVersion',
    '__transaction_state records (transaction-coordinator/)',
  );
  coordinator(
    'share-coordinator',
    'SHARE_GROUP_STATE_RECORDS',
    'shareGroupStateRecordByKeyVersion',
    '__share_group_state records (share-coordinator/)',
  );
  while (lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n') + '\n';
}

function rangeLit(r: Range): string {
  return `[${r.lo}, ${r.hi === Infinity ? 'Infinity' : r.hi}]`;
}

function fieldDescriptor(f: FieldModel): string {
  const parts = [`name: ${quote(f.prop)}`, `type: ${quote(f.kind)}`];
  if (f.elem) parts.push(`elem: ${quote(f.elem)}`);
  if (f.struct) parts.push(`struct: ${quote(f.struct.tsName)}`);
  parts.push(`versions: ${rangeLit(f.versions)}`);
  if (!isEmpty(f.nullable)) parts.push(`nullable: ${rangeLit(f.nullable)}`);
  if (!isEmpty(f.tagged)) parts.push(`tagged: ${rangeLit(f.tagged)}`, `tag: ${f.tag}`);
  if (f.ignorable) parts.push('ignorable: true');
  if (f.flexOverride) parts.push(`flexible: ${isEmpty(f.flexOverride) ? 'null' : rangeLit(f.flexOverride)}`);
  const d = f.def;
  if (d.k === 'num') parts.push(`default: ${Object.is(d.v, -0) ? 0 : d.v}`);
  else if (d.k === 'big') parts.push(`default: ${d.v}n`);
  else if (d.k === 'bool') parts.push(`default: ${d.v}`);
  else if (d.k === 'str') parts.push(`default: ${quote(d.v)}`);
  else if (d.k === 'null') parts.push('default: null');
  return `{ ${parts.join(', ')} }`;
}

function renderDescriptors(models: MessageModel[], mods: Module[]): string {
  const moduleOf = new Map<MessageModel, Module>();
  for (const mod of mods) for (const m of mod.messages) moduleOf.set(m, mod);
  const lines: string[] = [HEADER_LINE];
  lines.push(
    '/** Structure of every schema (no documentation text): enough to build and check random messages. */',
    'export type VersionRange = readonly [number, number];',
    '',
    'export interface FieldDescriptor {',
    '  /** camelCase property name */',
    '  readonly name: string;',
    "  /** a primitive type name, 'struct' or 'array' */",
    '  readonly type: string;',
    '  /** array element type: a primitive type name or struct */',
    '  readonly elem?: string;',
    '  /** TypeScript name of the struct (struct fields and struct arrays) */',
    '  readonly struct?: string;',
    '  readonly versions: VersionRange;',
    '  readonly nullable?: VersionRange;',
    '  readonly tagged?: VersionRange;',
    '  readonly tag?: number;',
    '  readonly ignorable?: boolean;',
    '  /** field-level flexibleVersions override; null = never flexible */',
    '  readonly flexible?: VersionRange | null;',
    '  /** default value; absent = zero, empty string, empty bytes/array or an all-default struct */',
    '  readonly default?: number | bigint | boolean | string | null;',
    '}',
    '',
    'export interface MessageDescriptor {',
    '  readonly name: string;',
    "  /** schema file, e.g. 'message/ProduceRequest.json' */",
    '  readonly file: string;',
    "  readonly type: 'request' | 'response' | 'header' | 'data' | 'metadata';",
    '  readonly apiKey?: number;',
    '  readonly validVersions: VersionRange;',
    '  /** null = never flexible */',
    '  readonly flexibleVersions: VersionRange | null;',
    "  /** module path relative to protocol/generated, e.g. './produce' */",
    '  readonly module: string;',
    '  /** the root struct is `structs[name]`; read<name>/write<name> are exported by the module */',
    '  readonly structs: { readonly [tsName: string]: readonly FieldDescriptor[] };',
    '}',
    '',
    'export const MESSAGE_DESCRIPTORS: readonly MessageDescriptor[] = [',
  );
  const sorted = [...models].sort((a, b) => a.file.localeCompare(b.file));
  for (const m of sorted) {
    const head = [
      `name: ${quote(m.name)}`,
      `file: ${quote(m.file)}`,
      `type: ${quote(m.type)}`,
      ...(m.apiKey !== undefined ? [`apiKey: ${m.apiKey}`] : []),
      `validVersions: ${rangeLit(m.valid)}`,
      `flexibleVersions: ${isEmpty(m.flexible) ? 'null' : rangeLit(m.flexible)}`,
      `module: ${quote(importPath(moduleOf.get(m)!.path))}`,
    ];
    lines.push(`  {`);
    lines.push(`    ${head.join(', ')},`);
    lines.push('    structs: {');
    for (const s of m.structs) {
      lines.push(`      ${s.tsName}: [`);
      for (const f of s.fields) lines.push(`        ${fieldDescriptor(f)},`);
      lines.push('      ],');
    }
    lines.push('    },');
    lines.push('  },');
  }
  lines.push('];');
  return lines.join('\n') + '\n';
}

/** Every generated file: path under protocol/generated/ -> content. */
export function renderAll(models: MessageModel[]): Map<string, string> {
  const mods = planModules(models);
  const out = new Map<string, string>();
  for (const mod of mods) out.set(mod.path, renderModule(mod));
  out.set('index.ts', renderApiIndex(models, mods));
  out.set('records/index.ts', renderRecordsIndex(models, mods));
  out.set('descriptors.ts', renderDescriptors(models, mods));
  checkExportCollisions(mods);
  return out;
}

/** index.ts and records/index.ts re-export whole modules: names must not collide. */
function checkExportCollisions(mods: Module[]): void {
  for (const records of [false, true]) {
    const seen = new Map<string, string>();
    for (const mod of mods) {
      if (mod.path.startsWith('records/') !== records) continue;
      for (const m of mod.messages) {
        for (const s of m.structs) {
          const prev = seen.get(s.tsName);
          if (prev !== undefined && prev !== mod.path) throw new Error(`export ${s.tsName} in ${prev} and ${mod.path}`);
          seen.set(s.tsName, mod.path);
        }
      }
    }
  }
}
