/**
 * Helpers of the compaction suites (issue 13): an embedded broker whose log cleaner backs off
 * 20 ms, compacted topics with 4 KiB segments (cleaned as soon as anything is dirty), the pads that
 * roll the active segment so everything written before them is cleanable, a bounded wait for the
 * cleaner's checkpoint (LogCleaner.awaitCleaned: an event, no polling, no fixed sleep), and the
 * expected view of a compacted partition: the latest record of every key at its original offset.
 */
import { startBroker, type RunningBroker } from '../../broker';
import { connect, produce, type BrokerConnection } from '../../client/network-client';
import type { UnifiedLog } from '../../storage/unified-log';
import { createTopic } from '../recovery/helpers';
import { waitFor } from '../replication/helpers';

export const SEGMENT_BYTES = 4096;
/** Two pads never share a 4 KiB segment: the second one always starts a new one. */
const PAD_BYTES = 2500;

/** One record as a client wrote it: a null value is a tombstone. */
export interface Written {
  key: string;
  value: string | null;
  offset: bigint;
}

export async function startCompactionBroker(config: Record<string, string | number | boolean> = {}): Promise<RunningBroker> {
  return startBroker({
    logLevel: 'warn',
    config: { 'auto.create.topics.enable': false, 'group.initial.rebalance.delay.ms': 0, 'log.cleaner.backoff.ms': 20, 'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024, ...config },
  });
}

/** A one-partition compacted topic cleaned as soon as it has a dirty segment. */
export async function createCompactedTopic(broker: RunningBroker, topic: string, configs: Record<string, string> = {}): Promise<void> {
  const conn = await adminConn(broker);
  try {
    await createTopic(conn, topic, {
      'cleanup.policy': 'compact',
      'segment.bytes': String(SEGMENT_BYTES),
      'min.cleanable.dirty.ratio': '0.01',
      ...configs,
    });
  } finally {
    await conn.close();
  }
  await waitFor(`${topic}-0 on the broker`, () => broker.server.logManager.getLog(topic, 0));
}

export function adminConn(broker: RunningBroker): Promise<BrokerConnection> {
  const [host, port] = broker.bootstrapServers[0].split(':');
  return connect(host, Number(port));
}

export function logOf(broker: RunningBroker, topic: string): UnifiedLog {
  const log = broker.server.logManager.getLog(topic, 0);
  if (!log) throw new Error(`no log for ${topic}-0`);
  return log;
}

/**
 * Writes two pads (key `pad`, acks=all) so that every record before them lies in an inactive
 * segment, then waits until the cleaner's checkpoint reaches the second pad (everything before it
 * cleaned). Returns the pads as written. `timestamp` dates them (default now).
 */
export async function padAndClean(broker: RunningBroker, topic: string, o: { timestamp?: number; timeoutMs?: number } = {}): Promise<Written[]> {
  const pads = await writePads(broker, topic, o.timestamp);
  await awaitCleaned(broker, topic, pads[1].offset, o.timeoutMs);
  return pads;
}

export async function writePads(broker: RunningBroker, topic: string, timestamp = Date.now()): Promise<Written[]> {
  const conn = await adminConn(broker);
  const out: Written[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const value = `pad${i}:`.padEnd(PAD_BYTES, 'p');
      const res = await produce(conn, topic, 0, [{ key: 'pad', value, timestamp }], { acks: -1 });
      if (!res) throw new Error('pad produce: no answer');
      out.push({ key: 'pad', value, offset: res.baseOffset });
    }
  } finally {
    await conn.close();
  }
  return out;
}

/** Resolves once the partition's cleaner checkpoint is at or past `offset`; fails after `timeoutMs`. */
export async function awaitCleaned(broker: RunningBroker, topic: string, offset: bigint, timeoutMs = 30_000): Promise<void> {
  const cleaner = broker.server.logManager.cleaner;
  if (!cleaner) throw new Error('the broker runs no log cleaner');
  if (!(await cleaner.awaitCleaned({ topic, partition: 0 }, offset, timeoutMs))) {
    throw new Error(`${topic}-0 not cleaned up to ${offset} within ${timeoutMs} ms (checkpoint ${cleaner.cleanerManager.checkpointedOffset({ topic, partition: 0 })})`);
  }
}

/**
 * What a compacted partition holds once cleaned up to `cleanedTo` (the cleaner's checkpoint, the
 * active segment's base): below it, the latest record of every key written there (at or after
 * `from`, the log start); from it on, everything (the active segment is never cleaned). In offset
 * order.
 */
export function compactedView(written: readonly Written[], cleanedTo: bigint, from = 0n): Written[] {
  const m = new Map<string, Written>();
  const tail: Written[] = [];
  for (const w of byOffset(written)) {
    if (w.offset < from) continue;
    if (w.offset < cleanedTo) m.set(w.key, w);
    else tail.push(w);
  }
  return byOffset([...m.values(), ...tail]);
}

/** The view of `written` after `padAndClean` returned `pads` (cleaned up to the second pad). */
export function viewAfter(written: readonly Written[], pads: readonly Written[], from = 0n): Written[] {
  return compactedView(written, pads[pads.length - 1].offset, from);
}

export function byOffset<T extends { offset: bigint }>(xs: readonly T[]): T[] {
  return [...xs].sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
}

/** `rounds` rounds of updates of `keys` keys, round r's value of key k being `${tag}:${r}:${k}`; every 7th update of the last round a tombstone. */
export function updates(tag: string, keys: number, rounds: number): { key: string; value: string | null }[] {
  const out: { key: string; value: string | null }[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < keys; k++) out.push({ key: `${tag}-k${k}`, value: r === rounds - 1 && k % 7 === 3 ? null : `${tag}:${r}:${k}`.padEnd(40 + ((k * 13) % 60), '.') });
  }
  return out;
}
