/**
 * The partition logs' gauges (kafka.log:type=Log, with topic and partition keys), Strimzi JMX
 * exporter names, read from the log manager at scrape time:
 *   kafka_log_log_size{topic,partition}            Size: bytes of all segments
 *   kafka_log_log_numlogsegments{topic,partition}  NumLogSegments
 *   kafka_log_log_logstartoffset / _logendoffset{topic,partition}
 *   kafka_log_logmanager_offlinelogdirectorycount  OfflineLogDirectoryCount
 *   kafka_log_logmanager_remaininglogstorecover{dir}  remainingLogsToRecover: entries of a log
 *     directory still to be loaded (and recovered) while it loads, 0 after; the endpoint is up
 *     during loading, so a slow recovery can be watched
 *   kafka_log_logflushstats_logflushrateandtimems  LogFlushRateAndTimeMs: a summary of flush times
 *     in ms (quantiles, _count, _sum), every flush of a partition log that fsynced something
 * The metadata log (__cluster_metadata, not a partition log) is not among them, as in Kafka.
 */
import type { Registry } from 'prom-client';
import { SlidingSummary } from './sliding-summary';
import { KAFKA_PERCENTILES } from './request-metrics';
import type { LogFlushStats } from '../../storage/log-flush-stats';
import { collectedGauge } from './collected';
import type { UnifiedLog } from '../../storage/unified-log';

export interface LogMetricsSource {
  allLogs(): Iterable<UnifiedLog>;
  offlineLogDirCount(): number;
  remainingLogsToRecover(): { dir: string; remaining: number }[];
  readonly flushStats: LogFlushStats;
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
  collectedGauge(
    registry,
    'kafka_log_logmanager_remaininglogstorecover',
    'remainingLogsToRecover: entries of the log directory still to load while it loads (kafka.log:type=LogManager).',
    ['dir'],
    (set) => {
      for (const r of source.remainingLogsToRecover()) set({ dir: r.dir }, r.remaining);
    },
  );
  const flushTime = new SlidingSummary(registry, {
    name: 'kafka_log_logflushstats_logflushrateandtimems',
    help: 'LogFlushRateAndTimeMs: time of each log flush in ms (kafka.log:type=LogFlushStats).',
    percentiles: KAFKA_PERCENTILES,
  });
  source.flushStats.onFlush = (ms) => flushTime.observe('', ms);
}
