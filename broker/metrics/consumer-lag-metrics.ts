/**
 * Consumer group lag computed on the broker, with kafka_exporter's names and labels:
 *   kafka_consumergroup_current_offset{consumergroup,topic,partition}  the committed offset
 *   kafka_consumergroup_lag{consumergroup,topic,partition}             high watermark - committed
 *   kafka_consumergroup_lag_sum{consumergroup,topic}                   summed over the partitions
 *   kafka_topic_partition_current_offset{topic,partition}              the high watermark
 * for the groups this broker coordinates and the partitions it leads (the high watermark is the
 * leader's; kafka_exporter asks each leader with ListOffsets). A partition led by another broker
 * of a cluster is reported by that broker's kafka_topic_partition_current_offset only, so
 * cluster-wide lag is that broker's offset minus this one's committed offset. Partitions without a
 * committed offset (-1) have no lag series; lag is never negative (a commit can run ahead of a
 * follower's view of the high watermark but not of the leader's, which is the one used).
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator';
import type { Partition } from '../../replication/partition';

export interface LagSource {
  groups: GroupCoordinator;
  leaderPartition(topic: string, partition: number): Partition | undefined;
  allPartitions(): Iterable<Partition>;
}

interface LagRow {
  group: string;
  topic: string;
  partition: number;
  committed: number;
  lag: number | null;
}

function lagRows(src: LagSource): LagRow[] {
  const rows: LagRow[] = [];
  const om = src.groups.offsetManager;
  for (const group of om.groupIds()) {
    for (const t of om.fetchOffsets(group, null, false)) {
      for (const p of t.partitions) {
        if (p.committedOffset < 0n) continue;
        const leader = src.leaderPartition(t.name, p.partitionIndex);
        const lag = leader ? leader.log.highWatermark - p.committedOffset : null;
        rows.push({ group, topic: t.name, partition: p.partitionIndex, committed: Number(p.committedOffset), lag: lag === null ? null : Number(lag < 0n ? 0n : lag) });
      }
    }
  }
  return rows;
}

export function registerConsumerLagMetrics(registry: Registry, src: LagSource): void {
  collectedGauge(registry, 'kafka_consumergroup_current_offset', 'Committed offset of a consumer group in a partition.', ['consumergroup', 'topic', 'partition'], (set) => {
    for (const r of lagRows(src)) set({ consumergroup: r.group, topic: r.topic, partition: r.partition }, r.committed);
  });
  collectedGauge(registry, 'kafka_consumergroup_lag', 'High watermark minus the committed offset, for partitions led here.', ['consumergroup', 'topic', 'partition'], (set) => {
    for (const r of lagRows(src)) if (r.lag !== null) set({ consumergroup: r.group, topic: r.topic, partition: r.partition }, r.lag);
  });
  collectedGauge(registry, 'kafka_consumergroup_lag_sum', 'Lag of a consumer group summed over the partitions of a topic led here.', ['consumergroup', 'topic'], (set) => {
    const sums = new Map<string, { group: string; topic: string; lag: number }>();
    for (const r of lagRows(src)) {
      if (r.lag === null) continue;
      const k = `${r.group}\u0000${r.topic}`;
      const e = sums.get(k) ?? { group: r.group, topic: r.topic, lag: 0 };
      e.lag += r.lag;
      sums.set(k, e);
    }
    for (const e of sums.values()) set({ consumergroup: e.group, topic: e.topic }, e.lag);
  });
  collectedGauge(registry, 'kafka_topic_partition_current_offset', 'High watermark of a partition led here.', ['topic', 'partition'], (set) => {
    for (const p of src.allPartitions()) if (p.isLeader && !p.log.isOffline) set({ topic: p.topic, partition: p.partition }, Number(p.log.highWatermark));
  });
}
