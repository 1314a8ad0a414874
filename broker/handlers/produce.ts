/**
 * Produce (0), v3-11 (record batch v2 only, as Kafka 4.0).
 * acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for every partition). Each partition's record
 * set must hold exactly one v2 batch (INVALID_RECORD otherwise, and zstd needs v7+:
 * UNSUPPORTED_COMPRESSION_TYPE), then goes through the log's validation (CORRUPT_MESSAGE,
 * MESSAGE_TOO_LARGE, INVALID_TIMESTAMP, INVALID_RECORD with record_errors v8+). Unknown partitions
 * get UNKNOWN_TOPIC_OR_PARTITION (Produce does not create topics), partitions led elsewhere
 * NOT_LEADER_OR_FOLLOWER. acks=-1 waits until the ISR has the batch (NOT_ENOUGH_REPLICAS before
 * append when the ISR is below min.insync.replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND after, or
 * REQUEST_TIMED_OUT after timeout_ms). acks=0 sends no response at all; if any partition failed, the
 * connection is closed instead (Kafka's way of telling a fire-and-forget producer).
 * Idempotent producers: a batch repeating one of the producer's last five is answered with its
 * original offsets and not written again; OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH.
 * Transactional batches (transactional_id set): with transaction.partition.verification.enable
 * (default true), a batch that would start a transaction in a partition is first verified with the
 * transaction coordinator (AddPartitionsToTxn verify_only, KIP-890): a partition the producer did
 * not add gets INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v11), a fenced producer
 * INVALID_PRODUCER_EPOCH, an unreachable or busy coordinator NOT_ENOUGH_REPLICAS (retriable). A
 * non-transactional write by a producer with an open transaction is INVALID_TXN_STATE.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import type { ProduceRequest, ProduceResponse, ProduceResponseTopicProduceResponse } from '../../protocol/generated/produce';
import { CompressionType, CURRENT_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, ATTRIBUTES_OFFSET } from '../../protocol/records/record-batch';
import { ApiKey } from '../../protocol/generated';
import type { ProducePartitionRequest, ProducePartitionResult } from '../../replication/replica-manager';
import { CloseConnection, defineHandler } from './define-handler';
import { topicPartitionKey } from '../../common/topic-partition';

/** Kafka's ProduceRequest.validateRecords: an error code, or NONE. */
function checkRecordSet(records: Buffer | null, version: number): { code: number; message: string | null } {
  if (records === null || records.length < LOG_OVERHEAD + 5) {
    return { code: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${version} must have at least one record batch per partition` };
  }
  const magic = records.readInt8(MAGIC_OFFSET);
  if (magic !== CURRENT_MAGIC) {
    return { code: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${version} are only allowed to contain record batches with magic version 2` };
  }
  if (records.length >= ATTRIBUTES_OFFSET + 2 && version < 7 && (records.readInt16BE(ATTRIBUTES_OFFSET) & 0x07) === CompressionType.ZSTD) {
    return { code: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message: `Produce requests with version ${version} are not allowed to use ZStandard compression` };
  }
  const batchSize = records.readInt32BE(8) + LOG_OVERHEAD;
  if (batchSize < records.length) {
    return { code: ErrorCode.INVALID_RECORD, message: `Produce requests with version ${version} are only allowed to contain exactly one record batch per partition` };
  }
  return { code: ErrorCode.NONE, message: null };
}

export const produceHandler = defineHandler<ProduceRequest, ProduceResponse>({
  apiKey: ApiKey.Produce,
  name: 'Produce',
  minVersion: 3,
  maxVersion: 11,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const entries: ProducePartitionRequest[] = [];
    const rejected = new Map<string, ProducePartitionResult>();
    for (const t of req.topicData) {
      for (const p of t.partitionData) {
        const check = checkRecordSet(p.records, v);
        if (check.code !== ErrorCode.NONE) {
          rejected.set(topicPartitionKey(t.name, p.index), {
            topic: t.name,
            partition: p.index,
            errorCode: check.code,
            errorMessage: check.message,
            baseOffset: -1n,
            logAppendTimeMs: -1n,
            logStartOffset: -1n,
            recordErrors: [],
          });
          continue;
        }
        entries.push({ topic: t.name, partition: p.index, records: p.records! });
      }
    }
    const results = await broker.replicaManager.appendRecords({
      timeoutMs: req.timeoutMs,
      requiredAcks: req.acks,
      entries,
      internalTopicsAllowed: false,
      requestVersion: v,
      transactionalId: req.transactionalId,
    });
    const byKey = new Map(results.map((r) => [topicPartitionKey(r.topic, r.partition), r]));
    for (const [k, r] of rejected) byKey.set(k, r);
    if (req.acks === 0) {
      // No response; but a failed acks=0 produce closes the connection, as Kafka does, so the
      // producer notices (it refreshes metadata and reconnects) instead of losing records silently.
      const failed = [...byKey.values()].filter((r) => r.errorCode !== ErrorCode.NONE);
      if (failed.length > 0) {
        throw new CloseConnection(
          `acks=0 produce failed for ${failed.map((r) => `${r.topic}-${r.partition}: ${errorName(r.errorCode)}`).join(', ')}`,
        );
      }
      return null;
    }
    const responses: Input<ProduceResponseTopicProduceResponse>[] = req.topicData.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p) => {
        const r = byKey.get(topicPartitionKey(t.name, p.index))!;
        return {
          index: p.index,
          errorCode: r.errorCode,
          baseOffset: r.baseOffset,
          logAppendTimeMs: r.logAppendTimeMs,
          logStartOffset: r.logStartOffset,
          recordErrors: v >= 8 ? r.recordErrors : [],
          errorMessage: v >= 8 ? r.errorMessage : null,
        };
      }),
    }));
    return { responses };
  },
});
