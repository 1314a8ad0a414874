/**
 * A token bucket (Kafka's TokenBucket stat, used for controller mutation quotas, KIP-599): it
 * holds up to `burst = rate * samples * window` tokens, refills at `rate` per second, and a record
 * takes tokens (it may go below zero). The quota is violated while the bucket is below zero, and
 * the throttle time is how long the refill takes to bring it back to zero: `-tokens / rate` seconds.
 * A new bucket is full.
 */
export class TokenBucket {
  private tokens: number;
  private lastUpdateMs: number;

  constructor(
    /** Tokens per second; may be changed (a quota update). */
    public rate: number,
    private readonly samples: number,
    private readonly windowMs: number,
    nowMs: number,
  ) {
    this.tokens = this.burst();
    this.lastUpdateMs = nowMs;
  }

  private burst(): number {
    return this.rate * this.samples * (this.windowMs / 1000);
  }

  private refill(nowMs: number): void {
    this.tokens = Math.min(this.burst(), this.tokens + (this.rate * Math.max(0, nowMs - this.lastUpdateMs)) / 1000);
    this.lastUpdateMs = nowMs;
  }

  /** Takes `value` tokens. */
  record(value: number, nowMs: number): void {
    this.refill(nowMs);
    this.tokens = Math.min(this.burst(), this.tokens - value);
  }

  available(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens;
  }

  /** 0 while the bucket is not below zero, else the ms until it is back at zero. */
  throttleTimeMs(nowMs: number): number {
    const t = this.available(nowMs);
    if (t >= 0) return 0;
    return this.rate > 0 ? Math.round((-t / this.rate) * 1000) : this.windowMs;
  }
}
