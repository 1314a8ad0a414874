/**
 * The BROKER_LOGGER config resource (KIP-412): this broker's log4j loggers and their levels, read by
 * DescribeConfigs and changed at run time by IncrementalAlterConfigs (Kafka's RuntimeLoggerManager
 * and Log4jController, over krill's LogLevels: common/log-levels.ts).
 *
 * Rules kept from Kafka: the resource name must be this broker's node id (INVALID_REQUEST "Node id
 * must be an integer, ..." / "Unexpected node id. ..."); a config key listed twice, or a null value
 * for anything but DELETE, is INVALID_REQUEST; SET needs an existing logger (INVALID_CONFIG "Logger
 * X does not exist!") and one of FATAL, ERROR, WARN, INFO, DEBUG, TRACE, upper case as Kafka's
 * LogLevelConfig.VALID_LOG_LEVELS (INVALID_CONFIG otherwise); DELETE needs an existing logger other
 * than root (INVALID_REQUEST) and makes it inherit again; APPEND and SUBTRACT are INVALID_REQUEST.
 * Every op of the resource is validated before any is applied, so a bad op changes nothing;
 * validate_only changes nothing. Each change is logged at WARN, as Kafka does.
 *
 * krill has five levels: FATAL selects ERROR (and reads back as ERROR).
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { ConfigSource, ConfigType } from '../../config/config-types';
import type { DescribeConfigEntry } from '../../config/kafka-config';
import { LOG4J_LEVELS, ROOT_LOGGER } from '../../common/log-levels';
import type { Logger } from '../../common/logger';

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

const VALID_LEVELS_STRING = Object.keys(LOG4J_LEVELS).sort().join(', ');

function checkNodeId(resourceName: string, nodeId: number): void {
  if (!/^-?\d+$/.test(resourceName)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Node id must be an integer, but it is: ${resourceName}`);
  if (Number(resourceName) !== nodeId) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unexpected node id. Expected ${nodeId}, but received ${resourceName}`);
}

/** DescribeConfigs: every logger with its effective level, as DYNAMIC_BROKER_LOGGER_CONFIG entries. */
export function describeBrokerLoggers(logger: Logger, nodeId: number, resourceName: string, names: readonly string[] | null): DescribeConfigEntry[] {
  if (resourceName === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Broker id must not be empty');
  if (!/^-?\d+$/.test(resourceName)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Broker id must be an integer, but it is: ${resourceName}`);
  if (Number(resourceName) !== nodeId) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${nodeId} but received ${resourceName}`);
  return logger.levels
    .all()
    .filter((l) => !names || names.includes(l.name))
    .map((l) => ({
      name: l.name,
      value: l.level.toUpperCase(),
      readOnly: false,
      isDefault: false,
      source: ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
      isSensitive: false,
      synonyms: [],
      configType: ConfigType.STRING,
      documentation: null,
    }));
}

export interface LoggerConfigOp {
  name: string;
  configOperation: number;
  value: string | null;
}

/**
 * IncrementalAlterConfigs on BROKER_LOGGER `resourceName`: validates every op, then (unless
 * validateOnly) applies them. Throws a KafkaError with Kafka's code and message.
 */
export function alterBrokerLoggers(logger: Logger, nodeId: number, resourceName: string, ops: readonly LoggerConfigOp[], validateOnly: boolean): void {
  const names = ops.map((o) => o.name);
  if (new Set(names).size !== names.length) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys');
  const nulls = ops.filter((o) => o.configOperation !== DELETE && o.value === null).map((o) => o.name);
  if (nulls.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}`);
  checkNodeId(resourceName, nodeId);
  const levels = logger.levels;
  const mustExist = (name: string) => {
    if (!levels.exists(name)) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Logger ${name} does not exist!`);
  };
  for (const op of ops) {
    switch (op.configOperation) {
      case SET:
        mustExist(op.name);
        if (!Object.prototype.hasOwnProperty.call(LOG4J_LEVELS, op.value!)) {
          throw new KafkaError(
            ErrorCode.INVALID_CONFIG,
            `Cannot set the log level of ${op.name} to ${op.value} as it is not a supported log level. Valid log levels are ${VALID_LEVELS_STRING}`,
          );
        }
        break;
      case DELETE:
        mustExist(op.name);
        if (op.name === ROOT_LOGGER) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Removing the log level of the ${ROOT_LOGGER} logger is not allowed`);
        break;
      case APPEND:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'APPEND operation is not allowed for the BROKER_LOGGER resource');
      case SUBTRACT:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'SUBTRACT operation is not allowed for the BROKER_LOGGER resource');
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown operation type ${op.configOperation} is not allowed for the BROKER_LOGGER resource`);
    }
  }
  if (validateOnly) return;
  for (const op of ops) {
    if (op.configOperation === SET) {
      levels.set(op.name, LOG4J_LEVELS[op.value!]);
      logger.warn(`Updated the log level of ${op.name} to ${op.value}`);
    } else {
      levels.unset(op.name);
      logger.warn(`Unset the log level of ${op.name}`);
    }
  }
}
