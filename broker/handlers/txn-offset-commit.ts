/**
 * TxnOffsetCommit (28), v0-5. Sent by a transactional producer to the group coordinator after
 * AddOffsetsToTxn (consume-transform-produce); from v5 (KIP-890 part 2) without AddOffsetsToTxn:
 * the group coordinator adds the group's __consumer_offsets partition to the producer's
 * transaction itself (AddPartitionsToTxn v5 to the transaction coordinator) before writing, and a
 * failure answers every partition with the coordinator's error as Kafka maps it (INVALID_PRODUCER_EPOCH
 * for a fenced producer, TRANSACTION_ABORTABLE, CONCURRENT_TRANSACTIONS, INVALID_PRODUCER_ID_MAPPING,
 * COORDINATOR_LOAD_IN_PROGRESS when the transaction coordinator could not be reached, ...).
 * The offsets are written to the group's __consumer_offsets partition as a transactional batch of
 * the producer: they are invisible to OffsetFetch (require_stable answers UNSTABLE_OFFSET_COMMIT)
 * until the transaction's COMMIT marker reaches the partition, and dropped by an ABORT.
 * Partitions of topics or partitions that do not exist get UNKNOWN_TOPIC_OR_PARTITION; metadata
 * longer than offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE. A group that does not exist is
 * created for generation -1 (else ILLEGAL_GENERATION); v3+ member id / group instance id /
 * generation are checked against the group like an OffsetCommit (UNKNOWN_MEMBER_ID,
 * FENCED_INSTANCE_ID, ILLEGAL_GENERATION), without the rebalance check. An older producer epoch
 * than the partition has seen is INVALID_PRODUCER_EPOCH. Group-level errors
 * (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_GROUP_ID) go to
 * every partition that exists.
 * Version notes: v2+ committed_leader_epoch; v3+ generation, member and group instance ids.
 * Authorization (KafkaApis.handleTxnOffsetCommitRequest): WRITE on the TRANSACTIONAL_ID (else every
 * partition asked TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the GROUP (else every
 * partition GROUP_AUTHORIZATION_FAILED), then READ on each TOPIC (a topic without it:
 * TOPIC_AUTHORIZATION_FAILED on its partitions); nothing refused is stored.
 */
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../../protocol/generated/txn-offset-commit';
import { ApiKey } from '../../protocol/generated';
import { commitToExistingPartitions } from './commit-to-existing-partitions';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const txnOffsetCommitHandler = defineHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse>({
  apiKey: ApiKey.TxnOffsetCommit,
  name: 'TxnOffsetCommit',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    const refused = !auth.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !auth.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)
        ? ErrorCode.GROUP_AUTHORIZATION_FAILED
        : null;
    if (refused !== null) {
      // TxnOffsetCommitRequest.getErrorResponse: every partition asked.
      return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: refused })) })) };
    }
    const readable = auth.filterByAuthorized(AclOperation.READ, ResourceType.TOPIC, req.topics, (t) => t.name);
    const topics = await commitToExistingPartitions(
      broker.metadata,
      req.topics,
      (p) => ({
        partitionIndex: p.partitionIndex,
        committedOffset: p.committedOffset,
        committedLeaderEpoch: v >= 2 ? p.committedLeaderEpoch : -1,
        committedMetadata: p.committedMetadata,
      }),
      (valid) =>
        broker.groupCoordinator.commitTransactionalOffsets(
          {
            groupId: req.groupId,
            producerId: req.producerId,
            producerEpoch: req.producerEpoch,
            memberId: v >= 3 ? req.memberId : '',
            groupInstanceId: v >= 3 ? req.groupInstanceId : null,
            generationId: v >= 3 ? req.generationId : -1,
            topics: valid,
          },
          // v5: the offsets partition joins the transaction here (no AddOffsetsToTxn).
          v >= 5 ? req.transactionalId : undefined,
        ),
      readable,
    );
    return { throttleTimeMs: 0, topics };
  },
});
