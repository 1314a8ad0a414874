/**
 * Small runtime helpers for the generated message codecs (protocol/generated/): errors with the
 * field and version they concern, tagged-field sections (unknown tags are kept so a decoded
 * message re-encodes byte for byte), and shared empty defaults. The generated code stays
 * straight-line; these are the few pieces every struct would otherwise repeat.
 */
import { ErrorCode, KafkaError } from '../errors';
import { DecodeError, Reader } from './reader';
import { EncodeError, Writer } from './writer';

/** A tagged field this codec does not know, kept as raw bytes (its value without tag and size). */
export interface TaggedField {
  tag: number;
  data: Buffer;
}

/**
 * A message or field does not exist at the version asked for (Kafka's UnsupportedVersionException):
 * a version outside validVersions, or a non-ignorable field holding a non-default value at a version
 * where it does not exist.
 */
export class UnsupportedVersionError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.UNSUPPORTED_VERSION, message);
    this.name = 'UnsupportedVersionError';
  }
}

export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);
/** Shared empty array default for encoders (never mutated). */
export const EMPTY_ARRAY: never[] = [];
/** Shared empty struct for encoders: every field takes its default. */
export const EMPTY_STRUCT: Readonly<Record<string, never>> = Object.freeze({});

export function badVersion(message: string, version: number): UnsupportedVersionError {
  return new UnsupportedVersionError(`${message} has no version ${version}`);
}

/** Thrown by encoders: `field` holds a non-default value but does not exist at `version`. */
export function unsupportedField(message: string, field: string, version: number): UnsupportedVersionError {
  return new UnsupportedVersionError(`${message}.${field} cannot be set to a non-default value at version ${version}`);
}

/** Decoders: a non-nullable field arrived as null. */
export function nullRead(field: string, version: number): DecodeError {
  return new DecodeError(`non-nullable field ${field} was null at version ${version}`);
}

/**
 * Encoders: the value to write for a field that is not nullable at this version: the default when
 * undefined, an error when null.
 */
export function nn<T>(v: T | null | undefined, d: T, field: string, version: number): T {
  if (v === undefined) return d;
  if (v === null) throw new EncodeError(`field ${field} is not nullable at version ${version}`);
  return v;
}

/** Reads a whole tagged-field section of a struct with no known tags at this version. */
export function readTaggedFields(r: Reader): TaggedField[] | undefined {
  let n = r.unsignedVarint();
  if (n === 0) return undefined;
  const out: TaggedField[] = [];
  for (; n > 0; n--) {
    const tag = r.unsignedVarint();
    out.push({ tag, data: r.raw(r.unsignedVarint()) });
  }
  return out;
}

/** Keeps one unknown tagged field whose tag and size have been read. */
export function readUnknownTag(r: Reader, list: TaggedField[] | undefined, tag: number, size: number): TaggedField[] {
  const out = list ?? [];
  out.push({ tag, data: r.raw(size) });
  return out;
}

/** After decoding a known tagged field: it must have used exactly its declared size. */
export function tagEnd(r: Reader, end: number, field: string): void {
  if (r.pos !== end) throw new DecodeError(`tagged field ${field}: size mismatch (${r.pos - end} bytes)`);
}

type RawTags = readonly { tag?: number; data?: Buffer }[] | undefined;

/** A struct's tagged-field section holding only preserved unknown tags (the common case: empty). */
export function writeTaggedFields(w: Writer, unknown: RawTags): void {
  if (unknown === undefined || unknown.length === 0) {
    w.uint8(0);
    return;
  }
  w.unsignedVarint(unknown.length);
  writeRawTags(w, unknown, 0, Infinity);
}

/**
 * Writes the preserved unknown tags from index `i` whose tag is below `limit`, returning the next
 * index: interleaved with the known tags so the section stays in ascending tag order.
 */
export function writeRawTags(w: Writer, unknown: RawTags, i: number, limit: number): number {
  if (unknown === undefined) return i;
  for (; i < unknown.length; i++) {
    const t = unknown[i];
    const tag = t.tag;
    const data = t.data;
    if (tag === undefined || data === undefined) throw new EncodeError('unknown tagged field without tag or data');
    if (tag >= limit) break;
    w.unsignedVarint(tag);
    w.unsignedVarint(data.length);
    w.raw(data);
  }
  return i;
}

/** A known tagged field whose value was encoded into its own writer (to learn its size). */
export function writeTag(w: Writer, tag: number, value: Writer): void {
  const b = value.toBuffer();
  w.unsignedVarint(tag);
  w.unsignedVarint(b.length);
  w.raw(b);
}
