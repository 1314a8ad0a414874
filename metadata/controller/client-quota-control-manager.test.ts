/**
 * ClientQuotaControlManager and the quota half of the image: Kafka's validation table (entity
 * types and combinations, keys per entity, values per key type, duplicates, the batch limit) with
 * its exact codes and messages, the records planned for sets / changes / removals, validate_only
 * through the Controller, and the image's apply, removal of empty entities, change listeners and
 * replay from an encoded metadata log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ErrorCode } from '../../protocol/errors';
import {
  MetadataCache,
  clientQuotaEntityFromData,
  clientQuotaEntityKey,
  clientQuotaEntityToData,
  type ClientQuotaChange,
  type ClientQuotaEntity,
} from '../metadata-cache';
import { InMemoryMetadataLog } from '../metadata-log';
import { MetadataLogStore, decodeMetadataBatches, encodeMetadataBatch, encodeMetadataRecord } from '../metadata-log-store';
import type { MetadataRecord } from '../metadata-records';
import { followingImage, testController } from '../testing/test-controller';
import {
  ClientQuotaControlManager,
  MAX_RECORDS_PER_USER_OP,
  validateQuotaKeyValue,
  USER_AND_CLIENT_QUOTA_KEYS,
  IP_QUOTA_KEYS,
  type ClientQuotaAlteration,
} from './client-quota-control-manager';

const INVALID = ErrorCode.INVALID_REQUEST;

type Parts = [string, string | null][];
const ent = (...parts: Parts) => parts.map(([entityType, entityName]) => ({ entityType, entityName }));
const alt = (entity: Parts, ops: Record<string, number | null>): ClientQuotaAlteration => ({
  entity: ent(...entity),
  ops: Object.entries(ops).map(([key, value]) => ({ key, value })),
});

/** A manager over a real image: planned records are applied, as the Controller commits them. */
function harness(resolvable: string[] = []) {
  const image = new MetadataCache('c');
  const lookups: string[] = [];
  const m = new ClientQuotaControlManager({
    current: (e) => image.clientQuota(e),
    isResolvableHost: async (h) => {
      lookups.push(h);
      return resolvable.includes(h);
    },
  });
  const run = async (alterations: ClientQuotaAlteration[], apply = true) => {
    const out = m.alterClientQuotas(alterations, await m.validIpEntities(alterations));
    if (apply && out.records.length > 0) image.apply(out.records);
    return out;
  };
  return { image, run, lookups };
}

describe('entities and their keys', () => {
  test('canonical key: equal entities are equal, absent / default / named differ', () => {
    const k = clientQuotaEntityKey;
    expect(k({ user: 'a', clientId: 'b' })).toBe(k({ clientId: 'b', user: 'a' }));
    const distinct = [{ user: 'a' }, { user: null }, { clientId: 'a' }, { user: 'a', clientId: null }, { user: null, clientId: null }, { ip: null }, { ip: '1.2.3.4' }, { user: '0' }, { user: '1' }];
    expect(new Set(distinct.map(k)).size).toBe(distinct.length);
    expect(clientQuotaEntityToData({ user: 'u', clientId: null })).toEqual(ent(['client-id', null], ['user', 'u']));
    expect(clientQuotaEntityFromData(ent(['user', 'u'], ['client-id', null]))).toEqual({ user: 'u', clientId: null });
    expect(clientQuotaEntityFromData(ent(['foo', 'x']))).toBeNull();
    expect(clientQuotaEntityFromData([])).toBeNull();
  });
});

describe('validation (Kafka ClientQuotaControlManager)', () => {
  const table: [string, ClientQuotaAlteration, number, string | null][] = [
    ['user', alt([['user', 'u1']], { producer_byte_rate: 1000 }), ErrorCode.NONE, null],
    ['default user', alt([['user', null]], { consumer_byte_rate: 1000 }), ErrorCode.NONE, null],
    ['client-id', alt([['client-id', 'c1']], { request_percentage: 12.5 }), ErrorCode.NONE, null],
    ['user + client-id', alt([['user', 'u1'], ['client-id', 'c1']], { controller_mutation_rate: 0.5 }), ErrorCode.NONE, null],
    ['default user + default client-id', alt([['user', null], ['client-id', null]], { producer_byte_rate: 1 }), ErrorCode.NONE, null],
    ['ip literal', alt([['ip', '10.0.0.1']], { connection_creation_rate: 10 }), ErrorCode.NONE, null],
    ['ipv6 literal', alt([['ip', '::1']], { connection_creation_rate: 10 }), ErrorCode.NONE, null],
    ['default ip', alt([['ip', null]], { connection_creation_rate: 10 }), ErrorCode.NONE, null],
    ['resolvable host', alt([['ip', 'good.example']], { connection_creation_rate: 10 }), ErrorCode.NONE, null],
    ['empty entity', alt([], { producer_byte_rate: 1 }), INVALID, 'Invalid empty client quota entity'],
    ['unknown type', alt([['foo', 'bar']], { producer_byte_rate: 1 }), INVALID, 'Unhandled client quota entity type: foo'],
    ['unknown type with user', alt([['user', 'u'], ['foo', 'bar']], { producer_byte_rate: 1 }), INVALID, 'Unhandled client quota entity type: foo'],
    ['empty user', alt([['user', '']], { producer_byte_rate: 1 }), INVALID, 'Empty user not supported'],
    ['empty client-id', alt([['client-id', '']], { producer_byte_rate: 1 }), INVALID, 'Empty client-id not supported'],
    ['empty ip', alt([['ip', '']], { connection_creation_rate: 1 }), INVALID, 'Empty ip not supported'],
    ['ip + user', alt([['user', 'u'], ['ip', '1.2.3.4']], { producer_byte_rate: 1 }), INVALID, 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'],
    ['ip + client-id', alt([['client-id', 'c'], ['ip', '1.2.3.4']], { producer_byte_rate: 1 }), INVALID, 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'],
    ['unresolvable host', alt([['ip', 'example.invalid']], { connection_creation_rate: 1 }), INVALID, 'example.invalid is not a valid IP or resolvable host.'],
    ['ip key on a user', alt([['user', 'u']], { connection_creation_rate: 1 }), INVALID, 'Invalid configuration key connection_creation_rate'],
    ['user key on an ip', alt([['ip', '1.2.3.4']], { producer_byte_rate: 1 }), INVALID, 'Invalid configuration key producer_byte_rate'],
    ['unknown key', alt([['user', 'u']], { 'not.a.quota.key': 1 }), INVALID, 'Invalid configuration key not.a.quota.key'],
    ['zero', alt([['user', 'u']], { producer_byte_rate: 0 }), INVALID, 'Quota producer_byte_rate must be greater than 0'],
    ['negative', alt([['user', 'u']], { consumer_byte_rate: -2 }), INVALID, 'Quota consumer_byte_rate must be greater than 0'],
    ['negative double', alt([['user', 'u']], { request_percentage: -0.1 }), INVALID, 'Quota request_percentage must be greater than 0'],
    ['fraction of a LONG', alt([['user', 'u']], { consumer_byte_rate: 2.245 }), INVALID, 'consumer_byte_rate cannot be a fractional value.'],
    ['fraction of an INT', alt([['ip', null]], { connection_creation_rate: 1.5 }), INVALID, 'connection_creation_rate cannot be a fractional value.'],
    ['LONG too large', alt([['user', 'u']], { consumer_byte_rate: 36893488147419103232.4 }), INVALID, 'Proposed value for consumer_byte_rate is too large for a LONG.'],
    ['INT too large', alt([['ip', null]], { connection_creation_rate: 2147483648 }), INVALID, 'Proposed value for connection_creation_rate is too large for an INT.'],
    ['INT at its maximum', alt([['ip', null]], { connection_creation_rate: 2147483647 }), ErrorCode.NONE, null],
    ['fraction within 1e-6 of a LONG', alt([['user', 'u']], { consumer_byte_rate: 1235.0000001 }), ErrorCode.NONE, null],
    ['good key then bad key: the entity fails', alt([['user', 'u']], { request_percentage: 99.9, 'not.a.quota.key': 1 }), INVALID, 'Invalid configuration key not.a.quota.key'],
    ['removing a key the entity does not have, even an unknown one', alt([['user', 'u']], { 'not.a.quota.key': null }), ErrorCode.NONE, null],
  ];
  test.each(table)('%s', async (_name, a, code, message) => {
    const h = harness(['good.example']);
    const { records, results } = await h.run([a]);
    expect(results).toEqual([{ entity: expect.any(Array), errorCode: code, errorMessage: message }]);
    if (code !== ErrorCode.NONE) expect(records).toEqual([]);
  });

  test('validateQuotaKeyValue is Kafka\'s (types per key)', () => {
    expect(validateQuotaKeyValue(USER_AND_CLIENT_QUOTA_KEYS, 'request_percentage', 56.62367)).toBeNull();
    expect(validateQuotaKeyValue(USER_AND_CLIENT_QUOTA_KEYS, 'controller_mutation_rate', 1e300)).toBeNull();
    expect(validateQuotaKeyValue(USER_AND_CLIENT_QUOTA_KEYS, 'producer_byte_rate', 2 ** 63)).toBeNull(); // == Long.MAX_VALUE as a double
    expect(validateQuotaKeyValue(USER_AND_CLIENT_QUOTA_KEYS, 'producer_byte_rate', 2 ** 64)).toBe('Proposed value for producer_byte_rate is too large for a LONG.');
    expect(validateQuotaKeyValue(IP_QUOTA_KEYS, 'connection_creation_rate', 7)).toBeNull();
    expect([...USER_AND_CLIENT_QUOTA_KEYS.keys()].sort()).toEqual(['consumer_byte_rate', 'controller_mutation_rate', 'producer_byte_rate', 'request_percentage']);
    expect([...IP_QUOTA_KEYS.keys()]).toEqual(['connection_creation_rate']);
  });

  test('host names are looked up once each, only for ip-only entities that are not IP literals', async () => {
    const h = harness(['good.example']);
    await h.run([
      alt([['ip', 'good.example']], { connection_creation_rate: 1 }),
      alt([['ip', 'good.example']], { connection_creation_rate: 2 }),
      alt([['ip', '127.0.0.1']], { connection_creation_rate: 1 }),
      alt([['ip', 'h.example'], ['user', 'u']], { connection_creation_rate: 1 }),
    ]);
    expect(h.lookups).toEqual(['good.example']);
  });

  test('the default resolver uses DNS: localhost resolves, example.invalid (RFC 2606) does not', async () => {
    const m = new ClientQuotaControlManager({ current: () => new Map() });
    const a = [alt([['ip', 'localhost']], { connection_creation_rate: 1 }), alt([['ip', 'example.invalid']], { connection_creation_rate: 1 })];
    const { results } = m.alterClientQuotas(a, await m.validIpEntities(a));
    expect(results.map((r) => [r.errorCode, r.errorMessage])).toEqual([
      [ErrorCode.NONE, null],
      [INVALID, 'example.invalid is not a valid IP or resolvable host.'],
    ]);
  });

  test('a duplicate key fails the entity with Kafka\'s "Ignoring duplicate entity" message', async () => {
    const h = harness();
    const { records, results } = await h.run([
      {
        entity: ent(['user', 'u'], ['client-id', null]),
        ops: [
          { key: 'producer_byte_rate', value: 1 },
          { key: 'producer_byte_rate', value: null },
        ],
      },
    ]);
    expect(records).toEqual([]);
    expect(results).toEqual([
      { entity: ent(['client-id', null], ['user', 'u']), errorCode: INVALID, errorMessage: 'Ignoring duplicate entity ClientQuotaEntity(entries={client-id=null, user=u})' },
    ]);
  });

  test('an entity twice: one result, the error; the first entry\'s records are still written (as Kafka)', async () => {
    const h = harness();
    const { records, results } = await h.run([
      alt([['user', 'u'], ['client-id', 'c']], { producer_byte_rate: 100 }),
      alt([['user', 'x']], { producer_byte_rate: 5 }),
      alt([['client-id', 'c'], ['user', 'u']], { producer_byte_rate: 200 }),
    ]);
    expect(results).toEqual([
      { entity: ent(['client-id', 'c'], ['user', 'u']), errorCode: INVALID, errorMessage: 'Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, user=u})' },
      { entity: ent(['user', 'x']), errorCode: ErrorCode.NONE, errorMessage: null },
    ]);
    expect(records).toHaveLength(2);
    expect(h.image.clientQuota({ user: 'u', clientId: 'c' })).toEqual(new Map([['producer_byte_rate', 100]]));
  });

  test('a repeated entity type keeps its last name (the request list becomes a map)', async () => {
    const h = harness();
    const { results } = await h.run([alt([['user', 'a'], ['user', 'b']], { producer_byte_rate: 1 })]);
    expect(results).toEqual([{ entity: ent(['user', 'b']), errorCode: ErrorCode.NONE, errorMessage: null }]);
    expect(h.image.clientQuota({ user: 'b' }).get('producer_byte_rate')).toBe(1);
    expect(h.image.clientQuota({ user: 'a' }).size).toBe(0);
  });

  test('entities are independent: good ones are written when another fails', async () => {
    const h = harness();
    const { results } = await h.run([alt([['user', 'ok']], { producer_byte_rate: 10 }), alt([['user', 'bad']], { producer_byte_rate: -1 })]);
    expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, INVALID]);
    expect(h.image.clientQuotas().map((q) => q.entity)).toEqual([{ user: 'ok' }]);
  });

  test(`more than ${MAX_RECORDS_PER_USER_OP} records: nothing, and POLICY_VIOLATION for every entry`, async () => {
    const h = harness();
    const many = Array.from({ length: MAX_RECORDS_PER_USER_OP + 1 }, (_, i) => alt([['user', `u${i}`]], { producer_byte_rate: 1 }));
    many.push(many[0]);
    const { records, results } = await h.run(many);
    expect(records).toEqual([]);
    expect(results).toHaveLength(many.length);
    expect(new Set(results.map((r) => `${r.errorCode} ${r.errorMessage}`))).toEqual(new Set([`${ErrorCode.POLICY_VIOLATION} Request parameters do not satisfy the configured policy.`]));
    const exactly = await h.run(many.slice(0, MAX_RECORDS_PER_USER_OP));
    expect(exactly.records).toHaveLength(MAX_RECORDS_PER_USER_OP);
  });
});

describe('records: set, change, remove (Kafka testAlterAndRemove)', () => {
  test('only changes are written; removing the last key removes the entity', async () => {
    const h = harness();
    const user: Parts = [['user', 'user-1']];
    const step = async (ops: Record<string, number | null>) => {
      const { records, results } = await h.run([alt(user, ops)]);
      expect(results[0].errorCode).toBe(ErrorCode.NONE);
      return records.map((r) => (r.type === 'ClientQuotaRecord' ? [r.data.key, r.data.remove ? 'remove' : r.data.value] : null));
    };
    expect(await step({ producer_byte_rate: 10000 })).toEqual([['producer_byte_rate', 10000]]);
    expect(await step({ producer_byte_rate: 10000 })).toEqual([]); // unchanged: no record
    expect(await step({ producer_byte_rate: 10001, consumer_byte_rate: 20000 })).toEqual([
      ['producer_byte_rate', 10001],
      ['consumer_byte_rate', 20000],
    ]);
    expect(h.image.clientQuota({ user: 'user-1' })).toEqual(new Map([['producer_byte_rate', 10001], ['consumer_byte_rate', 20000]]));
    expect(await step({ producer_byte_rate: null })).toEqual([['producer_byte_rate', 'remove']]);
    expect(await step({ request_percentage: null })).toEqual([]); // not set: nothing to remove
    expect(h.image.clientQuota({ user: 'user-1' })).toEqual(new Map([['consumer_byte_rate', 20000]]));
    expect(await step({ consumer_byte_rate: null })).toEqual([['consumer_byte_rate', 'remove']]);
    expect(h.image.clientQuotas()).toEqual([]);
    expect(await step({ consumer_byte_rate: null })).toEqual([]);
    expect(await step({ request_percentage: 99, controller_mutation_rate: null, producer_byte_rate: 10002, consumer_byte_rate: 20001 })).toHaveLength(3);
    expect(h.image.clientQuota({ user: 'user-1' })).toEqual(new Map([['request_percentage', 99], ['producer_byte_rate', 10002], ['consumer_byte_rate', 20001]]));
  });

  test('records carry the entity as client-id, user (Kafka\'s order), with null for defaults', async () => {
    const h = harness();
    const { records } = await h.run([alt([['user', null], ['client-id', 'c']], { request_percentage: 53.53 })]);
    expect(records).toEqual([
      { type: 'ClientQuotaRecord', data: { entity: ent(['client-id', 'c'], ['user', null]), key: 'request_percentage', value: 53.53, remove: false } },
    ]);
  });
});

describe('through the Controller', () => {
  test('validate_only checks everything and writes nothing', async () => {
    const log = new InMemoryMetadataLog();
    const c = testController(log);
    const before = log.logEndOffset;
    const results = await c.alterClientQuotas([alt([['user', 'u']], { producer_byte_rate: 1024 }), alt([['user', 'v']], { producer_byte_rate: -1 })], true);
    expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, INVALID]);
    expect(log.logEndOffset).toBe(before);
    expect(c.image.clientQuotas()).toEqual([]);
    expect(await c.alterClientQuotas([], false)).toEqual([]);
  });

  test('a commit is one batch that brokers apply; a restarted controller replays it from the log on disk', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-quotas-'));
    try {
      const c = testController(new MetadataLogStore(dir));
      const { image: broker, batches } = followingImage(c);
      const bootstrapBatches = batches.length; // the fresh log's finalized features
      const results = await c.alterClientQuotas(
        [alt([['user', 'alice'], ['client-id', null]], { producer_byte_rate: 1048576, request_percentage: 25.5 }), alt([['ip', '10.1.2.3']], { connection_creation_rate: 5 })],
        false,
      );
      expect(results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
      expect(batches).toHaveLength(bootstrapBatches + 1);
      expect(broker.clientQuotas()).toEqual(c.image.clientQuotas());
      await c.close();

      const again = testController(new MetadataLogStore(dir));
      expect(again.image.clientQuota({ user: 'alice', clientId: null })).toEqual(new Map([['producer_byte_rate', 1048576], ['request_percentage', 25.5]]));
      expect(again.image.clientQuota({ ip: '10.1.2.3' })).toEqual(new Map([['connection_creation_rate', 5]]));
      await again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the image (MetadataCache)', () => {
  const rec = (entity: Parts, key: string, value: number | null): MetadataRecord => ({
    type: 'ClientQuotaRecord',
    data: { entity: ent(...entity), key, value: value ?? 0, remove: value === null },
  });

  test('ClientQuotaRecord round-trips through the metadata log encoding (type 14)', () => {
    const records = [rec([['client-id', 'c'], ['user', null]], 'producer_byte_rate', 1e6), rec([['ip', null]], 'connection_creation_rate', null)];
    const buf = encodeMetadataBatch(records, 7n);
    // Kafka's framing: frame version 1, record type 14, record version 0.
    expect([...encodeMetadataRecord(records[0]).subarray(0, 3)]).toEqual([1, 14, 0]);
    const [batch] = decodeMetadataBatches(buf);
    expect(batch.lastOffset).toBe(8n);
    expect(batch.records.map((r) => ({ type: r.type, data: { ...(r.data as object), _unknownTaggedFields: undefined } }))).toEqual(
      records.map((r) => ({ type: r.type, data: { ...r.data, _unknownTaggedFields: undefined } })),
    );
  });

  test('deltas and listeners carry each batch\'s changes; replay gives a late subscriber the whole state', () => {
    const image = new MetadataCache('c');
    const seen: { changes: ClientQuotaChange[]; offset: bigint }[] = [];
    const unsubscribe = image.subscribeClientQuotas((changes, offset) => seen.push({ changes: [...changes], offset }));
    const d1 = image.apply([rec([['user', 'a']], 'producer_byte_rate', 10), rec([['user', 'a']], 'consumer_byte_rate', 20), rec([['ip', null]], 'connection_creation_rate', 3)], 2n);
    expect(d1.changedClientQuotas).toEqual([
      { entity: { user: 'a' }, changes: new Map([['producer_byte_rate', 10], ['consumer_byte_rate', 20]]), quotas: new Map([['producer_byte_rate', 10], ['consumer_byte_rate', 20]]) },
      { entity: { ip: null }, changes: new Map([['connection_creation_rate', 3]]), quotas: new Map([['connection_creation_rate', 3]]) },
    ]);
    expect(seen).toEqual([{ changes: d1.changedClientQuotas, offset: 2n }]);

    const d2 = image.apply([rec([['ip', null]], 'connection_creation_rate', null)], 3n);
    expect(d2.changedClientQuotas).toEqual([{ entity: { ip: null }, changes: new Map([['connection_creation_rate', null]]), quotas: new Map() }]);
    expect(image.clientQuotas().map((q) => q.entity)).toEqual([{ user: 'a' }]);

    // Batches without quota records: an empty list and no call.
    const d3 = image.apply([{ type: 'TopicRecord', data: { name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' } }], 4n);
    expect(d3.changedClientQuotas).toEqual([]);
    expect(seen).toHaveLength(2);

    const late: ClientQuotaChange[][] = [];
    image.subscribeClientQuotas((changes) => late.push([...changes]));
    expect(late).toEqual([[{ entity: { user: 'a' }, changes: new Map([['producer_byte_rate', 10], ['consumer_byte_rate', 20]]), quotas: new Map([['producer_byte_rate', 10], ['consumer_byte_rate', 20]]) }]]);

    unsubscribe();
    image.apply([rec([['user', 'a']], 'producer_byte_rate', 11)], 5n);
    expect(seen).toHaveLength(2);
    expect(late).toHaveLength(2);
  });

  test('a throwing listener does not stop the others or the image', () => {
    const image = new MetadataCache('c');
    const errors: unknown[] = [];
    let calls = 0;
    image.subscribeClientQuotas(() => {
      throw new Error('boom');
    }, { onError: (e) => errors.push(e) });
    image.subscribeClientQuotas(() => calls++);
    image.apply([rec([['client-id', 'x']], 'request_percentage', 50)], 0n);
    expect((errors[0] as Error).message).toBe('boom');
    expect(calls).toBe(1);
    expect(image.clientQuota({ clientId: 'x' }).get('request_percentage')).toBe(50);
  });

  test('clientQuota is exact (no default fallback) and returns copies', () => {
    const image = new MetadataCache('c');
    image.apply([rec([['user', null]], 'producer_byte_rate', 1)]);
    expect(image.clientQuota({ user: 'someone' }).size).toBe(0);
    const copy = image.clientQuota({ user: null });
    copy.set('producer_byte_rate', 999);
    expect(image.clientQuota({ user: null }).get('producer_byte_rate')).toBe(1);
    const e: ClientQuotaEntity = image.clientQuotas()[0].entity;
    e.user = 'mutated';
    expect(image.clientQuotas()[0].entity).toEqual({ user: null });
  });

  test('records naming a type krill does not know are skipped', () => {
    const image = new MetadataCache('c');
    const d = image.apply([rec([['foo', 'x']], 'producer_byte_rate', 1)]);
    expect(image.clientQuotas()).toEqual([]);
    expect(d.changedClientQuotas).toEqual([]);
  });
});
