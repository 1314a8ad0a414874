/**
 * Kafka's LogFlushStats (LogFlushRateAndTimeMs): how many times the logs of one log manager were
 * fsynced and how long each flush took, for the broker's metrics. Counted at the two places a
 * partition log flushes (LocalLog.flush and the background flush's completion); `onFlush`, when
 * set (metrics on), hears of every one. Flushes are rare (a roll, flush.ms / flush.messages,
 * shutdown), so this costs nothing measurable.
 *
 * Invariant: count and totalMs only grow.
 */
export class LogFlushStats {
  count = 0;
  totalMs = 0;
  onFlush: ((ms: number) => void) | null = null;

  record(ms: number): void {
    this.count++;
    this.totalMs += ms;
    this.onFlush?.(ms);
  }
}
