/**
 * What a handler knows about the request it serves besides its body: the header fields and the
 * connection it came in on.
 */
import type { ConnectionInfo } from './connection';

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
}
