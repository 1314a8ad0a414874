/**
 * A KRaft controller quorum of separate `krill --config FILE` processes, for chaos tests: each
 * controller (process.roles=controller, default ids 1, 2, 3) has a server.properties file and a
 * metadata directory in one temp dir, formatted with one cluster id by `krill storage format`
 * (adminMain, the code the CLI runs), and a listener on a port chosen beforehand and kept across
 * restarts.
 *
 * The network between the voters is real TCP through proxies the test runs: node i's
 * `controller.quorum.voters` names itself at its own listener and every peer j at the proxy of the
 * directed link i->j (which forwards to j's listener), so everything i sends to j (its requests,
 * and j's responses to them) crosses that link. A link can be
 *   - 'open': bytes forwarded as they come;
 *   - 'drop': a black hole: connections are accepted but every byte is discarded (requests time
 *     out as in a real partition); at the heal the connections that lost bytes are reset, since
 *     their byte streams have gaps (as a stateful firewall that lost its state would);
 *   - 'hold': bytes are held and delivered, in order, at the heal (TCP retransmission after a
 *     partition; late responses to requests the sender gave up on).
 * A connection closed at one end while its link is cut is closed at the other end only at the
 * heal (no FIN or RST crosses a partition).
 * `isolate(id)` cuts every link to and from a node. The test's own requests (DescribeQuorum,
 * CreateTopics ...) go straight to the listeners, as an outside client's would.
 *
 * Faults on processes: SIGKILL (`kill9`), SIGSTOP / SIGCONT (`pause` / `resume`: the process keeps
 * its sockets, the kernel queues what arrives), SIGTERM (`stop`: a graceful resignation), and a
 * restart on the same directory and port. `leader()` asks DescribeQuorum of every running voter
 * (only a leader answers it). Every wait is bounded; every child is killed when the test process
 * exits (processes.ts). `BrokerProcesses` (`startBrokerProcesses`) runs broker processes
 * following the quorum, with the same process faults.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeChannel } from '../../client/node-channel';
import type { ApiMessages, ApiName } from '../../protocol/generated';
import type { Input } from '../../protocol/primitives/input';
import type { DescribeQuorumResponsePartitionData } from '../../protocol/generated/describe-quorum';
import { describeQuorumRequest } from '../../metadata/raft/raft-messages';
import { supportedFeatureRecords } from '../../metadata/features';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { ErrorCode } from '../../protocol/errors';
import { freePort } from './helpers';
import { NodeProcess } from './processes';
import { readControllerLog, type NodeLog } from './quorum-checker';

export const CONTROLLER_READY = /^krill controller ready: CONTROLLER:\/\/([^\s:]+):(\d+) node (\d+) cluster (\S+) data (.+)$/;
export const BROKER_READY = /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+) node (\d+) data (.+)$/;
const HOST = '127.0.0.1';

export type LinkMode = 'open' | 'drop' | 'hold';

interface Pipe {
  client: net.Socket;
  upstream: net.Socket | null;
  /** Bytes were discarded on this connection: it is reset at the heal. */
  tainted: boolean;
  heldUp: Buffer[];
  heldDown: Buffer[];
  /** An end closed its connection while the link was cut: the other end learns it at the heal. */
  upstreamClosed: boolean;
  clientClosed: boolean;
}

/** One directed link from -> to: a TCP proxy to `to`'s listener. */
export class LinkProxy {
  private server: net.Server | null = null;
  port = 0;
  private _mode: LinkMode = 'open';
  private readonly pipes = new Set<Pipe>();
  bytesDropped = 0;

  constructor(
    readonly from: number,
    readonly to: number,
    private readonly targetPort: number,
  ) {}

  get mode(): LinkMode {
    return this._mode;
  }

  async listen(): Promise<number> {
    const server = net.createServer((c) => this.accept(c));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, HOST, () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  private accept(client: net.Socket): void {
    const pipe: Pipe = { client, upstream: null, tainted: this._mode === 'drop', heldUp: [], heldDown: [], upstreamClosed: false, clientClosed: false };
    this.pipes.add(pipe);
    client.setNoDelay(true);
    client.on('data', (d: Buffer) => this.forward(pipe, 'up', d));
    client.on('error', () => undefined);
    client.on('close', () => {
      if (this._mode === 'open') {
        this.pipes.delete(pipe);
        pipe.upstream?.destroy();
      } else pipe.clientClosed = true; // a close does not cross a cut link either
    });
    if (this._mode !== 'drop') this.connectUpstream(pipe);
  }

  private connectUpstream(pipe: Pipe): void {
    const up = net.connect(this.targetPort, HOST);
    pipe.upstream = up;
    up.setNoDelay(true);
    up.on('data', (d: Buffer) => this.forward(pipe, 'down', d));
    up.on('error', () => undefined);
    up.on('close', () => {
      if (this._mode === 'open') {
        this.pipes.delete(pipe);
        pipe.client.destroy();
      } else pipe.upstreamClosed = true;
    });
  }

  private forward(pipe: Pipe, dir: 'up' | 'down', d: Buffer): void {
    if (this._mode === 'open') {
      if (dir === 'up') pipe.upstream?.write(d);
      else pipe.client.write(d);
    } else if (this._mode === 'drop') {
      pipe.tainted = true;
      this.bytesDropped += d.length;
    } else (dir === 'up' ? pipe.heldUp : pipe.heldDown).push(d);
  }

  setMode(mode: LinkMode): void {
    const was = this._mode;
    if (was === mode) return;
    this._mode = mode;
    for (const pipe of [...this.pipes]) {
      if (was === 'hold') {
        if (mode === 'drop') {
          if (pipe.heldUp.length || pipe.heldDown.length) pipe.tainted = true;
        } else {
          if (!pipe.upstreamClosed) for (const d of pipe.heldUp) pipe.upstream?.write(d);
          if (!pipe.clientClosed) for (const d of pipe.heldDown) pipe.client.write(d);
        }
        pipe.heldUp = [];
        pipe.heldDown = [];
      }
      if (mode !== 'open') continue;
      if (pipe.tainted) {
        pipe.client.destroy();
        pipe.upstream?.destroy();
        this.pipes.delete(pipe);
        continue;
      }
      // The closes that waited for the heal (after the held bytes).
      if (pipe.clientClosed) pipe.upstream?.end();
      if (pipe.upstreamClosed) pipe.client.end();
      if (pipe.clientClosed || pipe.upstreamClosed) this.pipes.delete(pipe);
    }
  }

  /** Resets every connection of this link (both ends see it closed). */
  resetConnections(): void {
    for (const pipe of [...this.pipes]) {
      pipe.client.destroy();
      pipe.upstream?.destroy();
    }
    this.pipes.clear();
  }

  async close(): Promise<void> {
    this.resetConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export interface QuorumProcessesOptions {
  ids?: number[];
  electionTimeoutMs?: number;
  fetchTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** More controller properties (every node). */
  props?: Record<string, string | number>;
  clusterId?: string;
  /** Route the voters' traffic through LinkProxy (default true). */
  proxies?: boolean;
  /** Where the temp dir goes (default os.tmpdir()). */
  parentDir?: string;
}

export type QuorumPartition = DescribeQuorumResponsePartitionData;

/**
 * SIGSTOP / SIGCONT of a group's processes, and which are paused (a paused process is running but
 * answers nothing). Shared by the controller and the broker process groups.
 */
class PausedProcesses {
  private readonly ids = new Set<number>();

  constructor(private readonly procOf: (id: number) => NodeProcess) {}

  has(id: number): boolean {
    return this.ids.has(id);
  }

  list(): number[] {
    return [...this.ids];
  }

  /** Forgets `id` (it was killed: nothing to resume). */
  forget(id: number): void {
    this.ids.delete(id);
  }

  pause(id: number): void {
    const c = this.procOf(id).child;
    if (!c || this.ids.has(id)) return;
    c.kill('SIGSTOP');
    this.ids.add(id);
  }

  resume(id: number): void {
    const c = this.procOf(id).child;
    if (!this.ids.delete(id) || !c) return;
    c.kill('SIGCONT');
  }
}

export class QuorumProcesses {
  readonly electionTimeoutMs: number;
  readonly fetchTimeoutMs: number;
  readonly requestTimeoutMs: number;
  private readonly channels = new Map<string, NodeChannel>();
  private readonly pausedIds = new PausedProcesses((id) => this.procs.get(id)!);

  private constructor(
    readonly dir: string,
    readonly clusterId: string,
    readonly ids: readonly number[],
    readonly ports: ReadonlyMap<number, number>,
    readonly files: ReadonlyMap<number, string>,
    private readonly procs: ReadonlyMap<number, NodeProcess>,
    private readonly links: ReadonlyMap<string, LinkProxy>,
    opts: Required<Pick<QuorumProcessesOptions, 'electionTimeoutMs' | 'fetchTimeoutMs' | 'requestTimeoutMs'>>,
  ) {
    this.electionTimeoutMs = opts.electionTimeoutMs;
    this.fetchTimeoutMs = opts.fetchTimeoutMs;
    this.requestTimeoutMs = opts.requestTimeoutMs;
  }

  /** Writes the files, formats the directories, starts the proxies and every controller. */
  static async start(opts: QuorumProcessesOptions = {}): Promise<QuorumProcesses> {
    const ids = opts.ids ?? [1, 2, 3];
    const t = {
      electionTimeoutMs: opts.electionTimeoutMs ?? 300,
      fetchTimeoutMs: opts.fetchTimeoutMs ?? 800,
      requestTimeoutMs: opts.requestTimeoutMs ?? 1_000,
    };
    const dir = fs.mkdtempSync(path.join(opts.parentDir ?? os.tmpdir(), 'krill-quorum-procs-'));
    const ports = new Map<number, number>();
    for (const id of ids) ports.set(id, await freePort());
    const links = new Map<string, LinkProxy>();
    if (opts.proxies !== false) {
      for (const from of ids) for (const to of ids) if (from !== to) links.set(`${from}>${to}`, new LinkProxy(from, to, ports.get(to)!));
      await Promise.all([...links.values()].map((l) => l.listen()));
    }
    const clusterId = opts.clusterId ?? 'Q2hhb3NRdW9ydW1UZXN0MQ';
    const files = new Map<number, string>();
    for (const id of ids) {
      const voters = ids.map((j) => `${j}@${HOST}:${j === id || opts.proxies === false ? ports.get(j) : links.get(`${id}>${j}`)!.port}`).join(',');
      const props: Record<string, string | number> = {
        'process.roles': 'controller',
        'node.id': id,
        listeners: `CONTROLLER://${HOST}:${ports.get(id)}`,
        'controller.listener.names': 'CONTROLLER',
        'controller.quorum.voters': voters,
        'controller.quorum.election.timeout.ms': t.electionTimeoutMs,
        'controller.quorum.fetch.timeout.ms': t.fetchTimeoutMs,
        'controller.quorum.election.backoff.max.ms': t.electionTimeoutMs,
        'controller.quorum.request.timeout.ms': t.requestTimeoutMs,
        'log.dirs': path.join(dir, `controller-${id}`),
        ...(opts.props ?? {}),
      };
      const f = path.join(dir, `controller-${id}.properties`);
      fs.writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
      files.set(id, f);
      const out = new CollectedOutput();
      if ((await adminMain('storage', ['format', '-t', clusterId, '-c', f], out)) !== 0) throw new Error(`krill storage format failed for controller ${id}: ${JSON.stringify(out)}`);
    }
    const procs = new Map(ids.map((id) => [id, new NodeProcess(() => ['--config', files.get(id)!], CONTROLLER_READY)]));
    const q = new QuorumProcesses(dir, clusterId, ids, ports, files, procs, links, t);
    try {
      await Promise.all(ids.map((id) => q.start(id)));
    } catch (err) {
      await q.close();
      throw err;
    }
    return q;
  }

  metadataDir(id: number): string {
    return path.join(this.dir, `controller-${id}`);
  }

  pid(id: number): number | undefined {
    return this.procs.get(id)!.child?.pid;
  }

  running(id: number): boolean {
    return this.procs.get(id)!.running;
  }

  paused(id: number): boolean {
    return this.pausedIds.has(id);
  }

  /** Running and not paused: it can answer. */
  live(): number[] {
    return this.ids.filter((id) => this.running(id) && !this.paused(id));
  }

  async start(id: number): Promise<void> {
    await this.procs.get(id)!.start();
  }

  async kill9(id: number): Promise<void> {
    this.pausedIds.forget(id);
    for (const [k, c] of this.channels) if (k.startsWith(`${id}/`)) c.drop();
    await this.procs.get(id)!.stop('SIGKILL');
  }

  /** SIGTERM: a graceful shutdown (a leader resigns first). A paused process is resumed first. */
  async stop(id: number): Promise<void> {
    if (this.paused(id)) this.resume(id);
    await this.procs.get(id)!.stop('SIGTERM');
  }

  pause(id: number): void {
    this.pausedIds.pause(id);
  }

  resume(id: number): void {
    this.pausedIds.resume(id);
  }

  link(from: number, to: number): LinkProxy {
    const l = this.links.get(`${from}>${to}`);
    if (!l) throw new Error(`no proxy for ${from}>${to} (started with proxies: false?)`);
    return l;
  }

  cut(from: number, to: number, mode: Exclude<LinkMode, 'open'> = 'drop'): void {
    this.link(from, to).setMode(mode);
  }

  heal(from: number, to: number): void {
    this.link(from, to).setMode('open');
  }

  /** Cuts every link to and from `id`. */
  isolate(id: number, mode: Exclude<LinkMode, 'open'> = 'drop'): void {
    for (const other of this.ids) {
      if (other === id) continue;
      this.cut(id, other, mode);
      this.cut(other, id, mode);
    }
  }

  /** Every link open, every paused process resumed. */
  healAll(): void {
    for (const l of this.links.values()) l.setMode('open');
    for (const id of this.pausedIds.list()) this.resume(id);
  }

  cutLinks(): string[] {
    return [...this.links.values()].filter((l) => l.mode !== 'open').map((l) => `${l.from}>${l.to}:${l.mode}`);
  }

  private channel(id: number, lane: string): NodeChannel {
    const key = `${id}/${lane}`;
    let c = this.channels.get(key);
    if (!c) {
      c = new NodeChannel(HOST, this.ports.get(id)!, { clientId: `quorum-chaos-${lane}`, timeoutMs: 2_000, requestTimeoutMs: 5_000 });
      this.channels.set(key, c);
    }
    return c;
  }

  /**
   * One request to controller `id`'s listener. Connections are kept per controller and `lane`
   * (default 'ops') and reopened after a failure; a listener answers one connection's requests in
   * order, and a request timing out closes its connection, so requests that must not wait behind
   * (or fail with) each other use different lanes (DescribeQuorum uses 'probe').
   */
  send<K extends ApiName>(id: number, api: K, body: Input<ApiMessages[K]['request']>, opts: { version?: number; timeoutMs?: number; lane?: string } = {}): Promise<ApiMessages[K]['response']> {
    return this.channel(id, opts.lane ?? 'ops').send(api, body, opts);
  }

  /** DescribeQuorum on `id`: the partition data if `id` leads (in its own view), else null. */
  async describeQuorum(id: number, timeoutMs = 1_000): Promise<QuorumPartition | null> {
    try {
      const r = await this.send(id, 'DescribeQuorum', describeQuorumRequest(), { version: 2, timeoutMs, lane: 'probe' });
      const p = r.topics[0]?.partitions[0];
      return r.errorCode === ErrorCode.NONE && p && p.errorCode === ErrorCode.NONE ? p : null;
    } catch {
      return null;
    }
  }

  /** The leader with the highest epoch among the live voters that say they lead, or null. */
  async leader(): Promise<(QuorumPartition & { id: number }) | null> {
    const answers = await Promise.all(this.live().map(async (id) => ({ id, p: await this.describeQuorum(id) })));
    let best: (QuorumPartition & { id: number }) | null = null;
    for (const { id, p } of answers) if (p && p.leaderId === id && (!best || p.leaderEpoch > best.leaderEpoch)) best = { ...p, id };
    return best;
  }

  /** Polls until a leader satisfying `accept` is found; throws after `timeoutMs`. */
  async waitForLeader(timeoutMs: number, accept: (l: QuorumPartition & { id: number }) => boolean = () => true, everyMs = 20): Promise<QuorumPartition & { id: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const l = await this.leader();
      if (l && accept(l)) return l;
      if (Date.now() > deadline) throw new Error(`no leader within ${timeoutMs} ms (live: ${this.live().join(',')}, cut: ${this.cutLinks().join(' ') || 'none'}, last seen: ${l ? `${l.id} epoch ${l.leaderEpoch}` : 'none'})`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /**
   * Waits until one leader's DescribeQuorum shows every voter at its log end offset, equal to the
   * high watermark, twice in a row `settleMs` apart; returns that view.
   */
  async waitForCaughtUp(timeoutMs: number, settleMs = 300): Promise<QuorumPartition & { id: number }> {
    const deadline = Date.now() + timeoutMs;
    let last: (QuorumPartition & { id: number }) | null = null;
    let prev: (QuorumPartition & { id: number }) | null = null;
    for (;;) {
      last = await this.leader();
      const ok = last && last.currentVoters.length === this.ids.length && last.currentVoters.every((v) => v.logEndOffset === last!.highWatermark);
      if (ok && prev && prev.id === last!.id && prev.leaderEpoch === last!.leaderEpoch && prev.highWatermark === last!.highWatermark) return last!;
      prev = ok ? last : null;
      if (Date.now() > deadline) {
        const v = last ? last.currentVoters.map((x) => `${x.replicaId}@${x.logEndOffset}`).join(' ') : 'no leader';
        throw new Error(`the voters did not catch up within ${timeoutMs} ms (leader ${last?.id ?? -1} epoch ${last?.leaderEpoch ?? -1} hw ${last?.highWatermark ?? -1n}: ${v})`);
      }
      await new Promise((r) => setTimeout(r, ok ? settleMs : 50));
    }
  }

  /** Reads every controller's log and quorum-state from disk (after the processes stopped). */
  readLogs(): NodeLog[] {
    return this.ids.map((id) => readControllerLog(id, this.metadataDir(id), this.ids));
  }

  /** SIGKILL of every controller (so nothing is written after the caller's last look). */
  async killAll(): Promise<void> {
    for (const c of this.channels.values()) c.close();
    this.channels.clear();
    await Promise.all(this.ids.map((id) => this.kill9(id)));
  }

  async close(opts: { keepDir?: boolean } = {}): Promise<void> {
    await this.killAll();
    await Promise.all([...this.links.values()].map((l) => l.close()));
    if (!opts.keepDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Fake brokers for the controllers' placement: BrokerRegistration on the active controller (found
 * by trying each live one: a standby answers NOT_CONTROLLER), then BrokerHeartbeat until unfenced.
 * They replicate nothing and claim to be caught up with any metadata offset, so the quorum's
 * `broker.session.timeout.ms` must outlast the run (they do not keep heartbeating).
 */
export async function registerFakeBrokers(q: QuorumProcesses, brokerIds: readonly number[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const brokerId of brokerIds) {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`fake broker ${brokerId} not registered and unfenced within ${timeoutMs} ms`);
      const l = await q.leader();
      if (!l) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      try {
        const reg = await q.send(l.id, 'BrokerRegistration', {
          brokerId,
          clusterId: q.clusterId,
          incarnationId: Buffer.from(`fake-broker-${brokerId}`.padEnd(16, '_').slice(0, 16)).toString('base64url'),
          listeners: [{ name: 'PLAINTEXT', host: HOST, port: 19092 + brokerId, securityProtocol: 0 }],
          features: supportedFeatureRecords(),
          rack: null,
        });
        if (reg.errorCode !== ErrorCode.NONE) throw new Error(`BrokerRegistration: error ${reg.errorCode}`);
        const hb = await q.send(l.id, 'BrokerHeartbeat', { brokerId, brokerEpoch: reg.brokerEpoch, currentMetadataOffset: BigInt(Number.MAX_SAFE_INTEGER), wantFence: false, wantShutDown: false });
        if (hb.errorCode === ErrorCode.NONE && !hb.isFenced) break;
      } catch {
        /* not the active controller any more, or not ready: try again */
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export interface BrokerProcessesOptions {
  /** Broker node ids (default 100, 101, ...: never among the voters, which krill refuses). */
  ids?: number[];
  /** More broker properties (every broker). */
  props?: Record<string, string | number>;
  /**
   * Brokers (by id) that name the controllers in `controller.quorum.bootstrap.servers` only; the
   * others name them in `controller.quorum.voters`. Both shapes follow the active controller.
   */
  bootstrapOnly?: readonly number[];
}

/**
 * Broker processes (`krill --config broker-N.properties`, process.roles=broker) following the
 * quorum `q`: each has a properties file and a data directory in q's temp dir, and a PLAINTEXT
 * listener on a port chosen beforehand and kept across restarts (replicas and clients reconnect to
 * the same address). They reach the controllers' listeners directly, not through q's proxies: the
 * proxies model the network between the voters, and a broker cut from the quorum would need links
 * of its own (a broker is an observer: its fetches and heartbeats change no vote).
 * Faults: SIGKILL, SIGSTOP / SIGCONT, SIGTERM (a controlled shutdown), restart on the same
 * directory and port. A (re)start resolves on the ready line, which a broker prints once it is
 * registered and unfenced by the active controller.
 */
export class BrokerProcesses {
  private readonly pausedIds = new PausedProcesses((id) => this.procs.get(id)!);
  private readonly channels = new Map<string, NodeChannel>();
  /** How many times each broker process was spawned (each a new incarnation: at most one registration each). */
  readonly starts = new Map<number, number>();

  private constructor(
    readonly q: QuorumProcesses,
    readonly ids: readonly number[],
    readonly ports: ReadonlyMap<number, number>,
    readonly files: ReadonlyMap<number, string>,
    private readonly procs: ReadonlyMap<number, NodeProcess>,
  ) {}

  static async start(q: QuorumProcesses, count: number, opts: BrokerProcessesOptions = {}): Promise<BrokerProcesses> {
    const ids = opts.ids ?? Array.from({ length: count }, (_, b) => 100 + b);
    for (const id of ids) if (q.ids.includes(id)) throw new Error(`broker id ${id} is a voter id`);
    const voters = q.ids.map((id) => `${id}@${HOST}:${q.ports.get(id)}`).join(',');
    const bootstrap = q.ids.map((id) => `${HOST}:${q.ports.get(id)}`).join(',');
    const ports = new Map<number, number>();
    for (const id of ids) ports.set(id, await freePort());
    const files = new Map<number, string>();
    for (const id of ids) {
      const f = path.join(q.dir, `broker-${id}.properties`);
      const p: Record<string, string | number> = {
        'process.roles': 'broker',
        'node.id': id,
        ...(opts.bootstrapOnly?.includes(id) ? { 'controller.quorum.bootstrap.servers': bootstrap } : { 'controller.quorum.voters': voters }),
        listeners: `PLAINTEXT://${HOST}:${ports.get(id)}`,
        'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        'controller.listener.names': 'CONTROLLER',
        'controller.quorum.election.timeout.ms': q.electionTimeoutMs,
        'controller.quorum.fetch.timeout.ms': q.fetchTimeoutMs,
        'controller.quorum.request.timeout.ms': q.requestTimeoutMs,
        'log.dirs': path.join(q.dir, `broker-${id}`),
        ...(opts.props ?? {}),
      };
      fs.writeFileSync(f, Object.entries(p).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
      files.set(id, f);
    }
    const procs = new Map(ids.map((id) => [id, new NodeProcess(() => ['--config', files.get(id)!], BROKER_READY)]));
    const b = new BrokerProcesses(q, ids, ports, files, procs);
    try {
      await Promise.all(ids.map((id) => b.start(id)));
    } catch (err) {
      await b.close();
      throw err;
    }
    return b;
  }

  dataDir(id: number): string {
    return path.join(this.q.dir, `broker-${id}`);
  }

  running(id: number): boolean {
    return this.procs.get(id)!.running;
  }

  paused(id: number): boolean {
    return this.pausedIds.has(id);
  }

  live(): number[] {
    return this.ids.filter((id) => this.running(id) && !this.paused(id));
  }

  pid(id: number): number | undefined {
    return this.procs.get(id)!.child?.pid;
  }

  /** host:port of every broker (running or not: the ports are kept, clients try the next). */
  bootstrap(): string[] {
    return this.ids.map((id) => `${HOST}:${this.ports.get(id)}`);
  }

  /** Starts broker `id` (counted in `starts` at the spawn, whether or not it gets ready). */
  async start(id: number): Promise<void> {
    this.starts.set(id, (this.starts.get(id) ?? 0) + 1);
    const m = await this.procs.get(id)!.start();
    if (Number(m[2]) !== this.ports.get(id) || Number(m[3]) !== id) throw new Error(`broker ${id} ready on port ${m[2]} as node ${m[3]}, expected ${this.ports.get(id)} / ${id}`);
  }

  private dropChannels(id: number): void {
    for (const [k, c] of this.channels) {
      if (!k.startsWith(`${id}/`)) continue;
      c.close();
      this.channels.delete(k);
    }
  }

  async kill9(id: number): Promise<void> {
    this.pausedIds.forget(id);
    this.dropChannels(id);
    await this.procs.get(id)!.stop('SIGKILL');
  }

  /** SIGTERM: a controlled shutdown. A paused process is resumed first. */
  async stop(id: number): Promise<void> {
    if (this.paused(id)) this.resume(id);
    this.dropChannels(id);
    await this.procs.get(id)!.stop('SIGTERM');
  }

  pause(id: number): void {
    this.pausedIds.pause(id);
  }

  resume(id: number): void {
    this.pausedIds.resume(id);
  }

  /** One request to broker `id`'s listener (connections kept per broker and lane, as QuorumProcesses.send). */
  send<K extends ApiName>(id: number, api: K, body: Input<ApiMessages[K]['request']>, opts: { version?: number; timeoutMs?: number; lane?: string } = {}): Promise<ApiMessages[K]['response']> {
    const key = `${id}/${opts.lane ?? 'ops'}`;
    let c = this.channels.get(key);
    if (!c) {
      c = new NodeChannel(HOST, this.ports.get(id)!, { clientId: `quorum-chaos-broker-${opts.lane ?? 'ops'}`, timeoutMs: 2_000, requestTimeoutMs: 10_000 });
      this.channels.set(key, c);
    }
    return c.send(api, body, opts);
  }

  /** SIGKILL of every broker. */
  async killAll(): Promise<void> {
    for (const c of this.channels.values()) c.close();
    this.channels.clear();
    await Promise.all(this.ids.map((id) => this.kill9(id)));
  }

  async close(): Promise<void> {
    await this.killAll();
  }
}

/** Starts `count` broker processes following the quorum (BrokerProcesses.start). */
export function startBrokerProcesses(q: QuorumProcesses, count: number, opts: BrokerProcessesOptions = {}): Promise<BrokerProcesses> {
  return BrokerProcesses.start(q, count, opts);
}
