/**
 * Moving partition replicas between this broker's log directories (AlterReplicaLogDirs; Kafka's
 * ReplicaAlterLogDirsManager and ReplicaAlterLogDirsThread). A move is a future replica
 * (storage: LogManager.getOrCreateFutureLog, `<topic>-<partition>.<32 hex>-future` in the
 * destination directory) that copies the current log's batches as they are, from its own log end
 * offset, while the current log keeps serving and being written; once it has caught up it
 * replaces the current log (LogManager.replaceCurrentWithFutureLog, then Partition.replaceLog).
 *
 * Threads: `num.replica.alter.log.dirs.threads` copy loops (Kafka's default: one per log
 * directory); a partition always goes to loop abs(31 * hash(topic) + partition) % threads (Kafka's
 * AbstractFetcherManager.getFetcherId, Java's String.hashCode). A loop copies at most
 * `replica.fetch.max.bytes` (capped by the log's segment.bytes) of one partition per step, its
 * partitions in turn, yielding to the event loop between steps; with nothing to copy it waits for
 * an append to one of its partitions (`wake`) or a new move, never polls.
 *
 * Invariants:
 * - One step is synchronous: the checks, the copy of one chunk, and (when the future's log end
 *   offset equals the current one) the swap happen with no await between them, so no append can
 *   land in the current log between "caught up" and "swapped".
 * - The future never holds offsets the current log no longer has: before each copy it is cut back
 *   the way Kafka's thread truncates against the current replica, by leader epoch (the future's
 *   latest epoch must end, in the current log, at or after the future's end) and by log end
 *   offset; below the current log start offset it starts over there. Its log start offset and high
 *   watermark follow the current log's.
 * - A move whose future or current log goes offline stops: an offline future is dropped (the
 *   current log is untouched); an offline current log leaves the future on disk (restart decides).
 */
import type { Logger } from '../common/logger';
import { topicPartitionKey, tpString } from '../common/topic-partition';
import type { LogManager } from '../storage/log-manager';
import { KafkaStorageError, UnexpectedAppendOffsetError } from '../storage/errors';
import type { Partition } from './partition';

export interface ReplicaAlterLogDirsOptions {
  logManager: LogManager;
  /** The hosted partition (null when no longer hosted). */
  partition(topic: string, partition: number): Partition | undefined;
  logger: Logger;
  /** num.replica.alter.log.dirs.threads (null/undefined: the number of log directories). */
  threads: number;
  /** replica.fetch.max.bytes: the most one step copies. */
  maxBytes: number;
  /** A move finished: the partition's log is now in `dir`. */
  onMoved?(p: Partition, fromDir: string, dir: string): void;
  /** A move stopped without a swap (a log offline, an error); the current log is untouched. */
  onAbandoned?(topic: string, partition: number, reason: string): void;
}

/** Java's String.hashCode (UTF-16 code units), as Kafka's getFetcherId hashes the topic. */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's AbstractFetcherManager.getFetcherId: Utils.abs(31 * topic.hashCode() + partition) % numFetchers. */
export function alterLogDirsThreadFor(topic: string, partition: number, threads: number): number {
  const h = (Math.imul(31, javaStringHash(topic)) + partition) | 0;
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % threads;
}

interface Move {
  topic: string;
  partition: number;
  key: string;
}

class CopyLoop {
  readonly moves = new Map<string, Move>();
  private wakeUp: (() => void) | null = null;
  private pending = false;
  private stopped = false;
  readonly done: Promise<void>;

  constructor(
    readonly id: number,
    private readonly step: (m: Move) => 'progress' | 'idle' | 'finished',
  ) {
    this.done = this.run();
  }

  wake(): void {
    this.pending = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.pending = false;
      let progress = false;
      for (const m of [...this.moves.values()]) {
        if (this.stopped) return;
        const r = this.step(m);
        if (r === 'finished') this.moves.delete(m.key);
        if (r !== 'idle') progress = true;
        // Let requests run between chunks: a copy never holds the event loop for long.
        await new Promise<void>((res) => setImmediate(res));
      }
      if (progress || this.pending || this.stopped) continue;
      await new Promise<void>((res) => {
        this.wakeUp = res;
      });
    }
  }
}

export class ReplicaAlterLogDirsManager {
  private readonly loops: CopyLoop[];
  private stopped = false;

  constructor(private readonly opts: ReplicaAlterLogDirsOptions) {
    const n = Math.max(1, Math.floor(opts.threads));
    this.loops = Array.from({ length: n }, (_, i) => new CopyLoop(i, (m) => this.step(m)));
  }

  get threadCount(): number {
    return this.loops.length;
  }

  private loopFor(topic: string, partition: number): CopyLoop {
    return this.loops[alterLogDirsThreadFor(topic, partition, this.loops.length)];
  }

  /** Starts (or keeps) copying the partition's future replica. */
  addPartition(topic: string, partition: number): void {
    if (this.stopped) return;
    const key = topicPartitionKey(topic, partition);
    const loop = this.loopFor(topic, partition);
    if (!loop.moves.has(key)) loop.moves.set(key, { topic, partition, key });
    loop.wake();
  }

  /** Stops copying (the future replica itself is the log manager's to remove). */
  removePartition(topic: string, partition: number): void {
    this.loopFor(topic, partition).moves.delete(topicPartitionKey(topic, partition));
  }

  isMoving(topic: string, partition: number): boolean {
    return this.loopFor(topic, partition).moves.has(topicPartitionKey(topic, partition));
  }

  /** The partition's current log grew. */
  wake(topic: string, partition: number): void {
    const loop = this.loopFor(topic, partition);
    if (loop.moves.has(topicPartitionKey(topic, partition))) loop.wake();
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const l of this.loops) l.stop();
    await Promise.all(this.loops.map((l) => l.done));
  }

  /** One synchronous step of one move (see the header): copy a chunk, or swap when caught up. */
  private step(m: Move): 'progress' | 'idle' | 'finished' {
    const lm = this.opts.logManager;
    const p = this.opts.partition(m.topic, m.partition);
    const future = lm.getFutureLog(m.topic, m.partition);
    if (!p || !future) return 'finished';
    const current = p.log;
    const name = tpString(m);
    if (future.isOffline) {
      this.opts.logger.warn(`the future replica of ${name} in ${future.parentDir} is offline: the move is abandoned`);
      lm.removeFutureLog(m.topic, m.partition);
      this.opts.onAbandoned?.(m.topic, m.partition, 'the future replica is offline');
      return 'finished';
    }
    if (current.isOffline) {
      this.opts.logger.warn(`the current replica of ${name} is offline: the move to ${future.parentDir} stops`);
      this.opts.onAbandoned?.(m.topic, m.partition, 'the current replica is offline');
      return 'finished';
    }
    try {
      let changed = false;
      // A tiered log's local start can pass the future's end while it copies (local retention):
      // the future starts over there, the data below being in remote storage.
      if (current.remoteLogEnabled() && future.logEndOffset < current.localLogStartOffset) {
        this.opts.logger.info(`future replica of ${name}: starting over at the current local log start offset ${current.localLogStartOffset}`);
        lm.restartTieredFuture(current, future);
        changed = true;
      }
      changed = this.truncateToCommonPrefix(name, current, future) || changed;
      if (future.logEndOffset < current.logEndOffset) {
        const maxBytes = Math.max(1, Math.min(this.opts.maxBytes, future.config.segmentBytes));
        const read = current.read(future.logEndOffset, maxBytes, { maxOffset: current.logEndOffset, minOneMessage: true });
        if (read.records.length > 0) {
          const records = read.records.length === 1 ? read.records[0] : Buffer.concat(read.records);
          try {
            future.appendAsFollower(records);
          } catch (err) {
            // The log start offset fell inside a batch (DeleteRecords): the future starts at that batch.
            if (!(err instanceof UnexpectedAppendOffsetError) || future.logEndOffset !== future.logStartOffset || err.firstOffset >= future.logEndOffset || err.lastOffset < future.logEndOffset) throw err;
            future.truncateFullyAndStartAt(err.firstOffset);
            future.appendAsFollower(records);
          }
          changed = true;
        }
      }
      const hw = current.highWatermark < future.logEndOffset ? current.highWatermark : future.logEndOffset;
      if (hw > future.highWatermark) future.updateHighWatermark(hw);
      if (current.logStartOffset > future.logStartOffset && current.logStartOffset <= future.highWatermark) {
        future.maybeIncrementLogStartOffset(current.logStartOffset, 'LeaderOffsetIncremented');
      }
      if (future.logEndOffset === current.logEndOffset) {
        const fromDir = current.parentDir;
        const log = lm.replaceCurrentWithFutureLog(m.topic, m.partition);
        p.replaceLog(log);
        this.opts.logger.info(`moved ${name} from ${fromDir} to ${log.parentDir} at log end offset ${log.logEndOffset}`);
        this.opts.onMoved?.(p, fromDir, log.parentDir);
        return 'finished';
      }
      return changed ? 'progress' : 'idle';
    } catch (err) {
      if (err instanceof KafkaStorageError && (future.isOffline || p.log.isOffline)) {
        // A directory went offline (the log manager has logged it): the next step drops the move.
        return 'progress';
      }
      this.opts.logger.error(`moving ${name} to ${future.parentDir} failed; the move is abandoned`, { err });
      lm.removeFutureLog(m.topic, m.partition);
      this.opts.onAbandoned?.(m.topic, m.partition, err instanceof Error ? err.message : String(err));
      return 'finished';
    }
  }

  /**
   * Cuts the future back to what it shares with the current log (Kafka's truncation of the future
   * replica against the current one): by leader epoch, by log end offset, and to the current log
   * start offset when the future ends below it. Returns whether it changed anything.
   */
  private truncateToCommonPrefix(name: string, current: Partition['log'], future: Partition['log']): boolean {
    let target = future.logEndOffset;
    const epoch = future.latestEpoch;
    if (epoch >= 0) {
      const end = current.endOffsetForEpoch(epoch);
      if (!end) target = current.logStartOffset;
      else if (end.epoch === epoch) target = end.endOffset < target ? end.endOffset : target;
      else {
        // The current log has no batch of that epoch: the largest common epoch bounds the prefix.
        const ours = future.endOffsetForEpoch(end.epoch);
        const bound = ours && ours.endOffset < end.endOffset ? ours.endOffset : end.endOffset;
        if (bound < target) target = bound;
      }
    }
    if (current.logEndOffset < target) target = current.logEndOffset;
    if (current.remoteLogEnabled() && current.localLogStartOffset > current.logStartOffset) {
      // Tiered: the shared prefix starts at the local start (the step restarts a future below it).
      if (target < current.localLogStartOffset) target = current.localLogStartOffset;
    }
    if (target < current.logStartOffset || future.logEndOffset < current.logStartOffset) {
      if (future.logStartOffset === current.logStartOffset && future.logEndOffset === current.logStartOffset) return false;
      this.opts.logger.info(`future replica of ${name}: starting over at the current log start offset ${current.logStartOffset}`);
      future.truncateFullyAndStartAt(current.logStartOffset);
      return true;
    }
    if (target < future.logEndOffset) {
      this.opts.logger.info(`future replica of ${name}: truncating from ${future.logEndOffset} to ${target} to match the current log`);
      future.truncateTo(target);
      return true;
    }
    return false;
  }
}
