/**
 * The four IncrementalAlterConfigs operations (SET 0, DELETE 1, APPEND 2, SUBTRACT 3) and the
 * legacy AlterConfigs replacement, applied to a resource's current overrides. Shared by the
 * controller (topic and broker resources) and the broker's preprocessing of BROKER resources
 * (broker/handlers/broker-config-preprocess.ts), so both compute the same result.
 *
 * Invariants: pure (the input map is not changed); APPEND / SUBTRACT work on comma-separated lists
 * and start, like Kafka's, from the config's default when the resource has no value for it; a list
 * that becomes empty removes the override; an unknown operation is INVALID_REQUEST.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';

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
