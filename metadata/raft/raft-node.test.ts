/**
 * Focused tests of RaftNode, one state or RPC at a time, on a manual clock with a fixed random
 * source (election timeouts at their minimum unless a test says otherwise) and a capturing sink.
 */
import { ErrorCode } from '../../protocol/errors';
import type { VoteResponse } from '../../protocol/generated/vote';
import { makeQuorumConfig, votersOf } from './quorum-config';
import { InMemoryQuorumStateStore, electionState, type ElectionState } from './quorum-state-store';
import { InMemoryRaftLog, decodeRaftRecords } from './raft-log';
import {
  beginQuorumEpochRequest,
  beginQuorumEpochResponse,
  describeQuorumRequest,
  endQuorumEpochRequest,
  endQuorumEpochResponse,
  fetchRequest,
  fetchResponse,
  fetchSnapshotRequest,
  voteRequest,
  voteResponse,
  type RaftRequest,
  type RaftResponse,
} from './raft-messages';
import { NotLeaderError, RaftNode } from './raft-node';

const CLUSTER = 'test-cluster';

class Harness {
  now = 1000;
  readonly requests: { dest: number; corr: number; req: RaftRequest }[] = [];
  readonly responses: { dest: number; corr: number; resp: RaftResponse }[] = [];
  readonly store = new InMemoryQuorumStateStore();
  readonly log = new InMemoryRaftLog();
  node!: RaftNode;
  /** The store's state at the moment each response was sent. */
  readonly storeAtResponse: (ElectionState | null)[] = [];
  randomValue = 0;

  constructor(
    readonly id = 1,
    readonly voterIds = [1, 2, 3],
    stored?: ElectionState,
  ) {
    if (stored) this.store.write(stored);
    this.start();
  }

  start(): void {
    this.node = new RaftNode({
      nodeId: this.id,
      clusterId: CLUSTER,
      config: makeQuorumConfig({ voters: votersOf(this.voterIds), electionTimeoutMs: 1000, fetchTimeoutMs: 2000, electionBackoffMaxMs: 1000, requestTimeoutMs: 2000 }),
      clock: { now: () => this.now },
      random: { nextInt: (bound) => Math.min(bound - 1, this.randomValue) },
      log: this.log,
      store: this.store,
      sink: {
        sendRequest: (dest, corr, req) => this.requests.push({ dest, corr, req }),
        sendResponse: (dest, corr, resp) => {
          this.responses.push({ dest, corr, resp });
          this.storeAtResponse.push(this.store.read());
        },
      },
    });
    this.node.poll();
  }

  advance(ms: number): void {
    this.now += ms;
    this.node.poll();
  }

  take<K extends RaftRequest['apiKey']>(apiKey: K): { dest: number; corr: number; req: Extract<RaftRequest, { apiKey: K }> }[] {
    const out = this.requests.filter((r) => r.req.apiKey === apiKey) as { dest: number; corr: number; req: Extract<RaftRequest, { apiKey: K }> }[];
    this.requests.splice(0, this.requests.length, ...this.requests.filter((r) => r.req.apiKey !== apiKey));
    return out;
  }

  lastResponse(): RaftResponse {
    return this.responses[this.responses.length - 1].resp;
  }

  request(source: number, req: RaftRequest, corr = 99): RaftResponse | undefined {
    const before = this.responses.length;
    this.node.handleRequest(source, corr, req);
    this.node.poll();
    return this.responses.length > before ? this.responses[before].resp : undefined;
  }

  /** Grants (or rejects) every outstanding Vote request. */
  answerVotes(granted: boolean, from?: number[]): void {
    for (const v of this.take('VOTE')) {
      if (from && !from.includes(v.dest)) continue;
      const epoch = v.req.data.topics[0].partitions[0].preVote ? this.node.epoch : v.req.data.topics[0].partitions[0].candidateEpoch;
      this.node.handleResponse(v.dest, v.corr, { apiKey: 'VOTE', data: voteResponse(ErrorCode.NONE, { errorCode: ErrorCode.NONE, leaderId: -1, leaderEpoch: epoch, voteGranted: granted }) });
    }
    this.node.poll();
  }

  /** Runs an election this node wins (voters 2 and 3 grant). */
  becomeLeader(): void {
    this.advance(1000);
    this.answerVotes(true);
    this.answerVotes(true);
    expect(this.node.stateName).toBe('Leader');
  }
}

function vote(p: { candidateEpoch: number; candidateId: number; lastEpoch?: number; lastOffset?: bigint; preVote?: boolean; clusterId?: string | null; voterId?: number }): RaftRequest {
  return {
    apiKey: 'VOTE',
    data: voteRequest({
      clusterId: p.clusterId === undefined ? CLUSTER : p.clusterId,
      voterId: p.voterId ?? -1,
      candidateEpoch: p.candidateEpoch,
      candidateId: p.candidateId,
      lastEndOffset: { offset: p.lastOffset ?? 0n, epoch: p.lastEpoch ?? 0 },
      preVote: p.preVote ?? false,
    }),
  };
}

function votePartition(r: RaftResponse | undefined) {
  if (!r || r.apiKey !== 'VOTE') throw new Error('not a vote response');
  return (r.data as VoteResponse).topics[0].partitions[0];
}

function fetch(p: { epoch: number; offset: bigint; lastEpoch: number; replicaId: number; maxWaitMs?: number }): RaftRequest {
  return {
    apiKey: 'FETCH',
    data: fetchRequest({ clusterId: CLUSTER, replicaId: p.replicaId, maxWaitMs: p.maxWaitMs ?? 0, currentLeaderEpoch: p.epoch, fetchOffset: p.offset, lastFetchedEpoch: p.lastEpoch, logStartOffset: 0n, maxBytes: 1 << 20 }),
  };
}

function bqePartition(r: RaftResponse | undefined) {
  if (!r || r.apiKey !== 'BEGIN_QUORUM_EPOCH') throw new Error('not a BeginQuorumEpoch response');
  return r.data.topics[0].partitions[0];
}

function fetchPartition(r: RaftResponse | undefined) {
  if (!r || r.apiKey !== 'FETCH') throw new Error('not a fetch response');
  return r.data.responses[0].partitions[0];
}

describe('RaftNode: Unattached, Prospective and Candidate', () => {
  it('starts unattached at epoch 0 and, after the election timeout, sends pre-votes for epoch 1 without bumping its epoch', () => {
    const h = new Harness();
    expect(h.node.stateName).toBe('Unattached');
    h.advance(999);
    expect(h.take('VOTE')).toHaveLength(0);
    h.advance(1);
    expect(h.node.stateName).toBe('Prospective');
    expect(h.node.epoch).toBe(0);
    const votes = h.take('VOTE');
    expect(votes.map((v) => v.dest).sort()).toEqual([2, 3]);
    expect(votes[0].req.data.topics[0].partitions[0]).toMatchObject({ preVote: true, candidateEpoch: 1, candidateId: 1 });
    expect(h.store.read()?.epoch ?? 0).toBe(0);
  });

  it('randomizes the election timeout in [timeout, 2 * timeout)', () => {
    const h = new Harness();
    h.randomValue = 999;
    h.start();
    h.advance(1998);
    expect(h.node.stateName).toBe('Unattached');
    h.advance(1);
    expect(h.node.stateName).toBe('Prospective');
  });

  it('becomes candidate on a majority of pre-votes, persisting its vote for itself before asking for votes', () => {
    const h = new Harness();
    h.advance(1000);
    for (const v of h.take('VOTE')) if (v.dest === 2) h.node.handleResponse(2, v.corr, { apiKey: 'VOTE', data: voteResponse(0, { errorCode: 0, leaderId: -1, leaderEpoch: 0, voteGranted: true }) });
    h.node.poll();
    expect(h.node.stateName).toBe('Candidate');
    expect(h.node.epoch).toBe(1);
    expect(h.store.read()).toEqual(electionState(1, -1, 1));
    const votes = h.take('VOTE');
    expect(votes.map((v) => v.dest).sort()).toEqual([2, 3]);
    expect(votes[0].req.data.topics[0].partitions[0]).toMatchObject({ preVote: false, candidateEpoch: 1 });
  });

  it('a prospective rejected by a majority goes back to unattached; one rejected by a follower of a leader follows it', () => {
    const h = new Harness();
    h.advance(1000);
    h.answerVotes(false);
    expect(h.node.stateName).toBe('Unattached');
    expect(h.node.epoch).toBe(0);
    h.advance(1000);
    const v = h.take('VOTE')[0];
    h.node.handleResponse(v.dest, v.corr, { apiKey: 'VOTE', data: voteResponse(0, { errorCode: 0, leaderId: 3, leaderEpoch: 0, voteGranted: false }) });
    expect(h.node.stateName).toBe('Follower');
    expect(h.node.leaderId).toBe(3);
  });

  it('counts a pre-vote answered UNSUPPORTED_VERSION (a voter without Vote v2) as granted', () => {
    const h = new Harness();
    h.advance(1000);
    const v = h.take('VOTE')[0];
    h.node.handleResponse(v.dest, v.corr, { apiKey: 'VOTE', data: voteResponse(ErrorCode.UNSUPPORTED_VERSION) });
    expect(h.node.stateName).toBe('Candidate');
  });

  it('becomes leader on a majority of votes: LeaderChange control record first, then BeginQuorumEpoch to the voters', () => {
    const h = new Harness();
    h.becomeLeader();
    expect(h.store.read()).toEqual(electionState(1, 1, 1));
    const recs = decodeRaftRecords(h.log.read(0n, 1 << 20));
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ offset: 0n, epoch: 1, control: true });
    expect(recs[0].key?.readInt16BE(2)).toBe(2);
    expect(h.take('BEGIN_QUORUM_EPOCH').map((r) => r.dest).sort()).toEqual([2, 3]);
    expect(h.node.highWatermark).toBeNull();
  });

  it('a candidate rejected by a majority backs off (bounded by the backoff max), then goes prospective', () => {
    const h = new Harness();
    h.advance(1000);
    h.answerVotes(true);
    expect(h.node.stateName).toBe('Candidate');
    // Binary exponential: 50 ms * random(2^retries), here the largest draw for the first retry.
    h.randomValue = 1 << 30;
    h.answerVotes(false);
    expect(h.node.stateName).toBe('Candidate');
    h.advance(49);
    expect(h.node.stateName).toBe('Candidate');
    h.advance(1);
    expect(h.node.stateName).toBe('Prospective');
    expect(h.node.epoch).toBe(1);
    // Later retries draw from a wider range, never past controller.quorum.election.backoff.max.ms.
    for (let i = 0; i < 6; i++) {
      h.answerVotes(true);
      h.answerVotes(false);
      expect(h.node.stateName).toBe('Candidate');
      h.advance(999);
      h.advance(1);
      expect(h.node.stateName).toBe('Prospective');
    }
  });

  it('a candidate whose election times out goes prospective in the same epoch', () => {
    const h = new Harness();
    h.advance(1000);
    h.answerVotes(true);
    h.take('VOTE');
    h.advance(1000);
    expect(h.node.stateName).toBe('Prospective');
    expect(h.node.epoch).toBe(1);
  });

  it('a single-voter quorum elects itself at once and commits its own appends', () => {
    const h = new Harness(1, [1]);
    h.advance(1000);
    expect(h.node.stateName).toBe('Leader');
    const off = h.node.append([{ value: 'x', timestamp: 0 }]);
    expect(h.node.highWatermark).toBe(off + 1n);
  });
});

describe('RaftNode: Vote requests', () => {
  it('grants a vote, persisting it before the response, and refuses a second candidate in the epoch', () => {
    const h = new Harness(2);
    const r = h.request(1, vote({ candidateEpoch: 1, candidateId: 1 }));
    expect(votePartition(r)).toMatchObject({ errorCode: 0, voteGranted: true, leaderEpoch: 1, leaderId: -1 });
    expect(h.storeAtResponse[0]).toEqual(electionState(1, -1, 1));
    expect(votePartition(h.request(3, vote({ candidateEpoch: 1, candidateId: 3 })))).toMatchObject({ voteGranted: false });
    // The same candidate again: still granted.
    expect(votePartition(h.request(1, vote({ candidateEpoch: 1, candidateId: 1 })))).toMatchObject({ voteGranted: true });
  });

  it('rejects a candidate whose log is behind', () => {
    const h = new Harness(2, [1, 2, 3], electionState(2, -1, -1));
    h.log.appendAsLeader([{ value: 'a', timestamp: 0 }], 2);
    expect(votePartition(h.request(1, vote({ candidateEpoch: 3, candidateId: 1, lastEpoch: 1, lastOffset: 5n })))).toMatchObject({ voteGranted: false });
    expect(h.node.epoch).toBe(3);
    expect(votePartition(h.request(3, vote({ candidateEpoch: 3, candidateId: 3, lastEpoch: 2, lastOffset: 1n })))).toMatchObject({ voteGranted: true });
  });

  it.each([
    ['FENCED_LEADER_EPOCH for an older epoch', { candidateEpoch: 1, candidateId: 3 }, ErrorCode.FENCED_LEADER_EPOCH],
    ['INCONSISTENT_VOTER_SET for a non-voter', { candidateEpoch: 6, candidateId: 9 }, ErrorCode.INCONSISTENT_VOTER_SET],
    ['INVALID_REQUEST when the last epoch is not below the candidate epoch', { candidateEpoch: 6, candidateId: 3, lastEpoch: 6 }, ErrorCode.INVALID_REQUEST],
    ['INVALID_VOTER_KEY when meant for another voter', { candidateEpoch: 6, candidateId: 3, voterId: 3 }, ErrorCode.INVALID_VOTER_KEY],
  ])('answers %s', (_name, req, code) => {
    const h = new Harness(2, [1, 2, 3], electionState(5, -1, -1));
    expect(votePartition(h.request(3, vote(req)))).toMatchObject({ errorCode: code, voteGranted: false });
  });

  it('answers INCONSISTENT_CLUSTER_ID at the top level', () => {
    const h = new Harness(2);
    const r = h.request(3, vote({ candidateEpoch: 1, candidateId: 3, clusterId: 'other' }));
    expect(r?.data.errorCode).toBe(ErrorCode.INCONSISTENT_CLUSTER_ID);
  });

  it('a pre-vote changes nothing on the receiver', () => {
    const h = new Harness(2, [1, 2, 3], electionState(5, -1, -1));
    const writes = h.store.writes;
    expect(votePartition(h.request(3, vote({ candidateEpoch: 6, candidateId: 3, preVote: true })))).toMatchObject({ voteGranted: true, leaderEpoch: 5 });
    expect(h.node.epoch).toBe(5);
    expect(h.store.writes).toBe(writes);
    // Its real vote is still free.
    expect(votePartition(h.request(1, vote({ candidateEpoch: 6, candidateId: 1 })))).toMatchObject({ voteGranted: true });
  });

  it('a follower that has fetched from its leader rejects pre-votes; a leader always does', () => {
    const h = new Harness(2, [1, 2, 3], electionState(5, 1, -1));
    expect(h.node.stateName).toBe('Follower');
    expect(votePartition(h.request(3, vote({ candidateEpoch: 6, candidateId: 3, preVote: true })))).toMatchObject({ voteGranted: true });
    const f = h.take('FETCH')[0];
    h.node.handleResponse(1, f.corr, { apiKey: 'FETCH', data: fetchResponse(0, { errorCode: 0, highWatermark: 0n, logStartOffset: 0n, leaderId: 1, leaderEpoch: 5, records: null }) });
    expect(votePartition(h.request(3, vote({ candidateEpoch: 6, candidateId: 3, preVote: true })))).toMatchObject({ voteGranted: false, leaderId: 1 });

    const l = new Harness();
    l.becomeLeader();
    expect(votePartition(l.request(3, vote({ candidateEpoch: 2, candidateId: 3, lastEpoch: 1, lastOffset: 1n, preVote: true })))).toMatchObject({ voteGranted: false });
    expect(l.node.stateName).toBe('Leader');
    // A binding vote in a higher epoch does unseat it.
    l.request(3, vote({ candidateEpoch: 2, candidateId: 3, lastEpoch: 1, lastOffset: 1n }));
    expect(l.node.stateName).toBe('Unattached');
  });
});

describe('RaftNode: BeginQuorumEpoch and EndQuorumEpoch', () => {
  it('BeginQuorumEpoch makes the receiver follow the leader and fetch from it', () => {
    const h = new Harness(2);
    const r = h.request(1, { apiKey: 'BEGIN_QUORUM_EPOCH', data: beginQuorumEpochRequest(CLUSTER, 2, 1, 3) });
    expect(bqePartition(r)).toMatchObject({ errorCode: 0, leaderId: 1, leaderEpoch: 3 });
    expect(h.node.stateName).toBe('Follower');
    expect(h.store.read()).toEqual(electionState(3, 1, -1));
    const f = h.take('FETCH');
    expect(f).toHaveLength(1);
    expect(f[0].dest).toBe(1);
    expect(f[0].req.data.topics[0].partitions[0]).toMatchObject({ currentLeaderEpoch: 3, fetchOffset: 0n, lastFetchedEpoch: 0 });
    expect(bqePartition(h.request(1, { apiKey: 'BEGIN_QUORUM_EPOCH', data: beginQuorumEpochRequest(CLUSTER, 2, 1, 2) })).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
  });

  it('a leader that loses check-quorum resigns and sends EndQuorumEpoch; the first preferred successor runs at once', () => {
    const h = new Harness();
    h.becomeLeader();
    // Only voter 2 fetches; 3 stays silent. One of two is a majority with the leader: no resignation.
    for (let i = 0; i < 4; i++) {
      h.request(2, fetch({ epoch: 1, offset: 1n, lastEpoch: 1, replicaId: 2 }));
      h.advance(1000);
    }
    expect(h.node.stateName).toBe('Leader');
    h.advance(3000);
    expect(h.node.stateName).toBe('Resigned');
    const end = h.take('END_QUORUM_EPOCH');
    expect(end.map((e) => e.dest).sort()).toEqual([2, 3]);
    expect(end[0].req.data.topics[0].partitions[0]).toMatchObject({ leaderId: 1, leaderEpoch: 1, preferredSuccessors: [2, 3] });

    const f = new Harness(2, [1, 2, 3], electionState(1, 1, -1));
    f.request(1, { apiKey: 'END_QUORUM_EPOCH', data: endQuorumEpochRequest(CLUSTER, 1, 1, [2, 3]) });
    f.advance(0);
    expect(f.node.stateName).toBe('Prospective');
  });

  it('a resigned leader becomes prospective after the election timeout; a restarted leader comes back resigned', () => {
    const h = new Harness(1, [1, 2, 3], electionState(4, 1, 1));
    expect(h.node.stateName).toBe('Resigned');
    h.advance(1000);
    expect(h.node.stateName).toBe('Prospective');
    expect(h.node.epoch).toBe(4);
  });
});

describe('RaftNode: Fetch, leader side', () => {
  function leaderWithRecords(): Harness {
    const h = new Harness();
    h.becomeLeader();
    h.node.append([{ value: 'a', timestamp: 0 }]);
    h.node.append([{ value: 'b', timestamp: 0 }]);
    return h;
  }

  it('answers with records and sets the high watermark only when a majority is past the epoch start', () => {
    const h = leaderWithRecords();
    const r1 = fetchPartition(h.request(2, fetch({ epoch: 1, offset: 0n, lastEpoch: 0, replicaId: 2 })));
    expect(r1.errorCode).toBe(0);
    expect(decodeRaftRecords(r1.records!)).toHaveLength(3);
    expect(r1.highWatermark).toBe(-1n);
    // Fetching at 1 proves offset 0 (the LeaderChange record, this epoch's first) is replicated.
    const r2 = fetchPartition(h.request(2, fetch({ epoch: 1, offset: 1n, lastEpoch: 1, replicaId: 2 })));
    expect(r2.highWatermark).toBe(1n);
    expect(h.node.highWatermark).toBe(1n);
    expect(fetchPartition(h.request(2, fetch({ epoch: 1, offset: 3n, lastEpoch: 1, replicaId: 2 }))).highWatermark).toBe(3n);
  });

  it('never exposes older entries before an entry of its own epoch is committed', () => {
    const h = new Harness(1, [1, 2, 3], electionState(1, -1, -1));
    h.log.appendAsLeader([{ value: 'old', timestamp: 0 }], 1);
    h.becomeLeader();
    expect(h.node.epoch).toBe(2);
    // Replicated up to 1 (the old entry) but not past the epoch start (offset 1): no high watermark.
    expect(fetchPartition(h.request(2, fetch({ epoch: 2, offset: 1n, lastEpoch: 1, replicaId: 2 }))).highWatermark).toBe(-1n);
    expect(fetchPartition(h.request(2, fetch({ epoch: 2, offset: 2n, lastEpoch: 2, replicaId: 2 }))).highWatermark).toBe(2n);
  });

  it('answers a diverging follower with DivergingEpoch and no records', () => {
    const h = leaderWithRecords();
    const p = fetchPartition(h.request(2, fetch({ epoch: 1, offset: 5n, lastEpoch: 1, replicaId: 2 })));
    expect(p.divergingEpoch).toEqual({ epoch: 1, endOffset: 3n });
    expect(p.records).toBeNull();
    const p2 = fetchPartition(h.request(3, fetch({ epoch: 1, offset: 2n, lastEpoch: 0, replicaId: 3 })));
    expect(p2.divergingEpoch).toEqual({ epoch: 0, endOffset: 0n });
  });

  it('answers the SnapshotId when the fetch offset is below the log start', () => {
    const h = leaderWithRecords();
    h.request(2, fetch({ epoch: 1, offset: 3n, lastEpoch: 1, replicaId: 2 }));
    h.log.createSnapshot({ offset: 2n, epoch: 1 }, Buffer.from('state'));
    h.log.deleteBeforeSnapshot({ offset: 2n, epoch: 1 });
    const p = fetchPartition(h.request(3, fetch({ epoch: 1, offset: 0n, lastEpoch: 0, replicaId: 3 })));
    expect(p.snapshotId).toEqual({ endOffset: 2n, epoch: 1 });
    expect(p.logStartOffset).toBe(2n);
    // FetchSnapshot serves it in chunks.
    const fs = h.request(3, { apiKey: 'FETCH_SNAPSHOT', data: fetchSnapshotRequest({ clusterId: CLUSTER, replicaId: 3, maxBytes: 3, currentLeaderEpoch: 1, snapshotId: { offset: 2n, epoch: 1 }, position: 0n }) });
    expect(fs?.apiKey).toBe('FETCH_SNAPSHOT');
    const part = (fs!.data as unknown as { topics: { partitions: { errorCode: number; size: bigint; unalignedRecords: Buffer }[] }[] }).topics[0].partitions[0];
    expect(part).toMatchObject({ errorCode: 0, size: 5n });
    expect(part.unalignedRecords.toString()).toBe('sta');
    const missing = h.request(3, { apiKey: 'FETCH_SNAPSHOT', data: fetchSnapshotRequest({ clusterId: CLUSTER, replicaId: 3, maxBytes: 3, currentLeaderEpoch: 1, snapshotId: { offset: 1n, epoch: 1 }, position: 0n }) });
    expect((missing!.data as unknown as { topics: { partitions: { errorCode: number }[] }[] }).topics[0].partitions[0].errorCode).toBe(ErrorCode.SNAPSHOT_NOT_FOUND);
    const beyond = h.request(3, { apiKey: 'FETCH_SNAPSHOT', data: fetchSnapshotRequest({ clusterId: CLUSTER, replicaId: 3, maxBytes: 3, currentLeaderEpoch: 1, snapshotId: { offset: 2n, epoch: 1 }, position: 5n }) });
    expect((beyond!.data as unknown as { topics: { partitions: { errorCode: number }[] }[] }).topics[0].partitions[0].errorCode).toBe(ErrorCode.POSITION_OUT_OF_RANGE);
  });

  it.each([
    ['FENCED_LEADER_EPOCH for an older epoch', 0, ErrorCode.FENCED_LEADER_EPOCH],
    ['UNKNOWN_LEADER_EPOCH for a newer epoch', 2, ErrorCode.UNKNOWN_LEADER_EPOCH],
  ])('answers %s', (_n, epoch, code) => {
    const h = leaderWithRecords();
    expect(fetchPartition(h.request(2, fetch({ epoch, offset: 0n, lastEpoch: 0, replicaId: 2 }))).errorCode).toBe(code);
  });

  it('answers NOT_LEADER_OR_FOLLOWER when it is not the leader of the epoch, INVALID_REQUEST for a bad position', () => {
    const h = new Harness(2, [1, 2, 3], electionState(1, 1, -1));
    expect(fetchPartition(h.request(3, fetch({ epoch: 1, offset: 0n, lastEpoch: 0, replicaId: 3 }))).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(fetchPartition(h.request(3, fetch({ epoch: 1, offset: 0n, lastEpoch: 2, replicaId: 3 }))).errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('parks a fetch with nothing new until an append or maxWaitMs', () => {
    const h = leaderWithRecords();
    h.request(2, fetch({ epoch: 1, offset: 3n, lastEpoch: 1, replicaId: 2 }));
    expect(h.request(2, fetch({ epoch: 1, offset: 3n, lastEpoch: 1, replicaId: 2, maxWaitMs: 500 }), 7)).toBeUndefined();
    h.node.append([{ value: 'c', timestamp: 0 }]);
    const r = h.responses.find((x) => x.corr === 7)!;
    expect(decodeRaftRecords(fetchPartition(r.resp).records!).map((x) => x.value?.toString())).toEqual(['c']);
    h.request(2, fetch({ epoch: 1, offset: 4n, lastEpoch: 1, replicaId: 2 }));
    expect(h.request(2, fetch({ epoch: 1, offset: 4n, lastEpoch: 1, replicaId: 2, maxWaitMs: 500 }), 8)).toBeUndefined();
    h.advance(499);
    expect(h.responses.find((x) => x.corr === 8)).toBeUndefined();
    h.advance(1);
    expect(fetchPartition(h.responses.find((x) => x.corr === 8)!.resp).errorCode).toBe(0);
  });

  it('rejects appends when not the leader', () => {
    const h = new Harness();
    expect(() => h.node.append([{ value: 'x' }])).toThrow(NotLeaderError);
  });
});

describe('RaftNode: Fetch, follower side', () => {
  it('appends fetched records, takes the high watermark, truncates on a diverging epoch', () => {
    const leader = new InMemoryRaftLog();
    leader.appendAsLeader([{ value: 'a', timestamp: 0 }, { value: 'b', timestamp: 0 }], 1);
    leader.appendAsLeader([{ value: 'c', timestamp: 0 }], 3);
    const h = new Harness(2, [1, 2, 3], electionState(3, 1, -1));
    // A stale uncommitted entry from epoch 2 at offset 2.
    h.log.appendAsLeader([{ value: 'a', timestamp: 0 }, { value: 'b', timestamp: 0 }], 1);
    h.log.appendAsLeader([{ value: 'stale', timestamp: 0 }], 2);
    h.take('FETCH');
    h.start();
    let f = h.take('FETCH')[0];
    expect(f.req.data.topics[0].partitions[0]).toMatchObject({ fetchOffset: 3n, lastFetchedEpoch: 2 });
    h.node.handleResponse(1, f.corr, { apiKey: 'FETCH', data: fetchResponse(0, { errorCode: 0, highWatermark: 2n, logStartOffset: 0n, leaderId: 1, leaderEpoch: 3, divergingEpoch: { offset: 2n, epoch: 1 }, records: null }) });
    expect(h.log.endOffset()).toEqual({ offset: 2n, epoch: 1 });
    h.node.poll();
    f = h.take('FETCH')[0];
    expect(f.req.data.topics[0].partitions[0]).toMatchObject({ fetchOffset: 2n, lastFetchedEpoch: 1 });
    h.node.handleResponse(1, f.corr, { apiKey: 'FETCH', data: fetchResponse(0, { errorCode: 0, highWatermark: 3n, logStartOffset: 0n, leaderId: 1, leaderEpoch: 3, records: leader.read(2n, 1 << 20) }) });
    expect(h.log.endOffset()).toEqual({ offset: 3n, epoch: 3 });
    expect(h.log.highWatermark()).toBe(3n);
    expect(h.node.highWatermark).toBe(3n);
  });

  it('a follower that hears nothing for the fetch timeout becomes prospective', () => {
    const h = new Harness(2, [1, 2, 3], electionState(3, 1, -1));
    h.advance(1999);
    expect(h.node.stateName).toBe('Follower');
    h.advance(1);
    expect(h.node.stateName).toBe('Prospective');
    expect(h.node.epoch).toBe(3);
  });

  it('learns of a newer leader from a fetch error', () => {
    const h = new Harness(2, [1, 2, 3], electionState(3, 1, -1));
    const f = h.take('FETCH')[0];
    h.node.handleResponse(1, f.corr, { apiKey: 'FETCH', data: fetchResponse(0, { errorCode: ErrorCode.FENCED_LEADER_EPOCH, highWatermark: -1n, logStartOffset: 0n, leaderId: 3, leaderEpoch: 4, records: null }) });
    expect(h.node.stateName).toBe('Follower');
    expect(h.node.leaderId).toBe(3);
    expect(h.node.epoch).toBe(4);
    expect(h.store.read()).toEqual(electionState(4, 3, -1));
  });
});

describe('RaftNode: graceful shutdown', () => {
  it('a leader that shuts down resigns at once and is done when the others acknowledge', () => {
    const h = new Harness();
    h.becomeLeader();
    h.take('BEGIN_QUORUM_EPOCH');
    h.node.beginShutdown();
    expect(h.node.stateName).toBe('Resigned');
    expect(h.node.isShutdownComplete()).toBe(false);
    h.node.poll();
    const end = h.take('END_QUORUM_EPOCH');
    expect(end).toHaveLength(2);
    for (const e of end) h.node.handleResponse(e.dest, e.corr, { apiKey: 'END_QUORUM_EPOCH', data: endQuorumEpochResponse(0, { errorCode: 0, leaderId: 1, leaderEpoch: 1 }) });
    expect(h.node.isShutdownComplete()).toBe(true);
    // It starts no election while shutting down.
    h.advance(10_000);
    expect(h.node.stateName).toBe('Resigned');
    expect(h.take('VOTE')).toHaveLength(0);
  });

  it('a follower that shuts down does not start an election when its fetch timeout passes', () => {
    const h = new Harness(2, [1, 2, 3], electionState(3, 1, -1));
    h.node.beginShutdown();
    expect(h.node.isShutdownComplete()).toBe(true);
    h.advance(5_000);
    expect(h.node.stateName).toBe('Follower');
    expect(h.node.poll()).toBeGreaterThan(0);
  });
});

describe('RaftNode: DescribeQuorum and restarts', () => {
  it('the leader describes voters and observers; others answer NOT_LEADER_OR_FOLLOWER', () => {
    const h = new Harness();
    h.becomeLeader();
    h.advance(10);
    h.request(2, fetch({ epoch: 1, offset: 1n, lastEpoch: 1, replicaId: 2 }));
    h.request(7, fetch({ epoch: 1, offset: 0n, lastEpoch: 0, replicaId: 7 }));
    const r = h.request(5, { apiKey: 'DESCRIBE_QUORUM', data: describeQuorumRequest() });
    const p = r!.apiKey === 'DESCRIBE_QUORUM' ? r!.data.topics[0].partitions[0] : null;
    expect(p).toMatchObject({ errorCode: 0, leaderId: 1, leaderEpoch: 1, highWatermark: 1n });
    expect(p!.currentVoters.map((v) => [v.replicaId, v.logEndOffset, v.lastFetchTimestamp])).toEqual([
      [1, 1n, BigInt(h.now)],
      [2, 1n, BigInt(h.now)],
      [3, -1n, -1n],
    ]);
    expect(p!.observers.map((v) => v.replicaId)).toEqual([7]);
    const f = new Harness(2);
    const r2 = f.request(5, { apiKey: 'DESCRIBE_QUORUM', data: describeQuorumRequest() });
    expect(r2!.apiKey === 'DESCRIBE_QUORUM' && r2!.data.topics[0].partitions[0].errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('restarts keep the vote: a voter that voted does not vote for someone else in that epoch', () => {
    const h = new Harness(2);
    h.request(1, vote({ candidateEpoch: 1, candidateId: 1 }));
    h.start();
    expect(h.node.stateName).toBe('Unattached');
    expect(votePartition(h.request(3, vote({ candidateEpoch: 1, candidateId: 3 })))).toMatchObject({ voteGranted: false });
  });

  it('BeginQuorumEpoch responses are acknowledged by the leader, which re-sends periodically', () => {
    const h = new Harness();
    h.becomeLeader();
    const b = h.take('BEGIN_QUORUM_EPOCH');
    for (const x of b) h.node.handleResponse(x.dest, x.corr, { apiKey: 'BEGIN_QUORUM_EPOCH', data: beginQuorumEpochResponse(0, { errorCode: 0, leaderId: 1, leaderEpoch: 1 }) });
    h.advance(1000);
    expect(h.take('BEGIN_QUORUM_EPOCH')).toHaveLength(2);
  });
});
