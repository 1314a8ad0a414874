/**
 * Callbacks waiting for a shared budget to free up (request bytes, request slots). Woken all at once,
 * in arrival order; a woken waiter that still finds nothing free registers again. A waiter that no
 * longer cares (a closed connection) is removed.
 */
export class Waiters {
  private list: (() => void)[] = [];

  add(fn: () => void): void {
    this.list.push(fn);
  }

  remove(fn: () => void): void {
    const i = this.list.indexOf(fn);
    if (i >= 0) this.list.splice(i, 1);
  }

  wakeAll(): void {
    if (this.list.length === 0) return;
    const woken = this.list;
    this.list = [];
    for (const w of woken) w();
  }
}
