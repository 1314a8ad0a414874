/**
 * The SocketServer's options from a KafkaConfig: frame and idle limits, the request-bytes budget and
 * request slots, the listen backlog, and the connection limits (broker-wide, per listener through
 * `listener.name.<l>.max.connections` / `.max.connection.creation.rate`, per address). Host names in
 * `max.connections.per.ip.overrides` are resolved once, at startup, as Kafka resolves them when it
 * reads the config; a name that does not resolve stops startup with the name in the error.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { KafkaConfig } from '../../config/kafka-config';
import { ConfigException } from '../../config/config-types';
import type { ListenerLimits } from './connection-quotas';
import type { SocketServerOptions } from './socket-server';

const INT_MAX = 0x7fffffff;

export async function socketServerOptions(config: KafkaConfig, listenerNames: readonly string[], interBrokerListenerName: string | null): Promise<SocketServerOptions> {
  const overrides = new Map<string, number>();
  for (const [host, count] of config.maxConnectionsPerIpOverrides()) {
    if (isIP(host)) {
      overrides.set(host, count);
      continue;
    }
    let addresses: { address: string }[];
    try {
      addresses = await lookup(host, { all: true });
    } catch (err) {
      throw new ConfigException(`max.connections.per.ip.overrides: cannot resolve host ${host}: ${(err as Error).message}`, 'max.connections.per.ip.overrides');
    }
    for (const a of addresses) overrides.set(a.address, count);
  }
  const listeners = new Map<string, ListenerLimits>();
  for (const name of listenerNames) {
    const max = config.listenerOverride(name, 'max.connections');
    const rate = config.listenerOverride(name, 'max.connection.creation.rate');
    listeners.set(name, {
      maxConnections: max === null ? INT_MAX : Number(max),
      maxConnectionCreationRate: rate === null ? INT_MAX : Number(rate),
    });
  }
  return {
    maxRequestBytes: config.getInt('socket.request.max.bytes'),
    idleTimeoutMs: config.getLong('connections.max.idle.ms'),
    queuedMaxRequestBytes: config.getLong('queued.max.request.bytes'),
    queuedMaxRequests: config.getInt('queued.max.requests'),
    listenBacklog: config.getInt('socket.listen.backlog.size'),
    quotas: {
      maxConnections: config.getInt('max.connections'),
      maxConnectionsPerIp: config.getInt('max.connections.per.ip'),
      maxConnectionsPerIpOverrides: overrides,
      maxConnectionCreationRate: config.getInt('max.connection.creation.rate'),
      listeners,
      interBrokerListenerName,
      rate: { windowMs: config.getInt('quota.window.size.seconds') * 1000, samples: config.getInt('quota.window.num') },
    },
  };
}
