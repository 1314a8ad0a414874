/**
 * The consensus core's messages are the generated codecs' types: each builder's output survives an
 * encode/decode round trip at the newest version krill's codecs know (Vote v2 with KIP-996's
 * preVote; an older Vote version refuses a pre-vote).
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { readVoteRequest, readVoteResponse, writeVoteRequest, writeVoteResponse } from '../../protocol/generated/vote';
import { readBeginQuorumEpochRequest, readBeginQuorumEpochResponse, writeBeginQuorumEpochRequest, writeBeginQuorumEpochResponse } from '../../protocol/generated/begin-quorum-epoch';
import { readEndQuorumEpochRequest, writeEndQuorumEpochRequest } from '../../protocol/generated/end-quorum-epoch';
import { readFetchRequest, readFetchResponse, writeFetchRequest, writeFetchResponse } from '../../protocol/generated/fetch';
import { readFetchSnapshotRequest, readFetchSnapshotResponse, writeFetchSnapshotRequest, writeFetchSnapshotResponse } from '../../protocol/generated/fetch-snapshot';
import { readDescribeQuorumResponse, writeDescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import { readAddRaftVoterResponse, writeAddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import { readRemoveRaftVoterResponse, writeRemoveRaftVoterResponse } from '../../protocol/generated/remove-raft-voter';
import { readUpdateRaftVoterResponse, writeUpdateRaftVoterResponse } from '../../protocol/generated/update-raft-voter';
import {
  addRaftVoterResponse,
  removeRaftVoterResponse,
  updateRaftVoterResponse,
  beginQuorumEpochRequest,
  beginQuorumEpochResponse,
  describeQuorumResponse,
  endQuorumEpochRequest,
  fetchRequest,
  fetchResponse,
  fetchSnapshotRequest,
  fetchSnapshotResponse,
  voteRequest,
  voteResponse,
} from './raft-messages';

function roundTrip<T>(write: (w: Writer, v: number, m: T) => void, read: (r: Reader, v: number) => T, version: number, m: T): T {
  const w = new Writer(256);
  write(w, version, m);
  return read(new Reader(w.toBuffer()), version);
}

describe('raft messages map onto the generated codecs', () => {
  it('Vote (v2 carries KIP-996 preVote; v1 refuses a pre-vote)', () => {
    const req = voteRequest({ clusterId: 'c', voterId: 2, candidateEpoch: 5, candidateId: 1, lastEndOffset: { offset: 10n, epoch: 4 }, preVote: true });
    expect(roundTrip(writeVoteRequest, readVoteRequest, 2, req)).toEqual(req);
    expect(() => roundTrip(writeVoteRequest, readVoteRequest, 1, req)).toThrow(/preVote/);
    const binding = voteRequest({ clusterId: 'c', voterId: 2, candidateEpoch: 5, candidateId: 1, lastEndOffset: { offset: 10n, epoch: 4 }, preVote: false });
    expect(roundTrip(writeVoteRequest, readVoteRequest, 1, binding)).toEqual(binding);
    const resp = voteResponse(0, { errorCode: 0, leaderId: 3, leaderEpoch: 5, voteGranted: true });
    expect(roundTrip(writeVoteResponse, readVoteResponse, 2, resp)).toEqual(resp);
  });

  it('BeginQuorumEpoch and EndQuorumEpoch (v1)', () => {
    const b = beginQuorumEpochRequest('c', 2, 1, 7);
    expect(roundTrip(writeBeginQuorumEpochRequest, readBeginQuorumEpochRequest, 1, b)).toEqual(b);
    const br = beginQuorumEpochResponse(0, { errorCode: 74, leaderId: 1, leaderEpoch: 7 });
    expect(roundTrip(writeBeginQuorumEpochResponse, readBeginQuorumEpochResponse, 1, br)).toEqual(br);
    const e = endQuorumEpochRequest('c', 1, 7, [3, 2]);
    // v1 carries the successors as PreferredCandidates (PreferredSuccessors is v0 only).
    expect(roundTrip(writeEndQuorumEpochRequest, readEndQuorumEpochRequest, 1, e)).toEqual({ ...e, topics: [{ ...e.topics[0], partitions: [{ ...e.topics[0].partitions[0], preferredSuccessors: [] }] }] });
    expect(roundTrip(writeEndQuorumEpochRequest, readEndQuorumEpochRequest, 0, e).topics[0].partitions[0].preferredSuccessors).toEqual([3, 2]);
  });

  it('Fetch (v17) with DivergingEpoch and SnapshotId', () => {
    const f = fetchRequest({ clusterId: 'c', replicaId: 2, maxWaitMs: 500, currentLeaderEpoch: 7, fetchOffset: 42n, lastFetchedEpoch: 6, logStartOffset: 0n, maxBytes: 1024 });
    const back = roundTrip(writeFetchRequest, readFetchRequest, 17, f);
    expect(back.replicaState.replicaId).toBe(2);
    expect(back.topics[0].partitions[0]).toEqual(f.topics[0].partitions[0]);
    const r = fetchResponse(0, { errorCode: 0, highWatermark: 40n, logStartOffset: 0n, leaderId: 1, leaderEpoch: 7, divergingEpoch: { offset: 30n, epoch: 6 }, snapshotId: { offset: 20n, epoch: 5 }, records: null });
    const rb = roundTrip(writeFetchResponse, readFetchResponse, 17, r);
    expect(rb.responses[0].partitions[0]).toMatchObject({ divergingEpoch: { epoch: 6, endOffset: 30n }, snapshotId: { endOffset: 20n, epoch: 5 }, currentLeader: { leaderId: 1, leaderEpoch: 7 }, highWatermark: 40n });
  });

  it('FetchSnapshot (v1) and DescribeQuorum (v2)', () => {
    const q = fetchSnapshotRequest({ clusterId: 'c', replicaId: 3, maxBytes: 100, currentLeaderEpoch: 7, snapshotId: { offset: 20n, epoch: 5 }, position: 64n });
    expect(roundTrip(writeFetchSnapshotRequest, readFetchSnapshotRequest, 1, q)).toEqual(q);
    const a = fetchSnapshotResponse(0, { errorCode: 0, snapshotId: { endOffset: 20n, epoch: 5 }, currentLeader: { leaderId: 1, leaderEpoch: 7 }, size: 200n, position: 64n, unalignedRecords: Buffer.from('chunk') });
    expect(roundTrip(writeFetchSnapshotResponse, readFetchSnapshotResponse, 1, a)).toEqual(a);
    const d = describeQuorumResponse(0, null, {
      errorCode: 0,
      errorMessage: null,
      leaderId: 1,
      leaderEpoch: 7,
      highWatermark: 40n,
      currentVoters: [{ replicaId: 1, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA', logEndOffset: 41n, lastFetchTimestamp: 5n, lastCaughtUpTimestamp: 5n }],
      observers: [],
    });
    expect(roundTrip(writeDescribeQuorumResponse, readDescribeQuorumResponse, 2, d)).toEqual(d);
  });

  it('Fetch v17 with a directory id and the leader endpoint; AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter responses (v0, KIP-853)', () => {
    const dir = 'J8aAPcfLQt2bqs1JT_rMgQ';
    const f = fetchRequest({ clusterId: 'c', replicaId: 4, maxWaitMs: 0, currentLeaderEpoch: 1, fetchOffset: 0n, lastFetchedEpoch: 0, logStartOffset: 0n, maxBytes: 1, replicaDirectoryId: dir });
    expect(roundTrip(writeFetchRequest, readFetchRequest, 17, f).topics[0].partitions[0].replicaDirectoryId).toBe(dir);
    const r = fetchResponse(0, { errorCode: 6, highWatermark: -1n, logStartOffset: 0n, leaderId: 1, leaderEpoch: 2, records: null }, [{ nodeId: 1, host: 'h', port: 9093, rack: null }]);
    expect(roundTrip(writeFetchResponse, readFetchResponse, 17, r).nodeEndpoints).toEqual([{ nodeId: 1, host: 'h', port: 9093, rack: null }]);
    const add = addRaftVoterResponse(126, 'duplicate');
    expect(roundTrip(writeAddRaftVoterResponse, readAddRaftVoterResponse, 0, add)).toEqual(add);
    const remove = removeRaftVoterResponse(127, null);
    expect(roundTrip(writeRemoveRaftVoterResponse, readRemoveRaftVoterResponse, 0, remove)).toEqual(remove);
    const update = updateRaftVoterResponse(0, 1, 3, { host: 'h', port: 9093 });
    expect(roundTrip(writeUpdateRaftVoterResponse, readUpdateRaftVoterResponse, 0, update)).toEqual(update);
  });
});
