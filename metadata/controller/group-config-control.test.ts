/**
 * GROUP config changes on the controller: the ConfigRecords groupConfigRecords plans (incremental
 * SET / DELETE, legacy replacement, only changed keys), Kafka's refusals in its order, and the
 * Controller committing them in one batch (validate_only: none), checked against its
 * groupConfigBounds, applied by a broker's image and replayed from the log on restart.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { GROUP_CONFIG_BOUNDS_DEFAULTS } from '../../config/group-configs';
import { ConfigResourceType } from '../metadata-records';
import { InMemoryMetadataLog } from '../metadata-log';
import { followingImage, testController } from '../testing/test-controller';
import { groupConfigRecords } from './group-config-control';

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;
const B = GROUP_CONFIG_BOUNDS_DEFAULTS;

function error(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return { code: (err as KafkaError).code, message: (err as Error).message };
  }
  throw new Error('no error');
}

const record = (name: string, value: string | null, group = 'g') => ({
  type: 'ConfigRecord',
  data: { resourceType: ConfigResourceType.GROUP, resourceName: group, name, value },
});

describe('groupConfigRecords (ConfigurationControlManager + ControllerConfigurationValidator)', () => {
  test('incremental SET and DELETE give records for the changed keys only; deleting an absent key is no change', () => {
    const current = new Map([['consumer.session.timeout.ms', '50000'], ['consumer.heartbeat.interval.ms', '6000']]);
    const records = groupConfigRecords(
      {
        name: 'g',
        incremental: true,
        ops: [
          { name: 'consumer.session.timeout.ms', op: SET, value: '50000' },
          { name: 'consumer.heartbeat.interval.ms', op: DELETE, value: null },
          { name: 'share.session.timeout.ms', op: DELETE, value: null },
          { name: 'share.record.lock.duration.ms', op: SET, value: '20000' },
        ],
      },
      current,
      B,
    );
    expect(records).toEqual([record('consumer.heartbeat.interval.ms', null), record('share.record.lock.duration.ms', '20000')]);
    // Deleting a name Kafka does not know leaves nothing to validate, so it is accepted (and writes nothing).
    expect(groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: 'colour', op: DELETE, value: null }] }, new Map(), B)).toEqual([]);
  });

  test('legacy AlterConfigs replaces the whole set', () => {
    const current = new Map([['consumer.session.timeout.ms', '50000'], ['consumer.heartbeat.interval.ms', '6000']]);
    expect(groupConfigRecords({ name: 'g', incremental: false, ops: [{ name: 'consumer.heartbeat.interval.ms', op: SET, value: '7000' }] }, current, B)).toEqual([
      record('consumer.session.timeout.ms', null),
      record('consumer.heartbeat.interval.ms', '7000'),
    ]);
    expect(groupConfigRecords({ name: 'g', incremental: false, ops: [] }, current, B)).toEqual([
      record('consumer.session.timeout.ms', null),
      record('consumer.heartbeat.interval.ms', null),
    ]);
  });

  test("Kafka's refusals: duplicate keys, null values, APPEND / SUBTRACT, the name, an invalid result", () => {
    const none = new Map<string, string>();
    const hb = 'consumer.heartbeat.interval.ms';
    expect(error(() => groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: hb, op: SET, value: '6000' }, { name: hb, op: DELETE, value: null }] }, none, B))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Error due to duplicate config keys',
    });
    expect(error(() => groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: hb, op: SET, value: null }] }, none, B))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: `Null value not supported for : ${hb}`,
    });
    expect(error(() => groupConfigRecords({ name: 'g', incremental: false, ops: [{ name: hb, op: SET, value: null }] }, none, B)).code).toBe(ErrorCode.INVALID_REQUEST);
    for (const [op, word] of [[APPEND, 'APPEND'], [SUBTRACT, 'SUBTRACT']] as const) {
      expect(error(() => groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: hb, op, value: '6000' }] }, none, B))).toEqual({
        code: ErrorCode.INVALID_CONFIG,
        message: `Can't ${word} to key ${hb} because its type is not LIST.`,
      });
    }
    expect(error(() => groupConfigRecords({ name: '', incremental: true, ops: [{ name: hb, op: SET, value: '6000' }] }, none, B))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Default group resources are not allowed.',
    });
    expect(error(() => groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: 'colour', op: SET, value: 'red' }] }, none, B))).toEqual({
      code: ErrorCode.INVALID_CONFIG,
      message: 'Unknown group config name: colour',
    });
    // The existing configs take part: a heartbeat that is fine alone is not above the group's session timeout.
    const current = new Map([['consumer.session.timeout.ms', '45000']]);
    const wide = { ...B, consumerMaxHeartbeatIntervalMs: 50_000 };
    expect(error(() => groupConfigRecords({ name: 'g', incremental: true, ops: [{ name: hb, op: SET, value: '45000' }] }, current, wide)).message).toBe(
      'consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms',
    );
  });
});

describe('Controller.alterGroupConfigs', () => {
  test("one batch for the accepted changes, validate_only writes nothing, this node's bounds, replayed on restart", async () => {
    const log = new InMemoryMetadataLog();
    const bounds = { ...B, consumerMinSessionTimeoutMs: 1000 };
    const c = testController(log, { groupConfigBounds: () => bounds });
    const { image: broker, batches } = followingImage(c);
    const before = batches.length;
    const set = (value: string) => [{ name: 'consumer.session.timeout.ms', op: SET, value }];
    expect(await c.alterGroupConfigs([{ name: 'dry', incremental: true, ops: set('10000') }], true)).toEqual([{ name: 'dry', errorCode: ErrorCode.NONE, errorMessage: null }]);
    expect(batches.length).toBe(before);
    const results = await c.alterGroupConfigs(
      [
        { name: 'a', incremental: true, ops: set('10000') },
        { name: 'b', incremental: true, ops: set('999') },
        { name: 'c', incremental: false, ops: [{ name: 'consumer.heartbeat.interval.ms', op: SET, value: '6000' }] },
      ],
      false,
    );
    expect(results).toEqual([
      { name: 'a', errorCode: ErrorCode.NONE, errorMessage: null },
      { name: 'b', errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms' },
      { name: 'c', errorCode: ErrorCode.NONE, errorMessage: null },
    ]);
    expect(batches.slice(before)).toEqual([[record('consumer.session.timeout.ms', '10000', 'a'), record('consumer.heartbeat.interval.ms', '6000', 'c')]]);
    expect(broker.groupConfig('a')).toEqual(new Map([['consumer.session.timeout.ms', '10000']]));
    expect(broker.groupConfig('b')).toEqual(new Map());
    await c.alterGroupConfigs([{ name: 'c', incremental: true, ops: [{ name: 'consumer.heartbeat.interval.ms', op: DELETE, value: null }] }], false);
    expect(broker.groupConfig('c')).toEqual(new Map());
    const restarted = testController(log);
    expect(restarted.image.groupConfig('a')).toEqual(new Map([['consumer.session.timeout.ms', '10000']]));
    expect(restarted.image.groupConfig('c')).toEqual(new Map());
    // Without groupConfigBounds: Kafka's defaults (group.consumer.min.session.timeout.ms 45000).
    expect((await restarted.alterGroupConfigs([{ name: 'a', incremental: true, ops: set('10000') }], true))[0].errorCode).toBe(ErrorCode.INVALID_CONFIG);
  });
});
