/**
 * The client software a connection declared in ApiVersions v3+ (Kafka's ClientInformation, kept
 * per channel): name and version, or null until a valid ApiVersions v3+ arrived. Stored in the
 * connection's attributes; client telemetry (KIP-714) matches subscriptions against it.
 */
import type { ConnectionInfo } from './connection';

export interface ClientInformation {
  softwareName: string;
  softwareVersion: string;
}

const CLIENT_INFORMATION_ATTRIBUTE = 'client.information';

export function setClientInformation(conn: ConnectionInfo, info: ClientInformation): void {
  conn.attributes.set(CLIENT_INFORMATION_ATTRIBUTE, info);
}

export function clientInformation(conn: ConnectionInfo): ClientInformation | null {
  return (conn.attributes.get(CLIENT_INFORMATION_ATTRIBUTE) as ClientInformation | undefined) ?? null;
}
