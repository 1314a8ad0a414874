/**
 * UpdateFeatures validation and records, as Kafka's FeatureControlManager.updateFeatures: each
 * update is checked in turn and the first failure fails the whole request (no record is written);
 * otherwise one FeatureLevelRecord per update, committed atomically by the controller (nothing
 * with validate_only).
 *
 * The checks, in Kafka's order, each an INVALID_UPDATE_VERSION "Invalid update version V for
 * feature F. <reason>" (metadata.version: "Invalid metadata.version V. <reason>"):
 * - an unknown upgrade type (not 1 UPGRADE, 2 SAFE_DOWNGRADE, 3 UNSAFE_DOWNGRADE);
 * - a level below 0;
 * - a level outside the range this controller supports ("Local controller N only supports
 *   versions R", or "... does not support this feature." for a feature it does not know), then
 *   outside a registered broker's range ("Broker B ...");
 * - a lower level than the current one with upgrade type UPGRADE, a higher one with a downgrade type;
 * - metadata.version: below 3.3-IV0 (level 7), and a downgrade (krill supports a single level, so
 *   any other level has already failed the range check);
 * - any other feature: it must be one Kafka defines ("Feature F not found."), and a level of 1 or
 *   more needs metadata.version 7 or more.
 * The features krill knows have no dependencies on each other's levels (Kafka's TransactionVersion
 * and GroupVersion declare none).
 *
 * Broker registration (ClusterControlManager.processRegistrationFeature): a broker must support
 * every finalized level; one that sends no metadata.version range is taken to support only level 1
 * (3.0-IV1), and a finalized feature it does not list only level 0.
 */
import type { FeatureLevelRecordData } from '../metadata-records';
import { FeatureName, KNOWN_FEATURES, METADATA_VERSION_NAMES, rangeString, supportedRange, type VersionRange } from '../features';

/** Kafka's FeatureUpdate.UpgradeType codes. */
export const UpgradeType = { UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const;

/** metadata.version 3.3-IV0, the first level with FeatureLevelRecord (MINIMUM_BOOTSTRAP_VERSION). */
const MINIMUM_BOOTSTRAP_LEVEL = 7;

export interface FeatureUpdate {
  feature: string;
  level: number;
  upgradeType: number;
}

export type FeatureUpdateOutcome = { ok: true; records: FeatureLevelRecordData[] } | { ok: false; message: string };

export interface FeatureControlContext {
  /** This controller's node id (for messages). */
  nodeId: number;
  /** The finalized levels now (metadata.version included). */
  finalized: ReadonlyMap<string, number>;
  /** The registered brokers' supported ranges, by broker id. */
  brokers: Iterable<{ id: number; supportedFeatures: ReadonlyMap<string, VersionRange> }>;
  /** Warnings (Kafka logs every refusal and every metadata.version change). */
  warn(message: string): void;
}

const metadataVersionName = (level: number): string => METADATA_VERSION_NAMES.get(level) ?? `level ${level}`;

function reasonNotSupported(level: number, what: string, range: VersionRange): string | null {
  if (level >= range.min && level <= range.max) return null;
  return range.max === 0 ? `${what} does not support this feature.` : `${what} only supports versions ${rangeString(range)}`;
}

export function planFeatureUpdates(ctx: FeatureControlContext, updates: readonly FeatureUpdate[]): FeatureUpdateOutcome {
  const records: FeatureLevelRecordData[] = [];
  const proposed = new Map(ctx.finalized);
  for (const u of updates) proposed.set(u.feature, u.level);
  for (const u of updates) {
    const message = checkUpdate(ctx, u, proposed);
    if (message !== null) {
      ctx.warn(message);
      return { ok: false, message };
    }
    records.push({ name: u.feature, featureLevel: u.level });
  }
  return { ok: true, records };
}

function checkUpdate(ctx: FeatureControlContext, u: FeatureUpdate, proposed: ReadonlyMap<string, number>): string | null {
  const invalid = (reason: string) => `Invalid update version ${u.level} for feature ${u.feature}. ${reason}`;
  if (u.upgradeType !== UpgradeType.UPGRADE && u.upgradeType !== UpgradeType.SAFE_DOWNGRADE && u.upgradeType !== UpgradeType.UNSAFE_DOWNGRADE) {
    return invalid('The controller does not support the given upgrade type.');
  }
  const current = ctx.finalized.get(u.feature) ?? 0;
  if (u.level < 0) return invalid('A feature version cannot be less than 0.');
  let reason = reasonNotSupported(u.level, `Local controller ${ctx.nodeId}`, supportedRange(u.feature));
  if (reason === null) {
    for (const b of ctx.brokers) {
      reason = reasonNotSupported(u.level, `Broker ${b.id}`, b.supportedFeatures.get(u.feature) ?? { min: 0, max: 0 });
      if (reason !== null) break;
    }
  }
  if (reason !== null) return invalid(reason);
  if (u.level < current && u.upgradeType === UpgradeType.UPGRADE) {
    return invalid("Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.");
  }
  if (u.level > current && u.upgradeType !== UpgradeType.UPGRADE) return invalid("Can't downgrade to a newer version.");
  if (u.feature === FeatureName.METADATA_VERSION) {
    const invalidMv = (r: string) => `Invalid metadata.version ${u.level}. ${r}`;
    if (u.level < MINIMUM_BOOTSTRAP_LEVEL) return invalidMv(`Unable to set a metadata.version less than 3.3-IV0`);
    if (u.level < current) {
      // Every level krill supports is the same record format: never reached while it supports one level.
      return invalidMv('Refusing to perform the requested downgrade because it might delete metadata information.');
    }
    ctx.warn(`Upgrading metadata.version from ${metadataVersionName(current)} to ${metadataVersionName(u.level)}.`);
    return null;
  }
  if (!KNOWN_FEATURES.includes(u.feature)) return invalid(`Feature ${u.feature} not found.`);
  if (u.level >= 1 && (proposed.get(FeatureName.METADATA_VERSION) ?? 0) < MINIMUM_BOOTSTRAP_LEVEL) {
    return invalid(`${u.feature} could not be set to ${u.level} because it depends on metadata.version=4 (3.3-IV0)`);
  }
  return null;
}

export interface RegisteredFeature {
  name: string;
  minSupportedVersion: number;
  maxSupportedVersion: number;
}

/**
 * The features a registering broker is recorded with (metadata.version 1-1 added when it sent no
 * range for it), or the UNSUPPORTED_VERSION message when it cannot run at a finalized level.
 */
export function checkBrokerFeatures(finalized: ReadonlyMap<string, number>, sent: readonly RegisteredFeature[]): { ok: true; features: RegisteredFeature[] } | { ok: false; message: string } {
  const features = sent.map((f) => ({ ...f }));
  if (!features.some((f) => f.name === FeatureName.METADATA_VERSION)) {
    features.push({ name: FeatureName.METADATA_VERSION, minSupportedVersion: 1, maxSupportedVersion: 1 });
  }
  const check = (f: RegisteredFeature): string | null => {
    const level = finalized.get(f.name) ?? (f.name === FeatureName.METADATA_VERSION ? 1 : 0);
    if (level >= f.minSupportedVersion && level <= f.maxSupportedVersion) return null;
    return `Unable to register because the broker does not support finalized version ${level} of ${f.name}. The broker wants a version between ${f.minSupportedVersion} and ${f.maxSupportedVersion}, inclusive.`;
  };
  for (const f of features) {
    const message = check(f);
    if (message) return { ok: false, message };
  }
  for (const [name, level] of finalized) {
    if (level === 0 || features.some((f) => f.name === name)) continue;
    const message = check({ name, minSupportedVersion: 0, maxSupportedVersion: 0 });
    if (message) return { ok: false, message };
  }
  return { ok: true, features };
}
