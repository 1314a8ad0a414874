/**
 * UpdateRaftVoter (82), v0 (KIP-853): a voter tells the quorum leader its current endpoints and
 * kraft.version range; the leader appends a VotersRecord with them and answers at once (Kafka does
 * not wait for the commit), with the current leader and its endpoint. VOTER_NOT_FOUND for an
 * unknown replica key, INVALID_REQUEST for a missing directory id, controller-listener endpoint or
 * a bad version range, UNSUPPORTED_VERSION with kraft.version 0, the leader-only errors elsewhere.
 * Served by the node's KafkaRaftClient; registered only when the node runs one. Authorization
 * (ControllerApis): CLUSTER_ACTION on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED.
 */
import type { UpdateRaftVoterRequest, UpdateRaftVoterResponse } from '../../../protocol/generated/update-raft-voter';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerUpdateRaftVoterHandler = defineQuorumHandler<UpdateRaftVoterRequest, UpdateRaftVoterResponse>('UPDATE_RAFT_VOTER', AclOperation.CLUSTER_ACTION);
