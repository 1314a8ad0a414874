/**
 * Small shared pieces of the storage layer: topic-partition naming, the injectable clock, scheduler
 * and logger, and the typed errors storage raises. Storage imports nothing from broker/ or
 * replication/, so it carries its own minimal logger and scheduler interfaces; the broker adapts
 * its own implementations to them.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** A map key for a (topic, partition) pair: NUL never appears in a topic name, so distinct pairs never collide. */
export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}

export function tpString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

export interface Time {
  milliseconds(): number;
}

export const SystemTime: Time = { milliseconds: () => Date.now() };

export interface StorageLogger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export const silentLogger: StorageLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Warnings and errors to stderr; the broker replaces this with its own logger. */
export const consoleLogger: StorageLogger = {
  debug: () => {},
  info: () => {},
  warn: (m) => console.warn(`[storage] ${m}`),
  error: (m, e) => console.error(`[storage] ${m}`, e ?? ''),
};

/** Prefixes every line (Kafka's LogContext: "[UnifiedLog partition=t-0, dir=/data] ..."). */
export function prefixedLogger(inner: StorageLogger, prefix: string): StorageLogger {
  return {
    debug: (m) => inner.debug(`${prefix}${m}`),
    info: (m) => inner.info(`${prefix}${m}`),
    warn: (m) => inner.warn(`${prefix}${m}`),
    error: (m, e) => inner.error(`${prefix}${m}`, e),
  };
}

export interface ScheduledTask {
  cancel(): void;
}

/**
 * Background work (segment deletion after file.delete.delay.ms, retention, periodic checkpoints).
 * Node's timers by default; tests use testing/mock-scheduler.ts to run tasks deterministically.
 */
export interface Scheduler {
  scheduleOnce(name: string, delayMs: number, fn: () => void): ScheduledTask;
  schedulePeriodic(name: string, initialDelayMs: number, periodMs: number, fn: () => void): ScheduledTask;
}

/** Timers are unref()'d: background storage work never keeps the process alive. */
export class TimerScheduler implements Scheduler {
  private readonly tasks = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly onError: (name: string, err: unknown) => void = () => {}) {}

  scheduleOnce(name: string, delayMs: number, fn: () => void): ScheduledTask {
    if (this.closed) return { cancel: () => {} };
    const t = setTimeout(() => {
      this.tasks.delete(t);
      this.run(name, fn);
    }, clampDelay(delayMs));
    t.unref();
    this.tasks.add(t);
    return {
      cancel: () => {
        clearTimeout(t);
        this.tasks.delete(t);
      },
    };
  }

  schedulePeriodic(name: string, initialDelayMs: number, periodMs: number, fn: () => void): ScheduledTask {
    if (this.closed) return { cancel: () => {} };
    let current: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = (delay: number) => {
      current = setTimeout(() => {
        if (current) this.tasks.delete(current);
        if (cancelled) return;
        this.run(name, fn);
        if (!cancelled && !this.closed) arm(periodMs);
      }, clampDelay(delay));
      current.unref();
      this.tasks.add(current);
    };
    arm(initialDelayMs);
    return {
      cancel: () => {
        cancelled = true;
        if (current) {
          clearTimeout(current);
          this.tasks.delete(current);
        }
      },
    };
  }

  private run(name: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.onError(name, e);
    }
  }

  /** Cancels everything pending; later schedule calls are no-ops. */
  shutdown(): void {
    this.closed = true;
    for (const t of this.tasks) clearTimeout(t);
    this.tasks.clear();
  }
}

/** setTimeout silently treats delays above 2^31-1 ms as 1 ms; LONG_MAX-style intervals mean "never". */
function clampDelay(ms: number): number {
  if (!Number.isFinite(ms) || ms > 0x7fffffff) return 0x7fffffff;
  return Math.max(0, ms);
}

/** KAFKA_STORAGE_ERROR: the log's directory failed (or is failing) an I/O call; the log is offline. */
export class KafkaStorageError extends KafkaError {
  constructor(message: string, override readonly cause?: unknown) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
    this.name = 'KafkaStorageError';
  }
}

/** A follower append whose first offset is below the log end offset (the fetcher must truncate). */
export class UnexpectedAppendOffsetError extends KafkaError {
  constructor(
    message: string,
    readonly firstOffset: bigint,
    readonly lastOffset: bigint,
  ) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'UnexpectedAppendOffsetError';
  }
}

/** Offsets inside a follower append that do not increase. */
export class OffsetsOutOfOrderError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'OffsetsOutOfOrderError';
  }
}

/** An index file that fails its sanity check; the loader rebuilds it from the log. */
export class CorruptIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptIndexError';
  }
}

export function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
