/**
 * ClientQuotaControlManager: the controller's half of AlterClientQuotas (KIP-546), after Kafka's
 * class of the same name. It turns a list of alterations into the ClientQuotaRecords to commit and
 * one result per distinct entity; it changes nothing itself (the Controller commits the records,
 * and the image, MetadataCache, applies them like every other record). It reads the current
 * quotas through `current`, i.e. from the controller's image.
 *
 * Kafka's rules, in Kafka's order, with its error codes and messages:
 * - the entity is the request's (type, name) list made into a map (a repeated type keeps its last
 *   name); empty: "Invalid empty client quota entity"; a type other than user / client-id / ip:
 *   "Unhandled client quota entity type: T"; an empty name: "Empty T not supported" (null is the
 *   default entity and is fine);
 * - combinations: user, client-id, user + client-id take producer_byte_rate and consumer_byte_rate
 *   (LONG), request_percentage and controller_mutation_rate (DOUBLE); ip alone takes
 *   connection_creation_rate (INT), and its name must be an IP address or a host name that
 *   resolves (Kafka's InetAddress.getByName; the lookups run before the controller's queue so a
 *   slow DNS answer holds up nothing else);
 * - per key: unknown "Invalid configuration key K"; <= 0 "Quota K must be greater than 0"; LONG /
 *   INT above the type's range "Proposed value for K is too large for a LONG." / "... an INT.";
 *   LONG / INT with a fraction above 1e-6 "K cannot be a fractional value.". A removal (value
 *   null) of a key the entity does not have writes nothing and is not an error, whatever the key;
 *   a value equal to the current one writes nothing either;
 * - a key twice in one entry, or an entity that appeared earlier in the request:
 *   "Ignoring duplicate entity ClientQuotaEntity(entries={...})" (Kafka overwrites its "Duplicate
 *   quota key" result with this one). As in Kafka, the records of the entity's first, valid entry
 *   are still written although its result is then this error;
 * - all of one entity's keys or none (the first bad key fails the entity); entities are
 *   independent: the good ones are written even when others fail;
 * - more than 10000 records in one request (Kafka's MAX_RECORDS_PER_USER_OP): nothing is written
 *   and every entry of the request fails with POLICY_VIOLATION (Kafka's controller fails the whole
 *   operation, and the request's error response carries the error's default message).
 * Every error is INVALID_REQUEST except that last one.
 *
 * Where krill's answer can differ from Kafka's only in order: Kafka keys its results, its entities
 * and the keys of an entry by Java HashMap, whose iteration order is unspecified. krill answers one
 * result per distinct entity in the order the entities first appear, lists an entity's parts as
 * client-id, user, ip (the order Kafka's HashMap happens to give these three) then other types in
 * request order, and checks keys in request order (so with several bad keys, which one is named can
 * differ).
 */
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { ErrorCode } from '../../protocol/errors';
import type { MetadataRecord } from '../metadata-records';
import {
  ClientQuotaEntityType,
  clientQuotaEntityFromData,
  type ClientQuotaEntity,
  type ClientQuotaEntityData,
} from '../metadata-cache';

/** Kafka's quota config keys (QuotaConfig). */
export const QuotaConfigKey = {
  PRODUCER_BYTE_RATE: 'producer_byte_rate',
  CONSUMER_BYTE_RATE: 'consumer_byte_rate',
  REQUEST_PERCENTAGE: 'request_percentage',
  CONTROLLER_MUTATION_RATE: 'controller_mutation_rate',
  IP_CONNECTION_RATE: 'connection_creation_rate',
} as const;

type QuotaValueType = 'LONG' | 'INT' | 'DOUBLE';

/** QuotaConfig.userAndClientQuotaConfigs(): the keys of user, client-id and user + client-id entities. */
export const USER_AND_CLIENT_QUOTA_KEYS: ReadonlyMap<string, QuotaValueType> = new Map<string, QuotaValueType>([
  [QuotaConfigKey.PRODUCER_BYTE_RATE, 'LONG'],
  [QuotaConfigKey.CONSUMER_BYTE_RATE, 'LONG'],
  [QuotaConfigKey.REQUEST_PERCENTAGE, 'DOUBLE'],
  [QuotaConfigKey.CONTROLLER_MUTATION_RATE, 'DOUBLE'],
]);

/** QuotaConfig.ipConfigs(): the keys of ip entities. */
export const IP_QUOTA_KEYS: ReadonlyMap<string, QuotaValueType> = new Map<string, QuotaValueType>([[QuotaConfigKey.IP_CONNECTION_RATE, 'INT']]);

/** Kafka's QuorumController.MAX_RECORDS_PER_USER_OP. */
export const MAX_RECORDS_PER_USER_OP = 10_000;

/** Errors.POLICY_VIOLATION's default message (what a failed request's error response carries). */
const POLICY_VIOLATION_MESSAGE = 'Request parameters do not satisfy the configured policy.';

/** One entry of AlterClientQuotas: an entity as the request lists it, and its ops (value null = remove). */
export interface ClientQuotaAlteration {
  entity: ClientQuotaEntityData[];
  ops: { key: string; value: number | null }[];
}

/** The outcome for one entity (AlterClientQuotasResponse entry). */
export interface ClientQuotaAlterationResult {
  entity: ClientQuotaEntityData[];
  errorCode: number;
  errorMessage: string | null;
}

export interface ClientQuotaControlManagerOptions {
  /** The entity's current quotas (the controller's image). */
  current: (entity: ClientQuotaEntity) => ReadonlyMap<string, number>;
  /** Whether a host name resolves (default: a DNS lookup). Only asked for names that are not IP literals. */
  isResolvableHost?: (host: string) => Promise<boolean>;
}

const KNOWN_ORDER: readonly string[] = [ClientQuotaEntityType.CLIENT_ID, ClientQuotaEntityType.USER, ClientQuotaEntityType.IP];

/** The request's (type, name) list as Kafka's map: last name per type; parts in client-id, user, ip, then other types' order. */
function entityMap(data: readonly ClientQuotaEntityData[]): Map<string, string | null> {
  const byType = new Map<string, string | null>();
  for (const d of data) byType.set(d.entityType, d.entityName);
  const out = new Map<string, string | null>();
  for (const t of KNOWN_ORDER) if (byType.has(t)) out.set(t, byType.get(t)!);
  for (const [t, n] of byType) if (!out.has(t)) out.set(t, n);
  return out;
}

const mapKey = (m: Map<string, string | null>): string => JSON.stringify([...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));

const mapToData = (m: Map<string, string | null>): ClientQuotaEntityData[] => [...m].map(([entityType, entityName]) => ({ entityType, entityName }));

/** Kafka's ClientQuotaEntity.toString(): `ClientQuotaEntity(entries={client-id=c, user=null})`. */
export function describeEntity(m: Map<string, string | null>): string {
  return `ClientQuotaEntity(entries={${[...m].map(([t, n]) => `${t}=${n}`).join(', ')}})`;
}

/** Kafka's ClientQuotaControlManager.validateQuotaKeyValue: null when the key and value are acceptable. */
export function validateQuotaKeyValue(validKeys: ReadonlyMap<string, QuotaValueType>, key: string, value: number): string | null {
  const type = validKeys.get(key);
  if (type === undefined) return `Invalid configuration key ${key}`;
  if (value <= 0) return `Quota ${key} must be greater than 0`;
  switch (type) {
    case 'DOUBLE':
      return null;
    case 'INT':
      if (value > 2147483647) return `Proposed value for ${key} is too large for an INT.`;
      return integral(value, key);
    case 'LONG':
      // Java compares with Long.MAX_VALUE as a double, i.e. 2^63.
      if (value > 9223372036854775807) return `Proposed value for ${key} is too large for a LONG.`;
      return integral(value, key);
  }
}

function integral(value: number, key: string): string | null {
  return Math.abs(value % 1.0) > 1e-6 ? `${key} cannot be a fractional value.` : null;
}

async function dnsResolves(host: string): Promise<boolean> {
  try {
    await lookup(host);
    return true;
  } catch {
    return false;
  }
}

export class ClientQuotaControlManager {
  private readonly isResolvableHost: (host: string) => Promise<boolean>;

  constructor(private readonly opts: ClientQuotaControlManagerOptions) {
    this.isResolvableHost = opts.isResolvableHost ?? dnsResolves;
  }

  /**
   * The ip names of the request's ip-only entities that are valid (an IP literal or a host that
   * resolves), for `alterClientQuotas`. Run before taking the controller's queue.
   */
  async validIpEntities(alterations: readonly ClientQuotaAlteration[]): Promise<ReadonlySet<string>> {
    const hosts = new Set<string>();
    for (const a of alterations) {
      const m = entityMap(a.entity);
      const ip = m.get(ClientQuotaEntityType.IP);
      if (m.size === 1 && typeof ip === 'string' && ip !== '') hosts.add(ip);
    }
    const valid = new Set<string>();
    await Promise.all(
      [...hosts].map(async (h) => {
        if (isIP(h) !== 0 || (await this.isResolvableHost(h))) valid.add(h);
      }),
    );
    return valid;
  }

  /**
   * Kafka's alterClientQuotas: the records to commit (nothing when validate_only is handled by the
   * caller: it simply does not commit them) and one result per distinct entity.
   */
  alterClientQuotas(
    alterations: readonly ClientQuotaAlteration[],
    validIps: ReadonlySet<string>,
  ): { records: MetadataRecord[]; results: ClientQuotaAlterationResult[] } {
    const records: MetadataRecord[] = [];
    const results = new Map<string, ClientQuotaAlterationResult>();
    for (const alteration of alterations) {
      const entity = entityMap(alteration.entity);
      const key = mapKey(entity);
      const ops = new Map<string, number | null>();
      let duplicateKey = false;
      for (const op of alteration.ops) {
        if (ops.has(op.key)) duplicateKey = true;
        else ops.set(op.key, op.value);
      }
      if (duplicateKey || results.has(key)) {
        results.set(key, { entity: mapToData(entity), errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Ignoring duplicate entity ${describeEntity(entity)}` });
        continue;
      }
      const planned = this.alterEntity(entity, ops, validIps);
      if (typeof planned === 'string') {
        results.set(key, { entity: mapToData(entity), errorCode: ErrorCode.INVALID_REQUEST, errorMessage: planned });
        continue;
      }
      records.push(...planned);
      results.set(key, { entity: mapToData(entity), errorCode: ErrorCode.NONE, errorMessage: null });
    }
    if (records.length > MAX_RECORDS_PER_USER_OP) {
      return {
        records: [],
        results: alterations.map((a) => ({ entity: a.entity.map((e) => ({ ...e })), errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: POLICY_VIOLATION_MESSAGE })),
      };
    }
    return { records, results: [...results.values()] };
  }

  /** One entity's records, or the error message that fails it. */
  private alterEntity(entity: Map<string, string | null>, ops: Map<string, number | null>, validIps: ReadonlySet<string>): MetadataRecord[] | string {
    const entityError = validateEntity(entity);
    if (entityError) return entityError;
    const keys = configKeysForEntity(entity, validIps);
    if (typeof keys === 'string') return keys;
    const typed = clientQuotaEntityFromData(mapToData(entity))!;
    const current = this.opts.current(typed);
    const out: MetadataRecord[] = [];
    for (const [key, value] of ops) {
      if (value === null) {
        if (current.has(key)) out.push({ type: 'ClientQuotaRecord', data: { entity: mapToData(entity), key, value: 0, remove: true } });
        continue;
      }
      const err = validateQuotaKeyValue(keys, key, value);
      if (err) return err;
      // Object.is is Java's Double.equals (NaN equals NaN, 0.0 does not equal -0.0).
      if (!Object.is(current.get(key), value)) out.push({ type: 'ClientQuotaRecord', data: { entity: mapToData(entity), key, value, remove: false } });
    }
    return out;
  }
}

/** Kafka's validateEntity: the message of the first problem, or null. */
function validateEntity(entity: Map<string, string | null>): string | null {
  if (entity.size === 0) return 'Invalid empty client quota entity';
  for (const [type, name] of entity) {
    if (!KNOWN_ORDER.includes(type)) return `Unhandled client quota entity type: ${type}`;
    if (name !== null && name === '') return `Empty ${type} not supported`;
  }
  return null;
}

/** Kafka's configKeysForEntityType: the keys this combination takes, or the message refusing it. */
function configKeysForEntity(entity: Map<string, string | null>, validIps: ReadonlySet<string>): ReadonlyMap<string, QuotaValueType> | string {
  const hasUser = entity.has(ClientQuotaEntityType.USER);
  const hasClientId = entity.has(ClientQuotaEntityType.CLIENT_ID);
  if (entity.has(ClientQuotaEntityType.IP)) {
    // Kafka's message lacks the space between "should" and "not".
    if (hasUser || hasClientId) return 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId';
    const ip = entity.get(ClientQuotaEntityType.IP)!;
    if (ip !== null && !validIps.has(ip)) return `${ip} is not a valid IP or resolvable host.`;
    return IP_QUOTA_KEYS;
  }
  if (hasUser || hasClientId) return USER_AND_CLIENT_QUOTA_KEYS;
  return 'Invalid empty client quota entity';
}
