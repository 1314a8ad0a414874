/**
 * Changes to GROUP (32) config resources, a group's dynamic configs (config/group-configs.ts):
 * from a request's operations and the group's current configs to the ConfigRecords that make the
 * change, or Kafka's error for it. The controller commits the records (controller.ts); every broker
 * applies them to its metadata cache, where the group coordinator reads them.
 *
 * Kafka's rules, in its order (ConfigAdminManager.preprocess on the broker, then
 * ConfigurationControlManager and ControllerConfigurationValidator on the controller):
 * - a key named twice: INVALID_REQUEST "Error due to duplicate config keys";
 * - a null value for anything but DELETE (legacy AlterConfigs: any null): INVALID_REQUEST
 *   "Null value not supported for : x";
 * - incremental SET / DELETE; APPEND and SUBTRACT are refused with INVALID_CONFIG, since Kafka's
 *   controller config schema has no GROUP definitions and so no LIST keys;
 * - legacy AlterConfigs replaces the whole set (keys not given are deleted);
 * - the resulting set is validated whole (validateGroupConfigs: the group name, unknown names,
 *   types and bounds against this controller's group.consumer.* settings). Deleting a key the group
 *   does not have is no change and no error.
 * Only changed keys get a record. The group need not exist (Kafka does not check).
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { validateGroupConfigs, type GroupConfigBounds } from '../../config/group-configs';
import { ConfigResourceType, type MetadataRecord } from '../metadata-records';
import type { AlterConfigOp } from './controller';

export interface GroupConfigChange {
  /** The group id (the resource name). */
  name: string;
  ops: AlterConfigOp[];
  incremental: boolean;
}

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'];

/** The ConfigRecords of one change; throws KafkaError with Kafka's code and message. */
export function groupConfigRecords(change: GroupConfigChange, current: ReadonlyMap<string, string>, bounds: GroupConfigBounds): MetadataRecord[] {
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
  validateGroupConfigs(change.name, next, bounds);
  const records: MetadataRecord[] = [];
  for (const key of new Set([...current.keys(), ...next.keys()])) {
    const after = next.get(key) ?? null;
    if ((current.get(key) ?? null) === after) continue;
    records.push({ type: 'ConfigRecord', data: { resourceType: ConfigResourceType.GROUP, resourceName: change.name, name: key, value: after } });
  }
  return records;
}
