/**
 * Kafka's Throttler, for log.cleaner.io.max.bytes.per.second: every cleaner thread reports the
 * bytes it reads and writes; once per check interval (300 ms) the observed rate is compared with
 * the desired one and, if above it, the caller waits long enough to bring the interval's average
 * down to it. One instance is shared by all cleaner threads, so the limit is for their sum.
 *
 * Kafka's thread sleeps; here `maybeThrottle` returns the wait in ms and the caller awaits a timer
 * (the event loop keeps serving requests meanwhile). Invariant: the wait is 0 unless an interval
 * has passed with something observed and its rate was above the desired rate.
 */
export class Throttler {
  private periodStart: number;
  private observedSoFar = 0;

  constructor(
    private desiredRatePerSec: number,
    private readonly checkIntervalMs = 300,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.periodStart = now();
  }

  updateDesiredRatePerSec(rate: number): void {
    this.desiredRatePerSec = rate;
  }

  get rate(): number {
    return this.desiredRatePerSec;
  }

  /** Records `observed` units; returns how many ms to pause (0: none). */
  maybeThrottle(observed: number): number {
    this.observedSoFar += observed;
    const t = this.now();
    const elapsed = t - this.periodStart;
    let sleep = 0;
    if (elapsed > this.checkIntervalMs && this.observedSoFar > 0) {
      const rateInSecs = (this.observedSoFar * 1000) / elapsed;
      if (rateInSecs > this.desiredRatePerSec) {
        const desiredRateMs = this.desiredRatePerSec / 1000;
        sleep = Math.max(0, Math.round(this.observedSoFar / desiredRateMs - elapsed));
      }
      // Kafka restarts the period after the nap: the time slept is not counted as work.
      this.periodStart = t + sleep;
      this.observedSoFar = 0;
    }
    return sleep;
  }
}
