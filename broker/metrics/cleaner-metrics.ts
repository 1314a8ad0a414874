/**
 * The log cleaner's gauges (kafka.log:type=LogCleaner and type=LogCleanerManager), Strimzi JMX
 * exporter names (Kafka's hyphens become underscores), read from the cleaner at scrape time:
 *   kafka_log_logcleaner_max_buffer_utilization_percent  the fullest offset map of the threads'
 *     last passes, in percent
 *   kafka_log_logcleaner_cleaner_recopy_percent  bytes written / bytes read over the threads' last
 *     passes, in percent (100: nothing was removed)
 *   kafka_log_logcleaner_max_clean_time_secs  the longest of the threads' last passes
 *   kafka_log_logcleaner_max_compaction_delay_secs  how far past max.compaction.lag.ms the most
 *     overdue log was at the threads' last decisions
 *   kafka_log_logcleaner_deadthreadcount  cleaner loops that stopped on an unexpected error
 *   kafka_log_logcleanermanager_max_dirty_percent  the dirtiest log's cleanable ratio at the last
 *     decision, in percent
 *   kafka_log_logcleanermanager_time_since_last_run_ms  since the last decision
 *   kafka_log_logcleanermanager_uncleanable_partitions_count{logDirectory}
 *   kafka_log_logcleanermanager_uncleanable_bytes{logDirectory}  partitions a pass failed on, and the
 *     cleanable bytes they hold
 * The percentages are truncated to integers as Kafka's gauges are. With no cleaner running
 * (log.cleaner.enable=false, or before the logs are loaded) the label-less gauges read 0 and the
 * per-directory ones have no series.
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { LogCleaner } from '../../storage/cleaner/log-cleaner';

export function registerCleanerMetrics(registry: Registry, cleaner: () => LogCleaner | null): void {
  const gauge = (type: 'logcleaner' | 'logcleanermanager', name: string, help: string, value: (c: LogCleaner) => number) =>
    collectedGauge(registry, `kafka_log_${type}_${name}`, `${help} (kafka.log:type=${type === 'logcleaner' ? 'LogCleaner' : 'LogCleanerManager'}).`, [], (set) => {
      const c = cleaner();
      if (c) set({}, value(c));
    });
  gauge('logcleaner', 'max_buffer_utilization_percent', 'max-buffer-utilization-percent: the fullest offset map of the last passes', (c) =>
    Math.trunc(100 * Math.max(0, ...c.lastStats.map((s) => s.bufferUtilization))),
  );
  gauge('logcleaner', 'cleaner_recopy_percent', 'cleaner-recopy-percent: bytes written over bytes read by the last passes', (c) => {
    const stats = c.lastStats;
    const written = stats.reduce((n, s) => n + s.bytesWritten, 0);
    const read = stats.reduce((n, s) => n + s.bytesRead, 0);
    return Math.trunc((100 * written) / Math.max(read, 1));
  });
  gauge('logcleaner', 'max_clean_time_secs', 'max-clean-time-secs: the longest of the last passes', (c) =>
    Math.trunc(Math.max(0, ...c.lastStats.map((s) => (s.endTime >= 0 ? s.elapsedSecs : 0)))),
  );
  gauge('logcleaner', 'max_compaction_delay_secs', 'max-compaction-delay-secs: the most overdue log past max.compaction.lag.ms at the last decisions', (c) =>
    Math.trunc(Math.max(0, ...c.lastPreCleanStats.map((s) => s.maxCompactionDelayMs)) / 1000),
  );
  gauge('logcleaner', 'deadthreadcount', 'DeadThreadCount: cleaner loops stopped by an unexpected error', (c) => c.deadThreadCount);
  gauge('logcleanermanager', 'max_dirty_percent', 'max-dirty-percent: the dirtiest log at the last decision', (c) =>
    Math.trunc(100 * c.cleanerManager.dirtiestLogCleanableRatio),
  );
  gauge('logcleanermanager', 'time_since_last_run_ms', 'time-since-last-run-ms: since the cleaner last chose a log', (c) =>
    Math.max(0, c.now() - c.cleanerManager.timeOfLastRun),
  );
  const perDir = (name: string, help: string, value: (s: { partitions: number; bytes: number }) => number) =>
    collectedGauge(registry, `kafka_log_logcleanermanager_${name}`, `${help} (kafka.log:type=LogCleanerManager).`, ['logDirectory'], (set) => {
      const c = cleaner();
      if (!c) return;
      for (const s of c.cleanerManager.uncleanableStats(c.now())) set({ logDirectory: s.logDir }, value(s));
    });
  perDir('uncleanable_partitions_count', 'uncleanable-partitions-count: partitions a cleaning pass failed on', (s) => s.partitions);
  perDir('uncleanable_bytes', 'uncleanable-bytes: the cleanable bytes of the uncleanable partitions', (s) => s.bytes);
}
