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
import { validateClientMetricsConfigs } from '../../config/client-metrics-configs';
import { ConfigResourceType, type MetadataRecord } from '../metadata-records';
import type { AlterConfigOp } from './controller';
import { applySchemalessConfigOps, changedConfigRecords } from './alter-config-ops';

export interface ClientMetricsConfigChange {
  /** The subscription name (the resource name). */
  name: string;
  ops: AlterConfigOp[];
  incremental: boolean;
}

/** The ConfigRecords of one change; throws KafkaError with Kafka's code and message. */
export function clientMetricsConfigRecords(change: ClientMetricsConfigChange, current: ReadonlyMap<string, string>): MetadataRecord[] {
  const next = applySchemalessConfigOps(current, change.ops, change.incremental);
  validateClientMetricsConfigs(change.name, next);
  return changedConfigRecords(ConfigResourceType.CLIENT_METRICS, change.name, current, next);
}
