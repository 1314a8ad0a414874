/**
 * The SocketServer's options from a KafkaConfig: frame and idle limits, the request-bytes budget and
 * request slots, the listen backlog, and the connection limits (broker-wide, per listener through
 * `listener.name.<l>.max.connections` / `.max.connection.creation.rate`, per address). Host names in
 * `max.connections.per.ip.overrides` are resolved once, at startup, as Kafka resolves them when it
 * reads the config; a name that does not resolve stops startup with the name in the error. SSL and
 * SASL_SSL listeners get their TLS here (broker/security/ssl): stores loaded and checked, and for an
 * inter-broker listener a handshake with itself, so a listener that cannot serve as declared stops
 * startup with the key in the error.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { KafkaConfig } from '../../config/kafka-config';
import { ConfigException } from '../../config/config-types';
import type { ListenerLimits } from './connection-quotas';
import type { SecureTransport, SocketServerOptions } from './socket-server';
import type { Logger } from '../../common/logger';
import { serverSslSettings } from '../security/ssl/ssl-settings';
import { SslTransport, validateInterBroker } from '../security/ssl/ssl-transport';

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
  const transports = new Map<string, (log: Logger) => SecureTransport>();
  const idleTimeoutMs = config.getLong('connections.max.idle.ms');
  for (const name of listenerNames) {
    const protocol = config.listenerSecurityProtocolMap().get(name);
    if (protocol === 'SSL' || protocol === 'SASL_SSL') {
      const ssl = serverSslSettings(config, name, protocol);
      if (name === interBrokerListenerName) await validateInterBroker(ssl);
      transports.set(name, (log) => {
        for (const w of ssl.warnings) log.warn(w, { listener: name });
        return new SslTransport(ssl, idleTimeoutMs, log.child('ssl'));
      });
    }
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
    transports,
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
