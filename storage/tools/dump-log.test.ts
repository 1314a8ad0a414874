import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { CompressionType, TimestampType } from '../../protocol/records/record-batch';
import { logConfig } from '../log-config';
import { logFile, offsetIndexFile, timeIndexFile, transactionIndexFile } from '../log-file-utils';
import { batchAt } from '../testing/batches';
import { MockScheduler, MockTime } from '../testing/mock-time';
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
  // Rolls write producer state snapshots (dumped as 'not supported yet').
  expect(lines.filter((l) => l.startsWith('Dumping ')).length).toBe(files(dir, '.log').length * 3 + files(dir, '.snapshot').length);
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

test('.txnindex and .snapshot are not supported yet; unknown files are ignored', () => {
  const { dir } = writeLog();
  nodefs.writeFileSync(transactionIndexFile(dir, 0n), Buffer.alloc(34));
  nodefs.writeFileSync(path.join(dir, '00000000000000000000.snapshot'), Buffer.alloc(10));
  nodefs.writeFileSync(path.join(dir, 'partition.metadata'), 'version: 0\n');
  const { lines, problems } = run([transactionIndexFile(dir, 0n), path.join(dir, '00000000000000000000.snapshot'), path.join(dir, 'partition.metadata')]);
  expect(problems).toEqual([]);
  expect(lines.filter((l) => /not supported yet/.test(l)).length).toBe(2);
  expect(lines).toContain(`Ignoring unknown file ${path.join(dir, 'partition.metadata')}`);
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
