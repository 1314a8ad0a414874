/**
 * Who sent a telemetry request, as the ClientMetricsManager matches subscriptions against it:
 * client id, client software (ApiVersions v3+), source address (Java's getHostAddress form: an
 * IPv4-mapped IPv6 address as IPv4) and port. The first telemetry request of a connection also
 * registers the manager's disconnect cleanup on it (once per connection).
 */
import type { RequestContext } from '../network/request-context';
import { clientInformation } from '../network/client-information';
import type { ClientMetricsManager, TelemetryRequester } from './client-metrics-manager';

const WATCHED_ATTRIBUTE = 'telemetry.disconnect.watched';

export function telemetryRequester(manager: ClientMetricsManager, ctx: RequestContext): TelemetryRequester {
  const conn = ctx.connection;
  if (conn.onClose && !conn.attributes.has(WATCHED_ATTRIBUTE)) {
    conn.attributes.set(WATCHED_ATTRIBUTE, true);
    conn.onClose(() => manager.connectionClosed(conn.id));
  }
  const info = clientInformation(conn);
  const a = conn.remoteAddress;
  return {
    clientId: ctx.clientId,
    connectionId: conn.id,
    softwareName: info?.softwareName ?? null,
    softwareVersion: info?.softwareVersion ?? null,
    address: a.startsWith('::ffff:') ? a.slice(7) : a,
    port: conn.remotePort,
  };
}
