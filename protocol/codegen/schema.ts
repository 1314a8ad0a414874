/**
 * Reads Apache Kafka's JSON message schemas (JSON with `//` comments) into a resolved model: version
 * ranges parsed, defaults parsed per type, struct types resolved (inline and commonStructs), and for
 * every struct the range of message versions in which it can appear (its "context"), which lets the
 * emitter drop version tests that are always true or always false there.
 *
 * Only structure is kept; `about` text and comments are dropped on purpose (generated files must
 * not carry Kafka's prose).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applySchemaUpdates, SCHEMA_UPDATES } from './schema-updates';

/** Inclusive version range; `hi` is Infinity for an open range (`N+`); empty when lo > hi. */
export interface Range {
  readonly lo: number;
  readonly hi: number;
}

export const NONE: Range = { lo: 0, hi: -1 };

export function isEmpty(r: Range): boolean {
  return r.lo > r.hi;
}

export function intersect(a: Range, b: Range): Range {
  const lo = Math.max(a.lo, b.lo);
  const hi = Math.min(a.hi, b.hi);
  return lo > hi ? NONE : { lo, hi };
}

/** Smallest range containing both. */
export function hull(a: Range, b: Range): Range {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi) };
}

/** a contains every version of b. */
export function covers(a: Range, b: Range): boolean {
  return isEmpty(b) || (a.lo <= b.lo && a.hi >= b.hi);
}

export function parseRange(s: string | undefined, what: string): Range {
  if (s === undefined) throw new Error(`${what}: missing version range`);
  const t = s.trim();
  if (t === 'none') return NONE;
  let m = /^(\d+)\+$/.exec(t);
  if (m) return { lo: Number(m[1]), hi: Infinity };
  m = /^(\d+)-(\d+)$/.exec(t);
  if (m) {
    const lo = Number(m[1]);
    const hi = Number(m[2]);
    if (hi < lo) throw new Error(`${what}: bad version range ${JSON.stringify(s)}`);
    return { lo, hi };
  }
  m = /^(\d+)$/.exec(t);
  if (m) return { lo: Number(m[1]), hi: Number(m[1]) };
  throw new Error(`${what}: bad version range ${JSON.stringify(s)}`);
}

export function rangeToString(r: Range): string {
  if (isEmpty(r)) return 'none';
  if (r.hi === Infinity) return `${r.lo}+`;
  return r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`;
}

export type Primitive =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint16'
  | 'uint32'
  | 'float64'
  | 'uuid'
  | 'string'
  | 'bytes'
  | 'records';

const PRIMITIVES = new Set<string>([
  'bool',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint16',
  'uint32',
  'float64',
  'uuid',
  'string',
  'bytes',
  'records',
]);

export function isPrimitive(t: string): t is Primitive {
  return PRIMITIVES.has(t);
}

/** A parsed default. `empty` = empty bytes/array, or a struct with every field at its default. */
export type DefaultValue =
  | { k: 'num'; v: number }
  | { k: 'big'; v: bigint }
  | { k: 'bool'; v: boolean }
  | { k: 'str'; v: string }
  | { k: 'null' }
  | { k: 'empty' };

export interface FieldModel {
  readonly name: string;
  /** camelCase property name. */
  readonly prop: string;
  readonly kind: Primitive | 'struct' | 'array';
  /** Element type of an array. */
  readonly elem?: Primitive | 'struct';
  /** Struct of a struct field or a struct array. */
  struct?: StructModel;
  /** Type name of the struct (schema spelling), for struct fields and struct arrays. */
  readonly structType?: string;
  readonly versions: Range;
  readonly nullable: Range;
  /** Tagged versions; NONE when the field is never tagged. */
  readonly tagged: Range;
  readonly tag?: number;
  readonly ignorable: boolean;
  /** Field-level flexibleVersions override (string/bytes only). */
  readonly flexOverride?: Range;
  readonly def: DefaultValue;
  /** The raw default string from the schema, if any. */
  readonly rawDefault?: string;
}

export interface StructModel {
  /** Struct type name as in the schema (the message name for the root struct). */
  readonly schemaName: string;
  /** Unique TypeScript name: message name + struct name. */
  readonly tsName: string;
  readonly fields: FieldModel[];
  /** Versions in which this struct is read or written (from the message down to here). */
  ctx: Range;
  readonly isRoot: boolean;
}

export type MessageType = 'request' | 'response' | 'header' | 'data' | 'metadata';

export interface MessageModel {
  /** Path relative to the schema root, e.g. `message/ProduceRequest.json`. */
  readonly file: string;
  /** Schema folder: message, metadata, group-coordinator, ... */
  readonly dir: string;
  readonly name: string;
  readonly type: MessageType;
  readonly apiKey?: number;
  readonly valid: Range;
  readonly flexible: Range;
  readonly listeners?: string[];
  readonly latestVersionUnstable: boolean;
  readonly deprecated?: Range;
  readonly root: StructModel;
  /** Every struct of the message, root first, in definition order. */
  readonly structs: StructModel[];
}

/** Removes `//` comments that are outside string literals. */
export function stripComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[++i];
      } else if (c === '"') {
        inString = false;
      }
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

export function camelCase(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

interface RawField {
  name: string;
  type: string;
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  ignorable?: boolean;
  flexibleVersions?: string;
  fields?: RawField[];
  mapKey?: boolean;
  entityType?: string;
  zeroCopy?: boolean;
  about?: string;
}

interface RawStruct {
  name: string;
  versions?: string;
  fields: RawField[];
}

interface RawMessage {
  name: string;
  type: MessageType;
  apiKey?: number;
  validVersions: string;
  flexibleVersions: string;
  fields: RawField[];
  commonStructs?: RawStruct[];
  listeners?: string[];
  latestVersionUnstable?: boolean;
  deprecatedVersions?: string;
}

const INT_LIMITS: Record<string, [number, number]> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
  uint16: [0, 65535],
  uint32: [0, 4294967295],
};

function parseIntDefault(s: string, what: string): bigint {
  const t = s.trim();
  const neg = t.startsWith('-');
  const body = neg ? t.slice(1) : t;
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(body)) throw new Error(`${what}: bad integer default ${JSON.stringify(s)}`);
  const v = BigInt(body);
  return neg ? -v : v;
}

function parseDefault(f: RawField, kind: FieldModel['kind'], versions: Range, nullable: Range, what: string): DefaultValue {
  const raw = f.default === undefined ? undefined : String(f.default);
  const nullableEverywhere = !isEmpty(versions) && covers(nullable, versions);
  switch (kind) {
    case 'bool':
      if (raw === undefined) return { k: 'bool', v: false };
      if (raw === 'true' || raw === 'false') return { k: 'bool', v: raw === 'true' };
      throw new Error(`${what}: bad bool default ${raw}`);
    case 'int8':
    case 'int16':
    case 'int32':
    case 'uint16':
    case 'uint32': {
      if (raw === undefined) return { k: 'num', v: 0 };
      const v = parseIntDefault(raw, what);
      const [min, max] = INT_LIMITS[kind];
      if (v < BigInt(min) || v > BigInt(max)) throw new Error(`${what}: default ${raw} out of range for ${kind}`);
      return { k: 'num', v: Number(v) };
    }
    case 'int64': {
      if (raw === undefined) return { k: 'big', v: 0n };
      const v = parseIntDefault(raw, what);
      if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new Error(`${what}: default ${raw} out of range for int64`);
      return { k: 'big', v };
    }
    case 'float64': {
      if (raw === undefined) return { k: 'num', v: 0 };
      const v = Number(raw);
      if (Number.isNaN(v) && raw.trim() !== 'NaN') throw new Error(`${what}: bad float64 default ${raw}`);
      return { k: 'num', v };
    }
    case 'uuid': {
      if (raw === undefined || raw === '') return { k: 'str', v: 'AAAAAAAAAAAAAAAAAAAAAA' };
      if (Buffer.from(raw, 'base64url').length !== 16) throw new Error(`${what}: bad uuid default ${raw}`);
      return { k: 'str', v: raw };
    }
    case 'string':
      if (raw === undefined) return { k: 'str', v: '' };
      if (raw === 'null') {
        if (!nullableEverywhere) throw new Error(`${what}: null default on a field that is not nullable in all versions`);
        return { k: 'null' };
      }
      return { k: 'str', v: raw };
    default:
      // bytes, records, arrays, structs: only empty or null.
      if (raw === undefined || raw === '') return { k: 'empty' };
      if (raw === 'null') {
        if (!nullableEverywhere) throw new Error(`${what}: null default on a field that is not nullable in all versions`);
        return { k: 'null' };
      }
      throw new Error(`${what}: default ${JSON.stringify(raw)} not allowed for ${kind}`);
  }
}

class MessageBuilder {
  private readonly structs = new Map<string, StructModel>();
  private readonly order: StructModel[] = [];
  private readonly pending: { field: FieldModel; typeName: string; what: string }[] = [];
  private readonly common = new Map<string, RawStruct>();

  constructor(private readonly msg: RawMessage) {
    for (const s of msg.commonStructs ?? []) {
      if (this.common.has(s.name)) throw new Error(`${msg.name}: commonStruct ${s.name} defined twice`);
      this.common.set(s.name, s);
    }
  }

  build(): { root: StructModel; structs: StructModel[] } {
    const root = this.defineStruct(this.msg.name, this.msg.name, this.msg.fields, true);
    // commonStructs: defined in their declared order after the inline ones they may reference.
    for (const s of this.msg.commonStructs ?? []) {
      if (this.structs.has(s.name)) throw new Error(`${this.msg.name}: struct ${s.name} defined twice`);
      this.defineStruct(s.name, this.structTsName(s.name), s.fields, false);
    }
    for (const p of this.pending) {
      const s = this.structs.get(p.typeName);
      if (!s) throw new Error(`${p.what}: unknown struct type ${p.typeName}`);
      p.field.struct = s;
    }
    return { root, structs: this.order };
  }

  /** Message name + struct name, unless the struct name already starts with the message name. */
  private structTsName(schemaName: string): string {
    return schemaName.startsWith(this.msg.name) ? schemaName : this.msg.name + schemaName;
  }

  private defineStruct(schemaName: string, tsName: string, rawFields: RawField[], isRoot: boolean): StructModel {
    if (this.order.some((o) => o.tsName === tsName)) throw new Error(`${this.msg.name}: two structs named ${tsName}`);
    const s: StructModel = { schemaName, tsName, fields: [], ctx: NONE, isRoot };
    if (!isRoot) {
      if (this.structs.has(schemaName)) throw new Error(`${this.msg.name}: struct ${schemaName} defined twice`);
      this.structs.set(schemaName, s);
    }
    this.order.push(s);
    const tags = new Set<number>();
    const props = new Set<string>();
    for (const rf of rawFields) {
      const f = this.field(rf, `${this.msg.name}.${schemaName}.${rf.name}`);
      if (props.has(f.prop)) throw new Error(`${this.msg.name}.${schemaName}: duplicate field ${f.prop}`);
      props.add(f.prop);
      if (f.tag !== undefined) {
        if (tags.has(f.tag)) throw new Error(`${this.msg.name}.${schemaName}: duplicate tag ${f.tag}`);
        tags.add(f.tag);
      }
      s.fields.push(f);
    }
    return s;
  }

  private field(rf: RawField, what: string): FieldModel {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(rf.name)) throw new Error(`${what}: bad field name`);
    const tagged = rf.taggedVersions === undefined ? NONE : parseRange(rf.taggedVersions, what);
    const versions = rf.versions === undefined ? tagged : parseRange(rf.versions, what);
    if (rf.versions === undefined && rf.taggedVersions === undefined) throw new Error(`${what}: no versions`);
    const nullable = rf.nullableVersions === undefined ? NONE : parseRange(rf.nullableVersions, what);
    if ((rf.tag === undefined) !== (rf.taggedVersions === undefined)) throw new Error(`${what}: tag without taggedVersions`);
    if (!isEmpty(tagged)) {
      if (!covers(versions, tagged)) throw new Error(`${what}: taggedVersions outside versions`);
      if (!covers(parseRange(this.msg.flexibleVersions, what), tagged)) throw new Error(`${what}: tagged outside flexible`);
      // The regular range (versions minus tagged) must stay one range.
      if (tagged.hi !== Infinity && tagged.hi < versions.hi) throw new Error(`${what}: tagged range must be open-ended`);
      if (rf.mapKey) throw new Error(`${what}: a tagged field cannot be a map key`);
    }
    let kind: FieldModel['kind'];
    let elem: Primitive | 'struct' | undefined;
    let structType: string | undefined;
    const t = rf.type;
    if (t.startsWith('[]')) {
      kind = 'array';
      const e = t.slice(2);
      if (isPrimitive(e)) {
        if (e === 'bytes' || e === 'records') throw new Error(`${what}: arrays of ${e} are not supported`);
        elem = e;
      } else {
        if (!/^[A-Z][A-Za-z0-9]*$/.test(e)) throw new Error(`${what}: bad element type ${e}`);
        elem = 'struct';
        structType = e;
      }
    } else if (isPrimitive(t)) {
      kind = t;
    } else {
      if (!/^[A-Z][A-Za-z0-9]*$/.test(t)) throw new Error(`${what}: bad type ${t}`);
      kind = 'struct';
      structType = t;
    }
    if (!isEmpty(nullable) && !['string', 'bytes', 'records', 'array', 'struct'].includes(kind)) {
      throw new Error(`${what}: type ${t} cannot be nullable`);
    }
    let flexOverride: Range | undefined;
    if (rf.flexibleVersions !== undefined) {
      if (kind !== 'string' && kind !== 'bytes') throw new Error(`${what}: flexibleVersions only on string/bytes`);
      flexOverride = parseRange(rf.flexibleVersions, what);
    }
    const def = parseDefault(rf, kind, versions, nullable, what);
    const f: FieldModel = {
      name: rf.name,
      prop: camelCase(rf.name),
      kind,
      elem,
      structType,
      versions,
      nullable,
      tagged,
      tag: rf.tag,
      ignorable: rf.ignorable === true,
      flexOverride,
      def,
      rawDefault: rf.default === undefined ? undefined : String(rf.default),
    };
    if (structType !== undefined) {
      if (rf.fields) {
        this.defineStruct(structType, this.structTsName(structType), rf.fields, false);
      } else if (!this.common.has(structType)) {
        throw new Error(`${what}: struct ${structType} has no fields and is not a commonStruct`);
      }
      this.pending.push({ field: f, typeName: structType, what });
    } else if (rf.fields) {
      throw new Error(`${what}: fields on a non-struct type`);
    }
    return f;
  }
}

/** Marks, for every struct, the versions in which it is reached from the root. */
function computeContexts(root: StructModel, structs: StructModel[], valid: Range): void {
  const visit = (s: StructModel, ctx: Range): void => {
    if (isEmpty(ctx)) return;
    const merged = hull(s.ctx, ctx);
    if (!isEmpty(s.ctx) && merged.lo === s.ctx.lo && merged.hi === s.ctx.hi) return;
    s.ctx = merged;
    for (const f of s.fields) if (f.struct) visit(f.struct, intersect(f.versions, merged));
  };
  visit(root, valid);
  // Structs never reached on the wire (a field outside every valid version) still get types and
  // codecs; give them the message's range so their version tests stay meaningful.
  for (const s of structs) if (isEmpty(s.ctx)) s.ctx = valid;
}

export function parseMessage(text: string, file: string): MessageModel {
  const raw = applySchemaUpdates(file, JSON.parse(stripComments(text)) as RawMessage);
  const what = file;
  if (typeof raw.name !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(raw.name)) throw new Error(`${what}: bad name`);
  const types: MessageType[] = ['request', 'response', 'header', 'data', 'metadata'];
  if (!types.includes(raw.type)) throw new Error(`${what}: unknown type ${raw.type}`);
  const valid = parseRange(raw.validVersions, what);
  const flexible = parseRange(raw.flexibleVersions, what);
  if (!isEmpty(flexible) && flexible.hi !== Infinity) throw new Error(`${what}: flexibleVersions must be open-ended`);
  const { root, structs } = new MessageBuilder(raw).build();
  computeContexts(root, structs, valid);
  const dir = path.dirname(file);
  return {
    file,
    dir,
    name: raw.name,
    type: raw.type,
    apiKey: raw.apiKey,
    valid,
    flexible,
    listeners: raw.listeners,
    latestVersionUnstable: raw.latestVersionUnstable === true,
    deprecated: raw.deprecatedVersions === undefined ? undefined : parseRange(raw.deprecatedVersions, what),
    root,
    structs,
  };
}

export const SCHEMA_DIRS = [
  'message',
  'group-coordinator',
  'transaction-coordinator',
  'metadata',
  'storage',
  'share-coordinator',
  'raft',
] as const;

/** Every schema file under the schema root, sorted for a stable output. */
export function loadSchemas(schemaRoot: string): MessageModel[] {
  const out: MessageModel[] = [];
  for (const u of SCHEMA_UPDATES) {
    if (!fs.existsSync(path.join(schemaRoot, u.file))) throw new Error(`schema update for ${u.file}: no such schema under ${schemaRoot}`);
  }
  for (const dir of SCHEMA_DIRS) {
    const full = path.join(schemaRoot, dir);
    if (!fs.existsSync(full)) throw new Error(`schema folder ${full} not found`);
    const files = fs
      .readdirSync(full)
      .filter((f) => f.endsWith('.json'))
      .sort();
    for (const f of files) {
      const rel = `${dir}/${f}`;
      try {
        out.push(parseMessage(fs.readFileSync(path.join(full, f), 'utf8'), rel));
      } catch (e) {
        throw new Error(`${rel}: ${(e as Error).message}`);
      }
    }
  }
  return out;
}
