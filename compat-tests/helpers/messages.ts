/**
 * Deterministic test messages and exact comparison of what a client sent with what krill's own
 * client reads back: key, value (null included), headers (binary, repeated keys), timestamp, and
 * order within each partition.
 */
import type { FetchedRecord } from '../../client/network-client';

/** A message as KafkaJS takes it (explicit partition left to the partitioner). */
export interface TestMessage {
  key: string;
  value: Buffer | null;
  headers: Record<string, Buffer | string | (Buffer | string)[]>;
  /** Epoch ms as a string (KafkaJS' type). */
  timestamp: string;
}

/**
 * `count` keyed messages of one phase. Values vary in size and content, about one in 97 is null
 * (a tombstone); every message has a text header, a binary header and a repeated header key.
 */
export function makeMessages(phase: string, count: number, baseTimestamp: number): TestMessage[] {
  const out: TestMessage[] = [];
  for (let i = 0; i < count; i++) {
    const value = i % 97 === 13 ? null : Buffer.from(`${phase}:${i}:${'v'.repeat(i % 61)}`);
    out.push({
      key: `${phase}-key-${i}`,
      value,
      headers: {
        phase,
        idx: String(i),
        bin: Buffer.from([i & 0xff, (i >> 8) & 0xff, 0x00, 0xff]),
        dup: ['first', `second-${i % 7}`],
      },
      // Not monotonic on purpose: timestamps are the client's, not arrival order.
      timestamp: String(baseTimestamp + ((i * 7919) % 100_000)),
    });
  }
  return out;
}

/** A canonical, diff-friendly line per record. */
export interface Canonical {
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
  timestamp: string;
}

export function canonicalSent(m: TestMessage): Canonical {
  const headers: [string, string | null][] = [];
  for (const [k, v] of Object.entries(m.headers)) {
    for (const x of Array.isArray(v) ? v : [v]) headers.push([k, Buffer.from(x).toString('hex')]);
  }
  return { key: Buffer.from(m.key).toString('hex'), value: m.value === null ? null : m.value.toString('hex'), headers, timestamp: m.timestamp };
}

export function canonicalRead(r: FetchedRecord): Canonical {
  return {
    key: r.key === null ? null : r.key.toString('hex'),
    value: r.value === null ? null : r.value.toString('hex'),
    headers: r.headers.map((h) => [h.key, h.value === null ? null : h.value.toString('hex')]),
    timestamp: r.timestamp.toString(),
  };
}

/** One comparable string per record: cheap to compare by the thousand, readable in a diff. */
export function line(c: Canonical): string {
  return JSON.stringify(c);
}

/** Groups messages by the partition `partitionOf` assigns, keeping send order. */
export function expectedByPartition(messages: readonly TestMessage[], partitions: number, partitionOf: (m: TestMessage) => number): Canonical[][] {
  const out: Canonical[][] = Array.from({ length: partitions }, () => []);
  for (const m of messages) out[partitionOf(m)].push(canonicalSent(m));
  return out;
}
