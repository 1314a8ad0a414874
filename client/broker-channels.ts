/**
 * Reaching other brokers of the cluster on the inter-broker listener: the endpoint a broker's
 * registration advertises for that listener (its first endpoint when it registered none by that
 * name), and one reconnecting NodeChannel per destination broker, retargeted when the broker
 * registers again at another address.
 */
import type { ConnectOptions } from './network-client';
import { NodeChannel } from './node-channel';

/** What the client needs of the cluster metadata (metadata/MetadataCache is one): the brokers' registered endpoints. */
export interface BrokerEndpoints {
  broker(brokerId: number): { readonly endpoints: readonly { readonly name: string; readonly host: string; readonly port: number }[] } | undefined;
}

/** Where `brokerId` listens for inter-broker traffic, or undefined when the metadata does not say. */
export function interBrokerEndpoint(metadata: BrokerEndpoints, brokerId: number, listenerName: string): { host: string; port: number } | undefined {
  const b = metadata.broker(brokerId);
  const ep = b?.endpoints.find((e) => e.name === listenerName) ?? b?.endpoints[0];
  return ep ? { host: ep.host, port: ep.port } : undefined;
}

export class BrokerChannels {
  private readonly channels = new Map<number, NodeChannel>();

  constructor(
    private readonly metadata: BrokerEndpoints,
    private readonly listenerName: string,
    private readonly connectOptions: ConnectOptions,
  ) {}

  /** The channel to `brokerId` at its current endpoint; undefined when the metadata names none. */
  channel(brokerId: number): NodeChannel | undefined {
    const ep = interBrokerEndpoint(this.metadata, brokerId, this.listenerName);
    if (!ep) return undefined;
    let ch = this.channels.get(brokerId);
    if (!ch) {
      ch = new NodeChannel(ep.host, ep.port, this.connectOptions);
      this.channels.set(brokerId, ch);
    } else {
      ch.retarget(ep.host, ep.port);
    }
    return ch;
  }

  close(): void {
    for (const ch of this.channels.values()) ch.close();
    this.channels.clear();
  }
}
