/**
 * One client TCP connection. Owns the byte stream's framing (int32 size + payload) and the
 * "one request in flight" rule Kafka applies per connection: the next frame is processed only once
 * the previous request has been answered (or, for acks=0 produce, completed without an answer),
 * so responses always leave in request order and a slow request (a long-poll fetch) holds back the
 * rest of its connection only, exactly as Kafka's channel muting does. Reading pauses while the
 * socket's write buffer is full, which bounds the memory one client can pin.
 *
 * Invariants: a frame whose size is negative or above socket.request.max.bytes, or a request the
 * processor cannot decode, closes this connection only, with a logged reason; nothing else in the
 * broker is affected.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../common/logger';

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  readonly listenerName: string;
  /** Per-connection state a handler may keep across requests (no handler keeps any today). */
  readonly attributes: Map<string, unknown>;
}

export type ProcessResult =
  /** `onSent` runs once the chunks are flushed to the socket (or will never be). */
  | { kind: 'respond'; chunks: Buffer[]; onSent?: () => void }
  | { kind: 'noResponse' }
  | { kind: 'close'; reason: string };

export interface FrameProcessor {
  process(frame: Buffer, conn: ConnectionInfo): Promise<ProcessResult>;
}

export interface ConnectionOptions {
  maxRequestBytes: number;
  idleTimeoutMs: number;
}

export class Connection implements ConnectionInfo {
  readonly attributes = new Map<string, unknown>();
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localPort: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private frames: Buffer[] = [];
  private busy = false;
  private closed = false;
  private closedHandlers: (() => void)[] = [];

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    readonly listenerName: string,
    private readonly processor: FrameProcessor,
    private readonly opts: ConnectionOptions,
    private readonly log: Logger,
  ) {
    this.remoteAddress = socket.remoteAddress ?? '?';
    this.remotePort = socket.remotePort ?? 0;
    this.localPort = socket.localPort ?? 0;
    socket.setNoDelay(true);
    if (opts.idleTimeoutMs > 0) {
      socket.setTimeout(opts.idleTimeoutMs, () => this.close(`idle for more than ${opts.idleTimeoutMs} ms`));
    }
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', (err) => this.log.debug('socket error', { conn: this.describe(), err: err.message }));
    socket.on('close', () => this.onClosed());
    socket.on('drain', () => this.pump());
  }

  describe(): string {
    return `${this.id}:${this.remoteAddress}:${this.remotePort}`;
  }

  onClose(fn: () => void): void {
    this.closedHandlers.push(fn);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.extractFrames();
    this.pump();
  }

  private extractFrames(): void {
    while (this.pendingBytes >= 4) {
      const size = this.peekInt32();
      if (size < 0 || size > this.opts.maxRequestBytes) {
        this.close(
          size < 0
            ? `invalid frame size ${size}`
            : `frame of ${size} bytes is larger than socket.request.max.bytes (${this.opts.maxRequestBytes})`,
        );
        return;
      }
      if (this.pendingBytes < 4 + size) return;
      this.frames.push(this.take(4 + size).subarray(4));
    }
  }

  private peekInt32(): number {
    const first = this.pending[0];
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.concat(this.pending, Math.min(this.pendingBytes, 8));
    return head.readInt32BE(0);
  }

  /** Removes n bytes from the front of the pending chunks; copies only if the bytes span chunks. */
  private take(n: number): Buffer {
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

  /** Processes queued frames one at a time while the socket can take more output. */
  private pump(): void {
    if (this.busy || this.closed) return;
    if (this.frames.length === 0) {
      if (this.socket.isPaused()) this.socket.resume();
      return;
    }
    if (this.socket.writableNeedDrain) {
      this.socket.pause();
      return;
    }
    const frame = this.frames.shift()!;
    this.busy = true;
    this.processor.process(frame, this).then(
      (res) => {
        this.busy = false;
        if (this.closed) {
          if (res.kind === 'respond') res.onSent?.();
          return;
        }
        if (res.kind === 'close') {
          this.close(res.reason);
          return;
        }
        if (res.kind === 'respond') this.write(res.chunks, res.onSent);
        this.pump();
      },
      (err: unknown) => {
        this.busy = false;
        this.log.error('request processing failed; closing the connection', { conn: this.describe(), err });
        this.close('internal error');
      },
    );
  }

  /** Writes the chunks; `onSent` runs when the last one is flushed or the write fails (socket gone). */
  private write(chunks: Buffer[], onSent?: () => void): void {
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
    this.frames = [];
    this.pending = [];
    this.pendingBytes = 0;
    this.socket.destroy();
  }

  private onClosed(): void {
    this.closed = true;
    for (const fn of this.closedHandlers.splice(0)) {
      try {
        fn();
      } catch (err) {
        this.log.error('connection close handler failed', { conn: this.describe(), err });
      }
    }
  }
}
