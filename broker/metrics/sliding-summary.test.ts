import { Registry } from 'prom-client';
import { jmxQuantileLabel, quantile, SlidingSummary } from './sliding-summary';
import { Scrape } from './testing/scrape';

test("quantiles interpolate as Yammer's snapshots do; labels are the JMX exporter's", () => {
  expect([0.5, 0.75, 0.95, 0.98, 0.99, 0.999].map(jmxQuantileLabel)).toEqual(['0.50', '0.75', '0.95', '0.98', '0.99', '0.999']);
  const v = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(quantile(v, 0.5)).toBe(5.5);
  expect(quantile(v, 0.75)).toBeCloseTo(8.25);
  expect(quantile(v, 0.99)).toBe(10);
  expect(quantile(v, 0.01)).toBe(1);
  expect(quantile(new Float64Array(0), 0.5)).toBe(0);
});

test('labelled series: count and sum of everything, quantiles of the last `size` observations within the window', async () => {
  let now = 1_000_000;
  const registry = new Registry();
  const s = new SlidingSummary(registry, { name: 'x_ms', help: 'h', labelName: 'request', percentiles: [0.5, 0.99], size: 4, windowMs: 1000, now: () => now });
  for (const v of [100, 1, 2, 3, 4]) s.observe('Produce', v); // 100 falls out of the ring of 4
  s.observe('Fetch', 7);
  let scraped = new Scrape(await registry.metrics());
  expect(scraped.family('x_ms')?.type).toBe('SUMMARY');
  expect(scraped.summary('x_ms', { request: 'Produce' })).toEqual({ quantiles: { '0.50': 2.5, '0.99': 4 }, count: 5, sum: 110 });
  expect(scraped.summary('x_ms', { request: 'Fetch' })).toEqual({ quantiles: { '0.50': 7, '0.99': 7 }, count: 1, sum: 7 });
  now += 1001; // everything is older than the window now; the totals stay
  scraped = new Scrape(await registry.metrics());
  expect(scraped.summary('x_ms', { request: 'Produce' })).toEqual({ quantiles: { '0.50': 0, '0.99': 0 }, count: 5, sum: 110 });
});

test('a summary without labels reports zeros from the start and parses as a plain summary', async () => {
  const registry = new Registry();
  const s = new SlidingSummary(registry, { name: 'flush_ms', help: 'h', percentiles: [0.5] });
  let f = new Scrape(await registry.metrics()).family('flush_ms')!;
  expect(f.metrics).toEqual([{ quantiles: { '0.50': '0' }, count: '0', sum: '0' }]);
  s.observe('', 3);
  s.observe('', 5);
  f = new Scrape(await registry.metrics()).family('flush_ms')!;
  expect(f.metrics).toEqual([{ quantiles: { '0.50': '4' }, count: '2', sum: '8' }]);
});
