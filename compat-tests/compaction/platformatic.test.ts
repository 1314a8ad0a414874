/**
 * Log compaction seen by @platformatic/kafka 1.x (issue 13; ESM only, so its clients run in a
 * child `node` process: platformatic.mjs): its Producer writes keyed updates and tombstones to a
 * compacted topic; once the cleaner has cleaned everything below the active segment, its Consumer
 * (a consumer group, from the earliest offset) reads back exactly the latest record per key at
 * its original offset, across the cleaner's gaps.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunningBroker } from '../../broker';
import { runNodeScript } from '../helpers/node-script';
import { createCompactedTopic, padAndClean, startCompactionBroker, viewAfter, type Written } from './helpers';

const SCRIPT = path.join(__dirname, 'platformatic.mjs');

let broker: RunningBroker;
let tmp: string;

beforeAll(async () => {
  broker = await startCompactionBroker();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-platformatic-compaction-'));
});

afterAll(async () => {
  await broker?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const parse = (file: string): Written[] => (JSON.parse(fs.readFileSync(file, 'utf8')) as { key: string; value: string | null; offset: string }[]).map((w) => ({ ...w, offset: BigInt(w.offset) }));

test('platformatic: keyed updates and tombstones read back as the latest record per key at its original offset', async () => {
  const topic = 'cmp-platformatic';
  await createCompactedTopic(broker, topic);
  const sentFile = path.join(tmp, 'sent.json');
  expect(await runNodeScript(SCRIPT, ['produce', broker.bootstrapServers[0], topic, sentFile], 30_000)).toBe('ok 300\n');
  const written = parse(sentFile);
  const pads = await padAndClean(broker, topic);
  written.push(...pads);
  const want = viewAfter(written, pads);
  expect(want.length).toBe(50 + 2);
  const readFile = path.join(tmp, 'read.json');
  expect(await runNodeScript(SCRIPT, ['consume', broker.bootstrapServers[0], topic, 'pl-compaction-reader', String(want.length), readFile], 30_000)).toBe(`ok ${want.length}\n`);
  expect(parse(readFile)).toEqual(want);
  expect(want.some((w) => w.value === null)).toBe(true);
});
