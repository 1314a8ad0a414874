/**
 * startCluster({ brokers, controllers: 3 }) and `krill --brokers N --controllers 3`: an in-process
 * cluster whose controllers form one KRaft quorum (directories formatted with one cluster id by
 * startCluster) and whose brokers follow its active controller. Topics created through a broker
 * survive a crash of the active controller (killController) and a clean stop of the next one
 * (stopController); brokers keep creating topics through whichever controller is active; a
 * restarted controller (startController) catches up. The CLI prints every voter in its ready line
 * and its brokers take a topic. Waits are bounded polls.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startCluster, type RunningCluster } from '../../broker/cluster';
import { connect } from '../../client/network-client';
import { createTopic, waitFor } from './helpers';
import { cliBuilt, spawnKrill } from './processes';

jest.setTimeout(60_000);

const TIMERS = {
  'controller.quorum.election.timeout.ms': '300',
  'controller.quorum.fetch.timeout.ms': '800',
  'controller.quorum.election.backoff.max.ms': '300',
  'controller.quorum.request.timeout.ms': '1000',
  'broker.heartbeat.interval.ms': '100',
  'broker.session.timeout.ms': '3000',
};
const FAILOVER_BOUND_MS = 800 + 6 * 300 + 3_000;

let cluster: RunningCluster | undefined;

afterAll(async () => {
  await cluster?.close();
});

const onEveryBroker = (c: RunningCluster, topic: string) => [...c.brokers.values()].every((b) => b.server.metadata.topic(topic) !== undefined);

test('an in-process cluster on a controller quorum survives controller crashes and stops', async () => {
  const c = (cluster = await startCluster({ brokers: 2, controllers: 3, config: { ...TIMERS, 'offsets.topic.num.partitions': '1' }, logLevel: 'error' }));
  expect([...c.controllers.keys()]).toEqual([3000, 3001, 3002]);
  expect(new Set([...c.controllers.values()].map((s) => s.clusterId))).toEqual(new Set([c.clusterId]));
  expect(c.controllerAddress.split(',')).toHaveLength(3);
  await createTopic(c, 'first', 2, 2);
  await waitFor('first on every broker', () => onEveryBroker(c, 'first'), 5_000, 10);

  const crashed = (await waitFor('an active controller', () => c.activeController(), FAILOVER_BOUND_MS, 10)).nodeId;
  await c.killController(crashed);
  const next = await waitFor('another active controller', () => c.activeController(), FAILOVER_BOUND_MS, 10);
  expect(next.nodeId).not.toBe(crashed);
  expect(c.controller).toBe(next);
  await createTopic(c, 'after-crash', 1, 2);
  await waitFor('after-crash on every broker', () => onEveryBroker(c, 'after-crash'), 5_000, 10);

  const restarted = await c.startController(crashed);
  await waitFor('the restarted controller caught up', () => restarted.controller.image.topic('after-crash') !== undefined, FAILOVER_BOUND_MS, 10);

  const stopped = next.nodeId;
  await c.stopController(stopped);
  await waitFor('a third active controller', () => c.activeController(), FAILOVER_BOUND_MS, 10);
  await createTopic(c, 'after-stop', 1, 2);
  await waitFor('after-stop on every broker', () => onEveryBroker(c, 'after-stop'), 5_000, 10);
  for (const b of c.brokers.values()) {
    expect(b.server.clusterLink!.lifecycle.isFenced).toBe(false);
    expect(b.server.metadata.topic('first')).toBeDefined();
  }
});

(cliBuilt() ? test : test.skip)('krill --brokers 1 --controllers 3 starts a quorum its broker follows', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-cli-quorum-'));
  const overrides = Object.entries(TIMERS).flatMap(([k, v]) => ['--override', `${k}=${v}`]);
  const krill = await spawnKrill(
    ['--brokers', '1', '--controllers', '3', '--port', '0', '--data-dir', dir, '--override', 'offsets.topic.num.partitions=1', ...overrides],
    /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+) nodes 0 controllers (\S+) data (.+)$/,
  );
  try {
    expect(krill.match[3].split(',')).toHaveLength(3);
    expect(fs.readdirSync(dir).sort()).toEqual(['broker-0', 'controller-3000', 'controller-3001', 'controller-3002']);
    const conn = await connect(krill.match[1], Number(krill.match[2]), { timeoutMs: 5_000 });
    try {
      const res = await conn.send('CreateTopics', undefined, {
        topics: [{ name: 'cli-topic', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 5_000,
        validateOnly: false,
      });
      expect(res.topics[0].errorCode).toBe(0);
    } finally {
      await conn.close();
    }
  } finally {
    await krill.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
