/**
 * AddRaftVoter (80), v0 (KIP-853), on a broker of a KRaft controller quorum: forwarded to the
 * active controller as Kafka's KafkaApis does (quorum-forwarding.ts); the controller's answer
 * (DUPLICATE_VOTER, REQUEST_TIMED_OUT, UNSUPPORTED_VERSION under kraft.version 0, ...) is returned
 * as it is. Authorization as ControllerApis: ALTER on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED.
 * Registered only when the broker follows a controller quorum.
 */
import type { AddRaftVoterRequest, AddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { defineQuorumForwardingHandler } from './quorum-forwarding';

export const addRaftVoterHandler = defineQuorumForwardingHandler<AddRaftVoterRequest, AddRaftVoterResponse>('ADD_RAFT_VOTER', AclOperation.ALTER);
