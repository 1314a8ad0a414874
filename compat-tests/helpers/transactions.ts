/**
 * What the transaction suites check from outside the clients: the batches a partition's segment
 * files hold (offsets, transactional and control flags, markers, values), a transactional id's
 * state on its coordinator, and the last stable offset, read with krill's own client.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrokerConnection } from '../../replication/network-client';
import { ControlRecordType, readEndTxnMarker } from '../../protocol/records/control-record';
import { RecordBatch } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { decodeBatches } from '../../storage/testing/batches';

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
