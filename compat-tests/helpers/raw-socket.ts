/**
 * A bare TCP connection for tests that must send bytes no well-behaved client would (garbage,
 * truncated frames, unsupported versions) and watch exactly what comes back: response frames in
 * arrival order, or the broker closing the connection. Every wait is bounded.
 */
import * as net from 'node:net';
import { apiByKey } from '../../protocol/generated';
import { writeRequestHeader } from '../../protocol/header';
import { Writer } from '../../protocol/primitives/writer';

const DEFAULT_WAIT_MS = 5_000;

/** A size-prefixed request frame: header (for the key/version given) + body (encoded or raw). */
export function requestFrame(apiKey: number, apiVersion: number, correlationId: number, body: unknown, clientId: string | null = 'raw'): Buffer {
  const w = new Writer();
  const size = w.reserveInt32();
  const api = apiByKey(apiKey);
  writeRequestHeader(w, apiKey, apiVersion, correlationId, clientId, api ? undefined : 1);
  if (Buffer.isBuffer(body)) w.raw(body);
  else api!.writeRequest(w, apiVersion, body as never);
  w.patchInt32(size, w.length - 4);
  return w.toBuffer();
}

/** `payload` with a 4-byte size prefix (which may lie, when `declaredSize` is given). */
export function sizePrefixed(payload: Buffer, declaredSize = payload.length): Buffer {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(declaredSize, 0);
  payload.copy(b, 4);
  return b;
}

export class RawSocket {
  private buf = Buffer.alloc(0);
  private frames: Buffer[] = [];
  private waiters: (() => void)[] = [];
  private isClosed = false;
  private readonly closedPromise: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readInt32BE(0)) {
        const n = this.buf.readInt32BE(0);
        this.frames.push(this.buf.subarray(4, 4 + n));
        this.buf = this.buf.subarray(4 + n);
      }
      this.wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.isClosed = true;
      this.wake();
    });
  }

  static connect(host: string, port: number, timeoutMs = DEFAULT_WAIT_MS): Promise<RawSocket> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`connect to ${host}:${port} timed out`));
      }, timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(new RawSocket(s));
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Frames received and not yet taken. */
  get bufferedFrames(): number {
    return this.frames.length;
  }

  /** Bytes received that do not (yet) form a whole frame. */
  get partialBytes(): number {
    return this.buf.length;
  }

  write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (err) => (err ? reject(err) : resolve())));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (cond()) {
          clearTimeout(timer);
          resolve();
        } else {
          this.waiters.push(check);
        }
      };
      this.waiters.push(check);
    });
  }

  /** The next response frame (correlation id first); fails if the connection closes first. */
  async nextFrame(timeoutMs = DEFAULT_WAIT_MS): Promise<Buffer> {
    await this.waitFor(() => this.frames.length > 0 || this.isClosed, timeoutMs, 'a response frame');
    const f = this.frames.shift();
    if (!f) throw new Error('the broker closed the connection instead of answering');
    return f;
  }

  /** Resolves once the broker has closed the connection; fails if it has not within the bound. */
  async waitForClose(timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    await this.waitFor(() => this.isClosed, timeoutMs, 'the broker to close the connection');
    await this.closedPromise;
  }

  destroy(): void {
    this.socket.destroy();
  }
}
