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
 */
import { ErrorCode } from '../../protocol/errors';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/generated/write-txn-markers';
import { ControlRecordType, buildEndTxnMarkerBatch } from '../../protocol/records/control-record';
import { ApiKey } from '../../protocol/generated';
import { OFFSETS_TOPIC } from '../../config/kafka-config';
import { defineHandler } from './define-handler';
import { topicPartitionKey } from '../../common/topic-partition';

export const writeTxnMarkersHandler = defineHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse>({
  apiKey: ApiKey.WriteTxnMarkers,
  name: 'WriteTxnMarkers',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, _ctx, req) {
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
        for (const t of m.topics) {
          for (const p of t.partitionIndexes) {
            // Each append patches offsets into its own copy of the batch.
            if (t.name === OFFSETS_TOPIC) {
              offsets.push(
                broker.groupCoordinator
                  .completeTransaction(p, Buffer.from(batch), m.producerId, m.transactionResult, timeoutMs)
                  .then((code) => void errors.set(topicPartitionKey(t.name, p), code)),
              );
            } else {
              others.push({ topic: t.name, partition: p, records: Buffer.from(batch) });
            }
          }
        }
        if (others.length > 0) {
          const results = await broker.replicaManager.appendRecords({ timeoutMs, requiredAcks: -1, entries: others, internalTopicsAllowed: true });
          for (const r of results) errors.set(topicPartitionKey(r.topic, r.partition), r.errorCode);
        }
        await Promise.all(offsets);
        return {
          producerId: m.producerId,
          topics: m.topics.map((t) => ({
            name: t.name,
            partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: errors.get(topicPartitionKey(t.name, p)) ?? ErrorCode.UNKNOWN_SERVER_ERROR })),
          })),
        };
      }),
    );
    return { markers };
  },
});
