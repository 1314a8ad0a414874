/**
 * How the transaction coordinator reaches partition leaders with WriteTxnMarkers: one reconnecting
 * NodeChannel per destination broker (client/broker-channels), on the inter-broker listener's
 * endpoint as the cluster metadata advertises it (this broker's own endpoint included: markers for
 * local partitions take the same protocol path). The version is negotiated with ApiVersions on
 * connect. A broker without an endpoint, or a closed transport, is a ConnectionError.
 */
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/generated/write-txn-markers';
import { BrokerChannels } from '../../client/broker-channels';
import { ConnectionError, type ClientSecurity } from '../../client/network-client';
import type { MetadataCache } from '../../metadata/metadata-cache';
import type { MarkerTransport } from './transaction-marker-channel-manager';

export interface NetworkMarkerTransportOptions {
  nodeId: number;
  metadata: MetadataCache;
  /** inter.broker.listener.name: the endpoint name looked up in each broker's registration. */
  listenerName: string;
  requestTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, when it is secured. */
  security?: ClientSecurity;
}

export class NetworkMarkerTransport implements MarkerTransport {
  private readonly channels: BrokerChannels;
  private closed = false;

  constructor(private readonly opts: NetworkMarkerTransportOptions) {
    this.channels = new BrokerChannels(opts.metadata, opts.listenerName, {
      clientId: `krill-broker-${opts.nodeId}-txn-markers`,
      timeoutMs: Math.min(10_000, opts.requestTimeoutMs),
      requestTimeoutMs: opts.requestTimeoutMs,
      ...opts.security,
    });
  }

  async send(brokerId: number, request: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> {
    if (this.closed) throw new ConnectionError('the marker transport is closed');
    const ch = this.channels.channel(brokerId);
    if (!ch) throw new ConnectionError(`broker ${brokerId} has no endpoint for listener ${this.opts.listenerName}`);
    return ch.send('WriteTxnMarkers', request);
  }

  close(): void {
    this.closed = true;
    this.channels.close();
  }
}
