/**
 * GROUP (32) config resources through the real dispatcher of a running broker (combined node) with a
 * scripted authorizer: IncrementalAlterConfigs, AlterConfigs and DescribeConfigs at every advertised
 * version. ALTER_CONFIGS / DESCRIBE_CONFIGS on the GROUP (else GROUP_AUTHORIZATION_FAILED, nothing
 * changed); Kafka's INVALID_CONFIG messages for an unknown name and the broker's bounds (this broker
 * has group.consumer.min.session.timeout.ms 10000); validate_only changes nothing; legacy
 * AlterConfigs replaces the set; DescribeConfigs sources (DYNAMIC_GROUP_CONFIG / DEFAULT_CONFIG),
 * synonyms and documentation by version; DeleteGroups leaves a group's configs, as Kafka does.
 */
import { startBroker, type RunningBroker } from '..';
import { ErrorCode } from '../../protocol/errors';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';
import { ConfigSource } from '../../config/config-types';
import { advertisedVersions as versions } from '../testing/dispatch-client';
import { scriptedAuthorization } from '../testing/scripted-authorization';
import { ApiKey as API } from '../../protocol/generated';

const { ALTER_CONFIGS, DESCRIBE_CONFIGS, DELETE } = AclOperation;
const { GROUP } = ResourceType;
const { NONE, INVALID_CONFIG, INVALID_REQUEST, GROUP_AUTHORIZATION_FAILED: GAF } = ErrorCode;
const SESSION = 'consumer.session.timeout.ms';
const HEARTBEAT = 'consumer.heartbeat.interval.ms';

let broker: RunningBroker;
const { authz, call, allowingEverything } = scriptedAuthorization(() => broker.server, 'group-configs-test');
beforeEach(() => authz.reset());

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'error', authorizer: authz, config: { 'group.consumer.min.session.timeout.ms': 10_000 } });
});

afterAll(async () => {
  await broker?.close();
});

const group = (name: string) => ({ resourceType: 32, resourceName: name });
const incremental = (name: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) => ({
  resources: [{ ...group(name), configs }],
  validateOnly,
});
const answers = (res: any) => res.responses.map((r: any) => [r.resourceName, r.errorCode, r.errorMessage]);

test('ALTER_CONFIGS / DESCRIBE_CONFIGS on the GROUP: denied is GROUP_AUTHORIZATION_FAILED and changes nothing', async () => {
  for (const v of versions(API.IncrementalAlterConfigs)) {
    const res = await call(API.IncrementalAlterConfigs, v, incremental('g-denied', [{ name: SESSION, configOperation: 0, value: '20000' }]));
    expect(answers(res)).toEqual([['g-denied', GAF, 'Group authorization failed.']]);
  }
  for (const v of versions(API.AlterConfigs)) {
    const res = await call(API.AlterConfigs, v, { resources: [{ ...group('g-denied'), configs: [{ name: SESSION, value: '20000' }] }], validateOnly: false });
    expect(answers(res)).toEqual([['g-denied', GAF, 'Group authorization failed.']]);
  }
  for (const v of versions(API.DescribeConfigs)) {
    const res = await call(API.DescribeConfigs, v, { resources: [{ ...group('g-denied'), configurationKeys: null }], includeSynonyms: false });
    expect(res.results[0]).toMatchObject({ errorCode: GAF, configs: [] });
  }
  expect(broker.server.metadata.groupConfig('g-denied').size).toBe(0);
  expect(authz.asked.map((a) => [a.operation, a.resourceType, a.resourceName])).toEqual([
    ...versions(API.IncrementalAlterConfigs).map(() => [ALTER_CONFIGS, GROUP, 'g-denied']),
    ...versions(API.AlterConfigs).map(() => [ALTER_CONFIGS, GROUP, 'g-denied']),
    ...versions(API.DescribeConfigs).map(() => [DESCRIBE_CONFIGS, GROUP, 'g-denied']),
  ]);
});

test("IncrementalAlterConfigs: Kafka's INVALID_CONFIG for unknown names, types, bounds and APPEND; validate_only; SET and DELETE", async () => {
  authz.allow(ALTER_CONFIGS, GROUP, 'g1');
  for (const v of versions(API.IncrementalAlterConfigs)) {
    const refused = async (configs: { name: string; configOperation: number; value: string | null }[]) => answers(await call(API.IncrementalAlterConfigs, v, incremental('g1', configs)))[0].slice(1);
    expect(await refused([{ name: 'session.timeout.ms', configOperation: 0, value: '20000' }])).toEqual([INVALID_CONFIG, 'Unknown group config name: session.timeout.ms']);
    expect(await refused([{ name: SESSION, configOperation: 0, value: 'x' }])).toEqual([INVALID_CONFIG, `Invalid value x for configuration ${SESSION}: Not a number of type INT`]);
    expect(await refused([{ name: SESSION, configOperation: 0, value: '9999' }])).toEqual([INVALID_CONFIG, `${SESSION} must be greater than or equal to group.consumer.min.session.timeout.ms`]);
    expect(await refused([{ name: SESSION, configOperation: 0, value: '60001' }])).toEqual([INVALID_CONFIG, `${SESSION} must be less than or equal to group.consumer.max.session.timeout.ms`]);
    expect(await refused([{ name: HEARTBEAT, configOperation: 0, value: '4000' }])).toEqual([INVALID_CONFIG, `${HEARTBEAT} must be greater than or equal to group.consumer.min.heartbeat.interval.ms`]);
    expect(await refused([{ name: SESSION, configOperation: 0, value: '10000' }, { name: HEARTBEAT, configOperation: 0, value: '10000' }])).toEqual([
      INVALID_CONFIG,
      `${SESSION} must be greater than ${HEARTBEAT}`,
    ]);
    expect(await refused([{ name: 'share.record.lock.duration.ms', configOperation: 0, value: '999' }])).toEqual([
      INVALID_CONFIG,
      'Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000',
    ]);
    expect(await refused([{ name: HEARTBEAT, configOperation: 2, value: '6000' }])).toEqual([INVALID_CONFIG, `Can't APPEND to key ${HEARTBEAT} because its type is not LIST.`]);
    expect(await refused([{ name: HEARTBEAT, configOperation: 0, value: '6000' }, { name: HEARTBEAT, configOperation: 1, value: null }])).toEqual([
      INVALID_REQUEST,
      'Error due to duplicate config keys',
    ]);
    // validate_only: accepted, nothing written.
    const dry = await call(API.IncrementalAlterConfigs, v, incremental('g1', [{ name: SESSION, configOperation: 0, value: '20000' }], true));
    expect(answers(dry)).toEqual([['g1', NONE, null]]);
    expect(broker.server.metadata.groupConfig('g1').size).toBe(0);
  }
  // The share.* configs are accepted (and have no effect: krill has no share groups).
  const set = await call(API.IncrementalAlterConfigs, 1, incremental('g1', [
    { name: SESSION, configOperation: 0, value: '20000' },
    { name: HEARTBEAT, configOperation: 0, value: '6000' },
    { name: 'share.heartbeat.interval.ms', configOperation: 0, value: '6000' },
  ]));
  expect(answers(set)).toEqual([['g1', NONE, null]]);
  expect(broker.server.metadata.groupConfig('g1')).toEqual(new Map([[SESSION, '20000'], [HEARTBEAT, '6000'], ['share.heartbeat.interval.ms', '6000']]));
  const deleted = await call(API.IncrementalAlterConfigs, 0, incremental('g1', [{ name: 'share.heartbeat.interval.ms', configOperation: 1, value: null }]));
  expect(answers(deleted)).toEqual([['g1', NONE, null]]);
  expect(broker.server.metadata.groupConfig('g1')).toEqual(new Map([[SESSION, '20000'], [HEARTBEAT, '6000']]));
});

test('AlterConfigs replaces the whole set, with the same validation', async () => {
  authz.allow(ALTER_CONFIGS, GROUP, 'g2');
  await call(API.IncrementalAlterConfigs, 1, incremental('g2', [{ name: SESSION, configOperation: 0, value: '20000' }]));
  for (const v of versions(API.AlterConfigs)) {
    const bad = await call(API.AlterConfigs, v, { resources: [{ ...group('g2'), configs: [{ name: 'colour', value: 'red' }] }], validateOnly: false });
    expect(answers(bad)).toEqual([['g2', INVALID_CONFIG, 'Unknown group config name: colour']]);
    const dry = await call(API.AlterConfigs, v, { resources: [{ ...group('g2'), configs: [{ name: HEARTBEAT, value: '7000' }] }], validateOnly: true });
    expect(answers(dry)).toEqual([['g2', NONE, null]]);
    expect(broker.server.metadata.groupConfig('g2')).toEqual(new Map([[SESSION, '20000']]));
  }
  const ok = await call(API.AlterConfigs, 2, { resources: [{ ...group('g2'), configs: [{ name: HEARTBEAT, value: '7000' }] }], validateOnly: false });
  expect(answers(ok)).toEqual([['g2', NONE, null]]);
  expect(broker.server.metadata.groupConfig('g2')).toEqual(new Map([[HEARTBEAT, '7000']]));
});

test('DescribeConfigs: every group config with its source; synonyms from v1, documentation from v3; an empty name INVALID_REQUEST', async () => {
  authz.allow(ALTER_CONFIGS, GROUP, 'g3').allow(DESCRIBE_CONFIGS, GROUP, 'g3').allow(DESCRIBE_CONFIGS, GROUP, '').allow(DESCRIBE_CONFIGS, GROUP, 'no-such-group');
  await call(API.IncrementalAlterConfigs, 1, incremental('g3', [{ name: HEARTBEAT, configOperation: 0, value: '6000' }]));
  for (const v of versions(API.DescribeConfigs)) {
    const res = await call(API.DescribeConfigs, v, { resources: [{ ...group('g3'), configurationKeys: null }], includeSynonyms: v >= 1, includeDocumentation: v >= 3 });
    expect(res.results[0]).toMatchObject({ errorCode: NONE, errorMessage: null, resourceType: 32, resourceName: 'g3' });
    const configs = res.results[0].configs;
    expect(configs.map((c: any) => [c.name, c.value])).toEqual([
      [SESSION, '45000'],
      [HEARTBEAT, '6000'],
      ['share.session.timeout.ms', '45000'],
      ['share.heartbeat.interval.ms', '5000'],
      ['share.record.lock.duration.ms', '30000'],
    ]);
    if (v === 0) expect(configs.map((c: any) => c.isDefault)).toEqual([true, false, true, true, true]);
    else {
      expect(configs.map((c: any) => c.configSource)).toEqual([ConfigSource.DEFAULT_CONFIG, ConfigSource.DYNAMIC_GROUP_CONFIG, ConfigSource.DEFAULT_CONFIG, ConfigSource.DEFAULT_CONFIG, ConfigSource.DEFAULT_CONFIG]);
      expect(configs[1].synonyms).toEqual([{ name: HEARTBEAT, value: '6000', source: ConfigSource.DYNAMIC_GROUP_CONFIG }]);
      expect(configs[0].synonyms).toEqual([{ name: SESSION, value: '45000', source: ConfigSource.DEFAULT_CONFIG }]);
    }
    for (const c of configs) expect(c).toMatchObject({ readOnly: false, isSensitive: false });
    if (v >= 3) {
      expect(configs.every((c: any) => typeof c.documentation === 'string' && c.configType === 3)).toBe(true);
    }
    const one = await call(API.DescribeConfigs, v, { resources: [{ ...group('no-such-group'), configurationKeys: [SESSION] }], includeSynonyms: false });
    expect(one.results[0].configs.map((c: any) => [c.name, c.value])).toEqual([[SESSION, '45000']]);
    const empty = await call(API.DescribeConfigs, v, { resources: [{ ...group(''), configurationKeys: null }], includeSynonyms: false });
    expect(empty.results[0]).toMatchObject({ errorCode: INVALID_REQUEST, errorMessage: 'Group name must not be empty', configs: [] });
  }
});

test("DeleteGroups leaves the group's dynamic configs (Kafka 4.0 does not delete them)", async () => {
  await allowingEverything(async () => {
    const created = await call(API.CreateTopics, 7, { topics: [{ name: 't', numPartitions: 1, replicationFactor: 1 }], timeoutMs: 1000 });
    expect(created.topics[0].errorCode).toBe(NONE);
    expect((await call(API.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['g4'] })).coordinators[0].errorCode).toBe(NONE);
    const commit = await call(API.OffsetCommit, 8, { groupId: 'g4', generationIdOrMemberEpoch: -1, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 0n, committedMetadata: '' }] }] });
    expect(commit.topics[0].partitions[0].errorCode).toBe(NONE);
  });
  authz.allow(ALTER_CONFIGS, GROUP, 'g4').allow(DELETE, GROUP, 'g4');
  await call(API.IncrementalAlterConfigs, 1, incremental('g4', [{ name: SESSION, configOperation: 0, value: '20000' }]));
  const res = await call(API.DeleteGroups, 2, { groupsNames: ['g4'] });
  expect(res.results[0].errorCode).toBe(NONE);
  expect(broker.server.metadata.groupConfig('g4')).toEqual(new Map([[SESSION, '20000']]));
});
