/**
 * BrokerLifecycleManager: a cluster broker's membership, as Kafka's class of the same name does it.
 *
 *   register()          BrokerRegistration, retried (DUPLICATE_BROKER_REGISTRATION while the
 *                       previous incarnation's session lasts, or the controller unreachable) until
 *                       initial.broker.registration.timeout.ms
 *   start()             heartbeats every broker.heartbeat.interval.ms; the controller unfences the
 *                       broker once its metadata offset reaches its registration (`waitUnfenced()`
 *                       then resolves). While fenced and waiting, heartbeats go out quickly (10 ms).
 *   controlledShutdown  heartbeats with want_shut_down until the controller answers
 *                       should_shut_down (its leaderships have moved and the others know), bounded
 *   stop()              no more heartbeats (a killed broker: the controller fences it when its
 *                       session expires)
 *
 * A heartbeat answered STALE_BROKER_EPOCH or BROKER_ID_NOT_REGISTERED (the controller lost or
 * replaced the registration) registers again. All timers are unref'd and cleared by stop(). Under
 * a KRaft controller quorum the channel (ControllerChannel) follows the active controller, so
 * registration and heartbeats carry on across a failover with the same broker epoch (the new
 * controller gives registered brokers fresh sessions when it claims).
 */
import { supportedFeatureRecords } from './features';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors';
import { randomUuid } from '../protocol/primitives/uuid';
import type { Logger } from '../common/logger';
import type { ControllerRequestChannel } from './controller-channel';

export interface BrokerLifecycleOptions {
  /** To the controller (a NodeChannel) or, under a quorum, the active controller (ControllerChannel). */
  channel: ControllerRequestChannel;
  nodeId: number;
  clusterId: string;
  logger: Logger;
  listeners: () => { name: string; host: string; port: number; securityProtocol: number }[];
  rack: string | null;
  logDirs: string[];
  heartbeatIntervalMs: number;
  registrationTimeoutMs: number;
  /** The broker's last applied metadata offset. */
  metadataOffset: () => bigint;
  /** Told when the controller says whether the broker is fenced. */
  onFencedChange?: (fenced: boolean) => void;
}

export class BrokerLifecycleManager {
  readonly incarnationId = randomUuid();
  private epoch = -1n;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private fenced = true;
  private wantShutDown = false;
  private shouldShutDown = false;
  private inFlight: Promise<void> | null = null;
  private unfencedWaiters: (() => void)[] = [];
  private shutdownWaiters: ((done: boolean) => void)[] = [];

  constructor(private readonly opts: BrokerLifecycleOptions) {}

  get brokerEpoch(): bigint {
    return this.epoch;
  }

  get isFenced(): boolean {
    return this.fenced;
  }

  /** BrokerRegistration, retried until accepted or the registration timeout passes. */
  async register(): Promise<bigint> {
    const deadline = Date.now() + this.opts.registrationTimeoutMs;
    let backoff = 50;
    let lastError = '';
    while (!this.stopped) {
      try {
        const res = await this.opts.channel.send('BrokerRegistration', {
          brokerId: this.opts.nodeId,
          clusterId: this.opts.clusterId,
          incarnationId: this.incarnationId,
          listeners: this.opts.listeners(),
          features: supportedFeatureRecords(),
          rack: this.opts.rack,
          isMigratingZkBroker: false,
          logDirs: [],
          previousBrokerEpoch: this.epoch,
        });
        if (res.errorCode === ErrorCode.NONE) {
          this.epoch = res.brokerEpoch;
          this.opts.logger.info(`registered with the controller (broker epoch ${this.epoch})`);
          return this.epoch;
        }
        if (res.errorCode === ErrorCode.INCONSISTENT_CLUSTER_ID) {
          throw new KafkaError(res.errorCode, `the controller belongs to another cluster than ${this.opts.clusterId}`);
        }
        lastError = errorName(res.errorCode);
      } catch (err) {
        // INCONSISTENT_CLUSTER_ID is final; no active controller within a request's timeout is retried.
        if (err instanceof KafkaError && err.code !== ErrorCode.REQUEST_TIMED_OUT) throw err;
        lastError = (err as Error).message;
      }
      if (Date.now() + backoff > deadline) break;
      this.opts.logger.debug(`broker registration not accepted yet (${lastError}); retrying in ${backoff} ms`);
      await this.sleep(backoff);
      backoff = Math.min(backoff * 2, Math.max(100, this.opts.heartbeatIntervalMs));
    }
    throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `could not register with the controller within ${this.opts.registrationTimeoutMs} ms: ${lastError}`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms).unref());
  }

  start(): void {
    if (this.stopped) return;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.inFlight = this.beat().finally(() => (this.inFlight = null));
    }, delayMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    let next = this.opts.heartbeatIntervalMs;
    try {
      const res = await this.opts.channel.send(
        'BrokerHeartbeat',
        {
          brokerId: this.opts.nodeId,
          brokerEpoch: this.epoch,
          currentMetadataOffset: this.opts.metadataOffset(),
          wantFence: false,
          wantShutDown: this.wantShutDown,
          offlineLogDirs: [],
        },
        { timeoutMs: Math.max(1000, this.opts.heartbeatIntervalMs * 2) },
      );
      if (this.stopped) return;
      if (res.errorCode === ErrorCode.STALE_BROKER_EPOCH || res.errorCode === ErrorCode.BROKER_ID_NOT_REGISTERED) {
        this.opts.logger.warn(`the controller answered our heartbeat with ${errorName(res.errorCode)}: registering again`);
        this.setFenced(true);
        await this.register();
        next = 0;
      } else if (res.errorCode !== ErrorCode.NONE) {
        this.opts.logger.warn(`heartbeat failed: ${errorName(res.errorCode)}`);
      } else {
        this.setFenced(res.isFenced);
        if (res.shouldShutDown) {
          this.shouldShutDown = true;
          for (const w of this.shutdownWaiters.splice(0)) w(true);
        }
        if (this.wantShutDown && !this.shouldShutDown) next = Math.min(next, 50);
        else if (res.isFenced && !this.wantShutDown) next = 10;
      }
    } catch (err) {
      if (this.stopped) return;
      this.opts.logger.warn(`heartbeat to the controller failed: ${(err as Error).message}`);
      next = Math.min(next, 200);
    }
    if (!this.shouldShutDown) this.schedule(next);
  }

  private setFenced(fenced: boolean): void {
    if (fenced === this.fenced) return;
    this.fenced = fenced;
    this.opts.logger.info(fenced ? 'the controller fenced this broker' : 'the controller unfenced this broker');
    if (!fenced) for (const w of this.unfencedWaiters.splice(0)) w();
    this.opts.onFencedChange?.(fenced);
  }

  /** Resolves once the controller has unfenced this broker; rejects after `timeoutMs`. */
  waitUnfenced(timeoutMs: number): Promise<void> {
    if (!this.fenced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `the controller did not unfence this broker within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      this.unfencedWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Asks the controller to move this broker's leaderships away and waits (at most `timeoutMs`)
   * until it says the broker may stop. Returns whether it did.
   */
  async controlledShutdown(timeoutMs: number): Promise<boolean> {
    if (this.stopped || this.epoch < 0n) return false;
    this.wantShutDown = true;
    if (this.shouldShutDown) return true;
    const done = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
      this.shutdownWaiters.push((ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
    });
    if (!this.inFlight) this.schedule(0);
    return done;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.shutdownWaiters.splice(0)) w(false);
    await this.inFlight?.catch(() => undefined);
  }
}
