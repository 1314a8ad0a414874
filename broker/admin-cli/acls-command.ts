/**
 * `krill acls`: kafka-acls.sh over the Kafka protocol (DescribeAcls, CreateAcls, DeleteAcls).
 *
 *   krill acls --bootstrap-server H:P --list [--topic T | --group G | --cluster | --transactional-id X] [--resource-pattern-type P]
 *   krill acls --bootstrap-server H:P --add (--allow-principal User:x | --deny-principal User:x) ... [--allow-host H]
 *              [--operation Read ...] (--topic T | --group G | --cluster | --transactional-id X) [--resource-pattern-type literal|prefixed]
 *   krill acls --bootstrap-server H:P --remove --force ... (the same selection; without principals every ACL of the resource)
 *
 * Output as AclCommand prints it: for each resource "Current ACLs for resource `ResourcePattern(
 * resourceType=TOPIC, name=t, patternType=LITERAL)`: " followed by the entries, each
 * "\t(principal=User:x, host=*, operation=READ, permissionType=ALLOW)", the first after a space,
 * the last followed by one, then a blank line; --add prints "Adding ACLs for resource ..." the same
 * way before creating them. Operations are Kafka's names in any case, with or without the
 * underscores (Read, IdempotentWrite, DESCRIBE_CONFIGS); --add without --operation means All and
 * without a host means '*'. --remove never asks: it needs --force (no prompt in scripts).
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType } from '../../metadata/authorizer/authorizer';
import { AdminConnection, ToolError } from './admin-connection';
import { openAdmin } from './command-config';
import { parseToolArgs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

const OPTIONS = {
  '--bootstrap-server': {},
  '--command-config': {},
  '--list': { flag: true },
  '--add': { flag: true },
  '--remove': { flag: true },
  '--force': { flag: true },
  '--allow-principal': { repeatable: true },
  '--deny-principal': { repeatable: true },
  '--allow-host': { repeatable: true },
  '--deny-host': { repeatable: true },
  '--operation': { repeatable: true },
  '--topic': { repeatable: true },
  '--group': { repeatable: true },
  '--transactional-id': { repeatable: true },
  '--cluster': { flag: true },
  '--resource-pattern-type': {},
  '--help': { flag: true },
} as const;

export const ACLS_USAGE = `usage: krill acls --bootstrap-server HOST:PORT [--command-config FILE] (--list | --add | --remove --force)
             [--allow-principal P ...] [--deny-principal P ...] [--allow-host H] [--deny-host H] [--operation OP ...]
             [--topic T | --group G | --cluster | --transactional-id X] [--resource-pattern-type literal|prefixed|any|match]
as kafka-acls.sh.`;

const nameOf = (table: Record<string, number>, code: number) => Object.entries(table).find(([, v]) => v === code)?.[0] ?? 'UNKNOWN';

interface Resource {
  type: number;
  name: string;
  pattern: number;
}

function resourcesOf(args: ParsedArgs, pattern: number): Resource[] {
  return [
    ...args.all('--topic').map((name) => ({ type: ResourceType.TOPIC, name, pattern })),
    ...args.all('--group').map((name) => ({ type: ResourceType.GROUP, name, pattern })),
    ...args.all('--transactional-id').map((name) => ({ type: ResourceType.TRANSACTIONAL_ID, name, pattern })),
    ...(args.has('--cluster') ? [{ type: ResourceType.CLUSTER, name: CLUSTER_RESOURCE_NAME, pattern }] : []),
  ];
}

function patternOf(args: ParsedArgs, fallback: number): number {
  const p = args.get('--resource-pattern-type');
  if (p === undefined) return fallback;
  const code = (PatternType as Record<string, number>)[p.toUpperCase()];
  if (code === undefined || code === PatternType.UNKNOWN) throw new ToolError(`invalid --resource-pattern-type ${p} (literal, prefixed, any or match)`);
  return code;
}

export function parseOperation(op: string): number {
  const key = Object.keys(AclOperation).find((k) => k.replace(/_/g, '').toLowerCase() === op.replace(/[_-]/g, '').toLowerCase());
  if (key === undefined || key === 'UNKNOWN' || key === 'ANY') throw new ToolError(`invalid --operation ${op} (e.g. Read, Write, Describe, All, IdempotentWrite)`);
  return (AclOperation as Record<string, number>)[key];
}

function principals(args: ParsedArgs): { principal: string; permission: number; hosts: string[] }[] {
  const check = (p: string) => {
    if (!/^[^:]+:.+$/.test(p)) throw new ToolError(`invalid principal ${p} (expected Type:name, e.g. User:alice)`);
    return p;
  };
  const allowHosts = args.all('--allow-host');
  const denyHosts = args.all('--deny-host');
  return [
    ...args.all('--allow-principal').map((p) => ({ principal: check(p), permission: AclPermissionType.ALLOW, hosts: allowHosts.length > 0 ? allowHosts : ['*'] })),
    ...args.all('--deny-principal').map((p) => ({ principal: check(p), permission: AclPermissionType.DENY, hosts: denyHosts.length > 0 ? denyHosts : ['*'] })),
  ];
}

const patternString = (r: Resource) => `ResourcePattern(resourceType=${nameOf(ResourceType, r.type)}, name=${r.name}, patternType=${nameOf(PatternType, r.pattern)})`;
const entryString = (a: { principal: string; host: string; operation: number; permissionType: number }) =>
  `(principal=${a.principal}, host=${a.host}, operation=${nameOf(AclOperation, a.operation)}, permissionType=${nameOf(AclPermissionType, a.permissionType)})`;

/** AclCommand's block: "title: ", " \t(a1)", "\t(a2) ", "". */
function block(out: ToolOutput, title: string, entries: string[]): void {
  out.stdout(`${title}: `);
  const lines = entries.map((e) => `\t${e}`);
  if (lines.length === 0) lines.push('');
  lines[0] = ` ${lines[0]}`;
  lines[lines.length - 1] = `${lines[lines.length - 1]} `;
  for (const l of lines) out.stdout(l);
  out.stdout('');
}

export async function aclsCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const args = parseToolArgs(argv, OPTIONS);
  if (args.has('--help')) {
    out.stdout(ACLS_USAGE);
    return 0;
  }
  const actions = ['--list', '--add', '--remove'].filter((a) => args.has(a));
  if (actions.length !== 1) throw new ToolError(`Command must include exactly one action: --list, --add, --remove\n${ACLS_USAGE}`);
  const operations = args.all('--operation').map(parseOperation);
  const who = principals(args);
  if (actions[0] === '--add') {
    if (who.length === 0) throw new ToolError('--add needs --allow-principal or --deny-principal');
    if (resourcesOf(args, PatternType.LITERAL).length === 0) throw new ToolError('--add needs a resource: --topic, --group, --cluster or --transactional-id');
  }
  if (actions[0] === '--remove' && !args.has('--force')) throw new ToolError('--remove needs --force (krill acls does not prompt)');
  const admin = await openAdmin(args);
  try {
    if (actions[0] === '--list') return await list(admin, args, out);
    if (actions[0] === '--add') return await add(admin, args, who, operations.length > 0 ? operations : [AclOperation.ALL], out);
    return await remove(admin, args, who, operations);
  } finally {
    await admin.close();
  }
}

async function describe(admin: AdminConnection, filter: { type: number; name: string | null; pattern: number; principal?: string | null }) {
  const res = await admin.any.send('DescribeAcls', undefined, {
    resourceTypeFilter: filter.type,
    resourceNameFilter: filter.name,
    patternTypeFilter: filter.pattern,
    principalFilter: filter.principal ?? null,
    hostFilter: null,
    operation: AclOperation.ANY,
    permissionType: AclPermissionType.ANY,
  });
  if (res.errorCode !== ErrorCode.NONE) throw new ToolError(res.errorMessage ?? errorName(res.errorCode));
  return res.resources;
}

async function list(admin: AdminConnection, args: ParsedArgs, out: ToolOutput): Promise<number> {
  const filters = resourcesOf(args, patternOf(args, PatternType.LITERAL));
  const found = filters.length === 0 ? await describe(admin, { type: ResourceType.ANY, name: null, pattern: PatternType.ANY }) : (await Promise.all(filters.map((f) => describe(admin, f)))).flat();
  const sorted = [...found].sort((a, b) => a.resourceType - b.resourceType || (a.resourceName < b.resourceName ? -1 : a.resourceName > b.resourceName ? 1 : 0) || a.patternType - b.patternType);
  for (const r of sorted) block(out, `Current ACLs for resource \`${patternString({ type: r.resourceType, name: r.resourceName, pattern: r.patternType })}\``, r.acls.map(entryString));
  return 0;
}

async function add(admin: AdminConnection, args: ParsedArgs, who: ReturnType<typeof principals>, operations: number[], out: ToolOutput): Promise<number> {
  const pattern = patternOf(args, PatternType.LITERAL);
  if (pattern !== PatternType.LITERAL && pattern !== PatternType.PREFIXED) throw new ToolError('--add needs a literal or prefixed --resource-pattern-type');
  for (const r of resourcesOf(args, pattern)) {
    const entries = who.flatMap((p) => p.hosts.flatMap((host) => operations.map((operation) => ({ principal: p.principal, host, operation, permissionType: p.permission }))));
    block(out, `Adding ACLs for resource \`${patternString(r)}\``, entries.map(entryString));
    const res = await admin.any.send('CreateAcls', undefined, {
      creations: entries.map((e) => ({ resourceType: r.type, resourceName: r.name, resourcePatternType: r.pattern, ...e })),
    });
    const failed = res.results.filter((x) => x.errorCode !== ErrorCode.NONE);
    if (failed.length > 0) throw new ToolError(failed.map((x) => x.errorMessage ?? errorName(x.errorCode)).join('; '));
  }
  return 0;
}

async function remove(admin: AdminConnection, args: ParsedArgs, who: ReturnType<typeof principals>, operations: number[]): Promise<number> {
  const resources = resourcesOf(args, patternOf(args, PatternType.LITERAL));
  if (resources.length === 0) throw new ToolError('--remove needs a resource: --topic, --group, --cluster or --transactional-id');
  const ops = operations.length > 0 ? operations : [AclOperation.ANY];
  type Filter = { resourceTypeFilter: number; resourceNameFilter: string; patternTypeFilter: number; principalFilter: string | null; hostFilter: string | null; operation: number; permissionType: number };
  const filters = resources.flatMap((r): Filter[] => {
    const base = { resourceTypeFilter: r.type, resourceNameFilter: r.name, patternTypeFilter: r.pattern };
    if (who.length === 0) return [{ ...base, principalFilter: null, hostFilter: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY }];
    return who.flatMap((p) => p.hosts.flatMap((host) => ops.map((operation) => ({ ...base, principalFilter: p.principal, hostFilter: host, operation, permissionType: p.permission }))));
  });
  const res = await admin.any.send('DeleteAcls', undefined, { filters });
  const failed = res.filterResults.filter((x) => x.errorCode !== ErrorCode.NONE);
  if (failed.length > 0) throw new ToolError(failed.map((x) => x.errorMessage ?? errorName(x.errorCode)).join('; '));
  return 0;
}
