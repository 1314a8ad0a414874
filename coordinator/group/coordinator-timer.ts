/**
 * Keyed timers for the group coordinator (Kafka's CoordinatorTimer): heartbeat/session expiry per
 * member, the join and sync phase deadlines per group. Scheduling a key replaces whatever was
 * scheduled under it, so "reschedule the member's heartbeat" is one call.
 *
 * Invariants:
 * - A timer never runs its task directly: when it fires it hands the task to `execute`, which runs
 *   it on the owning group's serial queue. By the time the task gets its turn, the key may have
 *   been cancelled or rescheduled by an operation queued before it; the task then does nothing
 *   (checked with a per-schedule token), exactly as if the timer had been cancelled in time.
 * - Every Node timer is unref'd (a coordinator never keeps a process alive) and `cancelAll` clears
 *   them all (shutdown, or a partition this broker stops leading).
 */
export type TimerExecutor = (groupId: string, task: () => Promise<void> | void) => void;

interface Entry {
  groupId: string;
  token: number;
  handle: NodeJS.Timeout;
}

export class CoordinatorTimer {
  private readonly entries = new Map<string, Entry>();
  private nextToken = 1;

  constructor(private readonly execute: TimerExecutor) {}

  schedule(groupId: string, key: string, delayMs: number, task: () => Promise<void> | void): void {
    this.cancel(key);
    const token = this.nextToken++;
    const handle = setTimeout(() => {
      this.execute(groupId, () => {
        const e = this.entries.get(key);
        if (!e || e.token !== token) return; // cancelled or rescheduled while waiting for its turn
        this.entries.delete(key);
        return task();
      });
    }, Math.max(0, delayMs));
    handle.unref();
    this.entries.set(key, { groupId, token, handle });
  }

  cancel(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    clearTimeout(e.handle);
    this.entries.delete(key);
  }

  isScheduled(key: string): boolean {
    return this.entries.has(key);
  }

  /** Cancels every timer of the given groups (a partition was unloaded). */
  cancelGroups(groupIds: ReadonlySet<string>): void {
    for (const [key, e] of this.entries) {
      if (groupIds.has(e.groupId)) {
        clearTimeout(e.handle);
        this.entries.delete(key);
      }
    }
  }

  cancelAll(): void {
    for (const e of this.entries.values()) clearTimeout(e.handle);
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
