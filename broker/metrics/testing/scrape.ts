/**
 * Test helper: GET a broker's /metrics and read it with a real Prometheus text-format parser
 * (parse-prometheus-text-format), then look samples up by family name and labels.
 * That parser folds a summary into one sample and drops its labels (it handles label-less
 * summaries only), so `summary()` reads a labelled summary's lines again without their TYPE line,
 * where the same parser takes the quantile, _count and _sum series as plain samples.
 */
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format';

export class Scrape {
  private readonly byName: Map<string, PrometheusFamily>;

  constructor(readonly text: string) {
    this.byName = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  }

  family(name: string): PrometheusFamily | undefined {
    return this.byName.get(name);
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /** Samples of `name` whose labels include `labels` (exactly these label names when `exact`). */
  samples(name: string, labels: Record<string, string> = {}, exact = false): PrometheusSample[] {
    const f = this.byName.get(name);
    if (!f) return [];
    return f.metrics.filter((m) => {
      const l = m.labels ?? {};
      if (exact && Object.keys(l).length !== Object.keys(labels).length) return false;
      return Object.entries(labels).every(([k, v]) => l[k] === v);
    });
  }

  /** The value of the one sample of `name` with exactly `labels`; undefined if there is none. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const s = this.samples(name, labels, true);
    if (s.length > 1) throw new Error(`${name}${JSON.stringify(labels)} matches ${s.length} samples`);
    return s.length === 0 || s[0].value === undefined ? undefined : Number(s[0].value);
  }

  /** A summary's quantiles, count and sum for the series with exactly `labels` (besides quantile). */
  summary(name: string, labels: Record<string, string>): { quantiles: Record<string, number>; count: number; sum: number } | undefined {
    const own = this.text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name}_count`) || l.startsWith(`${name}_sum`));
    // Each series' quantile, _sum and _count lines alternate; grouped by name, each is one family.
    const series = (l: string) => l.slice(0, l.search(/[{ ]/));
    const grouped = [name, `${name}_sum`, `${name}_count`].flatMap((n) => own.filter((l) => series(l) === n));
    const plain = new Scrape(grouped.join('\n') + '\n');
    const count = plain.value(`${name}_count`, labels);
    const sum = plain.value(`${name}_sum`, labels);
    if (count === undefined || sum === undefined) return undefined;
    const quantiles: Record<string, number> = {};
    for (const s of plain.samples(name, labels)) {
      const l = s.labels ?? {};
      if (Object.keys(l).length === Object.keys(labels).length + 1 && l.quantile !== undefined) quantiles[l.quantile] = Number(s.value);
    }
    return { quantiles, count, sum };
  }

  /** The sum over the samples of `name` whose labels include `labels`. */
  sum(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((n, s) => n + Number(s.value ?? s.count ?? 0), 0);
  }
}

export async function scrape(address: { host: string; port: number }): Promise<Scrape> {
  const res = await fetch(`http://${address.host}:${address.port}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain')) throw new Error(`/metrics content type ${type}`);
  return new Scrape(await res.text());
}

export async function httpStatus(address: { host: string; port: number }, path: string, method = 'GET'): Promise<number> {
  const res = await fetch(`http://${address.host}:${address.port}${path}`, { method, signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  return res.status;
}
