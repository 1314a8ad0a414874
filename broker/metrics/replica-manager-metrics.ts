/**
 * ReplicaManager's gauges and meters (kafka.server:type=ReplicaManager), Strimzi JMX exporter names:
 *   kafka_server_replicamanager_partitioncount, _leadercount, _underreplicatedpartitions,
 *   _underminisrpartitioncount, _atminisrpartitioncount, _offlinereplicacount (gauges, read from
 *   the hosted partitions at scrape time, as Kafka's gauges are), and
 *   kafka_server_replicamanager_isrshrinks_total, _isrexpands_total (IsrShrinksPerSec,
 *   IsrExpandsPerSec: ISR changes of partitions led here that the controller committed, counted
 *   as they commit, as Kafka marks them), and
 *   kafka_server_replicafetchermanager_maxlag{clientId="Replica"}  MaxLag: the largest lag (leader
 *   high watermark minus this follower's log end offset, at the last fetch answer) of any
 *   partition followed here; 0 on a broker that follows nothing.
 */
import type { Registry } from 'prom-client';
import { collectedCounter, collectedGauge } from './collected';
import type { Partition } from '../../replication/partition';

/** ISR changes committed for partitions this broker leads. */
export class IsrChangeStats {
  shrinks = 0;
  expands = 0;

  record(kind: 'expand' | 'shrink'): void {
    if (kind === 'shrink') this.shrinks++;
    else this.expands++;
  }
}

export interface ReplicaManagerMetricsSource {
  allPartitions(): Iterable<Partition>;
  minInsyncReplicas(topic: string): number;
  /** The follower fetchers' MaxLag; null on a node without replication (combined node). */
  maxFollowerLag(): bigint | null;
}

export function registerReplicaManagerMetrics(registry: Registry, source: ReplicaManagerMetricsSource, isr: IsrChangeStats): void {
  const counts = () => {
    let partitions = 0;
    let leaders = 0;
    let underReplicated = 0;
    let underMinIsr = 0;
    let atMinIsr = 0;
    let offline = 0;
    for (const p of source.allPartitions()) {
      partitions++;
      if (p.log.isOffline) offline++;
      if (!p.isLeader) continue;
      leaders++;
      const isrSize = p.isr.length;
      if (isrSize < p.replicas.length) underReplicated++;
      const minIsr = source.minInsyncReplicas(p.topic);
      if (isrSize < minIsr) underMinIsr++;
      else if (isrSize === minIsr) atMinIsr++;
    }
    return { partitions, leaders, underReplicated, underMinIsr, atMinIsr, offline };
  };
  const gauge = (name: string, help: string, pick: (c: ReturnType<typeof counts>) => number) =>
    collectedGauge(registry, `kafka_server_replicamanager_${name}`, `${help} (kafka.server:type=ReplicaManager).`, [], (set) => set({}, pick(counts())));
  gauge('partitioncount', 'PartitionCount: partitions with a replica on this broker', (c) => c.partitions);
  gauge('leadercount', 'LeaderCount: partitions this broker leads', (c) => c.leaders);
  gauge('underreplicatedpartitions', 'UnderReplicatedPartitions: partitions led here whose ISR is smaller than the replica set', (c) => c.underReplicated);
  gauge('underminisrpartitioncount', 'UnderMinIsrPartitionCount: partitions led here whose ISR is below min.insync.replicas', (c) => c.underMinIsr);
  gauge('atminisrpartitioncount', 'AtMinIsrPartitionCount: partitions led here whose ISR is exactly min.insync.replicas', (c) => c.atMinIsr);
  gauge('offlinereplicacount', 'OfflineReplicaCount: replicas on this broker in an offline log directory', (c) => c.offline);
  collectedGauge(registry, 'kafka_server_replicafetchermanager_maxlag', 'MaxLag: largest lag in messages of a partition this broker follows (kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica).', ['clientId'], (set) => {
    const lag = source.maxFollowerLag();
    if (lag !== null) set({ clientId: 'Replica' }, Number(lag));
  });
  collectedCounter(registry, 'kafka_server_replicamanager_isrshrinks_total', 'IsrShrinksPerSec: committed ISR shrinks of partitions led here (kafka.server:type=ReplicaManager).', [], (set) => set({}, isr.shrinks));
  collectedCounter(registry, 'kafka_server_replicamanager_isrexpands_total', 'IsrExpandsPerSec: committed ISR expansions of partitions led here (kafka.server:type=ReplicaManager).', [], (set) => set({}, isr.expands));
}
