/**
 * DescribeLogDirs (35), v0-4, as KafkaApis.handleDescribeLogDirsRequest and
 * ReplicaManager.describeLogDirs.
 * One result per configured log directory (log.dirs, else log.dir; absolute paths, in config
 * order): an offline directory is KAFKA_STORAGE_ERROR with nothing else; an online one lists, per
 * topic (in name order), the asked partitions whose log is in it with the bytes of their segments,
 * the offset lag (high watermark minus log end offset, at least 0, or -1 when this broker does not
 * serve the partition), and is_future false; a future replica (a move by AlterReplicaLogDirs in
 * progress) is listed in its own directory with is_future true and the offset lag of the copy
 * (current log end offset minus the future's, at least 0); topics with no partition to report are
 * left out. v4+: the total
 * and usable bytes of the directory's volume (statfs; storage/file-store.ts).
 * topics null = every partition this broker has a log of; a partition listed twice counts once.
 * Authorization: DESCRIBE on the CLUSTER, else no results and, from v3, CLUSTER_AUTHORIZATION_FAILED
 * at the top level (v0-2 have no field for it: the answer is just empty).
 */
import * as path from 'node:path';
import { ErrorCode, toErrorCode } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse, DescribeLogDirsResponseDescribeLogDirsResult } from '../../protocol/generated/describe-log-dirs';
import { ApiKey } from '../../protocol/generated';
import { topicPartitionKey } from '../../common/topic-partition';
import { fileStoreSpace } from '../../storage/file-store';
import type { UnifiedLog } from '../../storage/unified-log';
import type { Broker } from '../broker';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';

/** Kafka's DescribeLogDirsResponse.INVALID_OFFSET_LAG. */
const INVALID_OFFSET_LAG = -1n;

export const describeLogDirsHandler = defineHandler<DescribeLogDirsRequest, DescribeLogDirsResponse>({
  apiKey: ApiKey.DescribeLogDirs,
  name: 'DescribeLogDirs',
  minVersion: 0,
  maxVersion: 4,
  handle(broker, ctx, req) {
    if (!authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
    }
    let wanted: Set<string> | null = null;
    if (req.topics !== null) {
      wanted = new Set();
      for (const t of req.topics) for (const p of t.partitions) wanted.add(topicPartitionKey(t.topic, p));
    }
    return { errorCode: ErrorCode.NONE, results: describeLogDirs(broker, wanted) };
  },
});

function describeLogDirs(broker: Broker, wanted: Set<string> | null): Input<DescribeLogDirsResponseDescribeLogDirsResult>[] {
  const online = new Map(broker.logManager.logDirs.map((d) => [d.path, d.online]));
  const logsByDir = new Map<string, { log: UnifiedLog; isFuture: boolean }[]>();
  const add = (log: UnifiedLog, isFuture: boolean) => {
    const list = logsByDir.get(log.parentDir);
    if (list) list.push({ log, isFuture });
    else logsByDir.set(log.parentDir, [{ log, isFuture }]);
  };
  for (const log of broker.logManager.allLogs()) add(log, false);
  for (const log of broker.logManager.allFutureLogs()) add(log, true);
  const seen = new Set<string>();
  const results: Input<DescribeLogDirsResponseDescribeLogDirsResult>[] = [];
  for (const configured of broker.config.logDirs()) {
    const dir = path.resolve(configured);
    if (seen.has(dir)) continue;
    seen.add(dir);
    if (online.get(dir) !== true) {
      broker.logger.warn(`Unable to describe replica dirs for ${dir}: the log directory is offline`);
      results.push({ errorCode: ErrorCode.KAFKA_STORAGE_ERROR, logDir: dir, topics: [] });
      continue;
    }
    try {
      const space = fileStoreSpace(dir);
      const byTopic = new Map<string, { partitionIndex: number; partitionSize: bigint; offsetLag: bigint; isFutureKey: boolean }[]>();
      for (const { log, isFuture } of logsByDir.get(dir) ?? []) {
        const { topic, partition } = log.topicPartition;
        if (wanted && !wanted.has(topicPartitionKey(topic, partition))) continue;
        if (isFuture && log.isOffline) continue;
        let list = byTopic.get(topic);
        if (!list) byTopic.set(topic, (list = []));
        list.push({ partitionIndex: partition, partitionSize: BigInt(log.size), offsetLag: isFuture ? futureOffsetLag(broker, log) : offsetLag(broker, log), isFutureKey: isFuture });
      }
      const topics = [...byTopic]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, partitions]) => ({ name, partitions: partitions.sort((a, b) => a.partitionIndex - b.partitionIndex || Number(a.isFutureKey) - Number(b.isFutureKey)) }));
      results.push({ errorCode: ErrorCode.NONE, logDir: dir, topics, totalBytes: space.totalBytes, usableBytes: space.usableBytes });
    } catch (err) {
      broker.logger.error(`Error while describing replicas in dir ${dir}`, { err });
      results.push({ errorCode: toErrorCode(err), logDir: dir, topics: [] });
    }
  }
  return results;
}

/** Kafka's getLogEndOffsetLag for a future replica: how far its copy is behind the current log. */
function futureOffsetLag(broker: Broker, future: UnifiedLog): bigint {
  const { topic, partition } = future.topicPartition;
  const served = broker.replicaManager.getPartition(topic, partition);
  if (!served || served.log.isOffline) return INVALID_OFFSET_LAG;
  const lag = served.log.logEndOffset - future.logEndOffset;
  return lag > 0n ? lag : 0n;
}

/** Kafka's ReplicaManager.getLogEndOffsetLag for a current (not future) log. */
function offsetLag(broker: Broker, log: UnifiedLog): bigint {
  const { topic, partition } = log.topicPartition;
  const served = broker.replicaManager.getPartition(topic, partition);
  if (!served || served.log !== log || log.isOffline) return INVALID_OFFSET_LAG;
  const lag = log.highWatermark - log.logEndOffset;
  return lag > 0n ? lag : 0n;
}
