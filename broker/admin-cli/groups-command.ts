/**
 * `krill groups`: kafka-consumer-groups.sh over the Kafka protocol.
 *
 *   krill groups --bootstrap-server H:P --list
 *   krill groups --bootstrap-server H:P --describe (--group G ... | --all-groups) [--members | --state]
 *   krill groups --bootstrap-server H:P --delete --group G ...
 *   krill groups --bootstrap-server H:P --reset-offsets ... | --delete-offsets ...  (groups-offsets.ts)
 *
 * --describe prints ConsumerGroupCommand's offsets table, one row per partition: each member's
 * assigned partitions (members with the most partitions first, a member without any as a row of
 * '-'), then partitions with a committed offset and no member; CURRENT-OFFSET is the committed
 * offset (OffsetFetch at the coordinator), LOG-END-OFFSET the partition's latest offset
 * (ListOffsets at its leader), LAG their difference; '-' where a value is unknown. Columns are
 * padded as Kafka pads them (at least 15 wide, wider for long values). Kafka's notes go to stderr:
 * "Consumer group 'g' has no active members." (Empty), "Warning: Consumer group 'g' is
 * rebalancing." (PreparingRebalance, CompletingRebalance), and a group that is Dead or unknown is
 * "Error: Consumer group 'g' does not exist.".
 * --members: GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS; --state: GROUP COORDINATOR (ID)
 * ASSIGNMENT-STRATEGY STATE #MEMBERS. --list prints consumer group ids (protocol type consumer or
 * empty), sorted, from every broker's ListGroups. Every form takes --command-config.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { readConsumerProtocolAssignment } from '../../protocol/generated/message-data/consumer-protocol-assignment';
import { Reader } from '../../protocol/primitives/reader';
import type { BrokerConnection } from '../../client/network-client';
import type { DescribeGroupsResponseDescribedGroup } from '../../protocol/generated/describe-groups';
import { AdminConnection, ToolError, UsageError } from './admin-connection';
import { openAdmin } from './command-config';
import { parseToolArgs, type ParsedArgs } from './tool-args';
import { checkResetOptions, committedOffsets, deleteOffsets, LATEST, listPartitionOffsets, OFFSET_OPTIONS, resetOffsets } from './groups-offsets';
import type { ToolOutput } from './tool-output';

const MISSING = '-';

const OPTIONS = {
  '--bootstrap-server': {},
  '--command-config': {},
  '--list': { flag: true },
  '--describe': { flag: true },
  '--delete': { flag: true },
  '--group': { repeatable: true },
  '--all-groups': { flag: true },
  '--members': { flag: true },
  '--state': { flag: true },
  '--offsets': { flag: true },
  '--help': { flag: true },
  ...OFFSET_OPTIONS,
} as const;

export const GROUPS_USAGE = `usage: krill groups --bootstrap-server HOST:PORT [--command-config FILE] (--list | --describe | --delete | --reset-offsets | --delete-offsets) [options]
  --group G          the group (repeatable)          --all-groups   every group (--describe, --reset-offsets)
  --members          members instead of offsets      --state        the group's state
  --reset-offsets    (--topic T[:P,P] | --all-topics) and one of --to-earliest, --to-latest, --to-offset N,
                     --shift-by N, --to-datetime YYYY-MM-DDTHH:mm:SS.sss, --by-duration PnDTnHnMnS, --to-current;
                     --dry-run (the default) or --execute
  --delete-offsets   --group G --topic T[:P,P] (repeatable)
as kafka-consumer-groups.sh.`;

export interface OffsetRow {
  group: string;
  topic: string;
  partition: string;
  currentOffset: string;
  logEndOffset: string;
  lag: string;
  consumerId: string;
  host: string;
  clientId: string;
}

export async function groupsCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const args = parseToolArgs(argv, OPTIONS);
  if (args.has('--help')) {
    out.stdout(GROUPS_USAGE);
    return 0;
  }
  const actions = ['--list', '--describe', '--delete', '--reset-offsets', '--delete-offsets'].filter((a) => args.has(a));
  if (actions.length !== 1) throw new ToolError(`Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets\n${GROUPS_USAGE}`);
  if (actions[0] === '--delete-offsets' && (args.all('--group').length !== 1 || !args.has('--topic'))) throw new UsageError('Option [delete-offsets] takes the following options: [group], [topic]');
  if (actions[0] === '--reset-offsets') checkResetOptions(args);
  for (const o of Object.keys(OFFSET_OPTIONS).filter((x) => x !== '--reset-offsets' && x !== '--delete-offsets')) {
    const allowed = o === '--topic' ? ['--reset-offsets', '--delete-offsets'] : ['--reset-offsets'];
    if (args.has(o) && !allowed.includes(actions[0])) throw new UsageError(`Option "[${o.slice(2)}]" can't be used with option "[${actions[0].slice(2)}]"`);
  }
  const admin = await openAdmin(args);
  try {
    if (actions[0] === '--list') {
      for (const g of await listGroups(admin)) out.stdout(g);
      return 0;
    }
    if (actions[0] === '--delete-offsets') return await deleteOffsets(admin, args.all('--group')[0], args.all('--topic'), out);
    const groups = args.has('--all-groups') && actions[0] !== '--delete' ? await listGroups(admin) : args.all('--group');
    if (actions[0] === '--reset-offsets') return await resetOffsets(admin, groups, args, out);
    if (groups.length === 0) throw new ToolError(`${actions[0]} needs --group${actions[0] === '--describe' ? ' or --all-groups' : ''}`);
    if (actions[0] === '--delete') return await deleteGroups(admin, groups, out);
    let failed = false;
    for (const g of groups) failed = !(await describeGroup(admin, g, args, out)) || failed;
    return failed ? 1 : 0;
  } finally {
    await admin.close();
  }
}

/** Every consumer group id (protocol type consumer or empty) of every broker's ListGroups, sorted (also `krill configs --entity-type groups`). */
export async function listGroups(admin: AdminConnection): Promise<string[]> {
  await admin.metadata([]);
  const ids = new Set<string>();
  for (const id of admin.brokerIds) {
    const conn = await admin.node(id);
    const res = await conn.send('ListGroups', undefined, {});
    if (res.errorCode !== ErrorCode.NONE) throw new ToolError(`ListGroups on broker ${id}: ${errorName(res.errorCode)}`);
    for (const g of res.groups) if (g.protocolType === 'consumer' || g.protocolType === '') ids.add(g.groupId);
  }
  return [...ids].sort();
}

async function deleteGroups(admin: AdminConnection, groups: string[], out: ToolOutput): Promise<number> {
  const ok: string[] = [];
  const failed: string[] = [];
  for (const g of groups) {
    const conn = await admin.groupCoordinator(g);
    const res = await conn.send('DeleteGroups', undefined, { groupsNames: [g] });
    const r = res.results[0];
    if (r.errorCode === ErrorCode.NONE) ok.push(g);
    else failed.push(`Group '${g}' could not be deleted due to: ${errorName(r.errorCode)}`);
  }
  if (ok.length > 0) out.stdout(`Deletion of requested consumer groups (${ok.map((g) => `'${g}'`).join(', ')}) was successful.`);
  if (failed.length > 0) {
    out.stdout('Deletion of some consumer groups failed:');
    for (const f of failed) out.stdout(`* ${f}`);
    return 1;
  }
  return 0;
}

function assignmentOf(bytes: Buffer): { topic: string; partition: number }[] {
  if (bytes.length === 0) return [];
  const r = new Reader(bytes);
  const version = r.int16();
  const a = readConsumerProtocolAssignment(r, Math.min(version, 3));
  return a.assignedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
}

/** The group's state line on stderr, as Kafka prints it; false when there is nothing to show. */
function noteState(g: DescribeGroupsResponseDescribedGroup | undefined, group: string, out: ToolOutput): boolean {
  if (!g || g.groupState === 'Dead' || (g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND)) {
    out.stderr(`Error: Consumer group '${group}' does not exist.`);
    return false;
  }
  if (g.groupState === 'Empty') out.stderr(`\nConsumer group '${group}' has no active members.`);
  if (g.groupState === 'PreparingRebalance' || g.groupState === 'CompletingRebalance') out.stderr(`\nWarning: Consumer group '${group}' is rebalancing.`);
  return true;
}

async function describeGroup(admin: AdminConnection, group: string, args: ParsedArgs, out: ToolOutput): Promise<boolean> {
  const coordinator = await admin.groupCoordinator(group);
  const res = await coordinator.send('DescribeGroups', undefined, { groups: [group], includeAuthorizedOperations: false });
  const g = res.groups[0];
  if (g && g.errorCode !== ErrorCode.NONE && g.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND) throw new ToolError(`describing group ${group}: ${errorName(g.errorCode)}`);
  if (args.has('--state')) {
    if (!noteState(g, group, out)) return false;
    const c = coordinatorLabel(admin, coordinator);
    const width = Math.max(25, c.length);
    out.stdout('');
    out.stdout([pad('GROUP', Math.max(15, group.length)), pad('COORDINATOR (ID)', width), pad('ASSIGNMENT-STRATEGY', 20), pad('STATE', 15), '#MEMBERS'].join(' '));
    out.stdout([pad(group, Math.max(15, group.length)), pad(c, width), pad(g.protocolData, 20), pad(g.groupState, 15), String(g.members.length)].join(' '));
    return true;
  }
  if (args.has('--members')) {
    if (!noteState(g, group, out)) return false;
    const rows = g.members.map((m) => [group, m.memberId, m.clientHost, m.clientId, String(assignmentOf(m.memberAssignment).length)]);
    const w = [15, 15, 15, 15].map((min, i) => Math.max(min, ...rows.map((r) => r[i].length)));
    if (rows.length > 0) {
      out.stdout('');
      out.stdout([pad('GROUP', w[0]), pad('CONSUMER-ID', w[1]), pad('HOST', w[2]), pad('CLIENT-ID', w[3]), pad('#PARTITIONS', 15)].join(' '));
      for (const r of rows) out.stdout([pad(r[0], w[0]), pad(r[1], w[1]), pad(r[2], w[2]), pad(r[3], w[3]), pad(r[4], 15)].join(' '));
    }
    return true;
  }
  const rows = await offsetRows(admin, coordinator, group, g);
  if (!noteState(g, group, out)) return false;
  if (rows.length === 0) return true;
  out.stdout('');
  for (const line of formatOffsetRows(rows)) out.stdout(line);
  return true;
}

function coordinatorLabel(admin: AdminConnection, conn: BrokerConnection): string {
  return `${conn.host}:${conn.port} (${admin.nodeIdOf(conn) ?? -1})`;
}

const pad = (s: string, n: number) => s.padEnd(n);

/** Kafka's offsets table: header and rows, columns padded as ConsumerGroupCommand pads them. */
export function formatOffsetRows(rows: readonly OffsetRow[]): string[] {
  const gw = Math.max(15, ...rows.map((r) => r.group.length));
  const tw = Math.max(15, ...rows.map((r) => r.topic.length));
  const cw = Math.max(15, ...rows.map((r) => r.consumerId.length));
  const hw = Math.max(15, ...rows.map((r) => r.host.length));
  const line = (r: OffsetRow) =>
    [pad(r.group, gw), pad(r.topic, tw), pad(r.partition, 10), pad(r.currentOffset, 15), pad(r.logEndOffset, 15), pad(r.lag, 15), pad(r.consumerId, cw), pad(r.host, hw), r.clientId].join(' ');
  const header: OffsetRow = { group: 'GROUP', topic: 'TOPIC', partition: 'PARTITION', currentOffset: 'CURRENT-OFFSET', logEndOffset: 'LOG-END-OFFSET', lag: 'LAG', consumerId: 'CONSUMER-ID', host: 'HOST', clientId: 'CLIENT-ID' };
  return [line(header), ...rows.map(line)];
}

/** The rows of --describe (see the header). */
export async function offsetRows(admin: AdminConnection, coordinator: BrokerConnection, group: string, g: DescribeGroupsResponseDescribedGroup | undefined): Promise<OffsetRow[]> {
  const committed = await committedOffsets(coordinator, group);
  const members = (g?.members ?? [])
    .map((m) => ({ m, parts: assignmentOf(m.memberAssignment).sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1)) }))
    .sort((a, b) => b.parts.length - a.parts.length);
  const assigned = new Set(members.flatMap((x) => x.parts.map((p) => `${p.topic}\0${p.partition}`)));
  const unassigned = [...committed.keys()]
    .filter((k) => !assigned.has(k))
    .map((k) => ({ topic: k.split('\0')[0], partition: Number(k.split('\0')[1]) }))
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  const all = [...members.flatMap((x) => x.parts), ...unassigned];
  const ends = await listPartitionOffsets(admin, all, LATEST);
  const row = (tp: { topic: string; partition: number }, who: { consumerId: string; host: string; clientId: string }): OffsetRow => {
    const key = `${tp.topic}\0${tp.partition}`;
    const cur = committed.get(key);
    const end = ends.get(key);
    return {
      group,
      topic: tp.topic,
      partition: String(tp.partition),
      currentOffset: cur === undefined ? MISSING : String(cur),
      logEndOffset: end === undefined ? MISSING : String(end),
      lag: cur === undefined || end === undefined ? MISSING : String(end - cur),
      ...who,
    };
  };
  const rows: OffsetRow[] = [];
  for (const { m, parts } of members) {
    const who = { consumerId: m.memberId, host: m.clientHost, clientId: m.clientId };
    if (parts.length === 0) rows.push({ group, topic: MISSING, partition: MISSING, currentOffset: MISSING, logEndOffset: MISSING, lag: MISSING, ...who });
    for (const p of parts) rows.push(row(p, who));
  }
  for (const p of unassigned) rows.push(row(p, { consumerId: MISSING, host: MISSING, clientId: MISSING }));
  return rows;
}
