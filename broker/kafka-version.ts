/**
 * Emulating an Apache Kafka release's ApiVersions (`krill.kafka.version`, the CLI's --kafka-version,
 * startBroker's / startCluster's `kafkaVersion`): the ranges that release's brokers advertise
 * (protocol/kafka-release-deltas.ts: 2.8 and 3.0 to 3.9 generated from Kafka's schemas at each
 * release, protocol/kafka-release-api-versions.ts; 4.0 and 4.1 derived from 3.9 by the reviewed,
 * hand-maintained list of each release's documented changes) intersected with the ranges krill's
 * handlers implement. An API that the release does not have, or whose range does not meet krill's,
 * is neither advertised nor served: the dispatcher refuses it like any unsupported version. So
 * emulating 4.0 also stops serving the versions KIP-896 removed (Fetch v0-3, ListOffsets v0, ...).
 */
import { KAFKA_RELEASES } from '../protocol/kafka-release-deltas';

export const KAFKA_VERSION_CONFIG = 'krill.kafka.version';

export interface VersionRangeLimit {
  minVersion: number;
  maxVersion: number;
}

/** apiKey -> the range both the release and krill have; throws for a release with no table. */
export function emulatedVersionRanges(release: string, implemented: readonly { apiKey: number; minVersion: number; maxVersion: number }[]): Map<number, VersionRangeLimit> {
  const table = KAFKA_RELEASES[release];
  if (!table) throw new Error(`unknown Kafka release ${release}; krill can emulate ${Object.keys(KAFKA_RELEASES).join(', ')}`);
  const theirs = new Map(table.apis.map(([key, , min, max]) => [key, { min, max }]));
  const out = new Map<number, VersionRangeLimit>();
  for (const h of implemented) {
    const r = theirs.get(h.apiKey);
    if (!r) continue;
    const minVersion = Math.max(r.min, h.minVersion);
    const maxVersion = Math.min(r.max, h.maxVersion);
    if (minVersion <= maxVersion) out.set(h.apiKey, { minVersion, maxVersion });
  }
  return out;
}
