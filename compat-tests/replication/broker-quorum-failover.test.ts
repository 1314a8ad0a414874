/**
 * Brokers following a changing active controller: three ControllerServers on one KRaft quorum
 * (process.roles=controller, controller.quorum.voters naming the three on ports chosen beforehand,
 * each directory given one cluster id) and three brokers (KafkaServers, process.roles=broker, the
 * same three voters) in one process, all over the Kafka protocol.
 *
 * The brokers register with the active controller and are observers of the quorum (DescribeQuorum
 * lists them); a topic is created through a broker and KafkaJS produces to it with acks=all. Then the
 * ACTIVE controller crashes (`shutdown({ graceful: false })`: no resignation): another is elected,
 * every broker follows it, none is fenced (its broker epoch is unchanged and no fence record
 * reaches the log) while heartbeats carry on past the session timeout, CreateTopics /
 * AlterConfigs / DeleteTopics through the brokers succeed and are on every broker, every acked
 * record is read back, and killing a broker gets its ISR change (the partition leaders' shrink, or
 * the new controller's fencing) applied through the new controller; that broker, restarted, learns
 * the cluster id past the dead voter and joins the new controller. Waits are bounded polls.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ControllerServer } from '../../broker/controller/controller-server';
import { startBroker, type RunningBroker } from '../../broker';
import { connect } from '../../client/network-client';
import { describeQuorumRequest } from '../../metadata/raft/raft-messages';
import type { DescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import { fetchAll } from '../../client/network-client';
import { freePort, waitFor, partitionsOf } from './helpers';
import { discoverClusterId } from '../../metadata/cluster-link';
import { KafkaConfig } from '../../config/kafka-config';
import { Logger } from '../../common/logger';

jest.setTimeout(60_000);

const CLUSTER = 'QnJva2Vyc0ZvbGxvd1F1b3J1bQ';
const CONTROLLER_IDS = [3000, 3001, 3002];
const BROKER_IDS = [0, 1, 2];
const ELECTION_TIMEOUT_MS = 300;
const FETCH_TIMEOUT_MS = 800;
const SESSION_TIMEOUT_MS = 2_500;
const FAILOVER_BOUND_MS = FETCH_TIMEOUT_MS + 6 * ELECTION_TIMEOUT_MS + 3_000;

const TIMERS = {
  'controller.quorum.election.timeout.ms': ELECTION_TIMEOUT_MS,
  'controller.quorum.fetch.timeout.ms': FETCH_TIMEOUT_MS,
  'controller.quorum.election.backoff.max.ms': ELECTION_TIMEOUT_MS,
  'controller.quorum.request.timeout.ms': 1_000,
  'broker.heartbeat.interval.ms': 100,
  'broker.session.timeout.ms': SESSION_TIMEOUT_MS,
};

let dir: string;
let voters: string;
const ports = new Map<number, number>();
const controllers = new Map<number, ControllerServer>();
const brokers = new Map<number, RunningBroker>();

function controllerProps(id: number): Record<string, string> {
  return Object.fromEntries(
    Object.entries({
      'process.roles': 'controller',
      'node.id': id,
      listeners: `CONTROLLER://127.0.0.1:${ports.get(id)}`,
      'controller.listener.names': 'CONTROLLER',
      'controller.quorum.voters': voters,
      'log.dirs': path.join(dir, `controller-${id}`),
      ...TIMERS,
    }).map(([k, v]) => [k, String(v)]),
  );
}

async function startBrokerNode(id: number): Promise<RunningBroker> {
  const b = await startBroker({
    host: '127.0.0.1',
    port: 0,
    dataDir: path.join(dir, `broker-${id}`),
    keepDataDir: true,
    logLevel: (process.env.KRILL_TEST_BROKER_LOG as 'info' | undefined) ?? 'error',
    config: {
      'process.roles': 'broker',
      'node.id': String(id),
      'controller.quorum.voters': voters,
      'controller.listener.names': 'CONTROLLER',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'default.replication.factor': '3',
      'min.insync.replicas': '2',
      'offsets.topic.replication.factor': '3',
      'offsets.topic.num.partitions': '3',
      'transaction.state.log.replication.factor': '3',
      'replica.lag.time.max.ms': '1500',
      'replica.fetch.wait.max.ms': '100',
      'replica.fetch.backoff.ms': '50',
      'auto.leader.rebalance.enable': 'false',
      ...Object.fromEntries(Object.entries(TIMERS).map(([k, v]) => [k, String(v)])),
    },
  });
  brokers.set(id, b);
  return b;
}

function activeController(exclude: number[] = []): ControllerServer | null {
  const running = [...controllers.values()];
  const active = running.filter((s) => s.controller.isActiveController);
  if (active.length !== 1 || exclude.includes(active[0].nodeId)) return null;
  const leader = active[0].raftClient!.leader;
  return running.every((s) => s.raftClient!.leader.id === leader.id && s.raftClient!.leader.epoch === leader.epoch) ? active[0] : null;
}

function bootstrap(): string[] {
  return [...brokers.values()].map((b) => `127.0.0.1:${b.port}`);
}

function kafka(): Kafka {
  return new Kafka({ clientId: 'broker-quorum-failover', brokers: bootstrap(), logLevel: logLevel.NOTHING, connectionTimeout: 1000, requestTimeout: 10_000, retry: { retries: 10, initialRetryTime: 100 } });
}

/** Fence records (FenceBrokerRecord, or a registration change fencing) in the committed log of `c`. */
function fencings(c: ControllerServer): { broker: number; offset: bigint }[] {
  const out: { broker: number; offset: bigint }[] = [];
  for (const b of c.metadataLog.readAll()) {
    for (const r of b.records) {
      if (r.type === 'FenceBrokerRecord') out.push({ broker: r.data.id, offset: b.lastOffset });
      if (r.type === 'BrokerRegistrationChangeRecord' && r.data.fenced === 1) out.push({ broker: r.data.brokerId, offset: b.lastOffset });
    }
  }
  return out;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-broker-quorum-'));
  for (const id of CONTROLLER_IDS) ports.set(id, await freePort());
  voters = CONTROLLER_IDS.map((id) => `${id}@127.0.0.1:${ports.get(id)}`).join(',');
});

afterAll(async () => {
  await Promise.all([...brokers.values()].map((b) => b.server.shutdown({ controlled: false }).catch(() => undefined)));
  for (const c of controllers.values()) await c.shutdown({ graceful: false }).catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('brokers follow the active controller of a quorum across its crash', async () => {
  await Promise.all(CONTROLLER_IDS.map(async (id) => controllers.set(id, await ControllerServer.start({ props: controllerProps(id), clusterId: CLUSTER, logLevel: 'error' }))));
  let active = await waitFor('an active controller', () => activeController(), 2 * ELECTION_TIMEOUT_MS + 3_000, 10);
  await Promise.all(BROKER_IDS.map((id) => startBrokerNode(id)));
  for (const b of brokers.values()) expect(b.clusterId).toBe(CLUSTER);

  // The brokers are observers of the quorum.
  const quorum = async (c: ControllerServer) => {
    const conn = await connect(c.endpoint.host, c.endpoint.port, { timeoutMs: 5_000 });
    try {
      return ((await conn.send('DescribeQuorum', 2, describeQuorumRequest())) as DescribeQuorumResponse).topics[0].partitions[0];
    } finally {
      await conn.close();
    }
  };
  await waitFor('the brokers listed as observers', async () => (await quorum(active)).observers.map((o) => o.replicaId).sort().join(',') === '0,1,2', 5_000, 20);

  const admin = kafka().admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 3 }, { topic: 'doomed', numPartitions: 1, replicationFactor: 3 }] });
    const producer = kafka().producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const acked: string[] = [];
    const send = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) {
        await producer.send({ topic: 'orders', acks: -1, messages: [{ key: `k${i}`, value: `v${i}` }] });
        acked.push(`v${i}`);
      }
    };
    await send(0, 30);
    const epochs = new Map([...brokers].map(([id, b]) => [id, b.server.clusterLink!.brokerEpoch]));
    const fencedBefore = fencings(active).length;

    // The active controller crashes.
    const crashed = active.nodeId;
    const t0 = Date.now();
    const old = controllers.get(crashed)!;
    controllers.delete(crashed);
    await old.shutdown({ graceful: false });
    active = await waitFor('a new active controller', () => activeController([crashed]), FAILOVER_BOUND_MS, 10);
    const electedMs = Date.now() - t0;
    const newLeader = active.nodeId;
    await waitFor('every broker following the new leader', () => [...brokers.values()].every((b) => b.server.clusterLink!.observer!.leader.id === newLeader), FAILOVER_BOUND_MS, 10);
    const followedMs = Date.now() - t0;

    // Admin writes through the brokers after the failover.
    const t1 = Date.now();
    await admin.createTopics({ topics: [{ topic: 'after-failover', numPartitions: 2, replicationFactor: 3 }] });
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '3600000' }] }] });
    await admin.deleteTopics({ topics: ['doomed'] });
    const adminMs = Date.now() - t1;
    for (const b of brokers.values()) {
      await waitFor(`the admin writes on broker ${b.nodeId}`, () => {
        const md = b.server.metadata;
        return md.topic('after-failover') !== undefined && md.topic('doomed') === undefined && md.topicConfig('orders').get('retention.ms') === '3600000';
      }, 5_000, 10);
    }
    await send(30, 30);
    await producer.disconnect();

    // Heartbeats carried on: past a session timeout after the election, nobody was fenced or re-registered.
    await new Promise((r) => setTimeout(r, Math.max(0, SESSION_TIMEOUT_MS + 500 - (Date.now() - t0))));
    expect(fencings(active).length).toBe(fencedBefore);
    for (const [id, b] of brokers) {
      expect(b.server.clusterLink!.brokerEpoch).toBe(epochs.get(id));
      expect(b.server.clusterLink!.lifecycle.isFenced).toBe(false);
      expect(active.controller.image.broker(id)?.fenced).toBe(false);
    }

    // Every acked record is read back.
    const parts = await partitionsOf(bootstrap()[0], 'orders');
    const read: string[] = [];
    for (const p of parts) {
      const leader = brokers.get(p.leader)!;
      const conn = await connect('127.0.0.1', leader.port, { timeoutMs: 5_000 });
      try {
        for (const r of (await fetchAll(conn, 'orders', p.partition)).records) read.push(r.value!.toString());
      } finally {
        await conn.close();
      }
    }
    expect(read.sort()).toEqual([...acked].sort());

    // An ISR change through the new controller: broker 2 dies.
    const t2 = Date.now();
    const victim = brokers.get(2)!;
    brokers.delete(2);
    await victim.server.shutdown({ controlled: false });
    await waitFor('broker 2 out of every ISR on the live brokers', () =>
      [...brokers.values()].every((b) => {
        const t = b.server.metadata.topic('orders');
        return t !== undefined && [...t.partitions.values()].every((p) => !p.isr.includes(2) && p.leader !== 2);
      }), SESSION_TIMEOUT_MS + 5_000, 20);
    const isrMs = Date.now() - t2;
    const image = active.controller.image.topic('orders')!;
    for (const p of image.partitions.values()) expect(p.isr).not.toContain(2);

    // A broker starting now learns the cluster id past the dead voter (asked first), then joins the new controller.
    const deadFirst = new Map([[crashed, { host: '127.0.0.1', port: ports.get(crashed)! }], ...CONTROLLER_IDS.filter((id) => id !== crashed).map((id) => [id, { host: '127.0.0.1', port: ports.get(id)! }] as const)]);
    const config = new KafkaConfig({ 'node.id': '2', 'process.roles': 'broker', 'controller.quorum.voters': voters, 'log.dirs': dir, 'controller.listener.names': 'CONTROLLER' });
    expect(await discoverClusterId({ voters: deadFirst, bootstrap: [] }, 2, config, 5_000, Logger.silent())).toBe(CLUSTER);
    const back = await startBrokerNode(2);
    expect(back.server.clusterLink!.observer!.leader.id).toBe(active.nodeId);
    expect(active.controller.image.broker(2)?.fenced).toBe(false);
    process.stdout.write(
      `broker quorum failover: new active controller ${electedMs} ms after the crash, brokers following it at ${followedMs} ms, ` +
        `CreateTopics+AlterConfigs+DeleteTopics ${adminMs} ms, ISR change after a broker kill ${isrMs} ms\n`,
    );
  } finally {
    await admin.disconnect();
  }
});
