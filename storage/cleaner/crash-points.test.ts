/**
 * Crash safety of a cleaning pass, step by step: the pass runs on a FaultyFs that freezes the
 * disk after N disk-changing calls (a file created, written, truncated, renamed, unlinked, an
 * fsync, a utimes), so the files are exactly what a SIGKILL at that moment leaves, whatever the
 * pass does after the fault. N walks over every step of the pass (offset map, each group's
 * `.cleaned` segment, its flush, the `.cleaned` -> `.swap` renames, the segment list swap, the
 * `.deleted` renames, the `.swap` suffix removal, each fsync). After each crash the directory is
 * loaded again as after an unclean shutdown (log-loader.ts: `.cleaned` files deleted, complete
 * `.swap` sets renamed into place over the segments they replace) and must hold: no `.cleaned` or
 * `.swap` file; the same log end offset; every key's latest value at its original offset
 * (nothing lost, nothing resurrected); offsets strictly increasing; the producer's state (its last
 * sequence); dump-log's checks passing with gaps allowed; and a pass run on the reloaded log ends
 * where an uninterrupted pass ends.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { ControlRecordType } from '../../protocol/records/control-record';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { FaultyFs } from '../testing/faulty-fs';
import { idempotentAppender, makeCleaner, makeLog, marker, record, recordsInLog, tombstone, transactionalAppender, TEST_TP } from '../testing/compacted-logs';
import { dumpLog } from '../tools/dump-log';
import type { UnifiedLog } from '../unified-log';
import { LogToClean } from './log-cleaner-manager';

afterAll(removeTempDirs);

const CONFIG = { segmentBytes: 1024, fileDeleteDelayMs: 60_000 };

/** The same log every time: keyed updates over many small segments, tombstones, an aborted and a committed transaction, an idempotent producer. */
function build(dir: string, fs?: FaultyFs): UnifiedLog {
  const { log } = makeLog(CONFIG, { dir, fs });
  for (let r = 0; r < 4; r++) for (let k = 0; k < 14; k++) log.appendAsLeader(record(`k${k}`, `v${r}-${k}`), { leaderEpoch: 0 });
  const aborted = transactionalAppender(log, 7n);
  aborted([100, 101, 102]);
  marker(log, ControlRecordType.ABORT, 7n);
  const committed = transactionalAppender(log, 8n);
  committed([3, 4]);
  marker(log, ControlRecordType.COMMIT, 8n);
  for (const k of [5, 6, 7]) log.appendAsLeader(tombstone(`k${k}`), { leaderEpoch: 0 });
  const idem = idempotentAppender(log, 9n);
  idem([8, 9]);
  for (let k = 10; k < 14; k++) log.appendAsLeader(record(`k${k}`, `last-${k}`), { leaderEpoch: 0 });
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

/** Latest value per key (records of the aborted transaction, keys 100..102, excluded) with its offset. */
function latest(log: UnifiedLog): Map<string, string> {
  const m = new Map<string, string>();
  for (const r of recordsInLog(log)) {
    if (r.control || r.key === null || ['100', '101', '102'].includes(r.key)) continue;
    m.set(r.key, `${r.offset}:${r.value}`);
  }
  return m;
}

function strayFiles(dir: string): string[] {
  return nodefs.readdirSync(dir).filter((f) => f.endsWith('.cleaned') || f.endsWith('.swap'));
}

test('a crash at any step of a cleaning pass loses nothing: the reloaded log has every latest value at its offset, and a new pass ends where an uninterrupted one does', async () => {
  // The reference: one uninterrupted pass.
  const refDir = path.join(tempDir('krill-crash-points-'), 'test-0');
  const ref = build(refDir);
  const want = latest(ref);
  const leo = ref.logEndOffset;
  const lastRecords = ref.lastRecordsOfActiveProducers();
  const probe = new FaultyFs();
  const counted = build(path.join(tempDir('krill-crash-points-'), 'test-0'), probe);
  const before = probe.mutations;
  await makeCleaner(2 ** 31).clean(new LogToClean(TEST_TP, counted, 0n, counted.activeSegment.baseOffset, false));
  const steps = probe.mutations - before;
  expect(steps).toBeGreaterThan(20);
  await makeCleaner(2 ** 31).clean(new LogToClean(TEST_TP, ref, 0n, ref.activeSegment.baseOffset, false));
  const cleaned = recordsInLog(ref).map((r) => `${r.offset}:${r.key}:${r.value}`);
  expect(latest(ref)).toEqual(want);
  ref.closeHandlers();
  counted.closeHandlers();

  let crashedBeforeSwap = 0;
  let crashedAfterSwap = 0;
  for (let n = 0; n < steps; n++) {
    const dir = path.join(tempDir('krill-crash-points-'), 'test-0');
    const fs = new FaultyFs();
    const log = build(dir, fs);
    const startMutations = fs.mutations;
    fs.freezeAfter(n);
    const pass = await makeCleaner(2 ** 31)
      .clean(new LogToClean(TEST_TP, log, 0n, log.activeSegment.baseOffset, false))
      .then(() => null, (err: unknown) => err);
    if (pass === null) {
      // This pass made no more than n disk changes: the probe's count included background work
      // (a segment flush from the build) that fell outside this pass on a busy machine. There is no
      // crash point at n, nor after it: the pass must simply have finished the work.
      expect({ at: `pass ${n} of ${steps}`, mutations: fs.mutations - startMutations <= n }).toEqual({ at: `pass ${n} of ${steps}`, mutations: true });
      expect(recordsInLog(log).map((r) => `${r.offset}:${r.key}:${r.value}`)).toEqual(cleaned);
      log.closeHandlers();
      break;
    }
    expect(fs.frozen).toBe(true);
    if (strayFiles(dir).some((f) => f.endsWith('.swap'))) crashedAfterSwap++;
    else crashedBeforeSwap++;
    log.closeHandlers();

    // Reload as after a SIGKILL: no clean-shutdown marker, recovery from the start.
    const { log: again } = makeLog(CONFIG, { dir, hadCleanShutdown: false, recoveryPoint: 0n });
    const at = `crash after ${n} of ${steps} steps`;
    expect({ at, stray: strayFiles(dir) }).toEqual({ at, stray: [] });
    expect({ at, leo: again.logEndOffset }).toEqual({ at, leo });
    expect({ at, latest: latest(again) }).toEqual({ at, latest: want });
    const offsets = recordsInLog(again).map((r) => r.offset);
    expect({ at, increasing: offsets.every((o, i) => i === 0 || o > offsets[i - 1]) }).toEqual({ at, increasing: true });
    expect({ at, producers: again.lastRecordsOfActiveProducers() }).toEqual({ at, producers: lastRecords });
    expect({ at, problems: dumpLog([dir], { deepIteration: true, indexSanityCheck: true, allowOffsetGaps: true }, () => undefined).problems }).toEqual({ at, problems: [] });
    // The next pass on the recovered log finishes the work.
    await makeCleaner(2 ** 31).clean(new LogToClean(TEST_TP, again, 0n, again.activeSegment.baseOffset, false));
    expect({ at, cleaned: recordsInLog(again).map((r) => `${r.offset}:${r.key}:${r.value}`) }).toEqual({ at, cleaned });
    again.closeHandlers();
  }
  // Both kinds of crash were reached: before a group's swap (only .cleaned files) and in the middle of one (.swap files).
  expect(crashedBeforeSwap).toBeGreaterThan(0);
  expect(crashedAfterSwap).toBeGreaterThan(0);
}, 120_000);
