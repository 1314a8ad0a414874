/**
 * Startup topics: topics a broker (or an in-process cluster) creates before it reports ready, as
 * EmbeddedKafka's `topics=` and kfake's SeedTopics do. Given as `--create-topic` on the command
 * line (repeatable) or `topics` to startBroker / startCluster.
 *
 * Syntax: `name[:partitions[:replication-factor]][:key=value...]`; an empty or absent count means
 * the broker default (num.partitions, default.replication.factor), e.g. `orders`, `orders:6`,
 * `orders:6:3:cleanup.policy=compact:retention.ms=60000`, `orders::3`. Topic names cannot
 * contain ':' (Kafka's legal characters are [a-zA-Z0-9._-]), so the split is unambiguous.
 *
 * A topic that already exists (a restart on the same data) is left as it is, with a log line;
 * any other refusal by the controller (a bad config, too few brokers) fails the startup with the
 * controller's error. The call returns once this broker's metadata has every topic.
 */
import { ErrorCode, errorName } from '../protocol/errors';
import type { CreateTopicResult, CreateTopicSpec } from '../metadata/controller/controller';
import type { Logger } from '../common/logger';

export interface StartupTopic {
  name: string;
  /** Default: the broker's num.partitions. */
  partitions?: number;
  /** Default: the broker's default.replication.factor. */
  replicationFactor?: number;
  /** Topic configs (Kafka's names). */
  config?: Readonly<Record<string, string>>;
}

/** Parses one `--create-topic` argument; throws a message naming the bad part. */
export function parseStartupTopic(arg: string): StartupTopic {
  const parts = arg.split(':');
  const name = parts[0];
  if (name === '') throw new Error(`invalid topic ${JSON.stringify(arg)}: no name (expected name[:partitions[:replication-factor]][:key=value...])`);
  const out: StartupTopic = { name };
  const config: Record<string, string> = {};
  let positional = 0;
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq >= 0) {
      const key = p.slice(0, eq);
      if (key === '') throw new Error(`invalid topic ${JSON.stringify(arg)}: config without a name in ${JSON.stringify(p)}`);
      config[key] = p.slice(eq + 1);
      continue;
    }
    if (Object.keys(config).length > 0) throw new Error(`invalid topic ${JSON.stringify(arg)}: ${JSON.stringify(p)} after the configs`);
    if (positional >= 2) throw new Error(`invalid topic ${JSON.stringify(arg)}: ${JSON.stringify(p)} is neither a count nor key=value`);
    const which = positional++ === 0 ? 'partitions' : 'replication factor';
    if (p === '') continue;
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 0x7fffffff) throw new Error(`invalid topic ${JSON.stringify(arg)}: ${which} ${JSON.stringify(p)} is not a positive integer`);
    if (which === 'partitions') out.partitions = Number(p);
    else out.replicationFactor = Number(p);
  }
  if (Object.keys(config).length > 0) out.config = config;
  return out;
}

export function toStartupTopic(t: string | StartupTopic): StartupTopic {
  return typeof t === 'string' ? parseStartupTopic(t) : t;
}

/** What creating startup topics needs of a broker. */
export interface StartupTopicTarget {
  readonly logger: Logger;
  readonly controller: { createTopics(specs: CreateTopicSpec[], validateOnly: boolean): Promise<CreateTopicResult[]> };
  readonly metadata: { topic(name: string): unknown };
}

/** Creates the topics (see the header); resolves when `waitOn` (default: `target`) knows all of them. */
export async function createStartupTopics(
  target: StartupTopicTarget,
  topics: readonly (string | StartupTopic)[],
  opts: { waitOn?: readonly StartupTopicTarget[]; timeoutMs?: number } = {},
): Promise<void> {
  if (topics.length === 0) return;
  const specs = topics.map(toStartupTopic);
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.name)) throw new Error(`startup topic ${s.name} is listed twice`);
    seen.add(s.name);
  }
  const results = await target.controller.createTopics(
    specs.map((s) => ({
      name: s.name,
      numPartitions: s.partitions ?? -1,
      replicationFactor: s.replicationFactor ?? -1,
      assignments: [],
      configs: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
    })),
    false,
  );
  const failed: string[] = [];
  for (const r of results) {
    if (r.errorCode === ErrorCode.NONE) target.logger.info(`created startup topic ${r.name}`, { partitions: r.numPartitions, replicationFactor: r.replicationFactor });
    else if (r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) target.logger.info(`startup topic ${r.name} already exists; left as it is`);
    else failed.push(`${r.name}: ${errorName(r.errorCode)}${r.errorMessage ? ` (${r.errorMessage})` : ''}`);
  }
  if (failed.length > 0) throw new Error(`cannot create startup topics: ${failed.join('; ')}`);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (const node of opts.waitOn ?? [target]) {
    while (specs.some((s) => node.metadata.topic(s.name) === undefined)) {
      if (Date.now() > deadline) throw new Error(`startup topics created but not yet in the metadata of every broker after ${opts.timeoutMs ?? 30_000} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
