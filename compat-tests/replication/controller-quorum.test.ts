/**
 * A KRaft controller quorum: three ControllerServers in one process (process.roles=controller,
 * controller.quorum.voters naming all three on ports chosen beforehand), each on its own temp
 * metadata directory formatted with one cluster id by `krill storage format`. One becomes the
 * active controller within the election timeouts; CreateTopics (krill's client, on the controller
 * listener) succeeds there and is answered NOT_CONTROLLER (41) per topic by a standby; the active
 * controller shut down gracefully, and then one closed as a crash, is replaced within the timeouts
 * by a controller whose image has every topic created before (DescribeQuorum names it leader of the
 * three voters) and which creates new ones; a
 * restarted controller catches up from its own log and the leader. Three controllers on unformatted
 * directories with the same controller.quorum.voters derive one cluster id from it and form the
 * quorum without a format step. Waits are bounded polls on the servers' state.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, type BrokerConnection } from '../../client/network-client';
import { ControllerServer } from '../../broker/controller/controller-server';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { brokerHeartbeat, brokerRegistration } from '../../broker/testing/controller-node';
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import { describeQuorumRequest } from '../../metadata/raft/raft-messages';
import { clusterIdFromVoters, parseVoterConnections } from '../../metadata/raft/quorum-config';
import { readMetaProperties } from '../../storage/meta-properties';
import { nodeFs } from '../../storage/fs';
import type { DescribeQuorumResponse } from '../../protocol/generated/describe-quorum';
import { freePort, waitFor } from './helpers';

jest.setTimeout(40_000);

const CLUSTER = 'MkU3OEVBNTcwNTJENDM2Qg';
const IDS = [1, 2, 3];
const ELECTION_TIMEOUT_MS = 300;
const FETCH_TIMEOUT_MS = 800;
/** A new active controller: a fetch timeout (crash) plus a few elections, with room for a busy machine. */
const FAILOVER_BOUND_MS = FETCH_TIMEOUT_MS + 6 * ELECTION_TIMEOUT_MS + 2_000;

let dir: string;
let files: Map<number, string>;
const servers = new Map<number, ControllerServer>();

async function startController(id: number): Promise<ControllerServer> {
  const s = await ControllerServer.start({ file: files.get(id)!, logLevel: 'error' });
  servers.set(id, s);
  return s;
}

async function stopController(id: number, graceful: boolean): Promise<void> {
  const s = servers.get(id);
  servers.delete(id);
  await s?.shutdown({ graceful });
}

/** The one running controller that is active, once every running one agrees on the quorum leader. */
function activeController(exclude: number[] = []): ControllerServer | null {
  const running = [...servers.values()];
  const active = running.filter((s) => s.controller.isActiveController);
  if (active.length !== 1 || exclude.includes(active[0].nodeId)) return null;
  const leader = active[0].raftClient!.leader;
  return running.every((s) => s.raftClient!.leader.id === leader.id && s.raftClient!.leader.epoch === leader.epoch) ? active[0] : null;
}

async function on<T>(s: ControllerServer, f: (c: BrokerConnection) => Promise<T>): Promise<T> {
  const c = await connect(s.endpoint.host, s.endpoint.port, { timeoutMs: 5_000, requestTimeoutMs: 5_000 });
  try {
    return await f(c);
  } finally {
    await c.close();
  }
}

function createTopics(s: ControllerServer, names: string[]) {
  return on(s, (c) =>
    c.send('CreateTopics', undefined, {
      topics: names.map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })),
      timeoutMs: 5_000,
      validateOnly: false,
    }),
  );
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-controller-quorum-'));
  const ports = new Map<number, number>();
  for (const id of IDS) ports.set(id, await freePort());
  const voters = IDS.map((id) => `${id}@127.0.0.1:${ports.get(id)}`).join(',');
  files = new Map();
  for (const id of IDS) {
    const props: Record<string, string | number> = {
      'process.roles': 'controller',
      'node.id': id,
      listeners: `CONTROLLER://127.0.0.1:${ports.get(id)}`,
      'controller.listener.names': 'CONTROLLER',
      'controller.quorum.voters': voters,
      'controller.quorum.election.timeout.ms': ELECTION_TIMEOUT_MS,
      'controller.quorum.fetch.timeout.ms': FETCH_TIMEOUT_MS,
      'controller.quorum.election.backoff.max.ms': ELECTION_TIMEOUT_MS,
      'controller.quorum.request.timeout.ms': 1_000,
      // The test's broker registers once and stays unfenced across the failovers.
      'broker.session.timeout.ms': 60_000,
      'log.dirs': path.join(dir, `controller-${id}`),
    };
    const f = path.join(dir, `controller-${id}.properties`);
    fs.writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    files.set(id, f);
  }
});

afterAll(async () => {
  for (const id of [...servers.keys()]) await stopController(id, false);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('controllers on unformatted directories with one voters line derive one cluster id and form the quorum', async () => {
  const unformatted = new Map<number, ControllerServer>();
  try {
    for (const id of IDS) {
      const f = path.join(dir, `unformatted-${id}.properties`);
      fs.writeFileSync(f, fs.readFileSync(files.get(id)!, 'utf8').replace(`controller-${id}\n`, `unformatted-${id}\n`));
      unformatted.set(id, await ControllerServer.start({ file: f, logLevel: 'error' }));
    }
    const voters = fs.readFileSync(files.get(1)!, 'utf8').match(/controller\.quorum\.voters=(.*)/)![1];
    const expected = clusterIdFromVoters(parseVoterConnections(voters.split(','), false));
    expect([...unformatted.values()].map((s) => s.clusterId)).toEqual([expected, expected, expected]);
    for (const id of IDS) expect(readMetaProperties(nodeFs, path.join(dir, `unformatted-${id}`))?.clusterId).toBe(expected);
    await waitFor('an active controller', () => [...unformatted.values()].filter((s) => s.controller.isActiveController).length === 1, FAILOVER_BOUND_MS, 10);
    // Another voters line (another port) is another cluster.
    expect(clusterIdFromVoters(parseVoterConnections(voters.replace(/:(\d+)$/, (_m, p) => `:${Number(p) + 1}`).split(','), false))).not.toBe(expected);
  } finally {
    for (const s of unformatted.values()) await s.shutdown({ graceful: false });
  }
});

test('three controllers elect one active controller, fail over, and catch up', async () => {
  for (const id of IDS) {
    const o = new CollectedOutput();
    expect(await adminMain('storage', ['format', '-t', CLUSTER, '-c', files.get(id)!], o)).toBe(0);
  }
  const started = Date.now();
  await Promise.all(IDS.map((id) => startController(id)));
  for (const s of servers.values()) expect(s.clusterId).toBe(CLUSTER);
  let active = await waitFor('an active controller', () => activeController(), 2 * ELECTION_TIMEOUT_MS + 3_000, 10);
  const electedMs = Date.now() - started;
  expect(electedMs).toBeLessThan(2 * ELECTION_TIMEOUT_MS + 3_000);

  // A broker registers and is unfenced, so that topics can be placed.
  await on(active, async (c) => {
    const reg = await c.send('BrokerRegistration', undefined, brokerRegistration(active, 0, 9092));
    expect(reg.errorCode).toBe(0);
    await waitFor('broker 0 unfenced', async () => {
      const hb = await c.send('BrokerHeartbeat', undefined, brokerHeartbeat(active, 0, reg.brokerEpoch));
      return hb.errorCode === 0 && !hb.isFenced;
    }, 5_000, 20);
  });

  const created = await createTopics(active, ['before-failover']);
  expect(created.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE]);
  const standby = [...servers.values()].find((s) => s !== active)!;
  const refused = await createTopics(standby, ['on-standby-a', 'on-standby-b']);
  expect(refused.topics.map((t) => [t.name, t.errorCode])).toEqual([
    ['on-standby-a', ErrorCode.NOT_CONTROLLER],
    ['on-standby-b', ErrorCode.NOT_CONTROLLER],
  ]);
  // Every other write a standby refuses the same way, per entry (Kafka's getErrorResponse), never by closing the connection.
  await on(standby, async (c) => {
    const deleted = await c.send('DeleteTopics', 6, { topics: [{ name: 'before-failover', topicId: ZERO_UUID }], topicNames: [], timeoutMs: 5_000 });
    expect(deleted.responses.map((r) => [r.name, r.errorCode])).toEqual([['before-failover', ErrorCode.NOT_CONTROLLER]]);
    const altered = await c.send('IncrementalAlterConfigs', undefined, {
      resources: [{ resourceType: 2, resourceName: 'before-failover', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }],
      validateOnly: false,
    });
    expect(altered.responses.map((r) => [r.resourceName, r.errorCode])).toEqual([['before-failover', ErrorCode.NOT_CONTROLLER]]);
  });
  // Every controller's image follows the committed log.
  await waitFor('the topic on every controller', () => [...servers.values()].every((s) => s.controller.image.topic('before-failover') !== undefined), 5_000, 10);

  // Graceful shutdown of the active controller: it resigns and another takes over at once.
  const first = active.nodeId;
  let t0 = Date.now();
  await stopController(first, true);
  active = await waitFor('a new active controller after a graceful shutdown', () => activeController([first]), FAILOVER_BOUND_MS, 10);
  const gracefulMs = Date.now() - t0;
  expect(active.controller.image.topic('before-failover')).toBeDefined();
  expect((await createTopics(active, ['after-graceful'])).topics[0].errorCode).toBe(ErrorCode.NONE);

  // The stopped controller restarts on its directory and catches up (it missed 'after-graceful').
  const restarted = await startController(first);
  await waitFor('the restarted controller caught up', () => restarted.controller.image.topic('after-graceful') !== undefined, FAILOVER_BOUND_MS, 10);
  expect(restarted.controller.image.topic('before-failover')).toBeDefined();

  // The active controller crashes (no resignation): the others elect a new one after the fetch timeout.
  const second = active.nodeId;
  t0 = Date.now();
  await stopController(second, false);
  active = await waitFor('a new active controller after a crash', () => activeController([second]), FAILOVER_BOUND_MS, 10);
  const crashMs = Date.now() - t0;
  for (const name of ['before-failover', 'after-graceful']) expect(active.controller.image.topic(name)).toBeDefined();
  // DescribeQuorum on the controller listener: the new leader, the three voters.
  const quorum = (await on(active, (c) => c.send('DescribeQuorum', 2, describeQuorumRequest()))) as DescribeQuorumResponse;
  expect(quorum.topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: active.nodeId });
  expect(quorum.topics[0].partitions[0].currentVoters.map((v) => v.replicaId).sort()).toEqual(IDS);
  expect((await createTopics(active, ['after-crash'])).topics[0].errorCode).toBe(ErrorCode.NONE);

  const back = await startController(second);
  await waitFor('the crashed controller caught up', () => back.controller.image.topic('after-crash') !== undefined, FAILOVER_BOUND_MS, 10);
  // Reported for the docs: election, graceful and crash failover times.
  process.stdout.write(`controller quorum: elected in ${electedMs} ms, graceful failover ${gracefulMs} ms, crash failover ${crashMs} ms\n`);
});
