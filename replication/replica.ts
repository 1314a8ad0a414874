/**
 * Replica: what a partition leader knows about one follower, learnt from its Fetch requests (the
 * follower's log end offset is the offset it fetches from; its log start offset is in the request).
 *
 * lastCaughtUpTimeMs follows Kafka's rule: a fetch at or past the leader's current LEO means the
 * follower was caught up at this fetch; a fetch at or past the LEO the leader had at the previous
 * fetch means it was caught up at the previous fetch's time. A follower is "caught up" (may stay in,
 * or with KAFKA-19996 join, the ISR) when its LEO equals the leader's, or it was caught up within
 * replica.lag.time.max.ms. Under a steady stream of small appends a follower's fetch offset is
 * always a little behind the leader's LEO, and the second rule keeps it in sync.
 */
export const UNKNOWN_OFFSET = -1n;

export class Replica {
  logEndOffset = UNKNOWN_OFFSET;
  logStartOffset = UNKNOWN_OFFSET;
  /** The leader's LEO when this follower last fetched. */
  lastFetchLeaderLogEndOffset = UNKNOWN_OFFSET;
  lastFetchTimeMs = 0;
  lastCaughtUpTimeMs = 0;
  /** The broker epoch the follower sent (v15+ replica_state), null before its first fetch. */
  brokerEpoch: bigint | null = null;

  constructor(readonly brokerId: number) {}

  updateFetchState(fetchOffset: bigint, followerStartOffset: bigint, fetchTimeMs: number, leaderEndOffset: bigint, brokerEpoch: bigint): void {
    if (fetchOffset >= leaderEndOffset) {
      this.lastCaughtUpTimeMs = Math.max(this.lastCaughtUpTimeMs, fetchTimeMs);
    } else if (fetchOffset >= this.lastFetchLeaderLogEndOffset) {
      this.lastCaughtUpTimeMs = Math.max(this.lastCaughtUpTimeMs, this.lastFetchTimeMs);
    }
    this.logEndOffset = fetchOffset;
    this.logStartOffset = followerStartOffset;
    this.lastFetchLeaderLogEndOffset = leaderEndOffset;
    this.lastFetchTimeMs = fetchTimeMs;
    this.brokerEpoch = brokerEpoch;
  }

  /**
   * On a leader election (or re-election): an ISR member counts as caught up now, anyone else as
   * never, so the HWM does not wait for a follower outside the ISR. A new leader also forgets the
   * follower's offsets (they were learnt by someone else, if at all).
   */
  reset(nowMs: number, leaderEndOffset: bigint, isNewLeader: boolean, isInSync: boolean): void {
    this.lastCaughtUpTimeMs = isInSync ? nowMs : 0;
    if (isNewLeader) {
      this.logEndOffset = UNKNOWN_OFFSET;
      this.logStartOffset = UNKNOWN_OFFSET;
      this.lastFetchLeaderLogEndOffset = UNKNOWN_OFFSET;
      this.lastFetchTimeMs = 0;
      this.brokerEpoch = null;
    } else {
      this.lastFetchLeaderLogEndOffset = leaderEndOffset;
      this.lastFetchTimeMs = isInSync ? nowMs : 0;
    }
  }

  /** The shrink rule (Kafka's ReplicaState.isCaughtUp). */
  isCaughtUp(leaderEndOffset: bigint, nowMs: number, maxLagMs: number): boolean {
    return this.logEndOffset === leaderEndOffset || nowMs - this.lastCaughtUpTimeMs <= maxLagMs;
  }
}
