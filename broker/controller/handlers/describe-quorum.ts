/**
 * DescribeQuorum (55), v0-2: the leader's view of the voters and observers (log end offsets, last fetch and caught-up times), what kafka-metadata-quorum describe shows; NOT_LEADER_OR_FOLLOWER on another node.
 * Served by the node's KafkaRaftClient (metadata/raft/kafka-raft-client.ts); registered only when the
 * node runs one (controllerHandlers in index.ts). Authorization (ControllerApis): DESCRIBE on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level.
 */
import type { DescribeQuorumRequest, DescribeQuorumResponse } from '../../../protocol/generated/describe-quorum';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

import { NO_DIRECTORY_ID } from '../../../metadata/raft/quorum-state-store';

/** Below v2 there are no directory ids and no Nodes (KIP-853): they are reset so the response encodes. */
export const controllerDescribeQuorumHandler = defineQuorumHandler<DescribeQuorumRequest, DescribeQuorumResponse>('DESCRIBE_QUORUM', AclOperation.DESCRIBE, 0, (res, version) =>
  version >= 2
    ? res
    : {
        ...res,
        nodes: [],
        topics: res.topics.map((t) => ({
          ...t,
          partitions: t.partitions.map((p) => ({
            ...p,
            currentVoters: p.currentVoters.map((v) => ({ ...v, replicaDirectoryId: NO_DIRECTORY_ID })),
            observers: p.observers.map((o) => ({ ...o, replicaDirectoryId: NO_DIRECTORY_ID })),
          })),
        })),
      },
);
