/**
 * Kafka-style `server.properties` files for a KRaft controller and a broker, each started with
 * `krill --config FILE` (the built CLI, separate processes): the controller's file
 * (process.roles=controller, controller.quorum.voters naming it) starts a controller node, the
 * broker's (process.roles=broker, the same one-entry controller.quorum.voters) a broker that follows
 * it; a topic created through the broker takes records. Configurations krill cannot honour stop
 * start-up with a clear error and a non-zero exit: a controller of a dynamic quorum (bootstrap
 * servers, no voters) whose directory was never formatted, a controller that is not among the voters, a broker among them, and a broker with neither voters
 * nor bootstrap servers (Kafka's messages where Kafka has one); a broker of a quorum none of whose
 * voters answers stops after the registration timeout, naming every voter it asked. A quorum (formatted,
 * or unformatted with a derived cluster id) is compat-tests/replication/controller-quorum.test.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fetchAll, produce } from '../../client/network-client';
import { connectTo, freePort, waitFor } from './helpers';
import { cliBuilt, spawnKrill } from './processes';

jest.setTimeout(60_000);

const CONTROLLER_READY = /^krill controller ready: CONTROLLER:\/\/([^\s:]+):(\d+) node (\d+) cluster (\S+) data (.+)$/;
const BROKER_READY = /^krill ready: PLAINTEXT:\/\/([^\s:]+):(\d+) node (\d+) data (.+)$/;

const properties = (p: Record<string, string | number>): string => Object.entries(p).map(([k, v]) => `${k}=${v}`).join('\n') + '\n';

(cliBuilt() ? describe : describe.skip)('server.properties for a KRaft controller and broker', () => {
  let dir: string;
  const stops: (() => Promise<void>)[] = [];
  const write = (name: string, p: Record<string, string | number>): string => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, properties(p));
    return f;
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-server-properties-'));
  });
  afterAll(async () => {
    for (const s of stops.reverse()) await s();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a controller and a broker started from their files form a cluster that takes records', async () => {
    const cport = await freePort();
    const voters = `1@127.0.0.1:${cport}`;
    const controllerFile = write('controller.properties', {
      'process.roles': 'controller',
      'node.id': 1,
      'controller.quorum.voters': voters,
      listeners: `CONTROLLER://127.0.0.1:${cport}`,
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': path.join(dir, 'controller'),
    });
    const controller = await spawnKrill(['--config', controllerFile], CONTROLLER_READY);
    stops.push(() => controller.stop());
    expect(controller.match[2]).toBe(String(cport));
    expect(controller.match[3]).toBe('1');

    const brokerFile = write('broker.properties', {
      'process.roles': 'broker',
      'node.id': 2,
      'controller.quorum.voters': voters,
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': path.join(dir, 'broker'),
      'offsets.topic.replication.factor': 1,
      'transaction.state.log.replication.factor': 1,
    });
    const broker = await spawnKrill(['--config', brokerFile], BROKER_READY);
    stops.push(() => broker.stop());
    expect(broker.match[3]).toBe('2');

    const conn = await connectTo(`${broker.match[1]}:${broker.match[2]}`);
    try {
      const created = await conn.send('CreateTopics', undefined, {
        topics: [{ name: 'from-files', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      expect(created.topics[0].errorCode).toBe(0);
      await waitFor('the topic led by broker 2', async () => {
        const r = await conn.send('Metadata', undefined, { topics: [{ name: 'from-files' }], allowAutoTopicCreation: false });
        return r.topics[0]?.partitions[0]?.leaderId === 2;
      });
      const produced = await produce(conn, 'from-files', 0, [{ value: Buffer.from('hello') }]);
      expect(produced?.baseOffset).toBe(0n);
      const read = await fetchAll(conn, 'from-files', 0, 0n);
      expect(read.records.map((r) => r.value?.toString())).toEqual(['hello']);
    } finally {
      await conn.close();
    }
  });

  test('configurations krill cannot honour stop start-up with a clear error', async () => {
    const port = await freePort();
    const controllerBase = {
      'process.roles': 'controller',
      'node.id': 1,
      listeners: `CONTROLLER://127.0.0.1:${port}`,
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': path.join(dir, 'refused'),
    };
    // A controller of a dynamic quorum (bootstrap servers, no voters) takes its voters from the format step.
    const dynamicQuorum = write('dynamic-quorum.properties', { ...controllerBase, 'controller.quorum.bootstrap.servers': `127.0.0.1:${port},127.0.0.1:1` });
    await expect(spawnKrill(['--config', dynamicQuorum], CONTROLLER_READY)).rejects.toThrow(
      /No meta\.properties with a cluster\.id in .*: controller 1 is a controller of a dynamic KRaft quorum \(controller\.quorum\.bootstrap\.servers, KIP-853\), which must be formatted first/,
    );
    const notVoter = write('not-voter.properties', { ...controllerBase, 'controller.quorum.voters': `7@127.0.0.1:${port}` });
    await expect(spawnKrill(['--config', notVoter], CONTROLLER_READY)).rejects.toThrow(
      /If process\.roles contains the 'controller' role, the node id 1 must be included in the set of voters controller\.quorum\.voters=Set\(7\)/,
    );
    const brokerBase = {
      'process.roles': 'broker',
      'node.id': 2,
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': path.join(dir, 'refused-broker'),
    };
    const brokerVoter = write('broker-voter.properties', { ...brokerBase, 'controller.quorum.voters': `2@127.0.0.1:${port}` });
    await expect(spawnKrill(['--config', brokerVoter], BROKER_READY)).rejects.toThrow(
      /If process\.roles contains just the 'broker' role, the node id 2 must not be included in the set of voters/,
    );
    // A broker of a quorum asks every voter for the cluster id; none answering stops start-up naming them all.
    const following = write('broker-quorum.properties', {
      ...brokerBase,
      'controller.quorum.voters': `1@127.0.0.1:${port},3@127.0.0.1:1`,
      'initial.broker.registration.timeout.ms': 1500,
    });
    await expect(spawnKrill(['--config', following], BROKER_READY)).rejects.toThrow(new RegExp(`cannot reach the controller at 127\\.0\\.0\\.1:${port}, 127\\.0\\.0\\.1:1`));
    const alone = write('broker-alone.properties', brokerBase);
    await expect(spawnKrill(['--config', alone], BROKER_READY)).rejects.toThrow(
      /If using process\.roles, either controller\.quorum\.bootstrap\.servers must contain the set of bootstrap controllers or controller\.quorum\.voters must contain a parseable set of controllers/,
    );
  });
});
