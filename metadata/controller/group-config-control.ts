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
import { validateGroupConfigs, type GroupConfigBounds } from '../../config/group-configs';
import { ConfigResourceType, type MetadataRecord } from '../metadata-records';
import type { AlterConfigOp } from './controller';
import { applySchemalessConfigOps, changedConfigRecords } from './alter-config-ops';

export interface GroupConfigChange {
  /** The group id (the resource name). */
  name: string;
  ops: AlterConfigOp[];
  incremental: boolean;
}

/** The ConfigRecords of one change; throws KafkaError with Kafka's code and message. */
export function groupConfigRecords(change: GroupConfigChange, current: ReadonlyMap<string, string>, bounds: GroupConfigBounds): MetadataRecord[] {
  const next = applySchemalessConfigOps(current, change.ops, change.incremental);
  validateGroupConfigs(change.name, next, bounds);
  return changedConfigRecords(ConfigResourceType.GROUP, change.name, current, next);
}
