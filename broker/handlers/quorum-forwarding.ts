/**
 * What the broker's DescribeQuorum, AddRaftVoter and RemoveRaftVoter handlers share (Kafka's
 * KafkaApis forwardToControllerOrFail for the KRaft quorum APIs): authorize on the broker as the
 * controller would (ControllerApis: the given operation on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED and nothing is sent), then send the request as it came, at the
 * client's version, to the active controller over the broker's controller-quorum channel
 * (metadata/controller-channel.ts: it follows the quorum leader and resends on NOT_CONTROLLER) and
 * answer with the controller's response unchanged. A channel failure (no controller within the
 * channel's timeout) is answered with its error code (REQUEST_TIMED_OUT), anything else
 * UNKNOWN_SERVER_ERROR; a broker without a quorum channel answers BROKER_NOT_AVAILABLE.
 *
 * Invariants: these handlers are registered only on a broker that follows a controller quorum
 * (quorumForwardingHandlers in index.ts, used by server.ts), so a single-node krill and a broker of
 * a single remote controller do not advertise them; the broker never answers from its own state.
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { APIS } from '../../protocol/generated';
import type { Input } from '../../protocol/primitives/input';
import type { AclOperationCode } from '../../metadata/authorizer/authorizer';
import { KAFKA_4_0_RAFT_VERSIONS, RAFT_API_NAMES } from '../../metadata/raft/kafka-raft-client';
import { errorResponse, type RaftApiKey } from '../../metadata/raft/raft-messages';
import { authHelper } from '../security/authorize';
import { defineHandler, type HandlerSpec } from './define-handler';

export function defineQuorumForwardingHandler<Req, Res>(raftApiKey: 'DESCRIBE_QUORUM' | 'ADD_RAFT_VOTER' | 'REMOVE_RAFT_VOTER', operation: AclOperationCode): HandlerSpec<Req, Res> {
  const name = RAFT_API_NAMES[raftApiKey as RaftApiKey] as 'DescribeQuorum' | 'AddRaftVoter' | 'RemoveRaftVoter';
  const failed = (code: number) => errorResponse(raftApiKey, code).data as Input<Res>;
  return defineHandler<Req, Res>({
    apiKey: APIS[name].apiKey,
    name,
    minVersion: 0,
    maxVersion: KAFKA_4_0_RAFT_VERSIONS[raftApiKey],
    async handle(broker, ctx, req) {
      if (!authHelper(broker.authorizer, ctx).authorizeCluster(operation)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const channel = broker.controllerQuorumChannel;
      if (!channel) return failed(ErrorCode.BROKER_NOT_AVAILABLE);
      try {
        const res = await channel.send(name, req as never, { version: ctx.apiVersion });
        return res as unknown as Input<Res>;
      } catch (err) {
        if (!(err instanceof KafkaError)) broker.logger.error(`forwarding ${name} to the active controller failed`, { err });
        return failed(toErrorCode(err));
      }
    },
  });
}
