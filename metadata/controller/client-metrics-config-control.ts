/**
 * Changes to CLIENT_METRICS (16) config resources, the client-metrics subscriptions of KIP-714:
 * from a request's operations and the subscription's current configs to the ConfigRecords that
 * make the change, or Kafka's error for it. The controller commits the records (controller.ts).
 *
 * Kafka's rules, in its order (ConfigAdminManager.preprocess on the broker, then
 * ConfigurationControlManager and ClientMetricsConfigs.validate on the controller):
 * - a key named twice: INVALID_REQUEST "Error due to duplicate config keys";
 * - a null value for anything but DELETE (legacy AlterConfigs: any null): INVALID_REQUEST;
 * - incremental SET / DELETE; APPEND and SUBTRACT are refused with INVALID_CONFIG, since Kafka's
 *   controller has no config schema for CLIENT_METRICS and so no LIST keys;
 * - legacy AlterConfigs replaces the whole set (keys not given are deleted);
 * - the resulting set is validated whole (config/client-metrics-configs.ts); an empty set deletes
 *   the subscription.
 * Only changed keys get a record.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { validateClientMetricsConfigs } from '../../config/client-metrics-configs';
import { ConfigResourceType, type MetadataRecord } from '../metadata-records';
import type { AlterConfigOp } from './controller';

export interface ClientMetricsConfigChange {
  /** The subscription name (the resource name). */
  name: string;
  ops: AlterConfigOp[];
  incremental: boolean;
}

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'];

/** The ConfigRecords of one change; throws KafkaError with Kafka's code and message. */
export function clientMetricsConfigRecords(change: ClientMetricsConfigChange, current: ReadonlyMap<string, string>): MetadataRecord[] {
  const names = change.ops.map((o) => o.name);
  if (new Set(names).size !== names.length) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys');
  const nulls = change.ops.filter((o) => o.value === null && (!change.incremental || o.op !== 1)).map((o) => o.name);
  if (nulls.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}`);
  const next = change.incremental ? new Map(current) : new Map<string, string>();
  for (const op of change.ops) {
    switch (change.incremental ? op.op : 0) {
      case 0:
        next.set(op.name, op.value!);
        break;
      case 1:
        next.delete(op.name);
        break;
      case 2:
      case 3:
        throw new KafkaError(ErrorCode.INVALID_CONFIG, `Can't ${OP_NAMES[op.op]} to key ${op.name} because its type is not LIST.`);
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation ${op.op}`);
    }
  }
  validateClientMetricsConfigs(change.name, next);
  const records: MetadataRecord[] = [];
  for (const key of new Set([...current.keys(), ...next.keys()])) {
    const after = next.get(key) ?? null;
    if ((current.get(key) ?? null) === after) continue;
    records.push({ type: 'ConfigRecord', data: { resourceType: ConfigResourceType.CLIENT_METRICS, resourceName: change.name, name: key, value: after } });
  }
  return records;
}
