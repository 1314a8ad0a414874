/**
 * Metrics whose values are read from the broker's state when Prometheus scrapes, not kept up to
 * date on the hot paths: a gauge or counter whose collect callback resets it and sets every series
 * from `fill`. Series that `fill` no longer reports (a deleted topic, a moved partition) disappear.
 * A counter's source must only grow (a counter that goes down reads as a restart to Prometheus).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export type Labels<L extends string> = Partial<Record<L, string | number>>;
export type Fill<L extends string> = (set: (labels: Labels<L>, value: number) => void) => void;

export function collectedGauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], fill: Fill<L>): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.set(labels, value));
    },
  });
}

export function collectedCounter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], fill: Fill<L>): Counter<L> {
  return new Counter<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(labels, value));
    },
  });
}
