/**
 * ReplicationQuotaManager on a fake clock: the SimpleRate window arithmetic (a burst measured over
 * one sample window, a longer transfer over the time it really spans, samples expiring after
 * window.num windows), the bound's updates, a throttled stream converging on the bound, and the
 * throttled-replicas lists as a broker reads them.
 */
import { Rate } from '../common/rate';
import { ALL_REPLICAS, ReplicationQuotaManager, parseThrottledPartitions } from './replication-quota-manager';

const WINDOW = { windowMs: 1000, samples: 11 };

function manager(bound: number) {
  let now = 1_000_000;
  const m = new ReplicationQuotaManager('LeaderReplication', WINDOW, () => now);
  m.updateQuota(bound);
  return { m, at: (ms: number) => (now = 1_000_000 + ms) };
}

test('a burst is measured over one sample window, a longer transfer over the time since its first sample', () => {
  const { m, at } = manager(1000);
  at(0);
  m.record(500);
  expect(m.byteRate()).toBe(500); // 500 B over max(0 ms, 1000 ms)
  expect(m.isQuotaExceeded()).toBe(false);
  m.record(600);
  expect(m.byteRate()).toBe(1100);
  expect(m.isQuotaExceeded()).toBe(true);
  at(500);
  expect(m.byteRate()).toBe(1100); // still within the first window: 1100 B / 1 s
  expect(m.isQuotaExceeded()).toBe(true);
  at(1100);
  expect(m.byteRate()).toBeCloseTo(1000, 6); // 1100 B / 1.1 s: at the bound, not above it
  expect(m.isQuotaExceeded()).toBe(false);
  at(2200);
  expect(m.byteRate()).toBeCloseTo(500, 6);
  m.record(1000); // a second sample: 2100 B since the first sample started 2.2 s ago
  expect(m.byteRate()).toBeCloseTo(2100 / 2.2, 6);
  expect(m.isQuotaExceeded()).toBe(false);
  // Kafka's padded Rate (client quotas) would call the first burst 1100 B / 10 s instead.
  const padded = new Rate(WINDOW, 1000);
  padded.add(1100, 0);
  expect(padded.measure(0)).toBe(110);
});

test('samples without events for window.num windows are reset, and the rate falls to 0', () => {
  const { m, at } = manager(1000);
  at(0);
  m.record(5000);
  expect(m.isQuotaExceeded()).toBe(true);
  at(4000);
  expect(m.byteRate()).toBe(1250);
  at(10_999);
  expect(m.isQuotaExceeded()).toBe(false);
  at(11_000); // 11 windows after the sample's last event
  expect(m.byteRate()).toBe(0);
});

test('no bound is never exceeded; a new bound applies at once', () => {
  const { m, at } = manager(Infinity);
  at(0);
  m.record(1e12);
  expect(m.isQuotaExceeded()).toBe(false);
  expect(m.upperBound).toBe(Infinity);
  m.updateQuota(1e6);
  expect(m.isQuotaExceeded()).toBe(true);
  m.updateQuota(2e12);
  expect(m.isQuotaExceeded()).toBe(false);
});

test('a stream that sends only while the quota is not exceeded moves about bound x time', () => {
  const { m, at } = manager(10_000);
  let sent = 0;
  // A fetch every 50 ms asking for 4 KiB, as a throttled follower would.
  for (let t = 0; t <= 20_000; t += 50) {
    at(t);
    if (!m.isQuotaExceeded()) {
      m.record(4096);
      sent += 4096;
    }
  }
  // 20 s at 10 kB/s: 200 kB, give or take the chunk that crosses the bound.
  expect(sent).toBeGreaterThanOrEqual(195_000);
  expect(sent).toBeLessThanOrEqual(215_000);
});

test('throttled partitions: entries naming this broker, `*` for all; markThrottled replaces, removeThrottle clears', () => {
  expect(parseThrottledPartitions([], 1)).toBeNull();
  expect(parseThrottledPartitions(['*'], 1)).toBe(ALL_REPLICAS);
  expect(parseThrottledPartitions(['0:1', '1:2', ' 2:1 '], 1)).toEqual([0, 2]);
  expect(parseThrottledPartitions(['0:2'], 1)).toEqual([]);
  const { m } = manager(1);
  m.markThrottled('t', [0, 2]);
  expect([0, 1, 2].map((p) => m.isThrottled('t', p))).toEqual([true, false, true]);
  expect(m.isThrottled('other', 0)).toBe(false);
  m.markThrottled('t', ALL_REPLICAS);
  expect(m.isThrottled('t', 7)).toBe(true);
  m.markThrottled('t', [1]);
  expect([0, 1].map((p) => m.isThrottled('t', p))).toEqual([false, true]);
  m.removeThrottle('t');
  expect(m.isThrottled('t', 1)).toBe(false);
});
