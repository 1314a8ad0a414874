/**
 * The broker's part of altering BROKER resources (dynamic broker configs, KIP-226), as Kafka's
 * ConfigAdminManager.preprocess does it on a KRaft broker before forwarding to the controller:
 * - the resource name must be "" (cluster default) or this broker's id ("Node id must be an
 *   integer, but it is: X", "Unexpected broker id, expected N, but received X");
 * - config keys may not repeat ("Error due to duplicate config keys"); a null value is refused
 *   except for DELETE ("Null value not supported for : a, b");
 * - APPEND / SUBTRACT only on list configs (INVALID_CONFIG "Config value append is not allowed for
 *   config key: X", "Unknown config name: X");
 * - the resource's whole dynamic set after the change (incremental: its current set from this
 *   broker's metadata image with the ops applied; legacy AlterConfigs: the request's set) must pass
 *   DynamicBrokerConfig's rules (config/dynamic-broker-config.ts);
 * - a listener's new SSL key / trust stores must load ("Validation of dynamic config update of
 *   SSLFactory failed: ...").
 * All but the APPEND / SUBTRACT refusals are INVALID_REQUEST. What passes goes to the controller
 * in one call, which writes the ConfigRecords; every broker then applies them from its image
 * (KafkaServer.applyDynamicConfig).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { brokerConfigDef } from '../../config/config-def';
import { ConfigException } from '../../config/config-types';
import type { KafkaConfig } from '../../config/kafka-config';
import { serverSslSettings } from '../security/ssl/ssl-settings';
import { brokerListDefault, validateDynamicBrokerConfigs } from '../../config/dynamic-broker-config';
import { applyAlterConfigOps, type AlterConfigOp } from '../../metadata/controller/alter-config-ops';
import type { Broker } from '../broker';
import { resourceKey } from './alter-configs';

export interface BrokerResourceChange {
  resourceType: number;
  resourceName: string;
  incremental: boolean;
  ops: AlterConfigOp[];
}

const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

/** Throws KafkaError(INVALID_REQUEST) if the change may not be forwarded (see the header). */
export function preprocessBrokerResource(broker: Broker, change: BrokerResourceChange): void {
  const name = change.resourceName;
  if (name !== '') {
    if (!/^[+-]?\d+$/.test(name)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Node id must be an integer, but it is: ${name}`);
    if (Number(name) !== broker.nodeId) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unexpected broker id, expected ${broker.nodeId}, but received ${name}`);
    }
  }
  const names = change.ops.map((o) => o.name);
  if (new Set(names).size !== names.length) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys');
  const nulls = change.ops.filter((o) => o.value === null && (!change.incremental || o.op !== DELETE)).map((o) => o.name);
  if (nulls.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}`);
  if (change.incremental) {
    for (const o of change.ops) {
      if (o.op !== APPEND && o.op !== SUBTRACT) continue;
      const d = brokerConfigDef(o.name);
      if (!d) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown config name: ${o.name}`);
      if (d.type !== 'list') throw new KafkaError(ErrorCode.INVALID_CONFIG, `Config value ${o.op === APPEND ? 'append' : 'subtract'} is not allowed for config key: ${o.name}`);
    }
  }
  const perBroker = name !== '';
  const current = broker.metadata.brokerConfig(name);
  const props = change.incremental ? applyAlterConfigOps(current, change.ops, true, brokerListDefault) : applyAlterConfigOps(new Map(), change.ops, false, brokerListDefault);
  const other = broker.metadata.brokerConfig(perBroker ? '' : String(broker.nodeId));
  const candidate = validateDynamicBrokerConfigs(broker.staticConfig, props, perBroker, other);
  checkCleanerThreads(broker.config, candidate);
  checkListenerStores(broker, candidate, change.ops.map((o) => o.name));
}

/**
 * LogCleaner.validateReconfiguration: a new log.cleaner.threads must be at least 1 and may at
 * most halve (integer division) or double the count the cleaner runs with now.
 */
function checkCleanerThreads(current: KafkaConfig, candidate: KafkaConfig): void {
  const threads = candidate.getInt('log.cleaner.threads');
  const currentThreads = current.getInt('log.cleaner.threads');
  if (threads === currentThreads) return;
  let message: string | null = null;
  if (threads < 1) message = 'Log cleaner threads should be at least 1';
  else if (threads < Math.floor(currentThreads / 2)) message = `Log cleaner threads cannot be reduced to less than half the current value ${currentThreads}`;
  else if (threads > currentThreads * 2) message = `Log cleaner threads cannot be increased to more than double the current value ${currentThreads}`;
  if (message !== null) throw new KafkaError(ErrorCode.INVALID_REQUEST, message);
}

/**
 * A listener's new SSL stores must load (Kafka's SslFactory.validateReconfiguration): the
 * listener named by each `listener.name.<l>.ssl.*` key must be an SSL or SASL_SSL listener of
 * this broker, and its settings under the candidate config must build a TLS context.
 */
function checkListenerStores(broker: Broker, candidate: KafkaConfig, names: readonly string[]): void {
  const listeners = new Set<string>();
  for (const n of names) {
    const m = /^listener\.name\.([^.]+)\./.exec(n);
    if (m) listeners.add(m[1]);
  }
  for (const l of listeners) {
    const endpoint = broker.staticConfig.dataPlaneListeners().find((e) => e.listenerName.toLowerCase() === l);
    if (!endpoint || (endpoint.securityProtocol !== 'SSL' && endpoint.securityProtocol !== 'SASL_SSL')) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Listener ${l} is not an SSL or SASL_SSL listener of broker ${broker.nodeId}`);
    }
    try {
      serverSslSettings(candidate, endpoint.listenerName, endpoint.securityProtocol);
    } catch (err) {
      if (!(err instanceof ConfigException)) throw err;
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Validation of dynamic config update of SSLFactory failed: ${err.message}`);
    }
  }
}

/**
 * Preprocesses each BROKER resource and forwards those that pass to the controller in one call;
 * the answers by resourceKey.
 */
export async function alterBrokerResources(
  broker: Broker,
  changes: readonly BrokerResourceChange[],
  validateOnly: boolean,
): Promise<Map<string, { errorCode: number; errorMessage: string | null }>> {
  const out = new Map<string, { errorCode: number; errorMessage: string | null }>();
  const forward: BrokerResourceChange[] = [];
  for (const c of changes) {
    try {
      preprocessBrokerResource(broker, c);
      forward.push(c);
    } catch (err) {
      if (!(err instanceof KafkaError)) broker.logger.error('preprocessing a broker config change failed', { resource: c.resourceName, err });
      else broker.logger.info(`refused a dynamic config change of broker resource '${c.resourceName}': ${err.message}`);
      out.set(resourceKey(c), { errorCode: toErrorCode(err), errorMessage: (err as Error).message });
    }
  }
  if (forward.length > 0) {
    const results = await broker.controller.alterBrokerConfigs(
      forward.map((c) => ({ resourceName: c.resourceName, incremental: c.incremental, ops: c.ops })),
      validateOnly,
    );
    forward.forEach((c, i) => out.set(resourceKey(c), { errorCode: results[i].errorCode, errorMessage: results[i].errorMessage }));
  }
  return out;
}
