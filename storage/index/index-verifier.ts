/**
 * Checks a segment's offset and time index entries against its batch headers, in one forward walk
 * of the `.log` (no CRC, no records). Used when a log loads (a segment whose indexes disagree is
 * recovered and re-indexed) and by `krill dump-log` (which reports every disagreement).
 *
 * What the append path and recovery write (log-segment.ts `updateIndexes`, segment-scanner.ts),
 * and so what must hold:
 * - an offset-index entry (offset O, position P): a batch starts at P and its last offset is O;
 * - a time-index entry (timestamp T, offset O): the batch whose last offset is O has max timestamp
 *   T and is the batch that first reached T (the segment's largest timestamp up to it);
 *   timestamps strictly increase from entry to entry;
 * - the last time-index entry is the segment's largest timestamp (written when the segment became
 *   inactive or was closed), so retention and ListOffsets MAX_TIMESTAMP can trust it.
 * Entries may be sparse: a missing entry costs a longer scan, never a wrong answer. A single
 * flipped bit in an entry breaks one of these rules.
 */

export interface IndexEntryView<E> {
  readonly count: number;
  entry(i: number): E;
}

export interface OffsetEntry {
  offset: bigint;
  position: number;
}

export interface TimeEntry {
  timestamp: number;
  offset: bigint;
}

/** The batch header fields the verifier needs. */
export interface VerifiedBatch {
  position: number;
  lastOffset: bigint;
  maxTimestamp: number;
}

export class IndexVerifier {
  readonly problems: string[] = [];
  private o = 0;
  private t = 0;
  private oEntry: OffsetEntry | null;
  private tEntry: TimeEntry | null;
  private runMax = -1;
  private runMaxOffset: bigint | null = null;
  private prevTimestamp = -Infinity;

  constructor(
    private readonly offsets: IndexEntryView<OffsetEntry> | null,
    private readonly times: IndexEntryView<TimeEntry> | null,
    /** Stop collecting after this many problems. */
    private readonly maxProblems = Infinity,
  ) {
    this.oEntry = offsets && offsets.count > 0 ? offsets.entry(0) : null;
    this.tEntry = times && times.count > 0 ? times.entry(0) : null;
  }

  /** False once enough problems were found (callers may stop walking). */
  get wantsMore(): boolean {
    return this.problems.length < this.maxProblems;
  }

  private problem(msg: string): void {
    if (this.problems.length < this.maxProblems) this.problems.push(msg);
  }

  /** The next batch of the segment, in file order. */
  visit(b: VerifiedBatch): void {
    while (this.oEntry !== null && this.oEntry.position < b.position) {
      this.problem(`offset index entry ${this.o} (offset ${this.oEntry.offset}, position ${this.oEntry.position}) does not point at the start of a batch`);
      this.nextOffsetEntry();
    }
    if (this.oEntry !== null && this.oEntry.position === b.position) {
      if (this.oEntry.offset !== b.lastOffset) {
        this.problem(`offset index entry ${this.o} names offset ${this.oEntry.offset} for the batch at position ${b.position}, whose last offset is ${b.lastOffset}`);
      }
      this.nextOffsetEntry();
    }
    if (b.maxTimestamp > this.runMax) {
      this.runMax = b.maxTimestamp;
      this.runMaxOffset = b.lastOffset;
    }
    while (this.tEntry !== null && this.tEntry.offset <= b.lastOffset) {
      const e = this.tEntry;
      if (e.timestamp <= this.prevTimestamp) {
        this.problem(`time index entry ${this.t} has timestamp ${e.timestamp}, not above the previous entry's ${this.prevTimestamp}`);
      } else if (e.offset !== b.lastOffset) {
        this.problem(`time index entry ${this.t} (timestamp ${e.timestamp}) names offset ${e.offset}, inside the batch ending at ${b.lastOffset}`);
      } else if (e.timestamp !== b.maxTimestamp || this.runMaxOffset !== b.lastOffset) {
        this.problem(
          `time index entry ${this.t} (timestamp ${e.timestamp}, offset ${e.offset}) does not match the batch ending there ` +
            `(max timestamp ${b.maxTimestamp}; the segment's largest so far is ${this.runMax} at offset ${this.runMaxOffset})`,
        );
      }
      this.prevTimestamp = e.timestamp;
      this.nextTimeEntry();
    }
  }

  /**
   * After the last batch (`complete`: the walk reached the end of the file). Returns the problems.
   * `activeSegment`: the segment may still be the one a running broker appends to, whose final
   * time-index entry (its largest timestamp) is only written when it rolls or the broker stops.
   */
  finish(complete = true, activeSegment = false): string[] {
    if (!complete) return this.problems;
    while (this.oEntry !== null) {
      this.problem(`offset index entry ${this.o} (offset ${this.oEntry.offset}, position ${this.oEntry.position}) lies past the last batch`);
      this.nextOffsetEntry();
    }
    while (this.tEntry !== null) {
      this.problem(`time index entry ${this.t} (timestamp ${this.tEntry.timestamp}, offset ${this.tEntry.offset}) lies past the last batch`);
      this.nextTimeEntry();
    }
    if (this.times !== null && this.runMax >= 0 && !activeSegment) {
      const last = this.times.count > 0 ? this.times.entry(this.times.count - 1) : null;
      if (last === null || last.timestamp !== this.runMax || last.offset !== this.runMaxOffset) {
        this.problem(`the time index does not end with the segment's largest timestamp ${this.runMax} (offset ${this.runMaxOffset})`);
      }
    }
    return this.problems;
  }

  private nextOffsetEntry(): void {
    this.o++;
    this.oEntry = this.offsets !== null && this.o < this.offsets.count ? this.offsets.entry(this.o) : null;
  }

  private nextTimeEntry(): void {
    this.t++;
    this.tEntry = this.times !== null && this.t < this.times.count ? this.times.entry(this.t) : null;
  }
}
