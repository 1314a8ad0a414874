/**
 * Combined nodes as KRaft quorum voters: three `process.roles=broker,controller` nodes (KafkaServers
 * in one process) whose controller.quorum.voters name each other's CONTROLLER listeners, each
 * directory formatted with one cluster id beforehand. Each runs its voter (a ControllerServer on the
 * controller listener) and a broker following the quorum's active controller. A topic created
 * through a broker takes acks=all records; the node hosting the active controller crashes (broker
 * and controller at once): the two others elect a new active controller, follow it, create and
 * delete topics through it, and every acked record is read back from the survivors. Waits are
 * bounded polls.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { connect, fetchAll } from '../../client/network-client';
import { ensureMetaProperties } from '../../storage/meta-properties';
import { nodeFs } from '../../storage/fs';
import { freePort, partitionsOf, waitFor } from './helpers';

jest.setTimeout(60_000);

const CLUSTER = 'Q29tYmluZWRRdW9ydW1Ob2Rl';
const IDS = [1, 2, 3];
const FAILOVER_BOUND_MS = 800 + 6 * 300 + 3_000;

let dir: string;
const nodes = new Map<number, RunningBroker>();

afterAll(async () => {
  await Promise.all([...nodes.values()].map((n) => n.server.shutdown({ controlled: false }).catch(() => undefined)));
  fs.rmSync(dir, { recursive: true, force: true });
});

function active(exclude: number[] = []): RunningBroker | null {
  const running = [...nodes.values()];
  const leaders = running.filter((n) => n.server.quorumController!.controller.isActiveController);
  if (leaders.length !== 1 || exclude.includes(leaders[0].nodeId)) return null;
  const l = leaders[0].server.quorumController!.raftClient!.leader;
  return running.every((n) => n.server.quorumController!.raftClient!.leader.id === l.id && n.server.clusterLink!.observer!.leader.id === l.id) ? leaders[0] : null;
}

test('three combined nodes form a quorum and survive the crash of the active controller\'s node', async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-combined-quorum-'));
  const cports = new Map<number, number>();
  for (const id of IDS) cports.set(id, await freePort());
  const voters = IDS.map((id) => `${id}@127.0.0.1:${cports.get(id)}`).join(',');
  for (const id of IDS) {
    fs.mkdirSync(path.join(dir, `node-${id}`), { recursive: true });
    ensureMetaProperties(nodeFs, path.join(dir, `node-${id}`), id, CLUSTER);
  }
  await Promise.all(
    IDS.map(async (id) => {
      const n = await startBroker({
        dataDir: path.join(dir, `node-${id}`),
        keepDataDir: true,
        logLevel: 'error',
        config: {
          'process.roles': 'broker,controller',
          'node.id': String(id),
          listeners: `PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:${cports.get(id)}`,
          'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
          'controller.listener.names': 'CONTROLLER',
          'controller.quorum.voters': voters,
          'controller.quorum.election.timeout.ms': '300',
          'controller.quorum.fetch.timeout.ms': '800',
          'controller.quorum.election.backoff.max.ms': '300',
          'controller.quorum.request.timeout.ms': '1000',
          'broker.heartbeat.interval.ms': '100',
          'broker.session.timeout.ms': '3000',
          'default.replication.factor': '3',
          'min.insync.replicas': '2',
          'offsets.topic.replication.factor': '3',
          'offsets.topic.num.partitions': '1',
          'replica.fetch.wait.max.ms': '100',
          'auto.leader.rebalance.enable': 'false',
        },
      });
      nodes.set(id, n);
    }),
  );
  for (const n of nodes.values()) {
    expect(n.clusterId).toBe(CLUSTER);
    expect(n.server.quorumController).not.toBeNull();
    // Only the data-plane listener is a broker endpoint.
    expect(n.server.advertisedEndpoints.map((e) => e.listenerName)).toEqual(['PLAINTEXT']);
  }
  const first = await waitFor('an active controller every node follows', () => active(), FAILOVER_BOUND_MS, 10);

  const kafka = () =>
    new Kafka({ clientId: 'combined-quorum', brokers: [...nodes.values()].map((n) => `127.0.0.1:${n.port}`), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
  const admin = kafka().admin();
  await admin.connect();
  const producer = kafka().producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const acked: string[] = [];
  try {
    await admin.createTopics({ topics: [{ topic: 'events', numPartitions: 2, replicationFactor: 3 }] });
    for (let i = 0; i < 20; i++) {
      await producer.send({ topic: 'events', acks: -1, messages: [{ value: `e${i}` }] });
      acked.push(`e${i}`);
    }
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }

  // The active controller's node crashes: its broker and its voter at once.
  const crashed = first.nodeId;
  nodes.delete(crashed);
  await first.server.shutdown({ controlled: false });
  const next = await waitFor('a new active controller the survivors follow', () => active([crashed]), FAILOVER_BOUND_MS, 10);
  expect(next.nodeId).not.toBe(crashed);

  // Clients stop being sent to the dead node once the new controller fences it (its session expires).
  await waitFor('the crashed node fenced', () => [...nodes.values()].every((n) => n.server.metadata.broker(crashed)?.fenced === true), 3_000 + FAILOVER_BOUND_MS, 20);
  const admin2 = kafka().admin();
  await admin2.connect();
  try {
    await admin2.createTopics({ topics: [{ topic: 'after-crash', numPartitions: 1, replicationFactor: 2 }] });
    await admin2.deleteTopics({ topics: ['after-crash'] });
  } finally {
    await admin2.disconnect();
  }
  for (const n of nodes.values()) {
    await waitFor(`node ${n.nodeId} saw the create and the delete`, () => n.server.metadata.topic('after-crash') === undefined && n.server.metadata.topic('events') !== undefined, 5_000, 10);
  }
  const read: string[] = [];
  const live = [...nodes.values()][0];
  await waitFor('leaders on the survivors', async () => (await partitionsOf(`127.0.0.1:${live.port}`, 'events')).every((p) => nodes.has(p.leader)), 10_000, 50);
  for (const p of await partitionsOf(`127.0.0.1:${live.port}`, 'events')) {
    const conn = await connect('127.0.0.1', nodes.get(p.leader)!.port, { timeoutMs: 5_000 });
    try {
      for (const r of (await fetchAll(conn, 'events', p.partition)).records) read.push(r.value!.toString());
    } finally {
      await conn.close();
    }
  }
  expect(read.sort()).toEqual([...acked].sort());
});
