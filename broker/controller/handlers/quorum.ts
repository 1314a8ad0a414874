/**
 * The shared shape of the KRaft quorum handlers on the controller listener (Vote, BeginQuorumEpoch,
 * EndQuorumEpoch, DescribeQuorum, FetchSnapshot, Fetch on `__cluster_metadata` under a quorum, and
 * KIP-853's AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter):
 * what they need of the node (its KafkaRaftClient and authorizer), the authorization
 * ControllerApis does first, and the hand-off to the raft client, which answers asynchronously
 * (a Fetch with nothing new waits in the leader's purgatory).
 *
 * Invariants: a handler never answers from the node's state itself, only with what the raft client
 * returns; a node without a raft client never registers these (controllerHandlers in index.ts), and
 * if one is reached anyway it answers BROKER_NOT_AVAILABLE rather than inventing quorum state;
 * versions are Kafka 4.0's (KAFKA_4_0_RAFT_VERSIONS).
 */
import { ErrorCode } from '../../../protocol/errors';
import { defineHandler, type HandlerSpec } from '../../handlers/define-handler';
import { authHelper } from '../../security/authorize';
import type { AclOperationCode, Authorizer } from '../../../metadata/authorizer/authorizer';
import type { KafkaRaftClient } from '../../../metadata/raft/kafka-raft-client';
import { KAFKA_4_0_RAFT_VERSIONS, RAFT_API_NAMES } from '../../../metadata/raft/kafka-raft-client';
import { errorResponse, type RaftApiKey, type RaftRequest } from '../../../metadata/raft/raft-messages';
import { APIS } from '../../../protocol/generated';
import type { Input } from '../../../protocol/primitives/input';

/** What the quorum handlers use of the controller node (ControllerNode has these). */
export interface QuorumNode {
  /** Present when the node is a voter (or observer) of a KRaft quorum. */
  readonly raftClient?: KafkaRaftClient;
  readonly authorizer: Authorizer;
}

/** `adapt` fits the raft client's response to the version asked (fields an older codec cannot encode, endpoints a newer one carries). */
export function defineQuorumHandler<Req, Res>(
  raftApiKey: RaftApiKey,
  operation: AclOperationCode,
  minVersion = 0,
  adapt?: (response: Res, version: number, node: QuorumNode) => Res,
): HandlerSpec<Req, Res, QuorumNode> {
  const name = RAFT_API_NAMES[raftApiKey];
  return defineHandler<Req, Res, QuorumNode>({
    apiKey: APIS[name].apiKey,
    name,
    minVersion,
    maxVersion: KAFKA_4_0_RAFT_VERSIONS[raftApiKey],
    async handle(node, ctx, req) {
      if (!authHelper(node.authorizer, ctx).authorizeCluster(operation)) {
        return errorResponse(raftApiKey, ErrorCode.CLUSTER_AUTHORIZATION_FAILED).data as Input<Res>;
      }
      const client = node.raftClient;
      if (!client) return errorResponse(raftApiKey, ErrorCode.BROKER_NOT_AVAILABLE).data as Input<Res>;
      // A Fetch with nothing new waits in the leader's purgatory: not a queued request meanwhile.
      if (raftApiKey === 'FETCH') ctx.parked();
      const response = await client.handleInboundRequest({ apiKey: raftApiKey, data: req } as RaftRequest);
      return (adapt ? adapt(response.data as Res, ctx.apiVersion, node) : response.data) as Input<Res>;
    },
    // Kafka exempts the quorum's cluster actions from request quotas (ControllerApis uses none anyway).
    requestQuotaExempt: () => true,
  });
}
