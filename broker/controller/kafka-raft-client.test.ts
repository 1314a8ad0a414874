/**
 * Three KafkaRaftClients in one process, each on its own listener (SocketServer + RequestDispatcher
 * with the controller listener's quorum handlers, port 0) and its own UnifiedRaftLog and
 * quorum-state file in a temp directory, talking over krill's network client: a leader is elected,
 * appends commit on every node, a leader that stops is replaced within the timeouts with nothing
 * committed lost, a restarted node catches up from the log, and DescribeQuorum shows the voters.
 * Snapshots: createSnapshot with retention 0 trims the log to the latest; a voter behind the log
 * start downloads it and its listener gets onLoadSnapshot (also when the snapshot is at the
 * leader's last batch, which moves no high watermark), and a restart on the trimmed log loads the
 * latest snapshot and then only what follows it.
 * Waits are on the clients' own events (leader changes, commits), each bounded.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { SocketServer } from '../network/socket-server';
import { RequestDispatcher } from '../request-dispatcher';
import { ALLOW_ALL, type Authorizer } from '../../metadata/authorizer/authorizer';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import type { DescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import { connect } from '../../client/network-client';
import { RAFT_TEST_SOCKET_OPTIONS, raftTestHandlers, type RaftTestCtx } from './testing/raft-test-listener';
import { KafkaRaftClient, NotControllerError } from '../../metadata/raft/kafka-raft-client';
import { makeQuorumConfig, type QuorumConfig, type VoterEndpoint } from '../../metadata/raft/quorum-config';
import { UnifiedRaftLog } from '../../metadata/raft/unified-raft-log';
import { FileQuorumStateStore } from '../../metadata/raft/quorum-state-store';
import { describeQuorumRequest, voteRequest } from '../../metadata/raft/raft-messages';
import type { VoteResponse } from '../../protocol/generated/vote';

jest.setTimeout(30_000);

const ELECTION_TIMEOUT_MS = 400;
const FETCH_TIMEOUT_MS = 800;
/** An election: at most 2 x the election timeout before the pre-vote, then two round trips. */
const ELECTION_BOUND_MS = 2 * ELECTION_TIMEOUT_MS + 600;
const CLUSTER_ID = 'raftnet-test-cluster-';
const IDS = [1, 2, 3];

const logger = Logger.root('raft-test', { level: 'error' });

type TestCtx = RaftTestCtx;
const HANDLERS = raftTestHandlers();
const SOCKET_OPTIONS = RAFT_TEST_SOCKET_OPTIONS;

/** One node: a listener that outlives its raft client, and the client's data directory. */
class TestNode {
  readonly ctx: TestCtx = { authorizer: ALLOW_ALL, versionCaps: new Map() };
  server: SocketServer | null = null;
  port = 0;
  client: KafkaRaftClient | null = null;
  log: UnifiedRaftLog | null = null;
  /** The values of the committed non-control records, in offset order, as this incarnation saw them. */
  committed: string[] = [];
  /** Snapshots handed to this incarnation's listener. */
  loaded: { offset: bigint; epoch: number; data: string }[] = [];
  /** Set on the next start: metadata.max.retention.bytes / .ms for the client. */
  retention: { maxBytes: number; maxMs: number } | undefined;

  constructor(
    readonly id: number,
    readonly dir: string,
    private readonly changed: () => void,
  ) {}

  async listen(port: number): Promise<void> {
    const dispatcher = new RequestDispatcher<TestCtx>(this.ctx, HANDLERS, logger.child('request'));
    this.ctx.dispatcher = dispatcher;
    this.server = new SocketServer(dispatcher, SOCKET_OPTIONS, logger.child('network'));
    const [bound] = await this.server.listen([{ name: 'CONTROLLER', host: '127.0.0.1', port, securityProtocol: 'PLAINTEXT' }]);
    this.port = bound.boundPort;
  }

  start(config: QuorumConfig): void {
    this.committed = [];
    this.loaded = [];
    this.log = new UnifiedRaftLog({ dir: this.dir });
    const client = new KafkaRaftClient({
      nodeId: this.id,
      clusterId: CLUSTER_ID,
      config,
      log: this.log,
      store: FileQuorumStateStore.inDir(this.dir, { voterIds: IDS }),
      logger: logger.child(`raft-${this.id}`),
      shutdownTimeoutMs: 2_000,
      snapshotRetention: this.retention,
    });
    client.addListener({
      onCommit: (batches) => {
        for (const b of batches) if (!b.isControl) for (const r of b.records) this.committed.push(r.value!.toString());
        this.changed();
      },
      onLeaderChange: () => this.changed(),
      onLoadSnapshot: (snap) => {
        this.loaded.push({ offset: snap.id.offset, epoch: snap.id.epoch, data: snap.data.toString() });
        this.changed();
      },
    });
    this.client = client;
    this.ctx.raftClient = client;
    client.start();
  }

  /** Stops the raft client and the listener (graceful: the leader resigns first), as a process exit. */
  async stop(graceful: boolean): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.close({ graceful });
    this.ctx.raftClient = undefined;
    await this.server?.close();
    this.server = null;
    this.log?.close();
    this.log = null;
  }
}

let root: string;
let nodes: TestNode[];
let config: QuorumConfig;
const waiters = new Set<() => void>();
const changed = (): void => {
  for (const w of [...waiters]) w();
};

/** Three nodes with listeners bound (port 0) under `dir`, and their quorum config; `caps` limits a node's advertised versions. */
async function makeNodes(dir: string, caps: ReadonlyMap<number, ReadonlyMap<number, number>> = new Map()): Promise<{ nodes: TestNode[]; config: QuorumConfig }> {
  const ns = IDS.map((id) => new TestNode(id, path.join(dir, `node-${id}`, '__cluster_metadata-0'), changed));
  for (const n of ns) {
    n.ctx.versionCaps = caps.get(n.id) ?? new Map();
    await n.listen(0);
  }
  const voters = new Map<number, VoterEndpoint>(ns.map((n) => [n.id, { id: n.id, host: '127.0.0.1', port: n.port }]));
  const cfg = makeQuorumConfig({ voters, electionTimeoutMs: ELECTION_TIMEOUT_MS, fetchTimeoutMs: FETCH_TIMEOUT_MS, requestTimeoutMs: 1_000, electionBackoffMaxMs: 400 });
  return { nodes: ns, config: cfg };
}

/** Resolves once `cond` holds, re-checked on every leader change and commit; fails after `timeoutMs`. */
function waitFor(what: string, cond: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!cond()) return;
      cleanup();
      resolve(Date.now() - started);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    waiters.add(check);
    check();
  });
}

const running = (): TestNode[] => nodes.filter((n) => n.client !== null);

/** The leader every running node follows, in one epoch, or null. */
function agreedLeader(minEpoch = 0): TestNode | null {
  const r = running();
  const l = r[0]?.client?.leader;
  if (!l || l.id < 0 || l.epoch < minEpoch) return null;
  if (!r.every((n) => n.client!.leader.id === l.id && n.client!.leader.epoch === l.epoch)) return null;
  const leader = nodes.find((n) => n.id === l.id);
  return leader?.client?.isLeader ? leader : null;
}

const values = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

async function appendAll(leader: TestNode, vals: string[]): Promise<void> {
  await Promise.all(vals.map((v) => leader.client!.append([{ key: null, value: Buffer.from(v) }])));
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-raftnet-'));
  ({ nodes, config } = await makeNodes(path.join(root, 'main')));
});

afterAll(async () => {
  for (const n of nodes ?? []) await n.stop(false).catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

describe('KafkaRaftClient: three voters over the network', () => {
  let firstLeader: TestNode;
  const committedBefore: string[] = [];

  it('elects a leader that every voter follows', async () => {
    for (const n of nodes) n.start(config);
    const ms = await waitFor('a leader', () => agreedLeader() !== null, ELECTION_BOUND_MS + 2_000);
    firstLeader = agreedLeader()!;
    expect(ms).toBeLessThan(ELECTION_BOUND_MS);
    const follower = nodes.find((n) => n !== firstLeader)!;
    expect(follower.client!.leader).toEqual({ id: firstLeader.id, epoch: firstLeader.client!.epoch, endpoint: { id: firstLeader.id, host: '127.0.0.1', port: firstLeader.port } });
    await expect(follower.client!.append([{ key: null, value: Buffer.from('x') }])).rejects.toBeInstanceOf(NotControllerError);
  });

  it('commits appends on all three', async () => {
    const vals = values('a', 20);
    await appendAll(firstLeader, vals);
    committedBefore.push(...vals);
    await waitFor('commits on every node', () => nodes.every((n) => n.committed.length >= vals.length), 5_000);
    for (const n of nodes) expect(n.committed).toEqual(vals);
  });

  it('answers DescribeQuorum from krill client with the three voters', async () => {
    const conn = await connect('127.0.0.1', firstLeader.port, { timeoutMs: 5_000, requestTimeoutMs: 5_000 });
    try {
      const res = (await conn.send('DescribeQuorum', 2, describeQuorumRequest())) as DescribeQuorumResponse;
      expect(res.errorCode).toBe(ErrorCode.NONE);
      const p = res.topics[0].partitions[0];
      expect(p.errorCode).toBe(ErrorCode.NONE);
      expect(p.leaderId).toBe(firstLeader.id);
      expect(p.currentVoters.map((v) => v.replicaId).sort()).toEqual(IDS);
      expect(p.highWatermark).toBeGreaterThan(BigInt(committedBefore.length));
      // Another node says NOT_LEADER_OR_FOLLOWER.
      const other = nodes.find((n) => n !== firstLeader)!;
      const c2 = await connect('127.0.0.1', other.port, { timeoutMs: 5_000, requestTimeoutMs: 5_000 });
      try {
        const r2 = (await c2.send('DescribeQuorum', 2, describeQuorumRequest())) as DescribeQuorumResponse;
        expect(r2.topics[0].partitions[0].errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      } finally {
        await c2.close();
      }
    } finally {
      await conn.close();
    }
  });

  it('refuses quorum requests the authorizer denies (CLUSTER_AUTHORIZATION_FAILED at the top level)', async () => {
    const denyAll: Authorizer = { authorize: (_ctx, actions) => actions.map(() => 'DENIED'), authorizeByResourceType: () => 'DENIED' };
    firstLeader.ctx.authorizer = denyAll;
    const conn = await connect('127.0.0.1', firstLeader.port, { timeoutMs: 5_000, requestTimeoutMs: 5_000 });
    try {
      const dq = (await conn.send('DescribeQuorum', 2, describeQuorumRequest())) as DescribeQuorumResponse;
      expect(dq.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      const vote = (await conn.send('Vote', 2, voteRequest({ clusterId: CLUSTER_ID, voterId: firstLeader.id, candidateEpoch: 99, candidateId: 2, lastEndOffset: { offset: 1000n, epoch: 98 }, preVote: false }))) as VoteResponse;
      expect(vote.errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    } finally {
      firstLeader.ctx.authorizer = ALLOW_ALL;
      await conn.close();
    }
    expect(firstLeader.client!.epoch).toBeLessThan(99);
  });

  it('replaces a leader that stops, within the election bound, losing nothing committed', async () => {
    const epoch = firstLeader.client!.epoch;
    const started = Date.now();
    await firstLeader.stop(true);
    await waitFor('a new leader', () => agreedLeader(epoch + 1) !== null, ELECTION_BOUND_MS + 2_000);
    expect(Date.now() - started).toBeLessThan(ELECTION_BOUND_MS);
    const leader = agreedLeader(epoch + 1)!;
    expect(leader).not.toBe(firstLeader);
    const more = values('b', 10);
    await appendAll(leader, more);
    committedBefore.push(...more);
    await waitFor('commits on the two', () => running().every((n) => n.committed.length >= committedBefore.length), 5_000);
    for (const n of running()) expect(n.committed).toEqual(committedBefore);
  });

  it('catches a restarted node up from the leader', async () => {
    await firstLeader.listen(firstLeader.port);
    firstLeader.start(config);
    await waitFor('the restarted node to catch up', () => firstLeader.committed.length >= committedBefore.length && agreedLeader() !== null, 5_000);
    expect(firstLeader.committed).toEqual(committedBefore);
    expect(firstLeader.client!.isLeader).toBe(false);
  });

  it('replaces a leader that crashes (no resignation) within the fetch timeout plus an election', async () => {
    const leader = agreedLeader()!;
    const epoch = leader.client!.epoch;
    const started = Date.now();
    await leader.stop(false);
    await waitFor('a new leader after a crash', () => agreedLeader(epoch + 1) !== null, FETCH_TIMEOUT_MS + ELECTION_BOUND_MS + 3_000);
    expect(Date.now() - started).toBeLessThan(FETCH_TIMEOUT_MS + ELECTION_BOUND_MS);
    const next = agreedLeader(epoch + 1)!;
    const more = values('c', 5);
    await appendAll(next, more);
    committedBefore.push(...more);
    await waitFor('commits after the crash', () => running().every((n) => n.committed.length >= committedBefore.length), 5_000);
    for (const n of running()) expect(n.committed).toEqual(committedBefore);
  });
});

describe('KafkaRaftClient: leadership lost, and a single voter', () => {
  it('rejects a waiting append with NOT_CONTROLLER when the leader loses its quorum (check-quorum)', async () => {
    const leader = agreedLeader()!;
    for (const n of running()) if (n !== leader) await n.stop(false);
    const pending = leader.client!.append([{ key: null, value: Buffer.from('never-committed') }]);
    const started = Date.now();
    await expect(pending).rejects.toMatchObject({ code: ErrorCode.NOT_CONTROLLER });
    // Check-quorum: 1.5 fetch timeouts without fetches from a majority after the last period in which a majority fetched (measured 1.7-1.9 s here).
    expect(Date.now() - started).toBeLessThan(2 * FETCH_TIMEOUT_MS + 1_500);
    expect(leader.client!.isLeader).toBe(false);
    await leader.stop(false);
  });

  it('a quorum of one elects itself and commits at once', async () => {
    const n = new TestNode(1, path.join(root, 'single', '__cluster_metadata-0'), changed);
    await n.listen(0);
    try {
      n.start(makeQuorumConfig({ voters: new Map([[1, { id: 1, host: '127.0.0.1', port: n.port }]]), electionTimeoutMs: ELECTION_TIMEOUT_MS }));
      await waitFor('the single voter to lead', () => n.client!.isLeader, ELECTION_BOUND_MS + 2_000);
      await n.client!.append([{ key: null, value: Buffer.from('solo') }]);
      await waitFor('the commit', () => n.committed.length === 1, 2_000);
      expect(n.committed).toEqual(['solo']);
    } finally {
      await n.stop(true);
    }
  });
});

describe('KafkaRaftClient: a peer on older versions', () => {
  afterAll(async () => {
    for (const n of nodes) await n.stop(false).catch(() => undefined);
  });

  it('voters serving only Vote v1 and Fetch v14 form a quorum: pre-votes answered UNSUPPORTED_VERSION count as granted, fetches carry the replica id in ReplicaId', async () => {
    const old = new Map([[ApiKey.Vote, 1], [ApiKey.Fetch, 14]]);
    const caps = new Map(IDS.map((id) => [id, old]));
    for (const n of nodes) await n.stop(false).catch(() => undefined);
    ({ nodes, config } = await makeNodes(path.join(root, 'old-versions'), caps));
    for (const n of nodes) n.start(config);
    await waitFor('a leader', () => agreedLeader() !== null, ELECTION_BOUND_MS + 3_000);
    const leader = agreedLeader()!;
    const vals = values('old', 5);
    // Commits need a follower's fetch offset: a Fetch v14 without the replica id would make it an observer.
    await appendAll(leader, vals);
    await waitFor('commits on all three', () => nodes.every((n) => n.committed.length >= vals.length), 5_000);
    for (const n of nodes) expect(n.committed).toEqual(vals);
  });
});

describe('KafkaRaftClient: snapshots', () => {
  let snapNodes: TestNode[];
  let saved: TestNode[];
  beforeAll(async () => {
    saved = nodes;
    const made = await makeNodes(path.join(root, 'snapshots'));
    for (const n of made.nodes) n.retention = { maxBytes: 0, maxMs: -1 };
    snapNodes = made.nodes;
    nodes = snapNodes;
    config = made.config;
    for (const n of nodes) n.start(config);
  });
  afterAll(async () => {
    for (const n of snapNodes) await n.stop(false).catch(() => undefined);
    nodes = saved;
  });

  /** A snapshot of everything the node's listener has been given so far (the state machine's part). */
  function snapshotAtEnd(n: TestNode, data: string): { offset: bigint; epoch: number } {
    const offset = n.client!.highWatermark!;
    const id = { offset, epoch: n.log!.epochForOffset(offset - 1n)! };
    n.client!.createSnapshot(id, Buffer.from(data));
    return id;
  }

  it('a voter behind the log start downloads the latest snapshot (at the leader\'s last batch) and its listener loads it; a restart loads its own', async () => {
    await waitFor('a leader', () => agreedLeader() !== null, ELECTION_BOUND_MS + 2_000);
    const leader = agreedLeader()!;
    const [f1, f2] = nodes.filter((n) => n !== leader);
    await appendAll(leader, values('s', 5));
    await waitFor('commits everywhere', () => running().every((n) => n.committed.length === 5), 5_000);
    await f2.stop(false);
    await appendAll(leader, values('t', 5));
    await waitFor('commits on two', () => running().every((n) => n.committed.length === 10), 5_000);
    // Two snapshots on the leader and f1 (the second at the log end): retention 0 trims to the second.
    for (const n of [leader, f1]) snapshotAtEnd(n, 'first');
    await appendAll(leader, values('u', 2));
    await waitFor('commits on two', () => running().every((n) => n.committed.length === 12), 5_000);
    await waitFor('the leader\'s listener caught up', () => leader.client!.highWatermark === leader.log!.endOffset().offset, 5_000);
    const id = snapshotAtEnd(leader, 'second');
    expect(leader.log!.startOffset()).toBe(id.offset);
    expect(leader.log!.snapshotIds()).toEqual([id]);
    expect(() => leader.client!.createSnapshot({ offset: id.offset + 10n, epoch: id.epoch }, Buffer.from('x'))).toThrow(/past what was delivered/);

    await f2.listen(f2.port);
    f2.start(config);
    await waitFor('the snapshot loaded on the stale voter', () => f2.loaded.length > 0, 10_000);
    expect(f2.loaded).toEqual([{ offset: id.offset, epoch: id.epoch, data: 'second' }]);
    // Its own log (s-0..s-4) was below the leader's log start: it delivered none of it, the snapshot covers it.
    expect(f2.committed).toEqual([]);
    expect(f2.log!.startOffset()).toBe(id.offset);
    await appendAll(leader, ['after']);
    await waitFor('the record after the snapshot on the stale voter', () => f2.committed.includes('after'), 5_000);
    expect(f2.committed).toEqual(['after']);

    // A restart on the trimmed log: the latest snapshot first, then what follows it (not the log from 0).
    await f2.stop(true);
    await f2.listen(f2.port);
    f2.start(config);
    await waitFor('the restarted voter caught up', () => f2.committed.includes('after'), 10_000);
    expect(f2.loaded).toEqual([{ offset: id.offset, epoch: id.epoch, data: 'second' }]);
    expect(f2.committed).toEqual(['after']);
  });
});
