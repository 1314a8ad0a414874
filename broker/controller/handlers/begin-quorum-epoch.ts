/**
 * BeginQuorumEpoch (53), v0-1: a new leader tells the voters of its epoch (and repeats it every fetch timeout / 2).
 * Served by the node's KafkaRaftClient (metadata/raft/kafka-raft-client.ts); registered only when the
 * node runs one (controllerHandlers in index.ts). Authorization (ControllerApis): CLUSTER_ACTION on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import type { BeginQuorumEpochRequest, BeginQuorumEpochResponse } from '../../../protocol/generated/begin-quorum-epoch';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerBeginQuorumEpochHandler = defineQuorumHandler<BeginQuorumEpochRequest, BeginQuorumEpochResponse>('BEGIN_QUORUM_EPOCH', AclOperation.CLUSTER_ACTION);
