/**
 * Fetch (1), v4-17, on the controller listener: brokers read the metadata log, partition 0 of
 * `__cluster_metadata` (by name before v13, by Kafka's fixed metadata topic id from v13), from the
 * offset after the last record they applied. Every record in the log is committed (one controller),
 * so the high watermark is the log end. An empty answer waits up to max_wait_ms for the next
 * commit (long poll, woken by the commit, never polled). Other topics: UNKNOWN_TOPIC_OR_PARTITION
 * (UNKNOWN_TOPIC_ID from v13); an offset past the end: OFFSET_OUT_OF_RANGE.
 * Not implemented: fetch sessions (session id 0, every request is full), snapshots (the log is
 * never compacted, so the whole log is always there).
 * Authorization (ControllerApis.handleFetch): CLUSTER_ACTION on the CLUSTER, else
 * FetchRequest.getErrorResponse: CLUSTER_AUTHORIZATION_FAILED at the top level and, before v13, on
 * every partition asked (v13+: no partitions); the request's session id is echoed.
 */
import { ErrorCode } from '../../../protocol/errors';
import type { Input } from '../../../protocol/primitives/input';
import type { FetchRequest, FetchResponse, FetchResponseFetchableTopicResponse } from '../../../protocol/generated/fetch';
import { ApiKey } from '../../../protocol/generated';
import { METADATA_TOPIC } from '../../../metadata/metadata-log-store';
import { METADATA_TOPIC_ID } from '../../../protocol/primitives/uuid';
import { defineControllerHandler } from './define';
import { authHelper } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';

const EMPTY = Buffer.alloc(0);

export const controllerFetchHandler = defineControllerHandler<FetchRequest, FetchResponse>({
  apiKey: ApiKey.Fetch,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.CLUSTER_ACTION)) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return {
        errorCode,
        sessionId: v >= 7 ? req.sessionId : 0,
        responses:
          v >= 13
            ? []
            : req.topics.map((t) => ({
                topic: t.topic,
                partitions: t.partitions.map((p) => ({
                  partitionIndex: p.partition,
                  errorCode,
                  highWatermark: -1n,
                  lastStableOffset: -1n,
                  logStartOffset: v >= 5 ? -1n : undefined,
                  abortedTransactions: null,
                  records: EMPTY,
                })),
              })),
      };
    }
    const isMetadata = (t: FetchRequest['topics'][number]) => (v >= 13 ? t.topicId === METADATA_TOPIC_ID : t.topic === METADATA_TOPIC);
    const wanted = req.topics.find(isMetadata)?.partitions.find((p) => p.partition === 0);
    const log = node.metadataLog;
    if (wanted && wanted.fetchOffset === log.logEndOffset && req.maxWaitMs > 0) {
      await node.waitForAppend(wanted.fetchOffset, req.maxWaitMs);
    }
    const end = log.logEndOffset;
    const responses: Input<FetchResponseFetchableTopicResponse>[] = req.topics.map((t) => ({
      topic: v < 13 ? t.topic : undefined,
      topicId: v >= 13 ? t.topicId : undefined,
      partitions: t.partitions.map((p) => {
        const base = { partitionIndex: p.partition, records: EMPTY, abortedTransactions: v >= 4 ? null : undefined };
        if (!isMetadata(t) || p.partition !== 0) {
          return { ...base, errorCode: v >= 13 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: v >= 5 ? -1n : undefined };
        }
        const offsets = { highWatermark: end, lastStableOffset: end, logStartOffset: v >= 5 ? 0n : undefined };
        if (p.fetchOffset > end || p.fetchOffset < 0n) return { ...base, ...offsets, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
        if (p.fetchOffset === end) return { ...base, ...offsets, errorCode: ErrorCode.NONE };
        const data = log.read(p.fetchOffset, Math.max(1, Math.min(p.partitionMaxBytes, req.maxBytes)));
        const records = data.records.length === 1 ? data.records[0] : Buffer.concat(data.records);
        return { ...base, ...offsets, errorCode: ErrorCode.NONE, records };
      }),
    }));
    return { errorCode: ErrorCode.NONE, sessionId: 0, responses };
  },
});
