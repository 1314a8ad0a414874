/**
 * Two client workloads beyond plain produce/fetch:
 *  - consumeGroup: a KafkaJS 2.2.4 consumer in a fresh group (FindCoordinator, JoinGroup, SyncGroup,
 *    OffsetFetch, Heartbeat, then Fetch) reading a whole topic back with eachBatch, fromBeginning;
 *  - produceLatency: KafkaJS sends of `perSend` messages each with a fixed number in flight, timing
 *    every send() (acks=-1 on a replicated topic is where the latency is).
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { cpuNow, messagesOf, now, percentile, type ClientResult, type KafkaJsTarget } from './workloads';

export interface GroupResult extends ClientResult {
  /** consumer.run() to the GROUP_JOIN event (join + sync, incl. the broker's initial rebalance delay), ms. */
  joinMs: number;
}

let groupSeq = 0;

/**
 * Reads every message of `topic` (expected: `expected`) with a KafkaJS group consumer. The timed
 * window starts at GROUP_JOIN (the join itself, which includes group.initial.rebalance.delay.ms, is
 * reported apart) and ends when the last expected message has been handed to eachBatch.
 */
export async function consumeGroup(target: KafkaJsTarget, topic: string, expected: number): Promise<GroupResult> {
  // Its own client with KafkaJS's default retries: the first FindCoordinator may meet
  // COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created, which a consumer retries.
  const kafka = new Kafka({ clientId: 'krill-bench-consumer', brokers: [target.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `krill-bench-group-${process.pid}-${++groupSeq}`,
    allowAutoTopicCreation: false,
    // KafkaJS consumer defaults, spelled out: what the fetch kafkajs rows also send.
    maxBytes: 10485760,
    maxBytesPerPartition: 1048576,
    maxWaitTimeInMs: 5000,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let messages = 0;
    let payloadBytes = 0;
    const tRun = now();
    let tJoin = 0n;
    let cpu0 = 0;
    let crashed: Error | null = null;
    const joined = consumer.on(consumer.events.GROUP_JOIN, () => {
      if (tJoin === 0n) {
        tJoin = now();
        cpu0 = cpuNow();
      }
    });
    const offCrash = consumer.on(consumer.events.CRASH, (e) => (crashed = (e.payload as { error: Error }).error));
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    let tEnd = 0n;
    await consumer.run({
      autoCommit: true,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        for (const m of batch.messages) {
          messages++;
          payloadBytes += m.value?.length ?? 0;
        }
        if (batch.messages.length) resolveOffset(batch.lastOffset());
        await heartbeat();
        if (messages >= expected && tEnd === 0n) {
          tEnd = now();
          finish();
        }
      },
    });
    const deadline = setTimeout(() => finish(), 120000);
    await done;
    clearTimeout(deadline);
    joined();
    offCrash();
    if (crashed) throw crashed;
    if (messages < expected) throw new Error(`group consumer read ${messages} of ${expected} messages of ${topic} within 120 s`);
    const clientCpu = cpuNow() - cpu0;
    return {
      seconds: Number(tEnd - tJoin) / 1e9,
      messages,
      payloadBytes,
      clientCpu,
      joinMs: Number(tJoin - tRun) / 1e6,
    };
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

export interface LatencyResult extends ClientResult {
  sends: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export async function createReplicatedTopic(target: KafkaJsTarget, topic: string, replicationFactor: number, minIsr: number): Promise<void> {
  const admin: Admin = target.kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: 1, replicationFactor, configEntries: [{ name: 'min.insync.replicas', value: String(minIsr) }] }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}

/** `sends` send() calls of `perSend` `size`-byte messages, `inFlight` outstanding, each one timed. */
export async function produceLatency(
  target: KafkaJsTarget,
  topic: string,
  size: number,
  perSend: number,
  sends: number,
  acks: number,
  inFlight: number,
): Promise<LatencyResult> {
  const producer = await target.getProducer();
  const messages = messagesOf(size).slice(0, perSend);
  const lat: number[] = [];
  let next = 0;
  const cpu0 = cpuNow();
  const t0 = now();
  const worker = async (): Promise<void> => {
    while (next < sends) {
      next++;
      const s = now();
      await producer.send({ topic, acks, timeout: 30000, messages });
      lat.push(Number(now() - s) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = Number(now() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  return {
    seconds,
    messages: sends * perSend,
    payloadBytes: sends * perSend * size,
    clientCpu: cpuNow() - cpu0,
    sends,
    p50Ms: percentile(lat, 50),
    p99Ms: percentile(lat, 99),
    maxMs: lat[lat.length - 1],
  };
}

/** High watermark of partition 0 through KafkaJS admin (ListOffsets to the partition's leader, wherever it is). */
export async function leaderHighWatermark(target: KafkaJsTarget, topic: string): Promise<number> {
  const admin: Admin = target.kafka.admin();
  await admin.connect();
  try {
    const offs = await admin.fetchTopicOffsets(topic);
    const p = offs.find((x) => x.partition === 0);
    if (!p) throw new Error(`no offsets for ${topic}-0`);
    return Number(p.high);
  } finally {
    await admin.disconnect();
  }
}
