/**
 * `krill configs --entity-type users|clients|ips`: kafka-configs.sh's client quotas, through
 * DescribeClientQuotas and AlterClientQuotas (and, for users, DescribeUserScramCredentials).
 *
 *   krill configs --describe --entity-type users [--entity-name U | --entity-default] [--entity-type clients [--entity-name C | --entity-default]]
 *   krill configs --alter --entity-type clients --entity-name C --add-config producer_byte_rate=1024,consumer_byte_rate=2048
 *   krill configs --alter --entity-type ips --entity-default --delete-config connection_creation_rate
 *
 * The entity is one name (or the default, '') per --entity-type, in command-line order, as
 * ConfigCommand pairs them; only users and clients go together. --describe asks for exactly
 * those components (strict), a type without a name matching any entity of it, and prints per
 * entity "Quota configs for user-principal 'u', client-id 'c' are producer_byte_rate=1024.0"
 * ("the default client-id" for the default; values as Java prints a double), then for users
 * without clients and without the default "SCRAM credential configs for user-principal 'u' are
 * SCRAM-SHA-512=iterations=4096". --alter checks the keys as Kafka does (quota keys for users and
 * clients, connection_creation_rate for ips), refuses to delete a key the entity does not have
 * ("Invalid config(s): ..."), sends one AlterClientQuotas entry and prints "Completed updating
 * config for user u." / "Completed updating default config for users in the cluster.". SCRAM
 * credentials through --add-config are not implemented here.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { AdminConnection } from './admin-connection';
import { ToolError } from './admin-connection';
import { parseConfigPairs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

export const QUOTA_ENTITY_TYPES: Readonly<Record<string, string>> = { users: 'user', clients: 'client-id', ips: 'ip' };
const LABELS: Readonly<Record<string, string>> = { user: 'user-principal', 'client-id': 'client-id', ip: 'ip' };
const CLIENT_QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate'];
const IP_QUOTA_KEYS = ['connection_creation_rate'];
const SCRAM_MECHANISMS: Readonly<Record<number, string>> = { 1: 'SCRAM-SHA-256', 2: 'SCRAM-SHA-512' };
const MATCH_EXACT = 0;
const MATCH_DEFAULT = 1;
const MATCH_ANY = 2;

/** Entity names in command-line order: each --entity-name value, '' for each --entity-default. */
export function entityNamesInOrder(argv: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--entity-default') names.push('');
    else if (a === '--entity-name') names.push(argv[++i] ?? '');
    else if (a.startsWith('--entity-name=')) names.push(a.slice('--entity-name='.length));
  }
  return names;
}

/** Java's Double.toString for the values quotas are: 1024.0, 0.5, 1.0E7. */
export function javaDouble(d: number): string {
  if (!Number.isFinite(d)) return Number.isNaN(d) ? 'NaN' : d > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(d);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) {
    const s = String(d);
    return s.includes('.') ? s : `${s}.0`;
  }
  const [mantissa, exponent] = d.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

interface QuotaEntity {
  entity: { entityType: string; entityName: string | null }[];
  values: Map<string, number>;
}

function entityLabel(entity: QuotaEntity['entity']): string {
  const part = (type: string) => {
    const e = entity.find((x) => x.entityType === type);
    if (!e) return [];
    return [e.entityName === null ? `the default ${LABELS[type]}` : `${LABELS[type]} '${e.entityName}'`];
  };
  return [...part('user'), ...part('client-id'), ...part('ip')].join(', ');
}

async function describeQuotas(admin: AdminConnection, types: readonly string[], names: readonly string[]): Promise<QuotaEntity[]> {
  if (names.length > types.length) throw new ToolError('More entity names specified than entity types');
  const components = types.map((t, i) => {
    const entityType = QUOTA_ENTITY_TYPES[t];
    const name = names[i];
    return name === undefined ? { entityType, matchType: MATCH_ANY, match: null } : name === '' ? { entityType, matchType: MATCH_DEFAULT, match: null } : { entityType, matchType: MATCH_EXACT, match: name };
  });
  const res = await admin.any.send('DescribeClientQuotas', undefined, { components, strict: true });
  if (res.errorCode !== ErrorCode.NONE) throw new ToolError(res.errorMessage ?? errorName(res.errorCode));
  return (res.entries ?? [])
    .map((e) => ({ entity: e.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })), values: new Map(e.values.map((v) => [v.key, v.value])) }))
    .sort((a, b) => (entityLabel(a.entity) < entityLabel(b.entity) ? -1 : entityLabel(a.entity) > entityLabel(b.entity) ? 1 : 0));
}

export async function describeClientQuotaConfigs(admin: AdminConnection, types: readonly string[], names: readonly string[], out: ToolOutput): Promise<number> {
  for (const q of await describeQuotas(admin, types, names)) {
    const values = [...q.values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${javaDouble(v)}`);
    out.stdout(`Quota configs for ${entityLabel(q.entity)} are ${values.join(', ')}`);
  }
  if (types.includes('users') && !types.includes('clients') && !names.includes('')) {
    const res = await admin.any.send('DescribeUserScramCredentials', undefined, { users: names.length === 0 ? null : names.map((name) => ({ name })) });
    if (res.errorCode !== ErrorCode.NONE) throw new ToolError(res.errorMessage ?? errorName(res.errorCode));
    for (const r of res.results) {
      if (r.errorCode === ErrorCode.RESOURCE_NOT_FOUND) continue;
      if (r.errorCode !== ErrorCode.NONE) {
        out.stdout(`Error retrieving SCRAM credential configs for user-principal '${r.user}': ${errorName(r.errorCode)}: ${r.errorMessage ?? ''}`);
        continue;
      }
      out.stdout(`SCRAM credential configs for user-principal '${r.user}' are ${r.credentialInfos.map((c) => `${SCRAM_MECHANISMS[c.mechanism] ?? `UNKNOWN(${c.mechanism})`}=iterations=${c.iterations}`).join(', ')}`);
    }
  }
  return 0;
}

export async function alterClientQuotaConfigs(admin: AdminConnection, args: ParsedArgs, types: readonly string[], names: readonly string[], out: ToolOutput): Promise<number> {
  if (types.length !== names.length) throw new ToolError('Exactly one entity name must be specified for every entity type');
  const add = parseConfigPairs(args.all('--add-config'), '--add-config');
  const del = args.all('--delete-config').flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (add.size === 0 && del.length === 0) throw new ToolError('--alter needs --add-config or --delete-config');
  const head = types[0];
  if (head === 'ips') {
    const unknown = [...add.keys(), ...del].filter((k) => !IP_QUOTA_KEYS.includes(k));
    if (unknown.length > 0) throw new ToolError(`Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: ${unknown.join(',')}`);
  } else {
    const isScram = (k: string) => k in { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 1 };
    const scram = [...add.keys(), ...del].filter(isScram);
    if (scram.length > 0 && types.length === 1 && head === 'users') throw new ToolError(`SCRAM credential configs (${scram.join(',')}) are not implemented by krill configs`);
    const unknownAdd = [...add.keys()].filter((k) => !CLIENT_QUOTA_KEYS.includes(k));
    const unknownDel = del.filter((k) => !CLIENT_QUOTA_KEYS.includes(k));
    const onlyQuotas = head === 'clients' || types.length === 2;
    if (unknownAdd.length > 0) throw new ToolError(`Only quota ${onlyQuotas ? '' : 'and SCRAM credential '}configs can be added for '${onlyQuotas ? 'clients' : 'users'}' using --bootstrap-server. Unexpected config names: ${unknownAdd.join(',')}`);
    if (unknownDel.length > 0) throw new ToolError(`Only quota ${onlyQuotas ? '' : 'and SCRAM credential '}configs can be deleted for '${onlyQuotas ? 'clients' : 'users'}' using --bootstrap-server. Unexpected config names: ${unknownDel.join(',')}`);
  }
  const ops: { key: string; value: number; remove: boolean }[] = [];
  for (const [key, value] of add) {
    const v = value.trim() === '' ? NaN : Number(value);
    if (Number.isNaN(v)) throw new ToolError(`Cannot parse quota configuration value for ${key}: ${value}`);
    ops.push({ key, value: v, remove: false });
  }
  if (del.length > 0) {
    const current = (await describeQuotas(admin, types, names))[0]?.values ?? new Map<string, number>();
    const invalid = del.filter((k) => !current.has(k));
    if (invalid.length > 0) throw new ToolError(`Invalid config(s): ${invalid.join(',')}`);
    for (const key of del) ops.push({ key, value: 0, remove: true });
  }
  const entity = types.map((t, i) => ({ entityType: QUOTA_ENTITY_TYPES[t], entityName: names[i] === '' ? null : names[i] }));
  const res = await admin.any.send('AlterClientQuotas', undefined, { entries: [{ entity, ops }], validateOnly: false });
  const r = res.entries[0];
  if (r && r.errorCode !== ErrorCode.NONE) throw new ToolError(r.errorMessage ?? errorName(r.errorCode));
  out.stdout(names[0] !== '' ? `Completed updating config for ${head.slice(0, -1)} ${names[0]}.` : `Completed updating default config for ${head} in the cluster.`);
  return 0;
}
