/**
 * The partition logs' gauges (kafka.log:type=Log, with topic and partition keys), Strimzi JMX
 * exporter names, read from the log manager at scrape time:
 *   kafka_log_log_size{topic,partition}            Size: bytes of all segments
 *   kafka_log_log_numlogsegments{topic,partition}  NumLogSegments
 *   kafka_log_log_logstartoffset / _logendoffset{topic,partition}
 *   kafka_log_logmanager_offlinelogdirectorycount  OfflineLogDirectoryCount
 * The metadata log (__cluster_metadata, not a partition log) is not among them, as in Kafka.
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { UnifiedLog } from '../../storage/unified-log';

export interface LogMetricsSource {
  allLogs(): Iterable<UnifiedLog>;
  offlineLogDirCount(): number;
}

export function registerLogMetrics(registry: Registry, source: LogMetricsSource): void {
  const perLog = (name: string, help: string, value: (l: UnifiedLog) => number) =>
    collectedGauge(registry, `kafka_log_log_${name}`, `${help} (kafka.log:type=Log).`, ['topic', 'partition'], (set) => {
      for (const l of source.allLogs()) {
        if (l.isOffline) continue;
        set({ topic: l.topicPartition.topic, partition: l.topicPartition.partition }, value(l));
      }
    });
  perLog('size', 'Size: bytes in the log segments', (l) => l.size);
  perLog('numlogsegments', 'NumLogSegments: segments of the log', (l) => l.numberOfSegments);
  perLog('logstartoffset', 'LogStartOffset: first offset of the log', (l) => Number(l.logStartOffset));
  perLog('logendoffset', 'LogEndOffset: the offset after the last record', (l) => Number(l.logEndOffset));
  collectedGauge(
    registry,
    'kafka_log_logmanager_offlinelogdirectorycount',
    'OfflineLogDirectoryCount: log directories taken offline after an I/O error (kafka.log:type=LogManager).',
    [],
    (set) => set({}, source.offlineLogDirCount()),
  );
}
