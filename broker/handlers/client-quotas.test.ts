/**
 * AlterClientQuotas (49) and DescribeClientQuotas (48) at every advertised version, through the
 * real dispatcher of a combined node (its in-process controller writes the quotas): per-entity
 * results with Kafka's codes and messages, validate_only, removal, and every DescribeClientQuotas
 * filter (exact / default / any, strict) and bad-filter answer as Kafka's ClientQuotasImage gives.
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { DispatchClient, advertisedVersions as versions } from '../testing/dispatch-client';
import { ApiKey } from '../../protocol/generated';

let broker: RunningBroker;
const client = new DispatchClient(() => broker.server, 'client-quotas-test');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);

const ALTER = ApiKey.AlterClientQuotas;
const DESCRIBE = ApiKey.DescribeClientQuotas;

type Parts = [string, string | null][];
const ent = (...parts: Parts) => parts.map(([entityType, entityName]) => ({ entityType, entityName }));
const set = (key: string, value: number) => ({ key, value, remove: false });
const remove = (key: string) => ({ key, value: 0, remove: true });
const exact = (entityType: string, match: string) => ({ entityType, matchType: 0, match });
const dflt = (entityType: string) => ({ entityType, matchType: 1, match: null });
const any = (entityType: string) => ({ entityType, matchType: 2, match: null });

/** Entities of a describe answer as sorted "type=name" strings, and their values, for order-free comparison. */
function summary(res: any): string[] {
  return res.entries
    .map((e: any) => `${e.entity.map((p: any) => `${p.entityType}=${p.entityName ?? '<default>'}`).join(',')} ${e.values.map((v: any) => `${v.key}:${v.value}`).sort().join(',')}`)
    .sort();
}

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error' });
});

afterAll(async () => {
  await broker?.close();
});

test('both APIs are advertised at v0-1', () => {
  expect(versions(ALTER)).toEqual([0, 1]);
  expect(versions(DESCRIBE)).toEqual([0, 1]);
});

test.each(versions(ALTER))('AlterClientQuotas v%i: per-entity results, validate_only, removal', async (v) => {
  const user = `alice-${v}`;
  const validate = await call(ALTER, v, { entries: [{ entity: ent(['user', user]), ops: [set('producer_byte_rate', 1024)] }], validateOnly: true });
  expect(validate.entries).toEqual([expect.objectContaining({ errorCode: ErrorCode.NONE, errorMessage: null, entity: ent(['user', user]) })]);
  expect(broker.server.metadata.clientQuota({ user }).size).toBe(0);

  const res = await call(ALTER, v, {
    entries: [
      { entity: ent(['user', user], ['client-id', null]), ops: [set('producer_byte_rate', 1024), set('request_percentage', 12.5)] },
      { entity: ent(['user', user]), ops: [set('consumer_byte_rate', 2048)] },
      { entity: ent(['ip', '10.0.0.1']), ops: [set('connection_creation_rate', 7)] },
      { entity: ent(['user', `bad-${v}`]), ops: [set('producer_byte_rate', 1.5)] },
      { entity: ent(['ip', '10.0.0.2'], ['user', 'x']), ops: [set('connection_creation_rate', 1)] },
      { entity: ent(['group', 'g']), ops: [set('producer_byte_rate', 1)] },
    ],
    validateOnly: false,
  });
  expect(res.throttleTimeMs).toBe(0);
  expect(res.entries.map((e: any) => [e.entity, e.errorCode, e.errorMessage])).toEqual([
    [ent(['client-id', null], ['user', user]), ErrorCode.NONE, null],
    [ent(['user', user]), ErrorCode.NONE, null],
    [ent(['ip', '10.0.0.1']), ErrorCode.NONE, null],
    [ent(['user', `bad-${v}`]), ErrorCode.INVALID_REQUEST, 'producer_byte_rate cannot be a fractional value.'],
    [ent(['user', 'x'], ['ip', '10.0.0.2']), ErrorCode.INVALID_REQUEST, 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'],
    [ent(['group', 'g']), ErrorCode.INVALID_REQUEST, 'Unhandled client quota entity type: group'],
  ]);
  expect(broker.server.metadata.clientQuota({ user, clientId: null })).toEqual(new Map([['producer_byte_rate', 1024], ['request_percentage', 12.5]]));

  expect(broker.server.metadata.clientQuota({ ip: '10.0.0.1' })).toEqual(new Map([['connection_creation_rate', 7]]));

  const removed = await call(ALTER, v, {
    entries: [
      { entity: ent(['user', user], ['client-id', null]), ops: [remove('producer_byte_rate')] },
      { entity: ent(['ip', '10.0.0.1']), ops: [remove('connection_creation_rate')] },
    ],
    validateOnly: false,
  });
  expect(removed.entries.map((e: any) => e.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  expect(broker.server.metadata.clientQuota({ user, clientId: null })).toEqual(new Map([['request_percentage', 12.5]]));
  // Its last key removed, the ip entity is gone from the image.
  expect(broker.server.metadata.clientQuotas().some((q) => q.entity.ip === '10.0.0.1')).toBe(false);

  const empty = await call(ALTER, v, { entries: [], validateOnly: false });
  expect(empty.entries).toEqual([]);
});

describe('DescribeClientQuotas filters (Kafka ClientQuotasImage.describe)', () => {
  // Named entities carry an f- prefix so that the quotas other tests set do not match these filters.
  beforeAll(async () => {
    const entries = [
      { entity: ent(['user', 'f-u1']), ops: [set('producer_byte_rate', 1)] },
      { entity: ent(['user', null]), ops: [set('producer_byte_rate', 2)] },
      { entity: ent(['client-id', 'f-c1']), ops: [set('consumer_byte_rate', 3)] },
      { entity: ent(['user', 'f-u1'], ['client-id', 'f-c1']), ops: [set('request_percentage', 4)] },
      { entity: ent(['user', null], ['client-id', null]), ops: [set('controller_mutation_rate', 5.5)] },
      { entity: ent(['ip', null]), ops: [set('connection_creation_rate', 6)] },
      { entity: ent(['ip', '192.168.0.1']), ops: [set('connection_creation_rate', 7)] },
    ];
    const res = await call(ALTER, 1, { entries, validateOnly: false });
    expect(res.entries.map((e: any) => e.errorCode)).toEqual(entries.map(() => ErrorCode.NONE));
  });

  const cases: [string, object[], boolean, string[]][] = [
    ['exact user', [exact('user', 'f-u1')], false, ['client-id=f-c1,user=f-u1 request_percentage:4', 'user=f-u1 producer_byte_rate:1']],
    ['exact user, strict', [exact('user', 'f-u1')], true, ['user=f-u1 producer_byte_rate:1']],
    ['default user', [dflt('user')], false, ['client-id=<default>,user=<default> controller_mutation_rate:5.5', 'user=<default> producer_byte_rate:2']],
    ['default user, strict', [dflt('user')], true, ['user=<default> producer_byte_rate:2']],
    ['user + client-id, both exact', [exact('user', 'f-u1'), exact('client-id', 'f-c1')], true, ['client-id=f-c1,user=f-u1 request_percentage:4']],
    ['any client-id, strict', [any('client-id')], true, ['client-id=f-c1 consumer_byte_rate:3']],
    ['default user and any client-id', [dflt('user'), any('client-id')], false, ['client-id=<default>,user=<default> controller_mutation_rate:5.5']],
    ['exact name that nobody has', [exact('user', 'nobody')], false, []],
    ['any ip', [any('ip')], false, ['ip=192.168.0.1 connection_creation_rate:7', 'ip=<default> connection_creation_rate:6']],
    ['default ip', [dflt('ip')], true, ['ip=<default> connection_creation_rate:6']],
    ['exact ip', [exact('ip', '192.168.0.1')], false, ['ip=192.168.0.1 connection_creation_rate:7']],
  ];
  for (const v of [0, 1]) {
    test.each(cases)(`v${v}: %s`, async (_name, components, strict, expected) => {
      const res = await call(DESCRIBE, v, { components, strict });
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.errorMessage).toBeNull();
      expect(summary(res)).toEqual(expected);
    });
  }

  test.each(versions(DESCRIBE))('v%i: no components matches everything, and nothing when strict', async (v) => {
    const all = await call(DESCRIBE, v, { components: [], strict: false });
    expect(all.entries.length).toBe(broker.server.metadata.clientQuotas().length);
    expect(all.entries.length).toBeGreaterThanOrEqual(7);
    const none = await call(DESCRIBE, v, { components: [], strict: true });
    expect(none.entries).toEqual([]);
  });

  const bad: [string, object[], number, string][] = [
    ['empty type', [{ entityType: '', matchType: 2, match: null }], ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.'],
    ['type twice', [exact('user', 'a'), any('user')], ErrorCode.INVALID_REQUEST, 'Entity type user cannot appear more than once in the filter.'],
    ['unknown type', [any('group')], ErrorCode.UNSUPPORTED_VERSION, 'Unsupported entity type group'],
    ['exact without a match', [{ entityType: 'user', matchType: 0, match: null }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.'],
    ['default with a match', [{ entityType: 'user', matchType: 1, match: 'x' }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.'],
    ['any with a match', [{ entityType: 'client-id', matchType: 2, match: 'x' }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.'],
    ['unknown match type', [{ entityType: 'user', matchType: 7, match: null }], ErrorCode.INVALID_REQUEST, 'Unknown match type 7'],
    [
      'ip with user',
      [any('ip'), dflt('user')],
      ErrorCode.INVALID_REQUEST,
      'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
    ],
  ];
  for (const v of [0, 1]) {
    test.each(bad)(`v${v}: bad filter: %s`, async (_name, components, code, message) => {
      const res = await call(DESCRIBE, v, { components, strict: false });
      expect([res.errorCode, res.errorMessage, res.entries]).toEqual([code, message, null]);
    });
  }
});
