/**
 * Round trips of every generated codec at every valid version, driven by the structural
 * descriptors: random messages that respect versions, nullability and tagged fields (plus unknown
 * tagged fields, which must survive), written, read back, compared with what was written (absent
 * fields at their defaults), and re-written to the identical bytes. Also the encoder's version
 * rules: non-ignorable fields set at a version without them throw, ignorable ones are dropped, null
 * in a non-nullable field throws.
 */
import * as path from 'node:path';
import { FieldDescriptor, MESSAGE_DESCRIPTORS, MessageDescriptor, VersionRange } from './generated/descriptors';
import { UnsupportedVersionError } from './primitives/codec-support';
import { Reader } from './primitives/reader';
import { Writer } from './primitives/writer';
import { ZERO_UUID } from './primitives/uuid';

type Obj = Record<string, unknown>;
type ReadFn = (r: Reader, version: number) => Obj;
type WriteFn = (w: Writer, version: number, m: unknown) => void;

function codecs(d: MessageDescriptor): { read: ReadFn; write: WriteFn } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(path.join(__dirname, 'generated', d.module)) as Record<string, unknown>;
  const read = mod[`read${d.name}`] as ReadFn;
  const write = mod[`write${d.name}`] as WriteFn;
  if (typeof read !== 'function' || typeof write !== 'function') throw new Error(`${d.module}: no codecs for ${d.name}`);
  return { read, write };
}

function inRange(r: VersionRange | null | undefined, v: number): boolean {
  return r != null && v >= r[0] && v <= r[1];
}

function versionsOf(d: MessageDescriptor): number[] {
  const out: number[] = [];
  for (let v = d.validVersions[0]; v <= d.validVersions[1]; v++) out.push(v);
  return out;
}

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  constructor(
    private readonly d: MessageDescriptor,
    private readonly rand: () => number,
  ) {}

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  defaultOf(f: FieldDescriptor): unknown {
    if (f.default !== undefined) return f.default;
    switch (f.type) {
      case 'bool':
        return false;
      case 'int64':
        return 0n;
      case 'uuid':
        return ZERO_UUID;
      case 'string':
        return '';
      case 'bytes':
      case 'records':
        return Buffer.alloc(0);
      case 'array':
        return [];
      case 'struct':
        return this.defaultStruct(f.struct!);
      default:
        return 0;
    }
  }

  defaultStruct(name: string): Obj {
    const out: Obj = {};
    for (const f of this.d.structs[name]) out[f.name] = this.defaultOf(f);
    return out;
  }

  private string(): string {
    const alphabet = ['a', 'b', 'Z', '0', '-', '_', '.', 'é', '漢', '😀', ' '];
    const n = this.chance(0.2) ? 0 : this.int(1, 12);
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(0, alphabet.length - 1)];
    return s;
  }

  private bytes(): Buffer {
    const n = this.chance(0.2) ? 0 : this.int(1, 24);
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(0, 255);
    return b;
  }

  private int64(): bigint {
    switch (this.int(0, 4)) {
      case 0:
        return -(2n ** 63n);
      case 1:
        return 2n ** 63n - 1n;
      case 2:
        return BigInt(this.int(-5, 5));
      default:
        return BigInt.asIntN(64, (BigInt(this.int(0, 0xffffffff)) << 32n) | BigInt(this.int(0, 0xffffffff)));
    }
  }

  primitive(type: string): unknown {
    switch (type) {
      case 'bool':
        return this.chance(0.5);
      case 'int8':
        return this.int(-128, 127);
      case 'int16':
        return this.int(-32768, 32767);
      case 'int32':
        return this.chance(0.2) ? this.int(-2, 2) : this.int(-2147483648, 2147483647);
      case 'uint16':
        return this.int(0, 65535);
      case 'uint32':
        return this.int(0, 4294967295);
      case 'int64':
        return this.int64();
      case 'float64':
        return this.chance(0.3) ? this.int(-3, 3) : (this.rand() - 0.5) * 1e12;
      case 'uuid':
        return this.bytes16();
      case 'string':
        return this.string();
      case 'bytes':
      case 'records':
        return this.bytes();
      default:
        throw new Error(`unknown primitive ${type}`);
    }
  }

  private bytes16(): string {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) b[i] = this.int(0, 255);
    return b.toString('base64url');
  }

  /** Unknown tagged fields for a struct at version v: tags not known at v, ascending. */
  private unknownTags(fields: readonly FieldDescriptor[], v: number): { tag: number; data: Buffer }[] | undefined {
    if (!inRange(this.d.flexibleVersions, v) || !this.chance(0.3)) return undefined;
    const known = new Set(fields.filter((f) => inRange(f.tagged, v)).map((f) => f.tag!));
    const out: { tag: number; data: Buffer }[] = [];
    for (let tag = 0; tag < 8; tag++) {
      if (!known.has(tag) && this.chance(0.3)) out.push({ tag, data: this.bytes() });
    }
    if (this.chance(0.3)) out.push({ tag: this.int(200, 20000), data: this.bytes() });
    return out.length > 0 ? out : undefined;
  }

  /** A random struct at version v: what to write, and what reading it back must give. */
  struct(name: string, v: number, depth: number): { input: Obj; expected: Obj } {
    const fields = this.d.structs[name];
    const input: Obj = {};
    const expected: Obj = {};
    for (const f of fields) {
      if (!inRange(f.versions, v) || this.chance(0.15)) {
        expected[f.name] = this.defaultOf(f);
        continue;
      }
      const { input: i, expected: e } = this.value(f, v, depth);
      input[f.name] = i;
      expected[f.name] = e;
    }
    const unk = this.unknownTags(fields, v);
    if (unk) {
      input._unknownTaggedFields = unk;
      expected._unknownTaggedFields = unk;
    }
    return { input, expected };
  }

  value(f: FieldDescriptor, v: number, depth: number): { input: unknown; expected: unknown } {
    if (inRange(f.nullable, v) && this.chance(0.25)) return { input: null, expected: null };
    if (f.type === 'struct') return this.struct(f.struct!, v, depth + 1);
    if (f.type === 'array') {
      const n = depth > 3 || this.chance(0.25) ? 0 : this.int(1, 3);
      const input: unknown[] = [];
      const expected: unknown[] = [];
      for (let i = 0; i < n; i++) {
        if (f.elem === 'struct') {
          const s = this.struct(f.struct!, v, depth + 1);
          input.push(s.input);
          expected.push(s.expected);
        } else {
          const x = this.primitive(f.elem!);
          input.push(x);
          expected.push(x);
        }
      }
      return { input, expected };
    }
    const x = this.primitive(f.type);
    return { input: x, expected: x };
  }
}

/**
 * An independent oracle: decodes bytes by interpreting the descriptors (the slow way), checking
 * that tagged fields come in strictly ascending tag order and that each known tag uses exactly its
 * declared size. Generated reader and writer could agree on a mistake; this cannot share it.
 */
class Interpreter {
  constructor(private readonly d: MessageDescriptor) {}

  private flexible(v: number): boolean {
    return inRange(this.d.flexibleVersions, v);
  }

  private prim(r: Reader, type: string, compact: boolean, nullable: boolean): unknown {
    switch (type) {
      case 'bool':
        return r.bool();
      case 'int8':
      case 'int16':
      case 'int32':
      case 'int64':
      case 'uint16':
      case 'uint32':
      case 'float64':
      case 'uuid':
        return (r as unknown as Record<string, () => unknown>)[type]();
      case 'string': {
        const s = compact ? r.compactNullableString() : r.nullableString();
        if (s === null && !nullable) throw new Error('null string in a non-nullable field');
        return s;
      }
      case 'bytes':
      case 'records': {
        const b = compact ? r.compactNullableBytes() : r.nullableBytes();
        if (b === null && !nullable) throw new Error('null bytes in a non-nullable field');
        return b;
      }
      default:
        throw new Error(`unknown type ${type}`);
    }
  }

  private field(r: Reader, f: FieldDescriptor, v: number): unknown {
    const flex = this.flexible(v);
    const compact = f.flexible === undefined ? flex : inRange(f.flexible, v);
    const nullable = inRange(f.nullable, v);
    if (f.type === 'array') {
      const n = flex ? r.unsignedVarint() - 1 : r.int32();
      if (n < 0) {
        if (!nullable) throw new Error(`null array ${f.name}`);
        return null;
      }
      const out: unknown[] = [];
      for (let i = 0; i < n; i++) {
        out.push(f.elem === 'struct' ? this.struct(r, f.struct!, v) : this.prim(r, f.elem!, flex, false));
      }
      return out;
    }
    if (f.type === 'struct') {
      if (nullable) {
        const marker = r.int8();
        if (marker === -1) return null;
        if (marker !== 1) throw new Error(`bad struct marker ${marker}`);
      }
      return this.struct(r, f.struct!, v);
    }
    return this.prim(r, f.type, compact, nullable);
  }

  struct(r: Reader, name: string, v: number): Obj {
    const gen = new Gen(this.d, () => 0);
    const out: Obj = {};
    const fields = this.d.structs[name];
    for (const f of fields) {
      const regular = inRange(f.versions, v) && !inRange(f.tagged, v);
      out[f.name] = regular ? this.field(r, f, v) : gen.defaultOf(f);
    }
    if (this.flexible(v)) {
      const unknown: { tag: number; data: Buffer }[] = [];
      let prev = -1;
      for (let n = r.unsignedVarint(); n > 0; n--) {
        const tag = r.unsignedVarint();
        const size = r.unsignedVarint();
        if (tag <= prev) throw new Error(`${name}: tag ${tag} after ${prev}`);
        prev = tag;
        const f = fields.find((x) => x.tag === tag && inRange(x.tagged, v));
        if (f === undefined) {
          unknown.push({ tag, data: r.raw(size) });
          continue;
        }
        const end = r.pos + size;
        out[f.name] = this.field(r, f, v);
        if (r.pos !== end) throw new Error(`${name}.${f.name}: tagged size ${size} but used ${size + r.pos - end}`);
      }
      if (unknown.length > 0) out._unknownTaggedFields = unknown;
    }
    return out;
  }
}

function encode(write: WriteFn, version: number, m: unknown): Buffer {
  const w = new Writer(16);
  write(w, version, m);
  return w.toBuffer();
}

function decode(read: ReadFn, version: number, b: Buffer): Obj {
  const r = new Reader(b);
  const m = read(r, version);
  expect(r.remaining).toBe(0);
  return m;
}

const SAMPLES_PER_VERSION = 6;

describe('generated codecs: random round trips at every version', () => {
  test.each(MESSAGE_DESCRIPTORS.map((d) => [d.file, d] as const))('%s', (_file, d) => {
    const { read, write } = codecs(d);
    const gen = new Gen(d, rng(d.name.length * 7919 + (d.apiKey ?? 0)));
    const interpreter = new Interpreter(d);
    for (const v of versionsOf(d)) {
      // The empty message: every field at its default.
      const empty = encode(write, v, {});
      const emptyDecoded = decode(read, v, empty);
      const defaults = gen.defaultStruct(d.name);
      expect(emptyDecoded).toEqual(defaults);
      expect(encode(write, v, emptyDecoded).equals(empty)).toBe(true);
      for (let i = 0; i < SAMPLES_PER_VERSION; i++) {
        const { input, expected } = gen.struct(d.name, v, 0);
        let bytes: Buffer;
        try {
          bytes = encode(write, v, input);
        } catch (e) {
          throw new Error(`${d.name} v${v}: write failed: ${(e as Error).message}`);
        }
        const decoded = decode(read, v, bytes);
        expect(decoded).toEqual(expected);
        const r = new Reader(bytes);
        expect(interpreter.struct(r, d.name, v)).toEqual(expected);
        expect(r.remaining).toBe(0);
        const again = encode(write, v, decoded);
        if (!again.equals(bytes)) {
          throw new Error(`${d.name} v${v}: re-encoding differs\n${bytes.toString('hex')}\n${again.toString('hex')}`);
        }
      }
    }
  });
});

function nonDefaultValue(gen: Gen, f: FieldDescriptor): unknown {
  const v = f.versions[0];
  const def = gen.defaultOf(f);
  for (let i = 0; i < 100; i++) {
    const x = gen.value(f, v, 0).input;
    if (x === null && def === null) continue;
    if (Array.isArray(x) && x.length === 0) continue;
    if (Buffer.isBuffer(x) && x.length === 0 && def !== null) continue;
    if (f.type === 'struct') {
      if (x !== null && Object.keys(x as Obj).length === 0) continue;
      try {
        expect(x).toEqual(def);
        continue;
      } catch {
        return x;
      }
    }
    if (x !== def) return x;
  }
  throw new Error(`no non-default value for ${f.name}`);
}

describe('generated codecs: version rules of the encoders', () => {
  test.each(MESSAGE_DESCRIPTORS.map((d) => [d.file, d] as const))('%s', (_file, d) => {
    const { read, write } = codecs(d);
    const gen = new Gen(d, rng(31 + d.name.length));
    const root = d.structs[d.name];
    for (const v of versionsOf(d)) {
      for (const f of root) {
        if (!inRange(f.versions, v)) {
          const x = nonDefaultValue(gen, f);
          if (f.ignorable) {
            const m = decode(read, v, encode(write, v, { [f.name]: x }));
            expect(m[f.name]).toEqual(gen.defaultOf(f));
          } else {
            expect(() => encode(write, v, { [f.name]: x })).toThrow(UnsupportedVersionError);
            expect(() => encode(write, v, { [f.name]: x })).toThrow(new RegExp(`${f.name}.*version ${v}`));
          }
          // The default value itself is fine at any version.
          encode(write, v, { [f.name]: gen.defaultOf(f) });
        } else if (['string', 'bytes', 'records', 'array', 'struct'].includes(f.type) && !inRange(f.nullable, v)) {
          expect(() => encode(write, v, { [f.name]: null })).toThrow(/not nullable/);
        }
      }
    }
    expect(() => encode(write, d.validVersions[1] + 1, {})).toThrow(UnsupportedVersionError);
    expect(() => read(new Reader(Buffer.alloc(0)), d.validVersions[1] + 1)).toThrow(UnsupportedVersionError);
  });
});

describe('descriptors', () => {
  test('cover every schema folder', () => {
    const dirs = new Set(MESSAGE_DESCRIPTORS.map((d) => d.file.split('/')[0]));
    expect([...dirs].sort()).toEqual(
      ['group-coordinator', 'message', 'metadata', 'raft', 'share-coordinator', 'storage', 'transaction-coordinator'].sort(),
    );
    const message = MESSAGE_DESCRIPTORS.filter((d) => d.file.startsWith('message/'));
    expect(message.filter((d) => d.type === 'request')).toHaveLength(88);
    expect(message.filter((d) => d.type === 'response')).toHaveLength(88);
  });
});
