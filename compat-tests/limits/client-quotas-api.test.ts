/**
 * The client quota APIs (KIP-546: AlterClientQuotas 49, DescribeClientQuotas 48) against real
 * brokers, driven by @platformatic/kafka's Admin client (ESM only, so it runs in a child `node`
 * process: client-quotas.mjs) and by raw requests from krill's own client at every version:
 * - one combined broker: the answers Kafka gives (per-entity results, its error codes and
 *   messages, filters, validate_only, removal), and the quotas after a restart (the node replays
 *   its metadata log);
 * - a 3-broker cluster: an alteration sent to any broker is forwarded to the controller, reaches
 *   every broker's metadata image (awaited through the image's quota listener, not polled), is
 *   described identically by each, and survives a broker restart and a controller restart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, type BrokerConnection } from '../../client/network-client';
import { ErrorCode } from '../../protocol/errors';
import type { KafkaServer } from '../../broker/server';
import type { ClientQuotaEntity } from '../../metadata/metadata-cache';
import type { RunningCluster } from '../../broker/cluster';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { fastCluster } from '../replication/helpers';
import { runNodeScript } from '../helpers/node-script';

const SCRIPT = path.join(__dirname, 'client-quotas.mjs');
const RUN_TIMEOUT_MS = 30_000;
const REACH_TIMEOUT_MS = 10_000;

let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-quotas-'));
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs client-quotas.mjs to completion (bounded) and returns what it recorded. */
async function runScript(bootstrap: string, prefix: string): Promise<any> {
  const out = path.join(tmp, `${prefix}.json`);
  const stdout = await runNodeScript(SCRIPT, [bootstrap, prefix, out], RUN_TIMEOUT_MS);
  if (stdout !== 'ok\n') throw new Error(`client-quotas.mjs printed ${JSON.stringify(stdout)} instead of ok`);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

const ent = (...parts: [string, string | null][]) => parts.map(([entityType, entityName]) => ({ entityType, entityName }));
const ok = (...parts: [string, string | null][]) => ({ errorCode: 0, errorMessage: null, entity: ent(...parts) });

/** What every run of the script must have seen: Kafka's answers to the same calls. */
function expectScriptAnswers(steps: any, prefix: string): void {
  const user = `${prefix}-alice`;
  expect(steps.set).toEqual([ok(['user', user]), ok(['client-id', `${prefix}-app`], ['user', user]), ok(['client-id', null])]);
  const values = (e: any) => Object.fromEntries(e.values.map((v: any) => [v.key, v.value]));
  expect(steps.describeUser.map((e: any) => [e.entity, values(e)]).sort((a: any, b: any) => a[0].length - b[0].length)).toEqual([
    [ent(['user', user]), { producer_byte_rate: 1048576, consumer_byte_rate: 2097152 }],
    [ent(['client-id', `${prefix}-app`], ['user', user]), { request_percentage: 25.5 }],
  ]);
  expect(steps.describeUserStrict.map((e: any) => [e.entity, values(e)])).toEqual([[ent(['user', user]), { producer_byte_rate: 1048576, consumer_byte_rate: 2097152 }]]);
  expect(steps.describeDefaultClient.map((e: any) => [e.entity, values(e)])).toEqual([[ent(['client-id', null]), { controller_mutation_rate: 10 }]]);
  expect(steps.validateOnly).toEqual([ok(['user', `${prefix}-bob`])]);
  expect(steps.describeBob).toEqual([]);
  expect(steps.invalid).toEqual({ errors: [{ apiId: 'INVALID_REQUEST', apiCode: 42, serverErrorMessage: 'producer_byte_rate cannot be a fractional value.' }] });
  expect(steps.badFilter).toEqual({
    errors: [
      {
        apiId: 'INVALID_REQUEST',
        apiCode: 42,
        serverErrorMessage: 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
      },
    ],
  });
  expect(steps.remove).toEqual([ok(['user', user])]);
  expect(steps.describeAfterRemove.map((e: any) => [e.entity, values(e)])).toEqual([[ent(['user', user]), { producer_byte_rate: 1048576 }]]);
}

async function open(hostPort: string): Promise<BrokerConnection> {
  const [host, port] = hostPort.split(':');
  return connect(host, Number(port), { clientId: 'quotas-compat' });
}

/** Describes everything (no components), as sorted "entity values" lines. */
async function describeAll(conn: BrokerConnection, version: number): Promise<string[]> {
  const res = await conn.send('DescribeClientQuotas', version, { components: [], strict: false });
  expect(res.errorCode).toBe(ErrorCode.NONE);
  return (res.entries ?? [])
    .map((e) => `${e.entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',')} ${e.values.map((v) => `${v.key}:${v.value}`).sort().join(',')}`)
    .sort();
}

/**
 * Resolves once `server`'s metadata image has `key` = `value` (undefined: no such key) for
 * `entity`, woken by the image's quota listener; fails after REACH_TIMEOUT_MS.
 */
function quotaReaches(server: KafkaServer, entity: ClientQuotaEntity, key: string, value: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let unsubscribe: () => void = () => undefined;
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`broker ${server.nodeId}: ${JSON.stringify(entity)} ${key} did not become ${value} within ${REACH_TIMEOUT_MS} ms`));
    }, REACH_TIMEOUT_MS);
    const check = (): void => {
      if (server.metadata.clientQuota(entity).get(key) !== value) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    unsubscribe = server.metadata.subscribeClientQuotas(check, { replay: false });
    check();
  });
}

describe('one combined broker', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker('embedded');
  });

  afterAll(async () => {
    await broker?.close();
  });

  test('platformatic Admin: alter, describe, validate_only, errors and removal answer as Kafka does', async () => {
    expectScriptAnswers(await runScript(broker.bootstrap, 'single'), 'single');
  });

  test.each([0, 1])('raw AlterClientQuotas / DescribeClientQuotas v%i', async (v) => {
    const conn = await open(broker.bootstrap);
    try {
      const res = await conn.send('AlterClientQuotas', v, {
        entries: [
          { entity: ent(['ip', '127.0.0.1']), ops: [{ key: 'connection_creation_rate', value: 100 + v, remove: false }] },
          { entity: ent(['ip', null]), ops: [{ key: 'connection_creation_rate', value: 50, remove: false }] },
          { entity: ent(['ip', 'example.invalid']), ops: [{ key: 'connection_creation_rate', value: 1, remove: false }] },
          { entity: ent(['user', `raw-${v}`]), ops: [{ key: 'connection_creation_rate', value: 1, remove: false }] },
          { entity: [], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] },
        ],
        validateOnly: false,
      });
      expect(res.entries.map((e) => [e.entity, e.errorCode, e.errorMessage])).toEqual([
        [ent(['ip', '127.0.0.1']), ErrorCode.NONE, null],
        [ent(['ip', null]), ErrorCode.NONE, null],
        [ent(['ip', 'example.invalid']), ErrorCode.INVALID_REQUEST, 'example.invalid is not a valid IP or resolvable host.'],
        [ent(['user', `raw-${v}`]), ErrorCode.INVALID_REQUEST, 'Invalid configuration key connection_creation_rate'],
        [[], ErrorCode.INVALID_REQUEST, 'Invalid empty client quota entity'],
      ]);
      const d = await conn.send('DescribeClientQuotas', v, { components: [{ entityType: 'ip', matchType: 2, match: null }], strict: true });
      expect(d.errorCode).toBe(ErrorCode.NONE);
      const byName = (e: { entity: { entityName: string | null }[] }): string => String(e.entity[0].entityName);
      const described = [...d.entries!].sort((a, b) => byName(a).localeCompare(byName(b))).map((e) => [e.entity, e.values]);
      expect(described).toEqual([
        [ent(['ip', '127.0.0.1']), [{ key: 'connection_creation_rate', value: 100 + v }]],
        [ent(['ip', null]), [{ key: 'connection_creation_rate', value: 50 }]],
      ]);
      const bad = await conn.send('DescribeClientQuotas', v, { components: [{ entityType: 'group', matchType: 2, match: null }], strict: false });
      expect([bad.errorCode, bad.errorMessage, bad.entries]).toEqual([ErrorCode.UNSUPPORTED_VERSION, 'Unsupported entity type group', null]);
    } finally {
      await conn.close();
    }
  });

  test('the quotas survive a restart (the metadata log is replayed)', async () => {
    let conn = await open(broker.bootstrap);
    const before = await describeAll(conn, 1);
    await conn.close();
    expect(before).toContain('user=single-alice producer_byte_rate:1048576');
    expect(before).toContain('ip=127.0.0.1 connection_creation_rate:101');
    await broker.restart();
    conn = await open(broker.bootstrap);
    try {
      expect(await describeAll(conn, 0)).toEqual(before);
    } finally {
      await conn.close();
    }
  });
});

describe('a 3-broker cluster', () => {
  let cluster: RunningCluster;
  const server = (id: number): KafkaServer => cluster.broker(id).server;
  const ids = [0, 1, 2];

  beforeAll(async () => {
    cluster = await fastCluster();
  });

  afterAll(async () => {
    await cluster?.close();
  });

  test.each([0, 1])('raw v%i AlterClientQuotas on one broker reaches every broker\'s image', async (v) => {
    const via = cluster.bootstrapServers[v];
    const entity = { user: `cluster-${v}`, clientId: null };
    const conn = await open(via);
    try {
      const res = await conn.send('AlterClientQuotas', v, {
        entries: [{ entity: ent(['user', entity.user], ['client-id', null]), ops: [{ key: 'producer_byte_rate', value: 4096, remove: false }] }],
        validateOnly: false,
      });
      expect(res.entries).toEqual([expect.objectContaining(ok(['client-id', null], ['user', entity.user]))]);
      // The forwarding broker answers only once its own image has the write.
      expect(server(v).metadata.clientQuota(entity).get('producer_byte_rate')).toBe(4096);
    } finally {
      await conn.close();
    }
    await Promise.all(ids.map((id) => quotaReaches(server(id), entity, 'producer_byte_rate', 4096)));
    expect(cluster.controller.controller.image.clientQuota(entity)).toEqual(new Map([['producer_byte_rate', 4096]]));
  });

  test('platformatic Admin through a cluster broker: the answers Kafka gives, and every broker describes the same', async () => {
    expectScriptAnswers(await runScript(cluster.bootstrapServers[1], 'cluster'), 'cluster');
    const entity = { user: 'cluster-alice' };
    // The script's last write removed consumer_byte_rate: once every image has that, all agree.
    await Promise.all(ids.map((id) => quotaReaches(server(id), entity, 'consumer_byte_rate', undefined)));
    const seen = [];
    for (const hostPort of cluster.bootstrapServers) {
      const conn = await open(hostPort);
      try {
        seen.push(await describeAll(conn, 1));
      } finally {
        await conn.close();
      }
    }
    expect(seen[0]).toContain('user=cluster-alice producer_byte_rate:1048576');
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
  });

  test('the quotas survive a broker restart and a controller restart', async () => {
    const conn0 = await open(cluster.bootstrapServers[0]);
    const before = await describeAll(conn0, 1);
    await conn0.close();
    expect(before.length).toBeGreaterThanOrEqual(4);

    await cluster.stopBroker(2);
    await cluster.restartController();
    await cluster.startBroker(2);
    const conn2 = await open(cluster.bootstrapServers[2]);
    try {
      expect(await describeAll(conn2, 0)).toEqual(before);
    } finally {
      await conn2.close();
    }
    expect(cluster.controller.controller.image.clientQuotas().length).toBe(before.length);

    // The restarted controller takes new quota writes, and they reach the restarted broker too.
    const conn1 = await open(cluster.bootstrapServers[1]);
    try {
      const res = await conn1.send('AlterClientQuotas', 1, {
        entries: [{ entity: ent(['ip', '10.9.9.9']), ops: [{ key: 'connection_creation_rate', value: 3, remove: false }] }],
        validateOnly: false,
      });
      expect(res.entries[0].errorCode).toBe(ErrorCode.NONE);
    } finally {
      await conn1.close();
    }
    await Promise.all(ids.map((id) => quotaReaches(server(id), { ip: '10.9.9.9' }, 'connection_creation_rate', 3)));
  });
});
