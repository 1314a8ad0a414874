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

/** Offsets are relative to the segment's base offset (numbers: a segment spans < 2^31 offsets). */
export interface OffsetEntry {
  rel: number;
  position: number;
}

export interface TimeEntry {
  timestamp: number;
  rel: number;
}

/** The batch header fields the verifier needs. */
export interface VerifiedBatch {
  position: number;
  /** Last offset relative to the segment base. */
  relLast: number;
  maxTimestamp: number;
}

export class IndexVerifier {
  readonly problems: string[] = [];
  private o = 0;
  private t = 0;
  private oEntry: OffsetEntry | null;
  private tEntry: TimeEntry | null;
  private runMax = -1;
  private runMaxRel = -1;
  private prevTimestamp = -Infinity;

  constructor(
    private readonly baseOffset: bigint,
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

  private abs(rel: number): bigint {
    return this.baseOffset + BigInt(rel);
  }

  private problem(msg: string): void {
    if (this.problems.length < this.maxProblems) this.problems.push(msg);
  }

  /** The next batch of the segment, in file order. */
  visit(b: VerifiedBatch): void {
    while (this.oEntry !== null && this.oEntry.position < b.position) {
      this.problem(`offset index entry ${this.o} (offset ${this.abs(this.oEntry.rel)}, position ${this.oEntry.position}) does not point at the start of a batch`);
      this.nextOffsetEntry();
    }
    if (this.oEntry !== null && this.oEntry.position === b.position) {
      if (this.oEntry.rel !== b.relLast) {
        this.problem(
          `offset index entry ${this.o} names offset ${this.abs(this.oEntry.rel)} for the batch at position ${b.position}, whose last offset is ${this.abs(b.relLast)}`,
        );
      }
      this.nextOffsetEntry();
    }
    if (b.maxTimestamp > this.runMax) {
      this.runMax = b.maxTimestamp;
      this.runMaxRel = b.relLast;
    }
    while (this.tEntry !== null && this.tEntry.rel <= b.relLast) {
      const e = this.tEntry;
      if (e.timestamp <= this.prevTimestamp) {
        this.problem(`time index entry ${this.t} has timestamp ${e.timestamp}, not above the previous entry's ${this.prevTimestamp}`);
      } else if (e.rel !== b.relLast) {
        this.problem(`time index entry ${this.t} (timestamp ${e.timestamp}) names offset ${this.abs(e.rel)}, inside the batch ending at ${this.abs(b.relLast)}`);
      } else if (e.timestamp !== b.maxTimestamp || this.runMaxRel !== b.relLast) {
        this.problem(
          `time index entry ${this.t} (timestamp ${e.timestamp}, offset ${this.abs(e.rel)}) does not match the batch ending there ` +
            `(max timestamp ${b.maxTimestamp}; the segment's largest so far is ${this.runMax} at offset ${this.abs(this.runMaxRel)})`,
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
      this.problem(`offset index entry ${this.o} (offset ${this.abs(this.oEntry.rel)}, position ${this.oEntry.position}) lies past the last batch`);
      this.nextOffsetEntry();
    }
    while (this.tEntry !== null) {
      this.problem(`time index entry ${this.t} (timestamp ${this.tEntry.timestamp}, offset ${this.abs(this.tEntry.rel)}) lies past the last batch`);
      this.nextTimeEntry();
    }
    if (this.times !== null && this.runMax >= 0 && !activeSegment) {
      const last = this.times.count > 0 ? this.times.entry(this.times.count - 1) : null;
      if (last === null || last.timestamp !== this.runMax || last.rel !== this.runMaxRel) {
        this.problem(`the time index does not end with the segment's largest timestamp ${this.runMax} (offset ${this.abs(this.runMaxRel)})`);
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
