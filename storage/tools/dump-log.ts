/**
 * `krill dump-log`: prints and checks segment files, like Kafka's kafka-dump-log.sh
 * (DumpLogSegments). Read-only: nothing here writes to the files it is given.
 *
 *   krill dump-log [--deep-iteration] [--print-data-log] [--index-sanity-check]
 *                  [--verify-index-only] [--max-bytes N] [--allow-offset-gaps] [--closed] FILE|DIR...
 *
 * - `.log`: one line per batch (Kafka's format: baseOffset lastOffset count baseSequence
 *   lastSequence producerId producerEpoch partitionLeaderEpoch isTransactional isControl
 *   deleteHorizonMs position CreateTime|LogAppendTime size magic compresscodec crc isvalid); with
 *   --deep-iteration one `| offset: ...` line per record (control records decoded: endTxnMarker
 *   COMMIT/ABORT with the coordinator epoch); --print-data-log adds keys and payloads (and implies
 *   --deep-iteration). Every batch goes through recovery's own rules (segment-scanner.ts: CRC,
 *   counts, offsets strictly increasing and, unless --allow-offset-gaps (compacted topics),
 *   contiguous, leader epochs, timestamps); records are checked too with --deep-iteration.
 *   Offsets that no batch holds (a cleaned segment's gaps, across empty segments and from one
 *   file to the next of a directory) print as `Offset gap: F..L (N offsets held by no record)`
 *   before the batch after them, records removed from inside a kept batch as `| Offset gap: ...`
 *   with --deep-iteration, and each file ends with its count of gaps and absent offsets.
 * - `.index` / `.timeindex`: the entries (`offset: O position: P`, `timestamp: T offset: O`),
 *   checked against the segment's .log as loading checks them (index/index-verifier.ts);
 *   --index-sanity-check prints only the verdict, --verify-index-only checks without printing.
 * - `.txnindex`: one line per aborted transaction (`version: 0 producerId: P firstOffset: F
 *   lastOffset: L lastStableOffset: S`); checked: whole 34-byte entries (a torn tail is reported),
 *   version 0, firstOffset <= lastOffset, lastOffset not below the segment's base offset and
 *   increasing, lastStableOffset <= lastOffset + 1; with the segment's .log next to it, each
 *   lastOffset is an ABORT marker of that producer, each firstOffset in the segment the start of a
 *   transactional batch of that producer (unless the transaction had no data), and every ABORT
 *   marker of the .log has an entry. --index-sanity-check / --verify-index-only apply as for the
 *   other indexes. A .log with ABORT markers but no .txnindex is a problem of the .log. With
 *   --allow-offset-gaps (compacted topics: Kafka's cleaner removes transactions' batches, and the
 *   entries of emptied ones) the firstOffset check is skipped and a marker without an entry is
 *   only noted.
 * - `.snapshot` (producer state): one line per producer (`producerId: P producerEpoch: E
 *   coordinatorEpoch: C currentTxnFirstOffset: OptionalLong[F]|OptionalLong.empty lastTimestamp: T`
 *   then, when the producer has a batch, `firstSequence: lastSequence: lastOffset: offsetDelta:
 *   timestamp:`), decoded by the broker's own loader (ProducerStateManager.decodeSnapshot): an
 *   unsupported version, a CRC mismatch or an undecodable body is a problem (nothing printed, as
 *   Kafka's tool); also bytes after the entries, a producer listed twice, a negative offsetDelta,
 *   a lastOffset or currentTxnFirstOffset not below the snapshot's offset.
 * - Other files are ignored.
 * - A directory stands for its segment files, in offset order; consecutive .log files of one
 *   directory are also checked across their boundary.
 *
 * Unlike Kafka's tool the exit status says whether anything was wrong: 0 when every file is
 * consistent, 1 when a problem was reported (each listed after its file, and counted at the end
 * on stderr), 2 for a usage error.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { COMPRESSION_NAMES } from '../../protocol/records/compression';
import { ControlRecordType, parseControlRecordType, parseEndTxnMarker, readEndTxnMarker } from '../../protocol/records/control-record';
import { RecordIterator } from '../../protocol/records/record';
import {
  CURRENT_MAGIC,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
  TimestampType,
} from '../../protocol/records/record-batch';
import { IndexVerifier, OffsetEntry, TimeEntry } from '../index/index-verifier';
import { AbortedTxn, TXN_INDEX_ENTRY_SIZE, TXN_INDEX_VERSION } from '../index/transaction-index';
import {
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  PRODUCER_SNAPSHOT_FILE_SUFFIX,
  TIME_INDEX_FILE_SUFFIX,
  TXN_INDEX_FILE_SUFFIX,
  offsetFromFileName,
} from '../log-file-utils';
import { ProducerStateEntry, ProducerStateManager } from '../producer-state-manager';
import { BatchRules, PreviousBatch, readInt64Number } from '../segment-scanner';

export interface DumpLogOptions {
  deepIteration?: boolean;
  /** Print keys and payloads (implies deepIteration). */
  printDataLog?: boolean;
  /** Index files: only the verdict of the load-time check. */
  indexSanityCheck?: boolean;
  /** Index files: check against the log without printing the entries. */
  verifyIndexOnly?: boolean;
  /** .log files: stop after this many bytes of batches (Kafka's --max-bytes). */
  maxBytes?: number;
  /** Offsets may have gaps (compacted topics). */
  allowOffsetGaps?: boolean;
  /** Leave out the per-record metadata, print only payloads (Kafka's --skip-record-metadata). */
  skipRecordMetadata?: boolean;
  /**
   * The log was shut down cleanly: the newest segment's time index must end with its largest
   * timestamp too (what loading requires). Without it that one rule is relaxed for the newest
   * segment, which a running broker may still be appending to.
   */
  closedLog?: boolean;
}

export interface DumpLogResult {
  files: number;
  /** Every problem found, prefixed with its file. */
  problems: string[];
}

const INT32_MAX = 0x7fffffff;

/** Sequential reads of one file through a 1 MiB window. */
class FileReader {
  private readonly fd: number;
  readonly size: number;
  private win = Buffer.allocUnsafe(1024 * 1024);
  private winStart = 0;
  private winLen = 0;

  constructor(readonly file: string) {
    this.fd = nodefs.openSync(file, 'r');
    this.size = nodefs.fstatSync(this.fd).size;
  }

  /** `len` bytes at `pos` (the caller checked they lie in the file): a view valid until the next call. */
  read(pos: number, len: number): Buffer {
    if (pos < this.winStart || pos + len > this.winStart + this.winLen) {
      if (len > this.win.length) this.win = Buffer.allocUnsafe(len);
      this.winStart = pos;
      this.winLen = Math.min(this.win.length, this.size - pos);
      let done = 0;
      while (done < this.winLen) {
        const n = nodefs.readSync(this.fd, this.win, done, this.winLen - done, pos + done);
        if (n <= 0) throw new Error(`${this.file}: unexpected end of file at ${pos + done}`);
        done += n;
      }
    }
    return this.win.subarray(pos - this.winStart, pos - this.winStart + len);
  }

  close(): void {
    nodefs.closeSync(this.fd);
  }
}

interface HeaderWalkResult {
  batches: { position: number; lastOffset: bigint; maxTimestamp: number }[] | null;
  /** Where the valid framing ends. */
  end: number;
  /** Why the walk stopped before the end of the file, if it did. */
  stopped?: string;
}

/**
 * Walks a .log's batch headers (framing and magic only), calling `visit` for each; `whole()` reads
 * the entire batch (after it the header view may no longer be valid).
 */
function walkHeaders(file: string, visit: (position: number, header: Buffer, whole: () => Buffer) => void): { end: number; stopped?: string } {
  if (!nodefs.existsSync(file)) return { end: 0, stopped: `${path.basename(file)} does not exist` };
  const r = new FileReader(file);
  try {
    let pos = 0;
    while (pos < r.size) {
      if (r.size - pos < RECORD_BATCH_OVERHEAD) return { end: pos, stopped: `${r.size - pos} trailing bytes` };
      const h = r.read(pos, RECORD_BATCH_OVERHEAD);
      const total = h.readInt32BE(8) + LOG_OVERHEAD;
      if (total < RECORD_BATCH_OVERHEAD || pos + total > r.size) return { end: pos, stopped: `invalid batch length at position ${pos}` };
      if (h.readInt8(16) !== CURRENT_MAGIC) return { end: pos, stopped: `magic ${h.readInt8(16)} at position ${pos}` };
      const at = pos;
      visit(pos, h, () => r.read(at, total));
      pos += total;
    }
    return { end: pos };
  } finally {
    r.close();
  }
}

/** A .txnindex entry as stored (version included, unlike AbortedTxn). */
interface TxnEntry extends AbortedTxn {
  version: number;
}

function txnEntryName(i: number, e: TxnEntry): string {
  return `entry ${i} (producerId ${e.producerId}, lastOffset ${e.lastOffset})`;
}

/** What the transaction index checks need of a batch. */
interface BatchSummary {
  baseOffset: bigint;
  lastOffset: bigint;
  producerId: bigint;
  isTransactional: boolean;
  isControl: boolean;
  /** Control batches: the end-transaction marker type, or why there is none. */
  marker?: string;
}

/** The end-transaction marker of a control batch: ABORT, COMMIT, or why it has none. */
function markerOf(b: RecordBatch): string {
  try {
    const m = readEndTxnMarker(b);
    return m === null ? 'no records' : ControlRecordType[m.type];
  } catch (e) {
    return (e as Error).message;
  }
}

function describeBatch(b: BatchSummary): string {
  return `offsets ${b.baseOffset}..${b.lastOffset}, producerId ${b.producerId}${b.isTransactional ? ', transactional' : ''}${b.isControl ? ', control' : ''}`;
}

/** The version int16 and CRC uint32 before a snapshot's entries, and the int32 entry count. */
const SNAPSHOT_HEADER_SIZE = 2 + 4 + 4;
/** producerId, epoch, lastSequence, lastOffset, offsetDelta, timestamp, coordinatorEpoch, currentTxnFirstOffset. */
const SNAPSHOT_ENTRY_SIZE = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

/** A batch's first sequence from its last one (Kafka's DefaultRecordBatch.decrementSequence: wraps at Int32 max). */
function decrementSequence(lastSeq: number, delta: bigint): number {
  const d = Number(delta);
  if (d < 0 || d > INT32_MAX) return lastSeq - d;
  return lastSeq < d ? INT32_MAX - (d - lastSeq) + 1 : lastSeq - d;
}

/** Formats like Java's OptionalLong. */
function optionalLong(v: bigint | null): string {
  return v === null ? 'OptionalLong.empty' : `OptionalLong[${v}]`;
}

function tsTypeName(t: TimestampType): string {
  return t === TimestampType.LOG_APPEND_TIME ? 'LogAppendTime' : 'CreateTime';
}

function printable(b: Buffer | null): string {
  return b === null ? 'null' : b.toString('utf8');
}

export class LogDumper {
  readonly problems: string[] = [];
  files = 0;
  /** The last .log dumped: where it ended, for the check across segment boundaries. */
  private lastLog: { dir: string; base: bigint; prev: PreviousBatch | null; nextOffset: bigint } | null = null;

  constructor(
    private readonly opts: DumpLogOptions,
    private readonly out: (line: string) => void,
  ) {}

  dumpPath(p: string): void {
    let st: nodefs.Stats;
    try {
      st = nodefs.statSync(p);
    } catch (e) {
      this.problem(p, `cannot read: ${(e as Error).message}`);
      return;
    }
    if (st.isDirectory()) {
      // Segment by segment, each as .log, .index, .timeindex, .txnindex, then snapshots.
      const rank = (n: string): number => [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX].findIndex((x) => n.endsWith(x)) & 0xff;
      const names = nodefs
        .readdirSync(p)
        .filter((n) => offsetFromFileName(n) !== undefined)
        .sort((a, b) => {
          const oa = offsetFromFileName(a) as bigint;
          const ob = offsetFromFileName(b) as bigint;
          return oa < ob ? -1 : oa > ob ? 1 : rank(a) - rank(b) || (a < b ? -1 : 1);
        });
      for (const n of names) this.dumpFile(path.join(p, n));
      return;
    }
    this.dumpFile(p);
  }

  private problem(file: string, msg: string): void {
    this.problems.push(`${file}: ${msg}`);
  }

  dumpFile(file: string): void {
    const name = path.basename(file);
    if (name.endsWith(LOG_FILE_SUFFIX)) {
      this.files++;
      this.out(`Dumping ${file}`);
      this.dumpLogFile(file);
    } else if (name.endsWith(INDEX_FILE_SUFFIX)) {
      this.files++;
      this.out(`Dumping ${file}`);
      this.dumpIndex(file, 'offset');
    } else if (name.endsWith(TIME_INDEX_FILE_SUFFIX)) {
      this.files++;
      this.out(`Dumping ${file}`);
      this.dumpIndex(file, 'time');
    } else if (name.endsWith(TXN_INDEX_FILE_SUFFIX)) {
      this.files++;
      this.out(`Dumping ${file}`);
      this.dumpTxnIndex(file);
    } else if (name.endsWith(PRODUCER_SNAPSHOT_FILE_SUFFIX)) {
      this.files++;
      this.out(`Dumping ${file}`);
      this.dumpSnapshot(file);
    } else {
      this.out(`Ignoring unknown file ${file}`);
    }
  }

  // ---- .log ---------------------------------------------------------------------------------

  private dumpLogFile(file: string): void {
    const base = offsetFromFileName(path.basename(file));
    if (base === undefined) {
      this.problem(file, 'the file name does not start with a 20-digit base offset');
      return;
    }
    this.out(`Log starting offset: ${base}`);
    const dir = path.dirname(path.resolve(file));
    const follows = this.lastLog !== null && this.lastLog.dir === dir && this.lastLog.base < base;
    const prev = follows ? this.lastLog!.prev : null;
    // The first offset no earlier batch of this directory's files holds (empty segments carry it on).
    let expectedNext = follows ? this.lastLog!.nextOffset : base;
    const deep = this.opts.deepIteration || this.opts.printDataLog;
    const problems: string[] = [];
    const nonConsecutive: string[] = [];
    const r = new FileReader(file);
    const rules = new BatchRules({ baseOffset: base, contiguous: !this.opts.allowOffsetGaps, indexIntervalBytes: 0 }, prev, r.size > 0);
    if (rules.segmentProblem) problems.push(rules.segmentProblem);
    let pos = 0;
    let lastPrev: PreviousBatch | null = prev;
    let stopped: string | undefined;
    const aborts: { offset: bigint; producerId: bigint }[] = [];
    const gaps = new GapTracker((from, to, inBatch) =>
      this.out(`${inBatch ? '| ' : ''}Offset gap: ${from}..${to} (${to - from + 1n} offset${to === from ? '' : 's'} held by no record${inBatch ? ' inside the batch' : ''})`),
    );
    const maxBytes = this.opts.maxBytes ?? Infinity;
    try {
      while (pos < r.size && pos < maxBytes) {
        const left = r.size - pos;
        if (left < RECORD_BATCH_OVERHEAD) {
          stopped = r.read(pos, left).every((b) => b === 0) ? 'zero-filled tail' : 'too few bytes for a batch header (torn write)';
          break;
        }
        const head = r.read(pos, RECORD_BATCH_OVERHEAD);
        const batchLength = head.readInt32BE(8);
        const total = batchLength + LOG_OVERHEAD;
        if (total < RECORD_BATCH_OVERHEAD) {
          stopped = batchLength === 0 && head.readBigInt64BE(0) === 0n ? 'zero-filled tail' : `invalid batch length ${batchLength}`;
          break;
        }
        if (total > left) {
          stopped = `a batch of ${total} bytes runs past the end of the file (torn write)`;
          break;
        }
        const magic = head.readInt8(16);
        if (magic !== CURRENT_MAGIC) {
          stopped = `record batch magic ${magic} is not supported (only v2)`;
          break;
        }
        const buf = r.read(pos, total);
        const batch = new RecordBatch(buf, 0);
        const valid = batch.isValidCrc();
        // Offsets no batch holds (the log cleaner's gaps; with the previous segment's last batch).
        if (valid && batch.baseOffset > expectedNext) gaps.note(expectedNext, batch.baseOffset - 1n);
        if (valid && batch.lastOffset >= expectedNext) expectedNext = batch.lastOffset + 1n;
        this.printBatch(batch, pos, valid);
        const where = `batch at position ${pos} (offsets ${batch.baseOffset}..${batch.lastOffset})`;
        if (!valid) problems.push(`${where}: CRC mismatch (stored ${batch.crc}, computed ${batch.computeCrc()})`);
        const ruleProblem = rules.check(buf, 0);
        if (ruleProblem !== undefined) {
          if (/offsets|offset gap/.test(ruleProblem)) nonConsecutive.push(`  ${rules.prevRel === null ? '-' : rules.offset(rules.prevRel)} is followed by ${batch.baseOffset}`);
          problems.push(`${where}: ${ruleProblem}`);
        }
        if (Number.isFinite(rules.relLast) && rules.relLast >= 0 && rules.relLast <= INT32_MAX) {
          rules.advance();
          lastPrev = { lastOffset: batch.lastOffset, leaderEpoch: rules.leaderEpoch };
        }
        if (deep) this.dumpRecords(batch, where, problems, gaps);
        if (valid && batch.isControlBatch && markerOf(batch) === 'ABORT') aborts.push({ offset: batch.lastOffset, producerId: batch.producerId });
        pos += total;
      }
    } finally {
      r.close();
    }
    if (stopped !== undefined) {
      this.out(`Found ${r.size - pos} invalid bytes at the end of ${path.basename(file)} (${stopped})`);
      problems.push(`${r.size - pos} invalid bytes at position ${pos}: ${stopped}`);
    }
    // Every ABORT marker has its .txnindex entry (created with the segment's first one; checked
    // entry by entry when the .txnindex is dumped). Kafka's cleaner may leave a marker without one.
    const txnIndex = path.join(path.dirname(file), path.basename(file).slice(0, -LOG_FILE_SUFFIX.length) + TXN_INDEX_FILE_SUFFIX);
    if (aborts.length > 0 && !this.opts.allowOffsetGaps && !nodefs.existsSync(txnIndex)) {
      problems.push(
        `${aborts.length} ABORT marker(s) (the first of producerId ${aborts[0].producerId} at offset ${aborts[0].offset}) but no ${path.basename(txnIndex)} ` +
          `(a read_committed consumer would not skip the aborted transactions' records)`,
      );
    }
    this.lastLog = { dir, base, prev: lastPrev, nextOffset: expectedNext };
    if (gaps.count > 0) this.out(`Offset gaps in ${path.basename(file)}: ${gaps.count}, ${gaps.offsets} offset(s) held by no record (a cleaned segment's)`);
    if (nonConsecutive.length > 0) {
      this.out(`Non-consecutive offsets in ${file}`);
      for (const l of nonConsecutive) this.out(l);
    }
    this.report(file, problems);
  }

  private printBatch(b: RecordBatch, position: number, valid: boolean): void {
    const deleteHorizon = b.hasDeleteHorizon ? b.baseTimestamp : null;
    this.out(
      `baseOffset: ${b.baseOffset} lastOffset: ${b.lastOffset} count: ${b.recordsCount} baseSequence: ${b.baseSequence} ` +
        `lastSequence: ${b.lastSequence} producerId: ${b.producerId} producerEpoch: ${b.producerEpoch} ` +
        `partitionLeaderEpoch: ${b.partitionLeaderEpoch} isTransactional: ${b.isTransactional} isControl: ${b.isControlBatch} ` +
        `deleteHorizonMs: ${optionalLong(deleteHorizon)} position: ${position} ${tsTypeName(b.timestampType)}: ${b.maxTimestamp} ` +
        `size: ${b.sizeInBytes} magic: ${b.magic} compresscodec: ${COMPRESSION_NAMES[b.compressionType as keyof typeof COMPRESSION_NAMES] ?? `unknown(${b.compressionType})`} ` +
        `crc: ${b.crc} isvalid: ${valid}`,
    );
  }

  private dumpRecords(b: RecordBatch, where: string, problems: string[], gaps?: GapTracker): void {
    const tsName = tsTypeName(b.timestampType);
    let prevOffset = -1n;
    let expected = b.baseOffset;
    let maxTs = -1n;
    let n = 0;
    try {
      const it = new RecordIterator(b);
      while (it.next()) {
        n++;
        const off = it.offset;
        const ts = it.timestamp;
        if (ts > maxTs) maxTs = ts;
        if (off < b.baseOffset || off > b.lastOffset) problems.push(`${where}: record ${it.index} has offset ${off}, outside the batch`);
        else if (off <= prevOffset) problems.push(`${where}: record ${it.index} has offset ${off}, not above the previous record's ${prevOffset}`);
        prevOffset = off;
        // Records the cleaner removed from inside a batch it kept.
        if (gaps && off > expected && off <= b.lastOffset) gaps.note(expected, off - 1n, true);
        if (off >= expected) expected = off + 1n;
        let line = '';
        if (!this.opts.skipRecordMetadata) {
          const headerKeys = it.headers().map((h) => h.key);
          line = `| offset: ${off} ${tsName}: ${ts} keySize: ${it.keyLength} valueSize: ${it.valueLength} sequence: ${it.sequence} headerKeys: [${headerKeys.join(',')}]`;
        }
        if (b.isControlBatch) {
          const type = parseControlRecordType(it.key);
          if (type === ControlRecordType.ABORT || type === ControlRecordType.COMMIT) {
            const m = parseEndTxnMarker(it.key, it.value);
            line += ` endTxnMarker: ${ControlRecordType[m.type]} coordinatorEpoch: ${m.coordinatorEpoch}`;
          } else {
            line += ` controlType: ${ControlRecordType[type]}(${it.key && it.key.length >= 4 ? it.key.readInt16BE(2) : -1})`;
          }
        } else if (this.opts.printDataLog) {
          if (it.keyLength >= 0) line += ` key: ${printable(it.key)}`;
          line += ` payload: ${printable(it.value)}`;
        }
        this.out(line.startsWith(' ') ? line.slice(1) : line);
      }
    } catch (e) {
      problems.push(`${where}: records cannot be read: ${(e as Error).message}`);
      return;
    }
    if (gaps && !b.isControlBatch && expected <= b.lastOffset) gaps.note(expected, b.lastOffset, true);
    if (n !== b.recordsCount) problems.push(`${where}: ${n} records read, the header says ${b.recordsCount}`);
    if (b.timestampType === TimestampType.CREATE_TIME && n > 0 && !b.hasDeleteHorizon && maxTs !== b.maxTimestamp) {
      problems.push(`${where}: the records' largest timestamp is ${maxTs}, the batch says ${b.maxTimestamp}`);
    }
  }

  // ---- indexes ------------------------------------------------------------------------------

  private dumpIndex(file: string, kind: 'offset' | 'time'): void {
    const base = offsetFromFileName(path.basename(file));
    if (base === undefined) {
      this.problem(file, 'the file name does not start with a 20-digit base offset');
      return;
    }
    const entrySize = kind === 'offset' ? 8 : 12;
    const raw = nodefs.readFileSync(file);
    const problems: string[] = [];
    if (raw.length % entrySize !== 0) problems.push(`size ${raw.length} is not a multiple of the entry size ${entrySize}`);
    let n = Math.floor(raw.length / entrySize);
    // What a Kafka broker leaves when it crashes with a preallocated index: trailing zero entries.
    let zeros = 0;
    while (n > 0 && raw.subarray((n - 1) * entrySize, n * entrySize).every((b) => b === 0)) {
      n--;
      zeros++;
    }
    const offsets: OffsetEntry[] = [];
    const times: TimeEntry[] = [];
    for (let i = 0; i < n; i++) {
      const at = i * entrySize;
      if (kind === 'offset') offsets.push({ rel: raw.readInt32BE(at), position: raw.readInt32BE(at + 4) });
      else times.push({ timestamp: readInt64Number(raw, at), rel: raw.readInt32BE(at + 8) });
    }
    const logFile = path.join(path.dirname(file), path.basename(file).replace(/\.(index|timeindex)$/, LOG_FILE_SUFFIX));
    const verifier =
      kind === 'offset'
        ? new IndexVerifier(base, { count: offsets.length, entry: (i) => offsets[i] }, null)
        : new IndexVerifier(base, null, { count: times.length, entry: (i) => times[i] });
    const relLastOf = (h: Buffer): number => Number(h.readBigInt64BE(0) - base) + h.readInt32BE(23);
    const walk = walkHeaders(logFile, (position, h) => {
      verifier.visit({ position, relLast: relLastOf(h), maxTimestamp: readInt64Number(h, 35) });
    });
    if (walk.stopped !== undefined) problems.push(`cannot check every entry against ${path.basename(logFile)}: ${walk.stopped}`);
    // The newest segment of a running broker has no final time-index entry yet (written when it
    // rolls or the broker stops): not a problem there, only noted.
    const newest = !nodefs.readdirSync(path.dirname(file)).some((n) => n.endsWith(LOG_FILE_SUFFIX) && (offsetFromFileName(n) ?? -1n) > base);
    for (const p of verifier.finish(walk.stopped === undefined, kind === 'time' && newest && !this.opts.closedLog)) problems.push(p);
    if (kind === 'time' && newest && !this.opts.closedLog && walk.stopped === undefined) {
      const strict = new IndexVerifier(base, null, { count: times.length, entry: (i) => times[i] });
      walkHeaders(logFile, (position, h) => strict.visit({ position, relLast: relLastOf(h), maxTimestamp: readInt64Number(h, 35) }));
      if (strict.finish().length > 0) this.out(`(newest segment: its largest timestamp is not in the time index yet; a broker writes it when the segment rolls or the broker stops)`);
    }
    for (let i = 0; i < offsets.length; i++) if (offsets[i].rel < 0) problems.push(`entry ${i} has a negative relative offset`);

    if (this.opts.indexSanityCheck) {
      if (problems.length === 0) this.out(`${file} passed sanity check.`);
      else this.out(`${file} failed sanity check: ${problems[0]}`);
    } else if (!this.opts.verifyIndexOnly) {
      if (n === 0) this.out(`${file} is empty.`);
      if (kind === 'offset') for (const e of offsets) this.out(`offset: ${base + BigInt(e.rel)} position: ${e.position}`);
      else for (const e of times) this.out(`timestamp: ${e.timestamp} offset: ${base + BigInt(e.rel)}`);
    }
    if (zeros > 0) this.out(`${zeros} trailing zero entries (preallocated space) ignored`);
    this.report(file, problems);
  }

  // ---- .txnindex ----------------------------------------------------------------------------

  private dumpTxnIndex(file: string): void {
    const base = offsetFromFileName(path.basename(file));
    if (base === undefined) {
      this.problem(file, 'the file name does not start with a 20-digit base offset');
      return;
    }
    const raw = nodefs.readFileSync(file);
    const problems: string[] = [];
    const n = Math.floor(raw.length / TXN_INDEX_ENTRY_SIZE);
    const entries: TxnEntry[] = [];
    for (let i = 0; i < n; i++) {
      const at = i * TXN_INDEX_ENTRY_SIZE;
      entries.push({
        version: raw.readInt16BE(at),
        producerId: raw.readBigInt64BE(at + 2),
        firstOffset: raw.readBigInt64BE(at + 10),
        lastOffset: raw.readBigInt64BE(at + 18),
        lastStableOffset: raw.readBigInt64BE(at + 26),
      });
    }
    let prevLast: bigint | null = null;
    entries.forEach((e, i) => {
      const where = txnEntryName(i, e);
      if (e.version !== TXN_INDEX_VERSION) problems.push(`${where}: version ${e.version} (the only version is ${TXN_INDEX_VERSION})`);
      if (e.firstOffset > e.lastOffset) problems.push(`${where}: firstOffset ${e.firstOffset} is above lastOffset`);
      if (e.lastOffset < base) problems.push(`${where}: lastOffset is below the segment's base offset ${base}`);
      if (prevLast !== null && e.lastOffset <= prevLast) problems.push(`${where}: not after the previous entry's lastOffset ${prevLast} (entries are in marker order)`);
      // The LSO right after the marker: an older open transaction's first offset, or the marker's offset + 1.
      if (e.lastStableOffset > e.lastOffset + 1n) problems.push(`${where}: lastStableOffset ${e.lastStableOffset} is above lastOffset + 1`);
      if (prevLast === null || e.lastOffset > prevLast) prevLast = e.lastOffset;
    });
    const torn = raw.length % TXN_INDEX_ENTRY_SIZE;
    if (torn !== 0) problems.push(`${torn} bytes at position ${n * TXN_INDEX_ENTRY_SIZE} are not a whole ${TXN_INDEX_ENTRY_SIZE}-byte entry (torn write)`);

    const logFile = path.join(path.dirname(file), path.basename(file).slice(0, -TXN_INDEX_FILE_SUFFIX.length) + LOG_FILE_SUFFIX);
    const notes: string[] = [];
    if (nodefs.existsSync(logFile)) this.checkTxnIndexAgainstLog(logFile, base, entries, problems, notes);
    else notes.push(`(no ${path.basename(logFile)} next to it: entries not checked against the log)`);

    if (this.opts.indexSanityCheck) {
      if (problems.length === 0) this.out(`${file} passed sanity check.`);
      else this.out(`${file} failed sanity check: ${problems[0]}`);
    } else if (!this.opts.verifyIndexOnly) {
      for (const e of entries) {
        this.out(`version: ${e.version} producerId: ${e.producerId} firstOffset: ${e.firstOffset} lastOffset: ${e.lastOffset} lastStableOffset: ${e.lastStableOffset}`);
      }
    }
    for (const l of notes) this.out(l);
    this.report(file, problems);
  }

  /**
   * Each entry's lastOffset must be an ABORT marker of its producer in the segment, its firstOffset
   * (when in this segment, and the transaction had data) the start of one of that producer's
   * transactional batches; every ABORT marker of the segment must have an entry.
   */
  private checkTxnIndexAgainstLog(logFile: string, base: bigint, entries: TxnEntry[], problems: string[], notes: string[]): void {
    const logName = path.basename(logFile);
    const compacted = this.opts.allowOffsetGaps === true;
    const wanted = new Set<bigint>();
    for (const e of entries) {
      wanted.add(e.lastOffset);
      if (!compacted && e.firstOffset >= base && e.firstOffset < e.lastOffset) wanted.add(e.firstOffset);
    }
    const sorted = [...wanted].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const holders = new Map<bigint, BatchSummary>();
    const aborts: { offset: bigint; producerId: bigint }[] = [];
    let walkedTo = -1n;
    const walk = walkHeaders(logFile, (_position, h, whole) => {
      const rb = new RecordBatch(h, 0);
      const summary: BatchSummary = {
        baseOffset: rb.baseOffset,
        lastOffset: rb.lastOffset,
        producerId: rb.producerId,
        isTransactional: rb.isTransactional,
        isControl: rb.isControlBatch,
      };
      if (summary.isControl) summary.marker = markerOf(new RecordBatch(whole(), 0));
      if (summary.lastOffset > walkedTo) walkedTo = summary.lastOffset;
      if (summary.marker === 'ABORT') aborts.push({ offset: summary.lastOffset, producerId: summary.producerId });
      // The wanted offsets this batch holds.
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid] < summary.baseOffset) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < sorted.length && sorted[i] <= summary.lastOffset; i++) if (!holders.has(sorted[i])) holders.set(sorted[i], summary);
    });
    const inLog = `in ${logName}`;
    entries.forEach((e, i) => {
      const where = txnEntryName(i, e);
      if (e.lastOffset > walkedTo && walk.stopped !== undefined) {
        problems.push(`${where}: cannot be checked against ${logName}: ${walk.stopped}`);
        return;
      }
      const m = holders.get(e.lastOffset);
      if (m === undefined) problems.push(`${where}: no batch ${inLog} holds offset ${e.lastOffset} (lastOffset must be the offset of the transaction's ABORT marker)`);
      else if (!m.isControl) problems.push(`${where}: offset ${e.lastOffset} ${inLog} is in a data batch (${describeBatch(m)}), not an ABORT marker`);
      else if (m.marker !== 'ABORT') problems.push(`${where}: offset ${e.lastOffset} ${inLog} is ${m.marker === 'COMMIT' ? 'a COMMIT marker' : `a control batch without an end-transaction marker (${m.marker})`} (${describeBatch(m)}), not an ABORT marker`);
      else if (m.producerId !== e.producerId) problems.push(`${where}: offset ${e.lastOffset} ${inLog} is the ABORT marker of producerId ${m.producerId}`);
      if (compacted || e.firstOffset < base || e.firstOffset >= e.lastOffset) return;
      const f = holders.get(e.firstOffset);
      if (f === undefined || f.baseOffset !== e.firstOffset || f.isControl || !f.isTransactional || f.producerId !== e.producerId) {
        problems.push(
          `${where}: firstOffset ${e.firstOffset} is not the start of a transactional batch of producerId ${e.producerId} ${inLog}` +
            (f === undefined ? ' (no batch holds it)' : ` (${describeBatch(f)})`),
        );
      }
    });
    const indexed = new Set(entries.map((e) => e.lastOffset));
    for (const a of aborts) {
      if (indexed.has(a.offset)) continue;
      const msg = `the ABORT marker of producerId ${a.producerId} at offset ${a.offset} ${inLog} has no entry`;
      // Kafka's cleaner drops the entries of aborted transactions it emptied, keeping the marker a while.
      if (compacted) notes.push(`(${msg}: allowed with --allow-offset-gaps, the cleaner drops the entries of emptied aborted transactions)`);
      else problems.push(`${msg} (a read_committed consumer would not skip that transaction's records)`);
    }
  }

  // ---- .snapshot ----------------------------------------------------------------------------

  private dumpSnapshot(file: string): void {
    const problems: string[] = [];
    const offset = offsetFromFileName(path.basename(file));
    if (offset === undefined) problems.push('the file name does not start with a 20-digit offset');
    const raw = nodefs.readFileSync(file);
    let entries: ProducerStateEntry[];
    try {
      // The broker's own decoder: a snapshot it rejects is deleted at load (the state is rebuilt
      // from an older snapshot and the log).
      entries = ProducerStateManager.decodeSnapshot(raw);
    } catch (e) {
      problems.push(`cannot be loaded: ${(e as Error).message}`);
      this.report(file, problems);
      return;
    }
    const expectedSize = SNAPSHOT_HEADER_SIZE + entries.length * SNAPSHOT_ENTRY_SIZE;
    if (raw.length > expectedSize) problems.push(`${raw.length - expectedSize} bytes after the last entry (at position ${expectedSize})`);
    const seen = new Set<bigint>();
    for (const e of entries) {
      const where = `producerId ${e.producerId}`;
      if (seen.has(e.producerId)) problems.push(`${where} has more than one entry`);
      seen.add(e.producerId);
      const b = e.batches[e.batches.length - 1];
      let line =
        `producerId: ${e.producerId} producerEpoch: ${e.producerEpoch} coordinatorEpoch: ${e.coordinatorEpoch} ` +
        `currentTxnFirstOffset: ${optionalLong(e.currentTxnFirstOffset >= 0n ? e.currentTxnFirstOffset : null)} lastTimestamp: ${e.lastTimestamp}`;
      if (b !== undefined) {
        const offsetDelta = b.lastOffset - b.firstOffset;
        line +=
          ` firstSequence: ${decrementSequence(b.lastSeq, offsetDelta)} lastSequence: ${b.lastSeq} lastOffset: ${b.lastOffset} ` +
          `offsetDelta: ${offsetDelta} timestamp: ${b.timestamp}`;
        if (offsetDelta < 0n) problems.push(`${where}: offsetDelta ${offsetDelta} is negative (the batch would end before it starts)`);
        if (offset !== undefined && b.lastOffset >= offset) {
          problems.push(`${where}: lastOffset ${b.lastOffset} is not below the snapshot's offset ${offset} (a snapshot holds the state of the log before its offset)`);
        }
      }
      if (offset !== undefined && e.currentTxnFirstOffset >= offset) {
        problems.push(`${where}: currentTxnFirstOffset ${e.currentTxnFirstOffset} is not below the snapshot's offset ${offset}`);
      }
      this.out(line);
    }
    this.report(file, problems);
  }

  private report(file: string, problems: string[]): void {
    if (problems.length === 0) return;
    this.out(`Problems in ${file}:`);
    for (const p of problems) {
      this.out(`  ${p}`);
      this.problem(file, p);
    }
  }
}

/** Dumps and checks `paths` (files or directories), writing lines to `out`. */
export function dumpLog(paths: string[], opts: DumpLogOptions, out: (line: string) => void): DumpLogResult {
  const d = new LogDumper(opts, out);
  for (const p of paths) d.dumpPath(p);
  return { files: d.files, problems: d.problems };
}

export const DUMP_LOG_USAGE = `usage: krill dump-log [--deep-iteration] [--print-data-log] [--index-sanity-check]
                      [--verify-index-only] [--max-bytes N] [--skip-record-metadata]
                      [--allow-offset-gaps] [--closed] [--files FILE,...] FILE|DIR...
Prints and checks .log, .index, .timeindex, .txnindex and .snapshot files (like kafka-dump-log.sh).
A directory stands for its segment files. Exit status: 0 when everything is consistent, 1 when a
problem was found.
  --deep-iteration        every record of every batch (control records decoded)
  --print-data-log        keys and payloads too (implies --deep-iteration)
  --index-sanity-check    for index files, only whether they pass the check made at startup
                          (a .txnindex: whether its entries are sound and match its .log)
  --verify-index-only     check index files against their .log without printing the entries
  --max-bytes N           stop reading a .log after N bytes
  --skip-record-metadata  with --print-data-log, only keys and payloads
  --allow-offset-gaps     offsets may have gaps (compacted topics)
  --closed                the log was shut down cleanly: the newest segment's time index must end
                          with its largest timestamp too (as loading requires)`;

class OutputClosed extends Error {}

/**
 * Writes to fd 1 synchronously: a deep dump is one long synchronous loop, so a closed pipe
 * (`| head`) must stop it at once (EPIPE) instead of surfacing as an 'error' event at the end.
 */
function writeStdout(s: string): void {
  const b = Buffer.from(s, 'utf8');
  let off = 0;
  while (off < b.length) {
    try {
      off += nodefs.writeSync(1, b, off, b.length - off);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') throw new OutputClosed();
      if (code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // a non-blocking pipe is full
    }
  }
}

/** The `krill dump-log` command; returns the exit status. */
export function dumpLogMain(
  argv: string[],
  stdout: (s: string) => void = writeStdout,
  stderr: (s: string) => void = (s) => process.stderr.write(s),
): number {
  const opts: DumpLogOptions = {};
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--deep-iteration':
        opts.deepIteration = true;
        break;
      case '--print-data-log':
        opts.printDataLog = true;
        break;
      case '--index-sanity-check':
        opts.indexSanityCheck = true;
        break;
      case '--verify-index-only':
        opts.verifyIndexOnly = true;
        break;
      case '--skip-record-metadata':
        opts.skipRecordMetadata = true;
        break;
      case '--allow-offset-gaps':
        opts.allowOffsetGaps = true;
        break;
      case '--closed':
        opts.closedLog = true;
        break;
      case '--max-bytes': {
        const v = Number(argv[++i]);
        if (!Number.isInteger(v) || v <= 0) {
          stderr(`krill dump-log: --max-bytes needs a positive integer\n${DUMP_LOG_USAGE}\n`);
          return 2;
        }
        opts.maxBytes = v;
        break;
      }
      case '--files': {
        const v = argv[++i];
        if (v === undefined) {
          stderr(`krill dump-log: --files needs a value\n${DUMP_LOG_USAGE}\n`);
          return 2;
        }
        files.push(...v.split(',').filter((f) => f.length > 0));
        break;
      }
      case '--help':
      case '-h':
        stdout(DUMP_LOG_USAGE + '\n');
        return 0;
      default:
        if (a.startsWith('--')) {
          stderr(`krill dump-log: unknown option ${a}\n${DUMP_LOG_USAGE}\n`);
          return 2;
        }
        files.push(a);
    }
  }
  if (files.length === 0) {
    stderr(`krill dump-log: no files given\n${DUMP_LOG_USAGE}\n`);
    return 2;
  }
  // Lines are gathered into ~64 KiB writes: a deep dump of a large segment is millions of lines.
  let pending: string[] = [];
  let pendingBytes = 0;
  const flush = (): void => {
    if (pending.length > 0) stdout(pending.join(''));
    pending = [];
    pendingBytes = 0;
  };
  let result: DumpLogResult;
  try {
    result = dumpLog(files, opts, (line) => {
      pending.push(line, '\n');
      pendingBytes += line.length + 1;
      if (pendingBytes >= 64 * 1024) flush();
    });
    flush();
  } catch (e) {
    if (e instanceof OutputClosed) return 0; // the reader went away (| head): not an error
    throw e;
  }
  if (result.problems.length > 0) {
    stderr(`krill dump-log: ${result.problems.length} problem(s) found in ${result.files} file(s)\n`);
    return 1;
  }
  return 0;
}

/**
 * The offset gaps of one .log file as dump-log walks it: offsets that no batch (or, with record
 * iteration, no record of a kept batch) holds, which the log cleaner leaves. Each gap is printed
 * where it is found; the file's totals are printed after its batches.
 */
class GapTracker {
  count = 0;
  offsets = 0n;
  constructor(private readonly print: (from: bigint, to: bigint, inBatch: boolean) => void) {}
  note(from: bigint, to: bigint, inBatch = false): void {
    if (to < from) return;
    this.count++;
    this.offsets += to - from + 1n;
    this.print(from, to, inBatch);
  }
}
