/**
 * Fetch (1), v4-17, on the controller listener of a node in a KRaft quorum: replicas (voters and
 * observers, replica id in ReplicaState from v15, in ReplicaId before) and brokers (replica id -1)
 * read `__cluster_metadata-0` from the quorum leader. The raft client answers: records up to the
 * leader's end, DivergingEpoch or SnapshotId, or NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH naming
 * the leader; a fetch with nothing new waits up to max_wait_ms in the leader's purgatory.
 * Replaces the single-controller Fetch handler (fetch.ts) only when the node runs a raft client.
 * Authorization (ControllerApis.handleFetch): CLUSTER_ACTION on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED at the top level. Below v12 (no DivergingEpoch, CurrentLeader,
 * SnapshotId on the wire) those fields are reset to their defaults so the response encodes; the
 * raft client rejects such a fetch anyway (INVALID_REQUEST: no last fetched epoch), as Kafka's does.
 * Below v16 the leader's NodeEndpoints (KIP-853) are dropped, as the version cannot carry them.
 */
import type { FetchRequest, FetchResponse } from '../../../protocol/generated/fetch';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler } from './quorum';

export const controllerRaftFetchHandler = defineQuorumHandler<FetchRequest, FetchResponse>('FETCH', AclOperation.CLUSTER_ACTION, 4, (res, version) =>
  version >= 16
    ? res
    : version >= 12
      ? { ...res, nodeEndpoints: [] }
      : {
        ...res,
        nodeEndpoints: [],
        responses: res.responses.map((t) => ({
          ...t,
          partitions: t.partitions.map((p) => ({ ...p, divergingEpoch: { epoch: -1, endOffset: -1n }, currentLeader: { leaderId: -1, leaderEpoch: -1 }, snapshotId: { endOffset: -1n, epoch: -1 } })),
        })),
      },
);
