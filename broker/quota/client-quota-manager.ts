/**
 * One kind of client quota (Kafka's ClientQuotaManager): produce bytes, fetch bytes, request time or
 * controller mutations, enforced per user and client id with Kafka's precedence (KIP-55):
 *
 *   1 /users/<user>/clients/<client-id>    2 /users/<user>/clients/<default>   3 /users/<user>
 *   4 /users/<default>/clients/<client-id> 5 /users/<default>/clients/<default> 6 /users/<default>
 *   7 /clients/<client-id>                 8 /clients/<default>
 *
 * The first entity with a value for this quota's key sets the bound, and also decides who shares a
 * rate: clients matched at a user-only level share the user's rate; at a client-only level, the
 * client id's; otherwise the (user, client id) pair's. With no matching entity there is no bound and
 * nothing is recorded.
 *
 * A record returns the throttle time that brings the rate back to the bound (Kafka's
 * QuotaUtils.throttleTime; the request-time quota caps it at one quota window, as Kafka's
 * ClientRequestQuotaManager does). Rates of idle keys are dropped after an hour (Kafka's sensor
 * expiry). For the metrics, each quota'd key also keeps its throttle times (Kafka's throttle-time
 * sensor, an average over the same window); `quotaMetrics` reads both.
 */
import { RateMap, type RateConfig } from '../../common/rate';
import type { Time } from '../../common/time';

/** Where the configured client quotas come from (the metadata image). */
export interface ClientQuotaSource {
  /**
   * The value of `key` set on the entity, if any. `user` / `clientId`: undefined = that part is not
   * in the entity, null = the default entity, a string = a named entity.
   */
  quotaValue(entity: { user?: string | null; clientId?: string | null }, key: string): number | undefined;
  /** True when no entity has any quota: resolving can stop at once (the usual case). */
  isEmpty?(): boolean;
}

export type ClientQuotaKey = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage' | 'controller_mutation_rate';

const SENSOR_EXPIRY_MS = 3600 * 1000;

/** The entity that decides a client's bound, and the key of the rate it shares. */
export interface ResolvedQuota {
  bound: number;
  rateKey: string;
}

export function resolveQuota(source: ClientQuotaSource, key: string, user: string, clientId: string): ResolvedQuota | undefined {
  if (source.isEmpty?.()) return undefined;
  const levels: { user?: string | null; clientId?: string | null; share: 'both' | 'user' | 'client' }[] = [
    { user, clientId, share: 'both' },
    { user, clientId: null, share: 'both' },
    { user, share: 'user' },
    { user: null, clientId, share: 'both' },
    { user: null, clientId: null, share: 'both' },
    { user: null, share: 'user' },
    { clientId, share: 'client' },
    { clientId: null, share: 'client' },
  ];
  for (const l of levels) {
    const v = source.quotaValue({ ...(l.user !== undefined ? { user: l.user } : {}), ...(l.clientId !== undefined ? { clientId: l.clientId } : {}) }, key);
    if (v === undefined) continue;
    const rateKey = l.share === 'both' ? `${user}\0${clientId}` : l.share === 'user' ? `${user}\0` : `\0${clientId}`;
    return { bound: v, rateKey };
  }
  return undefined;
}

/** One quota'd (user, client id) key as Kafka's quota metrics tag it: an absent part is ''. */
export interface QuotaMetric {
  user: string;
  clientId: string;
  /** The recorded rate per second (byte-rate, request-time). */
  rate: number;
  /** The mean throttle time of its recent requests, ms (throttle-time). */
  throttleTimeMs: number;
}

export class ClientQuotaManager {
  private readonly rates: RateMap<string>;
  private readonly throttleTimes: RateMap<string>;

  constructor(
    readonly key: ClientQuotaKey,
    private readonly source: ClientQuotaSource,
    private readonly config: RateConfig,
    time: Time,
    /** Upper bound on a throttle time (the request-time quota: one window); Infinity for none. */
    private readonly maxThrottleMs = Infinity,
  ) {
    this.rates = new RateMap(config, time, SENSOR_EXPIRY_MS);
    this.throttleTimes = new RateMap(config, time, SENSOR_EXPIRY_MS);
  }

  /** Every key with a quota seen recently: its rate and mean throttle time (Kafka's quota metrics). */
  quotaMetrics(nowMs: number): QuotaMetric[] {
    const out: QuotaMetric[] = [];
    for (const [key, rate] of this.rates.entries()) {
      const sep = key.indexOf('\0');
      out.push({
        user: key.slice(0, sep),
        clientId: key.slice(sep + 1),
        rate: rate.measure(nowMs),
        throttleTimeMs: this.throttleTimes.get(key, Infinity).average(nowMs),
      });
    }
    return out;
  }

  /** Records `value` for the client and returns the throttle time in ms (0 when within its quota or unbounded). */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, nowMs: number): number {
    const q = resolveQuota(this.source, this.key, user, clientId);
    if (!q) return 0;
    const t = Math.min(this.rates.get(q.rateKey, q.bound).record(value, nowMs), this.maxThrottleMs);
    this.throttleTimes.get(q.rateKey, Infinity).add(t, nowMs);
    return t;
  }

  /** Takes back a recorded value (a fetch answered empty because it was throttled). */
  unrecord(user: string, clientId: string, value: number, nowMs: number): void {
    const q = resolveQuota(this.source, this.key, user, clientId);
    if (q) this.rates.get(q.rateKey, q.bound).add(-value, nowMs);
  }

  /**
   * The most a client can take in one quota window without being throttled (Kafka's
   * getMaxValueInQuotaWindow: bound * (samples - 1) * window seconds); Infinity without a quota.
   */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    const q = resolveQuota(this.source, this.key, user, clientId);
    if (!q) return Infinity;
    return q.bound * (this.config.samples - 1) * (this.config.windowMs / 1000);
  }
}
