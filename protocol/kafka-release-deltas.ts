/**
 * HAND-MAINTAINED, REVIEWED: the API version changes of the Apache Kafka release lines whose
 * schemas krill's generated table (protocol/kafka-release-api-versions.ts, read from apache/kafka
 * at each release tag) does not cover, because the clone it was generated from predates them. Each
 * release here is the previous release's table plus the documented changes of that release, one
 * entry per change with the KIP (and the JIRA) that made it; nothing is generated, so a change is
 * added or corrected here by hand, checked against the release's notes, its KIPs and its
 * ApiVersions answer. `kafka-release-deltas.test.ts` checks the derived ranges of a handful of APIs
 * against the published facts. When the generated table gains a release line (its schemas become
 * available), that release's entry here is deleted: the generated table wins and the two are never
 * merged (`KAFKA_RELEASES` refuses a release in both).
 *
 * Facts kept here (the ranges a KRaft broker of the release advertises to clients):
 * - 4.0 = 3.9 + KIP-896 (the removal of the protocol versions deprecated since 2.x: minimum
 *   versions raised) + the version bumps of 4.0. Produce is listed with 3 as its minimum, the
 *   oldest version Kafka 4.0 accepts; its ApiVersions answer still lists 0 (KAFKA-18659: old
 *   librdkafka refused to compress unless Produce v0 was advertised) while v0-2 requests are
 *   refused with UNSUPPORTED_VERSION. krill's Produce handler starts at v3 anyway, so emulation
 *   advertises 3 either way.
 * - 4.1 = 4.0 + JoinGroup v0-1 restored (KAFKA-19444) + the version bumps and new APIs of 4.1
 *   (Produce 13, Fetch 18, share groups (KIP-932) now stable from v1, ...). The share-group APIs are
 *   listed with their schema ranges; a Kafka broker may leave them out of ApiVersions while share
 *   groups are not enabled. krill implements none of them, so emulation never advertises them.
 * Ops: `min` sets the oldest version; `max` raises the newest by exactly one (a skipped version is a
 * mistake in this list); `add` adds an API the base lacks; `max` with `name` also renames the API.
 */
import { KAFKA_RELEASE_API_VERSIONS } from './kafka-release-api-versions';

export type ReleaseApi = readonly [apiKey: number, name: string, minVersion: number, maxVersion: number];

export type ReleaseChange =
  | { readonly op: 'min'; readonly apiKey: number; readonly min: number; readonly kip: string; readonly why?: string }
  | { readonly op: 'max'; readonly apiKey: number; readonly max: number; readonly kip: string; readonly name?: string; readonly why?: string }
  | { readonly op: 'add'; readonly apiKey: number; readonly name: string; readonly min: number; readonly max: number; readonly kip: string; readonly why?: string };

export interface ReleaseDelta {
  readonly release: string;
  /** The release line this one is derived from (generated or itself derived). */
  readonly base: string;
  readonly changes: readonly ReleaseChange[];
}

const KIP896 = 'KIP-896';

export const KAFKA_RELEASE_DELTAS: readonly ReleaseDelta[] = [
  {
    release: '4.0',
    base: '3.9',
    changes: [
      // KIP-896: protocol versions deprecated since Kafka 2.x removed in 4.0 (broker-facing APIs).
      { op: 'min', apiKey: 0, min: 3, kip: KIP896, why: 'Produce v0-2 refused (ApiVersions still lists 0, KAFKA-18659)' },
      { op: 'min', apiKey: 1, min: 4, kip: KIP896 },
      { op: 'min', apiKey: 2, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 8, min: 2, kip: KIP896 },
      { op: 'min', apiKey: 9, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 11, min: 2, kip: KIP896 },
      { op: 'min', apiKey: 19, min: 2, kip: KIP896 },
      { op: 'min', apiKey: 20, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 23, min: 2, kip: KIP896 },
      { op: 'min', apiKey: 27, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 29, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 30, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 31, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 32, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 34, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 35, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 38, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 39, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 40, min: 1, kip: KIP896 },
      { op: 'min', apiKey: 41, min: 1, kip: KIP896 },
      // Version bumps of 4.0.
      { op: 'max', apiKey: 0, max: 12, kip: 'KIP-890', why: 'KAFKA-14563, transactions v2 (part 2)' },
      { op: 'max', apiKey: 2, max: 10, kip: 'KIP-1075', why: 'KAFKA-15859, timeout_ms' },
      { op: 'max', apiKey: 3, max: 13, kip: 'KIP-1102', why: 'KAFKA-17885, top-level error_code (REBOOTSTRAP_REQUIRED)' },
      { op: 'max', apiKey: 15, max: 6, kip: 'KIP-1043', why: 'KAFKA-17550, error_message per group' },
      { op: 'max', apiKey: 26, max: 5, kip: 'KIP-890', why: 'KAFKA-14562, EndTxn v5 stable' },
      { op: 'max', apiKey: 28, max: 5, kip: 'KIP-890', why: 'KAFKA-14563' },
      { op: 'max', apiKey: 57, max: 2, kip: 'KIP-1022', why: 'KAFKA-16308, UpdateFeatures v2' },
      { op: 'max', apiKey: 60, max: 2, kip: 'KIP-1073', why: 'KAFKA-17094, DescribeCluster endpoint type' },
      { op: 'max', apiKey: 68, max: 1, kip: 'KIP-848', why: 'KAFKA-17592, subscribed topic regex (with KIP-1082)' },
      { op: 'max', apiKey: 69, max: 1, kip: 'KIP-848', why: 'KAFKA-17750' },
    ],
  },
  {
    release: '4.1',
    base: '4.0',
    changes: [
      { op: 'min', apiKey: 11, min: 0, kip: KIP896, why: 'KAFKA-19444: JoinGroup v0-1 restored (old clients still in use)' },
      { op: 'max', apiKey: 0, max: 13, kip: 'KIP-516', why: 'KAFKA-10551, topic ids in Produce' },
      { op: 'max', apiKey: 1, max: 18, kip: 'KIP-1166', why: 'KAFKA-14145' },
      { op: 'max', apiKey: 45, max: 1, kip: 'KIP-860', why: 'KAFKA-14121, allow_replication_factor_change' },
      { op: 'max', apiKey: 66, max: 2, kip: 'KIP-1152', why: 'KAFKA-19073, transactional_id_pattern' },
      { op: 'max', apiKey: 74, max: 1, name: 'ListConfigResources', kip: 'KIP-1142', why: 'KAFKA-18904, ListClientMetricsResources renamed and extended' },
      // KIP-932 share groups, stable in 4.1; v0 was 4.0's early access and is gone.
      { op: 'add', apiKey: 76, name: 'ShareGroupHeartbeat', min: 1, max: 1, kip: 'KIP-932' },
      { op: 'add', apiKey: 77, name: 'ShareGroupDescribe', min: 1, max: 1, kip: 'KIP-932' },
      { op: 'add', apiKey: 78, name: 'ShareFetch', min: 1, max: 1, kip: 'KIP-932' },
      { op: 'add', apiKey: 79, name: 'ShareAcknowledge', min: 1, max: 1, kip: 'KIP-932' },
      { op: 'add', apiKey: 83, name: 'InitializeShareGroupState', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16950' },
      { op: 'add', apiKey: 84, name: 'ReadShareGroupState', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16950' },
      { op: 'add', apiKey: 85, name: 'WriteShareGroupState', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16950' },
      { op: 'add', apiKey: 86, name: 'DeleteShareGroupState', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16950' },
      { op: 'add', apiKey: 87, name: 'ReadShareGroupStateSummary', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16950' },
      { op: 'add', apiKey: 90, name: 'DescribeShareGroupOffsets', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16720' },
      { op: 'add', apiKey: 91, name: 'AlterShareGroupOffsets', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16717' },
      { op: 'add', apiKey: 92, name: 'DeleteShareGroupOffsets', min: 0, max: 0, kip: 'KIP-932', why: 'KAFKA-16718' },
    ],
  },
];

/** `base`'s APIs with `delta`'s changes applied, by api key; throws on a change that does not fit. */
export function applyReleaseDelta(base: readonly ReleaseApi[], delta: ReleaseDelta): ReleaseApi[] {
  const apis = new Map<number, [number, string, number, number]>(base.map(([k, n, lo, hi]) => [k, [k, n, lo, hi]]));
  for (const c of delta.changes) {
    const cur = apis.get(c.apiKey);
    const where = `${delta.release}: API ${c.apiKey} (${c.op}, ${c.kip})`;
    if (c.op === 'add') {
      if (cur) throw new Error(`${where}: already in ${delta.base}`);
      if (c.min > c.max) throw new Error(`${where}: empty range`);
      apis.set(c.apiKey, [c.apiKey, c.name, c.min, c.max]);
      continue;
    }
    if (!cur) throw new Error(`${where}: not in ${delta.base}`);
    if (c.op === 'min') {
      if (c.min === cur[2] || c.min > cur[3]) throw new Error(`${where}: minimum ${cur[2]} -> ${c.min} is no change or past the maximum ${cur[3]}`);
      cur[2] = c.min;
    } else {
      if (c.max !== cur[3] + 1) throw new Error(`${where}: maximum ${cur[3]} -> ${c.max} skips or repeats a version`);
      cur[3] = c.max;
      if (c.name !== undefined) cur[1] = c.name;
    }
  }
  return [...apis.values()].sort((a, b) => a[0] - b[0]);
}

/** Every release line krill can emulate: the generated ones, then the derived ones in order. */
function buildReleases(): Readonly<Record<string, { readonly apis: readonly ReleaseApi[] }>> {
  const out: Record<string, { apis: readonly ReleaseApi[] }> = {};
  for (const [release, t] of Object.entries(KAFKA_RELEASE_API_VERSIONS)) out[release] = { apis: t.apis };
  for (const d of KAFKA_RELEASE_DELTAS) {
    if (out[d.release]) throw new Error(`Kafka ${d.release} is both generated and derived: delete its delta`);
    const base = out[d.base];
    if (!base) throw new Error(`Kafka ${d.release}: unknown base release ${d.base}`);
    out[d.release] = { apis: applyReleaseDelta(base.apis, d) };
  }
  return out;
}

export const KAFKA_RELEASES = buildReleases();
