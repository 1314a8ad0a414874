/**
 * FetchSnapshot (59), v0-1: a replica behind the leader's log start downloads the latest snapshot in chunks.
 * Served by the node's KafkaRaftClient (metadata/raft/kafka-raft-client.ts); registered only when the
 * node runs one (controllerHandlers in index.ts). Authorization (ControllerApis): CLUSTER_ACTION on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import type { FetchSnapshotRequest, FetchSnapshotResponse } from '../../../protocol/generated/fetch-snapshot';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerFetchSnapshotHandler = defineQuorumHandler<FetchSnapshotRequest, FetchSnapshotResponse>('FETCH_SNAPSHOT', AclOperation.CLUSTER_ACTION);
