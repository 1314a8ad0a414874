/**
 * Runs async tasks one at a time in submission order. Objects whose state changes across an
 * `await` (the controller, each consumer group) push their mutations through one of these, so two
 * requests can never interleave half-way through a state change. A task that fails does not stop
 * the queue: the next one runs regardless.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private depth = 0;

  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.depth++;
    const result = this.tail.then(task, task);
    this.tail = result.then(
      () => {
        this.depth--;
      },
      () => {
        this.depth--;
      },
    );
    return result;
  }

  get pending(): number {
    return this.depth;
  }

  /** Resolves once everything submitted so far has finished. */
  drain(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
