/**
 * KafkaController's gauges (kafka.controller:type=KafkaController), Strimzi JMX exporter names,
 * read from the metadata image at scrape time:
 *   kafka_controller_kafkacontroller_activecontrollercount  1 on the node whose controller is active
 *   kafka_controller_kafkacontroller_offlinepartitionscount partitions without a leader
 *   kafka_controller_kafkacontroller_globaltopiccount, _globalpartitioncount
 *   kafka_controller_kafkacontroller_activebrokercount, _fencedbrokercount  registered brokers
 * Kafka reports these on controller nodes; krill's combined node and controller-only node are such
 * (their controller is always active), a cluster broker (whose controller runs elsewhere) does not
 * register them.
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { MetadataCache } from '../../metadata/metadata-cache';

export function registerControllerMetrics(registry: Registry, metadata: MetadataCache, isActive: () => boolean): void {
  const g = (name: string, help: string, value: () => number) =>
    collectedGauge(registry, `kafka_controller_kafkacontroller_${name}`, `${help} (kafka.controller:type=KafkaController).`, [], (set) => set({}, value()));
  g('activecontrollercount', 'ActiveControllerCount: 1 while this node is the active controller', () => (isActive() ? 1 : 0));
  g('offlinepartitionscount', 'OfflinePartitionsCount: partitions without a leader', () => {
    let n = 0;
    for (const t of metadata.topics()) for (const p of t.partitions.values()) if (p.leader < 0) n++;
    return n;
  });
  g('globaltopiccount', 'GlobalTopicCount: topics in the cluster', () => [...metadata.topics()].length);
  g('globalpartitioncount', 'GlobalPartitionCount: partitions in the cluster', () => {
    let n = 0;
    for (const t of metadata.topics()) n += t.partitions.size;
    return n;
  });
  g('activebrokercount', 'ActiveBrokerCount: registered brokers that are not fenced', () => metadata.allBrokers().filter((b) => !b.fenced).length);
  g('fencedbrokercount', 'FencedBrokerCount: registered brokers that are fenced', () => metadata.allBrokers().filter((b) => b.fenced).length);
}
