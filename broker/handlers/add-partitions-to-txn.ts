/**
 * AddPartitionsToTxn (24), v0-5.
 * v0-3 (clients): one transaction; its partitions join the producer's transaction (Ongoing) on
 * the transactional id's coordinator. If any partition's topic or partition does not exist, nothing
 * is added: those get UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED. Otherwise
 * every partition gets the coordinator's answer: NONE, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, INVALID_PRODUCER_ID_MAPPING,
 * PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), CONCURRENT_TRANSACTIONS (a transition or the
 * previous transaction's markers are being written), INVALID_REQUEST (empty transactional id).
 * v4+ (KIP-890, sent by brokers, and by clients that use the batched form): several transactions,
 * each either added as above or, with verify_only, checked: NONE for a partition in the ongoing
 * transaction, TRANSACTION_ABORTABLE for one that is not (what a partition leader asks before it
 * lets a transactional batch start a transaction). Without verify_only a broker adds the partitions
 * for a producer that sent none itself (KIP-890 part 2: the leader of a Produce v12 batch, the
 * group coordinator of a TxnOffsetCommit v5). The top-level error_code is NONE; errors are
 * per partition. A transactional id listed twice gets INVALID_REQUEST. A partition listed twice
 * in one transaction is one partition with one answer (Kafka's result collections are keyed by
 * topic and partition); a partition the metadata does not have (negative index, past the count)
 * is UNKNOWN_TOPIC_OR_PARTITION and nothing of that transaction is added.
 * Authorization (KafkaApis.handleAddPartitionsToTxnRequest): v4+ comes from brokers and needs
 * CLUSTER_ACTION on the CLUSTER, else the top-level error_code is CLUSTER_AUTHORIZATION_FAILED with
 * no results. v0-3 need WRITE on the TRANSACTIONAL_ID (else every partition
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and WRITE on each TOPIC: a partition of a topic without it
 * is TOPIC_AUTHORIZATION_FAILED (before UNKNOWN_TOPIC_OR_PARTITION) and, as for unknown partitions,
 * nothing of the transaction is added (the others OPERATION_NOT_ATTEMPTED). As in Kafka, a client
 * may never add an internal topic's partitions this way (__consumer_offsets joins through
 * AddOffsetsToTxn): they are TOPIC_AUTHORIZATION_FAILED, with or without an authorizer.
 */
import { ErrorCode } from '../../protocol/errors';
import type {
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnRequestAddPartitionsToTxnTopic,
  AddPartitionsToTxnResponse,
  AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
} from '../../protocol/generated/add-partitions-to-txn';
import type { Input } from '../../protocol/primitives/input';
import { ApiKey } from '../../protocol/generated';
import type { Broker } from '../broker';
import type { TopicPartition } from '../../coordinator/transaction/transaction-metadata';
import { defineHandler } from './define-handler';
import { PartitionMap } from './request-partitions';
import { authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { isInternalTopic } from '../../metadata/topic-name';

type TopicResult = Input<AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult>;

function resultsOf(partitions: readonly TopicPartition[], errorOf: (tp: TopicPartition) => number): TopicResult[] {
  const byTopic = new Map<string, { partitionIndex: number; partitionErrorCode: number }[]>();
  for (const tp of partitions) {
    let list = byTopic.get(tp.topic);
    if (!list) byTopic.set(tp.topic, (list = []));
    list.push({ partitionIndex: tp.partition, partitionErrorCode: errorOf(tp) });
  }
  return [...byTopic].map(([name, resultsByPartition]) => ({ name, resultsByPartition }));
}

/** Each partition of the request once, in order of first listing. */
function partitionsOf(topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[]): TopicPartition[] {
  const once = new PartitionMap<true>();
  for (const t of topics) for (const partition of t.partitions) once.set(t.name, partition, true);
  return once.values().map(({ topic, partition }) => ({ topic, partition }));
}

async function oneTransaction(
  broker: Broker,
  version: number,
  t: { transactionalId: string; producerId: bigint; producerEpoch: number; verifyOnly: boolean; topics: AddPartitionsToTxnRequestAddPartitionsToTxnTopic[] },
  /** v0-3 (clients): the requester's checks; v4+ (brokers, already CLUSTER_ACTION-authorized): null. */
  auth: AuthHelper | null,
): Promise<TopicResult[]> {
  const partitions = partitionsOf(t.topics);
  if (auth && !auth.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, t.transactionalId)) {
    return resultsOf(partitions, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  }
  const writable = auth
    ? auth.filterByAuthorized(AclOperation.WRITE, ResourceType.TOPIC, partitions.filter((tp) => !isInternalTopic(tp.topic)), (tp) => tp.topic)
    : null;
  const failed = new Map<TopicPartition, number>();
  for (const tp of partitions) {
    if (writable && !writable.has(tp.topic)) failed.set(tp, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    else if (!broker.metadata.partition(tp.topic, tp.partition)) failed.set(tp, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
  if (failed.size > 0) {
    return resultsOf(partitions, (tp) => failed.get(tp) ?? ErrorCode.OPERATION_NOT_ATTEMPTED);
  }
  const txn = broker.transactionCoordinator;
  if (t.verifyOnly) {
    const errors = txn.handleVerifyPartitionsInTransaction(t.transactionalId, t.producerId, t.producerEpoch, partitions);
    return resultsOf(partitions, (tp) => errors.get(tp) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
  }
  const err = await txn.handleAddPartitionsToTransaction(t.transactionalId, t.producerId, t.producerEpoch, partitions);
  // Old clients treat PRODUCER_FENCED as unknown; Kafka answers them INVALID_PRODUCER_EPOCH.
  const code = err === ErrorCode.PRODUCER_FENCED && version < 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : err;
  return resultsOf(partitions, () => code);
}

export const addPartitionsToTxnHandler = defineHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse>({
  apiKey: ApiKey.AddPartitionsToTxn,
  name: 'AddPartitionsToTxn',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, ctx, req) {
    const v = ctx.apiVersion;
    const auth = authHelper(broker.authorizer, ctx);
    if (v < 4) {
      const results = await oneTransaction(
        broker,
        v,
        {
          transactionalId: req.v3AndBelowTransactionalId,
          producerId: req.v3AndBelowProducerId,
          producerEpoch: req.v3AndBelowProducerEpoch,
          verifyOnly: false,
          topics: req.v3AndBelowTopics,
        },
        auth,
      );
      return { throttleTimeMs: 0, resultsByTopicV3AndBelow: results };
    }
    // Newer versions come from brokers (AddPartitionsToTxnRequest.getErrorResponse when refused).
    if (!auth.authorizeCluster(AclOperation.CLUSTER_ACTION)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] };
    const counts = new Map<string, number>();
    for (const t of req.transactions) counts.set(t.transactionalId, (counts.get(t.transactionalId) ?? 0) + 1);
    const resultsByTransaction = await Promise.all(
      req.transactions.map(async (t) => {
        if (counts.get(t.transactionalId)! > 1) {
          return { transactionalId: t.transactionalId, topicResults: resultsOf(partitionsOf(t.topics), () => ErrorCode.INVALID_REQUEST) };
        }
        return { transactionalId: t.transactionalId, topicResults: await oneTransaction(broker, v, t, null) };
      }),
    );
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction };
  },
});
