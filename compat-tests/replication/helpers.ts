/**
 * Shared pieces of the replication suites: a quiet in-process cluster with short timers, bounded
 * waits on conditions (checked when the cluster changes state or on a short interval, never
 * unbounded), metadata as a client sees it, and free ports for nodes that must know them in advance.
 */
import * as net from 'node:net';
import { startCluster, type RunningCluster, type StartClusterOptions } from '../../broker/cluster';
import { connect, metadata, type BrokerConnection } from '../../client/network-client';
import type { ConfigInput } from '../../config/kafka-config';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

/** Timers small enough for tests: fencing within ~1 s, ISR changes within ~1.5 s. */
export const FAST_CLUSTER_CONFIG: Record<string, ConfigInput> = {
  'broker.heartbeat.interval.ms': '100',
  'broker.session.timeout.ms': '1000',
  'replica.lag.time.max.ms': '1500',
  'replica.fetch.wait.max.ms': '100',
  'replica.fetch.backoff.ms': '50',
  'controller.quorum.fetch.timeout.ms': '500',
  'auto.leader.rebalance.enable': 'false',
  'offsets.topic.num.partitions': '3',
  'log.initial.task.delay.ms': '0',
};

export async function fastCluster(opts: Partial<StartClusterOptions> & { config?: Record<string, ConfigInput> } = {}): Promise<RunningCluster> {
  return startCluster({
    brokers: 3,
    logLevel: (process.env.KRILL_LOG_LEVEL as 'warn' | undefined) ?? 'error',
    ...opts,
    config: { ...FAST_CLUSTER_CONFIG, ...(opts.config ?? {}) },
  });
}

/** Polls `check` every `everyMs` until it returns a truthy value; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function connectTo(hostPort: string): Promise<BrokerConnection> {
  const [host, port] = hostPort.split(':');
  return connect(host, Number(port), { clientId: 'replication-test' });
}

/** Leader / ISR / epoch of every partition of `topic`, as broker `via` answers Metadata. */
export async function partitionsOf(hostPort: string, topic: string): Promise<{ partition: number; leader: number; leaderEpoch: number; isr: number[]; replicas: number[] }[]> {
  const conn = await connectTo(hostPort);
  try {
    const md = await metadata(conn, [topic], { allowAutoTopicCreation: false });
    const t = md.topics.find((x) => x.name === topic);
    if (!t || t.errorCode !== 0) throw new Error(`topic ${topic} not in metadata (error ${t?.errorCode})`);
    return t.partitions
      .map((p) => ({ partition: p.partitionIndex, leader: p.leaderId, leaderEpoch: p.leaderEpoch, isr: [...p.isrNodes].sort(), replicas: p.replicaNodes }))
      .sort((a, b) => a.partition - b.partition);
  } finally {
    await conn.close();
  }
}

export async function createTopic(cluster: RunningCluster, name: string, partitions: number, replicationFactor: number, configs: Record<string, string> = {}): Promise<void> {
  const conn = await connectTo(cluster.bootstrapServers[0]);
  try {
    const res = await conn.send('CreateTopics', undefined, {
      topics: [{ name, numPartitions: partitions, replicationFactor, assignments: [], configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })) }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    if (res.topics[0].errorCode !== 0) throw new Error(`CreateTopics ${name}: error ${res.topics[0].errorCode} ${res.topics[0].errorMessage}`);
  } finally {
    await conn.close();
  }
}

/** A port nobody listens on right now (for nodes whose port must be known before they start: voters name each other). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
