/**
 * Issue 5 / KAFKA-3955 / KAFKA-7866 through the broker: a real log written with Produce, its files
 * damaged on a copy, the broker restarted on it. For every kind of damage: the broker starts, the
 * records before the damage are served exactly (Fetch, ListOffsets), nothing after it, offsets stay
 * contiguous and strictly increasing, produces continue at the truncation point, and dump-log finds
 * nothing wrong with the recovered files (helpers.ts `restartAndCheck`).
 *
 * Damage to a .log is done on a "crashed" copy (no clean-shutdown marker, no recovery point: every
 * segment re-read), as Kafka too re-reads only what was not flushed. Damage to an index is done on
 * a cleanly shut down copy: indexes are trusted then, so the load-time check against the batch
 * headers is what must catch it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBroker } from '../../broker';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { connect, fetchAll, produce } from '../../client/network-client';
import { FaultyFs, type FaultSpec } from '../../storage/testing/faulty-fs';
import {
  batchesOnDisk,
  copyDataDir,
  createTopic,
  flipBit,
  mkTemp,
  partitionDir,
  prng,
  quietLogger,
  restartAndCheck,
  segmentFiles,
  simulateCrash,
  writePristineLog,
  type BatchOnDisk,
  type PristineLog,
} from './helpers';

let pristine: PristineLog;
let batches: BatchOnDisk[];
const dirs: string[] = [];

beforeAll(async () => {
  pristine = await writePristineLog(40);
  batches = batchesOnDisk(partitionDir(pristine.dataDir));
  expect(new Set(batches.map((b) => b.file)).size).toBeGreaterThan(3);
  expect(BigInt(pristine.records.length)).toBe(batches[batches.length - 1].lastOffset + 1n);
});

afterAll(() => {
  for (const d of [...dirs, pristine?.dataDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

function caseDir(): string {
  const d = copyDataDir(pristine);
  dirs.push(d);
  return d;
}

/** Same file, same name, in the copy. */
function inCopy(dataDir: string, file: string): string {
  return path.join(partitionDir(dataDir), path.basename(file));
}

/** Records that survive when the log is cut at the start of batch `k`. */
function cutAt(k: number): number {
  return k >= batches.length ? pristine.records.length : Number(batches[k].baseOffset);
}

/**
 * Where recovery must cut after a flipped bit at `pos` of `file`: at the batch holding it, except
 * in the leader epoch (outside the CRC), where the epoch rules decide: an epoch below -1 or below
 * an earlier one is invalid, so a raised epoch is caught at the next batch (its records are intact).
 */
function expectedAfterFlip(file: string, pos: number, flipped: Buffer): number {
  const k = batches.findIndex((b) => b.file === file && pos >= b.position && pos < b.position + b.size);
  const rel = pos - batches[k].position;
  if (rel < 12 || rel >= 16) return cutAt(k);
  const epochs = batches.map((b) => b.partitionLeaderEpoch);
  epochs[k] = flipped.readInt32BE(batches[k].position + 12);
  let max = -1;
  for (let i = 0; i < epochs.length; i++) {
    if (epochs[i] < -1 || (epochs[i] >= 0 && epochs[i] < max)) return cutAt(i);
    max = Math.max(max, epochs[i]);
  }
  return pristine.records.length;
}

test('single bit flips at random positions of the .log files (30 seeds)', async () => {
  const logs = segmentFiles(partitionDir(pristine.dataDir), '.log');
  const sizes = logs.map((f) => fs.statSync(f).size);
  const total = sizes.reduce((a, b) => a + b, 0);
  for (let seed = 1; seed <= 30; seed++) {
    const rnd = prng(seed);
    let at = Math.floor(rnd() * total);
    let i = 0;
    while (at >= sizes[i]) at -= sizes[i++];
    const bit = Math.floor(rnd() * 8);
    const d = caseDir();
    simulateCrash(d);
    const f = inCopy(d, logs[i]);
    flipBit(f, at * 8 + bit);
    const survivors = expectedAfterFlip(logs[i], at, fs.readFileSync(f));
    await restartAndCheck(d, pristine, survivors, `seed ${seed}: bit ${bit} of byte ${at} of ${path.basename(f)}`);
  }
});

for (const suffix of ['.index', '.timeindex']) {
  test(`single bit flips in ${suffix} files after a clean shutdown (15 seeds): found, rebuilt, nothing lost`, async () => {
    const files = segmentFiles(partitionDir(pristine.dataDir), suffix).filter((f) => fs.statSync(f).size > 0);
    for (let seed = 100; seed < 115; seed++) {
      const rnd = prng(seed);
      const file = files[Math.floor(rnd() * files.length)];
      const bit = Math.floor(rnd() * fs.statSync(file).size * 8);
      const d = caseDir();
      const f = inCopy(d, file);
      flipBit(f, bit);
      const { lines } = await restartAndCheck(d, pristine, pristine.records.length, `seed ${seed}: bit ${bit} of ${path.basename(f)}`);
      expect(lines.some((l) => /recovering segment \d+ and rebuilding its indexes/.test(l))).toBe(true);
      // Rebuilt as it was (the produce after the restart may have added entries to the active segment's).
      const orig = fs.readFileSync(file);
      expect(fs.readFileSync(f).subarray(0, orig.length).equals(orig)).toBe(true);
    }
  });
}

test('truncation at every byte of the last batch (a torn write)', async () => {
  const last = batches[batches.length - 1];
  expect(last.size).toBeLessThan(120);
  for (let cut = 1; cut < last.size; cut++) {
    const d = caseDir();
    simulateCrash(d);
    const f = inCopy(d, last.file);
    fs.truncateSync(f, last.position + cut);
    await restartAndCheck(d, pristine, pristine.records.length - 1, `last batch cut after ${cut} of ${last.size} bytes`);
  }
});

test('a zero-filled tail (preallocated, never written) is cut off', async () => {
  const d = caseDir();
  simulateCrash(d);
  fs.appendFileSync(inCopy(d, batches[batches.length - 1].file), Buffer.alloc(4096));
  const { lines } = await restartAndCheck(d, pristine, pristine.records.length, 'zero tail');
  expect(lines.some((l) => /recovery truncated the log at offset \d+: .*\(4096 bytes discarded\).*zero-filled tail/.test(l))).toBe(true);
});

test('a duplicated batch (KAFKA-7866): at the end, and in the middle of a segment', async () => {
  const last = batches[batches.length - 1];
  const d1 = caseDir();
  simulateCrash(d1);
  const f1 = inCopy(d1, last.file);
  fs.appendFileSync(f1, fs.readFileSync(f1).subarray(last.position, last.position + last.size));
  await restartAndCheck(d1, pristine, pristine.records.length, 'duplicate last batch');

  // A batch written twice in a row in a middle segment: cut after the first copy.
  const files = [...new Set(batches.map((b) => b.file))];
  const middle = files[Math.floor(files.length / 2)];
  const k = batches.findIndex((b) => b.file === middle) + 1;
  const b = batches[k];
  expect(b.file).toBe(middle);
  const d2 = caseDir();
  simulateCrash(d2);
  const f2 = inCopy(d2, middle);
  const buf = fs.readFileSync(f2);
  const copy = buf.subarray(b.position, b.position + b.size);
  fs.writeFileSync(f2, Buffer.concat([buf.subarray(0, b.position + b.size), copy, buf.subarray(b.position + b.size)]));
  const { lines } = await restartAndCheck(d2, pristine, Number(b.lastOffset) + 1, 'duplicate middle batch');
  expect(lines.some((l) => /non-monotonic or duplicate offsets/.test(l))).toBe(true);
});

test('corrupt checkpoint files fall back instead of failing: recovery point (full recovery), log start offset, high watermark', async () => {
  for (const file of ['recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint']) {
    const d = caseDir();
    if (file === 'recovery-point-offset-checkpoint') fs.rmSync(path.join(d, '.kafka_cleanshutdown'));
    fs.writeFileSync(path.join(d, file), '0\n3\nthis is not a checkpoint\n');
    const { lines } = await restartAndCheck(d, pristine, pristine.records.length, `corrupt ${file}`);
    expect(lines.some((l) => l.includes(file))).toBe(true);
  }
});

test('a partition whose files cannot be loaded is offline (KAFKA_STORAGE_ERROR); the broker starts and serves the rest', async () => {
  const d = caseDir();
  {
    const broker = await startBroker({ dataDir: d, logger: quietLogger() });
    const conn = await connect(broker.host, broker.port);
    await createTopic(conn, 'other', {});
    await produce(conn, 'other', 0, [{ value: 'x' }]);
    await conn.close();
    await broker.close();
  }
  fs.writeFileSync(path.join(partitionDir(d, 'other'), 'partition.metadata'), 'garbage\n');
  await restartAndCheck(d, pristine, pristine.records.length, 'other partition damaged');
  const broker = await startBroker({ dataDir: d, logger: quietLogger() });
  const conn = await connect(broker.host, broker.port);
  try {
    await expect(produce(conn, 'other', 0, [{ value: 'y' }])).rejects.toMatchObject({ code: ErrorCode.KAFKA_STORAGE_ERROR });
    await expect(fetchAll(conn, 'other', 0)).rejects.toBeInstanceOf(KafkaError);
  } finally {
    await conn.close();
    await broker.close();
  }
});

test('two log.dirs, one unreadable (EISDIR: tests run as root, where chmod 000 does not stop reads): it goes offline, the other serves', async () => {
  const a = mkTemp('krill-recovery-dir-a-');
  const b = mkTemp('krill-recovery-dir-b-');
  dirs.push(a, b);
  const overrides = [`log.dirs=${a},${b}`];
  const sent = new Map<number, string[]>();
  {
    const broker = await startBroker({ dataDir: a, overrides, logger: quietLogger() });
    const conn = await connect(broker.host, broker.port);
    await createTopic(conn, 'two', { 'segment.bytes': '2048' }, 2);
    for (let p = 0; p < 2; p++) {
      sent.set(p, []);
      for (let i = 0; i < 30; i++) {
        const v = `p${p}-${i}`.padEnd(60, '.');
        await produce(conn, 'two', p, [{ value: v }]);
        sent.get(p)!.push(v);
      }
    }
    await conn.close();
    await broker.close();
  }
  const inB = [0, 1].find((p) => fs.existsSync(path.join(b, `two-${p}`)));
  expect(inB).toBeDefined();
  const inA = 1 - inB!;
  expect(fs.existsSync(path.join(a, `two-${inA}`))).toBe(true);
  const idx = segmentFiles(path.join(b, `two-${inB}`), '.index')[0];
  fs.rmSync(idx);
  fs.mkdirSync(idx);
  const lines: string[] = [];
  const broker = await startBroker({ dataDir: a, overrides, logger: quietLogger(lines) });
  const conn = await connect(broker.host, broker.port);
  try {
    expect(broker.server.logManager.offlineLogDirs).toEqual([path.resolve(b)]);
    expect(lines.some((l) => l.includes(`log directory ${path.resolve(b)} is offline`))).toBe(true);
    const got = await fetchAll(conn, 'two', inA);
    expect(got.records.map((r) => r.value!.toString())).toEqual(sent.get(inA));
    expect((await produce(conn, 'two', inA, [{ value: 'more' }]))!.baseOffset).toBe(30n);
    await expect(produce(conn, 'two', inB!, [{ value: 'y' }])).rejects.toMatchObject({ code: ErrorCode.KAFKA_STORAGE_ERROR });
    // A new topic goes to the directory that still works.
    await createTopic(conn, 'fresh', {});
    expect((await produce(conn, 'fresh', 0, [{ value: 'z' }]))!.baseOffset).toBe(0n);
    expect(fs.existsSync(path.join(a, 'fresh-0'))).toBe(true);
  } finally {
    await conn.close();
    await broker.close();
  }
});

test('two log.dirs with the fault-injecting fs: EACCES listing, EIO reading a segment, EIO loading an index in the second: it goes offline, the first serves', async () => {
  const faults: { label: string; crash: boolean; spec: (b: string) => FaultSpec }[] = [
    { label: 'EACCES on readdir', crash: false, spec: (b) => ({ op: 'readdir', path: b, errno: 'EACCES' }) },
    { label: 'EIO reading a segment during recovery', crash: true, spec: (b) => ({ op: 'read', path: `${b}/`, errno: 'EIO' }) },
    { label: 'EIO loading an index', crash: false, spec: (b) => ({ op: 'readFile', path: `${b}/`, errno: 'EIO' }) },
  ];
  for (const f of faults) {
    const a = mkTemp('krill-recovery-fa-');
    const b = mkTemp('krill-recovery-fb-');
    dirs.push(a, b);
    const overrides = [`log.dirs=${a},${b}`];
    const sent: string[] = [];
    {
      const broker = await startBroker({ dataDir: a, overrides, logger: quietLogger() });
      const conn = await connect(broker.host, broker.port);
      await createTopic(conn, 'ft', { 'segment.bytes': '2048' }, 2);
      for (let i = 0; i < 40; i++) {
        const v = `v${i}`.padEnd(80, '.');
        for (let p = 0; p < 2; p++) await produce(conn, 'ft', p, [{ value: v }]);
        sent.push(v);
      }
      await conn.close();
      await broker.close();
    }
    const inB = [0, 1].find((p) => fs.existsSync(path.join(b, `ft-${p}`)))!;
    const inA = 1 - inB;
    if (f.crash) simulateCrash(b);
    const storageFs = new FaultyFs().failNext({ ...f.spec(b), count: 1000 });
    const lines: string[] = [];
    const broker = await startBroker({ dataDir: a, overrides, logger: quietLogger(lines), storageFs });
    const conn = await connect(broker.host, broker.port);
    try {
      expect({ fault: f.label, offline: broker.server.logManager.offlineLogDirs }).toEqual({ fault: f.label, offline: [path.resolve(b)] });
      expect(storageFs.injected.length).toBeGreaterThan(0);
      expect(lines.some((l) => l.includes(`log directory ${path.resolve(b)} is offline`) && l.includes(f.spec(b).errno!))).toBe(true);
      expect((await fetchAll(conn, 'ft', inA)).records.map((r) => r.value!.toString())).toEqual(sent);
      expect((await produce(conn, 'ft', inA, [{ value: 'more' }]))!.baseOffset).toBe(40n);
      await expect(produce(conn, 'ft', inB, [{ value: 'y' }])).rejects.toMatchObject({ code: ErrorCode.KAFKA_STORAGE_ERROR });
    } finally {
      await conn.close();
      await broker.close();
    }
  }
});
