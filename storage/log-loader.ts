/**
 * Loads one partition directory into segments at startup, and holds the ONE truncating recovery
 * routine, `recoverSegmentsSteps` (run by `recoverSegments` with synchronous reads and by
 * `recoverSegmentsAsync` with read-ahead on the thread pool: same code, only the byte source
 * differs).
 *
 * KAFKA-3955 is the lesson here: Kafka had four places that re-read a segment during loading and
 * only one of them truncated on bad data, so a non-monotonic batch in a middle segment threw from
 * the other three and killed broker startup. Here every reason to re-read a segment (no clean
 * shutdown and the segment is past the recovery point; an index file missing, failing its sanity
 * check or disagreeing with the batch headers; a tail that does not end on a batch boundary; a
 * segment that does not follow its predecessor) only *marks* the segment, and the single routine
 * then walks the log in offset order. It validates every batch of each marked segment
 * (segment-scanner.ts: framing, magic, CRC, counts, offsets strictly increasing and contiguous
 * across segments, leader epochs, timestamps), rebuilds the indexes from the batches it accepts,
 * and at the first bad batch truncates there and deletes every later segment. Nothing in recovery
 * throws on bad data, so one damaged partition never fails startup; I/O errors still propagate
 * (the directory goes offline).
 *
 * Indexes are derived data: any doubt and they are rebuilt, and a rebuild always goes through the
 * same routine (it re-validates the segment's batches as it reads them).
 */
import * as path from 'node:path';
import { KafkaError } from '../protocol/errors';
import {
  BATCH_LENGTH_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
} from '../protocol/records/record-batch';
import { BatchHeader } from './file-records';
import { StorageFs, isIoError } from './fs';
import { LogConfig } from './log-config';
import {
  CLEANED_FILE_SUFFIX,
  DELETED_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  SWAP_FILE_SUFFIX,
  isIndexFile,
  isLogFile,
  logFile,
  offsetFromFileName,
  offsetIndexFile,
  replaceSuffix,
  timeIndexFile,
} from './log-file-utils';
import { LogSegment } from './log-segment';
import { LogSegments } from './log-segments';
import { IndexVerifier } from './index/index-verifier';
import { PreviousBatch, SegmentScanner, readInt64Number } from './segment-scanner';
import { CorruptIndexError } from './errors';
import { Logger } from '../common/logger';
import { Time } from '../common/time';
import { TopicPartition, tpString } from '../common/topic-partition';

export interface LoadParams {
  fs: StorageFs;
  dir: string;
  tp: TopicPartition;
  config: LogConfig;
  time: Time;
  logger: Logger;
  recoveryPointCheckpoint: bigint;
  logStartOffsetCheckpoint: bigint;
  hadCleanShutdown: boolean;
  /**
   * The log may hold offset gaps although its policy has no compact: the log cleaner has worked on
   * it (it has a cleaner-offset-checkpoint entry) and its topic was switched to delete since.
   */
  allowOffsetGaps?: boolean;
  /** A progress line at most this often while a log is recovered (default 10 s). */
  progressIntervalMs?: number;
  /**
   * The log is tiered (UnifiedLog.remoteLogEnabled): its log start offset is the checkpointed one
   * even below the first local segment, whose older data lives in remote storage.
   */
  remoteLogEnabled?: boolean;
}

export interface RecoveryReport {
  /** Segments whose batches were re-read and re-indexed. */
  recoveredSegments: number;
  /** Segments whose index files were missing or failed the sanity check. */
  rebuiltIndexes: number;
  /** Where the log was cut (the new log end offset), if recovery found bad data. */
  truncatedAtOffset?: bigint;
  /** Bytes removed: the cut segment's tail plus every later segment deleted with it. */
  truncatedBytes: number;
  /** Segments removed because they followed the truncation point (or became empty). */
  deletedSegments: number;
  reason?: string;
  /** Bytes re-read and validated by recovery (CRC and all), and the time it took. */
  scannedBytes: number;
  recoveryMs: number;
  /** Leader epochs first seen in re-read batches, in offset order (for the leader epoch cache). */
  epochStarts: { epoch: number; startOffset: bigint }[];
}

export interface LoadedLog {
  segments: LogSegments;
  logStartOffset: bigint;
  recoveryPoint: bigint;
  logEndOffset: bigint;
  report: RecoveryReport;
}

export interface RecoveryContext {
  tp: TopicPartition;
  logger: Logger;
  /** Offsets follow each other without gaps (cleanup.policy without compact): see segment-scanner.ts. */
  contiguous: boolean;
  /** A progress line at most this often (default 10 s). */
  progressIntervalMs?: number;
  /** Monotonic milliseconds (default performance.now). */
  now?: () => number;
}

/** What a trusted (not re-read) segment ends with, from its header walk. */
export interface SegmentSummary {
  /** Base offset of its first batch (null when empty). */
  firstOffset: bigint | null;
  lastOffset: bigint | null;
  nextOffset: bigint;
  /** Highest non-negative partition leader epoch of its batches, or -1. */
  leaderEpoch: number;
}

/** One segment for a driver to read: it feeds `scanner` the segment's bytes in order, then resumes the routine. */
export interface ScanStep {
  seg: LogSegment;
  scanner: SegmentScanner;
  progress: RecoveryProgress;
}

export function emptyReport(): RecoveryReport {
  return { recoveredSegments: 0, rebuiltIndexes: 0, truncatedBytes: 0, deletedSegments: 0, scannedBytes: 0, recoveryMs: 0, epochStarts: [] };
}

/**
 * THE truncating recovery routine (KAFKA-3955), as a generator so that the same code runs with
 * synchronous reads (`recoverSegments`) and with read-ahead on the thread pool
 * (`recoverSegmentsAsync`): it yields each segment to re-read and the driver feeds that segment's
 * bytes to the step's scanner. Walks `segments` in offset order; a segment for which
 * `needsRecovery` is true is validated batch by batch (segment-scanner.ts) and gets its indexes
 * rebuilt; other segments are trusted and only asked where they end (`known`, or a header walk),
 * and re-read after all if they do not follow the previous segment. At the first invalid batch:
 * the segment is cut there, every later segment deleted (the cut one too if left empty and not
 * the first), and the truncation offset, position, bytes and reason are logged. Returns the log
 * end offset.
 */
export function* recoverSegmentsSteps(
  segments: LogSegments,
  needsRecovery: (seg: LogSegment) => boolean,
  ctx: RecoveryContext,
  report: RecoveryReport,
  known: (seg: LogSegment) => SegmentSummary | undefined = () => undefined,
): Generator<ScanStep, bigint, void> {
  const all = segments.values();
  const marked = all.filter(needsRecovery);
  const progress = new RecoveryProgress(ctx, marked.length, marked.reduce((n, s) => n + s.size, 0));
  let prev = null as PreviousBatch | null;
  let nextOffset = all.length > 0 ? all[0].baseOffset : 0n;
  for (let i = 0; i < all.length; i++) {
    const seg = all[i];
    let recover = marked.includes(seg);
    if (!recover) {
      const summary = known(seg) ?? summarizeSegment(seg, ctx);
      if (summary === undefined) {
        recover = true;
      } else if (summary.lastOffset !== null) {
        const why = boundaryProblem(seg, summary, prev, ctx.contiguous);
        if (why !== undefined) {
          ctx.logger.warn(`${tpString(ctx.tp)}: ${why}; recovering segment ${seg.baseOffset}`);
          recover = true;
        } else {
          prev = { lastOffset: summary.lastOffset, leaderEpoch: Math.max(prev?.leaderEpoch ?? -1, summary.leaderEpoch) };
        }
      }
      if (!recover) {
        nextOffset = summary!.nextOffset;
        continue;
      }
    }
    const nextOffsetBefore = i === 0 ? seg.baseOffset : nextOffset;
    const scanner: SegmentScanner = new SegmentScanner(
      { baseOffset: seg.baseOffset, contiguous: ctx.contiguous, indexIntervalBytes: seg.indexIntervalBytes },
      seg.log.sizeInBytes,
      prev,
    );
    progress.startSegment(seg);
    yield { seg, scanner, progress };
    scanner.complete();
    const cut = applyScan(seg, scanner);
    report.recoveredSegments++;
    report.scannedBytes += scanner.bytesFed;
    report.epochStarts.push(...scanner.epochStarts);
    if (scanner.lastOffset !== null) prev = { lastOffset: scanner.lastOffset, leaderEpoch: scanner.leaderEpoch };
    nextOffset = scanner.nextOffset;
    if (scanner.invalidReason === undefined) {
      if (cut > 0) {
        report.truncatedBytes += cut;
        ctx.logger.warn(`${tpString(ctx.tp)}: segment ${seg.baseOffset}: ${cut} bytes past the logical end removed`);
      }
      continue;
    }
    const later = all.slice(i + 1);
    const laterBytes = later.reduce((n, s) => n + s.size, 0);
    const dropCut = seg.size === 0 && i > 0;
    const doomed = dropCut ? [seg, ...later] : later;
    for (const d of doomed) {
      segments.remove(d.baseOffset);
      d.closeHandlers();
      d.deleteIfExists();
    }
    if (dropCut) nextOffset = nextOffsetBefore;
    report.truncatedAtOffset = nextOffset;
    report.truncatedBytes += cut + laterBytes;
    report.deletedSegments += doomed.length;
    report.reason = scanner.invalidReason;
    ctx.logger.warn(
      `${tpString(ctx.tp)}: recovery truncated the log at offset ${nextOffset}: segment ${seg.baseOffset} cut at ` +
        `position ${scanner.validBytes} (${cut} bytes discarded${dropCut ? ', segment removed' : ''}), ` +
        `${later.length} later segment(s) with ${laterBytes} bytes deleted; reason: ${scanner.invalidReason}`,
    );
    break;
  }
  progress.done();
  return nextOffset;
}

function boundaryProblem(seg: LogSegment, s: SegmentSummary, prev: PreviousBatch | null, contiguous: boolean): string | undefined {
  if (prev !== null && seg.baseOffset <= prev.lastOffset) {
    return `segment base offset ${seg.baseOffset} is not above the previous segment's last offset ${prev.lastOffset}`;
  }
  if (!contiguous) return undefined;
  if (prev !== null && seg.baseOffset !== prev.lastOffset + 1n) {
    return `segment base offset ${seg.baseOffset} does not follow the previous segment's last offset ${prev.lastOffset}`;
  }
  if (s.firstOffset !== seg.baseOffset) return `segment ${seg.baseOffset} starts with a batch at offset ${s.firstOffset}`;
  return undefined;
}

/** Header walk of a trusted segment (no CRC); undefined when its framing is broken. */
function summarizeSegment(seg: LogSegment, ctx: RecoveryContext): SegmentSummary | undefined {
  const s: SegmentSummary = { firstOffset: null, lastOffset: null, nextOffset: seg.baseOffset, leaderEpoch: -1 };
  try {
    seg.log.scanBatches(seg.offsetIndex.lastEntry().position, (h) => visitSummary(s, h));
    if (s.firstOffset !== null && seg.offsetIndex.entries > 0) {
      // The walk started at the last index entry; the first batch sits at position 0.
      seg.log.scanBatches(0, (h) => {
        s.firstOffset = h.baseOffset;
        return false;
      });
    }
  } catch (e) {
    if (!(e instanceof KafkaError)) throw e;
    ctx.logger.warn(`${tpString(ctx.tp)}: segment ${seg.baseOffset} has bad framing (${e.message}); recovering it`);
    return undefined;
  }
  return s;
}

function visitSummary(s: SegmentSummary, h: BatchHeader): boolean {
  if (s.firstOffset === null) s.firstOffset = h.baseOffset;
  s.lastOffset = h.lastOffset;
  s.nextOffset = h.lastOffset + 1n;
  if (h.partitionLeaderEpoch > s.leaderEpoch) s.leaderEpoch = h.partitionLeaderEpoch;
  return true;
}

/** Installs a scan's results: the .log cut to its valid bytes, both indexes replaced. Returns the bytes cut. */
function applyScan(seg: LogSegment, scanner: SegmentScanner): number {
  const size = seg.log.sizeInBytes;
  const fileLength = seg.log.fileLength();
  const valid = scanner.validBytes;
  const cut = Math.max(size, fileLength) - valid;
  if (valid < size || fileLength > size) seg.log.truncateTo(valid);
  seg.offsetIndex.replaceEntries(scanner.offsetIndex.bytes);
  seg.timeIndex.replaceEntries(scanner.timeIndex.bytes);
  // Entries whose ABORT marker survived the scan stay valid (the data they describe is unchanged);
  // entries past a cut go. Missing entries (a failed .txnindex append, KAFKA-7866) are re-added
  // by the producer-state replay in UnifiedLog.loadProducerState, which always covers them because
  // the producer state's end offset (and so every snapshot) stays below a marker whose index append
  // failed. With nothing cut, an entry past the end is damage, not history: it is left for
  // UnifiedLog.verifyTxnIndexes to find, which rebuilds the whole index (as for one that does not decode).
  if (valid < size || fileLength > size) {
    try {
      seg.txnIndex?.truncateTo(scanner.nextOffset);
    } catch (e) {
      if (!(e instanceof CorruptIndexError)) throw e;
    }
  }
  // Release the write handles: only the active segment's are needed, and it reopens them lazily.
  seg.offsetIndex.closeHandler();
  seg.timeIndex.closeHandler();
  seg.setMaxTimestampAndOffsetSoFar({
    timestamp: scanner.maxTimestamp,
    offset: scanner.maxTimestamp >= 0 ? seg.baseOffset + BigInt(scanner.relOfMaxTimestamp) : seg.baseOffset,
  });
  return cut;
}

/**
 * Progress of one log's recovery: a line at most every `progressIntervalMs` (checked per chunk
 * read and per segment), so a large recovery shows it is moving and how fast.
 */
export class RecoveryProgress {
  private readonly now: () => number;
  private readonly interval: number;
  private readonly started: number;
  private lastLine: number;
  private segment = 0;
  private base = 0n;
  private scanned = 0;

  constructor(
    private readonly ctx: RecoveryContext,
    readonly segments: number,
    readonly bytes: number,
  ) {
    this.now = ctx.now ?? (() => performance.now());
    this.interval = ctx.progressIntervalMs ?? 10_000;
    this.started = this.now();
    this.lastLine = this.started;
  }

  startSegment(seg: LogSegment): void {
    this.segment++;
    this.base = seg.baseOffset;
    this.maybeLog();
  }

  advance(bytes: number): void {
    this.scanned += bytes;
    this.maybeLog();
  }

  get elapsedMs(): number {
    return this.now() - this.started;
  }

  private maybeLog(): void {
    const t = this.now();
    if (t - this.lastLine < this.interval) return;
    this.lastLine = t;
    this.ctx.logger.info(
      `${tpString(this.ctx.tp)}: recovering segment ${this.segment} of ${this.segments} (base offset ${this.base}): ` +
        `${mb(this.scanned)} of ${mb(this.bytes)} MB scanned, ${rate(this.scanned, t - this.started)} MB/s`,
    );
  }

  done(): void {
    // Nothing to report for a log that needed no re-reading.
  }
}

function mb(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

function rate(bytes: number, ms: number): string {
  return ms > 0 ? (bytes / (1024 * 1024) / (ms / 1000)).toFixed(0) : '-';
}

/** Bytes per read while recovering (see docs/storage.md for the measurement behind it). */
export const RECOVERY_CHUNK_BYTES = 1024 * 1024;
const chunkPool: Buffer[] = [];

function takeChunk(): Buffer {
  return chunkPool.pop() ?? Buffer.allocUnsafe(RECOVERY_CHUNK_BYTES);
}

function giveChunk(b: Buffer): void {
  if (chunkPool.length < 8) chunkPool.push(b);
}

/** Feeds a step's segment to its scanner with synchronous reads. */
function scanSync(step: ScanStep): void {
  const { seg, scanner, progress } = step;
  const size = seg.log.sizeInBytes;
  const buf = takeChunk();
  try {
    let pos = 0;
    while (scanner.wantsMore && pos < size) {
      const n = Math.min(buf.length, size - pos);
      seg.log.readInto(buf, 0, pos, n);
      scanner.feed(buf, n);
      pos += n;
      progress.advance(n);
    }
  } finally {
    giveChunk(buf);
  }
}

/** Reads kept in flight by the read-ahead (see docs/storage.md for the measurement). */
export const RECOVERY_READ_AHEAD = Number(process.env.KRILL_RECOVERY_READ_AHEAD ?? 3);

/**
 * Feeds a step's segment to its scanner with RECOVERY_READ_AHEAD reads in flight on the thread
 * pool: the next chunks are copied from the page cache (or the disk) while this thread checks the
 * current one.
 */
async function scanAsync(step: ScanStep): Promise<void> {
  const { seg, scanner, progress } = step;
  const size = seg.log.sizeInBytes;
  if (size <= RECOVERY_CHUNK_BYTES) return scanSync(step);
  const depth = Math.max(1, RECOVERY_READ_AHEAD);
  const bufs = Array.from({ length: depth }, takeChunk);
  const reads: { buf: Buffer; read: Promise<number> }[] = [];
  let issued = 0;
  const issue = (buf: Buffer): void => {
    const n = Math.min(RECOVERY_CHUNK_BYTES, size - issued);
    reads.push({ buf, read: seg.log.readAsync(buf, 0, issued, n) });
    issued += n;
  };
  try {
    for (const b of bufs) if (issued < size) issue(b);
    while (reads.length > 0) {
      const { buf, read } = reads[0];
      const n = await read;
      reads.shift();
      scanner.feed(buf, n);
      progress.advance(n);
      if (!scanner.wantsMore) break;
      if (issued < size) issue(buf);
    }
  } finally {
    // Reads still in flight write into their buffers: let them land before the buffers are reused.
    for (const r of reads) await r.read.catch(() => 0);
    for (const b of bufs) giveChunk(b);
  }
}

/** `recoverSegmentsSteps` with synchronous reads. */
export function recoverSegments(
  segments: LogSegments,
  needsRecovery: (seg: LogSegment) => boolean,
  ctx: RecoveryContext,
  report: RecoveryReport,
  known?: (seg: LogSegment) => SegmentSummary | undefined,
): bigint {
  const it = recoverSegmentsSteps(segments, needsRecovery, ctx, report, known);
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) return r.value;
    scanSync(r.value);
  }
}

/** `recoverSegmentsSteps` with read-ahead on the thread pool (startup: other logs run meanwhile). */
export async function recoverSegmentsAsync(
  segments: LogSegments,
  needsRecovery: (seg: LogSegment) => boolean,
  ctx: RecoveryContext,
  report: RecoveryReport,
  known?: (seg: LogSegment) => SegmentSummary | undefined,
): Promise<bigint> {
  const it = recoverSegmentsSteps(segments, needsRecovery, ctx, report, known);
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) return r.value;
    await scanAsync(r.value);
  }
}

interface LoadPlan {
  segments: LogSegments;
  marked: Set<LogSegment>;
  summaries: Map<LogSegment, SegmentSummary>;
  report: RecoveryReport;
  ctx: RecoveryContext;
  started: number;
}

/**
 * Loads `dir`: clears temporary files, completes interrupted swaps, opens every segment, decides
 * which segments need recovery and runs the recovery routine exactly once.
 */
export function loadLog(p: LoadParams): LoadedLog {
  const plan = planLoad(p);
  const end = recoverSegments(plan.segments, (s) => plan.marked.has(s), plan.ctx, plan.report, (s) => plan.summaries.get(s));
  return finishLoad(p, plan, end);
}

/** `loadLog` whose segment reads run on the thread pool, so several logs can recover at once. */
export async function loadLogAsync(p: LoadParams): Promise<LoadedLog> {
  const plan = planLoad(p);
  const end = await recoverSegmentsAsync(plan.segments, (s) => plan.marked.has(s), plan.ctx, plan.report, (s) => plan.summaries.get(s));
  return finishLoad(p, plan, end);
}

function planLoad(p: LoadParams): LoadPlan {
  const { fs, dir, logger } = p;
  const started = performance.now();
  const report = emptyReport();
  const ctx: RecoveryContext = {
    tp: p.tp,
    logger,
    contiguous: !p.config.cleanupPolicy.includes('compact') && p.allowOffsetGaps !== true,
    progressIntervalMs: p.progressIntervalMs,
  };

  completeSwaps(p, removeTempFilesAndCollectSwapFiles(p));
  const segments = loadSegmentFiles(p);

  // Which segments are re-read: everything from the recovery point on after an unclean shutdown;
  // any segment whose index files are missing, fail the sanity check or disagree with the batch
  // headers; any segment whose tail does not end on a batch boundary.
  const marked = new Set<LogSegment>();
  const all = segments.values();
  if (!p.hadCleanShutdown && all.length > 0) {
    const fromIdx = Math.max(0, segments.indexOfFloor(p.recoveryPointCheckpoint));
    for (let i = fromIdx; i < all.length; i++) marked.add(all[i]);
  }
  const summaries = new Map<LogSegment, SegmentSummary>();
  for (let i = 0; i < all.length; i++) {
    const seg = all[i];
    if (marked.has(seg)) continue;
    const problem = checkSegmentFiles(fs, dir, seg, all[i + 1]?.baseOffset, summaries);
    if (problem) {
      logger.warn(`${tpString(p.tp)}: ${problem}; recovering segment ${seg.baseOffset} and rebuilding its indexes`);
      report.rebuiltIndexes++;
      marked.add(seg);
    } else if (i < all.length - 1) {
      seg.unloadIndexes();
    }
  }
  return { segments, marked, summaries, report, ctx, started };
}

function finishLoad(p: LoadParams, plan: LoadPlan, end: bigint): LoadedLog {
  const { logger } = p;
  const { segments, report } = plan;
  let logEndOffset = end;
  if (segments.isEmpty) {
    segments.add(newSegment(p, p.logStartOffsetCheckpoint));
    logEndOffset = p.logStartOffsetCheckpoint;
  } else if (logEndOffset < p.logStartOffsetCheckpoint) {
    // Everything the log holds is below its checkpointed start: drop it and start there (Kafka's rule).
    logger.warn(
      `${tpString(p.tp)}: log end offset ${logEndOffset} is below the log start offset checkpoint ${p.logStartOffsetCheckpoint}; deleting all segments`,
    );
    for (const s of segments.values()) {
      s.closeHandlers();
      s.deleteIfExists();
    }
    report.deletedSegments += segments.size;
    segments.clear();
    segments.add(newSegment(p, p.logStartOffsetCheckpoint));
    logEndOffset = p.logStartOffsetCheckpoint;
  }

  // Cold segments keep no index bytes in memory; they load again on first use.
  const loadedSegs = segments.values();
  for (let i = 0; i < loadedSegs.length - 1; i++) loadedSegs[i].unloadIndexes();

  const first = segments.firstSegment as LogSegment;
  let logStartOffset = p.remoteLogEnabled || p.logStartOffsetCheckpoint > first.baseOffset ? p.logStartOffsetCheckpoint : first.baseOffset;
  if (logStartOffset > logEndOffset) logStartOffset = logEndOffset;
  let recoveryPoint = p.hadCleanShutdown ? logEndOffset : p.recoveryPointCheckpoint;
  if (recoveryPoint > logEndOffset) recoveryPoint = logEndOffset;
  report.recoveryMs = performance.now() - plan.started;
  if (report.recoveredSegments > 0) {
    logger.info(
      `${tpString(p.tp)}: recovered ${report.recoveredSegments} segment(s), ${mb(report.scannedBytes)} MB in ` +
        `${report.recoveryMs.toFixed(0)} ms (${rate(report.scannedBytes, report.recoveryMs)} MB/s); log end offset ${logEndOffset}` +
        (report.truncatedAtOffset !== undefined ? `, truncated at ${report.truncatedAtOffset} (${report.truncatedBytes} bytes)` : ''),
    );
  }
  return { segments, logStartOffset, recoveryPoint, logEndOffset, report };
}

function newSegment(p: LoadParams, baseOffset: bigint): LogSegment {
  // Stale files with the same name would otherwise be appended to.
  for (const f of [logFile(p.dir, baseOffset), offsetIndexFile(p.dir, baseOffset), timeIndexFile(p.dir, baseOffset)]) {
    if (p.fs.existsSync(f)) p.fs.unlinkSync(f);
  }
  return LogSegment.open({ fs: p.fs, dir: p.dir, baseOffset, config: p.config, time: p.time, fileAlreadyExists: false });
}

/**
 * Returns why the segment's files cannot be trusted, or undefined (recording what the segment ends
 * with). Beyond the index files' own sanity (size, order, bounds), every index entry is checked
 * against the batch headers in one walk of the .log (no CRC): an offset-index entry must name a
 * batch's start position and that batch's last offset; a time-index entry the last offset of a
 * batch whose max timestamp it is and which first reached it; the last time-index entry must be
 * the segment's largest timestamp. A flipped bit in an index therefore never survives a restart.
 */
function checkSegmentFiles(
  fs: StorageFs,
  dir: string,
  seg: LogSegment,
  nextBase: bigint | undefined,
  summaries: Map<LogSegment, SegmentSummary>,
): string | undefined {
  if (!fs.existsSync(offsetIndexFile(dir, seg.baseOffset))) return `offset index of segment ${seg.baseOffset} is missing`;
  if (!fs.existsSync(timeIndexFile(dir, seg.baseOffset))) return `time index of segment ${seg.baseOffset} is missing`;
  try {
    seg.offsetIndex.sanityCheck(seg.size, nextBase);
    seg.timeIndex.sanityCheck(seg.size, nextBase);
    const r = verifyIndexesAgainstLog(seg);
    if (typeof r === 'string') return r;
    summaries.set(seg, r);
  } catch (e) {
    if (e instanceof CorruptIndexError || e instanceof KafkaError) return e.message;
    throw e;
  }
  return undefined;
}

/**
 * The load-time check of a trusted segment: one walk of its batch headers (framing and magic, no
 * CRC) through 1 MiB reads, every index entry checked on the way (index-verifier.ts). Offsets are
 * handled relative to the segment base, as numbers: no allocation per batch.
 */
function verifyIndexesAgainstLog(seg: LogSegment): SegmentSummary | string {
  const oi = seg.offsetIndex;
  const ti = seg.timeIndex;
  const v = new IndexVerifier(
    seg.baseOffset,
    { count: oi.entries, entry: (i) => oi.relativeEntry(i) },
    { count: ti.entries, entry: (i) => ti.relativeEntry(i) },
    1,
  );
  const size = seg.log.sizeInBytes;
  const segHi = Number(seg.baseOffset >> 32n);
  const segLo = Number(seg.baseOffset & 0xffffffffn);
  let firstRel: number | null = null;
  let lastRel: number | null = null;
  let epoch = -1;
  const buf = takeChunk();
  try {
    let winStart = 0;
    let winLen = 0;
    let pos = 0;
    while (pos < size && v.wantsMore) {
      if (size - pos < RECORD_BATCH_OVERHEAD) return `segment ${seg.baseOffset}: ${size - pos} bytes at position ${pos} are too few for a batch header`;
      if (pos + RECORD_BATCH_OVERHEAD > winStart + winLen) {
        winStart = pos;
        winLen = Math.min(buf.length, size - pos);
        seg.log.readInto(buf, 0, pos, winLen);
      }
      const at = pos - winStart;
      const total = buf.readInt32BE(at + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
      if (total < RECORD_BATCH_OVERHEAD || pos + total > size) {
        return `segment ${seg.baseOffset}: batch length ${total - LOG_OVERHEAD} at position ${pos} does not fit (file size ${size})`;
      }
      const magic = buf.readInt8(at + MAGIC_OFFSET);
      if (magic !== CURRENT_MAGIC) return `segment ${seg.baseOffset}: batch at position ${pos} has magic ${magic}`;
      const dHi = buf.readInt32BE(at) - segHi;
      const rel = dHi * 4294967296 + (buf.readUInt32BE(at + 4) - segLo);
      const relLast = rel + buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET);
      v.visit({ position: pos, relLast, maxTimestamp: readInt64Number(buf, at + MAX_TIMESTAMP_OFFSET) });
      if (firstRel === null) firstRel = rel;
      lastRel = relLast;
      const e = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET);
      if (e > epoch) epoch = e;
      pos += total;
    }
  } finally {
    giveChunk(buf);
  }
  const problems = v.finish();
  if (problems.length > 0) return `segment ${seg.baseOffset}: ${problems[0]}`;
  const abs = (r: number): bigint => seg.baseOffset + BigInt(r);
  return {
    firstOffset: firstRel === null ? null : abs(firstRel),
    lastOffset: lastRel === null ? null : abs(lastRel),
    nextOffset: lastRel === null ? seg.baseOffset : abs(lastRel + 1),
    leaderEpoch: epoch,
  };
}

/** Deletes stray *.deleted files, .cleaned files and swap files of an unfinished split; returns the valid swaps. */
function removeTempFilesAndCollectSwapFiles(p: LoadParams): string[] {
  const { fs, dir, logger } = p;
  const swaps: string[] = [];
  const cleaned: string[] = [];
  let minCleanedOffset: bigint | undefined;
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith(DELETED_FILE_SUFFIX)) {
      logger.debug(`deleting stray file ${file}`);
      unlinkQuietly(fs, file);
    } else if (name.endsWith(CLEANED_FILE_SUFFIX)) {
      const off = offsetFromFileName(name);
      if (off !== undefined && (minCleanedOffset === undefined || off < minCleanedOffset)) minCleanedOffset = off;
      cleaned.push(file);
    } else if (name.endsWith(SWAP_FILE_SUFFIX)) {
      swaps.push(file);
    }
  }
  const valid: string[] = [];
  for (const file of swaps) {
    const off = offsetFromFileName(path.basename(file));
    if (off !== undefined && minCleanedOffset !== undefined && off >= minCleanedOffset) {
      logger.info(`deleting swap file ${file} of an incomplete split (min cleaned offset ${minCleanedOffset})`);
      unlinkQuietly(fs, file);
    } else {
      valid.push(file);
    }
  }
  for (const file of cleaned) unlinkQuietly(fs, file);
  return valid;
}

/**
 * A .swap segment is the finished output of a compaction or split that was interrupted before the
 * rename. Segments it replaces (base offsets in [min swap base, max swap next offset)) are deleted,
 * then the swap files are renamed into place, as Kafka does.
 */
function completeSwaps(p: LoadParams, swapFiles: string[]): void {
  const { fs, dir, logger } = p;
  let minSwap: bigint | undefined;
  let maxSwap: bigint | undefined;
  for (const file of swapFiles) {
    const plain = replaceSuffix(path.basename(file), SWAP_FILE_SUFFIX, '');
    if (!isLogFile(plain)) continue;
    const base = offsetFromFileName(plain) as bigint;
    const seg = LogSegment.open({ fs, dir, baseOffset: base, config: p.config, time: p.time, fileAlreadyExists: true, suffix: SWAP_FILE_SUFFIX });
    let next = base;
    try {
      seg.log.scanBatches(0, (h) => {
        next = h.lastOffset + 1n;
        return true;
      });
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e; // a damaged tail is recovery's job once renamed
    } finally {
      seg.closeHandlers();
    }
    logger.info(`found ${file} from an interrupted swap; completing it`);
    if (minSwap === undefined || base < minSwap) minSwap = base;
    if (maxSwap === undefined || next > maxSwap) maxSwap = next;
  }
  if (minSwap !== undefined && maxSwap !== undefined) {
    for (const name of fs.readdirSync(dir)) {
      if (name.endsWith(SWAP_FILE_SUFFIX)) continue;
      const off = offsetFromFileName(name);
      if (off !== undefined && off >= minSwap && off < maxSwap) {
        logger.info(`deleting ${name}, replaced by a swap segment`);
        unlinkQuietly(fs, path.join(dir, name));
      }
    }
  }
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith(SWAP_FILE_SUFFIX)) {
      fs.renameSync(path.join(dir, name), path.join(dir, replaceSuffix(name, SWAP_FILE_SUFFIX, '')));
    }
  }
}

/** Opens every segment in offset order; deletes index files whose .log is gone. */
function loadSegmentFiles(p: LoadParams): LogSegments {
  const { fs, dir, logger } = p;
  const segments = new LogSegments();
  const names = fs.readdirSync(dir).sort();
  for (const name of names) {
    const file = path.join(dir, name);
    if (isIndexFile(name)) {
      const off = offsetFromFileName(name) as bigint;
      if (!fs.existsSync(logFile(dir, off))) {
        logger.warn(`${tpString(p.tp)}: deleting orphaned index file ${file}`);
        unlinkQuietly(fs, file);
      }
    } else if (isLogFile(name) && name.endsWith(LOG_FILE_SUFFIX)) {
      const st = fs.statSync(file);
      if (!st || !st.isFile()) continue;
      const base = offsetFromFileName(name) as bigint;
      segments.add(LogSegment.open({ fs, dir, baseOffset: base, config: p.config, time: p.time, fileAlreadyExists: true }));
    }
  }
  return segments;
}

function unlinkQuietly(fs: StorageFs, file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (e) {
    if (!(isIoError(e) && e.code === 'ENOENT')) throw e;
  }
}
