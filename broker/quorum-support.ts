/**
 * Which KRaft node configurations krill can run, checked before a node starts
 * (`checkQuorumSupport`), so that a Kafka `server.properties` krill cannot honour stops startup with
 * a clear error instead of starting something else.
 *
 * The shapes krill runs: a combined node (`process.roles=broker,controller`: alone, no or one
 * voter, its Controller in-process over its own metadata log; or one voter of a static KRaft
 * quorum when `controller.quorum.voters` names several, `isCombinedQuorumVoter`: a ControllerServer
 * in-process on its controller listener and a broker following the quorum's active controller), a
 * controller node (`process.roles=controller`, ControllerServer: alone, or one voter of a static
 * KRaft controller quorum when `controller.quorum.voters` names several) and cluster brokers (`process.roles=broker`) that
 * follow one controller (a one-entry `controller.quorum.voters`, or one
 * `controller.quorum.bootstrap.servers` entry) or the active controller of a KRaft controller quorum
 * (several voters or bootstrap servers: metadata/cluster-link.ts). Kafka's own KRaft rules come
 * first, with Kafka's messages (KafkaConfig.validateValues): a controller must be among the voters,
 * a broker must not be, and a broker needs voters or bootstrap servers. A controller node with
 * bootstrap servers and no voters is one controller of a dynamic quorum (KIP-853, ControllerServer).
 * Then krill's limit, refused with a message that says so: a combined node with several bootstrap
 * servers and no voters (a dynamic quorum runs on controller-only nodes).
 *
 * Invariants: pure (reads the config, throws ConfigException naming the property); a config that
 * passes starts the node it describes; an empty `controller.quorum.voters` on a combined node is
 * krill's default (`npx krill`) and passes.
 */
import { ConfigException } from '../config/config-types';
import type { KafkaConfig } from '../config/kafka-config';
import { QUORUM_VOTERS_CONFIG, parseVoterConnections } from '../metadata/raft/quorum-config';

const BOOTSTRAP_SERVERS_CONFIG = 'controller.quorum.bootstrap.servers';

/** What the roles make of this node. */
export type NodeKind = 'combined' | 'controller' | 'broker';

/** A combined node (`broker,controller`) that is one voter of a KRaft quorum (several voters). */
export function isCombinedQuorumVoter(config: KafkaConfig): boolean {
  return nodeKind(config) === 'combined' && parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false).size > 1;
}

export function nodeKind(config: KafkaConfig): NodeKind {
  const roles = new Set(config.processRoles());
  if (roles.has('controller')) return roles.has('broker') ? 'combined' : 'controller';
  return 'broker';
}

const setOf = (ids: Iterable<number>): string => `Set(${[...ids].join(', ')})`;

/** Throws ConfigException when krill cannot run the node `config` describes. */
export function checkQuorumSupport(config: KafkaConfig): NodeKind {
  const kind = nodeKind(config);
  const nodeId = config.nodeId;
  const voters = parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false);
  const bootstrap = (config.getList(BOOTSTRAP_SERVERS_CONFIG) ?? []).map((s) => s.trim()).filter((s) => s !== '');

  if (kind === 'broker') {
    if (voters.size === 0 && bootstrap.length === 0) {
      throw new ConfigException(
        `If using process.roles, either ${BOOTSTRAP_SERVERS_CONFIG} must contain the set of bootstrap controllers or ${QUORUM_VOTERS_CONFIG} must contain a parseable set of controllers.`,
        BOOTSTRAP_SERVERS_CONFIG,
      );
    }
    if (voters.has(nodeId)) {
      throw new ConfigException(
        `If process.roles contains just the 'broker' role, the node id ${nodeId} must not be included in the set of voters ${QUORUM_VOTERS_CONFIG}=${setOf(voters.keys())}`,
        QUORUM_VOTERS_CONFIG,
      );
    }
    return kind;
  }

  // A controller (alone or combined with a broker).
  if (voters.size > 0 && !voters.has(nodeId)) {
    throw new ConfigException(
      `If process.roles contains the 'controller' role, the node id ${nodeId} must be included in the set of voters ${QUORUM_VOTERS_CONFIG}=${setOf(voters.keys())}`,
      QUORUM_VOTERS_CONFIG,
    );
  }
  // A dynamic KRaft quorum (KIP-853: no voters, bootstrap servers) runs on controller-only nodes.
  if (voters.size === 0 && bootstrap.length > 1 && kind === 'combined') {
    throw new ConfigException(
      `${BOOTSTRAP_SERVERS_CONFIG} names ${bootstrap.length} controllers (a dynamic KRaft quorum, KIP-853): krill runs dynamic quorums on controller-only nodes (process.roles=controller), not on combined nodes, so node ${nodeId} cannot take part in one. ` +
        `Name the voters in ${QUORUM_VOTERS_CONFIG} (a static quorum, which combined nodes can form), or run the quorum's controllers with process.roles=controller.`,
      BOOTSTRAP_SERVERS_CONFIG,
    );
  }
  return kind;
}
