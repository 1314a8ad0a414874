/**
 * Whether this broker serves the KIP-848 consumer group protocol now (Kafka's
 * KafkaApis.isConsumerGroupProtocolEnabled): the finalized group.version is at least 1 (GV_1) and
 * group.coordinator.rebalance.protocols lists `consumer`. ConsumerGroupHeartbeat and
 * ConsumerGroupDescribe answer UNSUPPORTED_VERSION otherwise. Read at each request, so an
 * UpdateFeatures that lowers group.version takes effect at once.
 */
import { FeatureName, supportsConsumerRebalanceProtocol } from '../../metadata/features';

/** KafkaApis.isConsumerGroupProtocolEnabled: group.version >= 1 and `consumer` in group.coordinator.rebalance.protocols. */
export function consumerGroupProtocolEnabled(broker: { metadata: { featureLevel(name: string): number }; config: { getList(name: string): string[] | null } }): boolean {
  return supportsConsumerRebalanceProtocol(broker.metadata.featureLevel(FeatureName.GROUP_VERSION)) && (broker.config.getList('group.coordinator.rebalance.protocols') ?? []).includes('consumer');
}
