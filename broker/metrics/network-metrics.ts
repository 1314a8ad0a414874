/**
 * The socket server's connection count (kafka.server:type=socket-server-metrics, listener and
 * networkProcessor keys, attribute connection-count), as the Strimzi JMX exporter names it:
 *   kafka_server_socket_server_metrics_connection_count{listener,networkProcessor}
 * krill serves every connection of a listener on its one event loop, which is network processor 0.
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';

export function registerNetworkMetrics(registry: Registry, listeners: () => readonly string[], connectionCounts: () => ReadonlyMap<string, number>): void {
  collectedGauge(
    registry,
    'kafka_server_socket_server_metrics_connection_count',
    'Open connections of a listener (kafka.server:type=socket-server-metrics, connection-count).',
    ['listener', 'networkProcessor'],
    (set) => {
      const counts = connectionCounts();
      for (const listener of listeners()) set({ listener, networkProcessor: '0' }, counts.get(listener) ?? 0);
    },
  );
}
