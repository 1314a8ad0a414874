/**
 * KAFKA-3955 (../shared/seeds/004_eb3b255e382cc22f.txt): after an unclean shutdown, a segment whose
 * batches go backwards (offset 15000362 followed by 15000337) made Kafka's recovery throw from the
 * offset index and fail the broker's start, because only one of four recovery call sites could
 * truncate. krill has one truncating recovery routine: the same pattern written into a middle
 * segment of a log produced through the broker must be cut at the bad batch, every later segment
 * deleted, the records before it served exactly, and produces must continue from the cut.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  batchesOnDisk,
  copyDataDir,
  partitionDir,
  restartAndCheck,
  simulateCrash,
  writePristineLog,
  type BatchOnDisk,
  type PristineLog,
} from '../recovery/helpers';

let pristine: PristineLog;
let batches: BatchOnDisk[];
const dirs: string[] = [];

beforeAll(async () => {
  pristine = await writePristineLog(40);
  batches = batchesOnDisk(partitionDir(pristine.dataDir));
  expect(new Set(batches.map((b) => b.file)).size).toBeGreaterThan(3);
});

afterAll(() => {
  for (const d of [...dirs, pristine?.dataDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

function caseDir(): string {
  const d = copyDataDir(pristine);
  dirs.push(d);
  return d;
}

function inCopy(dataDir: string, file: string): string {
  return path.join(partitionDir(dataDir), path.basename(file));
}

function cutAt(k: number): number {
  return k >= batches.length ? pristine.records.length : Number(batches[k].baseOffset);
}

test("KAFKA-3955's non-monotonic pattern (an offset 25 below the previous last) in a middle segment", async () => {
  const files = [...new Set(batches.map((b) => b.file))];
  const middle = files[Math.floor(files.length / 2)];
  const inSeg = batches.map((b, i) => ({ b, i })).filter((x) => x.b.file === middle);
  expect(inSeg.length).toBeGreaterThan(2);
  // The last batch of the segment goes back 25 offsets (15000362 -> 15000337 in the report), or as
  // far as the segment allows (below its base offset would be a different rule).
  const { b: victim, i: k } = inSeg[inSeg.length - 1];
  const prevLast = batches[k - 1].lastOffset;
  const back = prevLast - inSeg[0].b.baseOffset < 25n ? prevLast - inSeg[0].b.baseOffset : 25n;
  const d = caseDir();
  simulateCrash(d);
  const f = inCopy(d, middle);
  const buf = fs.readFileSync(f);
  // The base offset lies outside the CRC: the batch still checks out, only its offsets go backwards.
  buf.writeBigInt64BE(prevLast - back, victim.position);
  fs.writeFileSync(f, buf);
  const { lines } = await restartAndCheck(d, pristine, cutAt(k), 'KAFKA-3955');
  expect(
    lines.some((l) => l.includes(`non-monotonic or duplicate offsets: batch base offset ${prevLast - back} is not above the previous batch's last offset ${prevLast}`)),
  ).toBe(true);
  const later = files.slice(files.indexOf(middle) + 1).map((x) => path.basename(x));
  for (const name of later) expect(fs.existsSync(path.join(partitionDir(d), name))).toBe(false);
});
