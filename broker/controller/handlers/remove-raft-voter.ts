/**
 * RemoveRaftVoter (81), v0 (KIP-853): `kafka-metadata-quorum remove-controller`: the quorum leader
 * removes a voter (id and directory id) by appending a VotersRecord and answers once it commits; a
 * leader that removed itself then resigns. Errors as Kafka: VOTER_NOT_FOUND, REQUEST_TIMED_OUT
 * (another change pending, nothing committed in the epoch yet, or no commit within the request
 * timeout), UNSUPPORTED_VERSION with kraft.version 0, NOT_LEADER_OR_FOLLOWER elsewhere. Served by the
 * node's KafkaRaftClient; registered only when the node runs one. Authorization (ControllerApis):
 * ALTER on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED.
 */
import type { RemoveRaftVoterRequest, RemoveRaftVoterResponse } from '../../../protocol/generated/remove-raft-voter';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerRemoveRaftVoterHandler = defineQuorumHandler<RemoveRaftVoterRequest, RemoveRaftVoterResponse>('REMOVE_RAFT_VOTER', AclOperation.ALTER);
