/**
 * The controller listener's handler registry: the APIs a Kafka controller serves to brokers and
 * admin clients. ApiVersions on the controller listener is built from this list.
 * A node in a KRaft quorum (ControllerNode.raftClient) serves controllerHandlers(true): the same
 * list with the quorum RPCs (QUORUM_HANDLERS) added and Fetch served by the raft client; without one
 * the list is CONTROLLER_HANDLERS, unchanged (the single-writer metadata log's Fetch).
 */
import type { HandlerSpec } from '../../handlers/define-handler';
import type { ControllerNode } from '../controller-server';
import { controllerApiVersionsHandler } from './api-versions';
import { alterPartitionHandler } from './alter-partition';
import { brokerHeartbeatHandler } from './broker-heartbeat';
import { brokerRegistrationHandler } from './broker-registration';
import { controllerDescribeClusterHandler } from './describe-cluster';
import { controllerFetchHandler } from './fetch';
import { controllerAllocateProducerIdsHandler } from './allocate-producer-ids';
import { controllerAlterClientQuotasHandler } from './alter-client-quotas';
import { controllerAlterConfigsHandler } from './alter-configs';
import { controllerAlterUserScramCredentialsHandler } from './alter-user-scram-credentials';
import { controllerCreateAclsHandler } from './create-acls';
import { controllerCreatePartitionsHandler } from './create-partitions';
import { controllerCreateTopicsHandler } from './create-topics';
import { controllerDeleteAclsHandler } from './delete-acls';
import { controllerDeleteTopicsHandler } from './delete-topics';
import { controllerDescribeAclsHandler } from './describe-acls';
import { controllerElectLeadersHandler } from './elect-leaders';
import { controllerAlterPartitionReassignmentsHandler } from './alter-partition-reassignments';
import { controllerListPartitionReassignmentsHandler } from './list-partition-reassignments';
import { controllerIncrementalAlterConfigsHandler } from './incremental-alter-configs';
import { controllerUpdateFeaturesHandler } from './update-features';
import { controllerVoteHandler } from './vote';
import { controllerBeginQuorumEpochHandler } from './begin-quorum-epoch';
import { controllerEndQuorumEpochHandler } from './end-quorum-epoch';
import { controllerDescribeQuorumHandler } from './describe-quorum';
import { controllerFetchSnapshotHandler } from './fetch-snapshot';
import { controllerRaftFetchHandler } from './raft-fetch';
import { controllerAddRaftVoterHandler } from './add-raft-voter';
import { controllerRemoveRaftVoterHandler } from './remove-raft-voter';
import { controllerUpdateRaftVoterHandler } from './update-raft-voter';
import { saslAuthenticateHandlerFor } from '../../handlers/sasl-authenticate';
import { saslHandshakeHandlerFor } from '../../handlers/sasl-handshake';

export const CONTROLLER_HANDLERS: readonly HandlerSpec<any, any, ControllerNode>[] = [
  controllerFetchHandler,
  controllerApiVersionsHandler,
  controllerCreateTopicsHandler,
  controllerDeleteTopicsHandler,
  controllerAlterConfigsHandler,
  controllerCreatePartitionsHandler,
  controllerElectLeadersHandler,
  controllerIncrementalAlterConfigsHandler,
  controllerAlterPartitionReassignmentsHandler,
  controllerListPartitionReassignmentsHandler,
  alterPartitionHandler,
  controllerDescribeClusterHandler,
  brokerRegistrationHandler,
  brokerHeartbeatHandler,
  controllerAllocateProducerIdsHandler,
  controllerAlterClientQuotasHandler,
  controllerDescribeAclsHandler,
  controllerCreateAclsHandler,
  controllerDeleteAclsHandler,
  controllerAlterUserScramCredentialsHandler,
  controllerUpdateFeaturesHandler,
  // SASL on the controller listener (the connection's authenticator does the work).
  saslHandshakeHandlerFor<ControllerNode>(),
  saslAuthenticateHandlerFor<ControllerNode>(),
];

/** The KRaft RPCs, served by the node's raft client (Fetch is controllerRaftFetchHandler, swapped in by controllerHandlers). */
export const QUORUM_HANDLERS: readonly HandlerSpec<any, any, ControllerNode>[] = [
  controllerVoteHandler,
  controllerBeginQuorumEpochHandler,
  controllerEndQuorumEpochHandler,
  controllerDescribeQuorumHandler,
  controllerFetchSnapshotHandler,
  // KIP-853 voter changes (kafka-metadata-quorum add-controller / remove-controller; UpdateRaftVoter from voters).
  controllerAddRaftVoterHandler,
  controllerRemoveRaftVoterHandler,
  controllerUpdateRaftVoterHandler,
];

/** The controller listener's handlers: with a raft client, the quorum RPCs too and Fetch from the quorum. */
export function controllerHandlers(withRaftClient: boolean): readonly HandlerSpec<any, any, ControllerNode>[] {
  if (!withRaftClient) return CONTROLLER_HANDLERS;
  return [...CONTROLLER_HANDLERS.map((h) => (h === controllerFetchHandler ? controllerRaftFetchHandler : h)), ...QUORUM_HANDLERS];
}
