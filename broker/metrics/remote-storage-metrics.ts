/**
 * Tiered storage's metrics (Kafka's RemoteStorageMetrics, KIP-405 / KIP-963, in
 * kafka.server:type=BrokerTopicMetrics) as the Strimzi JMX exporter names them: the *PerSec meters
 * as kafka_server_brokertopicmetrics_<name>_total counters, the gauges as
 * kafka_server_brokertopicmetrics_<name>; each with a `topic` label for a topic's MBean and none for
 * the all-topics one. Read from the remote log manager at scrape time; nothing while tiered
 * storage is off.
 *   remotecopybytes / remotecopyrequests / failedremotecopyrequests  segments copied, and the copies tried / failed
 *   remotefetchbytes / remotefetchrequests / failedremotefetchrequests  remote reads for consumers
 *   remotedeleterequests / failedremotedeleterequests  remote segments deleted (retention, cleanup)
 *   remotecopylagbytes / remotecopylagsegments  rolled local segments not yet copied (leaders' last pass)
 *   remotelogsizebytes / remotelogmetadatacount  the remote segments of the partitions led here
 */
import type { Registry } from 'prom-client';
import { collectedCounter, collectedGauge } from './collected';
import type { RemoteLogManager, RemoteTopicStats } from '../../storage/remote/remote-log-manager';

type CounterField = 'remoteCopyBytes' | 'remoteCopyRequests' | 'failedRemoteCopyRequests' | 'remoteFetchBytes' | 'remoteFetchRequests' | 'failedRemoteFetchRequests' | 'remoteDeleteRequests' | 'failedRemoteDeleteRequests';
type GaugeField = 'remoteCopyLagBytes' | 'remoteCopyLagSegments' | 'remoteLogSizeBytes' | 'remoteLogMetadataCount';

const COUNTERS: readonly [CounterField, string][] = [
  ['remoteCopyBytes', 'RemoteCopyBytesPerSec: bytes of the segments copied to remote storage'],
  ['remoteCopyRequests', 'RemoteCopyRequestsPerSec: segment copies started'],
  ['failedRemoteCopyRequests', 'FailedRemoteCopyRequestsPerSec: segment copies that failed'],
  ['remoteFetchBytes', 'RemoteFetchBytesPerSec: bytes read from remote storage for consumers'],
  ['remoteFetchRequests', 'RemoteFetchRequestsPerSec: reads from remote storage for consumers'],
  ['failedRemoteFetchRequests', 'FailedRemoteFetchRequestsPerSec: reads from remote storage that failed'],
  ['remoteDeleteRequests', 'RemoteDeleteRequestsPerSec: remote segment deletions started'],
  ['failedRemoteDeleteRequests', 'FailedRemoteDeleteRequestsPerSec: remote segment deletions that failed'],
];

const GAUGES: readonly [GaugeField, string][] = [
  ['remoteCopyLagBytes', 'RemoteCopyLagBytes: bytes of rolled local segments not yet copied'],
  ['remoteCopyLagSegments', 'RemoteCopyLagSegments: rolled local segments not yet copied'],
  ['remoteLogSizeBytes', 'RemoteLogSizeBytes: bytes of the remote segments'],
  ['remoteLogMetadataCount', 'RemoteLogMetadataCount: remote segments'],
];

const sum = (m: ReadonlyMap<number, number>): number => {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
};

export function registerRemoteStorageMetrics(registry: Registry, rlm: () => RemoteLogManager | null): void {
  const each = (fn: (topic: string, s: RemoteTopicStats) => void): void => {
    const m = rlm();
    if (!m) return;
    for (const [topic, s] of m.stats) fn(topic, s);
  };
  for (const [field, help] of COUNTERS) {
    const name = help.split(':')[0];
    collectedCounter(registry, `kafka_server_brokertopicmetrics_${name.replace(/PerSec$/, '').toLowerCase()}_total`, `${help} (kafka.server:type=BrokerTopicMetrics,name=${name}).`, ['topic'], (set) => {
      if (!rlm()) return;
      let all = 0;
      each((topic, s) => {
        set({ topic }, s[field]);
        all += s[field];
      });
      set({}, all);
    });
  }
  for (const [field, help] of GAUGES) {
    const name = help.split(':')[0];
    collectedGauge(registry, `kafka_server_brokertopicmetrics_${name.toLowerCase()}`, `${help} (kafka.server:type=BrokerTopicMetrics,name=${name}).`, ['topic'], (set) => {
      if (!rlm()) return;
      let all = 0;
      each((topic, s) => {
        const v = sum(s[field]);
        set({ topic }, v);
        all += v;
      });
      set({}, all);
    });
  }
}
