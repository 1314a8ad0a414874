/**
 * What the transaction suites check from outside the clients: the batches a partition holds (from
 * its segment files, which works for an offline log too, or through the broker's LogManager), a
 * transactional id's state on its coordinator, the last stable offset and a group's committed
 * offsets through krill's own client, and a read as a read_committed Java consumer does it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunningBroker } from '../../broker';
import { ErrorCode } from '../../protocol/errors';
import { ControlRecordType, parseControlRecordType, readEndTxnMarker } from '../../protocol/records/control-record';
import { RecordBatch } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { OffsetSpec, decodeRecordSet, listOffset, type BrokerConnection } from '../../client/network-client';
import { recordsBuffer } from '../../storage/log-segment';
import { decodeBatches } from '../../storage/testing/batches';
import { waitFor } from '../replication/helpers';

export interface StoredBatch {
  file: string;
  baseOffset: bigint;
  lastOffset: bigint;
  producerId: bigint;
  producerEpoch: number;
  isTransactional: boolean;
  /** 'COMMIT' / 'ABORT' for a marker batch. */
  marker?: 'COMMIT' | 'ABORT';
  values: string[];
}

/** Every batch in the `.log` files of a partition directory, in file and offset order. */
export function storedBatches(partitionDir: string): StoredBatch[] {
  const out: StoredBatch[] = [];
  for (const name of fs.readdirSync(partitionDir).filter((n) => n.endsWith('.log')).sort()) {
    const buf = fs.readFileSync(path.join(partitionDir, name));
    for (const b of decodeBatches(buf)) {
      const rb = new RecordBatch(buf, b.position);
      const stored: StoredBatch = {
        file: name,
        baseOffset: rb.baseOffset,
        lastOffset: rb.lastOffset,
        producerId: rb.producerId,
        producerEpoch: rb.producerEpoch,
        isTransactional: rb.isTransactional,
        values: [],
      };
      if (rb.isControlBatch) {
        const m = readEndTxnMarker(rb);
        if (m) stored.marker = m.type === ControlRecordType.COMMIT ? 'COMMIT' : 'ABORT';
      } else {
        stored.values = readRecords(rb).map((r) => (r.value ? r.value.toString() : ''));
      }
      out.push(stored);
    }
  }
  return out;
}

/** Offsets of every record and marker on disk: strictly increasing and without gaps, or the test fails. */
export function expectContiguousOffsets(batches: readonly StoredBatch[]): bigint[] {
  const offsets: bigint[] = [];
  for (const b of batches) for (let o = b.baseOffset; o <= b.lastOffset; o++) offsets.push(o);
  const first = offsets[0] ?? 0n;
  const expected = offsets.map((_, i) => first + BigInt(i));
  expect(offsets).toEqual(expected);
  return offsets;
}

/** The transactional id's state on its coordinator (DescribeTransactions). */
export async function describeTransaction(conn: BrokerConnection, transactionalId: string): Promise<{ errorCode: number; transactionState: string; producerId: bigint; producerEpoch: number }> {
  const r = await conn.send('DescribeTransactions', 0, { transactionalIds: [transactionalId] });
  return r.transactionStates[0];
}

/** ListOffsets latest under read_committed: the partition's last stable offset (or its error). */
export async function lastStableOffset(conn: BrokerConnection, topic: string, partition: number): Promise<{ errorCode: number; offset: bigint }> {
  const r = await conn.send('ListOffsets', 5, {
    replicaId: -1,
    isolationLevel: 1,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  const p = r.topics[0].partitions[0];
  return { errorCode: p.errorCode, offset: p.offset };
}

/** Rejects with a clear message if `p` does not settle within `ms`. */
export function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)));
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export interface ScannedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  isControl: boolean;
  isTransactional: boolean;
  producerId: bigint;
  producerEpoch: number;
  /** ABORT / COMMIT for a marker (control batches only). */
  control?: ControlRecordType;
  /** Data records: offset and value (utf8). */
  records: { offset: bigint; value: string | null }[];
}

/**
 * Every batch of a partition's log from its start to the log end offset (not just the HWM). A read
 * stays inside one segment, so this reads segment after segment.
 */
export function scanLog(broker: RunningBroker, topic: string, partition: number): ScannedBatch[] {
  const log = broker.server.logManager.getLog(topic, partition);
  if (!log) throw new Error(`no log for ${topic}-${partition} on this broker`);
  const out: ScannedBatch[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const buf = recordsBuffer(log.read(next, 256 * 1024 * 1024, { isolation: 'LOG_END' }));
    const decoded = decodeBatches(buf);
    if (decoded.length === 0) throw new Error(`scanLog ${topic}-${partition}: nothing read at ${next} below the LEO ${log.logEndOffset}`);
    for (const d of decoded) {
      const b = new RecordBatch(buf, d.position);
      const records = [...readRecords(b)];
      out.push({
        baseOffset: b.baseOffset,
        lastOffset: b.lastOffset,
        isControl: b.isControlBatch,
        isTransactional: b.isTransactional,
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        control: b.isControlBatch ? parseControlRecordType(records[0]?.key ?? null) : undefined,
        records: b.isControlBatch ? [] : records.map((r) => ({ offset: r.offset, value: r.value === null ? null : r.value.toString() })),
      });
      next = b.nextOffset;
    }
  }
  return out;
}

/**
 * A compact view of a scanned partition, one entry per batch run: data records by value, markers
 * as `<COMMIT>` / `<ABORT>`, in log order. Lets a test state the exact expected layout.
 */
export function layout(batches: readonly ScannedBatch[]): string[] {
  const out: string[] = [];
  for (const b of batches) {
    if (b.isControl) out.push(`<${ControlRecordType[b.control ?? ControlRecordType.UNKNOWN]}>`);
    else for (const r of b.records) out.push(r.value ?? '<null>');
  }
  return out;
}

/**
 * Every offset of the partition is held exactly once: data records and markers together cover
 * logStart..LEO-1 with no gap and no duplicate (a marker takes one offset). Returns the offsets.
 */
export function offsetsOf(batches: readonly ScannedBatch[]): bigint[] {
  const out: bigint[] = [];
  for (const b of batches) {
    if (b.isControl) {
      for (let o = b.baseOffset; o <= b.lastOffset; o++) out.push(o);
    } else {
      for (const r of b.records) out.push(r.offset);
    }
  }
  return out;
}

export interface CommittedOffset {
  partition: number;
  offset: bigint;
  errorCode: number;
}

/**
 * The group's committed offsets for `topic` through krill's own client (OffsetFetch v7).
 * `requireStable` (KIP-447): a partition with a pending transactional commit answers
 * UNSTABLE_OFFSET_COMMIT instead of the last stable value.
 */
export async function committedOffsets(conn: BrokerConnection, groupId: string, topic: string, partitions: number[], requireStable: boolean): Promise<CommittedOffset[]> {
  const res = await conn.send('OffsetFetch', 7, { groupId, topics: [{ name: topic, partitionIndexes: partitions }], requireStable });
  if (res.errorCode !== ErrorCode.NONE) return partitions.map((partition) => ({ partition, offset: -1n, errorCode: res.errorCode }));
  const t = res.topics.find((x: { name: string }) => x.name === topic);
  return partitions.map((partition) => {
    const p = t?.partitions.find((x: { partitionIndex: number }) => x.partitionIndex === partition);
    return { partition, offset: p ? p.committedOffset : -1n, errorCode: p ? p.errorCode : -1 };
  });
}

/** Stable committed offsets (waits out UNSTABLE_OFFSET_COMMIT while markers are on their way). */
export async function stableCommittedOffsets(conn: BrokerConnection, groupId: string, topic: string, partitions: number[]): Promise<bigint[]> {
  const r = await waitFor(`stable committed offsets of ${groupId}`, async () => {
    const got = await committedOffsets(conn, groupId, topic, partitions, true);
    return got.every((x) => x.errorCode === ErrorCode.NONE) ? got : undefined;
  });
  return r.map((x) => x.offset);
}

export interface CommittedRead {
  /** Data records a read_committed consumer delivers, in offset order. */
  records: { offset: bigint; value: string | null }[];
  /** Every aborted transaction the Fetch responses listed (producer id, first offset). */
  aborted: { producerId: bigint; firstOffset: bigint }[];
  lastStableOffset: bigint;
}

/**
 * Reads a partition as a read_committed Java consumer does (Fetch v11, isolation_level 1) from
 * `from` up to the last stable offset, one Fetch after the other, dropping the data batches of each aborted transaction the response
 * lists (from its first offset up to that producer's ABORT marker) and every control batch.
 */
export async function readCommitted(conn: BrokerConnection, topic: string, partition: number, from = 0n): Promise<CommittedRead> {
  const out: CommittedRead = { records: [], aborted: [], lastStableOffset: -1n };
  let next = from;
  for (let fetches = 0; ; fetches++) {
    if (fetches > 1000) throw new Error(`readCommitted ${topic}-${partition}: no progress at ${next}`);
    const res = await conn.send('Fetch', 11, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 8 << 20,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, logStartOffset: -1n, partitionMaxBytes: 8 << 20 }] }],
      forgottenTopicsData: [],
      rackId: '',
    });
    const p = res.responses[0].partitions[0];
    if (p.errorCode !== ErrorCode.NONE) throw new Error(`readCommitted ${topic}-${partition}: error ${p.errorCode}`);
    out.lastStableOffset = p.lastStableOffset;
    if (next >= p.lastStableOffset) return out;
    const listed = [...(p.abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
    for (const a of listed) {
      if (!out.aborted.some((x) => x.producerId === a.producerId && x.firstOffset === a.firstOffset)) out.aborted.push({ producerId: a.producerId, firstOffset: a.firstOffset });
    }
    const abortedProducers = new Set<bigint>();
    const { batches } = decodeRecordSet(p.records);
    if (batches.length === 0) throw new Error(`readCommitted ${topic}-${partition}: empty response at ${next} below LSO ${p.lastStableOffset}`);
    for (const b of batches) {
      while (listed.length && listed[0].firstOffset <= b.lastOffset) abortedProducers.add(listed.shift()!.producerId);
      if (b.isControlBatch) {
        const key = [...readRecords(b)][0]?.key ?? null;
        if (parseControlRecordType(key) === ControlRecordType.ABORT) abortedProducers.delete(b.producerId);
      } else if (!(b.isTransactional && abortedProducers.has(b.producerId))) {
        for (const r of readRecords(b)) {
          if (r.offset >= next && r.offset < p.lastStableOffset) out.records.push({ offset: r.offset, value: r.value === null ? null : r.value.toString() });
        }
      }
      next = b.nextOffset;
    }
  }
}

/** Waits (bounded) until every marker is written: on each partition p, LSO == HWM == `ends[p]`. */
export async function markersSettled(conn: BrokerConnection, topic: string, ends: number[]): Promise<void> {
  await waitFor(`${topic}: last stable offset reaches ${JSON.stringify(ends)}`, async () => {
    for (let p = 0; p < ends.length; p++) {
      const hw = await listOffset(conn, topic, p, OffsetSpec.LATEST, { isolationLevel: 0 });
      const lso = await listOffset(conn, topic, p, OffsetSpec.LATEST, { isolationLevel: 1 });
      if (hw.offset !== BigInt(ends[p]) || lso.offset !== BigInt(ends[p])) return false;
    }
    return true;
  });
}
