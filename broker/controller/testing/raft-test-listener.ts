/**
 * What the tests that run KafkaRaftClients over real listeners share (kafka-raft-client.test.ts,
 * dynamic-voters.test.ts): the node context the quorum handlers read (a raft client, an
 * allow-all authorizer, no version caps, the dispatcher for ApiVersions), a minimal ApiVersions
 * handler that advertises what the dispatcher serves, the quorum handlers (with or without the
 * KIP-853 voter RPCs), and socket-server options with generous limits. Test code only.
 */
import type { SocketServerOptions } from '../../network/socket-server';
import type { RequestDispatcher } from '../../request-dispatcher';
import { defineHandler } from '../../handlers/define-handler';
import type { Authorizer } from '../../../metadata/authorizer/authorizer';
import type { KafkaRaftClient } from '../../../metadata/raft/kafka-raft-client';
import { ApiKey } from '../../../protocol/generated';
import { ErrorCode } from '../../../protocol/errors';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../../protocol/generated/api-versions';
import { controllerVoteHandler } from '../handlers/vote';
import { controllerBeginQuorumEpochHandler } from '../handlers/begin-quorum-epoch';
import { controllerEndQuorumEpochHandler } from '../handlers/end-quorum-epoch';
import { controllerDescribeQuorumHandler } from '../handlers/describe-quorum';
import { controllerFetchSnapshotHandler } from '../handlers/fetch-snapshot';
import { controllerRaftFetchHandler } from '../handlers/raft-fetch';
import { controllerAddRaftVoterHandler } from '../handlers/add-raft-voter';
import { controllerRemoveRaftVoterHandler } from '../handlers/remove-raft-voter';
import { controllerUpdateRaftVoterHandler } from '../handlers/update-raft-voter';
import type { QuorumNode } from '../handlers/quorum';

export interface RaftTestCtx extends QuorumNode {
  raftClient?: KafkaRaftClient;
  authorizer: Authorizer;
  versionCaps: ReadonlyMap<number, number>;
  dispatcher?: RequestDispatcher<RaftTestCtx>;
}

export const testApiVersionsHandler = defineHandler<ApiVersionsRequest, ApiVersionsResponse, RaftTestCtx>({
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  handle: (node) => ({ errorCode: ErrorCode.NONE, apiKeys: node.dispatcher!.advertisedVersions() }),
});

/** ApiVersions and the static quorum's RPCs; with `voterChanges`, AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter too. */
export function raftTestHandlers(voterChanges = false) {
  return [
    testApiVersionsHandler,
    controllerVoteHandler,
    controllerBeginQuorumEpochHandler,
    controllerEndQuorumEpochHandler,
    controllerDescribeQuorumHandler,
    controllerFetchSnapshotHandler,
    controllerRaftFetchHandler,
    ...(voterChanges ? [controllerAddRaftVoterHandler, controllerRemoveRaftVoterHandler, controllerUpdateRaftVoterHandler] : []),
  ];
}

export const RAFT_TEST_SOCKET_OPTIONS: SocketServerOptions = {
  maxRequestBytes: 100 * 1024 * 1024,
  idleTimeoutMs: 600_000,
  queuedMaxRequestBytes: -1,
  queuedMaxRequests: 500,
  listenBacklog: 50,
  quotas: {
    maxConnections: 1000,
    maxConnectionsPerIp: 1000,
    maxConnectionsPerIpOverrides: new Map(),
    maxConnectionCreationRate: 1_000_000,
    listeners: new Map(),
    interBrokerListenerName: null,
    rate: { windowMs: 1000, samples: 11 },
  },
};
