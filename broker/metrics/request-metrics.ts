/**
 * Kafka's RequestMetrics (kafka.network:type=RequestMetrics) and RequestChannel queue size, named
 * as the Strimzi JMX exporter rules name them:
 *   kafka_network_requestmetrics_requests_total{request,version}   RequestsPerSec (Count)
 *   kafka_network_requestmetrics_totaltimems{request,quantile}      TotalTimeMs percentiles, with
 *     _count and _sum (the exporter's emulated summary lacks _sum; prom-client adds it)
 *   kafka_network_requestchannel_requestqueuesize                   RequestQueueSize
 * As Kafka's RequestChannel does, a Fetch also counts as FetchConsumer or FetchFollower.
 *
 * Cost: one array slot increment and one SlidingSummary observation (ring writes, no allocation)
 * per answered request. Counts are plain numbers read at scrape time. The time is from the full frame being read to the response
 * being ready to write (krill writes it at once); requests closed instead of answered (bad input)
 * are not counted, like Kafka's, which never complete.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { SlidingSummary } from './sliding-summary';

/** Kafka's 50th, 75th, 95th, 98th, 99th and 999th percentiles of its Yammer histograms. */
export const KAFKA_PERCENTILES = [0.5, 0.75, 0.95, 0.98, 0.99, 0.999];

export class RequestMetrics {
  /** request name -> version -> count. */
  private readonly counts = new Map<string, number[]>();
  private readonly totalTime: SlidingSummary;

  constructor(registry: Registry, requestQueueSize: () => number) {
    const counts = this.counts;
    new Counter({
      name: 'kafka_network_requestmetrics_requests_total',
      help: 'Requests answered, by API and version (kafka.network:type=RequestMetrics,name=RequestsPerSec).',
      labelNames: ['request', 'version'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [request, byVersion] of counts) {
          byVersion.forEach((n, version) => {
            if (n > 0) this.inc({ request, version: String(version) }, n);
          });
        }
      },
    });
    this.totalTime = new SlidingSummary(registry, {
      name: 'kafka_network_requestmetrics_totaltimems',
      help: 'Time from receiving a request to its response, in ms (kafka.network:type=RequestMetrics,name=TotalTimeMs).',
      labelName: 'request',
      percentiles: KAFKA_PERCENTILES,
    });
    new Gauge({
      name: 'kafka_network_requestchannel_requestqueuesize',
      help: 'Requests read and not yet answered, not counting those waiting on purpose (kafka.network:type=RequestChannel,name=RequestQueueSize).',
      registers: [registry],
      collect() {
        this.set(requestQueueSize());
      },
    });
  }

  /** An answered request: `name` is Kafka's API name; a Fetch says whether a follower sent it. */
  record(name: string, version: number, totalMs: number, fetchFromFollower?: boolean): void {
    this.count(name, version, totalMs);
    if (fetchFromFollower !== undefined) this.count(fetchFromFollower ? 'FetchFollower' : 'FetchConsumer', version, totalMs);
  }

  private count(name: string, version: number, totalMs: number): void {
    let byVersion = this.counts.get(name);
    if (!byVersion) this.counts.set(name, (byVersion = []));
    byVersion[version] = (byVersion[version] ?? 0) + 1;
    this.totalTime.observe(name, totalMs);
  }
}
