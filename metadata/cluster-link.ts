/**
 * ClusterLink: everything a broker of a multi-node cluster (`process.roles=broker` with
 * `controller.quorum.voters` or `controller.quorum.bootstrap.servers`) needs to talk to its
 * controllers, over the Kafka protocol:
 *
 * - the cluster id, learnt at startup with DescribeCluster (endpoint type controller), asking every
 *   controller address in turn until one answers;
 * - the metadata log, long polling on a channel of its own;
 * - membership: BrokerRegistration, BrokerHeartbeat, controlled shutdown (BrokerLifecycleManager);
 * - admin writes forwarded to the controller (RemoteController) and AlterPartition, on a second
 *   channel, whose requests the controller answers promptly.
 *
 * Two shapes, from the config (`controllerEndpointsOf`):
 * - one controller (a one-entry `controller.quorum.voters`, or one bootstrap server): the metadata
 *   log is read with plain Fetch (MetadataFetcher) and requests go to that address (a NodeChannel),
 *   as before the quorum existed;
 * - a KRaft controller quorum (several voters, or several bootstrap servers): the broker is an
 *   observer of the quorum (MetadataObserver: KRaft Fetch from the leader, applied up to the high
 *   watermark) and every request to the active controller goes through one ControllerChannel, which
 *   follows the leader the observer knows and resends on NOT_CONTROLLER or a lost connection.
 *
 * KafkaServer owns one of these in cluster mode (and none as a combined single node). Its
 * connections are secured as the broker's controller listener says (`security`: TLS when that
 * listener is SSL / SASL_SSL), which the broker wiring builds.
 */
import { ErrorCode, KafkaError, errorName } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { KafkaConfig } from '../config/kafka-config';
import { NodeChannel } from '../client/node-channel';
import type { ClientSecurity } from '../client/network-client';
import { MetadataFetcher } from './metadata-fetcher';
import { MetadataObserver } from './metadata-observer';
import { ControllerChannel, type ControllerRequestChannel } from './controller-channel';
import {
  QUORUM_FETCH_TIMEOUT_MS_CONFIG,
  QUORUM_REQUEST_TIMEOUT_MS_CONFIG,
  QUORUM_RETRY_BACKOFF_MS_CONFIG,
  QUORUM_VOTERS_CONFIG,
  FETCH_MAX_WAIT_MS,
  parseVoterConnections,
} from './raft/quorum-config';
import { BrokerLifecycleManager } from './broker-lifecycle-manager';
import { RemoteController } from './remote-controller';
import type { MetadataBatch } from './metadata-log';
import type { MetadataCache } from './metadata-cache';

export interface ControllerAddress {
  host: string;
  port: number;
}

/** Where a cluster broker finds its controllers. */
export interface ControllerEndpoints {
  /** `controller.quorum.voters` by id (may be empty). */
  voters: ReadonlyMap<number, ControllerAddress>;
  /** `controller.quorum.bootstrap.servers` (may be empty). */
  bootstrap: readonly ControllerAddress[];
}

const BOOTSTRAP_SERVERS_CONFIG = 'controller.quorum.bootstrap.servers';

function parseHostPort(entry: string): ControllerAddress {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(entry.trim());
  if (!m) throw new Error(`invalid ${BOOTSTRAP_SERVERS_CONFIG} entry ${entry} (expected host:port)`);
  return { host: m[1], port: Number(m[2]) };
}

/**
 * The controllers a cluster broker follows (`controller.quorum.voters`, `controller.quorum.bootstrap.servers`);
 * null for a controller, and for a combined node that is not one voter of several.
 */
export function controllerEndpointsOf(config: KafkaConfig): ControllerEndpoints | null {
  if (!config.processRoles().includes('broker')) return null;
  const combined = config.processRoles().includes('controller');
  const bootstrap = (config.getList(BOOTSTRAP_SERVERS_CONFIG) ?? []).filter((s) => s.trim() !== '').map(parseHostPort);
  const voters = new Map<number, ControllerAddress>();
  for (const [id, v] of parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false)) voters.set(id, { host: v.host, port: v.port });
  if (voters.size === 0 && bootstrap.length === 0) return null;
  // A combined node alone (no voter or one: itself) runs its controller in-process; among several
  // voters its broker follows the quorum like any cluster broker.
  if (combined && voters.size <= 1) return null;
  return { voters, bootstrap };
}

/** Whether the endpoints name a KRaft controller quorum (more than one controller) rather than one controller. */
export function isControllerQuorum(e: ControllerEndpoints): boolean {
  return e.voters.size > 1 || e.bootstrap.length > 1;
}

/** Every controller address to try, bootstrap servers first, without repeats. */
export function controllerAddresses(e: ControllerEndpoints): ControllerAddress[] {
  const out: ControllerAddress[] = [];
  for (const a of [...e.bootstrap, ...e.voters.values()]) {
    if (!out.some((o) => o.host === a.host && o.port === a.port)) out.push({ host: a.host, port: a.port });
  }
  return out;
}

/**
 * The controller a one-controller broker follows: the first of `controller.quorum.bootstrap.servers`,
 * else its one `controller.quorum.voters` entry; null for a combined node (and for a quorum: see
 * controllerEndpointsOf).
 */
export function controllerAddressOf(config: KafkaConfig): ControllerAddress | null {
  const e = controllerEndpointsOf(config);
  if (!e) return null;
  if (e.bootstrap.length > 0) return e.bootstrap[0];
  return e.voters.size === 1 ? [...e.voters.values()][0] : null;
}

function channel(addr: ControllerAddress, nodeId: number, config: KafkaConfig, purpose: string, security: ClientSecurity | undefined): NodeChannel {
  return new NodeChannel(addr.host, addr.port, {
    clientId: `krill-broker-${nodeId}-${purpose}`,
    timeoutMs: Math.min(10_000, config.getInt('controller.socket.timeout.ms')),
    requestTimeoutMs: config.getInt('controller.socket.timeout.ms'),
    ...security,
  });
}

/** Asks the controllers for the cluster id (each address in turn), retrying until `timeoutMs`. */
export async function discoverClusterId(
  endpoints: ControllerEndpoints,
  nodeId: number,
  config: KafkaConfig,
  timeoutMs: number,
  logger: Logger,
  security?: ClientSecurity,
): Promise<string> {
  const addresses = controllerAddresses(endpoints);
  const ch = channel(addresses[0], nodeId, config, 'bootstrap', security);
  const deadline = Date.now() + timeoutMs;
  let backoff = 50;
  let attempt = 0;
  const names = addresses.map((a) => `${a.host}:${a.port}`).join(', ');
  try {
    for (;;) {
      const addr = addresses[attempt++ % addresses.length];
      ch.retarget(addr.host, addr.port);
      try {
        const res = await ch.send('DescribeCluster', { includeClusterAuthorizedOperations: false, endpointType: 2 }, { timeoutMs: 5000 });
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `DescribeCluster on the controller: ${errorName(res.errorCode)}`);
        return res.clusterId;
      } catch (err) {
        if (Date.now() + backoff > deadline) {
          throw new Error(`cannot reach the controller at ${names}: ${(err as Error).message}`);
        }
        logger.debug(`waiting for the controller at ${addr.host}:${addr.port}: ${(err as Error).message}`);
        // A full round over the addresses before backing off.
        if (attempt % addresses.length === 0) {
          await new Promise((r) => setTimeout(r, backoff).unref());
          backoff = Math.min(1000, backoff * 2);
        }
      }
    }
  } finally {
    ch.close();
  }
}

/** The metadata feed of either shape (MetadataFetcher, MetadataObserver). */
export interface BrokerMetadataFeed {
  catchUp(timeoutMs: number): Promise<void>;
  start(): void;
  awaitCaughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterLinkOptions {
  endpoints: ControllerEndpoints;
  nodeId: number;
  clusterId: string;
  config: KafkaConfig;
  logger: Logger;
  lastAppliedOffset: () => bigint;
  applyMetadata: (batches: MetadataBatch[]) => void;
  /** The image applyMetadata maintains (a fetched metadata snapshot is applied as its difference to it). */
  metadataImage?: () => MetadataCache;
  listeners: () => { name: string; host: string; port: number; securityProtocol: number }[];
  /** TLS (and SASL) towards the controller listener, when it is secured. */
  security?: ClientSecurity;
}

export class ClusterLink {
  /** Heartbeats, AlterPartition, forwarded admin requests (a NodeChannel, or a ControllerChannel under a quorum). */
  readonly controlChannel: ControllerRequestChannel;
  readonly fetcher: BrokerMetadataFeed;
  /** The quorum observer (null with one controller). */
  readonly observer: MetadataObserver | null;
  readonly lifecycle: BrokerLifecycleManager;
  readonly remoteController: RemoteController;
  private readonly closeControl: () => void;

  constructor(readonly opts: ClusterLinkOptions) {
    const { endpoints, nodeId, config, logger } = opts;
    const first = controllerAddresses(endpoints)[0];
    if (!first) throw new Error('a cluster broker needs controller.quorum.voters or controller.quorum.bootstrap.servers');
    const fetchTimeoutMs = config.getInt(QUORUM_FETCH_TIMEOUT_MS_CONFIG);
    if (isControllerQuorum(endpoints)) {
      const observer = new MetadataObserver({
        nodeId,
        // The broker half of a combined voter fetches as a plain observer (-1): under its node id
        // the leader would take its position for the voter's own.
        replicaId: endpoints.voters.has(nodeId) ? -1 : nodeId,
        clusterId: opts.clusterId,
        voters: endpoints.voters,
        bootstrapServers: endpoints.bootstrap,
        channel: channel(first, nodeId, config, 'metadata', opts.security),
        syncChannel: channel(first, nodeId, config, 'metadata-sync', opts.security),
        logger: logger.child('metadata-observer'),
        apply: opts.applyMetadata,
        image: opts.metadataImage,
        // Below the fetch timeout, so that an idle leader's answers keep the observer's fetch timer alive.
        maxWaitMs: Math.min(FETCH_MAX_WAIT_MS, Math.floor(fetchTimeoutMs / 2)),
        fetchTimeoutMs,
        requestTimeoutMs: config.getInt(QUORUM_REQUEST_TIMEOUT_MS_CONFIG),
        retryBackoffMs: Math.max(10, config.getInt(QUORUM_RETRY_BACKOFF_MS_CONFIG)),
      });
      const control = new ControllerChannel({
        provider: {
          controller: () => {
            const l = observer.leader;
            return l.id >= 0 && l.endpoint ? { id: l.id, host: l.endpoint.host, port: l.endpoint.port } : null;
          },
          onChange: (listener) => observer.onLeaderChange(() => listener()),
        },
        channel: channel(first, nodeId, config, 'control', opts.security),
        logger: logger.child('controller-channel'),
        requestTimeoutMs: config.getInt('controller.socket.timeout.ms'),
        retryBackoffMs: Math.max(10, config.getInt(QUORUM_RETRY_BACKOFF_MS_CONFIG)),
      });
      this.observer = observer;
      this.fetcher = observer;
      this.controlChannel = control;
      this.closeControl = () => control.close();
    } else {
      const control = channel(first, nodeId, config, 'control', opts.security);
      this.observer = null;
      this.controlChannel = control;
      this.closeControl = () => control.close();
      this.fetcher = new MetadataFetcher({
        channel: channel(first, nodeId, config, 'metadata', opts.security),
        syncChannel: control,
        nodeId,
        logger: logger.child('metadata-fetcher'),
        lastAppliedOffset: opts.lastAppliedOffset,
        apply: opts.applyMetadata,
        maxWaitMs: Math.min(500, fetchTimeoutMs),
      });
    }
    this.lifecycle = new BrokerLifecycleManager({
      channel: this.controlChannel,
      nodeId,
      clusterId: opts.clusterId,
      logger: logger.child('lifecycle'),
      listeners: opts.listeners,
      rack: config.getString('broker.rack'),
      logDirs: config.logDirs(),
      heartbeatIntervalMs: config.getInt('broker.heartbeat.interval.ms'),
      registrationTimeoutMs: config.getInt('initial.broker.registration.timeout.ms'),
      metadataOffset: opts.lastAppliedOffset,
    });
    this.remoteController = new RemoteController({
      channel: this.controlChannel,
      logger: logger.child('controller-client'),
      awaitMetadata: () => this.fetcher.awaitCaughtUp(),
    });
  }

  get brokerEpoch(): bigint {
    return this.lifecycle.brokerEpoch;
  }

  /** Catches up with the metadata log (the startup replay); followMetadata() then keeps following it. */
  async startMetadata(): Promise<void> {
    await this.fetcher.catchUp(this.opts.config.getInt('initial.broker.registration.timeout.ms'));
  }

  followMetadata(): void {
    this.fetcher.start();
  }

  /** Registers, starts heartbeating and waits until the controller unfences this broker. */
  async join(): Promise<void> {
    await this.lifecycle.register();
    this.lifecycle.start();
    await this.lifecycle.waitUnfenced(this.opts.config.getInt('initial.broker.registration.timeout.ms'));
  }

  /** Controlled shutdown (leaderships move away first), bounded by broker.session.timeout.ms. */
  async controlledShutdown(): Promise<boolean> {
    return this.lifecycle.controlledShutdown(Math.max(1000, this.opts.config.getInt('broker.session.timeout.ms')));
  }

  async stop(): Promise<void> {
    await this.lifecycle.stop();
    await this.fetcher.stop();
    this.closeControl();
  }
}
