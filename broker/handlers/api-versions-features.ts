/**
 * The feature part of an ApiVersions answer (v3+, KIP-584), for the broker and the controller
 * listener alike, as Kafka's ApiVersionsResponse.Builder fills it from the metadata image:
 * supported_features = the ranges this krill supports (metadata/features.ts), leaving out, below
 * v4, the features whose minimum is 0 (KAFKA-17492: older clients cannot read a minimum of 0);
 * finalized_features = the image's finalized levels (never a level of 0), each as min = max = the
 * level; finalized_features_epoch = the offset of the last metadata record the image applied (-1
 * before any).
 */
import type { Input } from '../../protocol/primitives/input';
import type { ApiVersionsResponse } from '../../protocol/generated/api-versions';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { SUPPORTED_FEATURES } from '../../metadata/features';

export function apiVersionsFeatures(
  image: MetadataCache,
  version: number,
): Pick<Input<ApiVersionsResponse>, 'supportedFeatures' | 'finalizedFeatures' | 'finalizedFeaturesEpoch'> {
  if (version < 3) return {};
  const supportedFeatures = [...SUPPORTED_FEATURES]
    .filter(([, r]) => version >= 4 || r.min !== 0)
    .map(([name, r]) => ({ name, minVersion: r.min, maxVersion: r.max }));
  const finalizedFeatures = [...image.finalizedFeatures()].map(([name, level]) => ({ name, minVersionLevel: level, maxVersionLevel: level }));
  return { supportedFeatures, finalizedFeatures, finalizedFeaturesEpoch: image.lastAppliedOffset };
}
