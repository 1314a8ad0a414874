/**
 * WriteTxnMarkers (27), v0-1. Sent by transaction coordinators (krill's own, over the network even
 * to this broker) to the leaders of a transaction's partitions.
 * Per marker (producer id/epoch, COMMIT or ABORT, coordinator epoch) and partition: a control batch
 * with the end-transaction marker is appended as the leader (acks=-1, request.timeout.ms), taking
 * one offset; the partition's producer state closes the transaction (an ABORT gets its .txnindex
 * entry) and the last stable offset can move past it. Markers for __consumer_offsets partitions go
 * through the group coordinator, which then commits or drops the producer's transactional offsets
 * (NOT_LEADER_OR_FOLLOWER while it is loading the partition, so the coordinator retries).
 * Per-partition errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
 * REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR (all retried by the coordinator), INVALID_PRODUCER_EPOCH
 * (a newer producer epoch already wrote there), TRANSACTION_COORDINATOR_FENCED (a newer coordinator
 * epoch already did).
 * A partition this broker does not host (negative index, past the count, another broker's) is
 * UNKNOWN_TOPIC_OR_PARTITION before anything is written (Kafka asks the local log for its magic). A
 * partition listed twice in one marker gets one marker and one answer (Kafka keys both by partition).
 * Authorization (KafkaApis.handleWriteTxnMarkersRequest): ALTER on the CLUSTER (a denial not
 * logged) or else CLUSTER_ACTION on the CLUSTER; without either, every partition of every marker
 * is CLUSTER_AUTHORIZATION_FAILED (WriteTxnMarkersRequest.getErrorResponse) and nothing is written.
 */
import { ErrorCode } from '../../protocol/errors';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/generated/write-txn-markers';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { ApiKey } from '../../protocol/generated';
import { OFFSETS_TOPIC } from '../../config/kafka-config';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { topicPartitionKey } from '../../common/topic-partition';
import { PartitionMap, groupByTopic } from './request-partitions';

export const writeTxnMarkersHandler = defineHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse>({
  apiKey: ApiKey.WriteTxnMarkers,
  name: 'WriteTxnMarkers',
  minVersion: 0,
  maxVersion: 1,
  // A cluster action (a coordinator writing markers): not counted against request quotas, as in Kafka.
  requestQuotaExempt: () => true,
  async handle(broker, ctx, req) {
    const auth = authHelper(broker.authorizer, ctx);
    if (!auth.authorizeCluster(AclOperation.ALTER, { logIfDenied: false }) && !auth.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
      return {
        markers: req.markers.map((m) => {
          const asked = new PartitionMap<true>();
          for (const t of m.topics) for (const p of t.partitionIndexes) asked.set(t.name, p, true);
          return {
            producerId: m.producerId,
            topics: groupByTopic(asked.values(), (e) => e.topic).map(([name, partitions]) => ({
              name,
              partitions: partitions.map(({ partition }) => ({ partitionIndex: partition, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })),
            })),
          };
        }),
      };
    }
    const timeoutMs = broker.config.getInt('request.timeout.ms');
    const markers = await Promise.all(
      req.markers.map(async (m) => {
        const batch = buildEndTxnMarkerBatch({
          type: m.transactionResult ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
          producerId: m.producerId,
          producerEpoch: m.producerEpoch,
          coordinatorEpoch: m.coordinatorEpoch,
          timestamp: Date.now(),
        });
        const errors = new Map<string, number>();
        const others: { topic: string; partition: number; records: Buffer }[] = [];
        const offsets: Promise<void>[] = [];
        const asked = new PartitionMap<true>();
        for (const t of m.topics) for (const p of t.partitionIndexes) asked.set(t.name, p, true);
        for (const { topic, partition: p } of asked.values()) {
          const hosted = broker.replicaManager.getPartition(topic, p);
          if (!hosted || hosted.log.isOffline) {
            errors.set(topicPartitionKey(topic, p), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            continue;
          }
          // Each append patches offsets into its own copy of the batch.
          if (topic === OFFSETS_TOPIC) {
            offsets.push(
              broker.groupCoordinator
                .completeTransaction(p, Buffer.from(batch), m.producerId, m.transactionResult, timeoutMs)
                .then((code) => void errors.set(topicPartitionKey(topic, p), code)),
            );
          } else {
            others.push({ topic, partition: p, records: Buffer.from(batch) });
          }
        }
        if (others.length > 0) {
          const results = await broker.replicaManager.appendRecords({ timeoutMs, requiredAcks: -1, entries: others, internalTopicsAllowed: true });
          for (const r of results) errors.set(topicPartitionKey(r.topic, r.partition), r.errorCode);
        }
        await Promise.all(offsets);
        return {
          producerId: m.producerId,
          topics: groupByTopic(asked.values(), (e) => e.topic).map(([name, partitions]) => ({
            name,
            partitions: partitions.map(({ partition: p }) => ({ partitionIndex: p, errorCode: errors.get(topicPartitionKey(name, p)) ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
          })),
        };
      }),
    );
    return { markers };
  },
});
