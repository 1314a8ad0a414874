/**
 * `krill groups --reset-offsets` and `--delete-offsets`: kafka-consumer-groups.sh's offset
 * changes, over the Kafka protocol, plus the offset look-ups `krill groups` shares (committed
 * offsets by OffsetFetch at the coordinator, log offsets by ListOffsets at each leader).
 *
 *   --reset-offsets (--group G ... | --all-groups) (--topic T[:P,P] ... | --all-topics)
 *       (--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime D |
 *        --by-duration PnDTnHnMnS | --to-current) [--dry-run | --execute]
 *   --delete-offsets --group G --topic T[:P,P] ...
 *
 * Reset, as ConsumerGroupCommand does it: only a group that is Empty or Dead (or unknown) is
 * reset; any other state prints "Assignments can only be reset if the group 'g' is inactive, but
 * the current state is S." and leaves it alone (exit code 1). The partitions are those of --topic (all of a
 * topic's partitions from Metadata when none are named) or, with --all-topics, those the group has
 * committed offsets for. --to-offset and --shift-by are clamped into [log start, log end];
 * --to-datetime / --by-duration take the first offset at or after the time (ListOffsets by
 * timestamp), the log end for a partition without one ("Warn: Partition p from topic t is empty.
 * Falling back to latest known offset."); --to-current keeps the committed offset (the log end
 * where there is none). Without --execute nothing is written (dry run, Kafka's default); the
 * plan prints as Kafka's GROUP / TOPIC / PARTITION / NEW-OFFSET table; --execute commits it with
 * OffsetCommit (generation -1, no member) at the coordinator.
 * Delete: OffsetDelete at the coordinator; prints Kafka's summary line and TOPIC / PARTITION /
 * STATUS table. Options that do not go together are UsageErrors with Kafka's messages.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { BrokerConnection } from '../../client/network-client';
import { AdminConnection, ToolError, UsageError } from './admin-connection';
import type { ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

export interface TopicPartition {
  topic: string;
  partition: number;
}

const key = (tp: TopicPartition) => `${tp.topic}\0${tp.partition}`;
const fromKey = (k: string): TopicPartition => ({ topic: k.split('\0')[0], partition: Number(k.split('\0')[1]) });
const byTopicPartition = (a: TopicPartition, b: TopicPartition) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1);
const label = (tp: TopicPartition) => `${tp.topic}-${tp.partition}`;

export const LATEST = -1n;
export const EARLIEST = -2n;

/** The scenarios of --reset-offsets, in Kafka's names. */
export const RESET_SCENARIOS = ['--to-offset', '--to-earliest', '--to-latest', '--shift-by', '--to-datetime', '--by-duration', '--to-current'] as const;

export const OFFSET_OPTIONS = {
  '--reset-offsets': { flag: true },
  '--delete-offsets': { flag: true },
  '--topic': { repeatable: true },
  '--all-topics': { flag: true },
  '--to-offset': {},
  '--to-earliest': { flag: true },
  '--to-latest': { flag: true },
  '--shift-by': {},
  '--to-datetime': {},
  '--by-duration': {},
  '--to-current': { flag: true },
  '--dry-run': { flag: true },
  '--execute': { flag: true },
} as const;

/** Committed offsets of a group by topic\0partition (OffsetFetch for all partitions). */
export async function committedOffsets(coordinator: BrokerConnection, group: string): Promise<Map<string, bigint>> {
  const v8 = coordinator.versionFor('OffsetFetch') >= 8;
  const fetched = await coordinator.send(
    'OffsetFetch',
    undefined,
    v8 ? { groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: null }], requireStable: false } : { groupId: group, topics: null },
  );
  const topics = v8 ? (fetched.groups[0]?.topics ?? []) : fetched.topics;
  const topLevel = v8 ? (fetched.groups[0]?.errorCode ?? ErrorCode.NONE) : fetched.errorCode;
  if (topLevel !== ErrorCode.NONE && topLevel !== ErrorCode.GROUP_ID_NOT_FOUND) throw new ToolError(`fetching the offsets of group ${group}: ${errorName(topLevel)}`);
  const out = new Map<string, bigint>();
  for (const t of topics) for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE && p.committedOffset >= 0n) out.set(key({ topic: t.name, partition: p.partitionIndex }), p.committedOffset);
  return out;
}

/**
 * ListOffsets at each partition's leader for `timestamp` (LATEST, EARLIEST or a time in ms); by
 * topic\0partition, the offset (-1 when the log has none for that time); partitions without a
 * leader or with an error are absent.
 */
export async function listPartitionOffsets(admin: AdminConnection, parts: readonly TopicPartition[], timestamp: bigint): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  if (parts.length === 0) return out;
  const md = await admin.metadata([...new Set(parts.map((p) => p.topic))]);
  const byLeader = new Map<number, Map<string, number[]>>();
  for (const p of parts) {
    const leader = md.topics.find((t) => t.name === p.topic)?.partitions.find((x) => x.partitionIndex === p.partition)?.leaderId ?? -1;
    if (leader < 0) continue;
    const topics = byLeader.get(leader) ?? new Map<string, number[]>();
    byLeader.set(leader, topics);
    topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
  }
  for (const [leader, topics] of byLeader) {
    const conn = await admin.node(leader);
    const res = await conn.send('ListOffsets', undefined, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [...topics].map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 })) })),
    });
    const v0 = conn.versionFor('ListOffsets') === 0;
    for (const t of res.topics) {
      for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) out.set(key({ topic: t.name, partition: p.partitionIndex }), v0 ? (p.oldStyleOffsets[0] ?? -1n) : p.offset);
    }
  }
  return out;
}

/** Kafka's Utils.getDateTime: yyyy-MM-ddTHH:mm:ss.SSS with an optional zone (Z, +hh:mm, +hhmm, +hh); UTC without one. */
export function parseDateTime(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!s.includes('T')) throw new UsageError(`Error parsing timestamp. It does not contain a 'T' according to ISO8601 format: ${s}`);
  if (!m) throw new UsageError(`Unparseable date: "${s}" (expected yyyy-MM-ddTHH:mm:ss.SSS[zone])`);
  const [, y, mo, d, h, mi, sec, ms, zone] = m;
  const local = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec, +ms);
  const check = new Date(local);
  if (check.getUTCFullYear() !== +y || check.getUTCMonth() !== +mo - 1 || check.getUTCDate() !== +d || +h > 23 || +mi > 59 || +sec > 59) throw new UsageError(`Unparseable date: "${s}"`);
  if (zone === undefined || zone === 'Z') return local;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return local - sign * offsetMin * 60_000;
}

/** java.time.Duration.parse: PnDTnHnMn.nS (optionally negative), in ms. */
export function parseDuration(s: string): number {
  const m = /^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(s);
  if (!m || s.toUpperCase().endsWith('T') || /^[-+]?PT?$/i.test(s)) throw new UsageError(`Text cannot be parsed to a Duration: ${s}`);
  const [, neg, d, h, mi, sec, frac] = m;
  const secSign = sec?.startsWith('-') ? -1 : 1;
  let ms = Number(d ?? 0) * 86_400_000 + Number(h ?? 0) * 3_600_000 + Number(mi ?? 0) * 60_000 + Number(sec ?? 0) * 1000;
  if (frac) ms += secSign * Math.floor(Number(frac.padEnd(9, '0')) / 1e6);
  return neg === '-' ? -ms : ms;
}

function int64(args: ParsedArgs, name: string): bigint {
  const v = args.get(name)!;
  if (!/^[-+]?\d+$/.test(v)) throw new UsageError(`invalid ${name} ${v} (an integer)`);
  return BigInt(v);
}

/** --topic values: `t` (all its partitions, from Metadata) or `t:p,p`. */
async function topicPartitionsOf(admin: AdminConnection, topicArgs: readonly string[]): Promise<TopicPartition[]> {
  const out: TopicPartition[] = [];
  const whole: string[] = [];
  for (const arg of topicArgs) {
    if (!arg.includes(':')) {
      whole.push(arg);
      continue;
    }
    const parts = arg.split(':');
    if (parts.length !== 2) throw new UsageError(`Invalid topic arg '${arg}', expected topic name and partitions`);
    for (const p of parts[1].split(',')) {
      if (!/^\d+$/.test(p)) throw new UsageError(`Invalid partition '${p}' specified in topic arg '${arg}''`);
      out.push({ topic: parts[0], partition: Number(p) });
    }
  }
  if (whole.length > 0) {
    const md = await admin.metadata(whole);
    for (const name of whole) {
      const t = md.topics.find((x) => x.name === name);
      if (!t || t.errorCode !== ErrorCode.NONE) throw new ToolError(t?.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || !t ? 'This server does not host this topic-partition.' : `describing topic ${name}: ${errorName(t.errorCode)}`);
      for (const p of t.partitions) out.push({ topic: name, partition: p.partitionIndex });
    }
  }
  return out;
}

/** Checks --reset-offsets' options as ConsumerGroupCommandOptions does (UsageError). */
export function checkResetOptions(args: ParsedArgs): void {
  if (args.has('--dry-run') && args.has('--execute')) throw new UsageError('Option [reset-offsets] only accepts one of [execute] and [dry-run]');
  if (!args.has('--group') && !args.has('--all-groups')) throw new UsageError('Option [reset-offsets] takes one of these options: [all-groups], [group]');
  const used = RESET_SCENARIOS.filter((s) => args.has(s));
  if (used.length > 1) throw new UsageError(`Option "[${used[0].slice(2)}]" can't be used with option "[${used[1].slice(2)}]"`);
  if (used.length === 0) throw new UsageError(`Option '[reset-offsets]' requires one of the following scenarios: [${RESET_SCENARIOS.map((s) => s.slice(2)).join(', ')}]`);
  if (!args.has('--topic') && !args.has('--all-topics')) throw new UsageError('One of the reset scopes should be defined: --all-topics, --topic.');
  if (args.has('--topic') && args.has('--all-topics')) throw new UsageError('Option "[all-topics]" can\'t be used with option "[topic]"');
}

const pad = (s: string, n: number) => s.padEnd(n);

/** Kafka's reset plan table (printOffsetsToReset): a blank line, then the header and rows when there are any. */
export function formatResetPlan(plan: ReadonlyMap<string, ReadonlyMap<string, bigint>>): string[] {
  const rows: string[] = [];
  for (const group of [...plan.keys()].sort()) {
    const parts = [...plan.get(group)!].map(([k, offset]) => ({ ...fromKey(k), offset })).sort(byTopicPartition);
    for (const p of parts) rows.push([pad(group, 30), pad(p.topic, 30), pad(String(p.partition), 10), pad(String(p.offset), 15)].join(' '));
  }
  if (rows.length === 0) return [''];
  return ['', [pad('GROUP', 30), pad('TOPIC', 30), pad('PARTITION', 10), pad('NEW-OFFSET', 15)].join(' '), ...rows];
}

async function groupState(coordinator: BrokerConnection, group: string): Promise<string> {
  const res = await coordinator.send('DescribeGroups', undefined, { groups: [group], includeAuthorizedOperations: false });
  const g = res.groups[0];
  if (!g || g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return 'Dead';
  if (g.errorCode !== ErrorCode.NONE) throw new ToolError(`describing group ${group}: ${errorName(g.errorCode)}`);
  return g.groupState;
}

/** Clamps requested offsets into [log start, log end], with Kafka's warnings. */
async function checkOffsetsRange(admin: AdminConnection, requested: Map<string, bigint>, out: ToolOutput): Promise<Map<string, bigint>> {
  const parts = [...requested.keys()].map(fromKey);
  const starts = await listPartitionOffsets(admin, parts, EARLIEST);
  const ends = await listPartitionOffsets(admin, parts, LATEST);
  const res = new Map<string, bigint>();
  for (const [k, offset] of requested) {
    const end = ends.get(k);
    const start = starts.get(k);
    if (end === undefined) throw new ToolError(`Error getting ending offset of topic partition: ${label(fromKey(k))}`);
    if (offset > end) {
      out.stderr(`WARN New offset (${offset}) is higher than latest offset for topic partition ${label(fromKey(k))}. Value will be set to ${end}`);
      res.set(k, end);
    } else if (start !== undefined && offset < start) {
      out.stderr(`WARN New offset (${offset}) is lower than earliest offset for topic partition ${label(fromKey(k))}. Value will be set to ${start}`);
      res.set(k, start);
    } else res.set(k, offset);
  }
  return res;
}

async function logOffsetsOrFail(admin: AdminConnection, parts: TopicPartition[], spec: bigint, what: string): Promise<Map<string, bigint>> {
  const found = await listPartitionOffsets(admin, parts, spec);
  for (const p of parts) if (!found.has(key(p))) throw new ToolError(`Error getting ${what} of topic partition: ${label(p)}`);
  return found;
}

async function byTimestamp(admin: AdminConnection, parts: TopicPartition[], timestampMs: number, out: ToolOutput): Promise<Map<string, bigint>> {
  const found = await logOffsetsOrFail(admin, parts, BigInt(timestampMs), 'offset by timestamp');
  const empty = parts.filter((p) => found.get(key(p))! < 0n);
  for (const p of empty) out.stdout(`\nWarn: Partition ${p.partition} from topic ${p.topic} is empty. Falling back to latest known offset.`);
  const ends = await logOffsetsOrFail(admin, empty, LATEST, 'ending offset');
  for (const p of empty) found.set(key(p), ends.get(key(p))!);
  return found;
}

/** The new offsets of `group` for the chosen scenario (ConsumerGroupCommand.prepareOffsetsToReset). */
async function prepareOffsets(admin: AdminConnection, coordinator: BrokerConnection, group: string, args: ParsedArgs, out: ToolOutput): Promise<Map<string, bigint>> {
  const committed = await committedOffsets(coordinator, group);
  const parts = args.has('--all-topics') ? [...committed.keys()].map(fromKey) : await topicPartitionsOf(admin, args.all('--topic'));
  const each = (f: (p: TopicPartition) => bigint) => new Map(parts.map((p) => [key(p), f(p)]));
  if (args.has('--to-offset')) {
    const offset = int64(args, '--to-offset');
    return checkOffsetsRange(admin, each(() => offset), out);
  }
  if (args.has('--to-earliest')) return logOffsetsOrFail(admin, parts, EARLIEST, 'starting offset').then((m) => each((p) => m.get(key(p))!));
  if (args.has('--to-latest')) return logOffsetsOrFail(admin, parts, LATEST, 'ending offset').then((m) => each((p) => m.get(key(p))!));
  if (args.has('--shift-by')) {
    const shift = int64(args, '--shift-by');
    const requested = each((p) => {
      const cur = committed.get(key(p));
      if (cur === undefined) throw new UsageError(`Cannot shift offset for partition ${label(p)} since there is no current committed offset`);
      return cur + shift;
    });
    return checkOffsetsRange(admin, requested, out);
  }
  if (args.has('--to-datetime')) return byTimestamp(admin, parts, parseDateTime(args.get('--to-datetime')!), out);
  if (args.has('--by-duration')) return byTimestamp(admin, parts, Date.now() - parseDuration(args.get('--by-duration')!), out);
  // --to-current
  const without = parts.filter((p) => !committed.has(key(p)));
  const ends = await logOffsetsOrFail(admin, without, LATEST, 'ending offset');
  return each((p) => committed.get(key(p)) ?? ends.get(key(p))!);
}

async function commitOffsets(coordinator: BrokerConnection, group: string, offsets: ReadonlyMap<string, bigint>): Promise<void> {
  if (offsets.size === 0) return;
  const byTopic = new Map<string, { partition: number; offset: bigint }[]>();
  for (const [k, offset] of offsets) {
    const tp = fromKey(k);
    byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), { partition: tp.partition, offset }]);
  }
  const res = await coordinator.send('OffsetCommit', undefined, {
    groupId: group,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [...byTopic].map(([name, ps]) => ({
      name,
      partitions: ps.map((p) => ({ partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })),
    })),
  });
  const failed = res.topics.flatMap((t) => t.partitions.filter((p) => p.errorCode !== ErrorCode.NONE).map((p) => `${t.name}-${p.partitionIndex}: ${errorName(p.errorCode)}`));
  if (failed.length > 0) throw new ToolError(`committing the offsets of group ${group} failed: ${failed.join(', ')}`);
}

/** --reset-offsets; exit code 1 when a group was not reset (active). */
export async function resetOffsets(admin: AdminConnection, groups: readonly string[], args: ParsedArgs, out: ToolOutput): Promise<number> {
  checkResetOptions(args);
  const execute = args.has('--execute');
  if (!execute && !args.has('--dry-run')) out.stderr('WARN: No action will be performed as the --execute option is missing. Add --dry-run to keep this behaviour explicitly, or --execute to reset.');
  const plan = new Map<string, Map<string, bigint>>();
  let refused = false;
  for (const group of groups) {
    const coordinator = await admin.groupCoordinator(group);
    const state = await groupState(coordinator, group);
    if (state !== 'Empty' && state !== 'Dead') {
      out.stderr(`Error: Assignments can only be reset if the group '${group}' is inactive, but the current state is ${state}.`);
      plan.set(group, new Map());
      refused = true;
      continue;
    }
    const offsets = await prepareOffsets(admin, coordinator, group, args, out);
    if (execute) await commitOffsets(coordinator, group, offsets);
    plan.set(group, offsets);
  }
  for (const line of formatResetPlan(plan)) out.stdout(line);
  return refused ? 1 : 0;
}

/** Kafka's messages (the exception's) for the partition errors OffsetDelete returns. */
const PARTITION_ERRORS: Readonly<Record<number, string>> = {
  [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]: 'org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.',
  [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: 'org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.',
};

/** --delete-offsets --group G --topic T[:P,P] ... (ConsumerGroupCommand.deleteOffsets). */
export async function deleteOffsets(admin: AdminConnection, group: string, topicArgs: readonly string[], out: ToolOutput): Promise<number> {
  const results = new Map<string, string | null>();
  const named: TopicPartition[] = [];
  for (const arg of topicArgs) {
    try {
      named.push(...(await topicPartitionsOf(admin, [arg])));
    } catch (err) {
      if (err instanceof UsageError || arg.includes(':')) throw err;
      results.set(key({ topic: arg, partition: -1 }), PARTITION_ERRORS[ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    }
  }
  const parts = [...new Map(named.map((p) => [key(p), p])).values()];
  const coordinator = await admin.groupCoordinator(group);
  let top: number = ErrorCode.NONE;
  if (parts.length > 0) {
    const byTopic = new Map<string, number[]>();
    for (const p of parts) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
    const res = await coordinator.send('OffsetDelete', undefined, { groupId: group, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex })) })) });
    top = res.errorCode;
    const answered = new Map<string, number>();
    for (const t of res.topics) for (const p of t.partitions) answered.set(key({ topic: t.name, partition: p.partitionIndex }), p.errorCode);
    for (const p of parts) {
      const code = top !== ErrorCode.NONE ? top : (answered.get(key(p)) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
      results.set(key(p), code === ErrorCode.NONE ? null : (PARTITION_ERRORS[code] ?? errorName(code)));
    }
    if (top === ErrorCode.NONE && [...answered.values()].some((c) => c !== ErrorCode.NONE)) top = [...answered.values()].find((c) => c !== ErrorCode.NONE)!;
  }
  if (top === ErrorCode.NONE && [...results.values()].some((r) => r !== null)) top = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  switch (top) {
    case ErrorCode.NONE:
      out.stdout(`Request succeed for deleting offsets with topic ${topicArgs.join(', ')} group ${group}`);
      break;
    case ErrorCode.INVALID_GROUP_ID:
      out.stderr(`Error: '${group}' is not valid.`);
      break;
    case ErrorCode.GROUP_ID_NOT_FOUND:
      out.stderr(`Error: '${group}' does not exist.`);
      break;
    case ErrorCode.GROUP_AUTHORIZATION_FAILED:
      out.stderr(`Error: Access to '${group}' is not authorized.`);
      break;
    case ErrorCode.NON_EMPTY_GROUP:
      out.stderr(`Error: Deleting offsets of a consumer group '${group}' is forbidden if the group is not empty.`);
      break;
    case ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC:
    case ErrorCode.TOPIC_AUTHORIZATION_FAILED:
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      out.stderr('Error: Encounter some partition level error, see the follow-up details:');
      break;
    default:
      out.stderr(`Error: Encounter some unknown error: ${errorName(top)}`);
  }
  out.stdout('');
  out.stdout([pad('TOPIC', 30), pad('PARTITION', 15), pad('STATUS', 15)].join(' '));
  const rows = [...results].map(([k, error]) => ({ ...fromKey(k), error })).sort((a, b) => (`${a.topic}${a.partition}` < `${b.topic}${b.partition}` ? -1 : `${a.topic}${a.partition}` > `${b.topic}${b.partition}` ? 1 : 0));
  for (const r of rows) out.stdout([pad(r.topic, 30), pad(r.partition >= 0 ? String(r.partition) : 'Not Provided', 15), pad(r.error === null ? 'Successful' : `Error: :${r.error}`, 15)].join(' '));
  return top === ErrorCode.NONE ? 0 : 1;
}
