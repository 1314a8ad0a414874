/**
 * The sparse time index of one segment (`.timeindex`): 12-byte entries `int64 timestamp,
 * int32 relative offset`. An entry (T, O) says: the largest timestamp in the segment up to offset O
 * is T, first reached in the batch holding O; so every record with a timestamp > T lies after that
 * batch. An entry is written alongside an offset-index entry when the segment's max timestamp grew,
 * plus once more when the segment becomes inactive (so the last entry is the segment's max, which
 * retention and ListOffsets MAX_TIMESTAMP read).
 *
 * Invariants (sanityCheck): timestamps strictly increase, offsets never decrease, every offset is
 * inside the segment.
 */
import { StorageFs } from '../fs';
import { CorruptIndexError } from '../errors';
import { AbstractIndex, InvalidOffsetError } from './abstract-index';

export interface TimestampOffset {
  /** ms; -1 when unknown. */
  timestamp: number;
  offset: bigint;
}

const ENTRY_SIZE = 12;

export class TimeIndex extends AbstractIndex {
  private readonly scratch = Buffer.alloc(ENTRY_SIZE);

  constructor(fs: StorageFs, file: string, baseOffset: bigint, maxIndexSize: number) {
    super(fs, file, baseOffset, maxIndexSize, ENTRY_SIZE);
  }

  private ts(i: number): number {
    return Number((this.data as Buffer).readBigInt64BE(i * ENTRY_SIZE));
  }

  private rel(i: number): number {
    return (this.data as Buffer).readInt32BE(i * ENTRY_SIZE + 8);
  }

  /** Entry `i` with its offset relative to the base, without allocating a bigint. */
  relativeEntry(i: number): { timestamp: number; rel: number } {
    this.ensureLoaded();
    if (i < 0 || i >= this._entries) throw new RangeError(`time index entry ${i} out of range (${this._entries} entries)`);
    return { timestamp: this.ts(i), rel: this.rel(i) };
  }

  entry(i: number): TimestampOffset {
    this.ensureLoaded();
    if (i < 0 || i >= this._entries) throw new RangeError(`time index entry ${i} out of range (${this._entries} entries)`);
    return { timestamp: this.ts(i), offset: this.baseOffset + BigInt(this.rel(i)) };
  }

  /** The last entry, or (-1, baseOffset) when empty. */
  lastEntry(): TimestampOffset {
    this.ensureLoaded();
    return this._entries === 0 ? { timestamp: -1, offset: this.baseOffset } : this.entry(this._entries - 1);
  }

  /** The largest entry whose timestamp is <= target, or (-1, baseOffset) if there is none. */
  lookup(targetTimestamp: number): TimestampOffset {
    this.ensureLoaded();
    const i = this.largestLowerBound(targetTimestamp, (k) => this.ts(k));
    return i < 0 ? { timestamp: -1, offset: this.baseOffset } : this.entry(i);
  }

  /**
   * Appends (timestamp, offset) if the timestamp is larger than the last entry's. `skipFullCheck`
   * is for the final entry written when the segment becomes inactive, which must fit even when the
   * index is otherwise full (there is no preallocated file size to overflow here).
   */
  maybeAppend(timestamp: number, offset: bigint, skipFullCheck = false): void {
    this.ensureLoaded();
    if (this.checkAppend(timestamp, offset, skipFullCheck)) {
      this.fill(timestamp, offset);
      this.appendRaw(this.scratch);
    }
  }

  maybeAppendForRebuild(timestamp: number, offset: bigint, skipFullCheck = false): void {
    this.ensureLoaded();
    if (this.checkAppend(timestamp, offset, skipFullCheck)) {
      this.fill(timestamp, offset);
      this.appendInMemory(this.scratch);
    }
  }

  private fill(timestamp: number, offset: bigint): void {
    this.scratch.writeBigInt64BE(BigInt(timestamp), 0);
    this.scratch.writeInt32BE(this.relativeOffset(offset), 8);
  }

  private checkAppend(timestamp: number, offset: bigint, skipFullCheck: boolean): boolean {
    if (!skipFullCheck && this._entries >= this.maxEntries) {
      throw new InvalidOffsetError(`attempt to append to a full time index ${this.file} (${this._entries} entries)`);
    }
    if (this._entries > 0) {
      const last = this.lastEntry();
      if (offset < last.offset) {
        throw new InvalidOffsetError(
          `attempt to append offset ${offset} to time index ${this.file} smaller than the last offset ${last.offset}`,
        );
      }
      if (timestamp < last.timestamp) {
        throw new InvalidOffsetError(
          `attempt to append timestamp ${timestamp} to time index ${this.file} smaller than the last timestamp ${last.timestamp}`,
        );
      }
      return timestamp > last.timestamp;
    }
    // Kafka's rule: an empty index's last entry is (-1, baseOffset), so -1 (no timestamp) is never added.
    return timestamp > -1;
  }

  /** Removes every entry whose offset is >= `offset`. */
  truncateTo(offset: bigint): void {
    this.ensureLoaded();
    const rel = offset - this.baseOffset;
    if (rel <= 0n) {
      this.truncateToEntries(0);
      return;
    }
    let n = this._entries;
    while (n > 0 && BigInt(this.rel(n - 1)) >= rel) n--;
    this.truncateToEntries(n);
  }

  protected checkEntries(_logSize: number, nextOffsetUpperBound?: bigint): void {
    let prevTs = -Infinity;
    let prevRel = -1;
    for (let i = 0; i < this._entries; i++) {
      const t = this.ts(i);
      const r = this.rel(i);
      if (t <= prevTs) throw new CorruptIndexError(`time index ${this.file}: entry ${i} has timestamp ${t} after ${prevTs}`);
      if (r < 0 || r < prevRel) throw new CorruptIndexError(`time index ${this.file}: entry ${i} has relative offset ${r} after ${prevRel}`);
      if (nextOffsetUpperBound !== undefined && this.baseOffset + BigInt(r) >= nextOffsetUpperBound) {
        throw new CorruptIndexError(
          `time index ${this.file}: entry ${i} points at offset ${this.baseOffset + BigInt(r)}, past the segment (next offset ${nextOffsetUpperBound})`,
        );
      }
      prevTs = t;
      prevRel = r;
    }
  }
}
