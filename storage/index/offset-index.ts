/**
 * The sparse offset index of one segment (`.index`): 8-byte entries `int32 relative offset,
 * int32 position`, one per `index.interval.bytes` of appended log. As in Kafka, an entry names the
 * LAST offset of an append and the file position where that append STARTS, so a lookup for any
 * offset >= the entry's offset can begin scanning batch headers at that position.
 *
 * Invariants (sanityCheck): relative offsets and positions strictly increase; every position lies
 * inside the .log. Appends that would break this throw InvalidOffsetError: recovery validates the
 * log before it indexes it, so a non-monotonic segment (KAFKA-3955) is truncated, never indexed.
 */
import { StorageFs } from '../fs';
import { CorruptIndexError } from '../errors';
import { AbstractIndex, INT32_MAX, InvalidOffsetError } from './abstract-index';

export interface OffsetPosition {
  offset: bigint;
  position: number;
}

const ENTRY_SIZE = 8;

export class OffsetIndex extends AbstractIndex {
  private readonly scratch = Buffer.alloc(ENTRY_SIZE);

  constructor(fs: StorageFs, file: string, baseOffset: bigint, maxIndexSize: number) {
    super(fs, file, baseOffset, maxIndexSize, ENTRY_SIZE);
  }

  private rel(i: number): number {
    return (this.data as Buffer).readInt32BE(i * ENTRY_SIZE);
  }

  private pos(i: number): number {
    return (this.data as Buffer).readInt32BE(i * ENTRY_SIZE + 4);
  }

  /** Entry `i` as (offset relative to the base, position), without allocating a bigint. */
  relativeEntry(i: number): { rel: number; position: number } {
    this.ensureLoaded();
    if (i < 0 || i >= this._entries) throw new RangeError(`index entry ${i} out of range (${this._entries} entries)`);
    return { rel: this.rel(i), position: this.pos(i) };
  }

  entry(i: number): OffsetPosition {
    this.ensureLoaded();
    if (i < 0 || i >= this._entries) throw new RangeError(`index entry ${i} out of range (${this._entries} entries)`);
    return { offset: this.baseOffset + BigInt(this.rel(i)), position: this.pos(i) };
  }

  /** The last indexed offset, or the base offset when empty. */
  get lastOffset(): bigint {
    this.ensureLoaded();
    return this._entries === 0 ? this.baseOffset : this.baseOffset + BigInt(this.rel(this._entries - 1));
  }

  lastEntry(): OffsetPosition {
    this.ensureLoaded();
    return this._entries === 0 ? { offset: this.baseOffset, position: 0 } : this.entry(this._entries - 1);
  }

  /** The largest entry whose offset is <= target, or (baseOffset, 0) if there is none. */
  lookup(target: bigint): OffsetPosition {
    this.ensureLoaded();
    const rel = target - this.baseOffset;
    if (rel < 0n || this._entries === 0) return { offset: this.baseOffset, position: 0 };
    const r = rel > BigInt(INT32_MAX) ? INT32_MAX : Number(rel);
    const i = this.largestLowerBound(r, (k) => this.rel(k));
    return i < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(i);
  }

  /** The first entry whose position is >= the given one and beyond `fetchSize` bytes, if any. */
  fetchUpperBoundOffset(fetchOffset: OffsetPosition, fetchSize: number): OffsetPosition | undefined {
    this.ensureLoaded();
    const i = this.smallestUpperBound(fetchOffset.position + fetchSize, (k) => this.pos(k));
    return i < this._entries ? this.entry(i) : undefined;
  }

  append(offset: bigint, position: number): void {
    this.ensureLoaded();
    this.checkAppend(offset, position);
    this.scratch.writeInt32BE(this.relativeOffset(offset), 0);
    this.scratch.writeInt32BE(position, 4);
    this.appendRaw(this.scratch);
  }

  /** Rebuild path: same checks, memory only, then persist(). */
  appendForRebuild(offset: bigint, position: number): void {
    this.ensureLoaded();
    this.checkAppend(offset, position);
    this.scratch.writeInt32BE(this.relativeOffset(offset), 0);
    this.scratch.writeInt32BE(position, 4);
    this.appendInMemory(this.scratch);
  }

  private checkAppend(offset: bigint, position: number): void {
    if (this._entries >= this.maxEntries) {
      throw new InvalidOffsetError(`attempt to append to a full index ${this.file} (${this._entries} entries)`);
    }
    if (this._entries > 0) {
      const last = this.lastOffset;
      if (offset <= last) {
        throw new InvalidOffsetError(
          `attempt to append offset ${offset} to position ${position} no larger than the last offset appended (${last}) to ${this.file}`,
        );
      }
      if (position <= this.pos(this._entries - 1)) {
        throw new InvalidOffsetError(`attempt to append position ${position} not beyond the last indexed position in ${this.file}`);
      }
    }
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    this.ensureLoaded();
    const rel = offset - this.baseOffset;
    if (rel <= 0n) {
      this.truncateToEntries(0);
      return;
    }
    const r = rel > BigInt(INT32_MAX) ? INT32_MAX + 1 : Number(rel);
    this.truncateToEntries(this.smallestUpperBound(r, (k) => this.rel(k)));
  }

  protected checkEntries(logSize: number, nextOffsetUpperBound?: bigint): void {
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < this._entries; i++) {
      const r = this.rel(i);
      const p = this.pos(i);
      if (r < 0 || r <= prevRel) {
        throw new CorruptIndexError(`offset index ${this.file}: entry ${i} has relative offset ${r} after ${prevRel}`);
      }
      if (nextOffsetUpperBound !== undefined && this.baseOffset + BigInt(r) >= nextOffsetUpperBound) {
        throw new CorruptIndexError(
          `offset index ${this.file}: entry ${i} points at offset ${this.baseOffset + BigInt(r)}, past the segment (next offset ${nextOffsetUpperBound})`,
        );
      }
      if (p < 0 || p <= prevPos || p >= logSize) {
        throw new CorruptIndexError(`offset index ${this.file}: entry ${i} has position ${p} (previous ${prevPos}, log size ${logSize})`);
      }
      prevRel = r;
      prevPos = p;
    }
  }
}
