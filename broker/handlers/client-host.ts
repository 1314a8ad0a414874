/**
 * The client host of a group member as Kafka records and reports it (InetAddress.toString, e.g.
 * "/127.0.0.1"); IPv4-mapped IPv6 addresses are shown as the IPv4 address.
 */
import type { RequestContext } from '../network/request-context';

export function clientHost(ctx: RequestContext): string {
  const a = ctx.connection.remoteAddress;
  return `/${a.startsWith('::ffff:') ? a.slice(7) : a}`;
}
