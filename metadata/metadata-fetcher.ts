/**
 * MetadataFetcher: how a broker of a multi-node cluster learns metadata. It reads the controller's
 * metadata log (`__cluster_metadata` partition 0) with ordinary Fetch requests, from the offset
 * after the last record applied, and hands every batch, in order, to `apply`. This is what a
 * KRaft broker does as an observer of the metadata quorum, without the Raft fields: there is one
 * controller, and everything in its log is committed. (A broker of a controller quorum uses
 * MetadataObserver instead, metadata-observer.ts.)
 *
 * A fetch waits on the controller for up to `maxWaitMs` when there is nothing new (long poll), so
 * changes arrive within a round trip of their commit and an idle cluster costs one request per
 * `maxWaitMs`. Errors back off (bounded, doubling up to 1 s) and retry; nothing busy-waits.
 *
 * `awaitCaughtUp()` fetches at once on a second channel (the long poll holds the first) until
 * everything up to the answer's high watermark is applied. A fetch sent after a controller write
 * returned sees that write, so a CreateTopics answered by this broker is visible to its next
 * Metadata response. Two fetches racing cannot apply a batch twice: an answer is only applied if
 * the log end it was fetched from is still the broker's.
 */
import { ErrorCode, errorName } from '../protocol/errors';
import type { Logger } from '../common/logger';
import { decodeMetadataBatches, METADATA_TOPIC } from './metadata-log-store';
import type { MetadataBatch } from './metadata-log';
import { METADATA_TOPIC_ID } from '../protocol/primitives/uuid';
import type { NodeChannel } from '../client/node-channel';

const MAX_BACKOFF_MS = 1000;

export interface MetadataFetcherOptions {
  /** The long-poll channel (owned: closed by stop()). */
  channel: NodeChannel;
  /** A channel for awaitCaughtUp's immediate fetches (not owned). */
  syncChannel: NodeChannel;
  nodeId: number;
  logger: Logger;
  /** Offset of the last record applied (-1: none). */
  lastAppliedOffset: () => bigint;
  /** Applies batches in order (synchronously). */
  apply: (batches: MetadataBatch[]) => void;
  /** Long-poll wait of each fetch. */
  maxWaitMs: number;
  maxBytes?: number;
}

export class MetadataFetcher {
  private running = false;
  private stopped = false;
  private backoffTimer: NodeJS.Timeout | null = null;
  private wakeBackoff: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  /** The controller's log end at the last answer. */
  highWatermark = -1n;

  constructor(private readonly opts: MetadataFetcherOptions) {}

  /**
   * Fetches (without waiting on the controller) until everything the controller had committed when
   * the catch-up started is applied. Throws if the controller cannot be reached within `timeoutMs`.
   */
  async catchUp(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let backoff = 50;
    for (;;) {
      try {
        const hw = await this.fetchOnce(0, this.opts.channel);
        if (this.opts.lastAppliedOffset() + 1n >= hw) return;
        backoff = 50;
      } catch (err) {
        if (Date.now() + backoff > deadline) throw err;
        this.opts.logger.debug('metadata catch-up fetch failed; retrying', { err: (err as Error).message });
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  }

  /** Starts the long-poll loop. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let backoff = 50;
    while (!this.stopped) {
      try {
        await this.fetchOnce(this.opts.maxWaitMs, this.opts.channel);
        backoff = 50;
      } catch (err) {
        if (this.stopped) break;
        this.opts.logger.warn(`fetching the metadata log from the controller failed: ${(err as Error).message}; retrying in ${backoff} ms`);
        await new Promise<void>((resolve) => {
          this.wakeBackoff = resolve;
          this.backoffTimer = setTimeout(resolve, backoff);
          this.backoffTimer.unref();
        });
        this.backoffTimer = null;
        this.wakeBackoff = null;
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  }

  /** One Fetch; applies what it returns; resolves with the controller's log end. */
  private async fetchOnce(maxWaitMs: number, channel: NodeChannel): Promise<bigint> {
    const fetchOffset = this.opts.lastAppliedOffset() + 1n;
    const version = await channel.versionFor('Fetch');
    const res = await channel.send(
      'Fetch',
      {
        replicaId: version < 15 ? this.opts.nodeId : undefined,
        replicaState: version >= 15 ? { replicaId: this.opts.nodeId, replicaEpoch: -1n } : undefined,
        maxWaitMs,
        minBytes: 1,
        maxBytes: this.opts.maxBytes ?? 8 << 20,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic: version < 13 ? METADATA_TOPIC : undefined,
            topicId: version >= 13 ? METADATA_TOPIC_ID : undefined,
            partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: this.opts.maxBytes ?? 8 << 20 }],
          },
        ],
      },
      { version },
    );
    if (this.stopped) return this.highWatermark;
    if (res.errorCode !== ErrorCode.NONE) throw new Error(`metadata fetch failed: ${errorName(res.errorCode)}`);
    const p = res.responses[0]?.partitions[0];
    if (!p) throw new Error('metadata fetch: empty response');
    if (p.errorCode !== ErrorCode.NONE) throw new Error(`metadata fetch failed: ${errorName(p.errorCode)} at offset ${fetchOffset}`);
    if (fetchOffset !== this.opts.lastAppliedOffset() + 1n) return p.highWatermark; // raced with another fetch
    if (p.records && p.records.length > 0) {
      const batches = decodeMetadataBatches(p.records).filter((b) => b.lastOffset >= fetchOffset);
      if (batches.length > 0) this.opts.apply(batches);
    }
    if (p.highWatermark > this.highWatermark) this.highWatermark = p.highWatermark;
    return p.highWatermark;
  }

  /** See the class comment. Throws if the controller cannot be reached within `timeoutMs`. */
  async awaitCaughtUp(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stopped) {
      try {
        const hw = await this.fetchOnce(0, this.opts.syncChannel);
        if (this.opts.lastAppliedOffset() + 1n >= hw) return;
      } catch (err) {
        if (Date.now() + 50 > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50).unref());
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.wakeBackoff?.();
    this.opts.channel.close();
    await this.loop?.catch(() => undefined);
  }
}
