/**
 * Background work on timers (Kafka's Scheduler), as storage runs it: the log manager's periodic
 * tasks (retention, the flush.ms flusher, checkpoints, producer id expiry) and deletions after
 * file.delete.delay.ms (segments, deleted logs).
 *
 * Invariants (TimerScheduler): timers are unref'd, so a task never keeps the process alive; a task
 * that throws is reported to the owner's error callback, never to the event loop; after shutdown()
 * nothing pending runs and later schedule calls are no-ops.
 */
export interface ScheduledTask {
  cancel(): void;
}

/** Node's timers by default (TimerScheduler); tests use common/testing/mock-time.ts to run tasks deterministically. */
export interface Scheduler {
  scheduleOnce(name: string, delayMs: number, fn: () => void): ScheduledTask;
  schedulePeriodic(name: string, initialDelayMs: number, periodMs: number, fn: () => void): ScheduledTask;
}

/** Timers are unref()'d: background work never keeps the process alive. */
export class TimerScheduler implements Scheduler {
  private readonly tasks = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly onError: (name: string, err: unknown) => void = () => {}) {}

  scheduleOnce(name: string, delayMs: number, fn: () => void): ScheduledTask {
    if (this.closed) return { cancel: () => {} };
    const t = setTimeout(() => {
      this.tasks.delete(t);
      this.run(name, fn);
    }, clampDelay(delayMs));
    t.unref();
    this.tasks.add(t);
    return {
      cancel: () => {
        clearTimeout(t);
        this.tasks.delete(t);
      },
    };
  }

  schedulePeriodic(name: string, initialDelayMs: number, periodMs: number, fn: () => void): ScheduledTask {
    if (this.closed) return { cancel: () => {} };
    let current: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = (delay: number) => {
      current = setTimeout(() => {
        if (current) this.tasks.delete(current);
        if (cancelled) return;
        this.run(name, fn);
        if (!cancelled && !this.closed) arm(periodMs);
      }, clampDelay(delay));
      current.unref();
      this.tasks.add(current);
    };
    arm(initialDelayMs);
    return {
      cancel: () => {
        cancelled = true;
        if (current) {
          clearTimeout(current);
          this.tasks.delete(current);
        }
      },
    };
  }

  private run(name: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.onError(name, e);
    }
  }

  /** Cancels everything pending; later schedule calls are no-ops. */
  shutdown(): void {
    this.closed = true;
    for (const t of this.tasks) clearTimeout(t);
    this.tasks.clear();
  }
}

/** setTimeout silently treats delays above 2^31-1 ms as 1 ms; LONG_MAX-style intervals mean "never". */
function clampDelay(ms: number): number {
  if (!Number.isFinite(ms) || ms > 0x7fffffff) return 0x7fffffff;
  return Math.max(0, ms);
}
