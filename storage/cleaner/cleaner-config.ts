/**
 * The log cleaner's broker settings (Kafka's CleanerConfig), with Kafka's names and defaults:
 * log.cleaner.threads, log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor (the
 * dedupe buffer's load factor, despite its name), log.cleaner.io.buffer.size, message.max.bytes (the
 * largest batch the cleaner's I/O buffers grow to), log.cleaner.io.max.bytes.per.second,
 * log.cleaner.backoff.ms and log.cleaner.enable. The per-topic settings (min.cleanable.dirty.ratio,
 * min/max.compaction.lag.ms, delete.retention.ms, whose broker defaults are the log.cleaner.*
 * synonyms) live in LogConfig.
 *
 * Invariant: a config with enableCleaner false starts no cleaner; numThreads >= 1 when enabled.
 */
export interface CleanerConfig {
  /** log.cleaner.threads: logs cleaned at once (each with its own offset map and I/O buffers). */
  numThreads: number;
  /** log.cleaner.dedupe.buffer.size: offset map memory across all threads (each gets an equal share, at most 2 GiB). */
  dedupeBufferSize: number;
  /** log.cleaner.io.buffer.load.factor: how full an offset map may get before a pass stops taking keys. */
  dedupeBufferLoadFactor: number;
  /** log.cleaner.io.buffer.size: read + write buffer memory across all threads (each buffer gets size / threads / 2). */
  ioBufferSize: number;
  /** message.max.bytes: the I/O buffers grow up to this (or the batch in hand) for a large batch. */
  maxMessageSize: number;
  /** log.cleaner.io.max.bytes.per.second: read and write bytes of all threads together (Infinity = unthrottled). */
  maxIoBytesPerSecond: number;
  /** log.cleaner.backoff.ms: a thread's pause when no log needs cleaning. */
  backoffMs: number;
  /** log.cleaner.enable */
  enableCleaner: boolean;
}

/** Kafka's defaults (CleanerConfig / ServerConfigs). */
export const DEFAULT_CLEANER_CONFIG: Readonly<CleanerConfig> = Object.freeze({
  numThreads: 1,
  dedupeBufferSize: 128 * 1024 * 1024,
  dedupeBufferLoadFactor: 0.9,
  ioBufferSize: 512 * 1024,
  maxMessageSize: 1024 * 1024 + 12,
  maxIoBytesPerSecond: Number.MAX_VALUE,
  backoffMs: 15_000,
  enableCleaner: true,
});

export function cleanerConfig(overrides: Partial<CleanerConfig> = {}): CleanerConfig {
  const c = { ...DEFAULT_CLEANER_CONFIG, ...overrides };
  if (c.enableCleaner && (!Number.isInteger(c.numThreads) || c.numThreads < 1)) throw new Error(`log.cleaner.threads must be at least 1, got ${c.numThreads}`);
  if (c.ioBufferSize < 0) throw new Error(`log.cleaner.io.buffer.size must be at least 0, got ${c.ioBufferSize}`);
  if (c.backoffMs < 0) throw new Error(`log.cleaner.backoff.ms must be at least 0, got ${c.backoffMs}`);
  return c;
}
