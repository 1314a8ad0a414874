/**
 * MetadataObserver: how a broker follows the metadata log of a KRaft controller quorum, as an
 * observer of `__cluster_metadata-0` (Kafka's KafkaRaftClient on a broker: never a voter, it only
 * fetches). It sends KRaft Fetch requests to the quorum leader (the controller listener's raft
 * Fetch, broker/controller/handlers/raft-fetch.ts), with its node id as the replica id (so the
 * leader lists it among the observers of DescribeQuorum), `currentLeaderEpoch` = the epoch it
 * knows, `fetchOffset` = the end of what it holds and `lastFetchedEpoch` = the epoch of its last
 * batch, and hands the metadata records of every batch wholly below the leader's high watermark to
 * `apply`, in offset order, once each.
 *
 * Invariants:
 * - applied = committed: a batch is applied only once a high watermark taken from a leader's
 *   answer to a fetch at this observer's current position (no divergence, no snapshot id) passes
 *   its last offset; such an answer validates everything held before that position (the leader's
 *   log has the same last epoch there), so what is applied is in the committed log. Nothing applied
 *   is ever truncated: a DivergingEpoch below the applied end is refused and logged as a bug.
 * - Records fetched but not yet committed wait in `buffered` (at most `maxBufferBytes`, past that
 *   the observer stops taking new records and backs off until the high watermark moves), and are
 *   truncated by a DivergingEpoch answer (to the smaller of the leader's end offset for that epoch
 *   and this log's end for the largest epoch not above it: Kafka's truncateToEndOffset, over a
 *   leader-epoch cache of what was fetched).
 * - Control batches (LeaderChange, ...) are never applied, but the position moves past them, so the
 *   committed position (`committedEnd`) has gaps the broker's last applied offset does not see.
 * - An answer is used for data only when the position it was asked at is still the current one (an
 *   immediate fetch of awaitCaughtUp may race the long poll: the second answer is dropped).
 * - Leader discovery: a NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH answer
 *   names the leader it knows (`currentLeader`, its address from `controller.quorum.voters` or the
 *   v16+ `nodeEndpoints`); a higher epoch always wins, and a leader is adopted only for an epoch at
 *   least the known one. With no leader known, after a connection failure to the leader or when no
 *   fetch succeeded within `fetchTimeoutMs` (`controller.quorum.fetch.timeout.ms`), a random
 *   bootstrap endpoint is asked (the voters, else `controller.quorum.bootstrap.servers`), leaving
 *   out, for a fetch timeout, a leader just found unreachable (and not following it again in that
 *   epoch, though the other voters name it until they elect another).
 * - A SnapshotId answer (this observer is behind the leader's log start: the leader trimmed its log
 *   below a snapshot) makes it download that snapshot from the leader with FetchSnapshot, chunk by
 *   chunk (`loadFetchedSnapshot`), decode it (metadata/snapshot/: a corrupt or incomplete one is
 *   refused and fetched again after a backoff), and apply, as one batch at the snapshot's last
 *   offset, the records that turn the broker's image into the snapshot's (`snapshotDelta`: removals
 *   of what the snapshot no longer has, then what differs), so the replica manager and every other
 *   consumer of metadata deltas see the change like any other. Held uncommitted batches are dropped;
 *   fetching continues at the snapshot's end offset with its epoch as the last fetched one. Without
 *   an `image` to diff against, the observer cannot load a snapshot: it logs an error and retries.
 * - Errors back off (doubling from `retryBackoffMs`, at most 250 ms) and retry; nothing busy-waits.
 *   stop() closes both channels and ends every wait.
 */
import { ErrorCode, errorName } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { FetchRequest, FetchResponse } from '../protocol/generated/fetch';
import type { FetchSnapshotRequest, FetchSnapshotResponse } from '../protocol/generated/fetch-snapshot';
import type { Input } from '../protocol/primitives/input';
import { splitBatches } from '../protocol/records/record-batch';
import { decodeMetadataBatches } from './metadata-log-store';
import type { MetadataBatch } from './metadata-log';
import { fetchRequest, fetchSnapshotRequest } from './raft/raft-messages';
import type { MetadataCache } from './metadata-cache';
import { readSnapshotRecords } from './snapshot/snapshot-records';
import { snapshotDelta } from './snapshot/snapshot-delta';
import type { OffsetAndEpoch } from './raft/raft-log';

/** Between fetches while looking for the leader: an election takes about that, so it is found soon after. */
const MAX_BACKOFF_MS = 250;
const SNAPSHOT_RETRY_MS = 1000;

export interface ObserverEndpoint {
  host: string;
  port: number;
}

/** The active controller as the observer knows it: the quorum leader (id -1: unknown). */
export interface QuorumLeader {
  id: number;
  epoch: number;
  endpoint: ObserverEndpoint | null;
}

/** What the observer needs of a connection (NodeChannel has it; tests pass fakes). */
export interface ObserverChannel {
  retarget(host: string, port: number): void;
  versionFor(api: 'Fetch'): Promise<number>;
  send(api: 'Fetch', body: Input<FetchRequest>, opts: { version?: number; timeoutMs?: number }): Promise<FetchResponse>;
  send(api: 'FetchSnapshot', body: Input<FetchSnapshotRequest>, opts: { version?: number; timeoutMs?: number }): Promise<FetchSnapshotResponse>;
  close(): void;
}

export interface MetadataObserverOptions {
  nodeId: number;
  /** The replica id the fetches carry (default nodeId; -1 for the broker half of a combined voter). */
  replicaId?: number;
  clusterId: string;
  /** The static voters by id (`controller.quorum.voters`); may be empty with bootstrap servers. */
  voters: ReadonlyMap<number, ObserverEndpoint>;
  /** `controller.quorum.bootstrap.servers`; the voters are asked when this is empty. */
  bootstrapServers: readonly ObserverEndpoint[];
  /** The long-poll channel and the one for immediate fetches (both owned: closed by stop()). */
  channel: ObserverChannel;
  syncChannel: ObserverChannel;
  logger: Logger;
  /** Applies committed metadata batches in order (synchronously). */
  apply: (batches: MetadataBatch[]) => void;
  /** The image `apply` maintains: a fetched snapshot is applied as its difference to it. */
  image?: () => MetadataCache;
  /** The largest snapshot downloaded (default 1 GiB): a bigger one is refused, not buffered. */
  maxSnapshotBytes?: number;
  /** The leader's long-poll wait per fetch. */
  maxWaitMs: number;
  fetchTimeoutMs: number;
  requestTimeoutMs: number;
  retryBackoffMs: number;
  maxBytes?: number;
  /** Uncommitted records held at most (default 16 MiB). */
  maxBufferBytes?: number;
  /** Random int in [0, bound) (tests pin it). */
  random?: (bound: number) => number;
  now?: () => number;
}

interface HeldBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  epoch: number;
  isControl: boolean;
  bytes: Buffer;
}

/** What one fetch came to. */
interface FetchOutcome {
  /** The answer came from the leader of the known epoch without error. */
  fromLeader: boolean;
  /** That leader's high watermark (-1: none). */
  highWatermark: bigint;
  /** Batches were taken or applied, or the position changed. */
  progressed: boolean;
  /** Ask again at once (a new leader was named). */
  retryNow: boolean;
  /** The leader's answer named this snapshot: download and load it (fetchOnce does). */
  snapshot?: OffsetAndEpoch;
  /** How long to wait before the next fetch when not retrying at once and nothing progressed. */
  backoffMs?: number;
  error?: string;
}

interface Destination extends ObserverEndpoint {
  /** -1 for a bootstrap server whose id is not known. */
  id: number;
}

export class MetadataObserver {
  private stopped = false;
  private running = false;
  private loop: Promise<void> | null = null;
  private backoffMs: number;
  private failing = false;

  private leaderId = -1;
  private epoch = 0;
  private readonly endpoints = new Map<number, ObserverEndpoint>();
  private lastSuccessAt: number;
  private leaderListeners = new Set<(leader: QuorumLeader) => void>();
  private progressWaiters: (() => void)[] = [];

  /** Uncommitted batches after `committedEnd`, in order. */
  private buffered: HeldBatch[] = [];
  private bufferedBytes = 0;
  /** (epoch, start offset) of every epoch fetched, oldest first (a leader-epoch cache). */
  private readonly epochStarts: { epoch: number; startOffset: bigint }[] = [];
  /** The offset after the last batch applied or skipped as committed. */
  private committed = 0n;
  /** Bumped on each truncation, so an answer to an older position is recognised. */
  private generation = 0;
  /** The highest high watermark a leader gave at this observer's position. */
  highWatermark = -1n;
  /** Fetch answers handled (tests). */
  answers = 0;
  /** Metadata snapshots downloaded and applied. */
  snapshotsLoaded = 0;

  constructor(private readonly opts: MetadataObserverOptions) {
    for (const [id, e] of opts.voters) this.endpoints.set(id, { host: e.host, port: e.port });
    this.backoffMs = Math.max(1, opts.retryBackoffMs);
    this.lastSuccessAt = this.now();
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  private random(bound: number): number {
    return this.opts.random ? this.opts.random(bound) : Math.floor(Math.random() * bound);
  }

  /** The offset the next batch applied will start at or after (the committed end). */
  get committedEnd(): bigint {
    return this.committed;
  }

  /** The offset of the next fetch (the end of what is held). */
  get fetchOffset(): bigint {
    return this.buffered.length > 0 ? this.buffered[this.buffered.length - 1].lastOffset + 1n : this.committed;
  }

  get bufferedBatches(): number {
    return this.buffered.length;
  }

  get leader(): QuorumLeader {
    return { id: this.leaderId, epoch: this.epoch, endpoint: this.leaderId >= 0 ? (this.endpoints.get(this.leaderId) ?? null) : null };
  }

  /** Told of every change of (epoch, leader id); returns an unsubscribe function. */
  onLeaderChange(listener: (leader: QuorumLeader) => void): () => void {
    this.leaderListeners.add(listener);
    return () => this.leaderListeners.delete(listener);
  }

  private lastFetchedEpoch(): number {
    return this.epochStarts.length > 0 ? this.epochStarts[this.epochStarts.length - 1].epoch : 0;
  }

  // ---- leader knowledge ----

  private setLeader(id: number, epoch: number, why: string): void {
    if (id === this.leaderId && epoch === this.epoch) return;
    const changedLeader = id !== this.leaderId;
    this.leaderId = id;
    this.epoch = epoch;
    if (changedLeader && id >= 0) this.lastSuccessAt = this.now();
    this.opts.logger.info(`metadata quorum epoch ${epoch}: leader ${id < 0 ? 'unknown' : id} (${why})`);
    const leader = this.leader;
    for (const l of [...this.leaderListeners]) {
      try {
        l(leader);
      } catch (err) {
        this.opts.logger.error(`a leader listener threw: ${(err as Error).message}`);
      }
    }
  }

  /**
   * What an answer says about the leader: a higher epoch always wins; the same epoch fills in an
   * unknown leader, except the one this observer just failed to reach in that epoch (voters name it
   * until they elect another): it is asked again only after the fetch timeout.
   */
  private learnLeader(leaderId: number, leaderEpoch: number, why: string): void {
    if (leaderEpoch > this.epoch) this.setLeader(leaderId, leaderEpoch, why);
    else if (leaderEpoch === this.epoch && leaderId >= 0 && this.leaderId < 0 && !this.isSuspect(leaderId, leaderEpoch)) this.setLeader(leaderId, leaderEpoch, why);
  }

  private suspect: { id: number; epoch: number; until: number } | null = null;

  private isSuspect(id: number, epoch: number): boolean {
    const s = this.suspect;
    return s !== null && s.id === id && s.epoch === epoch && this.now() < s.until;
  }

  private forgetLeader(why: string, unreachable = false): void {
    if (this.leaderId < 0) return;
    if (unreachable) this.suspect = { id: this.leaderId, epoch: this.epoch, until: this.now() + this.opts.fetchTimeoutMs };
    this.setLeader(-1, this.epoch, why);
  }

  private destination(): Destination {
    if (this.leaderId >= 0 && this.now() - this.lastSuccessAt > this.opts.fetchTimeoutMs) {
      this.forgetLeader(`no successful fetch from it within controller.quorum.fetch.timeout.ms=${this.opts.fetchTimeoutMs}`);
    }
    if (this.leaderId >= 0) {
      const e = this.endpoints.get(this.leaderId);
      if (e) return { id: this.leaderId, ...e };
    }
    // Kafka's observers ask a random bootstrap server (the voters of a static quorum); the leader just
    // found unreachable is left out while there is another to ask.
    const dead = this.suspect && this.now() < this.suspect.until ? this.endpoints.get(this.suspect.id) : undefined;
    const alive = <T extends ObserverEndpoint>(list: T[]): T[] => {
      const rest = dead ? list.filter((e) => e.host !== dead.host || e.port !== dead.port) : list;
      return rest.length > 0 ? rest : list;
    };
    if (this.opts.bootstrapServers.length > 0) {
      const choices = alive([...this.opts.bootstrapServers]);
      const e = choices[this.random(choices.length)];
      const known = [...this.endpoints].find(([, v]) => v.host === e.host && v.port === e.port);
      return { id: known ? known[0] : -1, host: e.host, port: e.port };
    }
    const choices = alive([...this.endpoints].map(([id, e]) => ({ id, host: e.host, port: e.port })));
    if (choices.length === 0) throw new Error('no controller to fetch the metadata log from: neither controller.quorum.voters nor controller.quorum.bootstrap.servers');
    return choices[this.random(choices.length)];
  }

  // ---- one fetch ----

  private async fetchOnce(channel: ObserverChannel, maxWaitMs: number): Promise<FetchOutcome> {
    const dest = this.destination();
    const asked = { offset: this.fetchOffset, lastEpoch: this.lastFetchedEpoch(), epoch: this.epoch, generation: this.generation };
    let res: FetchResponse;
    try {
      channel.retarget(dest.host, dest.port);
      const version = await channel.versionFor('Fetch');
      if (version < 12) throw new Error(`the controller at ${dest.host}:${dest.port} speaks Fetch v${version}: a KRaft fetch needs v12+ (last fetched epoch)`);
      const body = fetchRequest({
        clusterId: this.opts.clusterId,
        replicaId: this.opts.replicaId ?? this.opts.nodeId,
        maxWaitMs,
        currentLeaderEpoch: asked.epoch,
        fetchOffset: asked.offset,
        lastFetchedEpoch: asked.lastEpoch,
        logStartOffset: -1n,
        maxBytes: this.opts.maxBytes ?? 8 << 20,
      });
      // The replica id travels in ReplicaState from v15, in ReplicaId before.
      if (version < 15) body.replicaId = this.opts.replicaId ?? this.opts.nodeId;
      res = await channel.send('Fetch', body, { version, timeoutMs: this.opts.requestTimeoutMs + maxWaitMs });
    } catch (err) {
      if (this.stopped) return { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: false };
      const msg = `${dest.host}:${dest.port}: ${(err as Error).message}`;
      if (dest.id >= 0 && dest.id === this.leaderId) this.forgetLeader(`the fetch to it failed: ${msg}`, true);
      return { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: false, error: msg };
    }
    if (this.stopped) return { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: false };
    this.answers++;
    const outcome = this.handleAnswer(dest, asked, res);
    if (outcome.snapshot === undefined) return outcome;
    const loaded = await this.loadFetchedSnapshot(channel, outcome.snapshot, dest, asked.generation);
    return loaded
      ? { fromLeader: true, highWatermark: outcome.highWatermark, progressed: true, retryNow: true }
      : { fromLeader: true, highWatermark: outcome.highWatermark, progressed: false, retryNow: false, error: 'the metadata snapshot could not be loaded', backoffMs: SNAPSHOT_RETRY_MS };
  }

  private handleAnswer(dest: Destination, asked: { offset: bigint; lastEpoch: number; epoch: number; generation: number }, res: FetchResponse): FetchOutcome {
    const fail = (error: string, backoffMs?: number): FetchOutcome => ({ fromLeader: false, highWatermark: -1n, progressed: false, retryNow: false, error, backoffMs });
    const where = `${dest.host}:${dest.port}`;
    if (res.errorCode !== ErrorCode.NONE) {
      // A node going down (or not in the quorum) says BROKER_NOT_AVAILABLE; other errors are retried
      // on the same leader until the fetch timeout.
      if (res.errorCode === ErrorCode.BROKER_NOT_AVAILABLE && dest.id >= 0 && dest.id === this.leaderId) this.forgetLeader(`it answered ${errorName(res.errorCode)}`, true);
      if (res.errorCode === ErrorCode.INCONSISTENT_CLUSTER_ID) {
        this.opts.logger.error(`the controller at ${where} belongs to another cluster than ${this.opts.clusterId} (INCONSISTENT_CLUSTER_ID)`);
      }
      return fail(`${where} answered ${errorName(res.errorCode)}`);
    }
    for (const n of res.nodeEndpoints ?? []) {
      if (n.nodeId >= 0 && n.host) this.endpoints.set(n.nodeId, { host: n.host, port: n.port });
    }
    const p = res.responses[0]?.partitions[0];
    if (!p) return fail(`${where} answered without the metadata partition`);
    const leaderId = p.currentLeader.leaderId;
    const leaderEpoch = p.currentLeader.leaderEpoch;
    switch (p.errorCode) {
      case ErrorCode.NONE:
        break;
      case ErrorCode.NOT_LEADER_OR_FOLLOWER:
      case ErrorCode.FENCED_LEADER_EPOCH:
      case ErrorCode.UNKNOWN_LEADER_EPOCH: {
        const before = { id: this.leaderId, epoch: this.epoch };
        this.learnLeader(leaderId, leaderEpoch, `named by ${dest.id >= 0 ? `controller ${dest.id}` : where} (${errorName(p.errorCode)})`);
        // A node naming itself in the epoch we asked while not leading it (a resigned leader): not a leader to fetch from.
        if (p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && dest.id >= 0 && this.leaderId === dest.id && leaderEpoch === asked.epoch) {
          this.forgetLeader(`it answered ${errorName(p.errorCode)}`);
        }
        const learnt = this.leaderId >= 0 && this.endpoints.has(this.leaderId) && (this.leaderId !== before.id || this.epoch !== before.epoch);
        return { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: learnt, error: `${where} answered ${errorName(p.errorCode)}` };
      }
      default:
        return fail(`${where} answered ${errorName(p.errorCode)}`);
    }
    // A successful answer comes from the leader of the epoch it names (ours: we sent it).
    if (leaderEpoch !== this.epoch || leaderEpoch !== asked.epoch) {
      this.learnLeader(leaderId, leaderEpoch, `answered by ${where}`);
      return { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: true };
    }
    const answeringId = leaderId >= 0 ? leaderId : dest.id;
    if (answeringId >= 0 && this.leaderId < 0) this.setLeader(answeringId, leaderEpoch, `answered the fetch`);
    if (dest.id >= 0 && !this.endpoints.has(dest.id)) this.endpoints.set(dest.id, { host: dest.host, port: dest.port });
    if (answeringId >= 0 && !this.endpoints.has(answeringId)) this.endpoints.set(answeringId, { host: dest.host, port: dest.port });
    this.lastSuccessAt = this.now();
    this.suspect = null;
    const hw = p.highWatermark;
    const current = asked.offset === this.fetchOffset && asked.lastEpoch === this.lastFetchedEpoch() && asked.generation === this.generation;
    if (!current) return { fromLeader: true, highWatermark: hw, progressed: false, retryNow: false };

    if (p.divergingEpoch.epoch >= 0) {
      const ok = this.truncateToEndOffset({ epoch: p.divergingEpoch.epoch, offset: p.divergingEpoch.endOffset });
      return ok
        ? { fromLeader: true, highWatermark: hw, progressed: true, retryNow: true }
        : { fromLeader: true, highWatermark: hw, progressed: false, retryNow: false, error: 'refused a truncation below the applied metadata', backoffMs: MAX_BACKOFF_MS };
    }
    if (p.snapshotId.epoch >= 0 || p.snapshotId.endOffset >= 0n) {
      this.opts.logger.info(
        `the metadata quorum leader (${where}) answered our fetch at offset ${this.fetchOffset} with snapshot ${p.snapshotId.endOffset}-${p.snapshotId.epoch} (its log starts at ${p.logStartOffset}): loading it`,
      );
      return { fromLeader: true, highWatermark: hw, progressed: false, retryNow: false, snapshot: { epoch: p.snapshotId.epoch, offset: p.snapshotId.endOffset } };
    }
    let took = false;
    if (p.records && p.records.length > 0) took = this.hold(p.records);
    const applied = this.advanceHighWatermark(hw);
    const full = !took && !applied && p.records !== null && p.records.length > 0;
    return { fromLeader: true, highWatermark: hw, progressed: took || applied, retryNow: false, backoffMs: full ? Math.max(50, this.opts.retryBackoffMs) : undefined };
  }

  /** Appends the whole batches continuing the held log, within the buffer bound; true if any. */
  private hold(records: Buffer): boolean {
    let batches;
    try {
      batches = splitBatches(records);
    } catch (err) {
      this.opts.logger.warn(`a metadata fetch answer holds an invalid record batch: ${(err as Error).message}`);
      return false;
    }
    const limit = this.opts.maxBufferBytes ?? 16 << 20;
    let took = false;
    for (const b of batches) {
      const expected = this.fetchOffset;
      if (b.lastOffset < expected) continue; // a batch before the position (should not happen at a batch boundary)
      if (b.baseOffset !== expected) break;
      if (this.buffered.length > 0 && this.bufferedBytes + b.sizeInBytes > limit) break;
      const epoch = b.partitionLeaderEpoch;
      const last = this.lastFetchedEpoch();
      if (epoch < last) {
        this.opts.logger.error(`metadata batch at offset ${b.baseOffset} has epoch ${epoch}, below the epoch ${last} before it: dropped`);
        break;
      }
      if (epoch > last || this.epochStarts.length === 0) this.epochStarts.push({ epoch, startOffset: b.baseOffset });
      const bytes = Buffer.from(b.buf.subarray(b.offset, b.offset + b.sizeInBytes));
      this.buffered.push({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch, isControl: b.isControlBatch, bytes });
      this.bufferedBytes += bytes.length;
      took = true;
    }
    return took;
  }

  /** Applies, in order, every held batch wholly below `hw`; true if the committed end moved. */
  private advanceHighWatermark(hw: bigint): boolean {
    if (hw > this.highWatermark) this.highWatermark = hw;
    const before = this.committed;
    const out: MetadataBatch[] = [];
    while (this.buffered.length > 0 && this.buffered[0].lastOffset < this.highWatermark) {
      const b = this.buffered.shift()!;
      this.bufferedBytes -= b.bytes.length;
      this.committed = b.lastOffset + 1n;
      if (b.isControl) continue;
      for (const m of decodeMetadataBatches(b.bytes)) out.push(m);
    }
    if (out.length > 0) this.opts.apply(out);
    if (this.committed === before) return false;
    for (const w of this.progressWaiters.splice(0)) w();
    return true;
  }

  /** The end offset of the largest epoch not above `epoch` in what this observer fetched. */
  private endOffsetForEpoch(epoch: number): bigint {
    let i = -1;
    for (let k = 0; k < this.epochStarts.length; k++) if (this.epochStarts[k].epoch <= epoch) i = k;
    if (i < 0) return 0n;
    return i + 1 < this.epochStarts.length ? this.epochStarts[i + 1].startOffset : this.fetchOffset;
  }

  /** Kafka's truncateToEndOffset on the held log; false (and nothing changed) below the committed end. */
  private truncateToEndOffset(diverging: OffsetAndEpoch): boolean {
    const local = this.endOffsetForEpoch(diverging.epoch);
    const to = diverging.offset < local ? diverging.offset : local;
    if (to < this.committed) {
      this.opts.logger.error(
        `the metadata quorum leader asked to truncate to offset ${to} (epoch ${diverging.epoch} ends at ${diverging.offset}), below the committed metadata this broker applied (${this.committed}): refused`,
      );
      return false;
    }
    const before = this.fetchOffset;
    while (this.buffered.length > 0 && this.buffered[this.buffered.length - 1].baseOffset >= to) {
      const b = this.buffered.pop()!;
      this.bufferedBytes -= b.bytes.length;
    }
    while (this.epochStarts.length > 0 && this.epochStarts[this.epochStarts.length - 1].startOffset >= to) this.epochStarts.pop();
    this.generation++;
    this.opts.logger.info(`metadata log diverged from the leader's: truncated the uncommitted records from offset ${to} (held up to ${before})`);
    return true;
  }

  /**
   * Downloads snapshot `id` from `dest` (the leader of the epoch fetched in) with FetchSnapshot, in
   * chunks of at most `maxBytes`, and loads it (see the class comment). Returns whether the observer
   * moved to the snapshot's end; false (logged) when there is no image to diff against, the leader
   * changed or refused, the download failed or the bytes are not a whole valid snapshot, or this
   * observer's position moved meanwhile (another fetch loaded it or truncated).
   */
  private async loadFetchedSnapshot(channel: ObserverChannel, id: OffsetAndEpoch, dest: Destination, generation: number): Promise<boolean> {
    const name = `snapshot ${id.offset}-${id.epoch} from ${dest.host}:${dest.port}`;
    if (!this.opts.image) {
      this.opts.logger.error(`cannot load metadata ${name}: this observer has no image to apply it to; retrying`);
      return false;
    }
    const limit = BigInt(this.opts.maxSnapshotBytes ?? 1 << 30);
    const chunks: Buffer[] = [];
    let position = 0n;
    let size = -1n;
    try {
      while (size < 0n || position < size) {
        const body = fetchSnapshotRequest({
          clusterId: this.opts.clusterId,
          replicaId: this.opts.replicaId ?? this.opts.nodeId,
          maxBytes: this.opts.maxBytes ?? 8 << 20,
          currentLeaderEpoch: this.epoch,
          snapshotId: id,
          position,
        });
        const res = await channel.send('FetchSnapshot', body, { timeoutMs: this.opts.requestTimeoutMs });
        if (this.stopped) return false;
        if (res.errorCode !== ErrorCode.NONE) throw new Error(`FetchSnapshot answered ${errorName(res.errorCode)}`);
        const p = res.topics[0]?.partitions[0];
        if (!p) throw new Error('FetchSnapshot answered without the metadata partition');
        if (p.errorCode !== ErrorCode.NONE) {
          this.learnLeader(p.currentLeader.leaderId, p.currentLeader.leaderEpoch, `named by a FetchSnapshot answer (${errorName(p.errorCode)})`);
          throw new Error(`FetchSnapshot answered ${errorName(p.errorCode)}`);
        }
        if (p.snapshotId.endOffset !== id.offset || p.snapshotId.epoch !== id.epoch) throw new Error(`FetchSnapshot answered with snapshot ${p.snapshotId.endOffset}-${p.snapshotId.epoch}`);
        if (p.size > limit) throw new Error(`the snapshot holds ${p.size} bytes, more than the ${limit} this observer downloads`);
        if (size >= 0n && p.size !== size) throw new Error(`the snapshot's size changed from ${size} to ${p.size} during the download`);
        if (p.position !== position) throw new Error(`FetchSnapshot answered position ${p.position}, asked ${position}`);
        const chunk = p.unalignedRecords ?? Buffer.alloc(0);
        size = p.size;
        if (chunk.length === 0 && position < size) throw new Error(`FetchSnapshot answered no bytes at position ${position} of ${size}`);
        chunks.push(Buffer.from(chunk));
        position += BigInt(chunk.length);
      }
    } catch (err) {
      this.opts.logger.warn(`downloading metadata ${name} failed: ${(err as Error).message}; retrying`);
      return false;
    }
    if (this.stopped || generation !== this.generation) return false;
    const image = this.opts.image();
    let records;
    try {
      records = snapshotDelta(image, readSnapshotRecords(Buffer.concat(chunks)).records);
    } catch (err) {
      this.opts.logger.error(`metadata ${name} is not a valid snapshot: ${(err as Error).message}; fetching it again`);
      return false;
    }
    if (id.offset < this.committed) {
      this.opts.logger.warn(`metadata ${name} ends before what this broker applied (${this.committed}): not loaded`);
      return false;
    }
    this.opts.apply([{ records, lastOffset: id.offset - 1n }]);
    this.buffered = [];
    this.bufferedBytes = 0;
    this.epochStarts.length = 0;
    this.epochStarts.push({ epoch: id.epoch, startOffset: id.offset });
    this.committed = id.offset;
    this.generation++;
    this.snapshotsLoaded++;
    this.opts.logger.info(`loaded metadata ${name} (${position} bytes, ${records.length} records changed the image); fetching from offset ${id.offset}`);
    return true;
  }

  // ---- the loops ----

  /**
   * Fetches at once, on the sync channel, until everything the leader had committed when an answer
   * came (after this call) is applied. Throws when that is not done within `timeoutMs`.
   */
  async awaitCaughtUp(timeoutMs = 10_000): Promise<void> {
    await this.catchUpOn(this.opts.syncChannel, timeoutMs);
  }

  /** The startup replay: catches up on the main channel before the long poll starts. */
  async catchUp(timeoutMs: number): Promise<void> {
    await this.catchUpOn(this.opts.channel, timeoutMs);
  }

  private async catchUpOn(channel: ObserverChannel, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let target = -1n;
    let backoff = Math.max(1, this.opts.retryBackoffMs);
    let lastError = '';
    while (!this.stopped) {
      const r = await this.fetchOnce(channel, 0);
      if (r.fromLeader && r.highWatermark >= 0n && r.highWatermark > target) target = r.highWatermark;
      if (target >= 0n && this.committed >= target) return;
      if (r.error) lastError = r.error;
      if (Date.now() >= deadline) {
        throw new Error(`the metadata log did not catch up with the quorum leader within ${timeoutMs} ms${lastError ? `: ${lastError}` : ''}`);
      }
      if (r.retryNow || r.progressed) {
        backoff = Math.max(1, this.opts.retryBackoffMs);
        continue;
      }
      const wait = Math.min(r.backoffMs ?? backoff, Math.max(1, deadline - Date.now()));
      await this.sleep(wait, true);
      if (!r.fromLeader) backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }

  /** Starts the long-poll loop. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let r: FetchOutcome;
      try {
        r = await this.fetchOnce(this.opts.channel, this.opts.maxWaitMs);
      } catch (err) {
        r = { fromLeader: false, highWatermark: -1n, progressed: false, retryNow: false, error: (err as Error).message };
      }
      if (this.stopped) break;
      if (r.fromLeader && r.backoffMs === undefined) {
        if (this.failing) this.opts.logger.info(`fetching the metadata log from the quorum leader ${this.leaderId} (epoch ${this.epoch}) again`);
        this.failing = false;
        this.backoffMs = Math.max(1, this.opts.retryBackoffMs);
        continue;
      }
      if (r.retryNow) continue;
      const wait = r.backoffMs ?? this.backoffMs;
      if (r.error) {
        // Once per outage at warn; the retries that follow at debug.
        if (!this.failing) this.opts.logger.warn(`fetching the metadata log: ${r.error}; looking for the quorum leader`);
        else this.opts.logger.debug(`fetching the metadata log: ${r.error}; retrying in ${wait} ms`);
        this.failing = true;
      }
      await this.sleep(wait, true);
      if (r.backoffMs === undefined) this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    }
  }

  /** Sleeps `ms`; woken by stop() and, when `onLeader`, by a newly known leader. */
  private sleep(ms: number, onLeader: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      let unsubscribe = () => {};
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.sleepers.add(done);
      if (onLeader) {
        unsubscribe = this.onLeaderChange((l) => {
          if (l.id >= 0) done();
        });
      }
    });
  }

  private readonly sleepers = new Set<() => void>();

  /** Resolves once something is applied (or after `ms`). */
  waitForProgress(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.progressWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of [...this.sleepers]) w();
    for (const w of this.progressWaiters.splice(0)) w();
    this.opts.channel.close();
    this.opts.syncChannel.close();
    await this.loop?.catch(() => undefined);
  }
}
