/**
 * `krill configs`: kafka-configs.sh over the Kafka protocol, for topics, brokers and groups (Kafka
 * 4.0's dynamic group configs, GROUP resources) here, and for client quotas (users, clients, ips)
 * in configs-quotas.ts.
 *
 *   krill configs --bootstrap-server H:P --describe --entity-type topics|brokers|groups [--entity-name N | --entity-default] [--all]
 *   krill configs --bootstrap-server H:P --alter --entity-type topics|brokers|groups (--entity-name N | --entity-default)
 *                 [--add-config k=v[,k=v...]] [--delete-config k[,k...]]
 *
 * --describe prints, per entity, "Dynamic configs for topic t are:" ("All configs" with --all,
 * "Default configs for brokers in the cluster are:" for --entity-default) and one line per config
 * `  name=value sensitive=false synonyms={SOURCE:name=value, ...}`, sorted by name, keeping only
 * the entity's dynamic configs (DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_GROUP_CONFIG or
 * DYNAMIC_DEFAULT_BROKER_CONFIG) unless --all, as ConfigCommand does. Without --entity-name every
 * topic (every broker and the default; every consumer group that ListGroups lists) is described.
 * --alter sends IncrementalAlterConfigs (SET for --add-config, DELETE for --delete-config; a name to
 * delete that the entity does not have is refused first, "Invalid config(s): ...") and prints
 * "Completed updating config for topic t." (or "Completed updating default config for brokers in
 * the cluster.").
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { ConfigSource } from '../../config/config-types';
import { AdminConnection, ToolError } from './admin-connection';
import { openAdmin } from './command-config';
import { listGroups } from './groups-command';
import { alterClientQuotaConfigs, describeClientQuotaConfigs, entityNamesInOrder, QUOTA_ENTITY_TYPES } from './configs-quotas';
import { parseConfigPairs, parseToolArgs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

const OPTIONS = {
  '--bootstrap-server': {},
  '--command-config': {},
  '--describe': { flag: true },
  '--alter': { flag: true },
  '--entity-type': { repeatable: true },
  '--entity-name': { repeatable: true },
  '--entity-default': { flag: true },
  '--all': { flag: true },
  '--add-config': { repeatable: true },
  '--delete-config': { repeatable: true },
  '--help': { flag: true },
} as const;

export const CONFIGS_USAGE = `usage: krill configs --bootstrap-server HOST:PORT [--command-config FILE] (--describe | --alter) --entity-type topics|brokers|groups|users|clients|ips
             (--entity-name NAME | --entity-default) [--all] [--add-config k=v,...] [--delete-config k,...]
             (users and clients may be given together: --entity-type users --entity-name U --entity-type clients --entity-name C)
as kafka-configs.sh.`;

const TYPES = {
  topics: { resource: 2, singular: 'topic', dynamic: ConfigSource.DYNAMIC_TOPIC_CONFIG },
  brokers: { resource: 4, singular: 'broker', dynamic: ConfigSource.DYNAMIC_BROKER_CONFIG },
  groups: { resource: 32, singular: 'group', dynamic: ConfigSource.DYNAMIC_GROUP_CONFIG },
} as const;
const SOURCE_NAMES = Object.fromEntries(Object.entries(ConfigSource).map(([k, v]) => [v, k])) as Record<number, string>;

export async function configsCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const args = parseToolArgs(argv, OPTIONS);
  if (args.has('--help')) {
    out.stdout(CONFIGS_USAGE);
    return 0;
  }
  const actions = ['--describe', '--alter'].filter((a) => args.has(a));
  if (actions.length !== 1) throw new ToolError(`Command must include exactly one action: --describe, --alter\n${CONFIGS_USAGE}`);
  const types = args.all('--entity-type');
  if (types.length === 0) throw new ToolError('At least one entity type must be specified');
  const dup = types.filter((t, i) => types.indexOf(t) !== i);
  if (dup.length > 0) throw new ToolError(`Duplicate entity type(s) specified: ${dup.join(',')}`);
  for (const t of types) if (!(t in TYPES) && !(t in QUOTA_ENTITY_TYPES)) throw new ToolError(`Invalid entity type ${t}, the entity type must be one of topics, brokers, groups, users, clients, ips with a --bootstrap-server argument`);
  if (types.length > 1 && !(types.length === 2 && types.includes('users') && types.includes('clients'))) throw new ToolError("Only 'users' and 'clients' entity types may be specified together");
  if (types[0] in QUOTA_ENTITY_TYPES) {
    const names = entityNamesInOrder(argv);
    const admin = await openAdmin(args);
    try {
      return actions[0] === '--describe' ? await describeClientQuotaConfigs(admin, types, names, out) : await alterClientQuotaConfigs(admin, args, types, names, out);
    } finally {
      await admin.close();
    }
  }
  if (args.all('--entity-name').length > 1) throw new ToolError('--entity-name given twice');
  const typeName = types[0];
  const type = (TYPES as Record<string, (typeof TYPES)[keyof typeof TYPES]>)[typeName];
  if (!type) throw new ToolError(`Invalid entity type ${typeName}, the entity type must be one of topics, brokers, groups with a --bootstrap-server argument`);
  if (args.has('--entity-default') && typeName !== 'brokers') throw new ToolError('--entity-default applies to brokers only here');
  if (args.has('--entity-default') && args.has('--entity-name')) throw new ToolError('--entity-name and --entity-default cannot both be given');
  if (typeName === 'brokers' && args.has('--entity-name') && !/^\d+$/.test(args.get('--entity-name')!)) {
    throw new ToolError(`The entity name for brokers must be a valid integer broker id, found: ${args.get('--entity-name')}`);
  }
  const admin = await openAdmin(args);
  try {
    return actions[0] === '--describe' ? await describe(admin, args, type, typeName, out) : await alter(admin, args, type, out);
  } finally {
    await admin.close();
  }
}

interface Entry {
  name: string;
  value: string | null;
  source: number;
  sensitive: boolean;
  synonyms: { name: string; value: string | null; source: number }[];
}

async function entries(admin: AdminConnection, resourceType: number, name: string): Promise<Entry[]> {
  const res = await admin.any.send('DescribeConfigs', undefined, { resources: [{ resourceType, resourceName: name, configurationKeys: null }], includeSynonyms: true, includeDocumentation: false });
  const r = res.results[0];
  if (r.errorCode !== ErrorCode.NONE) throw new ToolError(r.errorMessage ?? errorName(r.errorCode));
  return r.configs
    .map((c) => ({ name: c.name, value: c.value, source: c.configSource, sensitive: c.isSensitive, synonyms: c.synonyms }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function describe(admin: AdminConnection, args: ParsedArgs, type: (typeof TYPES)[keyof typeof TYPES], typeName: string, out: ToolOutput): Promise<number> {
  let names: string[];
  if (args.has('--entity-default')) names = [''];
  else if (args.has('--entity-name')) names = [args.get('--entity-name')!];
  else if (typeName === 'topics') names = (await admin.metadata(null)).topics.filter((t) => t.name !== null && t.errorCode === ErrorCode.NONE).map((t) => t.name!).sort();
  else if (typeName === 'groups') names = await listGroups(admin);
  else names = [...(await admin.metadata([])).brokers.map((b) => String(b.nodeId)), ''];
  const all = args.has('--all');
  for (const name of names) {
    const dynamic = name === '' ? ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG : type.dynamic;
    out.stdout(name === '' ? `Default configs for ${typeName} in the cluster are:` : `${all ? 'All' : 'Dynamic'} configs for ${type.singular} ${name} are:`);
    for (const e of await entries(admin, type.resource, name)) {
      if (!all && e.source !== dynamic) continue;
      const synonyms = e.synonyms.map((s) => `${SOURCE_NAMES[s.source] ?? 'UNKNOWN'}:${s.name}=${s.value}`).join(', ');
      out.stdout(`  ${e.name}=${e.value} sensitive=${e.sensitive} synonyms={${synonyms}}`);
    }
  }
  return 0;
}

async function alter(admin: AdminConnection, args: ParsedArgs, type: (typeof TYPES)[keyof typeof TYPES], out: ToolOutput): Promise<number> {
  const isDefault = args.has('--entity-default');
  const name = isDefault ? '' : args.need('--entity-name', 'with --alter (or --entity-default)');
  const add = parseConfigPairs(args.all('--add-config'), '--add-config');
  const del = args.all('--delete-config').flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (add.size === 0 && del.length === 0) throw new ToolError('--alter needs --add-config or --delete-config');
  if (del.length > 0) {
    const dynamic = isDefault ? ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG : type.dynamic;
    const present = new Set((await entries(admin, type.resource, name)).filter((e) => e.source === dynamic).map((e) => e.name));
    const invalid = del.filter((d) => !present.has(d));
    if (invalid.length > 0) throw new ToolError(`Invalid config(s): ${invalid.join(',')}`);
  }
  const res = await admin.any.send('IncrementalAlterConfigs', undefined, {
    resources: [
      {
        resourceType: type.resource,
        resourceName: name,
        configs: [...[...add].map(([n, value]) => ({ name: n, configOperation: 0, value })), ...del.map((n) => ({ name: n, configOperation: 1, value: null }))],
      },
    ],
    validateOnly: false,
  });
  const r = res.responses[0];
  if (r.errorCode !== ErrorCode.NONE) throw new ToolError(r.errorMessage ?? errorName(r.errorCode));
  out.stdout(isDefault ? 'Completed updating default config for brokers in the cluster.' : `Completed updating config for ${type.singular} ${name}.`);
  return 0;
}
