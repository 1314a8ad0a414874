/**
 * Listener strings as Kafka reads them: `listeners`, `advertised.listeners` and
 * `listener.security.protocol.map` (SocketServerConfigs.listenerListToEndPoints, Csv.parseCsvMap,
 * ListenerName.normalised). Listener names are upper-cased; an empty host means "bind every
 * interface" and is kept as null; `[::1]` style brackets around IPv6 hosts are dropped.
 */
import { ConfigException } from './config-types';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export interface Endpoint {
  /** Upper-cased listener name, e.g. PLAINTEXT or CLIENT. */
  listenerName: string;
  /** null for the wildcard (empty host in the config). */
  host: string | null;
  /** 0 asks the OS for a free port. */
  port: number;
  securityProtocol: SecurityProtocol;
}

// Kafka's URI_PARSE_REGEXP, anchored at both ends as Matcher.matches() is.
const URI = /^(.*):\/\/\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$/;

/** ListenerName.normalised. */
export function normaliseListenerName(name: string): string {
  return name.toUpperCase();
}

/** Csv.parseCsvList: split on commas with surrounding blanks, dropping empty entries. */
export function parseCsvList(s: string | null): string[] {
  if (s === null || s.length === 0) return [];
  return s.split(/\s*,\s*/).filter((v) => v.length > 0);
}

/** Parses a security protocol name, case-insensitively, as KafkaConfig.getSecurityProtocol does. */
export function parseSecurityProtocol(name: string, configName: string): SecurityProtocol {
  const up = name.toUpperCase();
  if ((SECURITY_PROTOCOLS as readonly string[]).includes(up)) return up as SecurityProtocol;
  throw new ConfigException(`Invalid security protocol \`${name}\` defined in ${configName}`, configName);
}

/** Parses `NAME:PROTOCOL,...` (listener.security.protocol.map). The last colon separates key and value. */
export function parseSecurityProtocolMap(value: string | null, configName = 'listener.security.protocol.map'): Map<string, SecurityProtocol> {
  const map = new Map<string, SecurityProtocol>();
  if (value === null || value.length === 0) return map;
  for (const entry of value.split(/\s*,\s*/)) {
    const colon = entry.lastIndexOf(':');
    if (colon < 0) {
      throw new ConfigException(`Error parsing configuration property '${configName}': invalid entry '${entry}', expected NAME:PROTOCOL`, configName);
    }
    const name = normaliseListenerName(entry.slice(0, colon).trim());
    map.set(name, parseSecurityProtocol(entry.slice(colon + 1).trim(), configName));
  }
  return map;
}

const isIpv4 = (h: string | null): boolean => h !== null && /^\d{1,3}(\.\d{1,3}){3}$/.test(h);
const isIpv6 = (h: string | null): boolean => h !== null && h.includes(':');

/**
 * Parses a listener list such as `PLAINTEXT://127.0.0.1:9092,SSL://:9093`. Names must be
 * distinct; with requireDistinctPorts, ports must be too (port 0 excepted, and one IPv4 plus one
 * IPv6 listener may share a port), as Kafka requires for `listeners` but not for
 * `advertised.listeners`.
 */
export function parseListeners(
  value: string | null,
  protocolMap: ReadonlyMap<string, SecurityProtocol>,
  configName: string,
  requireDistinctPorts = true,
): Endpoint[] {
  const endpoints: Endpoint[] = [];
  for (const entry of parseCsvList(value)) {
    const m = URI.exec(entry);
    if (!m) throw new ConfigException(`Invalid value ${value} for configuration ${configName}: Unable to parse ${entry} to a broker endpoint`, configName);
    const listenerName = normaliseListenerName(m[1]);
    const port = Number(m[3]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new ConfigException(`Invalid value ${value} for configuration ${configName}: port ${m[3]} of ${entry} is out of range`, configName);
    }
    const securityProtocol = protocolMap.get(listenerName);
    if (securityProtocol === undefined) {
      throw new ConfigException(`No security protocol defined for listener ${listenerName}`, configName);
    }
    endpoints.push({ listenerName, host: m[2] === '' ? null : m[2], port, securityProtocol });
  }

  const names = new Set(endpoints.map((e) => e.listenerName));
  if (names.size !== endpoints.length) {
    throw new ConfigException(`Each listener must have a different name, listeners: ${value}`, configName);
  }
  if (requireDistinctPorts) {
    const byPort = new Map<number, Endpoint[]>();
    for (const e of endpoints) if (e.port !== 0) byPort.set(e.port, [...(byPort.get(e.port) ?? []), e]);
    for (const [port, eps] of byPort) {
      if (eps.length === 1) continue;
      const ipv4AndIpv6 =
        eps.length === 2 && ((isIpv4(eps[0].host) && isIpv6(eps[1].host)) || (isIpv6(eps[0].host) && isIpv4(eps[1].host)));
      if (!ipv4AndIpv6) {
        throw new ConfigException(
          `Each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: ${value}, port: ${port}`,
          configName,
        );
      }
    }
  }
  return endpoints;
}

/**
 * The hosts Kafka replaces by the machine's name when advertising: only an empty one. (0.0.0.0 is
 * refused in advertised listeners altogether, so `listeners=PLAINTEXT://0.0.0.0:9092` needs an
 * explicit advertised.listeners, in Kafka and in krill.)
 */
export function isWildcardHost(host: string | null): boolean {
  return host === null || host.trim() === '';
}

/**
 * What a started broker publishes in Metadata (ListenerInfo.withWildcardHostnamesResolved and
 * withEphemeralPortsCorrected): a wildcard host becomes `wildcardHost` (Kafka uses the canonical
 * host name; a dev broker usually wants 127.0.0.1 or localhost), and port 0 becomes the port the
 * listener actually bound.
 */
export function resolveAdvertisedEndpoints(
  endpoints: readonly Endpoint[],
  boundPort: (listenerName: string) => number | undefined,
  wildcardHost: string,
): Endpoint[] {
  return endpoints.map((e) => ({
    ...e,
    host: isWildcardHost(e.host) ? wildcardHost : e.host,
    port: e.port === 0 ? boundPort(e.listenerName) ?? 0 : e.port,
  }));
}
