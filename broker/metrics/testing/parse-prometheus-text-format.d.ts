/**
 * Types of parse-prometheus-text-format (a Prometheus text-format parser, port of the Prometheus
 * Python client's; the package ships none): families with their samples, values as strings.
 */
declare module 'parse-prometheus-text-format' {
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    timestamp_ms?: string;
    /** Summaries: quantile -> value. */
    quantiles?: Record<string, string>;
    /** Histograms: upper bound -> cumulative count. */
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
