/**
 * Produce (0), v3-12 (record batch v2 only, as Kafka 4.0; v12 is v11's format).
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
 * v12 (KIP-890 part 2): the producer sends no AddPartitionsToTxn; a transactional batch that would
 * start a transaction in a partition makes the leader add the partition to the producer's
 * transaction (AddPartitionsToTxn v5, verify_only false), whatever
 * transaction.partition.verification.enable says, with the same error mapping.
 * Order of checks (KafkaApis.handleProduceRequest): a partition the metadata does not have
 * (a negative index, one past the partition count) is UNKNOWN_TOPIC_OR_PARTITION before its
 * records are looked at. A partition listed twice is one partition, as in Kafka's map: its last
 * valid record set is appended once, an invalid listing's error wins in the answer, and the
 * response has one entry per partition, grouped by topic in order of first appearance.
 * Leader discovery (KIP-951, v10+): a partition answered NOT_LEADER_OR_FOLLOWER carries
 * current_leader (id and epoch of the leader this broker knows of) and node_endpoints lists those
 * leaders on the request's listener (current-leader.ts).
 * Quotas: the request's size is recorded against the client's producer_byte_rate; over it, the
 * response carries throttle_time_ms and the connection is muted that long (also for acks=0, which
 * has no response), as Kafka does.
 * Authorization (KafkaApis.handleProduceRequest): a request whose record sets include a
 * transactional batch (the first batch of a partition's records) needs a transactional_id and WRITE
 * on that TRANSACTIONAL_ID, else every partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED and
 * nothing is appended (acks=0: the connection is closed); then WRITE on each TOPIC, a partition of
 * a topic without it TOPIC_AUTHORIZATION_FAILED (checked before it is looked up). Kafka 4.0 checks
 * no IDEMPOTENT_WRITE here: an idempotent producer was authorized by InitProducerId.
 * Metrics (while on): each partition handed to the replica manager counts once in BrokerTopicStats
 * (bytes and messages in when appended, a failed produce request otherwise).
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import type { ProduceRequest, ProduceResponse, ProduceResponseTopicProduceResponse } from '../../protocol/generated/produce';
import { CompressionType, CURRENT_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, ATTRIBUTES_OFFSET } from '../../protocol/records/record-batch';
import { ApiKey } from '../../protocol/generated';
import type { ProducePartitionRequest, ProducePartitionResult } from '../../replication/replica-manager';
import { CloseConnection, defineHandler } from './define-handler';
import { LeaderDiscovery } from './current-leader';
import { PartitionMap, groupByTopic } from './request-partitions';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

/** The transactional bit of a record batch's attributes. */
const TRANSACTIONAL_FLAG = 0x10;

/** Kafka's RequestUtils.hasTransactionalRecords: whether any partition's first batch is transactional. */
function hasTransactionalRecords(req: ProduceRequest): boolean {
  for (const t of req.topicData) {
    for (const p of t.partitionData) {
      const r = p.records;
      if (r && r.length >= ATTRIBUTES_OFFSET + 2 && r.readInt8(MAGIC_OFFSET) >= CURRENT_MAGIC && (r.readInt16BE(ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG) !== 0) return true;
    }
  }
  return false;
}

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
  maxVersion: 12,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    if (hasTransactionalRecords(req) && (req.transactionalId === null || !auth.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId))) {
      // Kafka's ProduceRequest.getErrorResponse: every partition; acks=0 has no response, so the connection closes.
      if (req.acks === 0) throw new CloseConnection('acks=0 produce failed: TRANSACTIONAL_ID_AUTHORIZATION_FAILED');
      const every = new PartitionMap<true>();
      for (const t of req.topicData) for (const p of t.partitionData) every.set(t.name, p.index, true);
      return {
        responses: groupByTopic(every.values(), (e) => e.topic).map(([name, partitions]) => ({
          name,
          partitionResponses: partitions.map((p) => ({
            index: p.partition,
            errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            baseOffset: -1n,
            logAppendTimeMs: -1n,
            logStartOffset: -1n,
            recordErrors: [],
            errorMessage: null,
          })),
        })),
      };
    }
    const writable = auth.filterByAuthorized(AclOperation.WRITE, ResourceType.TOPIC, req.topicData, (t) => t.name);
    // Every partition asked, once, in order of first listing; the valid record sets to append
    // (the last valid one of a partition) and the errors of rejected listings (the last one wins).
    const asked = new PartitionMap<true>();
    const toAppend = new PartitionMap<ProducePartitionRequest>();
    const rejected = new PartitionMap<ProducePartitionResult>();
    const reject = (topic: string, partition: number, code: number, message: string | null) =>
      rejected.set(topic, partition, { topic, partition, errorCode: code, errorMessage: message, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] });
    for (const t of req.topicData) {
      for (const p of t.partitionData) {
        asked.set(t.name, p.index, true);
        if (!writable.has(t.name)) {
          reject(t.name, p.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED, null);
          continue;
        }
        if (!broker.metadata.partition(t.name, p.index)) {
          reject(t.name, p.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null);
          continue;
        }
        const check = checkRecordSet(p.records, v);
        if (check.code !== ErrorCode.NONE) {
          reject(t.name, p.index, check.code, check.message);
          continue;
        }
        toAppend.set(t.name, p.index, { topic: t.name, partition: p.index, records: p.records! });
      }
    }
    const appending = broker.replicaManager.appendRecords({
      timeoutMs: req.timeoutMs,
      requiredAcks: req.acks,
      entries: toAppend.values().map((e) => e.value),
      internalTopicsAllowed: false,
      requestVersion: v,
      transactionalId: req.transactionalId,
    });
    // The append itself has run; with acks=-1 what is left is waiting for the replicas.
    if (req.acks === -1) ctx.parked();
    const results = await appending;
    // producer_byte_rate counts the whole request; the request-time quota does not apply to acks=0
    // (KafkaApis.handleProduceRequest). Either throttle mutes the connection after the answer.
    ctx.throttle(broker.quotas.produce.recordAndGetThrottleTimeMs(ctx.principal.name, ctx.clientId ?? '', ctx.requestBytes, Date.now()));
    const byKey = new PartitionMap<ProducePartitionResult>();
    for (const r of results) byKey.set(r.topic, r.partition, r);
    const stats = broker.topicStats;
    if (stats) for (const r of results) stats.recordProduce(r.topic, toAppend.get(r.topic, r.partition)?.records ?? null, r.errorCode === ErrorCode.NONE);
    for (const { topic, partition, value } of rejected.values()) byKey.set(topic, partition, value);
    if (req.acks === 0) {
      // No response; but a failed acks=0 produce closes the connection, as Kafka does, so the
      // producer notices (it refreshes metadata and reconnects) instead of losing records silently.
      const failed = byKey.values().map((e) => e.value).filter((r) => r.errorCode !== ErrorCode.NONE);
      if (failed.length > 0) {
        throw new CloseConnection(
          `acks=0 produce failed for ${failed.map((r) => `${r.topic}-${r.partition}: ${errorName(r.errorCode)}`).join(', ')}`,
        );
      }
      return null;
    }
    // KIP-951 (v10+): where this broker is not the leader, who is, and how to reach it.
    const leaders = v >= 10 ? new LeaderDiscovery(broker, ctx.connection.listenerName) : null;
    const responses: Input<ProduceResponseTopicProduceResponse>[] = groupByTopic(asked.values(), (e) => e.topic).map(([name, partitions]) => ({
      name,
      partitionResponses: partitions.map((p) => {
        const r = byKey.get(name, p.partition)!;
        return {
          index: p.partition,
          errorCode: r.errorCode,
          baseOffset: r.baseOffset,
          logAppendTimeMs: r.logAppendTimeMs,
          logStartOffset: r.logStartOffset,
          recordErrors: v >= 8 ? r.recordErrors : [],
          errorMessage: v >= 8 ? r.errorMessage : null,
          currentLeader: leaders && r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ? leaders.leaderOf(name, p.partition) : undefined,
        };
      }),
    }));
    return leaders ? { responses, nodeEndpoints: leaders.nodeEndpoints() } : { responses };
  },
});
