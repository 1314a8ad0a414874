/**
 * The client side of each measurement, run in the bench process against a broker endpoint (krill or
 * the null sink, which cannot tell them apart):
 *  - produce: a KafkaJS 2.2.4 producer sending batches of 1,000 messages to one partition, with a
 *    fixed number of send() calls in flight (pipelined on KafkaJS's one connection to the leader);
 *  - fetch (kafkajs): the requests a KafkaJS consumer sends (its internal Broker.fetch: Fetch v11,
 *    read_committed, maxBytes 10 MB, 1 MB per partition, one request in flight), with KafkaJS
 *    decoding every record, as a consumer would;
 *  - fetch (raw): the same Fetch v11 requests from the bench's own wire client, which reads only
 *    batch headers, so the broker rather than the client's decoding is the bottleneck.
 */
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { WireClient } from './wire-client';

export interface ClientResult {
  seconds: number;
  messages: number;
  /** Message value bytes moved (payload only, no keys, headers or protocol overhead). */
  payloadBytes: number;
  /** CPU seconds of the bench process (the client) during the workload. */
  clientCpu: number;
}

export function now(): bigint {
  return process.hrtime.bigint();
}

/** CPU seconds (user + system) of this process so far. */
export function cpuNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** The nearest-rank `p`th percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const BATCH_MESSAGES = 1000;
export const FETCH_MAX_BYTES = 10485760; // KafkaJS consumer defaults
export const FETCH_PARTITION_MAX_BYTES = 1048576;

/** The slice of KafkaJS's internal Cluster/Broker the fetch workload uses (not in kafkajs' typings). */
interface KafkaJsBroker {
  fetch(req: {
    replicaId?: number;
    isolationLevel?: number;
    maxWaitTime?: number;
    minBytes?: number;
    maxBytes?: number;
    topics: { topic: string; partitions: { partition: number; fetchOffset: string; maxBytes: number }[] }[];
  }): Promise<{
    responses: { topicName: string; partitions: { partition: number; errorCode: number; highWatermark: string; messages: { offset: string; value: Buffer | null }[] }[] }[];
  }>;
}
interface KafkaJsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number; leader: number }[];
  findBroker(q: { nodeId: number }): Promise<KafkaJsBroker>;
}

/** One KafkaJS client (producer, admin, and a bare cluster for fetches) bound to one broker. */
export class KafkaJsTarget {
  readonly kafka: Kafka;
  private producer: Producer | null = null;
  private cluster: KafkaJsCluster | null = null;

  /** `ssl`: KafkaJS's TLS options, for a broker's SSL listener. */
  constructor(
    readonly bootstrap: string,
    ssl?: { ca: string[]; cert?: string; key?: string },
  ) {
    this.kafka = new Kafka({ clientId: 'krill-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 }, ...(ssl ? { ssl } : {}) });
  }

  async createTopic(topic: string): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    } finally {
      await admin.disconnect();
    }
  }

  async getProducer(): Promise<Producer> {
    if (!this.producer) {
      this.producer = this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
      await this.producer.connect();
    }
    return this.producer;
  }

  /** KafkaJS's Cluster, made the way kafka.producer()/consumer() make theirs (private factory). */
  async getCluster(): Promise<KafkaJsCluster> {
    if (!this.cluster) {
      const k = this.kafka as unknown as Record<symbol, (o: object) => KafkaJsCluster>;
      const sym = Object.getOwnPropertySymbols(k).find((s) => s.description === 'private:Kafka:createCluster');
      if (!sym) throw new Error('KafkaJS internals changed: no private:Kafka:createCluster');
      this.cluster = k[sym]({ metadataMaxAge: 300000, allowAutoTopicCreation: false });
      await this.cluster.connect();
    }
    return this.cluster;
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
    await this.cluster?.disconnect().catch(() => undefined);
    this.producer = null;
    this.cluster = null;
  }
}

const messageSets = new Map<number, { value: Buffer }[]>();

/** 1,000 messages of `size` random (incompressible) value bytes, no key; reused across sends. */
export function messagesOf(size: number): { value: Buffer }[] {
  let m = messageSets.get(size);
  if (!m) {
    m = [];
    for (let i = 0; i < BATCH_MESSAGES; i++) m.push({ value: randomBytes(size) });
    messageSets.set(size, m);
  }
  return m;
}

/** Sends `batches` batches of 1,000 `size`-byte messages with `inFlight` send() calls outstanding. */
export async function produceKafkaJs(
  target: KafkaJsTarget,
  topic: string,
  size: number,
  batches: number,
  acks: number,
  inFlight: number,
): Promise<ClientResult> {
  const producer = await target.getProducer();
  const messages = messagesOf(size);
  let next = 0;
  const cpu0 = cpuNow();
  const t0 = now();
  const worker = async (): Promise<void> => {
    while (next < batches) {
      next++;
      await producer.send({ topic, acks, timeout: 30000, messages });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = Number(now() - t0) / 1e9;
  return { seconds, messages: batches * BATCH_MESSAGES, payloadBytes: batches * BATCH_MESSAGES * size, clientCpu: cpuNow() - cpu0 };
}

/** Reads partition 0 of `topic` from offset 0 until `expected` messages arrived, as a KafkaJS consumer would. */
export async function fetchKafkaJs(target: KafkaJsTarget, topic: string, expected: number): Promise<ClientResult> {
  const cluster = await target.getCluster();
  await cluster.addTargetTopic(topic);
  const pm = cluster.findTopicPartitionMetadata(topic).find((p) => p.partitionId === 0);
  if (!pm) throw new Error(`no metadata for ${topic}-0`);
  const broker = await cluster.findBroker({ nodeId: pm.leader });
  let offset = 0;
  let messages = 0;
  let payloadBytes = 0;
  const cpu0 = cpuNow();
  const t0 = now();
  while (messages < expected) {
    const { responses } = await broker.fetch({
      replicaId: -1,
      isolationLevel: 1,
      maxWaitTime: 5000,
      minBytes: 1,
      maxBytes: FETCH_MAX_BYTES,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset: String(offset), maxBytes: FETCH_PARTITION_MAX_BYTES }] }],
    });
    const p = responses[0]?.partitions[0];
    if (!p) throw new Error('fetch response without the partition');
    if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode} at offset ${offset}`);
    if (p.messages.length === 0) throw new Error(`empty fetch at offset ${offset} (high watermark ${p.highWatermark}, expected ${expected})`);
    for (const m of p.messages) {
      // A consumer skips records below its fetch offset (a batch is returned whole).
      if (Number(m.offset) < offset) continue;
      messages++;
      payloadBytes += m.value?.length ?? 0;
    }
    offset = Number(p.messages[p.messages.length - 1].offset) + 1;
  }
  const seconds = Number(now() - t0) / 1e9;
  return { seconds, messages, payloadBytes, clientCpu: cpuNow() - cpu0 };
}

/**
 * The same Fetch v11 loop from the bench's wire client, reading batch headers only (record count
 * and last offset); payload bytes are estimated as messages x size. Reads the partition `passes`
 * times from offset 0 (this loop is fast enough that one pass over a small topic is too short to time).
 */
export async function fetchRaw(host: string, port: number, topic: string, expected: number, size: number, passes = 1): Promise<ClientResult> {
  const client = await WireClient.connect(host, port);
  try {
    let offset = 0;
    let messages = 0;
    let pass = 1;
    const cpu0 = cpuNow();
    const t0 = now();
    while (messages < expected * passes) {
      if (messages === expected * pass) {
        pass++;
        offset = 0;
      }
      const res = await client.request('Fetch', 11, {
        replicaId: -1,
        maxWaitMs: 5000,
        minBytes: 1,
        maxBytes: FETCH_MAX_BYTES,
        isolationLevel: 1,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: BigInt(offset), logStartOffset: -1n, partitionMaxBytes: FETCH_PARTITION_MAX_BYTES }] }],
        forgottenTopicsData: [],
        rackId: '',
      });
      if (res.errorCode !== 0) throw new Error(`fetch error ${res.errorCode}`);
      const p = res.responses[0]?.partitions[0];
      if (!p) throw new Error('fetch response without the partition');
      if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode} at offset ${offset}`);
      const recs = p.records;
      if (!recs || recs.length < 61) throw new Error(`empty fetch at offset ${offset} (high watermark ${p.highWatermark}, expected ${expected})`);
      let next = offset;
      for (let pos = 0; pos + 61 <= recs.length; ) {
        const len = recs.readInt32BE(pos + 8) + 12;
        if (pos + len > recs.length) break; // a trailing partial batch
        const base = Number(recs.readBigInt64BE(pos));
        const last = base + recs.readInt32BE(pos + 23);
        const count = recs.readInt32BE(pos + 57);
        // Records below the fetch offset in the first batch are skipped, as a consumer would.
        if (last >= offset) messages += base >= offset ? count : last - offset + 1;
        next = last + 1;
        pos += len;
      }
      if (next === offset) throw new Error(`no whole batch in a ${recs.length}-byte fetch at offset ${offset}`);
      offset = next;
    }
    const seconds = Number(now() - t0) / 1e9;
    return { seconds, messages, payloadBytes: messages * size, clientCpu: cpuNow() - cpu0 };
  } finally {
    client.close();
  }
}

/** Latest offset of partition 0 (ListOffsets v5, timestamp -1). */
export async function highWatermark(host: string, port: number, topic: string): Promise<number> {
  const client = await WireClient.connect(host, port);
  try {
    const res = await client.request('ListOffsets', 5, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    const p = res.topics[0]?.partitions[0];
    if (!p || p.errorCode !== 0) throw new Error(`ListOffsets ${topic}-0 failed: ${p?.errorCode}`);
    return Number(p.offset);
  } finally {
    client.close();
  }
}

/** The slice of node-rdkafka (librdkafka's Node binding) the bench uses; loaded only when installed. */
interface RdkafkaProducer {
  connect(opts: object, cb: (err: Error | null) => void): void;
  produce(topic: string, partition: number, value: Buffer, key: null): unknown;
  poll(): void;
  flush(timeoutMs: number, cb: (err: Error | null) => void): void;
  disconnect(cb: () => void): void;
  on(event: 'event.error', cb: (err: Error) => void): void;
}
interface RdkafkaModule {
  Producer: new (conf: Record<string, string | number | boolean>, topicConf: object) => RdkafkaProducer;
  librdkafkaVersion: string;
}

let rdkafka: RdkafkaModule | null | undefined;

/** node-rdkafka if this checkout has it installed (a devDependency for librdkafka compat tests), else null. */
export function loadRdkafka(): RdkafkaModule | null {
  if (rdkafka === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      rdkafka = require('node-rdkafka') as RdkafkaModule;
    } catch {
      rdkafka = null;
    }
  }
  return rdkafka;
}

export const RDKAFKA_IN_FLIGHT = 5;

/**
 * librdkafka producer (via node-rdkafka): `count` messages of `size` bytes to partition 0, batched
 * by librdkafka itself (batch.num.messages 1000, linger.ms 5, max.in.flight 5, no compression, no
 * delivery-report callbacks: completion is flush(), and the caller checks the high watermark).
 * The messages are handed over one produce() call each (librdkafka's API), which is where most of
 * the client's CPU goes.
 * `idempotent`: enable.idempotence (acks must be -1), with `primeTopic` (an existing topic) getting
 * one message, flushed, before the timed window: librdkafka asks for its producer id from a timer
 * that, when no broker connection is up yet at its first tick, retries 500 ms to 1 s later, and
 * holds every message until it has the id, which would put a client-side wait of that size into
 * a sub-second measurement on either target. The primed message goes to another topic, so the
 * measured topic's sequences still start at 0.
 */
export async function produceRdkafka(
  bootstrap: string,
  topic: string,
  size: number,
  count: number,
  acks: number,
  eos: { idempotent: boolean; primeTopic: string } | null = null,
): Promise<ClientResult> {
  const mod = loadRdkafka();
  if (!mod) throw new Error('node-rdkafka is not installed');
  const p = new mod.Producer(
    {
      'bootstrap.servers': bootstrap,
      'client.id': 'krill-bench',
      acks,
      'linger.ms': 5,
      'batch.num.messages': BATCH_MESSAGES,
      'queue.buffering.max.messages': 1000000,
      'queue.buffering.max.kbytes': 1048576,
      'max.in.flight.requests.per.connection': RDKAFKA_IN_FLIGHT,
      'compression.codec': 'none',
      'enable.idempotence': eos?.idempotent ?? false,
      'dr_cb': false,
    },
    {},
  );
  let failure: Error | null = null;
  p.on('event.error', (err) => (failure ??= err));
  await new Promise<void>((resolve, reject) => p.connect({ timeout: 10000 }, (err) => (err ? reject(err) : resolve())));
  try {
    const value = randomBytes(size);
    if (eos?.idempotent) {
      p.produce(eos.primeTopic, 0, value, null);
      await new Promise<void>((resolve, reject) => p.flush(30000, (err) => (err ? reject(err) : resolve())));
    }
    const cpu0 = cpuNow();
    const t0 = now();
    let i = 0;
    await new Promise<void>((resolve, reject) => {
      const pump = (): void => {
        try {
          while (i < count) {
            p.produce(topic, 0, value, null);
            i++;
          }
        } catch (err) {
          // Local queue full: let librdkafka send, then continue.
          if ((err as { code?: number }).code !== -184) return reject(err as Error);
          p.poll();
          setImmediate(pump);
          return;
        }
        p.flush(60000, (err) => (err ? reject(err) : resolve()));
      };
      pump();
    });
    const seconds = Number(now() - t0) / 1e9;
    if (failure) throw failure;
    return { seconds, messages: count, payloadBytes: count * size, clientCpu: cpuNow() - cpu0 };
  } finally {
    await new Promise<void>((resolve) => p.disconnect(() => resolve()));
  }
}
