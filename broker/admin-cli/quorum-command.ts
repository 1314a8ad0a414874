/**
 * `krill quorum`: kafka-metadata-quorum.sh --describe --status over the Kafka protocol.
 *
 *   krill quorum --bootstrap-server H:P --describe --status
 *
 * Sends DescribeQuorum (API 55) for __cluster_metadata-0 and prints MetadataQuorumCommand's block:
 * ClusterId, LeaderId, LeaderEpoch, HighWatermark, MaxFollowerLag (leader LEO minus the furthest
 * behind voter's), MaxFollowerLagTimeMs (difference of their last caught-up times; 0 when the
 * leader is the furthest behind, -1 when unknown), CurrentVoters and CurrentObservers as
 * [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://host:port"]}, ...]. A cluster that
 * does not advertise DescribeQuorum (krill's brokers do not serve it) gets a clear error, exit 1.
 * --replication is not implemented and says so.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { UnsupportedVersionError } from '../../client/network-client';
import type { DescribeQuorumResponse, DescribeQuorumResponseReplicaState } from '../../protocol/generated/describe-quorum';
import { ToolError } from './admin-connection';
import { openAdmin } from './command-config';
import { parseToolArgs } from './tool-args';
import type { ToolOutput } from './tool-output';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

const OPTIONS = {
  '--bootstrap-server': {},
  '--command-config': {},
  '--describe': { flag: true },
  '--status': { flag: true },
  '--replication': { flag: true },
  '--help': { flag: true },
} as const;

export const QUORUM_USAGE = `usage: krill quorum --bootstrap-server HOST:PORT [--command-config FILE] --describe --status
as kafka-metadata-quorum.sh (needs a cluster that answers DescribeQuorum, API 55).`;

export async function quorumCommand(argv: readonly string[], out: ToolOutput): Promise<number> {
  const args = parseToolArgs(argv, OPTIONS);
  if (args.has('--help')) {
    out.stdout(QUORUM_USAGE);
    return 0;
  }
  if (!args.has('--describe')) throw new ToolError(`Command must include exactly one action: --describe\n${QUORUM_USAGE}`);
  if (args.has('--replication')) throw new ToolError('--describe --replication is not implemented by krill quorum; use --status');
  if (!args.has('--status')) throw new ToolError('One of --status or --replication must be specified with --describe');
  const admin = await openAdmin(args);
  try {
    let version: number;
    try {
      version = admin.any.versionFor('DescribeQuorum');
    } catch (err) {
      if (err instanceof UnsupportedVersionError) throw new ToolError(`the cluster at ${admin.any.host}:${admin.any.port} does not support DescribeQuorum (API 55), so its metadata quorum cannot be described`);
      throw err;
    }
    const clusterId = (await admin.metadata([])).clusterId;
    const res = await admin.any.send('DescribeQuorum', version, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    for (const line of formatQuorumStatus(clusterId, res)) out.stdout(line);
    return 0;
  } finally {
    await admin.close();
  }
}

export function formatQuorumStatus(clusterId: string | null, res: DescribeQuorumResponse): string[] {
  if (res.errorCode !== ErrorCode.NONE) throw new ToolError(res.errorMessage ?? errorName(res.errorCode));
  const p = res.topics[0]?.partitions[0];
  if (!p) throw new ToolError('DescribeQuorum answered without the metadata partition');
  if (p.errorCode !== ErrorCode.NONE) throw new ToolError(p.errorMessage ?? errorName(p.errorCode));
  const leader = p.currentVoters.find((v) => v.replicaId === p.leaderId);
  if (!leader) throw new ToolError(`the quorum's leader ${p.leaderId} is not among its voters`);
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
