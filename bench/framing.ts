/**
 * Size-prefixed frame splitting for the bench's own Kafka endpoints (the null sink and the raw wire
 * client). Chunks are kept as they arrive and joined once per frame, so a 1 MB produce or fetch frame
 * arriving in 64 KB pieces costs one copy, not a quadratic series of concats.
 */
import type { Socket } from 'node:net';

export class FrameSplitter {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private need = -1; // payload size of the frame being assembled, -1 while its size is unknown

  constructor(private readonly maxFrameBytes = 256 * 1024 * 1024) {}

  /** Adds received bytes; returns the complete frames (payload only, without the size prefix). */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.bytes < 4) break;
        this.need = this.take(4).readInt32BE(0);
        if (this.need < 0 || this.need > this.maxFrameBytes) throw new Error(`bad frame size ${this.need}`);
      }
      if (this.bytes < this.need) break;
      out.push(this.take(this.need));
      this.need = -1;
    }
    return out;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (first.length >= n) {
      const b = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.bytes -= n;
      return b;
    }
    const b = Buffer.allocUnsafe(n);
    let pos = 0;
    while (pos < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - pos);
      c.copy(b, pos, 0, k);
      pos += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.bytes -= n;
    return b;
  }
}

/** Writes a response or request given as chunks (small ones joined), returning socket.write's verdict. */
export function writeChunks(socket: Socket, chunks: readonly Buffer[]): boolean {
  if (chunks.length === 1) return socket.write(chunks[0]);
  socket.cork();
  let ok = true;
  let small: Buffer[] = [];
  let smallBytes = 0;
  const flushSmall = (): void => {
    if (small.length === 0) return;
    ok = socket.write(small.length === 1 ? small[0] : Buffer.concat(small, smallBytes)) && ok;
    small = [];
    smallBytes = 0;
  };
  for (const c of chunks) {
    if (c.length >= 4096) {
      flushSmall();
      ok = socket.write(c) && ok;
    } else {
      small.push(c);
      smallBytes += c.length;
    }
  }
  flushSmall();
  socket.uncork();
  return ok;
}
