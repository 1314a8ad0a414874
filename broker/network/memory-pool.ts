/**
 * The broker-wide budget for request bytes being received or processed (Kafka's MemoryPool for
 * `queued.max.request.bytes`): a connection reserves a frame's size when its size prefix arrives
 * and gives it back when the request is done. A connection that cannot reserve stops reading
 * (Kafka mutes the channel under memory pressure) and is woken when bytes come back.
 *
 * Like Kafka's non-strict SimpleMemoryPool, a reservation succeeds whenever any budget is left, so
 * the total in use stays below the capacity plus one request (at most socket.request.max.bytes,
 * which the config requires to be no larger than the capacity). A capacity <= 0 is unbounded.
 *
 * Waiters are woken in arrival order; a woken waiter that still finds no budget waits again.
 */
import { Waiters } from './waiters';

export class MemoryPool {
  private used = 0;
  private readonly waiters = new Waiters();

  constructor(readonly capacity: number) {}

  get isBounded(): boolean {
    return this.capacity > 0;
  }

  get usedBytes(): number {
    return this.used;
  }

  tryReserve(bytes: number): boolean {
    if (this.isBounded && this.used >= this.capacity) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used -= bytes;
    if (this.used < 0) this.used = 0;
    if (this.isBounded && this.used >= this.capacity) return;
    this.waiters.wakeAll();
  }

  /** Calls `fn` once when budget may be available again. */
  whenAvailable(fn: () => void): void {
    this.waiters.add(fn);
  }

  /** Drops a waiter that no longer cares (a closed connection). */
  forget(fn: () => void): void {
    this.waiters.remove(fn);
  }
}
