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
 * From v16 the answer's NodeEndpoints carry the leader it names: the raft node's own (a leader puts
 * its endpoint in, KIP-853) or, from a follower naming the leader, its `controller.quorum.voters` /
 * voter-set endpoint, so an observer knowing only bootstrap servers reaches it. Below v16 they are
 * dropped, as the version cannot carry them.
 */
import type { FetchRequest, FetchResponse } from '../../../protocol/generated/fetch';
import { AclOperation } from '../../../metadata/authorizer/authorizer';
import { defineQuorumHandler, type QuorumNode } from './quorum';

export const controllerRaftFetchHandler = defineQuorumHandler<FetchRequest, FetchResponse>('FETCH', AclOperation.CLUSTER_ACTION, 4, (res, version, node) =>
  version >= 16
    ? withLeaderEndpoint(res, node)
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

/** v16+: the named leader's endpoint in NodeEndpoints, when the node did not put it there and this node knows it. */
function withLeaderEndpoint(res: FetchResponse, node: QuorumNode): FetchResponse {
  const named = res.responses[0]?.partitions[0]?.currentLeader.leaderId ?? -1;
  const leader = node.raftClient?.leader;
  if (named < 0 || (res.nodeEndpoints ?? []).some((e) => e.nodeId === named) || !leader || leader.id !== named || !leader.endpoint) return res;
  return { ...res, nodeEndpoints: [{ nodeId: named, host: leader.endpoint.host, port: leader.endpoint.port, rack: null }] };
}
