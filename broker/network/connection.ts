/**
 * One client TCP connection. Owns the byte stream's framing (int32 size + payload) and Kafka's
 * channel muting: a connection reads one request, stops reading while that request is processed
 * (or, for acks=0 produce, completed without an answer), and reads the next only after the answer
 * is handed to the socket. Responses therefore leave in request order, a slow request (a long-poll
 * fetch) holds back its own connection only, and a client that keeps writing while a request is in
 * flight is held back by TCP, not buffered by the broker.
 *
 * Reading also stops while: the socket's write buffer is full; the broker-wide request-bytes budget
 * (MemoryPool, `queued.max.request.bytes`) cannot take the next frame; every request slot
 * (`queued.max.requests`) is taken; the client is throttled by a quota (KIP-219: the response goes
 * out at once and the connection is muted for the throttle time).
 *
 * Invariants: the memory one connection pins is at most one frame being received (<=
 * socket.request.max.bytes), the request being processed, and what one socket read returned beyond
 * it. A frame whose size is negative or above socket.request.max.bytes, or a request the processor
 * cannot decode, closes this connection only, with a logged reason; every byte and slot reserved is
 * given back exactly once, whichever way the connection ends. While a SASL connection
 * authenticates, the processor's frameLimit (sasl.server.max.receive.size) replaces
 * socket.request.max.bytes, and an answer may be the last thing written before the connection
 * closes (closeAfterSend: a failed authentication).
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../common/logger';
import { ANONYMOUS, type KafkaPrincipal } from '../../common/kafka-principal';
import type { MemoryPool } from './memory-pool';
import type { RequestSlots } from './request-slots';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  readonly listenerName: string;
  /** The listener's security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  readonly securityProtocol: string;
  /** Who the connection is: ANONYMOUS until TLS client authentication or SASL says otherwise. */
  principal: KafkaPrincipal;
  /** Per-connection state that handlers may keep (e.g. the SASL authenticator's progress). */
  readonly attributes: Map<string, unknown>;
  /** Runs `fn` once the connection is closed (absent on the in-memory connections of some tests). */
  onClose?(fn: () => void): void;
}

export type ProcessResult =
  /**
   * `onSent` runs once the chunks are flushed to the socket (or will never be). `throttleMs` mutes
   * the connection after the response is sent (KIP-219; Kafka sends every response at once and
   * mutes, whatever the version: a client that does not throttle itself is held back by the mute).
   */
  | {
      kind: 'respond';
      chunks: Buffer[];
      onSent?: () => void;
      throttleMs?: number;
      /** SASL authentication failure (KIP-306): close the connection, with this reason, once the answer is written. */
      closeAfterSend?: string;
    }
  | { kind: 'noResponse'; throttleMs?: number }
  | { kind: 'close'; reason: string };

/** What a request in progress can tell its connection. */
export interface InFlightRequest {
  /** The request now waits for an event on purpose; it gives back its `queued.max.requests` slot. */
  parked(): void;
}

export interface FrameProcessor {
  process(frame: Buffer, conn: ConnectionInfo, request: InFlightRequest): Promise<ProcessResult>;
  /**
   * SASL (broker/security/sasl/authenticator.ts): while a connection authenticates, its frames are
   * bounded by `sasl.server.max.receive.size` instead of socket.request.max.bytes, and a frame over
   * it is the processor's to answer (an authentication failure, closed after the failure delay).
   */
  frameLimit?(conn: ConnectionInfo): { maxBytes: number; exceeded(size: number): Promise<ProcessResult> } | undefined;
}

export interface ConnectionOptions {
  maxRequestBytes: number;
  idleTimeoutMs: number;
  /** Broker-wide request-bytes budget (`queued.max.request.bytes`). */
  pool: MemoryPool;
  /** Broker-wide request slots (`queued.max.requests`). */
  slots: RequestSlots;
}

export class Connection implements ConnectionInfo {
  readonly attributes = new Map<string, unknown>();
  principal: KafkaPrincipal = ANONYMOUS;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  /** When bytes last moved in either direction (for choosing a connection to close). */
  lastActiveMs = Date.now();
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Size of the frame being received, reserved in the pool; -1 between frames. */
  private frameSize = -1;
  /** Pool bytes held by this connection: the frame being received or processed. */
  private reservedBytes = 0;
  private busy = false;
  private holdsSlot = false;
  private mutedUntil = 0;
  private muteTimer: NodeJS.Timeout | null = null;
  private waiting: 'memory' | 'slot' | null = null;
  private closed = false;
  private closedHandlers: (() => void)[] = [];
  private readonly wake = (): void => {
    this.waiting = null;
    this.advance();
  };

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    readonly listenerName: string,
    readonly securityProtocol: string,
    private readonly processor: FrameProcessor,
    private readonly opts: ConnectionOptions,
    private readonly log: Logger,
  ) {
    this.remoteAddress = normalizeAddress(socket.remoteAddress ?? '?');
    this.remotePort = socket.remotePort ?? 0;
    this.localPort = socket.localPort ?? 0;
    socket.setNoDelay(true);
    if (opts.idleTimeoutMs > 0) {
      socket.setTimeout(opts.idleTimeoutMs, () => this.close(`idle for more than ${opts.idleTimeoutMs} ms`));
    }
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.log.debug('socket error', { conn: this.describe(), err: err.message }));
    socket.on('close', () => this.onClosed());
    socket.on('drain', () => this.advance());
    socket.resume();
  }

  describe(): string {
    return `${this.id}:${this.remoteAddress}:${this.remotePort}`;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** True while a request of this connection is being processed. */
  get hasRequestInFlight(): boolean {
    return this.busy;
  }

  onClose(fn: () => void): void {
    this.closedHandlers.push(fn);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastActiveMs = Date.now();
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.advance();
  }

  /**
   * Moves the connection forward as far as it can: reads the next frame's size, reserves its bytes,
   * starts it once complete; then decides whether the socket should be read.
   */
  private advance(): void {
    if (this.closed) return;
    if (!this.busy && this.waiting === null && !this.isMuted() && !this.socket.writableNeedDrain) {
      if (this.frameSize < 0 && this.pendingBytes >= 4) {
        const size = this.peekInt32();
        const saslLimit = this.processor.frameLimit?.(this);
        if (saslLimit !== undefined && (size < 0 || size > saslLimit.maxBytes)) {
          // SASL: an oversized frame before authentication completes; nothing more is read.
          this.busy = true;
          saslLimit.exceeded(size).then(
            (res) => this.finish(res),
            () => this.finish({ kind: 'close', reason: `invalid frame size ${size} during SASL authentication` }),
          );
          this.updateReading();
          return;
        }
        if (saslLimit === undefined && (size < 0 || size > this.opts.maxRequestBytes)) {
          this.close(
            size < 0
              ? `invalid frame size ${size}`
              : `frame of ${size} bytes is larger than socket.request.max.bytes (${this.opts.maxRequestBytes})`,
          );
          return;
        }
        if (!this.opts.pool.tryReserve(size)) {
          this.waitFor('memory');
        } else {
          this.reservedBytes = size;
          this.frameSize = size;
          this.take(4);
        }
      }
      if (this.frameSize >= 0 && this.pendingBytes >= this.frameSize && this.waiting === null) {
        if (!this.opts.slots.tryAcquire()) {
          this.waitFor('slot');
        } else {
          this.holdsSlot = true;
          const frame = this.take(this.frameSize);
          this.frameSize = -1;
          this.start(frame);
        }
      }
    }
    this.updateReading();
  }

  private waitFor(what: 'memory' | 'slot'): void {
    this.waiting = what;
    if (what === 'memory') this.opts.pool.whenAvailable(this.wake);
    else this.opts.slots.whenAvailable(this.wake);
  }

  /** Reads only when the next bytes could be used now. */
  private updateReading(): void {
    if (this.closed) return;
    const read = !this.busy && this.waiting === null && !this.isMuted() && !this.socket.writableNeedDrain;
    if (read) {
      if (this.socket.isPaused()) this.socket.resume();
    } else if (!this.socket.isPaused()) {
      this.socket.pause();
    }
  }

  private isMuted(): boolean {
    return this.mutedUntil > 0 && Date.now() < this.mutedUntil;
  }

  private start(frame: Buffer): void {
    this.busy = true;
    const request: InFlightRequest = { parked: () => this.releaseSlot() };
    this.processor.process(frame, this, request).then(
      (res) => this.finish(res),
      (err: unknown) => {
        this.log.error('request processing failed; closing the connection', { conn: this.describe(), err });
        this.finish({ kind: 'close', reason: 'internal error' });
      },
    );
  }

  private finish(res: ProcessResult): void {
    this.releaseSlot();
    this.releaseBytes();
    if (res.kind === 'respond' && res.closeAfterSend !== undefined && !this.closed) {
      // SASL authentication failure: the answer is written, then the connection closes; it stays
      // busy meanwhile, so nothing more is read.
      const reason = res.closeAfterSend;
      this.write(res.chunks, () => {
        res.onSent?.();
        this.close(reason);
      });
      this.updateReading();
      return;
    }
    this.busy = false;
    if (this.closed) {
      if (res.kind === 'respond') res.onSent?.();
      return;
    }
    if (res.kind === 'close') {
      this.close(res.reason);
      return;
    }
    const throttleMs = res.throttleMs ?? 0;
    if (res.kind === 'respond') this.write(res.chunks, res.onSent);
    if (throttleMs > 0) this.mute(throttleMs);
    this.advance();
  }

  /** Stops reading for `ms`, then carries on. */
  private mute(ms: number): void {
    this.mutedUntil = Date.now() + ms;
    if (this.muteTimer) clearTimeout(this.muteTimer);
    this.updateReading();
    this.muteTimer = setTimeout(() => {
      this.muteTimer = null;
      this.mutedUntil = 0;
      this.advance();
    }, ms);
  }

  private releaseSlot(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    this.opts.slots.release();
  }

  private releaseBytes(): void {
    if (this.reservedBytes === 0) return;
    const n = this.reservedBytes;
    this.reservedBytes = 0;
    this.opts.pool.release(n);
  }

  private peekInt32(): number {
    const first = this.pending[0];
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.concat(this.pending, Math.min(this.pendingBytes, 8));
    return head.readInt32BE(0);
  }

  /** Removes n bytes from the front of the pending chunks; copies only if the bytes span chunks. */
  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const first = this.pending[0];
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.pending.shift();
      else this.pending[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.pending[0];
        const m = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, m);
        filled += m;
        if (m === c.length) this.pending.shift();
        else this.pending[0] = c.subarray(m);
      }
    }
    this.pendingBytes -= n;
    return out;
  }

  /** Writes the chunks; `onSent` runs when the last one is flushed or the write fails (socket gone). */
  private write(chunks: Buffer[], onSent?: () => void): void {
    this.lastActiveMs = Date.now();
    const done = onSent ? () => onSent() : undefined;
    if (chunks.length === 1) {
      this.socket.write(chunks[0], done);
      return;
    }
    this.socket.cork();
    for (let i = 0; i < chunks.length; i++) this.socket.write(chunks[i], i === chunks.length - 1 ? done : undefined);
    this.socket.uncork();
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.log.info('closing connection', { conn: this.describe(), reason });
    this.cleanUp();
    this.socket.destroy();
  }

  /** Gives back everything this connection holds in broker-wide budgets; idempotent. */
  private cleanUp(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.frameSize = -1;
    if (this.muteTimer) clearTimeout(this.muteTimer);
    this.muteTimer = null;
    if (this.waiting === 'memory') this.opts.pool.forget(this.wake);
    if (this.waiting === 'slot') this.opts.slots.forget(this.wake);
    this.waiting = null;
    // A request still being processed gives its slot and bytes back when it finishes.
    if (!this.busy) {
      this.releaseBytes();
      this.releaseSlot();
    }
  }

  private onClosed(): void {
    this.closed = true;
    this.cleanUp();
    for (const fn of this.closedHandlers.splice(0)) {
      try {
        fn();
      } catch (err) {
        this.log.error('connection close handler failed', { conn: this.describe(), err });
      }
    }
  }
}

/** IPv4-mapped IPv6 addresses ("::ffff:10.0.0.1") as the IPv4 address, as Kafka's InetAddress shows them. */
export function normalizeAddress(a: string): string {
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}
