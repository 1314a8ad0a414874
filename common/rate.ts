/**
 * A windowed rate with an optional upper bound: Kafka's Sensor + Rate(WindowedSum) as its quotas use
 * them (connection creation rates, client byte-rate and request quotas, controller mutation rates).
 *
 * The rate is the sum of the values recorded in the retained samples divided by the time they span.
 * Each sample covers `windowMs`; `samples` of them are retained (plus one overlapping the start of the
 * window, as Kafka keeps); a sample with no event for `samples * windowMs` is reset. While fewer than
 * `samples - 1` full windows have elapsed, the span is padded to that many windows, so a burst at the
 * start is measured over the whole window and not over a few milliseconds (Kafka's Rate.windowSize).
 *
 * A bound is checked after each record (Kafka records first, then checks): when the rate exceeds it,
 * `record` returns the throttle time that brings the rate back to the bound,
 * `(rate - bound) / bound * span`, as Kafka's QuotaUtils.throttleTime computes it; 0 otherwise.
 * `average` is Kafka's Avg over the same samples (the mean recorded value: quota throttle-time).
 * `SimpleRate` measures the same samples over the span they really cover (replication quotas).
 */
import { ExpiringMap } from './expiring-map';
import type { Time } from './time';

export interface RateConfig {
  /** Span of one sample (Kafka's quota.window.size.seconds, in ms). */
  windowMs: number;
  /** Samples retained (Kafka's quota.window.num). */
  samples: number;
}

export interface Sample {
  value: number;
  eventCount: number;
  startMs: number;
  lastEventMs: number;
}

export class Rate {
  private readonly buf: Sample[] = [];
  private current = 0;

  constructor(
    private readonly config: RateConfig,
    /** Upper bound per second; Infinity for none. May be changed (a quota update). */
    public bound = Infinity,
  ) {}

  /**
   * Adds `value` at `nowMs`; returns the throttle time in ms if the rate is then above the bound
   * (the value stays recorded, as in Kafka), else 0.
   */
  record(value: number, nowMs: number): number {
    this.add(value, nowMs);
    return this.throttleTimeMs(nowMs);
  }

  /** Adds `value` without checking the bound (a negative value un-records, as Kafka's record(-1)). */
  add(value: number, nowMs: number): void {
    let s = this.currentSample(nowMs);
    if (nowMs - s.startMs >= this.config.windowMs) s = this.advance(nowMs);
    s.value += value;
    s.eventCount++;
    s.lastEventMs = nowMs;
  }

  /** 0 when the rate is within the bound, else the time it takes to get back to it. */
  throttleTimeMs(nowMs: number): number {
    if (!Number.isFinite(this.bound)) return 0;
    const rate = this.measure(nowMs);
    if (rate <= this.bound) return 0;
    if (this.bound <= 0) return this.windowSpanMs(nowMs);
    return Math.round(((rate - this.bound) / this.bound) * this.windowSpanMs(nowMs));
  }

  /** Events per second over the retained samples. */
  measure(nowMs: number): number {
    this.purge(nowMs);
    let total = 0;
    for (const s of this.buf) total += s.value;
    return total / (this.windowSpanMs(nowMs) / 1000);
  }

  /** The mean of the recorded values over the retained samples (Kafka's Avg), 0 with none. */
  average(nowMs: number): number {
    this.purge(nowMs);
    let total = 0;
    let count = 0;
    for (const s of this.buf) {
      total += s.value;
      count += s.eventCount;
    }
    return count === 0 ? 0 : total / count;
  }

  /** The sample span and count this rate was made with. */
  get windowConfig(): RateConfig {
    return this.config;
  }

  /** The span the rate is computed over, padded while the window is filling (never below 1 ms). */
  windowSpanMs(nowMs: number): number {
    this.purge(nowMs);
    let elapsed = nowMs - this.oldest(nowMs).startMs;
    const fullWindows = Math.floor(elapsed / this.config.windowMs);
    const minFull = this.config.samples - 1;
    if (fullWindows < minFull) elapsed += (minFull - fullWindows) * this.config.windowMs;
    return Math.max(elapsed, 1);
  }

  private currentSample(nowMs: number): Sample {
    if (this.buf.length === 0) this.buf.push(newSample(nowMs));
    return this.buf[this.current];
  }

  private advance(nowMs: number): Sample {
    const max = this.config.samples + 1;
    this.current = (this.current + 1) % max;
    if (this.current >= this.buf.length) {
      const s = newSample(nowMs);
      this.buf.push(s);
      return s;
    }
    const s = this.buf[this.current];
    reset(s, nowMs);
    return s;
  }

  protected oldest(nowMs: number): Sample {
    if (this.buf.length === 0) this.buf.push(newSample(nowMs));
    let o = this.buf[0];
    for (const s of this.buf) if (s.startMs < o.startMs) o = s;
    return o;
  }

  protected purge(nowMs: number): void {
    const expireAge = this.config.samples * this.config.windowMs;
    for (const s of this.buf) if (nowMs - s.lastEventMs >= expireAge) reset(s, nowMs);
  }
}

/**
 * Kafka's SimpleRate (replication quotas): the span is the time since the oldest retained sample
 * started, at least one sample window, with no padding to the whole window: a transfer that has
 * just started is measured over one window, a steady one over what it has really taken.
 */
export class SimpleRate extends Rate {
  override windowSpanMs(nowMs: number): number {
    this.purge(nowMs);
    return Math.max(nowMs - this.oldest(nowMs).startMs, this.windowConfig.windowMs);
  }
}

function newSample(nowMs: number): Sample {
  return { value: 0, eventCount: 0, startMs: nowMs, lastEventMs: nowMs };
}

function reset(s: Sample, nowMs: number): void {
  s.value = 0;
  s.eventCount = 0;
  s.startMs = nowMs;
  s.lastEventMs = nowMs;
}

/** A Rate per key, created on first use and dropped after `idleMs` without records (Kafka's sensor expiry). */
export class RateMap<K> {
  private readonly rates: ExpiringMap<K, Rate>;

  constructor(
    private readonly config: RateConfig,
    time: Time,
    idleMs: number,
  ) {
    this.rates = new ExpiringMap(time, idleMs);
  }

  /** The key's rate, with `bound` as its current bound. */
  get(key: K, bound: number): Rate {
    const rate = this.rates.getOrCreate(key, () => new Rate(this.config, bound));
    rate.bound = bound;
    return rate;
  }

  get size(): number {
    return this.rates.size;
  }

  /** Every live key's rate (metrics). */
  entries(): IterableIterator<[K, Rate]> {
    return this.rates.values();
  }
}
