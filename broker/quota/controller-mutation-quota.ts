/**
 * Controller mutation quotas (KIP-599, Kafka's ControllerMutationQuotaManager): the partitions a
 * client creates (CreateTopics, CreatePartitions) or deletes (DeleteTopics) per second, against its
 * `controller_mutation_rate` (resolved with the same precedence as every client quota), counted in
 * a token bucket per quota entity.
 *
 * A request gets one ControllerMutationQuota. Strict (CreateTopics v6+, CreatePartitions v3+,
 * DeleteTopics v5+): before each topic the bucket is checked; if it is already below zero the topic
 * is refused (THROTTLING_QUOTA_EXCEEDED) and later topics of the request too; otherwise the topic's
 * partitions are taken (the bucket may go below zero: that topic still succeeds). Permissive (older
 * versions, whose clients do not know the error): partitions are always taken and never refused.
 * Either way the response's throttle time is what the bucket last said, less the time since.
 */
import type { Time } from '../../common/time';
import { ExpiringMap } from '../../common/expiring-map';
import { TokenBucket } from '../../common/token-bucket';
import { resolveQuota, type ClientQuotaSource } from './client-quota-manager';

/** Kafka's message for THROTTLING_QUOTA_EXCEEDED. */
export const THROTTLING_QUOTA_EXCEEDED_MESSAGE = 'The throttling quota has been exceeded.';

export interface ControllerMutationQuota {
  /** False when no controller_mutation_rate applies to the client: nothing is counted. */
  readonly bounded: boolean;
  /** False when the request may not mutate more (strict and over the quota). */
  tryRecord(partitions: number): boolean;
  /** The throttle time for the response. */
  throttleTimeMs(): number;
}

const UNBOUNDED: ControllerMutationQuota = { bounded: false, tryRecord: () => true, throttleTimeMs: () => 0 };
const IDLE_EXPIRY_MS = 3600 * 1000;

export class ControllerMutationQuotaManager {
  private readonly buckets: ExpiringMap<string, TokenBucket>;

  constructor(
    private readonly source: ClientQuotaSource,
    private readonly samples: number,
    private readonly windowMs: number,
    private readonly time: Time,
  ) {
    this.buckets = new ExpiringMap(time, IDLE_EXPIRY_MS);
  }

  /** The quota of one request; `strict` from the version on which the client understands the error. */
  newQuotaFor(user: string, clientId: string, strict: boolean): ControllerMutationQuota {
    const q = resolveQuota(this.source, 'controller_mutation_rate', user, clientId);
    if (!q) return UNBOUNDED;
    const bucket = this.bucket(q.rateKey, q.bound);
    let lastThrottleMs = 0;
    let lastRecordedMs = 0;
    return {
      bounded: true,
      tryRecord: (partitions) => {
        const now = this.time.milliseconds();
        if (strict) {
          const t = bucket.throttleTimeMs(now);
          if (t > 0) {
            lastThrottleMs = t;
            lastRecordedMs = now;
            return false;
          }
        }
        bucket.record(partitions, now);
        const t = bucket.throttleTimeMs(now);
        if (t > 0) {
          lastThrottleMs = t;
          lastRecordedMs = now;
        }
        return true;
      },
      throttleTimeMs: () => Math.max(0, lastThrottleMs - (this.time.milliseconds() - lastRecordedMs)),
    };
  }

  private bucket(key: string, rate: number): TokenBucket {
    const bucket = this.buckets.getOrCreate(key, (now) => new TokenBucket(rate, this.samples, this.windowMs, now));
    bucket.rate = rate;
    return bucket;
  }

}
