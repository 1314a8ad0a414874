/**
 * Test support for the log cleaner's suites (the helpers of Kafka's LogCleanerTest /
 * LogCleanerManagerTest): compacted logs on temp dirs, keyed records and tombstones, idempotent
 * and transactional appends, end-transaction markers, the views of a log the assertions compare
 * (keys, offsets, batch offsets, last sequences), and FakeOffsetMap, an unbounded OffsetMap keyed
 * by the key bytes with a settable capacity.
 *
 * No jest here (tsconfig.build.json compiles it): callers assert.
 */
import * as path from 'node:path';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { buildRecordBatch, type SimpleRecord } from '../../protocol/records/memory-records-builder';
import { readRecords } from '../../protocol/records/record';
import { CompressionType, RecordBatch, TimestampType } from '../../protocol/records/record-batch';
import { Cleaner } from '../cleaner/cleaner';
import type { OffsetMap } from '../cleaner/offset-map';
import { Throttler } from '../cleaner/throttler';
import type { StorageFs } from '../fs';
import { logConfig, type LogConfig } from '../log-config';
import { UnifiedLog } from '../unified-log';
import { Logger } from '../../common/logger';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import type { TopicPartition } from '../../common/topic-partition';
import { tempDir } from './temp-dir';

export const TEST_TP: TopicPartition = { topic: 'test', partition: 0 };

export interface TestLog {
  log: UnifiedLog;
  dir: string;
  time: MockTime;
  scheduler: MockScheduler;
  config: LogConfig;
}

/** A compacted log (cleanup.policy=compact) in a fresh temp dir unless `dir` is given. */
export function makeLog(overrides: Partial<LogConfig> = {}, opts: { dir?: string; time?: MockTime; fs?: StorageFs; recoveryPoint?: bigint; hadCleanShutdown?: boolean; tp?: TopicPartition } = {}): TestLog {
  const time = opts.time ?? new MockTime();
  const scheduler = new MockScheduler(time);
  const tp = opts.tp ?? TEST_TP;
  const dir = opts.dir ?? path.join(tempDir('krill-cleaner-'), `${tp.topic}-${tp.partition}`);
  const config = logConfig({ cleanupPolicy: ['compact'], segmentBytes: 1024 * 1024, ...overrides });
  const log = UnifiedLog.load({
    dir,
    tp,
    config,
    fs: opts.fs,
    time,
    scheduler,
    recoveryPoint: opts.recoveryPoint,
    hadCleanShutdown: opts.hadCleanShutdown,
  });
  return { log, dir, time, scheduler, config };
}

export interface RecordOptions {
  producerId?: bigint;
  producerEpoch?: number;
  sequence?: number;
  timestamp?: number;
  compression?: CompressionType;
  timestampType?: TimestampType;
  headers?: { key: string; value: string | null }[];
}

/** One batch with one record (Kafka's LogCleanerTest.record): key and value are decimal strings. */
export function record(key: number | string, value: number | string | null, o: RecordOptions = {}): Buffer {
  return records([[key, value]], o);
}

export function tombstone(key: number | string, o: RecordOptions = {}): Buffer {
  return record(key, null, o);
}

export function records(kvs: readonly [number | string | null, number | string | null][], o: RecordOptions = {}): Buffer {
  const recs: SimpleRecord[] = kvs.map(([k, v]) => ({
    key: k === null ? null : String(k),
    value: v === null ? null : String(v),
    timestamp: o.timestamp ?? 1_700_000_000_000,
    headers: o.headers,
  }));
  return buildRecordBatch(recs, {
    producerId: o.producerId ?? -1n,
    producerEpoch: o.producerEpoch ?? -1,
    baseSequence: o.sequence ?? -1,
    compression: o.compression,
    timestampType: o.timestampType,
    now: o.timestamp ?? 1_700_000_000_000,
  });
}

/** Kafka's appendTransactionalAsLeader: each call appends one transactional batch of `keys` (value = key). */
export function transactionalAppender(log: UnifiedLog, producerId: bigint, producerEpoch = 0, o: { leaderEpoch?: number; timestamp?: number; origin?: 'client' | 'coordinator' } = {}) {
  let sequence = 0;
  return (keys: readonly number[]): void => {
    const buf = buildRecordBatch(
      keys.map((k) => ({ key: String(k), value: String(k), timestamp: o.timestamp ?? 1_700_000_000_000 })),
      { producerId, producerEpoch, baseSequence: sequence, isTransactional: true, now: o.timestamp ?? 1_700_000_000_000 },
    );
    log.appendAsLeader(buf, { leaderEpoch: o.leaderEpoch ?? 0, origin: o.origin ?? 'client' });
    sequence += keys.length;
  };
}

/** Kafka's appendIdempotentAsLeader. */
export function idempotentAppender(log: UnifiedLog, producerId: bigint, producerEpoch = 0) {
  let sequence = 0;
  return (keys: readonly number[]) => {
    const buf = buildRecordBatch(
      keys.map((k) => ({ key: String(k), value: String(k), timestamp: 1_700_000_000_000 })),
      { producerId, producerEpoch, baseSequence: sequence, now: 1_700_000_000_000 },
    );
    sequence += keys.length;
    return log.appendAsLeader(buf, { leaderEpoch: 0 });
  };
}

export function marker(log: UnifiedLog, type: ControlRecordType.COMMIT | ControlRecordType.ABORT, producerId: bigint, producerEpoch = 0, o: { leaderEpoch?: number; coordinatorEpoch?: number; timestamp?: number } = {}): void {
  const buf = buildEndTxnMarkerBatch({ type, producerId, producerEpoch, coordinatorEpoch: o.coordinatorEpoch ?? 0, timestamp: o.timestamp ?? 1_700_000_000_000 });
  log.appendAsLeader(buf, { leaderEpoch: o.leaderEpoch ?? 0, origin: 'coordinator' });
}

export function commitMarker(log: UnifiedLog, producerId: bigint, producerEpoch = 0): void {
  marker(log, ControlRecordType.COMMIT, producerId, producerEpoch);
}

export function abortMarker(log: UnifiedLog, producerId: bigint, producerEpoch = 0): void {
  marker(log, ControlRecordType.ABORT, producerId, producerEpoch);
}

/** Every batch of the log, in order, as views over each segment's bytes. */
export function batchesInLog(log: UnifiedLog): RecordBatch[] {
  const out: RecordBatch[] = [];
  for (const seg of log.logSegments()) {
    if (seg.size === 0) continue;
    const buf = seg.log.read(0, seg.size);
    let pos = 0;
    while (pos < buf.length) {
      const b = new RecordBatch(buf, pos);
      out.push(b);
      pos += b.sizeInBytes;
    }
  }
  return out;
}

/** Kafka's LogTestUtils.keysInLog: keys of data records that have a value, as strings. */
export function keysInLog(log: UnifiedLog): string[] {
  const out: string[] = [];
  for (const b of batchesInLog(log)) {
    if (b.isControlBatch) continue;
    for (const r of readRecords(b)) if (r.value !== null && r.key !== null) out.push(r.key.toString());
  }
  return out;
}

/** Kafka's offsetsInLog: offsets of records with a key and a value (markers included). */
export function offsetsInLog(log: UnifiedLog): bigint[] {
  const out: bigint[] = [];
  for (const b of batchesInLog(log)) for (const r of readRecords(b)) if (r.value !== null && r.key !== null) out.push(r.offset);
  return out;
}

/** Every record of the log (key, value, offset), for latest-per-key checks. */
export function recordsInLog(log: UnifiedLog): { offset: bigint; key: string | null; value: string | null; control: boolean }[] {
  const out: { offset: bigint; key: string | null; value: string | null; control: boolean }[] = [];
  for (const b of batchesInLog(log)) {
    for (const r of readRecords(b)) out.push({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null, control: b.isControlBatch });
  }
  return out;
}

export function lastOffsetsPerBatchInLog(log: UnifiedLog): bigint[] {
  return batchesInLog(log).map((b) => b.lastOffset);
}

export function batchBaseOffsetsInLog(log: UnifiedLog): bigint[] {
  return batchesInLog(log).map((b) => b.baseOffset);
}

/** Kafka's lastSequencesInLog: producer id -> last sequence of its data batches. */
export function lastSequencesInLog(log: UnifiedLog): Map<bigint, number> {
  const out = new Map<bigint, number>();
  for (const b of batchesInLog(log)) if (!b.isControlBatch && b.producerId >= 0n) out.set(b.producerId, b.lastSequence);
  return out;
}

/** Kafka's FakeOffsetMap: a plain map of key bytes -> offset with a nominal capacity. */
export class FakeOffsetMap implements OffsetMap {
  private readonly map = new Map<string, number>();
  private last = -1;
  constructor(readonly slots: number) {}
  put(buf: Buffer, start: number, length: number, offset: number): void {
    this.last = offset;
    this.map.set(buf.toString('latin1', start, start + length), offset);
  }
  /** Test convenience: a key given as text. */
  putKey(key: string | number, offset: number): void {
    const b = Buffer.from(String(key));
    this.put(b, 0, b.length, offset);
  }
  get(buf: Buffer, start: number, length: number): number {
    return this.map.get(buf.toString('latin1', start, start + length)) ?? -1;
  }
  getKey(key: string | number): number {
    const b = Buffer.from(String(key));
    return this.get(b, 0, b.length);
  }
  updateLatestOffset(offset: number): void {
    this.last = offset;
  }
  clear(): void {
    this.map.clear();
  }
  get size(): number {
    return this.map.size;
  }
  get latestOffset(): number {
    return this.last;
  }
  get utilization(): number {
    return this.map.size / this.slots;
  }
}

/** Kafka's makeCleaner: a FakeOffsetMap of `capacity`, load factor 0.75, buffers of `maxMessageSize`. */
export function makeCleaner(
  capacity: number,
  o: { checkDone?: (tp: TopicPartition) => void; maxMessageSize?: number; time?: MockTime; logger?: Logger; offsetMap?: OffsetMap } = {},
): Cleaner {
  const maxMessageSize = o.maxMessageSize ?? 64 * 1024;
  return new Cleaner({
    id: 0,
    offsetMap: o.offsetMap ?? new FakeOffsetMap(capacity),
    ioBufferSize: maxMessageSize,
    maxIoBufferSize: maxMessageSize,
    dupBufferLoadFactor: 0.75,
    throttler: new Throttler(Number.MAX_VALUE),
    time: o.time ?? new MockTime(),
    checkDone: o.checkDone ?? (() => undefined),
    logger: o.logger ?? Logger.silent(),
  });
}
