/**
 * The control of an in-process cluster (`startCluster(...).control`): each node's control, and
 * network cuts between two nodes.
 *
 *   cluster.control.broker(1).intercept(...)      a broker's requests, storage, stop/start, pause
 *   cluster.control.controller.record(...)        the controller node's requests
 *   cluster.control.cut(0, 1)                      brokers 0 and 1 can no longer talk
 *   cluster.control.cut(2, cluster.controllerId)   broker 2 loses the controller (it gets fenced)
 *   cluster.control.heal(0, 1); cluster.control.healAll();
 *
 * A cut between A and B behaves like a network partition between them: from then on every request
 * A's inter-node clients send to B (follower fetches, transaction markers and verification, the
 * controller link) has its connection closed by B without an answer, and the other way round, so
 * retries fail until heal(). Requests already being served when the cut is made complete. Client
 * connections from outside the cluster (the test's own clients) are not affected. Cuts are kept
 * across restarts of either node. Node ids are brokers' ids or the controller's.
 */
import type { BrokerControl, RequestControl } from './node-control';

export class ClusterControl {
  private readonly cuts = new Set<string>();

  constructor(
    private readonly brokerControls: ReadonlyMap<number, BrokerControl>,
    private readonly controllerControl: () => RequestControl,
    /** The controller's node id. */
    readonly controllerId: number,
  ) {}

  /** The control of broker `nodeId` (also while it is stopped: its start() brings it back). */
  broker(nodeId: number): BrokerControl {
    const c = this.brokerControls.get(nodeId);
    if (!c) throw new Error(`no broker ${nodeId} in this cluster`);
    return c;
  }

  /** The controller node's request control (intercept, record, pause, slow). */
  get controller(): RequestControl {
    return this.controllerControl();
  }

  /** Cuts the network between nodes `a` and `b` (see the header). */
  cut(a: number, b: number): void {
    const [x, y] = this.pair(a, b);
    this.node(x).requestFaults.refusePeer(y);
    this.node(y).requestFaults.refusePeer(x);
    this.cuts.add(`${x},${y}`);
    this.node(x).requestFaults.log.info(`fault injection: network cut between nodes ${x} and ${y}`);
  }

  /** Restores the network between `a` and `b`. */
  heal(a: number, b: number): void {
    const [x, y] = this.pair(a, b);
    this.node(x).requestFaults.acceptPeer(y);
    this.node(y).requestFaults.acceptPeer(x);
    if (this.cuts.delete(`${x},${y}`)) this.node(x).requestFaults.log.info(`fault injection: network healed between nodes ${x} and ${y}`);
  }

  /** Heals every cut. */
  healAll(): void {
    for (const k of [...this.cuts]) {
      const [x, y] = k.split(',').map(Number);
      this.heal(x, y);
    }
  }

  /** The cuts now in place, as [lower id, higher id] pairs. */
  get activeCuts(): [number, number][] {
    return [...this.cuts].map((k) => k.split(',').map(Number) as [number, number]);
  }

  private pair(a: number, b: number): [number, number] {
    if (a === b) throw new Error(`cannot cut node ${a} from itself`);
    this.node(a);
    this.node(b);
    return a < b ? [a, b] : [b, a];
  }

  private node(id: number): RequestControl {
    if (id === this.controllerId) return this.controllerControl();
    return this.broker(id);
  }
}
