/**
 * The public fault-injection control of one node, as `startBroker(...).control`,
 * `startCluster(...).control.broker(id)` and `.control.controller` give it (docs/operations.md):
 *
 *   RequestControl (any node, brokers and the controller)
 *     intercept(match, fault, { times, probability })  answer with an error, delay, drop, close
 *     record(match)                                     the requests the node received
 *     pause() / resume()                                hold every request until resumed
 *     slow(ms)                                          added latency on every request
 *   BrokerControl (a broker) adds
 *     failStorage({ op, file, topic, partition, errno, times })   fail a log, index or checkpoint call
 *     stop() / start()                                  clean shutdown keeping the data / restart
 *
 * A control outlives the servers it is attached to: on a restart the owner (startBroker or
 * startCluster) attaches the new server, and rules, recordings, pause, latency and the storage
 * faults carry over. The owner also provides stop/start (`bindLifecycle`).
 */
import type { Logger } from '../../common/logger';
import type { FaultyFs } from '../../storage/testing/faulty-fs';
import type { RequestInterceptor } from '../request-dispatcher';
import { RequestFaults, type FaultOptions, type InterceptRule, type RecordOptions, type RequestFault, type RequestMatch, type RequestRecording } from './request-faults';
import { armStorageFault, type StorageFault } from './storage-faults';

/** What a control needs of a running node. */
export interface ControlledNode {
  readonly logger: Logger;
  readonly dispatcherInterceptors: RequestInterceptor[];
  /** Topic ids to names (brokers; absent on the controller node). */
  topicName?(id: string): string | undefined;
}

export interface NodeLifecycle {
  stop(): Promise<void>;
  start(): Promise<void>;
  readonly running: boolean;
}

export class RequestControl {
  /** @internal */
  readonly requestFaults: RequestFaults;
  private attachedTo: RequestInterceptor[] | null = null;

  constructor(readonly nodeId: number, log: Logger) {
    this.requestFaults = new RequestFaults(log);
  }

  /** @internal The owner attaches each server it starts for this node. */
  attach(node: ControlledNode): void {
    if (this.attachedTo === node.dispatcherInterceptors) return;
    this.attachedTo = node.dispatcherInterceptors;
    node.dispatcherInterceptors.push(this.requestFaults.interceptor);
    this.requestFaults.log = node.logger.child('fault-injection');
    this.requestFaults.topicName = (id) => node.topicName?.(id);
  }

  /**
   * Applies `fault` to the requests that meet `match`: `{ error: 'NOT_LEADER_OR_FOLLOWER' }` (a real
   * response of that API and version, every entry carrying the error), `{ delayMs }`, 'drop',
   * 'close' or 'closeAfterHandling'. `times` limits it to that many requests, `probability` makes
   * it apply to a random share of them; without either it applies until removed.
   */
  intercept(match: RequestMatch, fault: RequestFault, opts?: FaultOptions): InterceptRule {
    return this.requestFaults.intercept(match, fault, opts);
  }

  /** Records every request meeting `match` (all requests without one) from now until stop(); `bodies: false` keeps no bodies. */
  record(match?: RequestMatch, opts?: RecordOptions): RequestRecording {
    return this.requestFaults.record(match, opts);
  }

  /** Holds every request this node receives until resume() (the node stops serving, connections stay). */
  pause(): void {
    this.requestFaults.pause();
  }

  resume(): void {
    this.requestFaults.resume();
  }

  get paused(): boolean {
    return this.requestFaults.paused;
  }

  /** Adds `ms` of latency to every request this node serves (0 ends it). */
  slow(ms: number): void {
    this.requestFaults.slow(ms);
  }

  /** Removes every rule and ends pause and latency (recordings keep what they have). */
  clear(): void {
    this.requestFaults.clear();
  }
}

export class BrokerControl extends RequestControl {
  private lifecycle: NodeLifecycle | null = null;

  constructor(
    nodeId: number,
    log: Logger,
    /** @internal The file system the broker's partition logs use. */
    readonly storageFs: FaultyFs,
  ) {
    super(nodeId, log);
  }

  /** @internal */
  bindLifecycle(l: NodeLifecycle): void {
    this.lifecycle = l;
  }

  /** Fails the next `times` (default 1) `op` calls on a log, index or checkpoint file (storage-faults.ts). */
  failStorage(f: StorageFault): void {
    armStorageFault(this.storageFs, f);
    this.requestFaults.log.info(`fault injection: storage fault armed (${f.op} ${f.file}${f.topic !== undefined ? ` of ${f.topic}${f.partition !== undefined ? `-${f.partition}` : ''}` : ''}, ${f.errno ?? 'EIO'}, ${f.times ?? 1} time(s))`);
  }

  /** The storage calls failed so far, oldest first. */
  get storageFaultsInjected(): readonly { op: string; path: string; errno: string }[] {
    return this.storageFs.injected;
  }

  /** Storage faults armed and not yet used up. */
  get pendingStorageFaults(): number {
    return this.storageFs.pendingFaults;
  }

  /** Clean shutdown of this broker (a pause is released first); its node id, port and data directory are kept for start(). */
  async stop(): Promise<void> {
    await this.need().stop();
  }

  /** Starts this broker again after stop(), with the same node id, port and data directory. */
  async start(): Promise<void> {
    await this.need().start();
  }

  get running(): boolean {
    return this.lifecycle?.running ?? false;
  }

  override clear(): void {
    super.clear();
    this.storageFs.clearFaults();
  }

  private need(): NodeLifecycle {
    if (!this.lifecycle) throw new Error(`broker ${this.nodeId} has no lifecycle bound`);
    return this.lifecycle;
  }
}
