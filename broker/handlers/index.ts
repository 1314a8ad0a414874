/**
 * The registry of request handlers: one per API, each declaring its advertised version range.
 * ApiVersions is built from this list (plus QUORUM_FORWARDING_HANDLERS on a broker of a controller quorum).
 */
import { consumerGroupHeartbeatHandler } from './consumer-group-heartbeat';
import { consumerGroupDescribeHandler } from './consumer-group-describe';
import type { HandlerSpec } from './define-handler';
import { addOffsetsToTxnHandler } from './add-offsets-to-txn';
import { addPartitionsToTxnHandler } from './add-partitions-to-txn';
import { alterClientQuotasHandler } from './alter-client-quotas';
import { alterConfigsHandler } from './alter-configs';
import { alterReplicaLogDirsHandler } from './alter-replica-log-dirs';
import { alterUserScramCredentialsHandler } from './alter-user-scram-credentials';
import { apiVersionsHandler } from './api-versions';
import { createAclsHandler } from './create-acls';
import { createPartitionsHandler } from './create-partitions';
import { createTopicsHandler } from './create-topics';
import { deleteAclsHandler } from './delete-acls';
import { deleteGroupsHandler } from './delete-groups';
import { deleteRecordsHandler } from './delete-records';
import { deleteTopicsHandler } from './delete-topics';
import { describeAclsHandler } from './describe-acls';
import { describeClientQuotasHandler } from './describe-client-quotas';
import { describeClusterHandler } from './describe-cluster';
import { electLeadersHandler } from './elect-leaders';
import { alterPartitionReassignmentsHandler } from './alter-partition-reassignments';
import { listPartitionReassignmentsHandler } from './list-partition-reassignments';
import { describeConfigsHandler } from './describe-configs';
import { describeGroupsHandler } from './describe-groups';
import { describeLogDirsHandler } from './describe-log-dirs';
import { describeProducersHandler } from './describe-producers';
import { describeTopicPartitionsHandler } from './describe-topic-partitions';
import { describeTransactionsHandler } from './describe-transactions';
import { describeUserScramCredentialsHandler } from './describe-user-scram-credentials';
import { endTxnHandler } from './end-txn';
import { fetchHandler } from './fetch';
import { findCoordinatorHandler } from './find-coordinator';
import { getTelemetrySubscriptionsHandler } from './get-telemetry-subscriptions';
import { heartbeatHandler } from './heartbeat';
import { initProducerIdHandler } from './init-producer-id';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs';
import { joinGroupHandler } from './join-group';
import { leaveGroupHandler } from './leave-group';
import { listClientMetricsResourcesHandler } from './list-client-metrics-resources';
import { listGroupsHandler } from './list-groups';
import { listOffsetsHandler } from './list-offsets';
import { listTransactionsHandler } from './list-transactions';
import { metadataHandler } from './metadata';
import { offsetCommitHandler } from './offset-commit';
import { offsetDeleteHandler } from './offset-delete';
import { offsetFetchHandler } from './offset-fetch';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch';
import { produceHandler } from './produce';
import { pushTelemetryHandler } from './push-telemetry';
import { saslAuthenticateHandler } from './sasl-authenticate';
import { saslHandshakeHandler } from './sasl-handshake';
import { syncGroupHandler } from './sync-group';
import { txnOffsetCommitHandler } from './txn-offset-commit';
import { updateFeaturesHandler } from './update-features';
import { writeTxnMarkersHandler } from './write-txn-markers';
import { describeQuorumHandler } from './describe-quorum';
import { addRaftVoterHandler } from './add-raft-voter';
import { removeRaftVoterHandler } from './remove-raft-voter';

export const HANDLERS: readonly HandlerSpec[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  offsetForLeaderEpochHandler,
  findCoordinatorHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  saslHandshakeHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  deleteGroupsHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  createPartitionsHandler,
  incrementalAlterConfigsHandler,
  electLeadersHandler,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  offsetDeleteHandler,
  saslAuthenticateHandler,
  describeClusterHandler,
  initProducerIdHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  writeTxnMarkersHandler,
  txnOffsetCommitHandler,
  describeProducersHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  describeUserScramCredentialsHandler,
  alterUserScramCredentialsHandler,
  describeTopicPartitionsHandler,
  alterReplicaLogDirsHandler,
  describeLogDirsHandler,
  updateFeaturesHandler,
  getTelemetrySubscriptionsHandler,
  pushTelemetryHandler,
  listClientMetricsResourcesHandler,
  consumerGroupHeartbeatHandler,
  consumerGroupDescribeHandler,
];

/** Registered on top of HANDLERS only by a broker that follows a KRaft controller quorum (forwarded to its active controller). */
export const QUORUM_FORWARDING_HANDLERS: readonly HandlerSpec[] = [describeQuorumHandler, addRaftVoterHandler, removeRaftVoterHandler];
