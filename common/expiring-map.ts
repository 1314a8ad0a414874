/**
 * A map whose entries are dropped after `idleMs` without use (Kafka's sensor expiry for per-client
 * quota state). Expiry runs at most once per `idleMs`, on access, so a map nobody uses costs nothing.
 */
import type { Time } from './time';

export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; lastUsedMs: number }>();
  private lastExpiryMs = 0;

  constructor(
    private readonly time: Time,
    private readonly idleMs: number,
  ) {}

  /** The entry for `key`, created with `create` if absent; marks it used. */
  getOrCreate(key: K, create: (nowMs: number) => V): V {
    const now = this.time.milliseconds();
    if (now - this.lastExpiryMs >= this.idleMs) this.expire(now);
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { value: create(now), lastUsedMs: now }));
    e.lastUsedMs = now;
    return e.value;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live entries, without marking them used (metrics read them). */
  *values(): IterableIterator<[K, V]> {
    for (const [k, e] of this.entries) yield [k, e.value];
  }

  expire(nowMs = this.time.milliseconds()): void {
    this.lastExpiryMs = nowMs;
    for (const [k, e] of this.entries) if (nowMs - e.lastUsedMs >= this.idleMs) this.entries.delete(k);
  }
}
