/**
 * KIP-951 leader discovery for Produce (v10+) and Fetch (v16+): a partition answered with
 * NOT_LEADER_OR_FOLLOWER (Produce and Fetch) or FENCED_LEADER_EPOCH (Fetch) carries the leader this
 * broker knows of (`current_leader`: id and epoch), and the response's `node_endpoints` lists the
 * endpoint of each such leader on the listener the request came in on, so the client can go to
 * the new leader without a metadata refresh.
 *
 * As Kafka's KafkaApis.getCurrentLeader: the leader id and epoch come from the hosted partition
 * when this broker has a replica of it, otherwise from the metadata image (-1/-1 when neither
 * knows the partition); an endpoint is given only for a leader that is registered and not fenced
 * and has an endpoint on that listener. Each node is listed once however many partitions it leads.
 */
import type { Broker } from '../broker';

export interface CurrentLeader {
  leaderId: number;
  leaderEpoch: number;
}

export interface NodeEndpoint {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** Collects the current leaders of a response's partitions and the endpoints of those leaders. */
export class LeaderDiscovery {
  private readonly endpoints = new Map<number, NodeEndpoint>();

  constructor(
    private readonly broker: Broker,
    private readonly listenerName: string,
  ) {}

  /** The current leader of a partition; its endpoint (if alive on the listener) joins `nodeEndpoints`. */
  leaderOf(topic: string, partition: number): CurrentLeader {
    const hosted = this.broker.replicaManager.getPartition(topic, partition);
    let leaderId = -1;
    let leaderEpoch = -1;
    if (hosted && !hosted.log.isOffline) {
      leaderId = hosted.leaderId;
      leaderEpoch = hosted.leaderEpoch;
    } else {
      const p = this.broker.metadata.partition(topic, partition);
      if (p) {
        leaderId = p.leader;
        leaderEpoch = p.leaderEpoch;
      }
    }
    if (leaderId >= 0 && !this.endpoints.has(leaderId)) {
      const b = this.broker.metadata.broker(leaderId);
      const ep = b && !b.fenced ? b.endpoints.find((e) => e.name === this.listenerName) : undefined;
      if (b && ep) this.endpoints.set(leaderId, { nodeId: leaderId, host: ep.host, port: ep.port, rack: b.rack });
    }
    return { leaderId, leaderEpoch };
  }

  /** The endpoints of the leaders reported so far, by node id. */
  nodeEndpoints(): NodeEndpoint[] {
    return [...this.endpoints.values()].sort((a, b) => a.nodeId - b.nodeId);
  }
}
