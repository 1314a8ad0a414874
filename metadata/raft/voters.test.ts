/**
 * KIP-853 on the consensus core: the voter set and its control records (voter-set.ts), the
 * control-record state machine (kraft-control-state.ts), and the leader's AddRaftVoter /
 * RemoveRaftVoter / UpdateRaftVoter handling in RaftNode, on a manual clock with a capturing sink.
 */
import { ErrorCode } from '../../protocol/errors';
import type { AddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import type { RemoveRaftVoterResponse } from '../../protocol/generated/remove-raft-voter';
import type { UpdateRaftVoterResponse } from '../../protocol/generated/update-raft-voter';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control-record';
import { KRaftControlState } from './kraft-control-state';
import { makeQuorumConfig, votersOf } from './quorum-config';
import { InMemoryQuorumStateStore, NO_DIRECTORY_ID } from './quorum-state-store';
import { InMemoryRaftLog, decodeRaftRecords } from './raft-log';
import { describeQuorumRequest, fetchRequest, voteRequest, voteResponse, type RaftRequest, type RaftResponse } from './raft-messages';
import type { VoteResponse } from '../../protocol/generated/vote';
import { RaftNode } from './raft-node';
import {
  VoterSet,
  bootstrapCheckpoint,
  decodeKRaftControlRecord,
  kraftVersionControlRecord,
  parseDynamicVoter,
  readSnapshotControlState,
  snapshotControlRecords,
  votersControlRecord,
  type VoterNode,
} from './voter-set';

const CLUSTER = 'test-cluster';
/** A distinct directory id per replica id (a 16-byte uuid in Kafka's base64url form). */
const dir = (id: number): string => Buffer.alloc(16, id + 1).toString('base64url');

function voter(id: number, port = 9000 + id): VoterNode {
  return { key: { id, directoryId: dir(id) }, endpoints: [{ name: 'CONTROLLER', host: 'localhost', port }], kraftVersion: { min: 0, max: 1 } };
}

describe('VoterSet', () => {
  it('adds, removes and updates voters by replica key, immutably', () => {
    const s = new VoterSet([voter(1), voter(2), voter(3)]);
    expect(s.majoritySize()).toBe(2);
    expect(s.addVoter(voter(2))).toBeNull();
    const four = s.addVoter(voter(4))!;
    expect([...four.ids()]).toEqual([1, 2, 3, 4]);
    expect(four.majoritySize()).toBe(3);
    expect([...s.ids()]).toEqual([1, 2, 3]);
    expect(s.removeVoter({ id: 2, directoryId: dir(3) })).toBeNull();
    expect(s.removeVoter({ id: 9, directoryId: dir(9) })).toBeNull();
    expect([...s.removeVoter({ id: 2, directoryId: dir(2) })!.ids()]).toEqual([1, 3]);
    expect(new VoterSet([voter(1)]).removeVoter(voter(1).key)).toBeNull();
    const moved = s.updateVoter(voter(2, 7777))!;
    expect(moved.endpoint(2, 'CONTROLLER')).toEqual({ name: 'CONTROLLER', host: 'localhost', port: 7777 });
    expect(s.updateVoter({ ...voter(2), key: { id: 2, directoryId: dir(5) } })).toBeNull();
  });

  it('matches directory ids as Kafka does: exactly, unless the voter has none (a static set)', () => {
    const dynamic = new VoterSet([voter(1)]);
    expect(dynamic.isVoter({ id: 1, directoryId: dir(1) })).toBe(true);
    expect(dynamic.isVoter({ id: 1, directoryId: dir(2) })).toBe(false);
    expect(dynamic.isVoter({ id: 1, directoryId: NO_DIRECTORY_ID })).toBe(false);
    const fixed = VoterSet.fromStatic(votersOf([1, 2]));
    expect(fixed.isVoter({ id: 1, directoryId: dir(7) })).toBe(true);
    expect(fixed.isVoter({ id: 3, directoryId: NO_DIRECTORY_ID })).toBe(false);
  });

  it('round-trips through VotersRecord and KRaftVersionRecord control records', () => {
    const s = new VoterSet([voter(1), voter(2)]);
    const v = votersControlRecord(s);
    const d = decodeKRaftControlRecord(v.key as Buffer, v.value as Buffer);
    expect(d?.type).toBe('VOTERS');
    expect(d?.type === 'VOTERS' && d.voters.equals(s)).toBe(true);
    const k = kraftVersionControlRecord(1);
    expect(decodeKRaftControlRecord(k.key as Buffer, k.value as Buffer)).toEqual({ type: 'KRAFT_VERSION', kraftVersion: 1 });
    expect(snapshotControlRecords(0, s)).toEqual([]);
    expect(snapshotControlRecords(1, s)).toHaveLength(2);
  });

  it('writes the bootstrap checkpoint: header, KRaftVersion 1, Voters, footer', () => {
    const s = new VoterSet([voter(1), voter(2), voter(3)]);
    const data = bootstrapCheckpoint(s, 5);
    const types = decodeRaftRecords(data).map((r) => parseControlRecordType(r.key));
    expect(types).toEqual([ControlRecordType.SNAPSHOT_HEADER, ControlRecordType.KRAFT_VERSION, ControlRecordType.KRAFT_VOTERS, ControlRecordType.SNAPSHOT_FOOTER]);
    const state = readSnapshotControlState(data);
    expect(state.kraftVersion).toBe(1);
    expect(state.voters!.equals(s)).toBe(true);
    expect(readSnapshotControlState(Buffer.from('not batches'))).toEqual({ kraftVersion: null, voters: null });
  });

  it('parses --initial-controllers entries id@host:port:directoryId with Kafka messages', () => {
    const d = 'J8aAPcfLQt2bqs1JT_rMgQ';
    expect(parseDynamicVoter(`3@ctl-3:9093:${d}`).key).toEqual({ id: 3, directoryId: d });
    expect(parseDynamicVoter(`3@[::1]:9093:${d}`).endpoints[0]).toEqual({ name: 'CONTROLLER', host: '::1', port: 9093 });
    expect(() => parseDynamicVoter(`ctl-3:9093:${d}`)).toThrow(/No @ found/);
    expect(() => parseDynamicVoter('3@ctl-3:9093')).toThrow(/No colon following port/);
    expect(() => parseDynamicVoter('3@ctl-3:9093:nope')).toThrow(/directory ID/);
  });
});

describe('KRaftControlState', () => {
  it('takes the bootstrap checkpoint at -1, the latest VotersRecord in the log (even uncommitted), and reverts on truncation', () => {
    const log = new InMemoryRaftLog();
    const three = new VoterSet([voter(1), voter(2), voter(3)]);
    log.storeFetchedSnapshot({ offset: 0n, epoch: 0 }, bootstrapCheckpoint(three));
    const c = new KRaftControlState(log, VoterSet.fromStatic(new Map()));
    expect(c.lastKraftVersion()).toBe(1);
    expect(c.lastVoterSetEntry().offset).toBe(-1n);
    expect(c.lastVoterSet().equals(three)).toBe(true);
    log.appendAsLeader([{ value: 'x', timestamp: 0 }], 1);
    const four = three.addVoter(voter(4))!;
    log.appendAsLeader([votersControlRecord(four)], 1, true);
    c.sync();
    expect(c.lastVoterSetEntry().offset).toBe(1n);
    expect(c.lastVoterSet().equals(four)).toBe(true);
    expect(c.voterSetAtOffset(0n).equals(three)).toBe(true);
    log.truncateTo(1n);
    c.sync();
    expect(c.lastVoterSet().equals(three)).toBe(true);
    expect(c.lastVoterSetEntry().offset).toBe(-1n);
  });

  it('without any record is the static controller.quorum.voters at kraft.version 0', () => {
    const c = new KRaftControlState(new InMemoryRaftLog(), VoterSet.fromStatic(votersOf([1, 2, 3])));
    expect(c.lastKraftVersion()).toBe(0);
    expect([...c.lastVoterSet().ids()]).toEqual([1, 2, 3]);
    expect(c.hasVoterSetInLog()).toBe(false);
  });

  it('keeps the voter set across a snapshot that moves the log start', () => {
    const log = new InMemoryRaftLog();
    const three = new VoterSet([voter(1), voter(2), voter(3)]);
    log.appendAsLeader([kraftVersionControlRecord(1), votersControlRecord(three)], 1, true);
    log.appendAsLeader([{ value: 'a', timestamp: 0 }], 1);
    const c = new KRaftControlState(log, VoterSet.fromStatic(new Map()));
    expect(c.lastVoterSet().equals(three)).toBe(true);
    log.updateHighWatermark(3n);
    // A snapshot whose header batch carries the control records (what the controller's writer puts there).
    const two = three.removeVoter(voter(3).key)!;
    const snap = bootstrapCheckpoint(two);
    log.createSnapshot({ offset: 3n, epoch: 1 }, snap);
    log.deleteBeforeSnapshot({ offset: 3n, epoch: 1 });
    c.sync();
    expect(c.lastVoterSetEntry().offset).toBe(2n);
    expect(c.lastVoterSet().equals(two)).toBe(true);
  });
});

/** A node of a dynamic (kraft.version 1) quorum formatted with --initial-controllers 1,2,3. */
class Harness {
  now = 1000;
  readonly requests: { dest: number; corr: number; req: RaftRequest }[] = [];
  readonly responses: { dest: number; corr: number; resp: RaftResponse }[] = [];
  readonly log = new InMemoryRaftLog();
  readonly node: RaftNode;

  constructor(opts: { dynamic?: boolean; id?: number; port?: number } = {}) {
    const dynamic = opts.dynamic ?? true;
    const id = opts.id ?? 1;
    if (dynamic) this.log.storeFetchedSnapshot({ offset: 0n, epoch: 0 }, bootstrapCheckpoint(new VoterSet([voter(1), voter(2), voter(3)])));
    this.node = new RaftNode({
      nodeId: id,
      clusterId: CLUSTER,
      config: makeQuorumConfig({
        voters: dynamic ? new Map() : votersOf([1, 2, 3]),
        bootstrapServers: dynamic ? [{ host: 'localhost', port: 9001 }] : [],
        electionTimeoutMs: 1000,
        fetchTimeoutMs: 2000,
        requestTimeoutMs: 2000,
      }),
      clock: { now: () => this.now },
      random: { nextInt: () => 0 },
      log: this.log,
      store: new InMemoryQuorumStateStore(),
      directoryId: dynamic ? dir(id) : NO_DIRECTORY_ID,
      listeners: [{ name: 'CONTROLLER', host: 'localhost', port: opts.port ?? 9000 + id }],
      sink: {
        sendRequest: (dest, corr, req) => this.requests.push({ dest, corr, req }),
        sendResponse: (dest, corr, resp) => this.responses.push({ dest, corr, resp }),
      },
    });
    this.node.poll();
  }

  advance(ms: number): void {
    this.now += ms;
    this.node.poll();
  }

  becomeLeader(): void {
    this.advance(1000);
    for (let round = 0; round < 2; round++) {
      const votes = this.requests.filter((r) => r.req.apiKey === 'VOTE');
      this.requests.length = 0;
      for (const v of votes) {
        const p = (v.req.data as { topics: { partitions: { preVote: boolean; candidateEpoch: number }[] }[] }).topics[0].partitions[0];
        const epoch = p.preVote ? this.node.epoch : p.candidateEpoch;
        this.node.handleResponse(v.dest, v.corr, { apiKey: 'VOTE', data: voteResponse(ErrorCode.NONE, { errorCode: ErrorCode.NONE, leaderId: -1, leaderEpoch: epoch, voteGranted: true }) });
      }
      this.node.poll();
    }
    expect(this.node.stateName).toBe('Leader');
  }

  /** A Fetch from `id` at `offset` (default: the leader's log end), answered at once. */
  fetch(id: number, offset?: bigint, directoryId = dir(id)): RaftResponse | undefined {
    const end = this.log.endOffset();
    return this.request(
      id,
      {
        apiKey: 'FETCH',
        data: fetchRequest({
          clusterId: CLUSTER,
          replicaId: id,
          maxWaitMs: 0,
          currentLeaderEpoch: this.node.epoch,
          fetchOffset: offset ?? end.offset,
          lastFetchedEpoch: offset === undefined ? end.epoch : offset === 0n ? 0 : this.log.epochForOffset(offset - 1n)!,
          logStartOffset: 0n,
          maxBytes: 1 << 20,
          replicaDirectoryId: directoryId,
        }),
      },
      1000 + id,
    );
  }

  /** Makes the epoch's start committed: voters 2 and 3 fetch to the end. */
  commitEpochStart(): void {
    this.fetch(2);
    this.fetch(3);
    expect(this.node.highWatermark).toBe(this.log.endOffset().offset);
  }

  request(source: number, req: RaftRequest, corr = 99): RaftResponse | undefined {
    const before = this.responses.length;
    this.node.handleRequest(source, corr, req);
    this.node.poll();
    return this.responses.slice(before).find((r) => r.corr === corr)?.resp;
  }

  addVoter(v: VoterNode, corr = 7): AddRaftVoterResponse | undefined {
    const r = this.request(-1, { apiKey: 'ADD_RAFT_VOTER', data: { clusterId: CLUSTER, timeoutMs: 2000, voterId: v.key.id, voterDirectoryId: v.key.directoryId, listeners: v.endpoints.map((e) => ({ ...e })) } }, corr);
    return r?.data as AddRaftVoterResponse | undefined;
  }

  removeVoter(id: number, directoryId = dir(id), corr = 8): RemoveRaftVoterResponse | undefined {
    const r = this.request(-1, { apiKey: 'REMOVE_RAFT_VOTER', data: { clusterId: CLUSTER, voterId: id, voterDirectoryId: directoryId } }, corr);
    return r?.data as RemoveRaftVoterResponse | undefined;
  }

  responseTo(corr: number): RaftResponse | undefined {
    return this.responses.find((r) => r.corr === corr)?.resp;
  }
}

describe('RaftNode with dynamic voters (KIP-853)', () => {
  it('a new leader copies the bootstrap voter set into the log with its LeaderChange record', () => {
    const h = new Harness();
    expect(h.node.kraftVersion).toBe(1);
    expect(h.node.isVoter).toBe(true);
    h.becomeLeader();
    const types = decodeRaftRecords(h.log.read(0n, 1 << 20)).map((r) => parseControlRecordType(r.key));
    expect(types).toEqual([ControlRecordType.LEADER_CHANGE, ControlRecordType.KRAFT_VERSION, ControlRecordType.KRAFT_VOTERS]);
  });

  it('a new leader whose listeners moved writes its own endpoints into that VotersRecord', () => {
    const h = new Harness({ port: 7001 });
    h.becomeLeader();
    expect(h.node.voterSet.endpoint(1)).toEqual({ name: 'CONTROLLER', host: 'localhost', port: 7001 });
    expect(h.node.voterSet.endpoint(2)).toEqual({ name: 'CONTROLLER', host: 'localhost', port: 9002 });
  });

  it('refuses voter changes before the epoch commits, for kraft.version 0, and from a non-leader', () => {
    const h = new Harness();
    expect(h.addVoter(voter(4))?.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    h.becomeLeader();
    expect(h.addVoter(voter(4))?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    expect(h.removeVoter(3)?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    const s = new Harness({ dynamic: false });
    s.becomeLeader();
    s.fetch(2);
    s.fetch(3);
    expect(s.node.highWatermark).not.toBeNull();
    expect(s.addVoter(voter(4))?.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(s.removeVoter(3, NO_DIRECTORY_ID)?.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
  });

  it('AddRaftVoter: INVALID_REQUEST, DUPLICATE_VOTER, REQUEST_TIMED_OUT while the observer lags, then the new voter once it commits', () => {
    const h = new Harness();
    h.becomeLeader();
    h.commitEpochStart();
    expect(h.addVoter({ ...voter(4), key: { id: 4, directoryId: NO_DIRECTORY_ID } })?.errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(h.addVoter({ ...voter(4), endpoints: [{ name: 'OTHER', host: 'h', port: 1 }] })?.errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(h.addVoter(voter(2))?.errorCode).toBe(ErrorCode.DUPLICATE_VOTER);
    // Not an observer yet, then one that fetched but never reached the end.
    expect(h.addVoter(voter(4))?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    h.fetch(4, 0n);
    expect(h.addVoter(voter(4))?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    // Caught up, but with another directory: not the replica named.
    h.fetch(4, undefined, dir(9));
    expect(h.addVoter(voter(4))?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    h.fetch(4);
    expect(h.addVoter(voter(4), 70)).toBeUndefined();
    // In force at once (uncommitted): four voters, majority three.
    expect([...h.node.voterSet.ids()]).toEqual([1, 2, 3, 4]);
    const recordOffset = h.log.endOffset().offset - 1n;
    // One change at a time.
    expect(h.removeVoter(3)?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    // The leader and voter 2 have it: 2 of 4 is not a majority of the new set.
    h.fetch(2);
    expect(h.node.highWatermark).toBeLessThanOrEqual(recordOffset);
    expect(h.responseTo(70)).toBeUndefined();
    h.fetch(4);
    expect(h.node.highWatermark).toBe(recordOffset + 1n);
    expect((h.responseTo(70)?.data as AddRaftVoterResponse).errorCode).toBe(ErrorCode.NONE);
    const d = h.request(-1, { apiKey: 'DESCRIBE_QUORUM', data: describeQuorumRequest() })!;
    const part = (d.data as { topics: { partitions: { currentVoters: { replicaId: number; replicaDirectoryId: string }[] }[] }[] }).topics[0].partitions[0];
    expect(part.currentVoters.map((v) => [v.replicaId, v.replicaDirectoryId])).toEqual([1, 2, 3, 4].map((i) => [i, dir(i)]));
  });

  it('a pending change times out REQUEST_TIMED_OUT, and is answered NOT_LEADER_OR_FOLLOWER when the leader steps down', () => {
    const h = new Harness();
    h.becomeLeader();
    h.commitEpochStart();
    h.fetch(4);
    expect(h.addVoter(voter(4), 71)).toBeUndefined();
    h.advance(2000);
    expect((h.responseTo(71)?.data as AddRaftVoterResponse).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    // The uncommitted VotersRecord still blocks the next change.
    expect(h.removeVoter(2)?.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
    h.fetch(2);
    h.fetch(3);
    expect(h.removeVoter(4, dir(4), 72)).toBeUndefined();
    h.node.resign();
    h.node.poll();
    expect((h.responseTo(72)?.data as RemoveRaftVoterResponse).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('RemoveRaftVoter: VOTER_NOT_FOUND for another directory; a removed leader resigns once the removal commits', () => {
    const h = new Harness();
    h.becomeLeader();
    h.commitEpochStart();
    expect(h.removeVoter(3, dir(8))?.errorCode).toBe(ErrorCode.VOTER_NOT_FOUND);
    expect(h.removeVoter(9)?.errorCode).toBe(ErrorCode.VOTER_NOT_FOUND);
    expect(h.removeVoter(1, dir(1), 73)).toBeUndefined();
    expect(h.node.isVoter).toBe(false);
    expect(h.node.stateName).toBe('Leader');
    // The new set {2, 3} needs both (the leader no longer counts).
    h.fetch(2);
    expect(h.responseTo(73)).toBeUndefined();
    h.fetch(3);
    expect((h.responseTo(73)?.data as RemoveRaftVoterResponse).errorCode).toBe(ErrorCode.NONE);
    expect(h.node.stateName).toBe('Resigned');
    const ends = h.requests.filter((r) => r.req.apiKey === 'END_QUORUM_EPOCH').map((r) => r.dest);
    expect(ends.sort()).toEqual([2, 3]);
    // After its election timeout it goes on as an observer, never a candidate.
    h.advance(3000);
    expect(h.node.stateName).toBe('Unattached');
    expect(h.requests.some((r) => r.req.apiKey === 'VOTE' && r.corr > 0 && h.node.epoch > 1)).toBe(false);
  });

  it('a replica that is not a voter in its own log still answers and grants votes (a voter just added may not have its VotersRecord yet)', () => {
    const h = new Harness({ id: 4 });
    expect(h.node.isVoter).toBe(false);
    const r = h.request(1, { apiKey: 'VOTE', data: voteRequest({ clusterId: CLUSTER, voterId: 4, candidateEpoch: 3, candidateId: 1, lastEndOffset: { offset: 0n, epoch: 0 }, preVote: false, candidateDirectoryId: dir(1), voterDirectoryId: dir(4) }) })!;
    expect((r.data as VoteResponse).topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, voteGranted: true, leaderEpoch: 3 });
    // A Vote naming another directory of this id is not for this replica.
    const other = h.request(2, { apiKey: 'VOTE', data: voteRequest({ clusterId: CLUSTER, voterId: 4, candidateEpoch: 4, candidateId: 2, lastEndOffset: { offset: 0n, epoch: 0 }, preVote: false, voterDirectoryId: dir(9) }) })!;
    expect((other.data as VoteResponse).topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.INVALID_VOTER_KEY, voteGranted: false });
  });

  it('UpdateRaftVoter: answers at once, VOTER_NOT_FOUND for an unknown key, and the new endpoint is in force', () => {
    const h = new Harness();
    h.becomeLeader();
    h.commitEpochStart();
    const update = (id: number, directoryId: string, port: number): UpdateRaftVoterResponse =>
      h.request(id, {
        apiKey: 'UPDATE_RAFT_VOTER',
        data: {
          clusterId: CLUSTER,
          currentLeaderEpoch: h.node.epoch,
          voterId: id,
          voterDirectoryId: directoryId,
          listeners: [{ name: 'CONTROLLER', host: 'moved', port }],
          kRaftVersionFeature: { minSupportedVersion: 0, maxSupportedVersion: 1 },
        },
      })!.data as UpdateRaftVoterResponse;
    expect(update(2, dir(5), 1).errorCode).toBe(ErrorCode.VOTER_NOT_FOUND);
    const r = update(2, dir(2), 5555);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.currentLeader).toMatchObject({ leaderId: 1, leaderEpoch: h.node.epoch, host: 'localhost', port: 9001 });
    expect(h.node.endpointOf(2)).toEqual({ host: 'moved', port: 5555 });
  });

  it('an observer without a voter set fetches from controller.quorum.bootstrap.servers and learns the leader endpoint', () => {
    const log = new InMemoryRaftLog();
    const requests: { dest: number; req: RaftRequest; corr: number }[] = [];
    const node = new RaftNode({
      nodeId: 4,
      clusterId: CLUSTER,
      config: makeQuorumConfig({ voters: new Map(), bootstrapServers: [{ host: 'b1', port: 1 }] }),
      clock: { now: () => 0 },
      random: { nextInt: () => 0 },
      log,
      store: new InMemoryQuorumStateStore(),
      directoryId: dir(4),
      sink: { sendRequest: (dest, corr, req) => requests.push({ dest, corr, req }), sendResponse: () => undefined },
    });
    node.poll();
    expect(node.isVoter).toBe(false);
    expect(requests.map((r) => [r.dest, r.req.apiKey])).toEqual([[-2, 'FETCH']]);
    expect(node.endpointOf(-2)).toEqual({ host: 'b1', port: 1 });
    const fetch = requests[0];
    node.handleResponse(-2, fetch.corr, {
      apiKey: 'FETCH',
      data: {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [
          {
            topic: '__cluster_metadata',
            topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
            partitions: [
              {
                partitionIndex: 0,
                errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
                highWatermark: -1n,
                lastStableOffset: -1n,
                logStartOffset: 0n,
                divergingEpoch: { epoch: -1, endOffset: -1n },
                currentLeader: { leaderId: 1, leaderEpoch: 3 },
                snapshotId: { endOffset: -1n, epoch: -1 },
                abortedTransactions: null,
                preferredReadReplica: -1,
                records: null,
              },
            ],
          },
        ],
        nodeEndpoints: [{ nodeId: 1, host: 'leader-host', port: 9091, rack: null }],
      },
    });
    expect(node.stateName).toBe('Follower');
    expect(node.leaderId).toBe(1);
    expect(node.endpointOf(1)).toEqual({ host: 'leader-host', port: 9091 });
  });
});

describe('a voter whose endpoints changed (KIP-853 UpdateRaftVoter from the follower)', () => {
  it('sends UpdateRaftVoter to its leader once it fetched, until the leader accepts it in the epoch', () => {
    const log = new InMemoryRaftLog();
    log.storeFetchedSnapshot({ offset: 0n, epoch: 0 }, bootstrapCheckpoint(new VoterSet([voter(1), voter(2), voter(3)])));
    const requests: { dest: number; corr: number; req: RaftRequest }[] = [];
    let now = 0;
    const node = new RaftNode({
      nodeId: 2,
      clusterId: CLUSTER,
      config: makeQuorumConfig({ voters: new Map(), bootstrapServers: [{ host: 'localhost', port: 9001 }], fetchTimeoutMs: 2000 }),
      clock: { now: () => now },
      random: { nextInt: () => 0 },
      log,
      store: new InMemoryQuorumStateStore(),
      directoryId: dir(2),
      // Moved from port 9002 (what the voter set says) to 7002.
      listeners: [{ name: 'CONTROLLER', host: 'localhost', port: 7002 }],
      sink: { sendRequest: (dest, corr, req) => requests.push({ dest, corr, req }), sendResponse: () => undefined },
    });
    // Node 1 leads epoch 1: a BeginQuorumEpoch, then a fetch answered.
    node.handleRequest(1, 1, { apiKey: 'BEGIN_QUORUM_EPOCH', data: { clusterId: CLUSTER, voterId: 2, topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0, voterDirectoryId: dir(2), leaderId: 1, leaderEpoch: 1 }] }], leaderEndpoints: [] } });
    node.poll();
    expect(node.stateName).toBe('Follower');
    expect(requests.some((r) => r.req.apiKey === 'UPDATE_RAFT_VOTER')).toBe(false);
    const fetch = requests.find((r) => r.req.apiKey === 'FETCH')!;
    const ok = fetchResponseFor(1, 1);
    node.handleResponse(1, fetch.corr, ok);
    node.poll();
    const updates = requests.filter((r) => r.req.apiKey === 'UPDATE_RAFT_VOTER');
    expect(updates).toHaveLength(1);
    expect(updates[0].dest).toBe(1);
    expect(updates[0].req.data).toMatchObject({ currentLeaderEpoch: 1, voterId: 2, voterDirectoryId: dir(2), listeners: [{ name: 'CONTROLLER', host: 'localhost', port: 7002 }] });
    node.handleResponse(1, updates[0].corr, { apiKey: 'UPDATE_RAFT_VOTER', data: { throttleTimeMs: 0, errorCode: 0, currentLeader: { leaderId: 1, leaderEpoch: 1, host: 'localhost', port: 9001 } } });
    now += 5000;
    node.poll();
    expect(requests.filter((r) => r.req.apiKey === 'UPDATE_RAFT_VOTER')).toHaveLength(1);
  });
});

function fetchResponseFor(leaderId: number, epoch: number): RaftResponse {
  return {
    apiKey: 'FETCH',
    data: {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: '__cluster_metadata',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              highWatermark: 0n,
              lastStableOffset: -1n,
              logStartOffset: 0n,
              divergingEpoch: { epoch: -1, endOffset: -1n },
              currentLeader: { leaderId, leaderEpoch: epoch },
              snapshotId: { endOffset: -1n, epoch: -1 },
              abortedTransactions: null,
              preferredReadReplica: -1,
              records: null,
            },
          ],
        },
      ],
      nodeEndpoints: [],
    },
  };
}

describe('auto-join (controller.quorum.auto.join.enable)', () => {
  it('an observer that fetched from the leader in kraft.version 1 asks it to add this replica, every fetch timeout', () => {
    // The observer already replicated the leader's epoch start (KRaftVersion 1 + Voters {1, 2, 3}).
    const log = new InMemoryRaftLog();
    log.appendAsLeader([kraftVersionControlRecord(1), votersControlRecord(new VoterSet([voter(1), voter(2), voter(3)]))], 1, true);
    const requests: { dest: number; corr: number; req: RaftRequest }[] = [];
    let now = 0;
    const node = new RaftNode({
      nodeId: 4,
      clusterId: CLUSTER,
      config: makeQuorumConfig({ voters: new Map(), bootstrapServers: [{ host: 'localhost', port: 9001 }], fetchTimeoutMs: 2000 }),
      clock: { now: () => now },
      random: { nextInt: () => 0 },
      log,
      store: new InMemoryQuorumStateStore(),
      directoryId: dir(4),
      listeners: [{ name: 'CONTROLLER', host: 'localhost', port: 9004 }],
      autoJoin: true,
      sink: { sendRequest: (dest, corr, req) => requests.push({ dest, corr, req }), sendResponse: () => undefined },
    });
    node.poll();
    expect(node.kraftVersion).toBe(1);
    const first = requests.find((r) => r.req.apiKey === 'FETCH')!;
    expect(first.dest).toBe(-2);
    node.handleResponse(-2, first.corr, fetchResponseFor(1, 1));
    node.poll();
    expect(node.stateName).toBe('Follower');
    const adds = () => requests.filter((r) => r.req.apiKey === 'ADD_RAFT_VOTER');
    expect(adds()).toHaveLength(1);
    expect(adds()[0]).toMatchObject({ dest: 1, req: { data: { voterId: 4, voterDirectoryId: dir(4), listeners: [{ name: 'CONTROLLER', host: 'localhost', port: 9004 }] } } });
    node.handleResponse(1, adds()[0].corr, { apiKey: 'ADD_RAFT_VOTER', data: { throttleTimeMs: 0, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: 'lagging' } });
    // Still following (its fetches answered), it asks again after a fetch timeout.
    now += 1000;
    for (const f of requests.filter((r) => r.req.apiKey === 'FETCH' && r.dest === 1)) node.handleResponse(1, f.corr, fetchResponseFor(1, 1));
    node.poll();
    expect(adds()).toHaveLength(1);
    now += 1100;
    for (const f of requests.filter((r) => r.req.apiKey === 'FETCH' && r.dest === 1)) node.handleResponse(1, f.corr, fetchResponseFor(1, 1));
    node.poll();
    expect(adds()).toHaveLength(2);
  });
});
