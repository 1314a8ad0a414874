/**
 * A deterministic simulation of a KRaft quorum for tests: RaftNodes (voters, optionally observers)
 * on a simulated clock and network (an event queue; message drops, delays and reordering,
 * partitions; a request to a crashed node is refused with BROKER_NOT_AVAILABLE), with crashes and
 * restarts that keep each node's quorum-state store and log (in memory, where everything counts as
 * persisted, or on disk, where a restart recovers them from the files), a client appending to
 * whichever nodes are leaders, and snapshots taken of the committed prefix. The same seed always
 * gives the same run (on disk too: file contents do not feed back into the schedule).
 *
 * Invariants it checks continuously (throwing SimulationViolation with the seed and time):
 * - at most one leader per epoch, and a node that follows a leader follows the one that won the epoch;
 * - every node's committed prefix (below its high watermark, snapshot included) agrees with the
 *   one global committed history, entry by entry;
 * - a committed entry is never lost: every new leader holds the whole committed history;
 * - a node's high watermark never passes its log end offset nor moves backwards (the log asserts
 *   it, and truncation below it throws);
 * - (KIP-853, `dynamic`) whenever a leader's high watermark moves, a majority of the voter set in
 *   force on that leader holds the log up to it.
 *
 * With `dynamic` the quorum is formatted as `--initial-controllers` 1..nodeCount (a bootstrap
 * checkpoint with kraft.version 1 in each of their logs; `controller.quorum.voters` empty, the
 * initial voters as `controller.quorum.bootstrap.servers`), the observers have no checkpoint, and
 * `adminRequest` delivers AddRaftVoter / RemoveRaftVoter from an admin client to a node.
 */
import { ControlRecordType, parseControlRecordType } from '../../../protocol/records/control-record';
import { makeQuorumConfig, votersOf, type QuorumConfig } from '../quorum-config';
import * as path from 'node:path';
import { FileQuorumStateStore, InMemoryQuorumStateStore, type QuorumStateStore } from '../quorum-state-store';
import { InMemoryRaftLog, decodeRaftRecords, type OffsetAndEpoch, type RaftLog } from '../raft-log';
import { UnifiedRaftLog } from '../unified-raft-log';
import { splitBatches } from '../../../protocol/records/record-batch';
import { errorResponse, type RaftRequest, type RaftResponse } from '../raft-messages';
import { ErrorCode } from '../../../protocol/errors';
import { RaftNode, type RaftRandom } from '../raft-node';
import { buildRecordBatch } from '../../../protocol/records/memory-records-builder';
import { VoterSet, bootstrapCheckpoint, type VoterNode } from '../voter-set';

/** The replica id of the simulated admin client (responses to it are kept, not sent). */
export const ADMIN_ID = 0;

/** A directory id per node (a 16-byte uuid in Kafka's base64url form). */
export function simDirectoryId(id: number): string {
  return Buffer.alloc(16, id + 1).toString('base64url');
}

export function simVoterNode(id: number): VoterNode {
  return { key: { id, directoryId: simDirectoryId(id) }, endpoints: [{ name: 'CONTROLLER', host: 'localhost', port: 9000 + id }], kraftVersion: { min: 0, max: 1 } };
}

/** mulberry32: small, fast, deterministic. */
export class Rng implements RaftRandom {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export class SimulationViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimulationViolation';
  }
}

interface Event {
  time: number;
  seq: number;
  run: () => void;
}

/** A binary min-heap on (time, seq). */
class EventQueue {
  private heap: Event[] = [];
  get size(): number {
    return this.heap.length;
  }
  push(e: Event): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[p], h[i])) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }
  peek(): Event | undefined {
    return this.heap[0];
  }
  pop(): Event | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l], h[m])) m = l;
        if (r < h.length && less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}

function less(a: Event, b: Event): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

export interface SimNode {
  id: number;
  log: RaftLog;
  store: QuorumStateStore;
  raft: RaftNode | null;
  incarnation: number;
  /** The earliest pending wake-up of this incarnation. */
  wakeAt: number;
  /** Offsets below this were checked against the global committed history. */
  checkedUpTo: bigint;
  /** For requests delivered to this node: the requester's incarnation, so the response is not delivered to a later one. */
  requesterIncarnation: Map<string, number>;
  /** For requests sent to a bootstrap server id: that id, under which the answer goes back. */
  requesterAlias: Map<string, number>;
}

export interface NetworkConditions {
  dropRate: number;
  minDelayMs: number;
  maxDelayMs: number;
}

export interface SimulatorOptions {
  seed: number;
  /** Voters 1..nodeCount. */
  nodeCount: number;
  /** Observers (replicas outside the voter set, as brokers are), ids after the voters. */
  observerCount?: number;
  config?: Partial<QuorumConfig>;
  network?: Partial<NetworkConditions>;
  /** Client appends to every leader about this often (0: no client). */
  appendIntervalMs?: number;
  /** Max bytes per Fetch / FetchSnapshot response; small values make replication go batch by batch. */
  fetchMaxBytes?: number;
  /**
   * Keep each node's log (UnifiedRaftLog) and quorum-state file (FileQuorumStateStore) under
   * `<diskDir>/node-<id>/__cluster_metadata-0`; a restart then recovers them from disk. Default: in memory.
   */
  diskDir?: string;
  /**
   * Snapshots are written by a state machine on top (the controller's metadata snapshots), not by
   * `snapshot()`: their bytes are not this simulator's entry lists, so the entries below a node's
   * log start are taken to be the global committed history's (the snapshot covers only committed
   * offsets, which the checks recorded before it could be taken).
   */
  opaqueSnapshots?: boolean;
  /** KIP-853: a dynamic quorum (kraft.version 1) whose voters change through AddRaftVoter / RemoveRaftVoter. */
  dynamic?: boolean;
}

/** The control records raft itself writes into the log. */
const RAFT_CONTROL_TYPES = new Set([ControlRecordType.LEADER_CHANGE, ControlRecordType.KRAFT_VERSION, ControlRecordType.KRAFT_VOTERS]);

/** Entry identity for comparing logs: epoch, control flag and the record bytes. */
type Entry = string;

export class RaftSimulator {
  readonly rng: Rng;
  readonly nodes: SimNode[] = [];
  readonly config: QuorumConfig;
  now = 0;
  private seq = 0;
  private readonly queue = new EventQueue();
  network: NetworkConditions;
  /**
   * Chance that a node crashes right after it sent a granted (binding) vote, restarting 50-500 ms
   * later: a vote that was not persisted before the response would be forgotten and cast again.
   */
  crashAfterVoteRate = 0;
  /** node id -> partition group; nodes talk only within a group. */
  private groups = new Map<number, number>();
  private readonly blocked = new Set<string>();
  /** epoch -> leader id, as ever observed. */
  readonly leaders = new Map<number, number>();
  /** The global committed history, by offset. */
  readonly committed: Entry[] = [];
  private clientSeq = 0;
  readonly appended: { nodeId: number; epoch: number; offset: bigint; value: string }[] = [];
  messagesDelivered = 0;
  messagesDropped = 0;
  /** Fetch responses carrying a DivergingEpoch, and FetchSnapshot chunks, delivered (coverage). */
  divergingResponses = 0;
  snapshotChunks = 0;
  readonly seed: number;
  private readonly fetchMaxBytes: number;
  private readonly diskDir: string | null;
  private readonly opaqueSnapshots: boolean;
  /** Per node: the epochs seen, for scenario assertions. */
  readonly trace: string[] = [];
  readonly dynamic: boolean;
  private readonly initialVoterIds: number[];
  /** Answers to adminRequest, in order. */
  readonly adminResponses: { nodeId: number; corr: number; response: RaftResponse }[] = [];
  private adminCorr = 1_000_000;
  /** Leader high watermarks checked against the voter set in force, by epoch. */
  private readonly leaderHwChecked = new Map<number, bigint>();
  /** Voter changes that committed (coverage). */
  voterChanges = 0;

  constructor(opts: SimulatorOptions) {
    this.seed = opts.seed;
    this.fetchMaxBytes = opts.fetchMaxBytes ?? 4096;
    this.rng = new Rng(opts.seed * 7919 + opts.nodeCount);
    const voterIds = Array.from({ length: opts.nodeCount }, (_, i) => i + 1);
    const ids = Array.from({ length: opts.nodeCount + (opts.observerCount ?? 0) }, (_, i) => i + 1);
    this.dynamic = opts.dynamic ?? false;
    this.initialVoterIds = voterIds;
    this.config = this.dynamic
      ? makeQuorumConfig({ voters: new Map(), bootstrapServers: voterIds.map((id) => ({ host: 'localhost', port: 9000 + id })), ...opts.config })
      : makeQuorumConfig({ voters: votersOf(voterIds), ...opts.config });
    this.network = { dropRate: 0, minDelayMs: 1, maxDelayMs: 5, ...opts.network };
    this.diskDir = opts.diskDir ?? null;
    this.opaqueSnapshots = opts.opaqueSnapshots ?? false;
    for (const id of ids) {
      const { log, store } = this.openStorage(id);
      // `krill storage format --initial-controllers`: the bootstrap checkpoint on the initial voters.
      if (this.dynamic && id <= opts.nodeCount) log.storeFetchedSnapshot({ offset: 0n, epoch: 0 }, bootstrapCheckpoint(new VoterSet(voterIds.map(simVoterNode)), 0));
      this.nodes.push({ id, log, store, raft: null, incarnation: 0, wakeAt: Infinity, checkedUpTo: 0n, requesterIncarnation: new Map(), requesterAlias: new Map() });
    }
    for (const n of this.nodes) this.start(n);
    if ((opts.appendIntervalMs ?? 0) > 0) this.scheduleClient(opts.appendIntervalMs!);
  }

  node(id: number): SimNode {
    const n = this.nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  private fail(msg: string): never {
    throw new SimulationViolation(`seed ${this.seed} t=${this.now}ms: ${msg}`);
  }

  // ------------------------------------------------------------ scheduling

  at(time: number, run: () => void): void {
    this.queue.push({ time: Math.max(time, this.now), seq: this.seq++, run });
  }

  after(delayMs: number, run: () => void): void {
    this.at(this.now + delayMs, run);
  }

  /** Runs events until `time` (inclusive). */
  runUntil(time: number): void {
    for (;;) {
      const e = this.queue.peek();
      if (!e || e.time > time) break;
      this.queue.pop();
      this.now = e.time;
      e.run();
    }
    this.now = Math.max(this.now, time);
  }

  runFor(ms: number): void {
    this.runUntil(this.now + ms);
  }

  /** Runs until `pred` holds (checked after each event) or `maxMs` passes; returns the time it held, or null. */
  runUntilTrue(pred: () => boolean, maxMs: number): number | null {
    const end = this.now + maxMs;
    if (pred()) return this.now;
    for (;;) {
      const e = this.queue.peek();
      if (!e || e.time > end) break;
      this.queue.pop();
      this.now = e.time;
      e.run();
      if (pred()) return this.now;
    }
    this.now = end;
    return null;
  }

  // ------------------------------------------------------------ nodes

  private openStorage(id: number): { log: RaftLog; store: QuorumStateStore } {
    if (!this.diskDir) return { log: new InMemoryRaftLog(), store: new InMemoryQuorumStateStore() };
    const dir = path.join(this.diskDir, `node-${id}`, '__cluster_metadata-0');
    const log = new UnifiedRaftLog({ dir });
    return { log, store: FileQuorumStateStore.inDir(dir, { voterIds: [...this.config.voters.keys()] }) };
  }

  /** Closes the disk logs (tests' cleanup). */
  close(): void {
    for (const n of this.nodes) if (n.log instanceof UnifiedRaftLog) n.log.close();
  }

  private start(n: SimNode): void {
    n.incarnation++;
    n.requesterIncarnation.clear();
    n.requesterAlias.clear();
    const inc = n.incarnation;
    const rng = new Rng(this.seed * 1_000_003 + n.id * 101 + inc * 7);
    n.raft = new RaftNode({
      nodeId: n.id,
      clusterId: 'sim-cluster',
      config: this.config,
      clock: { now: () => this.now },
      random: rng,
      log: n.log,
      store: n.store,
      fetchMaxBytes: this.fetchMaxBytes,
      directoryId: this.dynamic ? simDirectoryId(n.id) : undefined,
      listeners: this.dynamic ? [...simVoterNode(n.id).endpoints] : undefined,
      sink: {
        sendRequest: (dest, corr, request) => {
          // controller.quorum.bootstrap.servers entry i is initial voter i + 1.
          if (dest <= -2) this.send(n, inc, this.initialVoterIds[-2 - dest] ?? -1, { kind: 'request', corr, request, srcInc: inc, alias: dest });
          else this.send(n, inc, dest, { kind: 'request', corr, request, srcInc: inc });
        },
        sendResponse: (dest, corr, response) => {
          if (dest === ADMIN_ID) {
            this.adminResponses.push({ nodeId: n.id, corr, response });
            return;
          }
          const key = `${dest}:${corr}`;
          const reqInc = n.requesterIncarnation.get(key);
          const alias = n.requesterAlias.get(key);
          n.requesterIncarnation.delete(key);
          n.requesterAlias.delete(key);
          this.send(n, inc, dest, { kind: 'response', corr, response, destInc: reqInc ?? -1, alias });
        },
      },
    });
    n.wakeAt = Infinity;
    this.afterActivity(n);
  }

  crash(id: number): void {
    const n = this.node(id);
    if (!n.raft) return;
    n.raft = null;
    n.wakeAt = Infinity;
    this.trace.push(`${this.now} crash ${id}`);
  }

  restart(id: number): void {
    const n = this.node(id);
    if (n.raft) return;
    if (this.diskDir) {
      // What a crash leaves: the files. The old objects are dropped unclosed (everything they wrote
      // was fsynced), and the log is recovered from the segments.
      const { log, store } = this.openStorage(id);
      n.log = log;
      n.store = store;
      // The high watermark is not persisted on disk: re-check the committed prefix as it comes back.
      n.checkedUpTo = n.log.highWatermark();
    }
    this.start(n);
    this.trace.push(`${this.now} restart ${id} -> ${n.raft!.stateName}@${n.raft!.epoch}`);
  }

  isUp(id: number): boolean {
    return this.node(id).raft !== null;
  }

  // ------------------------------------------------------------ network

  partition(groups: number[][]): void {
    this.groups = new Map();
    groups.forEach((g, i) => g.forEach((id) => this.groups.set(id, i)));
    this.trace.push(`${this.now} partition ${JSON.stringify(groups)}`);
  }

  heal(): void {
    this.groups = new Map();
    this.blocked.clear();
    this.trace.push(`${this.now} heal`);
  }

  /**
   * Cuts the link between two nodes only (partitions cut whole groups), both ways or only from `a`
   * to `b`; `heal` restores it.
   */
  blockLink(a: number, b: number, oneWay = false): void {
    this.blocked.add(`${a}>${b}`);
    if (!oneWay) this.blocked.add(`${b}>${a}`);
    this.trace.push(`${this.now} block ${a}${oneWay ? '->' : '-'}${b}`);
  }

  /** Whether a message from `from` reaches `to`. */
  connected(from: number, to: number): boolean {
    if (this.blocked.size > 0 && this.blocked.has(`${from}>${to}`)) return false;
    return (this.groups.get(from) ?? -1) === (this.groups.get(to) ?? -1);
  }

  private send(
    from: SimNode,
    fromInc: number,
    dest: number,
    msg:
      | { kind: 'request'; corr: number; request: RaftRequest; srcInc: number; alias?: number }
      | { kind: 'response'; corr: number; response: RaftResponse; destInc: number; alias?: number },
  ): void {
    const net = this.network;
    if (!this.connected(from.id, dest) || this.rng.chance(net.dropRate)) {
      this.messagesDropped++;
      return;
    }
    const to = this.nodes.find((x) => x.id === dest);
    if (!to) return;
    if (msg.kind === 'response' && msg.response.apiKey === 'VOTE' && this.crashAfterVoteRate > 0) {
      const p = msg.response.data.topics[0]?.partitions[0];
      if (p?.voteGranted && p.leaderId < 0 && this.rng.chance(this.crashAfterVoteRate)) {
        // Pre-vote answers carry the same shape; crashing after those is harmless and also fine.
        this.after(0, () => {
          if (from.incarnation !== fromInc) return;
          this.crash(from.id);
          this.after(50 + this.rng.nextInt(450), () => this.restart(from.id));
        });
      }
    }
    const delay = net.minDelayMs + this.rng.nextInt(Math.max(1, net.maxDelayMs - net.minDelayMs + 1));
    const toIncAtSend = to.incarnation;
    this.after(delay, () => {
      // A request to a node that is down is refused: the sender hears of it (Kafka's network
      // channel turns a disconnect into BROKER_NOT_AVAILABLE) if it is still the same incarnation.
      // A restart resets the connection the same way.
      if (msg.kind === 'request' && (!to.raft || to.incarnation !== toIncAtSend) && this.connected(from.id, dest)) {
        this.messagesDropped++;
        this.after(delay, () => {
          if (from.incarnation === fromInc && from.raft && this.connected(from.id, dest)) {
            from.raft.handleResponse(msg.alias ?? dest, msg.corr, errorResponse(msg.request.apiKey, ErrorCode.BROKER_NOT_AVAILABLE));
            this.afterActivity(from);
          }
        });
        return;
      }
      // Lost with the connection: the receiver restarted, is down, or the network split meanwhile.
      if (!to.raft || !this.connected(from.id, dest)) {
        this.messagesDropped++;
        return;
      }
      if (msg.kind === 'request') {
        if (to.incarnation !== toIncAtSend) {
          this.messagesDropped++;
          return;
        }
        this.messagesDelivered++;
        to.requesterIncarnation.set(`${from.id}:${msg.corr}`, msg.srcInc);
        if (msg.alias !== undefined) to.requesterAlias.set(`${from.id}:${msg.corr}`, msg.alias);
        to.raft.handleRequest(from.id, msg.corr, msg.request);
      } else {
        if (to.incarnation !== msg.destInc) {
          this.messagesDropped++;
          return;
        }
        this.messagesDelivered++;
        const r = msg.response;
        if (r.apiKey === 'FETCH' && (r.data.responses[0]?.partitions[0]?.divergingEpoch.epoch ?? -1) >= 0) this.divergingResponses++;
        if (r.apiKey === 'FETCH_SNAPSHOT' && r.data.topics[0]?.partitions[0]?.errorCode === 0) this.snapshotChunks++;
        to.raft.handleResponse(msg.alias ?? from.id, msg.corr, msg.response);
      }
      this.afterActivity(to);
    });
  }

  /** Polls the node, reschedules its wake-up and checks the invariants that its step may touch. */
  private afterActivity(n: SimNode): void {
    const raft = n.raft;
    if (!raft) return;
    const delay = raft.poll();
    this.check(n);
    const wake = this.now + Math.max(delay, 0);
    if (wake < n.wakeAt || n.wakeAt <= this.now) {
      n.wakeAt = wake;
      const inc = n.incarnation;
      this.at(wake === this.now ? this.now : wake, () => {
        if (n.incarnation !== inc || !n.raft || n.wakeAt !== wake) return;
        n.wakeAt = Infinity;
        this.afterActivity(n);
      });
    }
  }

  // ------------------------------------------------------------ client and snapshots

  private scheduleClient(intervalMs: number): void {
    this.after(intervalMs, () => {
      for (const n of this.nodes) if (n.raft?.isLeader) this.appendTo(n);
      this.scheduleClient(intervalMs);
    });
  }

  /** Appends one record to node `n` if it is the leader; returns its offset or null. */
  appendTo(n: SimNode): bigint | null {
    const raft = n.raft;
    if (!raft?.isLeader) return null;
    const value = `s${this.seed}-r${this.clientSeq++}`;
    const offset = raft.append([{ value, timestamp: 0 }]);
    this.appended.push({ nodeId: n.id, epoch: raft.epoch, offset, value });
    this.afterActivity(n);
    return offset;
  }

  /** Snapshots the committed prefix of node `id` at its last batch boundary below the high watermark. */
  snapshot(id: number, deleteBefore = true): OffsetAndEpoch | null {
    const n = this.node(id);
    const log = n.log;
    const hwm = log.highWatermark();
    if (hwm <= log.startOffset()) return null;
    let end: bigint | null = null;
    for (const b of splitBatches(log.read(log.startOffset(), 1 << 30))) if (b.lastOffset + 1n <= hwm) end = b.lastOffset + 1n;
    if (end === null || end <= log.startOffset()) return null;
    const entries = this.entriesOf(n, end);
    const epoch = log.epochForOffset(end - 1n)!;
    const id2 = { offset: end, epoch };
    // As a controller snapshot: the KIP-853 control records first (in a control batch), then the state.
    const control = n.raft!.snapshotControlRecords(end);
    const parts = control.length ? [buildRecordBatch(control, { isControlBatch: true, partitionLeaderEpoch: epoch })] : [];
    parts.push(buildRecordBatch([{ value: JSON.stringify(entries), timestamp: 0 }], { baseOffset: BigInt(control.length), partitionLeaderEpoch: epoch }));
    log.createSnapshot(id2, Buffer.concat(parts));
    if (deleteBefore) log.deleteBeforeSnapshot(id2);
    return id2;
  }

  // ------------------------------------------------------------ voter changes (KIP-853)

  /** Delivers an admin client's request to node `id` (if up); the answer lands in adminResponses. */
  adminRequest(id: number, request: RaftRequest): number | null {
    const n = this.node(id);
    if (!n.raft) return null;
    const corr = this.adminCorr++;
    n.raft.handleRequest(ADMIN_ID, corr, request);
    this.afterActivity(n);
    return corr;
  }

  addVoter(leaderId: number, id: number): number | null {
    const v = simVoterNode(id);
    return this.adminRequest(leaderId, {
      apiKey: 'ADD_RAFT_VOTER',
      data: { clusterId: 'sim-cluster', timeoutMs: 2000, voterId: id, voterDirectoryId: v.key.directoryId, listeners: v.endpoints.map((e) => ({ ...e })) },
    });
  }

  removeVoter(leaderId: number, id: number): number | null {
    return this.adminRequest(leaderId, { apiKey: 'REMOVE_RAFT_VOTER', data: { clusterId: 'sim-cluster', voterId: id, voterDirectoryId: simDirectoryId(id) } });
  }

  adminResponse(corr: number): RaftResponse | undefined {
    return this.adminResponses.find((r) => r.corr === corr)?.response;
  }

  // ------------------------------------------------------------ invariants

  /** The entries of node `n` for offsets [0, upTo), from its snapshot and log. */
  entriesOf(n: SimNode, upTo: bigint, from = 0n): Entry[] {
    const log = n.log;
    const out: Entry[] = [];
    const start = log.startOffset();
    if (from < start) {
      const snap = log.earliestSnapshotId();
      if (!snap || snap.offset !== start) this.fail(`node ${n.id}: log starts at ${start} without a snapshot there`);
      if (this.opaqueSnapshots) {
        if (start > BigInt(this.committed.length)) this.fail(`node ${n.id}: snapshot at ${start} is past the committed history (${this.committed.length})`);
        for (let o = from; o < start && o < upTo; o++) out.push(this.committed[Number(o)]);
      } else {
        const state = decodeRaftRecords(log.readSnapshot(snap)!).find((r) => !r.control)!;
        const data = JSON.parse(state.value!.toString()) as Entry[];
        for (let o = from; o < start && o < upTo; o++) out.push(data[Number(o)]);
      }
    }
    let o = from > start ? from : start;
    while (o < upTo) {
      const buf = log.read(o, 1 << 20);
      if (buf.length === 0) this.fail(`node ${n.id}: no entry at ${o} below ${upTo} (log end ${log.endOffset().offset})`);
      let progressed = false;
      for (const r of decodeRaftRecords(buf)) {
        if (r.offset < o) continue;
        if (r.offset >= upTo) break;
        if (r.offset !== o) this.fail(`node ${n.id}: gap at ${o}`);
        if (r.control && !RAFT_CONTROL_TYPES.has(parseControlRecordType(r.key))) this.fail(`node ${n.id}: unexpected control record at ${o}`);
        out.push(`${r.epoch}:${r.control ? 'c' : 'd'}:${r.value?.toString('hex') ?? ''}`);
        o++;
        progressed = true;
      }
      if (!progressed) this.fail(`node ${n.id}: read at ${o} made no progress`);
    }
    return out;
  }

  private check(n: SimNode): void {
    const raft = n.raft!;
    if (raft.isLeader) {
      const prev = this.leaders.get(raft.epoch);
      if (prev === undefined) {
        this.leaders.set(raft.epoch, n.id);
        this.trace.push(`${this.now} leader ${n.id}@${raft.epoch}`);
        // Leader completeness: the new leader holds every committed entry.
        const have = n.log.endOffset().offset;
        if (have < BigInt(this.committed.length)) this.fail(`leader ${n.id}@${raft.epoch} has log end ${have} below the committed ${this.committed.length}`);
        const mine = this.entriesOf(n, BigInt(this.committed.length));
        for (let i = 0; i < mine.length; i++) {
          if (mine[i] !== this.committed[i]) this.fail(`leader ${n.id}@${raft.epoch} lost committed entry ${i}: ${mine[i]} vs ${this.committed[i]}`);
        }
      } else if (prev !== n.id) {
        this.fail(`two leaders in epoch ${raft.epoch}: ${prev} and ${n.id}`);
      }
      // A commit needs a majority of the voter set in force (KIP-853: the latest in the log).
      const hw = raft.highWatermark;
      if (hw !== null && hw > (this.leaderHwChecked.get(raft.epoch) ?? -1n)) {
        this.leaderHwChecked.set(raft.epoch, hw);
        const voters = raft.voterSet;
        let holding = 0;
        for (const id of voters.ids()) {
          const v = this.nodes.find((x) => x.id === id);
          if (v && v.log.endOffset().offset >= hw) holding++;
        }
        if (holding < voters.majoritySize()) this.fail(`leader ${n.id}@${raft.epoch} committed ${hw} with ${holding} of the voters ${voters} holding it`);
      }
    }
    // Whoever a node believes leads its epoch did win that epoch.
    if (!raft.isLeader && raft.leaderId >= 0) {
      const actual = this.leaders.get(raft.epoch);
      if (actual !== raft.leaderId) this.fail(`node ${n.id} (${raft.stateName}) follows ${raft.leaderId} in epoch ${raft.epoch}, whose leader is ${actual ?? 'nobody'}`);
    }
    const hwm = n.log.highWatermark();
    if (hwm > n.log.endOffset().offset) this.fail(`node ${n.id}: high watermark ${hwm} above log end ${n.log.endOffset().offset}`);
    if (hwm > n.checkedUpTo) {
      const entries = this.entriesOf(n, hwm, n.checkedUpTo);
      let o = Number(n.checkedUpTo);
      for (const e of entries) {
        if (o < this.committed.length) {
          if (this.committed[o] !== e) this.fail(`node ${n.id}: committed entry ${o} is ${e}, but ${this.committed[o]} elsewhere`);
        } else if (o === this.committed.length) {
          this.committed.push(e);
        } else {
          this.fail(`internal: committed history gap at ${o}`);
        }
        o++;
      }
      n.checkedUpTo = hwm;
    }
  }

  // ------------------------------------------------------------ queries

  liveNodes(): SimNode[] {
    return this.nodes.filter((n) => n.raft);
  }

  /** The leader every live node agrees on (same epoch, all followers of it), or null. */
  stableLeader(): SimNode | null {
    const live = this.liveNodes();
    const leaders = live.filter((n) => n.raft!.isLeader);
    if (leaders.length !== 1) return null;
    const l = leaders[0];
    for (const n of live) {
      if (n === l) continue;
      const r = n.raft!;
      if (r.stateName !== 'Follower' || r.epoch !== l.raft!.epoch || r.leaderId !== l.id) return null;
    }
    return l;
  }
}
