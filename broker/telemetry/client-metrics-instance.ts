/**
 * One client instance's telemetry state on this broker (Kafka's ClientMetricsInstance): who it is
 * (ClientMetricsInstanceMetadata's attributes), the subscription it was given, when it last asked
 * for it and last pushed, whether it said it is terminating, the last error it got, and the last
 * metrics it pushed.
 *
 * Invariants: the subscription fields are fixed at creation (a subscription change makes a new
 * instance that keeps the metadata); `lastPush.payload` is at most the manager's decompressed
 * bound.
 */
import { ErrorCode } from '../../protocol/errors';
import {
  CLIENT_ID,
  CLIENT_INSTANCE_ID,
  CLIENT_SOFTWARE_NAME,
  CLIENT_SOFTWARE_VERSION,
  CLIENT_SOURCE_ADDRESS,
  CLIENT_SOURCE_PORT,
} from '../../config/client-metrics-configs';

/** What the broker knows of a client instance, by Kafka's match selector names. */
export interface ClientInstanceMetadata {
  clientInstanceId: string;
  clientId: string | null;
  clientSoftwareName: string | null;
  clientSoftwareVersion: string | null;
  clientSourceAddress: string;
  clientSourcePort: number;
}

/** The last metrics a client instance pushed, as the broker keeps them. */
export interface ClientTelemetryPush {
  clientInstanceId: string;
  clientId: string | null;
  clientSoftwareName: string | null;
  clientSoftwareVersion: string | null;
  clientSourceAddress: string;
  clientSourcePort: number;
  subscriptionId: number;
  /** Milliseconds since epoch when the broker accepted it. */
  receivedAtMs: number;
  /** The compression type id the client used (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
  compressionType: number;
  terminating: boolean;
  /** The decompressed OTLP ExportMetricsServiceRequest bytes (krill does not decode them). */
  payload: Buffer;
}

/** ClientMetricsInstanceMetadata.isMatch: every pattern matches its attribute whole; no patterns match all. */
export function matchesClient(metadata: ClientInstanceMetadata, patterns: ReadonlyMap<string, RegExp>): boolean {
  const attributes: Record<string, string | null> = {
    [CLIENT_INSTANCE_ID]: metadata.clientInstanceId,
    [CLIENT_ID]: metadata.clientId,
    [CLIENT_SOFTWARE_NAME]: metadata.clientSoftwareName,
    [CLIENT_SOFTWARE_VERSION]: metadata.clientSoftwareVersion,
    [CLIENT_SOURCE_ADDRESS]: metadata.clientSourceAddress,
    [CLIENT_SOURCE_PORT]: String(metadata.clientSourcePort),
  };
  for (const [selector, re] of patterns) {
    const value = attributes[selector];
    if (value === null || value === undefined || !re.test(value)) return false;
  }
  return true;
}

export class ClientMetricsInstance {
  // Never: the first request is always due (Kafka's 0 against an epoch clock).
  private lastGetRequestMs = Number.NEGATIVE_INFINITY;
  private lastPushRequestMs = Number.NEGATIVE_INFINITY;
  terminating = false;
  lastKnownError: number = ErrorCode.NONE;
  lastPush: ClientTelemetryPush | null = null;
  /** When the manager forgets this instance unless it hears from it again. */
  expiresAtMs = 0;

  constructor(
    readonly metadata: ClientInstanceMetadata,
    readonly subscriptionId: number,
    /** The manager's subscription version this instance was evaluated at. */
    readonly subscriptionVersion: number,
    readonly metrics: readonly string[],
    readonly pushIntervalMs: number,
  ) {}

  /** A GetTelemetrySubscriptions is due once a push interval passed since the last get or push. */
  maybeUpdateGetRequestTimestamp(nowMs: number): boolean {
    if (nowMs - Math.max(this.lastGetRequestMs, this.lastPushRequestMs) >= this.pushIntervalMs) {
      this.lastGetRequestMs = nowMs;
      return true;
    }
    return false;
  }

  /**
   * A push is due right after a get (the client jitters its interval), else once a push interval
   * passed since the last push.
   */
  maybeUpdatePushRequestTimestamp(nowMs: number): boolean {
    const accept = this.lastGetRequestMs > this.lastPushRequestMs || nowMs - this.lastPushRequestMs >= this.pushIntervalMs;
    if (accept) this.lastPushRequestMs = nowMs;
    return accept;
  }
}
