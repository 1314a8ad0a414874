import { Rate, RateMap } from './rate';

const cfg = { windowMs: 1000, samples: 11 };

describe('Rate (Kafka Rate over a WindowedSum)', () => {
  test('a burst at the start is measured over the padded window (samples - 1 windows)', () => {
    const r = new Rate(cfg);
    r.record(1000, 0);
    // 10 full windows of padding: 1000 / 10 s
    expect(r.measure(0)).toBeCloseTo(100, 6);
    expect(r.windowSpanMs(0)).toBe(10_000);
  });

  test('steady recording converges on the real rate', () => {
    const r = new Rate(cfg);
    for (let t = 0; t < 30_000; t += 100) r.record(10, t); // 100 per second
    expect(r.measure(30_000)).toBeGreaterThan(95);
    expect(r.measure(30_000)).toBeLessThan(105);
  });

  test('within the bound: no throttle; above it: (rate - bound) / bound * span', () => {
    const r = new Rate(cfg, 100);
    expect(r.record(500, 0)).toBe(0); // 50/s over the padded 10 s
    const t = r.record(1500, 0); // 200/s: twice the bound
    expect(t).toBe(10_000); // (200 - 100) / 100 * 10 s
    // the value stays recorded, as in Kafka
    expect(r.measure(0)).toBeCloseTo(200, 6);
  });

  test('samples with no event for samples * window are reset', () => {
    const r = new Rate(cfg, 100);
    r.record(5000, 0);
    expect(r.throttleTimeMs(0)).toBeGreaterThan(0);
    expect(r.measure(11_000)).toBe(0);
    expect(r.throttleTimeMs(11_000)).toBe(0);
  });

  test('a negative value un-records', () => {
    const r = new Rate(cfg, 0.15);
    r.record(1, 0);
    expect(r.throttleTimeMs(0)).toBe(0); // 0.1/s
    expect(r.record(1, 0)).toBeGreaterThan(0); // 0.2/s
    r.add(-1, 0);
    expect(r.throttleTimeMs(0)).toBe(0);
  });

  test('an unbounded rate never throttles', () => {
    const r = new Rate(cfg);
    expect(r.record(1e12, 0)).toBe(0);
  });
});

describe('RateMap', () => {
  test('one rate per key; idle keys expire', () => {
    let now = 0;
    const m = new RateMap<string>(cfg, { milliseconds: () => now }, 60_000);
    m.get('a', 10).record(1, now);
    m.get('b', 10).record(1, now);
    expect(m.size).toBe(2);
    now = 30_000;
    m.get('a', 10);
    now = 61_000;
    m.get('c', 10);
    expect(m.size).toBe(2); // b expired, a used at 30 s is kept
  });
});
