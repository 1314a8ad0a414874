/**
 * `krill topics`: kafka-topics.sh over the Kafka protocol.
 *
 *   krill topics --bootstrap-server H:P --list [--topic REGEX] [--exclude-internal]
 *   krill topics --bootstrap-server H:P --describe [--topic REGEX] [--exclude-internal] [--under-replicated-partitions]
 *   krill topics --bootstrap-server H:P --create --topic T [--partitions N] [--replication-factor R] [--config K=V ...] [--if-not-exists]
 *   krill topics --bootstrap-server H:P --alter --topic REGEX --partitions N [--if-exists]
 *   krill topics --bootstrap-server H:P --delete --topic REGEX [--if-exists]
 *
 * Output as TopicCommand prints it: topic names one per line (sorted); for --describe a line
 * `Topic: t<TAB>TopicId: id<TAB>PartitionCount: n<TAB>ReplicationFactor: r<TAB>Configs: k=v,...`
 * (every config whose source is not the default) followed by one
 * `<TAB>Topic: t<TAB>Partition: p<TAB>Leader: l<TAB>Replicas: a,b<TAB>Isr: a,b<TAB>Elr: N/A<TAB>LastKnownElr: N/A`
 * line per partition (Metadata carries no ELR, so N/A as Kafka prints it then); `Created topic t.`
 * A failure prints `Error while executing topic command : <message>` and exits 1. `--topic`
 * outside --create is a regular expression matched against the whole name (',' separates
 * alternatives), as Kafka's include lists.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { MetadataResponse } from '../../protocol/generated/metadata';
import { AdminConnection, ToolError } from './admin-connection';
import { openAdmin } from './command-config';
import { parseConfigPairs, parseToolArgs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const TOPIC_RESOURCE = 2;
const DEFAULT_CONFIG_SOURCE = 5;

const OPTIONS = {
  '--bootstrap-server': {},
  '--command-config': {},
  '--list': { flag: true },
  '--describe': { flag: true },
  '--create': { flag: true },
  '--alter': { flag: true },
  '--delete': { flag: true },
  '--topic': {},
  '--partitions': {},
  '--replication-factor': {},
  '--config': { repeatable: true },
  '--if-exists': { flag: true },
  '--if-not-exists': { flag: true },
  '--exclude-internal': { flag: true },
  '--under-replicated-partitions': { flag: true },
  '--help': { flag: true },
} as const;

export const TOPICS_USAGE = `usage: krill topics --bootstrap-server HOST:PORT [--command-config FILE] (--list | --describe | --create | --alter | --delete) [options]
  --topic T                    the topic (a regular expression except with --create)
  --partitions N               with --create, or --alter to add partitions
  --replication-factor R       with --create
  --config K=V                 topic config with --create (repeatable)
  --if-exists, --if-not-exists, --exclude-internal, --under-replicated-partitions
as kafka-topics.sh.`;

export async function topicsCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const args = parseToolArgs(argv, OPTIONS);
  if (args.has('--help')) {
    out.stdout(TOPICS_USAGE);
    return 0;
  }
  const actions = ['--list', '--describe', '--create', '--alter', '--delete'].filter((a) => args.has(a));
  if (actions.length !== 1) throw new ToolError(`Command must include exactly one action: --list, --describe, --create, --alter or --delete\n${TOPICS_USAGE}`);
  const admin = await openAdmin(args);
  try {
    switch (actions[0]) {
      case '--list':
        for (const t of await matchingTopics(admin, args)) out.stdout(t);
        return 0;
      case '--describe':
        await describe(admin, args, out);
        return 0;
      case '--create':
        return await create(admin, args, out);
      case '--alter':
        return await alter(admin, args);
      default:
        return await remove(admin, args);
    }
  } finally {
    await admin.close();
  }
}

/** Kafka's include list: ',' means '|', the whole name must match. */
export function topicFilter(pattern: string | undefined): (name: string) => boolean {
  if (pattern === undefined) return () => true;
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${pattern.trim().replace(/^["']|["']$/g, '').replace(/,/g, '|')})$`);
  } catch (err) {
    throw new ToolError(`invalid --topic ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
  return (name) => re.test(name);
}

async function matchingTopics(admin: AdminConnection, args: ParsedArgs, md?: MetadataResponse): Promise<string[]> {
  const all = md ?? (await admin.metadata(null));
  const match = topicFilter(args.get('--topic'));
  const excludeInternal = args.has('--exclude-internal');
  return all.topics
    .filter((t) => t.errorCode === ErrorCode.NONE && t.name !== null && match(t.name) && !(excludeInternal && t.isInternal))
    .map((t) => t.name!)
    .sort();
}

function ensureFound(topics: string[], args: ParsedArgs): void {
  const requested = args.get('--topic');
  if (topics.length === 0 && requested !== undefined && !args.has('--if-exists')) throw new ToolError(`Topic '${requested}' does not exist as expected`);
}

async function describe(admin: AdminConnection, args: ParsedArgs, out: ToolOutput): Promise<void> {
  const md = await admin.metadata(null);
  const names = await matchingTopics(admin, args, md);
  ensureFound(names, args);
  if (names.length === 0) return;
  const configs = await admin.any.send('DescribeConfigs', undefined, {
    resources: names.map((resourceName) => ({ resourceType: TOPIC_RESOURCE, resourceName, configurationKeys: null })),
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const byTopic = new Map(configs.results.map((r) => [r.resourceName, r]));
  const underReplicated = args.has('--under-replicated-partitions');
  for (const name of names) {
    const t = md.topics.find((x) => x.name === name)!;
    const partitions = [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex);
    if (!underReplicated) {
      const cfg = byTopic.get(name);
      if (cfg && cfg.errorCode !== ErrorCode.NONE) throw new ToolError(`describing the configs of ${name}: ${cfg.errorMessage ?? errorName(cfg.errorCode)}`);
      // ConfigSource per entry from v1; v0 has is_default instead.
      const nonDefault = (cfg?.configs ?? []).filter((c) => ('configSource' in c && c.configSource !== undefined ? c.configSource !== DEFAULT_CONFIG_SOURCE : !c.isDefault));
      const rf = partitions[0]?.replicaNodes.length ?? 0;
      out.stdout(
        `Topic: ${name}${t.topicId !== ZERO_UUID ? `\tTopicId: ${t.topicId}` : ''}\tPartitionCount: ${partitions.length}\tReplicationFactor: ${rf}\tConfigs: ${nonDefault
          .map((c) => `${c.name}=${c.value ?? ''}`)
          .join(',')}`,
      );
    }
    for (const p of partitions) {
      if (underReplicated && p.isrNodes.length >= p.replicaNodes.length) continue;
      out.stdout(
        `\tTopic: ${name}\tPartition: ${p.partitionIndex}\tLeader: ${p.leaderId >= 0 ? p.leaderId : 'none'}\tReplicas: ${p.replicaNodes.join(',')}\tIsr: ${p.isrNodes.join(',')}\tElr: N/A\tLastKnownElr: N/A`,
      );
    }
  }
}

async function create(admin: AdminConnection, args: ParsedArgs, out: ToolOutput): Promise<number> {
  const name = args.need('--topic', 'with --create');
  const partitions = args.int('--partitions', 1, 0x7fffffff);
  const rf = args.int('--replication-factor', 1, 32767);
  const configs = parseConfigPairs(args.all('--config'), '--config');
  const res = await admin.any.send('CreateTopics', undefined, {
    topics: [{ name, numPartitions: partitions ?? -1, replicationFactor: rf ?? -1, assignments: [], configs: [...configs].map(([n, value]) => ({ name: n, value })) }],
    timeoutMs: 30_000,
    validateOnly: false,
  });
  const r = res.topics[0];
  if (r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS && args.has('--if-not-exists')) return 0;
  if (r.errorCode !== ErrorCode.NONE) throw new ToolError(r.errorMessage ?? errorName(r.errorCode));
  out.stdout(`Created topic ${name}.`);
  return 0;
}

async function alter(admin: AdminConnection, args: ParsedArgs): Promise<number> {
  args.need('--topic', 'with --alter');
  const count = args.int('--partitions', 1, 0x7fffffff);
  if (count === undefined) throw new ToolError('--alter needs --partitions (the new partition count); topic configs are changed with krill configs');
  const names = await matchingTopics(admin, args);
  ensureFound(names, args);
  if (names.length === 0) return 0;
  const res = await admin.any.send('CreatePartitions', undefined, { topics: names.map((name) => ({ name, count, assignments: null })), timeoutMs: 30_000, validateOnly: false });
  const failed = res.results.filter((r) => r.errorCode !== ErrorCode.NONE);
  if (failed.length > 0) throw new ToolError(failed.map((r) => r.errorMessage ?? `${r.name}: ${errorName(r.errorCode)}`).join('; '));
  return 0;
}

async function remove(admin: AdminConnection, args: ParsedArgs): Promise<number> {
  args.need('--topic', 'with --delete');
  const names = await matchingTopics(admin, args);
  ensureFound(names, args);
  if (names.length === 0) return 0;
  const v = admin.any.versionFor('DeleteTopics');
  const res = await admin.any.send('DeleteTopics', v, v >= 6 ? { topics: names.map((name) => ({ name, topicId: ZERO_UUID })), timeoutMs: 30_000 } : { topicNames: names, timeoutMs: 30_000 });
  const failed = res.responses.filter((r) => r.errorCode !== ErrorCode.NONE);
  if (failed.length > 0) throw new ToolError(failed.map((r) => r.errorMessage ?? `${r.name}: ${errorName(r.errorCode)}`).join('; '));
  return 0;
}
