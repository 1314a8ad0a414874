import { ErrorCode, KafkaError } from '../../protocol/errors';
import { ConfigResourceType } from '../metadata-records';
import { clientMetricsConfigRecords } from './client-metrics-config-control';

const SET = 0;
const DELETE = 1;
const APPEND = 2;

function error(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return { code: (err as KafkaError).code, message: (err as Error).message };
  }
  throw new Error('no error');
}

const record = (name: string, value: string | null) => ({
  type: 'ConfigRecord',
  data: { resourceType: ConfigResourceType.CLIENT_METRICS, resourceName: 'sub', name, value },
});

describe('CLIENT_METRICS config changes (ConfigurationControlManager + ClientMetricsConfigs)', () => {
  test('incremental SET and DELETE give records for the changed keys only', () => {
    const current = new Map([['metrics', '*'], ['interval.ms', '1000']]);
    const records = clientMetricsConfigRecords(
      { name: 'sub', incremental: true, ops: [{ name: 'metrics', op: SET, value: '*' }, { name: 'interval.ms', op: DELETE, value: null }, { name: 'match', op: SET, value: 'client_id=a' }] },
      current,
    );
    expect(records).toEqual([record('interval.ms', null), record('match', 'client_id=a')]);
  });

  test('legacy AlterConfigs replaces the whole set; an empty set deletes every key', () => {
    const current = new Map([['metrics', '*'], ['interval.ms', '1000']]);
    expect(clientMetricsConfigRecords({ name: 'sub', incremental: false, ops: [{ name: 'interval.ms', op: SET, value: '2000' }] }, current)).toEqual([
      record('metrics', null),
      record('interval.ms', '2000'),
    ]);
    expect(clientMetricsConfigRecords({ name: 'sub', incremental: false, ops: [] }, current)).toEqual([record('metrics', null), record('interval.ms', null)]);
  });

  test("Kafka's refusals: duplicate keys, null values, APPEND on a non-LIST schema, invalid result", () => {
    const none = new Map<string, string>();
    expect(error(() => clientMetricsConfigRecords({ name: 'sub', incremental: true, ops: [{ name: 'metrics', op: SET, value: 'a' }, { name: 'metrics', op: SET, value: 'b' }] }, none))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Error due to duplicate config keys',
    });
    expect(error(() => clientMetricsConfigRecords({ name: 'sub', incremental: true, ops: [{ name: 'metrics', op: SET, value: null }] }, none))).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Null value not supported for : metrics',
    });
    expect(error(() => clientMetricsConfigRecords({ name: 'sub', incremental: false, ops: [{ name: 'metrics', op: SET, value: null }] }, none)).code).toBe(ErrorCode.INVALID_REQUEST);
    expect(error(() => clientMetricsConfigRecords({ name: 'sub', incremental: true, ops: [{ name: 'metrics', op: APPEND, value: 'a' }] }, none))).toEqual({
      code: ErrorCode.INVALID_CONFIG,
      message: "Can't APPEND to key metrics because its type is not LIST.",
    });
    expect(error(() => clientMetricsConfigRecords({ name: 'sub', incremental: true, ops: [{ name: 'colour', op: SET, value: 'a' }] }, none)).code).toBe(ErrorCode.INVALID_REQUEST);
    expect(error(() => clientMetricsConfigRecords({ name: '', incremental: true, ops: [{ name: 'metrics', op: SET, value: '*' }] }, none)).message).toBe("Subscription name can't be empty");
  });
});
