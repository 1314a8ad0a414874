/**
 * The cluster as separate processes (a controller and three brokers, each `krill` from the built
 * CLI, started with the flags a multi-machine deployment uses), with KafkaJS producing acks=-1 and
 * min.insync.replicas=2: the leader's process is SIGKILLed, a new leader from the ISR takes over,
 * the producer carries on; the killed broker comes back (crash recovery, truncation), rejoins the
 * ISR; every acknowledged produce is read exactly once, and after a clean stop every replica's
 * segment file holds the same bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { fetchAll, metadata } from '../../client/network-client';
import { connectTo, waitFor } from './helpers';
import * as os from 'node:os';
import { spawnKrill, startProcessCluster, type ProcessCluster } from './processes';
import { ContinuousProducer, checkExactlyOnce } from './workload';

jest.setTimeout(90_000);

const OVERRIDES = {
  'broker.heartbeat.interval.ms': '100',
  'broker.session.timeout.ms': '1500',
  'replica.lag.time.max.ms': '2000',
  'replica.fetch.wait.max.ms': '100',
  'replica.fetch.backoff.ms': '50',
  'auto.leader.rebalance.enable': 'false',
};

async function topicState(cluster: ProcessCluster, topic: string): Promise<{ leader: number; isr: number[] }[]> {
  for (const [id, b] of cluster.bootstrapServers().entries()) {
    if (!cluster.running(id)) continue;
    const conn = await connectTo(b);
    try {
      const md = await metadata(conn, [topic], { allowAutoTopicCreation: false });
      const t = md.topics.find((x) => x.name === topic)!;
      return t.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => ({ leader: p.leaderId, isr: [...p.isrNodes].sort() }));
    } finally {
      await conn.close();
    }
  }
  throw new Error('no broker running');
}

describe('a cluster of krill processes', () => {
  let cluster: ProcessCluster;
  let producer: Producer | undefined;
  beforeAll(async () => {
    cluster = await startProcessCluster(3, OVERRIDES);
  });
  afterAll(async () => {
    await producer?.disconnect().catch(() => undefined);
    await cluster?.close();
  });

  test('SIGKILL the leader: a new leader from the ISR, the producer carries on, the old leader rejoins, nothing acknowledged is lost or doubled', async () => {
    const topic = 'procs';
    const admin = await connectTo(cluster.bootstrapServers()[0]);
    try {
      const res = await admin.send('CreateTopics', undefined, {
        topics: [{ name: topic, numPartitions: 3, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      expect(res.topics[0].errorCode).toBe(0);
    } finally {
      await admin.close();
    }
    producer = new Kafka({ clientId: 'procs', brokers: cluster.bootstrapServers(), logLevel: logLevel.NOTHING, connectionTimeout: 1000, requestTimeout: 5000, retry: { retries: 0 } }).producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    const p = new ContinuousProducer(producer, topic);
    await p.progress(20);

    const victim = (await topicState(cluster, topic))[0].leader;
    await cluster.kill9(victim);
    await waitFor('a new leader for partition 0', async () => {
      const s = await topicState(cluster, topic);
      return s[0].leader >= 0 && s[0].leader !== victim && !s[0].isr.includes(victim);
    }, 15_000, 100);
    await p.progress(20);
    await cluster.start(victim);
    await waitFor('every ISR complete again', async () => (await topicState(cluster, topic)).every((s) => s.isr.length === 3), 20_000, 100);
    await p.progress(10);
    await p.stop();

    const seen = new Map<string, number>();
    const state = await topicState(cluster, topic);
    for (let part = 0; part < 3; part++) {
      const conn = await connectTo(cluster.bootstrapServers()[state[part].leader]);
      try {
        const r = await fetchAll(conn, topic, part, 0n);
        for (const rec of r.records) {
          const v = rec.value!.toString();
          seen.set(v, (seen.get(v) ?? 0) + 1);
        }
      } finally {
        await conn.close();
      }
    }
    checkExactlyOnce(p, seen);
    expect(p.acked.size).toBeGreaterThan(200);

    // A clean stop of every broker, then the replicas' segment files compared byte for byte.
    await waitFor('every ISR complete', async () => (await topicState(cluster, topic)).every((s) => s.isr.length === 3), 10_000, 100);
    await producer.disconnect();
    producer = undefined;
    for (const id of [0, 1, 2]) await cluster.stop(id);
    for (let part = 0; part < 3; part++) {
      const bytes = [0, 1, 2].map((id) => {
        const dir = path.join(cluster.dataDir, `broker-${id}`, `${topic}-${part}`);
        return Buffer.concat(fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => fs.readFileSync(path.join(dir, f))));
      });
      expect(bytes[0].length).toBeGreaterThan(0);
      expect(bytes[1].equals(bytes[0])).toBe(true);
      expect(bytes[2].equals(bytes[0])).toBe(true);
    }
  });
});

describe('krill --brokers N', () => {
  test('one process runs a 3-broker cluster and its controller, prints one ready line, stops cleanly on SIGTERM', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-brokers-'));
    try {
      const k = await spawnKrill(
        ['--brokers', '3', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir, '--override', 'broker.heartbeat.interval.ms=100'],
        /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+), PLAINTEXT:\/\/\S+, PLAINTEXT:\/\/(\S+) nodes 0,1,2 controller (\S+) data (.+)$/,
      );
      try {
        const conn = await connectTo(`${k.match[1]}:${k.match[2]}`);
        try {
          const md = await metadata(conn, null);
          expect(md.brokers.map((b) => b.nodeId).sort()).toEqual([0, 1, 2]);
        } finally {
          await conn.close();
        }
        expect(fs.readdirSync(dir).sort()).toEqual(['broker-0', 'broker-1', 'broker-2', 'controller']);
      } finally {
        await k.stop('SIGTERM');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
