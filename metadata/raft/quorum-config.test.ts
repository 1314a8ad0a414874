/** Tests of controller.quorum.voters parsing (Kafka's messages) and the quorum timeouts. */
import { ConfigException } from '../../config/config-types';
import { bootstrapServerId, clusterIdFromVoters, makeQuorumConfig, parseBootstrapServers, parseVoterConnections, quorumConfigFrom, votersOf } from './quorum-config';
import { isUuid } from '../../protocol/primitives/uuid';

describe('controller.quorum.voters', () => {
  it('parses id@host:port entries, IPv6 included', () => {
    const v = parseVoterConnections(['1@localhost:9093', ' 2@10.0.0.2:9094', '3@[::1]:9095']);
    expect([...v.values()]).toEqual([
      { id: 1, host: 'localhost', port: 9093 },
      { id: 2, host: '10.0.0.2', port: 9094 },
      { id: 3, host: '::1', port: 9095 },
    ]);
  });

  it.each([
    ['1localhost:9093', 'Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.'],
    ['a@localhost:9093', 'Failed to parse voter ID as an integer from a'],
    ['1@:9093', 'Failed to parse host name from entry 1@:9093 for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.'],
    ['1@localhost', 'Failed to parse host name from entry 1@localhost for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.'],
    ['1@0.0.0.0:9093', 'Host string (0.0.0.0) is not routeable'],
  ])('rejects %s', (entry, message) => {
    expect(() => parseVoterConnections([entry])).toThrow(ConfigException);
    expect(() => parseVoterConnections([entry])).toThrow(message);
  });

  it('allows 0.0.0.0 when routable addresses are not required, and rejects duplicate ids', () => {
    expect(parseVoterConnections(['1@0.0.0.0:9093'], false).get(1)?.host).toBe('0.0.0.0');
    expect(() => parseVoterConnections(['1@a:1', '1@b:2'])).toThrow(/Duplicate voter id 1/);
  });

  it('reads the quorum configs from a KafkaConfig-like source', () => {
    const ints: Record<string, number> = {
      'controller.quorum.election.timeout.ms': 1000,
      'controller.quorum.fetch.timeout.ms': 2000,
      'controller.quorum.election.backoff.max.ms': 1000,
      'controller.quorum.request.timeout.ms': 2000,
      'controller.quorum.retry.backoff.ms': 20,
    };
    const c = quorumConfigFrom({ getInt: (n) => ints[n], getList: (n) => (n === 'controller.quorum.voters' ? ['1@a:1', '2@b:2', '3@c:3'] : null) });
    expect([...c.voters.keys()]).toEqual([1, 2, 3]);
    expect(c.fetchTimeoutMs).toBe(2000);
    expect(c.fetchMaxWaitMs).toBe(500);
    expect(c.bootstrapServers).toEqual([]);
  });

  it('reads controller.quorum.bootstrap.servers (KIP-853), which stands in for an empty voter set', () => {
    const c = makeQuorumConfig({ voters: new Map(), bootstrapServers: parseBootstrapServers(['a:1', ' [::1]:2 ']) });
    expect(c.bootstrapServers).toEqual([
      { host: 'a', port: 1 },
      { host: '::1', port: 2 },
    ]);
    expect(bootstrapServerId(0)).toBe(-2);
    expect(() => parseBootstrapServers(['nohost'])).toThrow(/controller.quorum.bootstrap.servers/);
  });

  it('rejects a fetch timeout at or below the long-poll wait, and an empty voter set', () => {
    expect(() => makeQuorumConfig({ voters: votersOf([1]), fetchTimeoutMs: 500 })).toThrow(/controller.quorum.fetch.timeout.ms/);
    expect(() => makeQuorumConfig({ voters: new Map() })).toThrow(/controller.quorum.voters/);
    expect(() => makeQuorumConfig({ voters: votersOf([1]), electionTimeoutMs: 0 })).toThrow(/controller.quorum.election.timeout.ms/);
  });
});

test('clusterIdFromVoters: one id per voter set, whatever the order, other for other endpoints', () => {
  const a = parseVoterConnections(['1@h1:9093', '2@h2:9093', '3@h3:9093'], false);
  const b = parseVoterConnections(['3@H3:9093', '1@h1:9093', '2@h2:9093'], false);
  const id = clusterIdFromVoters(a);
  expect(isUuid(id)).toBe(true);
  expect(id.startsWith('-')).toBe(false);
  expect(clusterIdFromVoters(b)).toBe(id);
  expect(clusterIdFromVoters(parseVoterConnections(['1@h1:9093', '2@h2:9093', '3@h3:9094'], false))).not.toBe(id);
  expect(clusterIdFromVoters(parseVoterConnections(['1@h1:9093', '2@h2:9093', '4@h3:9093'], false))).not.toBe(id);
});
