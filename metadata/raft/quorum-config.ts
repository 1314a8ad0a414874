/**
 * The controller quorum's configuration (Kafka's QuorumConfig): the static voter set parsed from
 * `controller.quorum.voters` (`{id}@{host}:{port}` entries, with Kafka's validation messages), the
 * `controller.quorum.bootstrap.servers` of a dynamic quorum (KIP-853; one of the two is required) and
 * the timeouts the consensus core runs on. Invariants: voter ids are unique non-negative ints;
 * every timeout is a positive number of ms; `controller.quorum.fetch.timeout.ms` exceeds the leader's
 * fetch long-poll wait (FETCH_MAX_WAIT_MS), or healthy followers would time out between fetches.
 */
import { createHash } from 'node:crypto';
import { ConfigException } from '../../config/config-types';
import { METADATA_TOPIC_ID, ZERO_UUID, uuidFromBuffer } from '../../protocol/primitives/uuid';

export const QUORUM_VOTERS_CONFIG = 'controller.quorum.voters';
export const QUORUM_BOOTSTRAP_SERVERS_CONFIG = 'controller.quorum.bootstrap.servers';
export const QUORUM_ELECTION_TIMEOUT_MS_CONFIG = 'controller.quorum.election.timeout.ms';
export const QUORUM_FETCH_TIMEOUT_MS_CONFIG = 'controller.quorum.fetch.timeout.ms';
export const QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG = 'controller.quorum.election.backoff.max.ms';
export const QUORUM_REQUEST_TIMEOUT_MS_CONFIG = 'controller.quorum.request.timeout.ms';
export const QUORUM_RETRY_BACKOFF_MS_CONFIG = 'controller.quorum.retry.backoff.ms';

export const DEFAULT_QUORUM_ELECTION_TIMEOUT_MS = 1_000;
export const DEFAULT_QUORUM_FETCH_TIMEOUT_MS = 2_000;
export const DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS = 1_000;
export const DEFAULT_QUORUM_REQUEST_TIMEOUT_MS = 2_000;
export const DEFAULT_QUORUM_RETRY_BACKOFF_MS = 20;
/** How long the leader parks a Fetch that has nothing new (Kafka's KafkaRaftClient.FETCH_MAX_WAIT_MS). */
export const FETCH_MAX_WAIT_MS = 500;

export interface VoterEndpoint {
  id: number;
  host: string;
  port: number;
}

export interface QuorumConfig {
  /** By id, in the order of the config. */
  voters: ReadonlyMap<number, VoterEndpoint>;
  electionTimeoutMs: number;
  fetchTimeoutMs: number;
  electionBackoffMaxMs: number;
  requestTimeoutMs: number;
  retryBackoffMs: number;
  /** The leader's long-poll wait for a Fetch with nothing new; FETCH_MAX_WAIT_MS unless a test shortens it. */
  fetchMaxWaitMs: number;
  /**
   * `controller.quorum.bootstrap.servers` (KIP-853): where an observer (or a voter that knows no
   * voter set yet) looks for the leader. The node addresses entry i as replica id `bootstrapServerId(i)`.
   */
  bootstrapServers: readonly { host: string; port: number }[];
}

/** The (negative) replica id under which the node addresses bootstrap server `index`. */
export function bootstrapServerId(index: number): number {
  return -2 - index;
}

/** Parses `controller.quorum.bootstrap.servers` entries `host:port`. */
export function parseBootstrapServers(entries: readonly string[]): { host: string; port: number }[] {
  const out: { host: string; port: number }[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = HOST_PORT.exec(entry);
    if (!m || m[1] === '' || Number(m[2]) > 65535) {
      throw new ConfigException(`Invalid url in ${QUORUM_BOOTSTRAP_SERVERS_CONFIG}: ${entry}`, QUORUM_BOOTSTRAP_SERVERS_CONFIG);
    }
    out.push({ host: m[1], port: Number(m[2]) });
  }
  return out;
}

const NON_ROUTABLE_HOST = '0.0.0.0';
const FORM = 'Each entry should be in the form `{id}@{host}:{port}`.';
// Kafka's Utils.getHost/getPort pattern: optional scheme, optional [ipv6], then :port.
const HOST_PORT = /^(?:[a-zA-Z0-9_-]*:\/\/)?\[?([0-9a-zA-Z\-._%:]+)\]?:([0-9]+)$/;

function parseVoterId(s: string): number {
  const t = s.trim();
  if (!/^[+-]?\d+$/.test(t) || Number(t) > 0x7fffffff || Number(t) < -0x80000000) {
    throw new ConfigException(`Failed to parse voter ID as an integer from ${s}`, QUORUM_VOTERS_CONFIG);
  }
  return Number(t);
}

/**
 * Parses `controller.quorum.voters` entries (already split on commas) as Kafka's
 * QuorumConfig.parseVoterConnections does; `requireRoutableAddresses` rejects 0.0.0.0.
 */
export function parseVoterConnections(entries: readonly string[], requireRoutableAddresses = true): Map<number, VoterEndpoint> {
  const voters = new Map<number, VoterEndpoint>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const idAndAddress = entry.split('@');
    if (idAndAddress.length !== 2) {
      throw new ConfigException(`Invalid configuration value for ${QUORUM_VOTERS_CONFIG}. ${FORM}`, QUORUM_VOTERS_CONFIG);
    }
    const id = parseVoterId(idAndAddress[0]);
    const m = HOST_PORT.exec(idAndAddress[1]);
    if (!m || m[1] === '') {
      throw new ConfigException(`Failed to parse host name from entry ${entry} for the configuration ${QUORUM_VOTERS_CONFIG}. ${FORM}`, QUORUM_VOTERS_CONFIG);
    }
    const port = Number(m[2]);
    if (!Number.isInteger(port) || port > 65535) {
      throw new ConfigException(`Failed to parse host port from entry ${entry} for the configuration ${QUORUM_VOTERS_CONFIG}. ${FORM}`, QUORUM_VOTERS_CONFIG);
    }
    if (requireRoutableAddresses && m[1] === NON_ROUTABLE_HOST) {
      throw new ConfigException(`Host string (${m[1]}) is not routeable`, QUORUM_VOTERS_CONFIG);
    }
    if (id < 0) throw new ConfigException(`Invalid voter id ${id} in ${QUORUM_VOTERS_CONFIG}: ids are non-negative`, QUORUM_VOTERS_CONFIG);
    if (voters.has(id)) throw new ConfigException(`Duplicate voter id ${id} in ${QUORUM_VOTERS_CONFIG}`, QUORUM_VOTERS_CONFIG);
    voters.set(id, { id, host: m[1], port });
  }
  return voters;
}

/** What `quorumConfigFrom` reads: KafkaConfig satisfies it. */
export interface QuorumConfigSource {
  getInt(name: string): number;
  getList(name: string): string[] | null;
}

export function quorumConfigFrom(config: QuorumConfigSource): QuorumConfig {
  return makeQuorumConfig({
    voters: parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? []),
    bootstrapServers: parseBootstrapServers(config.getList(QUORUM_BOOTSTRAP_SERVERS_CONFIG) ?? []),
    electionTimeoutMs: config.getInt(QUORUM_ELECTION_TIMEOUT_MS_CONFIG),
    fetchTimeoutMs: config.getInt(QUORUM_FETCH_TIMEOUT_MS_CONFIG),
    electionBackoffMaxMs: config.getInt(QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG),
    requestTimeoutMs: config.getInt(QUORUM_REQUEST_TIMEOUT_MS_CONFIG),
    retryBackoffMs: config.getInt(QUORUM_RETRY_BACKOFF_MS_CONFIG),
  });
}

/** A validated QuorumConfig from parts (defaults for what is left out). */
export function makeQuorumConfig(p: Partial<QuorumConfig> & { voters: ReadonlyMap<number, VoterEndpoint> }): QuorumConfig {
  const c: QuorumConfig = {
    voters: p.voters,
    electionTimeoutMs: p.electionTimeoutMs ?? DEFAULT_QUORUM_ELECTION_TIMEOUT_MS,
    fetchTimeoutMs: p.fetchTimeoutMs ?? DEFAULT_QUORUM_FETCH_TIMEOUT_MS,
    electionBackoffMaxMs: p.electionBackoffMaxMs ?? DEFAULT_QUORUM_ELECTION_BACKOFF_MAX_MS,
    requestTimeoutMs: p.requestTimeoutMs ?? DEFAULT_QUORUM_REQUEST_TIMEOUT_MS,
    retryBackoffMs: p.retryBackoffMs ?? DEFAULT_QUORUM_RETRY_BACKOFF_MS,
    fetchMaxWaitMs: p.fetchMaxWaitMs ?? FETCH_MAX_WAIT_MS,
    bootstrapServers: p.bootstrapServers ?? [],
  };
  const positive: [string, number][] = [
    [QUORUM_ELECTION_TIMEOUT_MS_CONFIG, c.electionTimeoutMs],
    [QUORUM_FETCH_TIMEOUT_MS_CONFIG, c.fetchTimeoutMs],
    [QUORUM_ELECTION_BACKOFF_MAX_MS_CONFIG, c.electionBackoffMaxMs],
    [QUORUM_REQUEST_TIMEOUT_MS_CONFIG, c.requestTimeoutMs],
  ];
  for (const [name, v] of positive) {
    if (!Number.isInteger(v) || v <= 0) throw ConfigException.invalid(name, v, 'must be a positive number of ms');
  }
  if (c.fetchMaxWaitMs >= c.fetchTimeoutMs) {
    throw ConfigException.invalid(QUORUM_FETCH_TIMEOUT_MS_CONFIG, c.fetchTimeoutMs, `must exceed the fetch long-poll wait (${c.fetchMaxWaitMs} ms)`);
  }
  if (c.voters.size === 0 && c.bootstrapServers.length === 0) {
    throw ConfigException.invalid(QUORUM_VOTERS_CONFIG, '', `a static voter set needs at least one voter (or, for a dynamic quorum, ${QUORUM_BOOTSTRAP_SERVERS_CONFIG})`);
  }
  return c;
}

/** The static voter set given as ids only (tests, the simulation): endpoints are placeholders. */
export function votersOf(ids: readonly number[]): Map<number, VoterEndpoint> {
  return new Map(ids.map((id) => [id, { id, host: 'localhost', port: 9093 + id }]));
}

/**
 * The cluster id of a static quorum whose controllers start on unformatted directories: derived from
 * the voter set (ids with their hosts and ports, in id order), so every node given the same
 * `controller.quorum.voters` computes the same id without a `krill storage format` step, and two
 * quorums on other machines or ports get different ones. A version-4-shaped UUID that Kafka accepts
 * (never zero, never METADATA_TOPIC_ID, never printing with a leading '-').
 */
export function clusterIdFromVoters(voters: ReadonlyMap<number, VoterEndpoint>): string {
  const line = [...voters].sort((a, b) => a[0] - b[0]).map(([id, e]) => `${id}@${e.host.toLowerCase()}:${e.port}`).join(',');
  for (let salt = 0; ; salt++) {
    const b = createHash('sha256').update(`krill-kraft-cluster:${salt}:${line}`).digest().subarray(0, 16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const s = uuidFromBuffer(b);
    if (!s.startsWith('-') && s !== ZERO_UUID && s !== METADATA_TOPIC_ID) return s;
  }
}
