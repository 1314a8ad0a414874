/**
 * Reusable buffers for consumer fetch reads. Without them every fetch allocates a fresh ~1 MiB
 * buffer that lives only until its response is written, and the garbage collector spends a large
 * share of the fetch path reclaiming them (measured by the benchmark's profiles). A read that fits
 * takes a pooled buffer; whoever sends the bytes returns it with the read's `release()` once the
 * socket no longer needs them. A buffer that is never released is simply garbage collected, so a
 * missed release costs reuse, never correctness; a release before the bytes are written would be a
 * bug, which is why only the fetch path opts in.
 */
export class ReadBufferPool {
  private readonly free: Buffer[] = [];
  private outstanding = new Set<Buffer>();

  constructor(
    readonly bufferSize = 1 << 20,
    private readonly maxFree = 32,
  ) {}

  /** A buffer of `bufferSize` bytes for a read of `size` bytes, or null when the read is larger. */
  acquire(size: number): Buffer | null {
    if (size > this.bufferSize) return null;
    const buf = this.free.pop() ?? Buffer.allocUnsafeSlow(this.bufferSize);
    this.outstanding.add(buf);
    return buf;
  }

  /** Returns a buffer from `acquire`; releasing one twice is ignored. */
  release(buf: Buffer): void {
    if (!this.outstanding.delete(buf)) return;
    if (this.free.length < this.maxFree) this.free.push(buf);
  }

  get inUse(): number {
    return this.outstanding.size;
  }

  get pooled(): number {
    return this.free.length;
  }
}
