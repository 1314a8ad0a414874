/**
 * The partition side of transactions: producer state's open transactions, the LSO, the on-demand
 * .txnindex, and the KAFKA-7866 rules for a failed transaction index append.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../protocol/records/control-record';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { logConfig } from './log-config';
import { recordsBuffer } from './log-segment';
import { decodeBatches } from './testing/batches';
import { FaultyFs } from './testing/faulty-fs';
import { MockScheduler, MockTime } from '../common/testing/mock-time';
import { removeTempDirs, tempDir } from './testing/temp-dir';
import { UnifiedLog } from './unified-log';

afterAll(removeTempDirs);

const TP = { topic: 'txn', partition: 0 };
const TS = 1_700_000_000_000;

function open(dir = path.join(tempDir(), 'txn-0'), fs = new FaultyFs()): { log: UnifiedLog; fs: FaultyFs; dir: string } {
  const time = new MockTime();
  const log = UnifiedLog.load({ dir, tp: TP, config: logConfig({}), fs, time, scheduler: new MockScheduler(time) });
  return { log, fs, dir };
}

const seqs = new Map<bigint, number>();
function txnData(log: UnifiedLog, pid: bigint, count = 2, transactional = true) {
  const seq = seqs.get(pid) ?? 0;
  seqs.set(pid, seq + count);
  const recs = Array.from({ length: count }, (_, i) => ({ key: null, value: `p${pid}-${seq + i}`, timestamp: TS }));
  const buf = buildRecordBatch(recs, { baseOffset: 0n, producerId: pid, producerEpoch: 0, baseSequence: seq, isTransactional: transactional, now: TS });
  return log.appendAsLeader(buf, { leaderEpoch: 0 });
}

function marker(log: UnifiedLog, pid: bigint, type: ControlRecordType.ABORT | ControlRecordType.COMMIT, coordinatorEpoch = 0) {
  const buf = buildEndTxnMarkerBatch({ type, producerId: pid, producerEpoch: 0, coordinatorEpoch, timestamp: TS, baseOffset: 0n });
  return log.appendAsLeader(buf, { leaderEpoch: 0, origin: 'coordinator' });
}

function allOffsets(dir: string): bigint[] {
  const out: bigint[] = [];
  for (const f of nodefs.readdirSync(dir).filter((n) => n.endsWith('.log')).sort()) {
    for (const b of decodeBatches(nodefs.readFileSync(path.join(dir, f)))) for (let o = b.baseOffset; o <= b.lastOffset; o++) out.push(o);
  }
  return out;
}

beforeEach(() => seqs.clear());

describe('transactions: producer state and LSO', () => {
  test('an open transaction holds the LSO at its first offset; COMMIT releases it once replicated', () => {
    const { log } = open();
    txnData(log, 1n, 3, false); // 0..2 idempotent, not transactional
    const a = txnData(log, 2n); // 3..4
    txnData(log, 2n); // 5..6
    log.updateHighWatermark(log.logEndOffset);
    expect(a.firstOffset).toBe(3n);
    expect(log.lastStableOffset).toBe(3n);
    expect(log.producerState.entry(2n)?.currentTxnFirstOffset).toBe(3n);
    const m = marker(log, 2n, ControlRecordType.COMMIT); // 7
    expect(m.firstOffset).toBe(7n);
    expect(log.producerState.entry(2n)?.currentTxnFirstOffset).toBe(-1n);
    // The marker is not below the HWM yet: still unstable.
    expect(log.lastStableOffset).toBe(3n);
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(8n);
    // COMMIT writes no txn index.
    expect(log.logSegments()[0].txnIndex).toBeNull();
    expect(nodefs.readdirSync(log.dir).some((n) => n.endsWith('.txnindex'))).toBe(false);
    log.close();
  });

  test('LSO = min over open transactions; a non-transactional write during an open transaction is INVALID_TXN_STATE', () => {
    const { log } = open();
    txnData(log, 1n); // 0..1
    txnData(log, 2n); // 2..3
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(0n);
    marker(log, 1n, ControlRecordType.COMMIT); // 4
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(2n);
    const e = (() => {
      try {
        txnData(log, 2n, 1, false);
      } catch (err) {
        return err as KafkaError;
      }
      throw new Error('expected INVALID_TXN_STATE');
    })();
    expect(e.code).toBe(ErrorCode.INVALID_TXN_STATE);
    log.close();
  });

  test('ABORT creates the .txnindex on demand; read_committed gets aborted transactions up to the LSO', () => {
    const { log, dir } = open();
    txnData(log, 1n); // 0..1
    txnData(log, 2n); // 2..3
    marker(log, 1n, ControlRecordType.ABORT); // 4
    log.updateHighWatermark(log.logEndOffset);
    const idx = log.logSegments()[0].txnIndex!;
    expect(idx.entries()).toEqual([{ producerId: 1n, firstOffset: 0n, lastOffset: 4n, lastStableOffset: 2n }]);
    expect(nodefs.statSync(path.join(dir, '00000000000000000000.txnindex')).size).toBe(34);
    expect(log.lastStableOffset).toBe(2n);
    marker(log, 2n, ControlRecordType.ABORT); // 5
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(6n);
    const r = log.read(0n, 1 << 20, { isolation: 'TXN_COMMITTED' });
    expect(decodeBatches(recordsBuffer(r)).map((b) => b.baseOffset)).toEqual([0n, 2n, 4n, 5n]);
    expect(r.abortedTransactions?.map((t) => [t.producerId, t.firstOffset, t.lastOffset])).toEqual([
      [1n, 0n, 4n],
      [2n, 2n, 5n],
    ]);
    expect(log.collectAbortedTransactions(5n, 6n).map((t) => t.producerId)).toEqual([2n]);
    log.close();
  });
});

describe('KAFKA-7866: a failed .txnindex creation', () => {
  test('LEO advances, LSO stays before the marker, end offset not advanced, dir offline, no offset reused; restart rebuilds the entry', () => {
    const fs = new FaultyFs();
    const { log, dir } = open(undefined, fs);
    const ioErrors: string[] = [];
    (log as unknown as { onIoError: (l: UnifiedLog, m: string) => void }).onIoError = (l, m) => {
      ioErrors.push(m);
      l.markOffline(m);
    };
    txnData(log, 1n, 3); // 0..2
    txnData(log, 2n, 1); // 3 (a second, committed later... never, it stays open)
    log.updateHighWatermark(log.logEndOffset);
    const mapEndBefore = log.producerState.mapEndOffset;
    expect(mapEndBefore).toBe(4n);
    fs.failNext({ op: 'open', path: '.txnindex', errno: 'EMFILE' });
    let err: unknown;
    try {
      marker(log, 1n, ControlRecordType.ABORT); // would be offset 4
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KafkaError);
    expect((err as KafkaError).code).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
    expect(fs.injected.map((i) => i.errno)).toEqual(['EMFILE']);
    expect(ioErrors.length).toBe(1);
    // (0) the LEO moved right after the .log write
    expect(log.logEndOffset).toBe(5n);
    // (1) the LSO cannot pass the marker: the aborted transaction stays open
    log.updateHighWatermark(5n);
    expect(log.lastStableOffset).toBe(0n);
    // (2) the producer state's end offset is not advanced
    expect(log.producerState.mapEndOffset).toBe(mapEndBefore);
    // (3) offline: later appends fail, nothing is written at offset 4 again
    expect(log.isOffline).toBe(true);
    expect(() => txnData(log, 3n, 1, false)).toThrow(KafkaError);
    expect(() => marker(log, 1n, ControlRecordType.ABORT)).toThrow(/offline/);
    log.closeHandlers();
    expect(allOffsets(dir)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(nodefs.existsSync(path.join(dir, '00000000000000000000.txnindex'))).toBe(false);

    // Restart (no clean shutdown): the producer-state replay writes the missing entry.
    const again = open(dir, new FaultyFs()).log;
    expect(again.rebuiltTxnIndexEntries).toBe(1);
    expect(again.logSegments()[0].txnIndex!.entries()).toEqual([{ producerId: 1n, firstOffset: 0n, lastOffset: 4n, lastStableOffset: 3n }]);
    again.updateHighWatermark(again.logEndOffset);
    expect(again.lastStableOffset).toBe(3n); // producer 2's transaction is still open
    const next = txnData(again, 4n, 1, false);
    expect(next.firstOffset).toBe(5n);
    again.close();
    // A clean restart does not add the entry twice.
    const third = open(dir, new FaultyFs()).log;
    expect(third.rebuiltTxnIndexEntries).toBe(0);
    expect(third.logSegments()[0].txnIndex!.entries().length).toBe(1);
    third.close();
    expect(allOffsets(dir)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
  });

  test('a non-IO error in the index append also takes the log offline', () => {
    const { log } = open();
    txnData(log, 1n); // 0..1
    const seg = log.logSegments()[0];
    seg.appendAbortedTxn = () => {
      throw new TypeError('boom');
    };
    expect(() => marker(log, 1n, ControlRecordType.ABORT)).toThrow(KafkaError);
    expect(log.isOffline).toBe(true);
    expect(log.logEndOffset).toBe(3n);
    log.closeHandlers();
  });
});

describe('transaction verification guards (KIP-890)', () => {
  function verifiedData(log: UnifiedLog, pid: bigint, guard: ReturnType<UnifiedLog['maybeStartTransactionVerification']>, required = true) {
    const seq = seqs.get(pid) ?? 0;
    const buf = buildRecordBatch([{ key: null, value: `v${seq}`, timestamp: TS }], {
      baseOffset: 0n,
      producerId: pid,
      producerEpoch: 0,
      baseSequence: seq,
      isTransactional: true,
      now: TS,
    });
    const info = log.appendAsLeader(buf, { leaderEpoch: 0, verificationRequired: required, verificationGuard: guard });
    seqs.set(pid, seq + 1);
    return info;
  }

  test('a batch starting a transaction needs the guard its verification began with; its write uses the guard up', () => {
    const { log } = open();
    const guard = log.maybeStartTransactionVerification(1n, 0, 0);
    expect(guard).toBeDefined();
    // Asking again (a retry) hands out the same guard.
    expect(log.maybeStartTransactionVerification(1n, 0, 0)).toBe(guard);
    expect(() => verifiedData(log, 1n, undefined)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_TXN_STATE }));
    expect(verifiedData(log, 1n, guard).firstOffset).toBe(0n);
    expect(log.producerState.verificationStateEntry(1n)).toBeUndefined();
    // The transaction is open: no verification needed, none required.
    expect(log.maybeStartTransactionVerification(1n, 1, 0)).toBeUndefined();
    expect(verifiedData(log, 1n, undefined).firstOffset).toBe(1n);
    log.close();
  });

  test('a marker written between the verification and the append voids the guard (no hanging transaction)', () => {
    const { log } = open();
    const guard = log.maybeStartTransactionVerification(2n, 0, 0)!;
    // The coordinator aborts the producer's transaction meanwhile (its marker reaches this partition).
    marker(log, 2n, ControlRecordType.ABORT);
    const leo = log.logEndOffset;
    expect(() => verifiedData(log, 2n, guard)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_TXN_STATE }));
    expect(log.logEndOffset).toBe(leo);
    expect(log.producerState.hasOngoingTransaction(2n)).toBe(false);
    // A fresh verification works.
    const fresh = log.maybeStartTransactionVerification(2n, 0, 0);
    expect(fresh).not.toBe(guard);
    expect(verifiedData(log, 2n, fresh).firstOffset).toBe(leo);
    log.close();
  });

  test('with verification off (transaction.partition.verification.enable=false) no guard is needed; unused guards expire', () => {
    const { log } = open();
    expect(verifiedData(log, 3n, undefined, false).firstOffset).toBe(0n);
    log.maybeStartTransactionVerification(4n, 0, 0);
    expect(log.producerState.verificationStateEntry(4n)).toBeDefined();
    log.producerState.removeExpiredProducers(Date.now() + log.producerState.producerIdExpirationMs + 1);
    expect(log.producerState.verificationStateEntry(4n)).toBeUndefined();
    log.close();
  });
});

describe('FaultyFs.failTransactionIndex', () => {
  test.each([
    ['an EIO append to an existing .txnindex', { op: 'write' as const }, 'EIO'],
    ['a non-I/O error creating the .txnindex', { op: 'open' as const, nonIo: true }, 'non-io'],
  ])('%s: the LEO moved, the transaction stays open, the log goes offline, the restart rebuilds the entry', (_label, spec, errno) => {
    const fs = new FaultyFs();
    const { log, dir } = open(undefined, fs);
    txnData(log, 1n); // 0..1
    if (spec.op === 'write') {
      marker(log, 1n, ControlRecordType.ABORT); // 2: creates the index
      txnData(log, 1n); // 3..4
    }
    const firstOffset = spec.op === 'write' ? 3n : 0n;
    fs.failTransactionIndex({ ...spec, under: dir });
    expect(() => marker(log, 1n, ControlRecordType.ABORT)).toThrow(expect.objectContaining({ code: ErrorCode.KAFKA_STORAGE_ERROR }));
    expect(fs.injected.map((i) => i.errno)).toEqual([errno]);
    const markerOffset = log.logEndOffset - 1n;
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(firstOffset);
    expect(log.isOffline).toBe(true);
    log.closeHandlers();
    const again = open(dir, new FaultyFs()).log;
    expect(again.rebuiltTxnIndexEntries).toBe(1);
    expect(again.logSegments()[0].txnIndex!.entries().at(-1)).toMatchObject({ producerId: 1n, firstOffset, lastOffset: markerOffset });
    again.updateHighWatermark(again.logEndOffset);
    expect(again.lastStableOffset).toBe(again.logEndOffset);
    again.close();
  });
});

describe('transaction verification: the lowest sequence waiting for verification goes first', () => {
  test('a later batch is OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier one awaits its (retried) verification', () => {
    const { log } = open();
    const batch = (seq: number) =>
      buildRecordBatch([{ key: null, value: `s${seq}`, timestamp: TS }], { baseOffset: 0n, producerId: 5n, producerEpoch: 0, baseSequence: seq, isTransactional: true, now: TS });
    // Sequence 0 starts a verification that fails (the client will retry it) ...
    log.maybeStartTransactionVerification(5n, 0, 0);
    // ... then sequence 1 verifies fine, but may not be written before 0.
    const g1 = log.maybeStartTransactionVerification(5n, 1, 0);
    expect(log.producerState.verificationStateEntry(5n)!.lowestSequence).toBe(0);
    expect(() => log.appendAsLeader(batch(1), { leaderEpoch: 0, verificationRequired: true, verificationGuard: g1 })).toThrow(
      expect.objectContaining({ code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER }),
    );
    const g0 = log.maybeStartTransactionVerification(5n, 0, 0);
    expect(log.appendAsLeader(batch(0), { leaderEpoch: 0, verificationRequired: true, verificationGuard: g0 }).firstOffset).toBe(0n);
    expect(log.appendAsLeader(batch(1), { leaderEpoch: 0, verificationRequired: true }).firstOffset).toBe(1n);
    log.close();
  });
});

describe('a damaged .txnindex is rebuilt from the log at load', () => {
  function build(): { dir: string; original: unknown[][] } {
    const { log, dir } = open();
    txnData(log, 1n); // 0..1
    txnData(log, 2n); // 2..3
    marker(log, 1n, ControlRecordType.ABORT); // 4
    marker(log, 2n, ControlRecordType.COMMIT); // 5
    log.updateHighWatermark(log.logEndOffset);
    log.roll();
    txnData(log, 1n); // 6..7
    txnData(log, 3n); // 8..9
    marker(log, 3n, ControlRecordType.ABORT); // 10
    marker(log, 1n, ControlRecordType.ABORT); // 11
    log.updateHighWatermark(log.logEndOffset);
    const original = log.logSegments().map((s) => s.txnIndex?.entries().map((e) => ({ ...e })) ?? []);
    log.close();
    return { dir, original };
  }
  const second = (dir: string) => path.join(dir, '00000000000000000006.txnindex');

  test.each([
    ['a bad entry version', (f: string) => { const b = nodefs.readFileSync(f); b.writeInt16BE(7, 34); nodefs.writeFileSync(f, b); }],
    ['a torn tail', (f: string) => nodefs.truncateSync(f, 34 + 17)],
    ['markers out of order', (f: string) => { const b = nodefs.readFileSync(f); nodefs.writeFileSync(f, Buffer.concat([b.subarray(34, 68), b.subarray(0, 34)])); }],
    ['a marker outside the segment', (f: string) => { const b = nodefs.readFileSync(f); b.writeBigInt64BE(99n, 18 + 34); nodefs.writeFileSync(f, b); }],
  ])('%s', (_label, damage) => {
    const { dir, original } = build();
    expect(original[1]).toHaveLength(2);
    damage(second(dir));
    const log = open(dir).log;
    expect(log.logSegments().map((s) => s.txnIndex?.entries() ?? [])).toEqual(original);
    expect(nodefs.statSync(second(dir)).size).toBe(68);
    log.updateHighWatermark(log.logEndOffset);
    const r = log.read(6n, 1 << 20, { isolation: 'TXN_COMMITTED' });
    expect(r.abortedTransactions?.map((t) => [t.producerId, t.firstOffset])).toEqual([
      [1n, 6n],
      [3n, 8n],
    ]);
    log.close();
  });
});

describe('read_committed: aborted transactions whose marker is in a later segment', () => {
  test('a read of the first segment lists the transaction aborted two segments later', () => {
    const { log } = open();
    txnData(log, 1n); // 0..1, the transaction aborted below
    log.roll();
    txnData(log, 2n); // 2..3
    log.roll();
    marker(log, 1n, ControlRecordType.ABORT); // 4, in the third segment
    marker(log, 2n, ControlRecordType.COMMIT); // 5
    log.updateHighWatermark(log.logEndOffset);
    expect(log.logSegments().map((s) => s.baseOffset)).toEqual([0n, 2n, 4n]);
    const r = log.read(0n, 1 << 20, { isolation: 'TXN_COMMITTED' });
    expect(decodeBatches(recordsBuffer(r)).map((b) => b.baseOffset)).toEqual([0n]); // one segment per read
    expect(r.abortedTransactions?.map((t) => [t.producerId, t.firstOffset, t.lastOffset])).toEqual([[1n, 0n, 4n]]);
    log.close();
  });
});
