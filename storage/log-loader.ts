/**
 * Loads one partition directory into segments at startup, and holds the ONE truncating recovery
 * routine, `recoverSegments`.
 *
 * KAFKA-3955 is the lesson here: Kafka had four places that re-read a segment during loading and
 * only one of them truncated on bad data, so a non-monotonic batch in a middle segment threw from
 * the other three and killed broker startup. Here every reason to re-read a segment (no clean
 * shutdown and the segment is past the recovery point; an index file missing or failing its sanity
 * check; a tail that does not end on a batch boundary) only *marks* the segment, and a single call
 * to `recoverSegments` then walks the log in offset order. It validates every batch of each marked
 * segment (length in bounds, magic 2, CRC, lastOffsetDelta, base offset >= segment base, offsets
 * strictly above the previous batch's last offset even across segments, relative offsets fit an
 * int32), rebuilds the indexes from the batches it accepts, and at the first bad batch truncates
 * there and deletes every later segment. Nothing in recovery throws on bad data, so one damaged
 * partition never fails startup; I/O errors still propagate (the directory goes offline).
 *
 * Indexes are derived data: any doubt and they are rebuilt, and a rebuild always goes through the
 * same routine (it re-validates the segment's batches as it reads them).
 */
import * as path from 'node:path';
import { KafkaError } from '../protocol/errors';
import { LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, checkBatch } from '../protocol/records/record-batch';
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
import { CorruptIndexError, StorageLogger, Time, TopicPartition, tpString } from './support';

export interface LoadParams {
  fs: StorageFs;
  dir: string;
  tp: TopicPartition;
  config: LogConfig;
  time: Time;
  logger: StorageLogger;
  recoveryPointCheckpoint: bigint;
  logStartOffsetCheckpoint: bigint;
  hadCleanShutdown: boolean;
}

export interface RecoveryReport {
  /** Segments whose batches were re-read and re-indexed. */
  recoveredSegments: number;
  /** Segments whose index files were missing or failed the sanity check. */
  rebuiltIndexes: number;
  /** Where the log was cut, if recovery found bad data. */
  truncatedAtOffset?: bigint;
  truncatedBytes: number;
  /** Segments removed because they followed the truncation point (or became empty). */
  deletedSegments: number;
  reason?: string;
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
  logger: StorageLogger;
}

/**
 * THE truncating recovery routine. Walks `segments` in offset order; each segment for which
 * `needsRecovery` is true has its batches re-validated and its indexes rebuilt; segments not marked
 * are trusted and only asked for their next offset (so offsets stay monotonic across the boundary).
 * At the first invalid batch: truncate the segment there, delete every later segment (and the
 * truncated one too if it is left empty and is not the first), stop. Returns the log end offset.
 */
export function recoverSegments(
  segments: LogSegments,
  needsRecovery: (seg: LogSegment) => boolean,
  ctx: RecoveryContext,
  report: RecoveryReport,
  knownNextOffset: (seg: LogSegment) => bigint | undefined = () => undefined,
): bigint {
  const all = segments.values();
  let prevLastOffset: bigint | null = null;
  let nextOffset = all.length > 0 ? all[0].baseOffset : 0n;
  for (let i = 0; i < all.length; i++) {
    const seg = all[i];
    let recover = needsRecovery(seg);
    if (!recover) {
      try {
        const next = knownNextOffset(seg) ?? seg.readNextOffset();
        if (seg.size > 0) {
          if (prevLastOffset !== null && seg.baseOffset <= prevLastOffset) {
            // The previous segment runs into this one: this segment's batches go through validation.
            recover = true;
          } else {
            prevLastOffset = next - 1n;
          }
        }
        if (!recover) {
          nextOffset = next;
          continue;
        }
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        ctx.logger.warn(`${tpString(ctx.tp)}: segment ${seg.baseOffset} has bad framing (${e.message}); recovering it`);
        recover = true;
      }
    }
    const r = recoverOneSegment(seg, prevLastOffset, ctx);
    report.recoveredSegments++;
    if (r.lastOffset !== null) prevLastOffset = r.lastOffset;
    nextOffset = r.nextOffset;
    if (r.invalidReason !== undefined) {
      const later = all.slice(i + 1);
      const doomed = seg.size === 0 && i > 0 ? [seg, ...later] : later;
      for (const d of doomed) {
        segments.remove(d.baseOffset);
        d.closeHandlers();
        d.deleteIfExists();
      }
      if (doomed[0] === seg) {
        const prev = all[i - 1];
        nextOffset = prev.readNextOffset();
      }
      report.truncatedAtOffset = r.nextOffset;
      report.truncatedBytes += r.truncatedBytes;
      report.deletedSegments += doomed.length;
      report.reason = r.invalidReason;
      ctx.logger.warn(
        `${tpString(ctx.tp)}: recovery truncated the log at offset ${r.nextOffset} ` +
          `(segment ${seg.baseOffset}, position ${r.validBytes}): ${r.truncatedBytes} bytes discarded, ` +
          `${doomed.length} later segment(s) deleted; reason: ${r.invalidReason}`,
      );
      break;
    }
    if (r.truncatedBytes > 0) report.truncatedBytes += r.truncatedBytes;
  }
  return nextOffset;
}

interface SegmentRecovery {
  validBytes: number;
  truncatedBytes: number;
  lastOffset: bigint | null;
  nextOffset: bigint;
  invalidReason?: string;
}

const READ_CHUNK = 1024 * 1024;

/** Re-reads one segment: validates each batch, rebuilds both indexes, cuts at the first bad batch. */
function recoverOneSegment(seg: LogSegment, prevLastOffsetIn: bigint | null, ctx: RecoveryContext): SegmentRecovery {
  seg.offsetIndex.resetInMemory();
  seg.timeIndex.resetInMemory();
  seg.txnIndex?.reset();
  const size = seg.log.sizeInBytes;
  let prevLastOffset = prevLastOffsetIn;
  let lastOffset: bigint | null = null;
  let validBytes = 0;
  let lastIndexEntry = 0;
  let maxTs = -1;
  let offsetOfMaxTs = seg.baseOffset;
  let invalidReason: string | undefined;
  if (prevLastOffset !== null && seg.baseOffset <= prevLastOffset && size > 0) {
    // The segment's range starts inside the previous segment's data: offset lookups would land here
    // and skip records, so none of it can be kept.
    invalidReason = `segment base offset ${seg.baseOffset} overlaps the previous segment (last offset ${prevLastOffset})`;
  }

  let buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(size, RECORD_BATCH_OVERHEAD)));
  let bufStart = 0;
  let bufLen = 0;
  const window = (pos: number, len: number): number => {
    if (pos >= bufStart && pos + len <= bufStart + bufLen) return pos - bufStart;
    if (len > buf.length) buf = Buffer.allocUnsafe(len);
    bufStart = pos;
    bufLen = Math.min(buf.length, size - pos);
    seg.log.readInto(buf, 0, pos, bufLen);
    return 0;
  };

  while (invalidReason === undefined && validBytes < size) {
    const remaining = size - validBytes;
    if (remaining < LOG_OVERHEAD) {
      invalidReason = `${remaining} trailing bytes are too few for a batch header (torn write)`;
      break;
    }
    let o = window(validBytes, LOG_OVERHEAD);
    const len = buf.readInt32BE(o + 8);
    if (len < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
      const zero = len === 0 && buf.readBigInt64BE(o) === 0n;
      invalidReason = zero ? 'zero-filled tail (preallocated or unwritten)' : `invalid batch length ${len}`;
      break;
    }
    const total = len + LOG_OVERHEAD;
    if (total > remaining) {
      invalidReason = `batch of ${total} bytes runs past the end of the file (${remaining} bytes left: torn write)`;
      break;
    }
    o = window(validBytes, total);
    let batch;
    try {
      batch = checkBatch(buf.subarray(0, o + total), o);
    } catch (e) {
      if (!(e instanceof KafkaError)) throw e;
      invalidReason = e.message;
      break;
    }
    const base = batch.baseOffset;
    const last = batch.lastOffset;
    if (base < seg.baseOffset) {
      invalidReason = `batch base offset ${base} is below the segment base offset ${seg.baseOffset}`;
      break;
    }
    if (prevLastOffset !== null && base <= prevLastOffset) {
      invalidReason = `non-monotonic offsets: batch base offset ${base} is not above the previous batch's last offset ${prevLastOffset}`;
      break;
    }
    if (!seg.canConvertToRelativeOffset(last)) {
      invalidReason = `batch last offset ${last} overflows the segment's int32 relative offsets`;
      break;
    }
    const ts = Number(batch.maxTimestamp);
    if (ts > maxTs) {
      maxTs = ts;
      offsetOfMaxTs = last;
    }
    if (validBytes - lastIndexEntry > seg.indexIntervalBytes) {
      seg.offsetIndex.appendForRebuild(last, validBytes);
      seg.timeIndex.maybeAppendForRebuild(maxTs, offsetOfMaxTs);
      lastIndexEntry = validBytes;
    }
    validBytes += total;
    prevLastOffset = last;
    lastOffset = last;
    // Seams for later issues: the leader epoch cache (assign epoch -> first offset) and producer
    // state (idempotence/transactions) are rebuilt from these same batches, here.
  }

  const fileLength = seg.log.fileLength();
  const truncatedBytes = Math.max(size, fileLength) - validBytes;
  if (validBytes < size || fileLength > size) seg.log.truncateTo(validBytes);
  if (maxTs >= 0) seg.timeIndex.maybeAppendForRebuild(maxTs, offsetOfMaxTs, true);
  seg.offsetIndex.persist();
  seg.timeIndex.persist();
  // Release the write handles: only the active segment's are needed, and it reopens them lazily.
  seg.offsetIndex.closeHandler();
  seg.timeIndex.closeHandler();
  seg.setMaxTimestampAndOffsetSoFar({ timestamp: maxTs, offset: offsetOfMaxTs });
  const nextOffset = lastOffset !== null ? lastOffset + 1n : seg.baseOffset;
  if (invalidReason === undefined && truncatedBytes > 0) {
    ctx.logger.warn(`${tpString(ctx.tp)}: segment ${seg.baseOffset}: ${truncatedBytes} bytes past the logical end removed`);
  }
  return { validBytes, truncatedBytes, lastOffset, nextOffset, invalidReason };
}

/**
 * Loads `dir`: clears temporary files, completes interrupted swaps, opens every segment, decides
 * which segments need recovery and runs `recoverSegments` exactly once.
 */
export function loadLog(p: LoadParams): LoadedLog {
  const { fs, dir, logger } = p;
  const report: RecoveryReport = { recoveredSegments: 0, rebuiltIndexes: 0, truncatedBytes: 0, deletedSegments: 0 };
  const ctx: RecoveryContext = { tp: p.tp, logger };

  completeSwaps(p, removeTempFilesAndCollectSwapFiles(p));
  const segments = loadSegmentFiles(p);

  // Which segments are re-read: everything from the recovery point on after an unclean shutdown;
  // any segment whose indexes are missing or fail the sanity check; any segment whose tail does not
  // end on a batch boundary.
  const marked = new Set<LogSegment>();
  const all = segments.values();
  if (!p.hadCleanShutdown && all.length > 0) {
    const fromIdx = Math.max(0, segments.indexOfFloor(p.recoveryPointCheckpoint));
    for (let i = fromIdx; i < all.length; i++) marked.add(all[i]);
  }
  const nextOffsets = new Map<LogSegment, bigint>();
  for (let i = 0; i < all.length; i++) {
    const seg = all[i];
    if (marked.has(seg)) continue;
    const next = all[i + 1];
    const problem = checkSegmentFiles(fs, dir, seg, next?.baseOffset, nextOffsets);
    if (problem) {
      logger.warn(`${tpString(p.tp)}: ${problem}; recovering segment ${seg.baseOffset} and rebuilding its indexes`);
      report.rebuiltIndexes++;
      marked.add(seg);
    } else if (i < all.length - 1) {
      seg.unloadIndexes();
    }
  }

  let logEndOffset = recoverSegments(segments, (s) => marked.has(s), ctx, report, (s) => nextOffsets.get(s));

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
  let logStartOffset = p.logStartOffsetCheckpoint > first.baseOffset ? p.logStartOffsetCheckpoint : first.baseOffset;
  if (logStartOffset > logEndOffset) logStartOffset = logEndOffset;
  let recoveryPoint = p.hadCleanShutdown ? logEndOffset : p.recoveryPointCheckpoint;
  if (recoveryPoint > logEndOffset) recoveryPoint = logEndOffset;
  if (report.recoveredSegments > 0) {
    logger.info(
      `${tpString(p.tp)}: recovered ${report.recoveredSegments} segment(s); log end offset ${logEndOffset}` +
        (report.truncatedAtOffset !== undefined ? `, truncated at ${report.truncatedAtOffset}` : ''),
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

/** Returns why the segment's files cannot be trusted, or undefined (recording its next offset). */
function checkSegmentFiles(
  fs: StorageFs,
  dir: string,
  seg: LogSegment,
  nextBase: bigint | undefined,
  nextOffsets: Map<LogSegment, bigint>,
): string | undefined {
  if (!fs.existsSync(offsetIndexFile(dir, seg.baseOffset))) return `offset index of segment ${seg.baseOffset} is missing`;
  if (!fs.existsSync(timeIndexFile(dir, seg.baseOffset))) return `time index of segment ${seg.baseOffset} is missing`;
  try {
    seg.offsetIndex.sanityCheck(seg.size, nextBase);
    // The tail: a header walk from the last index entry must land exactly on the end of the file.
    const next = seg.readNextOffset();
    seg.offsetIndex.sanityCheck(seg.size, next);
    seg.timeIndex.sanityCheck(seg.size, next);
    nextOffsets.set(seg, next);
  } catch (e) {
    if (e instanceof CorruptIndexError || e instanceof KafkaError) return e.message;
    throw e;
  }
  return undefined;
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
