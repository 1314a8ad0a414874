/**
 * Leader failover in a 3-broker in-process cluster, with KafkaJS producing acks=-1 and
 * min.insync.replicas=2 all along:
 * - the leader's broker is killed (no controlled shutdown: the controller only notices when its
 *   session expires), later another leader is stopped cleanly, and both come back; the producer
 *   carries on; every acknowledged produce is in the log exactly once, on every replica, byte for
 *   byte;
 * - a leader that wrote records its followers never got (acks=1) is killed; the new leader writes
 *   other records at those offsets; the old leader comes back, truncates its divergent tail
 *   (OffsetForLeaderEpoch), copies the new leader's records and rejoins the ISR.
 */
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import type { RunningCluster } from '../../broker/cluster';
import { fetchAll } from '../../client/network-client';
import { connectTo, createTopic, fastCluster, partitionsOf, waitFor } from './helpers';
import { ContinuousProducer, checkExactlyOnce } from './workload';

jest.setTimeout(60_000);

function kafkaFor(cluster: RunningCluster): Kafka {
  return new Kafka({
    clientId: 'failover-test',
    brokers: cluster.bootstrapServers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    // Retries are ours (below), so that every attempt is visible in the record it writes.
    retry: { retries: 0 },
  });
}

/** Sends, retrying (bounded) while the cluster fails over: refused connections, NOT_LEADER, ... */
async function sendRetrying(producer: Producer, record: Parameters<Producer['send']>[0]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await producer.send(record);
      return;
    } catch (err) {
      if (attempt >= 100) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A live broker's address (any will answer Metadata). */
function anyLive(cluster: RunningCluster): string {
  const id = [...cluster.brokers.keys()][0];
  return cluster.bootstrapServers[id];
}

/** The raw bytes of a replica's log from 0 to its LEO (in-process access). */
function logBytes(cluster: RunningCluster, broker: number, topic: string, partition: number): Buffer {
  const log = cluster.broker(broker).server.replicaManager.getPartition(topic, partition)!.log;
  const out: Buffer[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = log.read(next, 1 << 20, { isolation: 'LOG_END', minOneMessage: true });
    if (r.sizeInBytes === 0) break;
    out.push(...r.records);
    const all = Buffer.concat(r.records);
    // Advance past the last batch read: baseOffset (8) + length (4) + ... lastOffsetDelta at 23.
    let pos = 0;
    while (pos < all.length) {
      const base = all.readBigInt64BE(pos);
      const len = all.readInt32BE(pos + 8);
      next = base + BigInt(all.readInt32BE(pos + 23)) + 1n;
      pos += 12 + len;
    }
  }
  return Buffer.concat(out);
}

/** Every record value of a partition, read from its leader up to the HWM. */
async function readAll(cluster: RunningCluster, topic: string, partition: number): Promise<{ values: string[]; hw: bigint }> {
  const parts = await partitionsOf(anyLive(cluster), topic);
  const leader = parts[partition].leader;
  const conn = await connectTo(cluster.bootstrapServers[leader]);
  try {
    const r = await fetchAll(conn, topic, partition, 0n);
    return { values: r.records.map((x) => x.value!.toString()), hw: r.highWatermark };
  } finally {
    await conn.close();
  }
}

/** Waits until every partition has all replicas in its ISR and every replica holds the same log. */
async function settled(cluster: RunningCluster, topic: string, partitions: number): Promise<void> {
  await waitFor(
    `${topic}: full ISRs and equal logs`,
    async () => {
      const parts = await partitionsOf(anyLive(cluster), topic);
      for (const p of parts.slice(0, partitions)) {
        if (p.isr.length !== 3 || p.leader < 0) return false;
        const leaderLog = cluster.broker(p.leader).server.replicaManager.getPartition(topic, p.partition)!.log;
        if (leaderLog.highWatermark !== leaderLog.logEndOffset) return false;
        for (const r of p.replicas) {
          const l = cluster.broker(r).server.replicaManager.getPartition(topic, p.partition)!.log;
          if (l.logEndOffset !== leaderLog.logEndOffset) return false;
        }
      }
      return true;
    },
    20_000,
    50,
  );
}

describe('failover with acks=-1 and min.insync.replicas=2', () => {
  let cluster: RunningCluster;
  let producer: Producer | undefined;
  beforeEach(async () => {
    cluster = await fastCluster({ config: { 'min.insync.replicas': '2' } });
  });
  afterEach(async () => {
    await producer?.disconnect().catch(() => undefined);
    producer = undefined;
    await cluster?.close();
  });

  test('kill the leader, stop another, bring both back: the producer carries on and every acknowledged produce is read exactly once', async () => {
    const topic = 'orders';
    await createTopic(cluster, topic, 3, 3);
    producer = kafkaFor(cluster).producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await producer.connect();
    const p = new ContinuousProducer(producer, topic);
    await p.progress(20);

    const leader0 = (await partitionsOf(anyLive(cluster), topic))[0].leader;
    await cluster.killBroker(leader0);
    await waitFor('a new leader for partition 0 from the ISR', async () => {
      const parts = await partitionsOf(anyLive(cluster), topic);
      return parts[0].leader !== leader0 && parts[0].leader >= 0;
    });
    await p.progress(20);
    await cluster.startBroker(leader0);
    await settled(cluster, topic, 3);
    await p.progress(10);

    const leader1 = (await partitionsOf(anyLive(cluster), topic))[1].leader;
    await cluster.stopBroker(leader1);
    await p.progress(20);
    await cluster.startBroker(leader1);
    await p.progress(10);
    await p.stop();
    await settled(cluster, topic, 3);

    const seen = new Map<string, number>();
    for (let part = 0; part < 3; part++) {
      const { values } = await readAll(cluster, topic, part);
      for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
      // Every replica holds exactly the leader's log.
      const parts = await partitionsOf(anyLive(cluster), topic);
      const ref = logBytes(cluster, parts[part].leader, topic, part);
      for (const r of parts[part].replicas) expect(logBytes(cluster, r, topic, part).equals(ref)).toBe(true);
    }
    checkExactlyOnce(p, seen);
    expect(p.acked.size).toBeGreaterThan(400);
  });

  test('a killed leader with an unreplicated tail truncates it when it returns, takes the new leader\'s records and rejoins the ISR', async () => {
    const topic = 'diverge';
    const conn = await connectTo(cluster.bootstrapServers[0]);
    try {
      const res = await conn.send('CreateTopics', undefined, {
        topics: [{ name: topic, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0, 1, 2] }], configs: [] }],
        timeoutMs: 5000,
        validateOnly: false,
      });
      expect(res.topics[0].errorCode).toBe(0);
    } finally {
      await conn.close();
    }
    producer = kafkaFor(cluster).producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `committed-${i}` })) });

    // Followers stop fetching; the leader takes records only it will ever have (acks=1).
    cluster.slowReplication(1, 60_000);
    cluster.slowReplication(2, 60_000);
    await new Promise((r) => setTimeout(r, 250)); // fetches in flight come back empty
    await producer.send({ topic, acks: 1, messages: Array.from({ length: 5 }, (_, i) => ({ value: `lost-${i}` })) });
    const old = cluster.broker(0).server.replicaManager.getPartition(topic, 0)!.log;
    expect(old.logEndOffset).toBe(15n);
    expect(old.highWatermark).toBe(10n);
    await cluster.killBroker(0);
    cluster.slowReplication(1, 0);
    cluster.slowReplication(2, 0);

    const after = await waitFor('a new leader', async () => {
      const parts = await partitionsOf(anyLive(cluster), topic);
      return parts[0].leader > 0 ? parts[0] : undefined;
    });
    expect(after.leaderEpoch).toBe(1);
    await sendRetrying(producer, { topic, acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ value: `new-${i}` })) });

    await cluster.startBroker(0);
    await settled(cluster, topic, 1);
    const back = cluster.broker(0).server.replicaManager.getPartition(topic, 0)!.log;
    expect(back.logEndOffset).toBe(15n);
    expect(back.leaderEpochCache.entries).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 1, startOffset: 10n },
    ]);
    const ref = logBytes(cluster, after.leader, topic, 0);
    for (const b of [0, 1, 2]) expect(logBytes(cluster, b, topic, 0).equals(ref)).toBe(true);
    const { values } = await readAll(cluster, topic, 0);
    expect(values).toEqual([...Array.from({ length: 10 }, (_, i) => `committed-${i}`), ...Array.from({ length: 5 }, (_, i) => `new-${i}`)]);
    expect((await partitionsOf(anyLive(cluster), topic))[0].isr).toEqual([0, 1, 2]);
  });

  test('NOT_ENOUGH_REPLICAS while only the leader is in the ISR; writes resume when a follower is back', async () => {
    const topic = 'minisr';
    await createTopic(cluster, topic, 1, 3);
    producer = kafkaFor(cluster).producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const leader = (await partitionsOf(anyLive(cluster), topic))[0].leader;
    const others = [0, 1, 2].filter((b) => b !== leader);
    for (const b of others) await cluster.stopBroker(b);
    await waitFor('ISR = the leader', async () => (await partitionsOf(cluster.bootstrapServers[leader], topic))[0].isr.length === 1);
    const err = await producer.send({ topic, acks: -1, messages: [{ value: 'x' }] }).then(
      () => undefined,
      (e: { type?: string; cause?: { type?: string } }) => e,
    );
    expect(err?.cause?.type ?? err?.type).toBe('NOT_ENOUGH_REPLICAS');
    await producer.send({ topic, acks: 1, messages: [{ value: 'acks-1 is fine' }] });
    await cluster.startBroker(others[0]);
    await waitFor('ISR of 2', async () => (await partitionsOf(cluster.bootstrapServers[leader], topic))[0].isr.length === 2);
    await sendRetrying(producer, { topic, acks: -1, messages: [{ value: 'y' }] });
    const log = cluster.broker(leader).server.replicaManager.getPartition(topic, 0)!.log;
    expect(log.highWatermark).toBe(2n);
  });
});
