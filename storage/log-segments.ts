/**
 * The segments of one log, ordered by base offset (Kafka's LogSegments, a ConcurrentSkipListMap
 * there). Appends add at the end, retention removes from the front and truncation from the back,
 * so a sorted array with binary search is all it needs.
 *
 * Invariant: base offsets strictly increase; the last segment is the active one.
 */
import { LogSegment } from './log-segment';

export class LogSegments {
  private segs: LogSegment[] = [];

  get size(): number {
    return this.segs.length;
  }

  get isEmpty(): boolean {
    return this.segs.length === 0;
  }

  /** Adds (or replaces the segment with the same base offset). */
  add(seg: LogSegment): LogSegment {
    const i = this.indexOfFloor(seg.baseOffset);
    if (i >= 0 && this.segs[i].baseOffset === seg.baseOffset) {
      this.segs[i] = seg;
    } else {
      this.segs.splice(i + 1, 0, seg);
    }
    return seg;
  }

  remove(baseOffset: bigint): void {
    const i = this.indexOfFloor(baseOffset);
    if (i >= 0 && this.segs[i].baseOffset === baseOffset) this.segs.splice(i, 1);
  }

  clear(): void {
    this.segs = [];
  }

  contains(baseOffset: bigint): boolean {
    const i = this.indexOfFloor(baseOffset);
    return i >= 0 && this.segs[i].baseOffset === baseOffset;
  }

  get(baseOffset: bigint): LogSegment | undefined {
    const i = this.indexOfFloor(baseOffset);
    return i >= 0 && this.segs[i].baseOffset === baseOffset ? this.segs[i] : undefined;
  }

  /** Position of the last segment with base offset <= offset, or -1. */
  indexOfFloor(offset: bigint): number {
    let lo = 0;
    let hi = this.segs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segs[mid].baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The segment that would hold `offset`: the last one with base offset <= offset. */
  floorSegment(offset: bigint): LogSegment | undefined {
    const i = this.indexOfFloor(offset);
    return i >= 0 ? this.segs[i] : undefined;
  }

  /** The first segment with base offset > offset. */
  higherSegment(offset: bigint): LogSegment | undefined {
    const i = this.indexOfFloor(offset);
    return this.segs[i + 1];
  }

  /** The first segment with base offset < offset, searching down. */
  lowerSegment(offset: bigint): LogSegment | undefined {
    const i = this.indexOfFloor(offset);
    if (i >= 0 && this.segs[i].baseOffset === offset) return this.segs[i - 1];
    return i >= 0 ? this.segs[i] : undefined;
  }

  at(i: number): LogSegment | undefined {
    return this.segs[i];
  }

  get firstSegment(): LogSegment | undefined {
    return this.segs[0];
  }

  get lastSegment(): LogSegment | undefined {
    return this.segs[this.segs.length - 1];
  }

  get activeSegment(): LogSegment {
    const s = this.segs[this.segs.length - 1];
    if (!s) throw new Error('log has no segments');
    return s;
  }

  /** A snapshot of all segments in offset order. */
  values(): LogSegment[] {
    return this.segs.slice();
  }

  /** Segments that may hold offsets in [from, to): the floor segment of `from` up to (excluding) those based at >= to. */
  valuesInRange(from: bigint, to: bigint): LogSegment[] {
    const start = Math.max(0, this.indexOfFloor(from));
    const out: LogSegment[] = [];
    for (let i = start; i < this.segs.length && this.segs[i].baseOffset < to; i++) out.push(this.segs[i]);
    return out;
  }

  baseOffsets(): bigint[] {
    return this.segs.map((s) => s.baseOffset);
  }

  /** Total bytes of all .log files. */
  sizeInBytes(): number {
    let n = 0;
    for (const s of this.segs) n += s.size;
    return n;
  }
}
