/**
 * Test support: a settable clock (MockTime) and a scheduler (MockScheduler) that runs tasks only
 * when the test advances time, so retention, segment.ms rolls and delayed deletion are
 * deterministic; and CapturingLogger, which keeps every line with its level for assertions.
 */
import { ScheduledTask, Scheduler } from '../scheduler';
import { Logger } from '../logger';
import { Time } from '../time';

export class MockTime implements Time {
  constructor(public now = 1_700_000_000_000) {}
  milliseconds(): number {
    return this.now;
  }
  sleep(ms: number): void {
    this.now += ms;
  }
}

interface Task {
  name: string;
  due: number;
  period: number | null;
  fn: () => void;
  cancelled: boolean;
}

export class MockScheduler implements Scheduler {
  private tasks: Task[] = [];
  constructor(private readonly time: MockTime) {}

  scheduleOnce(name: string, delayMs: number, fn: () => void): ScheduledTask {
    return this.add({ name, due: this.time.now + delayMs, period: null, fn, cancelled: false });
  }

  schedulePeriodic(name: string, initialDelayMs: number, periodMs: number, fn: () => void): ScheduledTask {
    return this.add({ name, due: this.time.now + initialDelayMs, period: periodMs, fn, cancelled: false });
  }

  private add(t: Task): ScheduledTask {
    this.tasks.push(t);
    return { cancel: () => (t.cancelled = true) };
  }

  /** Advances the clock by `ms`, running every task that falls due, in due order. */
  tick(ms = 0): void {
    const end = this.time.now + ms;
    for (;;) {
      const due = this.tasks.filter((t) => !t.cancelled && t.due <= end).sort((a, b) => a.due - b.due)[0];
      if (!due) break;
      if (due.due > this.time.now) this.time.now = due.due;
      if (due.period === null) this.tasks.splice(this.tasks.indexOf(due), 1);
      else due.due += due.period;
      due.fn();
    }
    this.time.now = end;
    this.tasks = this.tasks.filter((t) => !t.cancelled);
  }

  get pending(): string[] {
    return this.tasks.filter((t) => !t.cancelled).map((t) => t.name);
  }
}

/** A logger that keeps every message with its level, for asserting what recovery reported. */
export class CapturingLogger extends Logger {
  readonly lines: { level: string; msg: string }[];
  constructor() {
    const lines: { level: string; msg: string }[] = [];
    super('test', 'debug', (line) => {
      const m = /^\[[^\]]*\] (\w+) [^:]*: (.*)$/s.exec(line);
      lines.push(m ? { level: m[1].toLowerCase(), msg: m[2] } : { level: 'info', msg: line });
    });
    this.lines = lines;
  }
  matching(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l.msg)).map((l) => l.msg);
  }
}
