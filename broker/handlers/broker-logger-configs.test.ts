import { Logger } from '../../common/logger';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { alterBrokerLoggers, describeBrokerLoggers } from './broker-logger-configs';

const SET = 0;
const DELETE = 1;

function setup() {
  const lines: string[] = [];
  const logger = Logger.root('krill[1]', { level: 'info', sink: (l) => lines.push(l) });
  logger.child('replica-manager');
  return { logger, lines };
}

function failure(fn: () => void): [number, string] {
  try {
    fn();
  } catch (err) {
    if (err instanceof KafkaError) return [err.code, err.message];
    throw err;
  }
  throw new Error('expected a KafkaError');
}

test('describe: every logger with its effective level, root first, filtered by key', () => {
  const { logger } = setup();
  const all = describeBrokerLoggers(logger, 1, '1', null);
  expect(all[0]).toMatchObject({ name: 'root', value: 'INFO', readOnly: false, isSensitive: false, source: 6 });
  expect(all.find((e) => e.name === 'kafka.server.ReplicaManager')?.value).toBe('INFO');
  logger.levels.set('kafka.server', 'debug');
  expect(describeBrokerLoggers(logger, 1, '1', ['kafka.server.ReplicaManager', 'root']).map((e) => [e.name, e.value])).toEqual([
    ['root', 'INFO'],
    ['kafka.server.ReplicaManager', 'DEBUG'],
  ]);
  expect(failure(() => describeBrokerLoggers(logger, 1, '2', null))).toEqual([ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 1 but received 2']);
  expect(failure(() => describeBrokerLoggers(logger, 1, 'x', null))).toEqual([ErrorCode.INVALID_REQUEST, 'Broker id must be an integer, but it is: x']);
  expect(failure(() => describeBrokerLoggers(logger, 1, '', null))).toEqual([ErrorCode.INVALID_REQUEST, 'Broker id must not be empty']);
});

test('SET and DELETE change levels at run time; each change is logged at WARN', () => {
  const { logger, lines } = setup();
  const rm = logger.child('replica-manager');
  alterBrokerLoggers(logger, 1, '1', [{ name: 'kafka.server.ReplicaManager', configOperation: SET, value: 'DEBUG' }], false);
  expect(rm.enabled('debug')).toBe(true);
  alterBrokerLoggers(logger, 1, '1', [{ name: 'root', configOperation: SET, value: 'FATAL' }], false);
  expect(logger.level).toBe('error');
  expect(rm.level).toBe('debug');
  alterBrokerLoggers(logger, 1, '1', [{ name: 'kafka.server.ReplicaManager', configOperation: DELETE, value: null }], false);
  expect(rm.level).toBe('error');
  // The later changes are logged at WARN too, but root is at ERROR (FATAL) by then, as in Kafka.
  expect(lines.filter((l) => l.includes(' WARN ')).map((l) => l.replace(/^.*: /, ''))).toEqual(['Updated the log level of kafka.server.ReplicaManager to DEBUG']);
});

test("Kafka's validation: nothing changes when any op of the resource is bad, or with validate_only", () => {
  const { logger } = setup();
  const alter = (ops: { name: string; configOperation: number; value: string | null }[], name = '1', validateOnly = false) =>
    failure(() => alterBrokerLoggers(logger, 1, name, ops, validateOnly));
  expect(alter([{ name: 'root', configOperation: SET, value: 'debug' }])).toEqual([
    ErrorCode.INVALID_CONFIG,
    'Cannot set the log level of root to debug as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN',
  ]);
  expect(alter([{ name: 'no.such.Logger', configOperation: SET, value: 'DEBUG' }])).toEqual([ErrorCode.INVALID_CONFIG, 'Logger no.such.Logger does not exist!']);
  expect(alter([{ name: 'no.such.Logger', configOperation: DELETE, value: null }])).toEqual([ErrorCode.INVALID_CONFIG, 'Logger no.such.Logger does not exist!']);
  expect(alter([{ name: 'root', configOperation: DELETE, value: null }])).toEqual([ErrorCode.INVALID_REQUEST, 'Removing the log level of the root logger is not allowed']);
  expect(alter([{ name: 'root', configOperation: 2, value: 'DEBUG' }])).toEqual([ErrorCode.INVALID_REQUEST, 'APPEND operation is not allowed for the BROKER_LOGGER resource']);
  expect(alter([{ name: 'root', configOperation: 3, value: 'DEBUG' }])).toEqual([ErrorCode.INVALID_REQUEST, 'SUBTRACT operation is not allowed for the BROKER_LOGGER resource']);
  expect(alter([{ name: 'root', configOperation: 7, value: 'DEBUG' }])).toEqual([ErrorCode.INVALID_REQUEST, 'Unknown operation type 7 is not allowed for the BROKER_LOGGER resource']);
  expect(alter([{ name: 'root', configOperation: SET, value: null }])).toEqual([ErrorCode.INVALID_REQUEST, 'Null value not supported for : root']);
  expect(
    alter([
      { name: 'root', configOperation: SET, value: 'DEBUG' },
      { name: 'root', configOperation: SET, value: 'WARN' },
    ]),
  ).toEqual([ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys']);
  expect(alter([], '2')).toEqual([ErrorCode.INVALID_REQUEST, 'Unexpected node id. Expected 1, but received 2']);
  expect(alter([], 'one')).toEqual([ErrorCode.INVALID_REQUEST, 'Node id must be an integer, but it is: one']);
  // A good op before a bad one is not applied either.
  expect(
    alter([
      { name: 'kafka.server.ReplicaManager', configOperation: SET, value: 'TRACE' },
      { name: 'root', configOperation: DELETE, value: null },
    ]),
  ).toEqual([ErrorCode.INVALID_REQUEST, 'Removing the log level of the root logger is not allowed']);
  alterBrokerLoggers(logger, 1, '1', [{ name: 'kafka.server.ReplicaManager', configOperation: SET, value: 'TRACE' }], true);
  expect(logger.levels.effective('kafka.server.ReplicaManager')).toBe('info');
});
