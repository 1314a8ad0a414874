/**
 * Follower replication (Kafka's ReplicaFetcherManager / ReplicaFetcherThread / AbstractFetcherThread).
 *
 * One ReplicaFetcher per source broker, each with one loop and its own connection. A partition is
 * added when this broker becomes its follower at a new leader epoch, and goes through:
 *
 *   truncating  OffsetForLeaderEpoch(current leader epoch, our latest epoch) -> truncate to where
 *               our log and the leader's agree (Kafka's getOffsetTruncationState; a reply naming an
 *               epoch we do not have truncates to that epoch's end and asks again). A log with no
 *               epoch truncates to its high watermark. Nothing is fetched before this is done, so
 *               no divergent record survives a leader change.
 *   fetching    Fetch (replica_id / replica_state with our broker epoch, current leader epoch,
 *               last fetched epoch from v12) from our LEO; batches are appended as they are
 *               (appendAsFollower), the high watermark follows the leader's (capped at our LEO),
 *               the log start offset follows the leader's. A diverging epoch in the answer
 *               truncates as above and continues.
 *               Requests go through an incremental fetch session (KIP-227, FollowerFetchSession):
 *               after the first full one they list only partitions whose position changed and the
 *               leader answers only partitions with news; any doubt makes the next request full.
 *   fenced      FENCED_LEADER_EPOCH: our view is older than the leader's; the partition waits for
 *               the metadata that re-adds it at the new epoch.
 *
 * Errors delay only the partitions concerned (replica.fetch.backoff.ms); a connection failure
 * delays them all. OFFSET_OUT_OF_RANGE asks the leader for its end and start offsets (ListOffsets
 * as a replica) and truncates or starts over at the leader's log start. Fetches long-poll on the
 * leader (replica.fetch.wait.max.ms), so an idle follower costs one request per wait; an empty
 * fetcher sleeps until a partition is added. Nothing busy-waits.
 *
 * Replication throttles (the host's `quota`, replication-quota-manager.ts): while the follower
 * quota is exceeded, partitions it throttles that are not caught up (lag > 0 at the last answer,
 * or no answer yet) are left out of the next fetch; if nothing is left the fetcher backs off
 * replica.fetch.backoff.ms. Every fetched byte of a throttled partition is recorded.
 *
 * `fetchDelayMs` on the manager is a fault hook: every fetch of this broker waits that long first
 * (a slow follower). `maxLag` is Kafka's ReplicaFetcherManager MaxLag: the largest leader high
 * watermark minus our log end offset seen in the last answer of any partition followed.
 */
import { ErrorCode, KafkaError, errorName } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { FetchResponsePartitionData } from '../protocol/generated/fetch';
import { UnexpectedAppendOffsetError } from '../storage/errors';
import { NodeChannel } from '../client/node-channel';
import type { ClientSecurity } from '../client/network-client';
import type { Partition } from './partition';
import type { ReplicaQuota } from './replication-quota-manager';
import { topicPartitionKey } from '../common/topic-partition';
import { nextEpoch } from '../protocol/fetch-metadata';
import type { RemoteLogSegmentMetadata, TopicIdPartition } from '../storage/remote/remote-log-segment-metadata';
import { IndexType } from '../storage/remote/remote-storage-manager';
import { LeaderEpochCheckpointFile } from '../storage/leader-epoch-file-cache';

export interface FetcherConfig {
  maxWaitMs: number;
  minBytes: number;
  responseMaxBytes: number;
  partitionMaxBytes: number;
  backoffMs: number;
  socketTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, when it is secured. */
  security?: ClientSecurity;
}

export interface FetcherHost {
  nodeId: number;
  brokerEpoch(): bigint;
  /** The local partition, if this broker still hosts it. */
  partition(topic: string, partition: number): Partition | undefined;
  /** The inter-broker endpoint of a broker. */
  endpointOf(brokerId: number): { host: string; port: number } | undefined;
  logger: Logger;
  /** Tiered storage (a follower below the leader's local log start rebuilds its state from remote storage). */
  tiered?: {
    remoteLogSegmentMetadataFor(tp: TopicIdPartition, epoch: number, offset: bigint): Promise<RemoteLogSegmentMetadata | null>;
    fetchIndex(m: RemoteLogSegmentMetadata, type: IndexType): Promise<Buffer>;
  };
  /** The follower-side replication quota (absent: nothing is throttled). */
  quota?: ReplicaQuota;
}

type FetchStateKind = 'truncating' | 'fetching' | 'fenced';

interface PartitionFetchState {
  topic: string;
  partition: number;
  topicId: string;
  leaderEpoch: number;
  fetchOffset: bigint;
  state: FetchStateKind;
  delayedUntil: number;
  /** Leader's high watermark minus our log end offset, at the last answer (Kafka's FetcherLagMetrics); null before the first. */
  lag: bigint | null;
}

/** Kafka's OffsetTruncationState. */
export function truncationOffset(
  follower: { logEndOffset: bigint; highWatermark: bigint; endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | undefined },
  leader: { leaderEpoch: number; endOffset: bigint },
): { offset: bigint; completed: boolean } {
  const leo = follower.logEndOffset;
  const min = (a: bigint, b: bigint) => (a < b ? a : b);
  if (leader.endOffset < 0n) return { offset: min(follower.highWatermark, leo), completed: true };
  if (leader.leaderEpoch < 0) return { offset: min(leader.endOffset, leo), completed: true };
  const mine = follower.endOffsetForEpoch(leader.leaderEpoch);
  if (!mine) return { offset: min(leader.endOffset, leo), completed: true };
  if (mine.epoch !== leader.leaderEpoch) return { offset: min(mine.endOffset, leo), completed: false };
  return { offset: min(min(mine.endOffset, leader.endOffset), leo), completed: true };
}

/** What a fetch request sends for one partition (the fields a leader's fetch session caches). */
export interface FollowerFetchPosition {
  key: string;
  fetchOffset: bigint;
  logStartOffset: bigint;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** The fetch state the position belongs to: a partition re-added (a new state) is sent again. */
  owner: object;
  /** Listed even when unchanged: a partition not caught up (the fetches that move it are the ones to see). */
  always?: boolean;
}

/**
 * The follower's half of a KIP-227 fetch session with one leader (Kafka's FetchSessionHandler):
 * the first request is full (epoch 0) and opens a session on the leader; later ones are
 * incremental: they list only the partitions whose position (fetch offset, log start offset,
 * leader epoch, last fetched epoch) changed since the leader last heard it, or that are not caught
 * up (`always`: listing an unchanged partition is allowed and keeps a copy in progress visible in
 * every request), and name in
 * forgotten_topics_data those no longer fetched (delayed, throttled, truncating, removed). The
 * leader's answer then carries only partitions with news (records, an error, a moved high
 * watermark or log start offset), so an idle partition costs nothing per fetch. Any doubt about
 * what the leader's session holds (a failed or unanswered request, a session error, an answer the
 * fetcher could not use) makes the next request full again (epoch 0 closes the old session and
 * opens a new one; FETCH_SESSION_ID_NOT_FOUND starts from no session). A leader that opens no
 * session (session id 0 in its answer, a full cache) gets full requests; below Fetch v7 there are
 * no sessions (epoch -1).
 */
export class FollowerFetchSession {
  sessionId = 0;
  /** The epoch of the next request; 0 = the next request is full. */
  epoch = 0;
  private inSession = new Map<string, FollowerFetchPosition>();
  private pendingFull = false;

  /** The partitions to list and to forget in the next request, and its session id and epoch. */
  build(positions: readonly FollowerFetchPosition[], sessionsSupported: boolean): { sessionId: number; sessionEpoch: number; send: FollowerFetchPosition[]; forgotten: string[] } {
    if (!sessionsSupported) {
      this.pendingFull = true;
      return { sessionId: 0, sessionEpoch: -1, send: [...positions], forgotten: [] };
    }
    if (this.epoch === 0) {
      this.pendingFull = true;
      this.inSession = new Map(positions.map((x) => [x.key, x]));
      return { sessionId: this.sessionId, sessionEpoch: 0, send: [...positions], forgotten: [] };
    }
    this.pendingFull = false;
    const send: FollowerFetchPosition[] = [];
    const next = new Map<string, FollowerFetchPosition>();
    for (const x of positions) {
      const prev = this.inSession.get(x.key);
      next.set(x.key, x);
      if (
        !prev ||
        x.always ||
        prev.owner !== x.owner ||
        prev.fetchOffset !== x.fetchOffset ||
        prev.logStartOffset !== x.logStartOffset ||
        prev.currentLeaderEpoch !== x.currentLeaderEpoch ||
        prev.lastFetchedEpoch !== x.lastFetchedEpoch
      ) {
        send.push(x);
      }
    }
    const forgotten: string[] = [];
    for (const k of this.inSession.keys()) if (!next.has(k)) forgotten.push(k);
    this.inSession = next;
    return { sessionId: this.sessionId, sessionEpoch: this.epoch, send, forgotten };
  }

  /** The answer to the last built request arrived, with this top-level error and session id. */
  onResponse(errorCode: number, sessionId: number): void {
    if (errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND) {
      this.sessionId = 0;
      this.epoch = 0;
    } else if (errorCode !== ErrorCode.NONE) {
      this.epoch = 0;
    } else if (this.pendingFull) {
      this.sessionId = sessionId;
      this.epoch = sessionId === 0 ? 0 : nextEpoch(0);
    } else {
      this.epoch = nextEpoch(this.epoch);
    }
  }

  /** The leader's session may not hold what we think (no answer, an unused partition answer): the next request is full. */
  reset(): void {
    this.epoch = 0;
  }
}

export class ReplicaFetcher {
  private readonly partitions = new Map<string, PartitionFetchState>();
  private stopped = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  readonly channel: NodeChannel;
  /** The incremental fetch session with the leader (KIP-227). */
  readonly session = new FollowerFetchSession();
  /** Names and ids of the partitions of the last request (what the leader's session holds), for forgotten_topics_data. */
  private readonly forgottenIds = new Map<string, { topic: string; topicId: string; partition: number }>();

  constructor(
    readonly sourceBrokerId: number,
    address: { host: string; port: number },
    private readonly host: FetcherHost,
    private readonly config: FetcherConfig,
    private readonly fetchDelayMs: () => number,
  ) {
    this.channel = new NodeChannel(address.host, address.port, {
      clientId: `krill-replica-fetcher-${host.nodeId}-${sourceBrokerId}`,
      timeoutMs: Math.min(10_000, config.socketTimeoutMs),
      requestTimeoutMs: config.socketTimeoutMs,
      ...config.security,
    });
  }

  /** The largest lag of the partitions this fetcher follows. */
  maxLag(): bigint {
    let max = 0n;
    for (const s of this.partitions.values()) if (s.lag !== null && s.lag > max) max = s.lag;
    return max;
  }

  get size(): number {
    return this.partitions.size;
  }

  has(topic: string, partition: number): boolean {
    return this.partitions.has(topicPartitionKey(topic, partition));
  }

  add(p: Partition): void {
    const truncate = p.log.latestEpoch >= 0;
    this.partitions.set(p.key, {
      topic: p.topic,
      partition: p.partition,
      topicId: p.topicId,
      leaderEpoch: p.leaderEpoch,
      fetchOffset: p.log.logEndOffset,
      state: truncate ? 'truncating' : 'fetching',
      delayedUntil: 0,
      lag: null,
    });
    if (!truncate && p.log.logEndOffset > p.log.highWatermark) {
      // No epochs to compare: only what is committed is known to be the leader's.
      p.log.truncateTo(p.log.highWatermark);
      this.partitions.get(p.key)!.fetchOffset = p.log.logEndOffset;
    }
    this.start();
    this.wakeUp();
  }

  remove(topic: string, partition: number): void {
    this.partitions.delete(topicPartitionKey(topic, partition));
  }

  private start(): void {
    if (!this.loop && !this.stopped) this.loop = this.run();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Sleeps up to `ms` (forever when undefined); add() and stop() cut it short. */
  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      this.wake = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      if (ms !== undefined) {
        timer = setTimeout(() => {
          this.wake = null;
          resolve();
        }, Math.max(0, ms));
        timer.unref();
      }
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const now = Date.now();
      const all = [...this.partitions.values()];
      if (all.length === 0) {
        await this.sleep(undefined);
        continue;
      }
      try {
        const truncating = all.filter((s) => s.state === 'truncating' && s.delayedUntil <= now);
        if (truncating.length > 0) {
          await this.truncate(truncating);
          continue;
        }
        const fetching = all.filter((s) => s.state === 'fetching' && s.delayedUntil <= now);
        if (fetching.length === 0) {
          const next = Math.min(...all.filter((s) => s.state !== 'fenced').map((s) => s.delayedUntil));
          await this.sleep(Number.isFinite(next) ? next - now : undefined);
          continue;
        }
        // Throttled partitions that are not caught up sit this round out while the follower quota
        // is exceeded (Kafka's shouldFollowerThrottle); with nothing left, back off and look again.
        const quota = this.host.quota;
        const unthrottled = quota && quota.isQuotaExceeded() ? fetching.filter((s) => !this.shouldFollowerThrottle(quota, s)) : fetching;
        if (unthrottled.length === 0) {
          await this.sleep(this.config.backoffMs);
          continue;
        }
        const delay = this.fetchDelayMs();
        if (delay > 0) {
          await this.sleep(delay);
          if (this.stopped) break;
        }
        await this.fetch(unthrottled.filter((s) => this.partitions.get(topicPartitionKey(s.topic, s.partition)) === s));
      } catch (err) {
        if (this.stopped) break;
        this.host.logger.debug(`fetcher for broker ${this.sourceBrokerId} failed: ${(err as Error).message}; backing off`);
        this.channel.drop();
        this.session.reset();
        const until = Date.now() + this.config.backoffMs;
        for (const s of this.partitions.values()) s.delayedUntil = Math.max(s.delayedUntil, until);
        await this.sleep(this.config.backoffMs);
      }
    }
  }

  /** In sync: the last answer left no lag (Kafka's PartitionFetchState.isReplicaInSync); a throttled partition otherwise. */
  private shouldFollowerThrottle(quota: ReplicaQuota, s: PartitionFetchState): boolean {
    const inSync = s.lag !== null && s.lag <= 0n;
    return !inSync && quota.isThrottled(s.topic, s.partition);
  }

  /** The local partition for `s`, if it is still a follower of our source at the same epoch. */
  private current(s: PartitionFetchState): Partition | undefined {
    if (this.partitions.get(topicPartitionKey(s.topic, s.partition)) !== s) return undefined;
    const p = this.host.partition(s.topic, s.partition);
    if (!p || p.isLeader || p.leaderId !== this.sourceBrokerId || p.leaderEpoch !== s.leaderEpoch) return undefined;
    return p;
  }

  private delay(s: PartitionFetchState, why: string): void {
    s.delayedUntil = Date.now() + this.config.backoffMs;
    this.host.logger.debug(`${s.topic}-${s.partition} from broker ${this.sourceBrokerId}: ${why}; retrying in ${this.config.backoffMs} ms`);
  }

  private async truncate(states: PartitionFetchState[]): Promise<void> {
    const byTopic = new Map<string, PartitionFetchState[]>();
    for (const s of states) {
      const p = this.current(s);
      if (!p) continue;
      if (p.log.latestEpoch < 0) {
        p.log.truncateTo(p.log.highWatermark);
        s.fetchOffset = p.log.logEndOffset;
        s.state = 'fetching';
        continue;
      }
      const list = byTopic.get(s.topic) ?? [];
      list.push(s);
      byTopic.set(s.topic, list);
    }
    if (byTopic.size === 0) return;
    const res = await this.channel.send('OffsetForLeaderEpoch', {
      replicaId: this.host.nodeId,
      topics: [...byTopic.entries()].map(([topic, list]) => ({
        topic,
        partitions: list.map((s) => ({ partition: s.partition, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: this.host.partition(s.topic, s.partition)!.log.latestEpoch })),
      })),
    });
    for (const [topic, list] of byTopic) {
      for (const s of list) {
        const p = this.current(s);
        if (!p) continue;
        const r = res.topics.find((t) => t.topic === topic)?.partitions.find((x) => x.partition === s.partition);
        if (!r) {
          this.delay(s, 'no OffsetForLeaderEpoch answer');
          continue;
        }
        if (r.errorCode === ErrorCode.FENCED_LEADER_EPOCH) {
          s.state = 'fenced';
          continue;
        }
        if (r.errorCode !== ErrorCode.NONE) {
          this.delay(s, `OffsetForLeaderEpoch: ${errorName(r.errorCode)}`);
          continue;
        }
        const t = truncationOffset(
          { logEndOffset: p.log.logEndOffset, highWatermark: p.log.highWatermark, endOffsetForEpoch: (e) => p.log.endOffsetForEpoch(e) },
          { leaderEpoch: r.leaderEpoch, endOffset: r.endOffset },
        );
        if (t.offset < p.log.logEndOffset) {
          this.host.logger.info(
            `truncating ${p.name} from ${p.log.logEndOffset} to ${t.offset}: the leader (broker ${this.sourceBrokerId}, epoch ${s.leaderEpoch}) ends epoch ${r.leaderEpoch} at ${r.endOffset}`,
          );
          p.log.truncateTo(t.offset);
        }
        s.fetchOffset = p.log.logEndOffset;
        if (t.completed) s.state = 'fetching';
      }
    }
  }

  private async fetch(states: PartitionFetchState[]): Promise<void> {
    const live = states.filter((s) => this.current(s));
    if (live.length === 0) return;
    const version = await this.channel.versionFor('Fetch');
    const tk = (s: { topic: string; topicId: string }): string => (version >= 13 ? s.topicId : s.topic);
    // Every live partition can be answered (the leader's session holds them all); only the changed ones are listed.
    const byTopic = new Map<string, PartitionFetchState[]>();
    const positions: FollowerFetchPosition[] = [];
    for (const s of live) {
      const k = tk(s);
      const list = byTopic.get(k);
      if (list) list.push(s);
      else byTopic.set(k, [s]);
      const p = this.host.partition(s.topic, s.partition)!;
      positions.push({
        key: topicPartitionKey(s.topic, s.partition),
        fetchOffset: s.fetchOffset,
        logStartOffset: p.log.logStartOffset,
        currentLeaderEpoch: s.leaderEpoch,
        lastFetchedEpoch: version >= 12 ? p.log.latestEpoch : -1,
        owner: s,
        always: s.lag === null || s.lag > 0n,
      });
    }
    const sent = new Map(live.map((s) => [s, s.fetchOffset]));
    const req = this.session.build(positions, version >= 7);
    const byKey = new Map(live.map((s) => [topicPartitionKey(s.topic, s.partition), s]));
    const requestTopics = new Map<string, FollowerFetchPosition[]>();
    for (const x of req.send) {
      const k = tk(byKey.get(x.key)!);
      const list = requestTopics.get(k);
      if (list) list.push(x);
      else requestTopics.set(k, [x]);
    }
    const forgotten = new Map<string, number[]>();
    for (const key of req.forgotten) {
      const f = this.forgottenIds.get(key);
      if (!f) continue;
      const k = version >= 13 ? f.topicId : f.topic;
      const list = forgotten.get(k);
      if (list) list.push(f.partition);
      else forgotten.set(k, [f.partition]);
    }
    this.forgottenIds.clear();
    for (const s of live) this.forgottenIds.set(topicPartitionKey(s.topic, s.partition), { topic: s.topic, topicId: s.topicId, partition: s.partition });
    let res;
    try {
      res = await this.channel.send(
        'Fetch',
        {
          replicaId: version < 15 ? this.host.nodeId : undefined,
          replicaState: version >= 15 ? { replicaId: this.host.nodeId, replicaEpoch: this.host.brokerEpoch() } : undefined,
          maxWaitMs: this.config.maxWaitMs,
          minBytes: this.config.minBytes,
          maxBytes: this.config.responseMaxBytes,
          isolationLevel: 0,
          sessionId: req.sessionId,
          sessionEpoch: req.sessionEpoch,
          topics: [...requestTopics.entries()].map(([k, list]) => ({
            topic: version < 13 ? k : undefined,
            topicId: version >= 13 ? k : undefined,
            partitions: list.map((x) => ({
              partition: byKey.get(x.key)!.partition,
              currentLeaderEpoch: x.currentLeaderEpoch,
              fetchOffset: x.fetchOffset,
              lastFetchedEpoch: version >= 12 ? x.lastFetchedEpoch : undefined,
              logStartOffset: x.logStartOffset,
              partitionMaxBytes: this.config.partitionMaxBytes,
            })),
          })),
          forgottenTopicsData: [...forgotten.entries()].map(([k, partitions]) => ({
            topic: version < 13 ? k : undefined,
            topicId: version >= 13 ? k : undefined,
            partitions,
          })),
        },
        { version },
      );
    } catch (err) {
      this.session.reset();
      throw err;
    }
    this.session.onResponse(res.errorCode, res.sessionId);
    // A session the leader no longer has (it restarted, evicted it) or out of step: the next
    // request, at once, is full (Kafka's FetchSessionHandler.handleError; no backoff).
    if (res.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND || res.errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH) {
      this.host.logger.debug(`fetch session ${req.sessionId} with broker ${this.sourceBrokerId}: ${errorName(res.errorCode)}; the next fetch is full`);
      return;
    }
    if (res.errorCode !== ErrorCode.NONE) {
      for (const s of live) this.delay(s, `Fetch: ${errorName(res.errorCode)}`);
      return;
    }
    for (const t of res.responses) {
      const list = byTopic.get(version >= 13 ? t.topicId : t.topic) ?? [];
      for (const pd of t.partitions) {
        const s = list.find((x) => x.partition === pd.partitionIndex);
        const p = s && s.fetchOffset === sent.get(s) ? this.current(s) : undefined;
        if (!s || !p) {
          // An answer we do not use: the leader's session now believes we heard it.
          this.session.reset();
          continue;
        }
        try {
          await this.processPartition(s, p, pd);
        } catch (err) {
          this.session.reset();
          if (err instanceof KafkaError && err.code === ErrorCode.KAFKA_STORAGE_ERROR) {
            this.host.logger.error(`${p.name}: storage error while replicating: ${err.message}`);
          } else {
            this.host.logger.warn(`${p.name}: replicating from broker ${this.sourceBrokerId} failed: ${(err as Error).message}`);
          }
          this.delay(s, (err as Error).message);
        }
      }
    }
  }

  private async processPartition(s: PartitionFetchState, p: Partition, pd: FetchResponsePartitionData): Promise<void> {
    switch (pd.errorCode) {
      case ErrorCode.NONE:
        break;
      case ErrorCode.FENCED_LEADER_EPOCH:
        s.state = 'fenced';
        return;
      case ErrorCode.OFFSET_OUT_OF_RANGE:
        await this.handleOutOfRange(s, p);
        return;
      case ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE:
        await this.buildRemoteLogAuxState(s, p);
        return;
      default:
        this.delay(s, `Fetch: ${errorName(pd.errorCode)}`);
        return;
    }
    const log = p.log;
    const diverging = pd.divergingEpoch;
    if (diverging && diverging.epoch >= 0 && diverging.endOffset >= 0n) {
      const t = truncationOffset(
        { logEndOffset: log.logEndOffset, highWatermark: log.highWatermark, endOffsetForEpoch: (e) => log.endOffsetForEpoch(e) },
        { leaderEpoch: diverging.epoch, endOffset: diverging.endOffset },
      );
      if (t.offset < log.logEndOffset) {
        this.host.logger.info(`truncating ${p.name} from ${log.logEndOffset} to ${t.offset}: diverging epoch ${diverging.epoch} ends at ${diverging.endOffset} on the leader`);
        log.truncateTo(t.offset);
      }
      s.fetchOffset = log.logEndOffset;
      if (!t.completed) s.state = 'truncating';
      return;
    }
    if (pd.records && pd.records.length > 0) {
      // Every throttled byte counts, in sync or not, so that throttled traffic keeps to the bound.
      if (this.host.quota?.isThrottled(s.topic, s.partition)) this.host.quota.record(pd.records.length);
      try {
        p.appendRecordsToFollower(pd.records);
      } catch (err) {
        if (!(err instanceof UnexpectedAppendOffsetError)) throw err;
        // The leader's log start may fall inside a batch (DeleteRecords): start our log at that batch.
        if (log.logEndOffset === log.logStartOffset && err.firstOffset < log.logEndOffset && err.lastOffset >= log.logEndOffset) {
          log.truncateFullyAndStartAt(err.firstOffset);
          p.appendRecordsToFollower(pd.records);
        } else {
          throw err;
        }
      }
    }
    const leo = log.logEndOffset;
    s.lag = pd.highWatermark > leo ? pd.highWatermark - leo : 0n;
    log.updateHighWatermark(pd.highWatermark < leo ? pd.highWatermark : leo);
    if (pd.logStartOffset > log.logStartOffset && pd.logStartOffset <= log.highWatermark) {
      log.maybeIncrementLogStartOffset(pd.logStartOffset, 'LeaderOffsetIncremented');
    }
    s.fetchOffset = leo;
  }

  /** ListOffsets as a replica on the leader: the offset (and its epoch) for a special timestamp. */
  private async leaderOffset(s: PartitionFetchState, timestamp: bigint): Promise<{ offset: bigint; leaderEpoch: number }> {
    const res = await this.channel.send('ListOffsets', {
      replicaId: this.host.nodeId,
      isolationLevel: 0,
      topics: [{ name: s.topic, partitions: [{ partitionIndex: s.partition, currentLeaderEpoch: s.leaderEpoch, timestamp, maxNumOffsets: 1 }] }],
      timeoutMs: 10_000,
    });
    const r = res.topics[0]?.partitions[0];
    if (!r || r.errorCode !== ErrorCode.NONE) throw new KafkaError(r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, `ListOffsets ${timestamp} on the leader failed`);
    return { offset: r.offset, leaderEpoch: r.leaderEpoch };
  }

  /**
   * OFFSET_MOVED_TO_TIERED_STORAGE (Kafka's TierStateMachine): the leader's data below its local
   * log start is only in remote storage. Find the remote segment that ends just before the
   * leader's local start (its epoch from the leader's lineage: OffsetForLeaderEpoch for the
   * previous epoch when the local start opens an epoch), fetch its leader-epoch checkpoint and
   * producer snapshot, and start this log over at the leader's local start with the leader's log
   * start below it; fetching continues from there.
   */
  private async buildRemoteLogAuxState(s: PartitionFetchState, p: Partition): Promise<void> {
    const tiered = this.host.tiered;
    if (!tiered || !p.log.remoteLogEnabled()) {
      this.delay(s, 'the leader has moved the offset to tiered storage, which this broker does not have enabled');
      return;
    }
    const local = await this.leaderOffset(s, -4n);
    const start = await this.leaderOffset(s, -2n);
    if (!this.current(s)) return;
    const previous = local.offset - 1n;
    let targetEpoch = local.leaderEpoch;
    if (targetEpoch > 0) {
      const res = await this.channel.send('OffsetForLeaderEpoch', {
        replicaId: this.host.nodeId,
        topics: [{ topic: s.topic, partitions: [{ partition: s.partition, currentLeaderEpoch: s.leaderEpoch, leaderEpoch: targetEpoch - 1 }] }],
      });
      const r = res.topics[0]?.partitions[0];
      if (!r || r.errorCode !== ErrorCode.NONE) throw new KafkaError(r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, 'OffsetForLeaderEpoch on the leader failed');
      // The earlier epoch ends (exclusive) after the offset we need: that offset is in it.
      if (r.endOffset > previous) targetEpoch = r.leaderEpoch;
    }
    if (!this.current(s)) return;
    const tp = { topicId: p.topicId, topic: s.topic, partition: s.partition };
    const m = await tiered.remoteLogSegmentMetadataFor(tp, targetEpoch, previous);
    if (!m) {
      this.delay(s, `no remote segment holds offset ${previous} (epoch ${targetEpoch}) yet: cannot build the state from remote storage`);
      return;
    }
    const epochs = LeaderEpochCheckpointFile.decode((await tiered.fetchIndex(m, IndexType.LEADER_EPOCH)).toString('utf8'), `leader-epoch checkpoint of remote segment ${m.remoteLogSegmentId.id}`);
    const producerSnapshot = await tiered.fetchIndex(m, IndexType.PRODUCER_SNAPSHOT);
    if (!this.current(s)) return;
    p.log.rebuildFromRemote({ localLogStartOffset: local.offset, logStartOffset: start.offset, epochs, producerSnapshot });
    this.host.logger.info(`${p.name}: rebuilt from remote segment ${m.remoteLogSegmentId.id}; fetching from the leader's local log start ${local.offset}`);
    s.fetchOffset = p.log.logEndOffset;
  }

  /** OFFSET_OUT_OF_RANGE: compare with the leader's end and start offsets (ListOffsets as a replica). */
  private async handleOutOfRange(s: PartitionFetchState, p: Partition): Promise<void> {
    const ask = async (timestamp: bigint): Promise<bigint> => {
      const res = await this.channel.send('ListOffsets', {
        replicaId: this.host.nodeId,
        isolationLevel: 0,
        topics: [{ name: s.topic, partitions: [{ partitionIndex: s.partition, currentLeaderEpoch: s.leaderEpoch, timestamp, maxNumOffsets: 1 }] }],
        timeoutMs: 10_000,
      });
      const r = res.topics[0]?.partitions[0];
      if (!r || r.errorCode !== ErrorCode.NONE) throw new KafkaError(r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, `ListOffsets on the leader failed`);
      return r.offset;
    };
    // p.log is read after each await: a replica move (AlterReplicaLogDirs) may swap the log meanwhile.
    const leaderEnd = await ask(-1n);
    if (!this.current(s)) return;
    if (leaderEnd < p.log.logEndOffset) {
      this.host.logger.warn(`truncating ${p.name} to the leader's end offset ${leaderEnd} (ours ${p.log.logEndOffset}): out of range`);
      p.log.truncateTo(leaderEnd);
    } else {
      const leaderStart = await ask(-2n);
      if (!this.current(s)) return;
      if (p.log.logEndOffset < leaderStart) {
        this.host.logger.info(`${p.name}: our log ends at ${p.log.logEndOffset}, before the leader's log start ${leaderStart}: starting over there`);
        p.log.truncateFullyAndStartAt(leaderStart);
      } else {
        this.delay(s, 'offset out of range');
      }
    }
    s.fetchOffset = p.log.logEndOffset;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.partitions.clear();
    this.wakeUp();
    this.channel.close();
    await this.loop?.catch(() => undefined);
  }
}

export class ReplicaFetcherManager {
  private readonly fetchers = new Map<number, ReplicaFetcher>();
  /** Fault hook: delay every fetch of this broker by this many ms. */
  fetchDelayMs = 0;
  private stopped = false;

  constructor(
    private readonly host: FetcherHost,
    private readonly config: FetcherConfig,
  ) {}

  /** Kafka's MaxLag: the largest lag, in messages, of any partition this broker follows. */
  maxLag(): bigint {
    let max = 0n;
    for (const f of this.fetchers.values()) {
      const l = f.maxLag();
      if (l > max) max = l;
    }
    return max;
  }

  /** Follows `p` from its current leader at its current epoch (re-added: truncation first). */
  addPartition(p: Partition): void {
    if (this.stopped) return;
    this.removePartition(p.topic, p.partition);
    if (p.leaderId < 0 || p.isLeader) return;
    const address = this.host.endpointOf(p.leaderId);
    if (!address) {
      this.host.logger.warn(`no endpoint for broker ${p.leaderId}, the leader of ${p.name}; not fetching yet`);
      return;
    }
    let f = this.fetchers.get(p.leaderId);
    if (!f) {
      f = new ReplicaFetcher(p.leaderId, address, this.host, this.config, () => this.fetchDelayMs);
      this.fetchers.set(p.leaderId, f);
    } else {
      f.channel.retarget(address.host, address.port);
    }
    f.add(p);
  }

  removePartition(topic: string, partition: number): void {
    for (const [id, f] of this.fetchers) {
      if (!f.has(topic, partition)) continue;
      f.remove(topic, partition);
      if (f.size === 0) {
        this.fetchers.delete(id);
        void f.stop();
      }
    }
  }

  /** A broker re-registered (maybe on another address): point its fetcher there. */
  onBrokerChanged(brokerId: number): void {
    const f = this.fetchers.get(brokerId);
    const address = this.host.endpointOf(brokerId);
    if (f && address) f.channel.retarget(address.host, address.port);
  }

  isFetching(topic: string, partition: number): boolean {
    for (const f of this.fetchers.values()) if (f.has(topic, partition)) return true;
    return false;
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    const all = [...this.fetchers.values()];
    this.fetchers.clear();
    await Promise.all(all.map((f) => f.stop()));
  }
}
