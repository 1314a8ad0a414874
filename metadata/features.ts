/**
 * Kafka's feature flags (KIP-584, KIP-778) as krill implements them: the feature names, the
 * version range every krill node supports (what ApiVersions reports as supported_features and
 * what brokers register with), and the levels a fresh metadata log is bootstrapped with.
 *
 * The ranges are what krill really does, not what Kafka 4.0 supports:
 * - metadata.version 25 (4.0-IV3) only: krill writes every metadata record at its newest version
 *   (RegisterBrokerRecord v3, PartitionRecord / PartitionChangeRecord v2) and serves the API versions
 *   that level stands for (Fetch v17, ListOffsets v10), so it cannot run at an older level.
 * - transaction.version 0-2: at 1 and 2 the transaction coordinator writes flexible
 *   TransactionLogValue v1 records, at 0 v0 records (TransactionVersion.transactionLogValueVersion);
 *   at 2 (KIP-890 part 2) a client that ends its transactions with EndTxn v5 gets its producer epoch
 *   bumped at the end of every transaction (TransactionVersion.supportsEpochBump), and coordinator
 *   aborts (timeouts, fences) bump it too.
 * - group.version 0-1: at 1 (Kafka's GroupVersion.GV_1, KIP-848) the consumer group protocol is
 *   served (ConsumerGroupHeartbeat, ConsumerGroupDescribe); at 0 they answer UNSUPPORTED_VERSION, as
 *   Kafka's KafkaApis does when the protocol is not enabled.
 * - kraft.version 0: a single static controller, no dynamic KRaft quorum (KIP-853).
 *
 * A finalized level of 0 means "not enabled" and is not listed (Kafka leaves such features out of
 * ApiVersions' finalized_features and drops them from the image).
 */
export const FeatureName = {
  METADATA_VERSION: 'metadata.version',
  KRAFT_VERSION: 'kraft.version',
  TRANSACTION_VERSION: 'transaction.version',
  GROUP_VERSION: 'group.version',
} as const;

export interface VersionRange {
  min: number;
  max: number;
}

/** metadata.version 4.0-IV3, Kafka 4.0's latest production level. */
export const METADATA_VERSION_LEVEL = 25;

/** Kafka's MetadataVersion names for the levels krill reports in messages. */
export const METADATA_VERSION_NAMES: ReadonlyMap<number, string> = new Map([[METADATA_VERSION_LEVEL, '4.0-IV3']]);

/** The Kafka features (server-common's Features enum, plus metadata.version), in Kafka's order. */
export const KNOWN_FEATURES: readonly string[] = [FeatureName.METADATA_VERSION, FeatureName.KRAFT_VERSION, FeatureName.TRANSACTION_VERSION, FeatureName.GROUP_VERSION];

/** What every krill node supports, by feature (a feature not listed is Kafka's DISABLED, 0-0). */
export const SUPPORTED_FEATURES: ReadonlyMap<string, VersionRange> = new Map([
  [FeatureName.METADATA_VERSION, { min: METADATA_VERSION_LEVEL, max: METADATA_VERSION_LEVEL }],
  [FeatureName.KRAFT_VERSION, { min: 0, max: 0 }],
  [FeatureName.TRANSACTION_VERSION, { min: 0, max: 2 }],
  [FeatureName.GROUP_VERSION, { min: 0, max: 1 }],
]);

/** Kafka's QuorumFeatures.DISABLED: the range of a feature a node does not know. */
export const DISABLED: VersionRange = { min: 0, max: 0 };

export function supportedRange(feature: string): VersionRange {
  return SUPPORTED_FEATURES.get(feature) ?? DISABLED;
}

/**
 * The finalized levels a fresh metadata log starts with (FeatureLevelRecords of the bootstrap batch).
 * transaction.version and group.version are Kafka's Features.*.defaultValue(metadata.version): the
 * highest level whose bootstrap metadata.version is at or below the cluster's. TV_2's is 4.0-IV2 and
 * GV_1's 4.0-IV0, so a fresh cluster at 4.0-IV3 starts at transaction.version 2 and group.version 1,
 * as a fresh Kafka 4.0 cluster does.
 */
export const BOOTSTRAP_FEATURE_LEVELS: ReadonlyMap<string, number> = new Map([
  [FeatureName.METADATA_VERSION, METADATA_VERSION_LEVEL],
  [FeatureName.TRANSACTION_VERSION, 2],
  [FeatureName.GROUP_VERSION, 1],
]);

/** Kafka's GroupVersion.isConsumerRebalanceProtocolSupported: group.version 1 enables the KIP-848 protocol. */
export function supportsConsumerRebalanceProtocol(groupVersion: number): boolean {
  return groupVersion >= 1;
}

/** Kafka's TransactionVersion.supportsEpochBump: transaction.version 2 ends every transaction with an epoch bump. */
export function supportsEpochBump(transactionVersion: number): boolean {
  return transactionVersion >= 2;
}

/** Kafka's VersionRange.toString: "1", "0-1". */
export function rangeString(r: VersionRange): string {
  return r.min === r.max ? String(r.min) : `${r.min}-${r.max}`;
}

/** The features as RegisterBrokerRecord / BrokerRegistration carry them. */
export function supportedFeatureRecords(): { name: string; minSupportedVersion: number; maxSupportedVersion: number }[] {
  return [...SUPPORTED_FEATURES].map(([name, r]) => ({ name, minSupportedVersion: r.min, maxSupportedVersion: r.max }));
}
