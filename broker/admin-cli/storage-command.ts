/**
 * `krill storage`: kafka-storage.sh for a node's directories, on the local disk (no cluster needed).
 *
 *   krill storage random-uuid
 *   krill storage format -t CLUSTER_ID -c server.properties [-g] [--standalone | --no-initial-controllers]
 *   krill storage info -c server.properties
 *
 * `format` writes `meta.properties` (version 1, node.id, cluster.id, a fresh directory.id) into
 * every directory the config names (log.dirs, and metadata.log.dir when it is another), as
 * StorageTool does. krill does not need it (a controller on empty directories creates the cluster
 * id, a broker learns it from its controller), but a directory formatted here keeps the given
 * cluster id, so a fleet can be prepared the way Kafka's is. A directory already formatted is
 * refused unless -g (--ignore-formatted) is given. A controller without `controller.quorum.voters`
 * must say how its quorum starts (Kafka 4.0's KIP-853 rule), and gets Kafka's bootstrap checkpoint
 * `<metadata.log.dir>/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
 * (KRaftVersionRecord 1 + VotersRecord, metadata/raft/kraft-control-state.ts) for it:
 * `--standalone` (a voter set of this controller alone, at its first controller listener),
 * `--initial-controllers 'id@host:port:directoryId,...'` (those voters; this node must be one, and
 * its metadata directory takes the directory id given for it), or `--no-initial-controllers` (no
 * checkpoint: a controller that joins an existing dynamic quorum with AddRaftVoter). A static
 * quorum (`controller.quorum.voters` naming several controllers, broker/quorum-support.ts) is
 * formatted like any controller, without a checkpoint (kraft.version 0): each of its controllers
 * with the same cluster id, which a quorum controller requires before it starts.
 * `info` lists each directory and its meta.properties, or the problem with it.
 *
 * Exit codes as the other admin tools: 0, 1 for a refusal (one line, no stack), 2 for bad usage.
 */
import * as fs from 'node:fs';
import { KafkaConfig } from '../../config/kafka-config';
import { ConfigException } from '../../config/config-types';
import { isUuid, randomUuid } from '../../protocol/primitives/uuid';
import { nodeFs } from '../../storage/fs';
import { metaPropertiesFile, readMetaProperties, writeMetaProperties } from '../../storage/meta-properties';
import { METADATA_VERSION_LEVEL, METADATA_VERSION_NAMES } from '../../metadata/features';
import * as path from 'node:path';
import { checkQuorumSupport } from '../quorum-support';
import { METADATA_PARTITION_DIR } from '../../metadata/metadata-log-store';
import { writeBootstrapCheckpoint } from '../../metadata/raft/kraft-control-state';
import { DEFAULT_CONTROLLER_LISTENER, VoterSet, parseDynamicVoter, type VoterNode } from '../../metadata/raft/voter-set';
import { ToolError, UsageError } from './admin-connection';
import { parseToolArgs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

export const STORAGE_USAGE = `usage: krill storage random-uuid
       krill storage format -t CLUSTER_ID -c FILE [-g] [--standalone | --no-initial-controllers | --initial-controllers LIST]
       krill storage info -c FILE
as kafka-storage.sh: FILE is the node's server.properties.`;

const OPTIONS = {
  '-t': {},
  '--cluster-id': {},
  '-c': {},
  '--config': {},
  '-g': { flag: true },
  '--ignore-formatted': { flag: true },
  '-s': { flag: true },
  '--standalone': { flag: true },
  '-N': { flag: true },
  '--no-initial-controllers': { flag: true },
  '-I': {},
  '--initial-controllers': {},
  '--help': { flag: true },
} as const;

const either = (args: ParsedArgs, short: string, long: string): string | undefined => args.get(long) ?? args.get(short);

function loadConfig(args: ParsedArgs): KafkaConfig {
  const file = either(args, '-c', '--config');
  if (file === undefined) throw new UsageError(`-c / --config (the node's server.properties) is required\n${STORAGE_USAGE}`);
  if (!fs.existsSync(file)) throw new ToolError(`the config file ${file} does not exist`);
  try {
    return KafkaConfig.load({ file });
  } catch (err) {
    if (err instanceof ConfigException) throw new ToolError(`${file}: ${err.message}`);
    throw err;
  }
}

/** log.dirs, then metadata.log.dir when it is not one of them. */
function directoriesOf(config: KafkaConfig): string[] {
  const dirs = [...config.logDirs()];
  const meta = config.metadataLogDir();
  if (!dirs.includes(meta)) dirs.push(meta);
  return dirs;
}

export async function storageCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const [action, ...rest] = argv;
  if (action === undefined || action === '--help') {
    out.stdout(STORAGE_USAGE);
    return action === undefined ? 2 : 0;
  }
  const args = parseToolArgs(rest, OPTIONS);
  switch (action) {
    case 'random-uuid':
      out.stdout(randomUuid());
      return 0;
    case 'info':
      return info(loadConfig(args), out);
    case 'format':
      return format(args, out);
    default:
      throw new UsageError(`unknown action ${action}: one of random-uuid, format, info\n${STORAGE_USAGE}`);
  }
}

function format(args: ParsedArgs, out: ToolOutput): number {
  const clusterId = either(args, '-t', '--cluster-id');
  if (clusterId === undefined) throw new UsageError(`-t / --cluster-id is required (krill storage random-uuid makes one)\n${STORAGE_USAGE}`);
  if (!isUuid(clusterId)) throw new ToolError(`Cluster ID string ${clusterId} does not appear to be a valid UUID`);
  const config = loadConfig(args);
  let kind;
  try {
    kind = checkQuorumSupport(config);
  } catch (err) {
    if (err instanceof ConfigException) throw new ToolError(err.message);
    throw err;
  }
  const standalone = args.has('--standalone') || args.has('-s');
  const noInitial = args.has('--no-initial-controllers') || args.has('-N');
  const initial = either(args, '-I', '--initial-controllers');
  if ([standalone, noInitial, initial !== undefined].filter(Boolean).length > 1) {
    throw new UsageError('--standalone, --initial-controllers and --no-initial-controllers are mutually exclusive');
  }
  const voters = (config.getList('controller.quorum.voters') ?? []).filter((s) => s.trim() !== '');
  let initialVoters: VoterNode[] | undefined;
  let metadataDirectoryId: string | undefined;
  if (kind !== 'broker') {
    if (voters.length > 0 && (standalone || initial !== undefined)) {
      throw new ToolError('You cannot specify --standalone or --initial-controllers when controller.quorum.voters is set.');
    }
    if (voters.length === 0 && !standalone && !noInitial && initial === undefined) {
      throw new ToolError(
        'Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.',
      );
    }
    const listenerName = config.controllerListenerNames()[0] ?? DEFAULT_CONTROLLER_LISTENER;
    if (initial !== undefined) {
      const entries = initial.split(',').filter((s) => s.trim() !== '');
      try {
        initialVoters = entries.map((e) => parseDynamicVoter(e, listenerName));
        new VoterSet(initialVoters);
      } catch (err) {
        throw new ToolError(`--initial-controllers ${initial}: ${(err as Error).message}`);
      }
      const self = initialVoters.find((v) => v.key.id === config.nodeId);
      if (!self) throw new ToolError(`--initial-controllers ${initial} does not name this node (node.id ${config.nodeId})`);
      metadataDirectoryId = self.key.directoryId;
    } else if (standalone) {
      const l = config.listeners().find((x) => x.listenerName === listenerName);
      if (!l) throw new ToolError(`--standalone: no listener ${listenerName} (controller.listener.names) to name this controller by`);
      metadataDirectoryId = randomUuid();
      initialVoters = [{ key: { id: config.nodeId, directoryId: metadataDirectoryId }, endpoints: [{ name: listenerName, host: l.host || 'localhost', port: l.port }], kraftVersion: { min: 0, max: 1 } }];
    }
  } else if (standalone || noInitial || initial !== undefined) {
    throw new ToolError('--standalone, --initial-controllers and --no-initial-controllers are for controllers (process.roles contains controller).');
  }
  const ignoreFormatted = args.has('--ignore-formatted') || args.has('-g');
  if (initialVoters && metadataFormatted(config)) {
    throw new ToolError(`The metadata directory ${config.metadataLogDir()} is already formatted: its directory id cannot become the one of the initial controllers.`);
  }
  const dirs = directoriesOf(config);
  const toFormat: string[] = [];
  for (const d of dirs) {
    let formatted = false;
    try {
      formatted = readMetaProperties(nodeFs, d) !== undefined;
    } catch {
      formatted = fs.existsSync(metaPropertiesFile(d));
    }
    if (!formatted) toFormat.push(d);
    else if (!ignoreFormatted) throw new ToolError(`Log directory ${d} is already formatted. Use --ignore-formatted to ignore this directory and format the others.`);
  }
  if (toFormat.length === 0) {
    out.stdout('All of the log directories are already formatted.');
    return 0;
  }
  const mv = METADATA_VERSION_NAMES.get(METADATA_VERSION_LEVEL) ?? String(METADATA_VERSION_LEVEL);
  const metadataDir = config.metadataLogDir();
  for (const d of toFormat) {
    fs.mkdirSync(d, { recursive: true });
    const directoryId = d === metadataDir && metadataDirectoryId ? metadataDirectoryId : randomUuid();
    writeMetaProperties(nodeFs, d, { version: 1, nodeId: config.nodeId, clusterId, directoryId });
    out.stdout(`Formatting ${d === metadataDir ? 'metadata' : 'data'} directory ${d} with metadata.version ${mv}.`);
    if (d === metadataDir && initialVoters) {
      const file = writeBootstrapCheckpoint(path.join(d, METADATA_PARTITION_DIR), new VoterSet(initialVoters));
      out.stdout(`Wrote the bootstrap checkpoint ${file} (kraft.version 1, voters ${new VoterSet(initialVoters)}).`);
    }
  }
  return 0;
}

/** Whether the metadata directory already holds meta.properties. */
function metadataFormatted(config: KafkaConfig): boolean {
  const d = config.metadataLogDir();
  try {
    return readMetaProperties(nodeFs, d) !== undefined;
  } catch {
    return fs.existsSync(metaPropertiesFile(d));
  }
}

function info(config: KafkaConfig, out: ToolOutput): number {
  const found: string[] = [];
  const problems: string[] = [];
  const metas: string[] = [];
  for (const d of directoriesOf(config)) {
    if (!fs.existsSync(d)) {
      problems.push(`${d} does not exist`);
      continue;
    }
    found.push(d);
    try {
      const m = readMetaProperties(nodeFs, d);
      if (m === undefined) problems.push(`${d} is not formatted.`);
      else metas.push(`{cluster.id=${m.clusterId}, directory.id=${m.directoryId}, node.id=${m.nodeId}, version=${m.version}}`);
    } catch (err) {
      problems.push(`${d}: ${(err as Error).message}`);
    }
  }
  if (found.length > 0) out.stdout(`Found log director${found.length === 1 ? 'y' : 'ies'}:\n${found.map((d) => `  ${d}`).join('\n')}\n`);
  for (const m of new Set(metas)) out.stdout(`Found metadata: ${m}\n`);
  if (problems.length > 0) {
    out.stdout(`Found problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}
