/**
 * BrokerTopicMetrics (kafka.server:type=BrokerTopicMetrics) as the Strimzi JMX exporter rules
 * name them: kafka_server_brokertopicmetrics_<name>_total, with a `topic` label for a topic's
 * MBean and none for the all-topics one (Kafka's MBean without a topic key). Values come from
 * BrokerTopicStats at scrape time.
 */
import type { Registry } from 'prom-client';
import { collectedCounter } from './collected';
import type { BrokerTopicStats, TopicCounts } from './broker-topic-stats';

const METRICS: readonly [keyof TopicCounts, string, string][] = [
  ['bytesIn', 'bytesin', 'BytesInPerSec: record bytes appended for clients'],
  ['messagesIn', 'messagesin', 'MessagesInPerSec: records appended for clients'],
  ['bytesOut', 'bytesout', 'BytesOutPerSec: record bytes returned to consumers'],
  ['totalProduceRequests', 'totalproducerequests', 'TotalProduceRequestsPerSec: partitions of produce requests'],
  ['failedProduceRequests', 'failedproducerequests', 'FailedProduceRequestsPerSec: partitions of produce requests that failed'],
  ['totalFetchRequests', 'totalfetchrequests', 'TotalFetchRequestsPerSec: partitions of consumer fetch requests'],
  ['failedFetchRequests', 'failedfetchrequests', 'FailedFetchRequestsPerSec: partitions of consumer fetch requests that failed'],
];

export function registerTopicMetrics(registry: Registry, stats: BrokerTopicStats): void {
  for (const [field, name, help] of METRICS) {
    collectedCounter(registry, `kafka_server_brokertopicmetrics_${name}_total`, `${help} (kafka.server:type=BrokerTopicMetrics,name=${help.split(':')[0]}).`, ['topic'], (set) => {
      set({}, stats.allTopics[field]);
      for (const [topic, c] of stats.topicEntries()) set({ topic }, c[field]);
    });
  }
  collectedCounter(
    registry,
    'kafka_server_brokertopicmetrics_replicationbytesout_total',
    'ReplicationBytesOutPerSec: record bytes returned to follower fetches (kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesOutPerSec).',
    [],
    (set) => set({}, stats.replicationBytesOut),
  );
  collectedCounter(
    registry,
    'kafka_server_brokertopicmetrics_replicationbytesin_total',
    'ReplicationBytesInPerSec: record bytes this broker appended as a follower (kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesInPerSec).',
    [],
    (set) => set({}, stats.replicationBytesIn),
  );
}
