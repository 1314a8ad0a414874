/**
 * The admin tools' link to a cluster: Kafka's protocol only, through krill's own client
 * (client/network-client.ts), so they work against any Kafka-compatible cluster. It connects to
 * the first reachable `--bootstrap-server`, learns the brokers from Metadata, and opens at most
 * one connection per broker on demand (partition leaders for ListOffsets, group coordinators).
 * Every request is bounded by the request timeout; close() closes every connection.
 *
 * Every connection is secured as `security` says (TLS, SASL: from --command-config, see
 * command-config.ts). A failure to reach any bootstrap server is a ToolError naming the servers
 * and the reason; a refused SASL authentication is an AuthenticationFailure carrying the broker's
 * message alone, as Kafka's tools print it.
 */
import { connect, metadata, type BrokerConnection, type ClientSecurity, type ConnectOptions } from '../../client/network-client';
import type { MetadataResponse } from '../../protocol/generated/metadata';
import { ErrorCode, errorName, KafkaError } from '../../protocol/errors';

/** A failure the tool reports as one line on stderr with exit code 1 (no stack). */
export class ToolError extends Error {}

/** Bad usage (exit code 2): options that do not go together, a value that cannot be parsed. */
export class UsageError extends ToolError {}

/** The cluster refused our SASL credentials (Kafka's SaslAuthenticationException). */
export class AuthenticationFailure extends ToolError {}

const AUTHENTICATION_ERRORS: ReadonlySet<number> = new Set([ErrorCode.SASL_AUTHENTICATION_FAILED, ErrorCode.UNSUPPORTED_SASL_MECHANISM, ErrorCode.ILLEGAL_SASL_STATE]);

export interface AdminConnectionOptions {
  bootstrapServers: string[];
  clientId?: string;
  requestTimeoutMs?: number;
  security?: ClientSecurity;
}

export function parseBootstrapServers(arg: string): string[] {
  const out = arg.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const s of out) if (!/^[^\s:]+:\d+$/.test(s) && !/^\[[0-9a-fA-F:]+\]:\d+$/.test(s)) throw new ToolError(`invalid --bootstrap-server ${JSON.stringify(s)} (expected HOST:PORT[,HOST:PORT...])`);
  if (out.length === 0) throw new ToolError('--bootstrap-server needs at least one HOST:PORT');
  return out;
}

function splitHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(s.slice(i + 1)) };
}

function connectOptions(opts: AdminConnectionOptions): ConnectOptions {
  const timeoutMs = opts.requestTimeoutMs ?? 30_000;
  return { clientId: opts.clientId ?? 'krill-admin', timeoutMs, requestTimeoutMs: timeoutMs, ...opts.security };
}

export class AdminConnection {
  private readonly nodes = new Map<number, Promise<BrokerConnection>>();
  private brokers = new Map<number, { host: string; port: number }>();

  private constructor(
    /** The bootstrap connection: any request that any broker can answer goes here. */
    readonly any: BrokerConnection,
    private readonly opts: AdminConnectionOptions,
  ) {}

  static async open(opts: AdminConnectionOptions): Promise<AdminConnection> {
    const reasons: string[] = [];
    for (const s of opts.bootstrapServers) {
      const { host, port } = splitHostPort(s);
      try {
        const conn = await connect(host, port, connectOptions(opts));
        const admin = new AdminConnection(conn, opts);
        await admin.metadata([]);
        return admin;
      } catch (err) {
        if (err instanceof KafkaError && AUTHENTICATION_ERRORS.has(err.code)) throw new AuthenticationFailure(err.message);
        reasons.push(`${s}: ${(err as Error).message}`);
      }
    }
    throw new ToolError(`cannot reach any bootstrap server (${reasons.join('; ')})`);
  }

  /** Metadata for these topics (null: all); also refreshes the broker list. */
  async metadata(topics: string[] | null): Promise<MetadataResponse> {
    const md = await metadata(this.any, topics, { allowAutoTopicCreation: false });
    this.brokers = new Map(md.brokers.map((b) => [b.nodeId, { host: b.host, port: b.port }]));
    return md;
  }

  get brokerIds(): number[] {
    return [...this.brokers.keys()].sort((a, b) => a - b);
  }

  /** A connection to broker `nodeId` (opened once). */
  node(nodeId: number): Promise<BrokerConnection> {
    let c = this.nodes.get(nodeId);
    if (!c) {
      const b = this.brokers.get(nodeId);
      if (!b) return Promise.reject(new ToolError(`broker ${nodeId} is not in the cluster metadata`));
      c = connect(b.host, b.port, connectOptions(this.opts));
      c.catch(() => this.nodes.delete(nodeId));
      this.nodes.set(nodeId, c);
    }
    return c;
  }

  /** The node id of a connection this admin opened (undefined for the bootstrap one unless it is known). */
  nodeIdOf(conn: BrokerConnection): number | undefined {
    for (const [id, b] of this.brokers) if (b.host === conn.host && b.port === conn.port) return id;
    return undefined;
  }

  /** The coordinator of a consumer group (FindCoordinator key type 0). */
  async groupCoordinator(group: string): Promise<BrokerConnection> {
    const v = this.any.versionFor('FindCoordinator');
    const res = await this.any.send('FindCoordinator', v, v >= 4 ? { keyType: 0, coordinatorKeys: [group] } : { key: group, keyType: 0 });
    const c = v >= 4 ? res.coordinators[0] : res;
    if (!c || c.errorCode !== ErrorCode.NONE) throw new ToolError(`cannot find the coordinator of group ${group}: ${errorName(c?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR)}`);
    if (!this.brokers.has(c.nodeId)) this.brokers.set(c.nodeId, { host: c.host, port: c.port });
    return this.node(c.nodeId);
  }

  async close(): Promise<void> {
    const all = [this.any.close(), ...[...this.nodes.values()].map((p) => p.then((c) => c.close(), () => undefined))];
    await Promise.allSettled(all);
  }
}
