/**
 * Replication throttles (KIP-73), Kafka's ReplicationQuotaManager: one instance for the leader side
 * (LeaderReplication: what this broker serves to followers) and one for the follower side
 * (FollowerReplication: what this broker's replica fetchers fetch).
 *
 * - Which partitions are throttled comes from the topic configs leader.replication.throttled.replicas
 *   / follower.replication.throttled.replicas: a list of `partition:brokerId` entries, or `*` for
 *   every replica of the topic. A broker keeps, per topic, the partitions whose entries name itself
 *   (Kafka's TopicConfigHandler.parseThrottledPartitions): on the leader list, the partitions this
 *   broker throttles while it leads them; on the follower list, those it throttles while it follows.
 *   markThrottled replaces a topic's set; an empty or absent config removes it.
 * - The bound is the broker's leader.replication.throttled.rate / follower.replication.throttled.rate
 *   (bytes/s; its own dynamic value, else the cluster default, else unbounded), updated at run time.
 * - The rate is one SimpleRate (common/rate.ts) over replication.quota.window.num samples of
 *   replication.quota.window.size.seconds: every byte of a throttled partition is recorded, whether
 *   or not the replica is in sync (so that throttled traffic as a whole keeps to the bound), and
 *   the quota is exceeded while the measured rate is above the bound. Callers decide what is held
 *   back: only replicas outside the ISR (leader side) or not caught up (follower side), and only
 *   while isQuotaExceeded(); a held-back partition gets no data that round, never an error.
 *
 * Invariant: with no bound (Infinity) isQuotaExceeded() is false whatever was recorded.
 */
import { SimpleRate, type RateConfig } from '../common/rate';

/** Kafka's QuotaType names of the two managers (also their metric groups). */
export type ReplicationQuotaType = 'LeaderReplication' | 'FollowerReplication';

/** Every replica of the topic (Kafka's AllReplicas). */
export const ALL_REPLICAS = '*';

/** What the fetch paths ask of a replication quota (Kafka's ReplicaQuota). */
export interface ReplicaQuota {
  isThrottled(topic: string, partition: number): boolean;
  isQuotaExceeded(): boolean;
  record(bytes: number): void;
}

/**
 * The partitions of a throttled-replicas config that name `brokerId`, or ALL_REPLICAS for `*`;
 * null for an empty list (no throttle). The list is already validated (topic config validator).
 */
export function parseThrottledPartitions(entries: readonly string[], brokerId: number): number[] | typeof ALL_REPLICAS | null {
  const list = entries.map((e) => e.trim()).filter((e) => e !== '');
  if (list.length === 0) return null;
  if (list.length === 1 && list[0] === ALL_REPLICAS) return ALL_REPLICAS;
  const out: number[] = [];
  for (const e of list) {
    const [partition, broker] = e.split(':').map((x) => Number(x.trim()));
    if (broker === brokerId && Number.isInteger(partition)) out.push(partition);
  }
  return out;
}

export class ReplicationQuotaManager implements ReplicaQuota {
  private readonly throttled = new Map<string, ReadonlySet<number> | typeof ALL_REPLICAS>();
  private readonly rate: SimpleRate;

  constructor(
    readonly type: ReplicationQuotaType,
    window: RateConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.rate = new SimpleRate(window, Infinity);
  }

  /** The bound in bytes/s (Infinity: none, Kafka's Long.MAX_VALUE). */
  updateQuota(bytesPerSecond: number): void {
    this.rate.bound = bytesPerSecond;
  }

  get upperBound(): number {
    return this.rate.bound;
  }

  /** Replaces the throttled partitions of `topic` (ALL_REPLICAS: all of them). */
  markThrottled(topic: string, partitions: readonly number[] | typeof ALL_REPLICAS): void {
    this.throttled.set(topic, partitions === ALL_REPLICAS ? ALL_REPLICAS : new Set(partitions));
  }

  removeThrottle(topic: string): void {
    this.throttled.delete(topic);
  }

  isThrottled(topic: string, partition: number): boolean {
    const t = this.throttled.get(topic);
    return t !== undefined && (t === ALL_REPLICAS || t.has(partition));
  }

  /** Whether the recorded rate is above the bound now (Kafka's Sensor.checkQuotas). */
  isQuotaExceeded(): boolean {
    if (!Number.isFinite(this.rate.bound)) return false;
    return this.rate.measure(this.now()) > this.rate.bound;
  }

  /** Adds throttled bytes to the rate, whether or not the quota is exceeded. */
  record(bytes: number): void {
    if (bytes > 0) this.rate.add(bytes, this.now());
  }

  /** The measured rate, bytes/s (Kafka's byte-rate metric of the LeaderReplication / FollowerReplication group). */
  byteRate(): number {
    return this.rate.measure(this.now());
  }
}
