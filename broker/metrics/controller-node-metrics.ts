/**
 * The metrics of a controller-only node (`process.roles=controller`, ControllerServer): its own
 * registry with the KafkaController gauges of its image, the RequestMetrics and request queue of
 * its listener, its connections per listener, and prom-client's process metrics. Served by a
 * MetricsServer like a broker's (krill.metrics.port).
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics';
import { registerControllerMetrics } from './controller-metrics';
import { registerNetworkMetrics } from './network-metrics';
import type { MetadataCache } from '../../metadata/metadata-cache';

export interface ControllerNodeMetricsSources {
  image: MetadataCache;
  isActive(): boolean;
  requestQueueSize(): number;
  listenerNames(): readonly string[];
  connectionCounts(): ReadonlyMap<string, number>;
}

export class ControllerNodeMetrics {
  readonly registry = new Registry();
  readonly requests: RequestMetrics;

  constructor(src: ControllerNodeMetricsSources) {
    const r = this.registry;
    this.requests = new RequestMetrics(r, () => src.requestQueueSize());
    registerControllerMetrics(r, src.image, () => src.isActive());
    registerNetworkMetrics(r, () => src.listenerNames(), () => src.connectionCounts());
    collectDefaultMetrics({ register: r });
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
