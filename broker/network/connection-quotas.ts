/**
 * Connection limits, as Kafka's ConnectionQuotas applies them when a listener accepts a socket:
 *
 * - `max.connections` (broker-wide) and `listener.name.<l>.max.connections`: with no slot free, the
 *   listener stops accepting (the socket waits, unread) until a connection closes. The inter-broker
 *   listener is protected when there are several listeners: it ignores the broker-wide limit, and if
 *   its connections push the total over it, the least recently active connection of another
 *   listener is closed (Kafka's closeExcessConnections).
 * - `max.connection.creation.rate` (broker-wide) and `listener.name.<l>.max.connection.creation.rate`:
 *   each accepted connection is recorded; above the rate, accepting pauses for the throttle time
 *   (capped at one quota window), then the connection is taken.
 * - the `connection_creation_rate` client quota of the client's IP (or the default IP entity): a
 *   connection above it is not served and is closed after the throttle time (Kafka's
 *   ConnectionThrottledException), and is not counted against the listener and broker rates.
 * - `max.connections.per.ip` and `max.connections.per.ip.overrides`: a connection past the limit of its
 *   address is closed at once ("Rejected connection from ..."); overrides name hosts or addresses.
 * - `max.connections` and `max.connections.per.ip` follow dynamic broker configs (updateLimits);
 *   the overrides and the per-listener limits are static.
 *
 * Invariants: counts go up only in `admit` and down only in `release`, once per admitted connection;
 * a per-IP rejection or an IP throttle leaves every count as it was.
 */
import { Rate, RateMap, type RateConfig } from '../../common/rate';
import type { Time } from '../../common/time';

export interface ListenerLimits {
  maxConnections: number;
  maxConnectionCreationRate: number;
}

export interface ConnectionQuotaConfig {
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Address -> limit, host names already resolved. */
  maxConnectionsPerIpOverrides: ReadonlyMap<string, number>;
  maxConnectionCreationRate: number;
  listeners: ReadonlyMap<string, ListenerLimits>;
  interBrokerListenerName: string | null;
  /** quota.window.size.seconds / quota.window.num. */
  rate: RateConfig;
  /** The `connection_creation_rate` quota of an address (explicit or default), or undefined for none. */
  ipConnectionRate?: (address: string) => number | undefined;
}

export type AdmitDecision =
  | { kind: 'admitted' }
  | { kind: 'rejected'; reason: string }
  /** Over the IP's connection rate quota: close the socket after `throttleMs`. */
  | { kind: 'throttled'; throttleMs: number };

/** Connection counts are kept past their last connection for this long only. */
const IP_RATE_IDLE_MS = 60 * 60 * 1000;

export class ConnectionQuotas {
  private total = 0;
  private readonly perListener = new Map<string, number>();
  private readonly perIp = new Map<string, number>();
  private readonly brokerRate: Rate;
  private readonly listenerRates = new Map<string, Rate>();
  private readonly ipRates: RateMap<string>;
  /** Throttle times are capped at one quota window, as Kafka caps them. */
  private readonly maxThrottleMs: number;

  constructor(
    private config: ConnectionQuotaConfig,
    private readonly time: Time,
  ) {
    this.brokerRate = new Rate(config.rate, config.maxConnectionCreationRate);
    for (const [name, l] of config.listeners) {
      this.perListener.set(name, 0);
      this.listenerRates.set(name, new Rate(config.rate, l.maxConnectionCreationRate));
    }
    this.ipRates = new RateMap(config.rate, time, IP_RATE_IDLE_MS);
    this.maxThrottleMs = config.rate.windowMs;
  }

  get totalCount(): number {
    return this.total;
  }

  countFor(address: string): number {
    return this.perIp.get(address) ?? 0;
  }

  listenerCount(listener: string): number {
    return this.perListener.get(listener) ?? 0;
  }

  /**
   * max.connections / max.connections.per.ip changed (a dynamic broker config, KIP-226): new
   * connections are admitted against the new limits; connections already open stay open, as in
   * Kafka's ConnectionQuotas.updateMaxConnectionsPerIp / updateBrokerMaxConnections.
   */
  updateLimits(limits: { maxConnections: number; maxConnectionsPerIp: number }): void {
    this.config = { ...this.config, ...limits };
  }

  /** The IP connection rate quota changed (a client quota update). */
  setIpConnectionRate(fn: (address: string) => number | undefined): void {
    this.config = { ...this.config, ipConnectionRate: fn };
  }

  /**
   * Records the connection in the listener and broker creation rates (once per connection, when it
   * is first considered) and returns how long accepting must pause, 0 for none.
   */
  recordCreation(listener: string): number {
    const now = this.time.milliseconds();
    const listenerThrottle = this.listenerRates.get(listener)?.record(1, now) ?? 0;
    const brokerThrottle = this.isProtected(listener) ? 0 : this.brokerRate.record(1, now);
    return Math.min(Math.max(listenerThrottle, brokerThrottle), this.maxThrottleMs);
  }

  /** Whether a connection may be admitted on `listener` now (counts only; rates are `recordCreation`'s). */
  slotAvailable(listener: string): boolean {
    const l = this.config.listeners.get(listener);
    if (l && this.listenerCount(listener) >= l.maxConnections) return false;
    if (this.isProtected(listener)) return true;
    return this.total < this.config.maxConnections;
  }

  /**
   * The per-IP checks, once a slot is free: the IP's connection rate quota, then its count. On
   * success every count goes up by one.
   */
  admit(listener: string, address: string): AdmitDecision {
    const now = this.time.milliseconds();
    const ipRate = this.config.ipConnectionRate?.(address);
    if (ipRate !== undefined && Number.isFinite(ipRate)) {
      const rate = this.ipRates.get(address, ipRate);
      const throttleMs = rate.record(1, now);
      if (throttleMs > 0) {
        // Not accepted: un-record it everywhere it was counted.
        rate.add(-1, now);
        this.listenerRates.get(listener)?.add(-1, now);
        if (!this.isProtected(listener)) this.brokerRate.add(-1, now);
        return { kind: 'throttled', throttleMs: Math.min(throttleMs, this.maxThrottleMs) };
      }
    }
    const count = this.countFor(address);
    const max = this.config.maxConnectionsPerIpOverrides.get(address) ?? this.config.maxConnectionsPerIp;
    if (count >= max) {
      return { kind: 'rejected', reason: `Rejected connection from ${address}, address already has the configured maximum of ${max} connections.` };
    }
    this.perIp.set(address, count + 1);
    this.total++;
    if (this.perListener.has(listener)) this.perListener.set(listener, this.listenerCount(listener) + 1);
    return { kind: 'admitted' };
  }

  release(listener: string, address: string): void {
    const count = this.countFor(address);
    if (count <= 1) this.perIp.delete(address);
    else this.perIp.set(address, count - 1);
    if (this.total > 0) this.total--;
    const l = this.perListener.get(listener);
    if (l !== undefined && l > 0) this.perListener.set(listener, l - 1);
  }

  /** The total is above max.connections on account of a protected listener: close one elsewhere. */
  maxConnectionsExceeded(listener: string): boolean {
    return this.total > this.config.maxConnections && !this.isProtected(listener);
  }

  /** The inter-broker listener is protected when there is more than one listener (Kafka's rule). */
  isProtected(listener: string): boolean {
    return this.config.interBrokerListenerName === listener && this.config.listeners.size > 1;
  }
}
