/**
 * The RPCs of the consensus core and their builders (Kafka's RaftMessage/RaftRequest/RaftResponse
 * and the singleton builders of RaftUtil). Requests and responses are the generated codecs' types
 * (protocol/generated/*.ts) for the one partition `__cluster_metadata-0`, so a network layer can
 * encode them as they are. Vote carries KIP-996's `preVote` (VoteRequest v2+; a network layer must
 * send a pre-vote only to a peer speaking v2: the v0/v1 encoder refuses a true preVote). KIP-853:
 * directory ids in Vote / Fetch, the leader's NodeEndpoints in Fetch responses, DescribeQuorum's
 * Nodes, and the AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter responses.
 *
 * Invariants: every builder fills every field of the generated type (no field left to a codec
 * default by accident); sentinels are Kafka's (-1 leader/epoch/offsets, the zero uuid).
 */
import type { VoteRequest, VoteResponse, VoteResponsePartitionData } from '../../protocol/generated/vote';
import type { BeginQuorumEpochRequest, BeginQuorumEpochResponse, BeginQuorumEpochResponsePartitionData } from '../../protocol/generated/begin-quorum-epoch';
import type { EndQuorumEpochRequest, EndQuorumEpochResponse, EndQuorumEpochResponsePartitionData } from '../../protocol/generated/end-quorum-epoch';
import type { FetchRequest, FetchRequestFetchPartition, FetchResponse, FetchResponsePartitionData } from '../../protocol/generated/fetch';
import type { FetchSnapshotRequest, FetchSnapshotRequestPartitionSnapshot, FetchSnapshotResponse, FetchSnapshotResponsePartitionSnapshot } from '../../protocol/generated/fetch-snapshot';
import type { DescribeQuorumRequest, DescribeQuorumResponse, DescribeQuorumResponsePartitionData } from '../../protocol/generated/describe-quorum';
import type { AddRaftVoterRequest, AddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import type { RemoveRaftVoterRequest, RemoveRaftVoterResponse } from '../../protocol/generated/remove-raft-voter';
import type { UpdateRaftVoterRequest, UpdateRaftVoterResponse } from '../../protocol/generated/update-raft-voter';
import type { FetchResponseNodeEndpoint } from '../../protocol/generated/fetch';
import { ErrorCode } from '../../protocol/errors';
import { NO_DIRECTORY_ID } from './quorum-state-store';
import type { OffsetAndEpoch } from './raft-log';

export const METADATA_TOPIC = '__cluster_metadata';
export const METADATA_PARTITION = 0;
/** Kafka's Uuid.METADATA_TOPIC_ID (new Uuid(0, 1)). */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

export type RaftRequest =
  | { apiKey: 'VOTE'; data: VoteRequest }
  | { apiKey: 'BEGIN_QUORUM_EPOCH'; data: BeginQuorumEpochRequest }
  | { apiKey: 'END_QUORUM_EPOCH'; data: EndQuorumEpochRequest }
  | { apiKey: 'FETCH'; data: FetchRequest }
  | { apiKey: 'FETCH_SNAPSHOT'; data: FetchSnapshotRequest }
  | { apiKey: 'DESCRIBE_QUORUM'; data: DescribeQuorumRequest }
  | { apiKey: 'ADD_RAFT_VOTER'; data: AddRaftVoterRequest }
  | { apiKey: 'REMOVE_RAFT_VOTER'; data: RemoveRaftVoterRequest }
  | { apiKey: 'UPDATE_RAFT_VOTER'; data: UpdateRaftVoterRequest };

export type RaftResponse =
  | { apiKey: 'VOTE'; data: VoteResponse }
  | { apiKey: 'BEGIN_QUORUM_EPOCH'; data: BeginQuorumEpochResponse }
  | { apiKey: 'END_QUORUM_EPOCH'; data: EndQuorumEpochResponse }
  | { apiKey: 'FETCH'; data: FetchResponse }
  | { apiKey: 'FETCH_SNAPSHOT'; data: FetchSnapshotResponse }
  | { apiKey: 'DESCRIBE_QUORUM'; data: DescribeQuorumResponse }
  | { apiKey: 'ADD_RAFT_VOTER'; data: AddRaftVoterResponse }
  | { apiKey: 'REMOVE_RAFT_VOTER'; data: RemoveRaftVoterResponse }
  | { apiKey: 'UPDATE_RAFT_VOTER'; data: UpdateRaftVoterResponse };

export type RaftApiKey = RaftRequest['apiKey'];

// ---- Vote ----

export function voteRequest(p: {
  clusterId: string | null;
  voterId: number;
  candidateEpoch: number;
  candidateId: number;
  lastEndOffset: OffsetAndEpoch;
  preVote: boolean;
  /** KIP-853 replica keys (NO_DIRECTORY_ID when unknown). */
  candidateDirectoryId?: string;
  voterDirectoryId?: string;
}): VoteRequest {
  return {
    clusterId: p.clusterId,
    voterId: p.voterId,
    topics: [
      {
        topicName: METADATA_TOPIC,
        partitions: [
          {
            partitionIndex: METADATA_PARTITION,
            candidateEpoch: p.candidateEpoch,
            candidateId: p.candidateId,
            candidateDirectoryId: p.candidateDirectoryId ?? NO_DIRECTORY_ID,
            voterDirectoryId: p.voterDirectoryId ?? NO_DIRECTORY_ID,
            lastOffsetEpoch: p.lastEndOffset.epoch,
            lastOffset: p.lastEndOffset.offset,
            preVote: p.preVote,
          },
        ],
      },
    ],
  };
}

export function voteResponse(errorCode: number, partition?: Omit<VoteResponsePartitionData, 'partitionIndex'>): VoteResponse {
  return {
    errorCode,
    topics: partition ? [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, ...partition }] }] : [],
    nodeEndpoints: [],
  };
}

// ---- BeginQuorumEpoch ----

export function beginQuorumEpochRequest(clusterId: string | null, voterId: number, leaderId: number, leaderEpoch: number): BeginQuorumEpochRequest {
  return {
    clusterId,
    voterId,
    topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, voterDirectoryId: NO_DIRECTORY_ID, leaderId, leaderEpoch }] }],
    leaderEndpoints: [],
  };
}

export function beginQuorumEpochResponse(errorCode: number, partition?: Omit<BeginQuorumEpochResponsePartitionData, 'partitionIndex'>): BeginQuorumEpochResponse {
  return {
    errorCode,
    topics: partition ? [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, ...partition }] }] : [],
    nodeEndpoints: [],
  };
}

// ---- EndQuorumEpoch ----

/** Both successor fields are filled: PreferredSuccessors is what v0 encodes, PreferredCandidates v1. */
export function endQuorumEpochRequest(clusterId: string | null, leaderId: number, leaderEpoch: number, preferredSuccessors: number[]): EndQuorumEpochRequest {
  return {
    clusterId,
    topics: [
      {
        topicName: METADATA_TOPIC,
        partitions: [
          {
            partitionIndex: METADATA_PARTITION,
            leaderId,
            leaderEpoch,
            preferredSuccessors,
            preferredCandidates: preferredSuccessors.map((candidateId) => ({ candidateId, candidateDirectoryId: NO_DIRECTORY_ID })),
          },
        ],
      },
    ],
    leaderEndpoints: [],
  };
}

export function endQuorumEpochResponse(errorCode: number, partition?: Omit<EndQuorumEpochResponsePartitionData, 'partitionIndex'>): EndQuorumEpochResponse {
  return {
    errorCode,
    topics: partition ? [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION, ...partition }] }] : [],
    nodeEndpoints: [],
  };
}

// ---- Fetch ----

export function fetchRequest(p: {
  clusterId: string | null;
  replicaId: number;
  maxWaitMs: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  lastFetchedEpoch: number;
  logStartOffset: bigint;
  maxBytes: number;
  /** KIP-853: the fetching replica's directory id (Fetch v17). */
  replicaDirectoryId?: string;
}): FetchRequest {
  const partition: FetchRequestFetchPartition = {
    partition: METADATA_PARTITION,
    currentLeaderEpoch: p.currentLeaderEpoch,
    fetchOffset: p.fetchOffset,
    lastFetchedEpoch: p.lastFetchedEpoch,
    logStartOffset: p.logStartOffset,
    partitionMaxBytes: p.maxBytes,
    replicaDirectoryId: p.replicaDirectoryId ?? NO_DIRECTORY_ID,
  };
  // The replica id goes in ReplicaState (v15+, what KRaft fetches use); a network layer encoding
  // v14 or older moves it to the top-level ReplicaId.
  return {
    clusterId: p.clusterId,
    replicaId: -1,
    replicaState: { replicaId: p.replicaId, replicaEpoch: -1n },
    maxWaitMs: p.maxWaitMs,
    minBytes: 0,
    maxBytes: p.maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: METADATA_TOPIC, topicId: METADATA_TOPIC_ID, partitions: [partition] }],
    forgottenTopicsData: [],
    rackId: '',
  };
}

/** The fetching replica: the replicaState field (v15+) or the old replicaId field. */
export function fetchReplicaId(r: FetchRequest): number {
  return r.replicaState.replicaId >= 0 ? r.replicaState.replicaId : r.replicaId;
}

export interface FetchPartitionResult {
  errorCode: number;
  highWatermark: bigint;
  logStartOffset: bigint;
  leaderId: number;
  leaderEpoch: number;
  divergingEpoch?: OffsetAndEpoch;
  snapshotId?: OffsetAndEpoch;
  records: Buffer | null;
}

export function fetchResponse(errorCode: number, p?: FetchPartitionResult, nodeEndpoints: FetchResponseNodeEndpoint[] = []): FetchResponse {
  const partitions: FetchResponsePartitionData[] = p
    ? [
        {
          partitionIndex: METADATA_PARTITION,
          errorCode: p.errorCode,
          highWatermark: p.highWatermark,
          lastStableOffset: -1n,
          logStartOffset: p.logStartOffset,
          divergingEpoch: p.divergingEpoch ? { epoch: p.divergingEpoch.epoch, endOffset: p.divergingEpoch.offset } : { epoch: -1, endOffset: -1n },
          currentLeader: { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch },
          snapshotId: p.snapshotId ? { endOffset: p.snapshotId.offset, epoch: p.snapshotId.epoch } : { endOffset: -1n, epoch: -1 },
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: p.records,
        },
      ]
    : [];
  return {
    throttleTimeMs: 0,
    errorCode,
    sessionId: 0,
    responses: p ? [{ topic: METADATA_TOPIC, topicId: METADATA_TOPIC_ID, partitions }] : [],
    nodeEndpoints,
  };
}

// ---- FetchSnapshot ----

export function fetchSnapshotRequest(p: {
  clusterId: string | null;
  replicaId: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  snapshotId: OffsetAndEpoch;
  position: bigint;
}): FetchSnapshotRequest {
  const partition: FetchSnapshotRequestPartitionSnapshot = {
    partition: METADATA_PARTITION,
    currentLeaderEpoch: p.currentLeaderEpoch,
    snapshotId: { endOffset: p.snapshotId.offset, epoch: p.snapshotId.epoch },
    position: p.position,
    replicaDirectoryId: NO_DIRECTORY_ID,
  };
  return { clusterId: p.clusterId, replicaId: p.replicaId, maxBytes: p.maxBytes, topics: [{ name: METADATA_TOPIC, partitions: [partition] }] };
}

export function fetchSnapshotResponse(errorCode: number, p?: Omit<FetchSnapshotResponsePartitionSnapshot, 'index'>): FetchSnapshotResponse {
  return {
    throttleTimeMs: 0,
    errorCode,
    topics: p ? [{ name: METADATA_TOPIC, partitions: [{ index: METADATA_PARTITION, ...p }] }] : [],
    nodeEndpoints: [],
  };
}

// ---- DescribeQuorum ----

export function describeQuorumRequest(): DescribeQuorumRequest {
  return { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: METADATA_PARTITION }] }] };
}

export function describeQuorumResponse(
  errorCode: number,
  errorMessage: string | null,
  p?: Omit<DescribeQuorumResponsePartitionData, 'partitionIndex'>,
  nodes: DescribeQuorumResponse['nodes'] = [],
): DescribeQuorumResponse {
  return {
    errorCode: p ? ErrorCode.NONE : errorCode,
    errorMessage: p ? null : errorMessage,
    topics: [
      {
        topicName: METADATA_TOPIC,
        partitions: [
          p
            ? { partitionIndex: METADATA_PARTITION, ...p }
            : { partitionIndex: METADATA_PARTITION, errorCode, errorMessage, leaderId: -1, leaderEpoch: -1, highWatermark: -1n, currentVoters: [], observers: [] },
        ],
      },
    ],
    nodes,
  };
}

/**
 * A response carrying only a top-level error (Kafka's RaftUtil.errorResponse): what a network layer
 * hands the node when a request could not be sent or its connection dropped (BROKER_NOT_AVAILABLE),
 * so it backs off briefly and retries instead of waiting out the request timeout.
 */
export function errorResponse(apiKey: RaftApiKey, errorCode: number): RaftResponse {
  switch (apiKey) {
    case 'VOTE':
      return { apiKey, data: voteResponse(errorCode) };
    case 'BEGIN_QUORUM_EPOCH':
      return { apiKey, data: beginQuorumEpochResponse(errorCode) };
    case 'END_QUORUM_EPOCH':
      return { apiKey, data: endQuorumEpochResponse(errorCode) };
    case 'FETCH':
      return { apiKey, data: fetchResponse(errorCode) };
    case 'FETCH_SNAPSHOT':
      return { apiKey, data: fetchSnapshotResponse(errorCode) };
    case 'DESCRIBE_QUORUM':
      return { apiKey, data: describeQuorumResponse(errorCode, null) };
    case 'ADD_RAFT_VOTER':
      return { apiKey, data: addRaftVoterResponse(errorCode, null) };
    case 'REMOVE_RAFT_VOTER':
      return { apiKey, data: removeRaftVoterResponse(errorCode, null) };
    case 'UPDATE_RAFT_VOTER':
      return { apiKey, data: updateRaftVoterResponse(errorCode, -1, -1) };
  }
}

// ---- AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter (KIP-853) ----

export function addRaftVoterResponse(errorCode: number, errorMessage: string | null): AddRaftVoterResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage };
}

export function removeRaftVoterResponse(errorCode: number, errorMessage: string | null): RemoveRaftVoterResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage };
}

export function updateRaftVoterResponse(errorCode: number, leaderId: number, leaderEpoch: number, leaderEndpoint?: { host: string; port: number } | null): UpdateRaftVoterResponse {
  return { throttleTimeMs: 0, errorCode, currentLeader: { leaderId, leaderEpoch, host: leaderEndpoint?.host ?? '', port: leaderEndpoint?.port ?? 0 } };
}
