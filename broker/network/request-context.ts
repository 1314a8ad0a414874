/**
 * What a handler knows about the request it serves besides its body: the header fields and the
 * connection it came in on.
 */
import type { ConnectionInfo } from './connection';
import type { KafkaPrincipal } from '../../common/kafka-principal';

export interface RequestContext {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly connection: ConnectionInfo;
  /** Milliseconds since epoch when the full frame arrived. */
  readonly receivedAtMs: number;
  /** Size of the request frame (header + body) in bytes. */
  readonly requestBytes: number;
  /**
   * Runs `fn` once the response has been handed to the socket and flushed (or the connection is
   * gone, or there is no response): how a handler returns pooled buffers its response references.
   */
  onResponseSent(fn: () => void): void;
  /**
   * The request is about to wait for an event on purpose (a long-poll fetch, acks=-1 replication, a
   * rebalance, replicas reaching a DeleteRecords offset): it stops counting against
   * `queued.max.requests`. Idempotent; harmless if the wait turns out to be short.
   */
  parked(): void;
  /** Who sent it (Kafka's `User:ANONYMOUS` on a listener without authentication). */
  readonly principal: KafkaPrincipal;
  /**
   * A byte-rate quota (produce, fetch) wants the connection muted for `ms` after this response; the
   * response's throttle_time_ms is the largest of these and the request-time throttle.
   */
  throttle(ms: number): void;
  /**
   * Records the time spent on this request so far against its client's request_percentage quota
   * (once; later calls return the same) and returns the throttle time, 0 within the quota, when
   * exempt or without quotas. The dispatcher calls it for every answered request; Fetch and Produce
   * call it earlier, where Kafka decides on an empty (throttled) fetch response.
   */
  requestThrottleMs(): number;
}
