/**
 * AddRaftVoter (80), v0 (KIP-853): `kafka-metadata-quorum add-controller`: the quorum leader adds an
 * observer that has caught up to the voter set by appending a VotersRecord, and answers once it
 * commits (REQUEST_TIMED_OUT while another change is pending, before the leader committed in its
 * epoch, or while the new voter lags; DUPLICATE_VOTER, UNSUPPORTED_VERSION with kraft.version 0,
 * INVALID_REQUEST without a directory id or an endpoint on the controller listener,
 * NOT_LEADER_OR_FOLLOWER on another controller). Served by the node's KafkaRaftClient (RaftNode);
 * registered only when the node runs one. Authorization (ControllerApis): ALTER on the CLUSTER,
 * else CLUSTER_AUTHORIZATION_FAILED. A broker of a controller quorum forwards it here (broker/handlers/add-raft-voter.ts), as Kafka's do.
 */
import type { AddRaftVoterRequest, AddRaftVoterResponse } from '../../../protocol/generated/add-raft-voter';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerAddRaftVoterHandler = defineQuorumHandler<AddRaftVoterRequest, AddRaftVoterResponse>('ADD_RAFT_VOTER', AclOperation.ALTER);
