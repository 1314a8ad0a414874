/**
 * Requests that wait for a condition (a fetch for min_bytes, an acks=-1 produce for the ISR) park
 * here under the keys that can make them completable (the partitions' topicPartitionKey). Whoever
 * changes the state behind a key calls `checkAndComplete(key)`; nothing polls. Each operation
 * completes exactly once: by its condition becoming true, by its timeout, or by `completeAll` at
 * shutdown (then with what it has).
 */
export abstract class DelayedOperation {
  private completed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly delayMs: number) {}

  /** Completes the operation if its condition holds now; returns whether it did. */
  abstract tryComplete(): boolean;
  /** Builds and sends the result; called exactly once. */
  protected abstract onComplete(): void;

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Marks complete and runs onComplete; false if someone else completed it first. */
  forceComplete(): boolean {
    if (this.completed) return false;
    this.completed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.onComplete();
    return true;
  }

  /** @internal */
  startTimer(onExpire: () => void): void {
    if (this.completed) return;
    this.timer = setTimeout(onExpire, Math.max(0, this.delayMs));
  }
}

export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private watchers = new Map<string, Set<T>>();

  constructor(readonly name: string) {}

  /**
   * Completes `op` at once if it can; otherwise watches it under `keys` until a key is checked and
   * the condition holds, or the delay expires (then it completes with whatever it has).
   */
  tryCompleteElseWatch(op: T, keys: string[]): boolean {
    if (op.tryComplete()) return true;
    for (const k of keys) {
      let set = this.watchers.get(k);
      if (!set) this.watchers.set(k, (set = new Set()));
      set.add(op);
    }
    // The state may have changed between the first check and the watch (it cannot in
    // single-threaded Node, but keep the invariant explicit and cheap).
    if (op.tryComplete()) {
      this.unwatch(op, keys);
      return true;
    }
    op.startTimer(() => {
      this.unwatch(op, keys);
      op.forceComplete();
    });
    return false;
  }

  private unwatch(op: T, keys: string[]): void {
    for (const k of keys) {
      const set = this.watchers.get(k);
      if (!set) continue;
      set.delete(op);
      if (set.size === 0) this.watchers.delete(k);
    }
  }

  /** Tries to complete every operation watching `key`; returns how many completed. */
  checkAndComplete(key: string): number {
    const set = this.watchers.get(key);
    if (!set) return 0;
    let n = 0;
    for (const op of [...set]) {
      if (op.isCompleted) {
        set.delete(op);
        continue;
      }
      if (op.tryComplete()) {
        set.delete(op);
        n++;
      }
    }
    if (set.size === 0) this.watchers.delete(key);
    return n;
  }

  get watched(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  /** Completes everything now (shutdown): each operation answers with what it has. */
  completeAll(): void {
    const all = new Set<T>();
    for (const s of this.watchers.values()) for (const op of s) all.add(op);
    this.watchers.clear();
    for (const op of all) op.forceComplete();
  }
}
