/**
 * ListOffsets (2), v0-10.
 * Per partition: earliest (-2) = log start offset; latest (-1) = high watermark, or the last stable
 * offset under read_committed (v2+); max timestamp (-3, v7+) = the record with the largest
 * timestamp; earliest-local (-4, v8+) = the local log start offset (the log start offset unless the
 * log is tiered); latest-tiered (-5, v9+) = the highest offset in remote storage (-1 unless
 * tiered); earliest-pending-upload (-6, v10) = -1; a timestamp >= 0 = the first record whose
 * timestamp is >= it, never past the fetchable end (else offset -1, timestamp -1). On a tiered log
 * the search starts in remote storage and falls back to the local segments (Kafka's
 * asyncOffsetRead), bounded by the request's TimeoutMs (v10) or remote.list.offsets.request.timeout.ms:
 * a search still running then is REQUEST_TIMED_OUT for that partition.
 * v0 answers in old_style_offsets. current_leader_epoch (v4+) is checked (FENCED_LEADER_EPOCH /
 * UNKNOWN_LEADER_EPOCH). A partition listed twice (v1+) is answered once, with INVALID_REQUEST
 * (ReplicaManager.fetchOffset keys its answers by partition); v0 answers every listing (Kafka's
 * legacy path had no such check). The response groups partitions by topic in order of first
 * appearance. A partition the metadata does not have is UNKNOWN_TOPIC_OR_PARTITION. Right after a leader
 * election, while the new leader's high watermark is still below the start of its leader epoch,
 * a client asking for the latest offset (or a timestamp past the high watermark) gets
 * OFFSET_NOT_AVAILABLE (retriable), as in Kafka, rather than an offset that is about to grow.
 * Authorization (KafkaApis.handleListOffsetRequest): DESCRIBE on each TOPIC, consumers and
 * followers alike; every partition of a topic without it is TOPIC_AUTHORIZATION_FAILED (timestamp
 * and offset -1), answered per listing after the authorized topics, as Kafka appends them.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/generated/list-offsets';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { topicPartitionKey } from '../../common/topic-partition';
import { PartitionMap, groupByTopic } from './request-partitions';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

const LATEST = -1n;
const EARLIEST = -2n;

export const listOffsetsHandler = defineHandler<ListOffsetsRequest, ListOffsetsResponse>({
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 10,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const remoteTimeoutMs = (): number => (v >= 10 && req.timeoutMs > 0 ? req.timeoutMs : broker.config.getLong('remote.list.offsets.request.timeout.ms'));
    const readCommitted = v >= 2 && req.isolationLevel === 1;
    const isFollower = req.replicaId >= 0;
    const [describable, denied] = authHelper(broker.authorizer, ctx).partitionByAuthorized(AclOperation.DESCRIBE, ResourceType.TOPIC, req.topics, (t) => t.name);
    const unauthorized = denied.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        timestamp: -1n,
        offset: -1n,
        leaderEpoch: -1,
        oldStyleOffsets: [] as bigint[],
      })),
    }));
    const seen = new Map<string, number>();
    for (const t of req.topics) for (const p of t.partitions) seen.set(topicPartitionKey(t.name, p.partitionIndex), (seen.get(topicPartitionKey(t.name, p.partitionIndex)) ?? 0) + 1);
    type Asked = (typeof req.topics)[number]['partitions'][number];
    // v1+: one answer per partition (a duplicate's is INVALID_REQUEST); v0: one per listing.
    let asked: [string, Asked[]][];
    if (v === 0) {
      asked = describable.map((t) => [t.name, t.partitions]);
    } else {
      const once = new PartitionMap<Asked>();
      for (const t of describable) for (const p of t.partitions) once.set(t.name, p.partitionIndex, p);
      asked = groupByTopic(once.values(), (e) => e.topic).map(([name, ps]) => [name, ps.map((e) => e.value)]);
    }
    const answered = {
      topics: await Promise.all(asked.map(async ([name, partitions]) => ({
        name,
        partitions: await Promise.all(partitions.map(async (p) => {
          const base = { partitionIndex: p.partitionIndex, timestamp: -1n, offset: -1n, leaderEpoch: -1, oldStyleOffsets: [] as bigint[] };
          try {
            if (v >= 1 && seen.get(topicPartitionKey(name, p.partitionIndex))! > 1) {
              throw new KafkaError(ErrorCode.INVALID_REQUEST, 'partition listed more than once');
            }
            const part = broker.replicaManager.leaderPartitionOrThrow(name, p.partitionIndex);
            if (v >= 4) part.checkLeaderEpoch(p.currentLeaderEpoch);
            const log = part.log;
            const fetchableEnd = isFollower ? log.logEndOffset : readCommitted ? log.lastStableOffset : log.highWatermark;
            let found: { timestamp: bigint; offset: bigint; leaderEpoch: number } | null;
            const lagging = !isFollower && part.leaderEpochStartOffset !== null && part.leaderEpochStartOffset > log.highWatermark;
            const notAvailable = () =>
              new KafkaError(
                ErrorCode.OFFSET_NOT_AVAILABLE,
                `the high watermark (${log.highWatermark}) of ${name}-${p.partitionIndex} is behind the start offset of leader epoch ${part.leaderEpoch} (${part.leaderEpochStartOffset})`,
              );
            if (p.timestamp === LATEST) {
              if (lagging) throw notAvailable();
              found = { timestamp: -1n, offset: fetchableEnd, leaderEpoch: part.leaderEpoch };
            } else if (p.timestamp === EARLIEST) found = log.fetchOffsetByTimestamp(EARLIEST);
            else {
              found = null;
              const tiered = broker.tieredStorage;
              if (p.timestamp >= 0n && tiered && log.remoteLogEnabled()) {
                found = await withTimeout(
                  tiered.findOffsetByTimestamp({ topicId: part.topicId, topic: name, partition: p.partitionIndex }, p.timestamp, log.logStartOffset),
                  remoteTimeoutMs(),
                  () => new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `looking up timestamp ${p.timestamp} of ${name}-${p.partitionIndex} in remote storage took more than ${remoteTimeoutMs()} ms`),
                );
              }
              if (!found) found = log.fetchOffsetByTimestamp(p.timestamp);
              if (found && found.offset >= 0n && found.offset >= fetchableEnd) {
                if (lagging) throw notAvailable();
                found = null;
              }
            }
            if (v === 0) {
              return { ...base, errorCode: ErrorCode.NONE, oldStyleOffsets: found && found.offset >= 0n ? [found.offset] : [] };
            }
            return {
              ...base,
              errorCode: ErrorCode.NONE,
              timestamp: found ? found.timestamp : -1n,
              offset: found ? found.offset : -1n,
              // leader_epoch exists from v4 and may not be written to older versions.
              leaderEpoch: v >= 4 && found ? found.leaderEpoch : -1,
            };
          } catch (err) {
            if (!(err instanceof KafkaError)) broker.logger.error('ListOffsets failed', { topic: name, partition: p.partitionIndex, err });
            const code = toErrorCode(err);
            // OFFSET_NOT_AVAILABLE is new in v5; older clients get LEADER_NOT_AVAILABLE (Kafka does the same).
            return { ...base, errorCode: code === ErrorCode.OFFSET_NOT_AVAILABLE && v < 5 ? ErrorCode.LEADER_NOT_AVAILABLE : code };
          }
        })),
      }))),
    };
    return { topics: [...answered.topics, ...unauthorized] };
  },
});

/** `p`, or `timeoutError()` if it has not settled within `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeoutError()), ms);
      timer.unref?.();
    }),
  ]).finally(() => clearTimeout(timer));
}
