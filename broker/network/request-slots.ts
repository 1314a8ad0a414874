/**
 * The broker-wide bound on requests being served (`queued.max.requests`). krill has no request
 * threads: a request's handler starts as soon as it is read, so "queued" means read and not yet
 * answered. A request that waits for an event on purpose (a long-poll Fetch, an acks=-1 Produce,
 * a JoinGroup or SyncGroup waiting for the rebalance, a DeleteRecords waiting for the replicas)
 * gives its slot back when it starts waiting, as a Kafka request leaves the request queue when an
 * I/O thread parks it in a purgatory. When every slot is taken, connections stop reading until one
 * frees (Kafka's network threads block on a full request queue).
 */
import { Waiters } from './waiters';

export class RequestSlots {
  private inUse = 0;
  private readonly waiters = new Waiters();

  constructor(readonly max: number) {}

  get used(): number {
    return this.inUse;
  }

  tryAcquire(): boolean {
    if (this.inUse >= this.max) return false;
    this.inUse++;
    return true;
  }

  release(): void {
    if (this.inUse > 0) this.inUse--;
    this.waiters.wakeAll();
  }

  whenAvailable(fn: () => void): void {
    this.waiters.add(fn);
  }

  forget(fn: () => void): void {
    this.waiters.remove(fn);
  }
}
