/**
 * KIP-227 incremental fetch sessions. A session remembers the partitions a client fetches and,
 * for each, what the last response told it (HWM, LSO, log start offset), so later requests list
 * only the partitions whose fetch position changed and later responses only the partitions with
 * something new. Sessions live in a bounded cache (max.incremental.fetch.session.cache.slots).
 *
 * Request metadata rules (Kafka's FetchMetadata): epoch 0 = full request that opens a session,
 * epoch -1 = full request without a session (closing the named one, if any); any other epoch is an
 * incremental request for `sessionId` at exactly that epoch: an unknown session gives
 * FETCH_SESSION_ID_NOT_FOUND, a wrong epoch INVALID_FETCH_SESSION_EPOCH. A session's expected
 * epoch advances by one per served request, wrapping after Int32 max to 1. Session ids are drawn
 * at random from 1..2^31-2 (never 0, never one in use), so they cannot be guessed.
 */
import { randomInt } from 'node:crypto';
import { ErrorCode } from '../protocol/errors';
import { topicPartitionKey } from '../common/topic-partition';

import { FINAL_EPOCH, INITIAL_EPOCH, INVALID_SESSION_ID, nextEpoch } from '../protocol/fetch-metadata';

export { FINAL_EPOCH, INITIAL_EPOCH, INVALID_SESSION_ID, nextEpoch };

export interface SessionPartition {
  topic: string;
  topicId: string;
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
  lastFetchedEpoch: number;
  // What the last response said about this partition; -2 = never sent.
  sentHighWatermark: bigint;
  sentLastStableOffset: bigint;
  sentLogStartOffset: bigint;
}

export type PartitionFetchSpec = Omit<SessionPartition, 'sentHighWatermark' | 'sentLastStableOffset' | 'sentLogStartOffset'>;

export interface FetchSession {
  id: number;
  epoch: number;
  /** Insertion-ordered, keyed by topicPartitionKey. */
  partitions: Map<string, SessionPartition>;
  lastUsedMs: number;
}

export type FetchContext =
  | { kind: 'error'; errorCode: number }
  /** A full request (with or without a new session): answer every partition in it. */
  | { kind: 'full'; session: FetchSession | null; partitions: PartitionFetchSpec[] }
  /** An incremental request: fetch the whole session, answer only what changed. */
  | { kind: 'incremental'; session: FetchSession; partitions: SessionPartition[] };

export interface PartitionResponseState {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  recordsSize: number;
}


export class FetchSessionCache {
  private sessions = new Map<number, FetchSession>();

  constructor(
    private readonly maxSessions: number,
    private readonly evictAfterMs = 120_000,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  newContext(
    sessionId: number,
    epoch: number,
    partitions: PartitionFetchSpec[],
    forgotten: { topic: string; partition: number }[],
    nowMs: number,
  ): FetchContext {
    if (epoch === INITIAL_EPOCH || epoch === FINAL_EPOCH) {
      if (sessionId !== INVALID_SESSION_ID) this.sessions.delete(sessionId);
      if (epoch === FINAL_EPOCH) return { kind: 'full', session: null, partitions };
      return { kind: 'full', session: this.maybeCreate(partitions, nowMs), partitions };
    }
    const session = this.sessions.get(sessionId);
    if (!session) return { kind: 'error', errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
    if (session.epoch !== epoch) return { kind: 'error', errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
    for (const f of forgotten) session.partitions.delete(topicPartitionKey(f.topic, f.partition));
    for (const p of partitions) {
      const k = topicPartitionKey(p.topic, p.partition);
      const existing = session.partitions.get(k);
      if (existing) Object.assign(existing, p);
      else session.partitions.set(k, { ...p, sentHighWatermark: -2n, sentLastStableOffset: -2n, sentLogStartOffset: -2n });
    }
    session.lastUsedMs = nowMs;
    session.epoch = nextEpoch(session.epoch);
    return { kind: 'incremental', session, partitions: [...session.partitions.values()] };
  }

  private maybeCreate(partitions: PartitionFetchSpec[], nowMs: number): FetchSession | null {
    if (this.maxSessions <= 0) return null;
    if (this.sessions.size >= this.maxSessions) {
      // Evict the least recently used session if it has been idle long enough.
      let oldest: FetchSession | undefined;
      for (const s of this.sessions.values()) if (!oldest || s.lastUsedMs < oldest.lastUsedMs) oldest = s;
      if (!oldest || nowMs - oldest.lastUsedMs < this.evictAfterMs) return null;
      this.sessions.delete(oldest.id);
    }
    // A random id (Kafka's newSessionId), so one client cannot guess and drive another's session.
    let id = randomInt(1, 0x7fffffff);
    while (this.sessions.has(id)) id = randomInt(1, 0x7fffffff);
    const session: FetchSession = { id, epoch: nextEpoch(INITIAL_EPOCH), partitions: new Map(), lastUsedMs: nowMs };
    for (const p of partitions) {
      session.partitions.set(topicPartitionKey(p.topic, p.partition), {
        ...p,
        sentHighWatermark: -2n,
        sentLastStableOffset: -2n,
        sentLogStartOffset: -2n,
      });
    }
    this.sessions.set(id, session);
    return session;
  }

  /**
   * Records what a response said about a session partition and tells whether an incremental
   * response must include it: it has records or an error, or its HWM, LSO or log start offset
   * changed since the client last heard.
   */
  static noteResponse(sp: SessionPartition, r: PartitionResponseState, incremental: boolean): boolean {
    const changed =
      r.recordsSize > 0 ||
      r.errorCode !== ErrorCode.NONE ||
      r.highWatermark !== sp.sentHighWatermark ||
      r.lastStableOffset !== sp.sentLastStableOffset ||
      r.logStartOffset !== sp.sentLogStartOffset;
    sp.sentHighWatermark = r.highWatermark;
    sp.sentLastStableOffset = r.lastStableOffset;
    sp.sentLogStartOffset = r.logStartOffset;
    return !incremental || changed;
  }

  sessionPartition(session: FetchSession, topic: string, partition: number): SessionPartition | undefined {
    return session.partitions.get(topicPartitionKey(topic, partition));
  }

  remove(sessionId: number): void {
    this.sessions.delete(sessionId);
  }

  /** Drops partitions of deleted topics from every session. */
  forgetTopic(topic: string): void {
    for (const s of this.sessions.values()) {
      for (const [k, p] of s.partitions) if (p.topic === topic) s.partitions.delete(k);
    }
  }
}
