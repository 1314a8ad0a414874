/**
 * AlterReplicaLogDirs (34), v1-2 (Kafka 4.0 removed v0, KIP-896), as KafkaApis.
 * handleAlterReplicaLogDirsRequest and ReplicaManager.alterReplicaLogDirs: each partition is moved
 * to the log directory it is listed under (an absolute path of log.dirs) by a future replica that
 * copies the current log in the background and replaces it once caught up
 * (replication/replica-alter-log-dirs-manager.ts); the answer says the move has started, not that
 * it has finished (DescribeLogDirs shows the future replica and its offset lag meanwhile).
 * Per-partition errors: LOG_DIR_NOT_FOUND (not one of log.dirs), KAFKA_STORAGE_ERROR (the directory,
 * the partition's log, or any log directory offline), REPLICA_NOT_AVAILABLE (known partition, no
 * replica here: the directory is recorded for when one is created), UNKNOWN_TOPIC_OR_PARTITION,
 * INVALID_TOPIC_EXCEPTION (a future directory name over 255 characters).
 * A partition listed under two directories takes the last one (Kafka reads them into a map).
 * Results are grouped by topic in the order topics first appear.
 * Authorization: ALTER on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED for every partition.
 */
import { ErrorCode } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import type { AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse, AlterReplicaLogDirsResponseAlterReplicaLogDirTopicResult } from '../../protocol/generated/alter-replica-log-dirs';
import { ApiKey } from '../../protocol/generated';
import { topicPartitionKey } from '../../common/topic-partition';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';

export const alterReplicaLogDirsHandler = defineHandler<AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse>({
  apiKey: ApiKey.AlterReplicaLogDirs,
  name: 'AlterReplicaLogDirs',
  minVersion: 1,
  maxVersion: 2,
  handle(broker, ctx, req) {
    // Kafka's partitionDirs: one destination per partition, the last listed.
    const dirs = new Map<string, { topic: string; partition: number; dir: string }>();
    for (const d of req.dirs) {
      for (const t of d.topics) {
        for (const partition of t.partitions) {
          const key = topicPartitionKey(t.name, partition);
          dirs.delete(key);
          dirs.set(key, { topic: t.name, partition, dir: d.path });
        }
      }
    }
    const authorized = authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.ALTER);
    const results = authorized
      ? broker.replicaManager.alterReplicaLogDirs([...dirs.values()])
      : [...dirs.values()].map(({ topic, partition }) => ({ topic, partition, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED }));
    const byTopic = new Map<string, { partitionIndex: number; errorCode: number }[]>();
    for (const r of results) {
      let ps = byTopic.get(r.topic);
      if (!ps) byTopic.set(r.topic, (ps = []));
      ps.push({ partitionIndex: r.partition, errorCode: r.errorCode });
    }
    const out: Input<AlterReplicaLogDirsResponseAlterReplicaLogDirTopicResult>[] = [...byTopic].map(([topicName, partitions]) => ({ topicName, partitions }));
    return { results: out };
  },
});
