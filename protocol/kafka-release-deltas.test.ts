/**
 * The derived Kafka 4.0 / 4.1 tables (protocol/kafka-release-deltas.ts) against published facts
 * (the releases' notes and KIPs, cross-checked with franz-go's kversion tables): a handful of APIs'
 * ranges per release, the order of releases, and the checks that keep the hand-written list honest
 * (a skipped or repeated maximum, a change to an API the base lacks, an API added twice).
 */
import { KAFKA_RELEASE_API_VERSIONS } from './kafka-release-api-versions';
import { KAFKA_RELEASES, KAFKA_RELEASE_DELTAS, applyReleaseDelta, type ReleaseApi } from './kafka-release-deltas';

const range = (release: string, apiKey: number): [number, number] | null => {
  const a = KAFKA_RELEASES[release].apis.find((x) => x[0] === apiKey);
  return a ? [a[2], a[3]] : null;
};

test('Kafka 4.0: KIP-896 minimums and 4.0 maximums', () => {
  expect(range('4.0', 0)).toEqual([3, 12]); // Produce
  expect(range('4.0', 1)).toEqual([4, 17]); // Fetch
  expect(range('4.0', 2)).toEqual([1, 10]); // ListOffsets, KIP-1075
  expect(range('4.0', 3)).toEqual([0, 13]); // Metadata, KIP-1102
  expect(range('4.0', 11)).toEqual([2, 9]); // JoinGroup
  expect(range('4.0', 8)).toEqual([2, 9]); // OffsetCommit
  expect(range('4.0', 26)).toEqual([0, 5]); // EndTxn, KIP-890
  expect(range('4.0', 34)).toEqual([1, 2]); // AlterReplicaLogDirs
  expect(range('4.0', 35)).toEqual([1, 4]); // DescribeLogDirs
  expect(range('4.0', 18)).toEqual([0, 4]); // ApiVersions unchanged
  expect(range('4.0', 76)).toBeNull(); // share groups: early access only
});

test('Kafka 4.1: JoinGroup v0-1 back, Produce 13, Fetch 18, share groups from v1', () => {
  expect(range('4.1', 11)).toEqual([0, 9]);
  expect(range('4.1', 0)).toEqual([3, 13]);
  expect(range('4.1', 1)).toEqual([4, 18]);
  expect(range('4.1', 3)).toEqual([0, 13]);
  expect(range('4.1', 76)).toEqual([1, 1]);
  expect(KAFKA_RELEASES['4.1'].apis.find((a) => a[0] === 74)?.[1]).toBe('ListConfigResources');
});

test('the generated releases come through unchanged, the derived ones after them in order', () => {
  expect(Object.keys(KAFKA_RELEASES)).toEqual([...Object.keys(KAFKA_RELEASE_API_VERSIONS), '4.0', '4.1']);
  for (const [r, t] of Object.entries(KAFKA_RELEASE_API_VERSIONS)) expect(KAFKA_RELEASES[r].apis).toEqual(t.apis);
  // Every change names its KIP.
  for (const d of KAFKA_RELEASE_DELTAS) for (const c of d.changes) expect(c.kip).toMatch(/^KIP-\d+$/);
});

test('a change that does not fit its base is refused', () => {
  const base: ReleaseApi[] = [[0, 'Produce', 0, 11]];
  expect(() => applyReleaseDelta(base, { release: 'x', base: 'y', changes: [{ op: 'max', apiKey: 0, max: 13, kip: 'KIP-1' }] })).toThrow(/skips or repeats/);
  expect(() => applyReleaseDelta(base, { release: 'x', base: 'y', changes: [{ op: 'max', apiKey: 1, max: 1, kip: 'KIP-1' }] })).toThrow(/not in y/);
  expect(() => applyReleaseDelta(base, { release: 'x', base: 'y', changes: [{ op: 'add', apiKey: 0, name: 'P', min: 0, max: 0, kip: 'KIP-1' }] })).toThrow(/already in y/);
  expect(() => applyReleaseDelta(base, { release: 'x', base: 'y', changes: [{ op: 'min', apiKey: 0, min: 0, kip: 'KIP-1' }] })).toThrow(/no change/);
  // The input is not modified.
  applyReleaseDelta(base, { release: 'x', base: 'y', changes: [{ op: 'min', apiKey: 0, min: 3, kip: 'KIP-1' }] });
  expect(base).toEqual([[0, 'Produce', 0, 11]]);
});
