/**
 * `group.consumer.assignors` resolved to assignor instances (Kafka's
 * GroupCoordinatorConfig.consumerGroupAssignors). Entries are the short names `uniform` / `range`
 * or Kafka's class names for them; krill runs no Java, so any other class name is a config error,
 * as is an empty list or two entries with the same assignor name. The first entry is the group's
 * default assignor, used for members that name none in ConsumerGroupHeartbeat.
 * (Separate from assignor.ts so that the assignors can import the contract without a cycle.)
 */
import { ConfigException } from '../../../config/config-types';
import type { KafkaConfig } from '../../../config/kafka-config';
import {
  CONSUMER_GROUP_ASSIGNORS_CONFIG,
  CONSUMER_GROUP_ASSIGNORS_DEFAULT,
  RANGE_ASSIGNOR_CLASS,
  RANGE_ASSIGNOR_NAME,
  UNIFORM_ASSIGNOR_CLASS,
  UNIFORM_ASSIGNOR_NAME,
  type PartitionAssignor,
} from './assignor';
import { RangeAssignor } from './range-assignor';
import { UniformAssignor } from './uniform-assignor';

const BUILT_IN: ReadonlyMap<string, () => PartitionAssignor> = new Map<string, () => PartitionAssignor>([
  [UNIFORM_ASSIGNOR_NAME, () => new UniformAssignor()],
  [UNIFORM_ASSIGNOR_CLASS, () => new UniformAssignor()],
  [RANGE_ASSIGNOR_NAME, () => new RangeAssignor()],
  [RANGE_ASSIGNOR_CLASS, () => new RangeAssignor()],
]);

/** The assignors a `group.consumer.assignors` value names, in order. */
export function resolveConsumerGroupAssignors(names: readonly string[]): PartitionAssignor[] {
  const entries = names.map((n) => n.trim()).filter((n) => n.length > 0);
  if (entries.length === 0) throw ConfigException.invalid(CONSUMER_GROUP_ASSIGNORS_CONFIG, names, 'at least one assignor is required');
  const out: PartitionAssignor[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const make = BUILT_IN.get(entry);
    if (make === undefined) {
      throw ConfigException.invalid(CONSUMER_GROUP_ASSIGNORS_CONFIG, names, `unknown assignor ${entry} (krill has ${UNIFORM_ASSIGNOR_NAME} and ${RANGE_ASSIGNOR_NAME})`);
    }
    const assignor = make();
    if (seen.has(assignor.name())) {
      throw ConfigException.invalid(CONSUMER_GROUP_ASSIGNORS_CONFIG, names, `assignor ${assignor.name()} is listed twice`);
    }
    seen.add(assignor.name());
    out.push(assignor);
  }
  return out;
}

/** The configured assignors, keyed by name in config order (the first is the default). */
export function consumerGroupAssignors(config: KafkaConfig): Map<string, PartitionAssignor> {
  const names = config.getList(CONSUMER_GROUP_ASSIGNORS_CONFIG) ?? CONSUMER_GROUP_ASSIGNORS_DEFAULT;
  return new Map(resolveConsumerGroupAssignors(names).map((a) => [a.name(), a]));
}
