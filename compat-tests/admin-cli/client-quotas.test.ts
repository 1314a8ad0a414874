/**
 * `krill configs --entity-type users|clients|ips` (client quotas) against a running broker:
 * --alter through AlterClientQuotas and --describe through DescribeClientQuotas, printed as
 * kafka-configs.sh prints them, and the quotas it set read back by @platformatic/kafka's admin
 * (run in a child process: client-quotas.mjs), since KafkaJS has no client-quota API; for a user
 * with SCRAM credentials --describe adds Kafka's SCRAM credential line.
 */
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { adminMain } from '../../broker/admin-cli/admin-main';
import { CollectedOutput } from '../../broker/admin-cli/tool-output';
import { lastJsonLine, runNodeScript } from '../helpers/node-script';

const SCRIPT = path.join(__dirname, 'client-quotas.mjs');

let broker: RunningBroker;
let bootstrap: string;

async function configs(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const o = new CollectedOutput();
  const code = await adminMain('configs', ['--bootstrap-server', bootstrap, ...argv], o);
  return { code, out: o.out, err: o.err };
}

async function platformatic(components: { entityType: string; matchType: number; match?: string | null }[]): Promise<{ entity: { entityType: string; entityName: string | null }[]; values: Record<string, number> }[]> {
  const entries = lastJsonLine(await runNodeScript(SCRIPT, [bootstrap, JSON.stringify(components)], 20_000)) as any[];
  return entries.map((e) => ({ entity: e.entity, values: Object.fromEntries(e.values.map((v: any) => [v.key, v.value])) }));
}

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', scramCredentials: ['SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192]'] });
  bootstrap = broker.bootstrapServers.join(',');
}, 60_000);

afterAll(async () => {
  await broker?.close();
});

test('--alter sets user, client, user+client and ip quotas as kafka-configs.sh does', async () => {
  expect(await configs('--alter', '--entity-type', 'users', '--entity-name', 'alice', '--add-config', 'producer_byte_rate=1024,consumer_byte_rate=2048')).toEqual({
    code: 0,
    out: ['Completed updating config for user alice.'],
    err: [],
  });
  expect(await configs('--alter', '--entity-type', 'clients', '--entity-default', '--add-config', 'request_percentage=50')).toEqual({
    code: 0,
    out: ['Completed updating default config for clients in the cluster.'],
    err: [],
  });
  expect(await configs('--alter', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-name', 'billing-app', '--add-config', 'producer_byte_rate=10000000')).toEqual({
    code: 0,
    out: ['Completed updating config for user alice.'],
    err: [],
  });
  expect(await configs('--alter', '--entity-type', 'ips', '--entity-name', '127.0.0.1', '--add-config', 'connection_creation_rate=10')).toEqual({
    code: 0,
    out: ['Completed updating config for ip 127.0.0.1.'],
    err: [],
  });

  expect(await platformatic([{ entityType: 'user', matchType: 0, match: 'alice' }])).toEqual([{ entity: [{ entityType: 'user', entityName: 'alice' }], values: { producer_byte_rate: 1024, consumer_byte_rate: 2048 } }]);
  expect(await platformatic([{ entityType: 'client-id', matchType: 1 }])).toEqual([{ entity: [{ entityType: 'client-id', entityName: null }], values: { request_percentage: 50 } }]);
  const pair = await platformatic([{ entityType: 'user', matchType: 0, match: 'alice' }, { entityType: 'client-id', matchType: 0, match: 'billing-app' }]);
  expect(pair.map((e) => e.values)).toEqual([{ producer_byte_rate: 10000000 }]);
  expect(await platformatic([{ entityType: 'ip', matchType: 0, match: '127.0.0.1' }])).toEqual([{ entity: [{ entityType: 'ip', entityName: '127.0.0.1' }], values: { connection_creation_rate: 10 } }]);
}, 60_000);

test('--describe prints each entity\'s quotas (and a user\'s SCRAM credentials) as kafka-configs.sh does', async () => {
  expect(await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice')).toEqual({
    code: 0,
    out: ["Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0", "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192"],
    err: [],
  });
  expect((await configs('--describe', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-name', 'billing-app')).out).toEqual([
    "Quota configs for user-principal 'alice', client-id 'billing-app' are producer_byte_rate=1.0E7",
  ]);
  expect((await configs('--describe', '--entity-type', 'users', '--entity-type', 'clients')).out).toEqual(["Quota configs for user-principal 'alice', client-id 'billing-app' are producer_byte_rate=1.0E7"]);
  expect((await configs('--describe', '--entity-type', 'clients', '--entity-default')).out).toEqual(['Quota configs for the default client-id are request_percentage=50.0']);
  expect((await configs('--describe', '--entity-type', 'ips')).out).toEqual(["Quota configs for ip '127.0.0.1' are connection_creation_rate=10.0"]);
  expect((await configs('--describe', '--entity-type', 'clients', '--entity-name', 'nobody')).out).toEqual([]);
}, 30_000);

test('--delete-config removes a quota; unknown keys and keys the entity lacks are refused', async () => {
  expect((await configs('--alter', '--entity-type', 'users', '--entity-name', 'alice', '--delete-config', 'consumer_byte_rate')).out).toEqual(['Completed updating config for user alice.']);
  expect(await platformatic([{ entityType: 'user', matchType: 0, match: 'alice' }])).toEqual([{ entity: [{ entityType: 'user', entityName: 'alice' }], values: { producer_byte_rate: 1024 } }]);

  const missing = await configs('--alter', '--entity-type', 'users', '--entity-name', 'alice', '--delete-config', 'request_percentage');
  expect(missing.code).toBe(1);
  expect(missing.err[missing.err.length - 1].split('\n').pop()).toBe('Invalid config(s): request_percentage');
  const unknown = await configs('--alter', '--entity-type', 'clients', '--entity-name', 'x', '--add-config', 'retention.ms=1');
  expect(unknown.code).toBe(1);
  expect(unknown.err[0].split('\n').pop()).toBe("Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: retention.ms");
  const ipKey = await configs('--alter', '--entity-type', 'ips', '--entity-default', '--add-config', 'producer_byte_rate=1');
  expect(ipKey.err[0].split('\n').pop()).toBe("Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: producer_byte_rate");
  const refused = await configs('--alter', '--entity-type', 'users', '--entity-name', 'bob', '--add-config', 'producer_byte_rate=1.5');
  expect(refused.code).toBe(1);
  expect(refused.err[0].split('\n').pop()).toBe('producer_byte_rate cannot be a fractional value.');
  const together = await configs('--describe', '--entity-type', 'users', '--entity-type', 'ips');
  expect(together.err[0].split('\n').pop()).toBe("Only 'users' and 'clients' entity types may be specified together");
}, 60_000);
