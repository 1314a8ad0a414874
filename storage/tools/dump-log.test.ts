import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { crc32c } from '../../protocol/records/crc32c';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { CompressionType, TimestampType } from '../../protocol/records/record-batch';
import { logConfig } from '../log-config';
import { logFile, offsetIndexFile, timeIndexFile, transactionIndexFile } from '../log-file-utils';
import { batchAt } from '../testing/batches';
import { MockScheduler, MockTime } from '../../common/testing/mock-time';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { UnifiedLog } from '../unified-log';
import { dumpLog, dumpLogMain, DumpLogOptions } from './dump-log';

afterAll(removeTempDirs);

const TP = { topic: 'dump', partition: 0 };
const T0 = 1_700_000_000_000;

/** A log with several segments: plain, compressed, keyed records with headers, LogAppendTime, a commit marker. */
function writeLog(): { dir: string; leo: bigint } {
  const dir = path.join(tempDir(), 'dump-0');
  const time = new MockTime(T0 + 10_000);
  const log = UnifiedLog.load({
    dir,
    tp: TP,
    config: logConfig({ segmentBytes: 700, indexIntervalBytes: 100 }),
    time,
    scheduler: new MockScheduler(time),
  });
  for (let i = 0; i < 12; i++) {
    const records = Array.from({ length: 3 }, (_, j) => ({
      key: `k${i}-${j}`,
      value: `value ${i}-${j}`,
      headers: j === 0 ? [{ key: 'h1', value: 'x' }, { key: 'h2', value: null }] : [],
      timestamp: T0 + i * 10 + j,
    }));
    const compression = i % 3 === 1 ? CompressionType.GZIP : CompressionType.NONE;
    log.appendAsLeader(buildRecordBatch(records, { compression, producerId: 7n, producerEpoch: 1, baseSequence: i * 3 }), { leaderEpoch: 2 });
  }
  const marker = buildEndTxnMarkerBatch({ type: ControlRecordType.COMMIT, producerId: 7n, producerEpoch: 1, coordinatorEpoch: 5, timestamp: T0 + 200 });
  log.appendAsLeader(marker, { leaderEpoch: 2, origin: 'coordinator' });
  log.appendAsLeader(buildRecordBatch([{ value: 'late' }], { timestampType: TimestampType.LOG_APPEND_TIME, logAppendTime: T0 + 300 }), {
    leaderEpoch: 3,
    origin: 'coordinator',
  });
  const leo = log.logEndOffset;
  log.close();
  return { dir, leo };
}

function run(paths: string[], opts: DumpLogOptions = {}): { lines: string[]; problems: string[] } {
  const lines: string[] = [];
  const r = dumpLog(paths, opts, (l) => lines.push(l));
  return { lines, problems: r.problems };
}

function files(dir: string, suffix: string): string[] {
  return nodefs
    .readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => path.join(dir, f));
}

test('a healthy log: batch lines in kafka-dump-log format, records, control records, indexes; no problems', () => {
  const { dir, leo } = writeLog();
  const { lines, problems } = run([dir], { deepIteration: true });
  expect(problems).toEqual([]);
  const batchLines = lines.filter((l) => l.startsWith('baseOffset: '));
  expect(batchLines[0]).toMatch(
    /^baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 7 producerEpoch: 1 partitionLeaderEpoch: 2 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000002 size: \d+ magic: 2 compresscodec: none crc: \d+ isvalid: true$/,
  );
  expect(batchLines.some((l) => / compresscodec: gzip /.test(l))).toBe(true);
  expect(batchLines.some((l) => /isTransactional: true isControl: true .* CreateTime: 1700000000200 /.test(l))).toBe(true);
  expect(batchLines.some((l) => /partitionLeaderEpoch: 3 .* LogAppendTime: 1700000000300 /.test(l))).toBe(true);
  const recordLines = lines.filter((l) => l.startsWith('| offset: '));
  expect(recordLines.length).toBe(Number(leo));
  expect(recordLines[0]).toBe('| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 9 sequence: 0 headerKeys: [h1,h2]');
  expect(recordLines.some((l) => /endTxnMarker: COMMIT coordinatorEpoch: 5$/.test(l))).toBe(true);
  // Rolls and close() write producer state snapshots: one line for the one producer each.
  expect(lines.filter((l) => l.startsWith('Dumping ')).length).toBe(files(dir, '.log').length * 3 + files(dir, '.snapshot').length);
  expect(lines.filter((l) => l.startsWith('producerId: 7 producerEpoch: 1 ')).length).toBe(files(dir, '.snapshot').length);
  expect(lines.some((l) => /^offset: \d+ position: \d+$/.test(l))).toBe(true);
  expect(lines.some((l) => /^timestamp: \d+ offset: \d+$/.test(l))).toBe(true);
  expect(lines.filter((l) => l.startsWith('Log starting offset: ')).length).toBeGreaterThan(2);
});

test('--print-data-log prints keys and payloads (and iterates deeply)', () => {
  const { dir } = writeLog();
  const { lines } = run([files(dir, '.log')[0]], { printDataLog: true });
  expect(lines).toContain('| offset: 0 CreateTime: 1700000000000 keySize: 4 valueSize: 9 sequence: 0 headerKeys: [h1,h2] key: k0-0 payload: value 0-0');
});

test('--index-sanity-check prints the verdict only; --verify-index-only prints nothing for healthy indexes', () => {
  const { dir } = writeLog();
  const idx = [...files(dir, '.index'), ...files(dir, '.timeindex')];
  const sanity = run(idx, { indexSanityCheck: true });
  expect(sanity.problems).toEqual([]);
  expect(sanity.lines.filter((l) => l.endsWith('passed sanity check.')).length).toBe(idx.length);
  const verify = run(idx, { verifyIndexOnly: true });
  expect(verify.lines.filter((l) => !l.startsWith('Dumping ') && !/is empty\.$/.test(l))).toEqual([]);
});

test('a flipped CRC bit: isvalid false, reported, the walk goes on', () => {
  const { dir } = writeLog();
  const f = files(dir, '.log')[0];
  const b = nodefs.readFileSync(f);
  b[70] ^= 0x10;
  nodefs.writeFileSync(f, b);
  const { lines, problems } = run([f]);
  expect(lines.filter((l) => l.startsWith('baseOffset: ')).some((l) => l.endsWith('isvalid: false'))).toBe(true);
  expect(problems.length).toBe(1);
  expect(problems[0]).toMatch(/CRC mismatch/);
  expect(lines.filter((l) => l.startsWith('baseOffset: ')).length).toBeGreaterThan(1);
});

test('KAFKA-3955 pattern: non-monotonic offsets reported as Kafka does (Non-consecutive offsets)', () => {
  const dir = path.join(tempDir(), 'k-0');
  nodefs.mkdirSync(dir);
  const base = 15_000_300n;
  nodefs.writeFileSync(logFile(dir, base), Buffer.concat([batchAt(base, 63), batchAt(15_000_363n - 26n, 10), batchAt(15_000_347n, 5)]));
  const { lines, problems } = run([dir]);
  expect(lines).toContain('  15000362 is followed by 15000337');
  expect(problems.some((p) => /non-monotonic or duplicate offsets: batch base offset 15000337 is not above the previous batch's last offset 15000362/.test(p))).toBe(true);
});

test('torn and zero-filled tails: "Found N invalid bytes at the end"', () => {
  const { dir } = writeLog();
  const f = files(dir, '.log')[1];
  nodefs.appendFileSync(f, Buffer.alloc(100));
  expect(run([f]).lines).toContain(`Found 100 invalid bytes at the end of ${path.basename(f)} (zero-filled tail)`);
  const b = nodefs.readFileSync(f);
  nodefs.writeFileSync(f, b.subarray(0, b.length - 110));
  const r = run([f]);
  if (!r.lines.some((l) => /torn write/.test(l))) throw new Error(r.lines.join('\n'));
  expect(r.lines.some((l) => /^Found \d+ invalid bytes at the end of .* \(a batch of \d+ bytes runs past the end of the file \(torn write\)\)$/.test(l))).toBe(true);
  expect(r.problems.length).toBe(1);
});

test('an offset gap is a problem unless --allow-offset-gaps; a gap across two segments too', () => {
  const dir = path.join(tempDir(), 'g-0');
  nodefs.mkdirSync(dir);
  nodefs.writeFileSync(logFile(dir, 0n), Buffer.concat([batchAt(0n, 5), batchAt(7n, 3)]));
  nodefs.writeFileSync(logFile(dir, 10n), batchAt(12n, 3));
  expect(run([dir]).problems.length).toBe(2);
  expect(run([dir], { allowOffsetGaps: true }).problems).toEqual([]);
});

test('index entries that disagree with the log fail the sanity check, as loading would rebuild them', () => {
  const { dir } = writeLog();
  const idx = files(dir, '.index').find((f) => nodefs.statSync(f).size >= 16) as string;
  const b = nodefs.readFileSync(idx);
  b.writeInt32BE(b.readInt32BE(4) + 1, 4); // position one byte off: not a batch start
  nodefs.writeFileSync(idx, b);
  const r = run([idx], { indexSanityCheck: true });
  expect(r.lines.some((l) => /failed sanity check: offset index entry 0 .* does not point at the start of a batch/.test(l))).toBe(true);
  const t = files(dir, '.timeindex').find((f) => nodefs.statSync(f).size >= 24) as string;
  const tb = nodefs.readFileSync(t);
  tb.writeBigInt64BE(tb.readBigInt64BE(0) - 1n, 0);
  nodefs.writeFileSync(t, tb);
  expect(run([t], { indexSanityCheck: true }).problems[0]).toMatch(/time index entry 0 .* does not match the batch ending there/);
  nodefs.writeFileSync(t, tb.subarray(0, tb.length - 12));
  expect(run([t], { verifyIndexOnly: true, closedLog: true }).problems.some((p) => /does not end with the segment's largest timestamp/.test(p))).toBe(true);
});

test("the newest segment's missing final time-index entry is only a problem with --closed (a live broker writes it at roll or stop)", () => {
  const { dir } = writeLog();
  const t = files(dir, '.timeindex').pop() as string;
  const tb = nodefs.readFileSync(t);
  expect(tb.length).toBeGreaterThanOrEqual(12);
  nodefs.writeFileSync(t, tb.subarray(0, tb.length - 12));
  const live = run([t], { indexSanityCheck: true });
  expect(live.problems).toEqual([]);
  expect(live.lines.some((l) => /newest segment: its largest timestamp is not in the time index yet/.test(l))).toBe(true);
  expect(run([t], { indexSanityCheck: true, closedLog: true }).problems.length).toBe(1);
});

test('unknown files are ignored', () => {
  const { dir } = writeLog();
  nodefs.writeFileSync(path.join(dir, 'partition.metadata'), 'version: 0\n');
  const { lines, problems } = run([path.join(dir, 'partition.metadata')]);
  expect(problems).toEqual([]);
  expect(lines).toEqual([`Ignoring unknown file ${path.join(dir, 'partition.metadata')}`]);
});

describe('.txnindex and .snapshot', () => {
  const TXN_TP = { topic: 'dumptxn', partition: 0 };

  /**
   * Two segments written by krill's log:
   *   segment 0: 0..1 p1 txn, 2..3 p2 txn, 4..5 p1 txn, 6 ABORT p1 (LSO 2: p2 still open),
   *              7 COMMIT p2, 8..9 p3 txn, 10 ABORT p3 (LSO 11)
   *   roll (00000000000000000011.snapshot)
   *   segment 11: 11 ABORT p4 (a transaction without data here), 12..13 p5 txn, left open
   *   close() (00000000000000000014.snapshot)
   */
  function writeTxnLog(): string {
    const dir = path.join(tempDir(), 'dumptxn-0');
    const time = new MockTime(T0 + 10_000);
    const log = UnifiedLog.load({ dir, tp: TXN_TP, config: logConfig({}), time, scheduler: new MockScheduler(time) });
    const seqs = new Map<bigint, number>();
    const data = (pid: bigint, ts: number): void => {
      const seq = seqs.get(pid) ?? 0;
      seqs.set(pid, seq + 2);
      const recs = [0, 1].map((j) => ({ key: null, value: `p${pid}-${seq + j}`, timestamp: ts + j }));
      log.appendAsLeader(buildRecordBatch(recs, { producerId: pid, producerEpoch: 3, baseSequence: seq, isTransactional: true }), { leaderEpoch: 0 });
    };
    const marker = (pid: bigint, type: ControlRecordType.ABORT | ControlRecordType.COMMIT, ts: number): void => {
      const b = buildEndTxnMarkerBatch({ type, producerId: pid, producerEpoch: 3, coordinatorEpoch: 9, timestamp: ts });
      log.appendAsLeader(b, { leaderEpoch: 0, origin: 'coordinator' });
    };
    data(1n, T0);
    data(2n, T0 + 10);
    data(1n, T0 + 20);
    marker(1n, ControlRecordType.ABORT, T0 + 30);
    marker(2n, ControlRecordType.COMMIT, T0 + 40);
    data(3n, T0 + 50);
    marker(3n, ControlRecordType.ABORT, T0 + 60);
    log.roll();
    marker(4n, ControlRecordType.ABORT, T0 + 70);
    data(5n, T0 + 80);
    expect(log.logEndOffset).toBe(14n);
    log.close();
    return dir;
  }

  const SEG0_ENTRIES = [
    'version: 0 producerId: 1 firstOffset: 0 lastOffset: 6 lastStableOffset: 2',
    'version: 0 producerId: 3 firstOffset: 8 lastOffset: 10 lastStableOffset: 11',
  ];
  const snapshotFile = (dir: string, offset: bigint): string => path.join(dir, `${offset.toString().padStart(20, '0')}.snapshot`);

  test('a healthy partition directory: one line per aborted transaction and per producer, in Kafka\'s format; no problems', () => {
    const dir = writeTxnLog();
    const { lines, problems } = run([dir]);
    expect(problems).toEqual([]);
    const dumped = lines.filter((l) => l.startsWith('Dumping ')).map((l) => path.basename(l.slice('Dumping '.length)));
    expect(dumped).toEqual([
      '00000000000000000000.log',
      '00000000000000000000.index',
      '00000000000000000000.timeindex',
      '00000000000000000000.txnindex',
      '00000000000000000011.log',
      '00000000000000000011.index',
      '00000000000000000011.timeindex',
      '00000000000000000011.txnindex',
      '00000000000000000011.snapshot',
      '00000000000000000014.snapshot',
    ]);
    const after = (name: string): string[] => {
      const i = lines.findIndex((l) => l === `Dumping ${path.join(dir, name)}`);
      const rest = lines.slice(i + 1);
      const end = rest.findIndex((l) => l.startsWith('Dumping '));
      return end < 0 ? rest : rest.slice(0, end);
    };
    expect(after('00000000000000000000.txnindex')).toEqual(SEG0_ENTRIES);
    expect(after('00000000000000000011.txnindex')).toEqual(['version: 0 producerId: 4 firstOffset: 11 lastOffset: 11 lastStableOffset: 12']);
    // At the roll: p1 and p3 aborted, p2 committed (coordinatorEpoch 9 from their markers). The
    // format has one timestamp per producer (the marker's here), read as both lastTimestamp and the
    // batch's timestamp, as Kafka reads it.
    expect(after('00000000000000000011.snapshot')).toEqual([
      `producerId: 1 producerEpoch: 3 coordinatorEpoch: 9 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0 + 30} firstSequence: 2 lastSequence: 3 lastOffset: 5 offsetDelta: 1 timestamp: ${T0 + 30}`,
      `producerId: 2 producerEpoch: 3 coordinatorEpoch: 9 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0 + 40} firstSequence: 0 lastSequence: 1 lastOffset: 3 offsetDelta: 1 timestamp: ${T0 + 40}`,
      `producerId: 3 producerEpoch: 3 coordinatorEpoch: 9 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0 + 60} firstSequence: 0 lastSequence: 1 lastOffset: 9 offsetDelta: 1 timestamp: ${T0 + 60}`,
    ]);
    // At close: p4 (a marker only: no batch, so no batch fields, as Kafka prints it) and p5's open transaction.
    const last = after('00000000000000000014.snapshot');
    expect(last).toHaveLength(5);
    expect(last).toContain(`producerId: 4 producerEpoch: 3 coordinatorEpoch: 9 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: ${T0 + 70}`);
    expect(last).toContain(
      `producerId: 5 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[12] lastTimestamp: ${T0 + 81} firstSequence: 0 lastSequence: 1 lastOffset: 13 offsetDelta: 1 timestamp: ${T0 + 81}`,
    );
    // The index options apply to .txnindex files too.
    const txn = transactionIndexFile(dir, 0n);
    expect(run([txn], { indexSanityCheck: true }).lines).toEqual([`Dumping ${txn}`, `${txn} passed sanity check.`]);
    expect(run([txn], { verifyIndexOnly: true }).lines).toEqual([`Dumping ${txn}`]);
  });

  test('.txnindex: a torn tail is reported, the whole entries are still printed', () => {
    const dir = writeTxnLog();
    const txn = transactionIndexFile(dir, 0n);
    nodefs.appendFileSync(txn, Buffer.alloc(10, 1));
    const { lines, problems } = run([txn]);
    expect(lines.slice(1, 3)).toEqual(SEG0_ENTRIES);
    expect(problems).toEqual([`${txn}: 10 bytes at position 68 are not a whole 34-byte entry (torn write)`]);
    expect(run([txn], { indexSanityCheck: true }).lines).toContain(`${txn} failed sanity check: 10 bytes at position 68 are not a whole 34-byte entry (torn write)`);
  });

  test('.txnindex: a lastOffset that is not the ABORT marker of its producer, and the marker left without an entry', () => {
    const dir = writeTxnLog();
    const txn = transactionIndexFile(dir, 0n);
    const good = nodefs.readFileSync(txn);
    const withEntry0 = (edit: (b: Buffer) => void): string[] => {
      const b = Buffer.from(good);
      edit(b);
      nodefs.writeFileSync(txn, b);
      return run([txn]).problems.map((p) => p.slice(txn.length + 2));
    };
    const markerLost = 'the ABORT marker of producerId 1 at offset 6 in 00000000000000000000.log has no entry (a read_committed consumer would not skip that transaction\'s records)';
    // lastOffset 5: inside p1's data batch 4..5.
    expect(withEntry0((b) => b.writeBigInt64BE(5n, 18))).toEqual([
      'entry 0 (producerId 1, lastOffset 5): offset 5 in 00000000000000000000.log is in a data batch (offsets 4..5, producerId 1, transactional), not an ABORT marker',
      markerLost,
    ]);
    // lastOffset 7: p2's COMMIT marker.
    expect(withEntry0((b) => b.writeBigInt64BE(7n, 18))).toEqual([
      'entry 0 (producerId 1, lastOffset 7): offset 7 in 00000000000000000000.log is a COMMIT marker (offsets 7..7, producerId 2, transactional, control), not an ABORT marker',
      markerLost,
    ]);
    // lastOffset 10 is p3's ABORT marker (and out of order: the next entry has it too).
    expect(withEntry0((b) => b.writeBigInt64BE(10n, 18))).toEqual([
      'entry 1 (producerId 3, lastOffset 10): not after the previous entry\'s lastOffset 10 (entries are in marker order)',
      'entry 0 (producerId 1, lastOffset 10): offset 10 in 00000000000000000000.log is the ABORT marker of producerId 3',
      markerLost,
    ]);
    // Past the end of the segment.
    expect(withEntry0((b) => b.writeBigInt64BE(40n, 18))[1]).toBe(
      'entry 0 (producerId 1, lastOffset 40): no batch in 00000000000000000000.log holds offset 40 (lastOffset must be the offset of the transaction\'s ABORT marker)',
    );
    // A wrong producer; a wrong version; firstOffset after lastOffset; firstOffset not a batch start.
    expect(withEntry0((b) => b.writeBigInt64BE(2n, 2))[0]).toBe('entry 0 (producerId 2, lastOffset 6): offset 6 in 00000000000000000000.log is the ABORT marker of producerId 1');
    expect(withEntry0((b) => b.writeInt16BE(1, 0))).toEqual(['entry 0 (producerId 1, lastOffset 6): version 1 (the only version is 0)']);
    expect(withEntry0((b) => b.writeBigInt64BE(7n, 10))).toEqual(['entry 0 (producerId 1, lastOffset 6): firstOffset 7 is above lastOffset']);
    expect(withEntry0((b) => b.writeBigInt64BE(2n, 10))).toEqual([
      'entry 0 (producerId 1, lastOffset 6): firstOffset 2 is not the start of a transactional batch of producerId 1 in 00000000000000000000.log (offsets 2..3, producerId 2, transactional)',
    ]);
    expect(withEntry0((b) => b.writeBigInt64BE(8n, 26))).toEqual(['entry 0 (producerId 1, lastOffset 6): lastStableOffset 8 is above lastOffset + 1']);
    // An empty .txnindex: both markers lost.
    nodefs.writeFileSync(txn, Buffer.alloc(0));
    expect(run([txn]).problems).toHaveLength(2);
    // Compacted topics (--allow-offset-gaps): a marker without entry is only noted.
    const compacted = run([txn], { allowOffsetGaps: true });
    expect(compacted.problems).toEqual([]);
    expect(compacted.lines.filter((l) => /has no entry: allowed with --allow-offset-gaps/.test(l))).toHaveLength(2);
  });

  test('.log: ABORT markers without a .txnindex are a problem (KAFKA-7866: the index could not be created)', () => {
    const dir = writeTxnLog();
    nodefs.unlinkSync(transactionIndexFile(dir, 11n));
    const seg = logFile(dir, 11n);
    expect(run([seg]).problems).toEqual([
      `${seg}: 1 ABORT marker(s) (the first of producerId 4 at offset 11) but no 00000000000000000011.txnindex (a read_committed consumer would not skip the aborted transactions' records)`,
    ]);
    expect(run([seg], { allowOffsetGaps: true }).problems).toEqual([]);
  });

  test('.snapshot: a flipped CRC byte, an unsupported version, an undecodable body are problems (exit status 1)', () => {
    const dir = writeTxnLog();
    const snap = snapshotFile(dir, 11n);
    const good = nodefs.readFileSync(snap);
    const b = Buffer.from(good);
    b[3] ^= 0x01; // in the stored CRC
    nodefs.writeFileSync(snap, b);
    const stored = b.readUInt32BE(2);
    const computed = good.readUInt32BE(2);
    const flipped = run([snap]);
    expect(flipped.lines).toEqual([`Dumping ${snap}`, `Problems in ${snap}:`, `  cannot be loaded: producer snapshot CRC mismatch (stored ${stored}, computed ${computed})`]);
    const err: string[] = [];
    expect(dumpLogMain([snap], () => undefined, (s) => err.push(s))).toBe(1);
    expect(err.join('')).toMatch(/1 problem\(s\) found in 1 file\(s\)/);
    // A byte of an entry flipped: the same verdict.
    const e = Buffer.from(good);
    e[e.length - 1] ^= 0x80;
    nodefs.writeFileSync(snap, e);
    expect(run([snap]).problems[0]).toMatch(/cannot be loaded: producer snapshot CRC mismatch/);
    const v = Buffer.from(good);
    v.writeInt16BE(2, 0);
    nodefs.writeFileSync(snap, v);
    expect(run([snap]).problems).toEqual([`${snap}: cannot be loaded: producer snapshot version 2 is not supported`]);
    // An entry count past the end, with a CRC that matches: undecodable.
    const u = Buffer.from(good);
    u.writeInt32BE(1000, 6);
    u.writeUInt32BE(crc32c(u.subarray(6)) >>> 0, 2);
    nodefs.writeFileSync(snap, u);
    expect(run([snap]).problems).toEqual([`${snap}: cannot be loaded: array length 1000 exceeds the 138 bytes left`]);
  });

  test('.snapshot: bytes after the entries, an entry past the snapshot\'s offset, a producer listed twice, a negative offsetDelta', () => {
    const dir = writeTxnLog();
    const snap = snapshotFile(dir, 11n);
    const good = nodefs.readFileSync(snap);
    const withCrc = (b: Buffer): Buffer => {
      b.writeUInt32BE(crc32c(b.subarray(6)) >>> 0, 2);
      return b;
    };
    nodefs.writeFileSync(snap, withCrc(Buffer.concat([good, Buffer.alloc(3)])));
    expect(run([snap]).problems).toEqual([`${snap}: 3 bytes after the last entry (at position ${good.length})`]);
    // The snapshot at 11 moved to 9: p3's batch 8..9 is not before it.
    nodefs.renameSync(snap, snapshotFile(dir, 9n));
    nodefs.writeFileSync(snapshotFile(dir, 9n), good);
    expect(run([snapshotFile(dir, 9n)]).problems).toEqual([
      `${snapshotFile(dir, 9n)}: producerId 3: lastOffset 9 is not below the snapshot's offset 9 (a snapshot holds the state of the log before its offset)`,
    ]);
    // Entry 1 (46 bytes from position 10) copied over entry 2: p2 twice.
    const twice = Buffer.from(good);
    good.copy(twice, 10 + 2 * 46, 10 + 46, 10 + 2 * 46);
    nodefs.writeFileSync(snap, withCrc(twice));
    expect(run([snap]).problems).toEqual([`${snap}: producerId 2 has more than one entry`]);
    // Entry 0's offsetDelta (22 bytes into the entry) negative.
    const negative = Buffer.from(good);
    negative.writeInt32BE(-3, 10 + 22);
    nodefs.writeFileSync(snap, withCrc(negative));
    const neg = run([snap]);
    expect(neg.lines[1]).toMatch(/^producerId: 1 .* lastOffset: 5 offsetDelta: -3 /);
    expect(neg.problems).toEqual([`${snap}: producerId 1: offsetDelta -3 is negative (the batch would end before it starts)`]);
  });
});

test('dumpLogMain: exit status, usage errors, --files', () => {
  const { dir } = writeLog();
  const out: string[] = [];
  const err: string[] = [];
  const io = [(s: string) => out.push(s), (s: string) => err.push(s)] as const;
  expect(dumpLogMain(['--files', `${logFile(dir, 0n)},${offsetIndexFile(dir, 0n)},${timeIndexFile(dir, 0n)}`, '--deep-iteration'], ...io)).toBe(0);
  expect(out.join('')).toMatch(/^Dumping .*00000000000000000000\.log\nLog starting offset: 0\nbaseOffset: 0 /);
  expect(dumpLogMain(['--bogus'], ...io)).toBe(2);
  expect(dumpLogMain([], ...io)).toBe(2);
  const f = logFile(dir, 0n);
  const b = nodefs.readFileSync(f);
  b[b.length - 1] ^= 1;
  nodefs.writeFileSync(f, b);
  err.length = 0;
  expect(dumpLogMain([f], ...io)).toBe(1);
  expect(err.join('')).toMatch(/1 problem\(s\) found in 1 file\(s\)/);
});
