/**
 * ControllerChannel: the one place where a broker of a KRaft controller quorum sends requests to the
 * active controller (Kafka's NodeToControllerChannelManager with its ControllerRequestThread, over
 * RaftControllerNodeProvider): BrokerRegistration, BrokerHeartbeat and controlled shutdown
 * (BrokerLifecycleManager), AlterPartition (replication/alter-partition-manager.ts), the forwarded
 * admin writes and AllocateProducerIds (RemoteController). The active controller is the quorum
 * leader as the broker's MetadataObserver knows it (`ControllerNodeProvider`).
 *
 * Each request is sent to the current active controller; when the answer carries NOT_CONTROLLER
 * anywhere (a standby, or a leader whose controller has not claimed yet: Kafka's check of the
 * response's error counts) or the connection fails, the request is sent again once the provider
 * names a controller (a leader change wakes the wait at once, else after a backoff doubling from
 * `retryBackoffMs` up to 1 s), until the request's timeout (`timeoutMs`, else `requestTimeoutMs`)
 * passes; then it fails with REQUEST_TIMED_OUT (a KafkaError) naming the last failure, which the
 * callers already map as "controller unreachable". Any other answer, errors included, is returned
 * as it is.
 *
 * Invariants: a request is resent only after NOT_CONTROLLER (nothing was done) or a lost connection
 * (as Kafka does: the controller may have acted, and answers a duplicate with its own error, e.g.
 * TOPIC_ALREADY_EXISTS); never after the deadline; every wait is bounded and ends on close().
 * It has the two methods of NodeChannel its callers use (`send`, `versionFor`), so the
 * single-controller path keeps its plain NodeChannel.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { ApiMessages, ApiName } from '../protocol/generated';
import type { Input } from '../protocol/primitives/input';
import { ClientError, type SendOptions } from '../client/network-client';

const MAX_BACKOFF_MS = 1000;

/** What callers of the controller use of a channel (NodeChannel and ControllerChannel have it). */
export interface ControllerRequestChannel {
  send<K extends ApiName>(api: K, body: Input<ApiMessages[K]['request']>, opts?: SendOptions & { version?: number }): Promise<ApiMessages[K]['response']>;
  versionFor(api: ApiName): Promise<number>;
}

export interface ControllerNode {
  id: number;
  host: string;
  port: number;
}

/** The active controller as the broker knows it (Kafka's ControllerNodeProvider). */
export interface ControllerNodeProvider {
  /** The active controller, or null while it is not known. */
  controller(): ControllerNode | null;
  /** Told whenever the known controller may have changed; returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** The one connection this channel retargets at the active controller (NodeChannel). */
export interface RetargetableChannel {
  retarget(host: string, port: number): void;
  send<K extends ApiName>(api: K, body: Input<ApiMessages[K]['request']>, opts?: SendOptions & { version?: number }): Promise<ApiMessages[K]['response']>;
  versionFor(api: ApiName): Promise<number>;
  close(): void;
}

export interface ControllerChannelOptions {
  provider: ControllerNodeProvider;
  channel: RetargetableChannel;
  logger: Logger;
  /** The deadline of a request sent without `timeoutMs`. */
  requestTimeoutMs: number;
  retryBackoffMs: number;
}

/** Whether any errorCode field of a response is NOT_CONTROLLER (Kafka: response.errorCounts()). */
export function carriesNotController(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object' || depth > 6 || Buffer.isBuffer(value)) return false;
  if (Array.isArray(value)) return value.some((v) => carriesNotController(v, depth + 1));
  for (const [k, v] of Object.entries(value)) {
    if (k === 'errorCode' && v === ErrorCode.NOT_CONTROLLER) return true;
    if (typeof v === 'object' && carriesNotController(v, depth + 1)) return true;
  }
  return false;
}

export class ControllerChannel implements ControllerRequestChannel {
  private closed = false;
  private readonly wakers = new Set<() => void>();
  /** Requests sent again after NOT_CONTROLLER or a lost connection (tests, logs). */
  retries = 0;

  constructor(private readonly opts: ControllerChannelOptions) {}

  async send<K extends ApiName>(api: K, body: Input<ApiMessages[K]['request']>, opts: SendOptions & { version?: number } = {}): Promise<ApiMessages[K]['response']> {
    return this.withController<ApiMessages[K]['response']>(api, opts.timeoutMs, async (remainingMs) => {
      const res = await this.opts.channel.send(api, body, { ...opts, timeoutMs: remainingMs });
      return carriesNotController(res) ? { retry: `${api} answered NOT_CONTROLLER` } : { value: res };
    });
  }

  async versionFor(api: ApiName): Promise<number> {
    return this.withController(api, undefined, async () => ({ value: await this.opts.channel.versionFor(api) }));
  }

  /** Runs `attempt` against the active controller until it gives a value or the deadline passes. */
  private async withController<T>(api: string, timeoutMs: number | undefined, attempt: (remainingMs: number) => Promise<{ value: T } | { retry: string }>): Promise<T> {
    const total = timeoutMs ?? this.opts.requestTimeoutMs;
    const deadline = Date.now() + total;
    let backoff = Math.max(1, this.opts.retryBackoffMs);
    let last = 'no active controller known';
    for (;;) {
      if (this.closed) throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, 'the controller channel is closed');
      const node = this.opts.provider.controller();
      if (node) {
        this.opts.channel.retarget(node.host, node.port);
        try {
          const r = await attempt(Math.max(1, deadline - Date.now()));
          if (!('retry' in r)) return r.value;
          last = `${r.retry} (controller ${node.id} at ${node.host}:${node.port})`;
        } catch (err) {
          // Only a lost or failed connection is retried; anything else is the caller's.
          if (!(err instanceof ClientError)) throw err;
          last = `${api} to controller ${node.id} at ${node.host}:${node.port}: ${(err as Error).message}`;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) {
        throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `no answer from the active controller within ${total} ms: ${last}`);
      }
      this.retries++;
      this.opts.logger.debug(`${last}; looking for the active controller again`);
      await this.waitForController(Math.min(backoff, left), node);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }

  /** Waits `ms`, or less if the provider names another controller than `tried`. */
  private waitForController(ms: number, tried: ControllerNode | null): Promise<void> {
    return new Promise((resolve) => {
      let unsubscribe = () => {};
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakers.add(done);
      unsubscribe = this.opts.provider.onChange(() => {
        const now = this.opts.provider.controller();
        if (now && (!tried || now.id !== tried.id || now.host !== tried.host || now.port !== tried.port)) done();
      });
    });
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.wakers]) w();
    this.opts.channel.close();
  }
}
