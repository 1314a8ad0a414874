/**
 * How the transaction coordinator reaches partition leaders with WriteTxnMarkers: one reconnecting
 * NodeChannel per destination broker, on the inter-broker listener's endpoint as the cluster
 * metadata advertises it (this broker's own endpoint included: markers for local partitions take the
 * same protocol path). The version is negotiated with ApiVersions on connect.
 */
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../../protocol/generated/write-txn-markers';
import { NodeChannel } from '../../../replication/node-channel';
import { ConnectionError } from '../../../replication/network-client';
import type { MetadataCache } from '../../../replication/metadata-cache';
import type { MarkerTransport } from './transaction-marker-channel-manager';

export interface NetworkMarkerTransportOptions {
  nodeId: number;
  metadata: MetadataCache;
  /** inter.broker.listener.name: the endpoint name looked up in each broker's registration. */
  listenerName: string;
  requestTimeoutMs: number;
}

export class NetworkMarkerTransport implements MarkerTransport {
  private readonly channels = new Map<number, NodeChannel>();
  private closed = false;

  constructor(private readonly opts: NetworkMarkerTransportOptions) {}

  async send(brokerId: number, request: WriteTxnMarkersRequest): Promise<WriteTxnMarkersResponse> {
    if (this.closed) throw new ConnectionError('the marker transport is closed');
    const b = this.opts.metadata.broker(brokerId);
    const ep = b?.endpoints.find((e) => e.name === this.opts.listenerName) ?? b?.endpoints[0];
    if (!ep) throw new ConnectionError(`broker ${brokerId} has no endpoint for listener ${this.opts.listenerName}`);
    let ch = this.channels.get(brokerId);
    if (!ch) {
      ch = new NodeChannel(ep.host, ep.port, {
        clientId: `krill-broker-${this.opts.nodeId}-txn-markers`,
        timeoutMs: Math.min(10_000, this.opts.requestTimeoutMs),
        requestTimeoutMs: this.opts.requestTimeoutMs,
      });
      this.channels.set(brokerId, ch);
    } else {
      ch.retarget(ep.host, ep.port);
    }
    return ch.send('WriteTxnMarkers', request);
  }

  close(): void {
    this.closed = true;
    for (const ch of this.channels.values()) ch.close();
    this.channels.clear();
  }
}
