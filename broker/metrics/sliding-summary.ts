/**
 * A Prometheus summary that is cheap to observe: each series keeps its last `size` observations
 * (1028, the reservoir size of Kafka's Yammer histograms) in a ring with their times, plus a count
 * and a sum; quantiles are computed when Prometheus scrapes, from the observations of the last
 * `windowMs` (five minutes, the span Kafka's exponentially decaying reservoir favours), with the
 * interpolation of Yammer's snapshots, labelled as the JMX exporter labels Kafka's percentiles
 * (quantile="0.50", ..., "0.999"). prom-client writes the exposition (it registers like any of
 * its metrics); its own Summary keeps a t-digest per age bucket, ~10 µs per observation, too much
 * for once per request.
 *
 * Series are keyed by the value of one label (or none): `observe(labelValue, value)` is a map
 * lookup, two array writes and two additions. Invariant: count and sum only grow.
 */
import type { Registry } from 'prom-client';

/** A sample as prom-client's registry writes it. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

interface Series {
  values: Float64Array;
  times: Float64Array;
  next: number;
  filled: number;
  count: number;
  sum: number;
}

export interface SlidingSummaryOptions {
  name: string;
  help: string;
  /** The one label series are told apart by; omitted: a single series without labels. */
  labelName?: string;
  percentiles: readonly number[];
  size?: number;
  windowMs?: number;
  now?: () => number;
}

/**
 * The quantile label the JMX exporter's rules write for Kafka's `<N>thPercentile` attributes
 * ("0.$N"): 0.5 -> "0.50", 0.75 -> "0.75", 0.999 -> "0.999".
 */
export function jmxQuantileLabel(q: number): string {
  let digits = String(Math.round(q * 1000)).padStart(3, '0');
  if (digits.endsWith('0')) digits = digits.slice(0, -1);
  return `0.${digits}`;
}

/** Yammer's Snapshot.getValue: the quantile of sorted values, interpolated between neighbours. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const pos = q * (n + 1);
  if (pos < 1) return sorted[0];
  if (pos >= n) return sorted[n - 1];
  const lower = sorted[Math.floor(pos) - 1];
  const upper = sorted[Math.floor(pos)];
  return lower + (pos - Math.floor(pos)) * (upper - lower);
}

export class SlidingSummary {
  readonly name: string;
  readonly help: string;
  readonly type = 'summary' as const;
  readonly aggregator = 'sum' as const;
  private readonly series = new Map<string, Series>();
  private readonly size: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    registry: Registry,
    private readonly opts: SlidingSummaryOptions,
  ) {
    this.name = opts.name;
    this.help = opts.help;
    this.size = opts.size ?? 1028;
    this.windowMs = opts.windowMs ?? 300_000;
    this.now = opts.now ?? Date.now;
    // A summary without labels reports zeros before its first observation, as Kafka's timers do.
    if (opts.labelName === undefined) this.seriesFor('');
    registry.registerMetric(this as never);
  }

  private seriesFor(key: string): Series {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { values: new Float64Array(this.size), times: new Float64Array(this.size), next: 0, filled: 0, count: 0, sum: 0 }));
    return s;
  }

  /** One observation; `labelValue` is the label's value ('' for a summary without labels). */
  observe(labelValue: string, value: number): void {
    const s = this.seriesFor(labelValue);
    s.values[s.next] = value;
    s.times[s.next] = this.now();
    s.next = (s.next + 1) % this.size;
    if (s.filled < this.size) s.filled++;
    s.count++;
    s.sum += value;
  }

  async get(): Promise<{ name: string; help: string; type: 'summary'; aggregator: 'sum'; values: Sample[] }> {
    const values: Sample[] = [];
    const since = this.now() - this.windowMs;
    const label = this.opts.labelName;
    for (const [key, s] of this.series) {
      const labels: Record<string, string> = label === undefined ? {} : { [label]: key };
      const recent: number[] = [];
      for (let i = 0; i < s.filled; i++) if (s.times[i] >= since) recent.push(s.values[i]);
      const sorted = Float64Array.from(recent).sort();
      for (const q of this.opts.percentiles) values.push({ labels: { ...labels, quantile: jmxQuantileLabel(q) }, value: quantile(sorted, q) });
      values.push({ metricName: `${this.name}_sum`, labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: 'summary', aggregator: 'sum', values };
  }

  reset(): void {
    this.series.clear();
    if (this.opts.labelName === undefined) this.seriesFor('');
  }
}
