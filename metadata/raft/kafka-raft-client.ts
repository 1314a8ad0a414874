/**
 * KafkaRaftClient: runs one RaftNode (the I/O-free consensus core, raft-node.ts) on Node's event loop
 * and over krill's own network client (Kafka's KafkaRaftClient driver loop + KafkaNetworkChannel +
 * RaftManager's wiring, in one object).
 *
 * Owns:
 * - the poll timer: poll() runs when the delay it last returned has passed and after every message
 *   delivered to the node (inbound request, response, failure); nothing else calls into the node;
 * - one BrokerConnection per peer (client/network-client.ts): the voters of controller.quorum.voters,
 *   and (KIP-853) those the node learns from the log's VotersRecord, a Fetch response's leader
 *   endpoint or controller.quorum.bootstrap.servers (negative ids); re-made when the endpoint of an
 *   id changes; opened on first use, re-opened
 *   after a failure with exponential backoff (retry.backoff.ms doubling up to 1 s); versions from the
 *   peer's ApiVersions, capped at what Kafka 4.0 sends (KAFKA_4_0_RAFT_VERSIONS);
 * - the inbound requests handed in by the controller listener's handlers (handleInboundRequest),
 *   each waiting for the node's sendResponse under a correlation id of this client's own;
 * - the appends waiting for the high watermark, and the committed-batch / leader listeners.
 *
 * Invariants:
 * - the node never sees a message re-entrantly: every failure of an outbound request is delivered
 *   from a later tick, never from inside the sendRequest call that poll() made;
 * - an outbound request that cannot be sent, or whose connection fails, comes back as a response with
 *   BROKER_NOT_AVAILABLE; one that times out as REQUEST_TIMED_OUT (raft-messages.ts errorResponse);
 *   a pre-vote to a peer below Vote v2 comes back as UNSUPPORTED_VERSION (which KIP-996 counts as
 *   granted); a response is delivered only to the RaftNode that sent its request, and never after close;
 * - an append's promise settles exactly once: resolved when the high watermark passes its last
 *   offset, rejected with NOT_CONTROLLER when the leadership it was appended under ends first or the
 *   client closes;
 * - committed batches reach the listener once each, in offset order, as the high watermark passes
 *   them (control batches included, flagged). Snapshots (Kafka's handleLoadSnapshot): at start, a
 *   node with a snapshot hands the latest one to onLoadSnapshot first and then the batches after
 *   its end offset (not the log from its start); a follower that downloaded a snapshot (its log
 *   start moved past what the listener has seen) hands that snapshot over, then continues after it;
 * - createSnapshot stores a snapshot the state machine wrote of what was delivered to it (its end
 *   offset at most the next offset to deliver), then applies metadata.max.retention.bytes / .ms
 *   (cleanSnapshots, raft-log.ts: the latest snapshot is always kept);
 * - listeners run after the node's call returned (a microtask), so they may call append();
 * - one RaftNode per client, built by start(): a restart is a new KafkaRaftClient (new connections,
 *   correlation ids from 0 again), so nothing addressed to the old node can reach the new one;
 * - if the node throws (an invariant it checks broke), the client logs it and stops (fail-stop).
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { connect, BrokerConnection, RequestTimeoutError, type ConnectOptions } from '../../client/network-client';
import { APIS, type ApiName } from '../../protocol/generated';
import type { SimpleRecord } from '../../protocol/records/memory-records-builder';
import { readRecords } from '../../protocol/records/record';
import type { Logger } from '../../common/logger';
import { RaftNode, NotLeaderError, type RaftClock, type RaftRandom } from './raft-node';
import { errorResponse, type RaftApiKey, type RaftRequest, type RaftResponse } from './raft-messages';
import type { QuorumConfig, VoterEndpoint } from './quorum-config';
import { cleanSnapshots, DEFAULT_SNAPSHOT_RETENTION, type OffsetAndEpoch, type RaftLog, type SnapshotRetention } from './raft-log';
import { readSnapshotTimestamp } from '../snapshot/snapshot-records';
import type { QuorumStateStore } from './quorum-state-store';
import type { Endpoint, VoterSet } from './voter-set';
import type { FetchRequest } from '../../protocol/generated/fetch';
import { NO_DIRECTORY_ID } from './quorum-state-store';
import { splitBatches } from '../../protocol/records/record-batch';

/** Kafka's API names of the raft RPCs. */
export const RAFT_API_NAMES: Record<RaftApiKey, ApiName> = {
  VOTE: 'Vote',
  BEGIN_QUORUM_EPOCH: 'BeginQuorumEpoch',
  END_QUORUM_EPOCH: 'EndQuorumEpoch',
  FETCH: 'Fetch',
  FETCH_SNAPSHOT: 'FetchSnapshot',
  DESCRIBE_QUORUM: 'DescribeQuorum',
  ADD_RAFT_VOTER: 'AddRaftVoter',
  REMOVE_RAFT_VOTER: 'RemoveRaftVoter',
  UPDATE_RAFT_VOTER: 'UpdateRaftVoter',
};

/** The newest version of each raft RPC Kafka 4.0 sends and serves (the controller listener advertises these). */
export const KAFKA_4_0_RAFT_VERSIONS: Record<RaftApiKey, number> = {
  VOTE: 2,
  BEGIN_QUORUM_EPOCH: 1,
  END_QUORUM_EPOCH: 1,
  FETCH: 17,
  FETCH_SNAPSHOT: 1,
  DESCRIBE_QUORUM: 2,
  ADD_RAFT_VOTER: 0,
  REMOVE_RAFT_VOTER: 0,
  UPDATE_RAFT_VOTER: 0,
};

const MAX_RECONNECT_BACKOFF_MS = 1_000;
/** setTimeout's limit; poll() returns Infinity when nothing is due. */
const MAX_TIMER_MS = 60_000;

export interface CommittedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  /** The leader epoch the batch was written in. */
  epoch: number;
  isControl: boolean;
  records: { offset: bigint; key: Buffer | null; value: Buffer | null }[];
  /** The batch's bytes in the log (what metadata.log.max.record.bytes.between.snapshots counts). */
  sizeInBytes?: number;
  /** The batch's max timestamp (Kafka's append timestamp; a snapshot's lastContainedLogTimestamp). */
  appendTimestamp?: number;
}

/** A snapshot handed to the state machine (Kafka's SnapshotReader): everything below `id.offset`. */
export interface RaftSnapshot {
  id: OffsetAndEpoch;
  data: Buffer;
}

export interface RaftLeader {
  /** -1: unknown. */
  id: number;
  epoch: number;
  /** The leader's listener from controller.quorum.voters; null while the leader is unknown. */
  endpoint: VoterEndpoint | null;
}

export interface KafkaRaftClientListener {
  /** Batches below the new high watermark, in order, each once. */
  onCommit?(batches: readonly CommittedBatch[], highWatermark: bigint): void;
  onLeaderChange?(leader: RaftLeader): void;
  /** Kafka's handleLoadSnapshot: the state is the snapshot's; the next onCommit continues at id.offset. */
  onLoadSnapshot?(snapshot: RaftSnapshot): void;
}

export interface KafkaRaftClientOptions {
  nodeId: number;
  clusterId: string;
  config: QuorumConfig;
  log: RaftLog;
  store: QuorumStateStore;
  logger?: Logger;
  /** Defaults: Date.now and Math.random. */
  clock?: RaftClock;
  random?: RaftRandom;
  /** Passed to connect() (tls, sasl, clientId); timeouts come from the quorum config. */
  connectOptions?: ConnectOptions;
  /** How long close() waits for a graceful resignation (Kafka: the shutdown timeout); default 5 s. */
  shutdownTimeoutMs?: number;
  /** metadata.max.retention.bytes / .ms, applied after each createSnapshot (default Kafka's). */
  snapshotRetention?: SnapshotRetention;
  /** KIP-853: this replica's metadata directory id (meta.properties `directory.id`). */
  directoryId?: string;
  /** KIP-853: this controller's own listeners (what it writes for itself in a VotersRecord). */
  listeners?: readonly Endpoint[];
}

interface Peer {
  endpoint: VoterEndpoint;
  conn: BrokerConnection | null;
  connecting: Promise<BrokerConnection> | null;
  /** No connection attempt before this time (ms, Date.now). */
  retryAt: number;
  failures: number;
}

interface PendingAppend {
  lastOffset: bigint;
  epoch: number;
  resolve: (offset: bigint) => void;
  reject: (err: Error) => void;
}

export class NotControllerError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.NOT_CONTROLLER, message);
  }
}

export class KafkaRaftClient {
  readonly nodeId: number;
  private readonly opts: KafkaRaftClientOptions;
  private readonly clock: RaftClock;
  private node: RaftNode | null = null;
  private readonly peers = new Map<number, Peer>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private started = false;
  private nextInboundCorrelation = 0;
  private readonly inbound = new Map<number, { apiKey: RaftApiKey; resolve: (r: RaftResponse) => void }>();
  private pendingAppends: PendingAppend[] = [];
  private readonly listeners = new Set<KafkaRaftClientListener>();
  /** The next offset to hand to onCommit. */
  private nextCommitOffset = 0n;
  private lastLeader: RaftLeader = { id: -1, epoch: -1, endpoint: null };
  private polling = false;
  private pollAgain = false;
  /** Set while close() waits for a graceful resignation; called by poll() once it is complete. */
  private shutdownWaiter: (() => void) | null = null;
  private closing: Promise<void> | null = null;

  constructor(opts: KafkaRaftClientOptions) {
    this.opts = opts;
    this.nodeId = opts.nodeId;
    this.clock = opts.clock ?? { now: () => Date.now() };
    for (const [id, endpoint] of opts.config.voters) {
      if (id !== opts.nodeId) this.peers.set(id, { endpoint, conn: null, connecting: null, retryAt: 0, failures: 0 });
    }
  }

  /** Builds the RaftNode over the log and quorum-state (recovering both) and starts polling. */
  start(): void {
    if (this.started) throw new Error('KafkaRaftClient already started');
    this.started = true;
    this.nextCommitOffset = this.opts.log.startOffset();
    // Kafka's listener start: the latest snapshot first (it is committed: a snapshot is never
    // written above the high watermark), then the log after it.
    this.maybeLoadSnapshot(true);
    const node: RaftNode = new RaftNode({
      nodeId: this.opts.nodeId,
      clusterId: this.opts.clusterId,
      config: this.opts.config,
      clock: this.clock,
      random: this.opts.random ?? { nextInt: (bound) => Math.floor(Math.random() * bound) },
      log: this.opts.log,
      store: this.opts.store,
      directoryId: this.opts.directoryId,
      listeners: this.opts.listeners,
      sink: {
        sendRequest: (dest, correlationId, request) => this.sendRequest(node, dest, correlationId, request),
        sendResponse: (_dest, correlationId, response) => this.sendResponse(correlationId, response),
      },
      listener: {
        onHighWatermark: (hw) => this.onHighWatermark(hw),
        onLeaderChange: (epoch, leaderId) => this.onLeaderChange(epoch, leaderId),
      },
    });
    this.node = node;
    this.onLeaderChange(node.epoch, node.leaderId);
    this.poll();
  }

  addListener(l: KafkaRaftClientListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  get leader(): RaftLeader {
    return this.lastLeader;
  }

  get isLeader(): boolean {
    return this.node?.isLeader ?? false;
  }

  get epoch(): number {
    return this.node?.epoch ?? -1;
  }

  get highWatermark(): bigint | null {
    return this.node?.highWatermark ?? null;
  }

  /**
   * KIP-853: the records a controller snapshot ending at `snapshotEndOffset` must carry right after
   * its SnapshotHeader (KRaftVersionRecord + VotersRecord when kraft.version is 1; none with 0).
   */
  snapshotControlRecords(snapshotEndOffset: bigint): SimpleRecord[] {
    return this.node?.snapshotControlRecords(snapshotEndOffset) ?? [];
  }

  /** The voter set in force (KIP-853: the latest VotersRecord in the log, else controller.quorum.voters). */
  get voterSet(): VoterSet | null {
    return this.node?.voterSet ?? null;
  }

  /** The node's state name (Leader, Follower, Candidate, ...), for logs and tests. */
  get stateName(): string {
    return this.node?.stateName ?? 'Closed';
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Appends records as the leader, one batch. Resolves with the batch's last offset once it is
   * committed; rejects with NotControllerError at once when this node does not lead, or later when
   * its leadership ends before the commit (the batch may still commit under the next leader: the
   * caller learns that from onCommit, as Kafka's controller does).
   */
  append(records: readonly SimpleRecord[]): Promise<bigint> {
    const node = this.node;
    if (!node || this.closed) return Promise.reject(new NotControllerError(`raft client ${this.nodeId} is not running`));
    let lastOffset: bigint;
    try {
      lastOffset = node.append(records);
    } catch (err) {
      if (err instanceof NotLeaderError) return Promise.reject(new NotControllerError(`node ${this.nodeId} is not the quorum leader (epoch ${node.epoch}, leader ${node.leaderId})`));
      throw err;
    }
    const epoch = node.epoch;
    const p = new Promise<bigint>((resolve, reject) => this.pendingAppends.push({ lastOffset, epoch, resolve, reject }));
    this.completeAppends();
    this.poll();
    return p;
  }

  /**
   * A request from a handler of the controller listener; resolves with the node's response (for a
   * Fetch with nothing new, once data arrives or its max wait passes). After close: BROKER_NOT_AVAILABLE.
   */
  handleInboundRequest(request: RaftRequest): Promise<RaftResponse> {
    const node = this.node;
    if (!node || this.closed) return Promise.resolve(errorResponse(request.apiKey, ErrorCode.BROKER_NOT_AVAILABLE));
    const correlationId = this.nextInboundCorrelation++;
    const p = new Promise<RaftResponse>((resolve) => this.inbound.set(correlationId, { apiKey: request.apiKey, resolve }));
    this.deliver(() => node.handleRequest(sourceOf(request), correlationId, request));
    return p;
  }

  /**
   * Graceful shutdown: the node resigns if it leads and the client waits (at most shutdownTimeoutMs)
   * until every voter acknowledged it; then connections close, waiting appends are rejected and
   * parked inbound requests are answered BROKER_NOT_AVAILABLE. `graceful: false` stops at once, as a
   * crash would (the log and quorum-state file are left as they are; the caller closes the log).
   */
  close(opts: { graceful?: boolean } = {}): Promise<void> {
    this.closing ??= this.doClose(opts.graceful !== false);
    return this.closing;
  }

  private async doClose(graceful: boolean): Promise<void> {
    const node = this.node;
    if (node && graceful) {
      node.beginShutdown();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.opts.shutdownTimeoutMs ?? 5_000);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.shutdownWaiter = done;
        this.poll();
      });
      this.shutdownWaiter = null;
    }
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.node = null;
    for (const a of this.pendingAppends) a.reject(new NotControllerError(`raft client ${this.nodeId} closed`));
    this.pendingAppends = [];
    for (const [, w] of this.inbound) w.resolve(errorResponse(w.apiKey, ErrorCode.BROKER_NOT_AVAILABLE));
    this.inbound.clear();
    const closing: Promise<unknown>[] = [];
    for (const p of this.peers.values()) {
      if (p.conn) closing.push(p.conn.close().catch(() => undefined));
      if (p.connecting) closing.push(p.connecting.then((c) => c.close()).catch(() => undefined));
      p.conn = null;
      p.connecting = null;
    }
    await Promise.all(closing);
  }

  // ---------------------------------------------------------------- driving the node

  /** Runs `f` against the node, then polls it (Kafka's driver: poll after every delivered message). */
  private deliver(f: () => void): void {
    if (this.closed || !this.node) return;
    try {
      f();
    } catch (err) {
      this.fatal(err);
      return;
    }
    this.poll();
  }

  /** The node threw (an invariant it checks broke): this replica stops, as Kafka's raft thread would. */
  private fatal(err: unknown): void {
    this.opts.logger?.error(`raft node ${this.nodeId} failed, stopping: ${(err as Error)?.stack ?? String(err)}`);
    void this.close({ graceful: false });
  }

  private poll(): void {
    const node = this.node;
    if (!node || this.closed) return;
    // Nothing calls back into the node from inside its poll (failures and listeners come later);
    // the guard only keeps that so.
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    let delay: number;
    try {
      do {
        this.pollAgain = false;
        delay = node.poll();
      } while (this.pollAgain && !this.closed);
    } catch (err) {
      this.fatal(err);
      return;
    } finally {
      this.polling = false;
    }
    if (this.closed) return;
    // A downloaded snapshot can move the log start (and the high watermark with it, so no
    // onHighWatermark follows) past what the listeners have seen: hand it over now.
    try {
      this.maybeLoadSnapshot(false);
    } catch (err) {
      this.fatal(err);
      return;
    }
    if (this.shutdownWaiter && node.isShutdownComplete()) this.shutdownWaiter();
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.poll();
    }, Math.min(Math.max(0, delay), MAX_TIMER_MS));
  }

  private onHighWatermark(hw: bigint): void {
    this.completeAppends();
    if (this.nextCommitOffset >= hw) return;
    const log = this.opts.log;
    this.maybeLoadSnapshot(false);
    if (this.nextCommitOffset < log.startOffset()) throw new Error(`no snapshot covers offsets ${this.nextCommitOffset}..${log.startOffset() - 1n} below the log start`);
    const batches: CommittedBatch[] = [];
    while (this.nextCommitOffset < hw) {
      const buf = log.read(this.nextCommitOffset, 1024 * 1024);
      if (buf.length === 0) break;
      let progressed = false;
      for (const b of splitBatches(buf)) {
        if (b.lastOffset < this.nextCommitOffset) continue;
        if (b.baseOffset >= hw) break;
        batches.push({
          baseOffset: b.baseOffset,
          lastOffset: b.lastOffset,
          epoch: b.partitionLeaderEpoch,
          isControl: b.isControlBatch,
          records: readRecords(b).map((r) => ({ offset: r.offset, key: r.key, value: r.value })),
          sizeInBytes: b.sizeInBytes,
          appendTimestamp: Number(b.maxTimestamp),
        });
        this.nextCommitOffset = b.lastOffset + 1n;
        progressed = true;
      }
      if (!progressed) break;
    }
    if (batches.length === 0) return;
    this.notify((l) => l.onCommit?.(batches, hw));
  }

  /**
   * Hands the latest snapshot to the listeners when they have not seen what it covers: at start
   * (any snapshot), or when the log start moved past the next offset to deliver (a downloaded
   * snapshot). The next offset to deliver becomes the snapshot's end offset.
   */
  private maybeLoadSnapshot(atStart: boolean): void {
    const log = this.opts.log;
    if (!atStart && this.nextCommitOffset >= log.startOffset()) return;
    const latest = log.latestSnapshotId();
    if (!latest || latest.offset < this.nextCommitOffset) return;
    const data = log.readSnapshot(latest);
    if (!data) throw new Error(`snapshot ${latest.offset}/${latest.epoch} is listed but cannot be read`);
    this.nextCommitOffset = latest.offset;
    const snapshot: RaftSnapshot = { id: { ...latest }, data };
    this.opts.logger?.info(`loading snapshot ${latest.offset}/${latest.epoch} (${data.length} bytes)`);
    this.notify((l) => l.onLoadSnapshot?.(snapshot));
  }

  /**
   * Kafka's RaftClient.createSnapshot + freeze: stores `data` as the snapshot `id` of the state the
   * listener built from what it was given (id.offset at most the next offset to deliver, at a batch
   * boundary, of epoch id.epoch), then cleans older snapshots and the log below them as
   * metadata.max.retention.bytes / .ms allow. Throws when the id does not fit the log.
   */
  createSnapshot(id: OffsetAndEpoch, data: Buffer): void {
    if (!this.node || this.closed) throw new Error(`raft client ${this.nodeId} is not running`);
    if (id.offset > this.nextCommitOffset) throw new Error(`snapshot ${id.offset}/${id.epoch} is past what was delivered (${this.nextCommitOffset})`);
    const log = this.opts.log;
    log.createSnapshot(id, data);
    this.cleanLog();
  }

  /** Applies the snapshot retention (metadata.max.retention.bytes / .ms) now. */
  cleanLog(): boolean {
    const log = this.opts.log;
    const cleaned = cleanSnapshots(log, this.opts.snapshotRetention ?? DEFAULT_SNAPSHOT_RETENTION, Date.now(), (sid) => {
      const bytes = log.readSnapshot(sid);
      return bytes ? readSnapshotTimestamp(bytes) : null;
    });
    if (cleaned) this.opts.logger?.info(`snapshot retention: the log now starts at ${log.startOffset()} (snapshots ${log.snapshotIds().map((s) => `${s.offset}/${s.epoch}`).join(', ')})`);
    return cleaned;
  }

  /** Listeners run after the node's call has returned (a microtask), so they may call append(). */
  private notify(f: (l: KafkaRaftClientListener) => void): void {
    const listeners = [...this.listeners];
    queueMicrotask(() => {
      for (const l of listeners) {
        try {
          f(l);
        } catch (err) {
          this.opts.logger?.error(`a raft client listener threw: ${(err as Error).message}`);
        }
      }
    });
  }

  private completeAppends(): void {
    const node = this.node;
    if (!node) return;
    const hw = node.highWatermark;
    const keep: PendingAppend[] = [];
    for (const a of this.pendingAppends) {
      if (hw !== null && hw > a.lastOffset) a.resolve(a.lastOffset);
      else if (!node.isLeader || node.epoch !== a.epoch) a.reject(new NotControllerError(`node ${this.nodeId} lost the leadership of epoch ${a.epoch} before offset ${a.lastOffset} committed`));
      else keep.push(a);
    }
    this.pendingAppends = keep;
  }

  private onLeaderChange(epoch: number, leaderId: number): void {
    this.completeAppends();
    const endpoint = leaderId >= 0 ? this.endpointOf(leaderId) : null;
    const leader: RaftLeader = { id: leaderId, epoch, endpoint };
    if (leader.id === this.lastLeader.id && leader.epoch === this.lastLeader.epoch) return;
    this.lastLeader = leader;
    this.opts.logger?.info(`quorum epoch ${epoch}: leader ${leaderId < 0 ? 'unknown' : leaderId}`);
    this.notify((l) => l.onLeaderChange?.(leader));
  }

  // ---------------------------------------------------------------- inbound (KafkaNetworkChannel's server side)

  private sendResponse(correlationId: number, response: RaftResponse): void {
    const w = this.inbound.get(correlationId);
    if (!w) return;
    this.inbound.delete(correlationId);
    w.resolve(response);
  }

  // ---------------------------------------------------------------- outbound (KafkaNetworkChannel)

  private sendRequest(node: RaftNode, dest: number, correlationId: number, request: RaftRequest): void {
    const fail = (errorCode: number): void => {
      // Later, never from inside the node's own poll; and only to the node that asked.
      setImmediate(() => {
        if (this.node === node && !this.closed) this.deliver(() => node.handleResponse(dest, correlationId, errorResponse(request.apiKey, errorCode)));
      });
    };
    const peer = this.peerFor(dest);
    if (!peer) return fail(ErrorCode.BROKER_NOT_AVAILABLE);
    this.connection(peer).then(
      (conn) => {
        if (this.node !== node || this.closed) return;
        const api = RAFT_API_NAMES[request.apiKey];
        let version: number;
        try {
          version = Math.min(conn.versionFor(api), KAFKA_4_0_RAFT_VERSIONS[request.apiKey]);
        } catch {
          return fail(ErrorCode.UNSUPPORTED_VERSION);
        }
        let body: unknown = request.data;
        if (request.apiKey === 'VOTE' && version < 2 && request.data.topics.some((t) => t.partitions.some((p) => p.preVote))) return fail(ErrorCode.UNSUPPORTED_VERSION);
        if (request.apiKey === 'FETCH' && version < 15) body = { ...request.data, replicaId: request.data.replicaState.replicaId, replicaState: { replicaId: -1, replicaEpoch: -1n } };
        // KIP-853 directory ids exist from Fetch v17 and Vote v2: an older peer gets none.
        if (request.apiKey === 'FETCH' && version < 17) {
          const b = body as FetchRequest;
          body = { ...b, topics: b.topics.map((t) => ({ ...t, partitions: t.partitions.map((p) => ({ ...p, replicaDirectoryId: NO_DIRECTORY_ID })) })) };
        }
        if (request.apiKey === 'VOTE' && version < 2) {
          body = { ...request.data, topics: request.data.topics.map((t) => ({ ...t, partitions: t.partitions.map((p) => ({ ...p, candidateDirectoryId: NO_DIRECTORY_ID, voterDirectoryId: NO_DIRECTORY_ID })) })) };
        }
        let sent: Promise<unknown>;
        try {
          sent = conn.send(APIS[api].apiKey, version, body, { timeoutMs: this.opts.config.requestTimeoutMs });
        } catch {
          return fail(ErrorCode.UNSUPPORTED_VERSION); // not encodable at the peer's version
        }
        sent.then(
          (data) => {
            if (this.node !== node || this.closed) return;
            this.deliver(() => node.handleResponse(dest, correlationId, { apiKey: request.apiKey, data } as RaftResponse));
          },
          (err: unknown) => {
            if (this.node !== node || this.closed) return;
            this.deliver(() => node.handleResponse(dest, correlationId, errorResponse(request.apiKey, err instanceof RequestTimeoutError ? ErrorCode.REQUEST_TIMED_OUT : ErrorCode.BROKER_NOT_AVAILABLE)));
          },
        );
      },
      () => fail(ErrorCode.BROKER_NOT_AVAILABLE),
    );
  }

  /**
   * Where replica `id` listens: the voter set in force (KIP-853: endpoints from the VotersRecord),
   * what a Fetch response told of the leader, a bootstrap server (negative ids), and
   * `controller.quorum.voters`.
   */
  private endpointOf(id: number): VoterEndpoint | null {
    const learned = this.node?.endpointOf(id) ?? null;
    if (learned) return { id, host: learned.host, port: learned.port };
    return this.opts.config.voters.get(id) ?? null;
  }

  /** The peer for `dest`, made (or re-made, when its endpoint changed) from what is known of it now. */
  private peerFor(dest: number): Peer | null {
    if (dest === this.nodeId) return null;
    const endpoint = this.endpointOf(dest);
    const peer = this.peers.get(dest);
    if (peer && (!endpoint || (peer.endpoint.host === endpoint.host && peer.endpoint.port === endpoint.port))) return peer;
    if (!endpoint) return null;
    if (peer) {
      if (peer.conn) void peer.conn.close().catch(() => undefined);
      if (peer.connecting) void peer.connecting.then((c) => c.close()).catch(() => undefined);
    }
    const fresh: Peer = { endpoint, conn: null, connecting: null, retryAt: 0, failures: 0 };
    this.peers.set(dest, fresh);
    return fresh;
  }

  /** The peer's open connection, or a new one (after the reconnect backoff); rejects when none can be had now. */
  private connection(peer: Peer): Promise<BrokerConnection> {
    if (peer.conn && !peer.conn.isClosed) return Promise.resolve(peer.conn);
    peer.conn = null;
    if (peer.connecting) return peer.connecting;
    if (Date.now() < peer.retryAt) return Promise.reject(new Error('reconnect backoff'));
    const { host, port } = peer.endpoint;
    const c = this.opts.config;
    peer.connecting = connect(host, port, {
      clientId: `raft-client-${this.nodeId}`,
      ...this.opts.connectOptions,
      timeoutMs: c.requestTimeoutMs,
      requestTimeoutMs: c.requestTimeoutMs,
    }).then(
      (conn) => {
        peer.connecting = null;
        if (this.closed) {
          void conn.close();
          throw new Error('closed');
        }
        peer.conn = conn;
        peer.failures = 0;
        return conn;
      },
      (err: unknown) => {
        peer.connecting = null;
        peer.failures++;
        peer.retryAt = Date.now() + Math.min(MAX_RECONNECT_BACKOFF_MS, c.retryBackoffMs * 2 ** Math.min(peer.failures - 1, 10));
        throw err;
      },
    );
    return peer.connecting;
  }
}

/** The replica an inbound request comes from (the node uses it only to address its answer). */
function sourceOf(request: RaftRequest): number {
  switch (request.apiKey) {
    case 'VOTE':
      return request.data.topics[0]?.partitions[0]?.candidateId ?? -1;
    case 'BEGIN_QUORUM_EPOCH':
    case 'END_QUORUM_EPOCH':
      return request.data.topics[0]?.partitions[0]?.leaderId ?? -1;
    case 'FETCH':
      return request.data.replicaState.replicaId >= 0 ? request.data.replicaState.replicaId : request.data.replicaId;
    case 'FETCH_SNAPSHOT':
      return request.data.replicaId;
    case 'DESCRIBE_QUORUM':
    case 'ADD_RAFT_VOTER':
    case 'REMOVE_RAFT_VOTER':
      return -1;
    case 'UPDATE_RAFT_VOTER':
      return request.data.voterId;
  }
}
