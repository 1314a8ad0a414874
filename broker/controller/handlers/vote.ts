/**
 * Vote (52), v0-2 (KIP-996's PreVote from v2): a candidate asks for this voter's vote in its new epoch, or a prospective voter asks whether it would win one (a pre-vote, which changes nothing here).
 * Served by the node's KafkaRaftClient (metadata/raft/kafka-raft-client.ts); registered only when the
 * node runs one (controllerHandlers in index.ts). Authorization (ControllerApis): CLUSTER_ACTION on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import type { VoteRequest, VoteResponse } from '../../../protocol/generated/vote';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerVoteHandler = defineQuorumHandler<VoteRequest, VoteResponse>('VOTE', AclOperation.CLUSTER_ACTION);
