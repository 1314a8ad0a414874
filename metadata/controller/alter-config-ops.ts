/**
 * The four IncrementalAlterConfigs operations (SET 0, DELETE 1, APPEND 2, SUBTRACT 3) and the
 * legacy AlterConfigs replacement, applied to a resource's current overrides. Shared by the
 * controller (topic and broker resources) and the broker's preprocessing of BROKER resources
 * (broker/handlers/broker-config-preprocess.ts), so both compute the same result.
 *
 * Also the same for resources the controller has no config schema for (CLIENT_METRICS, GROUP):
 * `applySchemalessConfigOps` (duplicate keys and null values refused as Kafka refuses them, only SET
 * and DELETE, APPEND / SUBTRACT being INVALID_CONFIG since no key is a LIST) and
 * `changedConfigRecords`, the ConfigRecords that turn one set of overrides into another.
 *
 * Invariants: pure (the input map is not changed); APPEND / SUBTRACT work on comma-separated lists
 * and start, like Kafka's, from the config's default when the resource has no value for it; a list
 * that becomes empty removes the override; an unknown operation is INVALID_REQUEST.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import type { MetadataRecord } from '../metadata-records';

export interface AlterConfigOp {
  name: string;
  /** 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (IncrementalAlterConfigs op types). */
  op: number;
  value: string | null;
}

/** The overrides after `ops`; `incremental: false` (AlterConfigs) replaces the whole set. */
export function applyAlterConfigOps(
  current: ReadonlyMap<string, string>,
  ops: readonly AlterConfigOp[],
  incremental: boolean,
  listDefault: (name: string) => string | null,
): Map<string, string> {
  const next = incremental ? new Map(current) : new Map<string, string>();
  for (const op of ops) {
    switch (op.op) {
      case 0:
        if (op.value === null) next.delete(op.name);
        else next.set(op.name, op.value);
        break;
      case 1:
        next.delete(op.name);
        break;
      case 2:
      case 3: {
        const before = next.get(op.name) ?? listDefault(op.name) ?? '';
        const items = before.split(',').filter((x) => x !== '');
        const given = (op.value ?? '').split(',').filter((x) => x !== '');
        const merged = op.op === 2 ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
        if (merged.length === 0) next.delete(op.name);
        else next.set(op.name, merged.join(','));
        break;
      }
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation ${op.op}`);
    }
  }
  return next;
}

const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'];

/**
 * The overrides after `ops` for a resource without a config schema: INVALID_REQUEST "Error due to
 * duplicate config keys" and "Null value not supported for : x" first, then SET and DELETE;
 * APPEND / SUBTRACT are INVALID_CONFIG (no key is a LIST); `incremental: false` replaces the set.
 */
export function applySchemalessConfigOps(current: ReadonlyMap<string, string>, ops: readonly AlterConfigOp[], incremental: boolean): Map<string, string> {
  const names = ops.map((o) => o.name);
  if (new Set(names).size !== names.length) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys');
  const nulls = ops.filter((o) => o.value === null && (!incremental || o.op !== 1)).map((o) => o.name);
  if (nulls.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}`);
  const next = incremental ? new Map(current) : new Map<string, string>();
  for (const op of ops) {
    switch (incremental ? op.op : 0) {
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
  return next;
}

/** One ConfigRecord per key whose value differs between `current` and `next` (null: deleted). */
export function changedConfigRecords(
  resourceType: number,
  resourceName: string,
  current: ReadonlyMap<string, string>,
  next: ReadonlyMap<string, string>,
): MetadataRecord[] {
  const records: MetadataRecord[] = [];
  for (const key of new Set([...current.keys(), ...next.keys()])) {
    const after = next.get(key) ?? null;
    if ((current.get(key) ?? null) === after) continue;
    records.push({ type: 'ConfigRecord', data: { resourceType, resourceName, name: key, value: after } });
  }
  return records;
}
