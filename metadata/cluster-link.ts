/**
 * ClusterLink: everything a broker of a multi-node cluster (`process.roles=broker` with
 * `controller.quorum.bootstrap.servers`, or a one-entry `controller.quorum.voters`) needs to talk to its controller, over the Kafka protocol:
 *
 * - the cluster id, learnt at startup with DescribeCluster (endpoint type controller);
 * - the metadata log, read with Fetch (MetadataFetcher, long polling on a channel of its own);
 * - membership: BrokerRegistration, BrokerHeartbeat, controlled shutdown (BrokerLifecycleManager);
 * - admin writes forwarded to the controller (RemoteController) and AlterPartition, on a second
 *   channel, whose requests the controller answers promptly.
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
import { QUORUM_VOTERS_CONFIG, parseVoterConnections } from './raft/quorum-config';
import { BrokerLifecycleManager } from './broker-lifecycle-manager';
import { RemoteController } from './remote-controller';
import type { MetadataBatch } from './metadata-log';

export interface ControllerAddress {
  host: string;
  port: number;
}

/**
 * The controller a cluster broker follows: the first of `controller.quorum.bootstrap.servers`
 * (host:port[,host:port...]), else its one static `controller.quorum.voters` entry; null for a
 * combined node.
 */
export function controllerAddressOf(config: KafkaConfig): ControllerAddress | null {
  if (!config.processRoles().includes('broker') || config.processRoles().includes('controller')) return null;
  const list = config.getList('controller.quorum.bootstrap.servers') ?? [];
  const first = list.find((s) => s.trim() !== '');
  if (!first) {
    // A static controller.quorum.voters of one controller (broker/quorum-support.ts refuses more).
    const voters = [...parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false).values()];
    return voters.length === 1 ? { host: voters[0].host, port: voters[0].port } : null;
  }
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(first.trim());
  if (!m) throw new Error(`invalid controller.quorum.bootstrap.servers entry ${first} (expected host:port)`);
  return { host: m[1], port: Number(m[2]) };
}

function channel(addr: ControllerAddress, nodeId: number, config: KafkaConfig, purpose: string, security: ClientSecurity | undefined): NodeChannel {
  return new NodeChannel(addr.host, addr.port, {
    clientId: `krill-broker-${nodeId}-${purpose}`,
    timeoutMs: Math.min(10_000, config.getInt('controller.socket.timeout.ms')),
    requestTimeoutMs: config.getInt('controller.socket.timeout.ms'),
    ...security,
  });
}

/** Asks the controller for the cluster id, retrying until `timeoutMs`. */
export async function discoverClusterId(
  addr: ControllerAddress,
  nodeId: number,
  config: KafkaConfig,
  timeoutMs: number,
  logger: Logger,
  security?: ClientSecurity,
): Promise<string> {
  const ch = channel(addr, nodeId, config, 'bootstrap', security);
  const deadline = Date.now() + timeoutMs;
  let backoff = 50;
  try {
    for (;;) {
      try {
        const res = await ch.send('DescribeCluster', { includeClusterAuthorizedOperations: false, endpointType: 2 }, { timeoutMs: 5000 });
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `DescribeCluster on the controller: ${errorName(res.errorCode)}`);
        return res.clusterId;
      } catch (err) {
        if (Date.now() + backoff > deadline) {
          throw new Error(`cannot reach the controller at ${addr.host}:${addr.port}: ${(err as Error).message}`);
        }
        logger.debug(`waiting for the controller at ${addr.host}:${addr.port}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(1000, backoff * 2);
      }
    }
  } finally {
    ch.close();
  }
}

export interface ClusterLinkOptions {
  address: ControllerAddress;
  nodeId: number;
  clusterId: string;
  config: KafkaConfig;
  logger: Logger;
  lastAppliedOffset: () => bigint;
  applyMetadata: (batches: MetadataBatch[]) => void;
  listeners: () => { name: string; host: string; port: number; securityProtocol: number }[];
  /** TLS (and SASL) towards the controller listener, when it is secured. */
  security?: ClientSecurity;
}

export class ClusterLink {
  /** Heartbeats, AlterPartition, forwarded admin requests, catch-up fetches. */
  readonly controlChannel: NodeChannel;
  readonly fetcher: MetadataFetcher;
  readonly lifecycle: BrokerLifecycleManager;
  readonly remoteController: RemoteController;

  constructor(readonly opts: ClusterLinkOptions) {
    const { address, nodeId, config, logger } = opts;
    this.controlChannel = channel(address, nodeId, config, 'control', opts.security);
    this.fetcher = new MetadataFetcher({
      channel: channel(address, nodeId, config, 'metadata', opts.security),
      syncChannel: this.controlChannel,
      nodeId,
      logger: logger.child('metadata-fetcher'),
      lastAppliedOffset: opts.lastAppliedOffset,
      apply: opts.applyMetadata,
      maxWaitMs: Math.min(500, config.getInt('controller.quorum.fetch.timeout.ms')),
    });
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
    this.controlChannel.close();
  }
}
