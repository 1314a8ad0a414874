/**
 * EndQuorumEpoch (54), v0-1: a resigning leader tells the voters, with its preferred successors, so that one of them runs at once.
 * Served by the node's KafkaRaftClient (metadata/raft/kafka-raft-client.ts); registered only when the
 * node runs one (controllerHandlers in index.ts). Authorization (ControllerApis): CLUSTER_ACTION on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import type { EndQuorumEpochRequest, EndQuorumEpochResponse } from '../../../protocol/generated/end-quorum-epoch';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerEndQuorumEpochHandler = defineQuorumHandler<EndQuorumEpochRequest, EndQuorumEpochResponse>('END_QUORUM_EPOCH', AclOperation.CLUSTER_ACTION);
