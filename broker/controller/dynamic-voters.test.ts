/**
 * KIP-853 over the network: four KafkaRaftClients in one process, each on its own controller
 * listener (SocketServer + RequestDispatcher with the quorum handlers, AddRaftVoter / RemoveRaftVoter
 * included, port 0) and its own UnifiedRaftLog + quorum-state in a temp directory. Nodes 1-3 are
 * formatted as `--initial-controllers` (the bootstrap checkpoint, kraft.version 1); node 4 as
 * `--no-initial-controllers` (nothing): it knows only controller.quorum.bootstrap.servers, finds
 * the leader through them and replicates as an observer. krill's client then adds node 4 with
 * AddRaftVoter, removes the leader with RemoveRaftVoter (it resigns after the commit and the
 * remaining three elect a new one), and DescribeQuorum shows each voter set. Waits are on the
 * clients' events (leader changes, commits), each bounded.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logger } from '../../common/logger';
import { SocketServer } from '../network/socket-server';
import { RequestDispatcher } from '../request-dispatcher';
import { ALLOW_ALL } from '../../metadata/authorizer/authorizer';
import { ErrorCode } from '../../protocol/errors';
import type { DescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import type { AddRaftVoterResponse } from '../../protocol/generated/add-raft-voter';
import type { RemoveRaftVoterResponse } from '../../protocol/generated/remove-raft-voter';
import { connect, type BrokerConnection } from '../../client/network-client';
import { randomUuid } from '../../protocol/primitives/uuid';
import { RAFT_TEST_SOCKET_OPTIONS, raftTestHandlers, type RaftTestCtx } from './testing/raft-test-listener';
import { KafkaRaftClient } from '../../metadata/raft/kafka-raft-client';
import { makeQuorumConfig, type QuorumConfig } from '../../metadata/raft/quorum-config';
import { UnifiedRaftLog } from '../../metadata/raft/unified-raft-log';
import { FileQuorumStateStore } from '../../metadata/raft/quorum-state-store';
import { describeQuorumRequest } from '../../metadata/raft/raft-messages';
import { writeBootstrapCheckpoint } from '../../metadata/raft/kraft-control-state';
import { VoterSet, type VoterNode } from '../../metadata/raft/voter-set';

jest.setTimeout(30_000);

const CLUSTER_ID = 'dynamic-voters-cluster';
const logger = Logger.root('dynamic-voters-test', { level: 'error' });

type TestCtx = RaftTestCtx;
const HANDLERS = raftTestHandlers(true);
const SOCKET_OPTIONS = RAFT_TEST_SOCKET_OPTIONS;

class TestNode {
  readonly ctx: TestCtx = { authorizer: ALLOW_ALL, versionCaps: new Map() };
  readonly directoryId = randomUuid();
  server: SocketServer | null = null;
  port = 0;
  client: KafkaRaftClient | null = null;
  log: UnifiedRaftLog | null = null;
  committed: string[] = [];

  constructor(
    readonly id: number,
    readonly dir: string,
  ) {}

  get voter(): VoterNode {
    return { key: { id: this.id, directoryId: this.directoryId }, endpoints: [{ name: 'CONTROLLER', host: '127.0.0.1', port: this.port }], kraftVersion: { min: 0, max: 1 } };
  }

  async listen(): Promise<void> {
    const dispatcher = new RequestDispatcher<TestCtx>(this.ctx, HANDLERS, logger.child('request'));
    this.ctx.dispatcher = dispatcher;
    this.server = new SocketServer(dispatcher, SOCKET_OPTIONS, logger.child('network'));
    const [bound] = await this.server.listen([{ name: 'CONTROLLER', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' }]);
    this.port = bound.boundPort;
  }

  start(config: QuorumConfig): void {
    this.log = new UnifiedRaftLog({ dir: this.dir });
    const client = new KafkaRaftClient({
      nodeId: this.id,
      clusterId: CLUSTER_ID,
      config,
      log: this.log,
      store: FileQuorumStateStore.inDir(this.dir, { voterIds: [] }),
      logger: logger.child(`raft-${this.id}`),
      shutdownTimeoutMs: 2_000,
      directoryId: this.directoryId,
      listeners: this.voter.endpoints,
    });
    client.addListener({
      onCommit: (batches) => {
        for (const b of batches) if (!b.isControl) for (const r of b.records) this.committed.push(r.value!.toString());
        changed();
      },
      onLeaderChange: () => changed(),
    });
    this.client = client;
    this.ctx.raftClient = client;
    client.start();
  }

  async stop(): Promise<void> {
    await this.client?.close({ graceful: false });
    this.client = null;
    await this.server?.close();
    this.log?.close();
  }
}

const waiters = new Set<() => void>();
function changed(): void {
  for (const w of [...waiters]) w();
}

/** Resolves once `cond` holds, re-checked on every leader change and commit (and every 50 ms); fails after `timeoutMs`. */
function waitFor(what: string, cond: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!cond()) return;
      cleanup();
      resolve(Date.now() - started);
    };
    const poll = setInterval(check, 50);
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      clearInterval(poll);
      waiters.delete(check);
    };
    waiters.add(check);
    check();
  });
}

let root: string;
let nodes: TestNode[];
const conns: BrokerConnection[] = [];

async function connTo(n: TestNode): Promise<BrokerConnection> {
  const c = await connect('127.0.0.1', n.port, { timeoutMs: 5_000, requestTimeoutMs: 5_000 });
  conns.push(c);
  return c;
}

/** The leader every running voter and observer follows, or null. */
function agreedLeader(): TestNode | null {
  const r = nodes.filter((n) => n.client);
  const l = r[0]?.client?.leader;
  if (!l || l.id < 0) return null;
  if (!r.every((n) => n.client!.leader.id === l.id && n.client!.leader.epoch === l.epoch)) return null;
  const leader = nodes.find((n) => n.id === l.id);
  return leader?.client?.isLeader ? leader : null;
}

async function describe_(n: TestNode): Promise<DescribeQuorumResponse> {
  const c = await connTo(n);
  return (await c.send('DescribeQuorum', 2, describeQuorumRequest())) as DescribeQuorumResponse;
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-dynamic-voters-'));
  nodes = [1, 2, 3, 4].map((id) => new TestNode(id, path.join(root, `node-${id}`, '__cluster_metadata-0')));
  for (const n of nodes) await n.listen();
  // `krill storage format --initial-controllers 1@...,2@...,3@...` on nodes 1-3; node 4 joins later.
  const initial = new VoterSet(nodes.slice(0, 3).map((n) => n.voter));
  for (const n of nodes.slice(0, 3)) writeBootstrapCheckpoint(n.dir, initial);
  const config = makeQuorumConfig({
    voters: new Map(),
    bootstrapServers: nodes.slice(0, 3).map((n) => ({ host: '127.0.0.1', port: n.port })),
    electionTimeoutMs: 400,
    fetchTimeoutMs: 800,
    requestTimeoutMs: 1_000,
    electionBackoffMaxMs: 400,
  });
  for (const n of nodes) n.start(config);
});

afterAll(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  for (const n of nodes ?? []) await n.stop().catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

describe('KIP-853 dynamic voters over the network', () => {
  let leader: TestNode;

  it('the three initial controllers elect a leader; the joiner finds it through the bootstrap servers and replicates', async () => {
    await waitFor('a leader the four follow', () => agreedLeader() !== null, 5_000);
    leader = agreedLeader()!;
    expect(leader.id).toBeLessThanOrEqual(3);
    await Promise.all(['a', 'b', 'c'].map((v) => leader.client!.append([{ key: null, value: Buffer.from(v) }])));
    await waitFor('the joiner replicating', () => nodes[3].committed.length >= 3, 5_000);
    expect(nodes[3].committed).toEqual(['a', 'b', 'c']);
    expect([...nodes[3].client!.voterSet!.ids()]).toEqual([1, 2, 3]);
    const dq = (await describe_(leader)).topics[0].partitions[0];
    expect(dq.currentVoters.map((v) => [v.replicaId, v.replicaDirectoryId]).sort()).toEqual(nodes.slice(0, 3).map((n) => [n.id, n.directoryId]));
    expect(dq.observers.map((o) => [o.replicaId, o.replicaDirectoryId])).toEqual([[4, nodes[3].directoryId]]);
  });

  it('AddRaftVoter adds the caught-up joiner (NOT_LEADER_OR_FOLLOWER from a follower)', async () => {
    const joiner = nodes[3];
    const body = { clusterId: CLUSTER_ID, timeoutMs: 5_000, voterId: 4, voterDirectoryId: joiner.directoryId, listeners: [{ name: 'CONTROLLER', host: '127.0.0.1', port: joiner.port }] };
    const follower = nodes.find((n) => n !== leader && n.id <= 3)!;
    const refused = (await (await connTo(follower)).send('AddRaftVoter', 0, body)) as AddRaftVoterResponse;
    expect(refused.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const c = await connTo(leader);
    const started = Date.now();
    const added = (await c.send('AddRaftVoter', 0, body)) as AddRaftVoterResponse;
    expect(added).toMatchObject({ errorCode: ErrorCode.NONE });
    // eslint-disable-next-line no-console
    if (process.env.KRILL_VERBOSE) console.log(`AddRaftVoter answered after ${Date.now() - started} ms`);
    expect((await c.send('AddRaftVoter', 0, body)) as AddRaftVoterResponse).toMatchObject({ errorCode: ErrorCode.DUPLICATE_VOTER });
    const dq = (await describe_(leader)).topics[0].partitions[0];
    expect(dq.currentVoters.map((v) => v.replicaId).sort()).toEqual([1, 2, 3, 4]);
    expect(dq.observers).toEqual([]);
    await waitFor('every node sees four voters', () => nodes.every((n) => n.client!.voterSet!.size === 4), 5_000);
  });

  it('RemoveRaftVoter removes the leader: it resigns after the commit and the other three elect a new one', async () => {
    const old = leader;
    const c = await connTo(old);
    const removed = (await c.send('RemoveRaftVoter', 0, { clusterId: CLUSTER_ID, voterId: old.id, voterDirectoryId: old.directoryId })) as RemoveRaftVoterResponse;
    expect(removed).toMatchObject({ errorCode: ErrorCode.NONE });
    const ms = await waitFor('a new leader among the remaining voters', () => {
      const l = agreedLeader();
      return l !== null && l !== old;
    }, 10_000);
    // eslint-disable-next-line no-console
    if (process.env.KRILL_VERBOSE) console.log(`new leader ${ms} ms after the removal committed`);
    leader = agreedLeader()!;
    expect(old.client!.isLeader).toBe(false);
    const dq = (await describe_(leader)).topics[0].partitions[0];
    const remaining = [1, 2, 3, 4].filter((id) => id !== old.id);
    expect(dq.currentVoters.map((v) => v.replicaId).sort()).toEqual(remaining);
    expect(dq.observers.map((o) => o.replicaId)).toEqual([old.id]);
    // The quorum of three works: a record commits everywhere, the removed controller included.
    await leader.client!.append([{ key: null, value: Buffer.from('after') }]);
    await waitFor('the record on every node', () => nodes.every((n) => n.committed.includes('after')), 5_000);
  });
});
