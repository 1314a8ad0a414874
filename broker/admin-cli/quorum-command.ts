/**
 * `krill quorum`: kafka-metadata-quorum.sh (MetadataQuorumCommand) over the Kafka protocol.
 *
 *   krill quorum (--bootstrap-server H:P | --bootstrap-controller H:P) [--command-config FILE]
 *     describe|--describe (--status | --replication [--human-readable])
 *     add-controller --command-config CONTROLLER.properties [--dry-run]
 *     remove-controller --controller-id N --controller-directory-id ID [--dry-run]
 *
 * Exactly one of --bootstrap-server / --bootstrap-controller (Kafka's mutually exclusive, required
 * group). With --bootstrap-controller the bootstrap controllers are tried in order and a request
 * answered NOT_LEADER_OR_FOLLOWER goes on to the next one, so the quorum leader must be among them
 * (Kafka's admin client learns all controllers from DescribeCluster; krill's controllers name only
 * themselves there). The cluster id of --status comes from DescribeCluster (endpoint type 2 on a
 * controller); through a broker from Metadata. A broker of a controller quorum forwards the three
 * APIs to the active controller (broker/handlers/describe-quorum.ts ...); a single-node krill does
 * not serve them: UnsupportedVersionException naming the API, exit 1.
 *
 * --status prints MetadataQuorumCommand's block: ClusterId, LeaderId, LeaderEpoch, HighWatermark,
 * MaxFollowerLag (leader LEO minus the furthest behind voter's), MaxFollowerLagTimeMs (difference of
 * their last caught-up times; 0 when the leader is the furthest behind, -1 when unknown),
 * CurrentVoters and CurrentObservers as [{"id": 1, "directoryId": null, "endpoints": [...]}, ...].
 * --replication prints Kafka's table (leader, then followers, then observers; Lag against the
 * leader's LEO; -1 for unknown timestamps; "N ms ago" with --human-readable).
 * add-controller reads the new controller's server.properties as Kafka does (node.id, process.roles
 * containing controller, metadata.log.dir else the first log.dirs entry and its meta.properties
 * directory.id, the controller.listener.names endpoints of advertised.listeners over listeners)
 * and sends AddRaftVoter; remove-controller sends RemoveRaftVoter. Errors are printed as the
 * exception Kafka's admin client raises (org.apache.kafka.common.errors.XException: message), exit 1.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { connect, UnsupportedVersionError, type BrokerConnection } from '../../client/network-client';
import type { DescribeQuorumResponse, DescribeQuorumResponseReplicaState } from '../../protocol/generated/describe-quorum';
import { isUuid } from '../../protocol/primitives/uuid';
import { loadPropertiesFile } from '../../config/properties';
import { nodeFs } from '../../storage/fs';
import { readMetaProperties } from '../../storage/meta-properties';
import { ToolError, parseBootstrapServers, type AdminConnection } from './admin-connection';
import { loadCommandConfig, openAdmin, type CommandConfig } from './command-config';
import { parseToolArgs, type ParsedArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const METADATA_TOPIC = '__cluster_metadata';
const APIS_BY_NAME: Readonly<Record<string, number>> = { DescribeQuorum: 55, AddRaftVoter: 80, RemoveRaftVoter: 81 };

const OPTIONS = {
  '--bootstrap-server': {},
  '--bootstrap-controller': {},
  '--command-config': {},
  '--describe': { flag: true },
  '--status': { flag: true },
  '--replication': { flag: true },
  '--human-readable': { flag: true },
  '--dry-run': { flag: true },
  '--controller-id': {},
  '-i': {},
  '--controller-directory-id': {},
  '-d': {},
  '--help': { flag: true },
} as const;

const SUBCOMMANDS = ['describe', 'add-controller', 'remove-controller'];

export const QUORUM_USAGE = `usage: krill quorum (--bootstrap-server HOST:PORT | --bootstrap-controller HOST:PORT) [--command-config FILE]
         describe (--status | --replication [--human-readable])
       | add-controller --command-config CONTROLLER_PROPERTIES [--dry-run]
       | remove-controller --controller-id ID --controller-directory-id DIRECTORY_ID [--dry-run]
as kafka-metadata-quorum.sh.`;

/** Kafka's exception class and default message for the errors the quorum APIs answer. */
const EXCEPTIONS: Readonly<Record<number, [string, string]>> = {
  [ErrorCode.DUPLICATE_VOTER]: ['DuplicateVoterException', 'The voter is already part of the set of voters.'],
  [ErrorCode.VOTER_NOT_FOUND]: ['VoterNotFoundException', 'The voter is not part of the set of voters.'],
  [ErrorCode.UNSUPPORTED_VERSION]: ['UnsupportedVersionException', 'The version of API is not supported.'],
  [ErrorCode.REQUEST_TIMED_OUT]: ['TimeoutException', 'The request timed out.'],
  [ErrorCode.NOT_LEADER_OR_FOLLOWER]: ['NotLeaderOrFollowerException', 'For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.'],
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]: ['ClusterAuthorizationException', 'Cluster authorization failed.'],
  [ErrorCode.INVALID_REQUEST]: ['InvalidRequestException', 'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.'],
  [ErrorCode.BROKER_NOT_AVAILABLE]: ['BrokerNotAvailableException', 'The broker is not available.'],
};

function kafkaError(code: number, message: string | null | undefined): ToolError {
  const e = EXCEPTIONS[code];
  if (!e) return new ToolError(message ?? errorName(code));
  return new ToolError(`org.apache.kafka.common.errors.${e[0]}: ${message ?? e[1]}`);
}

/** Where the quorum requests go: the broker admin connection, or the bootstrap controllers. */
interface QuorumTarget {
  /** Sends to a node that serves `api` (under --bootstrap-controller, an answer whose errorOf is NOT_LEADER_OR_FOLLOWER moves on to the next controller). */
  send<R>(api: string, request: (conn: BrokerConnection, version: number) => Promise<R>, errorOf: (r: R) => number): Promise<R>;
  clusterId(): Promise<string | null>;
  close(): Promise<void>;
}

function unsupported(conn: BrokerConnection, api: string): ToolError {
  return kafkaError(ErrorCode.UNSUPPORTED_VERSION, `The node at ${conn.host}:${conn.port} does not support ${api} (API ${APIS_BY_NAME[api]})`);
}

function brokerTarget(admin: AdminConnection): QuorumTarget {
  return {
    async send(api, request) {
      let version: number;
      try {
        version = admin.any.versionFor(api as never);
      } catch (err) {
        if (err instanceof UnsupportedVersionError) throw unsupported(admin.any, api);
        throw err;
      }
      return request(admin.any, version);
    },
    async clusterId() {
      return (await admin.metadata([])).clusterId;
    },
    close: () => admin.close(),
  };
}

function controllerTarget(servers: string[], config: CommandConfig): QuorumTarget {
  const conns = new Map<string, Promise<BrokerConnection>>();
  const timeoutMs = config.requestTimeoutMs ?? 30_000;
  const open = (s: string): Promise<BrokerConnection> => {
    let c = conns.get(s);
    if (!c) {
      const i = s.lastIndexOf(':');
      c = connect(s.slice(0, i).replace(/^\[|\]$/g, ''), Number(s.slice(i + 1)), { clientId: config.clientId ?? 'krill-admin', timeoutMs, requestTimeoutMs: timeoutMs, ...config.security });
      conns.set(s, c);
    }
    return c;
  };
  return {
    async send(api, request, errorOf) {
      const reasons: string[] = [];
      let last: unknown;
      for (const s of servers) {
        let conn: BrokerConnection;
        try {
          conn = await open(s);
        } catch (err) {
          reasons.push(`${s}: ${(err as Error).message}`);
          continue;
        }
        let version: number;
        try {
          version = conn.versionFor(api as never);
        } catch (err) {
          if (err instanceof UnsupportedVersionError) throw unsupported(conn, api);
          throw err;
        }
        const r = await request(conn, version);
        if (errorOf(r) !== ErrorCode.NOT_LEADER_OR_FOLLOWER) return r;
        last = r;
      }
      if (last !== undefined) return last as never;
      throw new ToolError(`cannot reach any bootstrap controller (${reasons.join('; ')})`);
    },
    async clusterId() {
      for (const s of servers) {
        let conn: BrokerConnection;
        try {
          conn = await open(s);
        } catch {
          continue;
        }
        const res = await conn.send('DescribeCluster', 1, { includeClusterAuthorizedOperations: false, endpointType: 2 } as never);
        if (res.errorCode !== ErrorCode.NONE) throw kafkaError(res.errorCode, res.errorMessage);
        return res.clusterId;
      }
      throw new ToolError(`cannot reach any bootstrap controller (${servers.join(', ')})`);
    },
    async close() {
      await Promise.allSettled([...conns.values()].map((p) => p.then((c) => c.close())));
    },
  };
}

async function openTarget(args: ParsedArgs): Promise<QuorumTarget> {
  const server = args.get('--bootstrap-server');
  const controller = args.get('--bootstrap-controller');
  if ((server === undefined) === (controller === undefined)) {
    throw new ToolError(
      server === undefined
        ? 'one of the arguments --bootstrap-server --bootstrap-controller is required'
        : 'argument --bootstrap-controller: not allowed with argument --bootstrap-server',
    );
  }
  if (server !== undefined) return brokerTarget(await openAdmin(args));
  const servers = parseBootstrapServers(controller!);
  return controllerTarget(servers, loadCommandConfig(args.get('--command-config')));
}

export async function quorumCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const words = argv.filter((a) => SUBCOMMANDS.includes(a));
  const args = parseToolArgs(
    argv.filter((a) => !SUBCOMMANDS.includes(a)),
    OPTIONS,
  );
  if (args.has('--help')) {
    out.stdout(QUORUM_USAGE);
    return 0;
  }
  if (args.has('--describe')) words.push('describe');
  if (words.length !== 1) throw new ToolError(`Command must include exactly one action: describe, add-controller or remove-controller\n${QUORUM_USAGE}`);
  const command = words[0];
  if (command === 'describe') {
    if (args.has('--status') && args.has('--replication')) throw new ToolError('Only one of --status or --replication should be specified with describe sub-command');
    if (!args.has('--status') && !args.has('--replication')) throw new ToolError('One of --status or --replication must be specified with describe sub-command');
    if (args.has('--status') && args.has('--human-readable')) throw new ToolError('The option --human-readable is only supported along with --replication');
  }
  if (command === 'add-controller' && !args.has('--command-config')) throw new ToolError('You must supply the configuration file of the controller you are adding when using add-controller.');
  let removal: { id: number; directoryId: string } | undefined;
  if (command === 'remove-controller') removal = removalOf(args);
  const addition = command === 'add-controller' ? controllerToAdd(args.get('--command-config')!) : undefined;
  if (args.has('--dry-run') && addition) {
    out.stdout(`DRY RUN of adding${additionText(addition)}`);
    return 0;
  }
  if (args.has('--dry-run') && removal) {
    out.stdout(`DRY RUN of removing  KRaft controller ${removal.id} with directory id ${removal.directoryId}`);
    return 0;
  }
  const target = await openTarget(args);
  try {
    if (command === 'describe') {
      const res = await describeQuorum(target);
      if (args.has('--status')) for (const line of formatQuorumStatus(await target.clusterId(), res)) out.stdout(line);
      else for (const line of formatQuorumReplication(res, args.has('--human-readable'), Date.now())) out.stdout(line);
    } else if (addition) {
      const res = await target.send(
        'AddRaftVoter',
        (conn, v) =>
          conn.send('AddRaftVoter', v, { clusterId: null, timeoutMs: 30_000, voterId: addition.id, voterDirectoryId: addition.directoryId, listeners: addition.endpoints }),
        (r) => r.errorCode,
      );
      if (res.errorCode !== ErrorCode.NONE) throw kafkaError(res.errorCode, res.errorMessage);
      out.stdout(`Added${additionText(addition)}`);
    } else if (removal) {
      const r = removal;
      const res = await target.send('RemoveRaftVoter', (conn, v) => conn.send('RemoveRaftVoter', v, { clusterId: null, voterId: r.id, voterDirectoryId: r.directoryId }), (x) => x.errorCode);
      if (res.errorCode !== ErrorCode.NONE) throw kafkaError(res.errorCode, res.errorMessage);
      out.stdout(`Removed  KRaft controller ${r.id} with directory id ${r.directoryId}`);
    }
    return 0;
  } finally {
    await target.close();
  }
}

async function describeQuorum(target: QuorumTarget): Promise<DescribeQuorumResponse> {
  return target.send(
    'DescribeQuorum',
    (conn, v) => conn.send('DescribeQuorum', v, { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] }] }),
    (r) => (r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.topics[0]?.partitions[0]?.errorCode ?? ErrorCode.NONE)),
  );
}

function removalOf(args: ParsedArgs): { id: number; directoryId: string } {
  const idText = args.get('--controller-id') ?? args.get('-i');
  const dirText = args.get('--controller-directory-id') ?? args.get('-d');
  if (idText === undefined) throw new ToolError('argument --controller-id/-i is required');
  if (dirText === undefined) throw new ToolError('argument --controller-directory-id/-d is required');
  if (!/^-?\d+$/.test(idText)) throw new ToolError(`argument --controller-id/-i: could not convert '${idText}' to Integer`);
  const id = Number(idText);
  if (id < 0) throw new ToolError(`Invalid negative --controller-id: ${id}`);
  if (!isUuid(dirText)) throw new ToolError(`Failed to parse --controller-directory-id: Invalid UUID string: ${dirText}`);
  return { id, directoryId: dirText };
}

interface ControllerToAdd {
  id: number;
  directoryId: string;
  endpoints: { name: string; host: string; port: number }[];
}

function additionText(a: ControllerToAdd): string {
  const eps = a.endpoints.map((e) => `${e.name}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`).join(', ');
  return ` controller ${a.id} with directory id ${a.directoryId} and endpoints: ${eps}`;
}

/** NAME://host:port entries of a listeners line, by upper-cased name. */
function listenerMap(line: string | undefined): Map<string, { name: string; host: string; port: number }> {
  const out = new Map<string, { name: string; host: string; port: number }>();
  for (const raw of (line ?? '').split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    const m = /^([^:]+):\/\/(\[[^\]]*\]|[^:]*):(-?\d+)$/.exec(s);
    if (!m) throw new ToolError(`Unable to parse ${s} to a broker endpoint`);
    const name = m[1].toUpperCase();
    out.set(name, { name, host: m[2].replace(/^\[|\]$/g, ''), port: Number(m[3]) });
  }
  return out;
}

/** The controller of a server.properties, as MetadataQuorumCommand's add-controller reads it. */
export function controllerToAdd(file: string): ControllerToAdd {
  let props: Map<string, string>;
  try {
    props = loadPropertiesFile(file);
  } catch {
    throw new ToolError(`Properties file ${file} does not exists!`);
  }
  const nodeText = props.get('node.id');
  if (nodeText === undefined) throw new ToolError('node.id not found in configuration file. Is this a valid controller configuration file?');
  const id = Number(nodeText.trim());
  if (!Number.isInteger(id)) throw new ToolError(`For input string: "${nodeText}"`);
  if (id < 0) throw new ToolError('node.id was negative in configuration file. Is this a valid controller configuration file?');
  if (!(props.get('process.roles') ?? '').includes('controller')) throw new ToolError("process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration file?");
  const metadataDir = props.get('metadata.log.dir') ?? props.get('log.dirs')?.trim().split(',')[0];
  if (metadataDir === undefined) throw new ToolError('Neither metadata.log.dir nor log.dirs were found. Is this a valid controller configuration file?');
  let meta;
  try {
    meta = readMetaProperties(nodeFs, metadataDir);
  } catch {
    meta = undefined;
  }
  if (!meta) throw new ToolError(`Unable to read meta.properties from ${metadataDir}`);
  if (!meta.directoryId) throw new ToolError(`No directory id found in ${metadataDir}`);
  const listeners = listenerMap(props.get('listeners'));
  for (const [k, v] of listenerMap(props.get('advertised.listeners'))) listeners.set(k, v);
  const names = props.get('controller.listener.names');
  if (names === undefined) throw new ToolError('controller.listener.names was not found. Is this a valid controller configuration file?');
  const endpoints: ControllerToAdd['endpoints'] = [];
  for (const raw of names.split(',')) {
    const name = raw.trim().toUpperCase();
    const e = listeners.get(name);
    if (!e) throw new ToolError(`Cannot find information about controller listener name: ${name}`);
    if (!endpoints.some((x) => x.name === e.name)) endpoints.push({ name: e.name, host: e.host === '' ? 'localhost' : e.host, port: e.port });
  }
  return { id, directoryId: meta.directoryId, endpoints };
}

function partitionOf(res: DescribeQuorumResponse) {
  if (res.errorCode !== ErrorCode.NONE) throw kafkaError(res.errorCode, res.errorMessage);
  const p = res.topics[0]?.partitions[0];
  if (!p) throw new ToolError('DescribeQuorum answered without the metadata partition');
  if (p.errorCode !== ErrorCode.NONE) throw kafkaError(p.errorCode, p.errorMessage);
  const leader = p.currentVoters.find((v) => v.replicaId === p.leaderId);
  if (!leader) throw new ToolError(`the quorum's leader ${p.leaderId} is not among its voters`);
  return { p, leader };
}

export function formatQuorumStatus(clusterId: string | null, res: DescribeQuorumResponse): string[] {
  const { p, leader } = partitionOf(res);
  const furthest = p.currentVoters.reduce((a, b) => (b.logEndOffset < a.logEndOffset ? b : a));
  const lagTime = leader === furthest ? 0n : leader.lastCaughtUpTimestamp >= 0n && furthest.lastCaughtUpTimestamp >= 0n ? leader.lastCaughtUpTimestamp - furthest.lastCaughtUpTimestamp : -1n;
  const nodes = new Map(res.nodes.map((n) => [n.nodeId, n.listeners]));
  const replicas = (rs: DescribeQuorumResponseReplicaState[]) =>
    `[${rs
      .map((r) => {
        const eps = nodes.get(r.replicaId) ?? [];
        const dir = r.replicaDirectoryId === ZERO_UUID || r.replicaDirectoryId === '' ? 'null' : `"${r.replicaDirectoryId}"`;
        return `{"id": ${r.replicaId}, "directoryId": ${dir}${eps.length > 0 ? `, "endpoints": [${eps.map((e) => `"${e.name}://${e.host}:${e.port}"`).join(', ')}]` : ''}}`;
      })
      .join(', ')}]`;
  return [
    `ClusterId:              ${clusterId}`,
    `LeaderId:               ${p.leaderId}`,
    `LeaderEpoch:            ${p.leaderEpoch}`,
    `HighWatermark:          ${p.highWatermark}`,
    `MaxFollowerLag:         ${leader.logEndOffset - furthest.logEndOffset}`,
    `MaxFollowerLagTimeMs:   ${lagTime}`,
    `CurrentVoters:          ${replicas(p.currentVoters)}`,
    `CurrentObservers:       ${replicas(p.observers)}`,
  ];
}

/** Kafka's --replication table (ToolsUtils.prettyPrintTable: columns padded, each followed by a tab). */
export function formatQuorumReplication(res: DescribeQuorumResponse, humanReadable: boolean, nowMs: number): string[] {
  const { p, leader } = partitionOf(res);
  const time = (ts: bigint, desc: string): string => {
    if (ts < 0n) return '-1';
    if (!humanReadable) return String(ts);
    const t = Number(ts);
    if (!(t > 0 && t <= nowMs)) throw new ToolError(`Error while computing relative time, possible drift in system clock.\nCurrent timestamp is ${nowMs}, ${desc} timestamp is ${t}`);
    return `${nowMs - t} ms ago`;
  };
  const row = (r: DescribeQuorumResponseReplicaState, status: string): string[] => [
    String(r.replicaId),
    r.replicaDirectoryId === '' ? ZERO_UUID : r.replicaDirectoryId,
    String(r.logEndOffset),
    String(leader.logEndOffset - r.logEndOffset),
    time(r.lastFetchTimestamp, 'last fetch'),
    time(r.lastCaughtUpTimestamp, 'last caught up'),
    status,
  ];
  const headers = ['NodeId', 'DirectoryId', 'LogEndOffset', 'Lag', 'LastFetchTimestamp', 'LastCaughtUpTimestamp', 'Status'];
  const rows = [row(leader, 'Leader'), ...p.currentVoters.filter((v) => v.replicaId !== p.leaderId).map((v) => row(v, 'Follower')), ...p.observers.map((o) => row(o, 'Observer'))];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [headers, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]) + '\t').join(''));
}
