/**
 * LeaderEpochFileCache: for one partition, the offset at which each leader epoch's records start,
 * kept in memory and in `<partition dir>/leader-epoch-checkpoint` (Kafka's format, so Kafka's tools
 * and a Kafka broker could read it):
 *
 *     0            <- version
 *     2            <- number of entries
 *     0 0          <- epoch startOffset
 *     3 1200
 *
 * Invariants: entries are strictly increasing in both epoch and start offset; every start offset is
 * within [logStartOffset, LEO] of the log that owns the cache (the log truncates the cache whenever
 * it truncates itself, from either end). `assign` of an epoch/offset that would break monotonicity
 * removes the entries at its end that conflict (Kafka's maybeTruncateNonMonotonicEntries), which
 * is what happens when a follower appends a new leader's batches after a divergence.
 *
 * Every change is written at once, atomically (temp file, fsync, rename, fsync dir). Changes are
 * rare (a new epoch, a truncation), so the cost is noise; and a follower that truncated must not
 * come back from a crash with epochs describing records it no longer has.
 *
 * `endOffsetFor(epoch)` answers OffsetForLeaderEpoch: the end offset of the requested epoch (the
 * start of the next higher epoch, or the LEO for the latest epoch) and the largest epoch <= it.
 */
import * as path from 'node:path';
import { StorageFs, writeFileAtomic } from './fs';
import { CorruptCheckpointError } from './checkpoint/offset-checkpoint-file';

export const LEADER_EPOCH_CHECKPOINT_FILENAME = 'leader-epoch-checkpoint';
const LEADER_EPOCH_CHECKPOINT_VERSION = 0;
/** Kafka's UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET. */
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1n;

export interface EpochEntry {
  epoch: number;
  startOffset: bigint;
}

export class LeaderEpochCheckpointFile {
  constructor(
    private readonly fs: StorageFs,
    private readonly file: () => string,
  ) {}

  get path(): string {
    return this.file();
  }

  write(entries: readonly EpochEntry[]): void {
    writeFileAtomic(this.fs, this.file(), LeaderEpochCheckpointFile.encode(entries));
  }

  /** The file's text: the version line, the count line, then `epoch startOffset` per entry (what tiered storage also ships with each remote segment). */
  static encode(entries: readonly EpochEntry[]): string {
    const lines = [String(LEADER_EPOCH_CHECKPOINT_VERSION), String(entries.length)];
    for (const e of entries) lines.push(`${e.epoch} ${e.startOffset}`);
    return lines.join('\n') + '\n';
  }

  /** Parses the file's text; `name` labels errors. Throws CorruptCheckpointError. */
  static decode(text: string, name: string): EpochEntry[] {
    const lines = text.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    if (lines.length < 2) throw new CorruptCheckpointError(name, 'missing version or count line');
    if (lines[0].trim() !== String(LEADER_EPOCH_CHECKPOINT_VERSION)) {
      throw new CorruptCheckpointError(name, `unrecognized version ${JSON.stringify(lines[0])}`);
    }
    const countText = lines[1].trim();
    if (!/^\d+$/.test(countText)) throw new CorruptCheckpointError(name, `bad entry count ${JSON.stringify(lines[1])}`);
    const count = Number(countText);
    if (lines.length - 2 !== count) throw new CorruptCheckpointError(name, `expected ${count} entries, found ${lines.length - 2} lines`);
    const out: EpochEntry[] = [];
    for (let i = 2; i < lines.length; i++) {
      const parts = lines[i].trim().split(/\s+/);
      if (parts.length !== 2 || !/^\d+$/.test(parts[0]) || !/^\d+$/.test(parts[1])) {
        throw new CorruptCheckpointError(name, `bad entry on line ${i + 1}: ${JSON.stringify(lines[i])}`);
      }
      out.push({ epoch: Number(parts[0]), startOffset: BigInt(parts[1]) });
    }
    return out;
  }

  /** The entries, or undefined when the file does not exist. Throws CorruptCheckpointError. */
  read(): EpochEntry[] | undefined {
    const file = this.file();
    if (!this.fs.existsSync(file)) return undefined;
    return LeaderEpochCheckpointFile.decode(this.fs.readFileSync(file).toString('utf8'), file);
  }
}

export class LeaderEpochFileCache {
  /** Sorted by epoch (and therefore by start offset). */
  private epochs: EpochEntry[];

  constructor(
    private readonly checkpoint: LeaderEpochCheckpointFile | null,
    entries: readonly EpochEntry[] = [],
  ) {
    this.epochs = [];
    for (const e of entries) this.insert(e);
  }

  /** Opens `<dir>/leader-epoch-checkpoint`; `dir` is a function because a deleted log's directory is renamed. */
  static forDir(fs: StorageFs, dir: () => string): { cache: LeaderEpochFileCache; existed: boolean; corrupt?: Error } {
    const cp = new LeaderEpochCheckpointFile(fs, () => path.join(dir(), LEADER_EPOCH_CHECKPOINT_FILENAME));
    try {
      const entries = cp.read();
      return { cache: new LeaderEpochFileCache(cp, entries ?? []), existed: entries !== undefined };
    } catch (err) {
      if (!(err instanceof CorruptCheckpointError)) throw err;
      return { cache: new LeaderEpochFileCache(cp, []), existed: false, corrupt: err };
    }
  }

  get entries(): readonly EpochEntry[] {
    return this.epochs;
  }

  get isEmpty(): boolean {
    return this.epochs.length === 0;
  }

  latestEntry(): EpochEntry | undefined {
    return this.epochs[this.epochs.length - 1];
  }

  earliestEntry(): EpochEntry | undefined {
    return this.epochs[0];
  }

  /** The latest epoch, or -1. */
  latestEpoch(): number {
    return this.latestEntry()?.epoch ?? UNDEFINED_EPOCH;
  }

  /** The start offset of `epoch`, if the cache has it. */
  epochStartOffset(epoch: number): bigint | undefined {
    return this.epochs.find((e) => e.epoch === epoch)?.startOffset;
  }

  /** The epoch of the record at `offset` (the entry with the largest start offset <= it), or -1. */
  epochForOffset(offset: bigint): number {
    let found = UNDEFINED_EPOCH;
    for (const e of this.epochs) {
      if (e.startOffset <= offset) found = e.epoch;
      else break;
    }
    return found;
  }

  /** The largest epoch below `epoch` that the cache has, or undefined. */
  previousEpoch(epoch: number): number | undefined {
    let prev: number | undefined;
    for (const e of this.epochs) {
      if (e.epoch < epoch) prev = e.epoch;
      else break;
    }
    return prev;
  }

  private needsUpdate(entry: EpochEntry): boolean {
    const last = this.latestEntry();
    return !last || entry.epoch !== last.epoch || entry.startOffset < last.startOffset;
  }

  /**
   * Records that `epoch` starts at `startOffset`. Ignored if it is the latest epoch already at or
   * before that offset. Entries at the end with an epoch >= it or a start offset >= it are removed
   * first, so the cache stays monotonic. Returns whether anything changed.
   */
  assign(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0 || startOffset < 0n) throw new RangeError(`cannot assign epoch ${epoch} at offset ${startOffset}`);
    const entry = { epoch, startOffset };
    if (!this.needsUpdate(entry)) return false;
    this.insert(entry);
    this.flush();
    return true;
  }

  private insert(entry: EpochEntry): void {
    while (this.epochs.length > 0) {
      const last = this.epochs[this.epochs.length - 1];
      if (last.epoch >= entry.epoch || last.startOffset >= entry.startOffset) this.epochs.pop();
      else break;
    }
    this.epochs.push({ ...entry });
  }

  /**
   * OffsetForLeaderEpoch: [epoch, end offset] for `requestedEpoch`:
   * - undefined epoch -> [-1, -1];
   * - the latest epoch -> [it, logEndOffset];
   * - otherwise the start offset of the first higher epoch, with the largest known epoch <= the
   *   requested one (or the requested one itself when every known epoch is higher: those records
   *   are gone, and the follower should start at the leader's first known epoch);
   * - higher than every epoch -> [-1, -1].
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: bigint): { epoch: number; endOffset: bigint } {
    if (requestedEpoch === UNDEFINED_EPOCH) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const latest = this.latestEntry();
    if (latest && latest.epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higher = this.epochs.find((e) => e.epoch > requestedEpoch);
    if (!higher) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    let floor: EpochEntry | undefined;
    for (const e of this.epochs) {
      if (e.epoch <= requestedEpoch) floor = e;
      else break;
    }
    return { epoch: floor ? floor.epoch : requestedEpoch, endOffset: higher.startOffset };
  }

  /** Removes the entries starting at or after `endOffset` (the log was truncated to it). */
  truncateFromEnd(endOffset: bigint): void {
    const last = this.latestEntry();
    if (endOffset < 0n || !last || last.startOffset < endOffset) return;
    this.epochs = this.epochs.filter((e) => e.startOffset < endOffset);
    this.flush();
  }

  /**
   * The log start offset moved to `startOffset`: entries wholly before it go, and the last of
   * them is kept, moved up to start at `startOffset` (its epoch still covers the first records).
   */
  truncateFromStart(startOffset: bigint): void {
    const first = this.earliestEntry();
    if (startOffset < 0n || !first || first.startOffset >= startOffset) return;
    let lastRemoved: EpochEntry | undefined;
    while (this.epochs.length > 0 && this.epochs[0].startOffset <= startOffset) lastRemoved = this.epochs.shift();
    if (lastRemoved) this.epochs.unshift({ epoch: lastRemoved.epoch, startOffset });
    this.flush();
  }

  clearAndFlush(): void {
    this.epochs = [];
    this.flush();
  }

  /** Replaces every entry (rebuilding from the log) and writes the file. */
  replaceAll(entries: readonly EpochEntry[]): void {
    this.epochs = [];
    for (const e of entries) this.insert(e);
    this.flush();
  }

  flush(): void {
    this.checkpoint?.write(this.epochs);
  }

  toString(): string {
    return `LeaderEpochFileCache(${this.epochs.map((e) => `${e.epoch}@${e.startOffset}`).join(', ')})`;
  }
}
